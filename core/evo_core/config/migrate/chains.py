"""The predecessor's two composite brains, written as evo chains.

CNN_CTRNN becomes `cnn -> ctrnn`: the cnn stage has the predecessor's two conv -> activation ->
max-pool layers (relu after the first, sigmoid after the second), no biases and no readout, so
its output is the flattened feature maps the CTRNN read. ConcatenatedBrain_LSTM becomes
`ffnn -> lstm -> ffnn` with the predecessor's size rules: the LSTM's input is the front
network's last hidden size (the front network gains an output layer of that size), and its
hidden state is the back network's first hidden size (the back network's input).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evo_core.config.migrate.result import Migration

__all__ = ["FRAME", "frame_of", "migrate_cnn_ctrnn", "migrate_concatenated_lstm"]

#: the frames the predecessor's CNN_CTRNN configs ran on by default: Qbert with its Atari
#: wrappers, and procgen, both 64x64 RGB; `screen_size` changed the side
FRAME = (64, 64, 3)

#: migrate one nested predecessor brain table (type included) to an evo brain table, naming
#: it `where` in notes (brains.migrate_brain)
Nested = Callable[[Any, Migration, str], dict[str, Any]]

_COMMON = ("type", "normalize_input", "normalize_input_target", "use_bias")


def frame_of(environment: Any) -> tuple[int, int, int]:
    """The frame a migrated environment gives the brain: its Atari preprocessing's (or the
    procgen environment's) `screen_size` and colour channels, else FRAME. The cnn stage's
    output size follows from it, so a config that shrank the screen (`screen_size = 32`) gets
    the CTRNN input it had, not the 64x64 one's."""
    side, channels = FRAME[0], FRAME[2]
    if isinstance(environment, dict):
        tables = [environment.get("kwargs", {}), *environment.get("wrappers", [])]
        for table in tables:
            if not isinstance(table, dict):
                continue
            size = table.get("screen_size")
            if isinstance(size, int) and not isinstance(size, bool) and size > 0:
                side = size
            if table.get("grayscale_obs") is True:
                channels = 1
    return side, side, channels


def _drop_unused(old: dict[str, Any], keep: set[str], where: str, result: Migration) -> None:
    for key in old:
        if key not in keep:
            result.dropped.append(f"{where}.{key}: unused by the predecessor's {where} too")


def _pooled(size: int, window: int, stride: int) -> int:
    return (size - window) // stride + 1


def migrate_cnn_ctrnn(old: dict[str, Any], result: Migration, nested: Nested,
                      frame: tuple[int, int, int] = FRAME) -> dict[str, Any]:
    """`frame`: what the migrated environment gives the brain (`frame_of`)."""
    cnn = result.table(old.get("cnn_conf", {}), "brain.cnn_conf")
    layers = []
    side = frame[0]
    features = frame[2]
    for number, activation in ((1, "relu"), (2, "sigmoid")):
        # a required key the predecessor lacks becomes "?", which validation names
        layer = {"features": cnn.get(f"conv_feat{number}", "?"),
                 "kernel_size": cnn.get(f"conv_size{number}", "?"),
                 "stride": cnn.get(f"conv_stride{number}", 1), "activation": activation,
                 "pool_size": cnn.get(f"maxp_size{number}", "?"),
                 "pool_stride": cnn.get(f"maxp_stride{number}", "?")}
        layers.append(layer)
        # only sizes evo can run give a size; any other (a stride of 0) is left to validation,
        # which names the field
        if all(isinstance(layer[k], int) and not isinstance(layer[k], bool) and layer[k] >= 1
               for k in ("features", "kernel_size", "stride", "pool_size", "pool_stride")):
            side = _pooled(_pooled(side, layer["kernel_size"], layer["stride"]),
                           layer["pool_size"], layer["pool_stride"])
            features = layer["features"]
    front: dict[str, Any] = {"type": "cnn", "layers": layers, "use_bias": False,
                             "readout": "none", "scale_uint8": False,
                             "output_size": side * side * features if side > 0 else None}
    used = {f"{name}{n}" for name in ("conv_size", "conv_feat", "maxp_size", "maxp_stride",
                                      "conv_stride") for n in (1, 2)}
    _drop_unused(cnn, used | {"type"}, "brain.cnn_conf", result)
    result.notes.append(
        f"brain (CNN_CTRNN) became a chain cnn -> ctrnn; the cnn stage's output_size "
        f"{front['output_size']} is the feature count for {frame[0]}x{frame[1]}x{frame[2]} "
        "frames (the migrated environment's); for other frames `evo train` says the right "
        "number")
    result.notes.append(
        "brain.stages[0]: the predecessor's conv biases were random (PyTorch's initialisation, "
        "redrawn per evaluation) and not evolved; the cnn stage has none (use_bias = false, the "
        "same genome size); use_bias = true evolves them")
    result.notes.append(
        "brain.stages[0]: scale_uint8 = false passes uint8 frames on as raw 0..255 values, as "
        "the predecessor's CNN got them (float frames, e.g. with scale_obs, are unchanged)")
    back = nested(old.get("ctrnn_conf", {"type": "CTRNN"}), result, "brain.ctrnn_conf")
    _drop_unused({k: v for k, v in old.items() if k not in ("cnn_conf", "ctrnn_conf")},
                 {"type"}, "brain", result)
    return {"type": "chain", "stages": [{k: v for k, v in front.items() if v is not None},
                                        back]}


def _hidden(table: dict[str, Any]) -> list[Any]:
    layers = table.get("hidden_layers")
    if isinstance(layers, list) and layers and isinstance(layers[0], list):  # design space
        layers = layers[0]
    return list(layers) if isinstance(layers, list) else []


def migrate_concatenated_lstm(old: dict[str, Any], result: Migration, nested: Nested,
                              frame: tuple[int, int, int] = FRAME) -> dict[str, Any]:
    """`frame` is unused: the front network reads the observation as it is."""
    stages: list[dict[str, Any]] = []
    front_old = result.table(old.get("feed_forward_front", {}), "brain.feed_forward_front")
    back_old = result.table(old.get("feed_forward_back", {}), "brain.feed_forward_back")
    if front_old:
        front = nested({**front_old, "type": "FeedForward_NumPy"}, result,
                       "brain.feed_forward_front")
        hidden = _hidden(front_old)
        if hidden:
            front["output_size"] = hidden[-1]
        stages.append(front)
    lstm = nested({**result.table(old.get("lstm", {}), "brain.lstm"), "type": "LSTM_NumPy"},
                  result, "brain.lstm")
    stages.append(lstm)
    if back_old:
        back = nested({**back_old, "type": "FeedForward_NumPy"}, result,
                      "brain.feed_forward_back")
        hidden = _hidden(back_old)
        if hidden:
            lstm["output_size"] = hidden[0]
        stages.append(back)
    _drop_unused({k: v for k, v in old.items()
                  if k not in ("feed_forward_front", "lstm", "feed_forward_back")},
                 {"type"}, "brain", result)
    result.notes.append(
        "brain (ConcatenatedBrain_LSTM) became a chain "
        + " -> ".join(stage["type"] for stage in stages)
        + ": the LSTM's input is the front ffnn's last hidden size (its output_size: an output "
        "layer of that size, as the predecessor added), its hidden state the back ffnn's first "
        "hidden size (the lstm's output_size, the back ffnn's input)")
    result.notes.append(
        "brain.stages: each stage's output passes to the next in [-1, 1] (clipped); the "
        "predecessor handed a relu front network's outputs on unbounded")
    return {"type": "chain", "stages": stages}
