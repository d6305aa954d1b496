"""The table as the big screen sees it: a JSON-able picture of the engine, built from its report.

`table_view(engine)` reuses the replay report (the one per-game extractor) and adds the few
things a scoreboard needs in one shape for every game: a score per player, whose turn it is,
the decided buzz with `+N ms` margins, the wind check of All Wound Up and the depths of Hold
Your Breath!. The hub numbers the views (`seq`) and sends only the ones that changed.

For the TV across the room it also says, in words a family uses, what is happening now
(`moment`: one per game and phase, the thing drawn large), the counts the OLED shows in its
corners (`facts`: round, deck, cards left) and a short line per player (`players[].note`).
The words are made here, from the report, so that every page says the same and a test can read
them without a browser. Pure: no clock, no file; the games are known by name only.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .colours import DEFAULT_COLOURS

VERSION = 2

# The report key holding each game's per-player standing, and what the page calls it.
SCORE_KEYS: dict[str, tuple[str, str]] = {
    "grab-bag": ("scores", "cards"),
    "hands-up": ("hands", "cards in hand"),
    "all-wound-up": ("brains", "brains"),
    "hold-everything": ("pawns", "space"),
    "hold-your-breath": ("depths", "depth"),
}
# Which way a score wins, for the final table's order ("" where the score does not decide).
SCORE_WINS = {"grab-bag": "high", "all-wound-up": "high", "hands-up": "low"}   # quick: set aside
TURN_KEYS = ("current", "grab_master", "grabber")
VERDICT_WORDS = {"exact": "EXACT", "too-few": "TOO FEW", "too-many": "TOO MANY", "void": "NO WIND"}
HANDS_UP_VERDICTS = {"theft": "theft", "false-alarm": "false alarm", "police": "police"}
HOLD_COLOURS = {"stop": "blue", "dice": "green", "start": "grey", "gift": "yellow", "stack": "red"}
QUARTERS = ("", "\u00bc", "\u00bd", "\u00be")


def quarters(steps: int) -> str:
    """Quarter turns as a family says them: 9 -> "2\u00bc", 2 -> "\u00bd", 0 -> "0"."""
    n = abs(steps)
    whole, q = divmod(n, 4)
    return ("\u2212" if steps < 0 else "") + (str(whole) if whole or not q else "") + QUARTERS[q]


def _turns(target: int) -> str:
    """A card's target as said: "1 turn", "3 turns"."""
    return f"{target} turn" if target == 1 else f"{target} turns"


def table_view(engine: Any) -> dict[str, Any]:
    """Everything the scoreboard shows, from the engine's public view (no seq)."""
    report = engine.report()
    name = report["game"]
    players = list(report["players"])
    key, label = SCORE_KEYS.get(name, ("", ""))
    if name == "hands-up" and report.get("mode") == "quick":        # the fewest set aside wins
        key, label = "set_aside", "set aside"
    per_player = report.get(key) if key else None
    turn = next((report[k] for k in TURN_KEYS if isinstance(report.get(k), str)), None)
    if name == "all-wound-up":
        check = report.get("check")
        turn = check["player"] if check else report.get("guide", {}).get("bidder")
    lit = engine.lit()
    tunes = tuple(getattr(engine, "tunes", ()) or ())
    colours = tuple(getattr(engine, "colours", ()) or ()) or DEFAULT_COLOURS
    judging = bool(getattr(getattr(engine, "table", None), "judging", False))
    notes = player_notes(report)
    view: dict[str, Any] = {
        "v": VERSION,
        "game": name,
        "title": engine.rules.title,
        "phase": report["phase"],
        "over": bool(report["over"]),
        "winners": list(report["winners"]),
        "players": [{"name": p, "score": None if per_player is None else per_player.get(p),
                     "lit": i in lit, "turn": p == turn and not report["over"], "n": i + 1,
                     "tune": tunes[i] if i < len(tunes) else "", "note": notes.get(p, ""),
                     "colour": colours[i % len(colours)]}
                    for i, p in enumerate(players)],
        "score_label": label if per_player is not None else "",
        "score_wins": SCORE_WINS.get(name, "") if per_player is not None else "",
        "turn": turn,
        "buzz": report["last_buzz"],
        "notice": engine.notice,
        "menu": engine.menu is not None,
        "turn_word": turn_word(report),
        "facts": facts(report),
        "moment": moment(report, judging),
    }
    # For the host's remote: the game's own menu entries (greyed ones too, as on the box), the
    # options it is played with and how many player buttons the box has.
    disabled = engine.rules.menu_disabled(engine.game)
    view["host"] = {"entries": [{"key": k, "label": lbl, "enabled": k not in disabled}
                                for k, lbl in engine.rules.menu_items(engine.game)],
                    "options": dict(getattr(engine, "options", {}) or {}),
                    "seats": int(getattr(engine, "seats", 8)),
                    "undo": len(getattr(engine, "undo_stack", ()) or ())}
    if name == "all-wound-up":
        view["wind"] = report.get("check")
        view["guide"] = report.get("guide", {}).get("text")
    if name == "hold-your-breath":
        view["depths"] = report.get("depths")
        view["totals"] = report.get("totals")
    return view


def numbered(view: dict[str, Any], seq: int) -> dict[str, Any]:
    return {"type": "snapshot", "seq": seq, **view}


# ---- the words for the TV ----

def facts(r: dict[str, Any]) -> list[dict[str, str]]:
    """The small counts in the OLED's corners, as label/value pairs."""
    game, out = r["game"], []

    def add(label: str, value: Any) -> None:
        if value is not None:
            out.append({"label": label, "value": str(value)})
    if game == "grab-bag":
        add("Round", r.get("round"))
        add("Cards left", r.get("deck"))
    elif game == "hands-up":
        add("Mode", "own pace" if not r.get("beat_ms") else r.get("mode"))
        if r.get("beat_ms"):
            add("Beat", f"{r['beat_ms'] / 1000:g} s")
        if r.get("hands"):
            add("In hands", sum(r["hands"].values()))
    elif game == "all-wound-up":
        guide = r.get("guide") or {}
        add("Round", guide.get("round"))
        add("Dealer", guide.get("dealer"))
        bank = r.get("bank") or {}
        add("Brains in bank", sum(v for v in bank.values() if isinstance(v, int)) if bank else None)
    elif game == "hold-everything":
        add("Turn", r.get("turn"))
        add("Stack", r.get("stack"))
        add("Face up", len(r.get("face_up") or ()))
    elif game == "hold-your-breath":
        phase = r.get("phase", "")
        add("Now", "going down" if phase.startswith("descent") else
            "coming up" if phase.startswith("ascent") else None)
        if phase.endswith("-last"):
            add("Turns left", r.get("last_turns"))
        add("Turn", r.get("turns"))
    return out


def turn_word(r: dict[str, Any]) -> str:
    """What the marked player (`turn`) is doing, in the game's own words."""
    game = r["game"]
    if game == "grab-bag":
        return "Grab Master"
    if game == "hands-up":
        return "grabbed"
    if game == "all-wound-up":
        return "winding" if r.get("check") else "bids next"
    return "their turn"


def player_notes(r: dict[str, Any]) -> dict[str, str]:
    """A short line under a player's name (cards face up, surfaced, tokens...)."""
    game = r["game"]
    if game == "hands-up" and r.get("face_up") is not None:
        return {p: f"{n} face up" + (f", {r['hands'][p]} in hand" if r.get("mode") == "quick" else "")
                for p, n in r["face_up"].items()}
    if game == "hold-your-breath":
        surfaced = set(r.get("surfaced") or ())
        return {p: "surfaced" for p in r["players"] if p in surfaced}
    return {}


def moment(r: dict[str, Any], judging: bool) -> dict[str, Any]:
    """What is happening now, to be drawn large: `kind` says how (buzz, wind, verdict, beat,
    die, depths, winners, text); `big` is the line to read from the sofa, `small` the one
    under it."""
    game, phase = r["game"], r["phase"]
    if r["over"]:
        return winners_moment(r)
    buzz = r.get("last_buzz")
    if judging and buzz is not None and game in ("grab-bag", "hands-up"):
        order = buzz["order"]
        ask = {"grab-bag": "Right card? YES or NO",
               "hands-up": "YES theft \u00b7 NO false alarm \u00b7 hold YES police"}[game]
        return {"kind": "buzz", "big": f"{buzz['winner']} first!",
                "small": "" if len(order) > 1 else "nobody else pressed", "ask": ask,
                "order": order, "player": buzz["winner"]}
    games: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
        "grab-bag": grab_bag_moment, "hands-up": hands_up_moment, "all-wound-up": wound_moment,
        "hold-everything": hold_everything_moment, "hold-your-breath": breath_moment}
    draw = games.get(game)
    return draw(r) if draw is not None else text_moment(phase, "")


def text_moment(big: str, small: str, **more: Any) -> dict[str, Any]:
    return {"kind": "text", "big": big, "small": small, **more}


def winners_moment(r: dict[str, Any]) -> dict[str, Any]:
    names = r["winners"]
    big = " & ".join(names) + (" wins!" if len(names) == 1 else " win!") if names else "Game over"
    small = {"hands-up": "cleared their cards" if r.get("mode") != "quick" else "fewest set aside",
             "all-wound-up": "first across the gate",
             "hold-everything": "holds nothing!",
             "hold-your-breath": "back up from the deep",
             "grab-bag": "most cards"}.get(r["game"], "")
    return {"kind": "winners", "big": big, "small": small, "names": names}


def grab_bag_moment(r: dict[str, Any]) -> dict[str, Any]:
    if r.get("grab_master"):
        return text_moment(r["grab_master"], "is Grab Master: name the card to find",
                           title="Grab Master")
    return text_moment(f"Find the {(r.get('target') or '?').upper()}", "first to press grabs it",
                       title="Search")


def hands_up_moment(r: dict[str, Any]) -> dict[str, Any]:
    last = (r.get("judgements") or [None])[-1]
    small = f"last grab: {last['player']}, {HANDS_UP_VERDICTS.get(last['verdict'], last['verdict'])}" \
        if last else "press your button to grab"
    if not r.get("beat_ms"):
        return text_moment("Press to grab", small, title="Own pace")
    if r.get("beats", 0) == 0:
        return text_moment(f"Deal {r.get('cards')} cards", "the beat starts soon", title="Deal")
    return {"kind": "beat", "big": "Paused" if r.get("paused") else f"Flip {r['beats']}",
            "small": small, "beats": r["beats"], "paused": bool(r.get("paused")),
            "beat_ms": r["beat_ms"]}


def wound_moment(r: dict[str, Any]) -> dict[str, Any]:
    if r.get("claim"):
        return text_moment(f"{r['claim']} crossed the gate?", "YES: wins \u00b7 NO: not yet",
                           title="Gate")
    check = r.get("check")
    if check is not None:
        steps = check["steps"]
        small = ("dial the target, then wind" if check["dial"] else   # the rest: the dial's words
                 "")
        return {"kind": "wind", "big": f"{quarters(steps)} of {check['target']}",
                "small": small, "player": check["player"],
                "words": f"{check['player']}: {quarters(steps)} of {_turns(check['target'])}"}
    attempts = r.get("attempts") or []
    if attempts:                 # held until the next check opens, as the OLED keeps it
        a = attempts[-1]
        return {"kind": "verdict", "big": VERDICT_WORDS.get(a["verdict"], a["verdict"]),
                "small": f"{a['player']}: {quarters(a['steps'])} of {_turns(a['target'])}",
                "verdict": a["verdict"], "player": a["player"]}
    guide = r.get("guide") or {}
    return text_moment(guide.get("text") or "Press your button to wind", "press your button to wind",
                       title="Next")


def hold_everything_moment(r: dict[str, Any]) -> dict[str, Any]:
    who, phase = r.get("current"), r["phase"]
    if r.get("claiming"):
        return text_moment("Who holds nothing?", "press your button \u00b7 NO: back to the game",
                           title="Claim")
    if phase == "setup":
        return text_moment(f"{r.get('showing')}'s objects", ", ".join(r["dealt"].get(r.get("showing"), [])),
                           title="Deal")
    if phase == "rolling":
        return {"kind": "die", "big": f"{who} rolls\u2026", "small": "", "die": None, "player": who}
    if phase == "colour":
        mates = " or ".join(r.get("mates") or ())
        choice = str(r.get("choice"))
        return {"kind": "die", "big": f"{who} rolled {r.get('die')}",
                "small": f"give one to {mates}" if mates else
                f"which card? {choice.upper()} ({HOLD_COLOURS.get(choice, '?')}): YES",
                "die": r.get("die"), "player": who}
    if phase == "stack":
        return text_moment(f"{who} draws {r.get('drawn') or '?'}", "had it? YES / NO", title="Stack")
    return text_moment(f"{who}'s turn", r.get("last_drop") or r.get("last") or "press your button",
                       title="Turn", player=who)


def breath_moment(r: dict[str, Any]) -> dict[str, Any]:
    who, phase = r.get("current"), r["phase"]
    up = phase.startswith("ascent")
    small = (f"swim {r['swim']} ft {'up' if up else 'down'}" if r.get("swim") else
             r.get("last") or ("press to swim up" if up else "press to dive"))
    return {"kind": "depths", "big": f"{who}'s turn", "small": small,
            "depths": r.get("depths") or {}, "anchors": r.get("anchors"),
            "surfaced": list(r.get("surfaced") or ()), "up": up, "player": who}
