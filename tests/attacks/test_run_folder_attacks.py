"""Attacks on a run folder: kills mid-rewrite, damaged logs, planted links, edited configs,
crafted pickles and two processes in one folder. Each test performs the attack and asserts the
promise: nothing lost, nothing written through a link, nothing run, one line and exit 2."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import fitness_rows, npz, run_evo
from shared_configs import CTRNN_CMA

from evo_core.cli.main import main
from evo_core.results.log_file import read_log
from evo_core.results.run_folder import RunFolder

CONFIG = {
    "environment": "CartPole-v1", "seed": 4, "generations": 8,
    "brain": {"type": "ctrnn", "number_neurons": 3},
    "optimizer": {"type": "mu-lambda", "population_size": 10, "mu": 4},
    "episodes": {"runs": 2, "max_steps": 60},
    "processing": {"type": "sequential"}}


def write_config(path: Path, **changes: object) -> Path:
    path.write_text(json.dumps({**CONFIG, **changes}))
    return path



def checkpoint_meta(run: Path) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads(npz(run / "checkpoint.npz")["meta"].tobytes())
    return meta


def train(folder: Path, generations: int, **changes: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / "run"
    config = write_config(folder / "c.json", **changes)
    assert main(["train", str(config), "--set", f"generations={generations}", "--out", str(out),
                 "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train(tmp_path_factory.mktemp("reference"), 8)


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ------------------------------------------------------------------ 1: the log survives any kill

#: Runs `evo ARGS` with a hook that SIGKILLs the process at one point of the log's handling.
KILLER = """
import os, signal, sys
from evo_core.results import log_file

def die():
    os.kill(os.getpid(), signal.SIGKILL)

point = sys.argv[1]
if point == "rewriting":  # the kept rows half copied into the new file, not yet renamed
    made = log_file.new_exclusive_file
    def new_exclusive_file(path):
        descriptor, name = made(path)
        os.write(descriptor, b"generation,evaluations,be")
        die()
    log_file.new_exclusive_file = new_exclusive_file
elif point == "renamed":  # the new log is in place, no row added yet
    def write(self, row):
        die()
    log_file.LogFile.write = write
elif point.startswith("mid-row"):  # half of a row written (the next, or generation N)
    whole = log_file.LogFile.write
    def write(self, row):
        if ":" in point and row["generation"] != int(point.partition(":")[2]):
            return whole(self, row)
        line = log_file._line({k: repr(v) if isinstance(v, float) else v
                               for k, v in row.items()}, list(row))
        self._handle.write(line[:len(line) // 2])
        self._handle.flush()
        die()
    log_file.LogFile.write = write
from evo_core.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def killed_resume(run: Path, point: str, generations: int) -> None:
    process = subprocess.run([sys.executable, "-c", KILLER, point, "resume", str(run),
                              "--generations", str(generations), "--quiet"],
                             capture_output=True, text=True, timeout=300)
    assert process.returncode == -signal.SIGKILL, process.stderr


def test_a_kill_at_any_point_of_the_log_rewrite_loses_no_row(tmp_path: Path,
                                                             reference: Path) -> None:
    run = train(tmp_path, 4)
    whole = (run / "log.csv").read_bytes()
    for point in ("rewriting", "renamed", "mid-row"):
        killed_resume(run, point, 8)
        assert checkpoint_meta(run)["generation"] == 4
        log = (run / "log.csv").read_bytes()
        assert log.startswith(whole), point  # every checkpointed row whole, in place
        if point == "mid-row":
            assert log != whole and not log.endswith(b"\n")  # the half row, and only that
            assert [r["generation"] for r in read_log(run / "log.csv")] == ["1", "2", "3", "4"]
            assert main(["plot", str(run)]) == 0  # readers skip the half row too
    assert main(["resume", str(run), "--generations", "8", "--quiet"]) == 0
    assert fitness_rows(run) == fitness_rows(reference)
    assert (run / "log.csv").read_bytes().count(b"\n") == 9
    assert not [p.name for p in run.iterdir() if p.name.endswith(".tmp")]  # none left behind


def test_rows_after_the_checkpoint_and_a_half_row_are_written_again(tmp_path: Path,
                                                                    reference: Path) -> None:
    run = train(tmp_path, 4)
    # checkpoints every 3: killed in the middle of row 8, with rows 7 and 8 past the checkpoint
    process = subprocess.run([sys.executable, "-c", KILLER, "mid-row:8", "resume", str(run),
                              "--generations", "8", "--quiet", "--set", "checkpoint_every=3"],
                             capture_output=True, text=True, timeout=300)
    assert process.returncode == -signal.SIGKILL, process.stderr
    assert checkpoint_meta(run)["generation"] == 6
    assert [r[0] for r in fitness_rows(run)][-2:] == ["7", "8"]  # whole 7, half 8
    assert main(["resume", str(run), "--generations", "8", "--quiet"]) == 0
    assert fitness_rows(run) == fitness_rows(reference)


@pytest.mark.parametrize("damage", ["cut", "torn-and-edited", "edited", "missing"])
def test_a_log_shorter_than_its_checkpoint_is_refused(tmp_path: Path, reference: Path, capsys,
                                                      damage: str) -> None:
    """Rows the checkpoint cannot rebuild (more than those since the previous checkpoint), or
    any row whose content differs, are refused."""
    run = train(tmp_path, 8)
    log = run / "log.csv"
    data = log.read_bytes()
    if damage == "cut":
        log.write_bytes(b"".join(data.splitlines(keepends=True)[:6]))
    elif damage == "torn-and-edited":  # the last row cut, and what is left of it changed
        torn = bytearray(data[:-10])
        start = data.rstrip(b"\n").rfind(b"\n") + 1
        torn[start + 2] = ord("9") if torn[start + 2] != ord("9") else ord("8")
        log.write_bytes(bytes(torn))
    elif damage == "edited":
        log.write_bytes(data.replace(b"\n2,", b"\n3,", 1))
    else:
        log.unlink()
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    assert main(["resume", str(run), "--generations", "10", "--quiet"]) == 2
    line = one_line(capsys.readouterr().err)
    assert str(log) in line and "checkpoint" in line
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before  # nothing written


@pytest.mark.parametrize("damage", ["torn-mid-row", "last-row-missing", "torn-at-first-byte"])
@pytest.mark.parametrize("every", [1, 3])
def test_a_log_torn_after_its_checkpoint_resumes_to_the_reference(
        tmp_path: Path, reference: Path, damage: str, every: int) -> None:
    """A crash that cuts log.csv after the checkpoint that counts its rows (storage that lied
    about fsync, a copy cut off) loses no generation: the checkpoint rebuilds the rows it kept
    since the previous one, and the resumed run's log is the uninterrupted run's."""
    run = train(tmp_path, 6, checkpoint_every=every)
    log = run / "log.csv"
    data = log.read_bytes()
    last_row = data.rstrip(b"\n").rfind(b"\n") + 1
    cut = {"torn-mid-row": len(data) - 10, "last-row-missing": last_row,
           "torn-at-first-byte": last_row + 1}[damage]
    log.write_bytes(data[:cut])
    assert checkpoint_meta(run)["log"]["tail"].encode() == data[last_row:] or every != 1
    assert main(["resume", str(run), "--generations", "8", "--quiet"]) == 0
    assert fitness_rows(run) == fitness_rows(reference)
    assert read_log(log)[5]["generation"] == "6"


def test_rows_reach_the_disk_before_the_checkpoint_that_counts_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ordering the log's docstring promises: log.csv is fsynced after its last row and
    before every checkpoint.npz is renamed into place."""
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor: int) -> None:
        if os.readlink(f"/proc/self/fd/{descriptor}").endswith("log.csv"):
            events.append("log fsync")
        real_fsync(descriptor)

    def replace(source: Any, target: Any) -> None:
        real_replace(source, target)
        if Path(target).name == "checkpoint.npz":
            events.append("checkpoint")

    monkeypatch.setattr("evo_core.results.log_file.os.fsync", fsync)
    monkeypatch.setattr("evo_core.results.files.os.replace", replace)
    train(tmp_path, 3)
    assert events == ["log fsync", "checkpoint"] * 3 + ["log fsync"], events


# ------------------------------------------------------------------ 2: planted symbolic links

OLD_TEMPORARIES = [".fitness.tmp.png", ".log.csv.tmp", ".best.npz.tmp", ".hall_of_fame.npz.tmp",
                   ".checkpoint.npz.tmp", ".config.json.tmp"]


def plant(link: Path, victim: Path) -> None:
    link.symlink_to(victim)


def test_links_at_temporary_names_are_never_written_through(tmp_path: Path) -> None:
    run = train(tmp_path, 2)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    for name in OLD_TEMPORARIES:
        plant(run / name, victim)
    assert run_evo("plot", str(run)).returncode == 0
    result = run_evo("resume", str(run), "--generations", "3", "--quiet")
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "precious"
    assert all((run / name).is_symlink() for name in OLD_TEMPORARIES)
    assert not [p for p in run.iterdir() if p.name.endswith(".tmp")
                and p.name not in OLD_TEMPORARIES]


@pytest.mark.parametrize("name", ["fitness.png", "log.csv", "best.npz", "hall_of_fame.npz",
                                  "checkpoint.npz", "config.json"])
def test_a_link_at_a_final_name_is_refused(tmp_path: Path, capsys, name: str) -> None:
    """A link evo did not make is refused in one line, before anything is written."""
    run = train(tmp_path, 2)
    victim = tmp_path / "victim"
    (run / name).rename(victim)
    plant(run / name, victim)
    content = victim.read_bytes()
    before = sorted(p.name for p in run.iterdir())
    command = ["plot", str(run)] if name == "fitness.png" else \
        ["resume", str(run), "--generations", "3", "--quiet"]
    assert main(command) == 2
    line = one_line(capsys.readouterr().err)
    assert str(run / name) in line and "symbolic link" in line
    assert victim.read_bytes() == content
    assert sorted(p.name for p in run.iterdir()) == before


def test_replay_gif_and_migrate_out_refuse_links(tmp_path: Path, capsys) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    old = tmp_path / "old.json"
    old.write_text(json.dumps(CTRNN_CMA))
    link = tmp_path / "new.toml"
    plant(link, victim)
    assert main(["migrate", str(old), "--out", str(link), "--force"]) == 2
    assert "symbolic link" in one_line(capsys.readouterr().err)
    run = train(tmp_path, 1)
    gif = tmp_path / "a.gif"
    plant(gif, victim)
    assert main(["replay", str(run), "--episodes", "1", "--render", str(gif)]) == 2
    assert "symbolic link" in capsys.readouterr().err.strip().splitlines()[-1]
    assert victim.read_text() == "precious"


# ------------------------------------------------------------------ 3: an edited config.json

@pytest.mark.parametrize("field,value", [("seed", 5), ("episodes.runs", 3),
                                         ("optimizer.population_size", 12),
                                         ("brain.number_neurons", 4)])
def test_resume_refuses_a_config_json_edited_into_another_experiment(
        tmp_path: Path, capsys, field: str, value: int) -> None:
    run = train(tmp_path, 2)
    config = json.loads((run / "config.json").read_text())
    *parents, key = field.split(".")
    table = config
    for parent in parents:
        table = table[parent]
    table[key] = value
    (run / "config.json").write_text(json.dumps(config))
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    assert main(["resume", str(run), "--generations", "3", "--quiet"]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"config.json: {field} is {value} but the run was trained with" in line
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before


def test_allowed_changes_in_config_json_resume(tmp_path: Path) -> None:
    run = train(tmp_path, 2)
    config = json.loads((run / "config.json").read_text())
    config["episodes"]["max_steps"] = 80
    config["checkpoint_every"] = 2
    (run / "config.json").write_text(json.dumps(config))
    assert main(["resume", str(run), "--generations", "3", "--quiet"]) == 0


# ------------------------------------------------------------------ 4: crafted pickles

class _Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


def cma_run(tmp_path: Path, generations: int = 2) -> Path:
    return train(tmp_path, generations, optimizer={"type": "cma-es", "population_size": 8})


def replace_optimizer_state(run: Path, data: bytes, signature: str | None) -> None:
    arrays = npz(run / "checkpoint.npz")
    arrays["optimizer.pickle"] = np.frombuffer(data, dtype=np.uint8)
    meta = json.loads(arrays["meta"].tobytes())
    meta["optimizer"] = {} if signature is None else {"signature": signature}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    (run / "checkpoint.npz").unlink()
    np.savez(run / "checkpoint.npz", **arrays)


@pytest.mark.parametrize("signature", ["none", "copied", "attackers_secret"])
def test_a_crafted_optimizer_pickle_is_refused_and_never_run(tmp_path: Path, signature: str,
                                                             monkeypatch) -> None:
    run = cma_run(tmp_path)
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Payload(marker))
    if signature == "none":
        replace_optimizer_state(run, payload, None)
    elif signature == "copied":  # a genuine signature, of other bytes
        replace_optimizer_state(run, payload, checkpoint_meta(run)["optimizer"]["signature"])
    else:  # signed properly, but with the attacker's own secret
        from evo_core.results import signing

        attacker = tmp_path / "attacker"
        monkeypatch.setenv("EVO_SECRET_DIR", str(attacker))
        forged = signing.sign(payload, "evo cma-es state v1")
        monkeypatch.undo()
        replace_optimizer_state(run, payload, forged)
    result = run_evo("resume", str(run), "--generations", "3", "--quiet")
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert str(run / "checkpoint.npz") in line and "not signed with your evo secret" in line
    assert not marker.exists()


def test_cma_es_resume_is_exact(tmp_path: Path) -> None:
    whole = cma_run(tmp_path / "whole", 4)
    part = cma_run(tmp_path / "part", 2)
    assert run_evo("resume", str(part), "--generations", "4", "--quiet").returncode == 0
    assert fitness_rows(part) == fitness_rows(whole)
    assert np.array_equal(npz(part / "best.npz")["genome"], npz(whole / "best.npz")["genome"])


def test_no_checkpoint_file_holds_a_pickle_it_would_load(reference: Path) -> None:
    for name in ("checkpoint.npz", "best.npz", "hall_of_fame.npz"):
        npz(reference / name)  # raises on any object array


# ------------------------------------------------------------------ 11: one process per folder

def test_a_second_process_in_a_training_folder_is_refused(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.json", generations=100000)
    run = tmp_path / "run"
    first = subprocess.Popen([sys.executable, "-m", "evo_core.cli.main", "train", str(config),
                              "--out", str(run), "--quiet"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while not (run / "checkpoint.npz").exists():
            assert first.poll() is None, first.communicate()[1]
            time.sleep(0.01)
        second = run_evo("resume", str(run), "--generations", "200000", "--quiet")
        assert second.returncode == 2
        line = one_line(second.stderr)
        assert f"{run}: another evo process (pid {first.pid}) is training in this folder" in line
        again = run_evo("train", str(config), "--out", str(run), "--quiet")
        assert again.returncode == 2 and str(run) in one_line(again.stderr)
    finally:
        first.kill()
        first.communicate()
    folder = RunFolder(run)  # a kill releases the lock
    folder.lock()
    folder.unlock()


def test_a_secret_others_can_read_is_refused_before_the_run_folder_is_made(tmp_path: Path
                                                                           ) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "secret").write_bytes(os.urandom(32))
    (secrets / "secret").chmod(0o644)
    config = write_config(tmp_path / "c.json",
                          optimizer={"type": "cma-es", "population_size": 8})
    result = run_evo("train", str(config), "--out", str(tmp_path / "run"), "--quiet",
                     env={"EVO_SECRET_DIR": str(secrets)})
    assert result.returncode == 2
    assert "only you can read (chmod 600)" in one_line(result.stderr)
    assert not (tmp_path / "run").exists()
