"""The state directory's lock: at most one process writes a state directory at a time.

Two writers on one log would interleave their records and resume a score neither showed, so
the writer holds an exclusive `flock` on the directory's `lock` file for as long as it runs,
with its pid in the file for the one who finds it taken. Readers (`status`, the web's history)
never take it.
"""
from __future__ import annotations

import errno
import fcntl
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)
LOCK_NAME = "lock"       # in the state directory: flocked by the one process that writes there


class StateDirBusy(Exception):
    """Another process holds the state directory's lock (its pid, if it wrote one)."""

    def __init__(self, state_dir: Path, pid: int | None) -> None:
        self.state_dir, self.pid = state_dir, pid
        holder = f"pid {pid}" if pid is not None else "another process"
        super().__init__(f"state directory {state_dir} is in use by {holder} "
                         "(another pi-companion run or simulate); not starting a second writer")


def lock_state_dir(state_dir: Path | str) -> int | None:
    """Take the state directory's exclusive lock for as long as the returned descriptor stays
    open, and write our pid into it. Raises StateDirBusy if another process holds it. None (and
    one journal line) if the directory cannot hold a lock file (read-only, forbidden): the box
    plays on, as with a log it cannot write."""
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
