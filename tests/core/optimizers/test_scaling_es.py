"""The evolution strategies for large genomes: openai-es, pgpe, snes and ars.

Each climbs a 1,000-gene shifted sphere from far away; the shared formulas (centred ranks, NES
utilities, Adam, ClipUp) and each optimizer's update are checked against the published formula
evaluated by hand on a tiny case; a state through a checkpoint file continues exactly; hostile
states and impossible configs are refused naming the key."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import ROOT

from evo_core.cli.main import main
from evo_core.optimizers.ars import ARS, ARSConfig
from evo_core.optimizers.gradient_steps import adam_step, clipup_step, momentum_step
from evo_core.optimizers.openai_es import OpenAIES, OpenAIESConfig
from evo_core.optimizers.pgpe import PGPE, PGPEConfig
from evo_core.optimizers.rank_shaping import centered_ranks, nes_utilities
from evo_core.optimizers.snes import SNES, SNESConfig, paper_population_size

Optimizer = OpenAIES | PGPE | SNES | ARS

GENES = 1000
TARGET = 1.0  # the sphere's optimum: every gene 1, from a centre of 0


def make(name: str, genes: int = GENES, seed: int = 0, **fields: Any) -> Optimizer:
    rng = np.random.default_rng(seed)
    if name == "openai-es":
        return OpenAIES(OpenAIESConfig(**{"population_size": 32, "sigma": 0.1,
                                          "learning_rate": 0.05, **fields}), genes, rng)
    if name == "pgpe":
        return PGPE(PGPEConfig(**{"population_size": 32, "center_learning_rate": 0.5,
                                  **fields}), genes, rng)
    if name == "snes":
        return SNES(SNESConfig(**{"population_size": paper_population_size(genes),
                                  "initial_sigma": 0.2, **fields}), genes, rng)
    return ARS(ARSConfig(**{"population_size": 32, "sigma": 0.1, "learning_rate": 0.05,
                            "top_directions": fields.get("population_size", 32) // 4,
                            **fields}), genes, rng)


NAMES = ["openai-es", "pgpe", "snes", "ars"]


def centre(optimizer: Optimizer) -> np.ndarray:
    mean: np.ndarray = optimizer.state()["mean"]
    return mean


def sphere(genomes: np.ndarray) -> np.ndarray:
    fitness: np.ndarray = -np.sum((genomes - TARGET) ** 2, axis=1)
    return fitness


def generations(optimizer: Optimizer, count: int) -> list[np.ndarray]:
    asked = []
    for _ in range(count):
        genomes = optimizer.ask()
        assert genomes.dtype == np.float64 and genomes.flags.c_contiguous
        optimizer.tell(sphere(genomes))
        asked.append(genomes)
    return asked


# ------------------------------------------------------------------ solving


@pytest.mark.parametrize("name", NAMES)
def test_each_climbs_a_thousand_gene_sphere_from_far_away(name: str) -> None:
    optimizer = make(name)
    start = float(np.sum((centre(optimizer) - TARGET) ** 2))  # 1,000
    generations(optimizer, 300)
    end = float(np.sum((centre(optimizer) - TARGET) ** 2))
    assert end < start / 2.5, (name, start, end)


@pytest.mark.parametrize("name", NAMES)
def test_every_draw_comes_from_the_generator_passed_in(name: str) -> None:
    state = np.random.get_state()[1].copy()
    a, b, c = (generations(make(name, genes=50, seed=seed), 3) for seed in (7, 7, 8))
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[0], c[0])
    assert np.array_equal(np.random.get_state()[1], state)


@pytest.mark.parametrize("name", ["openai-es", "pgpe", "ars"])
def test_mirrored_samples_pair_around_the_centre(name: str) -> None:
    optimizer = make(name, genes=20, population_size=8, initial_mean=0.7)
    genomes = optimizer.ask()
    assert genomes.shape == (8, 20) and np.unique(genomes[:4]).size == 80
    np.testing.assert_allclose(genomes[:4] + genomes[4:], np.full((4, 20), 1.4), atol=1e-12)


# ------------------------------------------------------------------ the formulas by hand


def test_centred_ranks_put_the_worst_at_minus_a_half_and_nan_below_it() -> None:
    # ranks 3, 1, 2, 0 (NaN the worst) of n = 4, divided by n - 1, minus 0.5
    assert np.allclose(centered_ranks(np.array([3.0, 1.0, 2.0, np.nan])),
                       [0.5, -1 / 6, 1 / 6, -0.5])
    # ties: the earlier ranks lower
    assert np.allclose(centered_ranks(np.array([2.0, 2.0, 1.0])), [0.0, 0.5, -0.5])


def test_nes_utilities_are_the_papers() -> None:
    # lambda = 4: max(0, ln 3 - ln k) for k = 1..4 is ln 3, ln 1.5, 0, 0
    raw = [math.log(3), math.log(1.5), 0.0, 0.0]
    by_rank = [r / sum(raw) - 1 / 4 for r in raw]  # best first
    fitness = np.array([0.5, 9.0, -2.0, 3.0])  # ranks (1 the best): 3, 1, 4, 2
    utilities = nes_utilities(fitness)
    assert np.allclose(utilities, [by_rank[2], by_rank[0], by_rank[3], by_rank[1]])
    assert abs(utilities.sum()) < 1e-12


def test_adam_first_step_is_the_learning_rate_times_the_gradients_sign() -> None:
    gradient = np.array([4.0, -0.5, 0.0])
    step, m, v = adam_step(gradient, np.zeros(3), np.zeros(3), 0, 0.1, 0.9, 0.999, 1e-8)
    # m = 0.1 g, v = 0.001 g^2; corrected by 1 - 0.9 and 1 - 0.999: g and g^2
    assert np.allclose(m, 0.1 * gradient) and np.allclose(v, 0.001 * gradient**2)
    assert np.allclose(step, [0.1, -0.1, 0.0])
    # the second step: m = 0.9 m + 0.1 g, corrected by 1 - 0.81
    step, m, _ = adam_step(-gradient, m, v, 1, 0.1, 0.9, 0.999, 1e-8)
    assert np.allclose(m, 0.09 * gradient - 0.1 * gradient)


def test_momentum_step_carries_the_velocity() -> None:
    step, velocity = momentum_step(np.array([1.0, 2.0]), np.array([10.0, 0.0]), 0.5, 0.9)
    assert np.allclose(velocity, [10.0, 2.0]) and np.allclose(step, [5.0, 1.0])


def test_clipup_normalises_the_gradient_and_clips_the_speed() -> None:
    # gradient (3, 4) has length 5: the push is lr (0.6, 0.8)
    step, velocity = clipup_step(np.array([3.0, 4.0]), np.array([0.0, 2.0]), 1.0, 0.5, 1.0)
    unclipped = np.array([0.6, 0.5 * 2.0 + 0.8])  # length 1.897 > max_speed 1
    assert np.allclose(velocity, unclipped / np.linalg.norm(unclipped))
    assert np.allclose(step, velocity) and math.isclose(np.linalg.norm(step), 1.0)
    step, _ = clipup_step(np.array([3.0, 4.0]), np.zeros(2), 0.1, 0.9, 1.0)
    assert np.allclose(step, [0.06, 0.08])  # slower than max_speed: not clipped
    step, _ = clipup_step(np.zeros(2), np.array([0.1, 0.0]), 0.1, 0.5, 1.0)
    assert np.allclose(step, [0.05, 0.0])  # no gradient: the momentum alone


def noise_of(genomes: np.ndarray, mean: np.ndarray, sigma: float | np.ndarray,
             rows: int) -> np.ndarray:
    """The noise rows the first `rows` genomes were drawn with."""
    noise: np.ndarray = (genomes[:rows] - mean) / sigma
    return noise


def test_openai_es_step_is_the_papers_gradient_estimate() -> None:
    optimizer = make("openai-es", genes=3, population_size=6, sigma=0.5, learning_rate=0.2,
                     gradient_optimizer="sgd", momentum=0.0, weight_decay=0.1,
                     initial_mean=1.0)
    mean = centre(optimizer)
    genomes = optimizer.ask()
    eps = noise_of(genomes, mean, 0.5, 3)
    fitness = np.array([5.0, 1.0, 3.0, 0.0, 4.0, 2.0])
    optimizer.tell(fitness)
    shaped = np.array([5, 1, 3, 0, 4, 2]) / 5 - 0.5  # the ranks are the fitnesses here
    gradient = ((shaped[:3] - shaped[3:]) @ eps) / (6 * 0.5) - 0.1 * mean
    np.testing.assert_allclose(centre(optimizer), mean + 0.2 * gradient, rtol=1e-6)


def test_pgpe_updates_centre_and_stdev_as_evojax_does() -> None:
    optimizer = make("pgpe", genes=4, population_size=4, initial_stdev=0.3,
                     stdev_learning_rate=0.5, stdev_max_change=0.2, gradient_optimizer="adam",
                     center_learning_rate=0.1, solution_ranking=False)
    assert isinstance(optimizer, PGPE)
    mean, stdev = centre(optimizer), optimizer.stdev.copy()
    genomes = optimizer.ask()
    eps = noise_of(genomes, mean, stdev, 2)
    fitness = np.array([3.0, -1.0, 1.0, 2.0])  # (f+, f-) pairs: (3, 1), (-1, 2)
    optimizer.tell(fitness)
    # EvoJAX: the centre's gradient is the mean over pairs of (f+ - f-) / 2 * stdev * eps;
    # Adam's first step is the learning rate times its sign
    centre_gradient = np.mean(np.array([[1.0], [-1.5]]) * stdev * eps, axis=0)
    np.testing.assert_allclose(centre(optimizer), mean + 0.1 * np.sign(centre_gradient),
                               rtol=1e-6)
    # the stdev's: the mean over pairs of ((f+ + f-) / 2 - mean f) (s^2 eps^2 - s^2) / s
    baseline = fitness.mean()
    spread = np.array([[2.0 - baseline], [0.5 - baseline]])
    stdev_gradient = np.mean(spread * (stdev**2 * eps**2 - stdev**2) / stdev, axis=0)
    expected = np.clip(stdev + 0.5 * stdev_gradient, 0.8 * stdev, 1.2 * stdev)
    np.testing.assert_allclose(optimizer.stdev, expected, rtol=1e-6)


def test_snes_takes_the_natural_gradient_step() -> None:
    optimizer = make("snes", genes=3, population_size=4, initial_sigma=0.5,
                     center_learning_rate=0.8, sigma_learning_rate=0.3)
    assert isinstance(optimizer, SNES)
    mean, sigma = centre(optimizer), optimizer.sigma.copy()
    genomes = optimizer.ask()
    s = noise_of(genomes, mean, sigma, 4)
    fitness = np.array([0.5, 9.0, -2.0, 3.0])
    optimizer.tell(fitness)
    raw = np.array([math.log(3), math.log(1.5), 0.0, 0.0])
    by_rank = raw / raw.sum() - 0.25
    u = by_rank[[2, 0, 3, 1]]
    np.testing.assert_allclose(centre(optimizer), mean + 0.8 * sigma * (u @ s), rtol=1e-6)
    np.testing.assert_allclose(optimizer.sigma, sigma * np.exp(0.3 / 2 * (u @ (s**2 - 1))),
                               rtol=1e-6)


def test_ars_steps_along_the_top_directions_scaled_by_their_rewards_spread() -> None:
    optimizer = make("ars", genes=2, population_size=6, sigma=0.2, learning_rate=0.3,
                     top_directions=2)
    mean = centre(optimizer)
    genomes = optimizer.ask()
    delta = noise_of(genomes, mean, 0.2, 3)
    # r+ = 1, 5, 2 and r- = 0, 3, 4: max(r+, r-) = 1, 5, 4, so directions 1 and 2
    optimizer.tell(np.array([1.0, 5.0, 2.0, 0.0, 3.0, 4.0]))
    sigma_r = np.std([5.0, 2.0, 3.0, 4.0])  # sqrt(1.25)
    step = 0.3 / (2 * sigma_r) * ((5 - 3) * delta[1] + (2 - 4) * delta[2])
    np.testing.assert_allclose(centre(optimizer), mean + step, rtol=1e-6)


def test_ars_versions_take_the_same_step_and_equal_rewards_take_none() -> None:
    v1, v2 = (make("ars", genes=5, version=version) for version in ("v1", "v2"))
    assert all(np.array_equal(a, b) for a, b in zip(generations(v1, 3), generations(v2, 3),
                                                    strict=True))
    flat = make("ars", genes=5)
    before = centre(flat)
    flat.ask()
    flat.tell(np.full(32, 7.0))
    assert np.array_equal(centre(flat), before)


# ------------------------------------------------------------------ state


def through_a_file(state: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The state as a checkpoint stores it: arrays and numbers in an .npz."""
    np.savez(folder / "state.npz", **state)
    with np.load(folder / "state.npz", allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


@pytest.mark.parametrize("name,fields", [
    ("openai-es", {}), ("openai-es", {"gradient_optimizer": "sgd", "sigma_decay": 0.9,
                                      "sigma_limit": 0.01, "learning_rate_decay": 0.9}),
    ("pgpe", {}), ("pgpe", {"gradient_optimizer": "adam"}),
    ("snes", {}), ("ars", {"sigma_decay": 0.95, "sigma_limit": 0.02})])
def test_state_through_a_file_continues_identically(tmp_path: Path, name: str,
                                                    fields: dict[str, Any]) -> None:
    a = make(name, genes=30, **fields)
    generations(a, 4)
    b = make(name, genes=30, seed=99, **fields)
    b.load_state(through_a_file(a.state(), tmp_path))
    b.rng.bit_generator.state = a.rng.bit_generator.state  # the run's streams restore it
    assert all(np.array_equal(x, y) for x, y in zip(generations(a, 4), generations(b, 4),
                                                    strict=True))
    assert a.state().keys() == b.state().keys()


@pytest.mark.parametrize("name", NAMES)
def test_state_before_ask_is_the_state_that_asks_the_same_genomes(name: str) -> None:
    a = make(name, genes=10)
    generations(a, 2)
    streams = a.rng.bit_generator.state
    before = a.state_before_ask()
    first = a.ask()
    b = make(name, genes=10, seed=5)
    b.load_state(before)
    b.rng.bit_generator.state = streams
    assert np.array_equal(b.ask(), first)


def edited(state: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    copy = dict(state)
    if value is None:
        del copy[key]
    else:
        copy[key] = value
    return copy


HOSTILE: list[tuple[str, dict[str, Any], str, Any, str]] = [
    ("openai-es", {}, "mean", np.zeros(7), "optimizer.mean: (7,) float64"),
    ("openai-es", {}, "mean", np.full(30, np.nan), "optimizer.mean: NaN"),
    ("openai-es", {}, "mean", np.full(30, 1e160), "optimizer.mean: values from which genes"),
    ("openai-es", {}, "adam_v", -np.ones(30), "optimizer.adam_v: negative"),
    ("openai-es", {}, "adam_m", None, "optimizer.adam_m: missing"),
    ("openai-es", {}, "generations", np.int64(-1), "optimizer.generations: -1"),
    ("openai-es", {}, "generations", np.float64(1.5), "optimizer.generations: 1.5"),
    ("openai-es", {}, "generations", np.array(["x"]), "optimizer.generations:"),
    ("openai-es", {"gradient_optimizer": "sgd"}, "velocity", np.full(30, np.inf),
     "optimizer.velocity: NaN or infinite"),
    ("pgpe", {}, "stdev", np.zeros(30), "optimizer.stdev: values outside"),
    ("pgpe", {}, "stdev", np.full(30, 1e160), "optimizer.stdev: values outside"),
    ("pgpe", {}, "stdev", np.ones((2, 30)), "optimizer.stdev: (2, 30)"),
    ("pgpe", {}, "velocity", np.ones(29), "optimizer.velocity: (29,)"),
    ("snes", {}, "sigma", -np.ones(30), "optimizer.sigma: values outside"),
    ("snes", {}, "sigma", np.array([b"x"] * 30), "optimizer.sigma: (30,) |S1"),
    ("snes", {}, "mean", "zeros", "optimizer.mean: str"),
    ("ars", {}, "mean", None, "optimizer.mean: missing"),
]


@pytest.mark.parametrize("name,fields,key,value,said", HOSTILE)
def test_hostile_state_is_refused_naming_the_key_and_changes_nothing(
        name: str, fields: dict[str, Any], key: str, value: Any, said: str) -> None:
    optimizer = make(name, genes=30, **fields)
    generations(optimizer, 2)
    state = optimizer.state()
    with pytest.raises(ValueError, match="^" + said.replace("(", r"\(").replace(")", r"\)")):
        optimizer.load_state(edited(state, key, value))
    after = optimizer.state()
    assert all(np.array_equal(after[k], state[k]) for k in state)


def test_a_long_drift_stays_a_state_that_loads() -> None:
    """A stdev shrinking 20% a generation underflows after 3,200 generations; the update keeps
    it at the smallest float64 step size, which a resume reads."""
    optimizer = make("pgpe", genes=4, population_size=4, stdev_learning_rate=1e6,
                     initial_stdev=1e-300)
    assert isinstance(optimizer, PGPE)
    for _ in range(40):
        genomes = optimizer.ask()
        optimizer.tell(np.abs(genomes).sum(axis=1))  # rewards spread: shrinks the stdev
    assert np.all(optimizer.stdev > 0)
    make("pgpe", genes=4, population_size=4).load_state(optimizer.state())


def test_tell_refuses_a_wrong_count_and_tell_without_ask() -> None:
    optimizer = make("pgpe", genes=3)
    with pytest.raises(RuntimeError, match="tell\\(\\) without ask\\(\\)"):
        optimizer.tell(np.zeros(32))
    optimizer.ask()
    with pytest.raises(ValueError, match="tell\\(\\) got \\(31,\\) fitness values for 32"):
        optimizer.tell(np.zeros(31))


# ------------------------------------------------------------------ config refusals

CARTPOLE: dict[str, Any] = {
    "environment": "CartPole-v1", "seed": 2, "generations": 2,
    "brain": {"type": "ffnn", "hidden_layers": []}, "episodes": {"runs": 1, "max_steps": 20}}

REFUSED: dict[str, tuple[dict[str, Any], list[str]]] = {
    "openai-es odd population": ({"type": "openai-es", "population_size": 7},
                                 ["population_size = 7 is odd", "use 8"]),
    "pgpe odd population": ({"type": "pgpe", "population_size": 9},
                            ["population_size = 9 is odd", "use 10"]),
    "ars top directions": ({"type": "ars", "population_size": 8, "top_directions": 5},
                           ["top_directions = 5 is more than the 4 directions",
                            "raise population_size to 10"]),
    "openai-es sigma overflows": ({"type": "openai-es", "population_size": 8, "sigma": 1e300},
                                  ["sigma = 1e+300", "largest sigma allowed"]),
    "openai-es sigma too small for the gradient": (
        {"type": "openai-es", "population_size": 8, "sigma": 1e-200},
        ["sigma = 1e-200", "the gradient estimate divides by it", "smallest sigma allowed"]),
    "openai-es decaying to nothing": (
        {"type": "openai-es", "population_size": 8, "sigma_decay": 0.99},
        ["sigma_limit = 0 is not a step size", "sigma_decay < 1"]),
    "ars limit above sigma": ({"type": "ars", "population_size": 8, "sigma": 0.01,
                               "sigma_limit": 0.1, "sigma_decay": 0.9},
                              ["sigma_limit = 0.1 is above sigma = 0.01"]),
    "ars learning rate limit above it": (
        {"type": "ars", "population_size": 8, "learning_rate_limit": 1.0},
        ["learning_rate_limit = 1 is above learning_rate = 0.01"]),
    "pgpe stdev overflows": ({"type": "pgpe", "population_size": 8, "initial_stdev": 1e200},
                             ["initial_stdev = 1e+200", "largest initial_stdev allowed"]),
    "pgpe stdev max change 1": ({"type": "pgpe", "population_size": 8,
                                 "stdev_max_change": 1.0}, ["stdev_max_change", "less than 1"]),
    "ars v2 without the normaliser": (
        {"type": "ars", "population_size": 8, "version": "v2"},
        ['optimizer.version = "v2" normalises observations',
         'episodes.observation_normalization = \"running\"']),
    "snes sigma and mean": ({"type": "snes", "population_size": 8, "initial_sigma": 1e150,
                             "initial_mean": 1e151},
                            ["initial_sigma = 1e+150", "with initial_mean = 1e+151"]),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_an_impossible_config_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          case: str) -> None:
    table, fragments = REFUSED[case]
    config = tmp_path / "c.json"
    config.write_text(json.dumps({**CARTPOLE, "optimizer": table}))
    out = tmp_path / "run"
    assert main(["train", str(config), "--out", str(out), "--quiet"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evo: "), lines
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert not out.exists()


def test_ars_v2_trains_with_the_running_normaliser(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({
        **CARTPOLE, "optimizer": {"type": "ars", "population_size": 8, "version": "v2"},
        "episodes": {**CARTPOLE["episodes"], "observation_normalization": "running"}}))
    assert main(["train", str(config), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    with np.load(tmp_path / "run" / "checkpoint.npz", allow_pickle=False) as data:
        assert data["observations.count"] > 0


# ------------------------------------------------------------------ through a run's checkpoint

CHECKPOINT_EDITS: dict[str, tuple[str, Any, str]] = {
    "zero stdev": ("optimizer.stdev", lambda a: np.zeros_like(a), "optimizer.stdev: values"),
    "NaN velocity": ("optimizer.velocity", lambda a: np.full_like(a, np.nan),
                     "optimizer.velocity: NaN"),
    "negative count": ("optimizer.generations", lambda a: np.int64(-2),
                       "optimizer.generations: -2"),
}


@pytest.fixture(scope="module")
def pgpe_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pgpe")
    (folder / "c.json").write_text(json.dumps(
        {**CARTPOLE, "optimizer": {"type": "pgpe", "population_size": 6}}))
    assert main(["train", str(folder / "c.json"), "--out", str(folder / "run"), "--quiet"]) == 0
    return folder / "run"


@pytest.mark.parametrize("edit", sorted(CHECKPOINT_EDITS))
def test_an_edited_checkpoint_state_is_one_line_naming_the_key(
        pgpe_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: str) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(pgpe_run, run)
    key, change, said = CHECKPOINT_EDITS[edit]
    with np.load(run / "checkpoint.npz", allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    assert arrays["optimizer.generations"] == 2  # a count, stored as a number
    arrays[key] = change(arrays[key])
    (run / "checkpoint.npz").unlink()
    np.savez(run / "checkpoint.npz", **arrays)
    assert main(["resume", str(run), "--generations", "3", "--quiet"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and str(run / "checkpoint.npz") in lines[0] and said in lines[0], lines


def test_the_docs_tables_are_valid_optimizer_tables() -> None:
    """docs/evolution-strategies.md's `[optimizer]` tables (EvoJAX's cart-pole settings among
    them) validate as written."""
    import re
    import tomllib

    from evo_core.config import validate_config
    from evo_core.hooks.discovery import get_registry

    text = (ROOT / "docs" / "evolution-strategies.md"
            ).read_text()
    tables = re.findall(r"```toml\n(.*?)```", text, flags=re.S)
    assert len(tables) == 4
    for block in tables:
        validate_config({**CARTPOLE, **tomllib.loads(block)}, get_registry(), "docs")
