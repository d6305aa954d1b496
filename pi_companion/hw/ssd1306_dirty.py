"""An SSD1306 driver that sends only what changed: luma's set-up, our own frame transfer.

The panel's GDDRAM is `height / 8` pages (8 pixel rows each, least significant bit on top) of
`width` column bytes. luma's `ssd1306.display()` rewrites all of it on every frame (1 024 data
+ 6 command bytes at 128x64). This driver keeps a copy of what the panel holds and sends, per
frame, only the changed runs of columns of each changed page. Each run is an address window
(COLUMNADDR c0 c1, PAGEADDR p0 p1: 6 command bytes) in the horizontal addressing mode luma's
initialisation selects; runs a few columns apart share a window, and so do neighbouring
pages, wherever that sends fewer bytes.

The copy is trusted only after a transfer completes: if `command()` or `data()` raises, it is
dropped and the next frame goes out whole. `invalidate()` does the same on request (e.g. the
panel lost power without the bus noticing).
"""
from __future__ import annotations

from typing import Any

from luma.oled.device import ssd1306
from PIL import Image

WINDOW_BYTES = 6          # COLUMNADDR, start, end, PAGEADDR, start, end
Span = tuple[int, int]    # first and last column of a run of changed bytes in one page
Window = tuple[int, int, int, int]   # c0, c1, p0, p1 (inclusive)

# PIL packs 8 pixels per byte with the first pixel in the top bit; the panel wants it in the low bit.
_BIT_REVERSED = bytes(int(f"{i:08b}"[::-1], 2) for i in range(256))


def page_bytes(image: Image.Image, pages: int) -> bytes:
    """A mode "1" image as GDDRAM bytes, page after page (what luma's ssd1306 sends)."""
    # Transposed, each row of the image is one display column, top pixel first.
    columns = image.transpose(Image.Transpose.TRANSPOSE).tobytes().translate(_BIT_REVERSED)
    return b"".join(columns[p::pages] for p in range(pages))


def changed_runs(old: bytes, new: bytes, width: int, pages: int) -> list[list[Span]]:
    """For each page, its runs of changed columns (first, last); runs closer than a window's
    cost are joined, since resending a few unchanged bytes is cheaper than a new window."""
    runs: list[list[Span]] = []
    for p in range(pages):
        lo = p * width
        page: list[Span] = []
        if old[lo:lo + width] != new[lo:lo + width]:
            for c in range(width):
                if old[lo + c] == new[lo + c]:
                    continue
                if page and c - page[-1][1] <= WINDOW_BYTES:
                    page[-1] = (page[-1][0], c)
                else:
                    page.append((c, c))
        runs.append(page)
    return runs


def plan_windows(runs: list[list[Span]]) -> list[Window]:
    """Address windows covering every changed run, choosing per stretch of pages between one
    window per run and one window over several pages (which resends the bytes between)."""
    n = len(runs)
    best = [0] * (n + 1)                       # bytes to send the changes of pages < i
    came: list[tuple[int, list[Window]]] = [(0, [])] * (n + 1)
    for i in range(1, n + 1):
        page = runs[i - 1]
        if not page:
            best[i], came[i] = best[i - 1], (i - 1, [])
            continue
        best[i] = best[i - 1] + sum(WINDOW_BYTES + c1 - c0 + 1 for c0, c1 in page)
        came[i] = (i - 1, [(c0, c1, i - 1, i - 1) for c0, c1 in page])
        c0, c1 = page[0][0], page[-1][1]
        for j in range(i - 2, -1, -1):         # one window over pages j..i-1
            if runs[j]:
                c0, c1 = min(c0, runs[j][0][0]), max(c1, runs[j][-1][1])
                cost = best[j] + WINDOW_BYTES + (i - j) * (c1 - c0 + 1)
                if cost < best[i]:
                    best[i], came[i] = cost, (j, [(c0, c1, j, i - 1)])
    windows: list[Window] = []
    i = n
    while i > 0:
        i, chosen = came[i]
        windows[:0] = chosen
    return windows


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
            windows = plan_windows(changed_runs(old, new, self._w, self._pages))
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
