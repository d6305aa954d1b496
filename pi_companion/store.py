"""The durable game log: one JSON line per input, fsynced before its effect is shown.

`current.log` holds the game in progress: a header line (game, players, options, seed) and
then every input the engine acted on, so folding it again resumes the game exactly. A torn
last line (power cut mid-write) is dropped; a log that cannot be read is moved aside, never
deleted. Finished or abandoned games move to `history/`, keeping the newest `history` files.
"""
from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
VERSION = 1


class GameLog:
    def __init__(self, state_dir: Path | str, history: int = 20) -> None:
        self.dir = Path(state_dir)
        self.history = history
        self.path = self.dir / "current.log"
        self.file: Any = None
        self.lines = 0

    # ---- reading ----

    def load(self) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """The header and records of the game in progress, or None if there is none to resume."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        lines = raw.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        elif lines:
            log.warning("game log: dropped a torn last line (%d bytes)", len(lines[-1]))
            lines.pop()
            self._truncate_to(lines)
        try:
            parsed = [json.loads(line) for line in lines]
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            self.move_aside(f"unreadable line: {err}")
            return None
        if not parsed or not isinstance(parsed[0], dict) or parsed[0].get("v") != VERSION:
            self.move_aside("no valid header")
            return None
        return parsed[0], parsed[1:]

    def _truncate_to(self, lines: list[bytes]) -> None:
        size = sum(len(line) + 1 for line in lines)
        with open(self.path, "r+b") as f:
            f.truncate(size)
            f.flush()
            os.fsync(f.fileno())

    def move_aside(self, why: str) -> Path:
        target = self.dir / f"corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
        os.replace(self.path, target)
        self._sync_dir()
        log.error("game log: %s; moved it to %s and started afresh", why, target)
        return target

    # ---- writing ----

    def start(self, header: dict[str, Any]) -> None:
        """Begin a new game's log (the previous one goes to history first)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        self.close()
        if self.path.exists():
            self.archive()
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            f.write(json.dumps({"v": VERSION, **header}, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        self._sync_dir()
        self.open()

    def open(self) -> None:
        """Append to the current log (after a resume)."""
        self.file = open(self.path, "a")
        self.lines = 0

    def append(self, record: dict[str, Any]) -> None:
        """Write one record and make it durable before the caller shows its effect."""
        self.file.write(json.dumps(record, separators=(",", ":")) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())
        self.lines += 1

    def archive(self) -> None:
        """Move the current log into history/ and drop the oldest beyond `history`."""
        self.close()
        if not self.path.exists():
            return
        hist = self.dir / "history"
        hist.mkdir(exist_ok=True)
        os.replace(self.path, hist / f"{time.strftime('%Y%m%d-%H%M%S')}-{time.monotonic_ns()}.log")
        self._sync_dir()
        old = sorted(hist.glob("*.log"))
        for stale in old[: max(0, len(old) - self.history)]:
            stale.unlink()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None

    def _sync_dir(self) -> None:
        fd = os.open(self.dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
