"""`evo export`: a run's champion as an ONNX model (docs/export.md).

The champion is opened as `evo replay` opens it (`load_champion`: the received folder's config
checked, the template rebuilt with its saved state, the genome of best.npz or of a hall-of-fame
rank). Its template's ONNX form (`authoring/array_onnx.py`: declared, or derived from a brain
written once) gives the brain's step; in front of it goes what evo's episodes do to an
observation before the brain sees it: the cast to float64 and, with
`observation_normalization = "running"`, the normaliser the genome was evaluated with (the
same `normalize` formula, traced). So the model takes the observation as the run's
environment gives it (wrappers included: they are the environment) and gives the action the
environment takes. What the model holds and how it was made goes into its metadata.

onnx is an optional extra (`evo-core[onnx]`): without it the export is refused in one line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from evo_core.authoring.array_onnx import (
    ACTION,
    INITIAL_STATE,
    OBSERVATION,
    OUTPUT,
    STATE_IN,
    STATE_LAYOUT,
    STATE_OUT,
    onnx_form,
)
from evo_core.authoring.onnx_graph import OnnxGraph, OnnxUnsupported
from evo_core.contract.observation_statistics import ObservationNormalizer, normalize
from evo_core.environments import probe_spaces
from evo_core.errors import UserError, first_line
from evo_core.hooks.registry import Registry
from evo_core.results.files import write_atomic
from evo_core.results.run_folder import RunFolder
from evo_core.running.replay import Champion, load_champion

__all__ = ["Exported", "MISSING_EXTRA", "export_champion", "export_run"]

#: The line a missing onnx package is refused with
MISSING_EXTRA = ("exporting to ONNX needs the onnx package; install it with "
                 "pip install 'evo-core[onnx]'")
#: protobuf's limit on one serialised message: a model beyond it needs external data files
_MAX_BYTES = 2**31 - 1
#: The name the observation has between the cast (and normaliser) and the brain's graph
_PREPARED = "evo.observation/prepared"


@dataclass(frozen=True)
class Exported:
    """What `export_run` wrote: the file, which genome, and the model's interface in words."""

    path: Path
    genome: str
    fitness: float
    inputs: str
    outputs: str


def _check_onnx() -> None:
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise UserError(MISSING_EXTRA) from None


def export_run(folder: RunFolder, registry: Registry, out: Path, hof: int | None = None,
               command: str = "", hof_option: str = "hof") -> Exported:
    """Write the champion of `folder` (the best genome, or the hall of fame's member of rank
    `hof`) to `out` as an ONNX model. `command` and `hof_option` are how the caller's user
    asked, for the one-line refusals."""
    _check_onnx()
    champion = load_champion(folder, registry, hof, command, hof_option)
    genome = "best genome" if hof is None else f"hall of fame rank {hof}"
    space = probe_spaces(champion.config.environment, str(folder.config_file))[0]
    model = export_champion(champion, space, _label(champion, registry), genome)
    data = model.SerializeToString()
    write_atomic(out, data)
    return Exported(out, genome, champion.fitness, _interface(model.graph.input),
                    _interface(model.graph.output))


def _label(champion: Champion, registry: Registry) -> str:
    brain = registry.get("brain", champion.config.brain.type)
    return f"brain {brain.name!r} ({f'{brain.distribution} {brain.version}'.strip()})"


def export_champion(champion: Champion, observation_space: gym.Space[Any], label: str,
                    genome: str) -> Any:
    """The champion as an `onnx.ModelProto`: the environment's observation (of
    `observation_space`) prepared as its episodes prepare it, then its template's model.
    `label` names the brain and its plugin in a refusal, `genome` which genome it is."""
    _check_onnx()
    import onnx

    form = onnx_form(champion.template)
    if form is None:
        raise UserError(f"{label} has no ONNX export: its template is not written once "
                        "(IArrayBrain) and declares no IOnnxTemplate; ask its author for one")
    problem = form.onnx_unsupported()
    if problem is not None:
        raise UserError(f"{label} has no ONNX export for this run: {problem}")
    try:
        brain = form.onnx_model(champion.genome)
    except OnnxUnsupported as exc:
        raise UserError(f"{label} has no ONNX export: {exc}") from None
    problem = _interface_problem(brain)
    if problem is not None:
        raise UserError(f"{label}: its ONNX model {problem} (a bug in the plugin: report it "
                        "to its author)")
    shape = tuple(observation_space.shape or ())
    given = _shape_of(brain.graph.input, OBSERVATION)
    if given != shape:
        raise UserError(f"{label}: its ONNX model takes observations of shape {given}, but "
                        f"the environment gives {shape} (a bug in the plugin: report it to its "
                        "author)")
    prepared = _preparation(shape, np.dtype(observation_space.dtype or np.float64),
                            champion.normalizer)
    prepared.ir_version = brain.ir_version
    try:
        model = onnx.compose.merge_models(prepared, brain, io_map=[(_PREPARED, OBSERVATION)])
        kept = {entry.key: entry.value for entry in brain.metadata_props}
        onnx.helper.set_model_props(model, kept | _metadata(champion, genome))
        model.producer_name, model.producer_version = prepared.producer_name, \
            prepared.producer_version  # evo, of this version
        if model.ByteSize() > _MAX_BYTES:
            raise UserError(f"{label}: the model of {champion.genome.size} genes is larger "
                            "than the 2 GiB one ONNX file can hold")
        onnx.checker.check_model(model)
    except (ValueError, onnx.checker.ValidationError) as exc:
        raise UserError(f"{label}: its ONNX model is not valid ONNX ({first_line(exc)}; a bug "
                        "in the plugin: report it to its author)") from None
    return model


def _interface_problem(model: Any) -> str | None:
    """What an `IOnnxTemplate`'s model lacks of the interface, else None."""
    inputs = [value.name for value in model.graph.input]
    outputs = [value.name for value in model.graph.output]
    metadata = {entry.key for entry in model.metadata_props}
    if OBSERVATION not in inputs:
        return f"has no input {OBSERVATION!r} (it has {', '.join(inputs) or 'none'})"
    for name in (ACTION, OUTPUT):
        if name not in outputs:
            return f"has no output {name!r} (it has {', '.join(outputs) or 'none'})"
    if (STATE_IN in inputs) != (STATE_OUT in outputs):
        return f"has one of {STATE_IN!r} and {STATE_OUT!r} without the other"
    if STATE_IN in inputs and not {INITIAL_STATE, STATE_LAYOUT} <= metadata:
        return f"keeps a state but its metadata lacks {INITIAL_STATE} or {STATE_LAYOUT}"
    return None


def _preparation(shape: tuple[int, ...], dtype: np.dtype[Any],
                 normalizer: ObservationNormalizer | None) -> Any:
    """The graph from the environment's observation to the brain's: float64, normalised as
    the episodes normalised it (`normalize`, on the flattened observation) when the run did."""
    graph = OnnxGraph(prefix="evo.observation/")
    observation = graph.xp.asarray(graph.input(OBSERVATION, shape, dtype), np.float64)
    if normalizer is not None:
        flat = observation.reshape(1, normalizer.size)
        observation = normalize(graph.xp, flat, normalizer.mean, normalizer.std,
                                normalizer.clip).reshape(shape)
    graph.output(_PREPARED, observation)
    return graph.model("observation", {})


def _metadata(champion: Champion, genome: str) -> dict[str, str]:
    config = champion.config
    normalizer = champion.normalizer
    return {
        "evo.brain": config.brain.type,
        "evo.genome": genome,
        "evo.fitness": repr(float(champion.fitness)),
        "evo.environment": json.dumps(config.environment.model_dump(mode="json")),
        "evo.observation_normalization": "off" if normalizer is None else
            "running: in the model (the mean and std the genome was evaluated with)",
    }


def _shape_of(values: Any, name: str) -> tuple[int, ...]:
    value = next(v for v in values if v.name == name)
    return tuple(int(d.dim_value) for d in value.type.tensor_type.shape.dim)


def _interface(values: Any) -> str:
    """Inputs or outputs in words: `observation float32 (4,)`."""
    from onnx import helper

    described = []
    for value in values:
        tensor = value.type.tensor_type
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type))
        described.append(f"{value.name} {dtype} {_shape_of([value], value.name)}")
    return ", ".join(described)
