"""JAX random keys from evo's seeds, the same way in the rollout and in the gymnasium form.

An evaluation seed (from evo's seeded numpy streams) gives the environment seed that
`EpisodeRunner` derives from it (`SeedSequence(seed).generate_state(1)[0]`); the gymnasium form
is reset with that seed, the rollout is given it. From it, `jax.random.key(seed)` is split once
per episode in turn (the first episode from the seed, the next ones continuing, as gymnasium's
environments continue their random stream), each episode's key into a reset key and a step
root, and step `t` uses `fold_in(step root, t)`. Both paths thus draw exactly the same numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["environment_seeds", "episode_keys", "next_episode", "step_key"]


def environment_seeds(seeds: NDArray[np.int64]) -> NDArray[np.uint32]:
    """The environment seed of each evaluation seed, as `EpisodeRunner` derives it."""
    cache: dict[int, int] = {}
    out = np.empty(len(seeds), dtype=np.uint32)
    for index, seed in enumerate(seeds.tolist()):
        if seed not in cache:  # one seed per generation: derived once
            cache[seed] = int(np.random.SeedSequence(seed).generate_state(1)[0])
        out[index] = cache[seed]
    return out


def next_episode(key: Any) -> tuple[Any, Any, Any]:
    """(the key for later episodes, this episode's reset key, its step root)."""
    import jax

    key, episode = jax.random.split(key)
    reset_key, step_root = jax.random.split(episode)
    return key, reset_key, step_root


def step_key(step_root: Any, t: Any) -> Any:
    import jax

    return jax.random.fold_in(step_root, t)


def episode_keys(seed: Any, runs: int) -> tuple[Any, Any]:
    """The reset keys and step roots of `runs` consecutive episodes from one seed (traceable)."""
    import jax

    def one(key: Any, _: Any) -> tuple[Any, tuple[Any, Any]]:
        key, reset_key, step_root = next_episode(key)
        return key, (reset_key, step_root)

    _, (reset_keys, step_roots) = jax.lax.scan(one, jax.random.key(seed), None, length=runs)
    return reset_keys, step_roots
