"""The hooks a plugin may implement: the whole plugin API of evo in one module.

A plugin is a module named by an entry point in the group ``evo``. It implements any of these
functions, decorated with [`hookimpl`][evo_core.hookimpl], with the same name and no more arguments
than the specification has (pluggy allows fewer, so new arguments can be added without breaking old
plugins). The core registers its own optimizers, handlers, wrappers and `episodes.vectorize` modes
through the same hooks.

The component hooks (``evo_brain_templates`` ... ``evo_chunk_evaluators``) are called once per
process, when the registry is first built (by any ``evo`` command, by
``evo_core.hooks.discovery.load_registry()``, and in each worker process that needs the
registry). An exception raised in one of them marks only
that plugin as broken.

The event hooks (``evo_run_started``, ``evo_generation_finished``, ``evo_run_finished``) are called
in the training process, by ``evo train``, ``evo resume`` and ``evo_core.api`` alike, for experiment
trackers and other observers. Their ``run`` is an [`IRun`][evo_core.IRun] (``run.path``,
``run.config``, ``run.log``; ``evo_core.api.Run`` implements it). They observe only: a run's
results never depend on them. They are called through pluggy, in the order the plugins were
discovered (built-ins, installed plugins by distribution name, ``--plugin``/``EVO_PLUGINS``
modules in the order given); ``tryfirst``/``trylast`` and hookwrappers (``wrapper=True``) work
as pluggy documents them. An event hook that raises is reported once, naming its plugin, and
that plugin's event hooks are skipped for the rest of the run; training goes on.
"""

from __future__ import annotations

from typing import Any

import pluggy

from evo_core.contract.config_models import TrackerConfig
from evo_core.contract.protocols import (
    IBrainTemplateClass,
    IChunkEvaluatorClass,
    IHandlerClass,
    IOptimizerClass,
    IRun,
    IWrapperClass,
)

__all__ = ["PROJECT", "hookspec", "hookimpl", "EVENT_HOOKS", "evo_brain_templates",
           "evo_optimizers", "evo_processing_handlers", "evo_trackers", "evo_wrappers",
           "evo_chunk_evaluators",
           "evo_run_started", "evo_generation_finished", "evo_run_finished"]

PROJECT = "evo"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

#: the hooks called during training rather than when the registry is built
EVENT_HOOKS = ("evo_run_started", "evo_generation_finished", "evo_run_finished")


@hookspec
def evo_brain_templates() -> list[IBrainTemplateClass]:
    """Return the brain template classes this plugin provides.

    Each class has a ``config_model`` (a subclass of [`BrainConfig`][evo_core.BrainConfig] whose
    field ``type: Literal["name"] = "name"`` is the brain's registered name), a constructor
    ``(config, observation_space, action_space, rng)``, ``genome_size`` and ``make(genome)``. A name
    already registered by another distribution is refused and reported.
    """
    raise NotImplementedError


@hookspec
def evo_optimizers() -> list[IOptimizerClass]:
    """Return optimizer classes.

    Each has a ``config_model`` (a subclass of [`OptimizerConfig`][evo_core.OptimizerConfig] with a
    literal ``type``) and is constructed as ``cls(config, genome_size, rng)``; see
    [`IOptimizer`][evo_core.IOptimizer] for the ask/tell interface.
    """
    raise NotImplementedError


@hookspec
def evo_processing_handlers() -> list[IHandlerClass]:
    """Return processing handler classes.

    Each has a ``config_model`` (a subclass of [`ProcessingConfig`][evo_core.ProcessingConfig] with
    a literal ``type``) and is constructed as ``cls(config, evaluators)`` (an
    [`IEvaluatorFactory`][evo_core.IEvaluatorFactory]); see [`IHandler`][evo_core.IHandler] for
    ``evaluate`` and ``close``.
    """
    raise NotImplementedError


@hookspec
def evo_trackers() -> list[type[TrackerConfig]]:
    """Return the config models of the experiment trackers this plugin provides.

    Each is a subclass of [`TrackerConfig`][evo_core.TrackerConfig] with ``type: Literal["name"] =
    "name"``; a config enables the tracker with a table ``[trackers.name]`` holding the model's
    fields (validated like every other table). The tracker itself is the plugin's event hooks, which
    find their settings in ``run.config.trackers.enabled()``.
    """
    raise NotImplementedError


@hookspec
def evo_wrappers() -> list[IWrapperClass]:
    """Return the environment wrapper classes this plugin provides.

    Each has a ``config_model`` (a subclass of [`WrapperConfig`][evo_core.WrapperConfig] whose field
    ``type: Literal["name"] = "name"`` is the wrapper's registered name) and is called as
    ``cls(config, env)``, returning the wrapped ``gymnasium.Env`` (see
    [`IWrapperClass`][evo_core.IWrapperClass]). A config applies it with an entry
    ``{type = "name", ...}`` of ``environment.wrappers``, the first entry innermost.
    """
    raise NotImplementedError


@hookspec
def evo_chunk_evaluators() -> list[IChunkEvaluatorClass]:
    """Return classes that evaluate a worker's chunk of candidates their own way (evo-jax
    compiles a chunk's episodes with JAX; the core's own modes, off, sync, native and envpool,
    are registered here too).

    Each has a ``config_model`` (a subclass of [`VectorizerConfig`][evo_core.VectorizerConfig] whose
    field ``type: Literal["name"] = "name"`` is the value of ``episodes.vectorize`` that selects
    it), a mapping ``environments`` (the environment ids it evaluates, each with a description) and
    ``register_environments()``, and is called as ``cls(config, environment, episodes, behaviour)``
    (see [`IChunkEvaluatorClass`][evo_core.IChunkEvaluatorClass]). The core finds it here, by that
    name, and never imports the plugin.
    """
    raise NotImplementedError


@hookspec
def evo_run_started(run: IRun) -> None:
    """A run starts (or resumes) training, before its next generation.

    ``run`` is the run folder's [`IRun`][evo_core.IRun]; ``run.config`` is the validated config,
    and ``run.log`` holds the generations the run continues from (none for a new run).
    """


@hookspec
def evo_generation_finished(run: IRun, row: dict[str, Any]) -> None:
    """A generation finished and its row is in ``log.csv``.

    ``row`` holds that row as numbers: ``generation``, ``evaluations``, ``best``, ``mean``,
    ``std``, ``worst``, ``best_ever``, ``steps``, ``seconds``.
    """


@hookspec
def evo_run_finished(run: IRun) -> None:
    """Training in this process ended: after the last generation, or when the run stopped early
    (interrupted, or an error), its finished generations checkpointed. Close files here."""
