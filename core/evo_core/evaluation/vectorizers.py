"""The core's `episodes.vectorize` modes, as components of the registry's "vectorizer" kind.

They register through `evo_chunk_evaluators` like a plugin's (evaluation/plugin.py), so the
experiment finds every value of `episodes.vectorize` the same way, by name, and a plugin's new
value (evo-jax's "jax", or one written tomorrow) needs no edit of the core. Each class is an
`IChunkEvaluatorClass`: called with the config's tables in the main process, it refuses a
config it cannot run (envpool's task, before the environment is probed), `check`s the template
and the environment before the run starts, and `build`s the evaluator wherever the handler
evaluates: the per-genome `EpisodeRunner` ("off") or the `BatchedEpisodeRunner` (the others).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar, Literal

from evo_core.config.behaviour import BehaviourConfig
from evo_core.config.schema import EpisodesConfig
from evo_core.contract.config_models import EnvironmentConfig, VectorizerConfig
from evo_core.contract.protocols import IBrainTemplate, IEvaluator
from evo_core.evaluation.batched_episodes import BatchedRunnerSpec
from evo_core.evaluation.episodes import RunnerSpec
from evo_core.evaluation.vector_envs import check_envpool_id, check_vectorize

__all__ = ["Off", "Sync", "Native", "Envpool"]


class OffConfig(VectorizerConfig):
    """One genome at a time, its episodes one after another in one environment."""

    type: Literal["off"] = "off"


class SyncConfig(VectorizerConfig):
    """A worker's chunk as one batch of brains, each row with an environment of its own;
    results identical to off."""

    type: Literal["sync"] = "sync"


class NativeConfig(VectorizerConfig):
    """A batch of brains on gymnasium's own vector environment of the id (CartPole's, for
    one); reproducible for a seed, not equal to off."""

    type: Literal["native"] = "native"


class EnvpoolConfig(VectorizerConfig):
    """A batch of brains on envpool's C++ vector environment of the id (evo-core[envpool]);
    reproducible for a seed, not equal to off."""

    type: Literal["envpool"] = "envpool"


def _registered_already() -> None:
    """The core's modes run the ids gymnasium has: nothing to register."""


@dataclass(frozen=True)
class Off:
    """The per-genome runner's factory: small and picklable, so any handler ships it."""

    config_model: ClassVar[type[VectorizerConfig]] = OffConfig
    #: every gymnasium id: none of its own to list or register
    environments: ClassVar[Mapping[str, str]] = MappingProxyType({})
    register_environments: ClassVar[Callable[[], None]] = staticmethod(_registered_already)

    config: VectorizerConfig
    environment: EnvironmentConfig
    episodes: EpisodesConfig
    behaviour: BehaviourConfig | None = None

    def check(self, template: IBrainTemplate) -> None:
        """Every brain and environment runs one genome at a time."""

    def build(self, template: IBrainTemplate) -> IEvaluator:
        return RunnerSpec(self.environment, self.episodes, self.behaviour).build(template)


@dataclass(frozen=True)
class Sync(Off):
    """The batched runner's factory, rows with environments of their own."""

    config_model: ClassVar[type[VectorizerConfig]] = SyncConfig

    def check(self, template: IBrainTemplate) -> None:
        """A behaviour the rows cannot record, and (native, envpool) a vector environment
        that cannot be made or whose spaces are not the environment's."""
        check_vectorize(self.environment, self.config.type, self.behaviour)

    def build(self, template: IBrainTemplate) -> IEvaluator:
        return BatchedRunnerSpec(self.environment, self.episodes, self.behaviour).build(template)


@dataclass(frozen=True)
class Native(Sync):
    """The batched runner's factory on gymnasium's vector environment."""

    config_model: ClassVar[type[VectorizerConfig]] = NativeConfig


@dataclass(frozen=True)
class Envpool(Sync):
    """The batched runner's factory on envpool's vector environment."""

    config_model: ClassVar[type[VectorizerConfig]] = EnvpoolConfig

    def __post_init__(self) -> None:
        # envpool's own task names (`Pong-v5`) are no gymnasium ids: refused here, in the
        # main process, before the environment is probed, with the id to use instead
        check_envpool_id(self.environment, self.config.type)
