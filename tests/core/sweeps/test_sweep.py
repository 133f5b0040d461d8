"""`evo sweep`: points, validation, run folders, continuing after kills, Dask, summary, plot,
and design spaces migrated into sweep files."""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import ROOT, fitness_rows, npz, run_evo

from evo_core.api import Run
from evo_core.cli.main import main
from evo_core.errors import UserError
from evo_core.hooks.discovery import get_registry
from evo_core.results.log_file import LOG_COLUMNS
from evo_core.results.run_folder import RunFolder
from evo_core.sweeps.points import points_of
from evo_core.sweeps.statistics import estimate, t_quantile
from evo_core.sweeps.summary import SettingRuns, summary_rows
from evo_core.sweeps.sweep_file import SweepFile, sweep_from_data

BASE = {"environment": "CartPole-v1", "generations": 2,
        "brain": {"type": "ctrnn", "number_neurons": 3},
        "optimizer": {"type": "mu-lambda", "population_size": 6, "mu": 2},
        "episodes": {"max_steps": 30}}


def sweep_of(table: dict[str, Any], **base: Any) -> SweepFile:
    return sweep_from_data(dict(BASE, **base, sweep=table), Path("s.toml"), get_registry())


def write_sweep(path: Path, table: dict[str, Any], **base: Any) -> Path:
    path.write_text(json.dumps(dict(BASE, **base, sweep=table)))
    return path


# ----------------------------------------------------------------- points


def test_grid_times_samples_times_seeds_in_order() -> None:
    sweep = sweep_of({"seeds": 3, "grid": {"brain": {"number_neurons": [2, 4]}},
                      "sample": {"optimizer.mu": [2, 3, 4], "brain.delta_t": [0.1, 0.2]},
                      "samples": 2}, seed=5)
    points = points_of(sweep)
    assert len(points) == 2 * 2 * 3
    assert [p.seed for p in points[:3]] == [5, 6, 7]  # a count starts at the config's seed
    assert [dict(p.setting.values)["brain.number_neurons"] for p in points] == [2] * 6 + [4] * 6
    # the same two samples for each grid value, and they differ from each other
    samples = [tuple(p.setting.values[1:]) for p in points[::3]]
    assert samples[:2] == samples[2:] and samples[0] != samples[1]
    assert points[0].name == (f"number_neurons=2_mu={samples[0][0][1]}_delta_t="
                              f"{samples[0][1][1]}_seed=5")
    assert len({p.name for p in points}) == len(points)
    assert points[0].assignments()[-1] == ("seed", 5)


def test_samples_are_reproducible_for_a_sweep_seed_and_distinct() -> None:
    table = {"sample": {"a.x": list(range(4)), "a.y": list(range(3))}, "samples": 12}

    def drawn(seed: int) -> list[tuple[Any, ...]]:
        return [p.setting.values for p in points_of(sweep_of(dict(table, seed=seed)))]

    first = drawn(1)
    assert drawn(1) == first
    assert len(set(first)) == 12  # all 12 combinations, each once
    assert drawn(2) != first  # another order
    few = [p.setting.values for p in points_of(sweep_of(dict(table, samples=3, seed=1)))]
    assert few == first[:3]


def test_seeds_list_and_default() -> None:
    assert [p.seed for p in points_of(sweep_of({"seeds": [9, 2]}))] == [9, 2]
    only = points_of(sweep_of({}, seed=4))
    assert [(p.name, p.seed) for p in only] == [("seed=4", 4)]


def test_names_are_safe_unique_and_short() -> None:
    names = [p.name for p in points_of(sweep_of({"grid": {"x.y": ["a/b", "a-b", "c d"]}}))]
    assert all("/" not in name and " " not in name for name in names)
    assert len(set(names)) == 3 and names[2] == "y=c-d_seed=0"
    negative = points_of(sweep_of({"grid": {"brain.x": [1.5, -1.5]}}))
    assert [p.name for p in negative] == ["x=1.5_seed=0", "x=-1.5_seed=0"]
    grid = {f"brain.k{i}": [i * 1000001, 2] if i < 2 else [i * 1000001] for i in range(12)}
    long = points_of(sweep_of({"grid": grid}))
    assert all(len(p.name) < 120 for p in long) and len({p.name for p in long}) == 4
    assert long[0].name.startswith("setting-1-")
    assert [p.name for p in points_of(sweep_of({"grid": grid}))] == [p.name for p in long]
    both = points_of(sweep_of({"grid": {"brain.type": ["a"], "optimizer.type": ["b"]}}))
    assert both[0].name == "brain.type=a_optimizer.type=b_seed=0"


@pytest.mark.parametrize("table,expected", [
    ({"seed": 1, "parralel": 2}, "sweep.parralel: unknown key (did you mean 'parallel'?)"),
    ({"grid": {"seed": [1, 2]}}, "vary seeds with `seeds`"),
    ({"grid": {"brain": [1]}, "sample": {"brain.x": [1]}, "samples": 1}, "overlaps 'brain'"),
    ({"grid": {"brain.x": [1, 1]}}, "the value 1 appears twice"),
    ({"grid": {"brain.x": []}}, "sweep.grid.brain.x"),
    ({"sample": {"brain.x": [1, 2]}}, "sweep.samples: required"),
    ({"sample": {"brain.x": [1, 2]}, "samples": 3}, "only 2"),
    ({"parallel": 2, "address": "tcp://127.0.0.1:1"}, "sweep.parallel: not used with"),
    ({"seeds": [1, 1]}, "a seed appears twice"),
])
def test_sweep_table_mistakes_are_one_line(tmp_path: Path, capsys, table: dict[str, Any],
                                           expected: str) -> None:
    path = write_sweep(tmp_path / "s.json", table)
    assert main(["sweep", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and expected in err[0] and str(path) in err[0], err


def test_dry_run_lists_every_point(tmp_path: Path, capsys) -> None:
    path = write_sweep(tmp_path / "s.json", {"seeds": 2, "grid": {"brain.number_neurons": [2, 3]}})
    assert main(["sweep", str(path), "--dry-run", "--set", "sweep.seeds=[7]"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "number_neurons=2_seed=7: brain.number_neurons=2 seed=7",
        "number_neurons=3_seed=7: brain.number_neurons=3 seed=7"]
    assert not (tmp_path / "sweeps").exists() and not Path("sweeps", "s").exists()


def test_one_bad_point_is_one_line_naming_it_and_nothing_runs(tmp_path: Path, capsys) -> None:
    path = write_sweep(tmp_path / "s.json", {"grid": {"brain.number_neurons": [3, 0, 4]}})
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "(point number_neurons=0_seed=0)" in err[0] and "brain.number_neurons" in err[0]
    assert not out.exists()


# ----------------------------------------------------------------- statistics and summary


def test_t_quantiles_and_intervals_on_hand_values() -> None:
    assert t_quantile(0.975, 1) == pytest.approx(12.706204736, rel=1e-9)
    assert t_quantile(0.975, 4) == pytest.approx(2.776445105, rel=1e-9)
    assert t_quantile(0.975, 30) == pytest.approx(2.042272456, rel=1e-9)
    assert t_quantile(0.975, 10**6) == pytest.approx(1.959966, rel=1e-5)
    three = estimate([1.0, 2.0, 6.0])
    assert three is not None and three.mean == 3.0 and three.count == 3
    assert three.half_width == pytest.approx(4.302652730 * math.sqrt(7.0 / 3.0), rel=1e-9)
    single = estimate([5.0])
    assert single is not None and single.mean == 5.0 and single.half_width is None
    assert estimate([]) is None


def fake_run(run_dir: Path, bests: list[float], generations: int | None = None) -> Path:
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps({"generations": generations or len(bests)}))
    with open(run_dir / "log.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(LOG_COLUMNS)
        best_ever = -np.inf
        for generation, best in enumerate(bests, 1):
            best_ever = max(best_ever, best)
            writer.writerow([generation, generation * 4, best, best - 1, 0.5, best - 2,
                             best_ever, 10, 0.1])
    return run_dir


def test_summary_on_hand_values(tmp_path: Path) -> None:
    a = [fake_run(tmp_path / "a0", [1.0, 5.0, 4.0]), fake_run(tmp_path / "a1", [2.0, 3.0, 6.0]),
         fake_run(tmp_path / "a2", [0.0, 1.0, 2.0])]
    b = [fake_run(tmp_path / "b0", [7.0, 8.0, 9.0]),
         fake_run(tmp_path / "b1", [1.0], generations=3)]  # unfinished: left out
    settings = [SettingRuns("x=1", {"k.x": 1}, a), SettingRuns("x=2", {"k.x": 2}, b)]
    first, second = summary_rows(settings, ["k.x"], target=4.5)
    assert first["k.x"] == 1 and first["runs"] == 3
    assert first["final_best_mean"] == 4.0
    assert first["final_best_ci95"] == pytest.approx(4.302652730 * 2.0 / math.sqrt(3))
    assert first["best_ever_mean"] == pytest.approx(13 / 3)
    assert first["target_reached"] == 2 and first["generations_to_target_mean"] == 2.5
    assert first["generations_to_target_ci95"] == pytest.approx(12.706204736 * 0.5, rel=1e-9)
    assert second["runs"] == 1 and second["final_best_mean"] == 9.0
    assert second["final_best_ci95"] is None  # one run: no interval
    assert second["generations_to_target_mean"] == 1.0


# ----------------------------------------------------------------- running


def summary(folder: Path) -> list[dict[str, str]]:
    with open(folder / "summary.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def assert_same_runs(a: Path, b: Path, names: list[str]) -> None:
    for name in names:
        assert fitness_rows(a / name) == fitness_rows(b / name), name
        left, right = npz(a / name / "best.npz"), npz(b / name / "best.npz")
        assert left.keys() == right.keys() and all(np.array_equal(left[k], right[k])
                                                   for k in left), name
    assert summary(a) == summary(b)


def test_a_2x2_sweep_end_to_end(tmp_path: Path, capsys) -> None:
    path = write_sweep(tmp_path / "s.json", {"seeds": 2, "parallel": 2, "target": 10.0,
                                             "grid": {"brain.number_neurons": [2, 3]}})
    out = tmp_path / "sw"
    assert main(["sweep", str(path), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip().splitlines()[-1] == str(out)
    assert captured.err.count("finished") == 4
    names = ["number_neurons=2_seed=0", "number_neurons=2_seed=1", "number_neurons=3_seed=0",
             "number_neurons=3_seed=1"]
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == names
    rows = summary(out)
    assert [r["brain.number_neurons"] for r in rows] == ["2", "3"]
    assert [r["runs"] for r in rows] == ["2", "2"]
    assert set(rows[0]) >= {"final_best_mean", "final_best_ci95", "best_ever_mean",
                            "best_ever_ci95", "target_reached", "generations_to_target_mean"}
    for name in names:  # ordinary run folders
        run = Run.open(out / name)
        assert len(run.log) == 2 and run.config.seed == int(name[-1])
        assert (out / name / "fitness.png").is_file() and not (out / name / ".lock").exists()
    assert len(Run.open(out / names[0]).replay(episodes=1)) == 1
    # the same command again runs nothing and writes the same summary
    before = (out / "summary.csv").read_bytes()
    stamp = (out / names[0] / "log.csv").stat().st_mtime_ns
    assert main(["sweep", str(path), "--out", str(out), "--set", "sweep.parallel=1"]) == 0
    assert "finished" not in capsys.readouterr().err
    assert (out / "summary.csv").read_bytes() == before
    assert (out / names[0] / "log.csv").stat().st_mtime_ns == stamp
    # another sweep into the same folder is refused in one line, and nothing changes
    assert main(["sweep", str(path), "--out", str(out), "--set", "generations=3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "another sweep" in err[0] and "generations is 3" in err[0]
    # evo plot tells a sweep folder from a run folder
    (out / "fitness.png").unlink()
    assert main(["plot", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out / "fitness.png")
    assert (out / "fitness.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["plot", str(out / names[0]), "--out", str(tmp_path / "one.png")]) == 0
    # and a run folder of the sweep resumes like any other
    assert main(["resume", str(out / names[0]), "--generations", "3", "--quiet"]) == 0
    assert len(Run.open(out / names[0]).log) == 3


def test_an_unfinished_run_folder_without_config_is_made_again(tmp_path: Path, capsys) -> None:
    path = write_sweep(tmp_path / "s.json", {})
    out = tmp_path / "sw"
    assert main(["sweep", str(path), "--out", str(out)]) == 0
    reference = fitness_rows(out / "seed=0")
    shutil.rmtree(out / "seed=0")
    (out / "seed=0").mkdir()  # killed inside `evo train`'s folder creation
    (out / "seed=0" / ".lock").write_text("123\n")
    (out / "seed=0" / ".config.json.abc.tmp").write_text("{")
    assert main(["sweep", str(path), "--out", str(out)]) == 0
    assert fitness_rows(out / "seed=0") == reference
    shutil.rmtree(out / "seed=0")
    (out / "seed=0").mkdir()
    (out / "seed=0" / "notes.txt").write_text("mine")
    assert main(["sweep", str(path), "--out", str(out)]) == 2
    assert "notes.txt" in capsys.readouterr().err
    assert (out / "seed=0" / "notes.txt").exists()


KILL_SWEEP = {"seeds": 2, "parallel": 2, "grid": {"brain.number_neurons": [2, 4]}}
KILL_GENERATIONS = 8
KILL_BASE = {"generations": KILL_GENERATIONS, "episodes": {"max_steps": 200},
             "optimizer": {"type": "mu-lambda", "population_size": 12, "mu": 4}}
KILL_NAMES = ["number_neurons=2_seed=0", "number_neurons=2_seed=1", "number_neurons=4_seed=0",
              "number_neurons=4_seed=1"]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("uninterrupted")
    path = write_sweep(folder / "kill.json", KILL_SWEEP, **KILL_BASE)
    assert main(["sweep", str(path), "--out", str(folder / "sw")]) == 0
    return folder / "sw"


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rpartition(b")")[2].split()[0].decode()
    except OSError:
        return None


def _children(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    if int(handle.read().rpartition(b")")[2].split()[1]) == pid:
                        found.add(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return found


def _alive(pids: set[int]) -> set[int]:
    """Running pids (zombies are not reaped in this container: they count as gone)."""
    return {pid for pid in pids if _state(pid) not in (None, "Z")}


class Sweep:
    """`evo sweep` in its own session, so a signal to its group reaches nothing else."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "evo_core.cli.main", "sweep",
                                         *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, start_new_session=True)
        self.seen: set[int] = set()

    def wait_for_rows(self, out: Path, rows: int) -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.process.communicate()
            self.seen |= _children(self.process.pid)
            logs = [len(log.read_text().splitlines()) - 1 for log in out.glob("*/log.csv")]
            if sum(logs) >= rows:
                return
            time.sleep(0.02)
        raise AssertionError(f"the sweep did not reach {rows} rows")

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.communicate()
        for pid in _alive(self.seen):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def sweeps() -> Iterator[list[Sweep]]:
    started: list[Sweep] = []
    yield started
    for sweep in started:
        sweep.kill()


@pytest.mark.slow
def test_a_stopped_or_killed_sweep_continues_to_the_same_result(
        tmp_path: Path, uninterrupted: Path, sweeps: list[Sweep]) -> None:
    path = write_sweep(tmp_path / "kill.json", KILL_SWEEP, **KILL_BASE)
    out = tmp_path / "sw"
    # Ctrl-C (the terminal signals the whole group): every run stops resumably, no process left
    sweep = Sweep(str(path), "--out", str(out))
    sweeps.append(sweep)
    sweep.wait_for_rows(out, 3)
    os.killpg(sweep.process.pid, signal.SIGINT)
    _, err = sweep.process.communicate(timeout=120)
    assert sweep.process.returncode == 130, err
    last = err.strip().splitlines()[-1]
    assert f"continue with: evo sweep {path} --out {out}" in last and "Traceback" not in err
    assert sweep.seen and not _alive(sweep.seen)
    assert not (out / "summary.csv").exists()
    # kill -9 of the whole group, at a few points
    for rows, pause in ((8, 0.0), (14, 0.05), (20, 0.02)):
        sweep = Sweep(str(path), "--out", str(out))
        sweeps.append(sweep)
        sweep.wait_for_rows(out, rows)
        time.sleep(pause)
        sweep.kill()
        assert sweep.process.returncode == -signal.SIGKILL
    finished = subprocess.run([sys.executable, "-m", "evo_core.cli.main", "sweep", str(path),
                               "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr
    assert_same_runs(uninterrupted, out, KILL_NAMES)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[str]:
    """A scheduler and two single-threaded workers as separate processes on 127.0.0.1."""
    scheduler_file = tmp_path / "scheduler.json"
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path),
               DASK_TEMPORARY_DIRECTORY=str(tmp_path))
    scheduler = subprocess.Popen(
        [str(bin_dir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
         "--no-dashboard", "--scheduler-file", str(scheduler_file)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    processes = [scheduler]
    try:
        deadline = time.time() + 60
        while not scheduler_file.exists() and time.time() < deadline:
            time.sleep(0.2)
        address = json.loads(scheduler_file.read_text())["address"]
        processes.append(subprocess.Popen(
            [str(bin_dir / "dask"), "worker", address, "--nworkers", "2", "--nthreads", "1",
             "--no-dashboard", "--host", "127.0.0.1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
        from distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.mark.slow
def test_a_sweep_runs_on_an_external_dask_cluster(tmp_path: Path, cluster: str,
                                                  uninterrupted: Path, sweeps: list[Sweep],
                                                  capsys) -> None:
    path = write_sweep(tmp_path / "kill.json", KILL_SWEEP, **KILL_BASE)
    out = tmp_path / "sw"
    # the cluster is where runs execute, not part of what the sweep is: the folder is the same
    assert main(["sweep", str(path), "--out", str(out), "--set", f"sweep.address={cluster}",
                 "--set", "sweep.parallel=0"]) == 2
    assert "sweep.parallel" in capsys.readouterr().err
    table = dict(KILL_SWEEP, address=cluster)
    del table["parallel"]
    write_sweep(path, table, **KILL_BASE)
    # Ctrl-C: the tasks are cancelled, and each run stops after its generation, checkpointed
    sweep = Sweep(str(path), "--out", str(out))
    sweeps.append(sweep)
    sweep.wait_for_rows(out, 4)
    os.killpg(sweep.process.pid, signal.SIGINT)
    _, err = sweep.process.communicate(timeout=300)
    assert sweep.process.returncode == 130 and "continue with: evo sweep" in err, err
    unfinished = [name for name in KILL_NAMES
                  if len(fitness_rows(out / name) if (out / name / "log.csv").exists()
                         else []) < KILL_GENERATIONS]
    assert unfinished  # stopped, not run to the end
    for name in KILL_NAMES:  # and no worker holds a run folder any more
        if (out / name).exists():
            folder = RunFolder(out / name)
            folder.lock()
            folder.unlock()
    assert main(["sweep", str(path), "--out", str(out)]) == 0
    assert capsys.readouterr().err.count("finished") == 4
    assert_same_runs(uninterrupted, out, KILL_NAMES)


def test_an_address_without_a_scheduler_is_one_line(tmp_path: Path, capsys) -> None:
    path = write_sweep(tmp_path / "s.json", {"address": "tcp://127.0.0.1:9"})
    assert main(["sweep", str(path), "--out", str(tmp_path / "sw")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sweep.address" in err[0] and "tcp://127.0.0.1:9" in err[0]


# ----------------------------------------------------------------- design spaces


def test_a_design_space_migrates_to_a_sweep_file_that_dry_run_lists(tmp_path: Path,
                                                                    capsys) -> None:
    old = {
        "environment": "CartPole-v1", "random_seed": 0, "number_generations": 5,
        "optimizer": {"type": "MU_ES", "hof_size": 3, "checkpoint_frequency": 0,
                      "initial_gene_range": [0.5, 1, 2], "tournsize": [3, 5], "mu": [5, 10],
                      "extra_from_hof": [0, 1], "lambda_": [40], "mutpb": [0.9, 0.5],
                      "efficiency_weight": 0.0, "fix_seed_for_generation": [True, False]},
        "brain": {"type": "CTRNN", "number_neurons": [5, 7], "delta_t": [0.1, 0.5],
                  "neuron_activation": ["tanh", "relu", "sigmoidish"],
                  "optimize_state_boundaries": ["fixed", "global"], "w_mask": "logarithmic",
                  "w_mask_param": [8, 2]},
        "novelty": {"distance": ["NCD", "euclid"], "novelty_weight": [0, 1.0]},
        "episode_runner": {"reuse_env": True, "number_fitness_runs": 1,
                           "max_steps_per_run": [0, 100]},
    }
    source = tmp_path / "space.json"
    source.write_text(json.dumps(old))
    assert main(["migrate", str(source)]) == 0
    captured = capsys.readouterr()
    import tomllib

    new = tomllib.loads((tmp_path / "space.toml").read_text())
    sample = new["sweep"]["sample"]
    assert new["sweep"]["samples"] == 10 and new["sweep"]["seed"] == 0
    assert sample["optimizer.mu"] == [5, 10] and "optimizer.population_size" not in sample
    assert new["optimizer"]["population_size"] == 40  # a single alternative is a plain value
    assert sample["brain.neuron_activation"] == ["tanh", "relu"]  # evo has no "sigmoidish"
    assert "sigmoidish" in captured.err
    assert sample["episodes.seed_per"] == ["generation", "candidate"]  # renamed and converted
    assert "episodes.max_steps" not in sample and "max_steps_per_run" in captured.err
    assert "novelty.distance" in captured.err and "dropped" in captured.err
    assert main(["sweep", str(tmp_path / "space.toml"), "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 10 and len(set(lines)) == 10
    assert all("optimizer.mu=" in line and line.endswith("seed=0") for line in lines)


def test_whole_sections_as_alternatives_migrate_instead_of_crashing(tmp_path: Path,
                                                                    capsys) -> None:
    old = {"environment": "CartPole-v1", "random_seed": 3, "number_generations": 5,
           "optimizer": [{"type": "CMA_ES", "population_size": 10, "sigma": [0.5, 1.0],
                          "hof_size": 2, "checkpoint_frequency": 0, "mu": 0,
                          "efficiency_weight": 0.0, "fix_seed_for_generation": True},
                         {"type": "MU_ES", "hof_size": 2, "checkpoint_frequency": 0, "mu": 5,
                          "lambda_": 20, "mutpb": 0.8, "initial_gene_range": 2, "tournsize": 3,
                          "extra_from_hof": 0, "efficiency_weight": 0.0,
                          "fix_seed_for_generation": True}],
           "brain": {"type": "CTRNN", "number_neurons": 4},
           "episode_runner": {"reuse_env": True, "number_fitness_runs": 1}}
    source = tmp_path / "space.json"
    source.write_text(json.dumps(old))
    assert main(["migrate", str(source)]) == 0, capsys.readouterr().err
    import tomllib

    new = tomllib.loads((tmp_path / "space.toml").read_text())
    choices = new["sweep"]["sample"]["optimizer"]
    assert [c["type"] for c in choices] == ["cma-es", "cma-es", "mu-lambda"]
    assert [c.get("sigma") for c in choices[:2]] == [0.5, 1.0]
    assert new["sweep"]["samples"] == 3
    capsys.readouterr()
    assert main(["sweep", str(tmp_path / "space.toml"), "--dry-run"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3


def test_the_sweep_file_model_is_strict() -> None:
    with pytest.raises(UserError, match="did you mean 'samples'"):
        sweep_of({"sample": {"a.b": [1, 2]}, "sampels": 2})


def test_a_failing_run_does_not_stop_the_others(tmp_path: Path) -> None:
    path = write_sweep(tmp_path / "s.json", {"parallel": 2,
                                             "grid": {"brain.threshold": [100.0, -100.0]}},
                       brain={"type": "faulty"})
    out = tmp_path / "sw"
    result = run_evo("--plugin", "faulty_brain", "sweep", str(path), "--out", str(out),
                     env={"PYTHONPATH": str(ROOT / "tests")})
    assert result.returncode == 1, result.stderr
    assert "evo: error: run threshold=-100.0_seed=0: brain 'faulty'" in result.stderr
    assert "ValueError" in result.stderr and "1 of 2 runs failed" in result.stderr
    assert [(r["brain.threshold"], r["runs"]) for r in summary(out)] == [("100.0", "1"),
                                                                         ("-100.0", "0")]
    assert (out / "threshold=-100.0_seed=0" / "failed_genome.npz").is_file()


def test_a_mistake_that_stops_a_run_stops_the_sweep(tmp_path: Path, capsys) -> None:
    path = write_sweep(tmp_path / "s.json", {"grid": {"environment": ["NoSuchEnv-v0",
                                                                      "CartPole-v1"]}})
    out = tmp_path / "sw"
    assert main(["sweep", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "run environment=NoSuchEnv-v0_seed=0:" in err and "NoSuchEnv-v0" in err
    assert not (out / "environment=NoSuchEnv-v0_seed=0").exists()
    assert not (out / "environment=CartPole-v1_seed=0").exists()  # never started
