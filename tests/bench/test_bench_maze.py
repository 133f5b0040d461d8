"""bench/deceptive_maze.py: its jobs, intervals and table, and one short run of every example
it trains (the examples must stay valid configs of the published mazes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from conftest import ROOT, bench_script


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    """bench/deceptive_maze.py as a module."""
    with bench_script("deceptive_maze.py", "bench_maze") as module:
        yield module


def test_wilson_interval_by_hand(bench: ModuleType) -> None:
    # 39 of 40: centre (0.975 + z^2/80) / (1 + z^2/40) = 0.9334, half-width
    # z sqrt(0.975 x 0.025 / 40 + z^2 / 6400) / (1 + z^2/40) = 0.0622: 0.8712-0.9956 of 40
    assert bench.wilson(39, 40) == "34.8-39.8"
    assert bench.wilson(0, 40) == "0.0-3.5"
    assert bench.wilson(3, 3) == "1.3-3.0"
    assert bench.wilson(0, 0) == "-"


def test_jobs_go_seed_by_seed_and_move_the_example_to_the_medium_maze(bench: ModuleType
                                                                      ) -> None:
    made = bench.jobs(["hard", "medium"], ["novelty", "map-elites"], range(3, 5), 1000, None)
    keys = [(arguments[0], arguments[3]) for _, arguments in made]
    assert keys == [("hard-novelty", 3), ("hard-map-elites", 3), ("medium-novelty", 3),
                    ("medium-map-elites", 3), ("hard-novelty", 4), ("hard-map-elites", 4),
                    ("medium-novelty", 4), ("medium-map-elites", 4)]
    overrides = {arguments[0]: arguments[2] for _, arguments in made}
    assert overrides["hard-novelty"] == {}
    assert overrides["medium-novelty"] == {"environment.id": "evo/MediumMaze-v1"}
    assert overrides["medium-map-elites"]["optimizer.ranges"] == [[0, 300], [0, 140]]


def test_the_cells_count_the_solved_within_each_budget(bench: ModuleType) -> None:
    outcomes = [bench.Outcome("hard-novelty", seed, solved, solved or 500_000, 1.0)
                for seed, solved in enumerate([40_000, 60_000, 300_000, None], start=1)]
    share, paper, evaluations = bench.cell(outcomes)
    assert share == f"3 of 4 ({bench.wilson(3, 4)})"
    assert paper == f"2 of 4 ({bench.wilson(2, 4)})"  # 300,000 is beyond the paper's 250,000
    assert evaluations.startswith("133,333 (")


def test_every_example_trains_and_a_kept_run_is_read_back(bench: ModuleType,
                                                         tmp_path: Path) -> None:
    """Each example (8 genomes, 20 steps, its budget spent by one generation; the medium
    maze's jobs differ only by the overrides checked above), kept under `out` and read back by
    a second call without training again; the table of their outcomes."""
    small = {"optimizer.population_size": 8, "episodes.max_steps": 20,
             "episodes.batch_rows": 8}
    outcomes = [outcome for _, arguments in
                bench.jobs(["hard"], list(bench.METHODS), range(1, 2), 8, tmp_path)
                for outcome in bench.evo_run(arguments[0], arguments[1],
                                             {**arguments[2], **small}, *arguments[3:])]
    assert [outcome.error for outcome in outcomes] == [None] * 4
    assert all(outcome.spent == 8 and outcome.solved is None for outcome in outcomes)
    again = bench.evo_run("hard-novelty", ROOT / "examples" / "hard_maze_neat_novelty.toml",
                          small, 1, 8, tmp_path)
    assert again[0].cpu_evaluations == 0 and again[0].spent == 8  # read back, not trained
    reported = bench.report(["hard"], list(bench.METHODS), range(1, 3), 8, tmp_path)
    assert "| hard | CMA-ES, fixed network | 0 of 1 (0.0-0.8) |" in reported  # seed 1 only
    assert reported.endswith("not finished (running or not started): hard-novelty: 1, "
                             "hard-fitness: 1, hard-cma-es: 1, hard-map-elites: 1")
    table = bench.table(outcomes, ["hard"], list(bench.METHODS))
    assert "| hard | NEAT, novelty search | 0 of 1 (0.0-0.8) | 0 of 1 (0.0-0.8) | - | 39 of 40" \
        in table
    assert "| hard | MAP-Elites, fixed network | 0 of 1 (0.0-0.8) | 0 of 1 (0.0-0.8) | - | not in" \
        in table
