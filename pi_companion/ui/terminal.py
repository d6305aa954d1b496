"""The OLED and the emulator's frame in a terminal: a one-bit frame as text cells (half blocks,
quadrants, sextants or braille), and the best layout of frame, players and key help that fits a
terminal's size. Pure: an image and a size in, text and a choice out."""
from __future__ import annotations

from typing import Any, NamedTuple

HELP = ("1-8 tap a player   h+1-8 hold a player   y n YES NO   Y N long YES NO (N undo)",
        "m MENU  M hold MENU  [ ] arrows encoder  . , w turntable  o OLED look  q quit")
PANEL_W = 14                                       # the players' column right of the frame
# Frame styles: pixels per text cell (x, y). A terminal cell is about twice as tall as wide, so
# half blocks (1x2) draw square pixels at full size, 128x32 cells; quadrant blocks (2x2, 64x32)
# and sextants (2x3, 64x22) draw every pixel as a solid part of a cell, smaller and a little
# tall; braille (2x4, 64x16) fits 80x24 but draws dots with gaps, the hardest to read.
STYLES = {"half": (1, 2), "quad": (2, 2), "sextant": (2, 3), "braille": (2, 4)}
QUADRANTS = " ▘▝▀▖▌▞▛▗▚▐▜▄▙▟█"     # indexed by lit pixels: 1 top left, 2 top right, 4 bottom
                                    # left, 8 bottom right
BRAILLE_DOTS = ((0, 0, 0x01), (0, 1, 0x02), (0, 2, 0x04), (1, 0, 0x08),
                (1, 1, 0x10), (1, 2, 0x20), (0, 3, 0x40), (1, 3, 0x80))
OLED = (128, 64)
STYLE_WORDS = {"half": "half blocks", "quad": "quadrant blocks", "sextant": "sextants",
               "braille": "braille"}


def sextant(bits: int) -> str:
    """The sextant character for lit cells 1 top left, 2 top right, 4 middle left, 8 middle
    right, 16 bottom left, 32 bottom right. Unicode's block U+1FB00 lists the 60 patterns that
    had no character before, in order: empty, full and the two half columns are older."""
    older = {0: " ", 21: "▌", 42: "▐", 63: "█"}
    if bits in older:
        return older[bits]
    return chr(0x1FB00 + bits - 1 - (bits > 21) - (bits > 42))


def frame_lines(image: Any, style: str, unicode: bool = True) -> list[str]:
    """A one-bit frame as text: "half" = half blocks (1x2 px a cell), "quad" = quadrant blocks
    (2x2 px a cell), "sextant" = 2x3 px a cell, "braille" = 2x4 px a cell.

    Without a Unicode terminal a cell is "#" if any of its pixels is lit.
    """
    px = image.load()
    w, h = image.size
    cx, cy = STYLES[style]

    def lit(x: int, y: int) -> bool:
        return y < h and bool(px[x, y])              # 64 rows are not a multiple of 3

    lines = []
    for y in range(0, h, cy):
        row = []
        for x in range(0, w, cx):
            if style == "half":
                ch = " ▀▄█"[lit(x, y) | lit(x, y + 1) << 1]
            elif style == "quad":
                ch = QUADRANTS[lit(x, y) | lit(x + 1, y) << 1 | lit(x, y + 1) << 2 | lit(x + 1, y + 1) << 3]
            elif style == "sextant":
                ch = sextant(sum(lit(x + i % 2, y + i // 2) << i for i in range(6)))
            else:
                bits = sum(bit for dx, dy, bit in BRAILLE_DOTS if lit(x + dx, y + dy))
                ch = chr(0x2800 + bits) if bits else " "
            row.append(ch if unicode or ch == " " else "#")
        lines.append("".join(row))
    return lines


class Layout(NamedTuple):
    style: str                  # a key of STYLES
    panel: str                  # "side": the players in a column right of the frame; "below":
                                # in one line under it (half blocks on a 132-column terminal)


# Best first: what a laptop user reads best among what fits (see docs/controls.md, "The OLED in
# a terminal"). Chrome around the frame: the title line, the frame's two borders, the status
# line, the key help, and one spare line; the panel below takes one more.
LAYOUTS = (Layout("half", "side"), Layout("half", "below"), Layout("quad", "side"),
           Layout("sextant", "side"), Layout("braille", "side"))


def layout_size(layout: Layout) -> tuple[int, int]:
    """The terminal size (columns, rows) a layout needs."""
    fw, fh = frame_size(layout.style)
    rows = 1 + fh + 2 + 2 + len(HELP)
    if layout.panel == "side":
        return fw + 2 + PANEL_W, rows
    return fw + 3, rows + 1


def fits(layout: Layout, cols: int, rows: int) -> bool:
    need_cols, need_rows = layout_size(layout)
    return cols >= need_cols and rows >= need_rows


def choose_layout(cols: int, rows: int, style: str | None = None) -> Layout | None:
    """The best layout that fits, or None if even the compact one does not. `style`: the one
    asked for (--oled, the o key), if it fits; the best that fits otherwise."""
    fitting = [layout for layout in LAYOUTS if fits(layout, cols, rows)]
    asked = [layout for layout in fitting if layout.style == style]
    best = asked or fitting
    return best[0] if best else None


def frame_size(style: str) -> tuple[int, int]:
    cx, cy = STYLES[style]
    return -(-OLED[0] // cx), -(-OLED[1] // cy)


def minimum_size() -> tuple[int, int]:
    return layout_size(LAYOUTS[-1])
