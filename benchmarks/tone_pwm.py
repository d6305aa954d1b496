"""The piezo's tones: the kernel's PWM through sysfs (hw/pwm_sysfs.py) beside today's software
PWM (kernel_pins._SoftPWM, a thread toggling the line), in the same run.

1. A 1 s tone at 880 Hz (A5, the buzz's note), duty 0.5: the process's CPU time (every thread,
   `getrusage`) and its context switches (every wake-up of any thread, voluntary or not) from
   the tone's start to its stop, beside the same second with no tone. The hardware path is a
   `pwm_sysfs.Channel` on a directory tree standing in for /sys/class/pwm on a tmpfs (sysfs too
   lives in memory): its writes are real open/write/close calls on real files, and their cost
   is printed (a sysfs write on a Pi adds the driver's few register writes). The software path
   is today's `_SoftPWM` thread, its line write a cheap real ioctl (FIONREAD on a pipe) in place
   of the GPIO set-values ioctl, which needs a GPIO chip this machine does not have.
2. Press -> LED while a tone plays: the daemon's configuration (latency.py's `ours`: the real
   Box, its loop thread, the 2 ms settle window, the log fsynced on this disk, 50 ms idle before
   each press), p50/p99 and the loop's CPU per decision, with no tone, with the hardware tone
   held for the whole run, and with the software tone's thread toggling for the whole run; the
   three cells interleaved in blocks, so the machine's load drifts hit each alike.
"""
from __future__ import annotations

import fcntl
import os
import resource
import sys
import tempfile
import termios
import time
from pathlib import Path
from typing import Any

from harness import ROOT, median, percentile

from pi_companion.hw import kernel_pins, pwm_sysfs

sys.path.insert(0, str(ROOT / "tests"))
from helpers.pwm_tree import make_tree  # noqa: E402  (the tests' stand-in for /sys)

FREQUENCY = 880.0
TONE_S = 1.0
PRESSES = int(os.environ.get("BENCH_TONE_PRESSES", "240"))
BLOCKS = 3
WRITES = 2000


def usage() -> tuple[float, int]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, r.ru_nvcsw + r.ru_nivcsw


class Tones:
    """The two ways to hold a tone on GPIO18, on this machine: `hardware()` and `software()`
    start one and return its stop."""

    def __init__(self, where: Path) -> None:
        self.sysfs = where / "sys"
        make_tree(self.sysfs)
        route, why = pwm_sysfs.find(18, self.sysfs)
        assert route is not None, why
        self.channel = pwm_sysfs.Channel(route)
        self.pipe = os.pipe()
        self.buf = bytearray(4)

    def cheap_ioctl(self, fd: int, value: bool) -> None:
        fcntl.ioctl(self.pipe[0], termios.FIONREAD, self.buf, True)

    def hardware(self) -> Any:
        self.channel.tone(FREQUENCY, 0.5)
        return self.channel.off

    def software(self) -> Any:
        real = kernel_pins.write_value
        kernel_pins.write_value = self.cheap_ioctl  # type: ignore[assignment]
        tone = kernel_pins._SoftPWM(self.pipe[0], "pwm-gpio18", FREQUENCY, 0.5)

        def stop() -> None:
            tone.stop()
            kernel_pins.write_value = real
        return stop

    def none(self) -> Any:
        return lambda: None

    def close(self) -> None:
        self.channel.close()
        for fd in self.pipe:
            os.close(fd)


def one_second(start: Any) -> dict[str, float]:
    cpu0, switches0 = usage()
    t0 = time.perf_counter()
    stop = start()
    time.sleep(TONE_S)
    stop()
    cpu1, switches1 = usage()
    wall = time.perf_counter() - t0
    return {"cpu_ms": (cpu1 - cpu0) * 1000, "wakeups": switches1 - switches0, "wall_s": wall}


def write_cost(tones: Tones) -> dict[str, float]:
    """A note change and its stop on the stand-in (period, duty, enable, then enable): CPU per
    write, median of blocks."""
    per_write = []
    channel = tones.channel
    for _ in range(5):
        n0, cpu0 = channel.writes, time.process_time()
        for i in range(WRITES // 4):
            channel.tone(FREQUENCY if i % 2 else FREQUENCY / 2, 0.5)
            channel.off()
        per_write.append((time.process_time() - cpu0) / (channel.writes - n0))
    return {"us_per_write": median(per_write) * 1e6, "writes_per_tone": 4}


def press_to_led(tones: Tones) -> dict[str, Any]:
    from latency import SETTLE_MS, ours
    cells = {"none": tones.none, "hardware": tones.hardware, "software": tones.software}
    lat: dict[str, list[float]] = {k: [] for k in cells}
    cpu: dict[str, list[float]] = {k: [] for k in cells}
    for _ in range(BLOCKS):
        for name, start in cells.items():
            stop = start()
            try:
                lat[name] += ours(PRESSES // BLOCKS, daemon=True, cpu=cpu[name], frame_cpu=[])
            finally:
                stop()
    out: dict[str, Any] = {"settle_ms": SETTLE_MS}
    for name in cells:
        ms = [x * 1000 for x in lat[name]]
        c = [x * 1000 for x in cpu[name]]
        out[name] = {"n": len(ms), "p50_ms": median(ms), "p99_ms": percentile(ms, 99),
                     "cpu_p50_ms": median(c), "cpu_p99_ms": percentile(c, 99)}
    return out


def run() -> dict[str, Any]:
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(prefix="bench-tone-", dir=shm if shm.is_dir() else None) as where:
        tones = Tones(Path(where))
        try:
            second: dict[str, list[dict[str, float]]] = {"none": [], "hardware": [], "software": []}
            for _ in range(3):
                for name in second:
                    second[name].append(one_second(getattr(tones, name)))
            out: dict[str, Any] = {"frequency_hz": FREQUENCY, "tone_s": TONE_S}
            for name, runs in second.items():
                out[f"second_{name}"] = {key: median([r[key] for r in runs]) for key in runs[0]}
            out["writes"] = write_cost(tones)
            out["press_to_led"] = press_to_led(tones)
        finally:
            tones.close()
    return out


def rows(t: dict[str, Any], k: float) -> list[tuple[str, str, str, str, str, str]]:
    """The table's rows (run.py): `k` is the Pi Zero 2 W factor."""
    hw, sw, idle = t["second_hardware"], t["second_software"], t["second_none"]
    w = t["writes"]
    p = t["press_to_led"]

    def pct(cell: dict[str, float]) -> float:
        return cell["cpu_ms"] / 10 / t["tone_s"]          # ms per s -> % of a core
    out = [(f"11 a {t['tone_s']:g} s tone, {t['frequency_hz']:.0f} Hz",
            f"hardware PWM {pct(hw):.2f} % of a core, {hw['wakeups']:.0f} wake-ups "
            f"({w['writes_per_tone']} sysfs writes a tone, {w['us_per_write']:.1f} us each)",
            f"software PWM {pct(sw):.2f} %, {sw['wakeups']:.0f} wake-ups; no tone "
            f"{pct(idle):.2f} %, {idle['wakeups']:.0f}", "", "",
            f"{pct(hw) * k:.1f} % vs {pct(sw) * k:.0f} %")]
    h, s, n = p["hardware"], p["software"], p["none"]
    out.append(("  press -> LED while it plays",
                f"hardware p50 {h['p50_ms']:.2f} / p99 {h['p99_ms']:.2f} ms, loop CPU p99 "
                f"{h['cpu_p99_ms']:.3f} ms (n {h['n']})",
                f"software p50 {s['p50_ms']:.2f} / p99 {s['p99_ms']:.2f} ms, CPU p99 "
                f"{s['cpu_p99_ms']:.3f}; no tone p99 {n['p99_ms']:.2f} ms, CPU p99 {n['cpu_p99_ms']:.3f}",
                "", "", ""))
    return out


if __name__ == "__main__":
    import json
    print(json.dumps(run(), indent=2))
