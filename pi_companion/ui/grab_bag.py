"""Grab Bag screens: searching (Grab Master or target), a buzz with the runner-up's margin, winners."""
from __future__ import annotations

from typing import Any

from .canvas import centred, distinct, left, right, short_name, text_width


def scores_line(draw: Any, players: tuple[str, ...], scores: tuple[int, ...], y: int) -> None:
    cell = 128 // len(players)
    names = distinct(players, short_name, lambda short: text_width(short, 10) <= text_width("WWW", 10))
    for i, (name, score) in enumerate(zip(names, scores)):
        centred(draw, y, f"{name} {score}", 10, x0=i * cell, width=cell)


def draw(draw: Any, view: Any) -> None:
    state = view.game
    players = view.players
    if state.phase == "over":
        tops = view.report()["winners"]
        centred(draw, 0, "WINNER" if len(tops) == 1 else "WINNERS", 11)
        centred(draw, 14, " & ".join(tops), 22)
        scores_line(draw, players, state.scores, 46)
        return
    left(draw, 0, 0, f"Round {state.round}", 10)
    right(draw, 127, 0, f"deck {state.deck}", 10)
    if state.phase == "judging" and view.table.last_buzz is not None:
        buzz = view.table.last_buzz
        centred(draw, 12, f"{players[buzz.winner].upper()}!", 24)
        order = buzz.ordered()
        if len(order) > 1:
            runner, ms = order[1]
            centred(draw, 38, f"{short_name(players[runner], 6)} +{ms:.0f} ms" if ms >= 1
                    else f"{short_name(players[runner], 6)} +{ms:.2f} ms", 11)
        else:
            centred(draw, 38, "YES or NO?", 11)
    elif state.grab_master is None:
        centred(draw, 12, "find the", 10)
        centred(draw, 22, (state.target or "?").upper(), 20)
    else:
        centred(draw, 12, "Grab Master", 10)
        centred(draw, 22, players[state.grab_master], 20)
    scores_line(draw, players, state.scores, 53)
