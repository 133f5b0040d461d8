"""What produced a run (package versions, the git commit, the local plugin modules), recorded
in config.json, and the check that a run's recorded code is loaded before it is opened again.

The record only informs: a run folder may come from someone else, so evo never imports, from any
folder, a module the record names; replay, resume and the API say which ones to load instead.
The versions it records are those of evo-core, the plugins, the numeric stack under them
(`NUMERIC_STACK`) and Python: a replay or resume under other versions says so in one line
(`warn_changed_versions`), since the same seed may then give other numbers in their last bits.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import re
import subprocess
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evo_core._version import __version__
from evo_core.errors import UserError
from evo_core.hooks.registry import Registry

__all__ = ["NUMERIC_STACK", "changed_versions", "provenance", "recorded_modules",
           "refuse_modules", "versions", "warn_changed_versions"]

LOCAL_PREFIX = "local module "

#: The distributions under evo whose releases change a run's numbers in their last bits, recorded
#: beside evo-core's and the plugins' versions when installed: numpy (pycma's sampling differs
#: between numpy releases, and a trajectory that differs there diverges within generations),
#: pycma, gymnasium (the environments' dynamics and seeding), and JAX for evo-jax's compiled
#: episodes. evo itself uses no SciPy. Python's own version is recorded too, as "python": from
#: 3.12 on, its built-in sum() of floats compensates rounding, which pycma's updates use, so the
#: same seed and packages give other last bits on 3.11 than on 3.12 and 3.13.
NUMERIC_STACK = ("numpy", "cma", "gymnasium", "jax", "jaxlib")


def _git_commit(directory: Path) -> str | None:
    """The commit of the git checkout around `directory`, if there is one (never required)."""
    try:
        result = subprocess.run(["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True,
                                text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = result.stdout.strip()
    if result.returncode != 0 or not commit:
        return None
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                           cwd=directory, capture_output=True, text=True, timeout=5, check=False)
    return commit + ("-dirty" if dirty.stdout.strip() else "")


def versions(registry: Registry) -> dict[str, str]:
    """The versions installed now of evo-core, every plugin loaded, the numeric stack
    (`NUMERIC_STACK`, those installed) and Python: what config.json records, and what a replay
    or resume compares the record with."""
    found = {"python": platform.python_version(), "evo-core": __version__}
    for plugin in registry.plugins:
        if plugin.status == "ok" and plugin.version:
            found[plugin.distribution] = plugin.version
    for name in NUMERIC_STACK:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def provenance(registry: Registry, config_path: Path | None) -> dict[str, Any]:
    directory = (config_path.resolve().parent if config_path is not None else Path.cwd())
    return {
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "versions": versions(registry),
        "git_commit": _git_commit(directory),
        "config_file": str(config_path) if config_path is not None else None,
        "local_plugins": _local_plugins(registry),
    }


def _local_plugins(registry: Registry) -> list[dict[str, str]]:
    """Modules loaded with --plugin / EVO_PLUGINS and the folder each was imported from: what a
    replay or resume of the run will ask to be loaded again (never loads by itself)."""
    found = []
    for plugin in registry.plugins:
        if plugin.status != "ok" or not plugin.distribution.startswith(LOCAL_PREFIX):
            continue
        name = _module_name(plugin.plugin)
        module = sys.modules.get(name)
        if module is None or not getattr(module, "__file__", None):
            continue
        file = Path(str(module.__file__)).resolve()
        depth = name.count(".") + (1 if file.stem == "__init__" else 0)
        found.append({"module": name, "folder": str(file.parents[depth])})
    return found


def _module_name(spec: str) -> str:
    """The module a `--plugin` entry imports: itself, or a `.py` file's or a folder's name."""
    if spec.endswith(".py") or "/" in spec or os.sep in spec:
        path = Path(spec.rstrip("/" + os.sep))
        return path.stem if path.suffix == ".py" else path.name
    return spec


def refuse_modules(names: list[str], source: Path | str, command: str) -> None:
    """Refuse, in one line, a run whose recorded code (`names`: modules not loaded now) would
    have to be imported to open it; `command` is how the message tells to run again with them
    (`replay RUN`, or "" for the API).

    A run folder may come from someone else, so nothing recorded in it is ever imported: not the
    local plugin modules it lists under `provenance.local_plugins` (whatever folder they name),
    nor the module of a gymnasium `module:Name` environment id (gymnasium imports it while making
    the environment; `running/received.py` finds those anywhere in the config)."""
    shown = [_shown(name) for name in names]
    plugins = " ".join(f"--plugin {name}" for name in shown)
    how = f"evo {plugins} {command}" if command else f"evo {plugins} COMMAND"
    raise UserError(
        f"{source}: the run used the module(s) {', '.join(shown)}, not loaded now; evo never "
        f"imports code a run folder names, so if you trust it load it yourself: `{how}` (or "
        f"EVO_PLUGINS={','.join(shown)}), with its folder current or on PYTHONPATH")


_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_VERSION = re.compile(r"[A-Za-z0-9_.+!-]+")


def _shown(name: str, pattern: re.Pattern[str] = _MODULE) -> str:
    """A recorded module name (or version) as a message may quote it: a hostile record can hold
    any text."""
    if len(name) <= 100 and pattern.fullmatch(name):
        return name
    return repr(name[:60]) + ("..." if len(name) > 60 else "")


def _recorded_versions(record: Any) -> dict[str, Any]:
    """The versions a run's provenance table records for the stack that trained it last: the
    last resume's, else the first run's (an old or hostile record may have none)."""
    if not isinstance(record, Mapping):
        return {}
    resumed = record.get("resumed")
    for table in reversed([record, *(resumed if isinstance(resumed, list) else [])]):
        found = table.get("versions") if isinstance(table, Mapping) else None
        if isinstance(found, Mapping):
            return dict(found)
    return {}


def changed_versions(record: Any, registry: Registry) -> list[tuple[str, object, str]]:
    """(distribution, recorded version, version now) for each distribution installed now whose
    version differs from the one a run's provenance table (`record`, config.json's
    `provenance`, unchecked) records; one the record lacks (an older evo recorded no numeric
    stack) or that is not installed now (a run that needs it is refused elsewhere) is no
    difference."""
    recorded = _recorded_versions(record)
    return [(name, recorded[name], now) for name, now in versions(registry).items()
            if name in recorded and recorded[name] != now]


def warn_changed_versions(record: Any, registry: Registry, source: Path | str) -> None:
    """Say in one line (a UserWarning; `evo` prints it as `evo: warning: ...`) which versions
    differ between the run recorded in `source` and this installation: a replay or resume then
    computes with other code, and its numbers may differ from the recorded run's in their last
    bits (docs/benchmarks.md: a seed's trajectory diverges from there). A warning, not a
    refusal: the champion and the checkpoint still work."""
    changed = changed_versions(record, registry)
    if not changed:
        return
    then = ", ".join(f"{name} {_shown(str(old), _VERSION)}" for name, old, _ in changed)
    now = ", ".join(f"{name} {new}" for name, _, new in changed)
    warnings.warn(f"{source}: the run was recorded with {then}, this installation has {now}; "
                  "results may differ from the recorded ones in their last bits (scripts/setup.sh "
                  "installs the locked versions)", UserWarning, stacklevel=3)


def recorded_modules(config: dict[str, Any]) -> list[str]:
    """The local plugin modules a run's config.json says the run used."""
    names: list[str] = []
    record = config.get("provenance")
    entries = record.get("local_plugins") if isinstance(record, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        module = entry.get("module") if isinstance(entry, dict) else None
        if isinstance(module, str) and module and module not in names:
            names.append(module)
    return names
