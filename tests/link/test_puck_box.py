"""The wind check fed by a fake puck on a pty: counts flow in, unplug shows on the OLED and voids the check."""
from __future__ import annotations

import logging
import os
import select
import subprocess
import sys
import time
from pathlib import Path
import tty

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.common import read_now, wait_for
from helpers.boxes import make_box
from pi_companion.config import Config
from pi_companion.hw.pinmap import load_pinmap
from pi_companion.link import proto



class Puck:
    """The device end of a pty, speaking the puck protocol."""

    def __init__(self, link_path):
        self.master, slave = os.openpty()
        tty.setraw(self.master)
        self.slave_name = os.ttyname(slave)
        os.close(slave)
        if os.path.lexists(link_path):
            os.unlink(link_path)
        os.symlink(self.slave_name, link_path)
        self.seq = 0

    def send(self, msg):
        os.write(self.master, proto.encode(msg))

    def counts(self, boot, net, invalid=0):
        self.seq += 1
        self.send(proto.Counts(self.seq, boot, net, max(net, 0), max(-net, 0), invalid, 0, 0, 5, 1000))

    def greet(self, box, boot, net=0):
        """Hello and a heartbeat, again until the box has them (opening a port flushes its input)."""
        def seen():
            self.drain()
            self.send(proto.Hello(proto.VERSION, boot))
            self.counts(boot, net)
            return wait_for(lambda: box.engine.puck == (boot, net, 0), timeout=0.2)
        assert wait_for(seen, timeout=10)

    def drain(self):
        """Read what the box wrote, if anything (it writes only after hearing a frame)."""
        try:
            while select.select([self.master], [], [], 0)[0] and read_now(self.master):
                pass
        except OSError:
            pass

    def unplug(self):
        os.close(self.master)


@pytest.fixture
def puck_box(mock_factory, tmp_path):
    link = str(tmp_path / "puck")
    puck = Puck(link)
    config = Config(game="all-wound-up", players=("Ada", "Ben"), seed=1, sound=False,
                    wind_source="puck", puck_port=link)
    box = make_box(mock_factory, tmp_path / "state", config=config, display="dummy")        # every input fsynced, as on the Pi
    box.start()
    yield box, puck, mock_factory, link
    box.close()


def press(factory, name):
    pin = factory.pin(load_pinmap()[name])
    pin.drive_low()
    time.sleep(0.02)
    pin.drive_high()
    time.sleep(0.02)


def test_puck_counts_drive_a_wind_check_and_unplug_voids_it(puck_box):
    box, puck, factory, link = puck_box
    puck.greet(box, "boot1", 3)                             # steps before the check never count
    assert box.inputs.get("HALL_A") is None                 # the hall pins are the puck's now
    press(factory, "P1")
    assert wait_for(lambda: box.engine.report()["phase"] == "winding")
    for net in (4, 5, 6, 7):
        puck.counts("boot1", net)
        puck.counts("boot1", net)                           # heartbeats repeat: no double count
    assert wait_for(lambda: (box.engine.report()["check"] or {}).get("steps") == 4)
    press(factory, "YES")
    assert wait_for(lambda: box.engine.report()["attempts"][-1]["verdict"] == "exact")
    press(factory, "P2")
    puck.counts("boot1", 9)
    assert wait_for(lambda: (box.engine.report()["check"] or {}).get("steps") == 2)
    puck.unplug()
    assert wait_for(lambda: box.engine.notice == "puck disconnected")
    assert box.engine.report()["attempts"][-1]["verdict"] == "void"
    assert box.engine.report()["phase"] == "idle"            # the game keeps running
    puck2 = Puck(link)                                       # replugged: a new boot

    def greeted():
        puck2.drain()
        puck2.send(proto.Hello(proto.VERSION, "boot2"))
        return wait_for(lambda: box.engine.puck_connected is True, timeout=0.2)
    assert wait_for(greeted, timeout=10)
    assert box.engine.notice == ""
    puck2.unplug()


def test_a_puck_reboot_during_a_check_voids_it(puck_box):
    box, puck, factory, _ = puck_box
    puck.greet(box, "b1")
    press(factory, "P2")
    puck.counts("b1", 2)
    assert wait_for(lambda: (box.engine.report()["check"] or {}).get("steps") == 2)
    puck.send(proto.Hello(proto.VERSION, "b2"))              # rebooted: counts start again
    assert wait_for(lambda: box.engine.report()["attempts"]
                    and box.engine.report()["attempts"][-1]["verdict"] == "void")
    puck.unplug()


# -- a flooding puck (issue 12.6) -----------------------------------------------------------

FLOOD_S = float(os.environ.get("PUCK_FLOOD_S", "2"))    # PUCK_FLOOD_S=30 for the long run
ROOT = Path(__file__).resolve().parents[2]

# Writes valid CNT lines, every one with new counters, as fast as the box reads them.
FLOODER = """
import os, sys, time
sys.path.insert(0, sys.argv[4])
from pi_companion.link import proto
fd, seconds, boot = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
block = b"".join(proto.encode(proto.Counts(i, boot, 100 + i, 100 + i, 0, 0, i % 2, 0, 1, 9000 + i))
                 for i in range(4000))
sent, end = 0, time.monotonic() + seconds
while time.monotonic() < end:
    sent += os.write(fd, block)
print(sent, flush=True)
"""


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_flooding_puck_is_coalesced_and_never_delays_a_button(puck_box, caplog):
    """A device sending changing, valid counts as fast as the port goes: the loop's queue
    holds at most one puck item, so the queue and memory stay flat and button edges are
    handled at once (none re-based, none lost)."""
    box, puck, factory, _ = puck_box
    puck.greet(box, "f100d")
    rss_before = rss_kb()
    flooder = subprocess.Popen([sys.executable, "-c", FLOODER, str(puck.master), str(FLOOD_S),
                                "f100d", str(ROOT)], pass_fds=[puck.master],
                               stdout=subprocess.PIPE, text=True)
    queue_max = pending_max = 0
    pressed = False
    while flooder.poll() is None:
        queue_max = max(queue_max, box.queue.qsize())
        pending_max = max(pending_max, box.puck_mail.pending())
        if not pressed and box.puck_mail.posted > 1000:
            press(factory, "P1")                      # a wind check opens mid-flood
            pressed = True
        time.sleep(0.001)
    sent = int(flooder.stdout.read())
    rss_after = rss_kb()
    assert pressed and sent > 100_000                 # the flood really ran
    assert queue_max <= 4                             # one puck token + a press and release, and
                                                      # one frame wake (the log's writer: #27)
    assert pending_max <= 4
    assert box.puck_mail.posted > 10 * box.puck_mail.taken
    assert wait_for(lambda: box.engine.report()["phase"] == "winding")
    assert rss_after - rss_before < 20_000            # kB
    assert not [r for r in caplog.records if "re-basing" in r.getMessage()]
    puck.counts("f100d", 100 + 4000 + 7)             # the flood is over: the newest counts hold
    assert wait_for(lambda: box.engine.puck == ("f100d", 4107, 0))


# -- anything the port may say (issue 12.3) -------------------------------------------------

BIG = 10**18 - 1
counts_fields = st.tuples(
    st.integers(0, BIG), st.sampled_from(["f00d", "f00e", "x-y_Z"]), st.integers(-BIG, BIG),
    st.integers(0, BIG), st.integers(0, BIG), st.integers(0, BIG), st.integers(0, 1),
    st.integers(0, 1), st.integers(-1, BIG), st.integers(0, BIG))
port_lines = st.one_of(
    counts_fields.map(lambda f: proto.encode(proto.Counts(*f))),
    st.builds(proto.Hello, st.integers(0, BIG), st.sampled_from(["f00d", "f00e"]),
              st.sampled_from(["dev", "prod", "x"]), st.integers(0, BIG)).map(proto.encode),
    st.binary(max_size=300))


def test_whatever_the_port_says_the_box_plays_on(puck_box, caplog):
    """Valid frames with extreme values, new boots and raw junk, fuzzed: no error in the
    loop, and a button press afterwards still opens a wind check."""
    box, puck, factory, _ = puck_box
    puck.greet(box, "f00d")
    sentinel = iter(range(10**6))

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(port_lines, max_size=15))
    def talk(lines):
        os.write(puck.master, b"\n".join(lines) + b"\n")
        puck.send(proto.Hello(proto.VERSION, "f00d"))
        net = next(sentinel)
        puck.counts("f00d", net)
        assert wait_for(lambda: box.engine.puck == ("f00d", net, 0))

    talk()
    press(factory, "P1")
    assert wait_for(lambda: box.engine.report()["phase"] == "winding")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


def test_with_wind_source_gpio_a_plugged_in_puck_is_never_opened(mock_factory, tmp_path):
    """wind.source = "gpio": the turntable is on the hall pins; a puck on the configured port,
    greeting and counting, is never opened - the box writes nothing to it, learns nothing from
    it, and counts from its pins."""
    link = str(tmp_path / "puck")
    puck = Puck(link)
    config = Config(game="all-wound-up", players=("Ada", "Ben"), seed=1, sound=False,
                    wind_source="gpio", puck_port=link)
    box = make_box(mock_factory, tmp_path / "state", config=config, display="dummy")
    box.start()
    try:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:                  # a puck that talks and talks
            puck.send(proto.Hello(proto.VERSION, "boot1"))
            puck.counts("boot1", 5)
            time.sleep(0.1)
        written = b""
        if select.select([puck.master], [], [], 0.2)[0]:
            try:
                written = os.read(puck.master, 4096)
            except OSError:                                 # EIO: no one has the port open
                pass
        assert written == b"", written                      # nothing written back
        assert box.engine.puck_connected is not True and box.engine.puck is None
        assert box.inputs.get("HALL_A") is not None               # the hall pins are claimed
        assert box.puck is None, "wind.source = gpio, yet the box opened a puck reader"
    finally:
        box.close()
        puck.unplug()
