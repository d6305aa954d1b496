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

from .ssd1306_dirty import PAGE_RUN_BITS, BusCount, changed_runs, page_bytes, page_mode_transfers, send


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
            runs = changed_runs(old, new, w, self._pages, join_bits=PAGE_RUN_BITS)
        plan, pointer = page_mode_transfers(new, runs, w, pointer, self._page_address_offset & 0x0F)
        send(self, plan)
        self._pointer = pointer
        self._panel = new
