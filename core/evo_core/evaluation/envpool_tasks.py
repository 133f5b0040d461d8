"""Which envpool task runs a config's environment id, configured how.

A config names environments by their gymnasium id: the brain is built for that environment's
spaces, and `evo replay` plays it. envpool names its tasks its own way and gives them its own
defaults, so `"envpool"` mode maps the id:

- an id envpool has under the same name (CartPole-v1, the MuJoCo ids) runs as it is;
- an Atari game, `ALE/Pong-v5`, runs as envpool's `Pong-v5` with what makes it gymnasium's
  ALE/Pong-v5: RGB frames of 210x160 (not envpool's stacked grayscale 84x84), 4 frames per
  step, sticky actions with probability 0.25, no fire on reset, no end of episode at a lost
  life, rewards unclipped, at most 27,000 steps (108,000 frames); envpool's frames are
  channels-first and are transposed to gymnasium's channels-last. What still differs: each
  observation is the maximum of the last two frames of the step (gymnasium's is the last
  frame), a reset plays one no-op frame, and sticky actions come from envpool's own random
  stream: episodes are not gymnasium's, as in any `"envpool"` run;
- envpool's own Atari names (`Pong-v5`), and gymnasium's other Atari versions
  (`Pong-v4`, `PongNoFrameskip-v4`, whose frame skip and sticky actions differ), are refused in
  one line naming the id to use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from evo_core.environments.extras import register_providers
from evo_core.errors import UserError

__all__ = ["ATARI_KWARGS", "EnvpoolTask", "envpool_task"]

#: envpool's Atari options that make its game gymnasium's ALE/<game>-v5 (see the module's doc);
#: noop_max = 1 is envpool's smallest (0 crashes it) and plays one no-op frame at reset
ATARI_KWARGS: dict[str, Any] = {
    "img_height": 210, "img_width": 160, "gray_scale": False, "stack_num": 1, "frame_skip": 4,
    "repeat_action_probability": 0.25, "noop_max": 1, "use_fire_reset": False,
    "episodic_life": False, "reward_clip": False, "max_episode_steps": 27000}

_ATARI = "ALE/"


@dataclass(frozen=True)
class EnvpoolTask:
    """envpool's name for the environment, the options it is made with, and whether its
    observations are images to transpose from channels-first to channels-last."""

    task_id: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    channels_last: bool = False


def _atari_game(env_id: str, known: Sequence[str]) -> str | None:
    """`Pong` for the ids of an Atari game envpool has (`ALE/Pong-v5`, `Pong-v4`,
    `PongNoFrameskip-v4`, envpool's `Pong-v5`), None for any other id."""
    name = env_id.removeprefix(_ATARI).split("-v")[0].removesuffix("NoFrameskip")
    if f"{name}-v5" not in known:
        return None
    try:
        register_providers(f"{_ATARI}{name}-v5")  # ale-py registers its games
    except UserError:  # no ale-py: not knowably a game; the id is looked up as it is
        return None
    return name if f"{_ATARI}{name}-v5" in gym.registry else None


def envpool_task(env_id: str, known: Sequence[str]) -> EnvpoolTask:
    """The envpool task for gymnasium id `env_id`; `known` is `envpool.list_all_envs()`. A
    UserError names the id to use when envpool cannot run `env_id` as gymnasium defines it."""
    game = _atari_game(env_id, known)
    if game is not None:
        if env_id == f"{_ATARI}{game}-v5":
            return EnvpoolTask(f"{game}-v5", dict(ATARI_KWARGS), channels_last=True)
        why = "is envpool's name of the game, not a gymnasium id (evo builds the brain for " \
            "the gymnasium environment, and replays it)" if env_id == f"{game}-v5" else \
            "is a gymnasium Atari version whose frame skip and sticky actions envpool does not have"
        raise UserError(
            f'episodes.vectorize = "envpool": {env_id!r} {why}; use environment = '
            f'"{_ATARI}{game}-v5" (run by envpool\'s {game}-v5 with gymnasium\'s v5 frame skip 4 '
            'and sticky actions 0.25), or episodes.vectorize = "sync"')
    if env_id in known:
        return EnvpoolTask(env_id)
    stem = env_id.split("-v")[0]
    similar = [name for name in known if name.split("-v")[0] == stem]
    hint = f"envpool has {', '.join(similar)}" if similar else \
        "envpool does not have this environment (envpool.list_all_envs() lists them)"
    raise UserError(f'episodes.vectorize = "envpool": no envpool environment {env_id!r}; '
                    f'{hint}; use episodes.vectorize = "sync" (any environment, results '
                    'identical to "off") or "off"')
