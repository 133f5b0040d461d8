"""evo-jax: `episodes.vectorize = "jax"` trains, replays and resumes a gymnax config exactly;
the compiled rollout's episodes are the gymnasium form's; mistakes are one line each."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import npz, requires

from evo_core import UserError, api
from evo_core.cli.main import main
from evo_core.config import validate_config
from evo_core.environments import make_environment
from evo_core.evaluation.episodes import EpisodeRunner
from evo_core.hooks.discovery import get_registry
from evo_core.running.experiment import build_experiment

pytestmark = requires("jax", "gymnax", reason="jax or gymnax is not installed (pip install "
                      "'evo-core[jax]')")

ENV = "gymnax/CartPole-v1"


def config_dict(**changes: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "environment": ENV, "seed": 3, "generations": 4,
        "brain": {"type": "ffnn", "hidden_layers": [4]},
        "optimizer": {"type": "cma-es", "population_size": 8},
        "episodes": {"runs": 2, "max_steps": 60, "vectorize": "jax"},
    }
    config.update(changes)
    return config


def rows(run: Path) -> list[dict[str, str]]:
    with open(run / "log.csv", newline="") as handle:
        return [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(handle)]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> api.Run:
    folder = tmp_path_factory.mktemp("jax")
    return api.train(config_dict(), out=folder / "run")


def test_trains_with_the_core_run_folder(trained: api.Run) -> None:
    log = rows(trained.path)
    assert [int(r["generation"]) for r in log] == [1, 2, 3, 4]
    assert all(0 < float(r["best"]) <= 60 for r in log)
    assert (trained.path / "checkpoint.npz").is_file() and trained.best.fitness > 0


def test_same_seed_same_run_and_resume_is_exact(trained: api.Run, tmp_path: Path) -> None:
    again = api.train(config_dict(generations=2), out=tmp_path / "half")
    api.resume(again.path, generations=4)
    assert rows(again.path) == rows(trained.path)
    for name in ("best.npz", "hall_of_fame.npz"):
        left, right = npz(again.path / name), npz(trained.path / name)
        assert all(np.array_equal(left[k], right[k]) for k in left), name


def test_replay_runs_the_champion_in_the_same_jax_environment(trained: api.Run) -> None:
    returns = trained.replay(episodes=2, seed=7)
    assert len(returns) == 2 and all(0 < r <= 60 for r in returns)
    env = make_environment(ENV)
    try:
        assert type(env.unwrapped).__name__ == "JaxGymnasiumEnv"
    finally:
        env.close()


def test_rollout_episodes_are_the_gymnasium_forms(trained: api.Run) -> None:
    """The compiled rollout and `EpisodeRunner` on the gymnasium form: same seeds, same keys,
    so the same episodes (step counts exactly; returns too, CartPole's reward being 1 a step)."""
    registry = get_registry()
    config = validate_config(config_dict(), registry, "test")
    experiment = build_experiment(config, registry)
    evaluator: Any = experiment.runner_spec.build(experiment.template)
    runner = EpisodeRunner(experiment.template, config.environment, config.episodes)
    genomes = np.random.default_rng(0).normal(0, 1, (5, experiment.template.genome_size))
    seeds = np.array([11, 11, 12, 13, 14], dtype=np.int64)
    try:
        batched = evaluator.evaluate_many(genomes, seeds)
        single = [runner.evaluate(genome, int(seed)) for genome, seed in zip(genomes, seeds)]
    finally:
        runner.close()
        evaluator.close()
    assert [(r.fitness, r.steps) for r in batched] == [(r.fitness, r.steps) for r in single]


def test_the_rollout_normalises_and_gathers_as_off_does_in_float32() -> None:
    """With an observation normaliser as arguments of the compiled rollout: the same episodes
    as `EpisodeRunner` on the gymnasium form given the same normaliser, and the same
    statistics of the raw observations up to float32; a plain evaluation gathers none."""
    from evo_core import EvaluationContext, ObservationNormalizer

    registry = get_registry()
    episodes = {"runs": 2, "max_steps": 60, "vectorize": "jax",
                "observation_normalization": "running", "observation_clip": 2.0}
    config = validate_config(config_dict(episodes=episodes), registry, "test")
    experiment = build_experiment(config, registry)
    evaluator: Any = experiment.runner_spec.build(experiment.template)
    runner = EpisodeRunner(experiment.template, config.environment, config.episodes)
    context = EvaluationContext(ObservationNormalizer(
        np.array([0.1, -0.2, 0.05, 0.3]), np.array([0.5, 1.5, 0.1, 2.0]), 2.0))
    genomes = np.random.default_rng(0).normal(0, 1, (5, experiment.template.genome_size))
    seeds = np.array([11, 11, 12, 13, 14], dtype=np.int64)
    try:
        evaluator.use_context(context)
        runner.use_context(context)
        batched = evaluator.evaluate_many(genomes, seeds)
        single = [runner.evaluate(genome, int(seed)) for genome, seed in zip(genomes, seeds)]
        evaluator.use_context(EvaluationContext())
        plain = evaluator.evaluate_many(genomes, seeds)
    finally:
        runner.close()
        evaluator.close()
    assert [(r.fitness, r.steps) for r in batched] == [(r.fitness, r.steps) for r in single]
    for jax_result, numpy_result in zip(batched, single):
        assert jax_result.observations is not None and numpy_result.observations is not None
        assert jax_result.observations.count == numpy_result.observations.count \
            == numpy_result.steps
        np.testing.assert_allclose(jax_result.observations.mean,
                                   numpy_result.observations.mean, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(jax_result.observations.m2,
                                   numpy_result.observations.m2, rtol=1e-5, atol=1e-5)
    assert all(r.observations is None for r in plain)


def test_list_environments_shows_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list-environments", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    ids = {row["id"]: row for row in table}
    assert ids[ENV]["vectorize"] == "jax" and "brax/ant" in ids


@pytest.mark.parametrize(("changes", "expected"), [
    ({"environment": "CartPole-v1"}, "runs the environments `evo list-environments` shows"),
    ({"brain": {"type": "ctrnn", "number_neurons": 3, "parameter_perturbations": 0.1}},
     "parameter_perturbations"),
    ({"environment": {"id": ENV, "kwargs": {"x": 1}}}, "kwargs: gymnax/CartPole-v1 rejected"),
    ({"behaviour": {"source": "observation", "max_length": 4}}, "records no behaviour"),
])
def test_mistakes_are_one_line(changes: dict[str, Any], expected: str) -> None:
    registry = get_registry()
    with pytest.raises(UserError) as raised:
        build_experiment(validate_config(config_dict(**changes), registry, "c.json"), registry,
                         "c.json")
    message = str(raised.value)
    assert expected in message and "\n" not in message and message.startswith("c.json: ")


def test_a_chain_of_brains_written_once_runs_in_jax() -> None:
    registry = get_registry()
    build_experiment(validate_config(config_dict(brain={
        "type": "chain", "stages": [{"type": "ffnn", "output_size": 3}, {"type": "ffnn"}]}),
        registry, "c.json"), registry, "c.json")


def test_a_brain_without_the_capability_is_refused(tmp_path: Path) -> None:
    registry = get_registry()
    with pytest.raises(UserError) as raised:
        build_experiment(validate_config(config_dict(brain={  # a noisy stage: no array chain
            "type": "chain", "stages": [{"type": "ffnn", "output_size": 3},
                                        {"type": "ctrnn", "parameter_perturbations": 0.1}]}),
            registry, "c.json"), registry, "c.json")
    message = str(raised.value)
    assert "has no JAX form" in message and "IArrayBrain" in message and "\n" not in message
