"""The `[brain]` table of a chain: `stages`, each an installed brain's own table.

A stage is validated by its brain's config model, found in the registry by its `type`, so
errors name `brain.stages[0].field` exactly as a lone brain's name `brain.field`. Every stage
but the last also carries `output_size`, a key of the chain taken out before the stage's own
validation. The validated stage keeps its template class too, so the chain template is built
from the very registry the config was checked against (a validation `context` of
`{"registry": ...}` chooses it; without one, this process's registry).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from pydantic import (
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    TypeAdapter,
    ValidationError,
    create_model,
    field_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import InitErrorDetails, PydanticCustomError, core_schema

from evo_core.contract.config_models import BrainConfig, component_type_name
from evo_core.hooks.discovery import get_registry
from evo_core.hooks.registry import Registry
from evo_core.suggest import did_you_mean

__all__ = ["ChainConfig", "ChainStage", "CHAIN"]

CHAIN = "chain"


@dataclass(frozen=True)
class ChainStage:
    """One validated stage: its brain's config, that brain's template class, and the size of
    the vector it hands on (None for the last stage, which acts on the environment)."""

    config: BrainConfig
    template_class: type[Any]
    output_size: int | None


def _registry(info: core_schema.ValidationInfo) -> Registry:
    context = info.context
    if isinstance(context, Mapping) and isinstance(context.get("registry"), Registry):
        registry: Registry = context["registry"]
        return registry
    return get_registry()


def _error(loc: tuple[int | str, ...], message: str, value: Any) -> InitErrorDetails:
    return InitErrorDetails(type=PydanticCustomError("chain_stage", message), loc=loc,
                            input=value)


def _stage(index: int, raw: Any, last: bool, registry: Registry,
           info: core_schema.ValidationInfo, errors: list[InitErrorDetails]) -> ChainStage | None:
    """One stage table validated, or None with its problems appended to `errors`."""
    if isinstance(raw, ChainStage):
        return raw
    where: tuple[int | str, ...] = (index,)  # pydantic puts the field name in front
    if not isinstance(raw, Mapping):
        errors.append(_error(where, "each stage must be a table with a brain `type`", raw))
        return None
    table = dict(raw)
    output_size = table.pop("output_size", None)
    problems = len(errors)
    size_problem = _output_size_problem(output_size, last, table)
    if size_problem is not None:
        errors.append(_error((*where, "output_size"), *size_problem))
    brains = {name: c for name, c in registry.components["brain"].items() if name != CHAIN}
    kind = table.get("type")
    component = brains.get(str(kind))
    if component is None:
        errors.append(_error((*where, "type"), *_type_problem(kind, raw, brains)))
        return None
    try:
        config = component.config_model.model_validate(table, context=info.context)
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            errors.append(InitErrorDetails(type=error["type"], loc=where + tuple(error["loc"]),
                                           input=error.get("input"), ctx=error.get("ctx", {})))
        return None
    if len(errors) > problems:
        return None
    assert isinstance(config, BrainConfig)
    return ChainStage(config, component.cls, None if last else int(output_size))


def _output_size_problem(output_size: Any, last: bool, table: dict[str, Any]
                         ) -> tuple[str, Any] | None:
    """What is wrong with a stage's `output_size` (message, value), or None."""
    if last and output_size is not None:
        return ("the last stage acts on the environment, so its size comes from the action "
                "space; remove output_size", output_size)
    if not last and output_size is None:
        return ("every stage but the last needs output_size (the length of the vector it hands "
                "to the next stage); this one has none", table)
    if not last and (isinstance(output_size, bool) or not isinstance(output_size, int)
                     or output_size < 1):
        return "must be an integer >= 1", output_size
    return None


def _type_problem(kind: Any, raw: Any, brains: Mapping[str, Any]) -> tuple[str, Any]:
    """Why a stage's `type` names no brain that can be a stage (message, value)."""
    installed = ", ".join(brains) or "none"
    if kind is None:
        return f"missing; set it to one of: {installed}", raw
    if kind == CHAIN:
        return ("a chain cannot be a stage; put its stages into this chain instead (the result "
                "is the same brain)", kind)
    hint = did_you_mean(str(kind), list(brains))
    return f"unknown brain type{hint}; installed: {installed}", kind


def _validate_stages(value: Any, info: core_schema.ValidationInfo) -> tuple[ChainStage, ...]:
    if not isinstance(value, (list, tuple)) or not value:
        raise PydanticCustomError("chain_stages", "must be a non-empty list of stage tables, "
                                  "e.g. stages = [{type = \"ffnn\", output_size = 8}, "
                                  "{type = \"ctrnn\"}]")
    registry = _registry(info)
    errors: list[InitErrorDetails] = []
    stages = [_stage(index, raw, index == len(value) - 1, registry, info, errors)
              for index, raw in enumerate(value)]
    if errors:
        raise ValidationError.from_exception_data("ChainConfig", errors)
    return tuple(stage for stage in stages if stage is not None)


def _dump_stages(stages: tuple[ChainStage, ...],
                 info: core_schema.SerializationInfo) -> list[dict[str, Any]]:
    """The stage tables as written: each brain's own keys, plus output_size."""
    dumped = []
    for stage in stages:
        table = stage.config.model_dump(mode="json" if info.mode_is_json() else "python")
        if stage.output_size is not None:
            table["output_size"] = stage.output_size
        dumped.append(table)
    return dumped


@functools.lru_cache(maxsize=64)
def _stage_model(model: type[BrainConfig]) -> type[BrainConfig]:
    """`model` plus output_size: only for the JSON Schema, never instantiated."""
    stage: type[BrainConfig] = create_model(
        f"{model.__name__}Stage", __base__=model,
        output_size=(int | None, Field(None, ge=1, description="Length of the vector this "
                                       "stage hands on; required on every stage but the last.")))
    return stage


class _Stages:
    """The pydantic type of `stages`: validated against the registry, written back as tables,
    and described in the JSON Schema as a list of any installed brain's table."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any,
                                     handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.with_info_plain_validator_function(
            _validate_stages, serialization=core_schema.plain_serializer_function_ser_schema(
                _dump_stages, info_arg=True))

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: core_schema.CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        models = [_stage_model(c.config_model) for name, c in
                  get_registry().components["brain"].items()
                  if name != CHAIN and issubclass(c.config_model, BrainConfig)
                  and component_type_name(c.config_model) is not None]
        if not models:
            return {"type": "array", "items": {"type": "object"}}
        union: Any = models[0] if len(models) == 1 else \
            Annotated[Union[tuple(models)], Field(discriminator="type")]  # noqa: UP007
        adapter: TypeAdapter[Any] = TypeAdapter(list[union])
        result: JsonSchemaValue = handler(adapter.core_schema)
        result["minItems"] = 1
        return result


class ChainConfig(BrainConfig):
    """A chain of installed brains: each stage's output is the next stage's observation."""

    type: Literal["chain"] = "chain"
    stages: Annotated[tuple[ChainStage, ...], _Stages()] = Field(
        ..., description="The brains, input side first: each an installed brain's table "
        "(its `type` and fields) plus, on every stage but the last, `output_size`, the length "
        "of the vector in [-1, 1] it hands on.")

    @field_validator("normalize_input")
    @classmethod
    def _no_normalisation(cls, value: bool) -> bool:
        if value:
            raise ValueError("a chain hands observations to its first stage unchanged; set "
                             "normalize_input in brain.stages[0] instead")
        return value

