"""The predecessor's `brain` section: its type and the fields evo's brain of that type has."""

from __future__ import annotations

from typing import Any

from evo_core.config.migrate.chains import FRAME, migrate_cnn_ctrnn, migrate_concatenated_lstm
from evo_core.config.migrate.result import Migration, is_number

__all__ = ["migrate_brain"]

_BRAIN_TYPES = {"CTRNN": "ctrnn", "FeedForward_NumPy": "ffnn", "FeedForward_PyTorch": "ffnn",
                "LSTM_NumPy": "lstm", "LSTM_PyTorch": "lstm", "LSTMNumPy": "lstm"}
#: composite brains, written as chains of the brains above
_CHAINS = {"CNN_CTRNN": migrate_cnn_ctrnn, "ConcatenatedBrain_LSTM": migrate_concatenated_lstm}
_BRAIN_FIELDS = {
    "ctrnn": {"number_neurons", "delta_t", "neuron_activation", "neuron_activation_inplace",
              "use_bias", "optimize_y0", "optimize_state_boundaries", "clipping_range_min",
              "clipping_range_max", "set_principle_diagonal_elements_of_W_negative",
              "parameter_perturbations", "v_mask", "v_mask_param", "w_mask", "w_mask_param",
              "t_mask", "t_mask_param", "normalize_input", "normalize_input_target"},
    "ffnn": {"hidden_layers", "non_linearity", "use_bias", "normalize_input",
             "normalize_input_target"},
    "lstm": {"lstm_num_layers", "use_bias", "normalize_input", "normalize_input_target"},
}


def migrate_brain(old: Any, result: Migration, where: str = "brain",
                  frame: tuple[int, int, int] = FRAME) -> dict[str, Any]:
    """`where` names the table in notes: `brain`, or a composite brain's nested table;
    `frame` is the image the migrated environment gives (a CNN stage's input)."""
    old = result.table(old, where)
    name = old.pop("type", None)
    if isinstance(name, str) and name in _CHAINS:
        return _CHAINS[name](old, result, migrate_brain, frame)
    kind = _BRAIN_TYPES.get(name) if isinstance(name, str) else None
    if kind is None:
        result.dropped.append(f"{where}.type {name!r}: no evo brain of that type; set "
                              f"{where}.type")
        return {"type": "?"}
    brain: dict[str, Any] = {"type": kind}
    for key, value in old.items():
        if key in _BRAIN_FIELDS[kind]:
            if key == "hidden_layers" and isinstance(value, list) and value \
                    and isinstance(value[0], list):
                value = value[0]
                result.notes.append(f"{where}.hidden_layers was a nested list (design-space "
                                    "format); its first element is used")
            brain[key] = value
        else:
            result.dropped.append(f"{where}.{key}: unused by the predecessor's {kind} too")
    if brain.get("normalize_input") is not True:
        # the predecessor ignored the target without normalize_input, and configs often left
        # it at 0, which evo rejects; an unused value is not worth an error
        brain.pop("normalize_input_target", None)
    if kind == "ffnn":
        brain.setdefault("output_activation", None)
    if kind == "ctrnn":
        _full_random_masks(brain, where, result)
    return {k: v for k, v in brain.items() if v is not None}


def _full_random_masks(brain: dict[str, Any], where: str, result: Migration) -> None:
    """A random mask with a probability above 1 (`rand() < p` for every entry) kept every
    connection in the predecessor; evo's random mask takes a probability in (0, 1], so such a
    mask becomes the dense one it was. The parameter stays: a dense mask ignores it, and in a
    design space it is still the value a sampled logarithmic mask reads."""
    for name in ("v", "w", "t"):
        param = brain.get(f"{name}_mask_param")
        if brain.get(f"{name}_mask") == "random" and isinstance(param, (int, float)) \
                and is_number(param) and param > 1:
            brain[f"{name}_mask"] = "dense"
            result.notes.append(f"{where}.{name}_mask \"random\" with {name}_mask_param "
                                f"{param}: a probability above 1 kept every connection in the "
                                f"predecessor; {name}_mask = \"dense\" (the same connections)")
