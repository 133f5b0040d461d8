"""evo-jax's `cma-es-jax`: its constants are pycma's, one update follows the tutorial's equations
(a numpy reference in float64), it solves quadratics, is reproducible for a seed, resumes
exactly (also a gymnax run), refuses damaged state and a missing jax in one line; its separable
form (`diagonal = true`) likewise, with Ros and Hansen's learning rates and O(n) state."""

from __future__ import annotations

import csv
import importlib.util
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import npz, requires
from numpy.typing import NDArray

from evo_core import UserError, api
from evo_core.cli.main import main
from evo_core.optimizers.cma_es import CMAES, CMAESConfig
from evo_jax.cma_es import JaxCMAES, JaxCMAESConfig
from evo_jax.cma_es_update import Constants
from evo_jax.sep_cma_es_update import SepCMAState
from evo_jax.termination import fitness_over, history_length

pytestmark = requires("jax", reason="jax is not installed (pip install 'evo-core[jax]')")

FloatArray = NDArray[np.float64]


def optimizer(genes: int = 4, population: int = 8, seed: int = 0, **fields: Any) -> JaxCMAES:
    config = JaxCMAESConfig(population_size=population, **fields)
    return JaxCMAES(config, genes, np.random.default_rng(seed))


def sphere(genomes: FloatArray) -> FloatArray:
    values: FloatArray = -(genomes ** 2).sum(axis=1)
    return values


def ellipsoid(genomes: FloatArray) -> FloatArray:
    scales = 10.0 ** (4 * np.arange(genomes.shape[1]) / (genomes.shape[1] - 1))
    values: FloatArray = -(scales * genomes ** 2).sum(axis=1)
    return values


@pytest.mark.parametrize(("genes", "population"), [(10, 10), (58, 256), (3, 6)])
def test_constants_are_pycmas(genes: int, population: int) -> None:
    """pycma computes the same weights of the best half, mu_eff, c_c and c_1 (its c_mu and
    c_sigma are variants of the tutorial's; so are its negative weights)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = CMAES(CMAESConfig(population_size=population), genes,
                          np.random.default_rng(0)).es.sp
    ours = Constants.of(genes, population, population // 2)
    mu = population // 2
    assert np.allclose(ours.weights[:mu], list(reference.weights)[:mu], rtol=1e-12)
    assert ours.mu_eff == pytest.approx(reference.weights.mueff, rel=1e-12)
    assert ours.c_c == pytest.approx(reference.cc, rel=1e-12)
    assert ours.c_1 == pytest.approx(reference.c1, rel=1e-12)
    assert sum(ours.weights[:mu]) == pytest.approx(1.0)
    assert all(w < 0 for w in ours.weights[mu:])


def reference_update(c: Constants, state: dict[str, FloatArray], y: FloatArray,
                     fitness: FloatArray) -> dict[str, FloatArray]:
    """The tutorial's update, step by step in float64 numpy, from the state and the steps."""
    n = c.n
    ranked = y[np.argsort(-fitness, kind="stable")]
    weights = np.array(c.weights)
    y_w = weights[:c.mu] @ ranked[:c.mu]
    eigenvalues, basis = np.linalg.eigh(state["cov"])
    inverse_root = basis @ np.diag(eigenvalues ** -0.5) @ basis.T
    p_sigma = (1 - c.c_sigma) * state["p_sigma"] + np.sqrt(
        c.c_sigma * (2 - c.c_sigma) * c.mu_eff) * inverse_root @ y_w
    norm = np.linalg.norm(p_sigma)
    sigma = state["sigma"] * np.exp(c.c_sigma / c.d_sigma * (norm / c.chi_n - 1))
    generation = int(state["generation"])
    h_sigma = float(norm / np.sqrt(1 - (1 - c.c_sigma) ** (2 * (generation + 1)))
                    < (1.4 + 2 / (n + 1)) * c.chi_n)
    p_c = (1 - c.c_c) * state["p_c"] + h_sigma * np.sqrt(c.c_c * (2 - c.c_c) * c.mu_eff) * y_w
    cov = (1 + c.c_1 * (1 - h_sigma) * c.c_c * (2 - c.c_c) - c.c_1 - c.c_mu * weights.sum()
           ) * state["cov"] + c.c_1 * np.outer(p_c, p_c)
    for weight, step in zip(weights, ranked):
        if weight < 0:
            weight *= n / np.sum((inverse_root @ step) ** 2)
        cov += c.c_mu * weight * np.outer(step, step)
    return {"mean": state["mean"] + state["sigma"] * y_w, "sigma": sigma, "cov": cov,
            "p_sigma": p_sigma, "p_c": p_c}


def test_updates_follow_the_equations() -> None:
    """Three updates, each compared with the reference from the state before it; the steps y
    are recovered from the genomes asked, (x - m) / sigma."""
    strategy = optimizer(genes=5, population=9, seed=4)
    rng = np.random.default_rng(1)
    for _ in range(3):
        before = {k: np.asarray(v, dtype=np.float64) for k, v in strategy.state().items()}
        genomes = strategy.ask()
        y = (genomes - before["mean"]) / before["sigma"]
        fitness = rng.normal(size=9)
        fitness[2] = fitness[5]  # a tie: the earlier sample ranks first
        strategy.tell(fitness)
        expected = reference_update(strategy.constants, before, y, fitness)
        after = strategy.state()
        for name, value in expected.items():
            assert np.allclose(after[name], value, rtol=2e-4, atol=2e-5), name
        assert int(after["generation"]) == int(before["generation"]) + 1
        rebuilt = after["basis"] @ np.diag(after["scales"] ** 2) @ after["basis"].T
        assert np.allclose(rebuilt, after["cov"], atol=1e-5)


def test_asked_genomes_are_the_distribution() -> None:
    """x = m + sigma B D z: over many samples the mean is m and the covariance sigma^2 C."""
    strategy = optimizer(genes=3, population=6, sigma=0.3, initial_mean=1.5)
    genomes = strategy.ask()
    assert genomes.dtype == np.float64 and genomes.flags.c_contiguous
    assert genomes.shape == (6, 3)
    many = optimizer(genes=3, population=4000, sigma=0.3, initial_mean=1.5).ask()
    assert np.allclose(many.mean(axis=0), 1.5, atol=0.03)
    assert np.allclose(np.cov(many.T), 0.09 * np.eye(3), atol=0.01)


@pytest.mark.parametrize("diagonal", [False, True])
@pytest.mark.parametrize(("objective", "generations"), [(sphere, 150), (ellipsoid, 400)])
def test_solves_quadratics(objective: Any, generations: int, diagonal: bool) -> None:
    strategy = optimizer(genes=5, population=8, initial_mean=1.0, diagonal=diagonal)
    best = -np.inf
    for _ in range(generations):
        genomes = strategy.ask()
        fitness = objective(genomes)
        strategy.tell(fitness)
        best = max(best, float(fitness.max()))
    assert best > -1e-8


@pytest.mark.parametrize("diagonal", [False, True])
def test_same_seed_same_genomes_and_state_resumes_exactly(diagonal: bool) -> None:
    first, second = optimizer(seed=5, diagonal=diagonal), optimizer(seed=5, diagonal=diagonal)
    assert not np.array_equal(first.ask(), optimizer(seed=6, diagonal=diagonal).ask())
    second.ask()
    rng = np.random.default_rng(0)
    for _ in range(3):
        fitness = rng.normal(size=8)
        first.tell(fitness)
        second.tell(fitness)
        assert np.array_equal(first.ask(), second.ask())
    first.tell(np.zeros(8))
    resumed = optimizer(seed=99, diagonal=diagonal)
    resumed.load_state(first.state())
    rewound = optimizer(seed=98, diagonal=diagonal)
    asked = first.ask()
    rewound.load_state(first.state_before_ask())
    assert np.array_equal(resumed.ask(), asked)
    assert np.array_equal(rewound.ask(), asked)


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("cov", np.eye(3), "optimizer.cov: (3, 3)"),
    ("mean", np.full(4, np.nan), "optimizer.mean"),
    ("key", np.zeros(2, dtype=np.float64), "optimizer.key"),
    ("sigma", np.float32(-1.0), "optimizer.sigma = -1 is not a step size"),
])
def test_damaged_state_is_refused(field: str, value: Any, expected: str) -> None:
    strategy = optimizer()
    state = strategy.state()
    state[field] = value
    with pytest.raises(ValueError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        strategy.load_state(state)
    del state[field]
    with pytest.raises(KeyError):
        strategy.load_state(state)


def test_separable_learning_rates_are_ros_and_hansens() -> None:
    """c_1 and c_mu are the full form's times (n + 2) / 3; the rest are the full form's."""
    for genes, population in [(10, 10), (100, 17), (3, 6)]:
        full = Constants.of(genes, population, population // 2)
        separable = Constants.of(genes, population, population // 2, diagonal=True)
        mu_eff = full.mu_eff
        assert separable.c_1 == pytest.approx(
            2 / ((genes + 1.3) ** 2 + mu_eff) * (genes + 2) / 3, rel=1e-12)
        assert separable.c_mu == pytest.approx(min(
            1 - separable.c_1,
            2 * (mu_eff - 2 + 1 / mu_eff) / ((genes + 2) ** 2 + mu_eff) * (genes + 2) / 3),
            rel=1e-12)
        assert (separable.c_sigma, separable.d_sigma, separable.c_c) == (
            full.c_sigma, full.d_sigma, full.c_c)
        assert separable.weights[:population // 2] == full.weights[:population // 2]


def reference_separable_update(c: Constants, state: dict[str, FloatArray], y: FloatArray,
                               fitness: FloatArray) -> dict[str, FloatArray]:
    """Ros and Hansen's separable update, step by step in float64 numpy: the full update with
    C = diag(variances) and only C's diagonal updated."""
    n = c.n
    ranked = y[np.argsort(-fitness, kind="stable")]
    weights = np.array(c.weights)
    y_w = weights[:c.mu] @ ranked[:c.mu]
    scales = np.sqrt(state["variances"])
    p_sigma = (1 - c.c_sigma) * state["p_sigma"] + np.sqrt(
        c.c_sigma * (2 - c.c_sigma) * c.mu_eff) * y_w / scales
    norm = np.linalg.norm(p_sigma)
    sigma = state["sigma"] * np.exp(c.c_sigma / c.d_sigma * (norm / c.chi_n - 1))
    generation = int(state["generation"])
    h_sigma = float(norm / np.sqrt(1 - (1 - c.c_sigma) ** (2 * (generation + 1)))
                    < (1.4 + 2 / (n + 1)) * c.chi_n)
    p_c = (1 - c.c_c) * state["p_c"] + h_sigma * np.sqrt(c.c_c * (2 - c.c_c) * c.mu_eff) * y_w
    variances = (1 + c.c_1 * (1 - h_sigma) * c.c_c * (2 - c.c_c) - c.c_1
                 - c.c_mu * weights.sum()) * state["variances"] + c.c_1 * p_c ** 2
    for weight, step in zip(weights, ranked):
        if weight < 0:
            weight *= n / np.sum((step / scales) ** 2)
        variances += c.c_mu * weight * step ** 2
    return {"mean": state["mean"] + state["sigma"] * y_w, "sigma": sigma,
            "variances": variances, "p_sigma": p_sigma, "p_c": p_c}


def test_separable_updates_follow_the_equations() -> None:
    strategy = optimizer(genes=5, population=9, seed=4, diagonal=True)
    assert strategy.constants.diagonal
    rng = np.random.default_rng(1)
    for _ in range(4):
        before = {k: np.asarray(v, dtype=np.float64) for k, v in strategy.state().items()}
        genomes = strategy.ask()
        y = (genomes - before["mean"]) / before["sigma"]
        fitness = rng.normal(size=9)
        strategy.tell(fitness)
        expected = reference_separable_update(strategy.constants, before, y, fitness)
        after = strategy.state()
        for name, value in expected.items():
            assert np.allclose(after[name], value, rtol=2e-4, atol=2e-5), name
        assert int(after["generation"]) == int(before["generation"]) + 1


def test_separable_state_is_linear_in_the_genes() -> None:
    """O(n) memory: on 20,000 genes (a full C would be 1.6 GB in float32) every field of the
    state holds at most n numbers, and the samples have C's diagonal as their variances."""
    genes = 20_000
    strategy = optimizer(genes=genes, population=6, sigma=0.1, diagonal=True)
    assert set(strategy.state()) == set(SepCMAState._fields)
    assert all(np.asarray(v).size <= genes for v in strategy.state().values())
    genomes = strategy.ask()
    strategy.tell(-(genomes ** 2).sum(axis=1))
    assert all(np.asarray(v).size <= genes for v in strategy.state().values())
    many = optimizer(genes=3, population=4000, sigma=0.3, diagonal=True).ask()
    assert np.allclose(np.cov(many.T), 0.09 * np.eye(3), atol=0.01)


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("variances", np.ones(3, dtype=np.float32), "optimizer.variances: (3,)"),
    ("variances", np.array([1, 0, 1, 1], dtype=np.float32), "optimizer.variances: not all "
                                                             "positive"),
    ("p_c", np.full(4, 1e30, dtype=np.float32), "optimizer.p_c: values as large as 1e+30"),
    ("sigma", np.float32(0.0), "optimizer.sigma = 0 is not a step size"),
])
def test_damaged_separable_state_is_refused(field: str, value: Any, expected: str) -> None:
    strategy = optimizer(diagonal=True)
    state = strategy.state()
    state[field] = value
    with pytest.raises(ValueError, match=expected.replace("(", r"\(").replace(")", r"\)")
                       .replace("+", r"\+")):
        strategy.load_state(state)
    full = optimizer().state()  # the other form's state names fields this one lacks
    with pytest.raises(KeyError):
        strategy.load_state(full)


def test_missing_jax_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *rest: None if name == "jax" else found(name, *rest))
    with pytest.raises(UserError, match=r"needs jax, which is not installed; install it with "
                                        r"pip install 'evo-core\[jax\]'") as missing:
        optimizer()
    assert "\n" not in str(missing.value)


def test_listed_by_list_optimizers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list-optimizers"]) == 0
    line = next(row for row in capsys.readouterr().out.splitlines()
                if row.startswith("cma-es-jax "))
    assert "evo-jax" in line and "ok" in line


def rows(run: Path) -> list[dict[str, str]]:
    with open(run / "log.csv", newline="") as handle:
        return [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(handle)]


def test_a_gymnax_run_resumes_exactly(tmp_path: Path) -> None:
    pytest.importorskip("gymnax", reason="gymnax is not installed (pip install 'evo-core[jax]')")
    config: dict[str, Any] = {
        "environment": "gymnax/CartPole-v1", "seed": 3, "generations": 4,
        "brain": {"type": "ffnn", "hidden_layers": [4]},
        "optimizer": {"type": "cma-es-jax", "population_size": 8},
        "episodes": {"runs": 2, "max_steps": 60, "vectorize": "jax"},
    }
    whole = api.train(config, out=tmp_path / "whole")
    half = api.train({**config, "generations": 2}, out=tmp_path / "half")
    api.resume(half.path, generations=4)
    assert rows(half.path) == rows(whole.path)
    assert len(rows(whole.path)) == 4
    for name in ("best.npz", "hall_of_fame.npz"):
        left, right = npz(half.path / name), npz(whole.path / name)
        assert all(np.array_equal(left[k], right[k]) for k in left), name


def test_a_separable_run_resumes_exactly(tmp_path: Path) -> None:
    """`diagonal = true` through evo: its state's arrays go into the checkpoint and a resumed
    run is the uninterrupted one."""
    config: dict[str, Any] = {
        "environment": "CartPole-v1", "seed": 5, "generations": 4,
        "brain": {"type": "ffnn", "hidden_layers": [3]},
        "optimizer": {"type": "cma-es-jax", "population_size": 6, "diagonal": True},
        "episodes": {"runs": 1, "max_steps": 40},
    }
    whole = api.train(config, out=tmp_path / "whole")
    half = api.train({**config, "generations": 2}, out=tmp_path / "half")
    assert "optimizer.variances" in npz(half.path / "checkpoint.npz")
    api.resume(half.path, generations=4)
    assert rows(half.path) == rows(whole.path)
    for name in ("best.npz", "hall_of_fame.npz"):
        left, right = npz(half.path / name), npz(whole.path / name)
        assert all(np.array_equal(left[k], right[k]) for k in left), name


# ----------------------------------------------------------------- restarts


def rastrigin(genomes: FloatArray) -> FloatArray:
    values: FloatArray = 10 * genomes.shape[1] + (
        genomes ** 2 - 10 * np.cos(2 * np.pi * genomes)).sum(axis=1)
    return values


def minimise(strategy: JaxCMAES, objective: Any, evaluations: int) -> tuple[float, list[int]]:
    used, best, populations = 0, np.inf, []
    while used < evaluations:
        genomes = strategy.ask()
        values = objective(genomes)
        strategy.tell(-values)
        used += len(genomes)
        best = min(best, float(values.min()))
        populations.append(len(genomes))
    return best, populations


def test_ipop_restarts_double_the_population_and_beat_one_run_on_rastrigin() -> None:
    """As the core's `cma-es`: Rastrigin in 10 genes within ±5.12, population 10; the
    termination criteria of evo_jax.termination end each run, IPOP finds a better optimum than
    one run in the same 8,000 evaluations. Separable CMA-ES (Rastrigin's function is
    separable, and its update compiles faster for each new population)."""
    def strategy(restarts: str) -> JaxCMAES:
        return optimizer(genes=10, population=10, seed=0, sigma=2.56, restarts=restarts,
                         diagonal=True)

    single, _ = minimise(strategy("none"), rastrigin, 8_000)
    restarted = strategy("ipop")
    best, populations = minimise(restarted, rastrigin, 8_000)
    runs = list(dict.fromkeys(populations))
    assert len(runs) >= 3 and runs == [10 * 2**k for k in range(len(runs))]
    assert restarted.restarts.large == len(runs) - 1
    assert best < single - 5, (best, single)


def test_termination_criteria() -> None:
    """tolflatfitness: best equals median; tolfun: the history's and the last generation's
    range below 1e-11 once the history is 10 + ceil(30 n / lambda) long; the state's criteria
    fire once sigma is too small to move the mean, not on a fresh state."""
    n, lam = 4, 8
    assert history_length(n, lam) == 10 + 15
    fresh = np.linspace(0, 1, lam)
    assert fitness_over(np.zeros(0), np.zeros(0), n) is None
    assert fitness_over(np.zeros(3), np.r_[np.ones(5), 0.0, 0.0, 0.0], n) == "tolflatfitness"
    assert fitness_over(np.zeros(3), fresh, n) is None
    close = 1.0 + np.linspace(0, 5e-12, lam)
    assert fitness_over(np.full(24, 1.0), close, n) is None  # the history is one short
    assert fitness_over(np.full(25, 1.0), close, n) == "tolfun"
    assert fitness_over(np.r_[np.full(24, 1.0), 1.1], close, n) is None
    for diagonal in (False, True):
        strategy = optimizer(genes=n, population=lam, diagonal=diagonal, restarts="ipop")
        state = strategy._now.state  # mean 0, sigma 0.5, C = I
        stalled = strategy._compiled.stalled
        assert not bool(stalled(state))
        assert not bool(stalled(state._replace(sigma=np.float32(1e-9))))  # 0 + 1e-10 moves
        assert bool(stalled(state._replace(sigma=np.float32(1e-12))))  # tolx
        # float32 cannot tell 1 + 1e-10 from 1: no effect along an axis or a coordinate
        assert bool(stalled(state._replace(sigma=np.float32(1e-9), mean=np.ones(n, np.float32))))


def test_restarted_state_round_trip_asks_the_same_genomes() -> None:
    """Around a restart (flat fitness ends every run): the state after a tell whose run is
    over, loaded elsewhere, asks the first genomes of the next run; so does the state from
    before that ask; and the counts and fitness record come back."""
    first = optimizer(genes=4, population=4, seed=2, restarts="bipop", max_restarts=3)
    for _ in range(3):
        first.tell(np.ones(len(first.ask())))
    state = first.state()
    assert state["population"] == first.restarts.population
    resumed = optimizer(genes=4, population=4, seed=50, restarts="bipop", max_restarts=3)
    resumed.load_state(state)
    asked = first.ask()  # a restart: the run told flat fitness is over
    assert first.restarts != resumed.restarts
    rewound = optimizer(genes=4, population=4, seed=51, restarts="bipop", max_restarts=3)
    rewound.load_state(first.state_before_ask())
    assert np.array_equal(resumed.ask(), asked)
    assert np.array_equal(rewound.ask(), asked)
    assert first.restarts == resumed.restarts == rewound.restarts
    assert len(asked) == first.restarts.population


def test_bipop_runs_small_regimes() -> None:
    """On flat fitness every run lasts one generation: the first (4), a large one (8), then a
    small one while the small regime has used fewer evaluations (4 < 8), of 4 to 8 genomes;
    the large ones double up to population_size x 2^max_restarts, the largest population."""
    strategy = optimizer(genes=4, population=4, restarts="bipop", max_restarts=2)
    seen = []
    for _ in range(6):
        genomes = strategy.ask()
        seen.append((strategy.restarts.regime, len(genomes)))
        strategy.tell(np.ones(len(genomes)))
    assert seen[:2] == [("first", 4), ("large", 8)]
    assert seen[2][0] == "small" and 4 <= seen[2][1] <= 8
    assert [p for r, p in seen if r == "large"][:2] == [8, 16]
    assert JaxCMAESConfig(population_size=4, restarts="bipop", max_restarts=2
                          ).largest_population == 16


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("best_history", np.zeros(5), "optimizer.best_history: (5,) float64, not the best fitness "
                                  "of the run's last 1 generations"),
    ("last_fitness", np.zeros(3), "optimizer.last_fitness: (3,) float64, not the 8 fitness"),
    ("last_fitness", np.zeros(8, dtype=np.int64), "optimizer.last_fitness: (8,) int64"),
    ("population", 12, "optimizer.population: 12, not the population of a first run"),
    ("restart_regime", "small", "optimizer.restart_regime: 'small' after 0 large and 0 small"),
    ("small_restarts", 1, "optimizer.small_restarts: small-population runs are BIPOP's"),
])
def test_hostile_restart_state_is_refused(key: str, value: Any, expected: str) -> None:
    strategy = optimizer(population=8, restarts="ipop", max_restarts=2)
    strategy.tell(-rastrigin(strategy.ask()))  # one generation of the first run
    state = strategy.state()
    assert (state["population"], len(state["last_fitness"])) == (8, 8)
    state[key] = value
    with pytest.raises(ValueError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        optimizer(population=8, restarts="ipop", max_restarts=2).load_state(state)
    del state[key]
    with pytest.raises(KeyError):
        optimizer(population=8, restarts="ipop", max_restarts=2).load_state(state)


def test_a_restarted_run_resumes_exactly(tmp_path: Path) -> None:
    """CartPole cut to one step (every return 1: each run ends after a flat generation): the
    population doubles every generation up to 4 x 2^2, and a run resumed after generation 2
    is the uninterrupted one."""
    config: dict[str, Any] = {
        "environment": "CartPole-v1", "seed": 1, "generations": 5,
        "brain": {"type": "ffnn", "hidden_layers": [2]},
        "optimizer": {"type": "cma-es-jax", "population_size": 4, "restarts": "ipop",
                      "max_restarts": 2},
        "episodes": {"runs": 1, "max_steps": 1},
    }
    whole = api.train(config, out=tmp_path / "whole")
    evaluations = [int(row["evaluations"]) for row in rows(whole.path)]
    assert np.diff([0, *evaluations]).tolist() == [4, 8, 16, 16, 16]
    half = api.train({**config, "generations": 2}, out=tmp_path / "half")
    api.resume(half.path, generations=5)
    assert rows(half.path) == rows(whole.path)
    for name in ("best.npz", "hall_of_fame.npz"):
        left, right = npz(half.path / name), npz(whole.path / name)
        assert all(np.array_equal(left[k], right[k]) for k in left), name
