"""One CTRNN individual: its matrices, its state, and the step."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from brain_ctrnn.config import CTRNNConfig

__all__ = ["CTRNN", "CTRNNParameters", "NoisyCTRNN"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class CTRNNParameters:
    """A decoded genome. Bounds are floats (one interval for all neurons) or arrays."""

    v: FloatArray
    w: FloatArray
    t: FloatArray
    y0: FloatArray
    lower: float | FloatArray
    upper: float | FloatArray
    tau: FloatArray | None = None


class CTRNN:
    """Steps dy/dt = W·σ(y) + V·u (or Beer's leaky form with time constants), clips, outputs
    tanh(Tᵀ·y) as an action. Everything the step needs is bound to attributes up front.

    Without state noise it draws no random numbers, so it takes no Generator: the runner then
    makes none for its episodes (making one, and spawning the seeds of an evaluation's episodes,
    costs about what three short episodes of the rest of the set-up cost). A CTRNN with state
    noise is a `NoisyCTRNN`."""

    def __init__(self, parameters: CTRNNParameters, config: CTRNNConfig, inputs: int,
                 encode_into: Callable[[Any, FloatArray], Any],
                 decode: Callable[[FloatArray], Any]) -> None:
        self.parameters = parameters
        self.encode_into = encode_into
        self.decode = decode
        self.inputs = inputs
        self.use_bias = config.use_bias
        self.v = parameters.v
        self.w = parameters.w
        self.t_transposed = np.ascontiguousarray(parameters.t.T)
        self.dt = config.delta_t
        self.tanh = config.neuron_activation == "tanh"
        self.inplace = config.neuron_activation_inplace
        self.noise = config.parameter_perturbations
        self.tau = parameters.tau
        self.lower = parameters.lower
        self.upper = parameters.upper
        self.y = parameters.y0.copy()
        self.u = np.ones(inputs + int(config.use_bias))  # trailing 1 is the bias input
        self.u_observed = self.u[:inputs]  # a view: encoding writes straight into u
        self.rng: np.random.Generator | None = None
        if self.noise and not isinstance(self, NoisyCTRNN):
            raise TypeError("a CTRNN with parameter_perturbations is a NoisyCTRNN (which takes "
                            "each episode's Generator from the runner)")

    def reset(self) -> None:
        """Back to y0."""
        self.y = self.parameters.y0.copy()

    def step(self, observation: Any) -> Any:
        self.encode_into(observation, self.u_observed)
        y = self.y
        a = np.tanh(y) if self.tanh else np.maximum(y, 0.0)
        if self.inplace:
            y = a
        dy = self.w @ a
        dy += self.v @ self.u
        if self.tau is not None:
            dy -= y
            dy /= self.tau
        dy *= self.dt
        dy += y  # y + dt·dy/dt, in dy's buffer (addition commutes exactly)
        y = dy
        if self.noise:
            if self.rng is None:
                self.rng = np.random.default_rng(0)
            y += self.rng.normal(0.0, self.noise, y.shape)
        np.maximum(y, self.lower, out=y)
        np.minimum(y, self.upper, out=y)
        self.y = y
        return self.decode(np.tanh(self.t_transposed @ y))

    def trace_state(self) -> dict[str, FloatArray]:
        """The state after the last step (ITraceableBrain, for `evo replay --trace`):
        `potential` y, `activation` sigma(y) (what W reads) and `output` tanh(T^T y) before
        decoding into an action; computed here from y, so the step keeps nothing extra."""
        y = self.y
        activation = np.tanh(y) if self.tanh else np.maximum(y, 0.0)
        return {"potential": y.copy(), "activation": activation,
                "output": np.tanh(self.t_transposed @ y)}


class NoisyCTRNN(CTRNN):
    """A `CTRNN` with state noise (`parameter_perturbations` > 0), drawn from the Generator the
    runner hands it before every episode (`IRandomBrain`)."""

    def use_rng(self, rng: np.random.Generator) -> None:
        """The state noise of the coming episode comes from `rng` (without one, from a Generator
        seeded with 0, so a run is still reproducible)."""
        self.rng = rng
