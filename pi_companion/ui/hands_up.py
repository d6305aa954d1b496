"""Hands Up! screens: deal, flipping counts with a beat mark, grab, judgement result, winners."""
from __future__ import annotations

from typing import Any, Sequence

from .canvas import HEIGHT, WIDTH, bbox, centred, fitted, foot_y, left, right, text_width

RESULT_S = 2.5          # a judgement's result stays up at least this long (longer at slow beats)
LABEL_W = 10            # the row-icon column of the flipping screen
TITLES = {"yes": "THEFT!", "no": "FALSE ALARM", "special": "POLICE!"}
HISTORY_WORDS = {"yes": "theft", "no": "false alarm", "special": "police"}
MANUAL_HINTS = {"yes": "others share all face-up", "no": "{} takes all face-up",
                "special": "{} shares own face-up"}

# ---- text helpers beyond the canvas ones ----


def name_fit(name: str, width: int, size: int) -> str:
    """The longest start of `name` that fits `width` at `size` (columns are too narrow for '.')."""
    for end in range(len(name), 0, -1):
        if text_width(name[:end], size) <= width:
            return name[:end]
    return name[:1]


def digit_height(size: int) -> int:
    _, top, _, bottom = bbox("0", size)
    return bottom - top


def grid(draw: Any, cells: Sequence[str], y: int, size: int, row_h: int, per_row: int = 4) -> None:
    """Short texts in up to `per_row` equal columns, as many rows as needed."""
    rows = [cells[i:i + per_row] for i in range(0, len(cells), per_row)]
    for r, row in enumerate(rows):
        width = WIDTH // len(row)
        for c, text in enumerate(row):
            centred(draw, y + r * row_h, text, size, x0=c * width, width=width)


def name_grid(draw: Any, names: Sequence[str], values: Sequence[str], y: int,
              big: tuple[int, int], small: tuple[int, int]) -> None:
    """Name over value, 4 to a row: one row uses `big` (name size, value size), two use `small`."""
    sizes = big if len(names) <= 4 else small
    row_h = 20 if len(names) <= 4 else 21
    per_row = min(len(names), 4)
    short = [name_fit(nm, WIDTH // per_row - 2, sizes[0]) for nm in names]
    for start in range(0, len(names), 4):
        top = y + (start // 4) * row_h
        grid(draw, short[start:start + 4], top, sizes[0], row_h)
        grid(draw, list(values[start:start + 4]), top + sizes[0] + 1, sizes[1], row_h)

# ---- pictures ----


def card_icon(draw: Any, x: int, y: int, kind: str) -> None:
    """Row labels: a face-down card (hand), a face-up card, a crossed card (set aside)."""
    box = (x, y, x + 6, y + 8)
    if kind == "hand":
        draw.rectangle(box, fill=1)
    else:
        draw.rectangle(box, outline=1, fill=0)
    if kind == "aside":
        draw.line((x, y, x + 6, y + 8), fill=1)
        draw.line((x, y + 8, x + 6, y), fill=1)


def beat_mark(draw: Any, beats: int, paused: bool) -> None:
    """Top-left: filled and hollow in turn, so every beat visibly changes it; bars when paused.
    It stays inside the top 8 pixel rows (one page of the panel's RAM: a beat sends 8 bytes)."""
    if paused:
        draw.rectangle((1, 0, 2, 7), fill=1)
        draw.rectangle((5, 0, 6, 7), fill=1)
    elif beats % 2:
        draw.ellipse((0, 0, 7, 7), fill=1)
    else:
        draw.ellipse((0, 0, 7, 7), outline=1, fill=0)

# ---- screens ----


def draw(draw: Any, view: Any) -> None:
    state = view.game
    if state.phase == "over":
        winners_screen(draw, view)
    elif state.phase == "judging":
        grab_screen(draw, view)
    elif showing_result(state, view.clock):
        result_screen(draw, view)
    elif state.manual:
        manual_screen(draw, view)
    elif state.beats == 0:
        deal_screen(draw, view)
    else:
        flipping_screen(draw, view)


def showing_result(state: Any, clock: float) -> bool:
    """A judgement's result stays up until the next beat, and at least RESULT_S seconds."""
    last = state.last
    return last is not None and clock < last.at + max(RESULT_S, state.beat_s)


def deal_screen(draw: Any, view: Any) -> None:
    state = view.game
    centred(draw, 0, f"DEAL {state.cards} cards", 12)
    name_grid(draw, view.players, [str(c) for c in state.dealt], 15, (10, 18), (9, 11))
    hint = "PAUSED: MENU to resume" if state.paused else "one card each on the beat"
    centred(draw, foot_y(hint), hint, 9)


def flipping_screen(draw: Any, view: Any) -> None:
    state = view.game
    cell = (WIDTH - LABEL_W) // state.n
    beat_mark(draw, state.beats, state.paused)
    name_size = 10 if state.n <= 4 else 9
    for i, name in enumerate(view.players):
        centred(draw, 0, name_fit(name, cell - 2, name_size), name_size,
                x0=LABEL_W + i * cell, width=cell)
    rows: tuple[tuple[str, Sequence[int], int, int], ...]
    if state.mode == "quick":
        rows = (("hand", state.hands, 16, 12), ("up", state.face_up, 14, 27),
                ("aside", state.set_aside, 12, 41))
    else:
        rows = (("hand", state.hands, 22, 16), ("up", state.face_up, 16, 36))   # pages 2-3, 4-5
    for kind, values, largest, y in rows:
        count_row(draw, kind, values, largest, y, cell)
    left(draw, 0, foot_y("table"), f"table {state.table_total}", 9)
    tempo = "paused" if state.paused else f"{state.beat_ms / 1000:g} s/beat"
    right(draw, WIDTH - 1, foot_y(tempo), tempo, 9)


def count_row(draw: Any, kind: str, values: Sequence[int], largest: int, y: int, cell: int) -> None:
    """One row of counts, one size for the whole row (the largest at which all fit its cells)."""
    card_icon(draw, 1, y + max(0, digit_height(largest) - 9) // 2, kind)
    widest = max((str(v) for v in values), key=lambda v: text_width(v, largest))
    size = fitted(widest, cell - 2, largest)
    y += (digit_height(largest) - digit_height(size)) // 2
    for i, value in enumerate(values):
        centred(draw, y, str(value), size, x0=LABEL_W + i * cell, width=cell)


def grab_screen(draw: Any, view: Any) -> None:
    state = view.game
    players = view.players
    left(draw, 0, 0, "GRAB!", 10)
    if not state.manual:
        right(draw, WIDTH - 1, 0, f"table {state.table_total}", 10)
    centred(draw, 13, players[state.grabber].upper(), 22)
    buzz = view.table.last_buzz
    order = buzz.ordered() if buzz is not None else []
    if len(order) > 1:
        runner, ms = order[1]
        margin = f"+{ms:.0f} ms" if ms >= 1 else f"+{ms:.2f} ms"
        centred(draw, 36, f"{players[runner]} {margin}", 11)
    else:
        centred(draw, 36, "nobody close", 11)
    centred(draw, 46, "YES theft  NO false alarm", 9)
    centred(draw, foot_y("hold YES: police"), "hold YES: police", 9)


def result_screen(draw: Any, view: Any) -> None:
    state = view.game
    last = state.last
    who = view.players[last.grabber]
    centred(draw, 0, f"{TITLES[last.verdict]} {who}", 12)
    if state.manual:
        centred(draw, 24, MANUAL_HINTS[last.verdict].format(who), 11)
        return
    if last.moved == 0:
        centred(draw, 24, "no cards to move", 11)
    elif last.verdict == "no":
        centred(draw, 20, f"takes {last.moved}", 22)
    else:
        receivers = [i for i, c in enumerate(last.received) if c]
        name_grid(draw, [view.players[i] for i in receivers],
                  [f"+{last.received[i]}" for i in receivers], 15, (10, 18), (9, 11))
    where = "to set-aside piles" if last.to_set_aside else "to the bottom of hands"
    centred(draw, foot_y(where), where, 9)


def manual_screen(draw: Any, view: Any) -> None:
    state = view.game
    players = view.players
    left(draw, 0, 0, "Hands Up!", 10)
    right(draw, WIDTH - 1, 0, "own pace", 9)
    centred(draw, 14, "press to grab", 16)
    recent = state.history[-2:][::-1]
    if not recent:
        centred(draw, 40, "no grabs yet", 10)
    for row, j in enumerate(recent):
        centred(draw, 38 + row * 13, f"{players[j.grabber]}: {HISTORY_WORDS[j.verdict]}", 10)


def winners_screen(draw: Any, view: Any) -> None:
    state = view.game
    tops = view.report()["winners"]
    quick = state.mode == "quick"
    left(draw, 0, 0, "WINNER" if len(tops) == 1 else "WINNERS", 11)
    right(draw, WIDTH - 1, 1, "set aside" if quick else "cards left", 9)
    names = " & ".join(tops)
    if text_width(names, 9) >= WIDTH:
        names = f"{len(tops)} players (*)"
    centred(draw, 13, names, 20)
    counts = state.set_aside if quick else tuple(h + f for h, f in zip(state.hands, state.face_up))
    per_row = min(state.n, 4)
    cells = [f"{'*' if p in tops else ''}{name_fit(p, WIDTH // per_row - 18, 9)} {c}"
             for p, c in zip(view.players, counts)]
    grid(draw, cells, 42 if state.n <= 4 else 38, 9, 13)
