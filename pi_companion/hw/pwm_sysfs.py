"""The kernel's PWM through sysfs (`/sys/class/pwm`): which channel drives a GPIO, and a tone on it.

A tone written here is a period and a duty that the PWM block keeps by itself: no thread, no
wake-up while it sounds. Which channel drives a pin is read, never assumed: a BCM283x/BCM2711
PWM chip (`brcm,bcm2835-pwm`) whose device-tree pin groups (`pinctrl-0`) route that GPIO to
that channel's function (`dtoverlay=pwm,pin=18,func=2` routes GPIO18 to channel 0). A chip
that routes other pins (the audio jack's 40/41) is not taken for ours.

The kernel's rules, from its sysfs ABI and `pwm_apply_state`, that every write here keeps:
- `export` makes `pwmM/` during the write, but its files belong to root until udev gives them
  to the gpio group: the first write is retried until it is taken, for `wait_s` at most;
- `export` of a channel already exported is EBUSY: a `pwmM/` left by an earlier run is taken
  over (its state read back); EBUSY with no `pwmM/` is a kernel driver holding the channel;
- a state with period 0, or duty_cycle above period, is EINVAL: the period is written before
  the duty, except when the new period is shorter than the duty already set;
- every attribute is written whole, one decimal number a write (open, write, close).

Any failed write is a `PWMError` (an OSError whose text names the file): the caller decides
whether the tone falls back to the software PWM or stays silent.
"""
from __future__ import annotations

import errno
import os
import time
from dataclasses import dataclass
from pathlib import Path

SYS = Path("/sys")
COMPATIBLE = "brcm,bcm2835-pwm"
# GPIO -> (channel, brcm,function value of the alternate function that routes it to the PWM);
# the BCM2835 peripherals manual's table, as the Raspberry Pi `pwm` overlay lists it.
PWM_PINS: dict[int, tuple[int, int]] = {12: (0, 4), 18: (0, 2), 40: (0, 4),
                                        13: (1, 4), 19: (1, 2), 41: (1, 4), 45: (1, 4)}
# A period the channel holds while no tone has been asked for yet (440 Hz): the kernel refuses
# any write to a channel whose period is 0.
IDLE_PERIOD_NS = 2_272_727
RETRY_S = 0.005
# How long an exported channel's files may stay root's before the group has them. udev's rule
# usually takes milliseconds, but at boot it works through the coldplug beside the daemon's
# start: on an emulated Pi 3 with a busy host it took over 1 s, and the daemon fell back to the
# software PWM for the whole session. Waited only at start, before READY=1.
UDEV_WAIT_S = 5.0


class PWMError(OSError):
    """A sysfs write or read the kernel refused (or a file that is not there)."""


@dataclass(frozen=True)
class Route:
    """GPIO `gpio` is driven by `channel` of the PWM chip at `chip` (a /sys/class/pwm entry)."""
    chip: Path
    channel: int
    gpio: int

    @property
    def name(self) -> str:
        return f"{self.chip.name}/pwm{self.channel}"


def _cells(path: Path) -> list[int]:
    """A device-tree property of big-endian 32-bit cells; [] if absent or unreadable."""
    try:
        raw = path.read_bytes()
    except OSError:
        return []
    return [int.from_bytes(raw[i:i + 4], "big") for i in range(0, len(raw) - len(raw) % 4, 4)]


def _strings(path: Path) -> list[str]:
    try:
        raw = path.read_bytes()
    except OSError:
        return []
    return [s.decode("ascii", "replace") for s in raw.split(b"\0") if s]


def routed_pins(node: Path) -> dict[int, int]:
    """{GPIO: brcm,function} of the pin groups a device-tree node's `pinctrl-0` names, looked up
    by phandle among the children of its sibling GPIO controllers."""
    wanted = set(_cells(node / "pinctrl-0"))
    pins: dict[int, int] = {}
    if not wanted:
        return pins
    try:
        node = node.resolve()             # of_node is a link: its siblings are the tree's
        controllers = [d for d in node.parent.iterdir() if (d / "gpio-controller").exists()]
    except OSError:
        return pins
    for controller in controllers:
        for group in sorted(p for p in controller.iterdir() if p.is_dir()):
            phandle = _cells(group / "phandle") or _cells(group / "linux,phandle")
            if not phandle or phandle[0] not in wanted:
                continue
            numbers, functions = _cells(group / "brcm,pins"), _cells(group / "brcm,function")
            for i, pin in enumerate(numbers):
                if functions:
                    pins[pin] = functions[i] if len(functions) == len(numbers) else functions[0]
    return pins


def _chip_number(path: Path) -> int:
    digits = path.name.removeprefix("pwmchip")
    return int(digits) if digits.isdigit() else 1 << 30


def find(gpio: int, sysfs: Path = SYS) -> tuple[Route | None, str]:
    """The PWM channel that drives `gpio`, or None and why not (one line, with what to add)."""
    if gpio not in PWM_PINS:
        return None, (f"GPIO{gpio} has no PWM function (the PWM pins are "
                      f"{', '.join(map(str, sorted(PWM_PINS)))})")
    channel, function = PWM_PINS[gpio]
    chips = sorted((sysfs / "class/pwm").glob("pwmchip*"), key=_chip_number)
    seen = []
    for chip in chips:
        node = chip / "device/of_node"
        compatible = _strings(node / "compatible")
        if COMPATIBLE not in compatible:
            seen.append(f"{chip.name} is {compatible[0] if compatible else 'no device-tree chip'}")
            continue
        routed = routed_pins(node)
        if routed.get(gpio) == function:
            return Route(chip, channel, gpio), ""
        seen.append(f"{chip.name} routes " + (", ".join(f"GPIO{p}" for p in sorted(routed)) or "no pin"))
    why = "; ".join(seen) if seen else f"no PWM chip in {sysfs / 'class/pwm'}"
    return None, (f"no PWM on GPIO{gpio} ({why}): add dtoverlay=pwm,pin={gpio},func={function} "
                  "to /boot/firmware/config.txt and reboot")


class Channel:
    """One exported PWM channel. `tone`, `level` and `off` write only what changes; the state
    written last is kept (`period`, `duty`, `enabled`, in ns). `close` disables and unexports."""

    def __init__(self, route: Route, wait_s: float = UDEV_WAIT_S) -> None:
        self.route = route
        self.dir = route.chip / f"pwm{route.channel}"
        self.period, self.duty, self.enabled = 0, 0, False
        self.writes = 0
        taken_over = False
        try:
            self._write_to(route.chip / "export", route.channel)
        except PWMError as err:
            if err.errno != errno.EBUSY:
                raise
            if not self.dir.is_dir():
                raise PWMError(errno.EBUSY, f"{route.name}: held by a kernel driver (export: EBUSY)") from None
            taken_over = True
        deadline = time.monotonic() + wait_s
        while True:
            try:
                self._settle(taken_over)
                return
            except PWMError as err:
                # pwmM/ is made during the export's write; its files are root's until udev has
                # handed them to the group.
                if err.errno not in (errno.ENOENT, errno.EACCES, errno.EPERM) or time.monotonic() >= deadline:
                    if not taken_over:
                        self._unexport()
                    if err.errno in (errno.EACCES, errno.EPERM):
                        raise PWMError(err.errno, f"{err.strerror} for {wait_s:g} s (no udev rule "
                                       "giving it to the gpio group?)") from None
                    raise
                time.sleep(RETRY_S)

    def _settle(self, taken_over: bool) -> None:
        """A known, silent state: the state left by an earlier run read back and disabled, or a
        fresh channel given a period."""
        if taken_over:
            self.period, self.duty = self._read("period"), self._read("duty_cycle")
            self.enabled = self._read("enable") == 1
            self.off()
        if self.period == 0:
            self._write("period", IDLE_PERIOD_NS)
            self.period = IDLE_PERIOD_NS

    # -- what a pin asks for ----------------------------------------------------------------
    def tone(self, frequency: float, duty: float) -> None:
        """Sound `frequency` Hz with `duty` (0..1) of each period high."""
        period = max(2, round(1e9 / frequency))
        self._set(period, min(period, round(period * duty)))

    def level(self, high: bool) -> None:
        """A steady level: high is a duty of the whole period, low is the channel disabled."""
        if high:
            self._set(self.period, self.period)
        else:
            self.off()

    def off(self) -> None:
        if self.enabled:
            self._write("enable", 0)
            self.enabled = False

    def close(self) -> None:
        """Disable and unexport; a failure here is not reported (the process is letting go)."""
        try:
            self.off()
        except PWMError:
            pass
        self._unexport()

    # -- the writes -------------------------------------------------------------------------
    def _set(self, period: int, duty: int) -> None:
        if period != self.period and period < self.duty:
            self._write("duty_cycle", duty)      # shorter than the duty set: the duty first
            self.duty = duty
        if period != self.period:
            self._write("period", period)
            self.period = period
        if duty != self.duty:
            self._write("duty_cycle", duty)
            self.duty = duty
        if not self.enabled:
            self._write("enable", 1)
            self.enabled = True

    def _unexport(self) -> None:
        try:
            self._write_to(self.route.chip / "unexport", self.route.channel)
        except PWMError:
            pass

    def _write(self, name: str, value: int) -> None:
        self._write_to(self.dir / name, value)

    def _write_to(self, path: Path, value: int) -> None:
        self.writes += 1
        try:
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_CLOEXEC | os.O_NOCTTY)
            try:
                os.write(fd, b"%d\n" % value)
            finally:
                os.close(fd)
        except OSError as err:
            raise PWMError(err.errno, f"{self._where(path)}: {err.strerror}") from None

    def _read(self, name: str) -> int:
        path = self.dir / name
        try:
            return int(path.read_text().split()[0])
        except (OSError, ValueError, IndexError) as err:
            raise PWMError(getattr(err, "errno", None) or errno.EIO,
                           f"{self._where(path)}: {getattr(err, 'strerror', None) or 'not a number'}") from None

    def _where(self, path: Path) -> str:
        try:
            return f"{self.route.chip.name}/{path.relative_to(self.route.chip)}"
        except ValueError:
            return str(path)
