"""bench/swing_up.py: a row trained, tested (the champion and the optimizer's centre) and read
back, and its table, on a protocol shrunk to seconds (the examples' own sizes are hours)."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import bench_script

from evo_core.api import Run


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    """bench/swing_up.py as `bench_swing_up`."""
    with bench_script("swing_up.py", "bench_swing_up") as module:
        yield module


@pytest.fixture
def small(bench: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """4 candidates of 2 episodes of 30 steps, tested on 3 episodes."""
    monkeypatch.setattr(bench, "TEST_EPISODES", 3)
    monkeypatch.setitem(bench.TASKS, "easy", {
        "optimizer.population_size": 4, "episodes.runs": 2, "episodes.max_steps": 30,
        "champion.episodes": 2, "brain.hidden_layers": [4]})


def test_a_row_is_trained_tested_and_read_back(bench: ModuleType, small: None,
                                               tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                               ) -> None:
    outcome = bench.run_one("pgpe", "easy", 7, 3, tmp_path)
    folder = tmp_path / "easy-pgpe" / "seed-7"
    assert (outcome.iterations, outcome.error) == (3, None)
    run = Run.open(folder)
    assert outcome.score == statistics.fmean(run.replay(episodes=3))
    # the centre is the PGPE state's mean at the last checkpoint (the run's end), tested on
    # the champion's episodes: what EvoJAX tests
    _, state = run.checkpointed_optimizer() or (0, {})
    assert state["mean"].shape == (run.template().genome_size,)
    assert outcome.centre is not None and outcome.centre != outcome.score
    record = json.loads((folder / "test.json").read_text())
    assert (record["score"], record["centre_score"], record["iterations"]) == (
        outcome.score, outcome.centre, 3)
    again = bench.run_one("pgpe", "easy", 7, 3, tmp_path)  # read back, nothing trained
    assert again == outcome
    assert len(run.log) == 3

    bench.report([outcome], ["pgpe"], ["easy"], 1, 3)
    row = capsys.readouterr().out.strip().splitlines()[-1].split(" | ")
    assert row[:5] == ["| easy", "PGPE", f"{outcome.score:.2f} (1 of 1)", f"{outcome.centre:.2f}",
                       "3"]
    assert row[5:8] == ["935.43", "at least 935.43", "no"]


def test_an_optimizer_without_a_centre_leaves_the_column_empty(
        bench: ModuleType, small: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(bench.TASKS, "easy", {**bench.TASKS["easy"], "optimizer.mu": 2})
    outcome = bench.run_one("cma-es", "easy", 7, 2, tmp_path)
    assert outcome.score is not None and outcome.centre is None
    unfinished = bench.so_far("cma-es", "easy", 7, tmp_path)
    assert unfinished is not None and unfinished.centre is None
    assert np.isfinite(unfinished.score)
