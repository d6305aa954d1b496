"""Frames at hand speed (#27 item 3): a fast spin shares frames (at most one per display refresh)
and its last count is on the OLED, exact.

The real Box with its loop thread on gpiozero's MockFactory pins, luma's dummy display and the
game log on a real file; hall edges driven on the mock pins at about 400 a second (5x a fast hand)."""
from __future__ import annotations

import time

from helpers.common import wait_for
from helpers.boxes import make_box
from pi_companion.box import FRAME_S, Box
from pi_companion.config import Config
from pi_companion.hw.pinmap import load_pinmap
from pi_companion.ui.screens import render

PINS = load_pinmap()
FORWARD = (("HALL_A", 1), ("HALL_B", 1), ("HALL_A", 0), ("HALL_B", 0))   # one step per edge


def spin(edges: int, mock_factory, tmp_path) -> tuple[Box, list[int], list[float]]:
    shown: list[int] = []
    times: list[float] = []
    box = make_box(mock_factory, tmp_path,
                   config=Config(game="all-wound-up", players=("Ada", "Ben"), seed=1, sound=False,
                                 games={"all-wound-up": {"settle_ms": 10000}}),
                   display="dummy")
    def frame(_: object) -> None:
        times.append(time.monotonic())
        shown.append(box.engine.game.check.steps if box.engine.game.check else -1)
    box.on_frame = frame
    box.start()
    p1 = mock_factory.pin(PINS["P1"])
    p1.drive_low()
    p1.drive_high()
    assert wait_for(lambda: box.engine.game.check is not None and shown and not box.stale)
    before = box.handled
    for i in range(edges):
        name, level = FORWARD[i % 4]
        pin = mock_factory.pin(PINS[name])
        pin.drive_high() if level else pin.drive_low()
        time.sleep(0.002)                         # ~400 edges/s: a spin several frames long
    assert wait_for(lambda: box.handled - before == edges, timeout=30)
    return box, shown, times


def test_a_fast_spin_ends_on_its_exact_count_with_frames_shared(mock_factory, tmp_path):
    edges = 402                                   # 100.5 turns: the count ends on a half turn
    box, shown, times = spin(edges, mock_factory, tmp_path)
    try:
        assert wait_for(lambda: shown[-1] == edges and not box.stale, timeout=10), shown[-5:]
        assert box.engine.game.check.steps == edges
        # The OLED holds the frame of the final state: the count "100.50".
        assert box.display.device.image.tobytes() == render(box.engine).convert(
            box.display.device.mode).tobytes()
        # Frames are shared: fewer than one per edge, and never two within FRAME_S (the spacing
        # is kept between the starts of two draws; this sees their ends, so a draw that ran
        # long on this loaded machine shortens one gap by what it overran).
        spun = [t for s, t in zip(shown, times) if s > 0]
        assert len(spun) < edges // 2, len(spun)
        gaps = [b - a for a, b in zip(spun, spun[1:])]
        assert min(gaps) >= FRAME_S - 0.010, min(gaps)
    finally:
        box.close()


class SleepCountingQueue:
    """The box's queue, counting the loop's waits that found it empty (the loop went to sleep
    and something had to wake it)."""

    def __init__(self, real: object) -> None:
        self.real, self.sleeps = real, 0

    def get(self, block: bool = True, timeout: float | None = None) -> object:
        if self.real.empty():
            self.sleeps += 1
        return self.real.get(block, timeout)

    def __getattr__(self, name: str) -> object:
        return getattr(self.real, name)


def test_a_spin_wakes_the_loop_per_frame_not_per_edge(mock_factory, tmp_path, monkeypatch):
    """A spin's hall edges wait for the next frame's time instead of each waking the loop: the
    loop's wake-ups during a spin come with its frames, about one per frame: at the frame's
    time the loop draws what is already durable, then takes the tray's edges, whose records
    are synced while it sleeps until the next frame. (Taking the edges first made every frame
    wait for the log's word that its records are durable: two wake-ups a frame; and a frame
    that waited for the log and then took the tray's edges first would wait again: a chase of
    the log's writer, several wake-ups a frame.)"""
    real_start = Box.start

    def counted_start(box: Box) -> None:
        box.queue = SleepCountingQueue(box.queue)      # type: ignore[assignment]
        real_start(box)
    monkeypatch.setattr(Box, "start", counted_start)
    edges = 402
    box, shown, _times = spin(edges, mock_factory, tmp_path)
    try:
        assert wait_for(lambda: shown[-1] == edges and not box.stale, timeout=10), shown[-5:]
        assert box.engine.game.check.steps == edges
        sleeps = box.queue.sleeps
        assert sleeps < edges // 3, (sleeps, len(shown))
        assert sleeps <= 1.4 * len(shown) + 5, (sleeps, len(shown))   # ~1 a frame, not 2
    finally:
        box.close()


def test_the_inbox_keeps_arrival_order_when_hall_edges_wait():
    """Edges held in the tray while the loop snoozes come out before anything put after them,
    and after anything put before them."""
    from pi_companion.hw.inputs import Inbox
    inbox = Inbox()
    inbox.put("before")
    inbox.snooze()
    inbox.put_quiet("hall 1")
    inbox.put_quiet("hall 2")
    inbox.put("press")                 # moves the waiting edges onto the queue first
    inbox.put_quiet("hall 3")
    assert inbox.qsize() == 4          # hall 3 waits in the tray, not on the queue
    inbox.put_nowait("command")        # (SimpleQueue's put_nowait would skip the tray)
    assert inbox.wake() == 0
    inbox.put_quiet("hall 4")          # awake: straight onto the queue
    got = [inbox.get_nowait() for _ in range(inbox.qsize())]
    assert got == ["before", "hall 1", "hall 2", "press", "hall 3", "command", "hall 4"]
