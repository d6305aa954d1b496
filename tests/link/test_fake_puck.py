"""The software puck that `simulate --puck fake` uses speaks the protocol the real link reads."""
from __future__ import annotations

import time

from pi_companion.link import proto
from pi_companion.link.fake_puck import FakePuck
from pi_companion.link.serial_port import PuckLink


def test_fake_puck_counts_reach_the_real_link():
    puck = FakePuck()
    got: list[proto.Message] = []
    link = PuckLink(puck.path, got.append, lambda _c: None).start()
    try:
        for _ in range(6):
            puck.step(+1)
        puck.step(-1)
        end = time.monotonic() + 5
        while time.monotonic() < end and not any(
                isinstance(m, proto.Counts) and m.net == 5 for m in got):
            time.sleep(0.01)
        hellos = [m for m in got if isinstance(m, proto.Hello)]
        counts = [m for m in got if isinstance(m, proto.Counts)]
        assert hellos and hellos[0].boot_id == puck.boot_id
        assert counts[-1].net == 5 and counts[-1].forward == 6 and counts[-1].backward == 1
        assert link.stats()["bad_checksum"] == 0
    finally:
        link.close()
        puck.close()
