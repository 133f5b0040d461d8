"""Attacks on `evo sweep`'s folder names and size: keys and values that are paths, newlines or
NULs, names that collide once made safe, an edited sweep.json, and sweeps of a billion runs.
Each test performs the attack and asserts the promise: every run folder directly inside the
sweep folder, or one line and exit 2 before anything is made."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from evo_core.cli.main import main
from evo_core.errors import UserError
from evo_core.hooks.discovery import get_registry
from evo_core.sweeps.points import MAX_LABEL, is_run_name, points_of
from evo_core.sweeps.sweep_file import MAX_RUNS, SweepFile, run_count, sweep_from_data
from evo_core.sweeps.sweeping import summarise

BASE = {"environment": "CartPole-v1", "generations": 1,
        "brain": {"type": "ctrnn", "number_neurons": 3},
        "optimizer": {"type": "mu-lambda", "population_size": 6, "mu": 2},
        "episodes": {"max_steps": 20}}
#: an environment that takes any keyword argument, so hostile `environment.kwargs` keys run
KWARGS_ENV = "EvoAttackAnyKwargs-v0"


def sweep_of(table: dict[str, Any], **base: Any) -> SweepFile:
    return sweep_from_data(dict(BASE, **base, sweep=table), Path("s.toml"), get_registry())


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _any_kwargs(**_: Any) -> gym.Env[Any, Any]:
    return gym.make("CartPole-v1")


@pytest.fixture
def any_kwargs_env() -> Iterator[str]:
    gym.register(KWARGS_ENV, entry_point=_any_kwargs)
    yield KWARGS_ENV
    del gym.registry[KWARGS_ENV]


def test_hostile_grid_keys_make_run_folders_only_inside_the_sweep_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], any_kwargs_env: str) -> None:
    escaped = tmp_path / "ESCAPED"
    grid = {f"environment.kwargs.{escaped}": [1, 2], "environment.kwargs.a/b": [1],
            "environment.kwargs.x\ny": [1], "environment.kwargs.\u0000": [1]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(dict(BASE, environment=any_kwargs_env, sweep={"grid": grid})))
    # the dry run is one line per point, the newline in a key written as an escape
    assert main(["sweep", str(path), "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all('"environment.kwargs.x\\ny"=1' in line for line in lines)
    out = tmp_path / "sw"
    assert main(["sweep", str(path), "--out", str(out)]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json", "sw"]  # nothing escaped
    runs = sorted(p for p in out.iterdir() if p.is_dir())
    assert len(runs) == 2
    for run in runs:
        assert is_run_name(run.name) and "\n" not in run.name and "/" not in run.name
        assert (run / "config.json").is_file() and (run / "checkpoint.npz").is_file()
    assert runs[0].name.startswith(str(escaped).strip("/").replace("/", "-") + "=1_a-b=1_")
    # a re-run finds the same folders and runs nothing
    assert main(["sweep", str(path), "--out", str(out)]) == 0
    assert "finished" not in capsys.readouterr().err
    assert sorted(p for p in out.iterdir() if p.is_dir()) == runs


@pytest.mark.parametrize("grid", [
    {"brain.x": ["..", ".", "../../etc", "/abs", "a\u0000b", "\n", "", "-rf"]},
    {"brain./": [1, 2], "brain.\\": [3]},
    {"brain.~": [1], "brain.-option": [2], "brain.+x": [3]},
    {"brain." + "k" * 300: [1, 2]},
    {"brain.x": ["A", "a"]},  # one folder on a case-insensitive file system
    {"brain.x/y": [1], "optimizer.x-y": [2]},  # one key once made safe
])
def test_point_names_are_one_safe_bounded_unique_folder_name(grid: dict[str, list[Any]]) -> None:
    points = points_of(sweep_of({"grid": grid, "seeds": [10 ** 90, 3]}))
    names = [point.name for point in points]
    assert all(is_run_name(name) for name in names), names
    assert all(len(name) <= MAX_LABEL + 9 + len("_seed=") + 40 for name in names)
    assert len({name.lower() for name in names}) == len(names)
    assert [point.name for point in points_of(sweep_of({"grid": grid,
                                                        "seeds": [10 ** 90, 3]}))] == names


def test_ordinary_names_are_unchanged() -> None:
    points = points_of(sweep_of({"grid": {"brain.number_neurons": [2], "optimizer.sigma": [0.5],
                                          "brain.activation": ["tanh"]}, "seeds": [7]}))
    assert points[0].name == "number_neurons=2_sigma=0.5_activation=tanh_seed=7"
    assert is_run_name(points[0].name)


@pytest.mark.parametrize("name", ["../outside", "/tmp", "a/b", ".", "..", "x\ny", ""])
def test_an_edited_sweep_json_never_leads_outside_the_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    out = tmp_path / "sw"
    out.mkdir()
    record: dict[str, Any] = {
        "sweep_file": "s.json", "identity": {}, "varied": ["brain.x"], "target": None,
        "points": [{"name": name, "setting": "x=1", "values": {"brain.x": 1}, "seed": 0}]}
    (out / "sweep.json").write_text(json.dumps(record))
    with pytest.raises(UserError, match="not a folder inside the sweep folder"):
        summarise(out)
    assert main(["plot", str(out)]) == 2
    assert "sweep.json" in one_line(capsys.readouterr().err)
    assert sorted(p.name for p in out.iterdir()) == ["sweep.json"]


# ----------------------------------------------------------------- size


def test_a_billion_seeds_is_refused_with_the_count_before_any_point_is_made(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(dict(BASE, sweep={"seeds": 2})))
    assert main(["sweep", str(path), "--dry-run", "--set", "sweep.seeds=1000000000"]) == 2
    line = one_line(capsys.readouterr().err)
    assert "1000000000 runs" in line and f"more than the {MAX_RUNS}" in line
    assert str(path) in line and capsys.readouterr().out == ""


def test_a_small_file_with_a_huge_grid_is_refused_with_the_count(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.toml"
    values = "[" + ", ".join(str(v) for v in range(300)) + "]"
    path.write_text('environment = "CartPole-v1"\n[brain]\ntype = "ctrnn"\n'
                    '[optimizer]\ntype = "cma-es"\n[sweep.grid]\n'
                    f'"brain.a" = {values}\n"brain.b" = {values}\n"brain.c" = {values}\n')
    assert path.stat().st_size < 8000
    out = tmp_path / "sw"
    assert main(["sweep", str(path), "--out", str(out)]) == 2
    line = one_line(capsys.readouterr().err)
    assert "27000000 runs (300 x 300 x 300 grid x 1 samples x 1 seeds)" in line
    assert not out.exists()


def test_the_bound_counts_grid_samples_and_seeds() -> None:
    at_bound = sweep_of({"seeds": MAX_RUNS})
    assert run_count(at_bound.table) == MAX_RUNS
    table = {"grid": {"brain.x": list(range(10))}, "sample": {"optimizer.mu": [2, 3, 4]},
             "samples": 2, "seeds": [1, 2, 3]}
    assert run_count(sweep_of(table).table) == 10 * 2 * 3 == len(points_of(sweep_of(table)))
    with pytest.raises(UserError, match=f"{MAX_RUNS + 1} runs"):
        sweep_of({"seeds": MAX_RUNS + 1})
    with pytest.raises(UserError, match="20000 runs"):
        sweep_of({"grid": {"brain.x": list(range(100))}, "seeds": 200})


def test_long_value_lists_are_checked_for_repeats_in_linear_time() -> None:
    # 200,000 distinct values: the check is a set, not a comparison of every pair
    sweep = sweep_of({"sample": {"brain.x": list(range(200_000))}, "samples": 3})
    assert len(points_of(sweep)) == 3
    with pytest.raises(UserError, match="the value 5 appears twice"):
        sweep_of({"sample": {"brain.x": [*range(100_000), 5]}, "samples": 3})
