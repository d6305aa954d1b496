"""Finished games: `history/`, numbered in the order they finished, and `removed/`.

Each finished game's log is `history/game-NNNNNN-<date>-<time>.log`, NNNNNN one more than the
highest number there when it arrived; order is by that number, never by the wall clock in the
name. The newest `keep` are kept. A game over is copied there at once (and `FINISHED_MARK`
names the copy, with its header line), and the same name is kept when the next game moves
current.log there. The big screen's user may list and read `history/` (its group), nothing else
in the state directory. Every change to `history/` and `removed/` is made under `History.lock`.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Callable

from .durable import reason, sync_dir

log = logging.getLogger(__name__)
HISTORY_DIR_MODE = 0o750    # history/: listed and read by the big screen's user (the group)
HISTORY_FILE_MODE = 0o640   # each finished game in it
REMOVED_DIR = "removed"       # games the host removed from /history: kept here, the newest
REMOVED_KEEP = 20             # REMOVED_KEEP of them (move one back into history/ to restore it)
FINISHED_MARK = "finished"    # which history/ file is the finished current game's copy
HISTORY_PREFIX = "game-"      # history/game-000042-20261201-2130.log: the 42nd game archived


def history_number(path: Path) -> int | None:
    """The sequence number in a history file's name (None: a name without one, the date alone)."""
    stem = path.name
    if not stem.startswith(HISTORY_PREFIX):
        return None
    digits = stem[len(HISTORY_PREFIX):].split("-", 1)[0]
    return int(digits) if digits.isascii() and digits.isdigit() else None


def history_files(folder: Path) -> list[Path]:
    """The finished games' logs, oldest first, by the number the box gave each when it archived
    it, so that a clock that went back does not make the newest games look old. Names without
    a number (the date alone) come first, in their own order."""
    if not folder.is_dir():
        return []

    def key(path: Path) -> tuple[int, int, str]:
        number = history_number(path)
        return (0, 0, path.name) if number is None else (1, number, path.name)
    return sorted(folder.glob("*.log"), key=key)


class History:
    """The finished games of the state directory `state_dir`, whose game in progress is
    `current`."""

    def __init__(self, state_dir: Path, current: Path) -> None:
        self.state_dir = state_dir
        self.folder = state_dir / "history"
        self.current = current
        self.lock = threading.Lock()

    def _prepared(self) -> Path:
        """history/, made if need be, with the mode that lets the big screen list it."""
        self.folder.mkdir(exist_ok=True)
        os.chmod(self.folder, HISTORY_DIR_MODE)
        return self.folder

    def _next_name(self) -> str:
        number = max((history_number(p) or 0 for p in history_files(self.folder)), default=0) + 1
        return f"{HISTORY_PREFIX}{number:06d}-{time.strftime('%Y%m%d-%H%M%S')}.log"

    def finished_copy(self) -> str | None:
        """The name in history/ of the copy of the game in current.log made at its game over
        (FINISHED_MARK says it, with that game's header line: another game never matches)."""
        try:
            name, header = (self.state_dir / FINISHED_MARK).read_bytes().split(b"\n", 1)
            with open(self.current, "rb") as f:
                same = f.readline() == header
        except (OSError, ValueError):
            return None
        text = name.decode(errors="replace")
        return text if same and history_number(Path(text)) is not None and "/" not in text else None

    def copy_finished(self, over: bool, size: int, write: Callable[[Path, bytes, int], None]) -> None:
        """At game over: current.log's first `size` (durable) bytes written into history/ with
        `write` (path, data, mode: atomically); when the game is no longer over: that copy
        removed. A failure is one journal line: the game goes to history/ with the next game."""
        try:
            with self.lock:
                self._copy_finished(over, size, write)
        except OSError as err:
            log.warning("game log: the finished game is not in history/ yet (%s); it goes there "
                        "with the next game", reason(err))

    def _copy_finished(self, over: bool, size: int, write: Callable[[Path, bytes, int], None]) -> None:
        hist = self._prepared()
        name = self.finished_copy()
        mark = self.state_dir / FINISHED_MARK
        if not over:
            if name is not None:
                (hist / name).unlink(missing_ok=True)
            mark.unlink(missing_ok=True)
            return
        name = name or self._next_name()
        with open(self.current, "rb") as f:
            header = f.readline()
        write(mark, name.encode() + b"\n" + header, 0o600)    # the mark first
        with open(self.current, "rb") as f:
            data = f.read(size)
        write(hist / name, data, HISTORY_FILE_MODE)

    def archive(self, keep: int) -> int | None:
        """Move current.log into history/ (under its finished copy's name if it has one) and
        keep the newest `keep` there; the number it got (None: there was no current.log)."""
        with self.lock:
            if not self.current.exists():
                return None
            hist = self._prepared()
            name = self.finished_copy() or self._next_name()
            number = history_number(Path(name))
            os.replace(self.current, hist / name)
            (self.state_dir / FINISHED_MARK).unlink(missing_ok=True)
            sync_dir(self.state_dir)
            old = history_files(hist)
            for stale in old[: max(0, len(old) - keep)]:
                stale.unlink()
            for kept in old[max(0, len(old) - keep):]:
                if kept.stat().st_mode & 0o777 != HISTORY_FILE_MODE:
                    os.chmod(kept, HISTORY_FILE_MODE)
            return number

    def file(self, number: int) -> Path | None:
        """The game archived as `number` (None: not kept, or pruned)."""
        found = sorted(self.folder.glob(f"{HISTORY_PREFIX}{number:06d}-*.log"))
        return found[0] if found else None

    def drop_restored_copy(self) -> Path | None:
        """The newest history file, removed if all its bytes begin current.log (a game restored
        into current.log whose history/ copy a power cut kept), unless it is the finished
        game's own copy. Its path, or None."""
        old = history_files(self.folder)
        if not old:
            return None
        newest = old[-1]
        if newest.name == self.finished_copy():
            return None
        try:
            size = newest.stat().st_size
            with open(newest, "rb") as a, open(self.current, "rb") as b:
                if size == 0 or size > os.fstat(b.fileno()).st_size or a.read() != b.read(size):
                    return None
            newest.unlink()
            sync_dir(self.state_dir)
        except OSError:
            return None
        log.warning("game log: removed %s, a copy of the game restored by undo", newest.name)
        return newest

    def forget(self, name: str) -> str | None:
        """The finished game `name` (a plain file name in history/) moved to removed/, where the
        newest REMOVED_KEEP are kept (moving one back restores it). None when done, else why
        not, in one line."""
        with self.lock:
            source = self.folder / name
            if "/" in name or not name.endswith(".log") or name.startswith(".") or not source.is_file():
                return "no such game in the history"
            if name == self.finished_copy():
                return "that is the game just played: remove it once the next game has started"
            try:
                removed = self.state_dir / REMOVED_DIR
                removed.mkdir(mode=0o700, exist_ok=True)
                target, n = removed / name, 1
                while target.exists():
                    n += 1
                    target = removed / f"{name[:-4]}-{n}.log"
                os.replace(source, target)
                for folder in (self.folder, removed):
                    sync_dir(folder)
                kept = sorted(removed.glob("*.log"), key=lambda p: p.stat().st_ctime)
                for old in kept[: max(0, len(kept) - REMOVED_KEEP)]:
                    old.unlink()
            except OSError as err:
                return f"not removed: {reason(err)}"
        log.info("history: %s removed by the host (kept in %s/)", name, REMOVED_DIR)
        return None
