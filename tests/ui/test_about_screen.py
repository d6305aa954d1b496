"""MENU > About on the OLED: the one version number and the address the box is reached at,
drawn by the live box from the hub's links, every line inside the 128x64 screen."""
from __future__ import annotations

import pytest

import pi_companion
from helpers.boxes import attach_hub, make_box, tap
from helpers.common import Clock, VirtualFactory, VirtualPin
from pi_companion.box import Wake
from pi_companion.core.events import Turn

URL = "http://testbox.local:8080/"


@pytest.fixture
def box_and_pins(tmp_path):
    Clock.now = 0.0
    factory = VirtualFactory(pin_class=VirtualPin)
    box = make_box(factory, players=("Ada", "Ben"), display="dummy")
    yield box, factory
    box.close()
    factory.reset()


def open_about(box, factory, t):
    tap(box, factory, "MENU", t)
    keys = [k for k, _ in box.engine.menu.items]
    box.queue.put(Wake(Turn(t + 0.2, keys.index("about") - box.engine.menu.cursor)))
    box.pump()
    assert box.engine.menu.selected == "about"
    tap(box, factory, "YES", t + 0.3)


def test_about_shows_the_version_and_the_address(box_and_pins, tmp_path, text_boxes):
    box, factory = box_and_pins
    attach_hub(box, tmp_path, board_url=URL)
    box.pump()
    open_about(box, factory, 1.0)
    assert box.engine.menu.qr == "about"
    texts = [text for text, _ in text_boxes]
    assert f"pi-companion {pi_companion.__version__}" in texts
    assert "testbox.local:8080" in texts
    for text, (x0, y0, x1, y1) in text_boxes:
        assert 0 <= x0 and x1 <= 128 and 0 <= y0 and y1 <= 64, (text, (x0, y0, x1, y1))
    tap(box, factory, "NO", 2.0)
    assert box.engine.menu is None


def test_about_without_the_hub_says_there_is_no_address(box_and_pins, text_boxes):
    box, factory = box_and_pins
    box.pump()
    open_about(box, factory, 1.0)
    texts = [text for text, _ in text_boxes]
    assert f"pi-companion {pi_companion.__version__}" in texts
    assert "big screen off" in texts
    for text, (x0, y0, x1, y1) in text_boxes:
        assert 0 <= x0 and x1 <= 128 and 0 <= y0 and y1 <= 64, (text, (x0, y0, x1, y1))
