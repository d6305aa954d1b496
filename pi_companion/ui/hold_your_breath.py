"""Hold Your Breath! screen: the depth board as a picture (one gauge per diver, anchors, panic, Shark)."""
from __future__ import annotations

from typing import Any

from ..games.hold_your_breath import HoldYourBreath, totals_of
from .canvas import banner, bbox, centred, text_width, write

BOARD_W = 78          # gauges on the left, the turn panel on the right
PANEL_X = 80
SURFACE_Y = 11
BOTTOM_Y = 62
PANEL_W = 128 - PANEL_X


def scale_ft(state: HoldYourBreath) -> int:
    """Feet from the surface to the bottom of the gauges: 50 ft steps, enough for every marker."""
    deepest = max(state.depths + (state.anchors or ()) + (state.depths[state.current] + state.swim,))
    return max(50, -(-deepest // 50) * 50)


def depth_y(feet: int, scale: int) -> int:
    return SURFACE_Y + 1 + round(feet * (BOTTOM_Y - SURFACE_Y - 3) / scale)


def anchor(draw: Any, x: int, y: int) -> None:
    """A 5 px anchor glyph whose crown sits at (x + 2, y)."""
    draw.point((x + 2, y - 4), fill=1)
    draw.line((x + 2, y - 3, x + 2, y + 1), fill=1)
    draw.line((x + 1, y - 2, x + 3, y - 2), fill=1)
    draw.line((x, y, x, y + 1), fill=1)
    draw.line((x + 4, y, x + 4, y + 1), fill=1)
    draw.line((x + 1, y + 2, x + 3, y + 2), fill=1)


def fin(draw: Any, x: int, y: int) -> None:
    """The Shark: a small fin, 5 px wide."""
    draw.polygon(((x, y + 3), (x + 2, y - 2), (x + 4, y + 3)), fill=1)


def panic_marks(draw: Any, x: int, y: int, count: int) -> None:
    """One '!' per Panic card (three at most, then a bar under them)."""
    for k in range(min(count, 3)):
        draw.line((x + 2 * k, y - 4, x + 2 * k, y - 1), fill=1)
        draw.point((x + 2 * k, y + 1), fill=1)
    if count > 3:
        draw.line((x, y + 3, x + 4, y + 3), fill=1)


def surface(draw: Any) -> None:
    for x in range(0, BOARD_W, 4):
        draw.line((x, SURFACE_Y, x + 1, SURFACE_Y - 1), fill=1)
        draw.line((x + 2, SURFACE_Y - 1, x + 3, SURFACE_Y), fill=1)


def short_label(name: str, width: int) -> str:
    """At most three letters of a name, fewer if they do not fit the column."""
    label = name[:3]
    while len(label) > 1 and text_width(label, 9) > width - 1:
        label = label[:-1]
    return label


def gauge(draw: Any, state: HoldYourBreath, diver: int, scale: int) -> None:
    width = BOARD_W // state.n
    x0 = diver * width
    cx = x0 + width // 2
    label = short_label(state.name(diver), width)
    l, top, r, _ = bbox(label, 9)
    lx = x0 + (width - (r - l)) // 2 - l
    if diver == state.current and state.phase != "over":
        draw.rectangle((x0, 0, x0 + width - 1, 8), fill=1)
        write(draw, (lx, 0 - top), label, 9, fill=0)
    else:
        write(draw, (lx, 0 - top), label, 9)
    if diver == state.selected:
        draw.rectangle((x0, 0, x0 + width - 1, BOTTOM_Y + 1), outline=1)
    for y in range(SURFACE_Y + 2, BOTTOM_Y + 1, 2):
        draw.point((cx, y), fill=1)
    if state.anchors is not None:
        anchor(draw, cx - 9, depth_y(state.anchors[diver], scale))
    y = depth_y(state.depths[diver], scale)
    if diver == state.current and state.swim and state.phase != "over":
        step = -state.swim if state.phase.startswith("ascent") else state.swim
        ty = depth_y(state.depths[diver] + step, scale)
        draw.line((cx + 1, y, cx + 1, ty), fill=1)
        draw.rectangle((cx - 3, ty - 1, cx + 3, ty + 1), outline=1)
    draw.rectangle((cx - 3, y - 2, cx + 3, y + 2), fill=1)
    side = cx + 5
    fin_y = y + 3
    if state.panic[diver]:
        marks_y = max(SURFACE_Y + 5, y - 4)
        panic_marks(draw, side, marks_y, state.panic[diver])
        fin_y = max(fin_y, marks_y + 7)       # below the marks (a diver near the surface has both)
    if state.shark == diver:
        fin(draw, side, min(BOTTOM_Y - 3, fin_y))


def panel(draw: Any, state: HoldYourBreath) -> None:
    x, w = PANEL_X, PANEL_W
    phase = {"descent": "DOWN", "ascent": "UP"}.get(state.phase, f"LAST {state.last_turns}")
    centred(draw, 0, phase, 9, x0=x, width=w)
    if state.selected is not None:
        centred(draw, 11, state.name(state.selected), 11, x0=x, width=w)
        shark = "Kraken" if state.shark == state.selected else "shark"
        for row, line in enumerate(("NO panic", "YES calm", "hold YES", shark)):
            centred(draw, 24 + row * 10, line, 9, x0=x, width=w)
        return
    me = state.current
    centred(draw, 12, state.name(me), 11, x0=x, width=w)
    centred(draw, 25, f"{state.depths[me]} ft", 10, x0=x, width=w)
    if state.hindered(me):
        centred(draw, 38, "calm", 11, x0=x, width=w)
        centred(draw, 53, "first!", 9, x0=x, width=w)
        return
    up = state.phase.startswith("ascent")
    centred(draw, 36, f"{state.swim}", 14, x0=x + 8, width=w - 8)
    ax = x + 6
    if up:
        draw.polygon(((ax - 4, 45), (ax, 38), (ax + 4, 45)), fill=1)
    else:
        draw.polygon(((ax - 4, 38), (ax, 45), (ax + 4, 38)), fill=1)
    centred(draw, 54, "YES: end", 9, x0=x, width=w)


def draw_over(draw: Any, state: HoldYourBreath) -> None:
    names = " & ".join(state.name(d) for d in state.winners)
    centred(draw, 0, "WINNER" if len(state.winners) == 1 else "WINNERS", 11)
    centred(draw, 13, names, 20)
    if state.ended_by == "surface":
        deepest = max(state.anchors or (0,))
        centred(draw, 36, f"up first from {deepest} ft", 10)
        order = ", ".join(state.name(d) for d in state.surfaced)
        centred(draw, 52, f"surfaced: {order}", 9)
        return
    centred(draw, 36, "greatest distance", 10)
    cell = 128 // state.n
    for i, total in enumerate(totals_of(state) or ()):
        centred(draw, 46, state.name(i)[:3], 9, x0=i * cell, width=cell)
        centred(draw, 55, str(total), 9, x0=i * cell, width=cell)


def draw(draw: Any, view: Any) -> None:
    state: HoldYourBreath = view.game
    if state.phase == "over":
        draw_over(draw, state)
        return
    scale = scale_ft(state)
    surface(draw)
    for diver in range(state.n):
        gauge(draw, state, diver, scale)
    panel(draw, state)
    if state.pick:
        banner(draw, state.pick)
