"""The `[brain]` table of a CTRNN: the predecessor's field names, validated, with defaults.

Every float field refuses NaN and infinities (a rule `BrainConfig` carries): an infinite
`delta_t` or clipping bound would run and yield nothing but NaN states."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import Field, model_validator

from evo_core import BrainConfig

__all__ = ["CTRNNConfig", "MaskType"]

MaskType = Literal["dense", "random", "logarithmic", "learned"]

_MASK_PARAM_RULES: dict[str, tuple[Callable[[float], bool], str]] = {
    "random": (lambda p: 0 < p <= 1, "a probability in (0, 1]"),
    "logarithmic": (lambda p: p >= 1.05, "a logarithmic base >= 1.05"),
    "learned": (lambda p: 0 <= p < 100, "a percentile in [0, 100)"),
}


class CTRNNConfig(BrainConfig):
    """Continuous-time RNN with Euler steps, state clipping and sparse V/W/T masks."""

    type: Literal["ctrnn"] = "ctrnn"
    number_neurons: int = Field(10, ge=1, le=100_000, description="N, the size of the state.")
    delta_t: float = Field(0.05, gt=0, description="Euler step size.")
    neuron_activation: Literal["relu", "tanh"] = Field(
        "tanh", description="σ applied to the state.")
    neuron_activation_inplace: bool = Field(
        False, description="Replace the state by its activation before each update.")
    use_bias: bool = Field(
        True, description="Append a constant input 1 (a bias weight per neuron).")
    optimize_y0: bool = Field(True, description="Evolve the initial state (N genes); else zeros.")
    optimize_state_boundaries: Literal["legacy", "per_neuron", "global", "fixed"] = Field(
        "global", description="State clipping: evolved global bounds (2 genes), evolved "
        "per-neuron bounds (2N), the fixed clipping_range, or the predecessor's legacy mode "
        "(2N genes, the whole state clipped by every neuron's interval in turn).")
    bounds_offset: float = Field(
        0.0, ge=0, description="Evolved bounds (global, per_neuron, legacy) are "
        "-|offset + g_low| and |offset + g_high|: with 0 (the predecessor's) they start at the "
        "size of the optimizer's first genes, about ±0.8 sigma, a state pinned to its bounds; "
        "with 1 they start near [-1, 1] and evolve from there.")
    clipping_range_min: float = Field(-1.0, description="Lower state bound for `fixed`.")
    clipping_range_max: float = Field(1.0, description="Upper state bound for `fixed`.")
    set_principle_diagonal_elements_of_W_negative: bool = Field(
        True, description="Make every non-zero self-connection W_ii negative (a decay).")
    parameter_perturbations: float = Field(
        0.0, ge=0, description="Std-dev of Gaussian noise added to the state after each step.")
    time_constants: bool = Field(
        False, description="Evolve one time constant per neuron (N genes) and add the leak -y: "
        "tau * dy/dt = -y + W·σ(y) + V·u.")
    v_mask: MaskType = Field("dense", description="Mask of the input weights V.")
    v_mask_param: float = Field(0.0, description="Probability (random), base (logarithmic) or "
                                "percentile (learned) of the V mask.")
    w_mask: MaskType = Field("dense", description="Mask of the recurrent weights W.")
    w_mask_param: float = Field(0.0, description="Parameter of the W mask, as v_mask_param.")
    t_mask: MaskType = Field("dense", description="Mask of the output weights T.")
    t_mask_param: float = Field(0.0, description="Parameter of the T mask, as v_mask_param.")

    @model_validator(mode="after")
    def _check(self) -> CTRNNConfig:
        for name in ("v", "w", "t"):
            kind = getattr(self, f"{name}_mask")
            param = getattr(self, f"{name}_mask_param")
            rule = _MASK_PARAM_RULES.get(kind)
            if rule is not None and not rule[0](param):
                raise ValueError(f"{name}_mask_param must be {rule[1]} for a {kind} mask, "
                                 f"got {param}")
        if self.optimize_state_boundaries == "fixed" and \
                not self.clipping_range_min < self.clipping_range_max:
            raise ValueError(f"clipping_range_min ({self.clipping_range_min}) must be below "
                             f"clipping_range_max ({self.clipping_range_max})")
        return self
