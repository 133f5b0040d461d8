"""The episode rules (contract/episode_rules.py) act alike in every engine: a toy whose episodes
end every way the table knows (the environment's end, max_steps, a NaN/inf reward or
observation, and the ties between them) scores what the table says, worked out by hand, through
vectorize = off, sync, native, envpool and jax: every engine is compared with the same numbers,
so with every other (jax to float32's precision, the others exactly).

The candidate chooses its episode: its brain (a linear FFNN whose only non-zero genes are the
output biases) takes the same action at every step, and the action is the episode's kind. So
every engine plays the same episodes, whatever seeds, rows or keys it gives them. The toy's
dynamics are written once, over an array namespace, for its gymnasium, vector and JAX forms.
envpool runs only its own C++ environments: "envpool" here is the engine's envpool path (a pool
that steps only some of its environments, `SomeEnvironments`) on a stand-in pool of the toy."""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import numpy as np
import pytest

from brain_ffnn import FFNNConfig, FFNNTemplate
from evo_core import jax_form
from evo_core.config.schema import EpisodesConfig
from evo_core.contract.protocols import EvaluationResult
from evo_core.evaluation.batched_episodes import BatchedEpisodeRunner
from evo_core.evaluation.episodes import EpisodeRunner

TOY = "evo_test/EpisodeRules-v0"
RUNS, MAX_STEPS, LIMIT_PENALTY, NONFINITE_PENALTY = 2, 5, -7.5, -100.0
EPISODES: dict[str, Any] = dict(runs=RUNS, max_steps=MAX_STEPS, max_steps_penalty=LIMIT_PENALTY,
                nonfinite_penalty=NONFINITE_PENALTY)

#: kind -> (the step the environment terminates at, the step whose observation is NaN, the step
#: whose reward is NaN; 0: none)
KINDS = [(3, 0, 0), (0, 0, 0), (5, 0, 0), (0, 2, 0), (0, 0, 2), (0, 5, 0), (0, 0, 5), (4, 4, 0)]
#: the reward of step t (t >= 6: the last): a return shows which steps' rewards were added
#: (exactly, in float32 too)
REWARDS = [0.0, 1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0]

#: what the table makes of each kind, by hand: (return, steps, ended by a NaN/inf)
EXPECTED = [
    (1 + 10 + 100, 3, False),  # the environment ends it
    (11111 + LIMIT_PENALTY, 5, False),  # never ends by itself: max_steps, with its penalty
    (11111, 5, False),  # the environment ends it at max_steps: its end first, no penalty
    (1 + 10 + NONFINITE_PENALTY, 2, True),  # a NaN observation: the step's reward counts
    (1 + NONFINITE_PENALTY, 2, True),  # a NaN reward: not added
    (11111 + LIMIT_PENALTY, 5, False),  # a NaN observation at max_steps: max_steps first
    (1111 + NONFINITE_PENALTY, 5, True),  # a NaN reward at max_steps: the NaN first
    (1111, 4, False),  # a NaN observation as the environment ends it: its end first
]

OBSERVATIONS = gym.spaces.Box(-np.inf, np.inf, (2,), dtype=np.float32)
ACTIONS: gym.spaces.Discrete[Any] = gym.spaces.Discrete(len(KINDS))
#: the environment's own time limit (JAX form): far beyond max_steps
EPISODE_LIMIT = 100


def toy_step(xp: Any, t: Any, kind: Any) -> tuple[Any, Any, Any, Any]:
    """Step `t` (1, 2, ...) of episodes of `kind`, for rows: (observation, reward, terminated,
    truncated)."""
    table = xp.asarray(KINDS)[kind]
    ends, nan_observation, nan_reward = table[..., 0], table[..., 1], table[..., 2]
    real = xp.float32
    observation = xp.stack([xp.where(t == nan_observation, xp.nan, t).astype(real),
                            xp.zeros(xp.shape(t), dtype=real)], axis=-1)
    reward = xp.where(t == nan_reward, xp.nan,
                      xp.asarray(REWARDS, dtype=real)[xp.minimum(t, len(REWARDS) - 1)]).astype(real)
    return observation, reward, t == ends, xp.zeros(xp.shape(t), dtype=bool)


def first_observation(rows: int) -> np.ndarray:
    return np.zeros((rows, 2), dtype=np.float32)


class Toy(gym.Env[np.ndarray, int]):
    """The toy, one environment."""

    observation_space = OBSERVATIONS
    action_space = ACTIONS

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return first_observation(1)[0], {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        observation, reward, terminated, truncated = toy_step(
            np, np.array([self.t]), np.array([int(action)]))
        return observation[0], float(reward[0]), bool(terminated[0]), bool(truncated[0]), {}


class ToyVector(gym.vector.VectorEnv[np.ndarray, np.ndarray, np.ndarray]):
    """The toy as a vector environment ("native"), with next-step autoreset as gymnasium's
    own: the step after an environment's end only resets it."""

    metadata = {"autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP}  # noqa: RUF012 - gymnasium's VectorEnv declares metadata a plain class attribute

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        self.num_envs = num_envs
        self.single_observation_space = OBSERVATIONS
        self.single_action_space = ACTIONS
        self.observation_space = gym.vector.utils.batch_space(OBSERVATIONS, num_envs)
        self.action_space = gym.vector.utils.batch_space(ACTIONS, num_envs)
        self.t = np.zeros(num_envs, dtype=np.int64)
        self.restart = np.zeros(num_envs, dtype=bool)
        self.observations = first_observation(num_envs)

    def reset(self, *, seed: Any = None, options: Any = None) -> tuple[np.ndarray, dict[str, Any]]:
        self.t[:] = 0
        self.restart[:] = False
        self.observations = first_observation(self.num_envs)
        return self.observations.copy(), {}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                  np.ndarray, dict[str, Any]]:
        ids = np.arange(self.num_envs)
        _, observations, rewards, terminated, truncated = self.step_rows(actions, ids)
        return observations, rewards, terminated, truncated, {}

    def step_rows(self, actions: np.ndarray, ids: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        restart = self.restart[ids]
        t = np.where(restart, 0, self.t[ids] + 1)
        observations, rewards, terminated, truncated = toy_step(np, t, np.asarray(actions))
        observations[restart] = 0.0
        rewards[restart] = 0.0
        terminated &= ~restart
        self.t[ids] = t
        self.restart[ids] = terminated | truncated
        self.observations[ids] = observations
        return ids, observations, rewards, terminated, truncated


class ToyPool(ToyVector):
    """A stand-in for envpool's pool: steps some of its environments (`SomeEnvironments`)."""

    def step_some(self, actions: Any, env_ids: Any) -> tuple[Any, Any, Any, Any, Any]:
        self.stepped_some = True
        return self.step_rows(np.asarray(actions), np.asarray(env_ids))


if TOY not in gym.registry:
    gym.register(TOY, entry_point=cast(Any, Toy), vector_entry_point=cast(Any, ToyVector),
                 disable_env_checker=True)


def toy_template() -> FFNNTemplate:
    return FFNNTemplate(FFNNConfig(hidden_layers=[], output_activation="linear"), OBSERVATIONS,
                        ACTIONS, np.random.default_rng(0))


def kind_genomes(template: FFNNTemplate) -> np.ndarray:
    """Candidate k's brain takes action k at every step, whatever it observes: zero weights, an
    output bias of 1 for action k."""
    (outputs, inputs), = template.shapes
    genomes = np.zeros((len(KINDS), template.genome_size))
    genomes[np.arange(len(KINDS)), outputs * inputs + np.arange(len(KINDS))] = 1.0
    return genomes


def evaluate_off(template: FFNNTemplate, genomes: np.ndarray, seeds: np.ndarray
                 ) -> list[EvaluationResult]:
    runner = EpisodeRunner(template, TOY, EpisodesConfig(**EPISODES))
    try:
        return [runner.evaluate(genome, int(seed)) for genome, seed in zip(genomes, seeds)]
    finally:
        runner.close()


def evaluate_batched(mode: str, template: FFNNTemplate, genomes: np.ndarray,
                     seeds: np.ndarray) -> list[EvaluationResult]:
    """Fewer rows than jobs: rows refill, and the vector rows that max_steps or a NaN ended
    wait for the whole vector environment's reset."""
    runner = BatchedEpisodeRunner(template, TOY,
                                  EpisodesConfig(vectorize=mode, batch_rows=5, **EPISODES))
    pools: list[ToyPool] = []
    if mode == "envpool":
        assert runner.vector is not None

        def pool(count: int) -> ToyPool:
            pools.append(ToyPool(count))
            return pools[-1]

        runner.vector.get = pool  # type: ignore[method-assign]
    try:
        results = runner.evaluate_many(genomes, seeds)
    finally:
        runner.close()
    if mode == "envpool":  # the engine stepped only the rows that still ran
        assert any(getattr(p, "stepped_some", False) for p in pools)
    return results


@pytest.fixture(scope="module")
def jax_evaluator() -> Any:
    """The toy's JAX form in evo-jax's chunk evaluator (compiled once, for one chunk size)."""
    pytest.importorskip("jax", reason="jax is not installed (pip install 'evo-core[jax]')")
    import jax.numpy as jnp

    from evo_jax import vectorizer
    from evo_jax.environments import JaxEnvironment

    def reset(key: Any) -> tuple[Any, Any]:
        return jnp.asarray(first_observation(1)[0]), jnp.asarray(0, dtype=jnp.int32)

    def step(key: Any, t: Any, action: Any) -> tuple[Any, Any, Any, Any, Any]:
        t = t + 1
        observation, reward, terminated, truncated = toy_step(jnp, t, action)
        return observation, t, reward, terminated, truncated

    env = JaxEnvironment(OBSERVATIONS, ACTIONS, reset, step, EPISODE_LIMIT)
    with pytest.MonkeyPatch.context() as patch:  # the evaluator makes its environment by id
        patch.setattr(vectorizer, "make_jax_environment", lambda env_id, kwargs=None: env)
        form = jax_form(toy_template())
        assert form is not None
        return vectorizer.JaxChunkEvaluator(form, TOY, EpisodesConfig(**EPISODES))


@pytest.mark.parametrize("mode", ["off", "sync", "native", "envpool", "jax"])
def test_every_engine_ends_and_scores_episodes_by_the_one_table(
        mode: str, request: pytest.FixtureRequest) -> None:
    template = toy_template()
    genomes = kind_genomes(template)
    seeds = np.arange(len(KINDS), dtype=np.int64) * 7919
    if mode == "off":
        results = evaluate_off(template, genomes, seeds)
    elif mode == "jax":
        results = request.getfixturevalue("jax_evaluator").evaluate_many(genomes, seeds)
    else:
        results = evaluate_batched(mode, template, genomes, seeds)
    expected = [EvaluationResult(float(total), steps * RUNS, int(nonfinite) * RUNS)
                for total, steps, nonfinite in EXPECTED]
    if mode == "jax":  # float32: the returns to float32's precision, the counts exactly
        assert [(r.steps, r.nonfinite_episodes) for r in results] == \
            [(e.steps, e.nonfinite_episodes) for e in expected]
        assert [r.fitness for r in results] == pytest.approx([e.fitness for e in expected],
                                                             rel=1e-6)
    else:  # every numpy engine plays the episodes of "off" exactly
        assert results == expected
