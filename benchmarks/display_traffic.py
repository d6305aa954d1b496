"""Figure 6, display traffic: bytes sent to the SSD1306 per update, ours against luma's ssd1306.

Both drivers write to a counting fake I2C interface (command and data bytes, as luma hands
them to the bus; each call also costs the bus an address and a control byte, not counted).
The frames are the real screens (`ui.screens.render`) of real engine states:

- a buzz: Grab Bag, the Grab Master's screen -> "BEN!" with the runner-up's margin;
- a score change: the YES that gives Ben the card (score, round, deck, new Grab Master);
- a live wind count: All Wound Up, one more hall step on the winding screen (0.25 -> 0.50 turns);
- an unchanged frame (the loop redraws on every input and timer; most frames are unchanged).

Then a whole scripted 4-player game, one frame per input as the box draws them: luma sending
every frame, luma behind our unchanged-frame skip, and ours.
"""
from __future__ import annotations

import random
from typing import Any

from luma.oled.device import ssd1306
from PIL import Image

from pi_companion.core.engine import Engine
from pi_companion.core.events import Edge, HallLevel
from pi_companion.games import registry
from pi_companion.hw.display import Display
from pi_companion.hw.ssd1306_dirty import DirtySSD1306, page_bytes
from pi_companion.ui.screens import render

PLAYERS = ("Ada", "Ben", "Cy", "Di")
LUMA_FRAME = 1030


class CountingBus:
    """A fake luma serial interface that counts the bytes handed to it."""

    def __init__(self) -> None:
        self.bytes = 0

    def command(self, *cmd: int) -> None:
        self.bytes += len(cmd)

    def data(self, data: Any) -> None:
        self.bytes += len(data)

    def cleanup(self) -> None:
        pass


class Pair:
    """Our driver and luma's, each behind a Display (which skips unchanged frames)."""

    def __init__(self, first: Image.Image) -> None:
        self.ours_bus, self.luma_bus = CountingBus(), CountingBus()
        self.ours = Display(lambda: DirtySSD1306(self.ours_bus))
        self.luma = Display(lambda: ssd1306(self.luma_bus))
        self.show(first)

    def show(self, frame: Image.Image) -> tuple[int, int]:
        """Bytes each sent for `frame`."""
        before = self.ours_bus.bytes, self.luma_bus.bytes
        self.ours.show(frame, 0.0)
        self.luma.show(frame, 0.0)
        return self.ours_bus.bytes - before[0], self.luma_bus.bytes - before[1]


def grab_bag_updates() -> tuple[list[Image.Image], dict[str, int]]:
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
    return frames, {"buzz": 1, "score_change": 2}


def wind_updates() -> list[Image.Image]:
    e = Engine(registry.get("all-wound-up"), PLAYERS, {}, 1)
    e.feed(Edge(1.0, "P1", True))
    e.feed(Edge(1.1, "P1", False))
    e.feed(HallLevel(2.0, "A", 1))
    before = render(e)                                      # 0.25 turns
    e.feed(HallLevel(2.05, "B", 1))
    return [before, render(e)]                              # 0.50 turns


def changed_bytes(before: Image.Image, after: Image.Image) -> int:
    """GDDRAM bytes that differ: what any byte-addressed update must send, windows aside."""
    old, new = page_bytes(before, 8), page_bytes(after, 8)
    return sum(a != b for a, b in zip(old, new))


def typical() -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    frames, _ = grab_bag_updates()
    pair = Pair(frames[0])
    for name, before, frame in (("buzz", frames[0], frames[1]), ("score_change", frames[1], frames[2])):
        ours, luma = pair.show(frame)
        out[name] = {"ours": ours, "luma": luma, "share": ours / luma,
                     "changed_bytes": changed_bytes(before, frame)}
    before, after = wind_updates()
    pair = Pair(before)
    ours, luma = pair.show(after)
    out["wind_count"] = {"ours": ours, "luma": luma, "share": ours / luma,
                         "changed_bytes": changed_bytes(before, after)}
    ours, luma = pair.show(after.copy())
    stock_bus = CountingBus()
    stock = ssd1306(stock_bus)
    stock_bus.bytes = 0
    stock.display(after)                                     # luma without our skip
    out["unchanged"] = {"ours": ours, "luma": stock_bus.bytes, "share": ours / stock_bus.bytes,
                        "changed_bytes": 0}
    return out


def game_script(seed: int = 5, rounds: int = 60) -> list[Edge]:
    rng = random.Random(seed)
    events: list[Edge] = []
    t = 1.0
    for _ in range(rounds):
        at = t
        for racer in rng.sample(["P2", "P3", "P4", "P1"], rng.randint(1, 3)):
            events += [Edge(at, racer, True), Edge(at + 0.1, racer, False)]
            at += rng.uniform(0.0001, 0.0019)
        t += 1.5
        verdict = rng.choice(["YES", "YES", "NO"])
        events += [Edge(t, verdict, True), Edge(t + 0.1, verdict, False)]
        t += 1.5
    return sorted(events, key=lambda e: e.t)


def whole_game() -> dict[str, Any]:
    e = Engine(registry.get("grab-bag"), PLAYERS, {"variant": "standard", "cards": 30}, 3)
    pair = Pair(render(e))
    frames = ours = luma = 0
    for event in game_script():
        e.feed(event)
        for at in (event.t, event.t + 0.003):               # the input, then its timers
            if at != event.t:
                e.advance(at)
            frames += 1
            o, lu = pair.show(render(e))
            ours, luma = ours + o, luma + lu
    return {"frames": frames, "luma_every_frame": frames * LUMA_FRAME, "luma_changed_frames": luma,
            "ours": ours, "share_of_luma_every_frame": ours / (frames * LUMA_FRAME),
            "share_of_luma_changed_frames": ours / luma if luma else 0.0}


def run() -> dict[str, Any]:
    updates = typical()
    shares = [updates[k]["share"] for k in ("buzz", "score_change", "wind_count")]
    return {"updates": updates, "typical_mean_share": sum(shares) / len(shares),
            "whole_game": whole_game()}
