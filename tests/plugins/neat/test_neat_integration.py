"""NEAT (brain and optimizer `type = "neat"`) with everything else evo has: novelty search and
fitness shaping, sequential/mp/Dask giving identical runs, the batched modes over rows of
different topologies, `check-brain`, replay (`--trace`, `--show-neurons`), sweeps, the Python
API, and a run killed with SIGKILL then resumed equal to one run."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import evo_in_process, fitness_rows, npz, run_evo

from evo_core import ReloadingStackedBatch, api
from evo_core.config import validate_config
from evo_core.config.schema import EpisodesConfig
from evo_core.evaluation.batched_episodes import BatchedEpisodeRunner
from evo_core.evaluation.episodes import EpisodeRunner
from evo_core.hooks.discovery import get_registry
from evo_core.running.experiment import build_experiment
from evo_neat.config import NEATConfig
from evo_neat.optimizer import NEAT
from evo_neat.template import NEATTemplate

#: Structural mutations raised so that three generations hold networks of many topologies
CONFIG: dict[str, Any] = {
    "environment": "CartPole-v1", "seed": 3, "generations": 3,
    "brain": {"type": "neat", "max_nodes": 10, "max_conns": 24},
    "optimizer": {"type": "neat", "population_size": 20, "add_node": 0.4,
                  "add_connection": 0.6},
    "episodes": {"runs": 2, "max_steps": 100, "seed_per": "candidate"},
    "champion": {"episodes": 0}}

NOVELTY = {"behaviour": {"source": "observation", "interval": 5, "max_length": 4},
           "novelty": {"k": 3, "per_generation": 3, "archive_size": 7},
           "fitness_shaping": {"efficiency_weight": 0.5}}


def write(path: Path, **changes: Any) -> Path:
    config = json.loads(json.dumps(CONFIG))
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key].update(value)
        else:
            config[key] = value
    path.write_text(json.dumps(config))
    return path


def train(folder: Path, name: str, *arguments: str, **changes: Any) -> Path:
    out = folder / name
    result = evo_in_process("train", str(write(folder / f"{name}.json", **changes)), "--out",
                            str(out), "--quiet", *arguments)
    assert result.returncode == 0, result.stderr
    return out


def assert_same_run(a: Path, b: Path, files: tuple[str, ...] = ("best.npz",)) -> None:
    assert fitness_rows(a) == fitness_rows(b)
    for name in files:
        left, right = npz(a / name), npz(b / name)
        assert left.keys() == right.keys()
        # a checkpoint's meta names its own run (id, times); every array of state is compared
        assert all(np.array_equal(left[k], right[k]) for k in left if k != "meta"), name


def topologies(population: np.ndarray) -> set[tuple[int, int]]:
    """The (hidden nodes, enabled connections) counts of the genomes `population`."""
    tables = template().genome_layout.tables.decode(np, population)
    hidden = ((tables.nodes["used"] > 0.5) & (np.rint(tables.nodes["kind"]) == 1)).sum(axis=1)
    enabled = ((tables.connections["innovation"] >= 0)
               & (tables.connections["enabled"] > 0.5)).sum(axis=1)
    return set(zip(hidden.tolist(), enabled.tolist(), strict=True))


def template() -> NEATTemplate:
    env = gym.make("CartPole-v1")
    try:
        return NEATTemplate(NEATConfig(**{k: v for k, v in CONFIG["brain"].items()
                                          if k != "type"}),
                            env.observation_space, env.action_space, np.random.default_rng(0))
    finally:
        env.close()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("neat")


@pytest.fixture(scope="module")
def run(folder: Path) -> Path:
    """The reference: CONFIG trained sequentially, vectorize off."""
    return train(folder, "reference")


def test_the_reference_population_holds_many_topologies(run: Path) -> None:
    """What the tests of rows of different topologies rely on."""
    found = topologies(population_of(run)[0])
    assert len(found) >= 5 and any(hidden > 0 for hidden, _ in found), found


# ----------------------------------------------------------------- novelty and shaping


def test_novelty_and_shaping_steer_neat_and_resume_exactly(
        folder: Path, run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NEAT told the novelty-and-shaping score (Lehman's novelty-search NEAT): its first
    generation is the reference's (the same genomes and episodes, raw fitness logged), the
    next ones differ because it was told something else than the return; and a run stopped at
    generation 2 resumes, NEAT state and novelty archive alike, to the same run."""
    told: list[np.ndarray] = []
    original = NEAT.tell

    def tell(self: NEAT, fitnesses: np.ndarray) -> None:
        told.append(np.array(fitnesses))
        original(self, fitnesses)

    monkeypatch.setattr(NEAT, "tell", tell)
    novel = train(folder, "novelty", **NOVELTY)
    monkeypatch.undo()
    rows, reference = fitness_rows(novel), fitness_rows(run)
    assert rows[0] == reference[0] and rows[1:] != reference[1:]
    assert len(told) == 3
    assert not np.array_equal(told[0], told[0].astype(int))  # scores, not CartPole's returns
    archive = npz(novel / "checkpoint.npz")["novelty.archive"]
    assert len(archive) == 7
    half = train(folder, "novelty-half", **NOVELTY, generations=2)
    assert evo_in_process("resume", str(half), "--generations", "3", "--quiet").returncode == 0
    assert_same_run(novel, half, ("best.npz", "hall_of_fame.npz", "checkpoint.npz"))


# ----------------------------------------------------------------- handlers


@pytest.mark.slow
def test_mp_and_dask_train_exactly_as_sequential(folder: Path, run: Path,
                                                 dask_address: str) -> None:
    for name, processing in (("mp", {"type": "mp", "workers": 2, "start_method": "forkserver"}),
                             ("dask", {"type": "dask", "address": dask_address})):
        assert_same_run(run, train(folder, name, processing=processing),
                        ("best.npz", "hall_of_fame.npz"))


# ----------------------------------------------------------------- batched modes


def test_sync_trains_exactly_as_off(folder: Path, run: Path) -> None:
    assert_same_run(run, train(folder, "sync", episodes={"vectorize": "sync"}),
                    ("best.npz", "hall_of_fame.npz"))


class Lone(NEATTemplate):
    """The NEAT brain whose batch is a stack of lone `make()` brains, one per row."""

    def make_batch(self, genomes: np.ndarray) -> ReloadingStackedBatch:
        return ReloadingStackedBatch([self.make(genome) for genome in genomes],
                                     self.observation_space, self.action_space, self.make)


def population_of(run: Path) -> tuple[np.ndarray, np.ndarray]:
    genomes = npz(run / "checkpoint.npz")["optimizer.population"]
    return genomes, np.arange(100, 100 + len(genomes), dtype=np.int64)


def test_native_rows_of_different_topologies_act_as_lone_brains(run: Path) -> None:
    """native plays its own vector environment's episodes (they differ from off's), so its
    check is that the batch the NEAT brain derives, rows of different topologies stepped
    together on 8 rows that refill, gives what lone brains in the same rows give."""
    genomes, seeds = population_of(run)
    config = EpisodesConfig(vectorize="native", runs=2, max_steps=100, batch_rows=8)
    results = []
    for kind in (NEATTemplate, Lone):
        base = template()
        brains = kind(base.config, base.observation_space, base.action_space,
                      np.random.default_rng(0))
        runner = BatchedEpisodeRunner(brains, "CartPole-v1", config)
        try:
            results.append(runner.evaluate_many(genomes, seeds))
        finally:
            runner.close()
    assert len(topologies(genomes)) >= 5 and results[0] == results[1]
    assert len({result.fitness for result in results[0]}) > 5


def test_native_run_is_reproducible(folder: Path) -> None:
    first = train(folder, "native-a", episodes={"vectorize": "native"})
    assert_same_run(first, train(folder, "native-b", episodes={"vectorize": "native"}),
                    ("best.npz", "hall_of_fame.npz"))


# ----------------------------------------------------------------- looking and the API


def returns_of(stderr: str) -> list[float]:
    return [float(line.rsplit(" ", 1)[1]) for line in stderr.splitlines()
            if line.startswith("episode ")]


def test_replay_and_its_trace(run: Path, tmp_path: Path) -> None:
    played = evo_in_process("replay", str(run), "--episodes", "2")
    assert played.returncode == 0, played.stderr
    returns = returns_of(played.stderr)
    assert len(returns) == 2 and float(played.stdout) == pytest.approx(np.mean(returns))
    trace = tmp_path / "t.npz"
    traced = evo_in_process("replay", str(run), "--episodes", "2", "--trace", str(trace))
    assert traced.returncode == 0, traced.stderr
    assert returns_of(traced.stderr) == returns   # tracing changes no episode
    arrays = npz(trace)
    steps = int(sum(returns))
    assert arrays["observation"].shape == (steps, 4)
    assert arrays["state.nodes"].shape == (steps, CONFIG["brain"]["max_nodes"])
    assert arrays["return"].tolist() == returns
    assert np.isfinite(arrays["state.nodes"]).all() and arrays["state.nodes"].std() > 0


def test_show_neurons_beside_the_rendered_frames(run: Path, tmp_path: Path) -> None:
    pytest.importorskip("pygame")
    imageio = pytest.importorskip("imageio.v3")
    pytest.importorskip("imageio_ffmpeg")
    video = tmp_path / "n.mp4"
    result = evo_in_process("replay", str(run), "--episodes", "1", "--max-steps", "20",
                            "--render", str(video), "--show-neurons")
    assert result.returncode == 0, result.stderr
    frames = imageio.imread(video)
    assert len(frames) == returns_of(result.stderr)[0] + 1
    assert frames.shape[2] > 600   # CartPole's 600 pixels, and the neurons beside them


def test_a_sweep_over_a_neat_setting(folder: Path, run: Path) -> None:
    """`optimizer.add_node` swept: the point with the reference's value is the reference,
    the point without add-node grows no hidden node."""
    sweep = dict(json.loads(write(folder / "base.json").read_text()),
                 sweep={"seeds": 1, "parallel": 1, "grid": {"optimizer.add_node": [0.0, 0.4]}})
    path = folder / "sweep.json"
    path.write_text(json.dumps(sweep))
    out = folder / "sweep"
    result = evo_in_process("sweep", str(path), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == \
        ["add_node=0.0_seed=3", "add_node=0.4_seed=3"]
    assert_same_run(run, out / "add_node=0.4_seed=3")
    grown = topologies(population_of(out / "add_node=0.0_seed=3")[0])
    assert {hidden for hidden, _ in grown} == {0}
    assert (out / "summary.csv").is_file()


def test_the_python_api_trains_and_resumes(folder: Path, run: Path) -> None:
    half = api.train(write(folder / "api.json", generations=2), out=folder / "api")
    assert len(half.log) == 2
    resumed = api.resume(half.path, generations=3)
    assert_same_run(run, resumed.path, ("best.npz", "hall_of_fame.npz", "checkpoint.npz"))
    generation, state = resumed.checkpointed_optimizer() or (0, {})
    assert generation == 3 and state["generation"] == 3
    assert len(resumed.replay(episodes=1, seed=1)) == 1


# ----------------------------------------------------------------- kill -9


def evo_process(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "evo_core.cli.main", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def rows_written(run: Path) -> int:
    log = run / "log.csv"
    return len(log.read_text().splitlines()) - 1 if log.exists() else 0


@pytest.mark.slow
def test_sigkill_during_training_then_resume_equals_one_run(folder: Path) -> None:
    """Killed before its first generation ended, then again in the middle of the run: `evo
    resume` ends with the log, best and hall of fame of the run never stopped."""
    generations = 8
    reference = train(folder, "kill-reference", generations=generations)
    out = folder / "killed"
    process = evo_process("train", str(write(folder / "killed.json", generations=generations)),
                          "--out", str(out), "--quiet")
    try:
        while not (out / "config.json").exists():
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
        process.wait()
        process = evo_process("resume", str(out), "--quiet")
        started = time.monotonic()
        while rows_written(out) < 3 or (out / "log.csv").stat().st_mtime < time.time() - 5:
            assert process.poll() is None and time.monotonic() - started < 60, \
                process.stderr.read() if process.stderr else ""
            time.sleep(0.01)
        time.sleep(0.02)   # somewhere inside a later generation
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert process.returncode == -signal.SIGKILL
        assert rows_written(out) < generations   # it was stopped before the end
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    finished = run_evo("resume", str(out), "--quiet")
    assert finished.returncode == 0, finished.stderr
    assert_same_run(reference, out, ("best.npz", "hall_of_fame.npz", "checkpoint.npz"))


# ----------------------------------------------------------------- last: these start JAX (the
# brain's JAX form), whose threads make every later fork (a subprocess, a sweep worker) warn


def test_jax_rows_of_different_topologies_play_the_gymnasium_episodes(run: Path,
                                                                     tmp_path: Path) -> None:
    """The compiled rollout of a population of many topologies against `EpisodeRunner` on
    the gymnasium form of the same environment, in float64 (as the JAX brain tests compare
    argmax actions): the same episodes, step for step."""
    jax = pytest.importorskip("jax")
    pytest.importorskip("gymnax")
    genomes, seeds = population_of(run)
    genomes, seeds = genomes[:6], seeds[:6]
    assert len(topologies(genomes)) >= 3
    changes = {"environment": "gymnax/CartPole-v1",
               "episodes": {"runs": 1, "max_steps": 40, "vectorize": "jax"}}
    registry = get_registry()
    experiment = build_experiment(validate_config(
        json.loads(write(tmp_path / "jax.json", **changes).read_text()), registry, "test"),
        registry)
    with jax.enable_x64(True):
        evaluator: Any = experiment.runner_spec.build(experiment.template)
        runner = EpisodeRunner(experiment.template, "gymnax/CartPole-v1",
                               EpisodesConfig(runs=1, max_steps=40))
        try:
            compiled = evaluator.evaluate_many(genomes, seeds)
            single = [runner.evaluate(genome, int(seed))
                      for genome, seed in zip(genomes, seeds, strict=True)]
        finally:
            runner.close()
            evaluator.close()
    assert [(r.fitness, r.steps) for r in compiled] == [(r.fitness, r.steps) for r in single]
