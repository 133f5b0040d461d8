"""What produced a run: package versions and the git commit, recorded in config.json."""

from __future__ import annotations

import datetime
import subprocess
from pathlib import Path
from typing import Any

from evo_core._version import __version__
from evo_core.plugins.registry import Registry

__all__ = ["provenance"]


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
    }
