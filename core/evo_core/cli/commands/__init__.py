"""One module per `evo` sub-command, each with `add_parser(subparsers)`.

Every module imports at its top only what its parser needs, and what its command runs inside
the function that runs it: `evo` builds every parser to read a command line, so whatever a
module imports at its top, every command (and `evo --help`) pays for at start-up."""

from __future__ import annotations

from types import ModuleType

from evo_core.cli.commands import (
                                   check_brain,
                                   environments,
                                   export,
                                   listing,
                                   migrate,
                                   new_brain,
                                   plot,
                                   replay,
                                   resume,
                                   schema,
                                   sweep,
                                   train,
)
from evo_core.cli.commands.listing import print_versions

ALL: list[ModuleType] = [train, resume, replay, export, plot, sweep, listing, environments, schema,
                         migrate, new_brain, check_brain]

__all__ = ["ALL", "print_versions"]
