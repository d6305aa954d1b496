"""The big screen's cost: the box loop's CPU per decision with 0 and 50 clients (50 raw hub
clients, and the web process with 50 WebSockets), the web process's RSS and import time, and
press -> browser latency p50/p99 in headless chromium (if installed).

    .venv/bin/python benchmarks/web.py [--cycles 300] [--presses 100]

A "decision" is one buzz cycle on the live loop thread: a press decided after the settle
window, then YES judged. The loop thread's CPU comes from /proc (its own tid)."""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpiozero import Device  # noqa: E402
from gpiozero.pins.mock import MockFactory, MockPWMPin  # noqa: E402

from pi_companion.app import Box  # noqa: E402
from pi_companion.config import Config  # noqa: E402
from pi_companion.core.events import HostCommand  # noqa: E402
from pi_companion.hub import Hub  # noqa: E402
from pi_companion.hw.display import Display  # noqa: E402
from pi_companion.hw.pinmap import load_pinmap  # noqa: E402
from pi_companion.web import headless  # noqa: E402

PINS = load_pinmap()

DRAIN = """
import selectors, socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])
sel = selectors.DefaultSelector()
for _ in range(n):
    s = socket.socket(socket.AF_UNIX); s.connect(path); s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
print("ready", flush=True)
while True:
    for key, _ in sel.select():
        if not key.fileobj.recv(65536):
            sys.exit(0)
"""

WS = """
import asyncio, sys, aiohttp
async def one(session, url):
    async with session.ws_connect(url) as ws:
        async for _ in ws:
            pass
async def main(url, n):
    async with aiohttp.ClientSession() as session:
        tasks = [asyncio.ensure_future(one(session, url)) for _ in range(n)]
        await asyncio.sleep(1.0)
        print("ready", flush=True)
        await asyncio.gather(*tasks)
asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Rig:
    def __init__(self, state: Path) -> None:
        self.factory = MockFactory(pin_class=MockPWMPin)
        Device.pin_factory = self.factory
        self.box = Box(Config(players=("Ada", "Ben", "Cy", "Di"), seed=1, sound=False,
                              games={"grab-bag": {"variant": "all-seekers", "cards": 200}}),
                       self.factory, Display(None))
        self.hub = Hub(self.box, state / "hub.sock", state)
        self.hub.attach()
        self.hub.start()
        self.box.start()

    def wait(self, predicate, timeout: float = 2.0) -> None:
        end = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > end:
                raise RuntimeError("the box did not get there")
            time.sleep(0.0005)

    def fresh(self) -> None:
        """A finished game starts over (the host's "new game")."""
        if self.box.engine.rules.is_over(self.box.engine.game) or not self.box.engine.rules.buzzers(
                self.box.engine.game):
            self.box.put_host_command(HostCommand(0.0, "new"))
            self.wait(lambda: not self.box.engine.rules.is_over(self.box.engine.game))
            time.sleep(0.01)

    def cycle(self, i: int) -> None:
        """One decision: a seeker buzzes, the settle window decides, YES judges it."""
        self.fresh()
        engine = self.box.engine
        seeker = sorted(engine.rules.buzzers(engine.game))[i % 2]
        pin = self.factory.pin(PINS[f"P{seeker + 1}"])
        pin.drive_low()
        self.wait(lambda: self.box.engine.table.judging)
        pin.drive_high()
        yes = self.factory.pin(PINS["YES"])
        yes.drive_low()
        time.sleep(0.008)
        yes.drive_high()
        self.wait(lambda: not self.box.engine.table.judging)
        time.sleep(0.005)

    def cpu_per_decision(self, cycles: int) -> float:
        """The loop thread's own CPU clock (ns resolution, not /proc's 10 ms ticks)."""
        clock = time.pthread_getcpuclockid(self.box.thread.ident)  # type: ignore[union-attr]
        before = time.clock_gettime(clock)
        for i in range(cycles):
            self.cycle(i)
        return (time.clock_gettime(clock) - before) / cycles * 1e6

    def close(self) -> None:
        self.box.close()
        self.hub.close()
        self.factory.reset()


def helper(code: str, *args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def start_web(state: Path, port: int) -> subprocess.Popen[str]:
    web = subprocess.Popen([sys.executable, "-m", "pi_companion", "web", "--config", os.devnull,
                            "--state-dir", str(state), "--socket", str(state / "hub.sock"),
                            "--bind", "127.0.0.1", "--port", str(port)], text=True)
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/snapshot", timeout=1)
            return web
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("pi-companion web did not start")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def import_time() -> float:
    code = ("import time; t = time.perf_counter(); import pi_companion.web.server; "
            "print(time.perf_counter() - t)")
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(5)]
    return statistics.median(runs) * 1000


def browser_latency(rig: Rig, base: str, presses: int) -> list[float] | None:
    if headless.missing():
        return None
    with headless.chromium(*headless.SIZES["tv"]) as driver:
        return _presses(driver, rig, base, presses)


def _presses(driver, rig: Rig, base: str, presses: int) -> list[float]:
    from selenium.webdriver.support.ui import WebDriverWait
    out = []
    driver.get(base + "/")
    WebDriverWait(driver, 5).until(lambda d: d.find_element("id", "status").text == "live")
    for i in range(presses):
        rig.fresh()
        engine = rig.box.engine
        seeker = sorted(engine.rules.buzzers(engine.game))[i % 2]
        driver.execute_script("""
            window.__seen = null; const before = JSON.stringify(arguments[0]);
            window.onSnapshot = (s) => { if (window.__seen === null && s.buzz &&
                JSON.stringify(s.buzz) !== before) window.__seen = Date.now(); };""",
                              engine.report()["last_buzz"])
        pin = rig.factory.pin(PINS[f"P{seeker + 1}"])
        pressed = time.time()
        pin.drive_low()
        seen = WebDriverWait(driver, 5, poll_frequency=0.005).until(
            lambda d: d.execute_script("return window.__seen"))
        out.append(seen - pressed * 1000)
        pin.drive_high()
        yes = rig.factory.pin(PINS["YES"])
        yes.drive_low()
        time.sleep(0.008)
        yes.drive_high()
        rig.wait(lambda: not rig.box.engine.table.judging)
        time.sleep(0.02)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def run(cycles: int | None = None, presses: int | None = None) -> dict[str, Any]:
    """The figure for benchmarks/run.py: short by default (BENCH_WEB_CYCLES, BENCH_WEB_PRESSES)."""
    cycles = cycles or int(os.environ.get("BENCH_WEB_CYCLES", "150"))
    presses = presses or int(os.environ.get("BENCH_WEB_PRESSES", "40"))
    return measure(cycles, presses)


def measure(cycles: int, presses: int) -> dict[str, Any]:
    results: dict[str, Any] = {"cycles": cycles, "presses": presses}
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        rig = Rig(state)
        try:
            rig.cpu_per_decision(20)                                  # warm up
            zero = rig.cpu_per_decision(cycles)
            drain = helper(DRAIN, str(rig.hub.path), "50")
            fifty_hub = rig.cpu_per_decision(cycles)
            drain.terminate()
            drain.wait()
            port = free_port()
            web = start_web(state, port)
            ws = helper(WS, f"ws://127.0.0.1:{port}/ws", "50")
            fifty_ws = rig.cpu_per_decision(cycles)
            results["web_rss_mib"] = round(rss_kib(web.pid) / 1024, 1)      # with the 50 sockets open
            ws.terminate()
            ws.wait()
            zero_again = rig.cpu_per_decision(cycles)            # the web process idle, no sockets
            results.update({
                "cpu_0_us": round((zero + zero_again) / 2, 1),
                "cpu_50_hub_us": round(fifty_hub, 1),
                "cpu_50_ws_us": round(fifty_ws, 1),
            })
            lat = browser_latency(rig, f"http://127.0.0.1:{port}", presses)
            if lat:
                results["browser"] = {"p50_ms": round(pct(lat, 0.5), 1), "p99_ms": round(pct(lat, 0.99), 1),
                                      "n": len(lat)}
            else:
                results["browser"] = None
            web.terminate()
            web.wait()
        finally:
            rig.close()
    results["import_ms"] = round(import_time(), 1)
    return results


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cycles", type=int, default=300)
    ap.add_argument("--presses", type=int, default=100)
    args = ap.parse_args()
    print(json.dumps(measure(args.cycles, args.presses), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
