"""episodes.vectorize: sync reproduces off exactly, native and envpool are reproducible, finished
rows are masked, and max_steps and NaN penalties act per row as in the per-genome runner."""

from __future__ import annotations

import csv
import itertools
import json
import time
from pathlib import Path
from typing import Any, cast

import gymnasium as gym
import numpy as np
import pytest
from conftest import FITNESS

from brain_ctrnn import CTRNNConfig, CTRNNTemplate
from brain_ffnn import FFNNConfig, FFNNTemplate
from evo_core import ArrayBrainBatch, GroupedArrayBrainBatch, array_batch
from evo_core.authoring.batching import make_batch
from evo_core.cli.main import main
from evo_core.config.schema import EpisodesConfig
from evo_core.contract.protocols import EvaluationResult, IBatchEvaluator
from evo_core.errors import CandidateFailure, EvaluationTimeout
from evo_core.evaluation import batched_episodes
from evo_core.evaluation.batched_episodes import BatchedEpisodeRunner, BatchedRunnerSpec
from evo_core.evaluation.episodes import EpisodeRunner
from evo_core.handlers.chunks import Chunk, evaluate_chunk
from evo_core.handlers.sequential import SequentialConfig, SequentialHandler

TOY = "evo_test/Toy-v0"


# ----------------------------------------------------------------- a toy environment


class Toy(gym.Env[np.ndarray, np.int64]):
    """Episodes of 1-6 steps, the reward of step t is t. The last step ends the episode (kind 0),
    shows a NaN observation (kind 1: the episode goes on until the runner notices) or gives a NaN
    reward (kind 2). Length and kind are drawn from the environment's seeded stream."""

    observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), dtype=np.float64)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.length = int(self.np_random.integers(1, 7))
        self.kind = int(self.np_random.integers(0, 3))
        self.t = 0
        return np.array([0.0, self.length]), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        assert self.action_space.contains(action)
        self.t += 1
        last = self.t == self.length
        observation = np.array([self.t, self.length], dtype=np.float64)
        if last and self.kind == 1:
            observation[0] = np.nan
        reward = np.nan if last and self.kind == 2 else float(self.t)
        return observation, reward, last and self.kind == 0, self.t > self.length, {}


def toy_row(row: int) -> tuple[int, int]:
    """(length, kind) of row `row` of the vector toy: fixed, so results can be computed."""
    return 1 + row % 6, (row // 6) % 3


class ToyVector(gym.vector.VectorEnv[np.ndarray, np.ndarray, np.ndarray]):
    """The toy as a vector environment with next-step autoreset (gymnasium 1.x's default); row
    `i` always has `toy_row(i)`."""

    metadata = {"autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP}  # noqa: RUF012 - gymnasium's VectorEnv declares metadata a plain class attribute

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        self.num_envs = num_envs
        self.single_observation_space = Toy.observation_space
        self.single_action_space = Toy.action_space
        self.observation_space = gym.vector.utils.batch_space(Toy.observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(Toy.action_space, num_envs)
        rows = [toy_row(i) for i in range(num_envs)]
        self.length = np.array([r[0] for r in rows])
        self.kind = np.array([r[1] for r in rows])
        self.t = np.zeros(num_envs, dtype=np.int64)
        self.restart = np.zeros(num_envs, dtype=bool)

    def _observations(self) -> np.ndarray:
        observations = np.stack([self.t, self.length], axis=1).astype(np.float64)
        observations[(self.t == self.length) & (self.kind == 1), 0] = np.nan
        return observations

    def reset(self, *, seed: Any = None, options: Any = None) -> tuple[np.ndarray, dict[str, Any]]:
        self.t[:] = 0
        self.restart[:] = False
        return self._observations(), {}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                  np.ndarray, dict[str, Any]]:
        assert actions.shape == (self.num_envs,)
        self.t += 1
        self.t[self.restart] = 0  # next-step autoreset: this step only resets
        last = self.t == self.length
        rewards = self.t.astype(np.float64)
        rewards[self.restart] = 0.0
        rewards[last & (self.kind == 2)] = np.nan
        terminated = last & (self.kind == 0)
        truncated = self.t > self.length
        observations = self._observations()
        self.restart = terminated | truncated
        return observations, rewards, terminated, truncated, {}


if TOY not in gym.registry:
    gym.register(TOY, entry_point=cast(Any, Toy), vector_entry_point=cast(Any, ToyVector))


def expected_outcome(length: int, kind: int, episodes: EpisodesConfig) -> tuple[float, int, bool]:
    """What the per-genome runner makes of one toy episode, worked out by hand."""
    limit = episodes.max_steps
    rewards = 0.0
    for t in range(1, length + 1):
        if kind == 2 and t == length:
            return rewards + episodes.nonfinite_penalty, t, True
        rewards += t
        if kind == 0 and t == length:
            return rewards, t, False
        if limit is not None and t >= limit:
            return rewards + episodes.max_steps_penalty, t, False
    return rewards + episodes.nonfinite_penalty, length, True  # kind 1: NaN seen next


def toy_template() -> FFNNTemplate:
    return FFNNTemplate(FFNNConfig(hidden_layers=[3]), Toy.observation_space, Toy.action_space,
                        np.random.default_rng(0))


def population(size: int, genome_size: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(0, 1, (size, genome_size)), rng.integers(0, 2**31, size)


EPISODES = [dict(runs=3), dict(runs=2, max_steps=3, max_steps_penalty=-7.5),
            dict(runs=1, max_steps=5, nonfinite_penalty=-100.0)]


@pytest.mark.parametrize("episodes", EPISODES)
def test_sync_equals_the_per_genome_runner_on_the_toy(episodes: dict[str, Any]) -> None:
    template = toy_template()
    genomes, seeds = population(30, template.genome_size)
    off = EpisodeRunner(template, TOY, EpisodesConfig(**episodes))
    sync = BatchedEpisodeRunner(template, TOY, EpisodesConfig(vectorize="sync", **episodes))
    try:
        expected = [off.evaluate(genome, int(seed)) for genome, seed in zip(genomes, seeds)]
        assert sync.evaluate_many(genomes, seeds) == expected
        assert sync.evaluate_many(genomes[3:9], seeds[3:9]) == expected[3:9]  # runner reused
    finally:
        off.close()
        sync.close()
    assert any(result.nonfinite_episodes for result in expected)  # the cases did occur
    assert len({result.steps for result in expected}) > 2


@pytest.mark.parametrize("episodes", EPISODES)
def test_native_rows_are_masked_and_penalised_as_by_hand(episodes: dict[str, Any]) -> None:
    config = EpisodesConfig(vectorize="native", **episodes)
    template = toy_template()
    genomes, seeds = population(7, template.genome_size)
    runner = BatchedEpisodeRunner(template, TOY, config)
    try:
        results = runner.evaluate_many(genomes, seeds)
    finally:
        runner.close()
    runs = config.runs
    expected = []
    for candidate in range(len(genomes)):
        outcomes = [expected_outcome(*toy_row(candidate * runs + k), config)
                    for k in range(runs)]
        expected.append(EvaluationResult(sum(o[0] for o in outcomes) / runs,
                                         sum(o[1] for o in outcomes),
                                         sum(o[2] for o in outcomes)))
    assert results == expected


def test_the_batched_runner_is_a_batch_evaluator_and_handlers_give_it_whole_chunks() -> None:
    calls: list[int] = []

    class Spy(BatchedEpisodeRunner):
        def evaluate_many(self, genomes: np.ndarray, seeds: np.ndarray
                          ) -> list[EvaluationResult]:
            calls.append(len(genomes))
            return super().evaluate_many(genomes, seeds)

    class SpySpec(BatchedRunnerSpec):
        def build(self, template: Any) -> Spy:
            return Spy(template, self.environment, self.episodes)

    template = toy_template()
    genomes, seeds = population(9, template.genome_size)
    handler = SequentialHandler(SequentialConfig(), SpySpec(TOY, EpisodesConfig(vectorize="sync")))
    try:
        results = handler.evaluate(template, genomes, seeds)
    finally:
        handler.close()
    assert calls == [9] and len(results) == 9
    assert isinstance(Spy(template, TOY, EpisodesConfig(vectorize="sync")), IBatchEvaluator)


@pytest.mark.parametrize(("batch_rows", "kind"), [(64, GroupedArrayBrainBatch),
                                                   (4, ArrayBrainBatch)])
def test_rows_of_one_genome_are_grouped_unless_rows_take_other_candidates(
        monkeypatch: pytest.MonkeyPatch, batch_rows: int, kind: type) -> None:
    """The FFNN's batch groups a genome's rows where every row keeps its first candidate; a
    batch whose rows take other candidates one by one is per row (regrouping at every load
    costs more than sharing saves), and both give the per-genome runner's results."""
    made: list[Any] = []
    real = make_batch

    def spy(*args: Any, **kwargs: Any) -> Any:
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(batched_episodes, "make_batch", spy)
    template = toy_template()
    genomes, seeds = population(5, template.genome_size)
    episodes = EpisodesConfig(vectorize="sync", runs=3, batch_rows=batch_rows)
    runner = BatchedEpisodeRunner(template, TOY, episodes)
    lone = EpisodeRunner(template, TOY, EpisodesConfig(runs=3))
    try:
        assert runner.evaluate_many(genomes, seeds) == [
            lone.evaluate(genome, int(seed)) for genome, seed in zip(genomes, seeds)]
    finally:
        runner.close()
        lone.close()
    assert made and all(isinstance(batch, kind) for batch in made)


class Raising(Toy):
    """Raises in the first step of a long episode."""

    def step(self, action: Any) -> Any:
        if self.length >= 4:
            raise RuntimeError("too long")
        return super().step(action)


def test_an_environment_error_names_its_row_candidate() -> None:
    if "evo_test/Raising-v0" not in gym.registry:
        gym.register("evo_test/Raising-v0", entry_point=cast(Any, Raising))
    template = toy_template()
    genomes, seeds = population(12, template.genome_size, seed=1)
    off = EpisodeRunner(template, "evo_test/Raising-v0", EpisodesConfig())
    sync = BatchedEpisodeRunner(template, "evo_test/Raising-v0",
                                EpisodesConfig(vectorize="sync"))
    chunk = Chunk(np.arange(100, 112), genomes, seeds)
    try:
        with pytest.raises(CandidateFailure) as per_genome:
            evaluate_chunk(off, chunk)
        with pytest.raises(CandidateFailure) as batched:
            evaluate_chunk(sync, chunk)
    finally:
        off.close()
        sync.close()
    assert batched.value.source == per_genome.value.source == "environment"
    assert "too long" in batched.value.error
    # the first step of every row comes before any second step: the first raising row is the
    # first candidate that raises one genome at a time
    assert batched.value.candidate == per_genome.value.candidate > 100


# ----------------------------------------------------------------- whole runs


def train(tmp_path: Path, name: str, episodes: dict[str, Any], processing: dict[str, Any],
          environment: str = "CartPole-v1", brain: dict[str, Any] | None = None,
          generations: int = 3) -> list[list[str]]:
    config = tmp_path / f"{name}.json"
    config.write_text(json.dumps({
        "environment": environment, "seed": 5, "generations": generations,
        "brain": brain or {"type": "ctrnn", "number_neurons": 4, "w_mask": "random",
                           "w_mask_param": 0.6, "parameter_perturbations": 0.2},
        "optimizer": {"type": "cma-es", "population_size": 8},
        "episodes": {"runs": 2, "seed_per": "candidate", **episodes},
        "processing": processing}))
    out = tmp_path / name
    assert main(["train", str(config), "--out", str(out), "--quiet"]) == 0
    with open(out / "log.csv", newline="") as handle:
        return [[row[c] for c in FITNESS] for row in csv.DictReader(handle)]


def test_sync_logs_equal_off_sequentially(tmp_path: Path) -> None:
    sequential = {"type": "sequential"}
    assert train(tmp_path, "sync", {"vectorize": "sync"}, sequential) == \
        train(tmp_path, "off", {}, sequential)
    pendulum: dict[str, Any] = {"environment": "Pendulum-v1", "generations": 1,
                "brain": {"type": "lstm", "hidden_size": 3}}
    assert train(tmp_path, "psync", {"vectorize": "sync", "max_steps": 40}, sequential,
                 **pendulum) == train(tmp_path, "poff", {"max_steps": 40}, sequential, **pendulum)


@pytest.mark.slow
def test_sync_logs_equal_off_with_mp_and_dask(tmp_path: Path, dask_address: str) -> None:
    reference = train(tmp_path, "off", {}, {"type": "sequential"})
    sync = {"vectorize": "sync"}
    assert train(tmp_path, "mp", sync, {"type": "mp", "workers": 2,
                                        "start_method": "forkserver"}) == reference
    assert train(tmp_path, "dask", sync, {"type": "dask", "address": dask_address}) == reference


def test_native_is_reproducible_for_a_seed(tmp_path: Path) -> None:
    native = {"vectorize": "native"}
    first = train(tmp_path, "a", native, {"type": "sequential"})
    assert train(tmp_path, "b", native, {"type": "sequential"}) == first
    assert first != train(tmp_path, "off", {}, {"type": "sequential"})  # its own streams


def test_envpool_is_reproducible_for_a_seed(tmp_path: Path) -> None:
    pytest.importorskip("envpool")
    env = gym.make("CartPole-v1")
    template = CTRNNTemplate(CTRNNConfig(number_neurons=3), env.observation_space,
                             env.action_space, np.random.default_rng(0))
    genomes, seeds = population(5, template.genome_size)
    runner = BatchedEpisodeRunner(template, "CartPole-v1", EpisodesConfig(vectorize="envpool"))
    try:  # the same seeds twice in a row: the pool must be seeded again, not continue
        assert runner.evaluate_many(genomes, seeds) == runner.evaluate_many(genomes, seeds)
    finally:
        runner.close()
    envpool = {"vectorize": "envpool"}
    first = train(tmp_path, "a", envpool, {"type": "sequential"}, generations=1)
    assert train(tmp_path, "b", envpool, {"type": "sequential"}, generations=1) == first


class FullSteps:
    """An envpool pool without `step_some`: every environment steps at every step."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.stepped = 0  # environment steps

    def reset(self, seed: int | None = None) -> Any:
        return self.pool.reset(seed=seed)

    def step(self, actions: Any) -> Any:
        self.stepped += len(actions)
        return self.pool.step(actions)

    def close(self) -> None:
        self.pool.close()


class SomeSteps(FullSteps):
    """The same pool with `step_some`, counted."""

    def step_some(self, actions: Any, env_ids: Any) -> Any:
        self.stepped += len(env_ids)
        return self.pool.step_some(actions, env_ids)


@pytest.mark.parametrize("episodes", [dict(runs=2, batch_rows=8, max_steps=40),
                                      dict(runs=1, batch_rows=64)])
def test_envpool_steps_only_the_rows_that_run_and_plays_the_same_episodes(
        episodes: dict[str, Any]) -> None:
    """Once rows have no job left, envpool steps only the rows that run or wait for their
    reset: the same results as stepping every environment, with fewer environment steps."""
    pytest.importorskip("envpool")
    env = gym.make("CartPole-v1")
    template = FFNNTemplate(FFNNConfig(hidden_layers=[4]), env.observation_space,
                            env.action_space, np.random.default_rng(0))
    genomes, seeds = population(40, template.genome_size, seed=5)
    results, stepped = [], []
    for wrap in (FullSteps, SomeSteps):
        runner = BatchedEpisodeRunner(template, "CartPole-v1",
                                      EpisodesConfig(vectorize="envpool", **episodes))
        assert runner.vector is not None
        pools: list[FullSteps] = []
        get = runner.vector.get

        def wrapped(count: int, get: Any = get, wrap: type[FullSteps] = wrap,
                    pools: list[FullSteps] = pools) -> FullSteps:
            pools.append(wrap(get(count)))
            return pools[-1]

        runner.vector.get = wrapped  # type: ignore[method-assign]
        try:
            results.append(runner.evaluate_many(genomes, seeds))
        finally:
            runner.close()
        stepped.append(sum(pool.stepped for pool in pools))
    assert results[0] == results[1]
    assert stepped[1] < stepped[0]
    assert len({result.steps for result in results[0]}) > 5  # short and long episodes


def test_native_without_a_vector_implementation_is_one_line(tmp_path: Path, capsys) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({
        "environment": "Pendulum-v1", "generations": 1, "brain": {"type": "ffnn"},
        "optimizer": {"type": "cma-es", "population_size": 4},
        "episodes": {"vectorize": "native"}}))
    assert main(["train", str(config), "--out", str(tmp_path / "run")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "Pendulum-v1" in error and "CartPole-v1" in error
    assert '"sync"' in error and not (tmp_path / "run").exists()


def test_ctrnn_noise_reaches_rows_in_a_batched_run() -> None:
    """A noisy CTRNN scores the same through sync as through off (each row's Generator is the
    one use_rng gets), and differently when the noise is off."""
    env = gym.make("CartPole-v1")
    template = CTRNNTemplate(CTRNNConfig(number_neurons=5, parameter_perturbations=0.5),
                             env.observation_space, env.action_space, np.random.default_rng(0))
    genomes, seeds = population(6, template.genome_size, seed=3)
    assert_cartpole_sync_equals_off(template, genomes, seeds)


class Sleepy(Toy):
    """Every step blocks for a second: any evaluation outlasts a short timeout."""

    def step(self, action: Any) -> Any:
        time.sleep(1.0)
        return super().step(action)


def test_a_batched_chunk_times_out_naming_its_first_candidate() -> None:
    if "evo_test/Sleepy-v0" not in gym.registry:
        gym.register("evo_test/Sleepy-v0", entry_point=cast(Any, Sleepy))
    template = toy_template()
    genomes, seeds = population(3, template.genome_size)
    handler = SequentialHandler(SequentialConfig(task_timeout=0.1),
                                BatchedRunnerSpec("evo_test/Sleepy-v0",
                                                  EpisodesConfig(vectorize="sync")))
    try:
        with pytest.raises(EvaluationTimeout) as timed_out:
            handler.evaluate(template, genomes, seeds)
    finally:
        handler.close()
    assert timed_out.value.candidate == 0


class BrokenBatch(ArrayBrainBatch):
    def step(self, observations: Any) -> Any:
        raise ValueError("broken batch")


class Failing(FFNNTemplate):
    def make_batch(self, genomes: np.ndarray) -> Any:
        batch = array_batch(self, genomes)
        return BrokenBatch(batch.template, batch.params, batch.start, batch.state, batch.rngs)


def test_a_batched_brain_error_names_the_chunks_first_candidate() -> None:
    template = Failing(FFNNConfig(), Toy.observation_space, Toy.action_space,
                       np.random.default_rng(0))
    genomes, seeds = population(4, template.genome_size)
    sync = BatchedEpisodeRunner(template, TOY, EpisodesConfig(vectorize="sync"))
    try:
        with pytest.raises(CandidateFailure) as failed:
            evaluate_chunk(sync, Chunk(np.arange(7, 11), genomes, seeds))
    finally:
        sync.close()
    assert failed.value.candidate == 7 and failed.value.source == "brain"
    assert "broken batch" in failed.value.error


def test_native_takes_the_environments_kwargs_but_no_wrappers() -> None:
    from evo_core.contract.config_models import EnvironmentConfig, WrapperConfig
    from evo_core.errors import UserError
    from evo_core.evaluation.vector_envs import environment_id

    assert environment_id("CartPole-v1", "native") == "CartPole-v1"
    hard = EnvironmentConfig(id="evo/CartPoleSwingUp-v0", kwargs={"hard": True})
    assert environment_id(hard, "native") == "evo/CartPoleSwingUp-v0"
    with pytest.raises(UserError, match="envpool without kwargs"):
        environment_id(hard, "envpool")
    with pytest.raises(UserError, match=r"environment.kwargs.max_episode_steps: gymnasium.make"):
        environment_id(EnvironmentConfig(id="CartPole-v1", kwargs={"max_episode_steps": 50}),
                       "native")
    with pytest.raises(UserError, match="without wrappers"):
        environment_id(EnvironmentConfig.model_construct(
            id="CartPole-v1", kwargs={}, wrappers=(WrapperConfig(type="scale-observation"),)),
            "native")


def test_native_rows_of_the_hard_swing_up_start_hard() -> None:
    """The environment's kwargs reach its vector entry point: the hard start (the cart
    anywhere on the track), not the easy one (near the centre)."""
    from evo_core.contract.config_models import EnvironmentConfig
    from evo_core.evaluation.vector_envs import VectorEnvironments

    starts = {}
    for hard in (False, True):
        pools = VectorEnvironments(EnvironmentConfig(id="evo/CartPoleSwingUp-v0",
                                                     kwargs={"hard": hard}), "native")
        try:
            observations, _ = pools.get(64).reset(seed=5)
        finally:
            pools.close()
        starts[hard] = np.max(np.abs(observations[:, 0]))
    assert starts[False] < 1.0 < starts[True]


# ----------------------------------------------------------------- rows that refill


@pytest.mark.parametrize("rows", [1, 4])
@pytest.mark.parametrize("episodes", EPISODES)
def test_sync_with_fewer_rows_than_candidates_equals_off(episodes: dict[str, Any],
                                                         rows: int) -> None:
    """Rows take the next candidate when theirs is done; each candidate's episodes still run in
    one environment seeded as "off" seeds it, so results are identical to "off"."""
    template = toy_template()
    genomes, seeds = population(13, template.genome_size)
    off = EpisodeRunner(template, TOY, EpisodesConfig(**episodes))
    sync = BatchedEpisodeRunner(template, TOY, EpisodesConfig(vectorize="sync", batch_rows=rows,
                                                              **episodes))
    try:
        assert sync.evaluate_many(genomes, seeds) == \
            [off.evaluate(genome, int(seed)) for genome, seed in zip(genomes, seeds)]
        assert len(sync.envs) == rows
    finally:
        off.close()
        sync.close()


def test_noisy_ctrnn_rows_refill_as_off() -> None:
    env = gym.make("CartPole-v1")
    template = CTRNNTemplate(CTRNNConfig(number_neurons=5, parameter_perturbations=0.5),
                             env.observation_space, env.action_space, np.random.default_rng(0))
    genomes, seeds = population(9, template.genome_size, seed=4)
    assert_cartpole_sync_equals_off(template, genomes, seeds, batch_rows=3)


class UniformVector(ToyVector):
    """Every row's episodes last 3 steps and end normally; counts its steps."""

    steps = 0

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        super().__init__(num_envs)
        self.length[:] = 3
        self.kind[:] = 0

    def step(self, actions: np.ndarray) -> Any:
        UniformVector.steps += 1
        return super().step(actions)


UNIFORM = "evo_test/Uniform-v0"
if UNIFORM not in gym.registry:
    gym.register(UNIFORM, entry_point=cast(Any, Toy), vector_entry_point=cast(Any, UniformVector))


@pytest.mark.parametrize("limit,expected", [(None, (6.0, 3)), (2, (3.0 - 7.5, 2)),
                                            (1, (1.0 - 7.5, 1))])
def test_native_rows_refill_and_a_chunk_ends_with_its_jobs(limit: int | None,
                                                           expected: tuple[float, int]) -> None:
    """7 candidates x 3 episodes on 4 rows: a row that ends takes the next job after the
    environment's reset step; one cut by max_steps waits for its environment's end (2), or,
    when every row waits, the vector environment is reset (1)."""
    config = EpisodesConfig(vectorize="native", runs=3, batch_rows=4, max_steps=limit,
                            max_steps_penalty=-7.5)
    template = toy_template()
    genomes, seeds = population(7, template.genome_size)
    runner = BatchedEpisodeRunner(template, UNIFORM, config)
    UniformVector.steps = 0
    try:
        results = runner.evaluate_many(genomes, seeds)
        steps = UniformVector.steps
        assert runner.evaluate_many(genomes, seeds) == results
    finally:
        runner.close()
    total, length = expected
    assert results == [EvaluationResult(total, 3 * length, 0)] * 7
    jobs_per_row = -(-21 // 4)
    assert steps <= jobs_per_row * (3 + 1)  # never a step that waits for a slow row


def test_a_batch_that_cannot_load_gets_a_row_per_candidate() -> None:
    class Fixed(FFNNTemplate):
        def make_batch(self, genomes: np.ndarray) -> Any:
            return NotLoading(array_batch(self, genomes))

    class NotLoading:
        def __init__(self, batch: ArrayBrainBatch) -> None:
            self.batch = batch

        def reset(self, mask: Any = None) -> None:
            self.batch.reset(mask)

        def step(self, observations: Any) -> Any:
            return self.batch.step(observations)

    template = Fixed(FFNNConfig(hidden_layers=[3]), Toy.observation_space, Toy.action_space,
                     np.random.default_rng(0))
    genomes, seeds = population(6, template.genome_size)
    off = EpisodeRunner(template, TOY, EpisodesConfig(runs=2))
    sync = BatchedEpisodeRunner(template, TOY, EpisodesConfig(runs=2, vectorize="sync",
                                                              batch_rows=2))
    try:
        assert sync.evaluate_many(genomes, seeds) == \
            [off.evaluate(g, int(s)) for g, s in zip(genomes, seeds)]
        assert len(sync.envs) == 6
    finally:
        off.close()
        sync.close()


def assert_cartpole_sync_equals_off(template: Any, genomes: Any, seeds: Any,
                                    **episodes: Any) -> None:
    """Two episodes each on CartPole: "sync" (with `episodes` settings) gives exactly "off"'s
    results."""
    off = EpisodeRunner(template, "CartPole-v1", EpisodesConfig(runs=2))
    sync = BatchedEpisodeRunner(template, "CartPole-v1",
                                EpisodesConfig(runs=2, vectorize="sync", **episodes))
    try:
        assert sync.evaluate_many(genomes, seeds) == \
            [off.evaluate(g, int(s)) for g, s in zip(genomes, seeds)]
    finally:
        off.close()
        sync.close()


# ----------------------------------------------------------------- the tail: only running rows


class Counting:
    """A batch that records how many rows each of its steps is given."""

    def __init__(self, batch: Any, widths: list[int]) -> None:
        self.batch, self.widths = batch, widths

    def reset(self, mask: Any = None) -> None:
        self.batch.reset(mask)

    def load(self, rows: np.ndarray, genomes: np.ndarray) -> None:
        self.batch.load(rows, genomes)

    def step(self, observations: Any) -> Any:
        self.widths.append(len(observations))
        return self.batch.step(observations)


class CountingSubsets(Counting):
    def subset(self, rows: np.ndarray) -> CountingSubsets:
        return CountingSubsets(self.batch.subset(rows), self.widths)


class CountedFFNN(FFNNTemplate):
    """Its batches count their rows; with `subsets` they give subsets (ISubsetBatch)."""

    def __init__(self, *args: Any, subsets: bool = True) -> None:
        self.subsets = subsets
        self.widths: list[int] = []
        super().__init__(*args)

    def make_batch(self, genomes: np.ndarray) -> Any:
        batch = array_batch(self, genomes)
        return (CountingSubsets if self.subsets else Counting)(batch, self.widths)


@pytest.mark.parametrize("mode", ["sync", "native"])
def test_once_no_job_is_left_only_the_running_rows_step(mode: str) -> None:
    """Random genomes on CartPole, 40 candidates x 2 episodes on 16 rows: once the jobs run
    out the batch steps a subset of the running rows whenever their number has halved, with
    results equal to stepping every row to the end (and, sync, to off)."""
    env = gym.make("CartPole-v1")
    widths: dict[bool, list[int]] = {}
    results = {}
    genomes, seeds = population(40, 0)
    for subsets in (True, False):
        template = CountedFFNN(FFNNConfig(hidden_layers=[4]), env.observation_space,
                               env.action_space, np.random.default_rng(0), subsets=subsets)
        genomes, seeds = population(40, template.genome_size, seed=5)
        runner = BatchedEpisodeRunner(template, "CartPole-v1",
                                      EpisodesConfig(vectorize=mode, runs=2, batch_rows=16))
        try:
            results[subsets] = runner.evaluate_many(genomes, seeds)
        finally:
            runner.close()
        widths[subsets] = template.widths
    env.close()
    assert results[True] == results[False]
    assert set(widths[False]) == {16}
    narrowed = widths[True]
    assert narrowed == sorted(narrowed, reverse=True) and narrowed[0] == 16
    assert min(narrowed) < 4 and sum(narrowed) < 0.8 * sum(widths[False])
    for before, after in itertools.pairwise(narrowed):
        assert after == before or after <= before // 2
    if mode == "sync":
        assert_cartpole_sync_equals_off(CountedFFNN(FFNNConfig(hidden_layers=[4]),
                                                    env.observation_space, env.action_space,
                                                    np.random.default_rng(0)),
                                        genomes, seeds, batch_rows=16)


def test_the_swing_up_vector_seeds_each_row_as_the_single_environment() -> None:
    """`reset(seed=[...])`: row i starts as `CartPoleSwingUp().reset(seed=s_i)`, whatever
    the other rows' seeds (`SeededRows`)."""
    from evo_core.environments.swing_up import CartPoleSwingUp, CartPoleSwingUpVector
    from evo_core.evaluation.vector_envs import SeededRows

    for hard in (False, True):
        vector = CartPoleSwingUpVector(num_envs=3, hard=hard)
        assert isinstance(vector, SeededRows)
        observations, _ = vector.reset(seed=[11, 12, 11])
        single, _ = CartPoleSwingUp(hard=hard).reset(seed=11)
        assert np.array_equal(observations[0], single) and np.array_equal(observations[2], single)
        assert not np.array_equal(observations[1], single)
        with pytest.raises(ValueError, match="2 seeds for 3 rows"):
            vector.reset(seed=[1, 2])


@pytest.mark.parametrize("share", [True, False])
def test_native_candidates_sharing_a_seed_play_the_same_starts(share: bool) -> None:
    """A vector environment that seeds its rows gets each row's first episode seeded from its
    job: candidates with one evaluation seed (`seed_per = "generation"`) play the same start
    states, so the same genome scores the same in every candidate's rows; with seeds of their
    own (`"candidate"`) they play others. Results do not depend on how the candidates are
    split into chunks."""
    from evo_core.contract.config_models import EnvironmentConfig

    environment = EnvironmentConfig(id="evo/CartPoleSwingUp-v0", kwargs={"hard": True})
    from evo_core.environments.swing_up import CartPoleSwingUp

    single = CartPoleSwingUp()
    template = FFNNTemplate(FFNNConfig(hidden_layers=[4]), single.observation_space,
                            single.action_space, np.random.default_rng(0))
    genome = np.random.default_rng(1).normal(0, 0.5, template.genome_size)
    genomes = np.stack([genome] * 4)
    seeds = np.full(4, 123) if share else np.arange(4) + 123
    episodes = EpisodesConfig(vectorize="native", runs=3, max_steps=60, batch_rows=64)
    runner = BatchedEpisodeRunner(template, environment, episodes)
    try:
        whole = [result.fitness for result in runner.evaluate_many(genomes, seeds)]
        halves = [result.fitness for half in (slice(0, 2), slice(2, 4))
                  for result in runner.evaluate_many(genomes[half], seeds[half])]
    finally:
        runner.close()
    assert (len(set(whole)) == 1) == share
    assert whole == halves
