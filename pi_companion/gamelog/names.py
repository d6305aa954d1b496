"""Tonight's names on the box's disk: `names.json` in the state directory, one JSON list.

The game log's header carries the list a game started with and its renames grow it, so a
resumed game needs no file; this file seeds a game that starts with no log to resume from (a
fresh state directory, a log moved aside) and outlives any one game. It is written whole and
synced before it is renamed into place: a power cut leaves the old list or the new one. A file
that cannot be read, or is not a list, is an empty list (one journal line); bad names in it
are dropped by the list's own rule (core/namelist.py).
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from ..core.namelist import grown
from .durable import atomic_write, reason

log = logging.getLogger(__name__)
NAMES_FILE = "names.json"
NAMES_MODE = 0o600


def load_names(state_dir: Path) -> tuple[str, ...]:
    """The names kept in `state_dir` (empty if none, or unreadable)."""
    path = Path(state_dir) / NAMES_FILE
    try:
        names = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ()
    except (OSError, ValueError) as err:
        log.warning("tonight's names: cannot read %s (%s): starting an empty list", path, err)
        return ()
    if not isinstance(names, list):
        log.warning("tonight's names: %s is not a list: starting an empty list", path)
        return ()
    return grown((), names)


def save_names(state_dir: Path, names: tuple[str, ...]) -> bool:
    """Keep `names` in `state_dir` (durable when it returns True); False, with one journal
    line, when the disk refuses (the box plays on: the game log still has them)."""
    try:
        atomic_write(Path(state_dir) / NAMES_FILE, json.dumps(list(names)).encode() + b"\n",
                     NAMES_MODE, os.fsync)
    except OSError as err:
        log.warning("tonight's names: not saved (%s)", reason(err))
        return False
    return True
