"""One FFNN individual: its layers and the forward pass."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["FFNN", "ACTIVATIONS", "Activation"]

FloatArray = NDArray[np.float64]


def _relu(x: FloatArray) -> FloatArray:
    return np.maximum(x, 0.0, out=x)


def _tanh(x: FloatArray) -> FloatArray:
    return np.tanh(x, out=x)


def _linear(x: FloatArray) -> FloatArray:
    return x


Activation = Callable[[FloatArray], FloatArray]
ACTIVATIONS: dict[str, Activation] = {"relu": _relu, "tanh": _tanh, "linear": _linear}


class FFNN:
    """Stateless: `reset` has nothing to do."""

    def __init__(self, layers: list[tuple[FloatArray, FloatArray | None, Activation]],
                 encode: Callable[[Any], FloatArray], decode: Callable[[FloatArray], Any]
                 ) -> None:
        self.layers = layers
        self.encode = encode
        self.decode = decode
        self.last_input: FloatArray | None = None

    def reset(self) -> None:
        self.last_input = None

    def forward(self, x: FloatArray) -> FloatArray:
        for weight, bias, activation in self.layers:
            x = weight @ x
            if bias is not None:
                x += bias
            x = activation(x)
        return x

    def step(self, observation: Any) -> Any:
        x = self.last_input = self.encode(observation)
        return self.decode(self.forward(x))

    def trace_state(self) -> dict[str, FloatArray]:
        """Every layer's activations for the last step's input (ITraceableBrain, for `evo
        replay --trace`): `layer0`, `layer1`, ... (the last is the output before decoding),
        recomputed from the kept input, so the step only keeps a reference to it."""
        if self.last_input is None:
            return {f"layer{index}": np.zeros(weight.shape[0])
                    for index, (weight, _, _) in enumerate(self.layers)}
        state: dict[str, FloatArray] = {}
        x = self.last_input
        for index, (weight, bias, activation) in enumerate(self.layers):
            x = weight @ x
            if bias is not None:
                x += bias
            x = activation(x)
            state[f"layer{index}"] = np.array(x, dtype=np.float64)
        return state
