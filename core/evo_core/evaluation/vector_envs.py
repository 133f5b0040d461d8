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

from typing import Any

import gymnasium as gym
import numpy as np

from evo_core.contract.config_models import EnvironmentConfig
from evo_core.environments import as_environment, make_environment
from evo_core.errors import UserError

__all__ = ["VectorEnvironments", "check_same_spaces", "check_vectorize", "environment_id"]

#: Pools of other sizes kept open (a generation's chunks usually have one or two sizes).
_KEEP = 4

_ALTERNATIVES = ('use episodes.vectorize = "sync" (any environment, results identical to "off") '
                 'or "off"')


def environment_id(environment: EnvironmentConfig | str) -> str:
    """The gymnasium id of the configured environment: vector environments are made from the
    id alone, so an environment with kwargs or wrappers is refused."""
    table = as_environment(environment)
    if table.kwargs or table.wrappers:
        raise UserError(f"environment: episodes.vectorize = native and envpool make "
                        f"{table.id!r} from its id alone, without kwargs or wrappers; remove "
                        f"them, or {_ALTERNATIVES}")
    return table.id


def _envpool() -> Any:
    try:
        import envpool
    except ImportError:
        raise UserError('episodes.vectorize = "envpool" needs envpool: pip install '
                        '"evo-core[envpool]"') from None
    return envpool


class _EnvPoolAdapter:
    """An envpool pool behind the `reset(seed=...)` / `step(actions)` calls of a gymnasium
    vector environment; envpool takes its seed when the pool is made."""

    def __init__(self, env_id: str, count: int) -> None:
        self.env_id = env_id
        self.count = count
        self.pool: Any = None

    def reset(self, seed: int | None = None) -> tuple[Any, Any]:
        if self.pool is None or seed is not None:  # envpool's reset() does not reseed
            self.close()
            self.pool = _envpool().make(self.env_id, env_type="gymnasium", num_envs=self.count,
                                        seed=0 if seed is None else seed % 2**31)
        observations, info = self.pool.reset()
        return observations, info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, Any]:
        result: tuple[Any, Any, Any, Any, Any] = self.pool.step(np.asarray(actions))
        return result

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None


def _make(env_id: str, kind: str, count: int) -> Any:
    if kind == "envpool":
        return _EnvPoolAdapter(env_id, count)
    single = make_environment(env_id)  # registers evo's own ids; a bad id fails as for "off"
    single.close()
    try:
        vector = gym.make_vec(env_id, num_envs=count, vectorization_mode="vector_entry_point")
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


def check_vectorize(environment: EnvironmentConfig | str, kind: str) -> None:
    """A UserError now if `kind` cannot run `environment` ("off" and "sync" always can)."""
    if kind not in ("native", "envpool"):
        return
    env_id = environment_id(environment)
    if kind == "envpool":
        known = list(_envpool().list_all_envs())
        if env_id not in known:
            stem = env_id.split("-v")[0]
            similar = [name for name in known if name.split("-v")[0] == stem]
            hint = f"envpool has {', '.join(similar)}" if similar else \
                "envpool does not have this environment (envpool.list_all_envs() lists them)"
            raise UserError(f'episodes.vectorize = "envpool": no envpool environment '
                            f'{env_id!r}; {hint}; {_ALTERNATIVES}')
        return
    _make(env_id, kind, 1).close()


class VectorEnvironments:
    """Vector environments of one id, one per size asked for, made when first needed."""

    def __init__(self, env_id: str, kind: str) -> None:
        self.env_id = env_id
        self.kind = kind
        self.pools: dict[int, Any] = {}

    def get(self, count: int) -> Any:
        pool = self.pools.pop(count, None)
        if pool is None:
            pool = _make(self.env_id, self.kind, count)
        self.pools[count] = pool  # most recently used last
        while len(self.pools) > _KEEP:
            oldest = next(iter(self.pools))
            self.pools.pop(oldest).close()
        return pool

    def close(self) -> None:
        for pool in self.pools.values():
            pool.close()
        self.pools = {}
