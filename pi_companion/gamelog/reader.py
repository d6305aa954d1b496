"""Reading a log: its header, then its records one at a time, stopping at the first damage.

The reader only reads: it never repairs, moves or truncates a file (the writer does that for
the game in progress). What it yields is the log's valid prefix, and after iterating it says
exactly where that prefix ends and why: a torn last line (power cut mid-write) is dropped and
counted, a damaged line (checksum, JSON, shape, length) ends the prefix. Whatever the log's
length, it holds one chunk at a time, and where a chunk ends never changes what it yields.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from .format import MAX_LINE, Damaged, decode, decode_header

CHUNK = 1 << 16          # bytes read at a time when streaming a log


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
        as the check itself."""
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
        header, version = decode_header(first)
    except BaseException:
        f.close()
        raise
    return Reader(path, f, header, version, len(first))
