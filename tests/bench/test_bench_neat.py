"""bench/neat.py: its neat-python side on XOR (only where neat-python, a bench-only
dependency, is installed) and its table."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from conftest import ROOT, bench_script


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    """bench/neat.py as `bench_neat`."""
    with bench_script("neat.py", "bench_neat") as module:
        yield module


def test_neat_python_runs_xor_on_evos_episodes(bench: ModuleType, tmp_path: Path) -> None:
    try:
        bench.neat_python()
    except ImportError:
        pytest.skip("neat-python is bench-only: pip install -r requirements/bench.txt")
    # 2 generations of 150: evaluations counted to the end of the generation that spends 200
    first, right = bench.neat_python_run("xor", 1, 200, tmp_path)
    assert (first.name, right.name) == ("neat-python/xor", "neat-python/xor-right")
    assert first.spent == right.spent == 300 and first.solved is None
    assert first.cpu > 0 and first.cpu_evaluations == 300 and right.cpu_evaluations == 0
    kept = tmp_path / "neat-python-xor-example" / "seed-1.json"
    assert kept.is_file()
    # read back, not run again: no process time
    again = bench.neat_python_run("xor", 1, 200, tmp_path)
    assert [(o.solved, o.spent, o.cpu) for o in again] == [(None, 300, 0.0), (None, 300, 0.0)]


def test_neat_python_is_configured_from_the_example(bench: ModuleType, tmp_path: Path) -> None:
    example = bench.read_example(ROOT / "examples" / "neat_double_pole_no_velocity.toml", 40)
    assert (example.population, example.threshold, example.add_node, example.add_connection,
            example.feed_forward, example.fitness) == (40, 4.0, 0.01, 0.3, False, None)
    assert [(t.episodes, t.min_return, t.min_passes) for t in example.tests] == [
        (1, 100000.0, 1), (625, 1000.0, 200)]
    text = Path(bench.neat_python_config(example, 3, 1, tmp_path)).read_text()
    for line in ("pop_size = 40", "compatibility_threshold = 4.0", "node_add_prob = 0.01",
                 "conn_add_prob = 0.3", "feed_forward = False", "num_inputs = 3"):
        assert line in text.splitlines()


def test_the_table(bench: ModuleType) -> None:
    outcome = bench.Outcome

    def runs(side: str, task: str, solved: list[int | None], cpu: float = 0.0
             ) -> list[object]:
        return [outcome(bench.row_name(side, task), seed, value, value or 999, 1.0, cpu,
                        value or 999) for seed, value in enumerate(solved, 1)]

    outcomes = [*runs("evo-neat", "with", [1000, 2000, None], cpu=3.0),
                *runs("neat-python", "with", [4000, 6000], cpu=8.0),
                *runs("neat-python", "xor", [None], cpu=1.0),
                *runs("neat-python", "xor-right", [500]),
                outcome("evo-neat/xor", 1, None, 0, 0.1, error="optimizer.type: no 'neat'")]
    lines = bench.table(outcomes, ["with", "xor"]).splitlines()
    assert lines[0].startswith("| task | published NEAT | evo-neat")
    assert lines[2] == ("| double pole with velocities | 3,600 | 1,500 (2 of 3, -4,853-7,853)"
                        " | 5,000 (2 of 2, -7,706-17,706) | 2.25 / 1.6 |")
    assert lines[3] == ("| XOR | 4,755 | not run: optimizer.type: no 'neat' | none solved "
                        "(0 of 1) | - / 1 |")
    assert lines[4].startswith("| XOR, all four outputs right (the paper's criterion) | 4,755 |"
                               " - ([stop] sees the fitness only) | 500 (1 of 1, -) | - / 1 |")
    assert len(lines) == 5
