"""Every entry point of `evo_core.api` checks its arguments: a wrong one is a `UserError` with
the line the command line prints, never a TypeError or ValueError from inside, a file written
under a wrong name, or a string taken apart into run folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evo_core import UserError, api

#: the API as a caller without a type checker sees it: the wrong arguments below are the point
API: Any = api

CONFIG = {"environment": "CartPole-v1", "seed": 5, "generations": 1,
          "brain": {"type": "ffnn", "hidden_layers": []},
          "optimizer": {"type": "mu-lambda", "population_size": 4, "mu": 2},
          "episodes": {"runs": 1, "max_steps": 20}}


@pytest.fixture(scope="module")
def typed_run(tmp_path_factory: pytest.TempPathFactory) -> api.Run:
    return api.train(CONFIG, out=tmp_path_factory.mktemp("api-arguments") / "run")


def one_line(error: pytest.ExceptionInfo[UserError]) -> str:
    message = str(error.value)
    assert "\n" not in message and type(error.value) is UserError
    return message


@pytest.mark.parametrize("call,message", [
    (lambda: API.train(None), "config: must be a config file's path (.toml or .json) or a dict "
                              "of the same structure, got NoneType None"),
    (lambda: API.train(42), "config: must be a config file's path"),
    (lambda: API.train(b"c.toml"), "config: must be a config file's path"),
    (lambda: API.train("a\0b"), "config: 'a\\x00b' contains a NUL character"),
    (lambda: API.train(""), "config: is empty"),
    (lambda: API.train(CONFIG, out=42), "out: must be a path (a str or pathlib.Path), got int 42"),
    (lambda: API.train(CONFIG, out="a\0b"), "out: 'a\\x00b' contains a NUL character"),
    (lambda: API.train(CONFIG, overrides=[("generations", 2)]), "overrides: must be a dict"),
    (lambda: API.train(CONFIG, overrides={1: 2}), "overrides: must be a dict"),
    (lambda: API.train(CONFIG, progress="yes"), "progress: must be True or False"),
    (lambda: API.Run.open(42), "run_dir: must be a path (a str or pathlib.Path), got int 42"),
    (lambda: API.Run.open(None), "run_dir: must be a path"),
    (lambda: API.resume(42), "run_dir: must be a path"),
    (lambda: API.resume("x", generations=True), "generations: must be a whole number of at "
                                                "least 1, got bool True"),
    (lambda: API.resume("x", generations=0), "generations: must be a whole number"),
    (lambda: API.compare("good", "c.png"), "runs: must be a list of runs (Run objects or run "
                                           "folders), got str 'good'; for one run pass [it]"),
    (lambda: API.compare(Path("good"), "c.png"), "runs: must be a list of runs"),
    (lambda: API.compare(42, "c.png"), "runs: must be a list of runs"),
    (lambda: API.compare([42], "c.png"), "runs[0]: must be a path"),
    (lambda: API.compare([], "c.png"), "compare: give at least one run"),
], ids=lambda value: value if isinstance(value, str) and len(value) < 30 else None)
def test_wrong_arguments_are_user_errors(call: Any, message: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # nothing may be written; if it were, it would be here
    with pytest.raises(UserError) as error:
        call()
    assert one_line(error).startswith(message), str(error.value)
    assert list(tmp_path.iterdir()) == []


def test_the_run_methods_check_theirs_first(typed_run: api.Run, tmp_path: Path) -> None:
    run: Any = typed_run
    cases: list[tuple[Any, str]] = [
        (lambda: run.plot(out=42), "out: must be a path (a str or pathlib.Path), got int 42"),
        (lambda: run.plot(out="a\0b.png"), "out: 'a\\x00b.png' contains a NUL character"),
        (lambda: run.plot(out=tmp_path / "x.txt"),
         f"out {tmp_path / 'x.txt'}: cannot write '.txt' images; use one of "),
        (lambda: run.replay(render=tmp_path / "x.txt"),
         f"render {tmp_path / 'x.txt'}: give a name ending in .gif or .mp4"),
        (lambda: run.replay(render=tmp_path), f"render {tmp_path}: is a folder"),
        (lambda: run.replay(render=42), "render: must be a path"),
        (lambda: run.replay(episodes=0), "episodes: must be a whole number of at least 1"),
        (lambda: run.replay(seed=np.float64(1.0)), "seed: must be a whole number of at least 0"),
        (lambda: API.compare([run], tmp_path / "c.txt"), f"out {tmp_path / 'c.txt'}: cannot "),
        (lambda: API.compare([run], tmp_path / "c.png", title=7), "title: must be a str"),
    ]
    for call, message in cases:
        with pytest.raises(UserError) as error:
            call()
        assert one_line(error).startswith(message), str(error.value)
    assert list(tmp_path.iterdir()) == []


def test_the_cli_prints_the_same_lines(typed_run: api.Run, tmp_path: Path, capsys) -> None:
    from evo_core.cli.main import main

    run = typed_run
    for argv, call in (
            (["plot", str(run.path), "--out", str(tmp_path / "x.txt")],
             lambda: run.plot(out=tmp_path / "x.txt")),
            (["replay", str(run.path), "--render", str(tmp_path / "x.txt")],
             lambda: run.replay(render=tmp_path / "x.txt")),
            (["replay", str(run.path), "--hof", "99"], lambda: run.replay(hof=99)),
            (["replay", str(run.path), "--hof", "99"], lambda: run.champion(hof=99))):
        assert main(argv) == 2
        cli = capsys.readouterr().err.strip().removeprefix("evo: error: ")
        with pytest.raises(UserError) as error:
            call()
        flag = argv[2]
        assert str(error.value) == cli.replace(flag, flag.removeprefix("--"), 1)
    assert str(error.value).startswith("hof 99: the hall of fame of ")  # the API's name


def test_good_arguments_still_work(typed_run: api.Run, tmp_path: Path) -> None:
    run = typed_run
    assert run.plot(out=str(tmp_path / "fitness")) == tmp_path / "fitness.png"  # as --out does
    assert (tmp_path / "fitness.png").read_bytes()[:4] == b"\x89PNG"
    assert api.compare((r for r in (run, str(run.path))), tmp_path / "c.svg").is_file()
    assert len(API.Run.replay(run, episodes=np.int64(2), seed=np.uint8(3))) == 2
    assert api.Run.open(str(run.path)).path == run.path
    json.dumps(CONFIG)  # the dict was not changed by training from it
    assert CONFIG["generations"] == 1
