"""Behaviour descriptors under episodes.vectorize: "sync" records exactly what the per-genome
runner records (every source, episodes of uneven length, NaN endings, max_steps), "native"
records the same per row and masks finished rows, and whole runs (novelty search) agree."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, cast

import gymnasium as gym
import numpy as np
import pytest
from behaviour_envs import ScriptedTemplate
from test_vectorize import EPISODES, TOY, Toy, ToyVector, population, toy_row, toy_template

from brain_ctrnn import CTRNNConfig, CTRNNTemplate
from evo_core.cli.main import main
from evo_core.config.behaviour import BehaviourConfig
from evo_core.config.schema import EpisodesConfig
from evo_core.errors import CandidateFailure, UserError
from evo_core.evaluation.batched_episodes import BatchedEpisodeRunner
from evo_core.evaluation.episodes import EpisodeRunner
from evo_core.handlers.chunks import Chunk, evaluate_chunk

STATEFUL_TOY = "evo_test/StatefulToy-v0"


class StatefulToy(gym.Wrapper[np.ndarray, np.int64, np.ndarray, np.int64]):
    """The toy with its own state: [10 t, episode length] (IBehaviourState, on a wrapper: the
    toy itself comes from the vectorize tests)."""

    def behaviour_state(self) -> np.ndarray:
        toy = self.unwrapped
        return np.array([10.0 * toy.t, toy.length])  # type: ignore[attr-defined]


class RaisingState(StatefulToy):
    """A state hook that raises in a long episode's second step."""

    def behaviour_state(self) -> np.ndarray:
        state = super().behaviour_state()
        if state[1] >= 4 and state[0] == 20.0:
            raise RuntimeError("no state")
        return state


def stateful_toy() -> gym.Env[np.ndarray, np.int64]:
    return StatefulToy(cast(gym.Env[np.ndarray, np.int64], Toy()))


def raising_state() -> gym.Env[np.ndarray, np.int64]:
    return RaisingState(cast(gym.Env[np.ndarray, np.int64], Toy()))


for name, make in ((STATEFUL_TOY, stateful_toy), ("evo_test/RaisingState-v0", raising_state)):
    if name not in gym.registry:
        gym.register(name, entry_point=cast(Any, make), vector_entry_point=cast(Any, ToyVector))


def per_genome_and_sync(environment: str, template: Any, genomes: np.ndarray,
                        seeds: np.ndarray, behaviour: BehaviourConfig,
                        episodes: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    off = EpisodeRunner(template, environment, EpisodesConfig(**episodes), behaviour=behaviour)
    sync = BatchedEpisodeRunner(template, environment,
                                EpisodesConfig(vectorize="sync", **episodes),
                                behaviour=behaviour)
    try:
        expected = [off.evaluate(genome, int(seed)) for genome, seed in zip(genomes, seeds)]
        got = sync.evaluate_many(genomes, seeds)
        assert sync.evaluate_many(genomes[2:5], seeds[2:5]) == expected[2:5]  # reused
    finally:
        off.close()
        sync.close()
    return expected, got


@pytest.mark.parametrize("episodes", EPISODES)
@pytest.mark.parametrize(("source", "interval"), [("action", 1), ("observation", 2),
                                                  ("observation", "final")])
def test_sync_records_what_the_per_genome_runner_records(
        episodes: dict[str, Any], source: str, interval: int | str) -> None:
    template = toy_template()
    genomes, seeds = population(12, template.genome_size)
    behaviour = BehaviourConfig(source=source, interval=interval,
                                max_length=None if interval == "final" else 3)
    expected, got = per_genome_and_sync(TOY, template, genomes, seeds, behaviour, episodes)
    assert got == expected  # descriptors compared exactly
    assert all(r.descriptor is not None and r.descriptor.shape == (
        2 * (1 if interval == "final" else 3) if source == "observation" else 3,)
        for r in got)
    assert len({tuple(r.descriptor) for r in got if r.descriptor is not None}) > 1


@pytest.mark.parametrize("episodes", EPISODES[:2])
def test_sync_records_each_rows_own_state(episodes: dict[str, Any]) -> None:
    template = toy_template()
    genomes, seeds = population(10, template.genome_size, seed=3)
    behaviour = BehaviourConfig(source="state", interval=2, max_length=2)
    expected, got = per_genome_and_sync(STATEFUL_TOY, template, genomes, seeds, behaviour,
                                        episodes)
    assert got == expected
    assert len({r.descriptor[2] for r in got if r.descriptor is not None}) > 2  # lengths differ


def test_sync_state_on_the_scripted_counting_env() -> None:
    template = ScriptedTemplate(3)
    genomes = np.array([[0.1, -0.2, 0.3], [0.5, 0.5, -1.0]])
    seeds = np.array([1, 2])
    behaviour = BehaviourConfig(source="state", interval=2, max_length=3)
    expected, got = per_genome_and_sync("behaviour_envs:StatefulCounting-v0", template,
                                        np.concatenate([genomes] * 3), np.tile(seeds, 3),
                                        behaviour, {"runs": 2})
    assert got == expected
    assert got[0].descriptor is not None and list(got[0].descriptor) == [15.0, 35.0, 50.0]


def test_a_raising_state_hook_names_its_candidate_as_the_environment() -> None:
    template = toy_template()
    genomes, seeds = population(12, template.genome_size, seed=1)
    behaviour = BehaviourConfig(source="state", interval=1, max_length=2)
    chunk = Chunk(np.arange(100, 112), genomes, seeds)
    failures = []
    for runner in (EpisodeRunner(template, "evo_test/RaisingState-v0", EpisodesConfig(),
                                 behaviour=behaviour),
                   BatchedEpisodeRunner(template, "evo_test/RaisingState-v0",
                                        EpisodesConfig(vectorize="sync"), behaviour=behaviour)):
        try:
            with pytest.raises(CandidateFailure) as failure:
                evaluate_chunk(runner, chunk)
        finally:
            runner.close()
        failures.append(failure.value)
    assert failures[0].source == failures[1].source == "environment"
    assert "no state" in failures[1].error
    assert failures[0].candidate == failures[1].candidate > 100


@pytest.mark.parametrize("episodes", EPISODES)
def test_native_records_each_rows_last_observation_as_by_hand(episodes: dict[str, Any]) -> None:
    """The vector toy keeps stepping finished rows (into new episodes): a recorded finished row
    would change the last observation."""
    config = EpisodesConfig(vectorize="native", **episodes)
    template = toy_template()
    genomes, seeds = population(7, template.genome_size)
    runner = BatchedEpisodeRunner(template, TOY, config,
                                  behaviour=BehaviourConfig(source="observation",
                                                            interval="final"))
    try:
        results = runner.evaluate_many(genomes, seeds)
    finally:
        runner.close()
    for candidate, result in enumerate(results):
        finals = []
        for k in range(config.runs):
            length, kind = toy_row(candidate * config.runs + k)
            steps = length if config.max_steps is None else min(length, config.max_steps)
            # a NaN in a recorded value becomes 0
            finals.append([0.0 if kind == 1 and steps == length else steps, length])
        assert result.descriptor is not None
        assert result.descriptor.tolist() == np.mean(finals, axis=0).tolist()


@pytest.mark.parametrize("mode", ["native", "envpool"])
def test_cartpole_descriptors_have_their_shape_and_repeat_for_a_seed(mode: str) -> None:
    if mode == "envpool":
        pytest.importorskip("envpool")
    env = gym.make("CartPole-v1")
    template = CTRNNTemplate(CTRNNConfig(number_neurons=3), env.observation_space,
                             env.action_space, np.random.default_rng(0))
    env.close()
    genomes, seeds = population(6, template.genome_size)
    results = []
    for source, width in (("observation", 4), ("action", 1)):
        runner = BatchedEpisodeRunner(
            template, "CartPole-v1", EpisodesConfig(vectorize=mode, runs=2, max_steps=60),
            behaviour=BehaviourConfig(source=source, interval=10, max_length=5))
        try:
            first = runner.evaluate_many(genomes, seeds)
            assert runner.evaluate_many(genomes, seeds) == first
        finally:
            runner.close()
        assert all(r.descriptor is not None and r.descriptor.shape == (5 * width,)
                   and r.descriptor.dtype == np.float64 for r in first)
        results.append(first)
    assert len({tuple(r.descriptor) for r in results[0] if r.descriptor is not None}) == 6


def test_native_refuses_the_state_source() -> None:
    with pytest.raises(UserError, match=r'behaviour.source = "state" .*"sync"'):
        BatchedEpisodeRunner(toy_template(), STATEFUL_TOY, EpisodesConfig(vectorize="native"),
                             behaviour=BehaviourConfig(source="state", max_length=2))


# ----------------------------------------------------------------- whole runs


def novelty_run(tmp_path: Path, name: str, episodes: dict[str, Any],
                processing: dict[str, Any]) -> list[dict[str, str]]:
    config = tmp_path / f"{name}.json"
    config.write_text(json.dumps({
        "environment": "CartPole-v1", "seed": 7, "generations": 3,
        "brain": {"type": "ffnn", "hidden_layers": [3]},
        "optimizer": {"type": "cma-es", "population_size": 8},
        "episodes": {"runs": 2, "max_steps": 20, "seed_per": "candidate", **episodes},
        "behaviour": {"source": "observation", "interval": 5, "max_length": 4},
        "novelty": {"k": 3, "per_generation": 3, "archive_size": 7},
        "processing": processing}))
    out = tmp_path / name
    assert main(["train", str(config), "--out", str(out), "--quiet"]) == 0
    with open(out / "log.csv", newline="") as handle:
        return [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(handle)]


def test_novelty_search_logs_equal_off_with_sync_sequentially_and_with_mp(tmp_path: Path
                                                                          ) -> None:
    reference = novelty_run(tmp_path, "off", {}, {"type": "sequential"})
    assert "novelty_mean" in reference[0] and len(reference) == 3
    assert novelty_run(tmp_path, "sync", {"vectorize": "sync"},
                       {"type": "sequential"}) == reference
    assert novelty_run(tmp_path, "mp", {"vectorize": "sync"},
                       {"type": "mp", "workers": 2, "start_method": "forkserver"}) == reference


def test_native_with_a_state_source_is_one_line(tmp_path: Path, capsys: Any) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({
        "environment": STATEFUL_TOY, "generations": 1, "brain": {"type": "ffnn"},
        "optimizer": {"type": "cma-es", "population_size": 4},
        "behaviour": {"source": "state", "max_length": 4},
        "episodes": {"vectorize": "native"}}))
    assert main(["train", str(config), "--out", str(tmp_path / "run")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and 'behaviour.source = "state"' in error
    assert '"sync"' in error and "config.json" in error
    assert not (tmp_path / "run").exists()
