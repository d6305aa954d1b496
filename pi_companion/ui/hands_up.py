"""Hands Up! screens: deal, flipping counts with a beat mark, grab, judgement result, winners."""
from __future__ import annotations

from typing import Any, Sequence

from .canvas import TEXT_MAX, WIDTH, bbox, centred, clip, distinct, fitted, foot_y, left, right, text_width

RESULT_S = 2.5          # a judgement's result stays up at least this long (longer at slow beats)
LABEL_W = 10            # the row-icon column of the flipping screen
TITLES = {"yes": "THEFT!", "no": "FALSE  ALARM", "special": "POLICE!"}
HISTORY_WORDS = {"yes": "theft", "no": "false alarm", "special": "police"}
MANUAL_HINTS = {"yes": "others share all face-up", "no": "{} takes all face-up",
                "special": "{} shares own face-up"}

# ---- text helpers beyond the canvas ones ----


def name_fit(name: str, width: int, size: int) -> str:
    """The longest start of `name` that fits `width` at `size` (columns are too narrow for '.')."""
    for end in range(min(len(name), TEXT_MAX), 0, -1):
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

# The deal, flipping, grab and result screens share one layout, so that going from one to the
# next rewrites only what changed (the OLED is written in pages of 8 pixel rows, and every byte
# sent costs bus time): the players' names stay in the top row (page 0) in their columns, the
# hands row (pages 2-3) holds the hand counts or the big line (the grabber, the verdict), the
# middle row (pages 4-5) the face-up counts, the verdict keys or who receives how many, and
# the foot (pages 6-7) the table total with the tempo, the runner-up or where the cards go.
BIG_Y, MID_Y = 16, 32           # the hands row and the middle row (ink tops)
COUNT_Y = {"hand": 16, "up": 36}
NAME_BOX, VERB_MIN, GAP = 68, 11, 5   # the big line: the name's box, the verb's least size
COUNT_MIN = 7                   # a count row's least size: eight players' "1NN" fits its
                                # 14-pixel column only at 7 (at 9 it ran into the next count)


def cell_width(n: int) -> int:
    return (WIDTH - LABEL_W) // n


def names_row(draw: Any, view: Any) -> None:
    state = view.game
    cell = cell_width(state.n)
    name_size = 10 if state.n <= 4 else 9
    names = distinct(view.players, lambda name: name_fit(name, cell - 2, name_size),
                     lambda short: text_width(short, name_size) <= cell - 2)
    for i, name in enumerate(names):
        centred(draw, 0, name, name_size, x0=LABEL_W + i * cell, width=cell)


def deal_screen(draw: Any, view: Any) -> None:
    """The flipping screen's columns with what each player takes in the hands row, so the
    first beat changes the counts only."""
    state = view.game
    names_row(draw, view)
    count_row(draw, "hand", state.dealt, 22, COUNT_Y["hand"], cell_width(state.n))
    centred(draw, MID_Y + 2, f"DEAL {state.cards} cards", 12)
    hint = "PAUSED: MENU to resume" if state.paused else "one card each on the beat"
    centred(draw, foot_y(hint), hint, 9)


def flipping_screen(draw: Any, view: Any) -> None:
    state = view.game
    cell = cell_width(state.n)
    beat_mark(draw, state.beats, state.paused)
    names_row(draw, view)
    rows: tuple[tuple[str, Sequence[int], int, int], ...]
    if state.mode == "quick":
        rows = (("hand", state.hands, 16, 12), ("up", state.face_up, 14, 27),
                ("aside", state.set_aside, 12, 41))
    else:
        rows = (("hand", state.hands, 22, COUNT_Y["hand"]), ("up", state.face_up, 16, COUNT_Y["up"]))
    for kind, values, largest, y in rows:
        count_row(draw, kind, values, largest, y, cell)
    table_total(draw, state)
    tempo = "paused" if state.paused else f"{state.beat_ms / 1000:g} s/beat"
    right(draw, WIDTH - 1, foot_y(tempo), tempo, 9)


def table_total(draw: Any, state: Any) -> None:
    left(draw, 0, foot_y("table"), f"table {state.table_total}", 9)


def count_row(draw: Any, kind: str | None, values: Sequence[int | str], largest: int, y: int,
              cell: int) -> None:
    """One row of counts, one size for the whole row (the largest at which all fit its cells),
    each right-aligned on the same spot of its cell (room for two digits where that costs no
    size), so a count that changes rewrites only the digits that changed, and a `+N` of the
    result lands on the face-up count that follows it. `kind`: the row's card icon (None: none)."""
    if kind is not None:
        card_icon(draw, 1, y + max(0, digit_height(largest) - 9) // 2, kind)
    texts = [str(v) for v in values]
    room = ["00"] if text_width("00", largest) <= cell - 2 else []   # two digits' room if it costs no size
    widest = max(texts + room, key=lambda v: text_width(v, largest))
    size = fitted(widest, cell - 2, largest, COUNT_MIN)
    end = (cell + text_width(widest, size)) // 2
    y += (digit_height(largest) - digit_height(size)) // 2
    for i, text in enumerate(texts):
        if text:
            right(draw, LABEL_W + i * cell + end, y, text, size)


def big_line(draw: Any, verb: str, name: str) -> None:
    """The hands row as one big line: the verb on the left, the grabber's name big on the right,
    sized for its own box, so the name stays where it is when the grab becomes a verdict and
    only the verb is rewritten (the name gives way only to a verb that would not fit)."""
    name = name.upper()
    box = NAME_BOX
    if text_width(verb, VERB_MIN) > WIDTH - NAME_BOX - GAP:
        box = WIDTH - text_width(verb, VERB_MIN) - GAP
    size = fitted(name, box, 22, 11)
    name = clip(name, box, size)
    right(draw, WIDTH - 1, BIG_Y + digit_height(22) - digit_height(size), name, size)
    room = WIDTH - text_width(name, size) - GAP
    size = fitted(verb, room, 16, VERB_MIN)
    left(draw, 0, BIG_Y + digit_height(22) - digit_height(size), verb, size)


def grab_screen(draw: Any, view: Any) -> None:
    state = view.game
    players = view.players
    if not state.manual:                        # manual mode keeps no columns to name
        names_row(draw, view)
    big_line(draw, "GRAB!", players[state.grabber])
    left(draw, 0, MID_Y, "YES theft  NO false alarm", 9)
    left(draw, 0, MID_Y + 9, "hold YES: police", 9)
    if not state.manual:
        table_total(draw, state)
    buzz = view.table.last_buzz
    order = buzz.ordered() if buzz is not None else []
    # The foot's right, beside the table count: the runner-up's name gives way (clipped with
    # '.') to the margin, which stays whole; a long name ran over the count and off the frame.
    room = WIDTH - 1 - (0 if state.manual else text_width(f"table {state.table_total}", 9) + GAP)
    if len(order) > 1:
        runner, ms = order[1]
        margin = f"+{ms:.0f} ms" if ms >= 1 else f"+{ms:.2f} ms"
        runner_up = f"{clip(players[runner], room, 9, after=f' {margin}')} {margin}"
    else:
        runner_up = "nobody close"
    right(draw, WIDTH - 1, foot_y(runner_up), runner_up, 9)


def result_screen(draw: Any, view: Any) -> None:
    state = view.game
    last = state.last
    who = view.players[last.grabber]
    if not state.manual:
        names_row(draw, view)
    big_line(draw, TITLES[last.verdict], who)
    if state.manual:
        centred(draw, MID_Y + 2, MANUAL_HINTS[last.verdict].format(who), 11)
        return
    if last.moved == 0:
        centred(draw, MID_Y + 2, "no cards to move", 11)
    else:                           # each receiver's +N in their column (false alarm: the grabber)
        cell = cell_width(state.n)
        signed = [f"+{c}" if c else "" for c in last.received]
        if max(text_width(text, 9) for text in signed) <= cell - 2:
            count_row(draw, None, signed, 16, COUNT_Y["up"], cell)
        else:           # eight players' "+NN" ran into each other: one '+' for the row, left
            count_row(draw, None, [str(c) if c else "" for c in last.received], 16,
                      COUNT_Y["up"], cell)
            left(draw, 1, COUNT_Y["up"] + (digit_height(16) - digit_height(9)) // 2, "+", 9)
    where = "to set-aside piles" if last.to_set_aside else "to the bottom of hands"
    right(draw, WIDTH - 1, foot_y(where), where, 9)


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
