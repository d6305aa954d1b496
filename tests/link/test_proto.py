"""The host side of the puck protocol: framing, parsing, counting and dropping bad lines."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_companion.link import proto
from pi_companion.link.proto import ConfigAck, Counts, DeviceError, Hello, LineParser, Pong

SAMPLES: list[proto.Message] = [
    Hello(2, "3fa2c9d0", "prod", 250),
    Hello(2, "00000000", "dev", 20),
    Counts(0, "3fa2c9d0", 0, 0, 0, 0, 0, 0, -1, 0),
    Counts(17, "3fa2c9d0", -12, 3, 15, 2, 1, 0, 48, 123456),
    Counts(999999999, "a", 999999999, 999999999, 0, 999999999, 1, 1, 999999999, 999999999),
    Counts(2**40, "a", -(2**31), 2**31, 2**31, 0, 1, 1, 2**35, 10**18 - 1),   # weeks of uptime
    Pong("", 5),
    Pong("abc-_9", 0),
    ConfigAck("HEARTBEAT", 100),
    DeviceError("UNKNOWN", "FOO"),
    DeviceError("CHECKSUM", ""),
]


def parse_all(data: bytes) -> tuple[list[proto.Message], LineParser]:
    parser = LineParser()
    return parser.feed(data), parser


def nonzero(parser: LineParser) -> dict[str, int]:
    return {k: v for k, v in parser.stats().items() if v}


# -- round trips ------------------------------------------------------------------------------

@pytest.mark.parametrize("msg", SAMPLES, ids=repr)
def test_round_trip(msg: proto.Message) -> None:
    line = proto.encode(msg)
    assert line.startswith(b"$") and line.endswith(b"\n") and len(line) <= proto.MAX_LINE
    assert proto.parse_line(line[:-1]) == msg
    assert parse_all(line) == ([msg], parse_all(line)[1])


def test_known_line_and_crc() -> None:
    assert proto.crc16(b"123456789") == 0x29B1            # CRC-16/CCITT-FALSE's check value
    assert proto.crc_text(0x29B1) == b"BIKA"              # 0x40 + each nibble, high first
    assert proto.crc16(b"") == 0xFFFF and proto.crc_text(0) == b"@@@@"
    assert proto.encode(Counts(17, "3fa2c9d0", -12, 3, 15, 2, 1, 0, 48, 123456)) == (
        b"$CNT,17,3fa2c9d0,-12,3,15,2,1,0,48,123456*MLIL\n")
    assert proto.crc16(b"INFO") == 0x01C6
    assert proto.info_command() == b"$INFO*@ALF\n"


def crc16_bitwise(data: bytes) -> int:
    """The textbook shift-register form, to check the table-driven one."""
    c = 0xFFFF
    for x in data:
        c ^= x << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) & 0xFFFF if c & 0x8000 else (c << 1) & 0xFFFF
    return c


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_crc_matches_the_shift_register(data: bytes) -> None:
    assert proto.crc16(data) == crc16_bitwise(data)


def test_commands() -> None:
    assert proto.ping_command() == proto.frame("PING")
    assert proto.ping_command("x1") == proto.frame("PING", "x1")
    assert proto.heartbeat_command(100) == proto.frame("CFG", "HEARTBEAT", "100")
    for bad in (19, 60001, -5):
        with pytest.raises(ValueError):
            proto.heartbeat_command(bad)
    for bad_token in ("a,b", "x" * 17, "é", "a*b"):
        with pytest.raises(ValueError):
            proto.ping_command(bad_token)


def test_crlf_and_extra_fields_are_accepted() -> None:
    line = proto.frame("HELLO", "2", "ab", "dev", "250", "future-field")
    msgs, parser = parse_all(line.replace(b"\n", b"\r\n"))
    assert msgs == [Hello(2, "ab", "dev", 250)]
    assert nonzero(parser) == {"messages": 1}


def test_a_frame_is_a_whole_line() -> None:
    """Anything before the '$' or a second '$' (two lines merged) drops the line: a frame
    read from the middle of a line is how flipped bits got through as another message."""
    line = proto.encode(SAMPLES[3])

    def sealed(body: bytes) -> bytes:                  # a CRC that matches, to pass that check
        return b"$" + body + b"*" + proto.crc_text(proto.crc16(body)) + b"\n"
    merged = sealed(line[1:-1] + line[:-6])             # line + line with the newline lost
    doubled = sealed(b"$" + line[1:-6])
    msgs, parser = parse_all(b">>> " + line + merged + doubled + line[:-1] + line + line)
    assert msgs == [SAMPLES[3]]
    assert nonzero(parser) == {"truncated": 1, "malformed": 2, "bad_checksum": 1,
                               "messages": 1}


# -- bad lines ------------------------------------------------------------------------------

REPL = (b"MicroPython v1.27.0 on 2026-01-01; Raspberry Pi Pico with RP2040\r\n"
        b"Type \"help()\" for more information.\r\n>>> \r\n"
        b"Traceback (most recent call last):\r\n  File \"main.py\", line 8, in <module>\r\n"
        b"KeyboardInterrupt: \r\n")


def test_repl_banner_and_traceback_are_junk() -> None:
    good = proto.encode(SAMPLES[3])
    msgs, parser = parse_all(good + REPL + good)
    assert msgs == [SAMPLES[3], SAMPLES[3]]
    assert parser.junk == 6 and parser.empty == 0 and parser.messages == 2


def test_bad_checksum_is_counted_and_dropped() -> None:
    line = proto.encode(SAMPLES[2])
    assert line.endswith(b"*EK@G\n")
    wrong = line[:-2] + b"F\n"
    lower = line[:-5] + b"ek@g\n"                     # the CRC characters are '@'..'O' only
    hexed = line[:-5] + b"%04X\n" % proto.crc16(line[1:-6])
    msgs, parser = parse_all(wrong + lower + hexed + line)
    assert msgs == [SAMPLES[2]]
    assert nonzero(parser) == {"bad_checksum": 3, "messages": 1}


def v1_line(*fields: str) -> bytes:
    """A line of protocol version 1 (XOR checksum), as an old puck sends it."""
    body = ",".join(fields).encode()
    return b"$%s*%02X\n" % (body, proto.xor_checksum(body))


def test_version_1_lines_are_recognised_not_read() -> None:
    old = (v1_line("HELLO", "1", "3fa2c9d0", "prod", "250")
           + v1_line("CNT", "0", "3fa2c9d0", "0", "0", "0", "0", "0", "0", "-1", "12"))
    assert old.startswith(b"$HELLO,1,3fa2c9d0,prod,250*45\n")     # PROTOCOL.md v1 example
    msgs, parser = parse_all(old + old[:-4] + b"00\n")
    assert msgs == []
    assert nonzero(parser) == {"old_version": 3, "truncated": 1}   # a wrong XOR: not a frame


def test_ten_kilobyte_line_is_dropped_and_the_next_one_parsed() -> None:
    good = proto.encode(SAMPLES[0])
    huge = b"$CNT," + b"7," * 5000 + b"*00\n"
    parser = LineParser()
    msgs = []
    for i in range(0, len(huge), 97):                  # arrives in small chunks
        msgs += parser.feed(huge[i:i + 97])
    msgs += parser.feed(good)
    assert msgs == [SAMPLES[0]]
    assert nonzero(parser) == {"too_long": 1, "messages": 1}


def test_line_at_the_cap_is_kept_one_past_is_dropped() -> None:
    exact = b"$" + b"J" * (proto.MAX_LINE - 1)
    _, parser = parse_all(exact + b"\n" + exact + b"J\n")
    assert nonzero(parser) == {"truncated": 1, "too_long": 1}


def test_half_lines() -> None:
    line = proto.encode(SAMPLES[3])
    head, tail = line[:20], line[20:]
    msgs, parser = parse_all(tail + head + b"\n" + line)
    assert msgs == [SAMPLES[3]]
    assert nonzero(parser) == {"truncated": 2, "messages": 1}
    parser.feed(head)
    parser.finish()
    assert parser.truncated == 3
    parser.feed(b"partial junk")
    parser.finish()
    assert parser.junk == 1


def test_malformed_and_unknown() -> None:
    lines = [
        proto.frame("CNT", "1", "ab", "x", "0", "0", "0", "0", "0", "0", "0"),   # not a number
        proto.frame("CNT", "1", "ab", "0", "0", "0", "0", "2", "0", "0", "0"),   # level 2
        proto.frame("CNT", "1", "ab", "0"),                                       # too few
        proto.frame("CNT", "-1", "ab", "0", "0", "0", "0", "0", "0", "0", "0"),  # seq < 0
        proto.frame("HELLO", "1", "", "dev", "250"),                              # empty id
        proto.frame("HELLO", "1", "a b", "dev", "250"),                           # bad id
        proto.frame("PONG", "t", "+5"),
        proto.frame("PONG", "t", "1_0"),
        proto.frame("PONG", "t", "1234567890123456789"),
        b"$HELLO,\xff*%s\n" % proto.crc_text(proto.crc16(b"HELLO,\xff")),
        b"$HELLO,1,a*b,dev,250*%s\n" % proto.crc_text(proto.crc16(b"HELLO,1,a*b,dev,250")),
    ]
    msgs, parser = parse_all(b"".join(lines) + proto.frame("WHAT", "1") + proto.frame(""))
    assert msgs == []
    assert nonzero(parser) == {"malformed": len(lines), "unknown": 2}


def test_chunking_does_not_matter() -> None:
    stream = b"".join(proto.encode(m) for m in SAMPLES) + REPL
    whole, _ = parse_all(stream)
    rng = random.Random(7)
    parser = LineParser()
    pieces: list[proto.Message] = []
    i = 0
    while i < len(stream):
        n = rng.randint(1, 40)
        pieces += parser.feed(memoryview(stream[i:i + n]))
        i += n
    assert pieces == whole == SAMPLES


# -- never raises -----------------------------------------------------------------------------

@settings(max_examples=500, deadline=None)
@given(st.lists(st.binary(max_size=400), max_size=20))
def test_arbitrary_bytes_never_raise(chunks: list[bytes]) -> None:
    parser = LineParser()
    for chunk in chunks:
        for msg in parser.feed(chunk):
            assert isinstance(msg, (Hello, Counts, Pong, ConfigAck, DeviceError))
    parser.finish()
    lines = b"".join(chunks).count(b"\n")
    assert sum(parser.stats().values()) >= lines


frame_bytes = st.lists(st.sampled_from(list(b"$*,\r\n-0123456789ABCFHLNTabc ")), max_size=80)


@settings(max_examples=500, deadline=None)
@given(st.lists(frame_bytes.map(bytes), max_size=10))
def test_frame_like_bytes_never_raise(chunks: list[bytes]) -> None:
    parser = LineParser()
    for chunk in chunks:
        parser.feed(chunk)
    parser.finish()


def mutate(line: bytes, rng: random.Random) -> tuple[bytes, int, int]:
    """One byte of the line (not its newline) changed; returns (line, index, new byte)."""
    i = rng.randrange(len(line) - 1)
    new = rng.choice([b for b in range(256) if b != line[i]])
    return line[:i] + bytes([new]) + line[i + 1:], i, new


def random_message(rng: random.Random) -> proto.Message:
    boot = "%08x" % rng.getrandbits(32)
    n = rng.randint
    choices: list[proto.Message] = [
        Counts(n(0, 10**6), boot, n(-10**5, 10**5), n(0, 10**5), n(0, 10**5), n(0, 99),
               n(0, 1), n(0, 1), n(-1, 10**6), n(0, 10**8)),
        Hello(2, boot, rng.choice(["dev", "prod"]), n(20, 60000)),
        Pong(rng.choice(["", "p1", "zz"]), n(0, 10**6)),
    ]
    return rng.choice(choices)


def test_100k_random_and_mutated_lines() -> None:
    """Valid lines, single-byte mutations, junk, cut lines and over-long lines, shuffled:
    no exception, every good line parsed, nothing corrupt accepted, every line counted."""
    rng = random.Random(20261101)
    parser = LineParser()
    sent: list[proto.Message] = []
    got: list[proto.Message] = []
    lines = 0
    plain_mutations = 0
    for _ in range(100_000):
        msg = random_message(rng)
        line = proto.encode(msg)
        kind = rng.random()
        if kind < 0.4:
            sent.append(msg)
        elif kind < 0.7:
            line, i, new = mutate(line, rng)
            framing = new in b"$*\n\r" or i == 0 or i >= len(line) - 6
            plain_mutations += not framing
        elif kind < 0.8:
            line = bytes(rng.choice(b"abc XYZ>.:()\"'") for _ in range(rng.randint(1, 60))) + b"\n"
        elif kind < 0.9:
            line = line[:rng.randint(1, len(line) - 2)] + b"\n"
        else:
            line = b"$" + b"9" * rng.randint(proto.MAX_LINE, 3000) + b"\n"
        lines += line.count(b"\n")
        got += parser.feed(line)
    parser.finish()
    stats = parser.stats()
    assert got == sent
    assert stats["messages"] == len(sent)
    assert sum(stats.values()) == lines
    assert stats["bad_checksum"] >= plain_mutations
    assert stats["too_long"] > 9000 and stats["junk"] > 9000 and stats["truncated"] > 9000


# -- flipped bits (issue 12.7) -----------------------------------------------------------------

FLIP_TRIALS = 100_000


def flip_bits(line: bytes, rng: random.Random) -> bytes:
    """1 to 3 distinct bits of the line flipped anywhere, its newline included."""
    data = bytearray(line)
    for bit in rng.sample(range(8 * len(data)), rng.randint(1, 3)):
        data[bit >> 3] ^= 1 << (bit & 7)
    return bytes(data)


def test_no_frame_with_1_to_3_flipped_bits_is_accepted_as_another_message() -> None:
    """10^5 frames, each with 1-3 flipped bits and followed by a good frame (so a flipped
    newline merges two lines): every message read is one of the two that were sent."""
    rng = random.Random(12_7)
    pool = [random_message(rng) for _ in range(500)]
    pool += [ConfigAck("HEARTBEAT", rng.randint(20, 60000)) for _ in range(20)]
    pool += [DeviceError(rng.choice(["UNKNOWN", "SYNTAX", "TOKEN"]), "jJkK") for _ in range(20)]
    lines = [proto.encode(m) for m in pool]
    wrong = accepted = 0
    for _ in range(FLIP_TRIALS):
        i, j = rng.randrange(len(pool)), rng.randrange(len(pool))
        parser = LineParser()
        for msg in parser.feed(flip_bits(lines[i], rng) + lines[j]):
            accepted += 1
            wrong += msg != pool[i] and msg != pool[j]
    assert wrong == 0
    assert accepted >= FLIP_TRIALS * 0.9      # the following good frame: nearly always read
