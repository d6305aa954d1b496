"""The evenings: which finished games in history/ make up each evening, kept in history/.

An evening is the games that reach their game over from its start to the host's End evening
(docs/rules-interpretations.md). history/ numbers games in the order they finished, so an
evening is a range of those numbers: `evening.json` holds the open one (`n`, its number, and
`from`, the first game number it counts; none yet: evening 1 from game 1), and End evening
writes `evening-NNNNNN.json` (`n`, `from`, `to`: the highest number in history/ then) before it
moves `evening.json` on past it. Both are written whole, synced and renamed into place, so a
power cut keeps each evening as it was; a cut between the two writes is read right (the open
evening starts after the newest ended one whatever `evening.json` says). The files sit in
history/ because the big screen may read only that; what each game was is its log there.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Callable

from .durable import reason
from .history import HISTORY_FILE_MODE, History, history_files, history_number

log = logging.getLogger(__name__)
OPEN_FILE = "evening.json"
ENDED_PREFIX = "evening-"


def _read(path: Path) -> dict[str, int] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not all(isinstance(data.get(k), int) and not isinstance(data.get(k), bool)
                                             for k in ("n", "from")):
        return None
    return data


def evenings(folder: Path) -> tuple[dict[str, int], list[dict[str, int]]]:
    """The open evening ({"n", "from"}) and the ended ones ({"n", "from", "to"}), oldest first.
    Unreadable files are skipped."""
    ended = [e for e in (_read(p) for p in sorted(folder.glob(f"{ENDED_PREFIX}*.json")))
             if e is not None and isinstance(e.get("to"), int)]
    ended.sort(key=lambda e: e["n"])
    start = _read(folder / OPEN_FILE) or {"n": 1, "from": 1}
    if ended:
        start = {"n": max(start["n"], ended[-1]["n"] + 1), "from": max(start["from"], ended[-1]["to"] + 1)}
    return {"n": start["n"], "from": start["from"]}, ended


def end_evening(history: History, write: Callable[[Path, bytes, int], None]) -> str:
    """End the open evening (on the game log's writer thread, after every finished game handed
    before it is in history/): what happened, in a few words for the journal."""
    try:
        with history.lock:
            folder = history.folder
            folder.mkdir(exist_ok=True)
            current, _ = evenings(folder)
            last = max((history_number(p) or 0 for p in history_files(folder)), default=0)
            if last < current["from"]:
                return "evening: no finished game yet, nothing to end"
            body: dict[str, Any] = {**current, "to": last}
            write(folder / f"{ENDED_PREFIX}{current['n']:06d}.json", json.dumps(body).encode() + b"\n",
                  HISTORY_FILE_MODE)
            write(folder / OPEN_FILE, json.dumps({"n": current["n"] + 1, "from": last + 1}).encode() + b"\n",
                  HISTORY_FILE_MODE)
            return f"evening {current['n']} ended: games {current['from']} to {last}"
    except OSError as err:
        log.warning("evening: not ended (%s)", reason(err))
        return "evening: not ended"
