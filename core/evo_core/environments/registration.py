"""Registering evo's own environments with gymnasium, in every process that makes environments
(workers included): ids under `evo/` exist only once this ran."""

from __future__ import annotations

from evo_core.environments import (
    double_pole,
    maze,
    memory_tasks,
    procgen,
    published_maze,
    reacher_memory,
    reacher_memory_dynamic,
    reverse,
    swing_up,
    xor,
)

__all__ = ["register_all", "OTHER_TASK_LATER"]

#: evo ids whose later version is another task, not a fix of theirs: gymnasium's "is out of
#: date, consider upgrading" would be wrong advice (evo's own simplified mazes beside Lehman
#: and Stanley's published ones, v1).
OTHER_TASK_LATER = frozenset((maze.MEDIUM_MAZE, maze.HARD_MAZE))


def register_all() -> None:
    """Register every evo environment id; cheap when they are already registered."""
    memory_tasks.register_all()
    double_pole.register()
    reacher_memory.register()
    reacher_memory_dynamic.register()
    reverse.register()
    maze.register()
    published_maze.register()
    procgen.register()
    swing_up.register()
    xor.register()
