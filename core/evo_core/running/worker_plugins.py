"""The run's `--plugin` modules, loaded in every worker process before it makes the environment.

A brain plugin reaches a worker by itself: unpickling the template imports the brain's module.
A module that only registers an environment (`gym.register` at import time) is named by nothing
the worker unpickles, so a worker that did not inherit the main process's imports (mp with
spawn or forkserver, every Dask worker) could not make the environment: gymnasium's
`NameNotFound` came back as a traceback. The runner spec is therefore wrapped: in any process but
the one that made it, `build` first loads the run's local plugin modules (`--plugin`,
`EVO_PLUGINS`) as the main process did, and an environment that still cannot be made there is
one line naming the id and what to do. A worker of a remote Dask cluster must be able to import
the modules itself (installed, or on its PYTHONPATH); relative paths are sent resolved.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym

from evo_core.contract.protocols import IBrainTemplate, IEvaluator, IEvaluatorFactory
from evo_core.errors import UserError
from evo_core.hooks.discovery import get_registry, local_plugins_from_env
from evo_core.interrupts import describe_raised, is_interrupt

__all__ = ["PluginsFirst", "load_worker_plugins", "with_worker_plugins"]


def _resolved(spec: str) -> str:
    """A `.py` file or package folder given by a relative path, made absolute (a worker's
    working directory may differ); a module name as it is."""
    if spec.endswith(".py") or "/" in spec or os.sep in spec:
        return str(Path(spec).expanduser().resolve())
    return spec


def load_worker_plugins(specs: tuple[str, ...]) -> None:
    """Load `specs` in this (worker) process as the main process loaded them: a worker that
    inherited the same `EVO_PLUGINS` reuses its registry; one that did not gets the variable
    (so that the wrappers it finds later come from the same modules). A module the worker
    cannot import is a UserError naming it."""
    if not specs:
        return
    if tuple(_resolved(spec) for spec in local_plugins_from_env()) != specs:
        os.environ["EVO_PLUGINS"] = ",".join(specs)
    try:
        get_registry()
    except UserError as exc:
        raise UserError(f"a worker process (pid {os.getpid()}): {exc}; every worker must be "
                        "able to import the modules given with --plugin") from None


@dataclass(frozen=True)
class PluginsFirst:
    """An `IEvaluatorFactory` that loads the run's local plugins before building, in a worker."""

    inner: IEvaluatorFactory
    #: the environment's id, for the message
    environment: str
    #: the run's local plugin modules, relative paths resolved
    plugins: tuple[str, ...]
    #: the process that made the spec: it has loaded the plugins and made the environment already
    origin: int

    def build(self, template: IBrainTemplate) -> IEvaluator:
        if os.getpid() == self.origin:
            return self.inner.build(template)
        load_worker_plugins(self.plugins)
        try:
            return self.inner.build(template)
        except UserError:
            raise
        except BaseException as exc:  # the environment's code: name it
            if is_interrupt(exc):
                raise
            raise self._cannot_make(exc) from None

    def _cannot_make(self, exc: BaseException) -> UserError:
        """The main process made the environment before the run began: what differs is this
        process, most often a module that registers the id and was not loaded here."""
        where = (f"environment {self.environment!r} cannot be made in a worker process (pid "
                 f"{os.getpid()}), only in the main one: {describe_raised(exc)}")
        if not isinstance(exc, (gym.error.Error, ImportError)):
            return UserError(f"{where}; what does it need that this process lacks?")
        loaded = f" (loaded here: {', '.join(self.plugins)})" if self.plugins else ""
        return UserError(f"{where}{loaded}; name the module that registers it with --plugin "
                         "MODULE (or EVO_PLUGINS), and on a remote Dask cluster install it, or "
                         "put it on PYTHONPATH, on every worker")


def with_worker_plugins(spec: IEvaluatorFactory, environment: str) -> PluginsFirst:
    """`spec`, wrapped to load this process's `--plugin` modules in every worker first."""
    plugins = tuple(_resolved(name) for name in local_plugins_from_env())
    return PluginsFirst(spec, environment, plugins, os.getpid())
