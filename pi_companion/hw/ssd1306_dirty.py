"""An SSD1306 driver that sends only what changed: luma's set-up, our own frame transfer.

The panel's GDDRAM is `height / 8` pages (8 pixel rows each, least significant bit on top) of
`width` column bytes. luma's `ssd1306.display()` rewrites all of it on every frame (1 024 data
+ 6 command bytes at 128x64). This driver keeps a copy of what the panel holds and sends, per
frame, only the changed column span of each changed page. Each span is an address window
(COLUMNADDR c0 c1, PAGEADDR p0 p1: 6 command bytes) in the horizontal addressing mode luma's
initialisation selects; neighbouring pages share one window where that sends fewer bytes.

The copy is trusted only after a transfer completes: if `command()` or `data()` raises, it is
dropped and the next frame goes out whole. `invalidate()` does the same on request (e.g. the
panel lost power without the bus noticing).
"""
from __future__ import annotations

from typing import Any

from luma.oled.device import ssd1306
from PIL import Image

WINDOW_BYTES = 6          # COLUMNADDR, start, end, PAGEADDR, start, end
Span = tuple[int, int]    # first and last changed column of a page
Window = tuple[int, int, int, int]   # c0, c1, p0, p1 (inclusive)

# PIL packs 8 pixels per byte with the first pixel in the top bit; the panel wants it in the low bit.
_BIT_REVERSED = bytes(int(f"{i:08b}"[::-1], 2) for i in range(256))


def page_bytes(image: Image.Image, pages: int) -> bytes:
    """A mode "1" image as GDDRAM bytes, page after page (what luma's ssd1306 sends)."""
    # Transposed, each row of the image is one display column, top pixel first.
    columns = image.transpose(Image.Transpose.TRANSPOSE).tobytes().translate(_BIT_REVERSED)
    return b"".join(columns[p::pages] for p in range(pages))


def changed_spans(old: bytes, new: bytes, width: int, pages: int) -> list[Span | None]:
    """For each page, the first and last column whose byte differs, or None if none does."""
    spans: list[Span | None] = []
    for p in range(pages):
        lo, hi = p * width, (p + 1) * width
        if old[lo:hi] == new[lo:hi]:
            spans.append(None)
            continue
        first = next(c for c in range(width) if old[lo + c] != new[lo + c])
        last = next(c for c in range(width - 1, -1, -1) if old[lo + c] != new[lo + c])
        spans.append((first, last))
    return spans


def plan_windows(spans: list[Span | None]) -> list[Window]:
    """The address windows covering every changed span with the fewest bytes sent.

    A window over pages j..i costs 6 command bytes plus its whole rectangle of data (an
    unchanged page inside it is resent as it is). Dynamic programming over the pages.
    """
    best = [0] * (len(spans) + 1)              # bytes to cover the changes in pages < i
    came: list[tuple[int, Window | None]] = [(0, None)] * (len(spans) + 1)
    for i, span in enumerate(spans, start=1):
        if span is None:
            best[i], came[i] = best[i - 1], (i - 1, None)
            continue
        best[i] = -1
        c0, c1 = span
        for j in range(i - 1, -1, -1):         # a window over pages j..i-1
            if spans[j] is None:
                continue                       # it starts on a changed page
            c0, c1 = min(c0, spans[j][0]), max(c1, spans[j][1])  # type: ignore[index]
            cost = best[j] + WINDOW_BYTES + (i - j) * (c1 - c0 + 1)
            if best[i] < 0 or cost < best[i]:
                best[i], came[i] = cost, (j, (c0, c1, j, i - 1))
    windows: list[Window] = []
    i = len(spans)
    while i > 0:
        i, window = came[i]
        if window is not None:
            windows.append(window)
    return windows[::-1]


class DirtySSD1306(ssd1306):  # type: ignore[misc]
    """luma's ssd1306 (same constructor, same set-up) whose `display()` sends only changes."""

    def __init__(self, serial_interface: Any = None, width: int = 128, height: int = 64,
                 rotate: int = 0, **kwargs: Any) -> None:
        self._panel: bytes | None = None       # what the panel holds, when known
        self.bytes_sent = 0                    # command + data bytes of frame transfers
        super().__init__(serial_interface, width, height, rotate, **kwargs)

    def invalidate(self) -> None:
        """Forget what the panel holds: the next frame is sent whole."""
        self._panel = None

    def display(self, image: Image.Image) -> None:
        assert image.mode == self.mode
        assert image.size == self.size
        new = page_bytes(self.preprocess(image), self._pages)
        old, self._panel = self._panel, None   # unknown until the transfer completes
        if old is None:
            windows = [(0, self._w - 1, 0, self._pages - 1)]
        else:
            windows = plan_windows(changed_spans(old, new, self._w, self._pages))
        for window in windows:
            self._send(new, window)
        self._panel = new

    def _send(self, buf: bytes, window: Window) -> None:
        c0, c1, p0, p1 = window
        w = self._w
        self.command(self._const.COLUMNADDR, self._colstart + c0, self._colstart + c1,
                     self._const.PAGEADDR, p0, p1)
        data = b"".join(buf[p * w + c0:p * w + c1 + 1] for p in range(p0, p1 + 1))
        self.data(list(data))
        self.bytes_sent += WINDOW_BYTES + len(data)
