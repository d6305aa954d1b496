"""The big screen's cost to the buzzer loop, and the web process's own figures.

    .venv/bin/python benchmarks/web.py [--cycles 300] [--rounds 6] [--presses 100]

The box runs in the daemon's configuration: its own loop thread, the default 2 ms settle
window, the game log fsynced on this repository's disk, luma's dummy display (the daemon's on a
PC; every frame rendered as on the box), the hub on its Unix socket and the real
`pi-companion web` process (pi_companion.web.live, the stack the browser tests use).

A *decision* is one buzz cycle, everything the loop does for it: a seeker's press, the settle
window's close and the decided buzz, the release, YES judging it and its release - four inputs,
four frames drawn (each with its snapshot for the hub), log records and their fsyncs. Its cost
is the loop thread's own CPU clock (`pthread_getcpuclockid`, ns), read while the loop is blocked
on its queue with nothing due, before and after the cycle.

The same decisions run under four conditions, interleaved in rounds (each round runs every
condition once, in a rotated order), and each condition's figure is the median over all its
cycles, so a busy neighbour on this shared machine falls on all of them alike:

- `off`: the web off (no hub on the loop: no snapshot is built), the daemon without `[web]`;
- `0`: the web on, `pi-companion web` connected to the hub, no browser;
- `50`: 50 WebSockets open on `pi-companion web`, each reading every snapshot;
- `hub32`: the hub's own limit of clients (the web process's connections and as many raw
  board readers as fill the rest).

The goal: 50 clients change the loop's CPU per decision by less than 5 % (`50` against `0`).
The fan-out is not the loop's: it hands each snapshot to the hub thread, which writes it to its
clients (one, the web process, however many browsers), and the web process writes it to the
browsers. Beside the loop, the hub thread's CPU and the web process's CPU per decision show
where the clients' cost lands.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from harness import PINS, QueueProxy, grab_bag  # noqa: E402

from pi_companion.hub.server import MAX_CLIENTS  # noqa: E402
from pi_companion.web import headless  # noqa: E402
from pi_companion.web.live import Live, live_box  # noqa: E402

CONDITIONS = ("off", "0", "50", "hub32")
GOAL = 1.05                       # 50 clients: loop CPU per decision within +5 %

# A process holding `n` clients open, on command: "open" (each has its first message) and
# "close" (all closed) on stdin, answered on stdout. ws: WebSockets on pi-companion web; unix:
# raw readers of the hub socket. Every client reads everything it is sent.
CLIENTS = r"""
import asyncio, sys
mode, where, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

async def ws_client(i, opened, stop):
    import aiohttp
    # Each from its own loopback address, as 50 phones would be (the server limits requests
    # per address).
    connector = aiohttp.TCPConnector(local_addr=(f"127.0.1.{i + 1}", 0))
    async with aiohttp.ClientSession(connector=connector) as session, session.ws_connect(where) as ws:
        await ws.receive()
        opened.set_result(None)
        async def drain():
            async for _ in ws:
                pass
        task = asyncio.ensure_future(drain())
        await stop.wait()
        task.cancel()

async def unix_client(opened, stop):
    from pi_companion.hub.protocol import hello
    reader, writer = await asyncio.open_unix_connection(where)
    writer.write(hello("board"))        # a board reader, as the web process is to the hub
    if not await reader.readline():
        raise ConnectionError("the hub closed the connection")
    opened.set_result(None)
    async def drain():
        while await reader.read(65536):
            pass
    task = asyncio.ensure_future(drain())
    await stop.wait()
    task.cancel()
    writer.close()

async def client(i, opened, stop):
    try:
        await (ws_client(i, opened, stop) if mode == "ws" else unix_client(opened, stop))
    except Exception as err:
        if not opened.done():
            opened.set_exception(err)

async def main():
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if line.strip() != "open":
            return
        stop, tasks = asyncio.Event(), []
        i = 0
        try:                   # one after another (the hub's listen backlog is short)
            for i in range(n):
                opened = loop.create_future()
                tasks.append(asyncio.ensure_future(client(i, opened, stop)))
                await asyncio.wait_for(opened, 30)
        except Exception as err:
            print(f"error {type(err).__name__}: {err} ({mode} client {i + 1} of {n})", flush=True)
            return
        print("open", flush=True)
        if (await loop.run_in_executor(None, sys.stdin.readline)).strip() != "close":
            return
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        print("closed", flush=True)

asyncio.run(main())
"""


class Clients:
    """`n` clients in another process, opened and closed between rounds."""

    def __init__(self, mode: str, where: str, n: int) -> None:
        self.n = n
        self.proc = subprocess.Popen([sys.executable, "-c", CLIENTS, mode, where, str(n)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def _say(self, word: str, answer: str) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(word + "\n")
        self.proc.stdin.flush()
        got = self.proc.stdout.readline().strip()
        if got != answer:
            raise RuntimeError(f"the client process said {got!r} to {word!r}")

    def open(self) -> None:
        self._say("open", "open")

    def close(self) -> None:
        self._say("close", "closed")

    def end(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


class WaitWatch(QueueProxy):
    """The box's queue, noting whether the loop is blocked on it with nothing due."""

    def __init__(self, real: Any) -> None:
        super().__init__(real)
        self.idle = False

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        self.idle = timeout is None
        try:
            return self.real.get(block, timeout)
        finally:
            self.idle = False


def watch_queue(box: Any) -> None:
    """Put a WaitWatch between the pins and the loop, and stub the piezo (as benchmarks/
    harness.make_box: no sound is measured here)."""
    box.queue = WaitWatch(box.queue)
    for device in box.inputs.values():
        device.post = box.queue.put
    box.piezo.play = box.piezo.played.append


class SnapshotClock:
    """The hub's on_draw (the loop's whole part of the big screen), with the loop thread's CPU
    spent in it added up."""

    def __init__(self, on_draw: Any) -> None:
        self.on_draw = on_draw
        self.ns = 0

    def __call__(self, engine: Any, frame: Any) -> None:
        t = time.thread_time_ns()
        self.on_draw(engine, frame)
        self.ns += time.thread_time_ns() - t


def thread_clock(thread: Any) -> int:
    return time.pthread_getcpuclockid(thread.ident)


def process_cpu_ns(pid: int) -> int:
    """CPU time of every thread of a process so far (schedstat: ns, not 10 ms ticks)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


class Rig:
    def __init__(self, live: Live) -> None:
        self.live = live
        self.box = live.box
        self.loop_clock = thread_clock(live.box.thread)
        self.hub_clock = thread_clock(live.hub.thread)

    def settled(self, timeout: float = 5.0) -> None:
        """The loop is blocked on its queue with no timer and no frame to draw."""
        box, queue = self.box, self.box.queue
        end = time.monotonic() + timeout
        while not (queue.idle and queue.empty() and not box.stale):
            if time.monotonic() > end:
                raise RuntimeError("the box loop did not settle")
            time.sleep(0.0005)
        time.sleep(0.001)
        if not (queue.idle and queue.empty() and not box.stale):
            self.settled(timeout)

    def fresh(self) -> None:
        """A finished game starts over (the host's "new game"), outside the measured cycle."""
        engine = self.box.engine
        if engine.rules.is_over(engine.game) or not engine.rules.buzzers(engine.game):
            self.live.new_game()
            self.settled()

    def press(self, name: str) -> Any:
        pin = self.live.factory.pin(PINS[name])
        pin.drive_low()
        return pin

    def cycle(self, i: int) -> None:
        """One decision: a seeker buzzes, the settle window decides, YES judges it."""
        engine = self.box.engine
        seeker = sorted(engine.rules.buzzers(engine.game))[i % 2]
        pin = self.press(f"P{seeker + 1}")
        self.live.until(lambda: self.box.engine.table.judging)
        pin.drive_high()
        yes = self.press("YES")
        time.sleep(0.008)
        yes.drive_high()
        self.live.until(lambda: not self.box.engine.table.judging)

    def measure(self, cycles: int, start: int, web_pid: int) -> dict[str, list[float]]:
        """Per-cycle CPU (us) of the loop, of its snapshots and of the hub thread; the web
        process's per cycle."""
        loop, snap, hub = [], [], []
        web0 = process_cpu_ns(web_pid)
        on_draw = self.box.on_draw
        for i in range(start, start + cycles):
            self.fresh()
            self.settled()
            l0, h0 = time.clock_gettime_ns(self.loop_clock), time.clock_gettime_ns(self.hub_clock)
            s0 = on_draw.ns if on_draw is not None else 0
            self.cycle(i)
            self.settled()
            loop.append((time.clock_gettime_ns(self.loop_clock) - l0) / 1000)
            hub.append((time.clock_gettime_ns(self.hub_clock) - h0) / 1000)
            snap.append((on_draw.ns - s0) / 1000 if on_draw is not None else 0.0)
        return {"loop": loop, "snapshot": snap, "hub": hub,
                "web": [(process_cpu_ns(web_pid) - web0) / 1000 / cycles]}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def import_time() -> float:
    code = ("import time; t = time.perf_counter(); import pi_companion.web.server; "
            "print(time.perf_counter() - t)")
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True, cwd=ROOT).stdout) for _ in range(5)]
    return statistics.median(runs) * 1000


def browser_latency(rig: Rig, presses: int) -> list[tuple[float, float]] | None:
    """Press -> the TV board (1080p chromium) has drawn the buzz, and on the same presses the
    baseline: press -> the box's own OLED frame showing it (the first frame drawn after the
    press: none is drawn inside the settle window). Milliseconds, wall clock."""
    if headless.missing():
        return None
    from selenium.webdriver.support.ui import WebDriverWait
    out = []
    frames: list[float] = []
    rig.box.on_frame = lambda _frame: frames.append(time.time())      # (the loop's thread)
    with headless.chromium(*headless.SIZES["tv"]) as driver:
        driver.get(rig.live.base + "/")
        WebDriverWait(driver, 5).until(lambda d: d.find_element("id", "status").text == "live")
        for i in range(presses):
            rig.fresh()
            rig.settled()
            engine = rig.box.engine
            seeker = sorted(engine.rules.buzzers(engine.game))[i % 2]
            driver.execute_script("""
                window.__seen = null; const before = JSON.stringify(arguments[0]);
                window.onSnapshot = (s) => { if (window.__seen === null && s.buzz &&
                    JSON.stringify(s.buzz) !== before) window.__seen = Date.now(); };""",
                                  engine.report()["last_buzz"])
            frames.clear()
            pressed = time.time()
            pin = rig.press(f"P{seeker + 1}")
            seen = WebDriverWait(driver, 5, poll_frequency=0.005).until(
                lambda d: d.execute_script("return window.__seen"))
            rig.live.until(lambda: any(t >= pressed for t in list(frames)))    # (its thread may lag)
            oled = next(t for t in list(frames) if t >= pressed)
            out.append((seen - pressed * 1000, (oled - pressed) * 1000))
            pin.drive_high()
            yes = rig.press("YES")
            time.sleep(0.008)
            yes.drive_high()
            rig.live.until(lambda: not rig.box.engine.table.judging)
    return out


def page_weight(base: str) -> dict[str, Any]:
    """The TV board's bytes as a browser loads it: the page and every file it names (src/href
    on this host), and how many of its references point anywhere else (none should)."""
    import re
    import urllib.request

    def get(path: str) -> bytes:
        with urllib.request.urlopen(base + path, timeout=5) as r:
            return bytes(r.read())
    page = get("/")
    refs = re.findall(rb'(?:src|href)="([^"]+)"', page)
    local = sorted({r.decode() for r in refs if r.startswith(b"/") and not r.startswith(b"//")})
    files = {"/": len(page), **{path: len(get(path)) for path in local if path.startswith("/static/")}}
    return {"bytes": sum(files.values()), "files": files,
            "external": sum(1 for r in refs if not r.startswith(b"/") or r.startswith(b"//"))}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def run(cycles: int | None = None, presses: int | None = None) -> dict[str, Any]:
    """The figure for benchmarks/run.py (BENCH_WEB_CYCLES per condition, BENCH_WEB_PRESSES)."""
    cycles = cycles or int(os.environ.get("BENCH_WEB_CYCLES", "400"))
    presses = presses or int(os.environ.get("BENCH_WEB_PRESSES", "40"))
    return measure(cycles, presses)


def measure(cycles: int, presses: int, rounds: int = 10) -> dict[str, Any]:
    block = max(1, cycles // rounds)
    samples: dict[str, dict[str, list[float]]] = {c: {"loop": [], "snapshot": [], "hub": [], "web": []}
                                                  for c in CONDITIONS}
    results: dict[str, Any] = {"cycles_per_condition": block * rounds, "rounds": rounds, "presses": presses}
    # On this repository's disk (not a tmpfs /tmp): the log's fsync must reach a real device.
    with tempfile.TemporaryDirectory(prefix="bench-web-", dir=ROOT) as tmp, \
            live_box(Path(tmp), config=grab_bag(settle_ms=2.0), prepare=watch_queue) as live:
        assert live.web is not None
        rig = Rig(live)
        web_pid = live.web.pid
        snapshots = SnapshotClock(live.hub.on_draw)
        live.box.on_draw = snapshots
        sockets = Clients("ws", live.base.replace("http:", "ws:") + "/ws", 50)
        readers = None
        try:
            rig.measure(20, 0, web_pid)                                  # warm up
            # The web process holds hub connections of its own (its board and host roles):
            # the readers fill what it leaves of the hub's limit.
            readers = Clients("unix", str(live.hub.path), MAX_CLIENTS - len(live.hub.clients))
            done, per_round = 20, []
            for r in range(rounds):
                medians: dict[str, float] = {}
                for cond in CONDITIONS[r % len(CONDITIONS):] + CONDITIONS[:r % len(CONDITIONS)]:
                    live.box.on_draw = None if cond == "off" else snapshots
                    extra = {"50": sockets, "hub32": readers}.get(cond)
                    if extra is not None:
                        extra.open()
                    if cond == "50" and "web_rss_mib" not in results:
                        results["web_rss_mib"] = round(rss_kib(web_pid) / 1024, 1)
                    got = rig.measure(block, done, web_pid)
                    done += block
                    if extra is not None:
                        extra.close()
                    for key, values in got.items():
                        samples[cond][key] += values
                    medians[cond] = statistics.median(got["loop"])
                per_round.append(round(medians["50"] / medians["0"], 3))
            live.box.on_draw = snapshots                       # the web on, for the browser
            results["hub_clients_max"] = MAX_CLIENTS
            for cond, s in samples.items():
                results[f"cpu_{cond}"] = {
                    "loop_median_us": round(statistics.median(s["loop"]), 1),
                    "loop_mean_us": round(statistics.fmean(s["loop"]), 1),
                    "snapshot_median_us": round(statistics.median(s["snapshot"]), 1),
                    "hub_median_us": round(statistics.median(s["hub"]), 1),
                    "web_mean_us": round(statistics.fmean(s["web"]), 1),
                    "n": len(s["loop"]),
                }
            zero, fifty = results["cpu_0"]["loop_median_us"], results["cpu_50"]["loop_median_us"]
            results["ratio_50_to_0"] = round(fifty / zero, 4)
            results["ratio_hub32_to_0"] = round(results["cpu_hub32"]["loop_median_us"] / zero, 4)
            results["ratio_0_to_off"] = round(zero / results["cpu_off"]["loop_median_us"], 4)
            results["ratio_50_to_0_rounds"] = per_round          # each round's own, for the spread
            results["met"] = fifty / zero < GOAL
            results["page"] = page_weight(live.base)
            lat = browser_latency(rig, presses)
            tv, oled = [t for t, _ in lat or []], [o for _, o in lat or []]
            results["browser"] = None if not lat else {
                "p50_ms": round(pct(tv, 0.5), 1), "p99_ms": round(pct(tv, 0.99), 1), "n": len(lat),
                "oled_p50_ms": round(pct(oled, 0.5), 1), "oled_p99_ms": round(pct(oled, 0.99), 1)}
        finally:
            sockets.end()
            if readers is not None:
                readers.end()
    results["import_ms"] = round(import_time(), 1)
    return results


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cycles", type=int, default=400, help="decisions per condition")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--presses", type=int, default=100, help="presses timed in chromium")
    args = ap.parse_args()
    r = measure(args.cycles, args.presses, args.rounds)
    print(json.dumps(r, indent=2))
    for cond in CONDITIONS:
        c = r[f"cpu_{cond}"]
        print(f"{cond:>6}: loop {c['loop_median_us']:8.1f} us/decision (median, n={c['n']}; "
              f"snapshots {c['snapshot_median_us']:6.1f}), hub thread {c['hub_median_us']:7.1f} us, "
              f"web process {c['web_mean_us']:8.1f} us")
    print(f"50 WebSockets / 0 clients: x{r['ratio_50_to_0']:.4f} (goal < x{GOAL}): "
          f"{'met' if r['met'] else 'MISSED'}; round by round {r['ratio_50_to_0_rounds']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
