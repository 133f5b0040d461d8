"""Making environments from a config's `environment`: id, gymnasium.make kwargs, wrappers.

The one way to make an environment everywhere (the runner in every worker, replay, the probe
of the spaces), so that all of them see the same environment.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import find_highest_version, get_env_id, parse_env_id

from evo_core.contract.config_models import EnvironmentConfig, WrapperConfig
from evo_core.environments.extras import extra_for, missing_extra, register_providers
from evo_core.environments.registration import OTHER_TASK_LATER, register_all
from evo_core.errors import UserError, first_line
from evo_core.hooks.discovery import get_registry
from evo_core.hooks.registry import Registry
from evo_core.interrupts import describe_raised, is_interrupt

__all__ = ["as_environment", "make_environment", "probe_spaces", "register_plugin_environments",
           "wrapper_chain"]


def as_environment(environment: EnvironmentConfig | str) -> EnvironmentConfig:
    """The model of `environment`; a bare id is the table with that id alone."""
    if isinstance(environment, EnvironmentConfig):
        return environment
    return EnvironmentConfig.model_construct(id=environment)


def make_environment(environment: EnvironmentConfig | str, render_mode: str | None = None,
                     registry: Registry | None = None) -> gym.Env[Any, Any]:
    """`gym.make(id, **kwargs)` with evo's own environments (and ale-py's, when installed)
    registered first, then each wrapper of `environment.wrappers`, the first innermost.

    `registry` finds the wrapper classes (default: this process's). An environment whose
    extra is missing, or a wrapper that cannot wrap it, is a UserError."""
    table = as_environment(environment)
    register_all()
    register_providers(table.id)
    if table.id not in gym.registry:
        register_plugin_environments(table.id, registry or get_registry())
    kwargs: dict[str, Any] = dict(table.kwargs)
    if render_mode is not None:  # not every environment accepts the keyword
        kwargs["render_mode"] = render_mode
    try:
        with warnings.catch_warnings():
            if table.id in OTHER_TASK_LATER:
                warnings.filterwarnings("ignore", message=".*is out of date",
                                        category=DeprecationWarning)
            env: gym.Env[Any, Any] = gym.make(_latest_version(table.id) or table.id, **kwargs)
    except gym.error.DependencyNotInstalled:
        extra = extra_for(table.id)
        if extra is None:
            raise
        raise missing_extra(table.id, extra) from None  # gymnasium's advice names its own
    if table.wrappers:
        env = _wrapped(env, table.wrappers, registry or get_registry())
    return env


def wrapper_chain(env: gym.Env[Any, Any]) -> Iterator[Any]:
    """`env` and each environment it wraps, outermost first, down to the unwrapped one: where
    an optional capability (`IBehaviourState`, `IPlanarMap`) is looked for, so that a wrapper
    may offer one of its own and the outermost that does is the one used."""
    current: Any = env
    while True:
        yield current
        if not isinstance(current, gym.Wrapper):
            return
        current = current.env


def _latest_version(env_id: str) -> str | None:
    """The id gymnasium makes for an unversioned `env_id` (`CartPole`: `CartPole-v1`, its
    latest registered version), or None when `env_id` has a version, names a module to import
    first, or has no versioned form. `make_environment` makes that id, so gymnasium does not
    warn in every process and at every make; `probe_spaces` says it once."""
    if ":" in env_id:
        return None
    try:
        namespace, name, version = parse_env_id(env_id)
    except gym.error.Error:  # not an id at all: gym.make says so
        return None
    latest = None if version is not None else find_highest_version(namespace, name)
    return None if latest is None else get_env_id(namespace, name, latest)


def register_plugin_environments(env_id: str, registry: Registry) -> None:
    """Let the chunk evaluator that lists `env_id` (evo-jax's `gymnax/...`) register its
    gymnasium form, so that the id is made like any other: its spaces probed, and replay and
    `vectorize = "off"` run in the same environment."""
    for component in registry.components["vectorizer"].values():
        if env_id in component.cls.environments:
            component.cls.register_environments()
            return


def _wrapped(env: gym.Env[Any, Any], wrappers: tuple[WrapperConfig, ...],
             registry: Registry) -> gym.Env[Any, Any]:
    for index, config in enumerate(wrappers):
        where = f"environment.wrappers[{index}] ({config.type})"
        try:
            component = registry.get("wrapper", config.type)
        except UserError as exc:
            env.close()
            raise UserError(f"{where}: {exc}") from None
        plugin = f"{component.distribution} {component.version}".strip()
        try:
            wrapped = component.cls(config, env)
        except (ValueError, TypeError, AssertionError, gym.error.Error) as exc:
            env.close()
            raise UserError(f"{where} cannot wrap {_described(env)}: "
                            f"{first_line(exc)}") from None
        except BaseException as exc:
            if is_interrupt(exc):
                raise
            env.close()
            raise UserError(f"{where}: the wrapper ({plugin}) raised {describe_raised(exc)}; "
                            "a bug in the plugin: report it to its author") from None
        if not isinstance(wrapped, gym.Env):
            env.close()
            raise UserError(f"{where}: the wrapper ({plugin}) returned "
                            f"{type(wrapped).__name__}, not a gymnasium Env; a bug in the "
                            "plugin: report it to its author")
        env = wrapped
    return env


def _described(env: gym.Env[Any, Any]) -> str:
    spec = env.unwrapped.spec
    return spec.id if spec is not None else type(env.unwrapped).__name__


def _constructor_failed(where: str, env_id: str, exc: BaseException) -> UserError:
    """Making the environment ran its code, and that code failed: the environment's bug (or a
    missing resource it needs), not something evo can fix."""
    return UserError(f"{where} {env_id!r}: making it raised {describe_raised(exc)}; a bug in "
                     "the environment (or something it needs is missing): fix it or report it "
                     "to its author")


def probe_spaces(environment: EnvironmentConfig | str, source: str = "config"
                 ) -> tuple[gym.Space[Any], gym.Space[Any]]:
    """The (wrapped) environment's spaces; a bad id, bad kwargs, a wrapper that does not fit or
    a missing extra is the user's to fix, and the message names `source`, the config file the
    environment came from."""
    table = as_environment(environment)
    where = f"{source}: environment"
    try:
        env = make_environment(table)
    except UserError as exc:
        raise UserError(f"{source}: {exc}") from None
    except gym.error.DependencyNotInstalled as exc:
        raise UserError(f"{where} {table.id!r} needs an extra package: {exc}") from None
    except gym.error.Error as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"{where}: {message}") from None
    except ImportError as exc:  # "package.module:Env-v0" ids import their module
        raise UserError(f"{where} {table.id!r}: cannot import what it needs ({exc}); "
                        "install the package that provides it") from None
    except (TypeError, ValueError, AssertionError) as exc:
        if table.kwargs:  # the environment's constructor refused one of them
            raise UserError(f"{where}.kwargs: {table.id} rejected them: "
                            f"{type(exc).__name__}: {first_line(exc)}") from None
        if isinstance(exc, ValueError) and table.id not in gym.registry:
            # gymnasium cannot even parse the id ("::::")
            raise UserError(f"{where}: {table.id!r} is not an environment id; use a registered "
                            "id such as CartPole-v1, or module:Env-v0") from None
        raise _constructor_failed(where, table.id, exc) from None
    except BaseException as exc:
        if is_interrupt(exc):
            raise
        raise _constructor_failed(where, table.id, exc) from None
    _say_version(where, table.id)
    try:
        return env.observation_space, env.action_space
    finally:
        env.close()


def _say_version(where: str, env_id: str) -> None:
    """Once per command, where gymnasium would warn at every make: which version an
    unversioned id makes."""
    versioned = _latest_version(env_id)
    if versioned is not None:
        warnings.warn(f"{where} {env_id!r} names no version; evo makes {versioned}, the latest "
                      "installed (name the version to make the same environment after an "
                      "upgrade)", UserWarning, stacklevel=3)
