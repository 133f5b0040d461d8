"""What produced a run: package versions and the git commit, recorded in config.json."""

from __future__ import annotations

import datetime
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from evo_core._version import __version__
from evo_core.errors import UserError
from evo_core.hooks.discovery import local_plugins_from_env
from evo_core.hooks.registry import Registry

__all__ = ["provenance", "reload_local_plugins"]

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
    """Modules loaded with --plugin / EVO_PLUGINS and the folder each was imported from (the
    `sys.path` entry), so that a replay or resume can load them again."""
    found = []
    for plugin in registry.plugins:
        module = sys.modules.get(plugin.plugin)
        if plugin.status != "ok" or not plugin.distribution.startswith(LOCAL_PREFIX) or \
                module is None or not getattr(module, "__file__", None):
            continue
        file = Path(str(module.__file__)).resolve()
        depth = plugin.plugin.count(".") + (1 if file.stem == "__init__" else 0)
        found.append({"module": plugin.plugin, "folder": str(file.parents[depth])})
    return found


def reload_local_plugins(config: dict[str, Any], source: Path, command: str) -> None:
    """Load again the local plugin modules the run recorded in `config` (its config.json):
    from the recorded folder while it exists, else from wherever they import; when they cannot
    be found, a UserError saying exactly what to pass."""
    record = config.get("provenance")
    entries = record.get("local_plugins") if isinstance(record, dict) else None
    known = local_plugins_from_env()
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("module"), str) or \
                entry["module"] in known:
            continue
        module, folder = entry["module"], str(entry.get("folder", ""))
        if folder and Path(folder).is_dir():
            if folder not in sys.path:
                sys.path.insert(0, folder)
            paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
            if folder not in paths:  # worker processes import it too
                os.environ["PYTHONPATH"] = os.pathsep.join([folder, *paths])
        elif not _importable(module):
            raise UserError(
                f"{source}: the run used the local plugin module {module!r}, imported from "
                f"{folder or 'an unrecorded folder'}, which no longer exists; pass it again: "
                f"PYTHONPATH=FOLDER evo --plugin {module} {command} ... (FOLDER: where "
                f"{module.split('.')[0]} now lives)")
        known.append(module)
        os.environ["EVO_PLUGINS"] = ",".join(known)


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
