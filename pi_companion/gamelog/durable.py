"""Making bytes durable: files written and synced before they are renamed into place, the
directory synced after, and the few words that say why the disk refused.

Every write here either completes (the bytes, and the name they are under where it says so,
survive a power cut) or raises the OSError the system gave; nothing here catches, retries or
logs: the caller decides what a refusal means. `sync` is the caller's (fdatasync or fsync, or a test's stand-in).
"""
from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Callable

Sync = Callable[[int], None]

REASONS = {errno.ENOSPC: "disk full", errno.EDQUOT: "disk full", errno.EFBIG: "file too big",
           errno.EROFS: "read-only", errno.EACCES: "read-only", errno.EPERM: "read-only",
           errno.EIO: "disk error"}


def reason(err: BaseException) -> str:
    """A few words for the OLED: why the log cannot be written."""
    if isinstance(err, OSError) and err.errno in REASONS:
        return REASONS[err.errno]
    if isinstance(err, OSError) and err.strerror:
        return err.strerror.lower()
    return type(err).__name__


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_synced(path: Path, data: bytes, mode: int, sync: Sync, *, exact_mode: bool = False) -> None:
    """`path` created (or emptied) holding `data`, synced before it is closed; its mode is `mode`
    less the umask, or exactly `mode` if `exact_mode`. Its name is not synced: rename it into
    place, then `sync_dir`."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        write_all(fd, data)
        if exact_mode:
            os.fchmod(fd, mode)
        sync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, mode: int, sync: Sync) -> None:
    """`path` holds `data` with exactly `mode`, or keeps what it held: written to a hidden
    temporary beside it, synced, renamed over it, and the directory synced."""
    tmp = path.with_name("." + path.name + ".tmp")
    write_synced(tmp, data, mode, sync, exact_mode=True)
    os.replace(tmp, path)
    sync_dir(path.parent)


def copy_synced(source: Path, target: Path) -> None:
    """A copy of `source` at `target`, its bytes synced (its name is not)."""
    shutil.copyfile(source, target)
    fd = os.open(target, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_dir(folder: Path) -> None:
    """The names in `folder` made durable (after a create, rename or unlink in it)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
