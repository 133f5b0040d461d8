"""What the plugins provided: components by kind and name, and the status of every plugin."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import pluggy
from typing_extensions import Protocol

from evo_core.contract import hookspecs
from evo_core.contract.config_models import (
    BrainConfig,
    ComponentConfig,
    OptimizerConfig,
    ProcessingConfig,
    TrackerConfig,
    VectorizerConfig,
    WrapperConfig,
)
from evo_core.contract.protocols import IBrainFactory, IHandler, IOptimizer
from evo_core.errors import UserError
from evo_core.suggest import did_you_mean

__all__ = ["Kind", "KindInfo", "KINDS", "Component", "PluginStatus", "Registry",
           "new_plugin_manager"]

Kind = Literal["brain", "optimizer", "processing", "tracker", "wrapper", "vectorizer"]


@dataclass(frozen=True)
class KindInfo:
    """Everything the core knows about one kind of component, in one place."""

    #: the hook (in `contract/hookspecs.py`) whose implementations return the classes
    hook: str
    #: the config base every class's `config_model` must derive from
    config_base: type[ComponentConfig]
    #: the runtime-checkable protocol the class itself must satisfy (checked with `issubclass`
    #: when the plugin loads), or None where the class is only called (trackers, wrappers)
    protocol: type[Any] | None
    #: what the listing command lists, in the plural ("brain types")
    plural: str
    #: the command that lists them
    command: str
    #: names an extra of evo-core installs (name -> extra), for the line that says which extra
    #: to install when a config names one that is missing
    extras: Mapping[str, str] = field(default_factory=dict)


#: The one table of component kinds: the config table name is the key.
KINDS: dict[Kind, KindInfo] = {
    # `IBrainFactory`: the methods of `IBrainTemplate` (whose `genome_size` may be set on the
    # instance, so the class cannot show it; the conformance checker checks the instance)
    "brain": KindInfo("evo_brain_templates", BrainConfig, IBrainFactory,
                      "brain types", "list-brains"),
    "optimizer": KindInfo("evo_optimizers", OptimizerConfig, IOptimizer,
                          "optimizers", "list-optimizers"),
    "processing": KindInfo("evo_processing_handlers", ProcessingConfig, IHandler,
                           "processing handlers", "list-handlers"),
    # a tracker's hook returns its config model itself: the tracker is the plugin's event hooks
    "tracker": KindInfo("evo_trackers", TrackerConfig, None, "experiment trackers",
                        "list-trackers"),
    # a wrapper class is called with (config, env) and returns the wrapped environment
    "wrapper": KindInfo("evo_wrappers", WrapperConfig, None, "environment wrappers",
                        "list-wrappers"),
    # selected by `episodes.vectorize` (no table of its own): the core's modes (off, sync,
    # native, envpool) and a plugin's alike; the environment ids each one evaluates are listed
    # by `evo list-environments`. (IChunkEvaluatorClass has attributes, which issubclass cannot
    # check: the config model is checked like every kind's, the rest by the evaluator's own
    # `check` before a run.) evo-core's `jax` extra installs evo-jax, which registers "jax".
    "vectorizer": KindInfo("evo_chunk_evaluators", VectorizerConfig, None,
                           "chunk evaluators (episodes.vectorize)", "list-vectorizers",
                           {"jax": "jax"}),
}


def protocol_methods(protocol: type[Any]) -> list[str]:
    """The public methods `protocol` declares, its bases' included (to name what a class
    lacks; the check itself is `issubclass`)."""
    names: list[str] = []
    for base in reversed(protocol.__mro__):
        if base is Protocol or Protocol not in base.__mro__:
            continue
        names.extend(name for name, value in vars(base).items()
                     if callable(value) and not name.startswith("_") and name not in names)
    return names


def new_plugin_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    return manager


@dataclass(frozen=True)
class Component:
    """One registered brain template, optimizer, handler, tracker, wrapper or vectorizer class."""

    kind: Kind
    name: str
    cls: type[Any]
    distribution: str
    version: str
    description: str

    @property
    def config_model(self) -> type[ComponentConfig]:
        model: type[ComponentConfig] = self.cls if self.kind == "tracker" else self.cls.config_model
        return model


@dataclass(frozen=True)
class PluginStatus:
    """One plugin module as discovery saw it."""

    plugin: str
    distribution: str
    version: str
    status: Literal["ok", "broken", "incompatible"]
    reason: str = ""

    @property
    def label(self) -> str:
        return f"{self.distribution} {self.version}".strip()


@dataclass(eq=False)
class Registry:
    """Components by kind and name, in discovery order, every plugin's status, and the plugin
    manager holding the plugins that loaded (through which the event hooks are called)."""

    components: dict[Kind, dict[str, Component]] = field(
        default_factory=lambda: {kind: {} for kind in KINDS})
    plugins: list[PluginStatus] = field(default_factory=list)
    manager: pluggy.PluginManager = field(default_factory=new_plugin_manager, repr=False)

    def names(self, kind: Kind) -> list[str]:
        return list(self.components[kind])

    def get(self, kind: Kind, name: str) -> Component:
        """The component, or a UserError that lists what is installed."""
        try:
            return self.components[kind][name]
        except KeyError:
            raise UserError(self.unknown(kind, name)) from None

    def unknown(self, kind: Kind, name: str, key: str = "") -> str:
        """The line for a `kind` named `name` that is not installed (named by the config key
        `key`, if given): the extra of evo-core that installs it, or what is installed, with
        the nearest name."""
        info = KINDS[kind]
        extra = info.extras.get(name)
        if extra is not None:
            named = f'{key} = "{name}"' if key else f"{kind} {name!r}"
            return (f"{named} needs the plugin that provides it, which is not installed; "
                    f"install it with pip install 'evo-core[{extra}]' (see `evo {info.command}`)"
                    f"{self.broken_hint()}")
        installed = self.names(kind)
        return (f"{f'{key}: ' if key else ''}no {kind} named {name!r} is installed"
                f"{did_you_mean(name, installed)}; installed: {', '.join(installed) or 'none'} "
                f"(see `evo {info.command}`){self.broken_hint()}")

    def problems(self) -> list[PluginStatus]:
        return [p for p in self.plugins if p.status != "ok"]

    def broken_hint(self) -> str:
        """'; not loaded, and may provide it: ...' naming every plugin that failed to load
        (what a broken plugin would have provided cannot be known), else ''."""
        problems = self.problems()
        if not problems:
            return ""
        listed = "; ".join(f"{p.plugin} ({p.label}): {p.reason}" for p in problems)
        return f"; plugins that failed to load and may provide it: {listed}"
