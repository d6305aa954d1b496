"""The pages in a real browser: Debian's chromium, headless, driven by selenium through
/usr/bin/chromedriver (no browser download), at phone (390x844) and TV (1920x1080) sizes.
A box on mock pins runs its real loop thread and hub in this process; `pi-companion web` is
the real second process. Run with `make browser-test`; a missing browser is a failure."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from pi_companion.app import Box
from pi_companion.config import Config
from pi_companion.hub import Hub
from pi_companion.hw.display import Display
from pi_companion.hw.pinmap import load_pinmap
from pi_companion.store import GameLog
from pi_companion.web import headless

SIZES = headless.SIZES
wait = headless.wait


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """A live box (loop thread, hub socket, game log) and the web process serving it."""
    state = tmp_path_factory.mktemp("state")
    factory = MockFactory(pin_class=MockPWMPin)
    Device.pin_factory = factory
    box = Box(Config(players=("Ada", "Ben", "Cy"), seed=1, sound=False, games={"grab-bag": {"cards": 60}}),
              factory, Display(None),
              store=GameLog(state))
    hub = Hub(box, state / "hub.sock", state)
    hub.attach()
    hub.start()
    box.start()
    port = free_port()
    web = subprocess.Popen([sys.executable, "-m", "pi_companion", "web", "--config", os.devnull,
                            "--state-dir", str(state), "--socket", str(state / "hub.sock"),
                            "--bind", "127.0.0.1", "--port", str(port)], stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(base + "/api/snapshot", timeout=1)
            break
        except OSError:
            time.sleep(0.05)
    else:
        web.kill()
        pytest.fail(f"pi-companion web did not start: {web.stderr.read()}")
    yield box, hub, factory, base, state
    web.terminate()
    web.wait(timeout=10)
    box.close()
    hub.close()
    factory.reset()


@pytest.fixture(scope="module", params=list(SIZES), ids=list(SIZES))
def browser(request):
    why = headless.missing()
    if why:
        pytest.fail(why)
    with headless.chromium(*SIZES[request.param]) as driver:
        yield driver


def live_seq(base):
    return json.load(urllib.request.urlopen(base + "/api/snapshot", timeout=2))["seq"]


def tap(factory, button, hold=0.06):
    pin = factory.pin(load_pinmap()[button])
    pin.drive_low()
    time.sleep(hold)
    pin.drive_high()


# When the page has drawn a new buzz (board.js calls window.onSnapshot after drawing).
WATCH = """
window.__buzzSeen = null;
const before = JSON.stringify(arguments[0]);
window.onSnapshot = (s) => {
  if (window.__buzzSeen === null && s.buzz && JSON.stringify(s.buzz) !== before) window.__buzzSeen = Date.now();
};
"""


def test_the_scoreboard_shows_a_buzz_within_200_ms(stack, browser):
    """Five buzzes; the median press -> drawn page is under 200 ms (one slow one on a loaded
    CI machine is not the page's fault, five are)."""
    box, hub, factory, base, _ = stack
    browser.get(base + "/")
    wait(browser, lambda d: d.find_element("id", "status").text == "live")
    latencies = []
    for _ in range(5):
        seeker = min(box.engine.rules.buzzers(box.engine.game))
        name = box.engine.players[seeker]
        wait(browser, lambda d: int(d.find_element("tag name", "body").get_attribute("data-seq")) == live_seq(base))
        browser.execute_script(WATCH, box.engine.report()["last_buzz"])
        pin = factory.pin(load_pinmap()[f"P{seeker + 1}"])
        pressed = time.time()
        pin.drive_low()
        seen = wait(browser, lambda d: d.execute_script("return window.__buzzSeen"))
        latencies.append(seen - pressed * 1000.0)
        pin.drive_high()
        order = browser.find_element("css selector", "#buzz ol").text
        assert order.startswith(name) and "(first)" in order
        row = browser.find_element("css selector", "#players tbody tr.turn td.name")
        assert row.is_displayed() and row.size["width"] > 0
        assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        tap(factory, "YES")                               # judged: the next press buzzes afresh
        wait(browser, lambda d: not box.engine.table.judging)
    assert sorted(latencies)[2] < 200, f"press to page: {sorted(latencies)} ms"


def test_a_refresh_reconnects_with_the_latest_at_once(stack, browser):
    box, hub, factory, base, _ = stack
    browser.get(base + "/")
    wait(browser, lambda d: d.find_element("id", "status").text == "live")
    browser.refresh()
    latest = live_seq(base)
    wait(browser, lambda d: d.find_element("tag name", "body").get_attribute("data-seq") == str(latest))
    assert browser.find_element("id", "title").text == "Grab Bag"


def test_the_host_page_renames_a_player(stack, browser):
    box, hub, factory, base, state = stack
    from selenium.webdriver.common.keys import Keys
    browser.get(f"{base}/host#t={hub.token}")
    wait(browser, lambda d: d.find_elements("css selector", "#names input"))
    assert browser.execute_script("return location.hash") == ""           # out of the address bar
    assert browser.execute_script("return sessionStorage.getItem('hostToken')") == hub.token
    new = "Zed" if box.engine.players[2] != "Zed" else "Zoe"
    field = browser.find_elements("css selector", "#names input")[2]
    field.clear()
    field.send_keys(new, Keys.TAB)
    wait(browser, lambda d: d.find_element("id", "result").text == "\u2713 done")
    wait(browser, lambda d: new in d.find_element("id", "players").text)
    assert box.engine.players[2] == new
    log = (state / "current.log").read_text()
    assert f'"host":"rename","player":2,"name":"{new}"' in log


def test_without_the_token_the_host_page_is_read_only(stack, browser):
    box, hub, factory, base, _ = stack
    browser.get(base + "/")                                  # a fresh page: no token in the session
    browser.execute_script("sessionStorage.clear()")
    browser.get(base + "/host")
    wait(browser, lambda d: d.find_element("id", "status").text == "live")
    assert "read only" in browser.find_element("id", "hoststate").text
    before = box.engine.report()
    browser.find_element("id", "undo").click()
    wait(browser, lambda d: "not the host" in d.find_element("id", "result").text)
    assert box.engine.report() == before


def test_the_wind_dial_counts_quarters_to_the_target(tmp_path):
    """All Wound Up on mock pins: P1 opens a check, the encoder sets 3 turns, nine hall steps
    wind 2 1/4; the dial's needle is at 1/4, its ring part full, and the words say the rest."""
    from pi_companion import webshots
    with webshots.live_box("all-wound-up", tmp_path) as (box, hub, factory, base), \
            headless.chromium(*SIZES["tv"]) as driver:
        driver.get(base + "/")
        wait(driver, lambda d: d.find_element("id", "status").text == "live")
        webshots._tap(factory, "P1")
        webshots._until(lambda: box.engine.report()["check"] is not None)
        webshots._quadrature(webshots._pin(factory, "ENC_A"), webshots._pin(factory, "ENC_B"),
                             [(0, 1), (0, 0), (1, 0), (1, 1)] * 2, 0.03)
        webshots._until(lambda: box.engine.report()["check"]["target"] == 3)
        webshots._quadrature(webshots._pin(factory, "HALL_A"), webshots._pin(factory, "HALL_B"),
                             [(1, 0), (1, 1), (0, 1), (0, 0)] * 2 + [(1, 0)], 0.05)
        webshots._until(lambda: box.engine.report()["check"]["steps"] == 9)
        wait(driver, lambda d: d.find_element("css selector", "#wind .count .big").text
             == "Ada: 2\u00bc of 3 turns")
        assert driver.find_element("css selector", "#wind .count .left").text == "\u00be to go"
        dial = driver.find_element("css selector", "#wind svg.dial")
        assert dial.get_attribute("class") == "dial under"
        assert driver.find_element("css selector", "#wind .needle").get_attribute("transform") == "rotate(90)"
        assert [t.text for t in driver.find_elements("css selector", "#wind .ticks text")] == \
            ["0", "\u00bc", "\u00bd", "\u00be"]
        assert dial.size["width"] >= 400                           # big at TV size
