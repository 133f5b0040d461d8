"""The MLflow tracker (plugins/mlflow) against a real local MLflow store, read back with MLflow's
own client.

The store is SQLite, MLflow's default kind (its file store is in maintenance mode), made once for
the module in a temporary folder: making its tables is most of the module's time. Its artifact
root is that folder's `mlruns` (MLflow's default, ./mlruns, resolved where the store is made).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from conftest import evo_in_process, requires
from shared_configs import config_dict, local_plugin

from evo_core import UserError, api
from evo_core.cli.main import main

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.entities import Run as MlflowRun

pytest.importorskip("evo_mlflow")  # its package imports no MLflow (evo_mlflow.params does)
pytestmark = requires("mlflow", reason="MLflow is not installed")
from evo_mlflow.run_file import NAME  # noqa: E402


def mlflow_client(uri: str) -> MlflowClient:
    from mlflow import MlflowClient

    return MlflowClient(uri)


#: keeps the checkpoint of generation 2 aside, to put it back after generation 4: what a kill
#: between two checkpoints leaves
KEEPER = '''
    import shutil
    from evo_core import hookimpl

    @hookimpl
    def evo_generation_finished(run, row):
        if row["generation"] == 2:
            shutil.copy(run.path / "checkpoint.npz", run.path.parent / "generation2.npz")
    '''


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The URI of a SQLite store with its tables made."""
    folder = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)  # MLflow's default artifact root, ./mlruns, is the folder's
        mlflow_client(uri).search_experiments()
    return uri


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever MLflow makes in the working folder stays in the test's own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)


def the_mlflow_run(store: str, run: Path) -> MlflowRun:
    """The one MLflow run of the evo run `run` (its folder, a tag), in any experiment."""
    client = mlflow_client(store)
    experiments = [e.experiment_id for e in client.search_experiments()]
    found = [r for r in client.search_runs(experiments)
             if r.data.tags.get("evo.run_folder") == str(run.resolve())]
    assert len(found) == 1, [r.info.run_id for r in found]
    assert json.loads((run / NAME).read_text())["run_id"] == found[0].info.run_id
    return found[0]


def assert_every_generation_once(store: str, mlflow_run: MlflowRun, log: list[dict[str, Any]],
                                 exact: bool = True) -> None:
    """Each log.csv column but `generation` is a metric holding every generation once, as its
    step; with `exact`, each value is log.csv's (all but `seconds` without it)."""
    client = mlflow_client(store)
    columns = set(log[0]) - {"generation"}
    assert set(mlflow_run.data.metrics) == columns
    for column in columns:
        history = sorted(client.get_metric_history(mlflow_run.info.run_id, column),
                         key=lambda metric: metric.step)
        assert [m.step for m in history] == [row["generation"] for row in log], column
        if exact or column != "seconds":
            assert [m.value for m in history] == [float(row[column]) for row in log], column


def test_a_trained_and_resumed_run_is_one_mlflow_run_with_every_generation(
        store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local_plugin(tmp_path, monkeypatch, "evo_test_keeper", KEEPER)
    tracker = {"tracking_uri": store, "experiment_name": "cartpole"}
    run = api.train(config_dict(generations=4, trackers={"mlflow": tracker}),
                    out=tmp_path / "run")
    first = the_mlflow_run(store, run.path)
    assert first.info.status == "FINISHED" and first.info.run_name == "run"
    # killed after generation 4, checkpointed at 2: the resume computes 3 and 4 again, and the
    # tracker sees them again; it must not log them twice. A received tracking URI is used only
    # when given again.
    (tmp_path / "generation2.npz").replace(run.path / "checkpoint.npz")
    resumed = api.resume(run.path, generations=6,
                         overrides={"trackers.mlflow.tracking_uri": store})
    client = mlflow_client(store)
    experiment = client.get_experiment_by_name("cartpole")
    assert experiment is not None
    (mlflow_run,) = client.search_runs([experiment.experiment_id])
    assert mlflow_run.info.run_id == first.info.run_id == the_mlflow_run(store,
                                                                          run.path).info.run_id
    assert mlflow_run.info.status == "FINISHED"
    log = resumed.log
    assert [row["generation"] for row in log] == [1, 2, 3, 4, 5, 6]
    # generations 3 and 4 hold the first process's values: the same, since a resume is exact,
    # but for the wall-clock seconds
    assert_every_generation_once(store, mlflow_run, log, exact=False)

    params = mlflow_run.data.params
    assert params["optimizer.population_size"] == "6" and params["brain.type"] == "ctrnn"
    assert params["environment"] == "CartPole-v1" and params["episodes.max_steps"] == "100"
    assert params["generations"] == "4"  # MLflow keeps a parameter as it was first logged
    assert not any(key.startswith(("trackers", "provenance")) for key in params)

    artifacts = {a.path for a in client.list_artifacts(mlflow_run.info.run_id)}
    assert artifacts == {"config.json", "best.npz", "fitness.png"}
    copy = Path(client.download_artifacts(mlflow_run.info.run_id, "config.json",
                                          str(tmp_path)))
    # logged again at the end of the resume: the config it ran with
    assert copy.read_bytes() == (run.path / "config.json").read_bytes()
    assert json.loads(copy.read_text())["generations"] == 6


def test_a_tracker_added_on_resume_sends_the_earlier_generations_to_mlflows_default_store(
        store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = api.train(config_dict(generations=2), out=tmp_path / "run")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store)  # MLflow decides: no tracking_uri
    resumed = api.resume(run.path, generations=3, overrides={"trackers.mlflow": {}})
    mlflow_run = the_mlflow_run(store, run.path)
    experiment = mlflow_client(store).get_experiment(mlflow_run.info.experiment_id)
    assert experiment.name == "evo"
    assert_every_generation_once(store, mlflow_run, resumed.log)
    assert json.loads((run.path / "config.json").read_text())["trackers"] == {
        "mlflow": {"type": "mlflow", "tracking_uri": None, "experiment_name": "evo"}}


@pytest.mark.parametrize("gone", ["deleted", "unknown"])
def test_a_run_the_store_does_not_hold_is_tracked_in_a_new_mlflow_run(
        store: str, tmp_path: Path, gone: str) -> None:
    if gone == "deleted":
        run = api.train(config_dict(generations=2, trackers={"mlflow": {"tracking_uri": store}}),
                        out=tmp_path / "run")
        first = the_mlflow_run(store, run.path).info.run_id
        mlflow_client(store).delete_run(first)
        said = "holds as deleted"
    else:  # another store's run, as after a change of tracking_uri
        run = api.train(config_dict(generations=2), out=tmp_path / "run")
        first = "0" * 32
        (run.path / NAME).write_text(json.dumps({"run_id": first, "experiment_id": "0"}))
        said = "does not hold"
    with pytest.warns(RuntimeWarning, match="evo-mlflow") as warned:
        resumed = api.resume(run.path, generations=3,
                             overrides={"trackers.mlflow.tracking_uri": store})
    (message,) = [str(w.message) for w in warned if "evo-mlflow" in str(w.message)]
    assert f"{run.path / NAME} names the MLflow run {first}, which the store {said}; a new " \
        "MLflow run holds this run's whole log" in message and "\n" not in message
    mlflow_run = the_mlflow_run(store, run.path)  # the one the file names (search_runs leaves
    # deleted runs out)
    assert mlflow_run.info.run_id != first
    assert_every_generation_once(store, mlflow_run, resumed.log)


def test_an_interrupted_run_is_killed_in_mlflow(store: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    local_plugin(tmp_path, monkeypatch, "evo_test_interrupt", '''
        from evo_core import hookimpl

        @hookimpl
        def evo_generation_finished(run, row):
            if row["generation"] == 2:
                raise KeyboardInterrupt
        ''')
    with pytest.raises(KeyboardInterrupt):
        api.train(config_dict(generations=4, trackers={"mlflow": {"tracking_uri": store}}),
                  out=tmp_path / "run")
    mlflow_run = the_mlflow_run(store, tmp_path / "run")
    assert mlflow_run.info.status == "KILLED"
    assert_every_generation_once(store, mlflow_run, api.Run.open(tmp_path / "run").log)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_store_is_reported_and_the_run_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "5")
    tracker = {"tracking_uri": f"http://127.0.0.1:{closed_port()}"}
    with pytest.warns(RuntimeWarning) as warned:
        run = api.train(config_dict(trackers={"mlflow": tracker}), out=tmp_path / "run")
    messages = [str(w.message) for w in warned if "evo-mlflow" in str(w.message)]
    assert len(messages) == 1 and "evo_run_started() raised" in messages[0], messages
    assert "\n" not in messages[0]
    assert len(run.log) == 3 and not (run.path / NAME).exists()


@pytest.mark.parametrize("planted", ["garbage", "link"])
def test_a_run_file_evo_did_not_write_is_refused_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted: str) -> None:
    run = api.train(config_dict(generations=1), out=tmp_path / "run")
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"run_id": "0" * 32}))
    if planted == "link":
        (run.path / NAME).symlink_to(secret)
    else:
        (run.path / NAME).write_text("{not json")
    # the file is refused before the store is used: nothing listens here
    tracker = {"tracking_uri": f"http://127.0.0.1:{closed_port()}"}
    with pytest.warns(RuntimeWarning) as warned:
        api.resume(run.path, generations=2, overrides={"trackers.mlflow": tracker})
    (message,) = [str(w.message) for w in warned if "evo-mlflow" in str(w.message)]
    why = "is a symbolic link" if planted == "link" else "names no MLflow run id"
    assert f"{run.path / NAME} {why}; remove it" in message and "\n" not in message
    assert len(api.Run.open(run.path).log) == 2


@pytest.mark.parametrize("tracker,message", [
    ({"tracking_ur": "sqlite:///x.db"},
     "trackers.mlflow.tracking_ur: unknown key (did you mean 'tracking_uri'?)"),
    ({"experiment_name": ""}, "trackers.mlflow.experiment_name: "),
    ({"tracking_uri": 3}, "trackers.mlflow.tracking_uri: "),
])
def test_a_bad_table_is_refused_in_one_line(tmp_path: Path, tracker: dict[str, Any],
                                            message: str) -> None:
    with pytest.raises(UserError) as error:
        api.train(config_dict(trackers={"mlflow": tracker}), out=tmp_path / "run")
    assert str(error.value).startswith(f"config: {message}") and "\n" not in str(error.value)
    assert not (tmp_path / "run").exists()


def test_a_received_tracking_uri_is_used_only_when_given_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = api.train(config_dict(generations=1), out=tmp_path / "run").path
    elsewhere = tmp_path / "elsewhere"
    config = json.loads((run / "config.json").read_text())
    config["trackers"] = {"mlflow": {"tracking_uri": f"sqlite:///{elsewhere / 'mlflow.db'}"}}
    (run / "config.json").write_text(json.dumps(config))
    assert main(["resume", str(run), "--generations", "2", "--quiet"]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("evo:")]
    assert len(lines) == 1 and "trackers.mlflow.tracking_uri" in lines[0], lines
    assert "--set trackers.mlflow.tracking_uri=PATH" in lines[0]
    with pytest.raises(UserError, match=r"trackers\.mlflow\.tracking_uri"):
        api.resume(run, generations=2)
    assert not elsewhere.exists() and not (run / NAME).exists()


def test_listed() -> None:
    result = evo_in_process("list-trackers", "--json")
    assert result.returncode == 0
    (row,) = [row for row in json.loads(result.stdout) if row["name"] == "mlflow"]
    assert row["status"] == "ok" and row["distribution"] == "evo-mlflow"


def test_parameters_keep_to_mlflows_rules() -> None:
    from evo_mlflow.params import CUT, parameters

    found = parameters({
        "seed": 3, "environment": {"id": "X-v0", "kwargs": {"odd key!": 1, "a/../b": 2}},
        "optimizer": {"sigma": 0.5, "mu": None, "long": "x" * 7000},
        "stop": {"champion_tests": [{"episodes": 2}]},
        "provenance": {"run_id": "r"}, "trackers": {"mlflow": {"tracking_uri": "secret"}}})
    assert found.values == {
        "seed": "3", "environment.id": "X-v0", "optimizer.sigma": "0.5", "optimizer.mu": "null",
        "optimizer.long": "x" * (6000 - len(CUT)) + CUT,
        "stop.champion_tests": '[{"episodes": 2}]'}
    assert set(found.skipped) == {"environment.kwargs.odd key!", "environment.kwargs.a/../b"}
    assert found.cut == ("optimizer.long",)
    said = found.problems()
    assert "environment.kwargs.odd key! (MLflow's names hold only" in said and "\n" not in said
    assert "optimizer.long (cut to 6000 characters)" in said
