"""A chunk's episodes as one compiled function: brains and environment fused by XLA.

Rows are candidates x runs (row `i * runs + r` is episode `r` of candidate `i`). Every row is
stepped in lock-step by `jax.vmap`; a `lax.scan` of `BLOCK` steps (the whole time limit of
gymnax's classic-control tasks) runs inside a `lax.while_loop` that stops once no row is
active, so only longer time limits (brax's 1000 steps) stop between blocks; the scan unrolls
the environment's `unroll` steps into one iteration. How a step ends a row's episode and what
the episode scores (a NaN/inf reward or observation, the environment's end, `max_steps`, and
their penalties) is the core's episode table, `evo_core.EpisodeRules`, called here with
`jax.numpy` as every other engine calls it with numpy; the environment's own time limit ends an
episode as the environment's end (truncation, no penalty). A finished row is masked, exactly as
the batched runner masks it: it gets no more reward and no more steps, and what its brain and
environment compute afterwards is ignored.

With an observation normaliser (`observation_normalization = "running"`), its mean and standard
deviation are arguments of the compiled function (a generation's new ones need no new
compilation): the brains step on `evo_core.normalize`'s output, and every active row pools the
raw observation it steps on into its statistics with `evo_core.combine`, the formulas every
core engine uses, returned per row (a row that is not active keeps its statistics as they
were).

Computation is in JAX's default float type (float32 unless `jax_enable_x64` is set), on JAX's
default device (a GPU when one is visible; `JAX_PLATFORMS=cpu` chooses the CPU).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from evo_core import EpisodeRules, IJaxTemplate, combine, normalize
from evo_jax.environments import JaxEnvironment
from evo_jax.keys import episode_keys, step_key

__all__ = ["BLOCK", "Rollout", "build_rollout"]

#: steps between two checks whether any row is still active: a loop iteration costs more than
#: the steps saved by stopping early (measured on CartPole: blocks of 32 steps made a solved
#: population's evaluation a quarter slower than one block of 500)
BLOCK = 512

#: (genomes (n, genome_size) float, environment seeds (n,) uint32, the normaliser's mean and
#: standard deviation (entries,) float) -> (returns (n, runs), steps (n, runs), non-finite
#: (n, runs), each row's statistics (count (n * runs,), mean and M2 (n * runs, entries)), or
#: None without a normaliser)
Rollout = Callable[[Any, Any, Any, Any], tuple[Any, Any, Any, Any]]


class _Carry(NamedTuple):
    t: Any
    observation: Any
    env_state: Any
    brain_state: Any
    total: Any
    steps: Any
    active: Any
    nonfinite: Any
    #: each row's (count, mean, M2) of the observations it stepped on; None without normaliser
    seen: Any


def _no_observations(rows: int, entries: int) -> tuple[Any, Any, Any]:
    """Each row's statistics before its first observation: count, mean and M2 zero."""
    import jax.numpy as jnp

    real = jnp.result_type(float)
    return (jnp.zeros((rows, 1), dtype=jnp.int32), jnp.zeros((rows, entries), dtype=real),
            jnp.zeros((rows, entries), dtype=real))


def _brain_inputs(normalizing: bool, clip: float | None) -> Callable[..., tuple[Any, Any]]:
    """(observations, active rows, statistics, mean, std) -> what the brains step on, and the
    statistics with the active rows' raw observations pooled in (without a normaliser: the
    observations as they are, and no statistics)."""
    import jax.numpy as jnp

    def as_they_are(observation: Any, active: Any, seen: Any, mean: Any, std: Any
                    ) -> tuple[Any, Any]:
        return observation, seen

    def normalised(observation: Any, active: Any, seen: Any, mean: Any, std: Any
                   ) -> tuple[Any, Any]:
        flat = observation.reshape(observation.shape[0], -1)
        count, seen_mean, m2 = seen
        pooled = combine(jnp, count, seen_mean, m2, 1, flat, 0.0)
        keep = active[:, None]  # an ended row's observation may be NaN: kept out
        seen = tuple(jnp.where(keep, new, old) for new, old in zip(pooled, seen))
        given = normalize(jnp, flat, mean, std, clip).reshape(observation.shape)
        return given.astype(observation.dtype), seen

    return normalised if normalizing else as_they_are


def build_rollout(template: IJaxTemplate, env: JaxEnvironment, runs: int,
                  max_steps: int | None, max_steps_penalty: float,
                  nonfinite_penalty: float, normalizing: bool = False,
                  clip: float | None = None) -> Rollout:
    """The jitted rollout of `runs` episodes per candidate (compiled once per chunk size);
    `normalizing`: the brains see the observations normalised (clipped to `clip`)."""
    import jax
    import jax.numpy as jnp

    rules = EpisodeRules(max_steps, max_steps_penalty, nonfinite_penalty)
    limit = env.episode_limit if max_steps is None else min(max_steps, env.episode_limit)
    vmap_step = jax.vmap(template.jax_step)
    vmap_env_step = jax.vmap(env.step)
    vmap_key = jax.vmap(step_key, in_axes=(0, None))
    brain_inputs = _brain_inputs(normalizing, clip)

    def finite_rows(values: Any) -> Any:
        rows = values.reshape(values.shape[0], -1)
        if not jnp.issubdtype(rows.dtype, jnp.inexact):
            return jnp.ones(rows.shape[0], dtype=bool)
        return jnp.isfinite(rows).all(axis=1)

    def ended(active: Any, total: Any, cause: Any) -> tuple[Any, Any, Any]:
        """The active rows' returns with the penalty of the episodes that end, which rows are
        still active, which ended for a NaN/inf."""
        total = jnp.where(active, total + rules.penalty(jnp, cause), total)
        return total, active & (cause == rules.GOING), active & (cause == rules.NONFINITE)

    def one_step(params: Any, step_roots: Any, mean: Any, std: Any, carry: _Carry) -> _Carry:
        active = carry.active
        given, seen = brain_inputs(carry.observation, active, carry.seen, mean, std)
        brain_state, action = vmap_step(params, carry.brain_state, given)
        observation, env_state, reward, terminated, truncated = vmap_env_step(
            vmap_key(step_roots, carry.t), carry.env_state, action)
        steps = carry.steps + active
        reward_ok = jnp.isfinite(reward)
        total = jnp.where(active & reward_ok, carry.total + reward, carry.total)
        cause = rules.after_step(jnp, reward_ok,
                                 terminated | truncated | (steps >= env.episode_limit), steps,
                                 finite_rows(observation))
        total, active, nonfinite = ended(active, total, cause)
        return _Carry(carry.t + 1, observation, env_state, brain_state, total, steps, active,
                      carry.nonfinite | nonfinite, seen)

    def run(genomes: Any, seeds: Any, mean: Any, std: Any) -> tuple[Any, Any, Any, Any]:
        count = genomes.shape[0]
        params = jax.vmap(template.jax_params)(genomes)
        rows_params = jax.tree.map(lambda leaf: jnp.repeat(leaf, runs, axis=0), params)
        reset_keys, step_roots = jax.vmap(episode_keys, in_axes=(0, None))(seeds, runs)
        reset_keys, step_roots = reset_keys.reshape(-1), step_roots.reshape(-1)
        observation, env_state = jax.vmap(env.reset)(reset_keys)
        rows = count * runs
        total, active, nonfinite = ended(
            jnp.ones(rows, dtype=bool), jnp.zeros(rows, dtype=jnp.result_type(float)),
            rules.after_reset(jnp, finite_rows(observation)))
        seen = _no_observations(rows, mean.shape[0]) if normalizing else None
        start = _Carry(jnp.asarray(0, dtype=jnp.int32), observation, env_state,
                       jax.vmap(template.jax_init_state)(rows_params), total,
                       jnp.zeros(rows, dtype=jnp.int32), active, nonfinite, seen)

        def block(carry: _Carry) -> _Carry:
            def body(inner: _Carry, _: Any) -> tuple[_Carry, None]:
                return one_step(rows_params, step_roots, mean, std, inner), None

            return jax.lax.scan(body, carry, None, length=min(BLOCK, limit),
                                unroll=env.unroll)[0]

        def going(carry: _Carry) -> Any:
            return (carry.t < limit) & carry.active.any()

        end = jax.lax.while_loop(going, block, start)
        shape = (count, runs)
        statistics = None if end.seen is None else \
            (end.seen[0].reshape(-1), end.seen[1], end.seen[2])
        return (end.total.reshape(shape), end.steps.reshape(shape),
                end.nonfinite.reshape(shape), statistics)

    rollout: Rollout = jax.jit(run)
    return rollout
