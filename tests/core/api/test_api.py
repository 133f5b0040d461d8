"""`evo_core.api`: the same runs as the command line, the run's files as Python values, mistakes
as the CLI's one line, and the run events that plugins hear."""

from __future__ import annotations

import csv
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import ROOT, npz, run_evo
from shared_configs import config_dict, local_plugin, write_config

from evo_core import ArchiveGrid, UserError, api
from evo_core.cli.main import main
from evo_core.handlers.sequential import SequentialHandler
from evo_core.results.log_file import CHAMPION_COLUMNS, LOG_COLUMNS
from evo_core.running import training
from evo_core.running.stopping import Stopping

FITNESS_COLUMNS = ["generation", "evaluations", "best", "mean", "std", "worst", "best_ever",
                   "steps"]


def fitness_columns(run: Path) -> list[list[str]]:
    with open(run / "log.csv", newline="") as handle:
        return [[row[c] for c in FITNESS_COLUMNS] for row in csv.DictReader(handle)]


def cli_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert all(line.startswith("evo: error: ") for line in lines)
    return "\n".join(line.removeprefix("evo: error: ") for line in lines)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> api.Run:
    folder = tmp_path_factory.mktemp("api")
    return api.train(write_config(folder / "c.json"), out=folder / "run")


def test_cli_and_api_give_the_same_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       trained: api.Run) -> None:
    config = write_config(tmp_path / "c.json")
    assert main(["train", str(config), "--out", str(tmp_path / "cli"), "--quiet"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == str(tmp_path / "cli")
    from_dict = api.train(config_dict(), out=tmp_path / "dict")
    for run in (trained.path, from_dict.path):
        assert fitness_columns(run) == fitness_columns(tmp_path / "cli")
        for name in ("best.npz", "hall_of_fame.npz"):
            left, right = npz(run / name), npz(tmp_path / "cli" / name)
            assert left.keys() == right.keys()
            assert all(np.array_equal(left[k], right[k]) for k in left), name
        record = json.loads((run / "config.json").read_text())
        cli_record = json.loads((tmp_path / "cli" / "config.json").read_text())
        assert record.pop("provenance")["run_id"] != cli_record.pop("provenance")["run_id"]
        assert record == cli_record


def test_overrides_are_set_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path / "c.json")
    assert main(["train", str(config), "--out", str(tmp_path / "cli"), "--quiet",
                 "--set", "generations=2", "--set", "brain.number_neurons=3"]) == 0
    run = api.train(config, out=tmp_path / "api",
                    overrides={"generations": 2, "brain.number_neurons": 3})
    assert run.config.generations == 2 and len(run.log) == 2
    assert fitness_columns(run.path) == fitness_columns(tmp_path / "cli")


def test_run_reads_the_folder_as_numbers(trained: api.Run) -> None:
    run = api.Run.open(str(trained.path))
    assert run.path == trained.path and run.config == trained.config
    assert run.config.brain.type == "ctrnn" and run.config.generations == 3
    log = run.log
    assert [row["generation"] for row in log] == [1, 2, 3]
    assert all(list(row) == LOG_COLUMNS + CHAMPION_COLUMNS for row in log)  # 2 runs: [champion]
    assert all(isinstance(row["evaluations"], int) and isinstance(row["best"], float)
               for row in log)
    with open(run.path / "log.csv", newline="") as handle:
        assert [float(r["mean"]) for r in csv.DictReader(handle)] == [r["mean"] for r in log]
    best = run.best
    saved = npz(run.path / "best.npz")
    assert np.array_equal(best.genome, saved["genome"]) and best.fitness == log[-1]["best_ever"]
    assert 1 <= best.generation <= 3 and not best.genome.flags.writeable
    with pytest.raises(AttributeError):
        best.fitness = 0.0  # type: ignore[misc]
    hall = run.hall_of_fame
    assert len(hall) == 10 and hall[0].fitness == best.fitness
    assert [h.fitness for h in hall] == sorted((h.fitness for h in hall), reverse=True)
    template = run.template()
    assert template.genome_size == best.genome.size
    brain = run.champion()
    brain.reset()
    assert brain.step(np.zeros(4)) in (0, 1)


def test_replay_and_plot(tmp_path: Path, trained: api.Run,
                         capsys: pytest.CaptureFixture[str]) -> None:
    returns = trained.replay(episodes=3, seed=9)
    assert len(returns) == 3 and all(isinstance(r, float) for r in returns)
    assert main(["replay", str(trained.path), "--episodes", "3", "--seed", "9"]) == 0
    assert float(capsys.readouterr().out.strip()) == pytest.approx(np.mean(returns), abs=1e-4)
    assert trained.replay(episodes=np.int64(3), seed=9) == returns  # type: ignore[arg-type]
    for bad in ({"episodes": 0}, {"episodes": 2.5}, {"seed": -1}, {"seed": True}):
        with pytest.raises(UserError, match="must be a whole number"):
            trained.replay(**bad)
    assert len(trained.replay()) == 10
    assert trained.plot(tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
    assert trained.plot() == trained.path / "fitness.png"
    both = api.compare([trained, trained.path], tmp_path / "both.png", title="twice")
    assert both.read_bytes()[:4] == b"\x89PNG"


def test_log_frame(trained: api.Run, monkeypatch: pytest.MonkeyPatch) -> None:
    pandas = pytest.importorskip("pandas")
    frame = trained.log_frame()
    assert isinstance(frame, pandas.DataFrame) and \
        list(frame.columns) == LOG_COLUMNS + CHAMPION_COLUMNS
    assert frame["best"].tolist() == [row["best"] for row in trained.log]
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if it were not installed
    with pytest.raises(UserError) as error:
        trained.log_frame()
    assert "evo-core[pandas]" in str(error.value) and "\n" not in str(error.value)


def test_mistakes_raise_the_cli_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write_config(tmp_path / "bad.json", generatons=3)
    out = tmp_path / "out"
    with pytest.raises(UserError) as error:
        api.train(bad, out=out)
    assert str(error.value) == cli_error(capsys, "train", str(bad), "--out", str(out))
    assert not out.exists()
    with pytest.raises(UserError) as error:
        api.train(tmp_path / "missing.toml")
    assert str(error.value) == cli_error(capsys, "train", str(tmp_path / "missing.toml"))
    with pytest.raises(UserError) as error:
        api.train(config_dict(), out=out, overrides={"seed.x": 1})
    assert str(error.value) == cli_error(capsys, "train", str(write_config(tmp_path / "c.json")),
                                         "--out", str(out), "--set", "seed.x=1")
    with pytest.raises(UserError, match=r"^config: brain\.number_neurons: "):
        api.train(config_dict(brain={"type": "ctrnn", "number_neurons": 0}), out=out)
    assert not out.exists()
    with pytest.raises(UserError) as error:
        api.Run.open(tmp_path)
    assert str(error.value) == cli_error(capsys, "replay", str(tmp_path))
    with pytest.raises(UserError) as error:
        api.resume(tmp_path)
    assert str(error.value) == cli_error(capsys, "resume", str(tmp_path))


def test_resume_continues_exactly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path / "c.json")
    whole = api.train(config, out=tmp_path / "whole", overrides={"generations": 5})
    part = api.train(config, out=tmp_path / "part")
    with pytest.raises(UserError) as error:
        api.resume(part.path, generations=5, overrides={"seed": 3})
    assert str(error.value) == cli_error(capsys, "resume", str(part.path), "--generations", "5",
                                         "--set", "seed=3")
    with pytest.raises(UserError, match="already has 3 generation"):
        api.resume(part.path)
    resumed = api.resume(part.path, generations=5, overrides={"processing.type": "sequential"})
    assert resumed.config.generations == 5
    assert fitness_columns(resumed.path) == fitness_columns(whole.path)
    assert np.array_equal(resumed.best.genome, whole.best.genome)


RECORDER = '''
from evo_core import hookimpl

calls = []

@hookimpl
def evo_run_started(run):
    calls.append(("started", run.path, len(run.log)))

@hookimpl
def evo_generation_finished(run, row):
    calls.append(("generation", run.path, row))

@hookimpl
def evo_run_finished(run):
    calls.append(("finished", run.path, len(run.log)))
'''

RAISER = '''
from evo_core import hookimpl

calls = []

@hookimpl
def evo_run_started(run):
    calls.append("started")

@hookimpl
def evo_generation_finished(row):  # fewer arguments than the specification: allowed
    calls.append(row["generation"])
    if row["generation"] == 2:
        raise ValueError("tracker server unreachable")

@hookimpl
def evo_run_finished():
    calls.append("finished")
'''


def test_events_reach_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = local_plugin(tmp_path, monkeypatch, "evo_test_recorder", RECORDER)
    run = api.train(config_dict(), out=tmp_path / "run")
    assert recorder.calls[0] == ("started", run.path, 0)
    assert [call[2] for call in recorder.calls[1:-1]] == run.log
    assert recorder.calls[-1] == ("finished", run.path, 3)
    recorder.calls.clear()
    api.resume(run.path, generations=4)
    assert [call[0] for call in recorder.calls] == ["started", "generation", "finished"]
    assert recorder.calls[0][2] == 3 and recorder.calls[1][2]["generation"] == 4


def test_a_raising_hook_is_reported_once_and_training_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trained: api.Run) -> None:
    raiser = local_plugin(tmp_path, monkeypatch, "evo_test_raiser", RAISER)
    with pytest.warns(RuntimeWarning) as warned:
        run = api.train(write_config(tmp_path / "c.json"), out=tmp_path / "run")
    messages = [str(w.message) for w in warned if "evo_test_raiser" in str(w.message)]
    assert len(messages) == 1
    assert "evo_generation_finished() raised ValueError: tracker server unreachable" in \
        messages[0] and "skipped for the rest of this run" in messages[0]
    assert raiser.calls == ["started", 1, 2]  # nothing after the failure, not even finished
    assert fitness_columns(run.path) == fitness_columns(trained.path)
    # the command line prints it as one warning line and finishes
    cli = run_evo("--plugin", "evo_test_raiser", "train", str(tmp_path / "c.json"), "--out",
                  str(tmp_path / "cli"), "--quiet", cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    assert cli.stderr.splitlines() == [
        "evo: warning: plugin 'evo_test_raiser' (local module evo_test_raiser): "
        "evo_generation_finished() raised ValueError: tracker server unreachable; its event "
        "hooks are skipped for the rest of this run"]
    assert fitness_columns(tmp_path / "cli") == fitness_columns(trained.path)


def test_interrupt_propagates_after_the_checkpoint(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   trained: api.Run) -> None:
    interrupter = local_plugin(tmp_path, monkeypatch, "evo_test_interrupter", '''
        import os
        import signal
        from evo_core import hookimpl

        armed = [True]

        @hookimpl
        def evo_generation_finished(row):
            if armed[0] and row["generation"] == 2:
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, after generation 2 finished
        ''')
    config = write_config(tmp_path / "c.json", checkpoint_every=0)
    with pytest.raises(KeyboardInterrupt):
        api.train(config, out=tmp_path / "run")
    meta = json.loads(npz(tmp_path / "run" / "checkpoint.npz")["meta"].tobytes())
    assert meta["generation"] == 2  # checkpoint_every = 0 would not have written it
    interrupter.armed[0] = False
    api.resume(tmp_path / "run")
    assert fitness_columns(tmp_path / "run") == fitness_columns(trained.path)


def test_an_interrupt_a_library_wraps_still_stops_the_run_resumably(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        trained: api.Run) -> None:
    """Ctrl-C landing in a pydantic serializer (every checkpoint dumps the config) reaches evo
    as pydantic's own error, caused by the interrupt: still an interrupt, not a bug's traceback
    (a sweep's CI run met it)."""
    import os
    import signal

    from pydantic import BaseModel, field_serializer

    class Dumped(BaseModel):
        value: int = 0

        @field_serializer("value")
        def _ctrl_c(self, value: int) -> int:
            os.kill(os.getpid(), signal.SIGINT)  # the handler runs inside the serializer
            return value

    snapshot = training._snapshot

    def interrupted_snapshot(experiment: Any, state: Any, *args: Any) -> Any:
        if state.generation == 3:
            Dumped().model_dump(mode="json")
        return snapshot(experiment, state, *args)

    monkeypatch.setattr(training, "_snapshot", interrupted_snapshot)
    config = write_config(tmp_path / "c.json", checkpoint_every=1)
    out = tmp_path / "run"
    assert main(["train", str(config), "--out", str(out), "--quiet"]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines() == [
        f"evo: interrupted (SIGINT); generations 1-2 are checkpointed in {out}; continue with: "
        f"evo resume {out}"]
    with pytest.raises(KeyboardInterrupt) as raised:  # the API raises the interrupt itself
        api.train(config, out=tmp_path / "api")
    assert type(raised.value).__name__ == "Interrupted"
    monkeypatch.setattr(training, "_snapshot", snapshot)
    api.resume(out)
    assert fitness_columns(out) == fitness_columns(trained.path)


NOTEBOOK = ROOT / "docs" / "notebook.md"


def test_notebook_doc_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str]) -> None:
    """docs/notebook.md's python blocks, in order and in one namespace as a notebook runs them,
    with fewer generations."""
    blocks = re.findall(r"```python\n(.*?)```", NOTEBOOK.read_text(), flags=re.S)
    assert len(blocks) >= 8
    shorter = {'"generations": 20': '"generations": 2', "generations=25": "generations=3"}
    source = "\n".join(blocks)
    for long, short in shorter.items():
        assert long in source
        source = source.replace(long, short)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__notebook__"}
    exec(compile(source, str(NOTEBOOK), "exec"), namespace)  # noqa: S102 - our own doc
    printed = capsys.readouterr().out
    assert "generatons: unknown key (did you mean 'generations'?)" in printed
    assert namespace["same"].log == namespace["run"].log and len(namespace["run"].log) == 3
    curves = namespace["curves"]  # both runs' real numbers, side by side, no NaN
    assert curves.shape == (3, 2) and bool(curves.notna().all().all()), curves
    assert "NaN" not in printed
    for made in ("runs/seed1/fitness.png", "runs/seed2/best.npz", "comparison.png",
                 "runs/seed3/tensorboard"):
        assert (tmp_path / made).exists(), made


def test_python_api_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/python-api.md's example, with fewer generations."""
    text = (ROOT / "docs" / "python-api.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S)
                 if b.startswith("from evo_core import api"))
    example = str(ROOT / "examples" / "cartpole_ctrnn.toml")
    source = block.replace('"examples/cartpole_ctrnn.toml"', repr(example)) \
        .replace('{"generations": 10}', '{"generations": 2}')
    assert example in source and '"generations": 2' in source
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(compile(source, "python-api.md", "exec"), namespace)  # noqa: S102 - our own doc
    assert len(namespace["run"].log) == 2 and (tmp_path / "runs" / "a" / "best.npz").exists()


def test_a_run_is_what_event_hooks_receive(trained: api.Run, tmp_path: Path) -> None:
    """`api.Run` implements `evo_core.IRun`: the checkpointed optimizer state, and a plugin's
    own file written into the folder by a plain name only."""
    checkpointed = trained.checkpointed_optimizer()
    assert checkpointed is not None
    generation, state = checkpointed
    assert generation == len(trained.log) and "pickle" in state and "signature" in state
    copy = api.Run.open(shutil.copytree(trained.path, tmp_path / "copy"))
    written = copy.write_file("notes.txt", b"hello")
    assert written == copy.path / "notes.txt" and written.read_bytes() == b"hello"
    for name in ("../escape.txt", "sub/notes.txt", "", ".."):
        with pytest.raises(UserError, match="plain file name"):
            copy.write_file(name, b"x")
    assert not (tmp_path / "escape.txt").exists()
    # a QD plugin's archive, drawn by the core (no [behaviour]: its values are named by index)
    cells = np.full((3, 2), np.nan)
    cells[0, 1] = 5.0
    image = copy.write_archive_figure(ArchiveGrid(cells, np.zeros(2), np.ones(2), 2, 1, 6, 2))
    assert image == copy.path / "archive.png" and image.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(UserError, match=r"needs an evo_core\.ArchiveGrid, got dict"):
        copy.write_archive_figure({})  # type: ignore[arg-type]
    (copy.path / "checkpoint.npz").unlink()
    assert copy.checkpointed_optimizer() is None


#: Where a Ctrl-C lands in generation 3: what is called there once a generation (an object and
#: its attribute), and the config that makes the run call it (`[champion]` off where only the
#: evaluation should be called: one call a generation).
_INTERRUPTED_IN: dict[str, tuple[Any, str, dict[str, Any]]] = {
    "evaluation": (SequentialHandler, "evaluate", {"champion": {"episodes": 0}}),
    "champion tests": (Stopping, "_passes_tests", {"champion": {"episodes": 0}, "stop": {
        "champion_tests": [{"environment": "CartPole-v1", "episodes": 3, "min_return": 1e9}]}}),
    "fresh episodes": (training, "fresh_scores", {"champion": {"episodes": 4}}),
}


@pytest.mark.parametrize("where", list(_INTERRUPTED_IN))
@pytest.mark.parametrize("optimizer", [{"type": "cma-es", "population_size": 6},
                                       {"type": "mu-lambda", "population_size": 6, "mu": 3}])
def test_an_interrupt_checkpoints_the_generation_before_exactly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, optimizer: dict[str, Any],
        where: str) -> None:
    """checkpoint_every = 0 takes no optimizer state after a generation (CMA-ES gives the one
    from before its ask), yet a Ctrl-C in generation 3 still checkpoints generation 2 exactly,
    wherever it lands: in the evaluation, in the champion tests (the double-pole examples spend
    most of a generation there: a Ctrl-C lost the whole run while they ran after the optimizer
    was told), or in the fresh episodes of [champion]. The resumed run equals one run: log.csv
    (test episodes and fresh scores included), best.npz and the hall of fame."""
    owner, name, changes = _INTERRUPTED_IN[where]
    _interrupt_and_resume(tmp_path, monkeypatch, owner, name,
                          config_dict(optimizer=optimizer, generations=4, checkpoint_every=0,
                                      **changes))


def test_the_double_pole_example_interrupted_in_its_champion_test_resumes_exactly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example itself (checkpoint_every = 0, most of its time in champion tests), Ctrl-C in
    generation 3's test: nothing finished is lost."""
    import tomllib

    config = tomllib.loads((ROOT / "examples" / "double_pole_no_velocity.toml").read_text())
    config.update(generations=4, seed=3)
    assert config["checkpoint_every"] == 0 and config["stop"]["champion_tests"]
    _interrupt_and_resume(tmp_path, monkeypatch, Stopping, "_test", config)


def _interrupt_and_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, owner: Any,
                          name: str, config: dict[str, Any]) -> None:
    """Train `config` whole; train it again with a Ctrl-C at the third call of `owner.name`
    (once a generation: in generation 3), which must leave generation 2 checkpointed; resume
    it, and check that it equals the whole run."""
    import os
    import signal

    whole = api.train(config, out=tmp_path / "whole")
    called = getattr(owner, name)
    calls = [0]

    def interrupted(*args: Any) -> Any:
        calls[0] += 1
        if calls[0] == 3:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C during generation 3
        return called(*args)

    monkeypatch.setattr(owner, name, interrupted)
    with pytest.raises(KeyboardInterrupt):
        api.train(config, out=tmp_path / "run")
    meta = json.loads(npz(tmp_path / "run" / "checkpoint.npz")["meta"].tobytes())
    assert meta["generation"] == 2
    monkeypatch.setattr(owner, name, called)
    api.resume(tmp_path / "run")

    def rows(run: Path) -> list[dict[str, str]]:
        with open(run / "log.csv", newline="") as handle:
            return [{k: v for k, v in row.items() if k != "seconds"}
                    for row in csv.DictReader(handle)]

    assert rows(tmp_path / "run") == rows(whole.path)
    for file in ("best.npz", "hall_of_fame.npz"):
        resumed, one = npz(tmp_path / "run" / file), npz(whole.path / file)
        assert resumed.keys() == one.keys()
        assert all(np.array_equal(resumed[key], one[key]) for key in one), file
