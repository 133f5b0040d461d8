"""The `[behaviour]`, `[novelty]` and `[fitness_shaping]` tables.

`[behaviour]` makes the episode runner record a descriptor of what each genome did; `[novelty]`
and `[fitness_shaping]` change what the optimizer is told (a rank-based score instead of the raw
fitness). docs/behaviour.md and docs/novelty.md describe the semantics these fields fix.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
)
from pydantic_core import PydanticCustomError

from evo_core.contract.config_models import StrictModel

__all__ = ["BehaviourConfig", "AdaptiveThresholdConfig", "NoveltyConfig", "FitnessShapingConfig"]


class BehaviourConfig(StrictModel):
    """What each evaluation records as its behaviour descriptor."""

    # `max_length` is required unless interval = "final": the JSON Schema says so too, so that an
    # editor checking a config against `evo schema` flags what validation refuses
    model_config = ConfigDict(json_schema_extra={
        "if": {"properties": {"interval": {"const": "final"}}, "required": ["interval"]},
        "else": {"required": ["max_length"]}})

    source: Literal["action", "observation", "state"] = Field(
        ..., description="What is recorded after every step: the action the brain chose, the "
        "observation the environment returned, or the environment's own state (its "
        "IBehaviourState hook, MuJoCo qpos or Atari RAM).")
    interval: int | Literal["final"] = Field(
        1, description="Steps per window: the descriptor holds the mean of the source over each "
        "window (a last, partial window is the mean of the steps it has). \"final\": only the "
        "value after the episode's last step.")
    max_length: int | None = Field(
        None, ge=1, le=1_000_000, description="Windows kept (the first ones); the descriptor "
        "has max_length x the source's width entries, and an episode with fewer windows "
        "repeats its last one. Required unless interval = \"final\" (which keeps one value).")

    @field_validator("interval")
    @classmethod
    def _whole_steps(cls, interval: int | str) -> int | str:
        if isinstance(interval, int) and interval < 1:
            raise ValueError("must be a whole number of steps >= 1, or \"final\"")
        return interval

    @field_validator("max_length")
    @classmethod
    def _length_fits_interval(cls, max_length: int | None, info: ValidationInfo
                              ) -> int | None:
        interval = info.data.get("interval")
        if interval == "final":
            if max_length not in (None, 1):
                raise ValueError("must be 1 or unset with interval = \"final\" (one value is "
                                 "kept)")
        elif max_length is None and interval is not None:  # said as any missing key is
            raise PydanticCustomError("missing", "required with a numeric interval")
        return max_length

    @property
    def windows(self) -> int:
        """How many windows the descriptor holds."""
        return 1 if self.max_length is None else self.max_length


class AdaptiveThresholdConfig(StrictModel):
    """Lehman and Stanley's adaptive archive threshold (Lehman & Stanley 2011, and their
    novelty-search release): a fixed threshold suits one scale of descriptors and one stage of a
    run; this one rises while many candidates join and falls while none do, so the archive keeps
    growing at a modest pace. The defaults are their published values; docs/novelty.md gives the
    rule's order."""

    raise_above: int = Field(4, ge=0, description="When more than this many candidates join "
                             "the archive in one generation, the threshold is multiplied by "
                             "raise_by.")
    raise_by: float = Field(1.2, ge=1, description="Factor that raises the threshold (1: it is "
                            "never raised).")
    lower_after: int = Field(10, ge=1, description="After this many generations in a row in "
                             "which no candidate joined, the threshold is multiplied by "
                             "lower_by and the count starts again from 0.")
    lower_by: float = Field(0.95, gt=0, le=1, description="Factor that lowers the threshold "
                            "(1: it is never lowered).")
    floor: float = Field(0.25, gt=0, description="The threshold is never lowered below this; "
                         "at most novelty.threshold, where it starts.")


class NoveltyConfig(StrictModel):
    """Novelty search: an archive of descriptors, and a novelty rank in the shaped score."""

    k: int = Field(15, ge=1, description="Novelty is the mean distance to this many nearest "
                   "descriptors of the archive and the current population (fewer if there are "
                   "fewer).")
    distance: Literal["euclidean", "mean-absolute", "compression", "equality"] = Field(
        "euclidean", description="euclidean: Euclidean norm of the difference; mean-absolute: "
        "the mean of the entries' absolute differences (Lehman and Stanley's release, whose "
        "maze threshold 6.0 is in these units); compression: "
        "normalised compression distance (bz2) of the float64 bytes; equality: the number of "
        "entries that differ.")
    insertion: Literal["random", "threshold"] = Field(
        "random", description="random: per_generation candidates drawn at random (seeded) join "
        "the archive each generation; threshold: every candidate whose novelty exceeds "
        "threshold joins.")
    threshold_of: Literal["novelty", "nearest"] = Field(
        "novelty", description="What the threshold rule compares with threshold: novelty, "
        "the candidate's novelty (mean distance to its k nearest); nearest, its distance to "
        "the nearest archived descriptor, candidates taken in population order with the "
        "archive growing as they join (Lehman and Stanley's release).")
    per_generation: int = Field(1, ge=0, description="Candidates added per generation by the "
                                "random rule.")
    threshold: float | None = Field(
        None, ge=0, description="Novelty above which a candidate joins the archive (required by "
        "the threshold rule; where it starts with [novelty.adaptive_threshold]).")
    adaptive_threshold: AdaptiveThresholdConfig | None = Field(
        None, description="Adapt the threshold after every generation, Lehman and Stanley's "
        "rule (docs/novelty.md); only with insertion = \"threshold\". Unset: the threshold "
        "stays fixed.")
    archive_size: int = Field(1000, ge=1, description="Most descriptors kept; the oldest go "
                              "first.")
    novelty_weight: float = Field(1.0, ge=0, description="Weight of the novelty rank in the "
                                  "shaped score told to the optimizer.")

    @field_validator("threshold")
    @classmethod
    def _threshold_given(cls, threshold: float | None, info: ValidationInfo) -> float | None:
        insertion = info.data.get("insertion")
        if insertion == "threshold" and threshold is None:
            raise ValueError("required with insertion = \"threshold\"")
        if insertion == "random" and threshold is not None:
            raise ValueError("used only with insertion = \"threshold\"; remove it or set "
                             "insertion = \"threshold\"")
        return threshold

    @field_validator("threshold_of")
    @classmethod
    def _of_a_threshold(cls, threshold_of: str, info: ValidationInfo) -> str:
        if threshold_of != "novelty" and info.data.get("insertion") == "random":
            raise ValueError("used only with insertion = \"threshold\"; remove it or set "
                             "insertion = \"threshold\" (with threshold = ...)")
        return threshold_of

    @field_validator("adaptive_threshold")
    @classmethod
    def _adapts_a_threshold(cls, adaptive: AdaptiveThresholdConfig | None,
                            info: ValidationInfo) -> AdaptiveThresholdConfig | None:
        if adaptive is None:
            return None
        if info.data.get("insertion") == "random":
            raise ValueError("used only with insertion = \"threshold\"; remove the table or "
                             "set insertion = \"threshold\" (with threshold = ...)")
        threshold = info.data.get("threshold")
        if threshold is not None and threshold < adaptive.floor:
            raise ValueError(f"floor = {adaptive.floor} is above threshold = {threshold}, where "
                             "the threshold starts; lower floor or raise threshold")
        return adaptive

    @model_serializer(mode="wrap")
    def _later_settings_unsaid(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # a run that leaves the settings added since novelty search shipped at their defaults
        # writes the config.json it always wrote, so the checkpoints of novelty runs made
        # before they existed still resume
        data: dict[str, Any] = handler(self)
        for key, default in _LATER_SETTINGS.items():
            if key in data and data[key] == default:
                del data[key]
        return data


#: Settings of `[novelty]` added after it shipped, and their defaults (unsaid in config.json).
_LATER_SETTINGS: dict[str, Any] = {"adaptive_threshold": None, "threshold_of": "novelty"}


class FitnessShapingConfig(StrictModel):
    """Rank-based shaping without novelty: fitness rank plus a weighted rank of fewer steps."""

    efficiency_weight: float = Field(
        0.0, ge=0, description="Weight of the steps rank (fewer steps over all episodes rank "
        "higher) in the shaped score told to the optimizer.")
