"""The ONNX form of a template (`IOnnxTemplate`), declared or derived from an `IArrayBrain`.

`evo export` writes a champion as an ONNX model. A template that declares `IOnnxTemplate`
builds its model itself; an `IArrayBrain` gets one here, generically: its `params` decoded
with numpy (the genome's numbers become the graph's initializers), its `initial_state` (the
model's metadata, `evo.initial_state`), and its `forward` called once on the tensors of
`authoring/onnx_graph.py`, between the ONNX forms of its encoder and decoder. The graph is
the numpy brain's arithmetic, operation for operation, in float64: results agree with
`make()` to float64's rounding.

The state (every array of `initial_state`, in its order, each flattened) is one float64
vector, `state_in` and `state_out`, so a caller carries one array from step to step;
`evo.state_layout` says which entries are which array.

A brain that draws noise has no ONNX form: its numbers come from numpy Generators per episode.
onnx is imported when a model is made, never when this module is imported.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.authoring.derived_forms import DerivedForm
from evo_core.authoring.onnx_graph import OnnxGraph, OnnxUnsupported
from evo_core.authoring.rows_spaces import decode_rows, encode_rows
from evo_core.contract.protocols import IArrayBrain, IBrainTemplate, IOnnxTemplate

__all__ = ["ACTION", "INITIAL_STATE", "OBSERVATION", "OUTPUT", "STATE_IN", "STATE_LAYOUT",
           "STATE_OUT", "ArrayBrainOnnx", "onnx_form"]

#: The names of the model's inputs and outputs, and of its metadata (`IOnnxTemplate`)
OBSERVATION = "observation"
STATE_IN = "state_in"
ACTION = "action"
OUTPUT = "output"
STATE_OUT = "state_out"
INITIAL_STATE = "evo.initial_state"
STATE_LAYOUT = "evo.state_layout"


class ArrayBrainOnnx(DerivedForm):
    """The `IOnnxTemplate` of an `IArrayBrain`."""

    form = "ONNX"
    cannot_repeat = "a model cannot repeat"
    instead = "export a brain that draws none"

    def onnx_unsupported(self) -> str | None:
        return self.unsupported()

    def onnx_model(self, genome: NDArray[np.float64]) -> Any:
        """The model of `genome`; `OnnxUnsupported` names what the step does that has no
        ONNX form here."""
        template = self.template
        graph = OnnxGraph()
        xp = graph.xp
        params = {name: np.ascontiguousarray(value) for name, value in
                  template.params(np, np.array(genome, dtype=np.float64).reshape(1, -1)).items()}
        start = template.initial_state(np, params)
        layout = _layout(start)
        shape = template.observation_space.shape or ()
        observation = graph.input(OBSERVATION, shape, np.float64)
        inputs = encode_rows(xp, template.encoder, observation.reshape(1, *shape))
        state: dict[str, Any] = {}
        if layout:
            size = layout[-1][2] + layout[-1][3]
            state_in = graph.input(STATE_IN, (size,), np.float64)
            state = {name: state_in[offset:offset + count].reshape(1, *rest)
                     for name, rest, offset, count in layout}
        try:
            after, outputs = template.forward(xp, params, state, inputs, None)
        except TypeError as exc:  # a numpy ufunc handed a tensor: "does not support ufuncs"
            raise OnnxUnsupported(f"its step does what the graph's values do not: {exc}; "
                                  "write it with its namespace xp") from None
        graph.output(ACTION, decode_rows(xp, template.decoder, outputs).reshape(
            template.action_space.shape or ()))
        graph.output(OUTPUT, xp.asarray(outputs, np.float64).reshape(template.decoder.size))
        if layout:
            graph.output(STATE_OUT, xp.concatenate(
                [xp.asarray(after[name], np.float64).reshape(count)
                 for name, _, _, count in layout]))
        initial = np.concatenate([np.asarray(start[name], dtype=np.float64).reshape(-1)
                                  for name, *_ in layout]) if layout else np.zeros(0)
        return graph.model(type(template).__name__, {
            INITIAL_STATE: json.dumps(initial.tolist()),
            STATE_LAYOUT: json.dumps([{"name": name, "shape": list(rest), "offset": offset,
                                       "size": count} for name, rest, offset, count in layout])})


def _layout(start: dict[str, Any]) -> list[tuple[str, tuple[int, ...], int, int]]:
    """Each state array's name, shape (without the rows), offset and size in the state
    vector, in the order of `initial_state`."""
    layout = []
    offset = 0
    for name, value in start.items():
        array = np.asarray(value)
        if array.dtype != np.float64:
            raise OnnxUnsupported(f"the state {name!r} is {array.dtype}; the exported state "
                                  "is float64")
        rest = tuple(int(n) for n in array.shape[1:])
        count = int(np.prod(rest, dtype=np.int64))
        layout.append((name, rest, offset, count))
        offset += count
    return layout


def onnx_form(template: IBrainTemplate) -> IOnnxTemplate | None:
    """The template's ONNX form: its own when it declares one, else derived from its array
    functions, else None (it has none)."""
    if isinstance(template, IOnnxTemplate):
        return template
    if isinstance(template, IArrayBrain):
        return ArrayBrainOnnx(template)
    return None
