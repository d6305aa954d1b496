"""An emulated SSD1306 panel behind a fake luma serial interface, and random scribbles to draw
(hw/test_ssd1306_dirty, hw/test_oled_worst_frame, hw/test_sh1106_dirty, scenarios/test_torture)."""
from __future__ import annotations

import random

from PIL import Image, ImageDraw


# Command byte -> number of argument bytes (SSD1306 datasheet, section 9).
ARGS = {0x81: 1, 0x20: 1, 0x21: 2, 0x22: 2, 0x8D: 1, 0xA8: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1,
        0xDA: 1, 0xDB: 1}


NO_ARGS = (set(range(0x00, 0x20)) | set(range(0x40, 0x80)) | set(range(0xB0, 0xB8))
           | {0xA0, 0xA1, 0xA4, 0xA5, 0xA6, 0xA7, 0xAE, 0xAF, 0xC0, 0xC8})


class Panel:
    """A fake serial interface with an emulated 128 x 64 GDDRAM (random at power-on)."""

    def __init__(self, width: int = 128, pages: int = 8, seed: int = 0) -> None:
        self.width, self.pages = width, pages
        self.gram = bytearray(random.Random(seed).randbytes(width * pages))
        self.mode = 2                                  # page addressing at reset
        self.cols, self.rows = (0, width - 1), (0, pages - 1)
        self.col, self.page = 0, 0
        self.pending: list[int] = []
        self.command_bytes = self.data_bytes = self.transfers = 0
        self.fail: OSError | None = None

    def command(self, *cmd: int) -> None:
        if self.fail is not None:
            raise self.fail
        self.command_bytes += len(cmd)
        self.transfers += 1
        for byte in cmd:
            self.pending.append(byte)
            op = self.pending[0]
            if op not in ARGS and op not in NO_ARGS:
                raise AssertionError(f"command 0x{op:02X} is not emulated")
            if len(self.pending) == 1 + ARGS.get(op, 0):
                self._execute(*self.pending)
                self.pending = []

    def _execute(self, op: int, *args: int) -> None:
        if op == 0x20:
            self.mode = args[0]
        elif op == 0x21:
            self.cols, self.col = (args[0], args[1]), args[0]
        elif op == 0x22:
            self.rows, self.page = (args[0], args[1]), args[0]
        elif 0xB0 <= op <= 0xB7:                       # page addressing: the page
            self.page = op & 0x07
        elif op <= 0x0F:                               # page addressing: column, low nibble
            self.col = (self.col & 0xF0) | op
        elif op <= 0x1F:                               # page addressing: column, high nibble
            self.col = (self.col & 0x0F) | ((op & 0x0F) << 4)

    def data(self, data: list[int]) -> None:
        if self.fail is not None:
            raise self.fail
        assert not self.pending, "data in the middle of a command"
        assert self.mode in (0, 2), "only horizontal and page addressing are emulated"
        self.data_bytes += len(data)
        self.transfers += 1
        for byte in data:
            assert 0 <= byte <= 255
            self.gram[self.page * self.width + self.col] = byte
            if self.mode == 2:                         # page addressing: end of the page -> its start
                self.col = (self.col + 1) % self.width
            elif self.col < self.cols[1]:
                self.col += 1
            else:
                self.col = self.cols[0]
                self.page = self.page + 1 if self.page < self.rows[1] else self.rows[0]

    @property
    def sent(self) -> int:
        return self.command_bytes + self.data_bytes

    def cleanup(self) -> None:
        pass


def scribble(image: Image.Image, rng: random.Random, strokes: int) -> Image.Image:
    image = image.copy()
    draw = ImageDraw.Draw(image)
    w, h = image.size
    for _ in range(strokes):
        x, y = rng.randrange(w), rng.randrange(h)
        kind = rng.randrange(4)
        if kind == 0:
            draw.point((x, y), fill=rng.randrange(2))
        elif kind == 1:
            draw.rectangle((x, y, min(w - 1, x + rng.randrange(40)), min(h - 1, y + rng.randrange(20))),
                           fill=rng.randrange(2))
        elif kind == 2:
            draw.text((x - 10, y - 5), str(rng.randrange(10**6)), fill=rng.randrange(2))
        else:
            draw.line((x, y, rng.randrange(w), rng.randrange(h)), fill=rng.randrange(2))
    return image
