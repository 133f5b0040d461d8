"""Environments that need an optional extra of evo-core: which extra, and ALE's ids.

gymnasium 1.x no longer imports ale-py by itself: Atari ids (`ALE/Qbert-v5`, `Qbert-v4`) exist
only once `ale_py` is imported, which registers them. evo imports it when an id is not
registered yet, so a config may name an Atari game like any other environment.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

import gymnasium as gym

from evo_core.errors import UserError

__all__ = ["EXTRAS", "NEEDS_PYTHON", "MissingExtra", "extra_for", "missing_extra",
           "register_providers"]

#: the module an environment's entry point lives in -> the extra of evo-core that installs
#: what it imports
EXTRAS = {"gymnasium.envs.box2d": "box2d", "gymnasium.envs.mujoco": "mujoco", "ale_py": "atari",
          "evo_core.environments.reacher_memory": "mujoco",
          "evo_core.environments.reacher_memory_dynamic": "mujoco",
          "evo_core.environments.procgen": "procgen"}
#: extras whose packages install only on a newer Python than evo's oldest
NEEDS_PYTHON = {"procgen": (3, 13)}

_ALE_NAMESPACE = "ALE"


def _namespace(env_id: str) -> str | None:
    return env_id.split("/", 1)[0] if "/" in env_id else None


def extra_for(env_id: str) -> str | None:
    """The extra that installs what `env_id` needs, where evo knows it."""
    if _namespace(env_id) == _ALE_NAMESPACE:
        return "atari"
    spec = gym.registry.get(env_id)
    entry_point = spec.entry_point if spec is not None else None
    if isinstance(entry_point, str):
        module = entry_point.split(":", 1)[0]
        for prefix, extra in EXTRAS.items():
            if module == prefix or module.startswith(prefix + "."):
                return extra
    return None


class MissingExtra(UserError):
    """An environment whose extra is not installed on this machine: a config naming it is
    right, this machine cannot run it (`evo migrate` says so and goes on)."""


def missing_extra(env_id: str, extra: str, detail: str = "") -> UserError:
    """The one-line error for an environment whose extra is not installed (and, for an extra
    this Python is too old for, which Python it needs)."""
    because = f" ({detail})" if detail else ""
    needs = NEEDS_PYTHON.get(extra)
    if needs is not None and sys.version_info[:2] < needs:
        version = ".".join(map(str, needs))
        running = f"{sys.version_info[0]}.{sys.version_info[1]}"
        return MissingExtra(f"environment {env_id!r} needs Python >= {version} and the "
                            f"{extra} extra (this is Python {running}); "
                            f"make a Python {version} environment (PYTHON=python{version} "
                            f"bash scripts/setup.sh) and pip install 'evo-core[{extra}]' there")
    return MissingExtra(f"environment {env_id!r} needs the {extra} extra, which is not "
                        f"installed{because}; install it with pip install 'evo-core[{extra}]'")


def register_providers(env_id: str) -> None:
    """Import ale-py when `env_id` is not registered yet and may be one of its games; an `ALE/`
    id without ale-py is the missing extra."""
    if env_id in gym.registry or ":" in env_id:
        return
    atari = _namespace(env_id) == _ALE_NAMESPACE
    if not atari and importlib.util.find_spec("ale_py") is None:
        return
    try:
        ale_py = importlib.import_module("ale_py")
    except ImportError as exc:
        if atari:
            raise missing_extra(env_id, "atari", f"cannot import ale_py: {exc}") from None
        return
    gym.register_envs(ale_py)
    # its banner ("A.L.E: Arcade Learning Environment ...") on every environment made
    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
