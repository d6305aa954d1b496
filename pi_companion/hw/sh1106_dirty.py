"""An SH1106 driver that sends only what changed: luma's set-up, our own frame transfer.

The SH1106 (the common 1.3-inch module) has 132 columns of RAM for a 128-pixel-wide glass, so
luma's `sh1106` writes each page from column 2 (its `page_address_offset`), and it has page
addressing only: a write moves the column pointer along one page and never on to the next, so
pages cannot share a transfer. luma rewrites every page on every frame (8 x (3 command bytes +
128 data bytes): 16 I2C transfers). This driver keeps a copy of what the panel holds and, per
changed page, sends only its changed runs of columns: a command transfer setting the page and
the column (only the parts that differ from where the controller's pointer already is) and one
data transfer per run. Runs a few columns apart are joined where resending the unchanged bytes
between them costs fewer bus bit times than another pair of transfers.

As with the SSD1306 driver, the copy is trusted only after a transfer completes; `invalidate()`
forgets it and the next frame goes out whole.
"""
from __future__ import annotations

from typing import Any

from luma.oled.device import sh1106
from PIL import Image

from .ssd1306_dirty import BusCount, changed_runs, page_bytes, transfer_bits

SET_PAGE, SET_LOW_COLUMN, SET_HIGH_COLUMN = 0xB0, 0x00, 0x10
RUN_BITS = transfer_bits(3) + transfer_bits(0)   # page + column commands, and the data's header


class DirtySH1106(sh1106):  # type: ignore[misc]
    """luma's sh1106 (same constructor, same set-up) whose `display()` sends only changes."""

    def __init__(self, serial_interface: Any = None, width: int = 128, height: int = 64,
                 rotate: int = 0, **kwargs: Any) -> None:
        self._panel: bytes | None = None       # what the panel holds, when known
        self._pointer: tuple[int, int] | None = None   # the controller's (page, RAM column)
        self.bus = BusCount()
        super().__init__(serial_interface, width, height, rotate, **kwargs)

    @property
    def bytes_sent(self) -> int:
        return self.bus.bytes

    def invalidate(self) -> None:
        """Forget what the panel holds: the next frame is sent whole."""
        self._panel = None
        self._pointer = None

    def display(self, image: Image.Image) -> None:
        assert image.mode == self.mode
        assert image.size == self.size
        new = page_bytes(self.preprocess(image), self._pages)
        old, self._panel = self._panel, None   # unknown until the transfers complete
        pointer, self._pointer = self._pointer, None
        w = self._w
        if old is None:
            runs = [[(0, w - 1)] for _ in range(self._pages)]
            pointer = None
        else:
            runs = changed_runs(old, new, w, self._pages, join_bits=RUN_BITS)
        for page, spans in enumerate(runs):
            for c0, c1 in spans:
                pointer = self._send(new[page * w + c0:page * w + c1 + 1], page, c0, pointer)
        self._pointer = pointer
        self._panel = new

    def _send(self, data: bytes, page: int, c0: int, pointer: tuple[int, int] | None) -> tuple[int, int]:
        col = c0 + (self._page_address_offset & 0x0F)
        cmd: list[int] = []
        if pointer is None or pointer[0] != page:
            cmd.append(SET_PAGE | page)
        if pointer is None or pointer[1] & 0x0F != col & 0x0F:
            cmd.append(SET_LOW_COLUMN | (col & 0x0F))
        if pointer is None or pointer[1] >> 4 != col >> 4:
            cmd.append(SET_HIGH_COLUMN | (col >> 4))
        if cmd:
            self.command(*cmd)
            self.bus.add(len(cmd))
        self.data(list(data))
        self.bus.add(len(data))
        return page, col + len(data)
