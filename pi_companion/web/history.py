"""/history: the games in the state directory's history/, read only, folded back into reports.

A game is there from its game over (the daemon copies it in then: gamelog.GameLog.finished) and
stays under that name when the next game moves the log itself there. Per player, across every
game kept: games played and won, buzzes won (pressed first, judged or not) and the median
margin of those buzzes over the next press (a buzz nobody else pressed in has no margin)."""
from __future__ import annotations

import html
import statistics
import time
from pathlib import Path
from typing import Any, Iterable

from ..core.records import from_record
from ..core.snapshot import table_view
from ..gamelog import history_files, open_log
from ..games import registry

_CACHE: dict[tuple[str, int, int], dict[str, Any] | None] = {}


def game_summary(path: Path) -> dict[str, Any] | None:
    """Game, date, players, winners, scores and buzzes of one logged game (None if unreadable)."""
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key in _CACHE:
        return _CACHE[key]
    summary: dict[str, Any] | None
    try:
        with open_log(path) as reader:         # the game log's own reader: checksums, v1 and v2
            header = reader.header
            engine = registry.engine_for(header)
            finished = None                # the table when the game ended (before any "new game")
            buzzes: dict[tuple[int, float], tuple[str, float | None]] = {}
            at_end: dict[tuple[int, float], tuple[str, float | None]] = {}
            for rec in reader.records():
                event = from_record(rec)
                engine.advance(event) if isinstance(event, float) else engine.feed(event)
                buzz = engine.table.last_buzz
                if buzz is not None:       # each decided buzz once, with the presses after it
                    order = buzz.ordered()
                    buzzes[(buzz.winner, buzz.winner_t)] = (engine.players[buzz.winner],
                                                            order[1][1] if len(order) > 1 else None)
                if engine.rules.is_over(engine.game):
                    finished, at_end = table_view(engine), dict(buzzes)
        view = finished or table_view(engine)
        summary = {"file": path.name, "game": view["title"],
                   "date": time.strftime("%Y-%m-%d %H:%M", time.localtime(stat.st_mtime)),
                   "over": view["over"], "winners": view["winners"], "score_label": view["score_label"],
                   "score_wins": view.get("score_wins", ""),
                   "players": [(p["name"], p["score"]) for p in view["players"]],
                   "buzzes": list((at_end if finished else buzzes).values())}
    except Exception:                          # a log we cannot fold is skipped, never fatal
        summary = None
    if len(_CACHE) > 4096:
        _CACHE.clear()
    _CACHE[key] = summary
    return summary


def finished(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """The summaries of the games among `paths` that are over, in the order given; a file
    removed meanwhile or one that does not fold is left out."""
    out = []
    for path in paths:
        try:
            summary = game_summary(path)
        except OSError:                        # removed meanwhile
            continue
        if summary is not None and summary["over"]:
            out.append(summary)
    return out


def history(state_dir: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The finished games, newest first, and per player: games played and won, buzzes won and
    the median margin of those buzzes (ms, None without one)."""
    games = finished(reversed(history_files(state_dir / "history")))
    totals: dict[str, dict[str, Any]] = {}
    margins: dict[str, list[float]] = {}
    for g in games:
        for name, _ in g["players"]:
            row = totals.setdefault(name, {"played": 0, "won": 0, "buzzes": 0, "margin_ms": None})
            row["played"] += 1
            row["won"] += name in g["winners"]
        for name, margin in g.get("buzzes", ()):
            if name in totals:
                totals[name]["buzzes"] += 1
                if margin is not None:
                    margins.setdefault(name, []).append(margin)
    for name, values in margins.items():
        totals[name]["margin_ms"] = statistics.median(values)
    return games, totals


def margin_text(ms: float | None) -> str:
    return "-" if ms is None else f"{ms:.1f} ms"


WINS = {"high": "most wins", "low": "fewest wins"}


def score_words(game: dict[str, Any]) -> str:
    """What a game's numbers are, said beside them: they mean something different in each game
    (cards won, a pawn's space, cards still in hand) and lower is better in some."""
    label = game.get("score_label") or ""
    if not label:
        return ""
    wins = WINS.get(game.get("score_wins") or "", "does not decide")
    return f"{label} ({wins})"


def history_page(state_dir: Path, evenings: str = "") -> str:
    """The page; `evenings`: the evenings' section (web/evening.py), above the games."""
    games, totals = history(state_dir)
    e = html.escape
    rows = []
    for g in games:
        scores = ", ".join(f"{e(n)} {e(str(s))}" if s is not None else e(n) for n, s in g["players"])
        winners = ", ".join(e(w) for w in g["winners"]) or "-"
        words = score_words(g)
        if words and any(s is not None for _, s in g["players"]):
            scores = f'<span class="what">{e(words)}:</span> {scores}'
        rows.append(f'<tr data-file="{e(g["file"])}"><td>{e(g["date"])}</td><td>{e(g["game"])}</td>'
                    f"<td>{scores}</td><td>&#9733; {winners}</td>"
                    f'<td class="remove"><button type="button" class="remove" hidden>Remove</button></td></tr>')
    total_rows = [f"<tr><td>{e(n)}</td><td>{t['played']}</td><td>{t['won']}</td><td>{t['buzzes']}</td>"
                  f"<td>{margin_text(t['margin_ms'])}</td></tr>"
                  for n, t in sorted(totals.items(), key=lambda kv: (-kv[1]["won"], -kv[1]["buzzes"], kv[0]))]
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>History</title>
<link rel="stylesheet" href="/static/style.css"><script src="/static/history.js" defer></script></head>
<body class="history">
<h1>Finished games</h1><p><a href="/">Scoreboard</a> &middot; <a href="/host">Host remote</a></p><p id="removal" class="result" role="status"></p>
<div id="history-body">
{evenings}
<h2>Per player</h2><table id="totals"><tr><th>Player</th><th>Games</th><th>Won</th><th>Buzzes won</th>
<th>Median margin</th></tr>{''.join(total_rows)}</table>
<h2>Games</h2><table id="games"><tr><th>When</th><th>Game</th><th>Scores</th><th>Winners</th><th></th></tr>{''.join(rows)}</table>
{'' if games else '<p>No finished games yet.</p>'}</div></body></html>"""
