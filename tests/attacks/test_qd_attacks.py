"""Attacks on evo-qd's archive settings: an archive too large for any machine or for the
process's address-space limit (counted in bytes, with the largest bins that fit), more cells
than pyribs can number, `ranges` of the wrong length, and bounds whose cells float64 or pyribs
cannot tell apart. Each is one line with exit 2 before the run folder exists."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("evo_qd")
from shared_configs import maze_config

from evo_core.cli.main import main
from evo_qd import MapElitesConfig
from evo_qd.config import MIN_SPAN
from evo_qd.optimizer import (
    ARCHIVE_COPIES,
    archive_bytes,
    cell_bytes,
    check_archive_fits,
    largest_bins,
)


def refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], config: dict[str, Any]) -> str:
    path = tmp_path / "qd.json"
    path.write_text(json.dumps(config))
    out = tmp_path / "run"
    assert main(["train", str(path), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evo: ") and "Traceback" not in err, err
    assert not out.exists()
    return lines[0]


def test_an_archive_no_machine_holds_is_refused_with_the_estimate(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 3162 x 3162 cells of 2,000-gene genomes: about 600 TiB
    config = maze_config({"type": "map-elites", "bins": 3162},
                         brain={"type": "ffnn", "hidden_layers": [400]})
    line = refused(tmp_path, capsys, config)
    assert "optimizer.bins: the map-elites archive needs about" in line
    assert "TiB for 9998244 cells" in line and "the most that fits is bins = " in line


def test_an_archive_beyond_the_address_space_limit_is_refused_before_the_run(
        tmp_path: Path) -> None:
    """bins = [3000, 3000] of 22-gene genomes (7.2 GiB) fits this machine but not a process
    limited to 4 GB of address space: it trained a generation, then pickling the archive for
    the checkpoint was a MemoryError traceback. Now it is one line, with the bins that fit."""
    path = tmp_path / "qd.json"
    path.write_text(json.dumps(maze_config({"type": "map-elites", "bins": [3000, 3000]})))
    out = tmp_path / "run"
    # the limit set by the child itself: a preexec_fn is unsafe in this threaded process
    limited = ("import resource, sys\n"
               "resource.setrlimit(resource.RLIMIT_AS, (4 * 10**9, 4 * 10**9))\n"
               "from evo_core.cli.main import main\n"
               "sys.exit(main(sys.argv[1:]))\n")
    result = subprocess.run([sys.executable, "-c", limited, "train", str(path), "--out",
                             str(out), "--quiet"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "optimizer.bins: the map-elites archive needs about 7.2 GiB" in lines[0]
    assert "its address-space limit" in lines[0] and "the most that fits is bins = [" in lines[0]
    assert not out.exists()


def test_the_estimate_counts_every_copy() -> None:
    config = MapElitesConfig(population_size=4, ranges=[(0, 1), (0, 1)], bins=100)
    assert cell_bytes(10, 2) == 8 * (10 + 2 + 3)
    assert archive_bytes(config, 10) == ARCHIVE_COPIES * 100 * 100 * 8 * (10 + 2 + 3)
    check_archive_fits(config, 10, available=archive_bytes(config, 10))
    with pytest.raises(Exception, match=r"needs about 4\.6 MiB for 10000 cells of 10-gene"):
        check_archive_fits(config, 10, available=archive_bytes(config, 10) - 1)


@pytest.mark.parametrize(("bins", "filled"), [(3000, 0.99), ([3000, 1000], 0.99),
                                              ([7, 500000], 0.7)])
def test_the_largest_bins_named_fit_and_fill_what_there_is(bins: int | list[int],
                                                          filled: float) -> None:
    """Scaled down in the same proportions (a side of few bins loses most to rounding)."""
    available = 4 * 2**30
    config = MapElitesConfig(population_size=4, ranges=[(0, 1), (0, 1)], bins=bins)
    with pytest.raises(Exception, match="the most that fits is bins = ") as raised:
        check_archive_fits(config, 47, available=available)
    largest = largest_bins(config, 47, available)
    assert f"bins = {largest} " in str(raised.value)
    assert isinstance(largest, list) == isinstance(bins, list)
    fitting = MapElitesConfig(population_size=4, ranges=[(0, 1), (0, 1)], bins=largest)
    check_archive_fits(fitting, 47, available=available)
    most = available // (ARCHIVE_COPIES * cell_bytes(47, 2))
    assert most * filled < fitting.cells <= most
    assert largest_bins(config, 10**9, available) is None


def test_more_cells_than_pyribs_numbers_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(tmp_path, capsys, maze_config({"type": "map-elites", "bins": [50000, 50000]}))
    assert "bins: the archive would have 2500000000 cells" in line and "int32" in line
    assert math.prod([50000, 50000]) > 2**31


def test_ranges_of_the_wrong_length_are_refused_before_the_run_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the maze's state is a position: two values
    line = refused(tmp_path, capsys, maze_config({"type": "map-elites",
                                                 "ranges": [[0, 200]] * 3}))
    assert "qd.json" in line
    assert "optimizer.ranges has 3 pair(s)" in line and "descriptors of 2 values" in line


@pytest.mark.parametrize("ranges,fragment", [
    ([[0, 1e-300], [0, 200]], f"less than {MIN_SPAN:g}"),
    ([[-1e308, 1e308], [0, 200]], "overflows float64"),
    ([[0, 200], [-1e307, 1e307]], "overflows float64"),
    ([[1e16, 1e16 + 4], [0, 200]], "too narrow for float64"),
    ([[0, float("inf")], [0, 200]], "finite"),
])
def test_ranges_whose_cells_cannot_be_told_apart_are_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], ranges: list[list[float]],
        fragment: str) -> None:
    line = refused(tmp_path, capsys, maze_config({"type": "map-elites", "ranges": ranges}))
    assert "optimizer" in line and "ranges" in line and fragment in line


def test_ordinary_ranges_are_accepted() -> None:
    for ranges in ([(0, 200), (0, 200)], [(-1e-3, 1e-3)], [(1e9, 1e9 + 10)], [(-1e300, 1e300)]):
        MapElitesConfig(population_size=4, ranges=ranges, bins=20)
