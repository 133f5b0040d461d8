"""The frames of `evo/Reverse-v0` (and `evo/ReverseShaped-v0`): the input tape with the read
head on the symbol the brain sees now, the target (the input reversed) with the write head's
place, and what has been written, each written symbol green when right and red when wrong;
below, the last action in words.

The frame keeps one size (640 x 260) whatever the tape's length (the curriculum lengthens it
between episodes), so every frame of a replay fits the video's first: the cells narrow as the
tape grows.
"""

from __future__ import annotations

from collections.abc import Sequence

from evo_core.environments.drawing import Colour, Image, Sketch, View

__all__ = ["tape_picture"]

WIDTH, HEIGHT = 640, 260
#: the left column of row names, and the widest cell
LABELS, WIDEST = 90, 40
#: blank cells drawn beyond each end of the input tape
BEYOND = 2
INK: Colour = (30, 30, 30)
CELL: Colour = (245, 245, 245)
BLANK: Colour = (225, 225, 225)
HEAD: Colour = (250, 210, 80)
PLACE: Colour = (90, 130, 220)
RIGHT: Colour = (120, 200, 120)
WRONG: Colour = (230, 100, 100)
_VIEW = View(0.0, 0.0, 1.0, WIDTH, HEIGHT, y_down=True)
_BACKGROUND = Sketch.blank(_VIEW)


def tape_picture(symbols: Sequence[str], tape: Sequence[int], read_head: int,
                 target: Sequence[int], written: Sequence[int], action: str) -> Image:
    """The frame: `symbols` names each symbol (the last is the blank), `tape` the input,
    `read_head` where the read head is (it may be off the tape), `target` the reversed input,
    `written` the symbols written so far (the write head is at len(written)), `action` the
    last action in words."""
    sketch = Sketch(_VIEW, _BACKGROUND)
    cells = len(tape) + 2 * BEYOND
    size = min(WIDEST, (WIDTH - LABELS - 10) / cells)
    rows = {"input": 35.0, "target": 105.0, "written": 160.0}
    for name, top in rows.items():
        sketch.text((8, top + size / 2), name, INK, 15, "lm")
    for place in range(-BEYOND, len(tape) + BEYOND):
        on_tape = 0 <= place < len(tape)
        fill = HEAD if place == read_head else (CELL if on_tape else BLANK)
        text = symbols[tape[place]] if on_tape else ""
        _cell(sketch, LABELS + (place + BEYOND) * size, rows["input"], size, fill, text)
    head = LABELS + (read_head + BEYOND + 0.5) * size
    if -BEYOND <= read_head < len(tape) + BEYOND:
        sketch.polygon([(head, rows["input"] + size + 2), (head - 6, rows["input"] + size + 12),
                        (head + 6, rows["input"] + size + 12)], INK)
    for place, symbol in enumerate(target):
        outline = PLACE if place == len(written) else None
        _cell(sketch, LABELS + (place + BEYOND) * size, rows["target"], size, CELL,
              symbols[symbol], outline)
    for place, symbol in enumerate(written):
        fill = RIGHT if place < len(target) and symbol == target[place] else WRONG
        _cell(sketch, LABELS + (place + BEYOND) * size, rows["written"], size, fill,
              symbols[symbol])
    seen = symbols[tape[read_head]] if 0 <= read_head < len(tape) else "blank"
    sketch.text((8, 230), f"the brain sees: {seen}      last action: {action}", INK, 14, "lm")
    return sketch.picture()


def _cell(sketch: Sketch, left: float, top: float, size: float, fill: Colour, text: str,
          outline: Colour | None = None) -> None:
    inner = size - 2
    sketch.polygon([(left + 1, top), (left + inner, top), (left + inner, top + inner),
                    (left + 1, top + inner)], fill, outline or INK, 1 if outline is None else 3)
    if text:
        sketch.text((left + size / 2, top + size / 2), text, INK, max(8, round(size * 0.55)),
                    "mm")
