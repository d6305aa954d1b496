"""The live box on gpiozero's MockFactory with its real loop thread and luma's dummy display."""
from __future__ import annotations

import time

from helpers.common import wait_for
from helpers.boxes import make_box
from pi_companion.config import Config
from pi_companion.hw.display import Display, open_device
from pi_companion.hw.pinmap import load_pinmap



def test_a_press_on_a_mock_pin_reaches_the_game_and_lights_its_led(mock_factory):
    pins = load_pinmap()
    frames = []
    box = make_box(mock_factory, seed=3, sound=True, display="dummy", on_frame=frames.append)
    box.start()
    try:
        led2 = mock_factory.pin(pins["LED2"])
        assert wait_for(lambda: led2.state == 1)            # armed seekers are lit while searching
        assert mock_factory.pin(pins["LED1"]).state == 0    # the Grab Master's is not
        mock_factory.pin(pins["P2"]).drive_low()
        assert wait_for(lambda: box.engine.game.phase == "judging")
        assert wait_for(lambda: mock_factory.pin(pins["LED3"]).state == 0)
        assert led2.state == 1
        assert box.engine.report()["last_buzz"]["winner"] == "Ben"
        mock_factory.pin(pins["P2"]).drive_high()
        yes = mock_factory.pin(pins["YES"])
        time.sleep(0.01)
        yes.drive_low()
        time.sleep(0.05)
        yes.drive_high()
        assert wait_for(lambda: box.engine.report()["scores"]["Ben"] == 1)
        assert wait_for(lambda: box.engine.report()["grab_master"] == "Ben")
        assert frames and box.display.device.image.getbbox() is not None
    finally:
        box.close()


def test_unchanged_frames_are_not_sent(mock_factory):
    box = make_box(mock_factory, config=Config(seed=1), display="dummy")
    try:
        box.refresh()
        sent = box.display.sent
        assert sent == 1
        for _ in range(5):
            box.refresh()
        assert box.display.sent == sent and box.display.skipped >= 5
    finally:
        box.close()


def test_a_frame_that_differs_by_one_pixel_is_sent_and_one_drawn_on_after_is_not_mistaken():
    """The display compares each frame with the last one sent: a single pixel's change is
    sent, the same picture again is not, and drawing on a frame after it was shown does not
    change what the display remembers sending."""
    from PIL import Image
    display = Display(lambda: open_device("dummy"))
    first = Image.new("1", (128, 64), 0)
    assert display.show(first, 0.0)
    first.putpixel((127, 63), 1)            # drawn on after it was shown: the panel has not changed
    again = Image.new("1", (128, 64), 0)
    assert not display.show(again, 0.0)
    for xy in ((0, 0), (127, 63), (64, 31)):
        frame = again.copy()
        frame.putpixel(xy, 1)
        assert display.show(frame, 0.0), xy
        assert display.device.image.getpixel(xy)
        assert not display.show(frame.copy(), 0.0), xy
        assert display.show(again, 0.0), xy


def test_switching_game_after_a_while_starts_the_new_game_at_its_beginning(mock_factory, tmp_path):
    from pi_companion.box import Wake
    from pi_companion.core.events import Request
    box = make_box(mock_factory, tmp_path)
    try:
        box.t0 -= 100.0                                   # the box has been on for 100 s
        box.request(Request("switch", "hands-up"))
        box.queue.put(Wake())
        box.pump()
        report = box.engine.report()
        assert report["game"] == "hands-up" and report["flips"] == 0
        header = (tmp_path / "current.log").read_text().splitlines()[0]
        assert '"game":"hands-up"' in header and len(list((tmp_path / "history").glob("*.log"))) == 1
    finally:
        box.close()


def test_a_button_held_down_at_start_is_ignored_until_released(caplog):
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    from pi_companion.box import Wake
    pins = load_pinmap()

    class StuckPin(MockPWMPin):
        """P2's switch is closed while the box powers up (the mock's pull-up would open it)."""
        def _set_pull(self, value):
            super()._set_pull(value)
            if self.info.name == f"GPIO{pins['P2']}":
                self.drive_low()

    factory = MockFactory(pin_class=StuckPin)
    box = make_box(factory)
    stuck = factory.pin(pins["P2"])
    try:
        assert stuck.state == 0
        assert "P2 is held down at start" in caplog.text
        assert box.engine.notice == "P2 held down: ignored"
        box.queue.put(Wake())
        box.pump()
        assert box.engine.report()["last_buzz"] is None
        stuck.drive_high()
        time.sleep(0.01)
        stuck.drive_low()                               # released, then a real press
        box.pump()
        time.sleep(0.005)
        box.queue.put(Wake())
        box.pump()
        assert box.engine.report()["last_buzz"]["winner"] == "Ben"
    finally:
        box.close()
        factory.reset()


def test_sounds_play_on_the_piezo_pin(mock_factory):
    from pi_companion.hw.outputs import Piezo
    piezo = Piezo(load_pinmap()["PIEZO"], mock_factory)
    pin = mock_factory.pin(load_pinmap()["PIEZO"])
    seen = set()
    try:
        piezo.play("correct")                                     # C5, E5, G5
        end = time.monotonic() + 2
        while time.monotonic() < end and len(seen) < 3:
            if pin.frequency:
                seen.add(round(pin.frequency))
            time.sleep(0.002)
        assert seen >= {523, 659, 784}
        assert wait_for(lambda: not pin.frequency or pin.state == 0)  # silent afterwards
    finally:
        piezo.close()


def test_without_a_piezo_sounds_are_noted_and_close_is_quick(mock_factory):
    from pi_companion.hw.outputs import Piezo
    piezo = Piezo(None, mock_factory)
    for _ in range(5):
        piezo.play("over")
    start = time.monotonic()
    piezo.close()
    assert time.monotonic() - start < 0.5 and piezo.played == ["over"] * 5


def test_an_error_in_one_event_does_not_stop_the_loop(mock_factory, caplog):
    box = make_box(mock_factory)
    calls = []
    real = box.engine.feed

    def broken_once(event):
        calls.append(event)
        if len(calls) == 1:
            raise RuntimeError("boom")
        return real(event)

    box.engine.feed = broken_once
    box.start()
    try:
        p2 = mock_factory.pin(load_pinmap()["P2"])
        p2.drive_low()
        assert wait_for(lambda: "error in the box loop" in caplog.text)
        p2.drive_high()
        time.sleep(0.02)
        p2.drive_low()
        assert wait_for(lambda: box.engine.report()["last_buzz"] is not None)
        assert box.thread.is_alive()
    finally:
        box.close()


def test_a_buzz_writes_only_the_leds_whose_state_changes():
    """Through MockFactory pins that count every write: the decision turns the other seekers'
    LEDs off with one write each and leaves the winner's (already lit) alone; redrawing, or an
    input that changes no LED, writes none. (A guard: the box wrote only changes before.)"""
    from helpers.common import Clock, VirtualFactory, VirtualPin

    from pi_companion.box import Wake

    class CountingPin(VirtualPin):
        def _set_state(self, value):
            self.writes = getattr(self, "writes", 0) + 1
            super()._set_state(value)

    pins = load_pinmap()
    Clock.now = 10.0
    factory = VirtualFactory(pin_class=CountingPin)
    box = make_box(factory,
                   config=Config(game="grab-bag", players=("Ada", "Ben", "Cy", "Di"), seed=1,
                                 sound=False, games={"grab-bag": {"variant": "all-seekers"}}))
    try:
        leds = [factory.pin(pins[f"LED{i}"]) for i in range(1, 5)]
        assert [led.state for led in leds] == [1, 1, 1, 1]      # every seeker armed
        for led in leds:
            led.writes = 0
        factory.pin(pins["P2"]).drive_low()
        box.pump()
        assert [led.writes for led in leds] == [0, 0, 0, 0]     # the window is open: no change
        Clock.now += 0.003
        box.queue.put(Wake())
        box.pump()
        assert box.engine.table.last_buzz.winner == 1
        assert [led.state for led in leds] == [0, 1, 0, 0]
        assert [led.writes for led in leds] == [1, 0, 1, 1]
        Clock.now += 0.1
        factory.pin(pins["P2"]).drive_high()
        box.pump()
        box.refresh()
        assert [led.writes for led in leds] == [1, 0, 1, 1]
    finally:
        box.close()
        factory.reset()
