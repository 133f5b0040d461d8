"""What produced a run (package versions, the git commit, the local plugin modules), recorded
in config.json, and the check that a run's recorded code is loaded before it is opened again.

The record only informs: a run folder may come from someone else, so evo never imports, from any
folder, a module the record names; replay, resume and the API say which ones to load instead.
"""

from __future__ import annotations

import datetime
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from evo_core._version import __version__
from evo_core.errors import UserError
from evo_core.hooks.registry import Registry

__all__ = ["provenance", "recorded_modules", "refuse_modules"]

LOCAL_PREFIX = "local module "


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


def provenance(registry: Registry, config_path: Path | None) -> dict[str, Any]:
    versions = {"evo-core": __version__}
    for plugin in registry.plugins:
        if plugin.status == "ok" and plugin.version:
            versions[plugin.distribution] = plugin.version
    directory = (config_path.resolve().parent if config_path is not None else Path.cwd())
    return {
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "versions": versions,
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


def _shown(name: str) -> str:
    """A recorded module name as a message may quote it: a hostile record can hold any text."""
    if len(name) <= 100 and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name):
        return name
    return repr(name[:60]) + ("..." if len(name) > 60 else "")


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
