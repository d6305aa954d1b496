"""The dirty-page SSD1306 driver against luma's own ssd1306, both on an emulated panel.

`Panel` is a fake luma serial interface (command()/data()) that models the SSD1306's GDDRAM in
horizontal addressing mode (the column and page address windows, the pointer that wraps inside
them) and in page addressing mode (the page and the column's two nibbles; the pointer moves
along one page and wraps to its start, never on to the next page), and every command luma's
initialisation sends (anything else fails the test, and so does data in vertical mode). After any
sequence of frames, the GDDRAM our driver leaves must equal what luma's stock driver leaves.
"""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from luma.oled.device import ssd1306
from PIL import Image, ImageDraw

from pi_companion.hw.display import Display
from pi_companion.hw.ssd1306_dirty import (
    DirtySSD1306,
    changed_runs,
    page_bytes,
    plan_windows,
)
from helpers.ssd1306_panel import Panel, scribble

def pair(rotate: int = 0) -> tuple[DirtySSD1306, Panel, ssd1306, Panel]:
    ours, theirs = Panel(seed=1), Panel(seed=2)
    return DirtySSD1306(ours, rotate=rotate), ours, ssd1306(theirs, rotate=rotate), theirs


def test_page_bytes_are_lumas_bytes():
    rng = random.Random(3)
    frame = scribble(Image.new("1", (128, 64)), rng, 40)
    _, _, stock, panel = pair()
    stock.display(frame)
    assert bytes(panel.gram) == page_bytes(frame, 8)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 25), st.sampled_from([0, 1, 2, 3]))
def test_any_frame_sequence_leaves_the_panel_as_luma_does(seed, frames, rotate):
    rng = random.Random(seed)
    ours, our_panel, stock, their_panel = pair(rotate)
    image = Image.new("1", ours.size)
    for _ in range(frames):
        image = scribble(image, rng, rng.choice([0, 1, 3, 30]))
        ours.display(image)
    stock.display(image)
    assert our_panel.gram == their_panel.gram


def test_every_intermediate_frame_matches_too():
    rng = random.Random(11)
    ours, our_panel, stock, their_panel = pair()
    image = Image.new("1", (128, 64))
    for _ in range(300):
        image = scribble(image, rng, rng.randrange(6))
        ours.display(image)
        stock.display(image)
        assert our_panel.gram == their_panel.gram


def test_byte_counts():
    ours, panel, stock, their_panel = pair()
    assert panel.gram == bytes(1024)          # luma's set-up clears the panel: a full frame
    frame = Image.new("1", (128, 64))
    before = panel.sent
    ours.display(frame)                        # unchanged: nothing at all
    assert panel.sent == before
    ImageDraw.Draw(frame).point((5, 9), fill=1)
    ours.display(frame)                        # one pixel: page addressing, page + column + 1 byte
    assert panel.sent - before == 2 + 3 + 1    # (and the switch to it: cheaper than a 6-byte window)
    assert panel.mode == 2
    before, stock_before = panel.sent, their_panel.sent
    stock.display(frame)
    assert their_panel.sent - stock_before == 1030   # luma: the whole frame, every time
    ImageDraw.Draw(frame).rectangle((0, 0, 127, 63), fill=1)
    ours.display(frame)                        # everything changed: back to one full window
    assert panel.sent - before == 2 + 1030
    assert panel.mode == 0


def test_windows_are_chosen_to_send_fewest_bytes():
    assert plan_windows([[], [(10, 20)], [(10, 20)], []]) == [(10, 20, 1, 2)]
    assert plan_windows([[(0, 0)], [], [], [(127, 127)]]) == [(0, 0, 0, 0), (127, 127, 3, 3)]
    assert plan_windows([[(0, 3)], [], [(0, 3)]]) == [(0, 3, 0, 2)]        # resending 4 bytes < 6
    assert plan_windows([[(0, 1), (100, 101)]]) == [(0, 1, 0, 0), (100, 101, 0, 0)]
    assert plan_windows([[]] * 8) == []


def test_runs_a_few_columns_apart_share_a_window():
    old = bytes(128)
    new = bytearray(old)
    new[3] = new[9] = new[60] = 1             # 3 and 9 are 6 apart: one run; 60 is its own
    assert changed_runs(old, bytes(new), 128, 1) == [[(3, 9), (60, 60)]]


def test_a_failed_transfer_resends_the_whole_next_frame():
    ours, panel, stock, their_panel = pair()
    rng = random.Random(5)
    frame = scribble(Image.new("1", (128, 64)), rng, 30)
    ours.display(frame)
    frame = scribble(frame, rng, 30)
    panel.fail = OSError(121, "Remote I/O error")
    with pytest.raises(OSError):
        ours.display(frame)
    panel.fail = None
    panel.gram[:] = bytes(range(256)) * 4      # the panel may hold anything now
    before = panel.sent
    ours.display(frame)                        # the addressing mode is not trusted either
    assert panel.sent - before == 2 + 1030
    stock.display(frame)
    assert panel.gram == their_panel.gram


def test_invalidate_forces_a_full_frame():
    ours, panel, _, _ = pair()
    before = panel.sent
    ours.invalidate()
    ours.display(Image.new("1", (128, 64)))
    assert panel.sent - before == 2 + 1030     # MEMORYMODE too: a panel that lost power is in page mode


def test_the_display_layer_drives_it():
    panel = Panel()
    display = Display(lambda: DirtySSD1306(panel))
    frame = Image.new("1", (128, 64))
    ImageDraw.Draw(frame).text((10, 10), "Ada!", fill=1)
    assert display.show(frame, 0.0)
    before = panel.sent
    assert not display.show(frame.copy(), 0.1)          # unchanged: skipped above the driver
    assert panel.sent == before
    assert bytes(panel.gram) == page_bytes(frame, 8)


def test_an_update_in_the_window_the_controller_holds_is_one_data_transfer():
    """A blinking mark (the same bytes change each time): after its first update, no command."""
    ours, panel, stock, their_panel = pair()
    frames = [Image.new("1", (128, 64)) for _ in range(2)]
    ImageDraw.Draw(frames[1]).rectangle((40, 20, 60, 30), fill=1)
    for n in range(6):
        before = panel.transfers
        ours.display(frames[n % 2])
        if n >= 2:
            assert panel.transfers - before == 1          # the data only: the window is held
    stock.display(frames[1])
    assert panel.gram == their_panel.gram


def test_neighbouring_pages_share_one_transfer_and_bus_time_is_counted():
    from pi_companion.hw.ssd1306_dirty import transfer_bits
    ours, panel, _, _ = pair()
    frame = Image.new("1", (128, 64))
    ImageDraw.Draw(frame).rectangle((10, 4, 30, 27), fill=1)   # pages 0-3, columns 10-30
    before_bits, before = ours.bus.bits, panel.transfers
    ours.display(frame)
    assert panel.transfers - before == 2                        # one window, one data transfer
    assert ours.bus.bits - before_bits == transfer_bits(6) + transfer_bits(4 * 21)


def test_columns_changing_on_the_same_pages_get_one_tall_window_each():
    """Four big numbers changing on pages 1-3 (a Hands Up! beat): one window per number,
    three pages tall - fewer bit times than a window per page and number, or one wide window."""
    number = [(10, 20), (40, 50), (70, 80), (100, 110)]
    windows = plan_windows([[], number, number, number, [], [], [], []])
    assert windows == [(c0, c1, 1, 3) for c0, c1 in number]


def test_addressing_mode_follows_the_cheaper_plan_and_the_panel_stays_right():
    """Scattered single bytes go out in page addressing (1-3 command bytes a run), a tall block
    in one horizontal window; switching back and forth never leaves the panel wrong."""
    ours, panel, stock, their_panel = pair()
    rng = random.Random(8)
    frame = Image.new("1", (128, 64))
    modes = []
    for n in range(40):
        draw = ImageDraw.Draw(frame)
        if n % 3 == 2:
            draw.rectangle((rng.randrange(60), 0, 60 + rng.randrange(60), 63), fill=rng.randrange(2))
        else:
            for _ in range(3):
                draw.point((rng.randrange(128), rng.randrange(64)), fill=rng.randrange(2))
        ours.display(frame)
        modes.append(panel.mode)
        stock.display(frame)
        assert panel.gram == their_panel.gram
    assert 0 in modes and 2 in modes and modes.count(2) > modes.count(0)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32), st.integers(2, 12))
def test_no_frame_costs_more_bus_time_than_lumas(seed, frames):
    """Whatever changes, a frame never costs more than luma's whole frame (plus the 2-byte
    addressing mode switch); an unchanged frame costs nothing."""
    from pi_companion.hw.ssd1306_dirty import transfer_bits
    rng = random.Random(seed)
    ours, _, _, _ = pair()
    image = Image.new("1", ours.size)
    for _ in range(frames):
        image = scribble(image, rng, rng.choice([0, 1, 3, 30, 200]))
        before = ours.bus.bits
        ours.display(image)
        assert ours.bus.bits - before <= transfer_bits(6) + transfer_bits(1024) + 18
    before = ours.bus.bits
    ours.display(image)
    assert ours.bus.bits == before
