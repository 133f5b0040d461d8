"""`scale-observation`: a fixed affine map of a Box observation, `scale * observation + offset`.

A brain weighs its inputs with genes drawn at one scale, so an input whose values are ten times
smaller than another's moves it ten times less at the start of a search. `normalize_input`
rescales only the bounded dimensions of a space; this wrapper gives the unbounded ones (MuJoCo's
positions, speeds and offsets) the scale the user states, per dimension. Fixed numbers, rather
than running statistics: every worker and every generation sees the same observation for the same
state, so the fitness of a genome does not drift as the statistics move, and a replay gives what
training measured. Built on gymnasium's `TransformObservation`; gymnasium's own
`RescaleObservation` maps finite bounds onto finite bounds and leaves infinite ones unscaled.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import gymnasium as gym
import numpy as np
from gymnasium.wrappers import TransformObservation
from numpy.typing import NDArray
from pydantic import Field, field_validator

from evo_core.contract.config_models import WrapperConfig

__all__ = ["ScaleObservationConfig", "ScaleObservation"]

FloatArray = NDArray[np.float64]


class ScaleObservationConfig(WrapperConfig):
    """Each observation entry i becomes scale[i] * entry + offset[i] (a number: every entry)."""

    type: Literal["scale-observation"] = "scale-observation"
    scale: float | list[float] = Field(1.0, description="The factor of every entry (a number) "
                                       "or of each entry of the flattened observation (a list "
                                       "as long as it); 0 blanks an entry (an ablation).")
    offset: float | list[float] = Field(0.0, description="Added after scaling: a number for "
                                        "every entry or a list as long as the observation.")

    @field_validator("scale", "offset")
    @classmethod
    def _finite(cls, value: float | list[float]) -> float | list[float]:
        values = np.atleast_1d(np.asarray(value, dtype=np.float64))
        if not np.all(np.isfinite(values)):
            raise ValueError("must be finite numbers")
        return value


def _per_entry(name: str, value: float | list[float], shape: tuple[int, ...]) -> FloatArray:
    """`value` as an array of the observation's shape (a list fills the flattened entries)."""
    if isinstance(value, list):
        size = int(np.prod(shape))
        if len(value) != size:
            raise ValueError(f"{name} has {len(value)} entries, the observation {size}; give "
                             f"{size} numbers or one for all")
        return np.asarray(value, dtype=np.float64).reshape(shape)
    return np.full(shape, float(value))


class ScaleObservation(TransformObservation[Any, Any, Any]):
    """Observations mapped by `scale * observation + offset`, the space's bounds with them (a
    negative scale swaps low and high, infinite bounds stay infinite, a zero scale makes the
    entry its offset)."""

    config_model: ClassVar[type[WrapperConfig]] = ScaleObservationConfig

    def __init__(self, config: ScaleObservationConfig, env: gym.Env[Any, Any]) -> None:
        space = env.observation_space
        if not isinstance(space, gym.spaces.Box):
            raise TypeError(f"scale-observation maps a Box observation, not "
                            f"{type(space).__name__}")
        scale = _per_entry("scale", config.scale, space.shape)
        offset = _per_entry("offset", config.offset, space.shape)
        with np.errstate(invalid="ignore"):  # 0 * inf is nan: a blanked entry is its offset
            ends = [np.where(scale == 0.0, offset, scale * bound + offset)
                    for bound in (space.low, space.high)]
        # float32 observations stay float32; any other dtype (integers too) becomes float64
        dtype: type[np.floating[Any]] = np.float32 if space.dtype == np.float32 else np.float64
        scaled = gym.spaces.Box(np.minimum(*ends).astype(dtype), np.maximum(*ends).astype(dtype),
                                space.shape, dtype=dtype)

        def transform(observation: Any) -> Any:
            return (scale * observation + offset).astype(dtype, copy=False)

        gym.utils.RecordConstructorArgs.__init__(self, config=config)
        super().__init__(env, transform, scaled)
