"""Figure 6, OLED bus time: I2C time per update, ours against luma's stock drivers.

Every driver writes to a recording luma serial interface (`BusRecorder`) that prices each
transfer as the I2C bus spends it at 400 kHz: a start condition, the address byte, the control
byte, the bytes (8 bits + ACK each), a stop condition (`hw.ssd1306_dirty.transfer_bits`). A
`command()` is one transfer; a `data()` is one transfer per 4 096 bytes (luma's managed smbus2
path, what the Pi uses). luma's ssd1306 sends 2 transfers per frame (6 command bytes, 1 024
data bytes) and its sh1106 16 (8 x (3 command + 128 data bytes)), changed or not.

The headline is a real Hands Up! hour: four players, the default 2 s beat, grabs 0.3-1.8 s after
a beat with a close runner-up now and then, judgements 2-6 s later (mostly theft, sometimes
false alarm or police); when a game ends the table reads the winners and deals again (30-60 s)
and plays again with YES, YES (the "Play again?" screen, then the deal). Every frame is the real screen
(`ui.screens.render`) drawn when the box draws it: after each input and each timer. All drivers
sit behind our `Display`, which skips unchanged frames, so luma is charged only for frames that
changed ("luma + skip"); the share is against that. The typical single updates (a buzz, a
score change, a live wind count) are kept as examples.
"""
from __future__ import annotations

import random
from typing import Any

from luma.oled.device import sh1106, ssd1306
from PIL import Image

from pi_companion.core.engine import Engine
from pi_companion.core.events import Edge, HallLevel
from pi_companion.games import registry
from pi_companion.hw.display import Display
from pi_companion.hw.sh1106_dirty import DirtySH1106
from pi_companion.hw.ssd1306_dirty import BUS_HZ, DirtySSD1306, page_bytes, transfer_bits
from pi_companion.ui.screens import render

PLAYERS = ("Ada", "Ben", "Cy", "Di")
HOUR_S = 3600.0
MANAGED_BLOCK = 4096


class BusRecorder:
    """A luma serial interface that prices every transfer in I2C bit times."""

    def __init__(self) -> None:
        self.transfers = self.bytes = self.bits = 0

    def _transfer(self, n: int) -> None:
        self.transfers += 1
        self.bytes += n
        self.bits += transfer_bits(n)

    def command(self, *cmd: int) -> None:
        self._transfer(len(cmd))

    def data(self, data: Any) -> None:
        for i in range(0, len(data), MANAGED_BLOCK):
            self._transfer(len(data[i:i + MANAGED_BLOCK]))

    def cleanup(self) -> None:
        pass

    def snapshot(self) -> tuple[int, int, int]:
        return self.transfers, self.bytes, self.bits


DRIVERS = {"ssd1306": (DirtySSD1306, ssd1306), "sh1106": (DirtySH1106, sh1106)}


class Bench:
    """Our driver and luma's for one controller, each behind a Display on its own recorder."""

    def __init__(self, controller: str, first: Image.Image) -> None:
        ours_cls, luma_cls = DRIVERS[controller]
        self.ours_bus, self.luma_bus = BusRecorder(), BusRecorder()
        self.ours = Display(lambda: ours_cls(self.ours_bus))
        self.luma = Display(lambda: luma_cls(self.luma_bus))
        self.frames = 0
        self.show(first)
        self.start = self.ours_bus.snapshot(), self.luma_bus.snapshot(), self.ours.sent

    def show(self, frame: Image.Image) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        before = self.ours_bus.snapshot(), self.luma_bus.snapshot()
        self.frames += 1
        self.ours.show(frame, 0.0)
        self.luma.show(frame, 0.0)
        after = self.ours_bus.snapshot(), self.luma_bus.snapshot()
        return (tuple(a - b for a, b in zip(after[0], before[0])),      # type: ignore[return-value]
                tuple(a - b for a, b in zip(after[1], before[1])))

    def totals(self) -> dict[str, Any]:
        (o0, l0, sent0) = self.start
        ours = [a - b for a, b in zip(self.ours_bus.snapshot(), o0)]
        luma = [a - b for a, b in zip(self.luma_bus.snapshot(), l0)]
        return {"frames_drawn": self.frames - 1, "frames_changed": self.ours.sent - sent0,
                "ours": {"transfers": ours[0], "bytes": ours[1], "bus_s": ours[2] / BUS_HZ},
                "luma": {"transfers": luma[0], "bytes": luma[1], "bus_s": luma[2] / BUS_HZ},
                "share": ours[2] / luma[2] if luma[2] else 0.0}


def engine_frames(e: Engine) -> Image.Image:
    return render(e)


def hands_up_hour(seed: int = 15) -> list[Image.Image]:
    """The frames a box draws through an hour of Hands Up!: one after each input and each
    timer, as the loop draws them (none while a settle window is open: the loop waits for it)."""
    rng = random.Random(seed)
    e = Engine(registry.get("hands-up"), PLAYERS, {}, seed)
    frames = [render(e)]
    t = 0.0

    def draw() -> None:
        if not e.settling:
            frames.append(render(e))

    def at(when: float) -> None:
        nonlocal t
        due = e.next_deadline()
        while due is not None and due <= when:
            e.advance(due)
            draw()
            due = e.next_deadline()
        t = max(t, when)

    def tap(when: float, button: str, hold: float = 0.12) -> None:
        at(when)
        e.feed(Edge(when, button, True))
        draw()
        at(when + hold)
        e.feed(Edge(when + hold, button, False))
        draw()

    while t < HOUR_S:
        phase = e.game.phase
        if phase == "over":
            # The table reads the winners, gathers the cards and deals them again (the docs:
            # deal first, then start), then YES, YES: "Play again?" and the new game.
            tap(t + rng.uniform(30, 60), "YES")
            tap(t + rng.uniform(1, 3), "YES")
        elif phase == "flipping":
            beat = e.next_deadline() or t + 2.0
            beats = rng.randint(2, 12)                      # someone spots a theft
            grab = beat + 2.0 * (beats - 1) + rng.uniform(0.3, 1.8)
            racers = rng.sample(range(4), rng.choice([1, 1, 2, 2, 3]))
            when = grab
            for p in racers:
                at(when)
                e.feed(Edge(when, f"P{p + 1}", True))
                draw()
                when += rng.uniform(0.0002, 0.0019)
            at(when + 0.15)
            for p in racers:
                e.feed(Edge(when + 0.15, f"P{p + 1}", False))
                draw()
        else:                                               # judging
            verdict = rng.choices(["YES", "NO", "special"], weights=[6, 2, 1])[0]
            when = t + rng.uniform(2, 6)
            if verdict == "special":                        # a long YES: police
                tap(when, "YES", hold=1.1)
            else:
                tap(when, verdict)
    return frames


def grab_bag_updates() -> list[Image.Image]:
    e = Engine(registry.get("grab-bag"), PLAYERS, {"variant": "standard"}, 7)
    frames = [render(e)]
    e.feed(Edge(1.0, "P2", True))
    e.feed(Edge(1.0004, "P3", True))
    e.advance(1.01)
    frames.append(render(e))                                # the buzz
    for t, button, pressed in ((1.1, "P2", False), (1.1, "P3", False), (2.0, "YES", True),
                               (2.1, "YES", False)):
        e.feed(Edge(t, button, pressed))
    frames.append(render(e))                                # the score change
    return frames


def wind_updates() -> list[Image.Image]:
    e = Engine(registry.get("all-wound-up"), PLAYERS, {}, 1)
    e.feed(Edge(1.0, "P1", True))
    e.feed(Edge(1.1, "P1", False))
    e.feed(HallLevel(2.0, "A", 1))
    before = render(e)                                      # 0.25 turns
    e.feed(HallLevel(2.05, "B", 1))
    return [before, render(e)]                              # 0.50 turns


def changed_bytes(before: Image.Image, after: Image.Image) -> int:
    old, new = page_bytes(before, 8), page_bytes(after, 8)
    return sum(a != b for a, b in zip(old, new))


def typical() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    g = grab_bag_updates()
    w = wind_updates()
    for name, before, after in (("buzz", g[0], g[1]), ("score_change", g[1], g[2]),
                                ("wind_count", w[0], w[1])):
        bench = Bench("ssd1306", before)
        ours, luma = bench.show(after)
        out[name] = {"ours_transfers": ours[0], "ours_bytes": ours[1], "ours_bus_ms": 1000 * ours[2] / BUS_HZ,
                     "luma_transfers": luma[0], "luma_bus_ms": 1000 * luma[2] / BUS_HZ,
                     "share": ours[2] / luma[2], "changed_bytes": changed_bytes(before, after)}
    return out


def hour(controller: str, frames: list[Image.Image]) -> dict[str, Any]:
    bench = Bench(controller, frames[0])
    worst = over = 0
    for frame in frames[1:]:
        ours, luma = bench.show(frame)
        worst = max(worst, ours[2])
        over += luma[2] > 0 and ours[2] > luma[2]
    out = bench.totals()
    out["worst_frame_ms"] = 1000 * worst / BUS_HZ
    out["frames_over_luma"] = over
    # No byte-addressed update can send less than the bytes that differ, with no overhead.
    differ = sum(changed_bytes(a, b) for a, b in zip(frames, frames[1:]))
    out["differing_bytes"] = differ
    out["bound_bus_s"] = differ * 9 / BUS_HZ
    return out


def worst_case_ms() -> dict[str, float]:
    """The costliest frame each driver can send: every byte of the panel changes, on the SSD1306
    right after a frame sent in page addressing (the switch back rides on the window's command)."""
    dots = Image.new("1", (128, 64))
    dots.putpixel((5, 3), 1)
    inverse = Image.eval(dots.convert("L"), lambda v: 255 - v).convert("1")
    out = {}
    for controller in DRIVERS:
        bench = Bench(controller, Image.new("1", (128, 64)))
        bench.show(dots)
        ours, _ = bench.show(inverse)
        out[controller] = 1000 * ours[2] / BUS_HZ
    return out


def run() -> dict[str, Any]:
    frames = hands_up_hour()
    return {"typical": typical(), "worst_case_ms": worst_case_ms(),
            "hands_up_hour": {c: hour(c, frames) for c in DRIVERS},
            "full_frame_ms": {"ssd1306": 1000 * (transfer_bits(6) + transfer_bits(1024)) / BUS_HZ,
                              "sh1106": 1000 * 8 * (transfer_bits(3) + transfer_bits(128)) / BUS_HZ}}
