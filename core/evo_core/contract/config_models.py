"""Base models for the typed tables of a config file.

Every pluggable part (brain, optimizer, processing handler, environment wrapper) describes its table
with a pydantic model whose `type` field is a one-value `Literal`; the experiment schema joins them
into discriminated unions. Unknown keys are errors because a misspelt option that is silently
ignored costs a researcher a week of runs with the wrong settings. NaN and infinities are errors in
every float field too (pydantic accepts them by default): a NaN penalty or step size runs to the end
and yields nothing but NaN fitnesses. A field that needs them opts in with
`Field(allow_inf_nan=True)` and says why in its description.
"""

from __future__ import annotations

import json
import math
import typing
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, InitErrorDetails, PydanticCustomError

from evo_core.contract.trust import STEP_LIMIT, NamesCode, Resource, machine_cores

__all__ = ["StrictModel", "ComponentConfig", "BrainConfig", "OptimizerConfig", "ProcessingConfig",
           "TrackerConfig", "WrapperConfig", "VectorizerConfig", "EnvironmentConfig",
           "component_type_name", "WorkerCount"]


class StrictModel(BaseModel):
    """Frozen and closed: configs are values, and unknown keys, non-finite floats and true/false
    for a number are mistakes."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True,
                              allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_boolean_numbers(cls, data: Any) -> Any:
        """pydantic reads true as 1 in a number field, so `generations = true` (or `--set
        generations=true`) trained one generation: a boolean where only numbers are allowed,
        or in a list of them, is refused instead, at its key. (A model validator: pydantic
        allows no field validator on the `type` key that selects a table's model.)"""
        if not isinstance(data, dict):
            return data
        wrong = [InitErrorDetails(type=_BOOLEAN_NUMBER, loc=(name,), input=value)
                 for name, value in data.items()
                 if _has_booleans(value) and name in cls.model_fields
                 and _numbers_only(cls.model_fields[name].annotation)]
        if wrong:
            raise ValidationError.from_exception_data(cls.__name__, wrong)
        return data


_BOOLEAN_NUMBER = PydanticCustomError("boolean_number", "must be a number, not true or false")


def _has_booleans(value: Any) -> bool:
    return isinstance(value, bool) or (
        isinstance(value, (list, tuple)) and any(isinstance(v, bool) for v in value))


def _numbers_only(annotation: Any) -> bool:
    """Whether a field of this annotation takes numbers (int, float) but no boolean."""
    kinds = set(_leaf_types(annotation))
    return bool(kinds & {int, float}) and not kinds & {bool, Any, object}


def _leaf_types(annotation: Any) -> list[Any]:
    """The types inside an annotation (`int | list[int] | None` -> int, int, NoneType);
    `Literal` values count by their type."""
    if typing.get_origin(annotation) is typing.Literal:
        return [type(value) for value in typing.get_args(annotation)]
    arguments = typing.get_args(annotation)
    if not arguments:
        return [annotation]
    return [leaf for argument in arguments for leaf in _leaf_types(argument)]


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


#: A count of worker processes (unset: one per core), as the processing tables that start
#: processes declare it: a received run folder's count is at most this machine's cores.
WorkerCount = Annotated[int | None, Resource("worker processes", machine_cores)]


class ProcessingConfig(ComponentConfig):
    """The `[processing]` table."""

    blas_threads: Annotated[int | None, Resource("BLAS threads per process",
                                                 machine_cores)] = Field(
        1, ge=1, description="BLAS threads per evaluating process; unset: the library's default. "
        "One is fastest for brain-sized matrices: more threads busy-spin other cores.")
    task_timeout: float | None = Field(
        None, gt=0, allow_inf_nan=False, description="Seconds one evaluation (one genome's "
        "episodes) may take; longer ends the run, naming the generation, the candidate and the "
        "environment. Unset: no limit (an environment that hangs in reset or step hangs the run).")


class TrackerConfig(ComponentConfig):
    """A table under `[trackers]`, named by the tracker's `type` (`[trackers.tensorboard]`): its
    presence enables the tracker. Trackers only observe a run, so they never change its results."""


class WrapperConfig(ComponentConfig):
    """An entry of `environment.wrappers`: `{type = "name", ...}`. The wrapper class registered
    under that name (see `evo list-wrappers`) is built with it around the environment."""


class VectorizerConfig(ComponentConfig):
    """A way to evaluate a worker's chunk of candidates, selected by its `type` as the value of
    `episodes.vectorize`: the core's own modes (`"off"`, `"sync"`, `"native"`, `"envpool"`)
    and a plugin's (evo-jax's `"jax"`) alike; it has no table of its own."""


#: kwargs that evo passes to `gymnasium.make` itself
_RESERVED_KWARGS = {"render_mode": "evo sets it (`evo replay --render` asks for rgb_array)"}


class EnvironmentConfig(StrictModel):
    """The `environment` of a config: a gymnasium id, or a table with `id`, `kwargs` and
    `wrappers`. A bare id becomes this model too, so every consumer sees one type.

    The experiment schema subclasses it to validate `wrappers` against the installed wrappers;
    pickling always yields this class (see `__reduce__`), since worker processes cannot import
    a model that was built at run time.
    """

    id: Annotated[str, NamesCode("environment")] = Field(
        ..., min_length=1, description="A gymnasium environment id, e.g. CartPole-v1, "
        "ALE/Qbert-v5 or module:Env-v0.")
    kwargs: Annotated[dict[str, Any], Resource("steps per episode", STEP_LIMIT,
                                               key="max_episode_steps", unlimited=-1)] = Field(
        default_factory=dict, description="Keyword arguments of gymnasium.make (the "
        "environment's own options, or max_episode_steps); values as TOML or JSON can hold them.")
    wrappers: tuple[SerializeAsAny[WrapperConfig], ...] = Field(
        (), description="Wrappers around the environment, in order: the first is innermost "
        "(see `evo list-wrappers`).")

    @model_validator(mode="before")
    @classmethod
    def _from_id(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"id": data}
        if isinstance(data, (dict, EnvironmentConfig)):
            return data
        raise ValueError("must be a gymnasium id (a string) or a table with id, kwargs and "
                         "wrappers")

    @field_validator("kwargs")
    @classmethod
    def _plain_values(cls, kwargs: dict[str, Any]) -> dict[str, Any]:
        # config.json must hold them, and a NaN option runs to the end for nothing
        for key, why in _RESERVED_KWARGS.items():
            if key in kwargs:
                raise ValueError(f"{key} cannot be set here: {why}")
        for key, value in kwargs.items():
            problem = _not_plain(value, key)
            if problem:
                raise ValueError(problem)
        return kwargs

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> Any:
        # a plain id is written as the string it was: config.json of a run without kwargs or
        # wrappers stays what it always was, and a resume of an older run folder matches it
        data: dict[str, Any] = handler(self)
        if not self.kwargs and not self.wrappers:
            return self.id
        return data

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        table = handler(core_schema)
        return {"anyOf": [{"type": "string", "minLength": 1,
                           "description": "A gymnasium environment id."}, table]}

    def __str__(self) -> str:
        """The id: what messages name the environment by."""
        return self.id

    def __hash__(self) -> int:
        # frozen models hash their fields, and `kwargs` is a dict; a RunnerSpec holding this
        # stays hashable, as it was with a bare id
        return hash(json.dumps(self.model_dump(mode="json"), sort_keys=True))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_environment_config, (self.id, dict(self.kwargs), tuple(self.wrappers)))


def _not_plain(value: Any, path: str) -> str | None:
    """Why `value` (at kwargs.`path`) is not a finite value that TOML or JSON can hold, or None."""
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{path} must be a finite number, not {value}"
    if isinstance(value, list):
        for index, item in enumerate(value):
            problem = _not_plain(item, f"{path}[{index}]")
            if problem:
                return problem
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{path} has a key {key!r} that is not a string"
            problem = _not_plain(item, f"{path}.{key}")
            if problem:
                return problem
        return None
    return (f"{path} must be a string, number, boolean, array or table, not "
            f"{type(value).__name__}")


def _environment_config(id: str, kwargs: dict[str, Any],
                        wrappers: tuple[WrapperConfig, ...]) -> EnvironmentConfig:
    """An unpickled environment: validated when it was pickled, so not validated again."""
    return EnvironmentConfig.model_construct(id=id, kwargs=kwargs, wrappers=wrappers)


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
