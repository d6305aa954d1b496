"""Torture: chattering buttons, a failing display bus and mangled game scripts, all deterministic.

Everything runs on a virtual clock (edges are stamped with it, the box reads it), so tens of
thousands of edges and minutes of game time take seconds. The serial parser's torture (100 000
random and mutated lines, counters checked) lives in tests/link/test_proto.py
(`test_100k_random_and_mutated_lines`) and is not repeated here.
"""
from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory, MockPin

from helpers.common import Clock, VirtualFactory, VirtualPin
from helpers import boxes
from PIL import Image, ImageDraw
from helpers.ssd1306_panel import Panel

from pi_companion.box import Box, Wake, frames
from pi_companion.cli import main as cli_main
from pi_companion.config import Config
from pi_companion.hw.display import RETRY_S, Display
from pi_companion.hw.pinmap import load_pinmap
from pi_companion.hw.ssd1306_dirty import DirtySSD1306, page_bytes
from pi_companion.replay import ScenarioError, load_scenario, run_scenario

PLAYERS = ("Ada", "Ben", "Cy", "Di")




@pytest.fixture
def factory():
    Clock.now = 0.0
    f = VirtualFactory(pin_class=VirtualPin)
    yield f
    f.reset()


def grab_bag(cards: int = 200, **options: Any) -> Config:
    return Config(game="grab-bag", players=PLAYERS, seed=9, sound=False,
                  games={"grab-bag": {"variant": "standard", "cards": cards, **options}})


def make_box(config: Config, factory: MockFactory, display: Display) -> Box:
    box = boxes.make_box(factory, config=config, display=display)
    # A box without a piezo pin still times its tunes on a worker thread, and close() waits
    # up to 2 s for the queue; these tests have hundreds of tunes queued: only note them.
    box.piezo.play = box.piezo.played.append  # type: ignore[method-assign]
    return box


PINS = load_pinmap()              # read once: the tests press thousands of times


def pin(factory: MockFactory, name: str) -> MockPin:
    return factory.pin(PINS[name])


# ---- 10 000 chattering presses --------------------------------------------------------------

def chatter(p: MockPin, rng: random.Random, pressed: bool) -> None:
    """Drive `p` to its new level through 0-4 ms of contact bounce (0 to 3 extra flips)."""
    final = p.drive_low if pressed else p.drive_high
    other = p.drive_high if pressed else p.drive_low
    span = rng.uniform(0.0, 0.004)
    flips = rng.randint(0, 3)
    times = sorted(rng.uniform(0.0, span) for _ in range(2 * flips))
    start = Clock.now
    final()
    for i, at in enumerate(times):
        Clock.now = start + at
        (other if i % 2 == 0 else final)()
    Clock.now = start + span


def test_ten_thousand_chattering_presses_count_exactly(factory, monkeypatch):
    # The frame is not under test and rendering it costs ~3 ms: draw nothing.
    blank = Image.new("1", (128, 64))
    monkeypatch.setattr(frames, "render", lambda view, links=(): blank)
    box = make_box(grab_bag(), factory, Display(None))
    rng = random.Random(10_000)
    buttons = [pin(factory, f"P{i}") for i in range(1, 5)]
    per_button = [0, 0, 0, 0]
    Clock.now = 1.0
    try:
        for n in range(1, 10_001):
            k = rng.randrange(4)
            chatter(buttons[k], rng, pressed=True)
            box.pump()
            assert box.engine.presses == n, f"press {n} on P{k + 1}: counted {box.engine.presses}"
            Clock.now += rng.uniform(0.010, 0.300)             # held
            chatter(buttons[k], rng, pressed=False)
            box.pump()
            Clock.now += rng.uniform(0.060, 0.400)             # the gap before the next press
            per_button[k] += 1
        box.queue.put(Wake())
        box.pump()
        assert box.engine.presses == 10_000
        assert not any(box.engine.buttons[f"P{i}"].logical for i in range(1, 5))
        assert min(per_button) > 2300
    finally:
        box.close()


# ---- the display bus fails for 1 000 frames --------------------------------------------------

class FlakyBus(Panel):
    """The emulated panel behind an I2C bus that raises OSError while `failing` says so."""

    def __init__(self) -> None:
        super().__init__()
        self.failing: Any = lambda: False

    def command(self, *cmd: int) -> None:
        if self.failing():
            raise OSError(121, "Remote I/O error")
        super().command(*cmd)

    def data(self, data: list[int]) -> None:
        if self.failing():
            raise OSError(121, "Remote I/O error")
        super().data(data)


def play_round(factory: MockFactory, box: Box, rng: random.Random) -> None:
    """A few inputs of Grab Bag: seekers buzz, the Grab Master judges."""
    def tap(name: str, hold: float = 0.08) -> None:
        pin(factory, name).drive_low()
        box.pump()
        Clock.now += hold
        pin(factory, name).drive_high()
        box.pump()
        Clock.now += 0.2
    tap(f"P{rng.randint(1, 4)}")
    Clock.now += 0.01
    box.queue.put(Wake())
    box.pump()
    tap(rng.choice(["YES", "NO", "YES"]))


def quick_frame(view: Any, links: tuple[str, ...] = ()) -> Image.Image:
    """A cheap stand-in for the screens (~3 ms a frame): score bars and a phase mark."""
    image = Image.new("1", (128, 64))
    draw = ImageDraw.Draw(image)
    for i, score in enumerate(view.game.scores):
        draw.rectangle((0, 10 * i, 2 * score, 10 * i + 6), fill=1)
    mark = ("searching", "judging", "over").index(view.game.phase)
    draw.rectangle((100 + 8 * mark, 50, 106 + 8 * mark, 60), fill=1)
    return image


def test_display_errors_for_a_thousand_frames_then_recovery(factory, monkeypatch):
    monkeypatch.setattr(frames, "render", quick_frame)
    bus = FlakyBus()
    display = Display(lambda: DirtySSD1306(bus))
    box = make_box(grab_bag(), factory, display)
    offered = []
    show = display.show
    display.show = lambda frame, now: offered.append(now) or show(frame, now)  # type: ignore[method-assign]
    rng = random.Random(3)
    rounds = 0
    Clock.now = 1.0
    try:
        play_round(factory, box, rng)
        assert display.sent > 0 and not display.down
        bus.failing = lambda: True
        failing_from = len(offered)
        while len(offered) - failing_from < 1000:
            play_round(factory, box, rng)
            rounds += 1
        assert display.down and display.errors > 10          # reopened every RETRY_S, and failed
        assert box.engine.game.scores != (0, 0, 0, 0)         # the game went on
        flaky = random.Random(4)                              # then 3 transfers in 10 fail
        bus.failing = lambda: flaky.random() < 0.3
        while len(offered) - failing_from < 1200:
            play_round(factory, box, rng)
            rounds += 1
        bus.failing = lambda: False
        Clock.now += RETRY_S
        box.queue.put(Wake())
        box.pump()
        assert not display.down and display.device is not None
        assert bytes(bus.gram) == page_bytes(quick_frame(box.engine), 8)
        played = box.engine.report()
    finally:
        box.close()
    assert played == game_without_display(rounds)


def game_without_display(rounds: int) -> dict[str, Any]:
    """The same inputs on a box with no display at all: the game must be the same."""
    Clock.now = 1.0
    factory = VirtualFactory(pin_class=VirtualPin)
    box = make_box(grab_bag(), factory, Display(None))
    rng = random.Random(3)
    try:
        for _ in range(rounds + 1):
            play_round(factory, box, rng)
        Clock.now += RETRY_S
        box.queue.put(Wake())
        box.pump()
        return box.engine.report()
    finally:
        box.close()
        factory.reset()


# ---- a Grab Bag game script, duplicated, truncated and reordered --------------------------

def script(seed: int = 1, rounds: int = 40) -> dict[str, Any]:
    """A 4-player Grab Bag game: close buzzes (0.05-1.9 ms apart), judgements, an undo now and then."""
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    t = 1.0

    def tap(button: str, at: float, hold: float = 0.08) -> None:
        events.append({"t": round(at, 6), "press": button})
        events.append({"t": round(at + hold, 6), "release": button})

    for _ in range(rounds):
        racers = rng.sample(["P1", "P2", "P3", "P4"], rng.randint(1, 3))
        at = t
        for racer in racers:
            tap(racer, at, hold=rng.uniform(0.05, 0.3))
            at += rng.uniform(0.00005, 0.0019)
        t += 1.0
        verdict = rng.choice(["YES", "YES", "NO"])
        tap(verdict, t)
        if rng.random() < 0.15:
            tap("NO", t + 0.5, hold=1.2)                   # long NO: undo
        t += 2.0
    events.sort(key=lambda e: e["t"])
    return {"game": "grab-bag", "players": list(PLAYERS), "seed": 4,
            "options": {"variant": "standard", "cards": 30}, "events": events, "end": t + 5}


def outcome(data: Any) -> dict[str, Any] | ScenarioError:
    """The report, or the clear error; anything else raised fails the test."""
    try:
        return run_scenario(load_scenario(copy.deepcopy(data)))
    except ScenarioError as err:
        assert str(err) and "\n" not in str(err)
        return err


def assert_valid(report: dict[str, Any], cards: int = 30) -> None:
    scores = report["scores"]
    assert set(scores) == set(PLAYERS) and all(s >= 0 for s in scores.values())
    assert sum(scores.values()) + report["deck"] + report["set_aside"] == cards
    assert report["phase"] in ("searching", "judging", "over")
    assert report["over"] == (report["phase"] == "over") == (report["deck"] == 0)
    if report["over"]:
        top = max(scores.values())
        assert sorted(report["winners"]) == sorted(p for p, s in scores.items() if s == top)
    assert report["grab_master"] in PLAYERS
    json.dumps(report)


def test_the_script_is_a_real_game():
    report = outcome(script())
    assert isinstance(report, dict)
    assert_valid(report)
    assert report["last_buzz"] is not None and sum(report["scores"].values()) > 10


def test_every_event_duplicated_changes_nothing():
    data = script()
    doubled = copy.deepcopy(data)
    doubled["events"] = [e for e in data["events"] for e in (e, dict(e))]
    assert outcome(doubled) == outcome(data)


def test_reordered_within_the_settle_window_changes_nothing():
    data = script()
    for seed in range(20):
        rng = random.Random(seed)
        events = copy.deepcopy(data["events"])
        for i in range(len(events) - 1):      # swap neighbours less than 2 ms apart, at random
            if abs(events[i + 1]["t"] - events[i]["t"]) < 0.002 and rng.random() < 0.7:
                events[i], events[i + 1] = events[i + 1], events[i]
        assert outcome(dict(data, events=events)) == outcome(data), f"seed {seed}"


def test_every_truncation_is_a_valid_game():
    data = script()
    for n in range(len(data["events"]) + 1):
        report = outcome(dict(data, events=data["events"][:n]))
        assert isinstance(report, dict), report
        assert_valid(report)


def test_truncated_events_are_clear_errors():
    data = script()
    for i, event in enumerate(data["events"][:60]):
        for key in list(event):
            cut = copy.deepcopy(data)
            del cut["events"][i][key]
            err = outcome(cut)
            assert isinstance(err, ScenarioError) and str(err).startswith(f"event {i}:")


def test_a_truncated_file_is_a_clear_error(tmp_path, capsys):
    text = json.dumps(script(rounds=5))
    rng = random.Random(8)
    path = tmp_path / "cut.json"
    for _ in range(30):
        path.write_text(text[:rng.randrange(len(text))])
        assert cli_main(["replay", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1


def test_random_mangling_gives_a_valid_game_or_a_clear_error():
    data = script(seed=2)
    rng = random.Random(77)
    errors = reports = 0
    for _ in range(300):
        events = copy.deepcopy(data["events"])
        for _ in range(rng.randint(1, 12)):
            i = rng.randrange(len(events))
            kind = rng.randrange(5)
            if kind == 0:
                events.insert(i, dict(events[i]))                                # duplicate
            elif kind == 1:
                del events[i]                                                    # lose
            elif kind == 2 and i + 1 < len(events):
                events[i], events[i + 1] = events[i + 1], events[i]              # reorder
            elif kind == 3 and "t" in events[i]:
                events[i]["t"] = round(events[i]["t"] + rng.uniform(-0.002, 0.002), 6)  # jitter
            elif events[i]:
                events[i].pop(rng.choice(list(events[i])))                       # truncate
        result = outcome(dict(data, events=events))
        if isinstance(result, ScenarioError):
            errors += 1
        else:
            assert_valid(result)
            reports += 1
    assert errors > 20 and reports > 20
