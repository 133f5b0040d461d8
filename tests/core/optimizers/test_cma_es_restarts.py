"""CMA-ES's IPOP and BIPOP restarts (`optimizer.restarts`): restarts happen when pycma's
criteria end a run, IPOP doubles the population and finds better optima of Rastrigin's function
than one run within the same evaluations, BIPOP's schedule is Hansen's, the state round trip
asks the same genomes, hostile state is refused naming the key, the memory check holds the
machine to the largest population, and an `evo train` whose population grows resumes exactly
after an interrupt."""

from __future__ import annotations

import json
import math
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import evo_process, fitness_rows, npz, wait_for_rows
from numpy.typing import NDArray

from evo_core.authoring.memory import check_population_fits
from evo_core.authoring.restarts import RestartRule, Restarts, next_run, restarts_state
from evo_core.cli.main import main
from evo_core.config import validate_config
from evo_core.errors import UserError
from evo_core.hooks.discovery import get_registry
from evo_core.optimizers.cma_es import CMAES, CMAESConfig

FloatArray = NDArray[np.float64]


def rastrigin(genomes: FloatArray) -> FloatArray:
    values: FloatArray = 10 * genomes.shape[1] + (
        genomes ** 2 - 10 * np.cos(2 * np.pi * genomes)).sum(axis=1)
    return values


def optimizer(restarts: str = "ipop", population: int = 10, genes: int = 10, seed: int = 0,
              **fields: Any) -> CMAES:
    config = CMAESConfig(population_size=population, sigma=2.56, restarts=restarts, **fields)
    return CMAES(config, genes, np.random.default_rng(seed))


def minimise(strategy: CMAES, objective: Any, evaluations: int) -> tuple[float, list[int]]:
    """The best value found within `evaluations`, and the population of every generation."""
    used, best, populations = 0, math.inf, []
    while used < evaluations:
        genomes = strategy.ask()
        values = objective(genomes)
        strategy.tell(-values)
        used += len(genomes)
        best = min(best, float(values.min()))
        populations.append(len(genomes))
    return best, populations


def test_ipop_restarts_double_the_population_and_beat_one_run_on_rastrigin() -> None:
    """Rastrigin in 10 genes within ±5.12, population 10: one run stops in a local optimum;
    IPOP's restarts (pycma's criteria ended each run) find a better one in the same 10,000
    evaluations, each with twice the population of the run before."""
    single, single_populations = minimise(optimizer("none"), rastrigin, 10_000)
    restarted = optimizer("ipop")
    best, populations = minimise(restarted, rastrigin, 10_000)
    assert set(single_populations) == {10}
    runs = list(dict.fromkeys(populations))  # each run's population, in order
    assert len(runs) >= 2 and runs == [10 * 2**k for k in range(len(runs))]
    assert restarted.restarts.large == len(runs) - 1
    assert best < single - 1.5, (best, single)


def flat(genomes: FloatArray) -> FloatArray:
    """Equal fitness: pycma's tolflatfitness ends every run after its first generation."""
    return np.ones(len(genomes))


def test_bipop_alternates_its_regimes_by_their_budgets() -> None:
    """On flat fitness every run lasts one generation: BIPOP runs the large regime (doubling)
    while the small one has used at least as many evaluations, the first run counted as small;
    a small run's population lies between the first's and the last large one's. The budgets it
    keeps are the sums of its generations' populations."""
    strategy = optimizer("bipop", population=4, max_restarts=4)
    used = {"small": 0, "large": 0}
    last_large = 4
    for _ in range(30):
        regime = "large" if strategy.restarts.regime == "large" else "small"
        before = strategy.restarts
        population = len(strategy.ask())
        strategy.tell(np.ones(population))
        used[regime] += population
        after = strategy.restarts
        if after == before:  # no restart left: the last run goes on
            assert before.large == 4
            break
        assert (after.evaluations_small, after.evaluations_large) == (used["small"],
                                                                      used["large"])
        if used["small"] < used["large"]:
            assert after.regime == "small" and 4 <= after.population <= last_large
        else:
            assert after.regime == "large" and after.population == 2 * last_large
            last_large = after.population
    assert strategy.restarts.large == 4 and strategy.restarts.small >= 3
    assert len(strategy.ask()) == strategy.restarts.population


def test_next_run_follows_hansens_formulas() -> None:
    """The small regime's lambda_s = floor(lambda_0 (lambda_l / lambda_0)^(U^2)) and
    sigma_s = sigma 10^(-2 U'), for at most half the large regime's evaluations; the mean
    uniform within initial_mean ± 2 sigma; no restart beyond max_restarts."""
    rule = RestartRule("bipop", population=10, sigma=0.5, initial_mean=1.0, max_restarts=3)
    current = Restarts(population=40, regime="large", large=2, small=0,
                       evaluations_large=1000, evaluations_small=1500)
    rng = np.random.default_rng(7)
    u, u_sigma = np.random.default_rng(7).random(2)
    after = next_run(rule, current, 800, 6, rng)  # the large regime: 1800 against 1500
    assert after is not None
    restarts, run = after
    expected = math.floor(10 * 4.0 ** (u ** 2))
    assert restarts == Restarts(expected, "small", 2, 1, 1800, 1500)
    assert run.population == expected
    assert run.sigma == pytest.approx(0.5 * 10 ** (-2 * u_sigma))
    assert run.max_generations == pytest.approx(0.5 * 1800 / expected)
    assert run.mean.shape == (6,) and (np.abs(run.mean - 1.0) <= 1.0).all()
    # the small regime used more: the next run is large, IPOP's doubling of the last large one
    after = next_run(rule, restarts, 400, 6, rng)
    assert after is not None
    assert after[0] == Restarts(80, "large", 3, 1, 1800, 1900)
    assert (after[1].population, after[1].sigma, after[1].max_generations) == (80, 0.5, None)
    assert next_run(rule, after[0], 900, 6, rng) is None  # max_restarts spent
    ipop = RestartRule("ipop", 10, 0.5, 0.0, 3)
    first = next_run(ipop, Restarts(10), 10, 6, rng)
    assert first is not None and first[0] == Restarts(20, "large", 1, 0, 0, 10)


def test_state_round_trip_asks_the_same_genomes() -> None:
    """After a restart (population 20) the state, loaded into an optimizer of another seed,
    asks the same genomes; so does the state from before an ask, and the next restarts follow
    alike."""
    first = optimizer("ipop", seed=3)
    while first.restarts.large == 0:
        genomes = first.ask()
        first.tell(-rastrigin(genomes))
    state = first.state()
    assert (state["restart_regime"], state["large_restarts"], state["population"]) == (
        "large", 1, 20)
    resumed = optimizer("ipop", seed=99)
    resumed.load_state(state)
    asked = first.ask()
    assert asked.shape == (20, 10)
    rewound = optimizer("ipop", seed=98)
    rewound.load_state(first.state_before_ask())
    assert np.array_equal(resumed.ask(), asked)
    assert np.array_equal(rewound.ask(), asked)
    for strategy in (first, resumed, rewound):
        strategy.tell(-rastrigin(asked))
    for _ in range(300):
        genomes = first.ask()
        assert np.array_equal(resumed.ask(), genomes)
        first.tell(-rastrigin(genomes))
        resumed.tell(-rastrigin(genomes))
    assert first.restarts == resumed.restarts and first.restarts.large >= 2


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("population", 30, "optimizer.population: 30, not the population of a large run"),
    ("population", "20", "optimizer.population: '20', not a count"),
    ("large_restarts", 10, "optimizer.large_restarts: 10, more than optimizer.max_restarts"),
    ("large_restarts", -1, "optimizer.large_restarts: -1, not a count"),
    ("restart_regime", "huge", "optimizer.restart_regime: 'huge', not first, large or small"),
    ("restart_regime", "first", "optimizer.restart_regime: 'first' after 1 large"),
    ("small_restarts", 1, "optimizer.small_restarts: small-population runs are BIPOP's"),
    ("evaluations_small", True, "optimizer.evaluations_small: True, not a count"),
])
def test_hostile_restart_state_is_refused_naming_the_key(key: str, value: Any,
                                                          expected: str) -> None:
    strategy = optimizer("ipop", population=4, max_restarts=3)
    strategy.tell(flat(strategy.ask()))  # a restart: population 8
    state = strategy.state()
    state[key] = value
    with pytest.raises(ValueError, match=expected.replace("(", r"\(")):
        optimizer("ipop", population=4, max_restarts=3).load_state(state)
    del state[key]
    with pytest.raises(KeyError):
        optimizer("ipop", population=4, max_restarts=3).load_state(state)


def test_a_population_the_strategy_does_not_sample_is_refused() -> None:
    """Consistent counts of another moment beside the signed strategy: refused after the
    signature is checked, naming the field."""
    strategy = optimizer("ipop", population=4, max_restarts=3)
    before = strategy.state()
    strategy.tell(flat(strategy.ask()))
    counts = restarts_state(strategy.restarts)
    mixed = {**before, **counts}  # the strategy of population 4, the counts of population 8
    assert counts["population"] == 8
    with pytest.raises(ValueError, match=r"optimizer.population: 8, but the strategy samples 4"):
        optimizer("ipop", population=4, max_restarts=3).load_state(mixed)


def config(**optimizer_fields: Any) -> dict[str, Any]:
    return {"environment": "CartPole-v1", "seed": 2, "generations": 8,
            "brain": {"type": "ffnn", "hidden_layers": [2]},
            "optimizer": {"type": "cma-es", "population_size": 4, **optimizer_fields},
            "episodes": {"runs": 1, "max_steps": 1}}


@pytest.mark.parametrize(("fields", "expected"), [
    ({"max_restarts": 3}, 'max_restarts is set but restarts = "none"; set restarts = "ipop" '
                          'or "bipop", or remove max_restarts'),
    ({"restarts": "ipop", "mu": 2}, "mu (2) is fixed but restarts = 'ipop' change the "
                                    "population; remove mu"),
    ({"restarts": "ipop", "max_restarts": 0}, "optimizer.max_restarts"),
    ({"restarts": "ipopp"}, "optimizer.restarts"),
])
def test_restart_settings_are_checked_in_one_line(fields: dict[str, Any], expected: str) -> None:
    with pytest.raises(UserError) as raised:
        validate_config(config(**fields), get_registry(), "c.json")
    message = str(raised.value)
    assert expected in message and "\n" not in message, message


def test_the_memory_check_holds_the_largest_population(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    check_population_fits(4, 1000, available=3 * 8 * 4 * 1000 * 2**3, largest=4 * 2**3,
                          growth="g")
    with pytest.raises(UserError, match=r"optimizer.population_size = 4 grows to 32 genomes a "
                                        r"generation with g, which needs about"):
        check_population_fits(4, 1000, available=3 * 8 * 4 * 1000 * 2**3 - 1, largest=32,
                              growth="g")
    import evo_core.machine

    monkeypatch.setattr(evo_core.machine, "machine_memory", lambda: 24 * 2**30)
    (tmp_path / "c.json").write_text(json.dumps(config(restarts="bipop", max_restarts=30)))
    out = tmp_path / "run"
    assert main(["train", str(tmp_path / "c.json"), "--quiet", "--out", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert ("optimizer.population_size = 4 grows to 4294967296 genomes a generation with "
            "optimizer.restarts = 'bipop' with max_restarts = 30, which needs about") in lines[0]
    assert "lower those settings" in lines[0] and not out.exists()


def evaluations_per_generation(run: Path) -> list[int]:
    rows = fitness_rows(run)
    header = (run / "log.csv").read_text().splitlines()[0].split(",")
    column = header.index("evaluations")
    totals = [int(row[column]) for row in rows]
    return [b - a for a, b in zip([0, *totals], totals)]


@pytest.mark.slow
def test_a_growing_population_trains_and_resumes_after_an_interrupt(tmp_path: Path) -> None:
    """CartPole cut to one step: every candidate's return is 1, pycma's tolflatfitness ends each
    run, and IPOP doubles the population each generation up to 4 x 2^3. Interrupted (SIGINT)
    in a generation and resumed, the run is the uninterrupted one."""
    data = config(restarts="ipop", max_restarts=3)
    data["episodes"]["runs"] = 100  # generations slow enough to be interrupted
    (tmp_path / "c.json").write_text(json.dumps(data))
    whole = tmp_path / "whole"
    assert main(["train", str(tmp_path / "c.json"), "--quiet", "--out", str(whole)]) == 0
    assert evaluations_per_generation(whole) == [4, 8, 16, 32, 32, 32, 32, 32]
    checkpoint = json.loads(npz(whole / "checkpoint.npz")["meta"].tobytes())["optimizer"]
    assert (checkpoint["large_restarts"], checkpoint["population"]) == (3, 32)

    interrupted = tmp_path / "interrupted"
    process = evo_process("train", str(tmp_path / "c.json"), "--quiet", "--out",
                          str(interrupted))
    wait_for_rows(interrupted, 2, process)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    generation = json.loads(npz(interrupted / "checkpoint.npz")["meta"].tobytes())["generation"]
    assert 2 <= generation < 8
    assert main(["resume", str(interrupted), "--quiet"]) == 0
    assert fitness_rows(interrupted) == fitness_rows(whole)
    for name in ("best.npz", "hall_of_fame.npz"):
        left, right = npz(interrupted / name), npz(whole / name)
        assert left.keys() == right.keys()
        assert all(np.array_equal(left[k], right[k]) for k in left), name
