"""An SSD1306 driver that sends only what changed: luma's set-up, our own frame transfer.

The panel's GDDRAM is `height / 8` pages (8 pixel rows each, least significant bit on top) of
`width` column bytes. luma's `ssd1306.display()` rewrites all of it on every frame (two I2C
transfers: 6 command bytes, 1 024 data bytes). This driver keeps a copy of what the panel holds
and sends, per frame, only what changed. What it minimises is bus time, not bytes: every I2C
transfer also costs a start, the address byte, the control byte and a stop (`transfer_bits`).
Each frame is priced two ways and the cheaper is sent:
- horizontal addressing (the mode luma's initialisation selects): address windows (COLUMNADDR
  c0 c1, PAGEADDR p0 p1), each written in one data transfer; runs a few columns apart share a
  window, and so do neighbouring pages (the pointer wraps from c1 of one page to c0 of the
  next), wherever that costs fewer bit times; a window the controller already holds (the
  pointer wraps back to its start after a complete write) is not sent again, nor is a half of
  it that did not change;
- page addressing: per changed run, a command of 1-3 bytes setting only the parts of the page
  and column pointer that differ from where it is, then the run (the SH1106's only mode).
The switch between the two (MEMORYMODE, 2 bytes) rides on the frame's first command.

The copy is trusted only after a transfer completes: if `command()` or `data()` raises, it is
dropped and the next frame goes out whole. `invalidate()` does the same on request (e.g. the
panel lost power without the bus noticing).
"""
from __future__ import annotations

from typing import Any

from luma.oled.device import ssd1306
from PIL import Image

BUS_HZ = 400_000          # I2C fast mode, as the Pi's bus is usually set for an OLED


def transfer_bits(n: int) -> int:
    """Bus bit times of one I2C write of `n` bytes after the control byte: a start condition,
    the address byte, the control byte (command or data), the bytes (8 bits + ACK each), a
    stop condition."""
    return 1 + 9 * (2 + n) + 1


WINDOW_BITS = transfer_bits(6) + transfer_bits(0)  # COLUMNADDR+PAGEADDR, and the data's header
NEXT_WINDOW_BITS = transfer_bits(3) + transfer_bits(0)  # the same pages again: COLUMNADDR only
BYTE_BITS = 9
Span = tuple[int, int]    # first and last column of a run of changed bytes in one page
Window = tuple[int, int, int, int]   # c0, c1, p0, p1 (inclusive)

# PIL packs 8 pixels per byte with the first pixel in the top bit; the panel wants it in the low bit.
_BIT_REVERSED = bytes(int(f"{i:08b}"[::-1], 2) for i in range(256))


def page_bytes(image: Image.Image, pages: int) -> bytes:
    """A mode "1" image as GDDRAM bytes, page after page (what luma's ssd1306 sends)."""
    # Transposed, each row of the image is one display column, top pixel first.
    columns = image.transpose(Image.Transpose.TRANSPOSE).tobytes().translate(_BIT_REVERSED)
    return b"".join(columns[p::pages] for p in range(pages))


def changed_runs(old: bytes, new: bytes, width: int, pages: int,
                 join_bits: int = WINDOW_BITS) -> list[list[Span]]:
    """For each page, its runs of changed columns (first, last); runs closer than a new
    window's cost (`join_bits`) are joined: resending a few unchanged bytes is cheaper."""
    runs: list[list[Span]] = []
    for p in range(pages):
        lo = p * width
        page: list[Span] = []
        if old[lo:lo + width] != new[lo:lo + width]:
            for c in range(width):
                if old[lo + c] == new[lo + c]:
                    continue
                if page and (c - page[-1][1] - 1) * BYTE_BITS <= join_bits:
                    page[-1] = (page[-1][0], c)
                else:
                    page.append((c, c))
        runs.append(page)
    return runs


def _clusters(spans: list[Span], pages: int) -> list[Span]:
    """Column ranges covering `spans` for a window `pages` tall: overlapping ranges merge, and
    so do ranges whose gap costs less to resend than another window on the same pages."""
    out: list[Span] = []
    for c0, c1 in sorted(spans):
        if out and (c0 - out[-1][1] - 1) * BYTE_BITS * pages <= NEXT_WINDOW_BITS:
            out[-1] = (out[-1][0], max(out[-1][1], c1))
        else:
            out.append((c0, c1))
    return out


def plan_windows(runs: list[list[Span]]) -> list[Window]:
    """Address windows covering every changed run at the least bus time: the pages are cut
    into stretches (a small dynamic programme over the 8 pages); each stretch gets one window
    per cluster of changed columns, as tall as the stretch (the pointer wraps from c1 of one
    page to c0 of the next), which resends the unchanged bytes inside it. The windows of one
    stretch share their pages, so all but its first set only the columns (`NEXT_WINDOW_BITS`)."""
    n = len(runs)
    best = [0] * (n + 1)                       # bit times to send the changes of pages < i
    came: list[tuple[int, list[Window]]] = [(0, [])] * (n + 1)
    for i in range(1, n + 1):
        if not runs[i - 1]:
            best[i], came[i] = best[i - 1], (i - 1, [])
            continue
        best[i] = -1
        spans: list[Span] = []
        for j in range(i - 1, -1, -1):         # windows over pages j..i-1
            spans += runs[j]
            if not runs[j]:
                continue
            height = i - j
            clusters = _clusters(spans, height)
            cost = (best[j] + WINDOW_BITS + NEXT_WINDOW_BITS * (len(clusters) - 1)
                    + sum(BYTE_BITS * height * (c1 - c0 + 1) for c0, c1 in clusters))
            if best[i] < 0 or cost < best[i]:
                best[i], came[i] = cost, (j, [(c0, c1, j, i - 1) for c0, c1 in clusters])
    windows: list[Window] = []
    i = n
    while i > 0:
        i, chosen = came[i]
        windows[:0] = chosen
    return windows


Transfer = tuple[list[int], bytes]   # one command transfer (may be empty) and one data transfer

HORIZONTAL, PAGE = 0x00, 0x02        # MEMORYMODE arguments: horizontal and page addressing
SET_PAGE, SET_LOW_COLUMN, SET_HIGH_COLUMN = 0xB0, 0x00, 0x10   # page addressing's pointer commands
PAGE_RUN_BITS = transfer_bits(2) + transfer_bits(0)   # a run's column command, and its data's header
MODE_SWITCH_BITS = 2 * 9   # MEMORYMODE and its argument, riding on a command transfer


def page_mode_transfers(buf: bytes, runs: list[list[Span]], width: int, pointer: tuple[int, int] | None,
                        col_offset: int = 0) -> tuple[list[Transfer], tuple[int, int] | None]:
    """Page addressing (the SH1106's only mode, one of the SSD1306's): per changed run, a command
    setting only the parts of the pointer (page; column low and high nibble, `col_offset` being
    where the glass starts in RAM) that differ from where it already is, then the run's bytes.
    Returns the transfers and where the pointer ends (None: not known)."""
    out: list[Transfer] = []
    for page, spans in enumerate(runs):
        for c0, c1 in spans:
            col = c0 + col_offset
            cmd: list[int] = []
            if pointer is None or pointer[0] != page:
                cmd.append(SET_PAGE | page)
            if pointer is None or pointer[1] & 0x0F != col & 0x0F:
                cmd.append(SET_LOW_COLUMN | (col & 0x0F))
            if pointer is None or pointer[1] >> 4 != col >> 4:
                cmd.append(SET_HIGH_COLUMN | (col >> 4))
            out.append((cmd, buf[page * width + c0:page * width + c1 + 1]))
            pointer = (page, col + c1 - c0 + 1)
    return out, pointer


def transfers_bits(transfers: list[Transfer]) -> int:
    """The bus bit times of a plan: each non-empty command and each data transfer."""
    return sum((transfer_bits(len(cmd)) if cmd else 0) + transfer_bits(len(data)) for cmd, data in transfers)


class BusCount:
    """What a driver's frame transfers cost the bus: transfers, bytes, I2C bit times."""

    def __init__(self) -> None:
        self.transfers = self.bytes = self.bits = 0

    def add(self, n: int) -> None:
        self.transfers += 1
        self.bytes += n
        self.bits += transfer_bits(n)

    @property
    def seconds(self) -> float:
        return self.bits / BUS_HZ


def send(device: Any, transfers: list[Transfer]) -> None:
    """Put a frame's transfers on the bus: each command (if any), then its data; `device.bus`
    counts them. Shared by the SSD1306 and SH1106 drivers."""
    for cmd, data in transfers:
        if cmd:
            device.command(*cmd)
            device.bus.add(len(cmd))
        device.data(list(data))
        device.bus.add(len(data))


class DirtySSD1306(ssd1306):  # type: ignore[misc]
    """luma's ssd1306 (same constructor, same set-up) whose `display()` sends only changes."""

    def __init__(self, serial_interface: Any = None, width: int = 128, height: int = 64,
                 rotate: int = 0, **kwargs: Any) -> None:
        self._panel: bytes | None = None       # what the panel holds, when known
        self._mode: int | None = HORIZONTAL    # the addressing mode (luma's set-up selects horizontal)
        self._window: Window | None = None     # horizontal: the controller's address window, when known
        self._pointer: tuple[int, int] | None = None   # page addressing: (page, column), when known
        self.bus = BusCount()                  # what frame transfers cost
        super().__init__(serial_interface, width, height, rotate, **kwargs)

    @property
    def bytes_sent(self) -> int:
        return self.bus.bytes

    def invalidate(self) -> None:
        """Forget what the panel holds: the next frame is sent whole."""
        self._panel = None
        self._mode = self._window = self._pointer = None

    def display(self, image: Image.Image) -> None:
        assert image.mode == self.mode
        assert image.size == self.size
        new = page_bytes(self.preprocess(image), self._pages)
        old, self._panel = self._panel, None   # unknown until the transfers complete
        mode, window, pointer = self._mode, self._window, self._pointer
        self._mode = self._window = self._pointer = None
        if old is None:
            plan, window = self._window_plan(new, [(0, self._w - 1, 0, self._pages - 1)], None)
            mode_wanted = HORIZONTAL
        else:
            # Two plans, the one of fewer bit times wins: address windows in horizontal mode
            # (several pages in one transfer), or runs in page mode (a 1-3 byte command each).
            windows = plan_windows(changed_runs(old, new, self._w, self._pages))
            h_plan, h_window = self._window_plan(new, windows, window if mode == HORIZONTAL else None)
            runs = changed_runs(old, new, self._w, self._pages, join_bits=PAGE_RUN_BITS)
            p_plan, p_pointer = page_mode_transfers(new, runs, self._w, pointer if mode == PAGE else None,
                                                    self._colstart)
            h_bits = transfers_bits(h_plan) + (MODE_SWITCH_BITS if mode != HORIZONTAL else 0)
            p_bits = transfers_bits(p_plan) + (MODE_SWITCH_BITS if mode != PAGE else 0)
            if h_bits <= p_bits:
                plan, window, mode_wanted = h_plan, h_window, HORIZONTAL
            else:
                plan, pointer, mode_wanted = p_plan, p_pointer, PAGE
        if plan and mode != mode_wanted:       # the switch rides on the first command transfer
            plan[0] = ([self._const.MEMORYMODE, mode_wanted] + plan[0][0], plan[0][1])
        send(self, plan)
        if plan:                               # else nothing changed, nor did the controller
            mode = mode_wanted
            if mode == HORIZONTAL:
                pointer = None
            else:
                window = None
                if pointer is not None and pointer[1] >= self._colstart + self._w:
                    pointer = None             # the column pointer wrapped: where to is not relied on
        self._mode, self._window, self._pointer = mode, window, pointer
        self._panel = new

    def _window_plan(self, buf: bytes, windows: list[Window], held: Window | None) -> tuple[list[Transfer], Window | None]:
        """Horizontal addressing: per window, COLUMNADDR and PAGEADDR (either left out when the
        controller already holds it), then its bytes. Returns the transfers and the window held
        after them (the pointer wraps back to a window's start once it is written whole)."""
        out: list[Transfer] = []
        w = self._w
        for c0, c1, p0, p1 in windows:
            cmd: list[int] = []
            if held is None or held[:2] != (c0, c1):
                cmd += [self._const.COLUMNADDR, self._colstart + c0, self._colstart + c1]
            if held is None or held[2:] != (p0, p1):
                cmd += [self._const.PAGEADDR, p0, p1]
            out.append((cmd, b"".join(buf[p * w + c0:p * w + c1 + 1] for p in range(p0, p1 + 1))))
            held = (c0, c1, p0, p1)
        return out, held
