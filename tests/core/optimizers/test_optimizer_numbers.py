"""Attacks on the numbers of an optimizer (issue 33): a step size or mean whose samples overflow
the optimizer's float type, given in the config, is one line at validation naming the field and
the largest value allowed (cma-es-jax wrote ±inf genomes, pycma died on a bare assertion); an
edited cma-es-jax checkpoint whose fields are finite but inconsistent is one line naming
checkpoint.npz and the field (it resumed into a NaN mean); and what cma-es-jax's own update
writes, diverging or converged, stays finite and loads again."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import npz

from evo_core import DEVIATIONS, gene_limit
from evo_core.cli.main import main
from evo_core.handlers.mp import start_method
from evo_core.optimizers.ars import ARS, ARSConfig
from evo_core.optimizers.cma_es import CMAES, CMAESConfig
from evo_core.optimizers.mu_lambda import MuLambda, MuLambdaConfig
from evo_core.optimizers.openai_es import OpenAIES, OpenAIESConfig
from evo_core.optimizers.pgpe import PGPE, PGPEConfig
from evo_core.optimizers.snes import SNES, SNESConfig

CARTPOLE: dict[str, Any] = {
    "environment": "CartPole-v1", "seed": 2, "generations": 2,
    "brain": {"type": "ffnn", "hidden_layers": []},  # 10 genes: GENES
    "episodes": {"runs": 1, "max_steps": 20}}
#: every cma-es-jax of this module has one shape, so that it is compiled once
GENES, POPULATION = 10, 8
MAZE: dict[str, Any] = {
    "environment": "evo/MediumMaze-v0", "seed": 3, "generations": 1,
    "brain": {"type": "ffnn", "hidden_layers": []},
    "behaviour": {"source": "state", "interval": "final"}, "episodes": {"max_steps": 20}}
QD = {"population_size": 8, "ranges": [[0, 200], [0, 200]], "bins": 10}

FLOAT32 = f"{gene_limit(np.float32):.3g}"
FLOAT64 = f"{gene_limit(np.float64):.3g}"


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evo: ") and "Traceback" not in err, err
    return lines[0]


# ------------------------------------------------------------------ numbers in the config

#: (base config, optimizer table, what the line says: the field and the largest value allowed)
NUMBERS: dict[str, tuple[dict[str, Any], dict[str, Any], list[str]]] = {
    "cma-es-jax sigma 1e308": (
        CARTPOLE, {"type": "cma-es-jax", "population_size": 4, "sigma": 1e308},
        ["sigma = 1e+308", "float32", f"±{FLOAT32}",
         f"largest sigma allowed with initial_mean = 0 is {gene_limit(np.float32) / 10:.3g}"]),
    "cma-es-jax initial_mean 1e308": (
        CARTPOLE, {"type": "cma-es-jax", "population_size": 4, "initial_mean": 1e308},
        ["initial_mean = 1e+308", f"largest initial_mean allowed is {FLOAT32}"]),
    "cma-es-jax initial_mean 1e20 (float64 would hold it)": (
        CARTPOLE, {"type": "cma-es-jax", "population_size": 4, "initial_mean": 1e20},
        ["initial_mean = 1e+20", "float32"]),
    "cma-es-jax sigma 1e-50 (0 in float32)": (
        CARTPOLE, {"type": "cma-es-jax", "population_size": 4, "sigma": 1e-50},
        ["sigma = 1e-50", "smallest sigma allowed is 1.18e-38"]),
    "cma-es sigma 1e308": (
        CARTPOLE, {"type": "cma-es", "population_size": 4, "sigma": 1e308},
        ["sigma = 1e+308", "float64", f"±{FLOAT64}", "largest sigma allowed"]),
    "cma-es sigma and mean": (
        CARTPOLE, {"type": "cma-es", "population_size": 4, "sigma": 1e150,
                   "initial_mean": 1e151},
        ["sigma = 1e+150", "largest sigma allowed with initial_mean = 1e+151 is 3.09e+149"]),
    "mu-lambda initial_gene_range": (
        CARTPOLE, {"type": "mu-lambda", "population_size": 4, "initial_gene_range": 1e300},
        ["initial_gene_range = 1e+300", f"largest initial_gene_range allowed is {FLOAT64}"]),
    "openai-es sigma": (
        CARTPOLE, {"type": "openai-es", "population_size": 4, "sigma": 1e300},
        ["sigma = 1e+300", "float64", "largest sigma allowed"]),
    "openai-es sigma_limit": (
        CARTPOLE, {"type": "openai-es", "population_size": 4, "sigma_decay": 0.9,
                   "sigma_limit": 1e-160},
        ["sigma_limit = 1e-160", "smallest sigma_limit allowed"]),
    "pgpe initial_stdev and mean": (
        CARTPOLE, {"type": "pgpe", "population_size": 4, "initial_stdev": 1e150,
                   "initial_mean": 1e151},
        ["initial_stdev = 1e+150", "largest initial_stdev allowed with initial_mean = 1e+151"]),
    "snes initial_sigma": (
        CARTPOLE, {"type": "snes", "population_size": 4, "initial_sigma": 1e-310},
        ["initial_sigma = 1e-310", "smallest initial_sigma allowed is 2.23e-308"]),
    "ars sigma": (
        CARTPOLE, {"type": "ars", "population_size": 4, "sigma": 1e300},
        ["sigma = 1e+300", "largest sigma allowed"]),
    "map-elites initial_sigma": (
        MAZE, {"type": "map-elites", **QD, "initial_sigma": 1e200},
        ["initial_sigma = 1e+200", "largest initial_sigma allowed"]),
    "map-elites line_sigma": (
        MAZE, {"type": "map-elites", **QD, "line_sigma": 1e160},
        ["line_sigma = 1e+160", "largest line_sigma allowed"]),
    "cma-me sigma": (
        MAZE, {"type": "cma-me", **QD, "sigma": 1e300},
        ["sigma = 1e+300", "largest sigma allowed"]),
}


@pytest.mark.parametrize("case", sorted(NUMBERS))
def test_a_number_whose_samples_overflow_is_one_line_at_validation(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    base, table, fragments = NUMBERS[case]
    if table["type"] == "cma-es-jax":
        pytest.importorskip("jax")
    if table["type"] in ("map-elites", "cma-me"):
        pytest.importorskip("evo_qd")
    config = tmp_path / "c.json"
    config.write_text(json.dumps({**base, "optimizer": table}))
    out = tmp_path / "run"
    assert main(["train", str(config), "--out", str(out), "--quiet"]) == 2
    line = one_line(capsys.readouterr().err)
    assert str(config) in line and "optimizer" in line, line
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    assert not out.exists()


def finite_generations(optimizer: Any, generations: int, population: int) -> None:
    rng = np.random.default_rng(0)
    for _ in range(generations):
        genomes = optimizer.ask()
        assert np.isfinite(genomes).all() and np.isfinite(genomes ** 2).all()
        optimizer.tell(rng.normal(size=population))


def test_the_largest_values_allowed_sample_finite_genes() -> None:
    """The bound is where it says: at the largest sigma and mean allowed, pycma, mu-lambda and
    the evolution strategies for large genomes sample genes whose squares are finite (pycma
    died on an assertion above it), and what the latter's updates write loads again."""
    limit = gene_limit(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pycma = CMAES(CMAESConfig(population_size=6, initial_mean=limit / 2,
                                  sigma=limit / 2 / DEVIATIONS), 5, np.random.default_rng(0))
        finite_generations(pycma, 3, 6)
    finite_generations(MuLambda(MuLambdaConfig(population_size=6, initial_gene_range=limit),
                                5, np.random.default_rng(0)), 3, 9)
    mean, step = limit / 2, limit / 2 / DEVIATIONS
    for optimizer in (
            OpenAIES(OpenAIESConfig(population_size=6, initial_mean=mean, sigma=step), 5,
                     np.random.default_rng(0)),
            PGPE(PGPEConfig(population_size=6, initial_mean=mean, initial_stdev=step), 5,
                 np.random.default_rng(0)),
            SNES(SNESConfig(population_size=6, initial_mean=mean, initial_sigma=step), 5,
                 np.random.default_rng(0)),
            ARS(ARSConfig(population_size=6, initial_mean=mean, sigma=step), 5,
                np.random.default_rng(0))):
        finite_generations(optimizer, 3, 6)
        again: Any = type(optimizer)
        again(optimizer.config, 5, np.random.default_rng(1)).load_state(
            optimizer.state())  # what the update wrote loads again


# ------------------------------------------------------------------ cma-es-jax's own state


@pytest.fixture(scope="module")
def jax_cma() -> Any:
    pytest.importorskip("jax")
    from evo_jax.cma_es import JaxCMAES, JaxCMAESConfig

    return JaxCMAES, JaxCMAESConfig


def jax_optimizer(jax_cma: Any, sigma: float = 0.5) -> Any:
    optimizer_class, config_class = jax_cma
    return optimizer_class(config_class(population_size=POPULATION, sigma=sigma), GENES,
                           np.random.default_rng(0))


def test_the_largest_jax_sigma_allowed_samples_finite_float32_genes(jax_cma: Any) -> None:
    finite_generations(jax_optimizer(jax_cma, gene_limit(np.float32) / DEVIATIONS), 3,
                       POPULATION)


def told(jax_cma: Any, generations: int, fitness: Any, sigma: float = 0.5) -> Any:
    strategy = jax_optimizer(jax_cma, sigma)
    for _ in range(generations):
        genomes = strategy.ask()
        assert np.isfinite(genomes).all()
        strategy.tell(fitness(genomes))
    return strategy


def loads(jax_cma: Any, state: dict[str, Any]) -> Any:
    strategy = jax_optimizer(jax_cma)
    strategy.load_state(state)
    return strategy


def test_a_diverging_jax_run_stays_finite_and_resumable(jax_cma: Any) -> None:
    """Fitness that rewards ever larger genes: sigma grew by orders of magnitude a generation
    until float32 overflowed (±inf genomes at generation 341); now its samples stop at the gene
    limit and its state loads."""
    strategy = told(jax_cma, 400, lambda genomes: genomes.sum(axis=1))
    state = strategy.state()
    assert np.abs(state["mean"]).max() <= gene_limit(np.float32)
    loads(jax_cma, state)


def test_a_converged_jax_run_stays_resumable(jax_cma: Any) -> None:
    """Flat fitness from a tiny step size: sigma underflowed to 0 in float32, which the next
    resume refused ("what evo itself wrote"); it is kept a normal float32 number."""
    strategy = told(jax_cma, 30, lambda genomes: np.zeros(len(genomes)), sigma=1.2e-38)
    state = strategy.state()
    assert state["sigma"] >= np.finfo(np.float32).tiny
    loads(jax_cma, state)


def test_an_indefinite_covariance_is_raised_to_its_floor_by_tell(jax_cma: Any) -> None:
    """C with an eigenvalue below the floor D is kept at (negative: the active update makes one
    once the samples are indistinguishable; within the rounding a state may have) is replaced
    by B D^2 B^T, not carried on to grow until C overflows."""
    eigenvalues = np.ones(GENES, dtype=np.float32)
    eigenvalues[-1] = -1e-4
    state = jax_optimizer(jax_cma).state()
    state.update(cov=np.diag(eigenvalues), basis=np.eye(GENES, dtype=np.float32),
                 scales=np.sqrt(np.maximum(eigenvalues, np.finfo(np.float32).eps)))
    strategy = loads(jax_cma, state)
    strategy.ask()
    strategy.tell(np.zeros(POPULATION))  # flat fitness: the samples told apart by index alone
    assert np.linalg.eigvalsh(strategy.state()["cov"].astype(np.float64)).min() > 0


def edit_basis_zeroed(state: dict[str, Any]) -> None:
    state["basis"] = np.zeros_like(state["basis"])


def edit_negative_definite(state: dict[str, Any]) -> None:
    state["cov"] = -state["cov"]


def edit_scales_1e30(state: dict[str, Any]) -> None:
    state["scales"] = state["scales"] * np.float32(1e30)


def edit_other_rotation(state: dict[str, Any]) -> None:
    """An orthonormal basis, but not the eigenvectors of cov."""
    state["basis"] = np.linalg.qr(np.random.default_rng(0).normal(size=state["basis"].shape)
                                  )[0].astype(state["basis"].dtype)


def edit_consistent_but_huge(state: dict[str, Any]) -> None:
    """cov and scales scaled together, sigma 1: consistent and finite, but the samples reach
    beyond the gene limit."""
    state["cov"] = state["cov"] * np.float32(1e32)
    state["scales"] = state["scales"] * np.float32(1e16)
    state["sigma"] = np.float32(1.0)


def edit_negative_cov_floored(state: dict[str, Any]) -> None:
    """cov negative-definite with the scales tell would floor it to: consistent-looking."""
    state["cov"] = -np.eye(len(state["scales"]), dtype=state["cov"].dtype)
    state["basis"] = np.eye(len(state["scales"]), dtype=state["basis"].dtype)
    state["scales"] = np.full_like(state["scales"], np.sqrt(np.finfo(np.float32).tiny))


def edit_mean_1e20(state: dict[str, Any]) -> None:
    state["mean"] = np.full_like(state["mean"], 1e20)


def edit_sigma_1e30(state: dict[str, Any]) -> None:
    state["sigma"] = np.float32(1e30)


def edit_p_c_1e20(state: dict[str, Any]) -> None:
    state["p_c"] = np.full_like(state["p_c"], 1e20)


def edit_generation_wraps(state: dict[str, Any]) -> None:
    state["generation"] = np.int64(2**32 + 5)  # int32 would wrap it to 5


def edit_cov_1e39(state: dict[str, Any]) -> None:
    state["cov"] = state["cov"].astype(np.float64) * 1e39  # finite, but not in float32


STATE_EDITS = {
    "basis zeroed": (edit_basis_zeroed, "optimizer.basis: not orthonormal"),
    "negative-definite cov": (edit_negative_definite, "optimizer.cov: not positive-definite"),
    "scales x 1e30": (edit_scales_1e30, "optimizer.scales"),
    "another rotation": (edit_other_rotation, "optimizer.basis: not the eigenvectors"),
    "cov and scales scaled together": (edit_consistent_but_huge,
                                       "optimizer.sigma = 1 puts genes as far as"),
    "negative cov with floored scales": (edit_negative_cov_floored,
                                         "optimizer.cov: not positive-definite"),
    "mean 1e20": (edit_mean_1e20, "optimizer.mean: values as large as 1e+20"),
    "sigma 1e30": (edit_sigma_1e30, "optimizer.sigma = 1e+30"),
    "p_c 1e20": (edit_p_c_1e20, "optimizer.p_c"),
    "generation beyond int32": (edit_generation_wraps, "optimizer.generation"),
    "cov beyond float32": (edit_cov_1e39, "optimizer.cov: values beyond what float32 holds"),
}


@pytest.fixture(scope="module")
def jax_state(jax_cma: Any) -> dict[str, Any]:
    state: dict[str, Any] = told(jax_cma, 20, lambda genomes: -(genomes ** 2).sum(axis=1)
                                 ).state()
    return state


@pytest.mark.parametrize("edit", sorted(STATE_EDITS))
def test_an_inconsistent_jax_state_is_refused_naming_the_field(
        jax_cma: Any, jax_state: dict[str, Any], edit: str) -> None:
    change, message = STATE_EDITS[edit]
    state = {name: np.array(value) for name, value in jax_state.items()}
    loads(jax_cma, state)  # the unedited state loads
    change(state)
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        loads(jax_cma, state)
    assert "\n" not in str(raised.value)


@pytest.fixture(scope="module")
def jax_run(tmp_path_factory: pytest.TempPathFactory, jax_cma: Any) -> Path:
    folder = tmp_path_factory.mktemp("jax-run")
    config = folder / "c.json"
    config.write_text(json.dumps({**CARTPOLE, "optimizer": {"type": "cma-es-jax",
                                                            "population_size": POPULATION}}))
    assert main(["train", str(config), "--out", str(folder / "run"), "--quiet"]) == 0
    return folder / "run"


@pytest.mark.parametrize("edit", ["basis zeroed", "negative-definite cov", "scales x 1e30"])
def test_an_edited_jax_checkpoint_is_one_line_and_the_run_untouched(
        jax_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: str) -> None:
    """The issue's three edits: each resumed into a NaN mean, whose checkpoint the next resume
    refused; now the first resume refuses the edit, naming the file and the field."""
    run = tmp_path / "run"
    shutil.copytree(jax_run, run)
    arrays = npz(run / "checkpoint.npz")
    state = {name.removeprefix("optimizer."): value for name, value in arrays.items()
             if name.startswith("optimizer.")}
    change, message = STATE_EDITS[edit]
    change(state)
    arrays.update({f"optimizer.{name}": value for name, value in state.items()})
    (run / "checkpoint.npz").unlink()
    np.savez(run / "checkpoint.npz", **arrays)
    before = {path.name: path.read_bytes() for path in run.iterdir() if path.is_file()}
    assert main(["resume", str(run), "--generations", "3", "--quiet"]) == 2
    line = one_line(capsys.readouterr().err)
    assert str(run / "checkpoint.npz") in line and message in line, line
    assert {path.name: path.read_bytes() for path in run.iterdir() if path.is_file()} == before


# ------------------------------------------------------------------ JAX and mp's fork

#: An evaluator that computes with JAX in the worker, as `episodes.vectorize = "jax"` does.
JAX_SPEC = """
from evo_core import EvaluationResult


class JaxEvaluator:
    def evaluate(self, genome, seed):
        import jax.numpy as jnp

        return EvaluationResult(float(jnp.sum(jnp.asarray(genome))), int(seed))

    def close(self):
        pass


class JaxSpec:
    def build(self, template):
        return JaxEvaluator()
"""

#: JAX started in the main process (as cma-es-jax and the gymnax environments' probe do), then
#: the mp handler with `start_method` unset evaluates on a worker that uses JAX.
JAX_MAIN = """
import numpy as np


def main():
    import jax.numpy as jnp

    jnp.ones(2).block_until_ready()
    from evo_core.handlers.mp import MPConfig, MPHandler
    from jax_spec import JaxSpec

    handler = MPHandler(MPConfig(workers=1), JaxSpec())
    try:
        results = handler.evaluate(object(), np.arange(6.0).reshape(2, 3), np.arange(2))
    finally:
        handler.close()
    print(handler.context.get_start_method(), [(r.fitness, r.steps) for r in results])


if __name__ == "__main__":
    main()
"""


def test_mp_workers_of_a_process_running_jax_finish_the_generation(
        jax_cma: Any, tmp_path: Path) -> None:
    """With the platform's fork, the worker's first JAX call deadlocked and the generation never
    ended; unset, the start method is spawn once JAX is loaded. In a process of its own, killed
    with its workers if it hangs."""
    (tmp_path / "jax_spec.py").write_text(JAX_SPEC)
    (tmp_path / "main.py").write_text(JAX_MAIN)
    path = os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])
    process = subprocess.Popen([sys.executable, str(tmp_path / "main.py")], cwd=tmp_path,
                               env={**os.environ, "PYTHONPATH": path}, start_new_session=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = process.communicate(timeout=25)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail("the mp worker of a process running JAX hung")
    assert process.returncode == 0, err
    assert out.split() == ["spawn", "[(3.0,", "0),", "(12.0,", "1)]"]


def test_an_unset_start_method_is_spawn_only_with_jax_loaded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jax", sys.modules.get("jax", object()))
    expected = "spawn" if multiprocessing.get_start_method() == "fork" else None
    assert start_method(None) == expected
    assert start_method("fork") == "fork"  # asked for: left to the user
    monkeypatch.delitem(sys.modules, "jax")
    assert start_method(None) is None
