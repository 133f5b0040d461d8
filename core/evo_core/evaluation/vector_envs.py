"""Vector environments for `episodes.vectorize` = "native" and "envpool", by environment id.

"native" is gymnasium's own vector implementation of an id (`gymnasium.make_vec` with
`vectorization_mode="vector_entry_point"`, e.g. CartPole's numpy `CartPoleVectorEnv`); "envpool"
is envpool's C++ pool of the same id (the `evo-core[envpool]` extra). Both reset a finished
environment on the step after its end, and both take one seed for the whole pool: envpool only
when the pool is made, so its pool is made again for every seeded reset.

`check_vectorize` makes one small vector environment before a run starts, so a missing vector
implementation or extra is one line naming the alternatives, not a failure inside a worker.
"""

from __future__ import annotations

import os
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from typing_extensions import Protocol, runtime_checkable

from evo_core.config.behaviour import BehaviourConfig
from evo_core.contract.config_models import EnvironmentConfig
from evo_core.environments import as_environment, make_environment
from evo_core.errors import UserError
from evo_core.evaluation.batched_behaviour import check_batched_behaviour
from evo_core.evaluation.envpool_tasks import EnvpoolTask, envpool_task

__all__ = ["SeededRows", "SomeEnvironments", "VectorEnvironments", "check_envpool_id",
           "check_same_spaces", "check_vectorize", "environment_id"]

#: Pools of other sizes kept open (a generation's chunks usually have one or two sizes).
_KEEP = 4

_ALTERNATIVES = ('use episodes.vectorize = "sync" (any environment, results identical to "off") '
                 'or "off"')


#: `gymnasium.make`'s own keywords: they wrap a single environment, and a vector environment
#: made from its entry point has no such wrappers (its own time limit is its registration's)
_MAKE_ONLY = ("max_episode_steps", "render_mode", "disable_env_checker", "autoreset",
              "apply_api_compatibility")


def environment_id(environment: EnvironmentConfig | str, kind: str = "envpool") -> str:
    """The gymnasium id of the configured environment. envpool makes its pool from the id
    alone, so an environment with kwargs or wrappers is refused for it; "native" passes the
    environment's own kwargs to its vector entry point (`evo/CartPoleSwingUp-v0`'s `hard`), but
    not wrappers or `gymnasium.make`'s own keywords, which only a single environment has."""
    table = as_environment(environment)
    if table.wrappers or (kind != "native" and table.kwargs):
        raise UserError(f"environment: episodes.vectorize = native and envpool make "
                        f"{table.id!r} without wrappers (envpool without kwargs too); remove "
                        f"them, or {_ALTERNATIVES}")
    make_only = sorted(set(table.kwargs) & set(_MAKE_ONLY))
    if make_only:
        raise UserError(f"environment.kwargs.{make_only[0]}: gymnasium.make's own keyword, which "
                        f'a vector environment has no use for; with episodes.vectorize = "native" '
                        f"end episodes with episodes.max_steps instead, or {_ALTERNATIVES}")
    return table.id


def _envpool() -> Any:
    """envpool, imported so that it leaves nothing behind: its jumanji module, imported with
    it, points matplotlib at a fixed `/tmp/envpool-jumanji-matplotlib` (made at import, outside
    TMPDIR, never removed) unless MPLCONFIGDIR is set; it is set to the folder matplotlib
    uses anyway, so nothing about matplotlib changes."""
    if "MPLCONFIGDIR" not in os.environ and "ENVPOOL_JUMANJI_MPLCONFIGDIR" not in os.environ:
        import matplotlib

        os.environ["MPLCONFIGDIR"] = matplotlib.get_configdir()
    try:
        import envpool
    except ImportError:
        raise UserError('episodes.vectorize = "envpool" needs envpool: pip install '
                        '"evo-core[envpool]"') from None
    return envpool


@runtime_checkable
class SomeEnvironments(Protocol):
    """A vector environment that can step some of its environments and leave the others as
    they are (envpool's pool: each environment has its own random stream, so an environment
    that is not stepped changes nothing for the others)."""

    def step_some(self, actions: Any, env_ids: Any) -> tuple[Any, Any, Any, Any, Any]:
        """Step the environments `env_ids` with `actions` (one row each): (the ids stepped,
        their observations, rewards, terminated, truncated), row `j` of each for id `j`."""


@runtime_checkable
class SeededRows(Protocol):
    """A vector environment whose `reset(seed=[s_0, s_1, ...])` (gymnasium's per-environment
    seeds) starts each row from its own seed: a row seeded s starts as the single
    environment's `reset(seed=s)` does, whatever the other rows' seeds. The batched runner
    then seeds each row's first episode from its job (the candidate's evaluation seed and the
    episode's index, `rows.episode_seed`), so that the candidates of a generation that share
    their evaluation seed (`seed_per = "generation"`) are ranked on the same start states, as
    with "off" (and as EvoJAX trains: every candidate on the iteration's same starts)."""

    def seeds_rows(self) -> Literal[True]:
        """Declares the capability (the batched runner checks the environment for it)."""


def _channels_last(images: Any) -> Any:
    """A batch of channels-first images (n, c, h, w) as gymnasium's (n, h, w, c)."""
    return np.ascontiguousarray(np.moveaxis(images, 1, -1))


class _EnvPoolAdapter:
    """An envpool pool behind the `reset(seed=...)` / `step(actions)` calls of a gymnasium
    vector environment; envpool takes its seed when the pool is made. `task` says which
    envpool task runs the id, and how (see envpool_tasks)."""

    def __init__(self, task: EnvpoolTask, count: int) -> None:
        self.task = task
        self.count = count
        self.pool: Any = None

    def _make(self, seed: int) -> Any:
        return _envpool().make(self.task.task_id, env_type="gymnasium", num_envs=self.count,
                               seed=seed, **self.task.kwargs)

    def spaces(self) -> tuple[gym.Space[Any], gym.Space[Any]]:
        """The spaces of one of its environments, as the rows reach the brain."""
        pool = self.pool if self.pool is not None else self._make(0)
        try:
            observations: gym.Space[Any] = pool.observation_space
            if self.task.channels_last and isinstance(observations, gym.spaces.Box):
                dtype: Any = observations.dtype  # annotated differently by gymnasium 1.3, 1.4
                observations = gym.spaces.Box(np.moveaxis(observations.low, 0, -1),
                                              np.moveaxis(observations.high, 0, -1),
                                              dtype=dtype)
            return observations, pool.action_space
        finally:
            if pool is not self.pool:
                pool.close()

    def reset(self, seed: int | None = None) -> tuple[Any, Any]:
        if self.pool is None or seed is not None:  # envpool's reset() does not reseed
            self.close()
            self.pool = self._make(0 if seed is None else seed % 2**31)
        observations, info = self.pool.reset()
        if self.task.channels_last:
            observations = _channels_last(observations)
        return observations, info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, Any]:
        observations, rewards, terminated, truncated, info = self.pool.step(np.asarray(actions))
        if self.task.channels_last:
            observations = _channels_last(observations)
        return observations, rewards, terminated, truncated, info

    def step_some(self, actions: Any, env_ids: Any) -> tuple[Any, Any, Any, Any, Any]:
        observations, rewards, terminated, truncated, info = self.pool.step(
            np.asarray(actions), np.asarray(env_ids, dtype=np.int32))
        if self.task.channels_last:
            observations = _channels_last(observations)
        return info["env_id"], observations, rewards, terminated, truncated

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None


def _make(environment: EnvironmentConfig, kind: str, count: int) -> Any:
    env_id = environment_id(environment, kind)
    if kind == "envpool":
        return _EnvPoolAdapter(envpool_task(env_id, list(_envpool().list_all_envs())), count)
    single = make_environment(environment)  # registers evo's ids; a bad id fails as for "off"
    single.close()
    try:
        vector = gym.make_vec(env_id, num_envs=count, vectorization_mode="vector_entry_point",
                              **environment.kwargs)
    except gym.error.Error as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        native = sorted(name for name, spec in gym.registry.items() if spec.vector_entry_point)
        raise UserError(f'episodes.vectorize = "native": {message}; ids with one here: '
                        f'{", ".join(native)}; {_ALTERNATIVES}') from None
    try:
        check_same_spaces(env_id, kind, (vector.single_observation_space,
                                         vector.single_action_space),
                          (single.observation_space, single.action_space))
    except UserError:
        vector.close()
        raise
    return vector


def check_same_spaces(env_id: str, kind: str, vector: tuple[gym.Space[Any], gym.Space[Any]],
                      single: tuple[gym.Space[Any], gym.Space[Any]]) -> None:
    """A UserError naming `env_id` unless its vector environment's spaces (of one of its
    environments) are the single environment's: the brain is built for the single one's, so
    a vector environment that steps other actions would train the wrong task in silence."""
    for what, theirs, ours in zip(("observations", "actions"), vector, single):
        if theirs != ours:
            raise UserError(f'episodes.vectorize = "{kind}": the vector environment of '
                            f'{env_id!r} has {what} {theirs}, but {env_id!r} itself has {ours} '
                            "(the brain is built for those); the two must agree: fix the "
                            f"environment's vector version, or {_ALTERNATIVES}")


def check_envpool_id(environment: EnvironmentConfig | str, kind: str) -> None:
    """For "envpool", a UserError now if envpool has no task for the id, before gymnasium is
    asked for the id (envpool's own names, `Pong-v5`, are no gymnasium ids: the refusal says
    which id to use instead of gymnasium's "no such version")."""
    if kind == "envpool":
        envpool_task(environment_id(environment), list(_envpool().list_all_envs()))


def check_vectorize(environment: EnvironmentConfig | str, kind: str,
                    behaviour: BehaviourConfig | None = None) -> None:
    """A UserError now if `kind` cannot run `environment` ("off" and "sync" always can), or
    cannot record `behaviour` on its rows."""
    if kind not in ("native", "envpool"):
        return
    table = as_environment(environment)
    env_id = environment_id(table, kind)
    vector = _make(table, kind, 1)
    try:
        check_batched_behaviour(behaviour, kind, vector)
        if kind == "envpool":  # native pools are checked as they are made
            single = make_environment(env_id)
            single.close()
            check_same_spaces(env_id, kind, vector.spaces(),
                              (single.observation_space, single.action_space))
    finally:
        vector.close()


class VectorEnvironments:
    """Vector environments of one environment table, one per size asked for, made when first
    needed."""

    def __init__(self, environment: EnvironmentConfig | str, kind: str) -> None:
        self.environment = as_environment(environment)
        self.env_id = environment_id(self.environment, kind)
        self.kind = kind
        self.pools: dict[int, Any] = {}

    def get(self, count: int) -> Any:
        pool = self.pools.pop(count, None)
        if pool is None:
            pool = _make(self.environment, self.kind, count)
        self.pools[count] = pool  # most recently used last
        while len(self.pools) > _KEEP:
            oldest = next(iter(self.pools))
            self.pools.pop(oldest).close()
        return pool

    def close(self) -> None:
        for pool in self.pools.values():
            pool.close()
        self.pools = {}
