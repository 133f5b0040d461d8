"""Attacks on what a resume continues from: log.csv's stop columns and the checkpoint's meta.

A run with a `[stop]` table writes `solved` and `test_episodes` to log.csv; the checkpoint
records them too, and a resume continues from that record, checked against the config, the
checkpoint's other values and log.csv's last kept row. Each test edits the files as an attacker
would (log.csv with the checkpoint's log mark recomputed to match, so that the log's hash
vouches for the edit; the checkpoint's record; both) and asserts one `evo:` line naming the
file and the field, exit status 2 and the folder as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import npz, wait_until
from test_checkpoint_attacks import contents, one_line

from evo_core.cli.main import main

#: never solved (a return of 20 at most), so champion tests are never played
GATED = {"fitness": 1000,
         "champion_tests": [{"environment": "CartPole-v1", "episodes": 2, "min_return": 1}]}
#: champion tests after every generation, failed at their first episode: one per generation
TESTED = {"champion_tests": [{"environment": "CartPole-v1", "episodes": 2,
                              "min_return": 1000}]}


def config(stop: dict[str, Any]) -> dict[str, Any]:
    return {"environment": "CartPole-v1", "seed": 3, "generations": 3, "checkpoint_every": 1,
            "brain": {"type": "ctrnn", "number_neurons": 3},
            "optimizer": {"type": "mu-lambda", "population_size": 6, "mu": 2},
            "episodes": {"runs": 1, "max_steps": 20}, "stop": stop}


def trained(folder: Path, stop: dict[str, Any]) -> Path:
    (folder / "c.json").write_text(json.dumps(config(stop)))
    assert main(["train", str(folder / "c.json"), "--out", str(folder / "run"), "--quiet"]) == 0
    return folder / "run"


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return trained(tmp_path_factory.mktemp("gated"), GATED)


@pytest.fixture(scope="module")
def tested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return trained(tmp_path_factory.mktemp("tested"), TESTED)


@pytest.fixture
def run(gated: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(gated, copy)
    return copy


def rows(run: Path) -> list[dict[str, str]]:
    from evo_core.results.log_file import read_log
    return read_log(run / "log.csv")


# ------------------------------------------------------------------ editing as an attacker


def edit_meta(run: Path, change: Callable[[dict[str, Any]], None]) -> None:
    arrays = npz(run / "checkpoint.npz")
    meta = json.loads(arrays["meta"].tobytes())
    change(meta)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    (run / "checkpoint.npz").unlink()
    np.savez(run / "checkpoint.npz", **arrays)


def edit_last_row(run: Path, solved: str | None = None, test_episodes: str | None = None) -> None:
    """log.csv's last row with other stop cells, and the checkpoint's mark made to vouch for
    the edited bytes (as an attacker who read results/log_file.py would)."""
    lines = (run / "log.csv").read_bytes().split(b"\r\n")
    cells = lines[-2].split(b",")
    if solved is not None:
        cells[-2] = solved.encode()
    if test_episodes is not None:
        cells[-1] = test_episodes.encode()
    lines[-2] = b",".join(cells)
    data = b"\r\n".join(lines)
    (run / "log.csv").write_bytes(data)
    edit_meta(run, lambda meta: meta.update(log={
        "length": len(data), "sha256": hashlib.sha256(data).hexdigest(),
        "rows": meta["log"]["rows"]}))


def resume_refused(run: Path, capsys: pytest.CaptureFixture[str]) -> str:
    before = contents(run)
    assert main(["resume", str(run), "--generations", "5", "--quiet"]) == 2
    line: str = one_line(capsys.readouterr().err)
    assert contents(run) == before  # nothing written
    return line


# ------------------------------------------------------------------ log.csv edited


@pytest.mark.parametrize(("cells", "said"), [
    ({"solved": "abc"}, "solved is 'abc', but the checkpoint records 0"),
    ({"solved": "1"}, "solved is '1', but the checkpoint records 0"),
    ({"test_episodes": "-5"}, "test_episodes is '-5', but the checkpoint records 0"),
    ({"test_episodes": ""}, "test_episodes is '', but the checkpoint records 0"),
])
def test_an_edited_stop_cell_of_log_csv_is_refused_against_the_checkpoint(
        run: Path, capsys: pytest.CaptureFixture[str], cells: dict[str, str], said: str
) -> None:
    edit_last_row(run, **cells)
    line = resume_refused(run, capsys)
    assert f"{run / 'log.csv'}: line 4: {said}; log.csv was edited or damaged" in line, line


# ------------------------------------------------------------------ the checkpoint's record


def record(**stop: Any) -> Callable[[dict[str, Any]], None]:
    return lambda meta: meta.update(stop=stop)


@pytest.mark.parametrize(("change", "log_cells", "said"), [
    (record(solved=1, test_episodes=0), {"solved": "1"},
     "stop.solved is 1, but the best fitness (20) is below stop.fitness (1000)"),
    (record(solved=0, test_episodes=-5), {"test_episodes": "-5"},
     "stop.test_episodes is -5, not a count"),
    (record(solved=0, test_episodes=3), {"test_episodes": "3"},
     "stop.test_episodes is 3, but no candidate reached stop.fitness (1000; the best fitness "
     "is 20), so no champion test was played"),
    (record(solved=0, test_episodes=99), {"test_episodes": "99"},
     "stop.test_episodes is 99, more than the 6 episode(s) that 3 generation(s)"),
    (record(solved=True, test_episodes=0), {}, "stop.solved is True, not 0 or 1"),
    (record(solved="0", test_episodes=0), {}, "stop.solved is '0', not 0 or 1"),
    (record(solved=0), {}, "stop has the keys ['solved'], not ['solved', 'test_episodes']"),
    (lambda meta: meta.update(stop="abc"), {}, "damaged: its meta entry's stop: 'abc' is not a "
     "table"),
])
def test_an_edited_stop_record_of_the_checkpoint_is_refused(
        run: Path, capsys: pytest.CaptureFixture[str], change: Callable[[dict[str, Any]], None],
        log_cells: dict[str, str], said: str) -> None:
    if log_cells:
        edit_last_row(run, **log_cells)  # log.csv says the same: the record itself is checked
    edit_meta(run, change)
    line = resume_refused(run, capsys)
    assert line.startswith(f"evo: error: {run / 'checkpoint.npz'}: ") and said in line, line


# ------------------------------------------------------------------ a checkpoint without a record


def drop_record(meta: dict[str, Any]) -> None:
    del meta["stop"]


def test_a_checkpoint_without_a_record_resumes_from_the_kept_row(
        run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit_meta(run, drop_record)  # as written before the record existed
    assert main(["resume", str(run), "--generations", "4", "--quiet"]) == 0
    assert [row["test_episodes"] for row in rows(run)] == ["0"] * 4


@pytest.mark.parametrize(("cells", "said"), [
    ({"solved": "abc"}, "solved is 'abc', not 0 or 1"),
    ({"solved": "1"}, "solved is 1, but the best fitness (20) is below stop.fitness (1000)"),
    ({"test_episodes": "-5"}, "test_episodes is -5, not a count"),
    ({"test_episodes": "9" * 30}, f"test_episodes is '{'9' * 30}', not a count"),
])
def test_without_a_record_the_kept_row_is_checked_as_the_record_is(
        run: Path, capsys: pytest.CaptureFixture[str], cells: dict[str, str], said: str) -> None:
    edit_last_row(run, **cells)
    edit_meta(run, drop_record)
    line = resume_refused(run, capsys)
    assert f"{run / 'log.csv'}: line 4: {said}" in line, line


# ------------------------------------------------------------------ the checkpoint's meta


@pytest.mark.parametrize(("change", "said"), [
    (lambda meta: meta.update(log=None), "its meta entry's log: None is not a table"),
    (lambda meta: meta.update(log=[1, 2]), "its meta entry's log: [1, 2] is not a table"),
    (lambda meta: meta["log"].update(length="12"), "its meta entry's log: '12' is not an "
     "integer"),
    (lambda meta: meta["log"].update(sha256=7), "its meta entry's log: 7 is not a SHA-256"),
    (lambda meta: meta["log"].pop("rows"), "its meta entry's log lacks 'rows'"),
    (lambda meta: meta.pop("steps"), "its meta entry lacks steps"),
    (lambda meta: meta.update(seconds="1.5"), "its meta entry's seconds: '1.5' is not a number"),
    (lambda meta: meta.update(optimizer=None), "its meta entry's optimizer: None is not a table"),
])
def test_an_edited_meta_field_is_one_line_naming_it(
        run: Path, capsys: pytest.CaptureFixture[str], change: Callable[[dict[str, Any]], None],
        said: str) -> None:
    edit_meta(run, change)
    line = resume_refused(run, capsys)
    assert line.startswith(f"evo: error: {run / 'checkpoint.npz'}: damaged: ") and said in line


# ------------------------------------------------------------------ what a resume continues from


def test_a_resume_counts_test_episodes_from_the_checkpoint_not_the_torn_log(
        tested: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A log cut in its last row (a kill, a copy cut off) is completed from the checkpoint's
    mark; the count of test episodes goes on from generation 3's, not from the row before."""
    assert [row["test_episodes"] for row in rows(tested)] == ["1", "2", "3"]
    run = tmp_path / "run"
    shutil.copytree(tested, run)
    data = (run / "log.csv").read_bytes()
    (run / "log.csv").write_bytes(data[:-7])  # generation 3's row torn
    assert main(["resume", str(run), "--generations", "5", "--quiet"]) == 0
    capsys.readouterr()
    assert [row["test_episodes"] for row in rows(run)] == ["1", "2", "3", "4", "5"]


def test_a_forged_solved_run_with_tests_and_no_fitness_needs_the_episodes_of_a_pass(
        tested: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    shutil.copytree(tested, run)
    edit_last_row(run, solved="1", test_episodes="1")
    edit_meta(run, record(solved=1, test_episodes=1))
    line = resume_refused(run, capsys)
    assert "stop.solved is 1 after 1 champion test episode(s), but passing " \
           "stop.champion_tests takes 2" in line, line


def test_a_log_rewritten_with_other_line_ends_is_said_to_differ(
        run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Shorter than the checkpoint's mark but with every row: not "holds 3 rows, but the
    checkpoint has 3"."""
    (run / "log.csv").write_bytes((run / "log.csv").read_bytes().replace(b"\r\n", b"\n"))
    line = resume_refused(run, capsys)
    assert f"{run / 'log.csv'}: its first 3 generation row(s) differ from those the " \
           "checkpoint recorded" in line, line


# ------------------------------------------------------------------ the line a run ends with


def test_the_run_end_line_with_champion_tests_reads_without_nested_parentheses(
        tested: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    shutil.copytree(tested, run)
    assert main(["resume", str(run), "--generations", "4", "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "evo: not solved in 4 generation(s) (32 evaluations); 4 champion test episode(s) were "
        "played besides, not counted as evaluations")


# ------------------------------------------------------------------ plot temporaries a kill left

WRITER = """\
import pathlib, sys, time
from evo_core.results.files import write_atomic

def hold(handle):
    handle.write(b"half a png")
    handle.flush()
    pathlib.Path(sys.argv[2]).touch()
    time.sleep(60)

write_atomic(pathlib.Path(sys.argv[1]), hold)
"""


def aged(path: Path) -> None:
    """`path` last modified an hour ago: old enough that only its writer's lock can keep it."""
    old = time.time() - 3600
    os.utime(path, (old, old))


def test_a_plot_temporary_is_kept_while_its_writer_lives_and_removed_after_a_kill(
        run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A writer of fitness.png (as `evo plot` or training's last plot) is killed with -9 in the
    middle of its write; while it lived, another `evo plot` left its temporary alone."""
    ready = tmp_path / "ready"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(run / "fitness.png"),
                               str(ready)])
    try:
        wait_until(ready.exists, "the writer to start writing", bound=25)
        [temporary] = run.glob(".fitness.png.*.tmp")
        aged(temporary)
        assert main(["plot", str(run)]) == 0
        assert temporary.exists()  # its writer is alive: another plot must not take it away
        writer.kill()
        writer.wait(timeout=10)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    assert temporary.exists()  # nothing removes it at the kill
    assert main(["plot", str(run)]) == 0
    capsys.readouterr()
    assert not list(run.glob(".fitness.png.*.tmp"))
    assert (run / "fitness.png").read_bytes()[:4] == b"\x89PNG"


def test_a_resume_removes_an_abandoned_plot_temporary_but_not_a_fresh_one(
        run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    abandoned, fresh = run / ".fitness.png.abandoned.tmp", run / ".fitness.png.fresh.tmp"
    abandoned.write_bytes(b"half a png")
    aged(abandoned)
    fresh.write_bytes(b"its writer may not have locked it yet")
    assert main(["resume", str(run), "--generations", "4", "--quiet"]) == 0
    capsys.readouterr()
    assert not abandoned.exists() and fresh.exists()
