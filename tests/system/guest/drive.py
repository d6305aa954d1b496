"""Presses the box's buttons through gpio-sim and watches its lamps, inside the system test VM.

Run with the installed venv's Python (it reads the pin map from the installed package):
    drive.py round FIRST SECOND   FIRST presses, SECOND 1 ms later; the box must pick FIRST
                                  (kernel edge timestamps), then YES; prints JSON: the bounds
                                  of the gap between the two edges and the latencies
    drive.py hold BUTTON SECONDS  press, hold, release
    drive.py lamps                the lit player lamps, e.g. "P2 P4"
Writing "pull-down" to a line's sim_gpioN/pull grounds it, as a pressed button does; the lamps
are the box's output lines, read back through sim_gpioN/value.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from pi_companion.hw.pinmap import load_pinmap

SYSFS = Path(Path("/run/gpio-sim/sysfs").read_text().strip())
PINS = load_pinmap()
PLAYERS = sorted(k for k in PINS if k.startswith("P") and k[1:].isdigit())
LOG = Path("/var/lib/pi-companion/current.log")
GAP_S = 0.001


def pull(button: str) -> int:
    return os.open(SYSFS / f"sim_gpio{PINS[button]}" / "pull", os.O_WRONLY)


def press(button: str) -> None:
    fd = pull(button)
    os.write(fd, b"pull-down")
    os.close(fd)


def release(button: str) -> None:
    fd = pull(button)
    os.write(fd, b"pull-up")
    os.close(fd)


def lamps() -> frozenset[str]:
    lit = set()
    for player in PLAYERS:
        led = f"LED{player[1:]}"
        if led in PINS and (SYSFS / f"sim_gpio{PINS[led]}" / "value").read_text().strip() == "1":
            lit.add(player)
    return frozenset(lit)


def wait_lamps(want: frozenset[str], what: str, timeout: float = 15.0) -> int:
    """Spin until the lamps show `want`; the monotonic ns when they did."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if lamps() == want:
            return time.monotonic_ns()
        time.sleep(0.0002)
    sys.exit(f"FAIL: {what}: lamps {' '.join(sorted(lamps())) or 'none'}, "
             f"expected {' '.join(sorted(want)) or 'none'} within {timeout:.0f} s")


def round_(first: str, second: str) -> dict[str, float]:
    seekers = lamps()
    if first not in seekers or second not in seekers:
        sys.exit(f"FAIL: {first} and {second} must both be seekers; lit: {sorted(seekers)}")
    size = LOG.stat().st_size
    a, b = pull(first), pull(second)
    t0 = time.monotonic_ns()
    os.write(a, b"pull-down")              # the kernel stamps this edge now ...
    t0_end = time.monotonic_ns()
    while time.monotonic_ns() - t0_end < GAP_S * 1e9:
        pass
    t1 = time.monotonic_ns()
    os.write(b, b"pull-down")              # ... and this one at least 1 ms later
    t1_end = time.monotonic_ns()
    t_logged = None
    end = time.monotonic() + 15.0
    while time.monotonic() < end:          # the first edge is fsynced into the log ...
        if t_logged is None and LOG.stat().st_size > size:
            t_logged = time.monotonic_ns()
        if lamps() == {first}:             # ... and the box lights the winner's lamp alone
            break
        time.sleep(0.0002)
    else:
        sys.exit(f"FAIL: after {first} then {second}: lamps {sorted(lamps())}, expected only {first}")
    t_decided = time.monotonic_ns()
    t_logged = t_logged or t_decided
    os.write(a, b"pull-up")
    os.write(b, b"pull-up")
    os.close(a)
    os.close(b)
    time.sleep(0.1)
    press("YES")
    time.sleep(0.1)
    t_yes = time.monotonic_ns()
    release("YES")
    # YES: the winner scores and becomes Grab Master; everybody else seeks again.
    t_ack = wait_lamps(frozenset(PLAYERS[: len(seekers) + 1]) - {first}, f"YES for {first}")
    # Where the kernel's stamps of the two edges can lie, on the same clock (CLOCK_MONOTONIC):
    # each inside its own write() call. A loaded host can stretch the 1 ms gap; the box's
    # reading of the gap must fall in these bounds all the same.
    return {"gap_min_ms": (t1 - t0_end) / 1e6, "gap_max_ms": (t1_end - t0) / 1e6,
            "edge_to_logged_ms": (t_logged - t0) / 1e6,
            "edge_to_decision_ms": (t_decided - t0) / 1e6,
            "yes_to_ack_ms": (t_ack - t_yes) / 1e6}


def main(argv: list[str]) -> None:
    if argv[0] == "round":
        print(json.dumps(round_(argv[1], argv[2])))
    elif argv[0] == "hold":
        press(argv[1])
        time.sleep(float(argv[2]))
        release(argv[1])
    elif argv[0] == "lamps":
        print(" ".join(sorted(lamps())))
    else:
        sys.exit(f"unknown command {argv[0]}")


if __name__ == "__main__":
    main(sys.argv[1:])
