"""The table as the big screen sees it: a JSON-able picture of the engine, built from its report.

`table_view(engine)` reuses the replay report (the one per-game extractor) and adds the few
things a scoreboard needs in one shape for every game: a score per player, whose turn it is,
the decided buzz with `+N ms` margins, the wind check of All Wound Up and the depths of Hold
Your Breath!. The hub numbers the views (`seq`) and sends only the ones that changed.
"""
from __future__ import annotations

from typing import Any

VERSION = 1

# The report key holding each game's per-player standing, and what the page calls it.
SCORE_KEYS: dict[str, tuple[str, str]] = {
    "grab-bag": ("scores", "cards"),
    "hands-up": ("hands", "cards in hand"),
    "all-wound-up": ("brains", "brains"),
    "hold-everything": ("pawns", "space"),
    "hold-your-breath": ("depths", "depth"),
}
TURN_KEYS = ("current", "grab_master", "grabber")


def table_view(engine: Any) -> dict[str, Any]:
    """Everything the scoreboard shows, from the engine's public view (no seq)."""
    report = engine.report()
    name = report["game"]
    players = list(report["players"])
    key, label = SCORE_KEYS.get(name, ("", ""))
    per_player = report.get(key) if key else None
    turn = next((report[k] for k in TURN_KEYS if isinstance(report.get(k), str)), None)
    if name == "all-wound-up":
        check = report.get("check")
        turn = check["player"] if check else report.get("guide", {}).get("bidder")
    lit = engine.lit()
    view: dict[str, Any] = {
        "v": VERSION,
        "game": name,
        "title": engine.rules.title,
        "phase": report["phase"],
        "over": bool(report["over"]),
        "winners": list(report["winners"]),
        "players": [{"name": p, "score": None if per_player is None else per_player.get(p),
                     "lit": i in lit, "turn": p == turn} for i, p in enumerate(players)],
        "score_label": label if per_player is not None else "",
        "turn": turn,
        "buzz": report["last_buzz"],
        "notice": engine.notice,
        "menu": engine.menu is not None,
    }
    if name == "all-wound-up":
        view["wind"] = report.get("check")
        view["guide"] = report.get("guide", {}).get("text")
    if name == "hold-your-breath":
        view["depths"] = report.get("depths")
        view["totals"] = report.get("totals")
    return view


def numbered(view: dict[str, Any], seq: int) -> dict[str, Any]:
    return {"type": "snapshot", "seq": seq, **view}
