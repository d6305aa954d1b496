"""The wind check fed by a fake puck on a pty: counts flow in, unplug shows on the OLED and voids the check."""
from __future__ import annotations

import os
import select
import time
import tty

import pytest

from conftest import wait_for
from pi_companion.app import Box
from pi_companion.config import Config
from pi_companion.hw.display import Display, open_device
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
            while select.select([self.master], [], [], 0)[0]:
                os.read(self.master, 4096)
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
    box = Box(config, mock_factory, Display(lambda: open_device("dummy")))
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
