"""Find plugins through the entry-point group ``evo`` and load them one at a time.

pluggy's own loader imports every entry point in one go and lets the first exception abort the
host, so one broken plugin would take every brain down. Here each plugin is imported, registered
in a plugin manager of its own and asked for its components (through pluggy) in its own `try`: a
failure is recorded with its distribution, version and a one-line reason, and the plugin's
components are left out as a whole. `EVO_STRICT_PLUGINS=1` (or `--strict`) turns the first
failure into an error instead, for plugin authors who want to see it.

"Failure" means any BaseException but an interrupt of the process: a plugin that calls
`sys.exit()` or runs argparse at import time (which parses evo's own arguments and exits) is
broken like one that raises. What a plugin prints while it loads goes to stderr, so that it can
neither garble `--json` output nor hide why it failed: the last line it printed is in the reason.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import os
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from importlib import metadata
from pathlib import Path

import pluggy
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from evo_core._version import __version__
from evo_core.contract import hookspecs
from evo_core.contract.config_models import component_type_name
from evo_core.errors import PluginLoadError, UserError, describe
from evo_core.hooks.events import isolated
from evo_core.hooks.registry import (
    KINDS,
    Component,
    Kind,
    PluginStatus,
    Registry,
    new_plugin_manager,
    protocol_methods,
)
from evo_core.interrupts import is_interrupt, marked_interrupts

__all__ = ["ENTRY_POINT_GROUP", "load_registry", "get_registry", "strict_from_env",
           "local_plugins_from_env"]

ENTRY_POINT_GROUP = "evo"
CORE_DISTRIBUTION = "evo-core"
_BUILTIN_MODULES = ("evo_core.optimizers.plugin", "evo_core.handlers.plugin",
                    "evo_core.wrappers.plugin", "evo_core.composition.plugin",
                    "evo_core.evaluation.plugin")


class _PluginFailure(Exception):
    """Why a plugin was left out, in one line."""


def strict_from_env() -> bool:
    return os.environ.get("EVO_STRICT_PLUGINS", "").strip().lower() in {"1", "true", "yes", "on"}


def local_plugins_from_env() -> list[str]:
    """Entries of `EVO_PLUGINS` (comma-separated module names, .py files or package folders):
    unpackaged plugins, e.g. a student's `my_brains.py`. Worker processes inherit the variable,
    so they load the same modules."""
    return [name.strip() for name in os.environ.get("EVO_PLUGINS", "").split(",") if name.strip()]


_cache: dict[tuple[bool, tuple[str, ...]], Registry] = {}


def get_registry(strict: bool | None = None) -> Registry:
    """The registry for this process, built once (hooks run once per process)."""
    strict = strict_from_env() if strict is None else strict
    key = (strict, tuple(local_plugins_from_env()))
    if key not in _cache:
        _cache[key] = load_registry(strict=strict, local_modules=key[1])
    return _cache[key]


def load_registry(strict: bool = False, local_modules: Sequence[str] = ()) -> Registry:
    """Discover built-ins, installed plugins and local modules, in that order."""
    with marked_interrupts():  # a plugin's own KeyboardInterrupt is not the user's Ctrl-C
        loader = _Loader(strict)
        for module_name in _BUILTIN_MODULES:
            loader.add_module(module_name, CORE_DISTRIBUTION, __version__,
                              functools.partial(importlib.import_module, module_name))
        for entry_point in _entry_points():
            dist = entry_point.dist
            dist_name = dist.metadata["Name"] if dist is not None else "?"
            version = dist.version if dist is not None else ""
            loader.add_entry_point(entry_point, dist_name, version, dist)
        if local_modules and os.getcwd() not in sys.path and "" not in sys.path:
            # a module in the current folder is found (and, through sys.path, by spawned worker
            # processes too); last, unlike `python -m`, so that a file in the folder (a received
            # run folder, say) never shadows a module evo imports later
            sys.path.append(os.getcwd())
        for module_name in local_modules:
            loader.add_module(module_name, f"local module {module_name}", "",
                              functools.partial(_import_local, module_name))
            status = loader.registry.plugins[-1]
            if status.status != "ok":  # named by the user: never skipped in silence
                raise UserError(f"plugin module {module_name!r} (from --plugin or EVO_PLUGINS) "
                                f"failed: {status.reason}; fix it, or make it importable (its "
                                "folder in the current directory or on PYTHONPATH)")
        return loader.finish()


def _import_local(spec: str) -> types.ModuleType:
    """Import a `--plugin`/`EVO_PLUGINS` entry: a module name, a `.py` file or a package folder.

    A path works from any folder: its parent goes first on `sys.path` (which spawned worker
    processes inherit), and the file or folder is imported by its name.
    """
    if not (spec.endswith(".py") or "/" in spec or os.sep in spec):
        return importlib.import_module(spec)
    path = Path(spec).expanduser().resolve()
    if path.suffix == ".py" and path.is_file():
        name = path.stem
    elif path.is_dir() and (path / "__init__.py").is_file():
        name = path.name
    else:
        raise ImportError(f"{spec} is neither a .py file nor a package folder (one with "
                          "__init__.py)")
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    return importlib.import_module(name)


def _entry_points() -> list[metadata.EntryPoint]:
    """Entry points of the group, one per (distribution, name), in a stable order.

    A distribution visible twice on `sys.path` (an editable install plus a build folder) would
    otherwise register its brains twice and conflict with itself.
    """
    found: dict[tuple[str, str], metadata.EntryPoint] = {}
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = entry_point.dist
        key = (canonicalize_name(dist.metadata["Name"]) if dist is not None else "",
               entry_point.name)
        found.setdefault(key, entry_point)
    return [found[key] for key in sorted(found)]


class _Loader:
    """Loads plugins one at a time, each in a plugin manager of its own (so its component hooks,
    called through pluggy, can only run its own code), and registers the ones that loaded with
    the registry's manager at the end."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.registry = Registry()
        self.owners: dict[tuple[Kind, str], PluginStatus] = {}
        #: (registration name, plugin) of every plugin that loaded, in discovery order
        self.loaded: list[tuple[str, object]] = []

    def finish(self) -> Registry:
        """The registry, its manager holding every plugin that loaded. pluggy calls a hook's
        implementations last-registered first, so they are registered last first: the event
        hooks then run in discovery order (see `contract/hookspecs.py`)."""
        manager = self.registry.manager
        for name, plugin in reversed(self.loaded):
            manager.register(isolated(plugin, name, manager), name=name)
        return self.registry

    def add_entry_point(self, entry_point: metadata.EntryPoint, dist_name: str, version: str,
                        dist: metadata.Distribution | None) -> None:
        label = f"{entry_point.name} = {entry_point.value}"
        problem = _incompatibility(dist) if dist is not None else None
        if problem:
            self._record(PluginStatus(label, dist_name, version, "incompatible", problem), None)
            return
        self.add_module(label, dist_name, version, entry_point.load)

    def add_module(self, label: str, dist_name: str, version: str,
                   load: Callable[[], object]) -> None:
        status = PluginStatus(label, dist_name, version, "ok")
        name = f"{status.distribution}:{status.plugin}"
        with _output_to_stderr() as output:
            try:
                module = _imported(load, output)
                components = self._register(module, name, status)
            except _PluginFailure as failure:
                failed: _PluginFailure | None = failure
            except BaseException as exc:  # any failure registering ran the plugin's code
                if is_interrupt(exc):
                    raise
                failed = _PluginFailure(f"loading failed: {_reason(exc, output.getvalue())}")
                failed.__cause__ = exc
            else:
                failed = None
        if failed is not None:
            self._record(PluginStatus(label, dist_name, version, "broken", str(failed)), failed)
            return
        for component in components:
            self.registry.components[component.kind][component.name] = component
            self.owners[(component.kind, component.name)] = status
        self.loaded.append((name, module))
        self._record(status, None)

    def _record(self, status: PluginStatus, failure: BaseException | None) -> None:
        self.registry.plugins.append(status)
        if self.strict and status.status != "ok":
            raise PluginLoadError(
                f"plugin {status.plugin!r} from {status.label} is {status.status}: {status.reason} "
                "(strict plugin loading: unset EVO_STRICT_PLUGINS or drop --strict to skip it)"
            ) from (failure.__cause__ if failure is not None else None)

    def _register(self, module: object, name: str, status: PluginStatus) -> list[Component]:
        if not isinstance(module, types.ModuleType) and not hasattr(module, "__dict__"):
            raise _PluginFailure(f"entry point gave {type(module).__name__}, expected a module")
        for other_name, other in self.loaded:
            if other is module:
                raise _PluginFailure(f"registered twice: the module is already loaded as "
                                     f"{other_name!r}")
        own = new_plugin_manager()
        try:
            own.register(module, name=name)
        except pluggy.PluginValidationError as exc:
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            reason = "; ".join(lines[1:]) or lines[0]
            raise _PluginFailure(f"wrong hook signature: {reason}") from exc
        _check_unknown_hooks(module, own)
        components: list[Component] = []
        for kind in KINDS:
            components.extend(self._collect(kind, own, status))
        return components

    def _collect(self, kind: Kind, own: pluggy.PluginManager, status: PluginStatus
                 ) -> list[Component]:
        """The classes the plugin's hook of `kind` returns, called through pluggy in `own`,
        the plugin's own manager, and checked against the kind's protocol."""
        info = KINDS[kind]
        hook: pluggy.HookCaller = getattr(own.hook, info.hook)
        implementations = [impl for impl in hook.get_hookimpls()
                           if not (impl.wrapper or impl.hookwrapper)]
        if not implementations:
            return []
        try:
            results: list[object] = hook()
        except BaseException as exc:  # a raising hook marks only its plugin
            if is_interrupt(exc):
                raise
            raise _PluginFailure(f"{info.hook}() raised {_reason(exc, '')}") from exc
        if len(results) < len(implementations):  # pluggy leaves out what returned None
            raise _PluginFailure(f"{info.hook}() returned None, expected a list of classes")
        found: list[Component] = []
        for result in results:
            if not isinstance(result, (list, tuple)):
                raise _PluginFailure(f"{info.hook}() returned {type(result).__name__}, "
                                     "expected a list of classes")
            found.extend(_component(kind, cls, status) for cls in result)
        names = [c.name for c in found]
        for component in found:
            if names.count(component.name) > 1:
                raise _PluginFailure(
                    f"{kind} {component.name!r} is returned twice by {info.hook}()")
            owner = self.owners.get((kind, component.name))
            if owner is not None:
                raise _PluginFailure(
                    f"{kind} name {component.name!r} is already registered by {owner.label}; "
                    "rename this one (its config model's `type` Literal)")
        return found


def _imported(load: Callable[[], object], output: io.StringIO) -> object:
    try:
        return load()
    except BaseException as exc:  # any import failure is the plugin's
        if is_interrupt(exc):
            raise
        raise _PluginFailure(f"import failed: {_reason(exc, output.getvalue())}") from exc


def _check_unknown_hooks(module: object, own: pluggy.PluginManager) -> None:
    for hook_name in dir(module):
        if hook_name.startswith("evo_") and hook_name not in KNOWN_HOOKS and \
                own.parse_hookimpl_opts(module, hook_name) is not None:
            raise _PluginFailure(
                f"implements unknown hook {hook_name!r}; known hooks: "
                f"{', '.join(sorted(KNOWN_HOOKS))}")


def _component(kind: Kind, cls: object, status: PluginStatus) -> Component:
    """`cls` as a component of `kind`, once its config model and protocol check out."""
    info = KINDS[kind]
    if not isinstance(cls, type):
        raise _PluginFailure(f"returned {cls!r}, which is not a class")
    what = cls.__qualname__
    model = cls if kind == "tracker" else getattr(cls, "config_model", None)
    if not (isinstance(model, type) and issubclass(model, info.config_base)):
        attribute = what if kind == "tracker" else f"{what}.config_model"
        raise _PluginFailure(f"{attribute} must be a subclass of "
                             f"evo_core.{info.config_base.__name__}, got {model!r}")
    name = component_type_name(model)
    if name is None:
        raise _PluginFailure(f"{model.__qualname__}.type must be declared as "
                             'type: Literal["name"] = "name" with one non-empty name')
    if info.protocol is not None and not issubclass(cls, info.protocol):
        missing = [name for name in protocol_methods(info.protocol)
                   if not callable(getattr(cls, name, None))]
        raise _PluginFailure(f"{what} does not implement evo_core.{info.protocol.__name__}: "
                             f"it lacks {', '.join(f'{name}()' for name in missing)}")
    doc = (model.__doc__ or cls.__doc__ or "").strip()
    # the first paragraph, whole: a summary wrapped over two lines is still one sentence
    summary = " ".join(line.strip() for line in doc.split("\n\n")[0].splitlines())
    return Component(kind, name, cls, status.distribution, status.version, summary)


KNOWN_HOOKS = {info.hook for info in KINDS.values()} | set(hookspecs.EVENT_HOOKS)


def _reason(exc: BaseException, printed: str) -> str:
    """`Type: message` in one line, `sys.exit()` said as such, and the last line the plugin
    printed (argparse prints its complaint, then exits)."""
    if isinstance(exc, SystemExit):
        code = "" if exc.code is None else repr(exc.code)
        text = f"SystemExit: the plugin called sys.exit({code})"
    else:
        text = describe(exc)
    lines = [line.strip() for line in printed.splitlines() if line.strip()]
    return text + (f" after printing {lines[-1]!r}" if lines else "")


@contextlib.contextmanager
def _output_to_stderr() -> Iterator[io.StringIO]:
    """Catch what a plugin prints while it loads; pass it on to stderr afterwards."""
    output = io.StringIO()
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            yield output
    finally:
        if output.getvalue():
            sys.stderr.write(output.getvalue())


def _incompatibility(dist: metadata.Distribution) -> str | None:
    """Why `dist`'s declared requirement on evo-core excludes this version, or None."""
    for text in dist.requires or []:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if canonicalize_name(requirement.name) != CORE_DISTRIBUTION:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        if not requirement.specifier.contains(__version__, prereleases=True):
            return (f"requires evo-core{requirement.specifier} but {__version__} is installed; "
                    f"upgrade evo-core or install a version of {dist.metadata['Name']} made for it")
    return None
