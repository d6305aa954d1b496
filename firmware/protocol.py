"""The wind puck's line protocol, device side: builds report lines and reads host commands.

MicroPython and CPython both run this module (tests/link/test_firmware.py checks it against the
host's twin, pi_companion/link/proto.py, on the same vectors). See PROTOCOL.md.
"""

VERSION = 2
MAX_LINE = 256
HEARTBEAT_MIN_MS = 20
HEARTBEAT_MAX_MS = 60000
TOKEN_MAX = 16

CRC_DIGITS = 4
_CRC_CHAR0 = 0x40      # a CRC nibble n travels as the character 0x40 + n: '@' 'A' .. 'O'
_DIGITS = "0123456789"
_TOKEN_CHARS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-"


def _crc_table():
    table = []
    for byte in range(256):
        c = byte << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        table.append(c & 0xFFFF)
    return tuple(table)


_CRC_TABLE = _crc_table()    # 256 small ints, built once at import


def crc16(body):
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final XOR) of the
    bytes between '$' and '*'. Indexing the table and small-int arithmetic: no allocation."""
    c = 0xFFFF
    for x in body:
        c = ((c << 8) & 0xFF00) ^ _CRC_TABLE[(c >> 8) ^ x]
    return c


def crc_text(value):
    """The CRC as its four line characters, high nibble first: 0x40 + nibble ('@'..'O')."""
    return "%c%c%c%c" % (_CRC_CHAR0 + (value >> 12), _CRC_CHAR0 + ((value >> 8) & 15),
                         _CRC_CHAR0 + ((value >> 4) & 15), _CRC_CHAR0 + (value & 15))


def frame(body):
    """One line: '$' body '*' the body's CRC as 4 characters, newline."""
    return "$%s*%s\n" % (body, crc_text(crc16(body.encode())))


def hello(boot_id, mode, heartbeat_ms):
    return frame("HELLO,%d,%s,%s,%d" % (VERSION, boot_id, mode, heartbeat_ms))


def counts(seq, boot_id, net, forward, backward, invalid, a, b, since_edge_ms, uptime_ms):
    return frame("CNT,%d,%s,%d,%d,%d,%d,%d,%d,%d,%d" % (
        seq, boot_id, net, forward, backward, invalid, a, b, since_edge_ms, uptime_ms))


def pong(token, uptime_ms):
    return frame("PONG,%s,%d" % (token, uptime_ms))


def config(key, value):
    return frame("CFG,%s,%d" % (key, value))


def error(code, detail=""):
    return frame("ERR,%s,%s" % (code, detail))


def is_token(text):
    """A boot id, ping token or error detail: up to 16 of [A-Za-z0-9_-]."""
    if len(text) > TOKEN_MAX:
        return False
    for ch in text:
        if ch not in _TOKEN_CHARS:
            return False
    return True


def _printable(data):
    for x in data:
        if x < 32 or x > 126:
            return False
    return True


def _int(text):
    """A decimal integer (optional '-', 1 to 9 digits), else None."""
    digits = text[1:] if text[:1] == "-" else text
    if not 0 < len(digits) < 10:
        return None
    for ch in digits:
        if ch not in _DIGITS:
            return None
    return int(text)


def _checksum_ok(body, digits):
    if len(digits) != CRC_DIGITS:
        return False
    value = 0
    for x in digits:
        if x < _CRC_CHAR0 or x > _CRC_CHAR0 + 15:
            return False
        value = (value << 4) | (x - _CRC_CHAR0)
    return value == crc16(body)


def parse_command(line):
    """One line from the host (bytes, no newline) -> a command tuple, or None to ignore it.

    ('INFO',) | ('PING', token) | ('CFG', 'HEARTBEAT', ms) | ('ERR', code, detail).
    The checksum is optional (a person may type '$INFO'); when present it must match.
    """
    start = line.rfind(b"$")
    if start < 0:
        return None
    body = line[start + 1:]
    star = body.find(b"*")
    if star >= 0:
        if not _checksum_ok(body[:star], body[star + 1:]):
            return ("ERR", "CHECKSUM", "")
        body = body[:star]
    if not _printable(body):
        return ("ERR", "SYNTAX", "")
    fields = body.decode().split(",")
    return _command(fields[0].upper(), fields[1:])


def _command(name, args):
    if name == "INFO" and not args:
        return ("INFO",)
    if name == "PING" and len(args) < 2:
        token = args[0] if args else ""
        return ("PING", token) if is_token(token) else ("ERR", "TOKEN", "")
    if name == "CFG":
        return _config(args)
    if name in ("INFO", "PING"):
        return ("ERR", "SYNTAX", name)
    return ("ERR", "UNKNOWN", name[:TOKEN_MAX] if is_token(name[:TOKEN_MAX]) else "")


def _config(args):
    if len(args) != 2 or args[0].upper() != "HEARTBEAT":
        return ("ERR", "CONFIG", "")
    ms = _int(args[1])
    if ms is None or not HEARTBEAT_MIN_MS <= ms <= HEARTBEAT_MAX_MS:
        return ("ERR", "RANGE", "HEARTBEAT")
    return ("CFG", "HEARTBEAT", ms)


class CommandReader:
    """Collects input bytes into lines (CR or LF ends one) and parses each into a command.

    The buffer is preallocated; a line longer than MAX_LINE is dropped whole and answered
    with ('ERR', 'TOOLONG', '').
    """

    def __init__(self):
        self.buf = bytearray(MAX_LINE)
        self.n = 0
        self.overflow = False

    def feed(self, byte):
        """Take one byte (an int); return a command tuple when a line completes, else None."""
        if byte == 10 or byte == 13:
            return self._end()
        if self.n >= MAX_LINE:
            self.overflow = True
        else:
            self.buf[self.n] = byte
            self.n += 1
        return None

    def _end(self):
        n = self.n
        self.n = 0
        if self.overflow:
            self.overflow = False
            return ("ERR", "TOOLONG", "")
        if n == 0:
            return None
        return parse_command(bytes(self.buf[:n]))
