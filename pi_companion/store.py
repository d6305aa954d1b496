"""The durable game log: one checksummed JSON line per input, written by one group-committing thread.

`current.log` holds the game in progress: a header line (game, players, options, seed) and
then every input the engine acted on, in order, so folding it again resumes the game exactly.
Format v2 ends every line with a space and the CRC-32 of its JSON as 8 hex digits; v1 (the
format before checksums) is still read, and a v1 game in progress carries on in v1.

Writing: the loop hands each record to `append()`, which returns a sequence number at once; a
writer thread owns the file and makes every record queued meanwhile durable with one write and
one `fdatasync`. The loop calls `wait(seq)` before it shows what a record caused. A write that
fails (disk full, read-only, I/O error) never loses a record the engine acted on: the records
stay in memory, `problem` names the reason (the loop shows it), the writer retries every
`retry_s`, and then truncates the file to its last durable byte and writes the backlog, so the
log again holds exactly the records acted on, in order.

Reading: `read()` streams the log (`Reader.records()`), one record at a time; a torn last line
(power cut mid-write) is dropped; a damaged line (checksum, JSON, shape) ends the valid prefix,
which is what resumes; the damaged file is copied aside as `corrupt-*.log` first. A log with
no usable header is moved aside whole, never deleted. Finished games move to `history/`,
numbered in the order they finished, keeping the newest `history` of them.
"""
from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import queue
import shutil
import threading
import time
import zlib
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator

log = logging.getLogger(__name__)
VERSION = 2
READABLE = (1, 2)
RETRY_S = 2.0            # a failed write is retried this often
WAIT_S = 2.0             # a record not durable after this long: the disk is "not responding"
MAX_LINE = 1 << 20       # no record is this long: a longer line is damage, not a record
CHUNK = 1 << 16          # bytes read at a time when streaming a log
HISTORY_DIR_MODE = 0o750    # history/: listed and read by the big screen's user (the group)
HISTORY_FILE_MODE = 0o640   # each finished game in it

REASONS = {errno.ENOSPC: "disk full", errno.EDQUOT: "disk full", errno.EFBIG: "file too big",
           errno.EROFS: "read-only", errno.EACCES: "read-only", errno.EPERM: "read-only",
           errno.EIO: "disk error"}


LOCK_NAME = "lock"       # in the state directory: flocked by the one process that writes there


class StateDirBusy(Exception):
    """Another process holds the state directory's lock (its pid, if it wrote one)."""

    def __init__(self, state_dir: Path, pid: int | None) -> None:
        self.state_dir, self.pid = state_dir, pid
        holder = f"pid {pid}" if pid is not None else "another process"
        super().__init__(f"state directory {state_dir} is in use by {holder} "
                         "(another pi-companion run or simulate); not starting a second writer")


def lock_state_dir(state_dir: Path | str) -> int | None:
    """Take the state directory's exclusive lock (`flock` on its `lock` file) for as long as
    the returned descriptor stays open, and write our pid into it for the one who finds it
    taken. Two writers on one log would interleave their records and resume a score neither
    showed. Raises StateDirBusy if another process holds it. None (and one journal line) if the
    directory cannot hold a lock file (read-only, forbidden): the box plays on, as with a log
    it cannot write. Readers (`status`, the web's history) never take it."""
    folder = Path(state_dir)
    path = folder / LOCK_NAME
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        try:                                        # a read-only directory: lock what is there
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as err:
            log.warning("state directory %s: no lock file (%s): nothing stops a second writer",
                        folder, err.strerror)
            return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
            os.close(fd)
            log.warning("state directory %s: cannot lock (%s)", folder, err.strerror)
            return None
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        os.close(fd)
        raise StateDirBusy(folder, int(text) if text.isdigit() else None) from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError:                                 # read-only: locked, but no pid to tell
        pass
    return fd


def reason(err: BaseException) -> str:
    """A few words for the OLED: why the log cannot be written."""
    if isinstance(err, OSError) and err.errno in REASONS:
        return REASONS[err.errno]
    if isinstance(err, OSError) and err.strerror:
        return err.strerror.lower()
    return type(err).__name__


_dumps = json.JSONEncoder(separators=(",", ":")).encode   # json.dumps(obj, separators=...), built once


def encode(obj: Any, version: int = VERSION) -> bytes:
    payload = _dumps(obj).encode()
    if version == 1:
        return payload + b"\n"
    return payload + b" %08x\n" % zlib.crc32(payload)


class Damaged(ValueError):
    """A line that is not a record this version wrote."""


_decoder = json.JSONDecoder()
_json = _decoder.decode
_scan = _decoder.scan_once          # one JSON value at an index: (value, end); no whitespace skip


def _parse(text: str) -> Any:
    """`json.loads(text)`, quicker for the lines we write (no whitespace to skip around the value)."""
    try:
        value, end = _scan(text, 0)
        if end == len(text):
            return value
    except (StopIteration, ValueError):
        pass
    return _json(text)               # whitespace, or an error: the full decoder says which


def decode(line: bytes, version: int) -> Any:
    """The JSON a line holds (without its newline); Damaged if the checksum or JSON is wrong."""
    if version == 2:
        if len(line) < 10 or line[-9] != 0x20:
            raise Damaged("no checksum")
        payload = line[:-9]
        if b"%08x" % zlib.crc32(payload) != line[-8:]:
            raise Damaged("checksum mismatch")
        line = payload
    try:
        return _parse(line.decode())
    except RecursionError:
        raise Damaged("nested too deeply") from None
    except ValueError as err:        # JSONDecodeError, UnicodeDecodeError, huge integers
        raise Damaged(f"unreadable JSON ({str(err)[:60]})") from None


class Reader:
    """A log opened for resume: `header`, then `records()` one at a time, stopping at damage.

    After iterating: `count` records were good, `good_end` is the byte offset just after the
    last of them, `damage` says why reading stopped early (None: clean end), `torn` is the
    length of a dropped unterminated last line."""

    def __init__(self, path: Path, file: BinaryIO, header: dict[str, Any], version: int,
                 header_end: int) -> None:
        self.path = path
        self.file = file
        self.header = header
        self.version = version
        self.header_end = header_end
        self.good_end = header_end
        self.count = 0
        self.damage: str | None = None
        self.torn = 0
        self.size = os.fstat(file.fileno()).st_size

    def records(self, limit: int | None = None) -> Iterator[dict[str, Any]]:
        """The good records from `good_end` on (at most `limit` counted in all), read in chunks:
        a resume checks and parses a hundred thousand lines, and a `readline` each cost as much
        as the check itself. Holds one chunk at a time, whatever the log's length."""
        f, version = self.file, self.version
        f.seek(self.good_end)
        rest = b""                   # the start of a line whose end is in the next chunk
        while limit is None or self.count < limit:
            if len(rest) >= MAX_LINE:
                self.damage = f"record {self.count + 1}: longer than {MAX_LINE} bytes"
                return
            chunk = f.read(CHUNK)
            if not chunk:
                self.torn = len(rest)            # an unterminated last line (0: none)
                return
            lines = (rest + chunk).split(b"\n") if rest else chunk.split(b"\n")
            rest = lines.pop()
            for line in lines:
                if limit is not None and self.count >= limit:
                    return
                if len(line) >= MAX_LINE:
                    self.damage = f"record {self.count + 1}: longer than {MAX_LINE} bytes"
                    return
                try:
                    record = decode(line, version)
                except Damaged as err:
                    self.damage = f"record {self.count + 1}: {err}"
                    return
                if type(record) is not dict:
                    self.damage = f"record {self.count + 1}: not an object"
                    return
                yield record
                self.count += 1
                self.good_end += len(line) + 1

    def reject(self, why: str) -> None:
        """The record just yielded cannot be folded: the valid prefix ends before it."""
        self.damage = f"record {self.count + 1}: {why}"

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_log(path: Path) -> Reader:
    """A log file opened read-only for streaming (history, tools); Damaged if its header is not
    one. Nothing is repaired or moved: that is `GameLog.read`'s job for the game in progress."""
    f = open(path, "rb")
    try:
        first = f.readline(MAX_LINE)
        header, version = GameLog._header(first)
    except BaseException:
        f.close()
        raise
    return Reader(path, f, header, version, len(first))


REMOVED_DIR = "removed"       # games the host removed from /history: kept here, the newest
REMOVED_KEEP = 20             # REMOVED_KEEP of them (move one back into history/ to restore it)
FINISHED_MARK = "finished"    # which history/ file is the finished current game's copy
HISTORY_PREFIX = "game-"      # history/game-000042-20261201-2130.log: the 42nd game archived


def history_number(path: Path) -> int | None:
    """The sequence number in a history file's name (None: a name from before the numbers)."""
    stem = path.name
    if not stem.startswith(HISTORY_PREFIX):
        return None
    digits = stem[len(HISTORY_PREFIX):].split("-", 1)[0]
    return int(digits) if digits.isascii() and digits.isdigit() else None


def history_files(folder: Path) -> list[Path]:
    """The finished games' logs, oldest first, by the number the box gave each when it archived
    it (one more than the highest there), never by the wall clock in the name: a clock that went
    back must not make the newest games look old. Names from before the numbers (the date
    alone) come first, in their own order."""
    if not folder.is_dir():
        return []

    def key(path: Path) -> tuple[int, int, str]:
        number = history_number(path)
        return (0, 0, path.name) if number is None else (1, number, path.name)
    return sorted(folder.glob("*.log"), key=key)


class GameLog:
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
        self._lock = threading.Lock()       # `seq` and `_inbox` change under it (a C lock: the loop's
                                            # hand-over is two lock calls, a list append and a put)
        self._bell: "queue.SimpleQueue[None]" = queue.SimpleQueue()   # rung once per hand-over
        self._inbox: list[tuple[str, Any]] = []   # ("line", (record, version)) or (kind, bytes)
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._history_lock = threading.Lock()    # history/ changes: the writer's, a removal
        # Called on the writer thread after `durable` moved on or `problem` was set (the loop's
        # frame waits for that without blocking: #27 item 1).
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
        except Damaged as err:
            self.move_aside(f"unusable header: {err}")
            return None
        except (OSError, ValueError) as err:
            log.error("game log: cannot read %s (%s); starting afresh, the file is kept",
                      self.path, reason(err))
            return None

    @staticmethod
    def _header(line: bytes) -> tuple[dict[str, Any], int]:
        if not line.endswith(b"\n"):
            raise Damaged("no complete header line")
        body = line[:-1]
        for version in (2, 1):
            try:
                header = decode(body, version)
            except Damaged:
                continue
            if isinstance(header, dict) and header.get("v") == version:
                return header, version
        raise Damaged("no valid header")

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
            self._sync_dir()
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

    def forget(self, name: str) -> str | None:
        """The host removes the finished game `name` (a plain file name in history/) from the
        list: it moves to removed/ (the newest REMOVED_KEEP kept there; moving one back restores
        it). Any thread. None when done, else why not, in one line."""
        with self._history_lock:
            hist = self.dir / "history"
            source = hist / name
            if "/" in name or not name.endswith(".log") or name.startswith(".") or not source.is_file():
                return "no such game in the history"
            if name == self._copied():
                return "that is the game just played: remove it once the next game has started"
            try:
                removed = self.dir / REMOVED_DIR
                removed.mkdir(mode=0o700, exist_ok=True)
                target, n = removed / name, 1
                while target.exists():
                    n += 1
                    target = removed / f"{name[:-4]}-{n}.log"
                os.replace(source, target)
                for folder in (hist, removed):
                    fd = os.open(folder, os.O_RDONLY)
                    try:
                        os.fsync(fd)
                    finally:
                        os.close(fd)
                kept = sorted(removed.glob("*.log"), key=lambda p: p.stat().st_ctime)
                for old in kept[: max(0, len(kept) - REMOVED_KEEP)]:
                    old.unlink()
            except OSError as err:
                return f"not removed: {reason(err)}"
        log.info("history: %s removed by the host (kept in %s/)", name, REMOVED_DIR)
        return None

    def open(self) -> None:
        """Kept for callers of the old API: appending needs no explicit open."""

    def archive(self) -> None:
        """Move the current log into history/ now (synchronously: no game is being written)."""
        self.close()
        self._archive()

    def close(self) -> None:
        """Write what is queued (if the disk lets us), stop the writer, close the file."""
        thread = self._thread
        if thread is not None:
            self._stopping = True
            self._bell.put(None)
            thread.join(timeout=10)
            self._thread = None
            self._stopping = False
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
            for kind, data in batch:
                if kind == "finished":
                    finished = data
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
                self._finished_copy(finished)
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
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None
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
                    self._linked = self._archive()
                    self._archive_first = False
                # The game it follows, by its number in history/: undo brings it back from there.
                link = {} if self._linked is None else {"previous": self._linked}
                tmp = self.path.with_suffix(".tmp")
                data = b"".join([encode({"v": VERSION, **self._header, **link}), *self._backlog])
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                try:
                    self._write_all(fd, data)
                    self.sync(fd)
                finally:
                    os.close(fd)
                self.syncs += 1
                os.replace(tmp, self.path)
                self._sync_dir()
                self._on_disk, self._size = True, len(data)
                self._header, self.previous = None, self._linked
            else:
                if self._aside is not None:
                    self._copy_aside(self._aside)
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
                    self._write_all(self._fd, data)
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

    @staticmethod
    def _write_all(fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]

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

    def _copy_aside(self, target: Path) -> None:
        shutil.copyfile(self.path, target)
        fd = os.open(target, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _history_dir(self) -> Path:
        hist = self.dir / "history"
        hist.mkdir(exist_ok=True)
        # The big screen runs as its own user in this directory's group: it may list and read
        # history/ (its /history page), nothing else here (current.log, host-token stay 0600).
        os.chmod(hist, HISTORY_DIR_MODE)
        return hist

    def _next_name(self, hist: Path) -> str:
        number = max((history_number(p) or 0 for p in history_files(hist)), default=0) + 1
        return f"{HISTORY_PREFIX}{number:06d}-{time.strftime('%Y%m%d-%H%M%S')}.log"

    def _copied(self) -> str | None:
        """The name in history/ of the copy of the game in current.log made at its game over
        (FINISHED_MARK says it, with that game's header line: another game never matches)."""
        try:
            name, header = (self.dir / FINISHED_MARK).read_bytes().split(b"\n", 1)
            with open(self.path, "rb") as f:
                same = f.readline() == header
        except (OSError, ValueError):
            return None
        text = name.decode(errors="replace")
        return text if same and history_number(Path(text)) is not None and "/" not in text else None

    def _finished_copy(self, over: bool) -> None:
        """At game over: current.log's durable bytes copied into history/ (a new file, synced,
        then renamed into place); when the game is no longer over: that copy removed. A failure
        is one journal line: the game goes to history/ at the next game as before."""
        try:
            with self._history_lock:
                self._copy_finished(over)
        except OSError as err:
            log.warning("game log: the finished game is not in history/ yet (%s); it goes there "
                        "with the next game", reason(err))

    def _copy_finished(self, over: bool) -> None:
        hist = self._history_dir()
        name = self._copied()
        mark = self.dir / FINISHED_MARK
        if not over:
            if name is not None:
                (hist / name).unlink(missing_ok=True)
            mark.unlink(missing_ok=True)
            return
        name = name or self._next_name(hist)
        with open(self.path, "rb") as f:
            header = f.readline()
        self._atomic(mark, name.encode() + b"\n" + header, 0o600)    # the mark first
        with open(self.path, "rb") as f:
            data = f.read(self._size)
        self._atomic(hist / name, data, HISTORY_FILE_MODE)

    def _atomic(self, path: Path, data: bytes, mode: int) -> None:
        tmp = path.with_name("." + path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        try:
            self._write_all(fd, data)
            os.fchmod(fd, mode)
            self.sync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

    def _archive(self) -> int | None:
        """Move current.log into history/; the number it got there (None: there was none)."""
        with self._history_lock:
            return self._move_to_history()

    def _move_to_history(self) -> int | None:
        if not self.path.exists():
            return None
        hist = self._history_dir()
        copied = self._copied()       # finished: it keeps the number its copy has
        name = copied or self._next_name(hist)
        number = history_number(Path(name))
        os.replace(self.path, hist / name)
        (self.dir / FINISHED_MARK).unlink(missing_ok=True)
        self._sync_dir()
        old = history_files(hist)
        for stale in old[: max(0, len(old) - self.history)]:
            stale.unlink()
        for kept in old[max(0, len(old) - self.history):]:
            if kept.stat().st_mode & 0o777 != HISTORY_FILE_MODE:
                os.chmod(kept, HISTORY_FILE_MODE)
        return number

    # ---- undo of New game: the game before comes back from history/ ----

    def history_file(self, number: int) -> Path | None:
        """The game archived as `number` in history/ (None: not kept, or pruned)."""
        found = sorted((self.dir / "history").glob(f"{HISTORY_PREFIX}{number:06d}-*.log"))
        return found[0] if found else None

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
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            self._write_all(fd, data)
            self.sync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
        # A power cut here leaves the game in history/ too: `drop_restored_copy` at the next start.
        source.unlink()
        self._sync_dir()
        self.version, self.lines = reader.version, reader.count + len(records)
        self._on_disk, self._size, self._dirty = True, len(data), False
        self._backlog, self._header, self._archive_first, self._aside = [], None, False, None
        previous = reader.header.get("previous")
        self.previous = previous if type(previous) is int else None

    def drop_restored_copy(self) -> Path | None:
        """At start: a power cut between `restore`'s rename and its unlink left the restored
        game's log in history/ as well. The newest history file whose bytes all begin
        current.log is that copy (nothing in it is not in current.log): removed. Its path."""
        old = history_files(self.dir / "history")
        if not old:
            return None
        newest = old[-1]
        if newest.name == self._copied():     # the finished game's own copy (a prefix too): kept
            return None
        try:
            size = newest.stat().st_size
            with open(newest, "rb") as a, open(self.path, "rb") as b:
                if size == 0 or size > os.fstat(b.fileno()).st_size or a.read() != b.read(size):
                    return None
            newest.unlink()
            self._sync_dir()
        except OSError:
            return None
        log.warning("game log: removed %s, a copy of the game restored by undo", newest.name)
        return newest

    def _sync_dir(self) -> None:
        fd = os.open(self.dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
