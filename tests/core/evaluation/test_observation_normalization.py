"""`[episodes] observation_normalization = "running"`: what the brains see, what the evaluations
gather, and that every engine, handler and resume agrees on it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest
from conftest import fitness_rows, npz, wait_until
from numpy.typing import NDArray

from brain_ffnn import FFNNConfig, FFNNTemplate
from evo_core.cli.main import main
from evo_core.config.schema import EpisodesConfig, validate_config
from evo_core.contract.observation_statistics import (
    EvaluationContext,
    ObservationNormalizer,
    ObservationStatistics,
    normalize,
)
from evo_core.contract.protocols import (
    EvaluationResult,
    IContextEvaluator,
    IContextHandler,
    IHandler,
)
from evo_core.errors import UserError
from evo_core.evaluation.batched_episodes import BatchedEpisodeRunner
from evo_core.evaluation.episodes import EpisodeRunner, RunnerSpec
from evo_core.handlers.dask import DaskConfig, DaskHandler
from evo_core.handlers.mp import MPConfig, MPHandler
from evo_core.handlers.sequential import SequentialConfig, SequentialHandler
from evo_core.hooks.discovery import get_registry
from evo_core.running.session import prepare_train
from evo_core.running.training import NO_EVENTS


def pooled_by_hand(parts: list[NDArray[np.float64]]) -> tuple[int, NDArray[np.float64],
                                                              NDArray[np.float64]]:
    """Count, mean and M2 of every row of `parts`, straight from the definition."""
    every = np.concatenate(parts)
    mean = every.mean(axis=0)
    return len(every), mean, ((every - mean) ** 2).sum(axis=0)


def statistics_of_rows(rows: NDArray[np.float64]) -> ObservationStatistics:
    """Statistics pooled one observation at a time, as the engine pools them."""
    statistics = ObservationStatistics.empty(rows.shape[1])
    for row in rows:
        statistics = statistics.merged(ObservationStatistics(1, row.copy(), np.zeros(len(row))))
    return statistics


def test_pooled_statistics_are_those_of_all_observations() -> None:
    rng = np.random.default_rng(3)
    parts = [rng.normal(loc=5.0, scale=[1.0, 100.0, 0.01], size=(n, 3)) for n in (1, 7, 30, 2)]
    pooled = ObservationStatistics.empty(3)
    for part in parts:
        pooled = pooled.merged(statistics_of_rows(part))
    count, mean, m2 = pooled_by_hand(parts)
    assert pooled.count == count
    np.testing.assert_allclose(pooled.mean, mean, rtol=1e-12)
    np.testing.assert_allclose(pooled.m2, m2, rtol=1e-9)
    # pooling with nothing gives the statistics back bit for bit, from either side
    empty = ObservationStatistics.empty(3)
    assert pooled.merged(empty) == pooled and empty.merged(pooled) == pooled


def test_the_normaliser_of_statistics() -> None:
    before = ObservationNormalizer.of(ObservationStatistics.empty(2), None)
    assert np.array_equal(before.mean, [0.0, 0.0]) and np.array_equal(before.std, [1.0, 1.0])
    rows = np.array([[1.0, 4.0], [3.0, 4.0], [5.0, 4.0]])  # the second entry never changes
    normalizer = ObservationNormalizer.of(statistics_of_rows(rows), 1.5)
    np.testing.assert_allclose(normalizer.mean, [3.0, 4.0])
    np.testing.assert_allclose(normalizer.std, [np.sqrt(8 / 3), 1.0])  # guarded: 1, not 0
    seen = normalize(np, np.array([[9.0, 5.0], [3.0, 3.5]]), normalizer.mean, normalizer.std,
                     normalizer.clip)
    np.testing.assert_allclose(seen, [[1.5, 1.0], [0.0, -0.5]])  # (o - mean) / std, clipped


# ----------------------------------------------------------------- the engine


class Recorded:
    """What the brains of a `RecordingTemplate` were given, in order."""

    inputs: ClassVar[list[NDArray[np.float64]]] = []


class RecordingBrain:
    """Records every observation it is given; acts by its genome alone, so its episodes are
    the same whatever it sees."""

    def __init__(self, genome: NDArray[np.float64]) -> None:
        self.action = np.clip(genome[:1], -2.0, 2.0).astype(np.float32)

    def reset(self) -> None:
        pass

    def step(self, observation: Any) -> Any:
        Recorded.inputs.append(np.array(observation, dtype=np.float64))
        return self.action


class RecordingTemplate:
    genome_size = 1

    def make(self, genome: NDArray[np.float64]) -> RecordingBrain:
        return RecordingBrain(genome)


EPISODES = EpisodesConfig(runs=2, max_steps=30, observation_normalization="running")


def test_the_brain_sees_normalised_observations_and_the_raw_ones_are_counted() -> None:
    runner = EpisodeRunner(RecordingTemplate(), "Pendulum-v1", EPISODES)
    try:
        assert isinstance(runner, IContextEvaluator)
        Recorded.inputs = []
        runner.use_context(EvaluationContext())  # no normaliser: the raw observations
        raw_result = runner.evaluate(np.array([0.7]), 5)
        raw = np.array(Recorded.inputs)
        Recorded.inputs = []
        normalizer = ObservationNormalizer(np.array([0.5, -0.2, 1.0]),
                                           np.array([0.3, 2.0, 4.0]), 2.0)
        runner.use_context(EvaluationContext(normalizer))
        result = runner.evaluate(np.array([0.7]), 5)
    finally:
        runner.close()
    assert raw_result.observations is None
    seen = np.array(Recorded.inputs)
    assert len(raw) == raw_result.steps == 60  # every step's input: 2 episodes of 30
    np.testing.assert_array_equal(seen, np.clip((raw - normalizer.mean) / normalizer.std, -2, 2))
    assert result.fitness == raw_result.fitness
    statistics = result.observations
    assert statistics is not None
    count, mean, m2 = pooled_by_hand([raw])
    assert statistics.count == count
    np.testing.assert_allclose(statistics.mean, mean, rtol=1e-12)
    np.testing.assert_allclose(statistics.m2, m2, rtol=1e-9)


def pendulum_template() -> FFNNTemplate:
    env = gym.make("Pendulum-v1")
    return FFNNTemplate(FFNNConfig(hidden_layers=[4]), env.observation_space, env.action_space,
                        np.random.default_rng(0))


def population(count: int, size: int, seed: int = 0
               ) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(count, size)), rng.integers(0, 2**31, count)


#: a normaliser far from the identity, so that a brain given raw observations would differ
NORMALIZER = ObservationNormalizer(np.array([0.1, -0.3, 0.5]), np.array([0.5, 0.7, 3.0]), 1.0)


def off_results(template: Any, genomes: NDArray[np.float64], seeds: NDArray[np.int64],
                episodes: EpisodesConfig) -> list[EvaluationResult]:
    runner = EpisodeRunner(template, "Pendulum-v1", episodes)
    try:
        runner.use_context(EvaluationContext(NORMALIZER))
        return [runner.evaluate(genome, int(seed)) for genome, seed in zip(genomes, seeds)]
    finally:
        runner.close()


def test_sync_gives_off_results_and_statistics_bit_for_bit() -> None:
    template = pendulum_template()
    genomes, seeds = population(7, template.genome_size)
    episodes = EPISODES.model_copy(update={"vectorize": "sync", "batch_rows": 3,
                                           "max_steps": 40})
    reference = off_results(template, genomes, seeds, episodes)
    runner = BatchedEpisodeRunner(template, "Pendulum-v1", episodes)
    try:
        runner.use_context(EvaluationContext(NORMALIZER))
        assert runner.evaluate_many(genomes, seeds) == reference
        runner.use_context(EvaluationContext(NORMALIZER))  # another chunking: the same
        assert runner.evaluate_many(genomes[:2], seeds[:2]) + \
            runner.evaluate_many(genomes[2:], seeds[2:]) == reference
    finally:
        runner.close()
    assert all(r.observations is not None and r.observations.count == r.steps
               for r in reference)


def test_native_counts_every_observation_its_brains_step_on() -> None:
    env = gym.make("CartPole-v1")
    template = FFNNTemplate(FFNNConfig(hidden_layers=[3]), env.observation_space,
                            env.action_space, np.random.default_rng(1))
    genomes, seeds = population(6, template.genome_size, 2)
    episodes = EpisodesConfig(runs=2, vectorize="native", batch_rows=4,
                              observation_normalization="running")
    runner = BatchedEpisodeRunner(template, "CartPole-v1", episodes)
    try:
        runner.use_context(EvaluationContext(ObservationNormalizer(
            np.zeros(4), np.full(4, 0.5), None)))
        results = runner.evaluate_many(genomes, seeds)
    finally:
        runner.close()
    for result in results:
        assert result.observations is not None and result.observations.count == result.steps
        # CartPole's cart stays within its track: a mean outside it would be a wrong row's
        assert abs(result.observations.mean[0]) < 2.4 and (result.observations.m2 >= 0).all()


# ----------------------------------------------------------------- handlers


def test_handlers_agree_on_a_normalised_generation(dask_address: str) -> None:
    template = pendulum_template()
    genomes, seeds = population(9, template.genome_size, 4)
    episodes = EPISODES.model_copy(update={"max_steps": 25})
    reference = off_results(template, genomes, seeds, episodes)
    context = EvaluationContext(NORMALIZER)
    spec = RunnerSpec("Pendulum-v1", episodes)
    handlers: list[IHandler] = [
        SequentialHandler(SequentialConfig(), spec),
        MPHandler(MPConfig(workers=2, start_method="fork", chunks_per_worker=3), spec),
        DaskHandler(DaskConfig(address=dask_address, chunks_per_worker=2), spec)]
    try:
        for handler in handlers:
            assert isinstance(handler, IContextHandler)
            assert handler.evaluate_in_context(template, genomes, seeds, context) == reference
            # a plain evaluate hands an empty context: no normaliser, no statistics
            assert all(r.observations is None for r in handler.evaluate(template, genomes, seeds))
    finally:
        for handler in handlers:
            handler.close()


# ----------------------------------------------------------------- config


def config_data(**episodes: Any) -> dict[str, Any]:
    return {"environment": "CartPole-v1", "generations": 1, "brain": {"type": "ffnn"},
            "optimizer": {"type": "cma-es", "population_size": 4}, "episodes": episodes}


def test_off_writes_the_config_json_it_always_wrote() -> None:
    registry = get_registry()
    off = validate_config(config_data(runs=2), registry, "c.toml").model_dump(mode="json")
    assert set(off["episodes"]) == {"runs", "max_steps", "max_steps_penalty", "seed_per",
                                    "nonfinite_penalty", "vectorize", "batch_rows"}
    running = validate_config(config_data(observation_normalization="running",
                                          observation_clip=5), registry, "c.toml")
    dumped = running.model_dump(mode="json")["episodes"]
    assert dumped["observation_normalization"] == "running" and dumped["observation_clip"] == 5


def test_a_clip_without_the_normaliser_is_one_line() -> None:
    with pytest.raises(UserError) as caught:
        validate_config(config_data(observation_clip=5), get_registry(), "c.toml")
    message = str(caught.value)
    assert "episodes.observation_clip" in message and "observation_normalization" in message
    assert "\n" not in message


def test_observations_that_are_no_box_are_refused_in_one_line(tmp_path: Path, capsys) -> None:
    config = tmp_path / "c.json"
    data = config_data(observation_normalization="running")
    data["environment"] = "FrozenLake-v1"
    config.write_text(json.dumps(data))
    assert main(["train", str(config), "--out", str(tmp_path / "run"), "--quiet"]) != 0
    error = capsys.readouterr().err.strip()
    assert "episodes.observation_normalization" in error and "Discrete" in error
    assert "\n" not in error and not (tmp_path / "run").exists()


# ----------------------------------------------------------------- runs


def run_config(generations: int) -> dict[str, Any]:
    return {"environment": "CartPole-v1", "seed": 7, "generations": generations,
            "brain": {"type": "ffnn", "hidden_layers": [4]},
            "optimizer": {"type": "cma-es", "population_size": 6},
            "episodes": {"max_steps": 60, "observation_normalization": "running",
                         "observation_clip": 3.0},
            "processing": {"type": "sequential"}}


class ContextRecorder:
    """The run's handler, recording each call's genome count, context and results."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[int, EvaluationContext, list[EvaluationResult]]] = []

    def evaluate(self, template: Any, genomes: Any, seeds: Any) -> Any:
        raise AssertionError("a normalised run evaluates in its generation's context")

    def evaluate_in_context(self, template: Any, genomes: Any, seeds: Any,
                            context: EvaluationContext) -> list[EvaluationResult]:
        results: list[EvaluationResult] = self.inner.evaluate_in_context(template, genomes,
                                                                         seeds, context)
        self.calls.append((len(genomes), context, results))
        return results

    def close(self) -> None:
        self.inner.close()


def test_each_generation_sees_the_earlier_generations_statistics_frozen(tmp_path: Path) -> None:
    session = prepare_train(run_config(4), out=tmp_path / "run")
    recorder = session.handler = ContextRecorder(session.handler)
    state = session.run(NO_EVENTS)
    # a generation: its population's evaluation (6 genomes), then its champion tests' (3)
    generations: list[list[tuple[int, EvaluationContext, list[EvaluationResult]]]] = []
    for call in recorder.calls:
        if call[0] == 6:
            generations.append([])
        generations[-1].append(call)
    assert len(generations) == 4 and all(len(calls) == 2 for calls in generations)
    earlier: list[ObservationStatistics] = []
    for calls in generations:
        normalizer = calls[0][1].normalizer
        assert normalizer is not None and normalizer.clip == 3.0
        assert all(context is calls[0][1] for _, context, _ in calls)  # frozen: one for all
        if not earlier:
            assert np.array_equal(normalizer.mean, np.zeros(4))
            assert np.array_equal(normalizer.std, np.ones(4))
        else:  # the pooled mean and variance of the earlier generations, by definition
            counts = np.array([s.count for s in earlier], dtype=np.float64)[:, None]
            means, m2s = np.array([s.mean for s in earlier]), np.array([s.m2 for s in earlier])
            mean = (counts * means).sum(axis=0) / counts.sum()
            m2 = (m2s + counts * (means - mean) ** 2).sum(axis=0)
            np.testing.assert_allclose(normalizer.mean, mean, rtol=1e-10, atol=1e-14)
            np.testing.assert_allclose(normalizer.std, np.sqrt(m2 / counts.sum()), rtol=1e-10)
        population_results = calls[0][2]
        assert all(r.observations is not None and r.observations.count == r.steps
                   for r in population_results)
        earlier.extend(r.observations for r in population_results
                       if r.observations is not None)
    assert state.observations is not None
    assert state.observations.count == sum(s.count for s in earlier) == state.steps


def evo_process(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "evo_core.cli.main", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_kill_then_resume_equals_one_run(tmp_path: Path, capsys) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps(run_config(6)))
    reference = tmp_path / "reference"
    assert main(["train", str(config), "--out", str(reference), "--quiet"]) == 0
    out = tmp_path / "run"
    process = evo_process("train", str(config), "--out", str(out), "--quiet")
    try:
        wait_until(lambda: ((out / "log.csv").exists() and
                   len((out / "log.csv").read_text().splitlines()) > 3) or
                   process.poll() is not None, "three generations")
        time.sleep(0.05)  # somewhere in a later generation
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()
    assert process.returncode == -signal.SIGKILL
    assert main(["resume", str(out), "--quiet"]) == 0
    assert fitness_rows(out) == fitness_rows(reference)
    for name in ("best.npz", "hall_of_fame.npz", "checkpoint.npz"):
        left, right = npz(reference / name), npz(out / name)
        kept = [key for key in left if not key.startswith(("optimizer.", "meta"))]
        assert kept and all(np.array_equal(left[k], right[k]) for k in kept), name
    assert "observations.count" in npz(out / "checkpoint.npz")


# ----------------------------------------------------------------- the run folder


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("normalised")
    config = folder / "c.json"
    config.write_text(json.dumps(run_config(3)))
    out = folder / "run"
    assert main(["train", str(config), "--out", str(out), "--quiet"]) == 0
    return out


def test_every_kept_genome_keeps_its_generations_normaliser(trained: Path) -> None:
    best, hof = npz(trained / "best.npz"), npz(trained / "hall_of_fame.npz")
    count = len(hof["genomes"])
    assert hof["observation_mean"].shape == hof["observation_std"].shape == (count, 4)
    assert best["observation_mean"].shape == (4,)
    # generation 1 was evaluated with mean 0, std 1; a later one with the statistics before it
    first = hof["generation"] == 1
    assert first.any() and (~first).any()
    assert np.array_equal(hof["observation_mean"][first], np.zeros((first.sum(), 4)))
    assert np.array_equal(hof["observation_std"][first], np.ones((first.sum(), 4)))
    assert not np.array_equal(hof["observation_std"][~first], np.ones(((~first).sum(), 4)))


def test_replay_and_its_trace_give_the_brain_what_training_gave_it(trained: Path,
                                                                    tmp_path: Path) -> None:
    from evo_core.api import Run
    from evo_core.evaluation.rows import environment_seed
    from evo_core.results.trace_file import read_trace

    trace = tmp_path / "t.npz"
    Run.open(trained).replay(episodes=1, seed=123, trace=trace)
    seen = read_trace(trace)["observation"]
    best = npz(trained / "best.npz")
    first, _ = gym.make("CartPole-v1").reset(seed=environment_seed(123))
    expected = np.clip((first - best["observation_mean"]) / best["observation_std"], -3, 3)
    np.testing.assert_array_equal(seen[0], expected)


def test_the_apis_champion_takes_the_environments_own_observations(trained: Path) -> None:
    """`Run.champion()` in a caller's own loop plays the episode `evo replay` plays: the actions
    of the trace, from raw observations."""
    from evo_core.api import Run
    from evo_core.evaluation.rows import environment_seed
    from evo_core.results.trace_file import read_trace

    run = Run.open(trained)
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "t.npz"
        run.replay(episodes=1, seed=123, trace=trace)
        played = read_trace(trace)["action"]
    brain = run.champion()
    env = gym.make("CartPole-v1")
    observation, _ = env.reset(seed=environment_seed(123))
    brain.reset()
    actions = []
    for _ in range(len(played)):
        actions.append(brain.step(observation))
        observation, *_ = env.step(actions[-1])
    np.testing.assert_array_equal(np.asarray(actions).reshape(played.shape), played)


def damaged_copy(trained: Path, tmp_path: Path, name: str, key: str, value: Any) -> Path:
    import shutil
    copy = tmp_path / "copy"
    shutil.copytree(trained, copy)
    arrays = npz(copy / name)
    arrays[key] = value
    np.savez(copy / name, **arrays)
    return copy


@pytest.mark.parametrize("name,key,value,said", [
    ("best.npz", "observation_std", np.array([1.0, 0.0, 1.0, 1.0]), "not positive"),
    ("best.npz", "observation_mean", np.array([1.0, np.nan, 1.0, 1.0]), "not finite"),
    ("best.npz", "observation_mean", np.zeros(3), "shape (3,)"),
])
def test_replay_refuses_a_damaged_normaliser_in_one_line(trained: Path, tmp_path: Path,
                                                         capsys, name: str, key: str,
                                                         value: Any, said: str) -> None:
    copy = damaged_copy(trained, tmp_path, name, key, value)
    assert main(["replay", str(copy), "--episodes", "1"]) != 0
    error = capsys.readouterr().err.strip()
    assert f"{key}" in error and said in error and "\n" not in error, error


@pytest.mark.parametrize("key,value,said", [
    ("observations.m2", np.array([1.0, -1.0, 1.0, 1.0]), "negative"),
    ("observations.mean", np.array([1.0, np.inf, 1.0, 1.0]), "not finite"),
    ("observations.count", np.array(-4), "not a count"),
    ("hall_of_fame.observation_std", np.ones((2, 4)), "hall_of_fame.observation_std"),
])
def test_resume_refuses_damaged_statistics_in_one_line(trained: Path, tmp_path: Path, capsys,
                                                       key: str, value: Any, said: str) -> None:
    copy = damaged_copy(trained, tmp_path, "checkpoint.npz", key, value)
    assert main(["resume", str(copy), "--generations", "4", "--quiet"]) != 0
    error = capsys.readouterr().err.strip()
    assert said in error and "\n" not in error, error


def test_champion_tests_see_the_generations_normaliser() -> None:
    from evo_core.config.stop import StopConfig
    from evo_core.running.stopping import Stopping, StopState

    stop = StopConfig.model_validate({"champion_tests": [
        {"environment": "Pendulum-v1", "episodes": 1, "min_return": -1e9}]})
    stopping = Stopping(stop, RecordingTemplate())
    state = StopState()
    try:
        Recorded.inputs = []
        stopping.after_generation(state, np.array([[0.3]]), np.array([1.0]), 1, NORMALIZER)
        seen = list(Recorded.inputs)
        Recorded.inputs = []  # the same genome, the next generation's normaliser: tested again
        stopping.after_generation(state, np.array([[0.3]]), np.array([1.0]), 2, None)
        raw = list(Recorded.inputs)
    finally:
        stopping.close()
    assert state.solved and state.test_episodes == 2
    first, _ = gym.make("Pendulum-v1").reset(seed=0)  # test episode 0 is seeded with 0
    np.testing.assert_array_equal(raw[0], first)
    np.testing.assert_array_equal(seen[0], np.clip((first - NORMALIZER.mean) / NORMALIZER.std,
                                                   -1, 1))


def test_a_handler_that_cannot_take_the_normaliser_is_refused_in_one_line() -> None:
    from evo_core.running.config_checks import check_observation_normalization

    class PlainHandler:  # an IHandler of a plugin written before the normaliser
        def evaluate(self, template: Any, genomes: Any, seeds: Any) -> Any:
            raise AssertionError("never called by the check")

        def close(self) -> None:
            pass

    config = validate_config(config_data(observation_normalization="running"), get_registry(),
                             "c.toml")
    assert check_observation_normalization(config, SequentialHandler, "c.toml") == 4
    with pytest.raises(UserError) as caught:
        check_observation_normalization(config, PlainHandler, "c.toml")
    message = str(caught.value)
    assert message.startswith("c.toml: episodes.observation_normalization")
    assert "IContextHandler" in message and "\n" not in message
