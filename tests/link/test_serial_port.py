"""The puck link on a pty pair: counts flow, unplug and replug, reboots, no leaks."""

from __future__ import annotations

import logging
import os
import queue
import select
import threading
import time
import tty
from pathlib import Path
from types import SimpleNamespace
from collections.abc import Callable
from typing import TypeVar

import pytest

from helpers.common import read_now
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_companion.link import proto
from pi_companion.link.serial_port import PuckLink, discover

WAIT_S = 5.0
M = TypeVar("M", bound=proto.Message)


class FakePuck:
    """A pty whose master side speaks the device protocol: answers INFO and PING, and
    sends Counts on demand. Like the firmware's heartbeat, it sends a CNT every 50 ms until
    the host first speaks (the host asks for a Hello only after hearing a valid frame).
    `unplug()` closes it; the slave path then disappears."""

    def __init__(self, boot_id: str = "b00710aa") -> None:
        self.boot_id = boot_id
        self.master, self.slave = os.openpty()
        tty.setraw(self.master)
        self.path = os.ttyname(self.slave)
        self.commands: list[bytes] = []
        self.spoken_to = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, name="fake-puck", daemon=True)
        self._thread.start()

    def send(self, data: bytes) -> None:
        with self._lock:
            if not self._stop.is_set():
                os.write(self.master, data)

    def counts(self, seq: int, net: int, boot_id: str | None = None) -> proto.Counts:
        msg = proto.Counts(seq, boot_id or self.boot_id, net, max(net, 0), max(-net, 0), 0,
                           net % 2, 0, 10, 1000 + seq)
        self.send(proto.encode(msg))
        return msg

    def unplug(self) -> None:
        with self._lock:
            self._stop.set()
        self._thread.join()                    # it polls every 20 ms
        os.close(self.master)
        os.close(self.slave)

    def _serve(self) -> None:
        pending = b""
        beacon = 0.0
        while not self._stop.is_set():
            if not self.spoken_to.is_set() and time.monotonic() - beacon >= 0.05:
                beacon = time.monotonic()
                self.send(proto.encode(proto.Counts(0, self.boot_id, 0, 0, 0, 0, 0, 0, -1, 0)))
            ready, _, _ = select.select([self.master], [], [], 0.02)
            if not ready or self._stop.is_set():
                continue
            try:
                with self._lock:
                    data = b"" if self._stop.is_set() else read_now(self.master, 1024)
            except OSError:                        # the link has the slave closed just now
                time.sleep(0.005)
                continue
            *lines, pending = (pending + data).split(b"\n")
            for line in lines:
                self._answer(line)

    def _answer(self, line: bytes) -> None:
        self.commands.append(line)
        self.spoken_to.set()
        if line.startswith(b"$INFO"):
            self.send(proto.encode(proto.Hello(proto.VERSION, self.boot_id, "dev", 250)))
        elif line.startswith(b"$PING"):
            self.send(proto.encode(proto.Pong("t", 5)))


class Recorder:
    """Collects the link's callbacks, for waiting on them."""

    def __init__(self) -> None:
        self.messages: queue.Queue[proto.Message] = queue.Queue()
        self.status: queue.Queue[bool] = queue.Queue()

    def on_message(self, msg: proto.Message) -> None:
        self.messages.put(msg)

    def on_status(self, connected: bool) -> None:
        self.status.put(connected)

    def next_message(self, kind: type[M]) -> M:
        deadline = time.monotonic() + WAIT_S
        while True:
            msg = self.messages.get(timeout=max(deadline - time.monotonic(), 0.001))
            if isinstance(msg, kind):
                return msg

    def next_status(self) -> bool:
        return self.status.get(timeout=WAIT_S)


@pytest.fixture
def port_link(tmp_path: Path) -> Path:
    return tmp_path / "puck"


def plug(link_path: Path, puck: FakePuck) -> None:
    """Point the configured path (a symlink) at the puck's pty."""
    tmp = link_path.with_suffix(".new")
    tmp.symlink_to(puck.path)
    os.replace(tmp, link_path)


def make_link(link_path: Path, rec: Recorder) -> PuckLink:
    def find(configured: str | None) -> str | None:
        return configured if configured and os.path.exists(configured) else None
    return PuckLink(str(link_path), rec.on_message, rec.on_status, backoff_min=0.01,
                    backoff_max=0.04, hello_retry_s=0.2, find=find)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_counts_flow_to_on_message(port_link: Path) -> None:
    puck, rec = FakePuck(), Recorder()
    plug(port_link, puck)
    with make_link(port_link, rec) as link:
        assert rec.next_status() is True
        assert rec.next_message(proto.Hello) == proto.Hello(proto.VERSION, puck.boot_id, "dev", 250)
        sent = [puck.counts(seq, net) for seq, net in enumerate([1, 2, 3, 2, 3, 4])]
        assert [rec.next_message(proto.Counts) for _ in sent] == sent
        assert link.connected and link.boot_id == puck.boot_id
    assert rec.next_status() is False
    puck.unplug()


def test_commands_reach_the_puck(port_link: Path) -> None:
    puck, rec = FakePuck(), Recorder()
    plug(port_link, puck)
    with make_link(port_link, rec) as link:
        rec.next_message(proto.Hello)
        assert link.ping("t") and link.set_heartbeat(100)
        assert rec.next_message(proto.Pong) == proto.Pong("t", 5)
        deadline = time.monotonic() + WAIT_S
        while proto.heartbeat_command(100)[:-1] not in puck.commands:
            assert time.monotonic() < deadline
            time.sleep(0.01)
    puck.unplug()
    assert not link.send(proto.info_command())


def test_junk_on_the_line_is_ignored(port_link: Path) -> None:
    puck, rec = FakePuck(), Recorder()
    plug(port_link, puck)
    with make_link(port_link, rec) as link:
        rec.next_message(proto.Hello)
        puck.send(b"Traceback (most recent call last):\r\n$CNT,1,2*@@@@\n" + b"x" * 10_000 + b"\n")
        good = puck.counts(5, 7)
        assert rec.next_message(proto.Counts) == good
        stats = link.stats()
        assert stats["junk"] == 1 and stats["bad_checksum"] == 1 and stats["too_long"] == 1
    puck.unplug()


def test_unplug_then_replug(port_link: Path) -> None:
    puck, rec = FakePuck(), Recorder()
    plug(port_link, puck)
    with make_link(port_link, rec):
        assert rec.next_status() is True
        puck.unplug()
        assert rec.next_status() is False
        puck = FakePuck(boot_id="b00710bb")             # another boot: its own Hello
        plug(port_link, puck)
        assert rec.next_status() is True
        while rec.next_message(proto.Hello).boot_id != puck.boot_id:   # (the first puck's
            pass                                                      # Hello may be queued)
        assert puck.counts(0, 3) == rec.next_message(proto.Counts)    # counts need it first
    puck.unplug()


def test_twenty_unplug_replug_cycles_leak_nothing(port_link: Path) -> None:
    threads, fds = threading.active_count(), open_fds()
    rec = Recorder()
    puck = FakePuck()
    plug(port_link, puck)
    link = make_link(port_link, rec).start()
    assert rec.next_status() is True
    assert rec.next_message(proto.Hello).boot_id == puck.boot_id
    for cycle in range(20):
        puck.unplug()
        assert rec.next_status() is False
        puck = FakePuck(boot_id="%08x" % cycle)
        plug(port_link, puck)
        assert rec.next_status() is True
        assert rec.next_message(proto.Hello).boot_id == puck.boot_id
        assert puck.counts(cycle, cycle) == rec.next_message(proto.Counts)
    link.close()
    assert rec.next_status() is False
    puck.unplug()
    assert threading.active_count() == threads
    assert open_fds() == fds
    assert link.reboots == 20


def test_reboot_is_seen_as_a_new_hello_first(port_link: Path) -> None:
    """A soft reboot keeps the port: Counts with a new boot id are held back until the
    Hello of that boot has been delivered."""
    puck, rec = FakePuck(boot_id="0000aaaa"), Recorder()
    plug(port_link, puck)
    with make_link(port_link, rec) as link:
        rec.next_message(proto.Hello)
        assert puck.counts(0, 4) == rec.next_message(proto.Counts)
        puck.boot_id = "0000bbbb"
        puck.counts(0, 0)                      # the reboot's own Hello was lost
        hello = rec.next_message(proto.Hello)
        assert hello.boot_id == "0000bbbb"
        assert puck.counts(1, 1) == rec.next_message(proto.Counts)
        assert link.reboots == 1 and link.dropped_counts >= 1
    puck.unplug()


def test_callback_errors_do_not_kill_the_reader(port_link: Path) -> None:
    puck, rec = FakePuck(), Recorder()
    plug(port_link, puck)
    calls: list[proto.Message] = []

    def explode(msg: proto.Message) -> None:
        calls.append(msg)
        if len(calls) <= 2:
            raise RuntimeError("consumer bug")
        rec.on_message(msg)

    link = PuckLink(str(port_link), explode, rec.on_status, backoff_min=0.01,
                    find=lambda c: c)
    with link:
        rec.next_status()
        deadline = time.monotonic() + WAIT_S
        seq = 0
        while rec.messages.empty():
            assert time.monotonic() < deadline
            puck.counts(seq, seq)
            seq += 1
            time.sleep(0.01)
        assert link.connected
    puck.unplug()


def test_close_without_a_port_returns_quickly(port_link: Path) -> None:
    rec = Recorder()
    link = make_link(port_link, rec).start()
    time.sleep(0.05)
    started = time.monotonic()
    link.close()
    assert time.monotonic() - started < 0.5
    assert rec.status.empty()


# -- discovery --------------------------------------------------------------------------------

def test_discover_order(tmp_path: Path) -> None:
    configured, udev = tmp_path / "configured", tmp_path / "udev"
    by_id = tmp_path / "by-id"
    by_id.mkdir()
    ports: list[SimpleNamespace] = []

    def find(name: str | None) -> str | None:
        return discover(name, udev_link=str(udev), by_id_glob=str(by_id / "*"),
                        comports=lambda: ports)

    assert find(None) is None
    (by_id / "usb-FTDI_Other-if00").touch()
    assert find(None) == str(by_id / "usb-FTDI_Other-if00")      # the only by-id entry
    (by_id / "usb-Silabs_Other-if00").touch()
    assert find(None) is None                                     # ambiguous: none
    ports.append(SimpleNamespace(device="/dev/ttyACM3", vid=0x2E8A, pid=0x0005))
    ports.append(SimpleNamespace(device="/dev/ttyUSB0", vid=0x0403, pid=0x6001))
    assert find(None) == "/dev/ttyACM3"
    (by_id / "usb-MicroPython_Board_in_FS_mode_E6614-if00").touch()
    assert find(None) == str(by_id / "usb-MicroPython_Board_in_FS_mode_E6614-if00")
    udev.touch()
    assert find(None) == str(udev)
    assert find(str(configured)) == str(udev)                     # configured but absent
    configured.touch()
    assert find(str(configured)) == str(configured)


# -- what is not our puck (issue 12.6, 12.7) ------------------------------------------------------

class Device:
    """The device end of a pty that records what the host writes and, every 50 ms, sends
    `chatter()` (a REPL's banner, an old puck's lines)."""

    def __init__(self, chatter: Callable[[], bytes], answer: Callable[[bytes], bytes]) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.master)
        self.path = os.ttyname(self.slave)
        self.received = bytearray()
        self._chatter, self._answer = chatter, answer
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.wait(0.05):
            os.write(self.master, self._chatter())
            while select.select([self.master], [], [], 0)[0]:
                data = read_now(self.master)
                if not data:
                    break
                self.received += data
                os.write(self.master, self._answer(data))

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        os.close(self.master)
        os.close(self.slave)


BANNER = (b"MPY: soft reboot\r\nMicroPython v1.27.0 on 2026-01-01; Raspberry Pi Pico with RP2040\r\n"
          b"Type \"help()\" for more information.\r\n>>> ")


def repl_answer(data: bytes) -> bytes:
    """A REPL echoes the line and runs it as Python."""
    return data + b"\r\nTraceback (most recent call last):\r\nSyntaxError: invalid syntax\r\n>>> "


def v1_lines() -> bytes:
    def line(*fields: str) -> bytes:
        body = ",".join(fields).encode()
        return b"$%s*%02X\r\n" % (body, proto.xor_checksum(body))
    return line("HELLO", "1", "0a1dfeed", "prod", "250") + line(
        "CNT", "3", "0a1dfeed", "8", "8", "0", "0", "1", "0", "40", "1250")


def watch(port_link: Path, device: Device, caplog: pytest.LogCaptureFixture,
          seconds: float = 1.0) -> tuple[Recorder, list[str]]:
    plug(port_link, device)      # type: ignore[arg-type]
    rec = Recorder()
    link = PuckLink(str(port_link), rec.on_message, rec.on_status, backoff_min=0.01,
                    hello_retry_s=0.05, quiet_s=0.3, find=lambda c: c)
    with caplog.at_level(logging.DEBUG, logger="pi_companion.link.serial_port"):
        with link:
            time.sleep(seconds)
    device.close()
    return rec, [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_stock_micropython_board_is_never_typed_at_and_named_once(
        port_link: Path, caplog: pytest.LogCaptureFixture) -> None:
    board = Device(lambda: BANNER, repl_answer)
    rec, warnings = watch(port_link, board, caplog)
    assert bytes(board.received) == b""              # nothing typed into its REPL
    assert len(warnings) == 1, warnings
    assert "no wind puck firmware" in warnings[0] and "make firmware-deploy" in warnings[0]
    assert rec.messages.empty() and rec.status.empty()


def test_an_old_puck_gets_one_line_asking_for_firmware_deploy(
        port_link: Path, caplog: pytest.LogCaptureFixture) -> None:
    old = Device(v1_lines, lambda data: b"$ERR,CHECKSUM,*%02X\r\n" % proto.xor_checksum(b"ERR,CHECKSUM,"))
    rec, warnings = watch(port_link, old, caplog)
    assert bytes(old.received) == b""
    assert len(warnings) == 1, warnings
    assert "old firmware (protocol version 1" in warnings[0]
    assert "make firmware-deploy" in warnings[0]
    assert rec.messages.empty()


# -- arbitrary bytes on the wire (issue 12.3) ----------------------------------------------------

def test_arbitrary_bytes_never_stop_the_reader(port_link: Path,
                                               caplog: pytest.LogCaptureFixture) -> None:
    """Whatever arrives, the reader thread counts it and carries on: a good frame after it
    is still read, and nothing worse than a debug line is logged."""
    puck, rec = FakePuck(), Recorder()
    plug(port_link, puck)
    link = make_link(port_link, rec).start()
    rec.next_message(proto.Hello)
    seq = iter(range(1, 10**6))

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.binary(max_size=700) | st.sampled_from(
        [b"$", b"*", b"\n", b"\r", b"$CNT,", b"@@@@", b"9" * 300, b"\x00\xff"]), max_size=12))
    def junk_then_a_frame(chunks: list[bytes]) -> None:
        for chunk in chunks:
            puck.send(chunk)
        n = next(seq)
        puck.send(b"\n")                             # ends whatever line the junk left open
        good = puck.counts(n, n)
        got = rec.next_message(proto.Counts)
        while got.seq != good.seq:                   # junk may be cut into a frame: skip it
            got = rec.next_message(proto.Counts)
        assert got == good

    with caplog.at_level(logging.DEBUG, logger="pi_companion.link.serial_port"):
        junk_then_a_frame()
        assert link._thread is not None and link._thread.is_alive()
    link.close()
    puck.unplug()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert any("unreadable lines" in r.getMessage() for r in caplog.records)
    assert sum(v for k, v in link.stats().items() if k not in ("messages", "reboots")) > 0
