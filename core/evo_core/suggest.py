"""'Did you mean ...?' for names a user typed."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean"]


#: Longer words are nobody's typo of a name (and difflib's time grows with their length).
LONGEST = 200


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for a close match, else ''."""
    if len(str(word)) > LONGEST:
        return ""
    matches = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    return f" (did you mean {matches[0]!r}?)" if matches else ""
