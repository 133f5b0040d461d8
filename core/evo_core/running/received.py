"""The trust boundary of a run folder: every command that opens one goes through here.

A run folder may come from someone else. `evo resume`, `evo replay`, a sweep that continues its
runs and the API (`Run.open`, `Run.replay`, `resume`) read its config.json, validate it, and
then, before any of its values is used (before an environment is made, a process started, a
file written), `check_received` refuses, in one line, what the folder may not decide on its own:

- code: the local plugin modules its provenance lists and the module of every `module:Env` id
  anywhere in it (`config/received.py` finds them from the schema's declarations), unless the
  user loaded them (`--plugin`, `EVO_PLUGINS`); a peer to connect to;
- paths outside the folder, and amounts of this machine's resources above what a stranger's
  word is worth (`contract/trust.py`), unless the user gives them again.

A command checks the keys it uses: opening a run builds its brain and environment
(`OPEN_KEYS`), a replay also plays episodes (`REPLAY_KEYS`), a resume uses everything.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Callable, Collection
from typing import Any

from evo_core.config.received import Refusal, covers, refusals
from evo_core.config.schema import ExperimentConfig, validate_config
from evo_core.errors import UserError
from evo_core.hooks.registry import Registry
from evo_core.results.provenance import recorded_modules, refuse_modules
from evo_core.results.run_folder import RunFolder

__all__ = ["OPEN_KEYS", "REPLAY_KEYS", "REPLAY_STEP_KEYS", "check_received",
           "check_recorded_plugins", "read_received",
           "resume_fix", "replay_fix"]

#: What opening a run uses: the brain and the environment it is built for.
OPEN_KEYS = ("environment.id", "environment.wrappers", "brain")
#: The keys that bound a replayed episode's steps; a replay's own step limit gives them again.
REPLAY_STEP_KEYS = ("environment.kwargs", "episodes.max_steps")
#: What a replay uses: the run it opens, and the steps of its episodes.
REPLAY_KEYS = OPEN_KEYS + REPLAY_STEP_KEYS

#: How a command lets the user give values again: the refused values in, the fix out.
GiveAgain = Callable[[list[Refusal]], str]


def _loaded(registry: Registry) -> Callable[[str], bool]:
    """Whether a module counts as loaded: a plugin of `registry` (an installed plugin, or
    `--plugin`/`EVO_PLUGINS`, both the user's own choice), or already imported."""
    plugins = {module.__name__ for module in registry.manager.get_plugins()
               if isinstance(module, types.ModuleType)}
    return lambda name: name in plugins or name in sys.modules


def check_recorded_plugins(stored: dict[str, Any], folder: RunFolder, registry: Registry,
                           command: str) -> None:
    """Refuse (UserError, one line) a folder whose provenance lists local plugin modules that
    are not loaded: before validation, since the config may name what they register."""
    loaded = _loaded(registry)
    modules = [name for name in recorded_modules(stored) if not loaded(name)]
    if modules:
        refuse_modules(modules, folder.config_file, command)


def check_received(config: ExperimentConfig, folder: RunFolder, registry: Registry, *,
                   command: str, give_again: GiveAgain, given_again: Collection[str] = (),
                   keys: Collection[str] = ()) -> None:
    """Refuse (UserError, one line) what the folder's validated `config` may not decide, among
    `keys` (all when empty); `command` is how the message tells to run again with `--plugin`
    ("" for the API), `give_again` how to give other values again."""
    found = [refusal for refusal in refusals(config, folder.path, loaded=_loaded(registry),
                                             given_again=given_again)
             if not keys or covers(keys, refusal.key)]
    modules = list(dict.fromkeys(r.module for r in found if r.module is not None))
    if modules:
        refuse_modules(modules, folder.config_file, command)
    values = [refusal for refusal in found if refusal.module is None]
    if values:
        problems = "; ".join(f"{refusal.key}: {refusal.why}" for refusal in values)
        raise UserError(f"{folder.config_file}: a received run folder does not decide this on "
                        f"its own: {problems}; if you trust it, {give_again(values)}")


def read_received(folder: RunFolder, registry: Registry, *, keys: Collection[str],
                  command: str, give_again: GiveAgain, given_again: Collection[str] = ()
                  ) -> ExperimentConfig:
    """The folder's config, validated and checked for `keys` (`check_received`)."""
    stored = folder.read_config()
    check_recorded_plugins(stored, folder, registry, command)
    config = validate_config(stored, registry, source=str(folder.config_file))
    check_received(config, folder, registry, command=command, give_again=give_again,
                   given_again=given_again, keys=keys)
    return config


def _value(refusal: Refusal) -> str:
    if refusal.placeholder is not None:
        return refusal.placeholder
    return refusal.value if isinstance(refusal.value, str) else json.dumps(refusal.value)


def _them(values: list[Refusal]) -> str:
    return "it" if len(values) == 1 else "them"


def resume_fix(folder: RunFolder) -> GiveAgain:
    """A resume's fix: each value given again with `--set` (in Python, `overrides=`)."""
    def fix(values: list[Refusal]) -> str:
        sets = " ".join(f"--set {r.key}={_value(r)}" for r in values)
        pairs = ", ".join(f"{r.key!r}: {_value(r)!r}" for r in values)
        return (f"give {_them(values)} again: `evo resume {folder.path} {sets}` (in Python: "
                f"resume(..., overrides={{{pairs}}}))")
    return fix


def replay_fix(folder: RunFolder, command: str = "") -> GiveAgain:
    """A replay's fix: a step limit of the user's own, which bounds every episode; `command`
    is the command that replays, as `evo` takes it (`plot RUN --maze`; "" for `evo replay`,
    and for the API, which names its own argument too)."""
    again = command or f"replay {folder.path}"

    def fix(values: list[Refusal]) -> str:
        return (f"give a step limit of your own: `evo {again} --max-steps N` (in Python: "
                "Run.replay(..., max_steps=N))")
    return fix
