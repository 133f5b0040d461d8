"""Environments: gymnasium ids and evo's own tasks, made the same way in every process."""

from evo_core.environments.making import make_environment, probe_spaces

__all__ = ["make_environment", "probe_spaces"]
