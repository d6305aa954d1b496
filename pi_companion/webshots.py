"""`make screenshots`, the big screen's part: the scoreboard, host page and history during a real
game, in headless chromium (pi_companion.web.headless).

The stack is pi_companion.web.live's (shared with the browser tests and the benchmark): a box on
mock pins with its real loop thread and hub, and the real `pi-companion web`; the game is played
by driving the mock pins with real time, so the pictures show what a family would see (scores,
a buzz with its +N ms margins, the wind dial)."""
from __future__ import annotations

import os
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

from PIL import Image

from .pictures import write_if_changed
from .web import headless
from .web.live import Live, live_box

# The finished game's end on /history (its file's time): fixed, so that the picture is the same
# on every run and `make screenshots` leaves a clean checkout clean. 2026-05-30 19:30 UTC.
SHOT_TIME = 1780169400


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


def _snap(driver: Any, live: Live, out: Path, size: tuple[int, int]) -> Path:
    """The page as it is now, once it has drawn the box's latest snapshot; the whole page
    (taller than the screen where it must), so nothing is cut off in the picture."""
    if driver.find_elements("id", "status"):
        seq = str(live.seq())
        headless.wait(driver, lambda d: d.find_element("tag name", "body").get_attribute("data-seq") == seq)
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    _viewport(driver, size[0], max(size[1], height))
    time.sleep(0.2)
    with Image.open(BytesIO(driver.get_screenshot_as_png())) as shot:
        write_if_changed(out, shot)            # only a page that looks different is rewritten
    _viewport(driver, *size)
    return out


def grab_bag(out: Path, state: Path) -> list[Path]:
    """A short game played to the end (for /history), then a new one: three judged buzzes and a
    fourth left on screen with its margins."""
    written = []
    with live_box(state, "grab-bag", {"cards": 4}) as live:
        box = live.box
        while not box.engine.rules.is_over(box.engine.game):
            seekers = sorted(box.engine.rules.buzzers(box.engine.game))
            live.buzz([f"P{seekers[0] + 1}"])
            live.tap("YES")
            live.until(lambda: not box.engine.table.judging)
        live.new_game()
        live.box.store.wait()
        for finished in (state / "history").glob("*"):     # the page shows when it ended: the
            os.utime(finished, (SHOT_TIME, SHOT_TIME))       # same moment in every run's picture
        for first in (1, 2, 1):                              # Ben scores, Cy scores, Ben again
            seekers = sorted(box.engine.rules.buzzers(box.engine.game))
            order = sorted(seekers, key=lambda s: s != first)
            live.buzz([f"P{s + 1}" for s in order])
            live.tap("YES")
            live.until(lambda: not box.engine.table.judging)
        seekers = sorted(box.engine.rules.buzzers(box.engine.game))
        live.stamped_buzz([f"P{s + 1}" for s in reversed(seekers)], gap_s=0.012)   # left on screen
        phone, tv = headless.SIZES["phone"], headless.SIZES["tv"]
        with headless.chromium(*phone) as driver:
            for path, name in (("/", "web-scoreboard-phone"), (f"/host#t={live.hub.token}", "web-host-phone"),
                               ("/history", "web-history-phone")):
                _open(driver, live.base, path, phone)
                written.append(_snap(driver, live, out / f"{name}.png", phone))
            _open(driver, live.base, "/", tv)
            written.append(_snap(driver, live, out / "web-scoreboard-tv.png", tv))
    return written


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


def all_wound_up(out: Path, state: Path) -> list[Path]:
    """A wind check part way (the page is open first: a check left still for long ends)."""
    tv = headless.SIZES["tv"]
    with live_box(state, "all-wound-up") as live, headless.chromium(*tv) as driver:
        _open(driver, live.base, "/", tv)
        wind_part_way(live)
        return [_snap(driver, live, out / "web-wind-tv.png", tv)]


def save(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        written += grab_bag(out, Path(a))
        written += all_wound_up(out, Path(b))
    return written
