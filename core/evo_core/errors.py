"""Exceptions the command line turns into one line and exit status 2.

A `UserError` is a mistake the user can fix (a config, a path, a flag); its message already names
the file, field or plugin and what to do, so no traceback is shown.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["first_line", "describe", "UserError", "PluginLoadError", "WriteFailed", "Culprit",
           "EnvironmentRaised", "BatchRowFailed", "CandidateFailure",
           "WorkersLost", "EvaluationTimeout", "EvaluationError"]


class UserError(Exception):
    """A mistake in the user's input; the message is the whole story."""


class PluginLoadError(UserError):
    """A plugin could not be loaded while strict loading was requested."""


class WriteFailed(UserError):
    """A file could not be written (disk full, permissions); the message says which and what to
    do. Training adds how to continue the run (`evo resume`); other commands are run again."""


#: whose code raised during an evaluation
Culprit = Literal["brain", "environment"]


class EnvironmentRaised(Exception):
    """The environment raised in `call` ("reset" or "step"); its exception is the `__cause__`.
    The episode runner wraps the environment's calls in this, so that what goes wrong there is
    blamed on the environment and everything else that raises during an evaluation on the brain."""

    def __init__(self, call: str) -> None:
        super().__init__(call)
        self.call = call

    def __str__(self) -> str:
        return f"the environment raised in {self.call}()"


class BatchRowFailed(Exception):
    """Row `row` of a batched evaluation raised; what it raised is the `__cause__` (an
    `EnvironmentRaised` when the environment did). Lets the handler name the candidate."""

    def __init__(self, row: int) -> None:
        super().__init__(row)
        self.row = row

    def __str__(self) -> str:
        return f"row {self.row} of a batched evaluation raised"


class CandidateFailure(Exception):
    """A brain or the environment raised while one candidate was evaluated; `source` says which
    ("brain" or "environment"). Strings only, so it survives the trip back from a worker process;
    the experiment adds the generation and names the brain's plugin or the environment."""

    def __init__(self, candidate: int, error: str, details: str,
                 source: Culprit = "brain") -> None:
        super().__init__(candidate, error, details, source)
        self.candidate = candidate
        self.error = error
        self.details = details
        self.source = source

    def __str__(self) -> str:
        return f"candidate {self.candidate}: {self.source} raised {self.error}"


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
    """A run stopped because a brain or the environment raised; the message names the genome,
    the culprit (the brain's plugin or the environment) and the error, and `details` holds the
    culprit's traceback."""

    details: str = ""


def first_line(exc: BaseException) -> str:
    """The first line of `exc`'s message, or its type's name when it has none (or when its
    `__str__` raises: plugin code may raise anything): for one-line reports."""
    try:
        text = str(exc).strip()
    except Exception:  # noqa: BLE001 - an exception whose message cannot be printed
        text = ""
    return text.splitlines()[0] if text else type(exc).__name__


def describe(exc: BaseException) -> str:
    """`Type: first line of the message` (`SystemExit: 7`), or the bare type without one."""
    text = first_line(exc)
    name = type(exc).__name__
    return name if text == name else f"{name}: {text}"
