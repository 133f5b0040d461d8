"""Exceptions the command line turns into one line and exit status 2.

A `UserError` is a mistake the user can fix (a config, a path, a flag); its message already names
the file, field or plugin and what to do, so no traceback is shown.
"""

from __future__ import annotations

__all__ = ["UserError", "PluginLoadError"]


class UserError(Exception):
    """A mistake in the user's input; the message is the whole story."""


class PluginLoadError(UserError):
    """A plugin could not be loaded while strict loading was requested."""
