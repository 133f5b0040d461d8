"""Is a Dask scheduler listening at this address? Answered within a deadline, whatever listens.

`distributed.Client` bounds only the TCP connect by its timeout: the handshake that follows waits
for the peer's reply without one, so a silent listener (or an HTTP server, which waits for a
request) hangs it forever, and a peer that sends other bytes has its first eight read as a frame
length, which once asked for 3 EiB. A Dask scheduler speaks first: on accepting a connection it
sends a short handshake (its compression, Python version and pickle protocol). The probe reads
that message with a socket deadline, checks that it looks like one, and answers with the same
message, so the scheduler sees an ordinary client that connected and left.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from typing import Any

from evo_core.errors import UserError

__all__ = ["ProbeFailed", "connect_client", "probe_scheduler", "tcp_endpoint"]

#: A scheduler's handshake is about a hundred bytes; anything much larger is not one.
MAX_HANDSHAKE_BYTES = 64 * 1024
DEFAULT_PORT = 8786


class ProbeFailed(Exception):
    """What went wrong, in words that complete "no Dask scheduler answered at ADDRESS: ..."."""


def tcp_endpoint(address: str) -> tuple[str, int] | None:
    """(host, port) of a `tcp://` (or scheme-less) address; None for other schemes (tls, ucx,
    inproc), which the probe does not speak."""
    scheme, sep, location = address.partition("://")
    if not sep:
        scheme, location = "tcp", address
    if scheme != "tcp":
        return None
    location = location.split("/", 1)[0]
    if location.startswith("["):  # [ipv6]:port
        host, _, rest = location[1:].partition("]")
        port = rest.lstrip(":")
    elif location.count(":") == 1:
        host, _, port = location.partition(":")
    else:  # a bare host name, or an IPv6 address without brackets (and so without port)
        host, port = location, ""
    if not port:
        return host, DEFAULT_PORT
    try:
        return host, int(port)
    except ValueError:
        raise ProbeFailed(f"{port!r} is not a port number") from None


def _read_exactly(sock: socket.socket, count: int, deadline: float) -> bytes:
    data = bytearray()
    while len(data) < count:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ProbeFailed("something listens there but sent no Dask handshake in time")
        sock.settimeout(left)
        try:
            chunk = sock.recv(count - len(data))
        except TimeoutError:
            raise ProbeFailed("something listens there but sent no Dask handshake in time"
                              ) from None
        if not chunk:
            raise ProbeFailed("the peer closed the connection without a Dask handshake")
        data += chunk
    return bytes(data)


def _probe(host: str, port: int, deadline: float) -> None:
    try:
        sock = socket.create_connection((host, port), timeout=max(deadline - time.monotonic(),
                                                                  0.001))
    except TimeoutError:
        raise ProbeFailed("the connection timed out") from None
    except OSError as exc:
        raise ProbeFailed(exc.strerror or type(exc).__name__) from None
    with sock:
        prefix = _read_exactly(sock, 8, deadline)
        (length,) = struct.unpack("<Q", prefix)
        if not 0 < length <= MAX_HANDSHAKE_BYTES:
            raise ProbeFailed(f"the peer does not speak Dask (its first bytes {prefix!r} are no "
                              "handshake)")
        message = _read_exactly(sock, length, deadline)
        if b"pickle-protocol" not in message:
            raise ProbeFailed("the peer does not speak Dask (its first message is no handshake)")
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        # the scheduler answered; whether it minds our leaving early is its business
        with contextlib.suppress(OSError):
            sock.sendall(prefix + message)


def probe_scheduler(address: str, timeout: float) -> None:
    """Raise `ProbeFailed` unless a Dask scheduler at `address` sends its handshake within
    `timeout` seconds. Name resolution is bounded too: the probe runs in a daemon thread."""
    endpoint = tcp_endpoint(address)
    if endpoint is None:
        return
    deadline = time.monotonic() + timeout
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            _probe(endpoint[0], endpoint[1], deadline)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
            outcome.append(exc)

    thread = threading.Thread(target=run, name="evo-dask-probe", daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    if not outcome:
        raise ProbeFailed("the address did not resolve in time")
    if outcome[0] is not None:
        if isinstance(outcome[0], ProbeFailed):
            raise outcome[0]
        raise ProbeFailed(f"{type(outcome[0]).__name__}: {outcome[0]}")


def connect_client(distributed: Any, address: str, timeout: float, field: str,
                   worker_command: str) -> Any:
    """A `distributed.Client` for the scheduler at `address`, probed first so nothing can hang;
    what fails is one line naming the config `field` and how to start what is missing."""
    def refuse(reason: str) -> UserError:
        return UserError(f"{field}: no Dask scheduler answered at {address} within {timeout:g} s "
                         f"({reason}); start one with `dask scheduler` and `{worker_command}`, "
                         "or fix the address")

    try:
        probe_scheduler(address, timeout)
    except ProbeFailed as failed:
        raise refuse(str(failed)) from None
    try:
        return distributed.Client(address, timeout=timeout)
    except ValueError as exc:  # not an address at all: "garbage!!", "http://..."
        raise UserError(f"{field}: {address!r} is not a Dask scheduler address ({exc}); use "
                        "tcp://HOST:PORT") from None
    except (OSError, TimeoutError) as exc:
        raise refuse(type(exc).__name__) from None
