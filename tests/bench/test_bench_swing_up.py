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
from evo_core.errors import UserError
from evo_core.results.checkpoint import read_run_checkpoint
from evo_core.results.run_folder import RunFolder


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
    assert row[:6] == ["| easy", "PGPE", f"{outcome.score:.2f} (1 of 1)", f"{outcome.centre:.2f}",
                       f"{outcome.protocol:.2f}", "3"]
    assert row[6:9] == ["935.43", "at least 935.43", "no"]


def test_evojax_protocol_tests_the_centre_every_interval_of_one_uninterrupted_run(
        bench: ModuleType, small: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Segments of TEST_INTERVAL iterations (2 here), the centre tested at each end and at the
    last; the best of those tested on fresh episodes; the run equal to one trained at once."""
    monkeypatch.setattr(bench, "TEST_INTERVAL", 2)
    outcome = bench.run_one("pgpe", "easy", 7, 5, tmp_path)
    folder = tmp_path / "easy-pgpe" / "seed-7"
    tests = bench.centre_tests(folder)
    assert sorted(tests) == [2, 4, 5] and outcome.protocol_tests == 3
    whole = bench.train(bench.EXAMPLES / "swing_up_pgpe.toml", out=tmp_path / "whole",
                        overrides={**bench.TASKS["easy"], "seed": 7, "generations": 5,
                                   "checkpoint_every": bench.CHECKPOINT_EVERY})
    run = Run.open(folder)
    assert [row["best"] for row in run.log] == [row["best"] for row in whole.log]
    last, whole_last = run.checkpointed_optimizer(), whole.checkpointed_optimizer()
    assert last is not None and whole_last is not None
    centre = last[1]["mean"].tolist()
    assert centre == whole_last[1]["mean"].tolist()
    # the last centre is the one the centre column tests, on the champion's episodes instead
    assert outcome.centre is not None
    best = max(tests, key=lambda iteration: tests[iteration])
    kept_genome = np.load(folder / bench.BEST_CENTRE)
    assert (best == 5) == (kept_genome.tolist() == centre)
    # tested again on episodes none of the periodic tests played
    assert outcome.protocol is not None and outcome.protocol not in tests.values()
    assert json.loads((folder / "test.json").read_text())["protocol_score"] == outcome.protocol


def test_a_centre_test_a_kill_cut_short_is_made_before_training_goes_on(
        bench: ModuleType, small: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "TEST_INTERVAL", 2)
    folder = tmp_path / "run"
    bench.trained("pgpe", "easy", 7, 4, folder)
    tests = bench.centre_tests(folder)
    (folder / bench.CENTRE_TESTS).write_text(json.dumps({"2": tests[2]}))  # killed at 4's
    bench.trained("pgpe", "easy", 7, 6, folder)
    assert bench.centre_tests(folder) == {**tests, 6: bench.centre_tests(folder)[6]}
    assert len(Run.open(folder).log) == 6


def test_cma_es_centre_is_the_mean_sealed_in_its_state(
        bench: ModuleType, small: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pycma's strategy is sealed in the checkpoint: its mean, opened with this user's
    signature for this run, is the centre tested (EvoJAX's CMA-ES solvers test their mean)."""
    monkeypatch.setitem(bench.TASKS, "easy", {**bench.TASKS["easy"], "optimizer.mu": 2})
    outcome = bench.run_one("cma-es", "easy", 7, 2, tmp_path)
    assert outcome.score is not None and outcome.centre is not None
    assert outcome.protocol is not None and outcome.protocol_tests == 1
    run = Run.open(bench._folder(tmp_path, "cma-es", "easy", 7))
    centred = bench.centre_champion(run)
    checkpoint = read_run_checkpoint(RunFolder.open(run.path), run.config.provenance)
    mean = bench.cma_es_mean(run, checkpoint, centred.genome.size)
    assert np.array_equal(centred.genome, mean) and mean.any()  # moved from the start (zeros)
    unfinished = bench.so_far("cma-es", "easy", 7, tmp_path)
    assert unfinished is not None and unfinished.centre == outcome.centre


def test_start_noise_compares_pair_differences_on_the_same_and_other_starts(
        bench: ModuleType, small: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Reproducible figures, the two conditions apart; a run that is not PGPE's is refused, by
    the command in one line and status 2."""
    bench.run_one("pgpe", "easy", 7, 2, tmp_path)
    folder = bench._folder(tmp_path, "pgpe", "easy", 7)
    same, different = bench.start_noise(folder, 3)
    assert (same, different) == bench.start_noise(folder, 3)
    assert same != different and different > 0
    bench.run_one("openai-es", "easy", 7, 2, tmp_path)
    other = bench._folder(tmp_path, "openai-es", "easy", 7)
    with pytest.raises(UserError, match="needs a checkpointed PGPE run"):
        bench.start_noise(other, 3)
    capsys.readouterr()
    with pytest.raises(SystemExit) as ended:
        bench.main(["--start-noise", str(other)])
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("swing_up.py: error: ") and "needs a checkpointed PGPE run" in err
