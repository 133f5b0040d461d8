"""Exceptions the command line turns into one line and exit status 2.

A `UserError` is a mistake the user can fix (a config, a path, a flag); its message already names
the file, field or plugin and what to do, so no traceback is shown.
"""

from __future__ import annotations

__all__ = ["UserError", "PluginLoadError", "CandidateFailure", "WorkersLost",
           "EvaluationTimeout", "EvaluationError"]


class UserError(Exception):
    """A mistake in the user's input; the message is the whole story."""


class PluginLoadError(UserError):
    """A plugin could not be loaded while strict loading was requested."""


class CandidateFailure(Exception):
    """A brain raised while one candidate was evaluated. Strings only, so it survives the trip
    back from a worker process; the experiment adds the generation and the brain's plugin."""

    def __init__(self, candidate: int, error: str, details: str) -> None:
        super().__init__(candidate, error, details)
        self.candidate = candidate
        self.error = error
        self.details = details

    def __str__(self) -> str:
        return f"candidate {self.candidate}: {self.error}"


class WorkersLost(Exception):
    """Workers kept dying on the same work (a brain or environment crashing its process); the
    experiment turns it into an EvaluationError naming the generation."""


class EvaluationTimeout(Exception):
    """One candidate's evaluation took longer than `processing.task_timeout`; numbers only, so it
    survives the trip back from a worker process. The command line adds generation and
    environment."""

    def __init__(self, candidate: int, seconds: float) -> None:
        super().__init__(candidate, seconds)
        self.candidate = candidate
        self.seconds = seconds

    def __str__(self) -> str:
        return f"candidate {self.candidate} took longer than {self.seconds:g} s"


class EvaluationError(Exception):
    """A run stopped because a brain raised; the message names genome, plugin and error, and
    `details` holds the brain's traceback."""

    details: str = ""
