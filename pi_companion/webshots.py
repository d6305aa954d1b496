"""`make screenshots`, the big screen's part: the scoreboard, host page and history during real
games, in headless chromium (pi_companion.web.headless).

The stack is pi_companion.web.live's (shared with the browser tests and the benchmark): a box on
mock pins with its real loop thread and hub, and the real `pi-companion web`; the game is played
by driving the mock pins with real time, so the pictures show what a family would see.

`EVENINGS` has one scripted evening per game. Each calls `shoot(label)` at the moments worth a
picture (a buzz with its margins, the wind dial, the held verdict, the beat, the die, the depth
board, the winners); `make screenshots` saves the scoreboard at each of `SCREENS`' sizes there,
and tests_browser/ runs the same evenings asserting that nothing leaves the screen."""
from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path
from typing import Any

from PIL import Image

from .box import Wake
from .core.events import HostCommand
from .pictures import write_if_changed
from .web import headless
from .web.live import Live, live_box

# The finished game's end on /history (its file's time): fixed, so that the picture is the same
# on every run and `make screenshots` leaves a clean checkout clean. 2026-05-30 19:30 UTC.
SHOT_TIME = 1780169400

# The port the pictured web process listens on: the TV's join QR and its address carry it, so
# that every run draws the same code.
SHOT_PORT = 18080

# The scoreboard's sizes: a 1080p TV, a 720p TV, a portrait phone.
SCREENS = {"tv": (1920, 1080), "tv720": (1280, 720), "phone": (390, 844)}
SCENARIOS = Path(__file__).resolve().parents[1] / "docs" / "scenarios"
Shoot = Callable[[str], None]


def _viewport(driver: Any, width: int, height: int) -> None:
    """Exactly `width` x `height` CSS pixels of page (a window size would include the frame)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 800})


def _open(driver: Any, base: str, path: str, size: tuple[int, int]) -> None:
    _viewport(driver, *size)
    driver.get(base + path)
    if path.split("#")[0] in ("/", "/host"):
        headless.wait(driver, lambda d: d.find_element("id", "status").text == "live")
    if path.startswith("/host"):
        headless.wait(driver, lambda d: d.find_elements("css selector", "#names input"))


def drawn_latest(driver: Any, live: Live) -> None:
    """Wait until the page has drawn the box's latest snapshot."""
    seq = live.seq()                     # or a later one: the beat goes on meanwhile
    headless.wait(driver, lambda d: int(d.find_element("tag name", "body").get_attribute("data-seq")) >= seq)


def _snap(driver: Any, live: Live, out: Path, size: tuple[int, int]) -> Path:
    """The page as it is now, once it has drawn the box's latest snapshot."""
    if driver.find_elements("id", "status"):
        drawn_latest(driver, live)
    return _picture(driver, out, size)


@contextmanager
def held_clock(box: Any) -> Iterator[None]:
    """The box's clock stands still meanwhile: no beat, no settle window, no timer moves the
    game on. Afterwards it goes on from where it stood: the box's epoch moves by the time
    held, so pin edges stamped on the real clock stay in step with it, and a wake-up makes the
    loop measure its next timer again. (MockFactory's ticks are time.monotonic().)"""
    factory = box.factory
    frozen = factory.ticks()
    factory.ticks = lambda: frozen                   # this instance only: Box.now() stands still
    try:
        yield
    finally:
        box.t0 += time.monotonic() - frozen
        del factory.ticks
        box.queue.put(Wake())


@contextmanager
def _held(live: Live, driver: Any) -> Iterator[Callable[[], None]]:
    """While the pictures of one moment are taken, the moment stays: the box's clock stands
    still (on a loaded machine the pictures of one moment took longer than a Hands Up! beat),
    so no beat, settle window or timer makes a new snapshot, and every size shows the one the
    page has drawn. It yields `steady`, to call before each picture: the page is live and still
    shows that snapshot, else it says which moved. (The web process was once stopped meanwhile:
    on a loaded machine the three sizes took longer than the page's 3 s of silence, and the
    phone's picture said "Reconnecting to the box...".)"""
    box = live.box
    with held_clock(box):
        # The box has drawn what it holds (a frame waits for its log to be durable) and the
        # page shows that snapshot (the web process may still be one behind the box).
        # (A step the loop had begun when the clock stopped still ends in a snapshot: the page
        # must show the hub's latest, whichever that is.)
        def page(d: Any) -> int:
            return int(d.find_element("tag name", "body").get_attribute("data-seq"))
        live.until(lambda: not box.stale and box.queue.empty(), timeout=10)
        headless.wait(driver, lambda d: not box.stale and box.queue.empty() and page(d) == live.hub.seq,
                      timeout=10)
        shown = page(driver)

        def steady() -> None:
            now, status = page(driver), driver.find_elements("id", "status")
            if now != shown or live.hub.seq != shown or (status and status[0].text != "live"):
                raise RuntimeError(f"the moment moved while pictured: page snapshot {shown} -> {now}, "
                                   f"box {live.hub.seq}, page {status[0].text if status else '-'}")

        yield steady


def _picture(driver: Any, out: Path, size: tuple[int, int]) -> Path:
    """The page as drawn now at `size`; the whole page (taller than the screen where it must,
    as the host page on a phone), so nothing is cut off."""
    _viewport(driver, *size)
    connection = driver.execute_script("return document.body.dataset.connection || null")
    if connection not in (None, "live"):         # a board or host page: never picture its banner
        raise RuntimeError(f"{out.name}: the page says {connection!r}, not live")
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    _viewport(driver, size[0], max(size[1], height))
    time.sleep(0.2)
    with Image.open(BytesIO(driver.get_screenshot_as_png())) as shot:
        write_if_changed(out, _shrink(shot))    # only a page that looks different is rewritten
    _viewport(driver, *size)
    return out


def exact_buzz(live: Live, order: list[str], gap_s: float) -> None:
    """Presses on the mock pins in `order`, each edge stamped exactly `gap_s` after the one
    before, so the margins on the pages are the same on every run (real sleeps show a few ms
    of scheduling jitter). Each pin really goes low and its edge takes gpiozero's own path to
    the box (the pin's change callback); only its timestamp is the planned one, never later
    than the moment the edge is handed over. Released as `Live.buzz` does."""
    pins = [live.pin(name) for name in order]
    start = time.monotonic()
    for i, pin in enumerate(pins):
        stamp = start + i * gap_s
        time.sleep(max(0.0, stamp - time.monotonic()))
        if pin._change_state(False):                 # the pin goes low, as drive_low does ...
            pin._last_change = stamp                 # ... at the planned moment
            if pin._edges in ("both", "falling") and pin._when_changed is not None:
                pin._call_when_changed()
    live.until(lambda: live.box.engine.report()["last_buzz"] is not None and live.box.engine.table.judging
               and len(live.box.engine.report()["last_buzz"]["order"]) == len(order))
    time.sleep(0.08)
    for pin in pins:
        pin.drive_high()
    time.sleep(0.05)


def _shrink(image: Image.Image) -> Image.Image:
    """64 colours are plenty for a flat page and make the file a third of chromium's size (the
    gallery is about 70 pictures in the repository)."""
    return image.convert("RGB").quantize(colors=64)


# ---- the evenings: one per game, played on the mock pins ----

def judged(live: Live, verdict: str = "YES") -> None:
    live.tap(verdict)
    live.until(lambda: not live.box.engine.table.judging)


def grab_bag_evening(live: Live, shoot: Shoot) -> None:
    """Three judged buzzes, a fourth on screen with its margins, then the game played out."""
    box = live.box
    shoot("search")
    for first in (1, 2, 1):                              # Ben scores, Cy scores, Ben again
        seekers = sorted(box.engine.rules.buzzers(box.engine.game))
        order = sorted(seekers, key=lambda s: s != first)
        live.buzz([f"P{s + 1}" for s in order])
        judged(live)
    seekers = sorted(box.engine.rules.buzzers(box.engine.game))
    exact_buzz(live, [f"P{s + 1}" for s in reversed(seekers)], gap_s=0.012)   # same margins every run
    shoot("buzz")
    judged(live)
    while not box.engine.rules.is_over(box.engine.game):
        seekers = sorted(box.engine.rules.buzzers(box.engine.game))
        live.buzz([f"P{seekers[0] + 1}"])
        judged(live)
    shoot("winners")


def wind_part_way(live: Live) -> None:
    """All Wound Up: P1 opens a wind check, the encoder sets the target to 3 turns, nine hall
    steps wind 2 1/4 of them."""
    box = live.box
    live.tap("P1")
    live.until(lambda: box.engine.report()["check"] is not None)
    live.quadrature("ENC_A", "ENC_B", [(0, 1), (0, 0), (1, 0), (1, 1)] * 2, 0.03)     # 1 -> 3
    live.until(lambda: box.engine.report()["check"]["target"] == 3)
    live.quadrature("HALL_A", "HALL_B", [(1, 0), (1, 1), (0, 1), (0, 0)] * 2 + [(1, 0)], 0.05)
    live.until(lambda: box.engine.report()["check"]["steps"] == 9)


def all_wound_up_evening(live: Live, shoot: Shoot) -> None:
    """A wind check part way, its verdict once it settles (held on the TV as on the OLED), then
    Ben holds his button: "crossed the gate", YES, and Ben wins."""
    box = live.box
    shoot("start")
    wind_part_way(live)
    shoot("wind")
    live.until(lambda: box.engine.report()["check"] is None, timeout=20)
    shoot("verdict")
    live.tap("P2", hold=2.4)
    live.until(lambda: box.engine.report()["claim"] == "Ben")
    shoot("gate")
    live.tap("YES")
    live.until(lambda: box.engine.report()["over"])
    shoot("winners")


def hands_up_evening(live: Live, shoot: Shoot) -> None:
    """Quick mode: a new game (the deal), the beat, Ben grabs, YES (theft), played out."""
    box = live.box
    live.new_game()
    shoot("deal")
    live.until(lambda: box.engine.report()["beats"] >= 2, timeout=20)
    shoot("beat")
    exact_buzz(live, ["P2", "P3"], gap_s=0.006)
    shoot("grab")
    judged(live)
    shoot("result")
    # The game over as the hub serves it, not only as the engine has it: the loop sets the game
    # over, then waits for the log to be durable before it marks the screen stale, and a picture
    # taken in between showed the beat before it (docs/screens/web-hands-up-winners-*.png).
    live.until(lambda: box.engine.report()["over"] and json.loads(live.hub.latest or b"{}").get("over"),
               timeout=60)
    shoot("winners")


def scenario_evening(name: str, shots: tuple[float, ...]) -> Callable[[Live, Shoot], None]:
    """A documented scenario (docs/scenarios) played on the pins at its own pace; a picture at
    each time in `shots` (the time taken by a picture is added to the scenario's clock) and at
    the end."""
    def play(live: Live, shoot: Shoot) -> None:
        from .core.events import Edge, Turn
        from .replay import load_scenario
        scenario = load_scenario(json.loads((SCENARIOS / f"{name}.json").read_text()))
        start = time.monotonic()
        pending = list(shots)

        def until(t: float) -> None:
            nonlocal start
            while pending and pending[0] <= t:
                at = pending.pop(0)
                time.sleep(max(0.0, start + at - time.monotonic()))
                before = time.monotonic()
                shoot(f"t{at:g}")
                start += time.monotonic() - before
            time.sleep(max(0.0, start + t - time.monotonic()))
        for event in scenario.events:
            until(event.t)
            if isinstance(event, Edge):
                pin = live.pin(event.button)
                (pin.drive_low if event.pressed else pin.drive_high)()
            elif isinstance(event, Turn):
                steps = [(0, 1), (0, 0), (1, 0), (1, 1)]
                live.quadrature("ENC_A", "ENC_B", steps if event.delta > 0 else steps[::-1][1:] + steps[-1:], 0.02)
            live.until(live.box.queue.empty)        # the loop has it before the next one comes
        if scenario.end is not None:
            until(scenario.end)
        try:
            live.until(lambda: live.box.engine.rules.is_over(live.box.engine.game), timeout=20)
        except RuntimeError:
            raise RuntimeError(f"{name} played on the pins did not end: {live.box.engine.report()}") from None
        shoot("winners")
    return play


def scenario_config(name: str) -> Any:
    from .config import Config
    data = json.loads((SCENARIOS / f"{name}.json").read_text())
    return Config(players=tuple(data["players"]), game=data["game"], seed=data.get("seed", 1), sound=False,
                  games={data["game"]: data.get("options", {})})


# game -> (options, scenario whose config to use or None, the evening)
EVENINGS: dict[str, tuple[dict[str, Any], str | None, Callable[[Live, Shoot], None]]] = {
    "grab-bag": ({"cards": 6}, None, grab_bag_evening),
    "hands-up": ({"mode": "quick", "cards": 12, "beat_ms": 4000}, None, hands_up_evening),
    # The turntable still for 8 s ends a check (1.5 s by default): time for three pictures of it.
    "all-wound-up": ({"settle_ms": 8000}, None, all_wound_up_evening),
    "hold-everything": ({}, "hold-everything-win", scenario_evening("hold-everything-win", (1.5, 3.0, 4.2, 9.5))),
    "hold-your-breath": ({}, "hold-your-breath-surface-win",
                         scenario_evening("hold-your-breath-surface-win", (2.2, 9.0))),
}


@contextmanager
def evening(game: str, state: Path, port: int | None = None) -> Iterator[tuple[Live, Callable[[Live, Shoot], None]]]:
    """The live box set up for `game`'s evening (its web process on `port`, default a free
    one), and the evening to play on it."""
    options, scenario, play = EVENINGS[game]
    config = scenario_config(scenario) if scenario else None
    with live_box(state, game, options, config=config, web_port=port) as live:
        yield live, play


def evening_shots(game: str, out: Path, state: Path) -> list[Path]:
    """`game`'s evening with the scoreboard open, saved at every size at each of its moments."""
    written: list[Path] = []
    with evening(game, state, SHOT_PORT) as (live, play), headless.chromium(*SCREENS["tv"]) as driver:
        _open(driver, live.base, "/", SCREENS["tv"])

        def shoot(label: str) -> None:
            written.extend(moment_pictures(live, driver, out, f"web-{game}-{label}"))
        play(live, shoot)
    return written


def moment_pictures(live: Live, driver: Any, out: Path, prefix: str) -> list[Path]:
    """The page as it shows the box's moment now, at every size, all of that one snapshot and
    all live (never a "Reconnecting" banner, however long the pictures take)."""
    written = []
    with _held(live, driver) as steady:
        for size_name, size in SCREENS.items():
            steady()
            written.append(_picture(driver, out / f"{prefix}-{size_name}.png", size))
    return written


def host_and_history(out: Path, state: Path) -> list[Path]:
    """The host page and /history on a phone, after a short Grab Bag played to the end."""
    written = []
    with live_box(state, "grab-bag", {"cards": 4}, web_port=SHOT_PORT) as live:
        box = live.box
        while not box.engine.rules.is_over(box.engine.game):
            seekers = sorted(box.engine.rules.buzzers(box.engine.game))
            live.buzz([f"P{seekers[0] + 1}"])
            judged(live)
        live.new_game()
        live.box.store.wait()
        for finished in (state / "history").glob("*"):     # the page shows when it ended: the
            os.utime(finished, (SHOT_TIME, SHOT_TIME))       # same moment in every run's picture
        phone = SCREENS["phone"]
        with headless.chromium(*phone) as driver:
            for path, name in ((f"/host#t={live.hub.token}", "web-host-phone"), ("/history", "web-history-phone")):
                _open(driver, live.base, path, phone)
                written.append(_snap(driver, live, out / f"{name}.png", phone))
    return written


def view_shots(out: Path) -> list[Path]:
    """The big screen's other views (web/tvshots.py: the box's screens, cards on the table, the
    join QR), each of their moments at every size."""
    from .web import tvshots
    written: list[Path] = []
    for name, (game, options, players, script) in tvshots.VIEWS.items():
        with tempfile.TemporaryDirectory() as state, \
                live_box(Path(state), game, options, players=players, web_port=SHOT_PORT) as live, \
                headless.chromium(*SCREENS["tv"]) as driver:
            _open(driver, live.base, "/", SCREENS["tv"])

            def shoot(label: str, name: str = name, live: Live = live, driver: Any = driver) -> None:
                written.extend(moment_pictures(live, driver, out, f"web-view-{name}-{label}"))
            script(live, shoot)
    return written


# ---- the evening's standings and podium (web/static/evening.js) ----

TONIGHT = (("P2", "P2"), ("P3", "P1"), ("P2", "P3"))    # who is judged right, game by game


def tonight(live: Live, shoot: Shoot, end: Callable[[], None] | None = None) -> None:
    """Three games of Grab Bag (Ben wins, Cy and Ada tie, Ben and Cy tie): the standings on the
    board after the third, then the host ends the evening (`end`, else the host's command put
    on the box's queue): the podium."""
    box = live.box
    for i, game in enumerate(TONIGHT):
        if i:
            live.new_game()
            # The new game reads the pins as it starts (a button already down is ignored until
            # released): press nothing until it has, so no press races that read.
            live.until(lambda: box.queue.empty() and not box.stale, timeout=30)
            time.sleep(0.3)
        for seat in game:
            # One press and its YES, each waited for as long as a loaded machine needs.
            pin = live.pin(seat)
            pin.drive_low()
            live.until(lambda: box.engine.table.judging, timeout=30)
            pin.drive_high()
            time.sleep(0.1)
            live.tap("YES")
            live.until(lambda: not box.engine.table.judging, timeout=30)
        live.until(lambda: box.engine.rules.is_over(box.engine.game), timeout=30)
    box.store.wait()
    shoot("standings")
    (end or (lambda: box.put_host_command(HostCommand(0.0, "end-evening"))))()
    live.until(lambda: (live.state / "history" / "evening-000001.json").exists(), timeout=10)
    shoot("podium")


def evening_view_shown(driver: Any, view: str, games: int) -> None:
    """Wait until the board shows the evening's `view` ("standings", "podium") of `games`."""
    words = f"Tonight: {games} games" if view == "standings" else f"{games} games played"
    headless.wait(driver, lambda d: d.find_element("id", "evening").get_attribute("data-view") == view
                  and words in d.find_element("id", "evening").text, timeout=10)


def tonight_shots(out: Path, state: Path) -> list[Path]:
    """The board with tonight's standings and with its podium, at every size."""
    written: list[Path] = []
    with live_box(state, "grab-bag", {"cards": 2, "variant": "all-seekers"}, web_port=SHOT_PORT) as live, \
            headless.chromium(*SCREENS["tv"]) as driver:
        _open(driver, live.base, "/", SCREENS["tv"])

        def shoot(view: str) -> None:
            evening_view_shown(driver, view, len(TONIGHT))
            written.extend(moment_pictures(live, driver, out, f"web-evening-{view}"))
        tonight(live, shoot)
    return written


def save(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for game in EVENINGS:
        with tempfile.TemporaryDirectory() as state:
            written += evening_shots(game, out, Path(state))
    with tempfile.TemporaryDirectory() as state:
        written += host_and_history(out, Path(state))
    written += view_shots(out)
    with tempfile.TemporaryDirectory() as state:
        written += tonight_shots(out, Path(state))
    for old in set(out.glob("web-*.png")) - set(written):      # a moment no evening shows any more
        old.unlink()
    return written
