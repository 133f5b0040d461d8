"""The predecessor's `environment` id, with `episode_runner.environment_attributes` and
`use_autoencoder`: a current gymnasium id, or an environment table (`id`, `kwargs`, `wrappers`).

The predecessor made environments with the gym of 2020 plus its own special cases: ids that
gymnasium renamed get their current version, its own tasks become evo's `evo/` ids, and what it
did implicitly (Atari preprocessing for every `...NoFrameskip-v4`, BipedalWalker's early stop, the
Qbert reward filter) becomes explicit wrappers, so the migrated config says what runs.
"""

from __future__ import annotations

import re
from typing import Any

from evo_core.config.migrate.result import Migration

__all__ = ["ATARI_PREPROCESSING", "PROCGEN_DEFAULTS", "RENAMED", "migrate_environment"]

#: The predecessor's Atari preprocessing: gym's AtariPreprocessing with its `AtariAttr` defaults.
ATARI_PREPROCESSING: dict[str, Any] = {
    "type": "atari-preprocessing", "noop_max": 30, "frame_skip": 4, "screen_size": 64,
    "terminal_on_life_loss": True, "grayscale_obs": False, "scale_obs": True}
_ATARI_ATTRIBUTES = ("screen_size", "scale_obs", "terminal_on_life_loss", "grayscale_obs")

#: Ids gymnasium has under another version: old id -> (new id, what changed).
RENAMED: dict[str, tuple[str, str]] = {
    "LunarLander-v2": ("LunarLander-v3", "v3 resets wind and turbulence per episode and widens "
                       "the observation bounds"),
    "LunarLanderContinuous-v2": ("LunarLanderContinuous-v3", "v3 resets wind and turbulence "
                                 "per episode and widens the observation bounds"),
    "Pendulum-v0": ("Pendulum-v1", "v1 simplifies the equations; the dynamics are the same"),
}
_MUJOCO = ("Ant", "HalfCheetah", "Hopper", "Humanoid", "HumanoidStandup",
           "InvertedDoublePendulum", "InvertedPendulum", "Pusher", "Reacher", "Swimmer",
           "Walker2d")
_MUJOCO_ID = re.compile(rf"^({'|'.join(_MUJOCO)})-v[1-4]$")
#: Legacy Atari ids: Game[-ram][NoFrameskip|Deterministic]-v0/-v4 (plain Game-v0/-v4 still exist).
_ATARI_ID = re.compile(r"^(?P<game>[A-Z][A-Za-z]*?)(?P<ram>-ram)?"
                       r"(?P<mode>NoFrameskip|Deterministic)?-v(?P<version>[04])$")
_REACHER_MEMORY = {"ReacherMemory-v0": "evo/ReacherMemory-v0",
                   "ReacherMemoryDynamic-v0": "evo/ReacherMemoryDynamic-v0"}
_REACHER_MEMORY_ATTRIBUTES = ("observation_frames", "memory_frames", "action_frames")
_REVERSE = {"Reverse-v0": "evo/Reverse-v0", "ReverseShaped-v0": "evo/ReverseShaped-v0"}
#: evo's procgen environment and its games (environments/procgen.py has the same two; config
#: may not import environments, and a test holds them equal)
PROCGEN = "evo/Procgen-v0"
GAMES = ("bigfish", "bossfight", "caveflyer", "chaser", "climber", "coinrun", "dodgeball",
         "fruitbot", "heist", "jumper", "leaper", "maze", "miner", "ninja", "plunder",
         "starpilot")
#: the predecessor's ProcGenAttr defaults, as evo/Procgen-v0 keywords
PROCGEN_DEFAULTS: dict[str, Any] = {"distribution_mode": "memory",
                                    "use_monochrome_assets": False, "restrict_themes": True,
                                    "use_backgrounds": False, "screen_size": 64}
_PROCGEN_ID = re.compile(r"^(procgen:)?procgen-(?P<game>[a-z]+)-v0$")


def migrate_environment(old: Any, runner: dict[str, Any], result: Migration) -> Any:
    """The evo `environment` for the predecessor's id; takes `environment_attributes` and
    `use_autoencoder` out of `runner` (the episode_runner table) as it uses them."""
    attributes = _attributes(runner.pop("environment_attributes", None), result)
    autoencoder = runner.pop("use_autoencoder", False)
    if not isinstance(old, str) or not old:
        result.dropped.append(f"environment {old!r}: not a gymnasium id; set environment to "
                              "an id such as \"CartPole-v1\"")
        _unused(attributes, "", result)
        return old if old is not None else "?"
    if autoencoder:
        result.dropped.append(
            "episode_runner.use_autoencoder: the Qbert autoencoder's weights (ae.pt) were never "
            "published; the migrated config uses the Atari preprocessing instead")
    special = _rebuilt_or_dropped(old, attributes, result)
    if special is not None:
        return special
    return _renamed(old, attributes, result)


def _rebuilt_or_dropped(old: str, attributes: dict[str, Any], result: Migration) -> Any:
    """The environment evo rebuilt for `old` (memory tasks, the algorithmic tasks, Qbert's hard
    mode, RAM or frame-skip Atari ids), or `old` itself when evo has none (procgen, PyBullet);
    None for an id that is only renamed, or kept."""
    if old in _REACHER_MEMORY:
        result.notes.append(f"environment {old} -> {_REACHER_MEMORY[old]}: on Reacher-v5, and "
                            "with the predecessor's off-by-one fixed (every rewarded step applies "
                            "the agent's action; O + M + A steps)")
        return _table(_REACHER_MEMORY[old], _pick(attributes, _REACHER_MEMORY_ATTRIBUTES, old,
                                                  result), [])
    if old in _REVERSE:
        result.notes.append(f"environment {old} -> {_REVERSE[old]}: gym's removed algorithmic "
                            "task, rebuilt by evo")
        _unused(attributes, old, result)
        return _REVERSE[old]
    if old == "QbertHard-v0":
        result.notes.append("environment QbertHard-v0: ALE/Qbert-v5 without frame skip or sticky "
                            "actions (as QbertNoFrameskip-v4), the qbert-hard reward filter, then "
                            "the predecessor's Atari preprocessing")
        return _atari("Qbert", ram=False, mode="NoFrameskip", version="4",
                      attributes=attributes, hard=True, result=result)
    if old.startswith("procgen"):
        return _procgen(old, attributes, result)
    if "BulletEnv" in old:
        result.dropped.append(f"environment {old!r}: a PyBullet environment; evo uses "
                              "gymnasium's MuJoCo environments (e.g. Ant-v5) instead")
        _unused(attributes, old, result)
        return old
    atari = _ATARI_ID.match(old)
    if atari is not None and (atari["ram"] or atari["mode"]):
        return _atari(atari["game"], ram=bool(atari["ram"]), mode=atari["mode"] or "",
                      version=atari["version"], attributes=attributes, hard=False,
                      result=result)
    return None


def _renamed(old: str, attributes: dict[str, Any], result: Migration) -> Any:
    """`old` under gymnasium's current name (a MuJoCo task's v5), or as it is."""
    if old.startswith("BipedalWalker"):
        _unused(attributes, old, result)
        result.notes.append(f"environment {old}: the predecessor always ended an episode with "
                            "-100 once the walker stood still for 50 steps; the stand-still-stop "
                            "wrapper does that here")
        return _table(old, {}, [{"type": "stand-still-stop"}])
    _unused(attributes, old, result)
    if _MUJOCO_ID.match(old):
        new = old.rsplit("-", 1)[0] + "-v5"
        result.notes.append(f"environment {old} -> {new}: gymnasium has only v4 and v5 of the "
                            "MuJoCo tasks; v5's observations and rewards differ in details "
                            "(docs/migrating.md)")
        return new
    if old in RENAMED:
        new, change = RENAMED[old]
        result.notes.append(f"environment {old} -> {new}: {change}")
        return new
    return old


def _table(environment: str, kwargs: dict[str, Any], wrappers: list[dict[str, Any]]
           ) -> dict[str, Any] | str:
    """The shortest form: a plain id when there is nothing else to say."""
    if not kwargs and not wrappers:
        return environment
    table: dict[str, Any] = {"id": environment}
    if kwargs:
        table["kwargs"] = kwargs
    if wrappers:
        table["wrappers"] = wrappers
    return table


def _attributes(value: Any, result: Migration) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        result.dropped.append(f"episode_runner.environment_attributes {value!r}: not a table; "
                              "ignored")
        return {}
    attributes = dict(value)
    attributes.pop("type", None)  # AtariAttr etc.: the id already says which kind
    return attributes


def _pick(attributes: dict[str, Any], names: tuple[str, ...], environment: str,
          result: Migration) -> dict[str, Any]:
    picked = {name: attributes.pop(name) for name in names if name in attributes}
    _unused(attributes, environment, result)
    return picked


def _unused(attributes: dict[str, Any], environment: str, result: Migration) -> None:
    for key in attributes:
        what = f"not used with {environment}" if environment else "no environment to apply to"
        result.dropped.append(f"episode_runner.environment_attributes.{key}: {what}")


def _atari(game: str, *, ram: bool, mode: str, version: str, attributes: dict[str, Any],
           hard: bool, result: Migration) -> dict[str, Any] | str:
    """ALE v5 set up as the legacy id was: v0 had sticky actions (0.25), v4 none; NoFrameskip
    means frameskip 1, Deterministic 4. The predecessor preprocessed every ...NoFrameskip-v4."""
    old = f"{game}{'-ram' if ram else ''}{mode}-v{version}"
    kwargs: dict[str, Any] = {}
    if mode == "NoFrameskip":
        kwargs["frameskip"] = 1
    elif mode == "Deterministic":
        kwargs["frameskip"] = 3 if game == "SpaceInvaders" else 4
    else:
        result.notes.append(f"environment {old}: its frame skip was random (2 to 4 frames per "
                            "step); ALE v5 repeats every action 4 frames")
    kwargs["repeat_action_probability"] = 0.25 if version == "0" else 0.0
    preprocess = mode == "NoFrameskip" and version == "4"
    if ram and not preprocess:
        kwargs["obs_type"] = "ram"
    if ram and preprocess:
        result.notes.append(f"environment {old}: the predecessor's Atari preprocessing read the "
                            "screen from the emulator, so its agents saw images, not RAM; so does "
                            "the migrated config")
    wrappers: list[dict[str, Any]] = [{"type": "qbert-hard"}] if hard else []
    if preprocess:
        wrappers.append(dict(ATARI_PREPROCESSING,
                             **_pick(attributes, _ATARI_ATTRIBUTES, old, result)))
    else:
        _unused(attributes, old, result)
    if not hard:
        result.notes.append(f"environment {old} -> ALE/{game}-v5 with "
                            + ", ".join(f"{k} = {v!r}" for k, v in kwargs.items()))
    return _table(f"ALE/{game}-v5", kwargs, wrappers)


def _procgen(old: str, attributes: dict[str, Any], result: Migration) -> Any:
    """A procgen id: evo/Procgen-v0 (environments/procgen.py) with the game and the
    predecessor's ProcGenAttr, whose defaults it filled in."""
    match = _PROCGEN_ID.match(old)
    if match is None or match["game"] not in GAMES:
        result.dropped.append(f"environment {old!r}: not one of procgen's games "
                              f"({', '.join(GAMES)}); set environment.kwargs.game")
        _unused(attributes, old, result)
        return old
    kwargs = {"game": match["game"], **PROCGEN_DEFAULTS,
              **_pick(attributes, tuple(PROCGEN_DEFAULTS), old, result)}
    result.notes.append(
        f"environment {old} -> {PROCGEN} (procgen-gym, the Gymnasium port; needs Python >= 3.13 "
        "and the procgen extra): one level per episode (reset(seed=s) plays level s, the "
        "predecessor's seed(s) + reset() played s + 1), frames resized to screen_size and "
        "scaled to [0, 1] as float32 (the predecessor: float16)")
    return _table(PROCGEN, kwargs, [])
