"""The pages in a real browser: Debian's chromium, headless, driven by selenium through
/usr/bin/chromedriver (no browser download), at phone (390x844) and TV (1920x1080) sizes.
The stack is pi_companion.web.live's (shared with `make screenshots` and the benchmark): a box
on mock pins with its real loop thread, game log and hub in this process, and the real
`pi-companion web`. Run with `make browser-test`; a missing browser is a failure."""
from __future__ import annotations

import json
import time
import urllib.request

import pytest

from pi_companion.hw.pinmap import load_pinmap
from pi_companion.web import headless
from pi_companion.web.live import live_box

SIZES = headless.SIZES
wait = headless.wait
PINS = load_pinmap()


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """A live box (loop thread, hub socket, game log) and the web process serving it."""
    state = tmp_path_factory.mktemp("state")
    with live_box(state, "grab-bag", {"cards": 60}) as live:
        yield live.box, live.hub, live.factory, live.base, state


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
    pin = factory.pin(PINS[button])
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
        pin = factory.pin(PINS[f"P{seeker + 1}"])
        pressed = time.time()
        pin.drive_low()
        seen = wait(browser, lambda d: d.execute_script("return window.__buzzSeen"))
        latencies.append(seen - pressed * 1000.0)
        pin.drive_high()
        order = browser.find_element("css selector", "#buzz").text
        assert order.startswith(name) and "(first)" in order
        row = browser.find_element("css selector", "#players .turn .name")
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
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(new, Keys.TAB)      # (a cleared field is a refused rename)
    out = field.find_element("xpath", "following-sibling::output")      # its result, beside it
    wait(browser, lambda d: out.text == "\u2713 done")
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


def names_on_the_host_page(driver):
    return [e.get_attribute("value") for e in driver.find_elements("css selector", "#names input")]


def test_the_host_page_shows_the_names_when_its_script_loads_after_the_first_snapshot(stack, browser):
    """host.js and board.js load in parallel, and the WebSocket's first snapshot can be drawn
    before host.js runs. Here host.js is held back (chromium's blocked URLs) until the page has
    drawn that snapshot, then loaded: the name fields must appear with no further change on the
    box (they were once missing until the next change: the host could not rename anyone)."""
    box, hub, factory, base, _ = stack
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*host.js*"]})
    try:
        browser.get("about:blank")                 # from /host, /host#t=... would load nothing
        browser.get(f"{base}/host#t={hub.token}")
        wait(browser, lambda d: d.find_element("tag name", "body").get_attribute("data-seq") == str(live_seq(base)))
        assert names_on_the_host_page(browser) == []                # host.js has not run yet
    finally:
        browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    seq = browser.find_element("tag name", "body").get_attribute("data-seq")
    browser.execute_script("const s = document.createElement('script'); s.src = '/static/host.js';"
                           "document.head.append(s);")
    wait(browser, lambda d: names_on_the_host_page(d) == list(box.engine.players))
    assert browser.find_element("tag name", "body").get_attribute("data-seq") == seq   # no new snapshot
    assert browser.execute_script("return sessionStorage.getItem('hostToken')") == hub.token


def test_a_new_host_qr_scanned_into_an_open_host_page_takes_the_new_token(stack, browser):
    """The same tab, already on /host: the new QR's address differs only in its fragment, so
    the browser loads nothing; the page must still take the new token (and hide it again)."""
    box, hub, factory, base, _ = stack
    browser.get(f"{base}/host#t={hub.token}")
    wait(browser, lambda d: d.find_element("id", "status").text == "live")
    old = hub.token
    hub.rotate_token()
    assert hub.token != old
    browser.execute_script("window.__samePage = true")
    browser.get(f"{base}/host#t={hub.token}")
    wait(browser, lambda d: d.execute_script("return sessionStorage.getItem('hostToken')") == hub.token)
    assert browser.execute_script("return window.__samePage") is True        # no reload happened
    assert browser.execute_script("return location.hash") == ""
    wait(browser, lambda d: names_on_the_host_page(d) == list(box.engine.players))
    from selenium.webdriver.common.keys import Keys
    first = box.engine.players[0]
    for name in (first + "x", first):                  # the new token renames; the old could not
        field = browser.find_elements("css selector", "#names input")[0]
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys(name, Keys.TAB)
        out = field.find_element("xpath", "following-sibling::output")
        wait(browser, lambda d: out.text == "\u2713 done")
        wait(browser, lambda d: box.engine.players[0] == name)


def test_the_wind_dial_counts_quarters_to_the_target(tmp_path):
    """All Wound Up on mock pins: P1 opens a check, the encoder sets 3 turns, nine hall steps
    wind 2 1/4; the dial's needle is at 1/4, its ring part full, and the words say the rest.
    The host page shows the same dial, and its name fields, during the check."""
    from pi_companion.webshots import wind_part_way
    # The turntable still for 8 s ends the check (1.5 s by default): a loaded machine has time.
    with live_box(tmp_path, "all-wound-up", {"settle_ms": 8000}) as live, headless.chromium(*SIZES["tv"]) as driver:
        driver.get(live.base + "/")
        wait(driver, lambda d: d.find_element("id", "status").text == "live")
        wind_part_way(live)
        wait(driver, lambda d: d.find_element("css selector", "#wind-count .big").text
             == "Ada: 2\u00bc of 3 turns")
        assert driver.find_element("css selector", "#wind-count .left").text == "\u00be to go"
        dial = driver.find_element("css selector", "#wind svg.dial")
        assert dial.get_attribute("class") == "dial under"
        assert driver.find_element("css selector", "#wind .needle").get_attribute("transform") == "rotate(90)"
        assert [t.text for t in driver.find_elements("css selector", "#wind .ticks text")] == \
            ["0", "\u00bc", "\u00bd", "\u00be"]
        assert dial.size["width"] >= 400                           # big at TV size
        driver.get(f"{live.base}/host#t={live.hub.token}")
        wait(driver, lambda d: names_on_the_host_page(d) == list(live.box.engine.players))
        assert driver.find_element("css selector", "#wind-count .big").text == "Ada: 2\u00bc of 3 turns"
