"""MLflow runs for evo runs, written through evo's run events with MLflow's own client."""

from evo_mlflow.config import MLflowConfig

__all__ = ["MLflowConfig"]
