"""Figure 7, resume: building the Box from a 100 000-, a 600 000- and a 1 000 000-record game log,
as after a power cut; time (CPU and wall) and peak memory.

The logs are a scripted 4-player All Wound Up evening on virtual time (wind checks: a press,
dial edges, hall edges with a little rocking back, the settle wake-up), folded through the
engine and written as v2 lines, so the writing engine's report is known. Each resume runs in a
fresh interpreter (`python resume.py --child DIR`): the time to construct a Box that resumes
the log (read, check, parse and fold every record while reading, set up pins) - the process's
CPU time, which the machine's other load barely moves, and the wall-clock time - its peak RSS
(VmHWM) against the same interpreter constructing a Box over an empty state directory, and
the resumed report must equal the writer's. The longest log a real evening writes is about
60 000 records by our estimate (docs/performance.md): 600 000 is ten times that.
"""
from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import PLAYERS, median  # noqa: E402

from pi_companion.config import Config  # noqa: E402
from pi_companion.core.engine import Engine  # noqa: E402
from pi_companion.core.events import Edge, EncoderLevel, HallLevel, InputEvent  # noqa: E402
from pi_companion.core.records import advance_record, to_record  # noqa: E402
from pi_companion.gamelog import GameLog, encode  # noqa: E402
from pi_companion.games import registry  # noqa: E402

SIZES = (100_000, 600_000, 1_000_000)
RUNS = 3
CONFIG = Config(game="all-wound-up", players=PLAYERS, seed=1, sound=False)
FORWARD = (("A", 1), ("B", 1), ("A", 0), ("B", 0))   # quadrature, one step per edge


class Quadrant:
    """Where a two-channel sensor pair is in its cycle, to emit consistent edges."""

    def __init__(self) -> None:
        self.phase = 0

    def step(self, forward: bool) -> tuple[str, int]:
        if forward:
            edge = FORWARD[self.phase % 4]
            self.phase += 1
            return edge
        self.phase -= 1
        sensor, level = FORWARD[self.phase % 4]
        return sensor, 1 - level


def wind_check(rng: random.Random, t: float, hall: Quadrant, dial: Quadrant) -> tuple[list[InputEvent], float]:
    """One wind check: a press, the dial set to 1-3 turns, the turntable wound with a little
    rocking back; then it is left still until the settle gives the verdict."""
    player = f"P{rng.randint(1, 4)}"
    events: list[InputEvent] = [Edge(t, player, True), Edge(t + 0.08, player, False)]
    t += 0.3
    for _ in range(4 * (rng.randint(1, 3) - 1)):            # each detent is 4 encoder edges
        t += rng.uniform(0.004, 0.02)
        events.append(EncoderLevel(t, *dial.step(True)))  # type: ignore[arg-type]
    t += 0.3
    for _ in range(4 * rng.randint(1, 4) + rng.randint(-2, 2)):
        t += rng.uniform(0.01, 0.05)
        events.append(HallLevel(t, *hall.step(rng.random() > 0.08)))  # type: ignore[arg-type]
    return events, t + 2.0


def write_log(path: Path, records: int) -> str:
    """The evening's log, as the box writes it; the hash of the writing engine's report."""
    engine = Engine(registry.get(CONFIG.game), PLAYERS, CONFIG.options_for(CONFIG.game), CONFIG.seed or 0)
    rng, hall, dial = random.Random(12), Quadrant(), Quadrant()
    header = {"v": 2, "game": CONFIG.game, "players": list(PLAYERS),
              "options": CONFIG.options_for(CONFIG.game), "seed": CONFIG.seed}
    written, t = 0, 1.0
    with open(path, "wb") as f:
        f.write(encode(header))
        while written < records:
            events, t = wind_check(rng, t, hall, dial)
            for event in events:
                due = engine.next_deadline()
                if due is not None and due <= event.t and written < records:
                    f.write(encode(advance_record(event.t)))   # the loop's wake-up for a timer
                    engine.advance(event.t)
                    written += 1
                if written >= records:
                    break
                f.write(encode(to_record(event)))
                engine.feed(event)
                written += 1
    return report_hash(engine.report())


def report_hash(report: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(report, sort_keys=True).encode()).hexdigest()


def child(state: str) -> None:
    """In a fresh interpreter: construct a Box over `state`; time, VmHWM, the report's hash."""
    from harness import make_box
    from pi_companion.hw.display import Display
    from pi_companion.gamelog import GameLog
    from gpiozero.pins.mock import MockFactory, MockPWMPin
    factory = MockFactory(pin_class=MockPWMPin)
    start, cpu = time.perf_counter(), time.process_time()
    box = make_box(CONFIG, factory, Display(None), store=GameLog(state))
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    hwm = next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
               if line.startswith("VmHWM:"))
    out = {"seconds": elapsed, "cpu_s": cpu, "records": box.resumed_records, "resumed": box.resumed,
           "peak_rss_kb": hwm, "report": report_hash(box.engine.report())}
    box.close()
    print(json.dumps(out))


def spawn(state: Path) -> dict[str, Any]:
    out = subprocess.run([sys.executable, str(HERE / "resume.py"), "--child", str(state)],
                         capture_output=True, text=True, timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(sizes: tuple[int, ...] = SIZES) -> dict[str, Any]:
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-resume-") as base:
        empty = Path(base) / "empty"
        fresh = [spawn(empty / str(i)) for i in range(RUNS)]
        result["fresh_start_s"] = median([f["seconds"] for f in fresh])
        result["fresh_start_cpu_s"] = median([f["cpu_s"] for f in fresh])
        result["fresh_peak_rss_kb"] = median([f["peak_rss_kb"] for f in fresh])
        for size in sizes:
            state = Path(base) / f"log-{size}"
            state.mkdir()
            written = write_log(state / "current.log", size)
            runs = [spawn(state) for _ in range(RUNS if size <= 100_000 else 1)]
            start, cpu = time.perf_counter(), time.process_time()
            reader = GameLog(state).read()
            assert reader is not None
            with reader:
                read = sum(1 for _ in reader.records())
            read_s, read_cpu_s = time.perf_counter() - start, time.process_time() - cpu
            result[str(size)] = {
                "records": runs[0]["records"], "resume_s": median([r["seconds"] for r in runs]),
                "resume_cpu_s": median([r["cpu_s"] for r in runs]), "read_only_cpu_s": read_cpu_s,
                "peak_rss_kb": max(r["peak_rss_kb"] for r in runs),
                "rss_over_fresh_mb": (max(r["peak_rss_kb"] for r in runs) - result["fresh_peak_rss_kb"]) / 1024,
                "log_mb": (state / "current.log").stat().st_size / 2**20,
                "read_only_s": read_s, "read_records": read,
                "same_game": all(r["report"] == written and r["resumed"] for r in runs)}
    return result


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        print(json.dumps(run(tuple(int(a) for a in sys.argv[1:]) or SIZES), indent=2))
