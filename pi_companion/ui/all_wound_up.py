"""All Wound Up screens: the live wind count, the verdict, the Brain-token bank and the round guide."""
from __future__ import annotations

from typing import Any

from ..games import round_guide as rg
from ..games.all_wound_up import STEPS_PER_TURN, AllWoundUp, action_label, cursor, live_status
from .canvas import WIDTH, centred, centred_run, clip, fitted, font, foot_y, left, right, short_name, write

VERDICT_WORDS = {"exact": "EXACT", "too-few": "TOO FEW", "too-many": "TOO MANY", "void": "VOID"}
COLUMN_HEADS = ("bk", "pu", "gr", "ye", "rd")
ROW = 9
NAME_W = 44
COL_W = 16


def draw(draw: Any, view: Any) -> None:
    state: AllWoundUp = view.game
    if state.winner is not None:
        draw_winner(draw, state)
    elif state.claim is not None:
        draw_claim(draw, state)
    elif state.screen == "bank":
        draw_bank(draw, state)
    elif state.screen == "guide":
        draw_guide(draw, state)
    elif state.check is not None:
        draw_winding(draw, state)
    else:
        draw_idle(draw, state)


def turns_text(steps: int) -> str:
    """Turns to the quarter (one hall step): 0.75, 1.00, 1.25."""
    return f"{steps / STEPS_PER_TURN:.2f}"


def draw_claim(draw: Any, state: AllWoundUp) -> None:
    assert state.claim is not None
    centred(draw, 2, state.players[state.claim], 16)
    centred(draw, 22, "crossed the gate", 11)
    centred(draw, 35, "first?", 11)
    centred(draw, 53, "YES: wins   NO: not yet", 9)


def draw_winner(draw: Any, state: AllWoundUp) -> None:
    assert state.winner is not None
    centred(draw, 0, "WINNER", 10)
    centred(draw, 14, state.players[state.winner], 18)
    centred(draw, 34, "WINS!", 14)
    centred(draw, 52, "first across the gate", 9)


# ---- the wind check ----

def draw_winding(draw: Any, state: AllWoundUp) -> None:
    check = state.check
    assert check is not None
    left(draw, 0, 0, state.players[check.player], 11, width=70)
    right(draw, 127, 0, f"target {check.target}", 11)
    centred_run(draw, 15, turns_text(check.steps), 24, width=100)     # at hand speed
    quarter_pie(draw, check.steps, 104, 16, 20)
    progress_bar(draw, check.steps, check.target, state.tolerance, 42)
    centred_run(draw, 53, winding_status(state), 10)


def winding_status(state: AllWoundUp) -> str:
    check = state.check
    assert check is not None
    if check.missed:
        return f"missed edge x{check.missed}!"
    if not check.stepped:
        return "dial target, then wind"
    goal = STEPS_PER_TURN * check.target
    status = live_status(check.steps, check.target)
    if status == "on":
        return "on target: stop!"
    if status == "over":
        return f"TOO MANY: {turns_text(check.steps - goal)} over"
    return f"{turns_text(goal - check.steps)} to go"


def quarter_pie(draw: Any, steps: int, x: int, y: int, size: int) -> None:
    """The quarter turns of the turn in progress, filled clockwise from 12 o'clock."""
    box = (x, y, x + size, y + size)
    draw.ellipse(box, outline=1)
    quarters = abs(steps) % STEPS_PER_TURN or (STEPS_PER_TURN if steps else 0)
    if quarters:
        draw.pieslice(box, -90, -90 + 90 * quarters, fill=1)


def progress_bar(draw: Any, steps: int, target: int, tolerance: int, y: int) -> None:
    """One cell per quarter turn up to the target; taller marks at whole turns."""
    x0, x1, h = 2, 125, 8
    draw.rectangle((x0, y, x1, y + h), outline=1)
    cells = STEPS_PER_TURN * target
    if cells == 0:
        if steps > tolerance:
            draw.rectangle((x0, y, x1, y + h), fill=1)
        return
    width = (x1 - x0) / cells
    filled = max(0, min(steps, cells))
    if filled:
        draw.rectangle((x0, y, x0 + round(filled * width), y + h), fill=1)
    for k in range(1, cells):
        x = x0 + round(k * width)
        tall = k % STEPS_PER_TURN == 0
        draw.line((x, y - (2 if tall else 0), x, y + h), fill=0 if k <= filled else 1)


def draw_idle(draw: Any, state: AllWoundUp) -> None:
    centred(draw, 0, "ALL WOUND UP", 10)
    if state.attempts:
        last = state.attempts[-1]
        centred(draw, 12, f"{state.players[last.player]}: {turns_text(last.steps)} of {last.target}", 11)
        centred(draw, 25, VERDICT_WORDS[last.verdict], 22)
        miss = last.steps - STEPS_PER_TURN * last.target
        if last.missed:
            centred(draw, 44, f"missed edge x{last.missed}", 9)
        elif last.verdict == "exact" and miss:
            centred(draw, 44, f"{turns_text(abs(miss))} {'over' if miss > 0 else 'short'}: in tolerance", 9)
    else:
        centred(draw, 14, "press your", 14)
        centred(draw, 30, "button to wind", 14)
    line = guide_line(state)
    centred(draw, foot_y(line), line, 9)        # its descender room on the last row, whatever the names


def guide_line(state: AllWoundUp) -> str:
    step = rg.current(state.guide)
    return f"R{state.guide.round} {rg.describe(step, state.players)}"


# ---- the bank ----

def inverted(draw: Any, x: int, y: int, text: str, size: int) -> None:
    l, top, _, _ = font(size).getbbox(text)
    write(draw, (x - l, y - top), text, size, fill=0)


def draw_bank(draw: Any, state: AllWoundUp) -> None:
    if state.shown is not None:
        draw_pick(draw, state)
        return
    if state.ask is not None:
        draw_ask(draw, state)
        return
    chosen = cursor(state)
    check = state.check
    head = "BANK" if check is None else f"{short_name(state.players[check.player])} {check.target}t"
    left(draw, 0, 0, head, 9, width=NAME_W)
    counts_row(draw, 0, COLUMN_HEADS)
    left(draw, 0, ROW, "bank", 9, width=NAME_W)
    counts_row(draw, ROW, tuple(str(k) for k in state.bank.supply))
    for i, held in enumerate(state.bank.held):
        y = ROW * (2 + i)
        if chosen is not None and chosen.player == i:
            draw.rectangle((0, y - 1, NAME_W - 2, y + ROW - 2), fill=1)
            inverted(draw, 1, y, clip(state.players[i], NAME_W - 4, 9), 9)
        else:
            left(draw, 1, y, state.players[i], 9, width=NAME_W - 4)
        counts_row(draw, y, tuple(str(k) for k in held))
    action_strip(draw, state, chosen)


def counts_row(draw: Any, y: int, cells: tuple[str, ...]) -> None:
    for c, text in enumerate(cells):
        centred(draw, y, text, 9, x0=NAME_W + c * COL_W, width=COL_W)


def action_strip(draw: Any, state: AllWoundUp, chosen: Any) -> None:
    y = 53
    draw.rectangle((0, y, WIDTH - 1, 63), fill=1)
    if chosen is None and state.used is not None:
        text = "done; dial for more"
    elif chosen is None:
        text = "nothing to do"
    else:
        text = f"{short_name(state.players[chosen.player], 4)} {action_label(state, chosen)}"
    size = fitted(text, WIDTH - 4, 9, 8)
    text = clip(text, WIDTH - 4, size)
    l, top, r, _ = font(size).getbbox(text)
    write(draw, ((WIDTH - (r - l)) // 2 - l, y - top), text, size, fill=0)


def draw_ask(draw: Any, state: AllWoundUp) -> None:
    ask = state.ask
    assert ask is not None
    centred(draw, 0, f"{state.players[ask.player]} takes a card", 10)
    centred(draw, 12, f"cards in {state.players[ask.victim]}'s hand?", 9)
    centred(draw, 24, str(ask.hand), 24)
    centred(draw, 53, "dial count, YES picks", 9)


def draw_pick(draw: Any, state: AllWoundUp) -> None:
    pick = state.shown
    assert pick is not None
    centred(draw, 0, f"{state.players[pick.player]}: take card", 10)
    centred(draw, 12, f"#{pick.card}", 24)
    centred(draw, 40, "from the left of", 9)
    centred(draw, 51, f"{state.players[pick.victim]}'s hand ({pick.hand})", 10)


# ---- the round guide ----

def draw_guide(draw: Any, state: AllWoundUp) -> None:
    guide = state.guide
    step = rg.current(guide)
    centred(draw, 0, f"Round {guide.round}  dealer {state.players[guide.dealer]}", 10)
    centred(draw, 15, rg.describe(step, state.players), 18)
    order = [short_name(state.players[i], 4) for i in step.order]
    if step.kind == "deal":
        centred(draw, 38, f"bidder: {state.players[rg.bidder(guide)]}", 10)
    else:
        centred(draw, 38, " > ".join(order), 10)
    hint = "YES next  hold YES: deal" if step.kind == "bid" else "YES next  NO close"
    centred(draw, 54, hint, 9)

