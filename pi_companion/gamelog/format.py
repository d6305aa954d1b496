"""The game log's line format: bytes in, records out, touching no file and no clock.

A log is a header line and then one line per record, each the compact JSON of one object. In
format v2 every line ends with a space and the CRC-32 of its JSON as 8 hex digits; v1 (no
checksum) is still read, and a v1 game in progress carries on in v1. `decode` either returns
exactly what `encode` was given or raises `Damaged`: a line it accepts is a line this code wrote.

The version rule (docs/reliability.md): every format, this one and any later, begins its header
line with the bytes `{"v":N` followed by `,` or `}`, N its version in decimal. A reader reads
every version in READABLE; a header that names a later version raises `TooNew`, not `Damaged`:
the log is a newer pi-companion's, whole, and nothing may repair, move or overwrite it.
"""
from __future__ import annotations

import json
import re
import zlib
from typing import Any

VERSION = 2
READABLE = (1, 2)
MAX_LINE = 1 << 20       # no record is this long: a longer line is damage, not a record

_dumps = json.JSONEncoder(separators=(",", ":")).encode   # json.dumps(obj, separators=...), built once


def encode(obj: Any, version: int = VERSION) -> bytes:
    payload = _dumps(obj).encode()
    if version == 1:
        return payload + b"\n"
    return payload + b" %08x\n" % zlib.crc32(payload)


class Damaged(ValueError):
    """A line that is not a record this version wrote."""


class TooNew(ValueError):
    """A log whose header names a format version later than this reader's."""

    def __init__(self, version: int) -> None:
        super().__init__(f"format v{version}, newer than this pi-companion reads "
                         f"(v{READABLE[0]} to v{READABLE[-1]})")
        self.version = version


_VERSION_PREFIX = re.compile(rb'\{"v":([0-9]{1,9})[,}]')


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


def decode_header(line: bytes) -> tuple[dict[str, Any], int]:
    """A log's first line (with its newline): the header object and the format version it is
    written in (its "v", which must match the line's shape); TooNew if it names a later format
    (whatever the rest of the line), else Damaged if it is not a header."""
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
    named = _VERSION_PREFIX.match(line)
    if named is not None and int(named[1]) > VERSION:
        raise TooNew(int(named[1]))
    raise Damaged("no valid header")
