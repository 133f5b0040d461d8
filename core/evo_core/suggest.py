"""'Did you mean ...?' for names a user typed."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean", "close_match"]


#: Longer words are nobody's typo of a name (and difflib's time grows with their length).
LONGEST = 200


def close_match(word: object, choices: Iterable[str]) -> str | None:
    """The choice `word` most nearly spells, or None (a word longer than `LONGEST` matches
    nothing: a 50 MB key took difflib 7.6 s)."""
    if len(str(word)) > LONGEST:
        return None
    matches = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for a close match, else ''."""
    match = close_match(word, choices)
    return f" (did you mean {match!r}?)" if match is not None else ""
