"""The progress bar of a training run (tqdm, on stderr): `evo train`, `evo resume`, and the API
with `progress=True`."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["make_progress"]


class _Bar:
    def __init__(self, bar: Any) -> None:
        self.bar = bar

    def update(self, row: dict[str, Any]) -> None:
        if self.bar is None:
            return
        self.bar.set_postfix_str(f"evals={row['evaluations']} best={row['best']:.4g} "
                                 f"mean={row['mean']:.4g} best_ever={row['best_ever']:.4g}",
                                 refresh=False)
        self.bar.update(1)


@contextmanager
def make_progress(total: int, done: int, quiet: bool) -> Iterator[_Bar]:
    if quiet:
        yield _Bar(None)
        return
    from tqdm import tqdm

    # in a terminal the bar redraws; in a log file (a batch job) a line every 30 s is enough
    interactive = sys.stderr.isatty()
    bar = tqdm(total=total, initial=done, unit="gen", desc="generation", dynamic_ncols=True,
               mininterval=0.1 if interactive else 30.0,
               bar_format="{desc} {n_fmt}/{total_fmt} |{bar}| {elapsed}<{remaining} {postfix}")
    try:
        yield _Bar(bar)
    finally:
        bar.close()
