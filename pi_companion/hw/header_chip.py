"""Which /dev/gpiochipN drives a Raspberry Pi's 40-pin header, found by the chip's label, never
by its number (a Pi 5's header is gpiochip4 on some kernels and gpiochip0 on others).

The labels, most preferred first: `pinctrl-rp1` (Pi 5, Pi 500, CM5: the header is on the RP1),
`pinctrl-bcm2711` (Pi 4, Pi 400, CM4), `pinctrl-bcm2835` (Pi 3, Zero 2 W and older). Among chips
of one label the lowest number wins. `pinctrl-bcm2712` is never taken: it is a Pi 5's SoC's own
GPIO, not the header's, and driving it would toggle pins no button is on; a Pi 5 that shows it
and no `pinctrl-rp1` gets the error (the RP1 driver is missing), with a hint.

`choose` is pure (the chips seen in, the one to use or the error out); `find` reads the chips.
"""
from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from .gpio_cdev import LineError, chip_info

HEADER_LABELS = ("pinctrl-rp1", "pinctrl-bcm2711", "pinctrl-bcm2835")
SOC_ONLY = "pinctrl-bcm2712"

Chip = tuple[str, str, int]          # (path, label, lines); lines -1: the label is why it is unread


class NoHeaderChip(LineError):
    """No chip with a Pi header's label (one line naming every chip seen)."""


def _number(path: str) -> int:
    found = re.search(r"(\d+)$", path)
    return int(found.group(1)) if found else -1


def choose(chips: list[Chip]) -> Chip:
    """The header's chip among `chips`; NoHeaderChip naming them all if none is."""
    ordered = sorted(chips, key=lambda chip: (_number(chip[0]), chip[0]))
    for label in HEADER_LABELS:
        for chip in ordered:
            if chip[1] == label:
                return chip
    seen = ", ".join(f'{os.path.basename(path)} "{label}" {lines} lines' if lines >= 0
                     else f"{os.path.basename(path)} ({label})"
                     for path, label, lines in ordered) or "no GPIO chip at all"
    hint = ("; pinctrl-bcm2712 is a Pi 5's SoC, not its header: is the RP1 driver loaded?"
            if any(chip[1] == SOC_ONLY for chip in chips) else "")
    raise NoHeaderChip(errno.ENODEV, f"no Raspberry Pi header GPIO chip (saw {seen}){hint}")


def find(dev: Path = Path("/dev")) -> Chip:
    """Every `dev`/gpiochipN's label read from the chip (GPIO_GET_CHIPINFO_IOCTL), then `choose`.
    A chip that cannot be opened or asked is listed with its reason as its label."""
    chips: list[Chip] = []
    for path in sorted(dev.glob("gpiochip*"), key=lambda p: (_number(p.name), p.name)):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except OSError as err:
            chips.append((str(path), f"cannot open: {err.strerror or err}", -1))
            continue
        try:
            _, label, lines = chip_info(fd, "chip")
        except LineError as err:
            chips.append((str(path), str(err.strerror).removeprefix("chip: "), -1))
            continue
        finally:
            os.close(fd)
        chips.append((str(path), label, lines))
    return choose(chips)
