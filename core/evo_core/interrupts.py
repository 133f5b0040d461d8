"""Telling an interrupt of the process apart from a KeyboardInterrupt that plugin code raises.

Python turns SIGINT into a plain `KeyboardInterrupt` wherever the main thread happens to be, so a
brain that raises KeyboardInterrupt itself (or calls a library that does) would look like the
user's Ctrl-C and stop the run as "interrupted". While evo loads plugins or trains it installs
its own SIGINT handler, which raises `Interrupted` instead: only an `Interrupted` stops a run as
an interrupt, and any other BaseException from a plugin (a KeyboardInterrupt, a `SystemExit`
from `sys.exit()` or argparse) is that plugin's error.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["Interrupted", "deferred_interrupts", "describe_raised", "is_interrupt",
           "marked_interrupts", "wrapped_interrupt"]


class Interrupted(KeyboardInterrupt):
    """The process received SIGINT (or, as a subclass, SIGTERM): raised only by evo's signal
    handlers. A KeyboardInterrupt so that code which handles Ctrl-C handles it too."""


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    raise Interrupted()


@contextmanager
def marked_interrupts() -> Iterator[None]:
    """SIGINT raises `Interrupted` inside the block. Signal handlers belong to the main thread:
    elsewhere (a Dask worker's thread) the block changes nothing, and no signal reaches the code
    running there anyway."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:  # a worker process that leaves interrupts to its parent
        yield
        return
    signal.signal(signal.SIGINT, _raise_interrupted)
    try:
        yield
    finally:  # None: a handler set outside Python, which cannot be put back; Python's own then
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)


@contextmanager
def deferred_interrupts() -> Iterator[None]:
    """A SIGINT inside the block is raised as `Interrupted` when the block ends, not where it
    lands: for clean-up that must finish (killing worker processes left half done would leave
    one stuck in `step`, and interpreter exit would wait for it forever). Outside the main
    thread, or where SIGINT is ignored, the block changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        yield
        return
    received: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)
    if received:
        raise Interrupted()


def is_interrupt(exc: BaseException) -> bool:
    """Whether `exc` is an interrupt of the process rather than something code raised.

    Only the main thread receives signals, and only while evo's handler is in place can a raised
    KeyboardInterrupt be told from a signalled one. Under any other handler (Python's own, when
    evo is used as a library) a Ctrl-C is a plain KeyboardInterrupt too, and is taken for the
    user's: better to stop when a plugin raised it than to run on when the user pressed Ctrl-C.
    Where SIGINT is ignored (worker processes) no KeyboardInterrupt is a signal's.
    """
    if isinstance(exc, Interrupted) or wrapped_interrupt(exc) is not None:
        return True
    if not isinstance(exc, KeyboardInterrupt):
        return False
    if threading.current_thread() is not threading.main_thread():
        return False
    handler = signal.getsignal(signal.SIGINT)
    return handler is not _raise_interrupted and handler is not signal.SIG_IGN


def wrapped_interrupt(exc: BaseException) -> Interrupted | None:
    """The `Interrupted` that `exc` was raised from or while handling, when `exc` is not one.

    The signal handler raises wherever the main thread is, and some libraries turn what a
    function they call raises into an error of their own: pydantic-core reports an exception
    from a serializer function (a config's `model_dump`, which every checkpoint calls) as a
    `PydanticSerializationError` caused by it. Such an error is the user's Ctrl-C all the same,
    and whoever stops the run on an interrupt raises the `Interrupted` found here instead.
    """
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, Interrupted):
            return None if link is exc else link
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return None


def describe_raised(exc: BaseException) -> str:
    """What plugin code raised, in one line for a message that names the plugin: `Type:
    message`, and a `SystemExit` said as the call it was (its status means nothing to evo)."""
    if isinstance(exc, SystemExit):
        return f"SystemExit: it called sys.exit({'' if exc.code is None else repr(exc.code)})"
    lines = str(exc).strip().splitlines()
    return type(exc).__name__ + (f": {lines[0]}" if lines else "")
