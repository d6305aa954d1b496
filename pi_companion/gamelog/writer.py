"""The game in progress: `current.log`, written by one group-committing thread.

`current.log` holds a header line (game, players, options, seed, and `previous`: the history
number of the game it followed) and then every input the engine acted on, in order, so folding
it again resumes the game exactly. The invariant: the file's durable bytes are always a header
and the records acted on so far, in order, with nothing after them that a resume could read.

Writing: the loop hands each record to `append()`, which returns a sequence number at once; a
writer thread owns the file and makes every record queued meanwhile durable with one write and
one `fdatasync`. The loop calls `wait(seq)` before it shows what a record caused. A write that
fails (disk full, read-only, I/O error) never loses a record the engine acted on: the records
stay in memory, `problem` names the reason (the loop shows it), the writer retries every
`retry_s`, and then truncates the file to its last durable byte and writes the backlog.

Reading: `read()` opens the log for the loop to fold (`reader.Reader`); a log with damage is
resumed up to the damage, and copied aside as `corrupt-*.log` before it is repaired; a log with
no usable header is moved aside whole, never deleted; one in a newer format (format.TooNew)
is not touched at all: `read` raises, and the daemon refuses to start. A new game moves the one before into
`history/`; undo of New game brings it back (`restore`).
"""
from __future__ import annotations

import errno
import logging
import os
import queue
import threading
import time
from pathlib import Path
from typing import Any, Callable

from .durable import atomic_write, copy_synced, reason, sync_dir, write_all, write_synced
from .format import VERSION, Damaged, TooNew, encode
from .evening import end_evening
from .history import History
from .reader import Reader, open_log

log = logging.getLogger(__name__)
RETRY_S = 2.0            # a failed write is retried this often
WAIT_S = 2.0             # a record not durable after this long: the disk is "not responding"


class GameLog:
    """The log of the state directory `state_dir`, keeping the newest `history` finished games."""

    def __init__(self, state_dir: Path | str, history: int = 20, *, retry_s: float = RETRY_S,
                 wait_s: float = WAIT_S, datasync: bool = True) -> None:
        self.dir = Path(state_dir)
        self.history = history
        self.path = self.dir / "current.log"
        self.retry_s = retry_s
        self.wait_s = wait_s
        self.sync = os.fdatasync if datasync and hasattr(os, "fdatasync") else os.fsync
        self.version = VERSION       # the format appended lines are written in
        self.lines = 0               # records handed in this game
        self.syncs = 0               # fsync/fdatasync calls that succeeded
        self.problem: str | None = None
        self.notice: str | None = None   # what the OLED says while `problem` lasts
        self.seq = 0                 # the last record handed to the writer
        self.durable = 0             # every record up to this one is on disk
        self._cond = threading.Condition()  # `durable` and `problem` change under it; waiters wait on it
        # `seq` and `_inbox` change under it: a plain C lock, so that the loop's hand-over costs
        # two lock calls, a list append and a put.
        self._lock = threading.Lock()
        self._bell: "queue.SimpleQueue[None]" = queue.SimpleQueue()   # rung once per hand-over
        self._inbox: list[tuple[str, Any]] = []   # ("line", (record, version)) or (kind, bytes)
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._history = History(self.dir, self.path)
        # Called on the writer thread after `durable` moved on or `problem` was set: the loop's
        # frame waits for that without blocking.
        self.on_settled: Callable[[], None] | None = None
        # The writer thread's own state: the game being written and what is not yet durable.
        self._fd: int | None = None
        self._backlog: list[bytes] = []
        self._on_disk = False        # current.log holds this game's header, durable
        self._archive_first = False  # current.log holds an earlier game: to history/ first
        self._header: dict[str, Any] | None = None   # the new game's header, not yet on disk
        self._linked: int | None = None   # the history number of the game it follows
        # The history number of the game this one followed (its header's `previous`): where
        # undo finds the game before (app.py: `_restore`). Set once the header is on disk.
        self.previous: int | None = None
        self._size = 0               # durable bytes of current.log
        self._dirty = False          # bytes past `_size` may be on disk: truncate before writing
        self._aside: Path | None = None  # copy current.log there before repairing it
        self._next_try = 0.0
        self._reported: str | None = None
        # Called (on the writer's thread) when `notice` appears or clears: the box loop must
        # redraw then, not at its next input, or the OLED says "not saving" long after it saves.
        self.on_notice: Callable[[], None] | None = None

    # ---- reading (the loop thread, before the writer starts) ----

    def read(self) -> Reader | None:
        """The game in progress opened for streaming, or None (none, or moved aside)."""
        try:
            return open_log(self.path)
        except FileNotFoundError:
            return None
        except TooNew:
            raise                    # a newer version's log: refused whole, never moved
        except Damaged as err:
            self.move_aside(f"unusable header: {err}")
            return None
        except (OSError, ValueError) as err:
            log.error("game log: cannot read %s (%s); starting afresh, the file is kept",
                      self.path, reason(err))
            return None

    def load(self) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """The header and every good record as lists (tools and tests; resume streams)."""
        reader = self.read()
        if reader is None:
            return None
        with reader:
            return reader.header, list(reader.records())

    def move_aside(self, why: str) -> Path | None:
        """Keep a log that cannot be resumed as corrupt-*.log (one journal line)."""
        target = self._aside_name()
        try:
            os.replace(self.path, target)
            sync_dir(self.dir)
        except (OSError, ValueError) as err:
            log.error("game log: %s; could not move it aside (%s): it goes to history/ when "
                      "the next game starts", why, reason(err))
            return None
        log.error("game log: %s; moved it to %s and started afresh", why, target)
        return target

    def _aside_name(self) -> Path:
        return self.dir / f"corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{time.monotonic_ns()}.log"

    def resumed(self, reader: Reader) -> None:
        """Carry on writing after the `reader.count` records of `reader` that were folded."""
        self.version = reader.version
        self._on_disk = True
        self._size = reader.good_end
        self._dirty = reader.size != reader.good_end
        if reader.torn and reader.damage is None:
            log.warning("game log: dropped a torn last line (%d bytes)", reader.torn)
        if reader.damage is not None:
            self._aside = self._aside_name()
            log.error("game log: %s; resumed the %d records before it; the damaged log is kept "
                      "as %s", reader.damage, reader.count, self._aside)
        self.lines = reader.count
        previous = reader.header.get("previous")
        self.previous = previous if type(previous) is int else None
        if self._dirty:
            self._put("repair", b"")

    # ---- writing (the loop thread hands over; the writer thread writes) ----

    def start(self, header: dict[str, Any]) -> None:
        """Begin a new game's log (the previous one goes to history first)."""
        self.version = VERSION
        self.lines = 0
        self._put("start", dict(header))

    def append(self, record: dict[str, Any]) -> int:
        """Queue one record (the caller hands it over: it is not changed afterwards); returns its
        sequence number for `wait`. The writer thread encodes it, while the loop waits for the
        next input or the settle window: the loop's turn is shorter by a JSON encoding."""
        self.lines += 1
        return self._put("line", (record, self.version))

    def wait(self, seq: int | None = None, timeout: float | None = None) -> bool:
        """Block until record `seq` (default: the last handed) is durable, `timeout` at most
        (default `wait_s`: then the disk is "not responding"); False at once if the log cannot
        be written now (the box plays on from memory)."""
        target = self.seq if seq is None else seq
        if self.durable >= target:
            return True
        with self._cond:
            self._cond.wait_for(lambda: self.durable >= target or self.problem is not None,
                                self.wait_s if timeout is None else timeout)
            if self.durable >= target:
                return True
            if self.problem is None:
                self._set_problem("disk not responding", None)
            return False

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until everything handed is durable; False if it is not within `timeout`."""
        end = time.monotonic() + timeout
        with self._cond:
            while self.durable < self.seq and time.monotonic() < end:
                self._cond.wait(0.05)
            return self.durable >= self.seq

    def finished(self, over: bool) -> int:
        """The game in progress is over (or, undone, no longer): once everything handed before is
        durable, the writer copies it into history/ under the number it will keep when the next
        game moves it there (or takes that copy away again). So the big screen, which may read
        history/ but not current.log, lists a game at its game over. Counted like a record:
        `wait` for the returned number and the copy is there."""
        return self._put("finished", over)

    def end_evening(self) -> int:
        """The host ended the evening: once every finished game handed before is in history/,
        the writer closes the open evening there (gamelog/evening.py). Counted like a record."""
        return self._put("evening", None)

    def forget(self, name: str) -> str | None:
        """The host removes the finished game `name` (a plain file name in history/) from the
        list: it moves to removed/ (the newest REMOVED_KEEP kept there; moving one back restores
        it). Any thread. None when done, else why not, in one line."""
        return self._history.forget(name)

    def open(self) -> None:
        """Nothing to do: appending opens the file itself."""

    def archive(self) -> None:
        """Move the current log into history/ now (synchronously: no game is being written)."""
        self.close()
        self._history.archive(self.history)

    def close(self) -> None:
        """Write what is queued (if the disk lets us), stop the writer, close the file."""
        thread = self._thread
        if thread is not None:
            self._stopping = True
            self._bell.put(None)
            thread.join(timeout=10)
            self._thread = None
            self._stopping = False
        self._close_fd()

    def _close_fd(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None

    def _put(self, kind: str, data: Any) -> int:
        """Hand the writer one item: a plain lock, a list append and one `SimpleQueue.put` (the
        loop does this for every press; `threading.Condition.notify_all` cost it several times
        that in Python). The item is in `_inbox` before `seq` counts it, so a writer that reads
        `seq` has every item up to it in hand."""
        with self._lock:
            self._inbox.append((kind, data))
            self.seq += 1
            seq = self.seq
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="game-log", daemon=True)
                self._thread.start()
        self._bell.put(None)
        return seq

    def _work_due(self) -> bool:
        """Something for the writer to do now: items handed in (unless a failed write's retry is
        not due yet), or a retry of a backlog, a repair or a header that is due."""
        if self.problem is None:
            return bool(self._inbox)
        if time.monotonic() < self._next_try:
            return False
        return bool(self._inbox or self._backlog or self._dirty or not self._on_disk)

    def _run(self) -> None:
        bell = self._bell
        while True:
            while not self._stopping and not self._work_due():
                timeout = None if self.problem is None else max(0.0, self._next_try - time.monotonic())
                try:
                    bell.get(timeout=timeout)
                except queue.Empty:
                    pass
                while not bell.empty():         # one look serves every ring so far
                    bell.get_nowait()
            stopping = self._stopping
            with self._lock:
                batch, self._inbox = self._inbox, []
                upto = self.seq
            ok = True
            finished: bool | None = None
            evening = False
            for kind, data in batch:
                if kind == "finished":
                    finished = data
                elif kind == "evening":
                    evening = True
                elif kind == "start":
                    finished = None             # the game it was about moved on
                    if (self._backlog or self._header is not None) and ok:
                        ok = self._write()      # the game before gets its last records first
                    self._new_game(data)
                    ok = True
                elif kind == "line":
                    try:
                        self._backlog.append(encode(*data))
                    except (TypeError, ValueError) as err:   # a bug upstream: say so, write on
                        log.error("game log: record not saved, not JSON (%s): %.80r", err, data[0])
            ok = self._write()
            if finished is not None and ok and self._on_disk:
                self._history.copy_finished(finished, self._size, self._atomic)
            if evening:
                log.info("%s", end_evening(self._history, self._atomic))
            cleared = False
            with self._cond:
                if ok:
                    self.durable = max(self.durable, upto)
                    if self.problem is not None:
                        self.problem = self.notice = None
                        log.warning("game log: saving again (%s)", self.path)
                        self._reported = None
                        cleared = True
                else:
                    self._next_try = time.monotonic() + self.retry_s
                self._cond.notify_all()
            if cleared:
                self._notice_changed()
            if self.on_settled is not None:
                self.on_settled()
            if stopping and (not ok or not self._inbox):
                return

    def _new_game(self, header: dict[str, Any]) -> None:
        self._close_fd()
        # A game whose records never reached the disk ends here: the new game is what counts.
        self._backlog = []
        self._header, self._linked = header, None
        self._archive_first = True        # whatever current.log holds goes to history/ first
        self._on_disk = False
        self._dirty = False
        self._aside = None

    def _write(self) -> bool:
        """Make the backlog durable; False (problem set, backlog kept) if the disk refuses."""
        if not self._backlog and not self._dirty and self._aside is None and self._header is None:
            return True
        try:
            if not self._on_disk:
                if self._header is None:
                    return True
                self.dir.mkdir(parents=True, exist_ok=True)
                if self._archive_first:
                    self._linked = self._history.archive(self.history)
                    self._archive_first = False
                # The game it follows, by its number in history/: undo brings it back from there.
                link = {} if self._linked is None else {"previous": self._linked}
                tmp = self.path.with_suffix(".tmp")
                data = b"".join([encode({"v": VERSION, **self._header, **link}), *self._backlog])
                write_synced(tmp, data, 0o644, self.sync)
                self.syncs += 1
                os.replace(tmp, self.path)
                sync_dir(self.dir)
                self._on_disk, self._size = True, len(data)
                self._header, self.previous = None, self._linked
            else:
                if self._aside is not None:
                    copy_synced(self.path, self._aside)
                    self._aside = None
                if self._fd is None:
                    self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
                if self._dirty:
                    os.ftruncate(self._fd, self._size)
                    self._dirty = False
                    if not self._backlog:
                        self.sync(self._fd)
                        self.syncs += 1
                if self._backlog:
                    data = b"".join(self._backlog)
                    self._dirty = True            # until the sync says otherwise
                    write_all(self._fd, data)
                    self.sync(self._fd)
                    self.syncs += 1
                    self._dirty = False
                    self._size += len(data)
            self._backlog = []
            return True
        except (OSError, ValueError) as err:
            if self._on_disk:
                self._dirty = True
            self._set_problem(reason(err), err)
            return False

    def _set_problem(self, why: str, err: BaseException | None) -> None:
        """Called with or without the lock held (Condition is re-entrant)."""
        with self._cond:
            self.problem = why
            changed = self.notice != f"not saving: {why}"
            self.notice = f"not saving: {why}"
            if self._reported != why:
                self._reported = why
                log.error("game log: not saving (%s%s); playing on from memory, retrying every %g s",
                          why, f": {err}" if err is not None and str(err) != why else "", self.retry_s)
            self._cond.notify_all()
        if changed:
            self._notice_changed()

    def _notice_changed(self) -> None:
        if self.on_notice is not None:
            try:
                self.on_notice()
            except Exception:                 # the writer must outlive a bad callback
                log.exception("game log: notice callback failed")

    def _atomic(self, path: Path, data: bytes, mode: int) -> None:
        """`path` holds `data` with exactly `mode`, synced with this log's `sync`."""
        atomic_write(path, data, mode, self.sync)

    # ---- undo of New game: the game before comes back from history/ ----

    def history_file(self, number: int) -> Path | None:
        """The game archived as `number` in history/ (None: not kept, or pruned)."""
        return self._history.file(number)

    def restore(self, source: Path, reader: Reader, records: list[dict[str, Any]]) -> None:
        """Make the archived game `source` the game in progress again: its `reader.good_end`
        good bytes and then `records` (in its own format version) become current.log in one
        atomic rename, and `source` leaves history/. The game being written is dropped (the
        undo that asked for this is its last record). OSError: nothing changed but that the
        writer has written what it had (the box plays on in the game it was in)."""
        self.close()                          # the writer writes what it holds, and stops
        with self._cond:
            if self.problem is not None:
                raise OSError(errno.EIO, f"the log is not being saved ({self.problem})")
        with open(source, "rb") as f:
            data = f.read(reader.good_end)
        data += b"".join(encode(rec, reader.version) for rec in records)
        tmp = self.path.with_suffix(".tmp")
        write_synced(tmp, data, 0o644, self.sync)
        os.replace(tmp, self.path)
        # A power cut here leaves the game in history/ too: `drop_restored_copy` at the next start.
        source.unlink()
        sync_dir(self.dir)
        self.version, self.lines = reader.version, reader.count + len(records)
        self._on_disk, self._size, self._dirty = True, len(data), False
        self._backlog, self._header, self._archive_first, self._aside = [], None, False, None
        previous = reader.header.get("previous")
        self.previous = previous if type(previous) is int else None

    def drop_restored_copy(self) -> Path | None:
        """At start: a power cut between `restore`'s rename and its unlink left the restored
        game's log in history/ as well. The newest history file whose bytes all begin
        current.log is that copy (nothing in it is not in current.log): removed. Its path."""
        return self._history.drop_restored_copy()
