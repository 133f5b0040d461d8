"""The TensorBoard tracker (plugins/tensorboard): its event files read back with log.csv's values.

The event files are read here without TensorBoard: TFRecord framing (length, masked CRC-32C of
the length, the record, its masked CRC) around `Event` protocol buffers, as TensorBoard's own
reader does, purge steps included.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import run_evo
from test_api import config_dict, local_plugin, write_config

from evo_core import UserError, api

pytest.importorskip("evo_tensorboard")
from tensorboardX.crc32c import crc32c
from tensorboardX.proto.event_pb2 import Event, SessionLog

TAGS = {"best": "fitness/best", "mean": "fitness/mean", "std": "fitness/std",
        "worst": "fitness/worst", "best_ever": "fitness/best_ever",
        "evaluations": "run/evaluations", "steps": "run/steps", "seconds": "run/seconds"}


def masked_crc(data: bytes) -> int:
    crc = int(crc32c(data))
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def events(path: Path) -> Iterator[Event]:
    data = path.read_bytes()
    position = 0
    while position < len(data):
        header = data[position:position + 8]
        (length,) = struct.unpack("<Q", header)
        assert struct.unpack("<I", data[position + 8:position + 12])[0] == masked_crc(header)
        body = data[position + 12:position + 12 + length]
        assert struct.unpack("<I", data[position + 12 + length:position + 16 + length])[0] == \
            masked_crc(body)
        event = Event()
        event.ParseFromString(body)
        yield event
        position += 16 + length


def scalars(folder: Path, purge: bool = True) -> dict[str, list[tuple[int, float]]]:
    """tag -> (step, value) in file order; a START session log at step S drops earlier events
    at steps >= S, as TensorBoard does after a restart."""
    found: dict[str, list[tuple[int, float]]] = {}
    files = sorted(folder.glob("events.out.tfevents.*"))
    assert files, f"no event file in {folder}"
    for file in files:
        for event in events(file):
            if purge and event.session_log.status == SessionLog.START and event.step:
                found = {tag: [(s, v) for s, v in values if s < event.step]
                         for tag, values in found.items()}
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    found.setdefault(value.tag, []).append((event.step, value.simple_value))
    return found


def texts(folder: Path) -> dict[str, str]:
    found = {}
    for file in sorted(folder.glob("events.out.tfevents.*")):
        for event in events(file):
            for value in event.summary.value:
                if value.HasField("tensor") and value.tensor.string_val:
                    found[value.tag] = value.tensor.string_val[0].decode()
    return found


def assert_matches_log(folder: Path, run: api.Run) -> None:
    found = scalars(folder)
    assert set(found) == set(TAGS.values())
    for column, tag in TAGS.items():
        expected = [(row["generation"], float(np.float32(row[column]))) for row in run.log]
        assert found[tag] == expected, tag


def test_event_files_hold_the_log(tmp_path: Path) -> None:
    run = api.train(config_dict(trackers={"tensorboard": {}}), out=tmp_path / "run")
    assert_matches_log(run.path / "tensorboard", run)
    shown = texts(run.path / "tensorboard")
    assert any('"environment": "CartPole-v1"' in text for text in shown.values())
    assert run.config.trackers.enabled()["tensorboard"].type == "tensorboard"
    assert json.loads((run.path / "config.json").read_text())["trackers"] == {
        "tensorboard": {"type": "tensorboard", "logdir": None, "flush_secs": 30}}


def test_off_unless_configured(tmp_path: Path) -> None:
    run = api.train(config_dict(generations=1), out=tmp_path / "run")
    assert not (run.path / "tensorboard").exists() and run.config.trackers.enabled() == {}
    assert json.loads((run.path / "config.json").read_text())["trackers"] == {}


def test_cli_set_and_shared_logdir(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.json")
    out = tmp_path / "runs" / "first"
    result = run_evo("train", str(config), "--out", str(out), "--quiet",
                     "--set", 'trackers.tensorboard={logdir = "tb"}', cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert not (out / "tensorboard").exists()
    assert_matches_log(tmp_path / "tb" / "first", api.Run.open(out))


def test_resume_continues_the_curves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # keep the checkpoint of generation 2, to resume from it after generations 3 and 4 were
    # written: as after a kill between two checkpoints
    local_plugin(tmp_path, monkeypatch, "evo_test_keeper", '''
        import shutil
        from evo_core import hookimpl

        @hookimpl
        def evo_generation_finished(run, row):
            if row["generation"] == 2:
                shutil.copy(run.path / "checkpoint.npz", run.path.parent / "generation2.npz")
        ''')
    run = api.train(config_dict(generations=4, trackers={"tensorboard": {}}),
                    out=tmp_path / "run")
    (tmp_path / "generation2.npz").replace(run.path / "checkpoint.npz")
    api.resume(run.path)
    folder = run.path / "tensorboard"
    assert len(list(folder.glob("events.out.tfevents.*"))) == 2
    assert [step for step, _ in scalars(folder, purge=False)["fitness/best"]] == [1, 2, 3, 4, 3, 4]
    assert_matches_log(folder, run)


def test_a_failing_tracker_is_reported_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "tb").write_text("a file where the tracker wants a folder")
    with pytest.warns(RuntimeWarning) as warned:
        run = api.train(config_dict(trackers={"tensorboard": {"logdir": str(tmp_path / "tb")}}),
                        out=tmp_path / "run")
    messages = [str(w.message) for w in warned if "evo-tensorboard" in str(w.message)]
    assert len(messages) == 1 and "evo_run_started() raised" in messages[0]
    assert len(run.log) == 3


@pytest.mark.parametrize("trackers,message", [
    ({"tensorbord": {}}, "trackers.tensorbord: no tracker named 'tensorbord' is installed (did "
     "you mean 'tensorboard'?); installed: tensorboard (see `evo list-trackers`)"),
    ({"tensorboard": {"logdri": "x"}},
     "trackers.tensorboard.logdri: unknown key (did you mean 'logdir'?)"),
    ({"tensorboard": {"flush_secs": 0}}, "trackers.tensorboard.flush_secs: must be greater"),
    ({"tensorboard": 3}, "trackers.tensorboard: "),
])
def test_tracker_tables_are_validated(tmp_path: Path, trackers: dict[str, Any],
                                      message: str) -> None:
    with pytest.raises(UserError) as error:
        api.train(config_dict(trackers=trackers), out=tmp_path / "run")
    assert str(error.value).startswith(f"config: {message}") and "\n" not in str(error.value)
    assert not (tmp_path / "run").exists()


def test_listed() -> None:
    result = run_evo("list-trackers", "--json")
    assert result.returncode == 0
    assert [row["name"] for row in json.loads(result.stdout)
            if row["status"] == "ok"] == ["tensorboard"]


def test_a_resume_may_add_a_tracker(tmp_path: Path) -> None:
    run = api.train(config_dict(generations=2), out=tmp_path / "run")
    result = run_evo("resume", str(run.path), "--generations", "3", "--quiet",
                     "--set", "trackers.tensorboard={}")
    assert result.returncode == 0, result.stderr
    found = scalars(run.path / "tensorboard")
    assert found["fitness/best"] == [(3, float(np.float32(api.Run.open(run.path).log[2]["best"])))]


def test_a_tracker_hook_must_return_tracker_configs(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from evo_core.hooks.discovery import load_registry

    local_plugin(tmp_path, monkeypatch, "evo_test_bad_tracker", '''
        from evo_core import BrainConfig, hookimpl

        @hookimpl
        def evo_trackers():
            return [BrainConfig]
        ''')
    # a module the user named that fails is an error, naming the module and why
    with pytest.raises(UserError, match=r"evo_test_bad_tracker.*must be a subclass of "
                       r"evo_core\.TrackerConfig"):
        load_registry(local_modules=["evo_test_bad_tracker"])
