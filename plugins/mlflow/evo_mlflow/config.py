"""The `[trackers.mlflow]` table."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from evo_core import NamesPath, TrackerConfig

__all__ = ["MLflowConfig"]


class MLflowConfig(TrackerConfig):
    """An MLflow run per evo run: the config as parameters, each log.csv row as metrics."""

    type: Literal["mlflow"] = "mlflow"
    # a URI names a place evo writes to (a database file, a folder, a server), so a received
    # run folder's value is used only when the user gives it again, as TensorBoard's logdir
    tracking_uri: Annotated[str | None, NamesPath()] = Field(
        None, min_length=1, description="MLflow's tracking store: sqlite:///PATH.db, a server "
        "(http://HOST:5000), or any URI MLflow takes. Unset: MLflow's own default, "
        "MLFLOW_TRACKING_URI, else sqlite:///mlflow.db in the working directory.")
    experiment_name: str = Field(
        "evo", min_length=1, description="The MLflow experiment a new MLflow run is made in "
        "(created when missing); a resumed run stays in the experiment it was made in.")
