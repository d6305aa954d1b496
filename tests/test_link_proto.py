"""The host side of the puck protocol: framing, parsing, counting and dropping bad lines."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_companion.link import proto
from pi_companion.link.proto import ConfigAck, Counts, DeviceError, Hello, LineParser, Pong

SAMPLES: list[proto.Message] = [
    Hello(1, "3fa2c9d0", "prod", 250),
    Hello(1, "00000000", "dev", 20),
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


def test_known_line_and_checksum() -> None:
    assert proto.encode(Counts(17, "3fa2c9d0", -12, 3, 15, 2, 1, 0, 48, 123456)) == (
        b"$CNT,17,3fa2c9d0,-12,3,15,2,1,0,48,123456*76\n")
    assert proto.checksum(b"INFO") == 0x0E
    assert proto.info_command() == b"$INFO*0E\n"


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


def test_junk_before_the_marker_on_the_same_line_is_ignored() -> None:
    msgs, _ = parse_all(b">>> " + proto.encode(SAMPLES[0]))
    assert msgs == [SAMPLES[0]]


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
    assert line.endswith(b"*4D\n")
    wrong = line[:-3] + b"%02X\n" % (int(line[-3:-1], 16) ^ 0x01)
    lower = line[:-3] + b"4d\n"                       # hex digits must be upper case
    msgs, parser = parse_all(wrong + lower + line)
    assert msgs == [SAMPLES[2]]
    assert nonzero(parser) == {"bad_checksum": 2, "messages": 1}


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
        b"$HELLO,\xff*%02X\n" % proto.checksum(b"HELLO,\xff"),
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
        Hello(1, boot, rng.choice(["dev", "prod"]), n(20, 60000)),
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
            framing = new in b"$*\n\r" or i == 0 or i >= len(line) - 4
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
