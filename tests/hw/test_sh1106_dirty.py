"""The dirty-page SH1106 driver against luma's own sh1106, both on an emulated controller.

`Panel` is a fake luma serial interface that models the SH1106's 132 x 8-page RAM in page
addressing (its only mode): set page (0xB0-0xB7), set column low/high nibble (0x00-0x0F,
0x10-0x1F), a column pointer that moves along one page with each data byte and never on to the
next page. Every command luma's set-up sends is parsed (anything unknown fails the test).
After any sequence of frames the RAM our driver leaves must equal what luma's stock driver
leaves - the whole RAM, the two unseen columns on each side included.
"""
from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from luma.oled.device import sh1106
from PIL import Image, ImageDraw

from pi_companion.config import ConfigError, parse_config
from pi_companion.hw.sh1106_dirty import DirtySH1106
from pi_companion.hw.ssd1306_dirty import page_bytes, transfer_bits
from helpers.ssd1306_panel import scribble
from helpers.sh1106_panel import Panel

def pair(rotate: int = 0) -> tuple[DirtySH1106, Panel, sh1106, Panel]:
    ours, theirs = Panel(seed=1), Panel(seed=1)
    return DirtySH1106(ours, rotate=rotate), ours, sh1106(theirs, rotate=rotate), theirs


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 20), st.sampled_from([0, 1, 2, 3]))
def test_any_frame_sequence_leaves_the_ram_as_luma_does(seed, frames, rotate):
    rng = random.Random(seed)
    ours, our_panel, stock, their_panel = pair(rotate)
    image = Image.new("1", ours.size)
    for _ in range(frames):
        image = scribble(image, rng, rng.choice([0, 1, 3, 30]))
        ours.display(image)
    stock.display(image)
    assert our_panel.ram == their_panel.ram


def test_every_intermediate_frame_matches_and_shows_the_frame():
    rng = random.Random(4)
    ours, our_panel, stock, their_panel = pair()
    image = Image.new("1", (128, 64))
    for _ in range(150):
        image = scribble(image, rng, rng.randrange(6))
        ours.display(image)
        stock.display(image)
        assert our_panel.ram == their_panel.ram
        assert our_panel.visible() == page_bytes(image, 8)


def test_only_changed_runs_are_sent():
    ours, panel, _, _ = pair()
    frame = Image.new("1", (128, 64))
    ours.display(frame)
    before = panel.transfers, panel.bytes, ours.bus.bits
    assert panel.transfers == before[0]
    ImageDraw.Draw(frame).point((5, 9), fill=1)          # page 1, column 5
    ours.display(frame)
    assert (panel.transfers - before[0], panel.bytes - before[1]) == (2, 3 + 1)
    assert ours.bus.bits - before[2] == transfer_bits(3) + transfer_bits(1)
    before = panel.transfers
    ImageDraw.Draw(frame).point((6, 9), fill=1)          # the next column: the pointer is there
    ours.display(frame)
    assert panel.transfers - before == 1


def test_a_failed_transfer_resends_the_whole_next_frame():
    ours, panel, stock, their_panel = pair()
    rng = random.Random(9)
    frame = scribble(Image.new("1", (128, 64)), rng, 30)
    ours.display(frame)
    real = panel.data
    panel.data = lambda data: (_ for _ in ()).throw(OSError(121, "Remote I/O error"))  # type: ignore
    frame = scribble(frame, rng, 30)
    try:
        ours.display(frame)
    except OSError:
        pass
    panel.data = real                                     # type: ignore[method-assign]
    panel.ram[:] = bytes(len(panel.ram))
    before = panel.bytes
    ours.display(frame)
    assert panel.bytes - before >= 8 * 128
    stock.display(frame)
    assert panel.visible() == their_panel.visible()


def test_the_config_selects_it_and_the_box_opens_it(monkeypatch):
    assert parse_config({"display": {"driver": "sh1106"}}).display == "sh1106"
    try:
        parse_config({"display": {"driver": "sh1107"}})
    except ConfigError as err:
        assert "sh1106" in str(err)
    else:
        raise AssertionError("an unknown driver was accepted")
    import luma.core.interface.serial as serial
    from pi_companion.hw import display
    monkeypatch.setattr(serial, "i2c", lambda port, address: Panel())
    assert isinstance(display.open_device("sh1106"), DirtySH1106)
