"""`[champion]`: best.npz is the candidate with the best score on episodes it did not train on."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evo_core import EvaluationResult, api
from evo_core.config.champion import ChampionConfig
from evo_core.running.champion import fresh_scores
from evo_core.running.seeding import FRESH_SEED_LOW, TRAINING_SEED_LIMIT, Streams


def _config(**changes: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "environment": "CartPole-v1", "seed": 2, "generations": 4,
        "brain": {"type": "ctrnn", "number_neurons": 3},
        "optimizer": {"type": "cma-es", "population_size": 6},
        "episodes": {"runs": 1, "max_steps": 60},
    }
    config.update(changes)
    return config


def _rows(run: Path) -> list[dict[str, str]]:
    with open(run / "log.csv", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def chosen(tmp_path_factory: pytest.TempPathFactory) -> api.Run:
    return api.train(_config(), out=tmp_path_factory.mktemp("champion") / "run")


def test_a_run_of_single_episodes_chooses_its_champion_on_fresh_ones(chosen: api.Run) -> None:
    recorded = json.loads((chosen.path / "config.json").read_text())
    assert recorded["champion"] == {"candidates": 3, "episodes": 10}  # written, so it resumes
    rows = _rows(chosen.path)
    champion = [float(row["champion_fresh"]) for row in rows]
    assert champion == sorted(champion)  # the champion is replaced only by a better one
    assert max(float(row["fresh_best"]) for row in rows) == champion[-1]
    best = chosen.best
    assert best.fresh == champion[-1] and best.fitness <= float(rows[-1]["best_ever"])
    members = {member.genome.tobytes(): member for member in chosen.hall_of_fame}
    if best.genome.tobytes() in members:  # both scores recorded in the hall of fame too
        assert members[best.genome.tobytes()].fresh == best.fresh
    assert any(member.fresh is not None for member in chosen.hall_of_fame)


@pytest.mark.parametrize(("changes", "expected"), [
    ({"episodes": {"runs": 5, "max_steps": 20}}, None),
    ({"champion": {"episodes": 0}}, {"candidates": 3, "episodes": 0}),
])
def test_enough_episodes_or_episodes_0_keep_the_best_training_fitness(
        tmp_path: Path, changes: dict[str, Any], expected: dict[str, int] | None) -> None:
    run = api.train(_config(generations=2, **changes), out=tmp_path / "run")
    assert json.loads((run.path / "config.json").read_text()).get("champion") == expected
    assert "champion_fresh" not in _rows(run.path)[0]
    assert run.best.fresh is None and run.best.fitness == max(
        float(row["best"]) for row in _rows(run.path))


def test_fresh_episodes_are_new_the_same_for_every_candidate_and_enough() -> None:
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def evaluate(genomes: np.ndarray, seeds: np.ndarray) -> list[EvaluationResult]:
        seen.append((genomes, seeds))
        return [EvaluationResult(fitness=float(genome[0] + seed % 7), steps=1)
                for genome, seed in zip(genomes, seeds)]

    fitness = np.array([1.0, np.nan, 5.0, 3.0, 4.0])
    genomes = np.arange(5.0)[:, None] * np.ones((5, 2))
    scores = fresh_scores(ChampionConfig(candidates=3, episodes=7), 3, fitness, genomes,
                          Streams.from_seed(1), evaluate)
    (played, seeds), = seen
    repeats = math.ceil(7 / 3)  # each evaluation plays `runs` episodes
    assert played[:, 0].tolist() == [2.0] * repeats + [4.0] * repeats + [3.0] * repeats
    assert (seeds >= FRESH_SEED_LOW).all() and (seeds > TRAINING_SEED_LIMIT).all()
    assert len(set(seeds[:repeats].tolist())) == repeats
    assert np.array_equal(seeds[:repeats], seeds[repeats:2 * repeats])
    assert np.isnan(scores[[0, 1]]).all()
    expected = [candidate + np.mean(seeds[:repeats] % 7) for candidate in (2.0, 3.0, 4.0)]
    assert np.allclose(scores[[2, 3, 4]], expected)
