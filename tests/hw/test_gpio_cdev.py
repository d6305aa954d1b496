"""Edges from the kernel's GPIO character device (hw/gpio_cdev.py): the records' decoding, and
the reader thread fed through real pipes with packed `struct gpio_v2_line_event` records.

The real chip (gpio-sim, the installed daemon) is the system test's (tests/system, step idle and
the play steps); here the same code reads the same bytes from a pipe."""
from __future__ import annotations

import logging
import os
import select
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_companion.hw import gpio_cdev
from pi_companion.hw.gpio_cdev import EVENT, Decoder, EdgeReader, LineError, LineEvent, decode_one

events_st = st.builds(LineEvent, timestamp_ns=st.integers(0, 2**64 - 1), rising=st.booleans(),
                      offset=st.integers(0, 63), seqno=st.integers(0, 2**32 - 1),
                      line_seqno=st.integers(0, 2**32 - 1))


def pack(event: LineEvent, kind: int | None = None) -> bytes:
    """A record as the kernel writes it (linux/gpio.h: timestamp_ns, id, offset, seqno,
    line_seqno, 6 words of padding)."""
    kind = kind if kind is not None else 1 if event.rising else 2
    return EVENT.pack(event.timestamp_ns, kind, event.offset, event.seqno, event.line_seqno)


def chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]


def test_the_record_is_the_kernel_s_48_bytes():
    record = pack(LineEvent(123_456_789_012, True, 17, 5, 2))
    assert len(record) == 48 and record[:8] == (123_456_789_012).to_bytes(8, "little")
    assert record[8:12] == (1).to_bytes(4, "little") and record[12:16] == (17).to_bytes(4, "little")
    assert decode_one(record) == LineEvent(123_456_789_012, True, 17, 5, 2)


@settings(max_examples=300)
@given(st.lists(events_st, max_size=40), st.lists(st.integers(0, 4000), max_size=30))
def test_any_records_in_any_chunking_give_the_same_edges(events, cuts):
    data = b"".join(pack(e) for e in events)
    decoder = Decoder()
    got, errors = [], []
    for part in chunks(data, cuts):
        e, err = decoder.feed(part)
        got += e
        errors += err
    assert got == events and errors == [] and decoder.finish() is None


@settings(max_examples=300)
@given(st.lists(events_st, min_size=1, max_size=20), st.data())
def test_a_garbled_record_is_one_line_and_the_others_are_kept(events, data):
    bad_at = data.draw(st.integers(0, len(events) - 1))
    kind = data.draw(st.one_of(st.just(0), st.integers(3, 2**32 - 1)))
    stream = b"".join(pack(e, kind if i == bad_at else None) for i, e in enumerate(events))
    decoder = Decoder()
    got, errors = [], []
    for part in chunks(stream, data.draw(st.lists(st.integers(0, 2000), max_size=10))):
        e, err = decoder.feed(part)
        got += e
        errors += err
    assert got == events[:bad_at] + events[bad_at + 1:]
    assert len(errors) == 1 and "\n" not in errors[0] and f"event id {kind}" in errors[0]


@settings(max_examples=300)
@given(st.binary(max_size=600), st.lists(st.integers(0, 700), max_size=10))
def test_any_bytes_never_crash_the_decoder(blob, cuts):
    decoder = Decoder(offset=3)
    for part in chunks(blob, cuts):
        events, errors = decoder.feed(part)
        assert all(e.offset == 3 for e in events) and all("\n" not in m for m in errors)
    left = decoder.finish()
    assert (left is None) == (len(blob) % 48 == 0)


@given(events_st, st.integers(1, 47))
def test_a_truncated_record_at_the_end_is_said(event, keep):
    decoder = Decoder()
    assert decoder.feed(pack(event)[:keep]) == ([], [])
    assert decoder.finish() == f"truncated edge record: {keep} of 48 bytes at the end"
    with pytest.raises(gpio_cdev.LineEventError, match=f"truncated edge record: {keep} of 48"):
        decode_one(pack(event)[:keep])


def test_a_record_of_another_line_on_a_line_s_request_is_refused():
    events, errors = Decoder(offset=4).feed(pack(LineEvent(1, True, 5, 0, 0)) + pack(LineEvent(2, False, 4, 1, 1)))
    assert events == [LineEvent(2, False, 4, 1, 1)] and errors == ["garbled edge record: line 5 on line 4's request"]


# ---- the reader thread, through real pipes ---------------------------------------------------
class Sink:
    def __init__(self) -> None:
        self.got: list[LineEvent] = []
        self.threads: set[str] = set()
        self.cond = threading.Condition()

    def __call__(self, event: LineEvent) -> None:
        with self.cond:
            self.got.append(event)
            self.threads.add(threading.current_thread().name)
            self.cond.notify_all()

    def wait(self, n: int) -> list[LineEvent]:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.got) >= n, timeout=10), self.got
            return list(self.got)


@pytest.fixture
def reader():
    r = EdgeReader()
    yield r
    r.close()


def pipe() -> tuple[int, int]:
    r, w = os.pipe()
    os.set_blocking(r, False)
    return r, w


def quiet(reader: EdgeReader, seconds: float = 0.05) -> int:
    """The reader's wake-ups once nothing has happened for a moment (a wake-up still under way
    from an add or a write is counted before)."""
    before = -1
    for _ in range(40):                 # a reader that never settles is the test's to report
        if before == reader.wakeups:
            break
        before = reader.wakeups
        time.sleep(seconds)
    return before


@given(st.lists(events_st, min_size=1, max_size=30), st.lists(st.integers(0, 2000), max_size=12))
@settings(max_examples=25, deadline=None)
def test_the_reader_hands_on_every_record_written_in_any_chunking_with_its_own_timestamp(events, cuts):
    r, w = pipe()
    reader, sink = EdgeReader(), Sink()
    try:
        reader.add(r, sink)
        data = b"".join(pack(e) for e in events)
        for part in chunks(data, cuts):
            os.write(w, part)
        # The kernel's timestamps as written, whatever the time they were read at.
        assert sink.wait(len(events)) == events
        assert sink.threads == {"gpio-edges"}
    finally:
        reader.close()
        os.close(r)
        os.close(w)


def test_an_idle_reader_never_wakes(reader):
    lines = [pipe() for _ in range(4)]
    sink = Sink()
    for r, _ in lines:
        reader.add(r, sink)
    os.write(lines[2][1], pack(LineEvent(10, True, 2, 0, 0)))
    sink.wait(1)
    idle = quiet(reader)
    time.sleep(1.0)
    assert reader.wakeups == idle                       # a second with no edge: no wake-up
    os.write(lines[0][1], pack(LineEvent(11, False, 0, 1, 0)))
    sink.wait(2)
    assert quiet(reader) == idle + 1                    # one edge: one wake-up
    for r, w in lines:
        os.close(r)
        os.close(w)


def test_close_stops_the_thread_blocked_in_poll_at_once(reader):
    r, w = pipe()
    reader.add(r, Sink())
    quiet(reader)
    assert reader.alive()
    t0 = time.monotonic()
    reader.close()
    assert not reader.alive(), "the reader's thread still runs after close()"
    print(f"closed in {(time.monotonic() - t0) * 1000:.1f} ms")
    os.close(r)
    os.close(w)


def test_a_removed_line_is_never_read_again_and_its_fd_may_be_closed(reader):
    (r1, w1), (r2, w2) = pipe(), pipe()
    sink = Sink()
    reader.add(r1, sink)
    reader.add(r2, sink)
    reader.remove(r1)
    os.write(w1, pack(LineEvent(1, True, 0, 0, 0)))
    os.write(w2, pack(LineEvent(2, True, 0, 0, 0)))
    assert sink.wait(1) == [LineEvent(2, True, 0, 0, 0)]
    time.sleep(0.2)
    assert sink.got == [LineEvent(2, True, 0, 0, 0)]
    assert select.select([r1], [], [], 0)[0] == [r1]    # the record is still there, unread
    for fd in (r1, w1, r2, w2):
        os.close(fd)


def test_garbled_and_truncated_records_are_one_line_each_and_the_reader_goes_on(reader, caplog):
    (r1, w1), (r2, w2) = pipe(), pipe()
    sink = Sink()
    reader.add(r1, sink, offset=7)
    reader.add(r2, sink, offset=8)
    good = [LineEvent(100, True, 7, 0, 0), LineEvent(300, False, 7, 2, 2)]
    with caplog.at_level(logging.ERROR, logger="pi_companion"):
        os.write(w1, pack(good[0]) + pack(LineEvent(200, True, 7, 1, 1), kind=9) + pack(good[1]))
        sink.wait(2)
        os.write(w1, pack(LineEvent(400, True, 7, 3, 3))[:20])
        os.close(w1)                                    # the stream ends inside a record
        deadline = time.monotonic() + 10
        while len([r for r in caplog.records if "truncated" in r.getMessage()]) < 1:
            assert time.monotonic() < deadline, caplog.text
            time.sleep(0.01)
        os.write(w2, pack(LineEvent(500, True, 8, 0, 0)))
        assert sink.wait(3) == [*good, LineEvent(500, True, 8, 0, 0)]
    messages = [r.getMessage() for r in caplog.records]
    assert any("garbled edge record: event id 9" in m for m in messages), messages
    assert any("truncated edge record: 20 of 48 bytes at the end" in m for m in messages), messages
    assert all("\n" not in m for m in messages) and reader.errors == 2 and reader.alive()
    for fd in (r1, r2, w2):
        os.close(fd)


def test_a_failing_handler_does_not_stop_the_reader(reader, caplog):
    r, w = pipe()
    sink = Sink()
    calls = []

    def handler(event: LineEvent) -> None:
        calls.append(event)
        if len(calls) == 1:
            raise RuntimeError("boom")
        sink(event)

    reader.add(r, handler)
    with caplog.at_level(logging.ERROR, logger="pi_companion"):
        os.write(w, pack(LineEvent(1, True, 0, 0, 0)))
        os.write(w, pack(LineEvent(2, False, 0, 1, 1)))
        assert sink.wait(1) == [LineEvent(2, False, 0, 1, 1)]
    assert "a handler failed" in caplog.text and reader.alive()
    os.close(r)
    os.close(w)


def test_a_handler_may_remove_its_own_line(reader):
    r, w = pipe()
    sink = Sink()

    def once(event: LineEvent) -> None:
        reader.remove(r)                                # from the reader's own thread
        sink(event)

    reader.add(r, once)
    os.write(w, pack(LineEvent(1, True, 0, 0, 0)) * 2)
    assert sink.wait(1)[0] == LineEvent(1, True, 0, 0, 0)
    os.write(w, pack(LineEvent(3, True, 0, 0, 0)))
    time.sleep(0.2)
    assert sink.got == [LineEvent(1, True, 0, 0, 0)] and reader.alive()    # nothing after it let go
    os.close(r)
    os.close(w)


def test_a_line_request_on_something_else_than_a_gpio_chip_is_one_line():
    r, w = os.pipe()
    try:
        with pytest.raises(LineError) as err:
            gpio_cdev.request_line(r, 17, bias="up", where="/dev/gpiochip0 (GPIO17)")
        assert str(err.value).endswith("/dev/gpiochip0 (GPIO17) line 17: not a GPIO character device")
        with pytest.raises(LineError, match="line read: not a GPIO character device"):
            gpio_cdev.read_value(r)
    finally:
        os.close(r)
        os.close(w)


def test_an_output_config_drives_the_line_at_its_level_with_no_bias_or_edges():
    for level in (False, True):
        flags, n_attrs, attrs = gpio_cdev.CONFIG.unpack(gpio_cdev.config_bytes("up", "both", 500, output=level))
        assert flags == gpio_cdev.FLAG_OUTPUT and n_attrs == 1
        assert gpio_cdev.ATTR.unpack(attrs[:gpio_cdev.ATTR.size]) == (gpio_cdev.ATTR_ID_OUTPUT_VALUES, 0, int(level), 1)
    flags, n_attrs, _ = gpio_cdev.CONFIG.unpack(gpio_cdev.config_bytes("up", None))
    assert flags == gpio_cdev.FLAG_INPUT | gpio_cdev.FLAG_BIAS_PULL_UP and n_attrs == 0   # no edges asked
    assert gpio_cdev.LINE_SET_VALUES_IOCTL == 0xC010B40F          # _IOWR(0xB4, 0x0F, 16 bytes)


def test_chip_info_is_the_kernel_s_68_bytes_decoded_up_to_each_nul():
    """struct gpiochip_info (linux/gpio.h): name[32], label[32], __u32 lines; the ioctl number
    is _IOR(0xB4, 0x01, that struct)."""
    raw = (b"gpiochip4\0old".ljust(32, b"\0") + b"pinctrl-rp1\0stale".ljust(32, b"\0")
           + (54).to_bytes(4, "little"))
    assert len(raw) == gpio_cdev.CHIPINFO.size == 68
    assert gpio_cdev.decode_chip_info(raw) == ("gpiochip4", "pinctrl-rp1", 54)
    full = b"n" * 32 + b"l" * 32 + (2**32 - 1).to_bytes(4, "little")     # no NUL at all
    assert gpio_cdev.decode_chip_info(full) == ("n" * 32, "l" * 32, 2**32 - 1)
    assert gpio_cdev.GET_CHIPINFO_IOCTL == 0x8044B401


def test_chip_info_on_a_file_that_is_no_chip_is_a_one_line_error(tmp_path):
    path = tmp_path / "gpiochip0"
    path.write_bytes(b"")
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(LineError, match=r"^.*gpiochip0: not a GPIO character device$"):
            gpio_cdev.chip_info(fd, str(path))
    finally:
        os.close(fd)
