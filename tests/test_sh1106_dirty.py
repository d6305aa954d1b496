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
from test_ssd1306_dirty import scribble

# Commands with one argument byte, as luma's sh1106 set-up sends them.
ARGS = {0x81: 1, 0x20: 1, 0x8D: 1, 0xA8: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1, 0xDA: 1, 0xDB: 1, 0xAD: 1}
NO_ARGS = (set(range(0x00, 0x20)) | set(range(0x40, 0x80)) | set(range(0xB0, 0xB8))
           | {0xA0, 0xA1, 0xA4, 0xA5, 0xA6, 0xA7, 0xAE, 0xAF, 0xC0, 0xC8})
RAM_COLUMNS = 132


class Panel:
    def __init__(self, seed: int = 0) -> None:
        self.ram = bytearray(random.Random(seed).randbytes(RAM_COLUMNS * 8))
        self.page = self.col = 0
        self.pending: list[int] = []
        self.transfers = self.bytes = 0

    def command(self, *cmd: int) -> None:
        self.transfers += 1
        self.bytes += len(cmd)
        for byte in cmd:
            self.pending.append(byte)
            op = self.pending[0]
            if op not in ARGS and op not in NO_ARGS:
                raise AssertionError(f"command 0x{op:02X} is not emulated")
            if len(self.pending) == 1 + ARGS.get(op, 0):
                if 0xB0 <= op <= 0xB7:
                    self.page = op & 0x07
                elif op <= 0x0F:
                    self.col = (self.col & 0xF0) | op
                elif op <= 0x1F:
                    self.col = (self.col & 0x0F) | ((op & 0x0F) << 4)
                self.pending = []

    def data(self, data: list[int]) -> None:
        assert not self.pending, "data in the middle of a command"
        self.transfers += 1
        self.bytes += len(data)
        for byte in data:
            assert 0 <= byte <= 255 and self.col < RAM_COLUMNS, "written past the RAM's end"
            self.ram[self.page * RAM_COLUMNS + self.col] = byte
            self.col += 1                       # page addressing: never on to the next page

    def visible(self) -> bytes:
        return b"".join(self.ram[p * RAM_COLUMNS + 2:p * RAM_COLUMNS + 130] for p in range(8))

    def cleanup(self) -> None:
        pass


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
