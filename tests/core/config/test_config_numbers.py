"""Numbers, booleans, long values and write errors, performed: each mistake is one bounded line.

- `efficiency_weight = 1e308` overflowed every generation's shaped score to infinity;
- `--set generations=true` (true read as 1) trained one generation;
- a 50 MB `brain.type` was echoed in full, 50 MB of stderr;
- `sweep.seeds=0` printed pydantic's names for the members of a union;
- a write error of migrate, plot or replay advised `evo resume`, which only training's should.
"""

from __future__ import annotations

import errno
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import ROOT

from evo_core import UserError, api
from evo_core.cli.main import main
from evo_core.results import files
from evo_core.search.shaping import average_ranks, shaped_scores

CONFIG: dict[str, Any] = {
    "environment": "CartPole-v1", "seed": 3, "generations": 3,
    "brain": {"type": "ffnn", "hidden_layers": []},
    "optimizer": {"type": "mu-lambda", "population_size": 6, "mu": 2},
    "episodes": {"runs": 1, "max_steps": 50}}


def write_config(tmp_path: Path, **changes: Any) -> Path:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({**CONFIG, **changes}))
    return config


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ------------------------------------------------------------------ weights that overflow


def test_a_huge_weight_keeps_the_scores_finite_and_their_order() -> None:
    rng = np.random.default_rng(0)
    fitness, steps = rng.normal(size=50), rng.integers(1, 10, 50)
    novelty = rng.random(50)
    for weights in ((0.0, 1e308), (1e308, 1e308), (1e308, 0.0), (3.0, 2.0)):
        scores = shaped_scores(fitness, steps, novelty, *weights)
        assert np.isfinite(scores).all()
        # the same order as the sum computed exactly (weights scaled down by the same factor
        # where the sum would overflow)
        scale = max(1.0, *weights) if max(weights) > 1e300 else 1.0
        exact = [float(f) / scale + weights[0] / scale * float(n) + weights[1] / scale * float(s)
                 for f, n, s in zip(average_ranks(fitness), average_ranks(novelty),
                                    average_ranks(-steps.astype(np.float64)))]
        assert np.array_equal(np.argsort(scores, kind="stable"),
                              np.argsort(exact, kind="stable"))
    usual = shaped_scores(fitness, steps, novelty, 0.5, 3.0)  # no overflow: the sum itself
    assert np.array_equal(usual, average_ranks(fitness) + 0.5 * average_ranks(novelty)
                          + 3.0 * average_ranks(-steps.astype(np.float64)))


def test_a_run_with_a_huge_efficiency_weight_never_overflows(tmp_path: Path) -> None:
    config = write_config(tmp_path, fitness_shaping={"efficiency_weight": 1e308})
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's "overflow encountered"
        assert main(["train", str(config), "--quiet", "--out", str(tmp_path / "run")]) == 0
    rows = (tmp_path / "run" / "log.csv").read_text().splitlines()
    assert len(rows) == 4


# ------------------------------------------------------------------ booleans are no numbers


@pytest.mark.parametrize("assignment,key", [
    ("generations=true", "generations"), ("seed=false", "seed"),
    ("optimizer.population_size=true", "optimizer.population_size"),
    ("episodes.max_steps=true", "episodes.max_steps"),
    ("brain.hidden_layers=[4, true]", "brain.hidden_layers")])
def test_true_is_not_a_number(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                              assignment: str, key: str) -> None:
    config = write_config(tmp_path)
    assert main(["train", str(config), "--quiet", "--out", str(tmp_path / "run"),
                 "--set", assignment]) == 2
    assert one_line(capsys).startswith(f"evo: error: --set {assignment}: {key}: must be a "
                                       "number, not true or false, got ")
    assert not (tmp_path / "run").exists()


def test_true_is_not_a_number_in_a_file_either(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path, generations=True)
    assert main(["train", str(config), "--quiet", "--out", str(tmp_path / "run")]) == 2
    assert one_line(capsys) == (f"evo: error: {config}: generations: must be a number, not "
                                "true or false, got True")
    # booleans still go where they belong
    assert api.train({**CONFIG, "generations": 1, "brain": {
        "type": "ffnn", "hidden_layers": [], "normalize_input": True}},
        out=tmp_path / "ok").config.brain.normalize_input is True


# ------------------------------------------------------------------ echoes are bounded


def test_a_50_mb_value_is_echoed_in_a_bounded_line(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    huge = "x" * 50_000_000
    config = write_config(tmp_path)
    assert main(["train", str(config), "--quiet", "--out", str(tmp_path / "run"),
                 "--set", f"brain.type={huge}"]) == 2
    line = one_line(capsys)
    assert len(line) < 300 and "unknown brain type 'xxxxxxxx" in line and "...; installed:" in line
    with pytest.raises(UserError) as error:  # the same from a dict, and for an unknown key
        api.train({**CONFIG, "brain": {"type": "ffnn", huge: 1}}, out=tmp_path / "run")
    assert len(str(error.value)) < 300 and "unknown key" in str(error.value)


# ------------------------------------------------------------------ unions in one clean line


@pytest.mark.parametrize("seeds,said", [
    ("0", "sweep.seeds: must be greater than or equal to 1 or a valid list, got 0"),
    ("[-1, 2]", "sweep.seeds[0]: must be greater than or equal to 0, got -1"),
    ("true", "sweep.seeds: must be a number, not true or false, got True")])
def test_sweep_seeds_mistakes_are_one_clean_line(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str],
                                                 seeds: str, said: str) -> None:
    config = write_config(tmp_path, sweep={"seeds": 2})
    assert main(["sweep", str(config), "--set", f"sweep.seeds={seeds}", "--dry-run"]) == 2
    line = one_line(capsys)
    assert line == f"evo: error: --set sweep.seeds={seeds}: {said}"
    assert "constrained-int" not in line and "list[" not in line


# ------------------------------------------------------------------ write errors


@pytest.fixture
def disk_full(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Writing a file whose name ends in `suffix` fails as on a full disk."""
    def fail_for(suffix: str) -> None:
        original = files.new_exclusive_file

        def new_file(path: Path) -> tuple[int, Path]:
            if path.name.endswith(suffix):
                raise OSError(errno.ENOSPC, "No space left on device")
            return original(path)

        monkeypatch.setattr(files, "new_exclusive_file", new_file)
    return fail_for


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("write-errors")
    return api.train({**CONFIG, "generations": 1}, out=folder / "run").path


def test_write_errors_outside_training_do_not_suggest_resume(
        tmp_path: Path, run: Path, capsys: pytest.CaptureFixture[str],
        disk_full: Callable[[str], None]) -> None:
    old = ROOT / "examples" / "predecessor_cartpole.json"  # a predecessor config to migrate
    disk_full("")
    for argv, target in ((["plot", str(run), "--out", str(tmp_path / "f.png")], "f.png"),
                         (["replay", str(run), "--episodes", "1", "--render",
                           str(tmp_path / "r.gif")], "r.gif"),
                         (["migrate", str(old), "--out", str(tmp_path / "new.toml")],
                          "new.toml")):
        assert main(argv) == 2, argv
        line = capsys.readouterr().err.strip().splitlines()[-1]
        assert line == (f"evo: error: {tmp_path / target}: cannot write (No space left on "
                        "device); free space or fix the permissions, then run the command "
                        "again"), line
        assert not (tmp_path / target).exists()


def test_a_write_error_while_training_suggests_resume(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        disk_full: Callable[[str], None]) -> None:
    disk_full("best.npz")
    out = tmp_path / "run"
    assert main(["train", str(write_config(tmp_path)), "--quiet", "--out", str(out)]) == 2
    assert one_line(capsys) == (
        f"evo: error: {out / 'best.npz'}: cannot write (No space left on device); free space "
        "or fix the permissions, then run the command again; the run stopped: once fixed, "
        f"continue it with `evo resume {out}`")
