"""Base models for the typed tables of a config file.

Every pluggable part (brain, optimizer, processing handler) describes its table with a pydantic
model whose `type` field is a one-value `Literal`; the experiment schema joins them into
discriminated unions. Unknown keys are errors because a misspelt option that is silently ignored
costs a researcher a week of runs with the wrong settings. NaN and infinities are errors in
every float field too (pydantic accepts them by default): a NaN penalty or step size runs to the
end and yields nothing but NaN fitnesses. A field that needs them opts in with
`Field(allow_inf_nan=True)` and says why in its description.
"""

from __future__ import annotations

import typing
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["StrictModel", "ComponentConfig", "BrainConfig", "OptimizerConfig", "ProcessingConfig",
           "TrackerConfig", "component_type_name"]


class StrictModel(BaseModel):
    """Frozen and closed: configs are values, and unknown keys and non-finite floats are
    mistakes."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True,
                              allow_inf_nan=False)


class ComponentConfig(StrictModel):
    """A table selected by its `type` key; subclasses narrow `type` to `Literal["name"]`."""

    type: str


class BrainConfig(ComponentConfig):
    """The `[brain]` table. Input normalisation lives here because the core's observation encoder
    applies it for every brain built on `BrainTemplateBase`."""

    normalize_input: bool = Field(
        False, description="Map every observation dimension with finite bounds linearly onto "
        "[-normalize_input_target, +normalize_input_target]; unbounded dimensions pass unchanged.")
    normalize_input_target: float = Field(1.0, gt=0, description="Half-width of the target range.")


class OptimizerConfig(ComponentConfig):
    """The `[optimizer]` table."""

    population_size: int = Field(..., ge=2, description="Genomes evaluated per generation.")


class ProcessingConfig(ComponentConfig):
    """The `[processing]` table."""

    #: Whether the handler sends the template to other processes by pickle, as the contract
    #: allows (templates are picklable); the experiment then checks that before a run folder is
    #: made. A handler that evaluates in the calling process sets it False, and a template that
    #: pickle cannot handle still works there.
    pickles_templates: ClassVar[bool] = True
    blas_threads: int | None = Field(
        1, ge=1, description="BLAS threads per evaluating process; unset: the library's default. "
        "One is fastest for brain-sized matrices: more threads busy-spin other cores.")
    task_timeout: float | None = Field(
        None, gt=0, allow_inf_nan=False, description="Seconds one evaluation (one genome's "
        "episodes) may take; longer ends the run, naming the generation, the candidate and the "
        "environment. Unset: no limit (an environment that hangs in reset or step hangs the run).")


class TrackerConfig(ComponentConfig):
    """A table under `[trackers]`, named by the tracker's `type` (`[trackers.tensorboard]`): its
    presence enables the tracker. Trackers only observe a run, so they never change its results."""

    kind: ClassVar[str] = "tracker"


def component_type_name(model: type[ComponentConfig]) -> str | None:
    """The single string a model's `type` Literal allows, or None when it is not such a Literal."""
    field = model.model_fields.get("type")
    if field is None:
        return None
    annotation: Any = field.annotation
    if typing.get_origin(annotation) is not typing.Literal:
        return None
    values = typing.get_args(annotation)
    if len(values) != 1 or not isinstance(values[0], str) or not values[0]:
        return None
    return values[0]
