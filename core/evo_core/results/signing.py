"""Signing state evo must unpickle, under a per-user secret kept outside every run folder.

pycma's strategy object has no array form, so CMA-ES checkpoints it pickled; and unpickling runs
whatever code the bytes name. A run folder may come from someone else, and whoever writes a
checkpoint can also write the run id beside it, so nothing inside the folder can vouch for it.
The bytes are therefore signed (HMAC-SHA256, as Jupyter signs notebooks) with a secret only this
user can read, and unpickled only if the signature checks. The secret is 32 random bytes in
`$EVO_SECRET_DIR/secret`, by default `~/.config/evo/secret` (honouring XDG_CONFIG_HOME), made
with mode 0600 at first use. The price: a CMA-ES run resumes only where its secret is; copy the
secret (or point EVO_SECRET_DIR at a copy) to resume it as another user or on another machine.

A signature is also bound to the run it was made for: while a run trains or resumes, the
session signs and verifies inside `signing_for(binding)`, the binding naming the run's id and
the digest of the config its checkpoint records (`results.checkpoint.run_binding`). So state
signed for run A, copied into run B's checkpoint (both the user's own), is refused like forged
state instead of resuming B with A's strategy. Outside `signing_for` (and with an empty
`binding`) signatures are bound to nothing, as before.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import os
import pickle
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import numpy as np

from evo_core.errors import UserError
from evo_core.results.reading import open_regular

__all__ = ["load_signed_pickle", "secret_file", "sign", "signed_pickle", "signing_for",
           "verify"]

SECRET_BYTES = 32
#: what signatures made now are bound to (see the module's docstring)
_BINDING: ContextVar[str] = ContextVar("evo_signing_binding", default="")


@contextlib.contextmanager
def signing_for(binding: str) -> Iterator[None]:
    """Bind every signature made and checked inside the block to `binding` (a run)."""
    token = _BINDING.set(binding)
    try:
        yield
    finally:
        _BINDING.reset(token)


def secret_file() -> Path:
    directory = os.environ.get("EVO_SECRET_DIR")
    if directory:
        return Path(directory) / "secret"
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "evo" / "secret"


def _read(path: Path) -> bytes:
    # a link, or a FIFO (not waited on) or a device planted at the secret's name, is refused
    # as the files of a run folder are
    fix = ("evo's signing secret must be a plain file of yours that only you can read (chmod "
           "600); fix it or remove it (checkpoints it signed will then be refused)")
    descriptor = open_regular(path, fix=fix)
    try:
        info = os.fstat(descriptor)
        if info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise UserError(f"{path}: {fix}")
        data = os.read(descriptor, SECRET_BYTES + 1)
    finally:
        os.close(descriptor)
    if len(data) != SECRET_BYTES:
        raise UserError(f"{path}: not an evo signing secret ({len(data)} bytes, not "
                        f"{SECRET_BYTES}); remove it to make a new one")
    return data


def _create(path: Path) -> None:
    """Write a new secret under a temporary name, then link it into place: two processes
    creating it at once both end up with the same, complete secret."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".secret.{os.getpid()}.{os.urandom(8).hex()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(descriptor, os.urandom(SECRET_BYTES))
        os.close(descriptor)
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


@functools.cache
def _secret(path: Path) -> bytes:
    try:
        try:
            return _read(path)
        except FileNotFoundError:
            _create(path)
            return _read(path)
    except OSError as exc:
        raise UserError(f"{path}: cannot read or create evo's signing secret ({exc.strerror}); "
                        "set EVO_SECRET_DIR to a private folder") from None


def sign(data: bytes, purpose: str, binding: str | None = None) -> str:
    """The hex HMAC of `data` for `purpose` (so a signature cannot be moved to another use) and
    `binding` (default: the run `signing_for` names, so it cannot be moved to another run)."""
    key = _secret(secret_file())
    bound = _BINDING.get() if binding is None else binding
    mac = hmac.new(key, digestmod=hashlib.sha256)
    mac.update(purpose.encode() + b"\0" + (bound.encode() + b"\0" if bound else b""))
    mac.update(data)  # not concatenated: the data may be an archive of gigabytes
    return mac.hexdigest()


def verify(data: bytes, purpose: str, signature: object, binding: str | None = None) -> bool:
    return isinstance(signature, str) and hmac.compare_digest(sign(data, purpose, binding),
                                                              signature)


def signed_pickle(value: Any, purpose: str, key: str,
                  binding: str | None = None) -> dict[str, Any]:
    """`value` pickled into a checkpoint entry `key` (bytes as uint8, which npz holds without
    pickling) with its signature: for state that has no array form (pycma's, pyribs')."""
    data = pickle.dumps(value)
    return {key: np.frombuffer(data, dtype=np.uint8), "signature": sign(data, purpose, binding)}


def load_signed_pickle(state: dict[str, Any], purpose: str, key: str, what: str,
                       binding: str | None = None) -> Any:
    """The value `signed_pickle` stored, unpickled only once its signature checks out; `what`
    names it in the one-line refusal."""
    try:
        data = np.asarray(state[key], dtype=np.uint8).tobytes()
    except (KeyError, TypeError, ValueError):
        raise UserError(f"{what} is missing or damaged") from None
    if not verify(data, purpose, state.get("signature"), binding):
        raise UserError(
            f"{what} is not signed with your evo secret ({secret_file()}) for this run, so it "
            "was not written by your evo for this run (or the secret changed); it is not "
            "loaded, as unpickling it could run any code. Resume where the run was trained, "
            "or start a new run")
    return pickle.loads(data)  # noqa: S301 - authenticated above
