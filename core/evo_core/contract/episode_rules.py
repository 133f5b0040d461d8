"""The episode rules: how a step ends an episode, and what the ended episode scores.

Written once, here, for every engine that runs episodes: the one row of "off", sync's rows with
their own environments, native's and envpool's vector environments (evaluation/row_envs.py), and
a plugin's compiled rollout (evo-jax's `vectorize = "jax"`). Each calls `EpisodeRules`; none
decides an end or adds a penalty of its own.

After every step of a running episode the rules are tested in this order, and the first that
holds ends the episode with that step:

| the step's ...                        | cause       | its reward | the penalty added   |
| ------------------------------------- | ----------- | ---------- | ------------------- |
| reward is NaN or infinite             | `NONFINITE` | not added  | `nonfinite_penalty` |
| environment terminated or truncated   | `DONE`      | added      | none                |
| episode's steps reached `max_steps`   | `LIMIT`     | added      | `max_steps_penalty` |
| observation is NaN or infinite        | `NONFINITE` | added      | `nonfinite_penalty` |
| (none of these: the episode goes on)  | `GOING`     | added      |                     |

The observation a reset returns is tested by the last rule alone (`after_reset`): a NaN/inf one
ends the episode before its first step, with a return of `nonfinite_penalty` and no steps. A
`NONFINITE` episode is one the evaluation's NaN/inf count counts.

The rules work on rows. A condition is a boolean array over the rows of an array namespace `xp`
(numpy; jax.numpy inside a compiled function, which traces `xp.where` as it traces the rest), or
a Python bool that holds alike for every row: one row's own value ("off" steps in Python
scalars and makes no array), or what an engine knows of all its rows without looking at each
(every reward finite, no environment ended). The causes come back as an array of `xp` where any
condition is one, as a Python int otherwise; so a step in which nothing can end costs no array
operation at all.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = ["DONE", "GOING", "LIMIT", "NONFINITE", "EpisodeRules"]

#: Why an episode ended: the environment ended it, max_steps did, a NaN/inf did; or it goes on.
#: They index `EpisodeRules.penalties`.
DONE, LIMIT, NONFINITE, GOING = 0, 1, 2, 3


def _where(xp: Any, condition: Any, then: Any, otherwise: Any) -> Any:
    """`xp.where`, or a choice in Python where the condition is a Python bool."""
    if condition is True:
        return then
    if condition is False:
        return otherwise
    return xp.where(condition, then, otherwise)


class EpisodeRules:
    """The rules of the module's table for one `[episodes]` table: `limit` (max_steps; None:
    no limit) and `penalties`, what an episode adds to its return for each cause."""

    DONE: ClassVar[int] = DONE
    LIMIT: ClassVar[int] = LIMIT
    NONFINITE: ClassVar[int] = NONFINITE
    GOING: ClassVar[int] = GOING

    def __init__(self, max_steps: int | None, max_steps_penalty: float,
                 nonfinite_penalty: float) -> None:
        self.limit = max_steps
        #: indexed by cause: DONE and GOING add nothing
        self.penalties = (0.0, float(max_steps_penalty), float(nonfinite_penalty), 0.0)

    def after_step(self, xp: Any, reward_ok: Any, env_end: Any, steps: Any,
                   observation_ok: Any) -> Any:
        """Why each row's episode ends with this step, or `GOING`: the table's first rule that
        holds. `reward_ok` and `observation_ok`: the step's reward and observation are free of
        NaN/inf; `env_end`: the environment terminated or truncated the episode; `steps`: the
        episode's steps with this one (an array, an int for one row, or None where the engine
        knows that no row can have reached max_steps yet)."""
        limit = self.limit
        at_limit = False if limit is None or steps is None else steps >= limit
        if reward_ok is True and env_end is False and at_limit is False \
                and observation_ok is True:  # nothing ends: no array made
            return GOING
        cause = _where(xp, observation_ok, GOING, NONFINITE)
        cause = _where(xp, at_limit, LIMIT, cause)
        cause = _where(xp, env_end, DONE, cause)
        return _where(xp, reward_ok, cause, NONFINITE)

    def after_reset(self, xp: Any, observation_ok: Any) -> Any:
        """Why each row's episode ends at its reset (`NONFINITE`: its first observation is
        NaN/inf), or `GOING`: the last rule alone, the reset having no reward, no end and no
        steps."""
        return self.after_step(xp, True, False, None, observation_ok)

    def penalty(self, xp: Any, cause: Any) -> Any:
        """What an episode that ended for `cause` adds to its return (an array of `xp` for an
        array of causes): the only place a penalty comes from."""
        if isinstance(cause, int):
            return self.penalties[cause]
        return xp.asarray(self.penalties)[cause]
