"""What a migration produces: the new config and the lines said about it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Migration", "is_number", "short_repr"]


def is_number(value: Any) -> bool:
    """An int or a float (not a bool): what comparisons and float() can take."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def short_repr(value: Any, limit: int = 60) -> str:
    """`repr(value)`, cut to one short line for a message."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


@dataclass
class Migration:
    config: dict[str, Any]
    dropped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def table(self, value: Any, name: str) -> dict[str, Any]:
        """A copy of the section `name` when it is a table; anything else (a design space's
        list of alternative tables, a number, a string) is reported and counts as empty, so
        no section's shape can stop a migration."""
        if isinstance(value, dict):
            return dict(value)
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            self.dropped.append(f"{name}: a list of {len(value)} alternative tables (a design "
                                "space); evo takes one table: pick one and migrate again")
        else:
            self.dropped.append(f"{name} {short_repr(value)}: not a table; ignored")
        return {}
