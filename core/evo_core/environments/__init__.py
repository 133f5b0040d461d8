"""Environments: gymnasium ids and evo's own tasks, made the same way in every process."""

from evo_core.environments.making import (
    as_environment,
    make_environment,
    probe_spaces,
    wrapper_chain,
)

__all__ = ["as_environment", "make_environment", "probe_spaces", "wrapper_chain"]
