"""The table as the big screen sees it: a JSON-able picture of the engine, built from its report.

`table_view(engine)` reuses the replay report (the one per-game extractor) and adds the few
things a scoreboard needs in one shape for every game: a score per player, whose turn it is,
the decided buzz with `+N ms` margins and the game's own extras (All Wound Up's wind check).
The hub numbers the views (`seq`) and sends only the ones that changed.

For the TV across the room it also says, in words a family uses, what is happening now
(`moment`: the thing drawn large), the counts the OLED shows in its corners (`facts`) and a
short line per player (`players[].note`). The words are the game's own (the board hooks of
core/game.py's `Game`), asked of `engine.rules`, so that every page says the same and a test can
read them without a browser. Pure: no clock, no file, and no game known here.
"""
from __future__ import annotations

from typing import Any

from .colours import DEFAULT_COLOURS
from .menu import CONFIRM, PLAY_AGAIN

VERSION = 2


def table_view(engine: Any) -> dict[str, Any]:
    """Everything the scoreboard shows, from the engine's public view (no seq)."""
    rules = engine.rules
    report = engine.report()
    players = list(report["players"])
    key, label, wins = rules.score(report)
    per_player = report.get(key) if key else None
    turn = rules.board_turn(report)
    lit = engine.lit()
    tunes = tuple(getattr(engine, "tunes", ()) or ())
    colours = tuple(getattr(engine, "colours", ()) or ()) or DEFAULT_COLOURS
    judging = bool(getattr(getattr(engine, "table", None), "judging", False))
    notes = rules.player_notes(report)
    out = rules.players_out(report)
    view: dict[str, Any] = {
        "v": VERSION,
        "game": report["game"],
        "title": rules.title,
        "phase": report["phase"],
        "over": bool(report["over"]),
        "winners": list(report["winners"]),
        "players": [{"name": p, "score": None if per_player is None else per_player.get(p),
                     "lit": i in lit, "turn": p == turn and not report["over"], "n": i + 1,
                     "tune": tunes[i] if i < len(tunes) else "", "note": notes.get(p, ""),
                     "colour": colours[i % len(colours)], "out": p in out}
                    for i, p in enumerate(players)],
        "score_label": label if per_player is not None else "",
        "score_wins": wins if per_player is not None else "",
        "turn": turn,
        "buzz": report["last_buzz"],
        "notice": engine.notice,
        "menu": engine.menu is not None,
        "turn_word": rules.turn_word(report),
        "facts": rules.board_facts(report),
        "moment": screen(engine) or moment(rules, report, judging),
    }
    # For the host's remote: the game's own menu entries (greyed ones too, as on the box), the
    # options it is played with and how many player buttons the box has.
    disabled = rules.menu_disabled(engine.game)
    view["host"] = {"entries": [{"key": k, "label": lbl, "enabled": k not in disabled}
                                for k, lbl in rules.menu_items(engine.game)],
                    "options": dict(getattr(engine, "options", {}) or {}),
                    "seats": int(getattr(engine, "seats", 8)),
                    "undo": len(getattr(engine, "undo_stack", ()) or ())}
    view.update(rules.board_extra(report))
    return view


def numbered(view: dict[str, Any], seq: int) -> dict[str, Any]:
    return {"type": "snapshot", "seq": seq, **view}


# ---- the words for the TV ----

def moment(rules: Any, r: dict[str, Any], judging: bool) -> dict[str, Any]:
    """What is happening now, to be drawn large: `kind` says how (buzz, wind, verdict, beat,
    die, depths, winners, text); `big` is the line to read from the sofa, `small` the one
    under it."""
    if r["over"]:
        names = r["winners"]
        big = " & ".join(names) + (" wins!" if len(names) == 1 else " win!") if names else "Game over"
        return {"kind": "winners", "big": big, "small": rules.winners_phrase(r), "names": names}
    buzz = r.get("last_buzz")
    if judging and buzz is not None and rules.buzz_ask:
        order = buzz["order"]
        return {"kind": "buzz", "big": f"{buzz['winner']} first!",
                "small": "" if len(order) > 1 else "nobody else pressed", "ask": rules.buzz_ask,
                "order": order, "player": buzz["winner"]}
    now = rules.board_moment(r)
    return now if now is not None else text_moment(r["phase"], "")


def screen(engine: Any) -> dict[str, Any] | None:
    """What the OLED shows over the game, as the moment (None: the game's own screen): the
    power-off countdown, the button test, the menu, a text card (rules, token effects, the depth
    board), a question waiting for its second YES, a QR code. A host who opened one from the
    phone sees on the pages what the box shows; the host QR's code and the Wi-Fi password never
    (they are the OLED's alone)."""
    seconds = engine.power_off_in() if hasattr(engine, "power_off_in") else None
    if seconds is not None:
        return text_moment(f"Powering off in {seconds}", "let go of MENU: cancel", title="MENU held")
    menu = engine.menu
    if menu is None:
        return None
    if menu.button_test:
        return text_moment("Button test", "every press shows on the box \u00b7 hold YES or NO: exit",
                           title="Menu")
    if menu.qr == "board":
        return text_moment("Join this board", "scan the QR code on the box \u00b7 NO: back",
                           title="Show on TV / phone", qr="board")
    if menu.qr == "host":
        return text_moment("Host remote", "scan the QR code on the box with the host's phone \u00b7 NO: back",
                           title="Show on TV / phone", qr="host")
    if menu.qr:
        return text_moment("Join the box's Wi-Fi", "scan the QR code on the box \u00b7 YES: then this board",
                           title="Show on TV / phone", qr=menu.qr)
    if menu.card:
        return {"kind": "card", "title": menu.card_title, "big": "", "small": "",
                "lines": list(menu.card), "ask": "NO: back"}
    if menu.confirm:
        question = menu.items[0][1] if menu.items == PLAY_AGAIN else \
            CONFIRM.get(menu.confirm.split(":")[0], "Sure?")
        chosen = dict(menu.items).get(menu.confirm, "")
        return text_moment(question, chosen if chosen != question else "",
                           title="Menu", ask="YES again: yes \u00b7 NO: back")
    return {"kind": "menu", "title": menu.title.title() if menu.title == "MENU" else menu.title,
            "big": "", "small": "", "ask": "Dial: move \u00b7 YES: choose \u00b7 NO: back",
            "items": [{"label": label, "selected": i == menu.cursor, "enabled": key not in menu.disabled}
                      for i, (key, label) in enumerate(menu.items)]}


def text_moment(big: str, small: str, **more: Any) -> dict[str, Any]:
    return {"kind": "text", "big": big, "small": small, **more}


def facts(*pairs: tuple[str, Any]) -> list[dict[str, str]]:
    """The board's `facts` from (label, value) pairs; a pair whose value is None is left out."""
    return [{"label": label, "value": str(value)} for label, value in pairs if value is not None]
