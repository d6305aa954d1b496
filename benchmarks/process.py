"""Figures 4 and 5: the daemon as a process - idle CPU, start-up time to READY=1, peak memory.

The daemon is what systemd runs (`pi-companion run`), here with mock pins, luma's dummy display,
an absent config file (defaults) and a fresh state directory, under a NOTIFY_SOCKET we bind.

- Start-up: from just before the process is spawned to the READY=1 datagram. Floor: the same
  interpreter spawned to import gpiozero, luma.oled and pyserial and write one byte. First our
  package is byte-compiled (`python -m compileall`, as `make install` does), then one warm-up
  run each, then RUNS interleaved triples (floor, our imports, daemon); medians reported. The
  third spawn (our daemon's modules imported, nothing run) shows where the gap is. Beside the
  wall-clock time, the CPU time of the process's main thread (the one that runs to READY=1 or
  to the byte; /proc/PID/task/PID/schedstat, read as the datagram or the byte arrives): on a
  shared machine a run's wall-clock ratio moves between 1.1 and 2.1 with the neighbours' load,
  its CPU ratio by a few hundredths, so the verdict rests on the CPU ratio.
- Memory: VmHWM (peak RSS) from /proc/PID/status, of the daemon at READY and after the idle
  window, against the floor process's VmHWM once it has imported the three libraries.
- Idle: CPU time of every thread of the running daemon (per-task schedstat, ns) over IDLE_S,
  beside `sleep IDLE_S` (its rusage) started at the same moment; wake-ups are context switches.
  The daemon runs under the unit's watchdog (WATCHDOG_USEC for WatchdogSec=10: a ping every
  5 s), as systemd starts it.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import median

RUNS = 15
IDLE_S = 25.0
WATCHDOG_USEC = 10_000_000          # systemd/pi-companion.service: WatchdogSec=10
# Each writes a byte, then waits for its stdin to close (so that its CPU time can be read).
FLOOR_CODE = "import gpiozero, luma.oled.device, serial, os, sys; os.write(1, b'x'); sys.stdin.read()"
# Not a baseline but the split of the gap: our own modules imported, nothing run.
OURS_CODE = ("import pi_companion.cli, pi_companion.box, pi_companion.daemon, os, sys; os.write(1, b'x'); "
             "sys.stdin.read()")


def main_thread_cpu_s(pid: int) -> float:
    """CPU time so far of process `pid`'s main thread (ns in schedstat)."""
    return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0]) / 1e9


def daemon_command(tmp: Path) -> list[str]:
    script = Path(sys.executable).with_name("pi-companion")
    head = [str(script)] if script.exists() else [sys.executable, "-m", "pi_companion"]
    return head + ["run", "--pins", "mock", "--display", "dummy",
                   "--config", os.devnull, "--state-dir", str(tmp / "state")]


class Daemon:
    """One `pi-companion run` under our own NOTIFY_SOCKET."""

    def __init__(self, tmp: Path, watchdog: bool = False) -> None:
        self.tmp = tmp
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        path = tmp / "notify.sock"
        path.unlink(missing_ok=True)
        self.sock.bind(str(path))
        self.sock.settimeout(30)
        env = {k: v for k, v in os.environ.items() if not k.startswith("WATCHDOG_")}
        env["NOTIFY_SOCKET"] = str(path)
        if watchdog:
            env["WATCHDOG_USEC"] = str(WATCHDOG_USEC)
        self.stderr = open(tmp / "stderr.log", "wb")
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(daemon_command(tmp), env=env, stdout=subprocess.DEVNULL,
                                     stderr=self.stderr)
        self.ready_cpu = 0.0              # the main thread's CPU time when READY=1 came
        self.ready_after = self._wait_ready()

    def _wait_ready(self) -> float:
        while True:
            try:
                message = self.sock.recv(4096).decode()
            except TimeoutError:
                raise RuntimeError(f"no READY=1 within 30 s; stderr: {self.log()}") from None
            if "READY=1" in message.split("\n"):
                after = time.perf_counter() - self.started
                self.ready_cpu = main_thread_cpu_s(self.proc.pid)
                return after

    def log(self) -> str:
        return (self.tmp / "stderr.log").read_text(errors="replace")[-2000:]

    def status(self, key: str) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
        raise KeyError(key)

    def cpu_ns(self) -> int:
        total = 0
        for task in Path(f"/proc/{self.proc.pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError):
                pass                                # a thread that just ended
        return total

    def switches(self) -> int:
        total = 0
        for task in Path(f"/proc/{self.proc.pid}/task").iterdir():
            try:
                for line in (task / "status").read_text().splitlines():
                    if "ctxt_switches:" in line:
                        total += int(line.split()[1])
            except (OSError, ValueError):
                pass
        return total

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.sock.close()
        self.stderr.close()
        return code


def floor_once(code: str = FLOOR_CODE) -> tuple[float, float]:
    """(wall-clock time to the byte, the main thread's CPU time then)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None
    try:
        if proc.stdout.read(1) != b"x":
            raise RuntimeError("the import floor failed")
        elapsed = time.perf_counter() - start
        return elapsed, main_thread_cpu_s(proc.pid)
    finally:
        proc.stdin.close()
        proc.wait()


def daemon_once(base: Path, i: int) -> tuple[float, float, int]:
    tmp = base / f"run{i}"
    tmp.mkdir()
    d = Daemon(tmp)
    hwm = d.status("VmHWM")
    code = d.stop()
    if code != 0:
        raise RuntimeError(f"daemon exited {code}: {d.log()}")
    return d.ready_after, d.ready_cpu, hwm


def floor_rss_kb() -> int:
    """VmHWM of a process that imported gpiozero, luma.oled and pyserial (and holds)."""
    proc = subprocess.Popen([sys.executable, "-c", FLOOR_CODE], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None
    try:
        if proc.stdout.read(1) != b"x":
            raise RuntimeError("the import floor failed")
        for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        raise RuntimeError("no VmHWM")
    finally:
        proc.stdin.close()
        proc.wait()


def compile_bytecode() -> None:
    import pi_companion
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(pi_companion.__file__).parent)],
                   check=True, stdout=subprocess.DEVNULL)


def startup(base: Path) -> dict[str, Any]:
    compile_bytecode()
    floor_once()
    daemon_once(base, 0)
    floors, readies, hwms, imports = [], [], [], []
    floor_cpus, ready_cpus, import_cpus = [], [], []
    for i in range(1, RUNS + 1):
        wall, cpu = floor_once()
        floors.append(wall)
        floor_cpus.append(cpu)
        wall, cpu = floor_once(OURS_CODE)
        imports.append(wall)
        import_cpus.append(cpu)
        ready, cpu, hwm = daemon_once(base, i)
        readies.append(ready)
        ready_cpus.append(cpu)
        hwms.append(hwm)
    return {"runs": RUNS, "ready_s": median(readies), "ready_min_s": min(readies),
            "floor_s": median(floors), "floor_min_s": min(floors),
            "ratio": median(readies) / median(floors), "peak_rss_kb": max(hwms),
            "our_imports_s": median(imports), "floor_rss_kb": floor_rss_kb(),
            "ratios_each_run": [r / f for r, f in zip(readies, floors)],
            "ready_cpu_s": median(ready_cpus), "floor_cpu_s": median(floor_cpus),
            "our_imports_cpu_s": median(import_cpus),
            "cpu_ratio": median(ready_cpus) / median(floor_cpus),
            "cpu_ratios_each_run": [r / f for r, f in zip(ready_cpus, floor_cpus)]}


def idle(base: Path) -> dict[str, Any]:
    tmp = base / "idle"
    tmp.mkdir()
    d = Daemon(tmp, watchdog=True)
    try:
        time.sleep(2.0)                                   # past start-up and the first frame
        cpu0, sw0 = d.cpu_ns(), d.switches()
        sleeper = subprocess.Popen(["sleep", str(IDLE_S)])
        start = time.perf_counter()
        _, _, usage = os.wait4(sleeper.pid, 0)
        sleeper.returncode = 0
        elapsed = time.perf_counter() - start
        cpu1, sw1 = d.cpu_ns(), d.switches()
        hwm = d.status("VmHWM")
    finally:
        code = d.stop()
    if code != 0:
        raise RuntimeError(f"daemon exited {code}: {d.log()}")
    daemon_s = (cpu1 - cpu0) / 1e9
    sleep_s = usage.ru_utime + usage.ru_stime
    return {"window_s": elapsed, "daemon_cpu_s": daemon_s, "daemon_pct_core": 100 * daemon_s / elapsed,
            "sleep_cpu_s": sleep_s, "sleep_pct_core": 100 * sleep_s / elapsed,
            "daemon_wakeups_per_s": (sw1 - sw0) / elapsed, "peak_rss_kb_after_idle": hwm}


def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-process-") as base:
        return {"startup": startup(Path(base)), "idle": idle(Path(base))}
