"""Hold Everything! screens: the deal, whose turn, the tumbling die, the card colour, the stack, the winner."""
from __future__ import annotations

from typing import Any

from ..games.hold_everything import CARDS, COLOURS, PER_PLAYER, HoldEverything, rolling_face
from .canvas import HEIGHT, WIDTH, bbox, centred, clip, foot_y, left, line_height, right, write

PIPS = {1: ((1, 1),), 2: ((0, 0), (2, 2)), 3: ((0, 0), (1, 1), (2, 2)),
        4: ((0, 0), (2, 0), (0, 2), (2, 2)), 5: ((0, 0), (2, 0), (1, 1), (0, 2), (2, 2)),
        6: ((0, 0), (2, 0), (0, 1), (2, 1), (0, 2), (2, 2))}


def die_face(draw: Any, x: int, y: int, size: int, pips: int) -> None:
    """A die of `size` px square at (x, y) showing `pips`."""
    draw.rounded_rectangle((x, y, x + size - 1, y + size - 1), radius=max(2, size // 6), outline=1, width=2)
    r = max(1, size // 10)
    for col, row in PIPS[pips]:
        cx = x + size * (col + 1) // 4
        cy = y + size * (row + 1) // 4
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=1)


def strip(draw: Any, text: str, y: int = 53) -> None:
    """An inverted line at the bottom: a question waiting for YES or NO."""
    draw.rectangle((0, y, WIDTH - 1, 63), fill=1)
    text = clip(text, WIDTH - 4, 9)
    l, top, r, _ = bbox(text, 9)
    write(draw, ((WIDTH - (r - l)) // 2 - l, min(y + 1 - top, HEIGHT - line_height(9))), text, 9,
          fill=0)


def footer(draw: Any, state: HoldEverything) -> None:
    if state.dropper is not None:
        strip(draw, f"NO = drop by {state.name(state.dropper)}")
    elif state.last_drop:
        strip(draw, state.last_drop)
    else:
        left(draw, 0, 54, f"stack {len(state.stack)}", 9)
        right(draw, 127, 54, f"face up {len(state.face_up)}", 9)


def draw_setup(draw: Any, state: HoldEverything) -> None:
    who = state.page
    left(draw, 0, 0, state.name(who), 14, width=100)
    right(draw, 127, 2, f"{who + 1}/{state.n}", 9)
    for row, obj in enumerate(state.dealt[who]):
        left(draw, 4, 17 + row * 11, f"- {obj}", 11)
    if state.warning:
        strip(draw, f"too few: {len(state.objects)} of {PER_PLAYER * state.n} objects")
    else:
        centred(draw, foot_y("dial/button: next  YES: play"), "dial/button: next  YES: play", 9)


def draw_turn(draw: Any, state: HoldEverything) -> None:
    for row, line in enumerate(state.last[-2:]):
        centred(draw, row * 10, line, 9)
    centred(draw, 21, state.name(state.current), 20)
    centred(draw, 42, "roll again!" if state.again else "press your button", 10)
    footer(draw, state)


def draw_rolling(draw: Any, state: HoldEverything) -> None:
    die_face(draw, 46, 2, 36, rolling_face(state))
    centred(draw, 42, f"{state.name(state.current)} rolls", 10)
    footer(draw, state)


def draw_colour(draw: Any, state: HoldEverything) -> None:
    choice = CARDS[state.choice]
    die_face(draw, 0, 0, 28, state.die or 1)
    left(draw, 33, 0, f"{state.name(state.current)} {state.die}", 12)
    mates = " or ".join(state.name(p) for p in state.mates)
    left(draw, 33, 16, f"give 1 to {mates}" if mates else "on which card?", 9)
    centred(draw, 31, f"< {choice.upper()} >", 18)
    if state.dropper is not None or state.last_drop:
        footer(draw, state)
    else:
        centred(draw, foot_y(f"{COLOURS[choice]} card: YES"), f"{COLOURS[choice]} card: YES", 9)


def draw_stack(draw: Any, state: HoldEverything) -> None:
    centred(draw, 0, f"{state.name(state.current)} draws", 10)
    centred(draw, 14, state.drawn or "?", 22)
    if state.dropper is not None or state.last_drop:
        centred(draw, 40, "had it? YES / NO", 10)
        footer(draw, state)
    else:
        centred(draw, 40, "had it?", 10)
        strip(draw, "YES: had it    NO: did not")


def draw_over(draw: Any, state: HoldEverything) -> None:
    centred(draw, 0, "WINNER", 11)
    centred(draw, 15, state.name(state.winner if state.winner is not None else 0), 22)
    centred(draw, 44, "holds nothing!", 10)


SCREENS = {"setup": draw_setup, "turn": draw_turn, "rolling": draw_rolling,
           "colour": draw_colour, "stack": draw_stack, "over": draw_over}


def draw_claim(draw: Any, state: HoldEverything) -> None:
    centred(draw, 0, "Who holds nothing?", 11)
    centred(draw, 18, "press your", 16)
    centred(draw, 36, "button", 16)
    strip(draw, "NO: back to the game")


def draw(draw: Any, view: Any) -> None:
    state: HoldEverything = view.game
    if state.claiming and state.phase != "over":
        draw_claim(draw, state)
        return
    SCREENS[state.phase](draw, state)
