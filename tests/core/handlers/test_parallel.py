"""mp and dask handlers: identical results, templates shipped once, faults survived."""

from __future__ import annotations

import collections
import csv
import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import FITNESS, ROOT, run_evo, wait_until

from brain_ffnn import FFNNConfig, FFNNTemplate
from evo_core.cli.main import main
from evo_core.config.schema import EpisodesConfig
from evo_core.contract.protocols import IHandler
from evo_core.evaluation.episodes import RunnerSpec
from evo_core.handlers.dask import DaskConfig, DaskHandler
from evo_core.handlers.mp import MPConfig, MPHandler
from evo_core.handlers.sequential import SequentialConfig, SequentialHandler


def train(tmp_path: Path, name: str, processing: dict[str, Any],
          generations: int = 4, normalised: bool = False) -> list[list[str]]:
    config = tmp_path / f"{name}.json"
    episodes: dict[str, Any] = {"runs": 2, "seed_per": "candidate"}
    if normalised:
        episodes.update(observation_normalization="running", observation_clip=5.0)
    config.write_text(json.dumps({
        "environment": "CartPole-v1", "seed": 11, "generations": generations,
        "brain": {"type": "ctrnn", "number_neurons": 5, "w_mask": "random", "w_mask_param": 0.6},
        "optimizer": {"type": "cma-es", "population_size": 10},
        "episodes": episodes, "processing": processing}))
    out = tmp_path / name
    assert main(["train", str(config), "--out", str(out), "--quiet"]) == 0
    with open(out / "log.csv", newline="") as handle:
        return [[row[c] for c in FITNESS] for row in csv.DictReader(handle)]


@pytest.mark.slow
def test_all_handlers_give_identical_logs(tmp_path: Path, capsys) -> None:
    reference = train(tmp_path, "sequential", {"type": "sequential"})
    assert train(tmp_path, "mp1", {"type": "mp", "workers": 1, "start_method": "spawn"}) \
        == reference
    assert train(tmp_path, "mp2", {"type": "mp", "workers": 2, "start_method": "forkserver"}) \
        == reference
    assert train(tmp_path, "mp3", {"type": "mp", "workers": 3, "start_method": "fork",
                                   "chunks_per_worker": 3}) == reference
    assert train(tmp_path, "dask", {"type": "dask", "workers": 2}) == reference
    # observation_normalization = "running": each generation's normaliser pools the workers'
    # statistics, whatever the chunking
    normalised = train(tmp_path, "sequential-n", {"type": "sequential"}, normalised=True)
    assert normalised != reference
    assert train(tmp_path, "mp3-n", {"type": "mp", "workers": 3, "start_method": "fork",
                                     "chunks_per_worker": 3}, normalised=True) == normalised
    assert train(tmp_path, "dask-n", {"type": "dask", "workers": 2}, normalised=True) \
        == normalised


# ----------------------------------------------------------------- handler level


def pendulum_template(hidden: int) -> FFNNTemplate:
    env = gym.make("Pendulum-v1")
    return FFNNTemplate(FFNNConfig(hidden_layers=[hidden]), env.observation_space,
                        env.action_space, np.random.default_rng(0))


class LoadRecordingTemplate(FFNNTemplate):
    """A Pendulum FFNN template that appends its process id to `record` whenever it is unpickled,
    that is, whenever a worker takes it in: the file counts template loads per worker process."""

    def __init__(self, record: Path, hidden: int) -> None:
        self.record = str(record)
        env = gym.make("Pendulum-v1")
        super().__init__(FFNNConfig(hidden_layers=[hidden]), env.observation_space,
                         env.action_space, np.random.default_rng(0))

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        with open(state["record"], "a") as handle:
            handle.write(f"{os.getpid()}\n")


SPEC = RunnerSpec("Pendulum-v1", EpisodesConfig(runs=2))


def population(template, count: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(count, template.genome_size)), rng.integers(0, 2**31, count)


def fitness(results) -> list[float]:
    return [r.fitness for r in results]


def check_template_swaps(handler: IHandler, record: Path,
                         between: Callable[[], object] = lambda: None) -> None:
    """Swap templates a, b, a over five generations: each worker process loads each at most once
    per swap, not once per task (every generation has several tasks per worker), whatever
    `between` (called after each generation) does to the workers' memory."""
    a, b = LoadRecordingTemplate(record, 3), LoadRecordingTemplate(record, 5)
    sequential = SequentialHandler(SequentialConfig(), SPEC)
    try:
        for template, seed in ((a, 0), (a, 1), (b, 2), (b, 3), (a, 4)):
            genomes, seeds = population(template, 8, seed)
            assert fitness(handler.evaluate(template, genomes, seeds)) == \
                fitness(sequential.evaluate(template, genomes, seeds))
            between()
    finally:
        sequential.close()
    workers = [int(pid) for pid in record.read_text().split() if int(pid) != os.getpid()]
    loads = collections.Counter(workers)
    assert loads and all(1 <= count <= 3 for count in loads.values())  # a, b, then a again


def test_mp_template_swaps_reach_each_worker_once(tmp_path: Path) -> None:
    handler = MPHandler(MPConfig(workers=2, start_method="spawn"), SPEC)
    try:
        check_template_swaps(handler, tmp_path / "loads.txt")
    finally:
        handler.close()


class MakeRecordingTemplate(FFNNTemplate):
    """A Pendulum FFNN template that appends its process id to `record` whenever it makes a
    brain: the file says which processes are evaluating, as they do it."""

    def __init__(self, record: Path, hidden: int) -> None:
        self.record = str(record)
        env = gym.make("Pendulum-v1")
        super().__init__(FFNNConfig(hidden_layers=[hidden]), env.observation_space,
                         env.action_space, np.random.default_rng(0))

    def make(self, genome: np.ndarray) -> Any:
        with open(self.record, "a") as handle:
            handle.write(f"{os.getpid()}\n")
        return super().make(genome)


def kill_a_worker_during(evaluate, record: Path, pids):
    """Run `evaluate` in a thread and SIGKILL the first worker (of `pids()`) that `record`
    shows evaluating a genome of it."""
    record.unlink(missing_ok=True)
    workers = set(pids())
    outcome: dict[str, Any] = {}

    def target() -> None:
        outcome["results"] = evaluate()

    def evaluating() -> list[int]:
        written = record.read_text().split() if record.exists() else []
        return [int(pid) for pid in written if int(pid) in workers]

    thread = threading.Thread(target=target)
    thread.start()
    wait_until(evaluating, "a worker to evaluate")
    os.kill(evaluating()[0], signal.SIGKILL)
    thread.join(timeout=120)
    assert not thread.is_alive()
    return outcome["results"]


@pytest.mark.slow
def test_mp_survives_a_killed_worker(tmp_path: Path) -> None:
    record = tmp_path / "making.txt"
    template = MakeRecordingTemplate(record, 8)
    genomes, seeds = population(template, 40)
    spec = RunnerSpec("Pendulum-v1", EpisodesConfig(runs=6))
    sequential = SequentialHandler(SequentialConfig(), spec)
    expected = fitness(sequential.evaluate(template, genomes, seeds))
    handler = MPHandler(MPConfig(workers=2, start_method="fork", chunks_per_worker=4), spec)
    try:
        handler.evaluate(template, genomes[:2], seeds[:2])  # pool up and warm
        with pytest.warns(RuntimeWarning, match="a worker process died"):
            results = kill_a_worker_during(
                lambda: handler.evaluate(template, genomes, seeds), record,
                lambda: [p.pid for p in multiprocessing.active_children()
                         if "ForkProcess" in p.name or "Process" in p.name])
        assert fitness(results) == expected
        assert fitness(handler.evaluate(template, genomes[:4], seeds[:4])) == expected[:4]
    finally:
        handler.close()
        sequential.close()


# ----------------------------------------------------------------- a real cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A scheduler and two single-threaded workers as separate processes on 127.0.0.1."""
    folder = tmp_path_factory.mktemp("cluster")
    scheduler_file = folder / "scheduler.json"
    bin_dir = Path(sys.executable).parent
    # the scheduler's and workers' scratch space goes to the test's folder, not /tmp
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path),
               DASK_TEMPORARY_DIRECTORY=str(folder))
    scheduler = subprocess.Popen(
        [str(bin_dir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
         "--no-dashboard", "--scheduler-file", str(scheduler_file)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.time() + 60
    while not scheduler_file.exists() and time.time() < deadline:
        time.sleep(0.2)
    address = json.loads(scheduler_file.read_text())["address"]
    worker = subprocess.Popen(
        [str(bin_dir / "dask"), "worker", address, "--nworkers", "2", "--nthreads", "1",
         "--no-dashboard", "--host", "127.0.0.1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    from distributed import Client

    with Client(address, timeout=30) as client:
        client.wait_for_workers(2, timeout=60)
    yield address
    for process in (worker, scheduler):
        process.terminate()
    for process in (worker, scheduler):
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.mark.slow
def test_external_cluster_identical_and_template_once(cluster: str, tmp_path: Path,
                                                      capsys) -> None:
    reference = train(tmp_path, "sequential", {"type": "sequential"}, generations=3)
    assert train(tmp_path, "remote", {"type": "dask", "address": cluster}, generations=3) \
        == reference
    handler = DaskHandler(DaskConfig(address=cluster), SPEC)
    try:
        # Dask's active memory manager drops all but one copy of data no task waits for, every
        # 2 s: between generations longer than that (a loaded machine, any real run), a handler
        # that left the template to Dask's memory sent it again to every other worker
        check_template_swaps(handler, tmp_path / "loads.txt", handler.client.amm.run_once)
    finally:
        handler.close()


@pytest.mark.slow
def test_external_cluster_survives_a_killed_worker(cluster: str, tmp_path: Path) -> None:
    record = tmp_path / "making.txt"
    template = MakeRecordingTemplate(record, 8)
    genomes, seeds = population(template, 40, seed=5)
    spec = RunnerSpec("Pendulum-v1", EpisodesConfig(runs=6))
    sequential = SequentialHandler(SequentialConfig(), spec)
    expected = fitness(sequential.evaluate(template, genomes, seeds))
    handler = DaskHandler(DaskConfig(address=cluster, chunks_per_worker=4), spec)
    try:
        handler.evaluate(template, genomes[:2], seeds[:2])
        handed = set(handler.client.run(os.getpid).values())
        with pytest.warns(RuntimeWarning, match="Dask worker"):
            results = kill_a_worker_during(
                lambda: handler.evaluate(template, genomes, seeds), record,
                lambda: list(handler.client.run(os.getpid).values()))
        assert fitness(results) == expected
        handler.client.wait_for_workers(2, timeout=60)  # the nanny restarts it
        # the restarted worker joined after the template was handed over: it got it when its
        # first chunk came back without results, and evaluated
        assert fitness(handler.evaluate(template, genomes, seeds)) == expected
        assert set(int(pid) for pid in record.read_text().split()) - handed
    finally:
        handler.close()
        sequential.close()


def test_unreachable_scheduler_is_a_clear_error(tmp_path: Path, capsys) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({
        "environment": "CartPole-v1", "generations": 1, "brain": {"type": "ctrnn"},
        "optimizer": {"type": "cma-es", "population_size": 4},
        "processing": {"type": "dask", "address": "tcp://127.0.0.1:9", "connect_timeout": 1.5}}))
    assert main(["train", str(config), "--quiet", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "processing.address" in err[0] and "tcp://127.0.0.1:9" in err[0]
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("processing", [{"type": "sequential"},
                                        {"type": "mp", "workers": 2, "start_method": "spawn"}])
def test_brain_exception_stops_the_run_cleanly(tmp_path: Path, processing: dict[str, Any]) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({
        "environment": "CartPole-v1", "seed": 2, "generations": 10,
        "brain": {"type": "faulty", "threshold": 0.45},
        "optimizer": {"type": "cma-es", "population_size": 6, "sigma": 0.3},
        "processing": processing}))
    out = tmp_path / "run"
    result = run_evo("--plugin", "faulty_brain", "train", str(config), "--quiet", "--out",
                     str(out), env={"PYTHONPATH": str(ROOT / "tests")})
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    match = re.search(r"brain 'faulty' \(local module faulty_brain\) raised ValueError: genome "
                      r"too large .* on generation (\d+), candidate (\d+)", last)
    assert match, last
    generation, candidate = int(match[1]), int(match[2])
    kept = "generation 1 is kept" if generation == 2 else f"generations 1-{generation - 1} are kept"
    assert generation >= 2 and kept in last
    assert "Traceback" in result.stderr and "faulty_brain.py" in result.stderr
    with np.load(out / "failed_genome.npz", allow_pickle=False) as failed:
        assert failed["genome"][0] > 0.45 and int(failed["candidate"]) == candidate
    rows = (out / "log.csv").read_text().splitlines()
    assert len(rows) == generation  # header + the generations before the failure
    assert (out / "best.npz").exists() and (out / "checkpoint.npz").exists()


@pytest.mark.slow
@pytest.mark.parametrize("processing", [{"type": "mp", "workers": 2, "start_method": "spawn"},
                                        {"type": "dask", "workers": 2}])
def test_local_plugin_module_reaches_workers(tmp_path: Path, processing: dict[str, Any]) -> None:
    from conftest import brain_plugin_source

    (tmp_path / "my_brains.py").write_text(
        __import__("textwrap").dedent(brain_plugin_source("mine")))
    (tmp_path / "c.json").write_text(json.dumps({
        "environment": "CartPole-v1", "generations": 2, "brain": {"type": "mine"},
        "optimizer": {"type": "cma-es", "population_size": 6}, "processing": processing}))
    env = {"PYTHONPATH": ""}  # found because it sits in the working directory
    result = subprocess.run([str(Path(sys.executable).parent / "evo"), "--plugin", "my_brains",
                             "train", "c.json", "--quiet", "--out", "run"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, **env))
    assert result.returncode == 0, result.stderr
    assert len((tmp_path / "run" / "log.csv").read_text().splitlines()) == 3


@pytest.mark.slow
def test_workers_killed_by_a_brain_stop_the_run_cleanly(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({
        "environment": "CartPole-v1", "seed": 2, "generations": 3,
        "brain": {"type": "faulty", "threshold": -100.0, "kill_process": True},
        "optimizer": {"type": "cma-es", "population_size": 4},
        "processing": {"type": "mp", "workers": 2, "start_method": "fork"}}))
    result = run_evo("--plugin", "faulty_brain", "train", str(config), "--quiet", "--out",
                     str(tmp_path / "run"), env={"PYTHONPATH": str(ROOT / "tests")})
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("evo: error: generation 1: worker processes died 4 times")
    assert last.endswith(f"no generation finished in {tmp_path / 'run'}")
    assert all(line.startswith(("evo: warning: a worker process died", "evo: error: "))
               for line in result.stderr.strip().splitlines())
    assert "Traceback" not in result.stderr
    assert (tmp_path / "run" / "config.json").exists()
