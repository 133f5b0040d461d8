"""`evo`: argument parsing, dispatch, and the rule that a user's mistake is one line and exit 2."""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from collections.abc import Sequence

from evo_core.cli import commands
from evo_core.cli.pipes import quiet_on_broken_pipe
from evo_core.errors import EvaluationError, PluginLoadError, UserError
from evo_core.interrupts import wrapped_interrupt

__all__ = ["main", "build_parser"]

USAGE_ERROR = 2


class _Parser(argparse.ArgumentParser):
    """argparse prints usage plus a message; evo prints one line naming the fix."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(USAGE_ERROR, f"evo: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="evo", description="Neuroevolution with brains as plugins.")
    parser.add_argument("--version", action="store_true",
                        help="print the versions of evo-core and every plugin, then exit")
    parser.add_argument("--strict", action="store_true",
                        help="a plugin that fails to load is an error (also EVO_STRICT_PLUGINS=1)")
    parser.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                        help="also load this module as a plugin: a module name (found from the "
                        "current folder too), a .py file or a package folder (repeatable; also "
                        "EVO_PLUGINS=a,b); worker processes load it too")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in commands.ALL:
        command.add_parser(subparsers)
    return parser


def _format_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                    line: str | None = None) -> str:
    """Warnings for the user (a worker died, a NaN observation) as one line, not source code;
    terminal colour codes (gymnasium colours its warnings) and other control characters are
    dropped, so that a log file or a pipe gets plain text."""
    text = _CONTROL.sub("", _COLOUR.sub("", str(message)))
    return f"evo: warning: {text.removeprefix('WARN: ')}\n"


_COLOUR = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def main(argv: Sequence[str] | None = None) -> int:
    previous = warnings.formatwarning
    warnings.formatwarning = _format_warning
    try:
        return quiet_on_broken_pipe(lambda: _main(argv))
    finally:
        warnings.formatwarning = previous


def _plugins_to_environment(args: argparse.Namespace) -> None:
    """`--strict` and `--plugin` as the environment variables that worker processes inherit."""
    if args.strict:
        os.environ["EVO_STRICT_PLUGINS"] = "1"
    if args.plugin:
        known = [m for m in os.environ.get("EVO_PLUGINS", "").split(",") if m.strip()]
        os.environ["EVO_PLUGINS"] = ",".join(known + [m for m in args.plugin if m not in known])


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _plugins_to_environment(args)
    try:
        if args.version:
            return commands.print_versions()
        if args.command is None:
            parser.print_help()
            return USAGE_ERROR
        result: int = args.run(args)
        return result
    except (KeyboardInterrupt, Exception) as exc:
        status = _reported(exc)
        if status is None:  # a bug: its traceback
            raise
        return status


def _reported(exc: BaseException) -> int | None:
    """The exit status of a command that `exc` ended, its one line printed; None for a bug.
    A library's error made of the Ctrl-C (`wrapped_interrupt`) is the interrupt it carries."""
    if isinstance(exc, PluginLoadError):
        import traceback

        if exc.__cause__ is not None:  # strict mode is for plugin authors: show where it broke
            traceback.print_exception(exc.__cause__, file=sys.stderr)
        print(f"evo: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    if isinstance(exc, EvaluationError):  # a brain's bug, not the user's: show where it broke
        if exc.details:
            print(exc.details.rstrip(), file=sys.stderr)
        print(f"evo: error: {exc}", file=sys.stderr)
        return 1
    if isinstance(exc, UserError):
        for line in str(exc).splitlines() or [type(exc).__name__]:
            print(f"evo: error: {line}", file=sys.stderr)
        return USAGE_ERROR
    if isinstance(exc, KeyboardInterrupt) or wrapped_interrupt(exc) is not None:
        print("evo: interrupted", file=sys.stderr)
        return 130
    return None


if __name__ == "__main__":
    sys.exit(main())
