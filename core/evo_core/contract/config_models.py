"""Base models for the typed tables of a config file.

Every pluggable part (brain, optimizer, processing handler) describes its table with a pydantic
model whose `type` field is a one-value `Literal`; the experiment schema joins them into
discriminated unions. Unknown keys are errors because a misspelt option that is silently ignored
costs a researcher a week of runs with the wrong settings.
"""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["StrictModel", "ComponentConfig", "BrainConfig", "OptimizerConfig", "ProcessingConfig",
           "component_type_name"]


class StrictModel(BaseModel):
    """Frozen and closed: configs are values, and unknown keys are mistakes."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


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

    blas_threads: int | None = Field(
        1, ge=1, description="BLAS threads per evaluating process; unset: the library's default. "
        "One is fastest for brain-sized matrices: more threads busy-spin other cores.")


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
