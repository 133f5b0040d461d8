"""The hooks a plugin may implement: the whole plugin API of evo in one module.

A plugin is a module named by an entry point in the group ``evo``. It implements any of these
functions, decorated with :data:`evo_core.hookimpl`, with the same name and no more arguments than
the specification has (pluggy allows fewer, so new arguments can be added without breaking old
plugins). The core registers its own optimizers and handlers through the same hooks.

Each hook is called once per process, when the registry is first built (by any ``evo`` command,
by ``evo_core.plugins.discovery.load_registry()``, and in each worker process that needs the
registry). An exception raised in a hook marks only that plugin as broken.
"""

from __future__ import annotations

from typing import Any

import pluggy

from evo_core.contract.protocols import IBrainTemplateClass

__all__ = ["PROJECT", "hookspec", "hookimpl", "evo_brain_templates", "evo_optimizers",
           "evo_processing_handlers"]

PROJECT = "evo"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def evo_brain_templates() -> list[IBrainTemplateClass]:
    """Return the brain template classes this plugin provides.

    Each class has a ``config_model`` (a subclass of :class:`evo_core.BrainConfig` whose field
    ``type: Literal["name"] = "name"`` is the brain's registered name), a constructor
    ``(config, observation_space, action_space, rng)``, ``genome_size`` and ``make(genome)``.
    A name already registered by another distribution is refused and reported.
    """
    raise NotImplementedError


@hookspec
def evo_optimizers() -> list[type[Any]]:
    """Return optimizer classes.

    Each has a ``config_model`` (a subclass of :class:`evo_core.OptimizerConfig` with a literal
    ``type``) and is constructed as ``cls(config, genome_size, rng)``; see
    :class:`evo_core.optimizers.IOptimizer` for the ask/tell interface.
    """
    raise NotImplementedError


@hookspec
def evo_processing_handlers() -> list[type[Any]]:
    """Return processing handler classes.

    Each has a ``config_model`` (a subclass of :class:`evo_core.ProcessingConfig` with a literal
    ``type``) and is constructed as ``cls(config, evaluators)`` (an
    :class:`evo_core.IEvaluatorFactory`); see :class:`evo_core.IHandler` for ``evaluate`` and
    ``close``.
    """
    raise NotImplementedError
