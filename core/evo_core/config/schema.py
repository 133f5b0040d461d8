"""The experiment schema: fixed top-level keys, and typed tables joined from what is installed.

The `brain`, `optimizer` and `processing` tables, and each entry of `environment.wrappers`, are
discriminated unions over every registered component's config model, built at run time, so a
config for an installed brain validates fully (defaults filled in, every field checked) and
`evo schema` describes exactly this installation.
The `trackers` table has one optional sub-table per installed tracker, named by its `type`, and
`episodes.vectorize` is one of the installed vectorizers' names.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_serializer,
)

from evo_core.config.behaviour import BehaviourConfig, FitnessShapingConfig, NoveltyConfig
from evo_core.config.champion import FRESH_BELOW, ChampionConfig
from evo_core.config.messages import render_errors
from evo_core.config.predecessor import refuse_predecessor
from evo_core.config.stop import ChampionTest, StopConfig
from evo_core.contract.config_models import (
    BrainConfig,
    EnvironmentConfig,
    OptimizerConfig,
    ProcessingConfig,
    StrictModel,
    TrackerConfig,
)
from evo_core.contract.trust import STEP_LIMIT, Resource
from evo_core.errors import UserError
from evo_core.hooks.registry import KINDS, Kind, Registry

__all__ = ["EpisodesConfig", "TrackersConfig", "ExperimentConfig", "experiment_model",
           "validate_config"]


#: The most rows a received run may step at once: 16 times the default (each row holds a brain's
#: state, an environment and its observation).
ROW_LIMIT = 4096


class EpisodesConfig(StrictModel):
    """How one genome is scored: the mean return of `runs` episodes."""

    runs: int = Field(1, ge=1, description="Episodes per evaluation; fitness is their mean return.")
    max_steps: Annotated[int | None, Resource("steps per episode", STEP_LIMIT)] = Field(
        None, ge=1, description="End an episode after this many steps (the environment's own "
        "time limit still applies); unset: only the environment ends it.")
    max_steps_penalty: float = Field(
        0.0, description="Added to the return of an episode that reached max_steps.")
    seed_per: Literal["generation", "candidate"] = Field(
        "generation", description="One episode seed per generation shared by all candidates "
        "(fair comparison), or one per candidate.")
    nonfinite_penalty: float = Field(
        -1000.0, description="An observation or reward that is NaN or infinite ends the episode; "
        "this is added to the return accumulated so far, and a warning names the genome.")
    vectorize: str = Field(
        "off", min_length=1, description="How a worker's chunk of candidates is evaluated: off "
        "(one genome at a time), or as one batch of brains: sync (one ordinary environment per "
        "candidate, results identical to off), native (gymnasium's own vector environment, e.g. "
        "CartPole) or envpool (evo-core[envpool]), which step up to batch_rows episodes at once "
        "with their own random streams, reproducible for a seed and processing set-up but not "
        "equal to off; or a plugin's way (evo-core[jax]'s jax: the chunk's episodes compiled "
        "into one JAX function, for the environments `evo list-environments` shows). `evo "
        "list-vectorizers` lists the installed values.")
    batch_rows: Annotated[int, Resource("rows stepped at once", ROW_LIMIT)] = Field(
        256, ge=1, description="With vectorize on: the most rows (episodes stepped together) of "
        "a worker's batch. A row whose episodes end takes the chunk's next candidate, so a "
        "chunk finishes when its jobs do; native and envpool results depend on it (and on the "
        "number of workers), sync results never do.")
    observation_normalization: Literal["off", "running"] = Field(
        "off", description="running: each entry of the (Box) observation reaches the brain as "
        "(o - mean) / std, with the mean and standard deviation of every observation the "
        "evaluations of all earlier generations gave their brains (ARS, OpenAI-ES); checkpointed, "
        "and stored with every kept genome for replay. off: observations as they are.")
    observation_clip: float | None = Field(
        None, gt=0, allow_inf_nan=False, description="With observation_normalization = "
        "\"running\": clip the normalised entries to [-observation_clip, observation_clip] "
        "(OpenAI-ES uses 5); unset: no clipping.")

    @field_validator("observation_clip")
    @classmethod
    def _clips_normalised(cls, clip: float | None, info: ValidationInfo) -> float | None:
        if clip is not None and info.data.get("observation_normalization") != "running":
            raise ValueError("clips normalised observations; set observation_normalization = "
                             "\"running\" or remove observation_clip")
        return clip

    @model_serializer(mode="wrap")
    def _later_settings_unsaid(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # a run that leaves the settings added since [episodes] shipped at their defaults
        # writes the config.json it always wrote, so the checkpoints of runs made before they
        # existed still resume
        data: dict[str, Any] = handler(self)
        for key, default in _LATER_EPISODES_SETTINGS.items():
            if key in data and data[key] == default:
                del data[key]
        return data

    def __reduce__(self) -> tuple[Any, ...]:
        # the experiment model's subclass (`vectorize` one of the installed values) is built at
        # run time, and worker processes cannot import it: a runner spec holding it pickles as
        # this class
        return (_episodes_config, (self.model_dump(),))


#: Settings of `[episodes]` added after it shipped, and their defaults (unsaid in config.json).
_LATER_EPISODES_SETTINGS: dict[str, Any] = {"observation_normalization": "off",
                                            "observation_clip": None}


def _episodes_config(fields: dict[str, Any]) -> EpisodesConfig:
    """Unpickled episodes: validated when they were pickled, so not validated again."""
    return EpisodesConfig.model_construct(**fields)


class TrackersConfig(StrictModel):
    """The `[trackers]` table: `[trackers.NAME]` enables the installed tracker NAME with its
    settings. The experiment model subclasses this with one field per installed tracker."""

    def enabled(self) -> dict[str, TrackerConfig]:
        """The configured trackers by name."""
        return {name: value for name, value in self if isinstance(value, TrackerConfig)}

    @model_serializer(mode="wrap")
    def _without_disabled(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # config.json names only the trackers in use, so a run folder stays valid where
        # other trackers are installed
        data: dict[str, Any] = handler(self)
        return {name: value for name, value in data.items() if value is not None}


class ExperimentConfig(StrictModel):
    """The typed result of validation; `brain`, `optimizer` and `processing` are the installed
    components' own config models."""

    environment: EnvironmentConfig = Field(
        ..., description="A gymnasium environment id, or a table with id, kwargs (of "
        "gymnasium.make) and wrappers (see `evo list-wrappers`).")
    seed: int = Field(0, ge=0, description="Seeds every random draw of the run.")
    generations: int = Field(..., ge=1, description="Generations to run.")
    brain: BrainConfig
    optimizer: OptimizerConfig
    episodes: EpisodesConfig = Field(default_factory=lambda: EpisodesConfig())
    processing: ProcessingConfig
    checkpoint_every: int = Field(
        1, ge=0, description="Write a checkpoint every this many generations (0: only at the end).")
    hall_of_fame_size: int = Field(10, ge=1, description="Best distinct genomes kept, by fitness.")
    trackers: TrackersConfig = Field(
        default_factory=lambda: TrackersConfig(),
        description="Experiment trackers to send each generation to (see `evo list-trackers`).")
    provenance: dict[str, Any] | None = Field(
        None, description="Written by evo into a run folder's config.json (versions, git commit, "
        "run id, local plugin modules); refused in a config given to `evo train`.")
    behaviour: BehaviourConfig | None = Field(
        None, description="Record a behaviour descriptor of every evaluation (for novelty "
        "search and optimizers that use descriptors).")
    novelty: NoveltyConfig | None = Field(
        None, description="Novelty search: the optimizer is told fitness rank + novelty_weight "
        "x novelty rank (+ the efficiency rank of [fitness_shaping]); needs [behaviour].")
    fitness_shaping: FitnessShapingConfig | None = Field(
        None, description="Tell the optimizer fitness rank + efficiency_weight x steps rank "
        "instead of the raw fitness.")
    stop: StopConfig | None = Field(
        None, description="When the run counts as solved (a fitness, champion tests) and a "
        "budget of evaluations; log.csv then has `solved` and `test_episodes` columns.")
    champion: ChampionConfig | None = Field(
        None, description="Choose best.npz on fresh episodes: each generation's best "
        f"candidates replay episodes they never trained on. `evo train` adds the default table "
        f"to a run with fewer than {FRESH_BELOW} episodes per evaluation; episodes = 0 turns "
        "it off.")

    @model_serializer(mode="wrap")
    def _without_unused_tables(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # a run without them writes the config.json it always wrote, so the checkpoints of
        # runs made before these tables existed still resume
        data: dict[str, Any] = handler(self)
        for name in _OPTIONAL_TABLES:
            if data.get(name, ()) is None:
                del data[name]
        return data


#: Tables that config.json names only when they are set.
_OPTIONAL_TABLES = ("behaviour", "novelty", "fitness_shaping", "stop", "champion")


def _union(registry: Registry, kind: Kind) -> Any:
    models = [component.config_model for component in registry.components[kind].values()]
    if not models:
        return KINDS[kind].config_base
    return Annotated[Union[tuple(models)], Field(discriminator="type")]  # noqa: UP007


def _episodes(registry: Registry) -> type[EpisodesConfig]:
    """`episodes` whose `vectorize` is one of the installed vectorizers (the core's modes and
    the plugins'), which `evo schema` lists; a value that is not is said by
    `Registry.unknown` (config/messages.py)."""
    names = tuple(registry.names("vectorizer"))
    if not names:
        return EpisodesConfig
    installed: Any = Literal.__getitem__(names)
    return create_model("EpisodesConfig", __base__=EpisodesConfig, vectorize=(installed, Field(
        "off", description=EpisodesConfig.model_fields["vectorize"].description)))


def _environment(registry: Registry) -> type[EnvironmentConfig]:
    # named as its base: pickling turns it into the base (EnvironmentConfig.__reduce__)
    entries: Any = types.GenericAlias(tuple, (_union(registry, "wrapper"), ...))
    description = EnvironmentConfig.model_fields["wrappers"].description
    return create_model("EnvironmentConfig", __base__=EnvironmentConfig,
                        wrappers=(entries, Field((), description=description)))


def _trackers(registry: Registry) -> type[TrackersConfig]:
    fields: dict[str, Any] = {
        component.name: (component.config_model | None,
                         Field(None, description=component.description or None))
        for component in registry.components["tracker"].values()}
    return create_model("TrackersConfig", __base__=TrackersConfig, **fields)


def _stop(environment: type[EnvironmentConfig]) -> Any:
    """`[stop]` whose champion tests' environments validate their wrappers as `environment`."""
    test = create_model("ChampionTest", __base__=ChampionTest,
                        environment=(environment, Field(..., description=ChampionTest
                                                        .model_fields["environment"].description)))
    description = StopConfig.model_fields["champion_tests"].description
    tests: Any = types.GenericAlias(tuple, (test, ...))
    return create_model("StopConfig", __base__=StopConfig,
                        champion_tests=(tests, Field((), description=description)))


@functools.lru_cache(maxsize=8)
def experiment_model(registry: Registry) -> type[ExperimentConfig]:
    """The experiment model for the components in `registry` (built once per registry)."""
    processing_default: dict[str, Any] = {}
    sequential = registry.components["processing"].get("sequential")
    if sequential is not None:
        model = sequential.config_model
        processing_default = {"default_factory": model}
    trackers = _trackers(registry)
    environment = _environment(registry)
    episodes = _episodes(registry)
    return create_model(
        "ExperimentConfig",
        __base__=ExperimentConfig,
        environment=(environment, Field(
            ..., description=ExperimentConfig.model_fields["environment"].description)),
        stop=(_stop(environment) | None, Field(
            None, description=ExperimentConfig.model_fields["stop"].description)),
        brain=(_union(registry, "brain"), Field(..., description="The brain.")),
        optimizer=(_union(registry, "optimizer"),
                   Field(..., description="The optimizer.")),
        episodes=(episodes, Field(default_factory=episodes)),
        processing=(_union(registry, "processing"),
                    Field(description="Where evaluations run.", **processing_default)),
        trackers=(trackers, Field(default_factory=trackers, description=ExperimentConfig
                                  .model_fields["trackers"].description)),
    )


def validate_config(data: dict[str, Any], registry: Registry, source: str,
                    overrides: Mapping[str, str] | None = None) -> ExperimentConfig:
    """Validate a config dict; a UserError has one line per problem, each naming `source`, or
    the `--set` of `overrides` (dotted key -> assignment) that wrote the bad value."""
    if not registry.components["brain"]:
        raise UserError(f"{source}: no brain plugin is installed; install one, e.g. "
                        "`pip install -e plugins/ctrnn`, and check `evo list-brains`")
    model = experiment_model(registry)
    try:
        return model.model_validate(data, context={"registry": registry})
    except ValidationError as exc:
        refuse_predecessor(data, source)  # one line saying `evo migrate`, not one per old key
        raise UserError(render_errors(exc, data, registry, source, model, overrides)) from None
