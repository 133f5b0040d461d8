"""Signed state for optimizers whose state has no array form (pycma's strategy object, pyribs'
scheduler): the public face of `results/signing.py` for plugin authors.

`IOptimizer.state()` must return arrays and JSON values, and `load_state` must never execute what
it reads, since a run folder may come from someone else. An optimizer that can only pickle its
state stores it with `seal_state` (the pickle as uint8 bytes, which npz holds without pickling,
beside an HMAC signature made with a secret of this user kept outside every run folder) and reads
it back with `open_state`, which unpickles only once the signature checks and otherwise raises a
one-line UserError. `purpose` names what is signed (`"cma-es"`, `"evo-qd/scheduler"`), so that
state signed for one use cannot be passed off as another's. A run folder with sealed state
resumes only where its secret is (see `evo_core.results.signing`).

    def state(self) -> dict[str, Any]:
        return evo_core.seal_state(self.scheduler, "my-plugin/scheduler")

    def load_state(self, state: dict[str, Any]) -> None:
        self.scheduler = evo_core.open_state(state, "my-plugin/scheduler", "my optimizer's state")

The signing module is imported on first use, so `import evo_core` loads nothing host-side.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["seal_state", "open_state", "check_signing_secret"]


def check_signing_secret() -> None:
    """A UserError now if this user's signing secret cannot be read or made (call it in the
    optimizer's constructor, so that an unusable secret is reported before the first
    checkpoint rather than at it)."""
    from evo_core.results import signing

    signing.sign(b"", "evo secret check")


def seal_state(value: object, purpose: str, key: str = "pickle") -> dict[str, Any]:
    """`value` pickled and signed for `purpose`: a state dict (`key` -> the bytes, `signature`)
    to return from `IOptimizer.state()`, alone or merged with arrays of your own."""
    from evo_core.results import signing

    return signing.signed_pickle(value, purpose, key)


def open_state(state: Mapping[str, Any], purpose: str, what: str, key: str = "pickle") -> Any:
    """The value `seal_state(value, purpose, key)` stored in `state`, unpickled only if this
    user's evo signed it; otherwise a UserError naming `what` ("the CMA-ES state")."""
    from evo_core.results import signing

    return signing.load_signed_pickle(dict(state), purpose, key, what)
