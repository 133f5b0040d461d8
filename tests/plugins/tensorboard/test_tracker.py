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
from shared_configs import config_dict, local_plugin, write_config

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
    # the resume purges from step 1 and sends log.csv's rows again before its own
    assert [step for step, _ in scalars(folder, purge=False)["fitness/best"]] == [1, 2, 3, 4,
                                                                                  1, 2, 3, 4]
    assert_matches_log(folder, run)


def first_offset_at(path: Path, step: int) -> int:
    position = 0
    for event in events(path):
        if event.step == step and event.summary.value:
            return position
        position += 16 + event.ByteSize()
    raise AssertionError(f"no event at step {step} in {path}")


def test_after_a_kill_the_resumed_curve_is_the_log(tmp_path: Path) -> None:
    """What kill -9 leaves: log.csv and the checkpoint at generation 4, the event file's
    buffered events from generation 3 on lost and its last record cut short."""
    run = api.train(config_dict(generations=4, trackers={"tensorboard": {"flush_secs": 2}}),
                    out=tmp_path / "run")
    folder = run.path / "tensorboard"
    (file,) = folder.glob("events.out.tfevents.*")
    with file.open("r+b") as handle:
        handle.truncate(first_offset_at(file, 3) + 7)  # inside the header of a record
    with pytest.raises(struct.error):
        list(events(file))
    api.resume(run.path, generations=6)
    assert_matches_log(folder, api.Run.open(run.path))  # the strict reader reads every file
    assert [step for step, _ in scalars(folder)["fitness/best"]] == [1, 2, 3, 4, 5, 6]
    # a record cut inside its body, and one whose CRC does not match, are cut off too
    for damage in ("body", "crc"):
        (newest,) = sorted(folder.glob("events.out.tfevents.*"))[-1:]
        data = bytearray(newest.read_bytes())
        if damage == "body":
            del data[-9:]
        else:
            data[-2] ^= 0xFF
        newest.write_bytes(bytes(data))
        api.resume(run.path, generations=7 if damage == "body" else 8)
        assert_matches_log(folder, api.Run.open(run.path))


def test_a_link_planted_at_the_event_folder_is_never_written_through(tmp_path: Path) -> None:
    run = api.train(config_dict(generations=2), out=tmp_path / "run")
    victim = tmp_path / "victim"
    victim.mkdir()
    (run.path / "tensorboard").symlink_to(victim)
    with pytest.warns(RuntimeWarning) as warned:
        api.resume(run.path, generations=3, overrides={"trackers.tensorboard": {}})
    (message,) = [str(w.message) for w in warned]
    assert f"{run.path / 'tensorboard'} is a symbolic link" in message
    assert "evo-tensorboard" in message and "\n" not in message
    assert list(victim.iterdir()) == []
    assert len(api.Run.open(run.path).log) == 3  # the run itself goes on, as for any tracker


def test_a_failing_tracker_is_reported_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "tb").write_text("a file where the tracker wants a folder")
    with pytest.warns(RuntimeWarning) as warned:
        run = api.train(config_dict(trackers={"tensorboard": {"logdir": str(tmp_path / "tb")}}),
                        out=tmp_path / "run")
    messages = [str(w.message) for w in warned if "evo-tensorboard" in str(w.message)]
    assert len(messages) == 1 and "evo_run_started() raised" in messages[0]
    assert len(run.log) == 3


@pytest.mark.parametrize("trackers,message", [
    # the installed trackers follow, evo-mlflow's too where it is installed
    ({"tensorbord": {}}, "trackers.tensorbord: no tracker named 'tensorbord' is installed (did "
     "you mean 'tensorboard'?); installed: "),
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
    if message.endswith("installed: "):
        assert "tensorboard" in str(error.value).partition("installed: ")[2]
    assert not (tmp_path / "run").exists()


def test_listed() -> None:
    result = run_evo("list-trackers", "--json")
    assert result.returncode == 0
    listed = [row["name"] for row in json.loads(result.stdout) if row["status"] == "ok"]
    assert "tensorboard" in listed


def test_a_resume_may_add_a_tracker(tmp_path: Path) -> None:
    run = api.train(config_dict(generations=2), out=tmp_path / "run")
    result = run_evo("resume", str(run.path), "--generations", "3", "--quiet",
                     "--set", "trackers.tensorboard={}")
    assert result.returncode == 0, result.stderr
    # the curve is log.csv's, the generations from before the tracker included
    assert_matches_log(run.path / "tensorboard", api.Run.open(run.path))


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
