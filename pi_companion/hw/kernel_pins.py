"""gpiozero's pins on a Pi, driven through the kernel's GPIO character device and nothing else.

`KernelFactory` is a gpiozero pin factory whose pins (`KernelPin`) each hold one line request
(gpio_cdev.py) for as long as the pin exists, reconfigured in place as gpiozero changes its
function, pull, edges or bounce:

- an input reads its level from the request; while a device watches it (`when_changed`) the
  request detects edges, and one `EdgeReader` thread, blocking in `poll` with no timeout, hands
  each edge on with the kernel's own `timestamp_ns` (CLOCK_MONOTONIC, the factory's ticks);
- an output (a player's LED) is driven with the request's set-values ioctl;
- a PWM output (the piezo's tones) toggles the line from a thread of its own that runs only
  while a tone plays (a frequency set and a duty strictly between 0 and 1), and is gone
  between tones;
- except a pin the device tree routes to a PWM channel (`dtoverlay=pwm,pin=18,func=2`;
  pwm_sysfs.py), chosen once as the factory starts: that pin (`ChannelPin`) holds no line
  request, since requesting the line would take the pin back from the PWM, and its tones and
  levels are the kernel's PWM's. A failed sysfs write, or a call for an input, hands the pin
  over for good to a line request and the software PWM, with one log line.

So an idle box has no thread that wakes: lgpio, which this replaces by default, starts a thread
on opening the chip that wakes 50 times a second for the life of the process (and its alert
thread polls every 0.5 ms while any edge is watched). `edges = "lgpio"` in the config keeps
gpiozero's lgpio factory instead.
"""
from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
import time
from typing import Any, Callable

from gpiozero.exc import (PinFixedPull, PinInvalidBounce, PinInvalidFunction, PinInvalidPull,
                          PinInvalidState, PinPWMFixedValue, PinSetInput)
from gpiozero.pins.local import LocalPiFactory, LocalPiPin

from . import header_chip, pwm_sysfs
from .gpio_cdev import (BIAS_FLAGS, EDGE_FLAGS, EdgeReader, LineError, LineEvent, chip_info,
                        read_value, request_line, set_config, write_value)

log = logging.getLogger(__name__)


class KernelFactory(LocalPiFactory):  # type: ignore[misc]
    """Every pin a line request of its own on the header's chip (header_chip.py: found by its
    label, or `chip`'s number as given); edges from one reader thread. `chip_path` and
    `chip_label` say which chip it is."""

    def __init__(self, chip: int | None = None, dev: Path = Path("/dev"),
                 sysfs: Path = pwm_sysfs.SYS) -> None:
        super().__init__()
        self.sysfs = sysfs
        label: str | None = None
        if chip is None:
            path, label, _ = header_chip.find(dev)
            chip = int(path.removeprefix(str(dev / "gpiochip")))
        self._chip = chip
        self.chip_path = str(dev / f"gpiochip{chip}")
        try:
            self.chip_fd = os.open(self.chip_path, os.O_RDWR | os.O_CLOEXEC)
        except OSError as err:
            raise LineError(err.errno, f"{self.chip_path}: {err.strerror}") from None
        if label is None:
            try:
                label = chip_info(self.chip_fd, self.chip_path)[1]
            except LineError:
                os.close(self.chip_fd)
                raise
        self.chip_label = label
        self.edges = EdgeReader()
        self.pin_class = self._new_pin
        self.tones: dict[int, str] = {}   # GPIO -> what makes its tones, for the log and doctor

    def _new_pin(self, factory: KernelFactory, info: Any) -> KernelPin | ChannelPin:
        """A pin routed to a PWM channel that exports: a ChannelPin; any other, a KernelPin."""
        number = int(info.name.removeprefix("GPIO"))
        if number not in pwm_sysfs.PWM_PINS:
            return KernelPin(factory, info)
        route, why = pwm_sysfs.find(number, self.sysfs)
        if route is not None:
            try:
                channel = pwm_sysfs.Channel(route)
            except pwm_sysfs.PWMError as err:
                why = f"{route.name} did not export: {err.strerror}"
                log.warning("GPIO%d: no hardware PWM (%s): its tones come from the software PWM",
                            number, why)
            else:
                self.tones[number] = f"hardware PWM {route.name}"
                log.info("GPIO%d: tones from the hardware PWM %s", number, route.name)
                return ChannelPin(factory, info, channel, lambda: KernelPin(factory, info))
        self.tones[number] = f"software PWM: {why}"
        return KernelPin(factory, info)

    @property
    def chip(self) -> int:
        return self._chip

    def close(self) -> None:
        pins = list(self.pins.values())   # (PiFactory.close forgets them)
        super().close()                   # every pin back to a plain input
        for pin in pins:
            if isinstance(pin, (KernelPin, ChannelPin)):
                pin.free()                # and its line or PWM channel let go
        self.edges.close()
        if self.chip_fd >= 0:
            os.close(self.chip_fd)
            self.chip_fd = -1


class KernelPin(LocalPiPin):  # type: ignore[misc]
    """One GPIO line through its own request: input (level, edges), output or software PWM."""

    factory: KernelFactory

    def __init__(self, factory: KernelFactory, info: Any) -> None:
        super().__init__(factory, info)
        self._function = "input"
        self._pull = "floating"           # claimed with no pull, as gpiozero's lgpio pins are
        self._edges = "both"
        self._bounce = 0                  # µs
        self._level = False               # an output's level
        self._watching = False            # edge detection on and the reader told
        self._pwm: tuple[float, float] | None = None   # (frequency, duty) while PWM is on
        self._tone: _SoftPWM | None = None
        self._where = f"{factory.chip_path} (GPIO{self._number})"
        self._fd = request_line(factory.chip_fd, self._number, bias="floating", edges=None,
                                where=self._where)

    # -- the request ------------------------------------------------------------------------
    def _configure(self) -> None:
        if self._function == "output":
            set_config(self._fd, "floating", None, output=self._level)
        else:
            set_config(self._fd, self._pull, self._edges if self._watching else None, self._bounce)

    def free(self) -> None:
        """Let go of the line for good (the factory is closing)."""
        self._stop_tone()
        if self._watching:
            self._watching = False
            self.factory.edges.remove(self._fd)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def close(self) -> None:
        # gpiozero keeps a pin object for the factory's life and may hand it to a new device:
        # back to a plain input, the line still held.
        if self._fd < 0:
            return
        self._stop_tone()
        self._pwm = None
        self._function, self._pull, self._bounce = "input", "floating", 0
        if self._watching:
            self._watching = False
            self.factory.edges.remove(self._fd)
        self._configure()

    # -- function and level -----------------------------------------------------------------
    def _get_function(self) -> str:
        return self._function

    def _set_function(self, value: str) -> None:
        if value not in ("input", "output"):
            raise PinInvalidFunction(f'invalid function "{value}" for pin {self!r}')
        if value == self._function:
            return
        self._stop_tone()
        self._pwm = None
        if value == "output" and self._watching:      # an output detects no edges
            self._watching = False
            self.factory.edges.remove(self._fd)
        self._function = value
        self._level = False
        self._configure()

    def _get_state(self) -> Any:
        if self._pwm is not None:
            return self._pwm[1]
        if self._function == "output":
            return self._level
        return read_value(self._fd)

    def _set_state(self, value: Any) -> None:
        if self._pwm is not None:
            if not 0 <= value <= 1:
                raise PinInvalidState(f'invalid state "{value}" for pin {self!r}')
            self._pwm = (self._pwm[0], float(value))
            self._tone_follows()
            return
        if self._function == "input":
            raise PinSetInput(f"cannot set state of pin {self!r}")
        self._level = bool(value)
        write_value(self._fd, self._level)

    # -- pull, bounce, edges ----------------------------------------------------------------
    def _get_pull(self) -> str:
        return self._pull

    def _set_pull(self, value: str) -> None:
        if self._function != "input":
            raise PinFixedPull(f"cannot set pull on non-input pin {self!r}")
        if value not in BIAS_FLAGS:
            raise PinInvalidPull(f'invalid pull "{value}" for pin {self!r}')
        if self.info.pull not in (value, ""):
            raise PinFixedPull(f"{self!r} has a physical pull-{self.info.pull} resistor")
        self._pull = value
        self._configure()

    def _get_bounce(self) -> float | None:
        return self._bounce / 1e6 if self._bounce else None

    def _set_bounce(self, value: float | None) -> None:
        if value is not None and value < 0:
            raise PinInvalidBounce("bounce must be 0 or greater")
        self._bounce = int((value or 0) * 1_000_000)
        if self._function == "input":
            self._configure()

    def _get_edges(self) -> str:
        return self._edges

    def _set_edges(self, value: str) -> None:
        if value not in EDGE_FLAGS:
            raise PinInvalidFunction(f'invalid edges "{value}" for pin {self!r}')
        self._edges = value
        if self._watching:
            self._configure()

    # -- edges ------------------------------------------------------------------------------
    def _enable_event_detect(self) -> None:
        if self._function != "input":
            self._set_function("input")
        self._watching = True
        try:
            self._configure()
        except LineError:
            self._watching = False
            raise
        self.factory.edges.add(self._fd, self._on_event, self._number)

    def _disable_event_detect(self) -> None:
        if not self._watching:
            return
        self._watching = False
        self.factory.edges.remove(self._fd)
        if self._fd >= 0:
            self._configure()

    def _on_event(self, event: LineEvent) -> None:
        # The kernel's timestamp (CLOCK_MONOTONIC, ns) in the factory's ticks (seconds, the same
        # clock): never the time this thread read it.
        LocalPiPin._call_when_changed(self, event.timestamp_ns / 1e9, int(event.rising))

    # -- PWM (the piezo) --------------------------------------------------------------------
    def _get_frequency(self) -> float | None:
        return self._pwm[0] if self._pwm is not None else None

    def _set_frequency(self, value: float | None) -> None:
        if value is not None and value > 0:
            if self._pwm is None and self._function != "output":
                raise PinPWMFixedValue(f"cannot start PWM on pin {self!r}")
            self._pwm = (float(value), self._pwm[1] if self._pwm is not None else 0.0)
            self._tone_follows()
        elif self._pwm is not None:
            self._pwm = None
            self._stop_tone()
            self._level = False
            write_value(self._fd, False)

    def _tone_follows(self) -> None:
        """A toggling thread while the duty is strictly between 0 and 1; else a steady level."""
        assert self._pwm is not None
        frequency, duty = self._pwm
        if 0 < duty < 1:
            if self._tone is None:
                self._tone = _SoftPWM(self._fd, f"pwm-gpio{self._number}", frequency, duty)
            else:
                self._tone.set(frequency, duty)
        else:
            self._stop_tone()
            self._level = duty >= 1
            write_value(self._fd, self._level)

    def _stop_tone(self) -> None:
        tone, self._tone = self._tone, None
        if tone is not None:
            tone.stop()


class ChannelPin(LocalPiPin):  # type: ignore[misc]
    """A pin the device tree routes to a PWM channel: an output whose tones and steady levels the
    channel keeps (`pwm_sysfs.Channel`), with no line request. Handed over for good to
    `line_pin()` (the pin as a line request, its tones from the software PWM) on a failed write,
    or when asked to be an input; if that fails too, the pin is silent. Each says one log line."""

    def __init__(self, factory: Any, info: Any, channel: pwm_sysfs.Channel,
                 line_pin: Callable[[], Any]) -> None:
        super().__init__(factory, info)
        self.channel: pwm_sysfs.Channel | None = channel
        self._line_pin = line_pin
        self.line: Any = None             # the pin it was handed over to
        self._pwm: tuple[float, float] | None = None
        self._level = False

    @property
    def silent(self) -> bool:
        return self.channel is None and self.line is None

    def _hand_over(self, why: str, function: str = "output") -> Any:
        """Give up the channel for a line request; the pin's state follows. None if silent."""
        channel, self.channel = self.channel, None
        if channel is not None:
            channel.close()
        try:
            line = self._line_pin()
            line.function = function
            if function == "output" and self._pwm is not None:
                line.frequency = self._pwm[0]
                line.state = self._pwm[1]
            elif function == "output":
                line.state = self._level
        except Exception as err:          # the line refused too: no sound, but no crash
            log.warning("GPIO%d is silent: %s, and its line: %s", self._number, why, err)
            return None
        log.warning("GPIO%d: %s: its tones come from the software PWM from now on", self._number, why)
        self.line = line
        return line

    def _follow(self) -> None:
        """Write the tone or level asked for to the channel, or hand over if a write fails."""
        if self.channel is None:
            return
        try:
            if self._pwm is not None and self._pwm[1] > 0:
                self.channel.tone(*self._pwm)
            elif self._pwm is not None:
                self.channel.off()
            else:
                self.channel.level(self._level)
        except pwm_sysfs.PWMError as err:
            self._hand_over(f"the hardware PWM failed ({err.strerror})")

    # -- gpiozero's pin interface -----------------------------------------------------------
    def _get_function(self) -> str:
        return self.line.function if self.line is not None else "output"

    def _set_function(self, value: str) -> None:
        if self.line is not None:
            self.line.function = value
        elif value == "input" and self.channel is not None:
            self._hand_over("asked to be an input, so no longer the PWM's", "input")
        elif value not in ("input", "output"):
            raise PinInvalidFunction(f'invalid function "{value}" for pin {self!r}')

    def _get_state(self) -> Any:
        if self.line is not None:
            return self.line.state
        return self._pwm[1] if self._pwm is not None else self._level

    def _set_state(self, value: Any) -> None:
        if self.line is not None:
            self.line.state = value
            return
        if self._pwm is not None:
            if not 0 <= value <= 1:
                raise PinInvalidState(f'invalid state "{value}" for pin {self!r}')
            self._pwm = (self._pwm[0], float(value))
        else:
            self._level = bool(value)
        self._follow()

    def _get_frequency(self) -> float | None:
        if self.line is not None:
            return self.line.frequency
        return self._pwm[0] if self._pwm is not None else None

    def _set_frequency(self, value: float | None) -> None:
        if self.line is not None:
            self.line.frequency = value
            return
        if value is not None and value > 0:
            self._pwm = (float(value), self._pwm[1] if self._pwm is not None else 0.0)
        else:
            self._pwm, self._level = None, False
        self._follow()

    def close(self) -> None:
        if self.line is not None:
            self.line.close()
            return
        self._pwm, self._level = None, False
        self._follow()

    def free(self) -> None:
        """Let go of the channel (or the line) for good: the factory is closing."""
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        if self.line is not None and hasattr(self.line, "free"):
            self.line.free()


class _SoftPWM:
    """A line toggled at a frequency and duty from a thread of its own, until `stop` (the caller
    then sets the line's level): the deadlines are absolute (a late wake shortens the next half,
    it does not drift), and a thread that fell more than a period behind starts afresh rather
    than racing to catch up."""

    def __init__(self, fd: int, name: str, frequency: float, duty: float) -> None:
        self.fd = fd
        self.set(frequency, duty)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def set(self, frequency: float, duty: float) -> None:
        self.period, self.high = 1.0 / frequency, duty / frequency

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)

    def _run(self) -> None:
        sleep, now, stopping = time.sleep, time.monotonic, self._stopping
        start = now()
        try:
            while not stopping.is_set():
                period, high = self.period, self.high
                write_value(self.fd, True)
                wait = start + high - now()
                if wait > 0:
                    sleep(wait)
                write_value(self.fd, False)
                start += period
                wait = start - now()
                if wait > 0:
                    sleep(wait)
                elif wait < -period:                  # fell behind (a busy moment): start afresh
                    start = now()
        except LineError:                             # the line went away: the tone ends
            pass
