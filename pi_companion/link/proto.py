"""The wind puck's line protocol, host side: device lines in, messages out; commands built.

Pure (standard library only, no I/O). The wire format is in firmware/PROTOCOL.md; the
device's twin is firmware/protocol.py, and both are tested on the same vectors. Nothing
here raises on what the device sends: bad lines are counted and dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

VERSION = 2
MAX_LINE = 256
CRC_DIGITS = 4        # the CRC-16 as four characters '@'..'O' (0x40 + nibble), high nibble first
HEARTBEAT_MIN_MS = 20
HEARTBEAT_MAX_MS = 60000
TOKEN_MAX = 16

_INT_DIGITS = 18      # uptime and counters grow past 2**30 on a puck left running for weeks
_INT_MAX = 10**_INT_DIGITS - 1
_HEX = frozenset(b"0123456789ABCDEF")
_CRC_CHAR0 = 0x40     # '@'; a nibble n travels as the character 0x40 + n: '@' 'A' .. 'O'
_BODY_BYTES = bytes(x for x in range(32, 127) if x not in b"$*")
_TOKEN_CHARS = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-")


@dataclass(frozen=True)
class Hello:
    """The puck's greeting, at boot and in answer to INFO."""

    version: int
    boot_id: str
    mode: str = "dev"
    heartbeat_ms: int = 250


@dataclass(frozen=True)
class Counts:
    """Absolute counters since the puck booted; since_edge_ms is -1 before the first edge."""

    seq: int
    boot_id: str
    net: int
    forward: int
    backward: int
    invalid: int
    a: int
    b: int
    since_edge_ms: int
    uptime_ms: int


@dataclass(frozen=True)
class Pong:
    token: str
    uptime_ms: int


@dataclass(frozen=True)
class ConfigAck:
    key: str
    value: int


@dataclass(frozen=True)
class DeviceError:
    """The puck refused a command (code: CHECKSUM, SYNTAX, TOKEN, UNKNOWN, CONFIG, ...)."""

    code: str
    detail: str


Message = Hello | Counts | Pong | ConfigAck | DeviceError


# -- framing -------------------------------------------------------------------------------

def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        c = byte << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        table.append(c & 0xFFFF)
    return tuple(table)


_CRC_TABLE = _crc_table()


def crc16(body: bytes) -> int:
    """CRC-16/CCITT-FALSE of the bytes between '$' and '*': polynomial 0x1021, initial value
    0xFFFF, no reflection, no final XOR (check value: crc16(b"123456789") == 0x29B1)."""
    c = 0xFFFF
    for x in body:
        c = ((c << 8) & 0xFF00) ^ _CRC_TABLE[(c >> 8) ^ x]
    return c


def crc_text(value: int) -> bytes:
    """A CRC-16 as its four line characters: 0x40 + each nibble ('@'..'O'), high nibble first.

    Not hex: in a hex letter one flipped bit can change two or three bits of the value
    ('D' <-> 'E' is one bit on the wire, 1101 <-> 1110 in the value), which voids the CRC's
    guarantee; here each character's low four bits are the nibble, so a flipped bit on the
    wire is one flipped bit of the value or a character outside '@'..'O'."""
    return bytes(_CRC_CHAR0 + ((value >> shift) & 0xF) for shift in (12, 8, 4, 0))


def _crc_value(text: bytes) -> int | None:
    value = 0
    for x in text:
        if not _CRC_CHAR0 <= x <= _CRC_CHAR0 + 15:
            return None
        value = (value << 4) | (x - _CRC_CHAR0)
    return value


def xor_checksum(body: bytes) -> int:
    """Protocol version 1's checksum (XOR of the body, NMEA style): only to recognise an
    old puck's lines and tell the user to update its firmware."""
    c = 0
    for x in body:
        c ^= x
    return c


def frame(*fields: str) -> bytes:
    """One line: '$' + comma-joined fields + '*' + the body's CRC (4 characters) + '\\n'."""
    body = ",".join(fields).encode("ascii")
    return b"$%s*%s\n" % (body, crc_text(crc16(body)))


def is_token(text: str) -> bool:
    """Boot ids, ping tokens, modes, error codes: up to 16 of [A-Za-z0-9_-]."""
    return len(text) <= TOKEN_MAX and all(ch in _TOKEN_CHARS for ch in text)


# -- host commands -------------------------------------------------------------------------

def info_command() -> bytes:
    """Ask for a Hello."""
    return frame("INFO")


def ping_command(token: str = "") -> bytes:
    """Ask for a Pong echoing `token`."""
    if not is_token(token):
        raise ValueError(f"ping token must be up to {TOKEN_MAX} of [A-Za-z0-9_-]: {token!r}")
    return frame("PING", token) if token else frame("PING")


def heartbeat_command(ms: int) -> bytes:
    """Set the heartbeat period; the puck answers ConfigAck('HEARTBEAT', ms)."""
    if not HEARTBEAT_MIN_MS <= ms <= HEARTBEAT_MAX_MS:
        raise ValueError(f"heartbeat must be {HEARTBEAT_MIN_MS}..{HEARTBEAT_MAX_MS} ms: {ms}")
    return frame("CFG", "HEARTBEAT", str(ms))


def encode(msg: Message) -> bytes:
    """A device line for `msg` (what the firmware sends; used by tests and fake pucks)."""
    if isinstance(msg, Hello):
        return frame("HELLO", str(msg.version), msg.boot_id, msg.mode, str(msg.heartbeat_ms))
    if isinstance(msg, Counts):
        return frame("CNT", str(msg.seq), msg.boot_id, *(str(v) for v in (
            msg.net, msg.forward, msg.backward, msg.invalid, msg.a, msg.b,
            msg.since_edge_ms, msg.uptime_ms)))
    if isinstance(msg, Pong):
        return frame("PONG", msg.token, str(msg.uptime_ms))
    if isinstance(msg, ConfigAck):
        return frame("CFG", msg.key, str(msg.value))
    return frame("ERR", msg.code, msg.detail)


# -- parsing -------------------------------------------------------------------------------

class _Malformed(Exception):
    """A field did not parse (internal: never leaves this module)."""


def _int(text: str, low: int = -_INT_MAX, high: int = _INT_MAX) -> int:
    digits = text[1:] if text.startswith("-") else text
    if not 0 < len(digits) <= _INT_DIGITS or not digits.isdigit():
        raise _Malformed(text)
    value = int(text)
    if not low <= value <= high:
        raise _Malformed(text)
    return value


def _token(text: str, empty_ok: bool = False) -> str:
    if not is_token(text) or (not text and not empty_ok):
        raise _Malformed(text)
    return text


def _hello(f: list[str]) -> Hello:
    return Hello(_int(f[0], 0), _token(f[1]), _token(f[2]), _int(f[3], 0))


def _counts(f: list[str]) -> Counts:
    seq, boot_id = _int(f[0], 0), _token(f[1])
    net, fwd, bwd, inv = _int(f[2]), _int(f[3], 0), _int(f[4], 0), _int(f[5], 0)
    a, b = _int(f[6], 0, 1), _int(f[7], 0, 1)
    return Counts(seq, boot_id, net, fwd, bwd, inv, a, b, _int(f[8], -1), _int(f[9], 0))


def _pong(f: list[str]) -> Pong:
    return Pong(_token(f[0], empty_ok=True), _int(f[1], 0))


def _config(f: list[str]) -> ConfigAck:
    return ConfigAck(_token(f[0]), _int(f[1]))


def _error(f: list[str]) -> DeviceError:
    return DeviceError(_token(f[0]), _token(f[1], empty_ok=True))


# type -> (minimum field count, decoder); extra trailing fields are ignored (newer firmware).
_DECODERS: dict[str, tuple[int, Callable[[list[str]], Message]]] = {
    "HELLO": (4, _hello),
    "CNT": (10, _counts),
    "PONG": (2, _pong),
    "CFG": (2, _config),
    "ERR": (2, _error),
}


def _v1_frame(line: bytes) -> bool:
    """A whole version-1 frame: '$' body '*' two upper-case hex digits, the XOR matching."""
    if len(line) < 4 or line[-3] != ord("*") or not all(d in _HEX for d in line[-2:]):
        return False
    return int(line[-2:], 16) == xor_checksum(line[1:-3])


def _has_tail(line: bytes) -> bool:
    return (len(line) > CRC_DIGITS and line[-CRC_DIGITS - 1] == ord("*")) or (
        len(line) >= 3 and line[-3] == ord("*"))


def parse_line(line: bytes) -> Message | str:
    """One line (no newline) -> a Message, or the name of the counter it falls under:
    'empty', 'junk', 'truncated', 'bad_checksum', 'malformed', 'unknown' or 'old_version'.

    A frame is the whole line: it starts with its only '$' and ends with '*' and the CRC;
    the body between holds neither '$' nor '*'. So a line merged with another (a lost
    newline) or starting mid-frame is never read as a frame."""
    line = line.rstrip(b"\r")
    if not line.strip():
        return "empty"
    if line[0] != ord("$"):
        return "truncated" if _has_tail(line) else "junk"
    if len(line) <= CRC_DIGITS + 1 or line[-CRC_DIGITS - 1] != ord("*"):
        return "old_version" if _v1_frame(line) else "truncated"
    body = line[1:-CRC_DIGITS - 1]
    if _crc_value(line[-CRC_DIGITS:]) != crc16(body):
        return "bad_checksum"
    return _decode(body)


def _decode(body: bytes) -> Message | str:
    if body.translate(None, _BODY_BYTES):      # anything left is not printable, or '$' or '*'
        return "malformed"
    kind, *fields = body.decode("ascii").split(",")
    if kind not in _DECODERS:
        return "unknown"
    need, decoder = _DECODERS[kind]
    if len(fields) < need:
        return "malformed"
    try:
        return decoder(fields)
    except _Malformed:
        return "malformed"


@dataclass
class LineParser:
    """Bytes chunks in, messages out. Lines longer than MAX_LINE are dropped whole.

    Counters: messages, empty, junk, truncated, bad_checksum, malformed, unknown,
    old_version (a whole frame of protocol version 1: an old puck), too_long.
    A line cut by a disconnect is counted when `finish()` is called.
    """

    messages: int = 0
    empty: int = 0
    junk: int = 0
    truncated: int = 0
    bad_checksum: int = 0
    malformed: int = 0
    unknown: int = 0
    old_version: int = 0
    too_long: int = 0
    _buf: bytearray = field(default_factory=bytearray, repr=False)
    _overflow: bool = field(default=False, repr=False)

    def feed(self, data: bytes | bytearray | memoryview) -> list[Message]:
        """Take a chunk as read from the port; return the messages of the lines it ended."""
        data = bytes(data)
        out: list[Message] = []
        start = 0
        while (nl := data.find(b"\n", start)) >= 0:
            self._append(data[start:nl])
            self._end_line(out)
            start = nl + 1
        self._append(data[start:])
        return out

    def finish(self) -> None:
        """End of stream: a pending partial line counts as truncated (or junk without '$')."""
        if self._overflow:
            self.too_long += 1
        elif self._buf.strip():
            if b"$" in self._buf:
                self.truncated += 1
            else:
                self.junk += 1
        self._buf.clear()
        self._overflow = False

    def stats(self) -> dict[str, int]:
        names = ("messages", "empty", "junk", "truncated", "bad_checksum", "malformed",
                 "unknown", "old_version", "too_long")
        return {name: getattr(self, name) for name in names}

    def _append(self, chunk: bytes) -> None:
        if self._overflow:
            return
        if len(self._buf) + len(chunk) > MAX_LINE:
            self._overflow = True
            self._buf.clear()
            return
        self._buf += chunk

    def _end_line(self, out: list[Message]) -> None:
        if self._overflow:
            self._overflow = False
            self.too_long += 1
            return
        result = parse_line(bytes(self._buf))
        self._buf.clear()
        if isinstance(result, str):
            setattr(self, result, getattr(self, result) + 1)
        else:
            self.messages += 1
            out.append(result)
