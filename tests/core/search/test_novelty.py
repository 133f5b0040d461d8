"""Novelty search and fitness shaping: distances, the archive, ranks, what the optimizer is told
versus what the run reports, resume and handlers, and migrating the predecessor's section."""

from __future__ import annotations

import bz2
import csv
import json
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from behaviour_envs import ScriptedTemplate
from conftest import FITNESS, ROOT, npz, run_evo

from evo_core.api import Run
from evo_core.cli.main import main
from evo_core.config.behaviour import AdaptiveThresholdConfig, BehaviourConfig, NoveltyConfig
from evo_core.config.migrate import migrate_config
from evo_core.config.schema import EpisodesConfig, validate_config
from evo_core.errors import UserError
from evo_core.evaluation.episodes import RunnerSpec
from evo_core.handlers.mp import MPConfig, MPHandler
from evo_core.handlers.sequential import SequentialConfig, SequentialHandler
from evo_core.hooks.discovery import get_registry
from evo_core.optimizers.cma_es import CMAES
from evo_core.running.config_checks import check_descriptor_tables
from evo_core.running.seeding import Streams
from evo_core.search import shaping
from evo_core.search.distances import (
    compressed_size,
    compression,
    equality,
    euclidean,
    mean_absolute,
)
from evo_core.search.novelty import NoveltyArchive
from evo_core.search.shaping import average_ranks, shaped_scores

PREDECESSOR = ROOT / "tests" / "data" / "predecessor"


# ----------------------------------------------------------------- distances


def test_euclidean_and_equality_on_hand_values() -> None:
    a = np.array([[0.0, 0.0, 1.0], [3.0, 4.0, 1.0]])
    b = np.array([[3.0, 4.0, 1.0], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    assert euclidean(a, b).tolist() == [[5.0, 0.0, 1.0], [0.0, 5.0, np.sqrt(18.0)]]
    assert equality(a, b).tolist() == [[2.0, 0.0, 1.0], [0.0, 2.0, 2.0]]


def test_mean_absolute_is_the_releases_distance() -> None:
    """Lehman and Stanley's release records (x, y, x, y) and averages |differences|: on a
    final (x, y) that is half the city-block distance."""
    a = np.array([[0.0, 0.0], [3.0, -4.0]])
    assert mean_absolute(a, a[::-1]).tolist() == [[3.5, 0.0], [0.0, 3.5]]
    assert archive(distance="mean-absolute", k=1).novelty(a).tolist() == [3.5, 3.5]


def test_euclidean_is_exact_for_identical_descriptors() -> None:
    x = np.random.default_rng(0).normal(size=(3, 50)) * 1e3
    assert (np.diag(euclidean(x, x)) == 0.0).all()


def test_compression_distance_follows_its_formula() -> None:
    a, b = np.arange(8.0), np.array([1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0])

    def size(data: bytes) -> int:
        return len(bz2.compress(data, 1))

    ca, cb, cab = size(a.tobytes()), size(b.tobytes()), size(a.tobytes() + b.tobytes())
    assert compressed_size(a) == ca
    expected = (cab - min(ca, cb)) / max(ca, cb)
    assert compression(a[None], b[None]).tolist() == [[expected]]
    assert 0 < expected < 1.2


# ----------------------------------------------------------------- the archive


def archive(**settings: Any) -> NoveltyArchive:
    return NoveltyArchive(NoveltyConfig(**settings), np.random.default_rng(5))


def kept(search: NoveltyArchive) -> list[list[float]]:
    assert search.descriptors is not None
    descriptors: list[list[float]] = search.descriptors.tolist()
    return descriptors


def test_novelty_is_the_mean_distance_to_the_k_nearest_of_archive_and_others() -> None:
    search = archive(k=2, insertion="threshold", threshold=100.0)
    search.descriptors = np.array([[0.0], [10.0]])
    novelty = search.novelty(np.array([[1.0], [2.0], [4.0]]))
    # 1: {0:1, 10:9, 2:1, 4:3} -> 1;  2: {2, 8, 1, 2} -> 1.5;  4: {4, 6, 3, 2} -> 2.5
    assert novelty.tolist() == [1.0, 1.5, 2.5]


def test_k_shrinks_to_what_there_is_and_a_candidate_is_not_its_own_neighbour() -> None:
    search = archive(k=10)
    assert search.novelty(np.array([[0.0], [3.0]])).tolist() == [3.0, 3.0]
    assert search.novelty(np.array([[1.0, 1.0]])).tolist() == [0.0]  # nothing to compare


def test_random_insertion_draws_distinct_candidates_from_the_seeded_stream() -> None:
    search = archive(per_generation=3, archive_size=100)
    population = np.arange(20.0).reshape(10, 2)
    search.insert(population, np.zeros(10))
    chosen = np.random.default_rng(5).choice(10, size=3, replace=False)
    assert kept(search) == population[chosen].tolist()
    assert len(set(chosen.tolist())) == 3


def test_threshold_insertion_and_the_bound_drop_the_oldest() -> None:
    search = archive(insertion="threshold", threshold=1.0, archive_size=3)
    search.insert(np.array([[1.0], [2.0], [3.0]]), np.array([0.5, 2.0, 1.5]))
    assert kept(search) == [[2.0], [3.0]]
    search.insert(np.array([[7.0], [8.0]]), np.array([1.0, 5.0]))  # 1.0 is not above
    assert kept(search) == [[2.0], [3.0], [8.0]]
    search.insert(np.array([[9.0], [10.0]]), np.array([4.0, 5.0]))
    assert kept(search) == [[8.0], [9.0], [10.0]]


def test_compression_archive_reuses_sizes_and_survives_its_state() -> None:
    search = archive(distance="compression", per_generation=2)
    population = np.random.default_rng(1).integers(0, 3, size=(4, 16)).astype(np.float64)
    search.insert(population, np.zeros(4))
    before = search.novelty(population)
    again = archive(distance="compression", per_generation=2)
    again.load_state(search.state())
    assert np.array_equal(again.novelty(population), before)


def test_a_damaged_archive_is_refused() -> None:
    search = archive(archive_size=2)
    for bad in ({}, {"archive": np.zeros((3, 2))}, {"archive": np.full((1, 2), np.nan)},
                {"archive": np.zeros(4)}):
        with pytest.raises((KeyError, ValueError)):
            search.load_state(bad)


# ----------------------------------------------------------------- the adaptive threshold

#: small factors that double and halve exactly, so every threshold below is exact
ADAPTIVE = {"raise_above": 2, "raise_by": 2.0, "lower_after": 3, "lower_by": 0.5, "floor": 0.3}


def adaptive(**rule: Any) -> NoveltyArchive:
    return archive(insertion="threshold", threshold=1.0, archive_size=100,
                   adaptive_threshold=ADAPTIVE | rule)


def generation(search: NoveltyArchive, joining: int) -> float:
    """One generation of five candidates of which `joining` exceed the threshold (the others
    equal it, which is not above); the threshold after it."""
    assert search.threshold is not None
    novelty = np.full(5, search.threshold)
    novelty[:joining] += 1.0
    search.insert(np.arange(5.0)[:, None], novelty)
    return search.threshold


def test_the_published_rule_is_the_default() -> None:
    assert AdaptiveThresholdConfig().model_dump() == {
        "raise_above": 4, "raise_by": 1.2, "lower_after": 10, "lower_by": 0.95, "floor": 0.25}


def test_adaptive_threshold_rises_lowers_after_empty_generations_and_stops_at_the_floor() -> None:
    search = adaptive()
    assert [generation(search, n) for n in (3, 2, 5)] == [2.0, 2.0, 4.0]  # more than 2 raise
    assert search.size == 10
    # two empty generations, then one with an addition: the count starts again
    assert [generation(search, n) for n in (0, 0, 1)] == [4.0, 4.0, 4.0] and search.idle == 0
    # the third empty generation in a row lowers it, and the count starts again
    assert [generation(search, 0) for _ in range(3)] == [4.0, 4.0, 2.0] and search.idle == 0
    assert [generation(search, 0) for _ in range(6)] == [2.0, 2.0, 1.0, 1.0, 1.0, 0.5]
    assert [generation(search, 0) for _ in range(6)] == [0.5] * 2 + [0.3] * 4  # not 0.25
    assert search.idle == 0 and search.size == 11


def test_nearest_insertion_measures_the_archive_as_it_grows_in_population_order() -> None:
    """threshold_of = "nearest": distance to the nearest archived descriptor, not novelty;
    a candidate near one that joined before it in the same generation stays out."""
    search = archive(insertion="threshold", threshold=2.0, threshold_of="nearest")
    search.insert(np.array([[0.0], [1.0], [5.0], [6.5], [9.0]]), np.zeros(5))
    # into an empty archive 0 joins; 1 is 1 from it; 5 joins; 6.5 is 1.5 from 5; 9 joins
    assert kept(search) == [[0.0], [5.0], [9.0]]
    search.insert(np.array([[2.5], [7.0], [2.0], [30.0]]), np.full(4, 100.0))
    # novelty (100) is not what counts: 2.5 is 2.5 from 0 and 5; 7 is 2 (not above); 2.0 is
    # 0.5 from 2.5, which joined before it
    assert kept(search) == [[0.0], [5.0], [9.0], [2.5], [30.0]]


def test_threshold_of_is_unsaid_at_its_default_and_refused_with_the_random_rule() -> None:
    assert "threshold_of" not in NoveltyConfig().model_dump(mode="json")
    assert NoveltyConfig(insertion="threshold", threshold=1.0, threshold_of="nearest"
                         ).model_dump(mode="json")["threshold_of"] == "nearest"
    data = {"environment": "CartPole-v1", "generations": 1, "brain": {"type": "ffnn"},
            "optimizer": {"type": "cma-es", "population_size": 2},
            "behaviour": {"source": "action", "max_length": 2},
            "novelty": {"threshold_of": "nearest"}}
    with pytest.raises(UserError, match=r"^c.toml: novelty.threshold_of: used only with "
                                        r"insertion = \"threshold\""):
        validate_config(data, get_registry(), "c.toml")


def test_a_fixed_threshold_stays_and_writes_what_it_always_wrote() -> None:
    """Without the table the config.json and the checkpoint of a run are as before the table
    existed, so runs made before it still resume."""
    config = NoveltyConfig(insertion="threshold", threshold=1.0, archive_size=100)
    assert "adaptive_threshold" not in config.model_dump(mode="json")
    search = NoveltyArchive(config, np.random.default_rng(5))
    assert [generation(search, 5) for _ in range(2)] + [generation(search, 0) for _ in range(12)] \
        == [1.0] * 14
    assert set(search.state()) == {"archive"}


@pytest.mark.parametrize(("novelty", "message"), [
    ({"adaptive_threshold": {}},
     "novelty.adaptive_threshold: used only with insertion = \"threshold\"; remove the table or "
     "set insertion = \"threshold\""),
    ({"insertion": "threshold", "threshold": 0.2, "adaptive_threshold": {}},
     "novelty.adaptive_threshold: floor = 0.25 is above threshold = 0.2, where the threshold "
     "starts; lower floor or raise threshold"),
    ({"insertion": "threshold", "threshold": 6.0, "adaptive_threshold": {"lower_by": 1.5}},
     "novelty.adaptive_threshold.lower_by: "),
    ({"insertion": "threshold", "threshold": 6.0, "adaptive_threshold": {"raise_by": 0.5}},
     "novelty.adaptive_threshold.raise_by: "),
    ({"insertion": "threshold", "threshold": 6.0, "adaptive_threshold": {"floor": 0}},
     "novelty.adaptive_threshold.floor: "),
    ({"insertion": "threshold", "threshold": 6.0, "adaptive_threshold": {"lower_after": 0}},
     "novelty.adaptive_threshold.lower_after: "),
    ({"insertion": "threshold", "threshold": 6.0, "adaptive_threshold": {"lower_every": 5}},
     "novelty.adaptive_threshold.lower_every: "),
])
def test_adaptive_threshold_mistakes_are_one_line(novelty: dict[str, Any], message: str) -> None:
    data = {"environment": "CartPole-v1", "generations": 1, "brain": {"type": "ffnn"},
            "optimizer": {"type": "cma-es", "population_size": 2},
            "behaviour": {"source": "action", "max_length": 2}, "novelty": novelty}
    with pytest.raises(UserError) as caught:
        validate_config(data, get_registry(), "c.toml")
    assert str(caught.value).startswith(f"c.toml: {message}"), caught.value
    assert "\n" not in str(caught.value)


def test_adaptive_threshold_survives_its_state_and_an_old_state_starts_it_afresh() -> None:
    search = adaptive()
    for joining in (3, 0, 0):
        generation(search, joining)
    state = search.state()
    assert state["threshold"].tolist() == 2.0 and state["idle"].tolist() == 2
    again = adaptive()
    again.load_state(state)
    # the third empty generation lowers both alike: the count came along
    assert generation(again, 0) == generation(search, 0) == 1.0
    assert again.idle == search.idle == 0 and kept(again) == kept(search)
    old = adaptive()  # a checkpoint written before the rule existed: the archive alone
    old.load_state({"archive": state["archive"]})
    assert old.threshold == 1.0 and old.idle == 0 and kept(old) == state["archive"].tolist()


@pytest.mark.parametrize("damage", [
    {"threshold": np.array(np.nan)}, {"threshold": np.array(np.inf)},
    {"threshold": np.array(-1.0)}, {"threshold": np.array(0.2)},  # below the floor, 0.3
    {"threshold": np.array(2.0, dtype=np.float32)}, {"threshold": np.array([2.0])},
    {"threshold": np.array(2)}, {"idle": np.array(-1)}, {"idle": np.array(3)},  # lower_after
    {"idle": np.array(1.0)}, {"idle": np.array([1])}, {"idle": None}, {"threshold": None},
])
def test_a_damaged_adaptive_threshold_is_refused(damage: dict[str, Any]) -> None:
    search = adaptive()
    generation(search, 3)
    state = search.state() | damage
    state = {key: value for key, value in state.items() if value is not None}
    fresh = adaptive()
    with pytest.raises(ValueError, match="novelty threshold"):
        fresh.load_state(state)
    assert fresh.threshold == 1.0 and fresh.descriptors is None  # nothing half-loaded
    fixed = archive(insertion="threshold", threshold=1.0, archive_size=100)
    with pytest.raises(ValueError, match="no adaptive_threshold table"):
        fixed.load_state(search.state())


# ----------------------------------------------------------------- shaping


def test_average_ranks_share_ties() -> None:
    assert average_ranks(np.array([3.0, 1.0, 3.0, 2.0])).tolist() == [3.5, 1.0, 3.5, 2.0]
    assert average_ranks(np.array([5.0, 5.0, 5.0])).tolist() == [2.0, 2.0, 2.0]
    assert average_ranks(np.array([np.nan, 0.0])).tolist() == [1.0, 2.0]


def test_shaped_score_on_a_hand_example_with_ties() -> None:
    fitness = np.array([10.0, 10.0, 0.0, 5.0])
    novelty = np.array([0.1, 0.4, 0.4, 0.2])
    steps = np.array([100, 50, 50, 20])
    # fitness ranks 3.5 3.5 1 2; novelty ranks 1 3.5 3.5 2; steps ranks (fewer higher) 1 2.5 2.5 4
    scores = shaped_scores(fitness, steps, novelty, novelty_weight=0.5, efficiency_weight=2.0)
    assert scores.tolist() == [3.5 + 0.5 + 2.0, 3.5 + 1.75 + 5.0, 1 + 1.75 + 5.0, 2 + 1 + 8.0]
    assert shaped_scores(fitness, steps, None, 0.5, 0.0).tolist() == [3.5, 3.5, 1.0, 2.0]


# ----------------------------------------------------------------- training


def write_config(path: Path, generations: int = 3, **tables: Any) -> Path:
    config = {"environment": "CartPole-v1", "seed": 7, "generations": generations,
              "brain": {"type": "ffnn", "hidden_layers": [3]},
              "optimizer": {"type": "cma-es", "population_size": 8},
              "episodes": {"runs": 2, "max_steps": 20, "seed_per": "candidate"},
              "behaviour": {"source": "observation", "interval": 5, "max_length": 4},
              "novelty": {"k": 3, "per_generation": 3, "archive_size": 7},
              "fitness_shaping": {"efficiency_weight": 0.5}}
    config.update(tables)
    path.write_text(json.dumps(config))
    return path


def log_rows(run: Path) -> list[dict[str, str]]:
    with open(run / "log.csv", newline="") as handle:
        return [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(handle)]


def test_told_shaped_score_reported_raw_fitness_and_exact_resume(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One run watched: the optimizer gets ranks, log/best/hall of fame get raw returns. A
    second run trained to 2 and resumed to 3 ends identical, archive included."""
    told: list[np.ndarray] = []
    shaped: list[tuple[np.ndarray, np.ndarray]] = []
    original_tell, original_scores = CMAES.tell, shaping.Shaping.scores

    def tell(self: CMAES, fitnesses: np.ndarray) -> None:
        told.append(fitnesses.copy())
        original_tell(self, fitnesses)

    def scores(self: shaping.Shaping, fitness: np.ndarray, *args: Any) -> Any:
        result = original_scores(self, fitness, *args)
        shaped.append((fitness.copy(), result[0]))
        return result

    monkeypatch.setattr(CMAES, "tell", tell)
    monkeypatch.setattr(shaping.Shaping, "scores", scores)
    config = write_config(tmp_path / "c.json")
    out = tmp_path / "run"
    assert main(["train", str(config), "--out", str(out), "--quiet"]) == 0
    rows = log_rows(out)
    assert list(rows[0])[-5:] == ["novelty_best", "novelty_mean", "archive_size",
                                  "fresh_best", "champion_fresh"]  # [champion]: 1 episode
    assert [int(r["archive_size"]) for r in rows] == [3, 6, 7]
    assert [row["archive_size"] for row in Run.open(out).log] == [3, 6, 7]
    raw = [fitness for fitness, _ in shaped]
    for row, fitness, (_, score), sent in zip(rows, raw, shaped, told):
        assert np.array_equal(sent, score) and not np.array_equal(sent, fitness)
        # average ranks: each component sums to n(n+1)/2 = 36; weights 1 + 1 + 0.5
        assert sent.sum() == pytest.approx(36 * 2.5)
        assert float(row["best"]) == fitness.max() and float(row["worst"]) == fitness.min()
    best = npz(out / "best.npz")
    assert best["fitness"] == max(f.max() for f in raw)
    everything = np.concatenate(raw)
    assert np.isin(npz(out / "hall_of_fame.npz")["fitness"], everything).all()
    assert float(rows[-1]["best_ever"]) == everything.max()

    parts = tmp_path / "parts"
    assert main(["train", str(config), "--set", "generations=2", "--out", str(parts),
                 "--quiet"]) == 0
    assert main(["resume", str(parts), "--generations", "3", "--quiet"]) == 0
    assert log_rows(out) == log_rows(parts)
    left, right = npz(out / "checkpoint.npz"), npz(parts / "checkpoint.npz")
    assert np.array_equal(left["novelty.archive"], right["novelty.archive"])
    assert left["novelty.archive"].shape == (7, 16)  # bounded; 4 windows of 4 observations
    for name in ("best.npz", "hall_of_fame.npz"):
        a, b = npz(out / name), npz(parts / name)
        assert all(np.array_equal(a[k], b[k]) for k in a)


def test_adaptive_threshold_is_logged_and_resumes_exactly(tmp_path: Path) -> None:
    """Trained to 2 generations, and to 1 then resumed to 2: the same log, threshold column
    included, and the same archive. Every generation adds candidates, so the threshold moves
    each time, and a resume that started it afresh would log another second threshold."""
    novelty = {"k": 3, "insertion": "threshold", "threshold": 2.0**-10, "archive_size": 100,
               "adaptive_threshold": {"raise_above": 0, "raise_by": 4.0, "floor": 2.0**-10}}
    config = write_config(tmp_path / "c.json", generations=2, novelty=novelty)
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    assert main(["train", str(config), "--out", str(whole), "--quiet"]) == 0
    assert main(["train", str(config), "--set", "generations=1", "--out", str(parts),
                 "--quiet"]) == 0
    assert main(["resume", str(parts), "--generations", "2", "--quiet"]) == 0
    rows = log_rows(whole)
    assert list(rows[0])[8:12] == ["novelty_best", "novelty_mean", "archive_size",
                                   "novelty_threshold"]
    thresholds = [2.0**-10, 2.0**-8]  # x4 after each generation
    assert [float(row["novelty_threshold"]) for row in rows] == thresholds
    assert [row["novelty_threshold"] for row in Run.open(whole).log] == thresholds
    assert rows == log_rows(parts)
    left, right = npz(whole / "checkpoint.npz"), npz(parts / "checkpoint.npz")
    assert left["novelty.threshold"] == right["novelty.threshold"] == 2.0**-6
    assert np.array_equal(left["novelty.archive"], right["novelty.archive"])


def test_shaping_without_novelty_needs_no_behaviour(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.json", generations=2)
    data = json.loads(config.read_text())
    del data["behaviour"], data["novelty"]
    config.write_text(json.dumps(data))
    assert main(["train", str(config), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    # no novelty columns ([champion]'s: one episode an evaluation)
    assert list(log_rows(tmp_path / "run")[0]) == [*FITNESS, "fresh_best", "champion_fresh"]


def test_handlers_return_identical_descriptors() -> None:
    spec = RunnerSpec("behaviour_envs:Counting-v0", EpisodesConfig(runs=2),
                      BehaviourConfig(source="action", interval=2, max_length=3))
    template = ScriptedTemplate(4)
    genomes = np.random.default_rng(0).uniform(-1, 1, size=(6, 4))
    seeds = np.arange(6, dtype=np.int64)
    sequential = SequentialHandler(SequentialConfig(), spec)
    parallel = MPHandler(MPConfig(workers=2, start_method="fork"), spec)
    try:
        expected = sequential.evaluate(template, genomes, seeds)
        assert all(r.descriptor is not None and r.descriptor.shape == (3,) for r in expected)
        assert parallel.evaluate(template, genomes, seeds) == expected
    finally:
        sequential.close()
        parallel.close()


@pytest.mark.slow
def test_mp_and_dask_train_exactly_as_sequential(tmp_path: Path, dask_address: str) -> None:
    runs = {}
    for name, processing in (("sequential", {"type": "sequential"}),
                             ("mp", {"type": "mp", "workers": 2}),
                             ("dask", {"type": "dask", "address": dask_address})):
        config = write_config(tmp_path / f"{name}.json", generations=3, processing=processing)
        assert main(["train", str(config), "--out", str(tmp_path / name), "--quiet"]) == 0
        runs[name] = (log_rows(tmp_path / name),
                      npz(tmp_path / name / "checkpoint.npz")["novelty.archive"])
    for name in ("mp", "dask"):
        assert runs[name][0] == runs["sequential"][0], name
        assert np.array_equal(runs[name][1], runs["sequential"][1]), name


def test_old_stream_state_without_novelty_still_loads() -> None:
    streams = Streams.from_seed(3)
    state = streams.state()
    del state["novelty"]
    other = Streams.from_seed(4)
    other.load_state(state)
    assert other.evaluation.integers(1000) == Streams.from_seed(3).evaluation.integers(1000)


# ----------------------------------------------------------------- descriptor optimizers

DESCRIPTOR_OPTIMIZER = '''
from typing import Literal
import numpy as np
from evo_core import OptimizerConfig, hookimpl

class RecorderConfig(OptimizerConfig):
    type: Literal["recorder"] = "recorder"

class Recorder:
    """Random genomes; writes what it is told, and refuses plain tell."""
    config_model = RecorderConfig
    def __init__(self, config, genome_size, rng):
        self.n, self.size, self.rng = config.population_size, genome_size, rng
    def ask(self):
        return self.rng.normal(size=(self.n, self.size))
    def tell(self, fitnesses):
        raise AssertionError("tell instead of tell_descriptors")
    def tell_descriptors(self, fitnesses, descriptors):
        with open("told.jsonl", "a") as handle:
            handle.write(__import__("json").dumps(
                [fitnesses.tolist(), descriptors.tolist(), str(descriptors.dtype)]) + "\\n")
    def state(self):
        return {"rng": self.rng.bit_generator.state}
    def load_state(self, state):
        self.rng.bit_generator.state = state["rng"]

@hookimpl
def evo_optimizers():
    return [Recorder]
'''


def test_descriptor_optimizer_is_told_raw_fitness_and_descriptors(tmp_path: Path) -> None:
    (tmp_path / "recorder.py").write_text(textwrap.dedent(DESCRIPTOR_OPTIMIZER))
    config = {"environment": "CartPole-v1", "generations": 2,
              "brain": {"type": "ffnn", "hidden_layers": []},
              "optimizer": {"type": "recorder", "population_size": 3},
              "episodes": {"max_steps": 12},
              "behaviour": {"source": "action", "interval": 4, "max_length": 3}}
    (tmp_path / "c.json").write_text(json.dumps(config))
    result = run_evo("--plugin", "recorder.py", "train", "c.json", "--out", "run", "--quiet",
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    told = [json.loads(line) for line in (tmp_path / "told.jsonl").read_text().splitlines()]
    assert len(told) == 2
    rows = log_rows(tmp_path / "run")
    for (fitness, descriptors, dtype), row in zip(told, rows):
        assert dtype == "float64" and np.shape(descriptors) == (3, 3)
        assert max(fitness) == float(row["best"])  # raw returns, not ranks


def test_descriptor_optimizer_without_behaviour_is_one_line() -> None:
    class Told:
        def ask(self) -> np.ndarray:
            return np.zeros((2, 1))

        def tell(self, fitnesses: np.ndarray) -> None: ...

        def tell_descriptors(self, fitnesses: np.ndarray, descriptors: np.ndarray) -> None: ...

        def state(self) -> dict[str, Any]:
            return {}

        def load_state(self, state: dict[str, Any]) -> None: ...

    config = validate_config({"environment": "CartPole-v1", "generations": 1,
                              "brain": {"type": "ffnn"},
                              "optimizer": {"type": "cma-es", "population_size": 2}},
                             get_registry(), "c.toml")
    with pytest.raises(UserError) as caught:
        check_descriptor_tables(config, Told(), "c.toml")
    assert str(caught.value) == ("c.toml: optimizer 'cma-es' learns from behaviour descriptors; "
                                 "add a [behaviour] table (e.g. source = \"observation\", "
                                 "max_length = 10)")
    with_novelty = config.model_copy(update={
        "behaviour": BehaviourConfig(source="action", max_length=1),
        "novelty": NoveltyConfig()})
    with pytest.raises(UserError, match=r"^c.toml: \[novelty\] has no effect with optimizer "):
        check_descriptor_tables(with_novelty, Told(), "c.toml")


# ----------------------------------------------------------------- migrate


def test_migrate_carries_the_predecessors_novelty_sections() -> None:
    reacher = migrate_config(json.loads((PREDECESSOR / "reacher_memory_ctrnn_novel.json")
                                        .read_text()))
    assert reacher.config["behaviour"] == {"source": "action", "interval": 20, "max_length": 4}
    assert reacher.config["novelty"] == {"distance": "euclidean", "k": 50, "archive_size": 100,
                                         "per_generation": 2, "novelty_weight": 1.0,
                                         "insertion": "random"}
    cnn = migrate_config(json.loads((PREDECESSOR / "cnn_ctrnn.json").read_text()))
    assert cnn.config["behaviour"] == {"source": "action", "interval": 100, "max_length": 20}
    assert cnn.config["novelty"]["novelty_weight"] == 0.7 and cnn.config["novelty"]["k"] == 5
    for migration in (reacher, cnn):
        assert not any(line.startswith("novelty") for line in migration.dropped)
        BehaviourConfig(**migration.config["behaviour"])
        NoveltyConfig(**migration.config["novelty"])
    design = migrate_config(json.loads((PREDECESSOR / "mu_basic_design_space.json")
                                       .read_text()))
    dropped = " ".join(design.dropped)
    # a design space becomes a sweep file; lists in a section that does not migrate are said so
    assert "novelty.distance: the alternatives [\"NCD\", \"euclid\"]: no evo setting" in dropped
    # BipedalWalker is neither MuJoCo nor Atari: the predecessor read no state from it
    assert "novelty: behavior_source 'state' of 'BipedalWalker-v3'" in dropped
    assert "behaviour" not in design.config and "novelty" not in design.config


def test_migrate_maps_final_value_distances_and_efficiency() -> None:
    old = {"environment": "CartPole-v1", "number_generations": 3,
           "optimizer": {"type": "CMA_ES", "population_size": 4, "sigma": 1.0,
                         "efficiency_weight": 0.3},
           "brain": {"type": "FeedForward_NumPy", "hidden_layers": [[2]]},
           "novelty": {"behavior_source": "observation", "behavioral_interval": -1,
                       "behavioral_max_length": 5, "distance": "NCD", "novelty_nearest_k": 4}}
    migration = migrate_config(old)
    assert migration.config["behaviour"] == {"source": "observation", "interval": "final"}
    assert migration.config["novelty"] == {"distance": "compression", "k": 4}
    assert migration.config["fitness_shaping"] == {"efficiency_weight": 0.3}
    old["novelty"] = {"behavior_source": "brain", "distance": "equal"}
    dropped = migrate_config(old).dropped
    assert any(line.startswith("novelty: behavior_source 'brain' recorded no behaviour")
               for line in dropped)
