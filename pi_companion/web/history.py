"""/history: the games in the state directory's history/, read only, folded back into reports."""
from __future__ import annotations

import html
import time
from pathlib import Path
from typing import Any

from ..core.records import from_record, header_seats
from ..core.snapshot import table_view
from ..games import registry
from ..store import history_files, open_log

_CACHE: dict[tuple[str, float], dict[str, Any] | None] = {}


def game_summary(path: Path) -> dict[str, Any] | None:
    """Game, date, players, winners and scores of one logged game (None if unreadable)."""
    key = (str(path), path.stat().st_mtime)
    if key in _CACHE:
        return _CACHE[key]
    summary: dict[str, Any] | None
    try:
        with open_log(path) as reader:         # the store's own reader: checksums, v1 and v2
            header = reader.header
            engine = registry.new_engine(header["game"], tuple(header["players"]),
                                         header["options"], int(header["seed"]), seats=header_seats(header))
            finished = None                # the table when the game ended (before any "new game")
            for rec in reader.records():
                event = from_record(rec)
                engine.advance(event) if isinstance(event, float) else engine.feed(event)
                if engine.rules.is_over(engine.game):
                    finished = table_view(engine)
        view = finished or table_view(engine)
        summary = {"game": view["title"], "date": time.strftime("%Y-%m-%d %H:%M",
                                                                time.localtime(path.stat().st_mtime)),
                   "over": view["over"], "winners": view["winners"], "score_label": view["score_label"],
                   "players": [(p["name"], p["score"]) for p in view["players"]]}
    except Exception:                          # a log we cannot fold is skipped, never fatal
        summary = None
    _CACHE[key] = summary
    return summary


def history(state_dir: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, int]]]:
    """The finished games, newest first, and per player: games played and games won."""
    folder = state_dir / "history"
    games = []
    for path in reversed(history_files(folder)):
        summary = game_summary(path)
        if summary is not None and summary["over"]:
            games.append(summary)
    totals: dict[str, dict[str, int]] = {}
    for g in games:
        for name, _ in g["players"]:
            row = totals.setdefault(name, {"played": 0, "won": 0})
            row["played"] += 1
            row["won"] += name in g["winners"]
    return games, totals


def history_page(state_dir: Path) -> str:
    games, totals = history(state_dir)
    e = html.escape
    rows = []
    for g in games:
        scores = ", ".join(f"{e(n)} {e(str(s))}" if s is not None else e(n) for n, s in g["players"])
        winners = ", ".join(e(w) for w in g["winners"]) or "-"
        rows.append(f"<tr><td>{e(g['date'])}</td><td>{e(g['game'])}</td><td>{scores}</td>"
                    f"<td>&#9733; {winners}</td></tr>")
    total_rows = [f"<tr><td>{e(n)}</td><td>{t['played']}</td><td>{t['won']}</td></tr>"
                  for n, t in sorted(totals.items(), key=lambda kv: (-kv[1]["won"], kv[0]))]
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>History</title>
<link rel="stylesheet" href="/static/style.css"></head><body class="history">
<h1>Finished games</h1><p><a href="/">Scoreboard</a></p>
<h2>Per player</h2><table><tr><th>Player</th><th>Games</th><th>Won</th></tr>{''.join(total_rows)}</table>
<h2>Games</h2><table><tr><th>When</th><th>Game</th><th>Scores</th><th>Winners</th></tr>{''.join(rows)}</table>
{'' if games else '<p>No finished games yet.</p>'}</body></html>"""
