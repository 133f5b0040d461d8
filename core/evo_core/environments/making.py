"""Making gymnasium environments by id, with evo's own environments registered first."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from evo_core.environments.registration import register_all
from evo_core.errors import UserError

__all__ = ["make_environment", "probe_spaces"]


def make_environment(environment: str, render_mode: str | None = None) -> gym.Env[Any, Any]:
    """`gym.make` with evo's own environments registered first."""
    register_all()
    if render_mode is None:  # not every environment accepts the keyword
        return gym.make(environment)
    return gym.make(environment, render_mode=render_mode)


def probe_spaces(environment: str, source: str = "config"
                 ) -> tuple[gym.Space[Any], gym.Space[Any]]:
    """The environment's spaces; a bad id or a missing extra is the user's to fix, and the
    message names `source`, the config file the id came from."""
    where = f"{source}: environment"
    try:
        env = make_environment(environment)
    except gym.error.DependencyNotInstalled as exc:
        raise UserError(f"{where} {environment!r} needs an extra package: {exc}") from None
    except gym.error.Error as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"{where}: {message}") from None
    except ImportError as exc:  # "package.module:Env-v0" ids import their module
        raise UserError(f"{where} {environment!r}: cannot import what it needs ({exc}); "
                        "install the package that provides it") from None
    except ValueError:  # gymnasium cannot even parse the id ("::::")
        raise UserError(f"{where}: {environment!r} is not an environment id; use a registered "
                        "id such as CartPole-v1, or module:Env-v0") from None
    try:
        return env.observation_space, env.action_space
    finally:
        env.close()
