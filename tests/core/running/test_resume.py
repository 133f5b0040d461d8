"""Checkpoints and exact resume: kills at any point, interrupts, changed configs, bad files."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import evo_process, fitness_rows, npz, run_evo, wait_for_rows, wait_until

from evo_core.cli.main import main

MU_LAMBDA = {"type": "mu-lambda", "population_size": 24, "mu": 6}
#: the optimizers whose state is arrays without a signature, each resumed after kills below
ARRAY_STATE_OPTIMIZERS = [
    {"type": "openai-es", "population_size": 24, "sigma": 0.1, "sigma_decay": 0.99,
     "sigma_limit": 0.05},
    {"type": "pgpe", "population_size": 24},
    {"type": "snes", "population_size": 24, "initial_sigma": 0.5},
    {"type": "ars", "population_size": 24, "top_directions": 6, "learning_rate_decay": 0.99},
]


def write_config(path: Path, generations: int = 12, processing: dict[str, Any] | None = None,
                 optimizer: dict[str, Any] | None = None) -> Path:
    path.write_text(json.dumps({
        "environment": "CartPole-v1", "seed": 4, "generations": generations,
        "brain": {"type": "ctrnn", "number_neurons": 4, "w_mask": "random", "w_mask_param": 0.5},
        "optimizer": optimizer or MU_LAMBDA,
        "episodes": {"runs": 3, "max_steps": 100},
        "processing": processing or {"type": "sequential"}}))
    return path



def assert_same_run(a: Path, b: Path) -> None:
    assert fitness_rows(a) == fitness_rows(b)
    for name in ("best.npz", "hall_of_fame.npz"):
        left, right = npz(a / name), npz(b / name)
        assert left.keys() == right.keys()
        assert all(np.array_equal(left[k], right[k]) for k in left), name


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("reference")
    out = folder / "run"
    assert main(["train", str(write_config(folder / "c.json")), "--out", str(out),
                 "--quiet"]) == 0
    return out


def test_resume_with_more_generations_equals_one_run(tmp_path: Path, reference: Path,
                                                     capsys) -> None:
    config = write_config(tmp_path / "c.json")
    out = tmp_path / "run"
    assert main(["train", str(config), "--set", "generations=5", "--out", str(out),
                 "--quiet"]) == 0
    assert main(["resume", str(out), "--generations", "8", "--quiet"]) == 0
    assert main(["resume", str(out), "--generations", "12", "--quiet",
                 "--set", "processing.type=mp", "--set", "processing.workers=2"]) == 0
    assert_same_run(reference, out)
    provenance = json.loads((out / "config.json").read_text())["provenance"]
    assert [r["from_generation"] for r in provenance["resumed"]] == [5, 8]
    assert capsys.readouterr().out.strip().splitlines()[-1] == str(out)


def kill_and_resume(config: Path, out: Path, kills: tuple[tuple[int, float], ...]) -> None:
    """Train, killed (SIGKILL) before any generation finished, then resumed and killed after
    each `(generations, pause)` of `kills`, then resumed to the end."""
    process = evo_process("train", str(config), "--out", str(out), "--quiet")
    while not (out / "config.json").exists():  # killed before any generation finished
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    for kill_after, pause in kills:
        process = evo_process("resume", str(out), "--quiet")
        wait_for_rows(out, kill_after, process)
        time.sleep(pause)  # land at different points of a generation
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert process.returncode == -signal.SIGKILL
    finished = run_evo("resume", str(out), "--quiet")
    assert finished.returncode == 0, finished.stderr


@pytest.mark.slow
@pytest.mark.parametrize("processing", [{"type": "sequential"},
                                        {"type": "mp", "workers": 2, "start_method": "fork"}])
def test_sigkill_at_any_point_then_resume_equals_one_run(tmp_path: Path, reference: Path,
                                                         processing: dict[str, Any]) -> None:
    config = write_config(tmp_path / "c.json", processing=processing)
    out = tmp_path / "run"
    kill_and_resume(config, out, ((1, 0.0), (3, 0.01), (6, 0.03)))
    assert_same_run(reference, out)


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", ARRAY_STATE_OPTIMIZERS, ids=lambda table: table["type"])
def test_each_array_state_optimizer_resumes_exactly_after_sigkills(
        tmp_path: Path, optimizer: dict[str, Any]) -> None:
    config = write_config(tmp_path / "c.json", generations=8, optimizer=optimizer)
    reference = tmp_path / "reference"
    assert main(["train", str(config), "--out", str(reference), "--quiet"]) == 0
    out = tmp_path / "run"
    kill_and_resume(config, out, ((3, 0.01),))
    assert_same_run(reference, out)


@pytest.mark.slow
@pytest.mark.parametrize("signum,status,word", [(signal.SIGINT, 130, "interrupted (SIGINT)"),
                                                (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_interrupt_checkpoints_stops_workers_and_says_how_to_resume(
        tmp_path: Path, reference: Path, signum: int, status: int, word: str) -> None:
    config = write_config(tmp_path / "c.json", processing={"type": "mp", "workers": 2,
                                                           "start_method": "spawn"})
    out = tmp_path / "run"
    process = evo_process("train", str(config), "--out", str(out), "--quiet")
    wait_for_rows(out, 2, process)
    children = [int(pid) for pid in subprocess.run(
        ["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()]
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == status
    last = stderr.strip().splitlines()[-1]
    assert word in last and f"continue with: evo resume {out}" in last
    assert "Traceback" not in stderr
    meta = json.loads(npz(out / "checkpoint.npz")["meta"].tobytes())
    assert f"generations 1-{meta['generation']} are checkpointed" in last
    # the log may hold one row more (written just before the signal); a resume rewrites it
    assert meta["generation"] >= 2 and len(fitness_rows(out)) - meta["generation"] in (0, 1)
    assert children
    wait_until(lambda: not [pid for pid in children if alive(pid)], "the workers to end")
    assert run_evo("resume", str(out), "--quiet").returncode == 0
    assert_same_run(reference, out)


@pytest.mark.parametrize("setting", ["brain.number_neurons=5", "seed=3", "episodes.runs=4",
                                     "optimizer.population_size=8"])
def test_resume_refuses_other_changes(tmp_path: Path, reference: Path, capsys,
                                      setting: str) -> None:
    assert main(["resume", str(reference), "--set", setting, "--generations", "20"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    key = setting.partition("=")[0]
    assert len(err) == 1 and f"--set {key}: cannot change when resuming" in err[0]


def alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie nobody reaped (containers' init may not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def copy_run(source: Path, target: Path) -> Path:
    import shutil

    shutil.copytree(source, target)
    return target


@pytest.mark.parametrize("damage,message", [
    ("truncate", "checkpoint.npz: unreadable"),
    ("format", "checkpoint format 99"),
    ("other_run", "belongs to another run"),
])
def test_bad_checkpoints_are_clear_errors(tmp_path: Path, reference: Path, capsys, damage: str,
                                          message: str) -> None:
    run = copy_run(reference, tmp_path / "run")
    checkpoint = run / "checkpoint.npz"
    if damage == "truncate":
        checkpoint.write_bytes(checkpoint.read_bytes()[:200])
    else:
        arrays = npz(checkpoint)
        meta = json.loads(arrays["meta"].tobytes())
        meta["format" if damage == "format" else "run_id"] = 99 if damage == "format" else "x"
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        np.savez(checkpoint, **arrays)
    assert main(["resume", str(run), "--generations", "14"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and str(checkpoint) in err[0]


def test_missing_checkpoint_starts_again(tmp_path: Path, reference: Path, capsys) -> None:
    run = copy_run(reference, tmp_path / "run")
    (run / "checkpoint.npz").unlink()
    assert main(["resume", str(run), "--quiet"]) == 0
    assert "starts again from generation 1" in capsys.readouterr().err
    assert_same_run(reference, run)


def test_finished_run_needs_more_generations(reference: Path, capsys) -> None:
    assert main(["resume", str(reference)]) == 2
    assert "already has 12 generation(s); pass --generations N" in capsys.readouterr().err
