"""The winner's lamp never waits for the SD card (#27 item 1), judgements still do.

A real Box on gpiozero's MockFactory pins with its loop thread, luma's dummy display and a real
GameLog on a real file, whose `fdatasync` is held by fault injection (a stalled card): the
buzz winner's LED and tone come while the press's record is not durable; a judgement (YES:
a point, a new Grab Master) changes no LED and draws no frame until its record is durable."""
from __future__ import annotations

import threading
import time

from helpers.common import wait_for
from pi_companion.app import Box
from pi_companion.config import Config
from pi_companion.gamelog import GameLog
from pi_companion.hw.display import Display, open_device
from pi_companion.hw.pinmap import load_pinmap

PINS = load_pinmap()


class StalledDisk:
    """Replaces the log's sync: while `stall` is on, each sync blocks until `release()`."""

    def __init__(self, store: GameLog) -> None:
        self.real = store.sync
        self.go = threading.Event()
        self.go.set()
        self.blocked = threading.Event()      # a sync is being held now
        store.sync = self

    def __call__(self, fd: int) -> None:
        if not self.go.is_set():
            self.blocked.set()
            self.go.wait(20)
        self.real(fd)

    def stall(self) -> None:
        self.blocked.clear()
        self.go.clear()

    def release(self) -> None:
        self.go.set()


def test_the_winners_lamp_and_tone_do_not_wait_for_the_sync_but_a_score_does(mock_factory, tmp_path):
    store = GameLog(tmp_path, wait_s=30)           # no "disk not responding" within the test
    disk = StalledDisk(store)
    frames: list[object] = []
    box = Box(Config(players=("Ada", "Ben", "Cy"), seed=3), mock_factory,
              Display(lambda: open_device("dummy")), store=store, on_frame=frames.append)
    pin = lambda name: mock_factory.pin(PINS[name])      # noqa: E731
    box.start()
    try:
        assert wait_for(lambda: pin("LED3").state == 1 and frames and store.durable == store.seq)
        # 1. The buzz: the press's record is not durable, the lamp and the tone come anyway.
        disk.stall()
        pin("P2").drive_low()
        assert wait_for(lambda: disk.blocked.is_set())
        assert wait_for(lambda: pin("LED3").state == 0 and pin("LED2").state == 1)   # Ben's alone
        assert wait_for(lambda: bool(pin("PIEZO").frequency))                         # his tune
        assert box.engine.report()["last_buzz"]["winner"] == "Ben"
        assert store.durable < store.seq and disk.blocked.is_set() and not disk.go.is_set()
        disk.release()
        assert wait_for(lambda: store.durable == store.seq)
        pin("P2").drive_high()
        assert wait_for(lambda: box.handled >= 2 and store.durable == store.seq and not box.stale)
        time.sleep(0.05)
        # 2. The judgement: YES gives Ben a point and makes him the Grab Master; the engine has
        # it at once, the LEDs and the OLED only once its record is on disk.
        disk.stall()
        shown, lit = len(frames), {n: pin(n).state for n in ("LED1", "LED2", "LED3")}
        pin("YES").drive_low()
        time.sleep(0.05)
        pin("YES").drive_high()                     # a short press: judged at its release
        assert wait_for(lambda: box.engine.report()["scores"]["Ben"] == 1)
        assert wait_for(lambda: disk.blocked.is_set())
        time.sleep(0.3)                              # the loop has had every chance to show it
        assert store.durable < store.seq
        assert len(frames) == shown, "a frame with the point was sent before it was saved"
        assert {n: pin(n).state for n in lit} == lit, "the judgement's LEDs came before it was saved"
        disk.release()
        assert wait_for(lambda: pin("LED2").state == 0)          # the Grab Master's lamp is off
        assert wait_for(lambda: len(frames) > shown)
        assert box.engine.report()["grab_master"] == "Ben"
    finally:
        disk.release()
        box.close()


def test_a_judgement_that_closes_the_window_shows_the_buzz_first_and_waits_for_its_own_record(
        mock_factory, tmp_path):
    """YES released after the settle window's due time, before the loop's timer took it: one
    input decides the buzz and judges it. The buzz's lamp comes at once; the point's LEDs only
    once the YES record is durable."""
    from pi_companion.app import Wake
    from pi_companion.core.events import Edge
    store = GameLog(tmp_path, wait_s=30)
    disk = StalledDisk(store)
    box = Box(Config(players=("Ada", "Ben", "Cy"), seed=3, sound=False), mock_factory,
              Display(None), store=store)
    pin = lambda name: mock_factory.pin(PINS[name])      # noqa: E731
    try:
        for event in (Edge(1.0, "P2", True), Edge(1.001, "YES", True)):
            box.handle(Wake(event))
        assert box.engine.window is not None and store.flush()
        disk.stall()
        judged = threading.Thread(target=box.handle, args=(Wake(Edge(1.05, "YES", False)),))
        judged.start()
        assert wait_for(lambda: disk.blocked.is_set())
        assert wait_for(lambda: pin("LED3").state == 0 and pin("LED2").state == 1)   # Ben's buzz
        time.sleep(0.2)
        assert box.engine.report()["scores"]["Ben"] == 1 and store.durable < store.seq
        assert pin("LED2").state == 1, "the judgement's LEDs came before it was saved"
        disk.release()
        judged.join(10)
        assert pin("LED2").state == 0 and pin("LED1").state == 1   # Ben is the Grab Master now
    finally:
        disk.release()
        box.close()


def test_a_press_in_flight_that_closes_the_window_lights_its_lamp_before_its_record_is_durable(
        tmp_path):
    """The window was due, the look found P1's button down with its edge still in flight, and
    the window waits for it; the edge lands and closes the window: P1's buzz (the earlier
    timestamp) is shown at once, while the record of that very press is still not on disk."""
    from helpers.common import Clock
    from helpers.boxes import LatePin, late_box, late_first_press_until_the_window_is_due
    Clock.now, LatePin.held = 5.0, []
    box = late_box(tmp_path)
    disk = StalledDisk(box.store)
    box.store.wait_s = 30
    pin = lambda name: box.factory.pin(PINS[name])      # noqa: E731
    try:
        box.pump()
        late_first_press_until_the_window_is_due(box)   # it waits for P1's edge
        assert box.engine.settling and box.store.flush()
        disk.stall()
        Clock.now = 5.0035
        LatePin.deliver()                             # P1's edge lands, 3 ms late
        landed = threading.Thread(target=box.pump)
        landed.start()
        assert wait_for(lambda: disk.blocked.is_set())
        assert wait_for(lambda: box.leds.lit == {0} and pin("LED1").state == 1 and pin("LED2").state == 0)
        assert box.piezo.played == ["buzz:P1"] and box.store.durable < box.store.seq
        disk.release()
        landed.join(10)
        assert box.engine.report()["last_buzz"]["winner"] == "Ada"
    finally:
        disk.release()
        box.close()
        box.factory.reset()


def test_the_wake_up_that_decides_a_buzz_is_logged_right_after_its_lamp(tmp_path):
    """The loop's timer closes the window: the buzz's lamps first, then the wake-up's `advance`
    record (a resume must fire the window at the same time), and the log folds to the box."""
    from helpers.common import Clock, VirtualFactory, VirtualPin
    from helpers.folds import fold, state
    from pi_companion.app import Wake
    Clock.now = 5.0
    box = Box(Config(players=("Ada", "Ben", "Cy"), seed=3, sound=False),
              VirtualFactory(pin_class=VirtualPin), Display(None), store=GameLog(tmp_path))
    calls: list[tuple[str, object]] = []
    show, append = box.leds.show, box.store.append
    box.leds.show = lambda lit: (calls.append(("lamps", set(lit))), show(lit))[1]   # type: ignore[method-assign]
    box.store.append = lambda rec: (calls.append(("record", dict(rec))), append(rec))[1]  # type: ignore[method-assign]
    try:
        box.pump()
        box.factory.pin(PINS["P2"]).drive_low()
        box.pump()
        assert box.engine.settling and calls[-1] == ("record", {"t": 0.0, "press": "P2"})
        Clock.now = 5.01                              # the window is due: the loop wakes
        box.queue.put(Wake())
        box.pump()
        assert calls[-2:] == [("lamps", {1}), ("record", {"t": 0.01, "advance": 1})]
        assert box.store.flush() and box.store.load()[1][-1] == {"t": 0.01, "advance": 1}
        assert state(fold(box.store)) == state(box.engine)
    finally:
        box.close()
        box.factory.reset()
