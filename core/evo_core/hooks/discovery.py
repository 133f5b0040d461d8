"""Find plugins through the entry-point group ``evo`` and load them one at a time.

pluggy's own loader imports every entry point in one go and lets the first exception abort the
host, so one broken plugin would take every brain down (simonw/llm #1280 is that story). Here each
plugin is imported, registered and asked for its components in its own `try`: a failure is recorded
with its distribution, version and a one-line reason, and the plugin's components are left out as a
whole. `EVO_STRICT_PLUGINS=1` (or `--strict`) turns the first failure into an error instead, for
plugin authors who want to see it.

"Failure" means any BaseException but an interrupt of the process: a plugin that calls
`sys.exit()` or runs argparse at import time (which parses evo's own arguments and exits) is
broken like one that raises. What a plugin prints while it loads goes to stderr, so that it can
neither garble `--json` output nor hide why it failed: the last line it printed is in the reason.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata as metadata
import io
import os
import sys
import types
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pluggy
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from evo_core._version import __version__
from evo_core.contract import hookspecs
from evo_core.contract.config_models import component_type_name
from evo_core.errors import PluginLoadError, UserError
from evo_core.hooks.registry import KINDS, Component, Kind, PluginStatus, Registry
from evo_core.interrupts import is_interrupt, marked_interrupts

__all__ = ["ENTRY_POINT_GROUP", "load_registry", "get_registry", "strict_from_env",
           "local_plugins_from_env"]

ENTRY_POINT_GROUP = "evo"
CORE_DISTRIBUTION = "evo-core"
_BUILTIN_MODULES = ("evo_core.optimizers.plugin", "evo_core.handlers.plugin",
                    "evo_core.wrappers.plugin", "evo_core.composition.plugin")


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
                              lambda name=module_name: importlib.import_module(name))
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
                              lambda name=module_name: _import_local(name))
            status = loader.registry.plugins[-1]
            if status.status != "ok":  # named by the user: never skipped in silence
                raise UserError(f"plugin module {module_name!r} (from --plugin or EVO_PLUGINS) "
                                f"failed: {status.reason}; fix it, or make it importable (its "
                                "folder in the current directory or on PYTHONPATH)")
        return loader.registry


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
    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.registry = Registry()
        self.manager = self.registry.manager
        self.owners: dict[tuple[Kind, str], PluginStatus] = {}

    def add_entry_point(self, entry_point: metadata.EntryPoint, dist_name: str, version: str,
                        dist: metadata.Distribution | None) -> None:
        label = f"{entry_point.name} = {entry_point.value}"
        problem = _incompatibility(dist) if dist is not None else None
        if problem:
            self._record(PluginStatus(label, dist_name, version, "incompatible", problem), None)
            return
        self.add_module(label, dist_name, version, entry_point.load)

    def add_module(self, label: str, dist_name: str, version: str, load: Any) -> None:
        status = PluginStatus(label, dist_name, version, "ok")
        with _output_to_stderr() as output:
            try:
                try:
                    module = load()
                except BaseException as exc:  # noqa: BLE001 - any import failure is the plugin's
                    if is_interrupt(exc):
                        raise
                    raise _PluginFailure(
                        f"import failed: {_describe(exc, output.getvalue())}") from exc
                components = self._register(module, status)
            except _PluginFailure as failure:
                failed: _PluginFailure | None = failure
            except BaseException as exc:  # noqa: BLE001 - registering ran the plugin's code
                if is_interrupt(exc):
                    raise
                failed = _PluginFailure(f"loading failed: {_describe(exc, output.getvalue())}")
                failed.__cause__ = exc
            else:
                failed = None
        if failed is not None:
            self._record(PluginStatus(label, dist_name, version, "broken", str(failed)), failed)
            return
        for component in components:
            self.registry.components[component.kind][component.name] = component
            self.owners[(component.kind, component.name)] = status
        self._record(status, None)

    def _record(self, status: PluginStatus, failure: BaseException | None) -> None:
        self.registry.plugins.append(status)
        if self.strict and status.status != "ok":
            raise PluginLoadError(
                f"plugin {status.plugin!r} from {status.label} is {status.status}: {status.reason} "
                "(strict plugin loading: unset EVO_STRICT_PLUGINS or drop --strict to skip it)"
            ) from (failure.__cause__ if failure is not None else None)

    def _register(self, module: Any, status: PluginStatus) -> list[Component]:
        name = f"{status.distribution}:{status.plugin}"
        if not isinstance(module, types.ModuleType) and not hasattr(module, "__dict__"):
            raise _PluginFailure(f"entry point gave {type(module).__name__}, expected a module")
        try:
            self.manager.register(module, name=name)
        except pluggy.PluginValidationError as exc:
            if self.manager.is_registered(module):  # pluggy keeps what it added before failing
                self.manager.unregister(module)
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            reason = "; ".join(lines[1:]) or lines[0]
            raise _PluginFailure(f"wrong hook signature: {reason}") from exc
        except ValueError as exc:
            raise _PluginFailure(f"registered twice: {_first_line(exc)}") from exc
        try:
            self._check_unknown_hooks(module)
            components: list[Component] = []
            for kind in KINDS:
                components.extend(self._collect(kind, module, status))
            return components
        except BaseException:
            self.manager.unregister(module)
            raise

    def _check_unknown_hooks(self, module: Any) -> None:
        for hook_name in dir(module):
            if hook_name.startswith("evo_") and hook_name not in KNOWN_HOOKS and \
                    self.manager.parse_hookimpl_opts(module, hook_name) is not None:
                raise _PluginFailure(
                    f"implements unknown hook {hook_name!r}; known hooks: "
                    f"{', '.join(sorted(KNOWN_HOOKS))}")

    def _collect(self, kind: Kind, module: Any, status: PluginStatus) -> list[Component]:
        info = KINDS[kind]
        hook_name, config_base, methods = info.hook, info.config_base, info.methods
        impls = [impl for impl in getattr(self.manager.hook, hook_name).get_hookimpls()
                 if impl.plugin is module]
        found: list[Component] = []
        for impl in impls:
            try:
                result = impl.function()
            except BaseException as exc:  # noqa: BLE001 - a raising hook marks only its plugin
                if is_interrupt(exc):
                    raise
                raise _PluginFailure(f"{hook_name}() raised {_describe(exc, '')}") from exc
            if not isinstance(result, (list, tuple)):
                raise _PluginFailure(f"{hook_name}() returned {type(result).__name__}, "
                                     "expected a list of classes")
            for cls in result:
                found.append(self._component(kind, cls, config_base, methods, status))
        names = [c.name for c in found]
        for component in found:
            if names.count(component.name) > 1:
                raise _PluginFailure(
                    f"{kind} {component.name!r} is returned twice by {hook_name}()")
            owner = self.owners.get((kind, component.name))
            if owner is not None:
                raise _PluginFailure(
                    f"{kind} name {component.name!r} is already registered by {owner.label}; "
                    "rename this one (its config model's `type` Literal)")
        return found

    @staticmethod
    def _component(kind: Kind, cls: Any, config_base: type[Any], methods: Iterable[str],
                   status: PluginStatus) -> Component:
        what = getattr(cls, "__qualname__", repr(cls))
        if not isinstance(cls, type):
            raise _PluginFailure(f"returned {what}, which is not a class")
        model = cls if kind == "tracker" else getattr(cls, "config_model", None)
        if not (isinstance(model, type) and issubclass(model, config_base)):
            attribute = what if kind == "tracker" else f"{what}.config_model"
            raise _PluginFailure(f"{attribute} must be a subclass of "
                                 f"evo_core.{config_base.__name__}, got {model!r}")
        name = component_type_name(model)
        if name is None:
            raise _PluginFailure(f"{model.__qualname__}.type must be declared as "
                                 'type: Literal["name"] = "name" with one non-empty name')
        missing = [m for m in methods if not callable(getattr(cls, m, None))]
        if missing:
            raise _PluginFailure(f"{what} lacks {', '.join(missing)}()")
        doc = (model.__doc__ or cls.__doc__ or "").strip()
        # the first paragraph, whole: a summary wrapped over two lines is still one sentence
        summary = " ".join(line.strip() for line in doc.split("\n\n")[0].splitlines())
        return Component(kind, name, cls, status.distribution, status.version, summary)


KNOWN_HOOKS = {info.hook for info in KINDS.values()} | set(hookspecs.EVENT_HOOKS)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _describe(exc: BaseException, printed: str) -> str:
    """`Type: message` in one line, `sys.exit()` said as such, and the last line the plugin
    printed (argparse prints its complaint, then exits)."""
    if isinstance(exc, SystemExit):
        code = "" if exc.code is None else repr(exc.code)
        text = f"SystemExit: the plugin called sys.exit({code})"
    else:
        message = str(exc).strip()
        text = type(exc).__name__ + (f": {message.splitlines()[0]}" if message else "")
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
