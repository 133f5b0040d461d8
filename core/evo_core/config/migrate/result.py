"""What a migration produces: the new config and the lines said about it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Migration"]


@dataclass
class Migration:
    config: dict[str, Any]
    dropped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
