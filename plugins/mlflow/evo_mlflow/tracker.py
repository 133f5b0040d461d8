"""One MLflow run per evo run, fed from evo's run events through MLflow's own client.

A new evo run makes an MLflow run (named as the run folder) and remembers its id in the run
folder (`run_file`); a resume finds it there and continues it, in whatever store the config or
the environment names now (a store that does not hold it gets a new MLflow run, with the whole
log). The step of every metric is the generation. A resume sends log.csv's earlier rows too, so
that a tracker added on resume, or one whose store was unreachable for a while, catches up; but
a generation the MLflow run already holds is never logged again, metric by metric: after a
`kill -9` between two checkpoints the resume computes the generations since the checkpoint anew
(to the same values: resumes are exact, bar `seconds`), and MLflow, which keeps every value
logged, would otherwise show each of them twice.

MLflow's parameters cannot change once logged: a resume adds the keys the MLflow run lacks and
leaves the others as the run started (`generations` stays the first run's; the `config.json`
artifact, logged again at the end of the resume, holds what the resume ran with).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from mlflow import MlflowClient
from mlflow.entities import Metric, Param, Run, RunStatus
from mlflow.exceptions import MlflowException
from mlflow.utils.validation import MAX_METRICS_PER_BATCH, MAX_PARAMS_TAGS_PER_BATCH

from evo_core import IRun
from evo_mlflow.config import MLflowConfig
from evo_mlflow.params import parameters
from evo_mlflow.run_file import NAME, read_run_id, run_file_bytes

__all__ = ["ARTIFACTS", "MLflowTracker"]

#: the run folder's files logged as artifacts at the end of training (and of every resume)
ARTIFACTS = ("config.json", "best.npz", "fitness.png")
#: the log.csv column that is the step, not a metric
STEP = "generation"


class MLflowTracker:
    """The MLflow run of one evo run."""

    def __init__(self, config: MLflowConfig, run: IRun) -> None:
        """Open (make, or continue) the MLflow run of `run` and send it what it lacks of the
        config and of the rows `run.log` the run continues from."""
        self.client = MlflowClient(tracking_uri=config.tracking_uri)
        self.run_path = run.path
        continued = self._continued(read_run_id(run.path))
        if continued is None:
            created = self._created(config, run)
            self.run_id = created.info.run_id
            run.write_file(NAME, run_file_bytes(self.run_id, created.info.experiment_id))
            held_params: dict[str, str] = {}
        else:
            self.run_id = continued.info.run_id
            self.client.update_run(self.run_id, status=RunStatus.to_string(RunStatus.RUNNING))
            held_params = continued.data.params
        #: whether the MLflow run is this process's own (it holds no metric yet), and, by
        #: metric, the steps it holds
        self._new = continued is None
        self._held: dict[str, set[int]] = {}
        self._log_params(run.config.model_dump(mode="json"), held_params)
        self._log_rows(run.log)

    def record(self, row: dict[str, Any]) -> None:
        """The metrics of a finished generation's row."""
        self._log_rows([row])

    def close(self, status: str) -> None:
        """The run folder's files as artifacts, and the MLflow run ended with `status`
        (FINISHED, FAILED, KILLED)."""
        try:
            for name in ARTIFACTS:
                path = self.run_path / name
                # evo writes them; anything else at these names (a link a run folder came
                # with) is not sent into the store
                if path.is_file() and not path.is_symlink():
                    self.client.log_artifact(self.run_id, str(path))
        finally:
            self.client.set_terminated(self.run_id, status)

    def _continued(self, run_id: str | None) -> Run | None:
        """The MLflow run `run_id`, when the store holds it and it is not deleted."""
        if run_id is None:
            return None
        try:
            found = self.client.get_run(run_id)
        except MlflowException as exc:
            if exc.error_code != "RESOURCE_DOES_NOT_EXIST":
                raise
            found = None
        if found is None or found.info.lifecycle_stage != "active":
            state = "does not hold" if found is None else "holds as deleted"
            warnings.warn(f"evo-mlflow: {self.run_path / NAME} names the MLflow run {run_id}, "
                          f"which the store {state}; a new MLflow run holds this run's whole "
                          "log", RuntimeWarning, stacklevel=2)
            return None
        return found

    def _created(self, config: MLflowConfig, run: IRun) -> Run:
        provenance = run.config.provenance or {}
        tags = {"evo.run_folder": str(run.path.resolve())}
        if isinstance(provenance.get("run_id"), str):
            tags["evo.run_id"] = provenance["run_id"]
        return self.client.create_run(self._experiment_id(config.experiment_name),
                                      run_name=run.path.name, tags=tags)

    def _experiment_id(self, name: str) -> str:
        """The id of the experiment `name`, made when missing (by this process or, in a sweep,
        by another at the same time)."""
        for _ in range(2):
            experiment = self.client.get_experiment_by_name(name)
            if experiment is not None:
                if experiment.lifecycle_stage != "active":
                    raise ValueError(
                        f"the MLflow experiment {name!r} is deleted: restore it (`mlflow "
                        f"experiments restore --experiment-id {experiment.experiment_id}`) or "
                        "name another with trackers.mlflow.experiment_name")
                return str(experiment.experiment_id)
            try:
                return self.client.create_experiment(name)
            except MlflowException as exc:  # made meanwhile by another run of a sweep
                if exc.error_code != "RESOURCE_ALREADY_EXISTS":
                    raise
        raise ValueError(f"the MLflow experiment {name!r} could not be made or found")

    def _log_params(self, config: dict[str, Any], held: dict[str, str]) -> None:
        found = parameters(config)
        if found.problems() and not held:  # said once, when the MLflow run is made
            warnings.warn(f"evo-mlflow: parameters MLflow does not take as they are: "
                          f"{found.problems()}; the config.json artifact holds them whole",
                          RuntimeWarning, stacklevel=3)
        new = [Param(key, value) for key, value in found.values.items() if key not in held]
        for chunk in _chunks(new, MAX_PARAMS_TAGS_PER_BATCH):
            self.client.log_batch(self.run_id, params=chunk)

    def _log_rows(self, rows: Iterable[dict[str, Any]]) -> None:
        """The rows' metrics the MLflow run does not hold yet, in as few calls as MLflow
        takes."""
        timestamp = int(time.time() * 1000)
        metrics = []
        for row in rows:
            step = int(row[STEP])
            metrics += [Metric(key, float(value), timestamp, step) for key, value in row.items()
                        if key != STEP and step not in self._steps(key)]
        for chunk in _chunks(metrics, MAX_METRICS_PER_BATCH):
            self.client.log_batch(self.run_id, metrics=chunk)
            for metric in chunk:
                self._steps(metric.key).add(metric.step)

    def _steps(self, key: str) -> set[int]:
        """The steps of the metric `key` that the MLflow run holds (read once per metric from
        a continued run's history)."""
        if key not in self._held:
            self._held[key] = set() if self._new else {
                metric.step for metric in self.client.get_metric_history(self.run_id, key)}
        return self._held[key]


def _chunks(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    return (items[start:start + size] for start in range(0, len(items), size))
