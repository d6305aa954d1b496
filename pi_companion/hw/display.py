"""The OLED: an SSD1306 or SH1106 over I2C on the Pi, luma's dummy device elsewhere; frames sent only on change.

A display that is missing or fails at runtime never stops the game: the error is logged once,
frames are dropped, and the device is reopened after a back-off.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from PIL import Image

log = logging.getLogger(__name__)
RETRY_S = 5.0


def open_device(driver: str, port: int = 1, address: int = 0x3C, rotate: int = 0) -> Any:
    """A luma device: `ssd1306` or `sh1106` (I2C; our dirty-page drivers, which send only the
    changed parts of each frame) or `dummy` (keeps the last frame in `.image`)."""
    # luma is imported only as a device opens (about 0.25-0.5 s of imports): `--display none`,
    # `replay`, `status` and the other tools never load it.
    if driver == "dummy":
        from luma.core.device import dummy
        return dummy(width=128, height=64, mode="1")
    if driver not in ("ssd1306", "sh1106"):
        raise ValueError(f"unknown display driver {driver!r}")
    from luma.core.interface.serial import i2c
    serial = i2c(port=port, address=address)
    if driver == "sh1106":
        from .sh1106_dirty import DirtySH1106
        return DirtySH1106(serial, width=128, height=64, rotate=rotate)
    from .ssd1306_dirty import DirtySSD1306
    return DirtySSD1306(serial, width=128, height=64, rotate=rotate)


class Display:
    """Shows PIL frames on a luma device, skipping unchanged frames and surviving faults."""

    def __init__(self, opener: Callable[[], Any] | None) -> None:
        self.opener = opener
        self.device: Any = None
        self.last: Any = None            # the core image of the last frame sent
        self.failed_at: float | None = None
        self.sent = 0
        self.skipped = 0
        self.errors = 0
        self.down = False
        if opener is not None:
            self._open(0.0)

    @property
    def ok(self) -> bool:
        return self.device is not None

    def _open(self, now: float) -> None:
        assert self.opener is not None
        try:
            self.device = self.opener()
            self.failed_at = None
            self.last = None
        except Exception as err:  # no display: play on without one
            self._fail(now, f"display unavailable: {err}")

    def _fail(self, now: float, message: str) -> None:
        if not self.down:
            log.warning("%s (the game goes on; retrying every %.0f s)", message, RETRY_S)
        self.down = True
        self.device = None
        self.failed_at = now
        self.errors += 1

    def retry_at(self) -> float | None:
        """When a failed display is next tried again (None: it is up, or there is none)."""
        if self.device is not None or self.opener is None or self.failed_at is None:
            return None
        return self.failed_at + RETRY_S

    def show(self, frame: Image.Image, now: float) -> bool:
        """Send `frame` if it differs from the last one sent; True if it was sent."""
        if self.device is None:
            if self.opener is None or (self.failed_at is not None and now - self.failed_at < RETRY_S):
                return False
            self._open(now)
            if self.device is None:
                return False
        # Compared in Pillow's C code (a difference image's bounding box, ~5 us here): packing
        # the frame's bits with `tobytes` to compare them cost ~45 us, a fifth of a live count's
        # frame.
        core, last = frame.im, self.last
        if (last is not None and last.mode == core.mode and last.size == core.size
                and core.chop_difference(last).getbbox(False) is None):
            self.skipped += 1
            return False
        try:
            self.device.display(frame)
        except Exception as err:
            self._fail(now, f"display error: {err}")
            return False
        if self.down:
            log.info("display is back after %d errors", self.errors)
            self.down = False
        self.last = core.copy()         # (a copy: the frame may be drawn on after it is shown)
        self.sent += 1
        return True

    def close(self, farewell: Image.Image | None = None) -> None:
        if self.device is None:
            return
        try:
            if farewell is not None:
                self.device.display(farewell)
            else:
                self.device.clear()
            self.device.persist = True   # luma's exit cleanup then leaves the farewell frame on
        except Exception as err:
            log.warning("display: %s", err)
