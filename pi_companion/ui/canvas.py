"""Drawing helpers for the 128x64 one-bit OLED: fonts by size, fitted and centred text.

All text goes through `write`, which draws a cached one-bit mask of the string (rendered once
per string and size by Pillow's own `ImageDraw.text`) instead of asking FreeType to render it
again: rendering glyphs was most of a frame's CPU, and a frame is mostly the same strings.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Sequence

from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 128, 64
# The most characters of one string that are ever measured or drawn. No glyph that draws ink is
# under a pixel wide, so more characters than the screen has columns never fit a line: what
# lies beyond would be off the screen, and cutting it first bounds a frame's cost whatever the
# text (a name of 10 000 characters once cost minutes of CPU in `clip`'s loop).
TEXT_MAX = WIDTH + 1
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


@lru_cache(maxsize=None)
def font(size: int) -> Font:
    """Pillow's built-in font at `size` px (the bitmap font if FreeType is missing)."""
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError, ImportError):
        return ImageFont.load_default()


TEXT_CACHE = True        # False: draw every string with `ImageDraw.text` (tests compare the two)
DIGIT_CACHE = True       # False: a number string not seen before is drawn whole (the benchmark's baseline)


def ink(text: str, size: int) -> tuple[Image.Image, int, int, Any] | None:
    return _ink(text[:TEXT_MAX], size)


@lru_cache(maxsize=1024)
def _ink(text: str, size: int) -> tuple[Image.Image, int, int, Any] | None:
    """`text` at `size` as `ImageDraw.text` draws it at (0, 0) on a one-bit image: its ink as a
    mask cropped to the ink, where the mask's corner goes, and the mask's core image (what
    Pillow's C drawing takes: looked up once, not per paste); None if it leaves no ink.

    Drawn on a scratch image with a margin of a whole line on every side, so ink that
    strays outside the font's box is kept; at integer positions Pillow's text is the same
    mask shifted, so pasting this mask is pixel for pixel the same as drawing the text."""
    x0, y0, x1, y1 = bbox(text, size)
    pad = size + 2
    scratch = Image.new("1", (x1 - x0 + 2 * pad, y1 - y0 + 2 * pad), 0)
    ImageDraw.Draw(scratch).text((pad - x0, pad - y0), text, font=font(size), fill=1)
    inked = scratch.getbbox()
    if inked is None:
        return None
    mask = scratch.crop(inked)
    mask.load()
    return mask, inked[0] - (pad - x0), inked[1] - (pad - y0), mask.im


def write(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, size: int, fill: int = 1) -> None:
    """`draw.text(xy, text, font=font(size), fill=fill)`, from the cached mask: one line of text at
    an integer `xy` on a Pillow drawing. Anything else goes to `draw.text` itself (a line break,
    a fractional position, or a stand-in surface such as the tests' bounds checkers)."""
    x, y = xy
    text = text[:TEXT_MAX]
    if not TEXT_CACHE or type(x) is not int or type(y) is not int or "\n" in text \
            or not isinstance(draw, ImageDraw.ImageDraw):
        draw.text(xy, text, font=font(size), fill=fill)
        return
    drawn = ink(text, size)
    if drawn is None:
        return
    mask, dx, dy, core = drawn
    if draw.palette is None:
        # What `draw.bitmap` does, without its per-call Python (load, ink lookup, the mask's
        # `im` property): a live count is a dozen pastes a frame.
        draw.draw.draw_bitmap((x + dx, y + dy), core, draw.draw.draw_ink(fill))
    else:
        draw.bitmap((x + dx, y + dy), mask, fill=fill)


def new_frame() -> tuple[Image.Image, ImageDraw.ImageDraw]:
    image = Image.new("1", (WIDTH, HEIGHT), 0)
    return image, ImageDraw.Draw(image)


def bbox(text: str, size: int) -> tuple[int, int, int, int]:
    """The box `text` occupies when drawn at (0, 0) on a one-bit image (its first `TEXT_MAX`
    characters: a longer text is wider than the screen either way)."""
    return _bbox(text[:TEXT_MAX], size)


@lru_cache(maxsize=4096)
def _bbox(text: str, size: int) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = font(size).getbbox(text, mode="1")
    return int(x0), int(y0), int(x1), int(y1)


def text_width(text: str, size: int) -> int:
    left, _, right, _ = bbox(text, size)
    return right - left


def fitted(text: str, width: int, largest: int, smallest: int = 9) -> int:
    """The largest font size from `largest` down whose rendering of `text` fits `width`."""
    for size in range(largest, smallest - 1, -1):
        if text_width(text, size) <= width:
            return size
    return smallest


def clip(text: str, width: int, size: int, after: str = "") -> str:
    """`text` shortened with '.' until it fits `width` at `size`, followed by `after` (which is
    never cut: the text gives way to it)."""
    if len(text) > TEXT_MAX:
        text = text[:TEXT_MAX]                  # never fits: cut before measuring (see TEXT_MAX)
    elif text_width(text + after, size) <= width:
        return text
    while len(text) > 1 and text_width(text + "." + after, size) > width:
        text = text[:-1]
    return text + "."


def centred(draw: ImageDraw.ImageDraw, y: int, text: str, size: int, x0: int = 0,
            width: int = WIDTH) -> None:
    """Draw `text` centred in [x0, x0 + width) with its top at `y` (shrunk to fit if needed)."""
    size = fitted(text, width - 2, size)
    text = clip(text, width - 2, size)
    left, top, right, _ = bbox(text, size)
    x = x0 + (width - (right - left)) // 2 - left
    write(draw, (x, y - top), text, size)


# ---- numbers that change at hand speed ----
# A live count ("12.25", "3.50 to go") is a new string on every hall edge: its mask would be
# rendered by FreeType afresh each frame (~0.9 ms here, most of a frame). Drawn as runs instead,
# each numeral its own piece, a count comes from a dozen cached masks (each Pillow's own
# rendering of that piece). The pieces sit at their advances, so the layout is the run's, not
# the whole string's (Pillow renders a glyph a pixel differently in some contexts).
NUMERALS = frozenset("0123456789.")


def pieces(text: str) -> list[str]:
    """`text` cut so that every numeral is a piece of its own ("3.50 to go" -> 3 . 5 0 " to go")."""
    out: list[str] = []
    run = ""
    for ch in text:
        if ch in NUMERALS:
            if run:
                out.append(run)
                run = ""
            out.append(ch)
        else:
            run += ch
    if run:
        out.append(run)
    return out


@lru_cache(maxsize=1024)
def advance(piece: str, size: int) -> int:
    """How far the pen moves after `piece` (whole pixels)."""
    return int(round(font(size).getlength(piece)))


@lru_cache(maxsize=64)
def run_layout(text: str, size: int) -> tuple[tuple[int, int, int, int], tuple[tuple[int, str], ...]]:
    """`text` drawn as runs at (0, 0): the `bbox` of its ink, and each piece with its pen
    position (worked out once per string: a frame measures it, then draws it)."""
    x, box = 0, (0, 0, 0, 0)
    first = True
    placed: list[tuple[int, str]] = []
    for piece in pieces(text):
        l, t, r, b = bbox(piece, size)
        if r > l:
            box = (x + l, t, x + r, b) if first else \
                (min(box[0], x + l), min(box[1], t), max(box[2], x + r), max(box[3], b))
            first = False
        placed.append((x, piece))
        x += advance(piece, size)
    return box, tuple(placed)


def centred_run(draw: ImageDraw.ImageDraw, y: int, text: str, size: int, x0: int = 0,
                width: int = WIDTH) -> None:
    """`centred` for a live number: drawn as runs (above). A text too wide for `width` at
    `size`, with DIGIT_CACHE off, or on a stand-in surface (as `write`), goes to `centred`."""
    if not DIGIT_CACHE or not isinstance(draw, ImageDraw.ImageDraw):
        centred(draw, y, text, size, x0, width)
        return
    (left_, top, right_, _), placed = run_layout(text[:TEXT_MAX], size)
    if right_ - left_ > width - 2:
        centred(draw, y, text, size, x0, width)
        return
    x, y = x0 + (width - (right_ - left_)) // 2 - left_, y - top
    for dx, piece in placed:
        write(draw, (x + dx, y), piece, size)


def left(draw: ImageDraw.ImageDraw, x: int, y: int, text: str, size: int, width: int | None = None) -> None:
    width = WIDTH - x if width is None else width
    text = clip(text, width, size)
    l, top, _, _ = bbox(text, size)
    write(draw, (x - l, y - top), text, size)


def right(draw: ImageDraw.ImageDraw, x_end: int, y: int, text: str, size: int) -> None:
    l, top, r, _ = bbox(text, size)
    write(draw, (x_end - (r - l) - l, y - top), text, size)


def banner(draw: ImageDraw.ImageDraw, text: str, y: int = 52) -> None:
    """An inverted strip along the bottom: notices such as "Undone: YES for Ben"."""
    draw.rectangle((0, y, WIDTH - 1, HEIGHT - 1), fill=1)
    size = fitted(text, WIDTH - 4, 10, 8)
    text = clip(text, WIDTH - 4, size)
    l, top, r, bottom = bbox(text, size)
    room = HEIGHT - y
    origin = min(y + (room - (bottom - top)) // 2 - top, HEIGHT - line_height(size))
    write(draw, ((WIDTH - (r - l)) // 2 - l, origin), text, size, fill=0)


def top_banner(draw: ImageDraw.ImageDraw, text: str, height: int = 12) -> None:
    """An inverted strip along the top, over the screen's title: "YES: play again"."""
    draw.rectangle((0, 0, WIDTH - 1, height - 1), fill=1)
    size = fitted(text, WIDTH - 4, 10, 8)
    text = clip(text, WIDTH - 4, size)
    l, _, r, _ = bbox(text, size)
    write(draw, ((WIDTH - (r - l)) // 2 - l, 0), text, size, fill=0)


def line_height(size: int) -> int:
    """Ascent plus descent: the rows a line of text needs, descenders included."""
    face = font(size)
    if isinstance(face, ImageFont.FreeTypeFont):
        ascent, descent = face.getmetrics()
        return int(ascent + descent)
    return int(face.getbbox("Agy")[3])         # the bitmap font: its ink is its line


def foot_y(text: str, size: int = 9) -> int:
    """The ink top that puts `text`'s line, descender room included, on the bottom rows."""
    _, top, _, _ = bbox(text, size)
    return HEIGHT - line_height(size) + top


def short_name(name: str, length: int = 3) -> str:
    return name[:length]


def distinct(names: Sequence[str], shorten: Callable[[str], str],
             fits: Callable[[str], bool]) -> list[str]:
    """Each of the players' `names` shortened by `shorten` (a row of narrow columns), without two
    players shortened alike: where several names share a short form of two or more letters,
    each keeps all but its last letter and ends with the first later letter that no other of
    them has there ("Ben" and "Bea" in two letters: "Bn" and "Ba"; "Alexander" and "Alexandra"
    in three: "Ale" and "Alr"). A form that does not `fit`, or that another name already shows,
    stays as `shorten` made it."""
    shorts = [shorten(name) for name in names]
    groups: dict[str, list[int]] = {}
    for i, short in enumerate(shorts):
        groups.setdefault(short, []).append(i)
    out = list(shorts)
    for short, group in groups.items():
        keep = len(short) - 1
        if len(group) < 2 or keep < 1:
            continue
        for i in group:
            name = names[i]
            others = [names[j] for j in group if j != i]
            at = next((k for k in range(keep, len(name))
                       if all(k >= len(other) or other[k] != name[k] for other in others)), None)
            if at is None:
                continue
            alt = name[:keep] + name[at]
            if alt not in shorts and alt not in out[:i] + out[i + 1:] and fits(alt):
                out[i] = alt
    return out
