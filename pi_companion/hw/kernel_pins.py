"""gpiozero's lgpio pin factory with input edges read from the kernel's line events.

`KernelEdgeFactory` is an `LGPIOFactory` whose pins (`KernelEdgePin`) are lgpio's in every way
but one: while a pin watches for edges (a device set `when_changed`), lgpio lets go of the line
and the pin holds a line request of its own (gpio_cdev.py) with edge detection, its pull as
bias, and the kernel's timestamps; one `EdgeReader` thread waits on all of them without a
timeout. Its level is read from that request, and when the pin stops watching (or turns into an
output, or closes) the line goes back to lgpio. Outputs (LEDs, the piezo's tones) are lgpio's.

Only this module imports lgpio's factory: the pure decoding and the reader are in gpio_cdev.py.
"""
from __future__ import annotations

import os
from typing import Any

from gpiozero.exc import PinFixedPull, PinInvalidBounce, PinInvalidPull
from gpiozero.pins.lgpio import LGPIOFactory, LGPIOPin
from gpiozero.pins.local import LocalPiPin

import lgpio                      # after gpiozero's module, which patches lgpio's old names

from .gpio_cdev import BIAS_FLAGS, EdgeReader, LineError, LineEvent, read_value, request_line, set_config

# lgpio's pull flags, for giving a line back with the pull it had
LGPIO_PULL = {"up": lgpio.SET_PULL_UP, "down": lgpio.SET_PULL_DOWN, "floating": lgpio.SET_PULL_NONE}


class KernelEdgeFactory(LGPIOFactory):  # type: ignore[misc]
    """lgpio for everything, edges from the kernel's line requests (one reader thread)."""

    def __init__(self, chip: int | None = None) -> None:
        super().__init__(chip)
        self.pin_class = KernelEdgePin
        self.chip_path = f"/dev/gpiochip{self._chip}"
        try:
            self.chip_fd = os.open(self.chip_path, os.O_RDWR | os.O_CLOEXEC)
        except OSError as err:
            super().close()
            raise LineError(err.errno, f"{self.chip_path}: {err.strerror}") from None
        self.edges = EdgeReader()

    def close(self) -> None:
        super().close()                   # the pins first: each gives its request back
        self.edges.close()
        if self.chip_fd >= 0:
            os.close(self.chip_fd)
            self.chip_fd = -1


class KernelEdgePin(LGPIOPin):  # type: ignore[misc]
    """An lgpio pin that, while it watches for edges, holds the line through its own request."""

    factory: KernelEdgeFactory

    def __init__(self, factory: KernelEdgeFactory, info: Any) -> None:
        self._req = -1                    # our line request's fd while we watch for edges
        self._pull = "floating"           # lgpio claims the line with no pull (LGPIOPin)
        super().__init__(factory, info)

    # -- the line while we hold it ----------------------------------------------------------
    def _edge_names(self) -> str:
        return self._get_edges()

    def _enable_event_detect(self) -> None:
        handle = self.factory._handle
        lgpio.gpio_free(handle, self._number)
        try:
            self._req = request_line(self.factory.chip_fd, self._number, bias=self._pull,
                                     edges=self._edge_names(), debounce_us=self._bounce or 0,
                                     where=f"{self.factory.chip_path} (GPIO{self._number})")
        except LineError:
            lgpio.gpio_claim_input(handle, self._number, LGPIO_PULL[self._pull])
            raise
        self.factory.edges.add(self._req, self._on_event, self._number)

    def _disable_event_detect(self) -> None:
        if self._req < 0:
            return
        self._release()
        if self.factory._handle is not None:
            lgpio.gpio_claim_input(self.factory._handle, self._number, LGPIO_PULL[self._pull])

    def _release(self) -> None:
        fd, self._req = self._req, -1
        self.factory.edges.remove(fd)
        os.close(fd)

    def _on_event(self, event: LineEvent) -> None:
        # The kernel's timestamp (CLOCK_MONOTONIC, ns), in the factory's ticks (seconds), as
        # LGPIOPin passes lgpio's: never the time this thread read it.
        # (LGPIOPin's own _call_when_changed takes lgpio's callback arguments: past it.)
        LocalPiPin._call_when_changed(self, event.timestamp_ns / 1e9, int(event.rising))

    # -- lgpio's methods, answered from our request while we hold the line -------------------
    def close(self) -> None:
        if self._req >= 0:
            self._release()
        super().close()

    def _get_function(self) -> str:
        return "input" if self._req >= 0 else super()._get_function()

    def _set_function(self, value: str) -> None:
        if self._req >= 0:
            if value == "input":
                return
            self._release()               # an output: lgpio claims it again below
        super()._set_function(value)

    def _get_state(self) -> bool:
        return read_value(self._req) if self._req >= 0 else super()._get_state()

    def _get_pull(self) -> str:
        return self._pull if self._req >= 0 else super()._get_pull()

    def _set_pull(self, value: str) -> None:
        if self._req < 0:
            super()._set_pull(value)
            self._pull = value
            return
        if value not in BIAS_FLAGS:
            raise PinInvalidPull(f'invalid pull "{value}" for pin {self!r}')
        if self.info.pull not in (value, ""):
            raise PinFixedPull(f"{self!r} has a physical pull-{self.info.pull} resistor")
        set_config(self._req, value, self._edge_names(), self._bounce or 0)
        self._pull = value

    def _set_bounce(self, value: float | None) -> None:
        if self._req < 0:
            super()._set_bounce(value)
            return
        if value is not None and value < 0:
            raise PinInvalidBounce("bounce must be 0 or greater")
        self._bounce = int((value or 0) * 1000000)
        set_config(self._req, self._pull, self._edge_names(), self._bounce)
