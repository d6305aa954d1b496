"""The evening's standings and podium for the big screen, read from history/ only.

The box writes which finished games make each evening (gamelog/evening.py); each game is its
log there, folded back into its result by /history's own reader (`game_summary`, cached by the
file's size and time). /api/evening gives the open evening's standings and the newest ended
evening's (its podium); /history lists every evening kept. A game removed from History, or
pruned from history/ (the config's `history` count), is no longer in its evening's standings.
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from ..core.standings import standings
from ..gamelog import history_files
from ..gamelog.evening import evenings
from ..gamelog.history import history_number
from .history import finished

PLACES = ("1st", "2nd", "3rd")     # words: a TV's browser may have no emoji font


def results(folder: Path, first: int, last: int | None) -> list[dict[str, Any]]:
    """The finished games numbered `first` to `last` (None: no end yet), oldest first."""
    def inside(path: Path) -> bool:
        number = history_number(path)
        return number is not None and number >= first and (last is None or number <= last)
    return finished(p for p in history_files(folder) if inside(p))


def one_evening(folder: Path, span: dict[str, int]) -> dict[str, Any]:
    return {"n": span["n"], "ended": "to" in span,
            **standings(results(folder, span["from"], span.get("to")))}


def evening_view(state_dir: Path) -> dict[str, Any]:
    """{"open": tonight's standings so far, "last": the newest ended evening's or None}."""
    folder = Path(state_dir) / "history"
    current, ended = evenings(folder)
    return {"open": one_evening(folder, current),
            "last": one_evening(folder, ended[-1]) if ended else None}


def evenings_section(state_dir: Path) -> str:
    """The History page's list of evenings, newest first: each one's number, games and podium."""
    folder = Path(state_dir) / "history"
    current, ended = evenings(folder)
    e = html.escape
    rows = []
    for span in [current, *reversed(ended)]:
        view = one_evening(folder, span)
        if not view["games"]:
            continue
        podium = ", ".join(f"{PLACES[r['rank'] - 1]} {e(r['name'])} ({r['wins']})" for r in view["podium"])
        when = "tonight so far" if not view["ended"] else "ended"
        rows.append(f'<tr data-evening="{view["n"]}"><td>Evening {view["n"]} ({when})</td>'
                    f'<td>{view["games"]}</td><td>{podium or "-"}</td></tr>')
    if not rows:
        return ""
    return ('<h2>Evenings</h2><p><a href="/evening">Standings and podium</a></p><table id="evenings">'
            "<tr><th>Evening</th><th>Games</th><th>Podium (wins)</th></tr>" + "".join(rows) + "</table>")
