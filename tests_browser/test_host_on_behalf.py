"""The host's phone presses or holds a player's button for them, naming the player (headless
chromium at 390x844 against the real stack: a box on mock pins with its loop, log and hub, and
the real `pi-companion web`): Hold Everything! rolled and finished from the phone alone, All
Wound Up's gate claimed by a hold, and a press that would be a buzz refused (who pressed first
is the buttons' alone). Each command is in the game log, and the log folds to the same table."""
from __future__ import annotations

import pytest
from selenium.webdriver.support.ui import Select

from pi_companion import webshots
from pi_companion.core.engine import fold_records
from pi_companion.core.records import header_seats
from pi_companion.gamelog import open_log
from pi_companion.games import registry
from pi_companion.web import headless
from pi_companion.web.live import live_box

PHONE = webshots.SCREENS["phone"]
wait = headless.wait

# The host page on a phone: nothing wider than the screen, no text under 15 px.
FITS = """
const W = window.innerWidth, out = [];
for (const el of document.body.querySelectorAll("*")) {
  const r = el.getBoundingClientRect();
  if (el.getClientRects().length && r.width && (r.left < -1 || r.right > W + 1)) out.push(el.tagName + "#" + el.id);
  if (el.childNodes.length && [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())
      && el.getClientRects().length && parseFloat(getComputedStyle(el).fontSize) < 15) out.push("small " + el.tagName);
}
if (document.documentElement.scrollWidth > W + 1) out.push("scrolls sideways");
return out;
"""


@pytest.fixture
def need_browser():
    why = headless.missing()
    if why:
        pytest.fail(why)


def on_behalf(state):
    """The press and hold host commands in the game log, without their times."""
    with open_log(state / "current.log") as reader:
        return [{k: v for k, v in r.items() if k != "t"} for r in reader.records()
                if r.get("host") in ("press", "hold")]


def resumed_report(state):
    with open_log(state / "current.log") as reader:
        h = reader.header
        engine = registry.new_engine(h["game"], tuple(h["players"]), h["options"], h["seed"],
                                     seats=header_seats(h))
        _, why, _ = fold_records(engine, reader.records())
        assert why is None
    return engine.report()


def for_player(driver, index, what="press"):
    """Pick the player, tap Press (or Hold) and wait for the box's answer."""
    Select(driver.find_element("id", "behalf-player")).select_by_value(str(index))
    button = driver.find_element("id", f"behalf-{what}")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()
    wait(driver, lambda d: d.find_element("id", "behalf-result").text not in ("", "\u2026"), timeout=6)


def test_the_host_rolls_the_die_and_names_who_holds_nothing(tmp_path, need_browser):
    state = tmp_path / "state"
    with live_box(state, "hold-everything") as live, headless.chromium(*PHONE) as driver:
        report = live.box.engine.report
        webshots._open(driver, live.base, f"/host#t={live.hub.token}", PHONE)
        driver.find_element("id", "yes").click()                        # the deal seen: play
        live.until(lambda: report()["phase"] == "turn")
        first = live.box.engine.players.index(report()["current"])
        for_player(driver, first)                                       # the current player rolls
        live.until(lambda: report()["phase"] == "colour" and report()["die"], timeout=10)
        driver.find_element("css selector", "#entries button[data-key='claim']").click()
        live.until(lambda: report()["claiming"])
        wait(driver, lambda d: "Who holds nothing?" in d.find_element("id", "moment").text)
        for_player(driver, 1)                                           # Ben holds nothing
        live.until(lambda: report()["over"])
        assert report()["winners"] == ["Ben"]
        wait(driver, lambda d: "Ben wins!" in d.find_element("id", "moment").text)
        assert driver.find_element("id", "behalf-result").text.startswith("\u2713")
        assert not driver.execute_script(FITS)
        driver.save_screenshot(str(tmp_path / "host-behalf.png"))
        live.box.store.wait()
    assert on_behalf(state) == [{"host": "press", "player": first}, {"host": "press", "player": 1}]
    assert resumed_report(state)["winners"] == ["Ben"]


def test_a_hold_claims_the_gate_and_a_press_that_would_buzz_is_refused(tmp_path, need_browser):
    state = tmp_path / "state"
    with live_box(state, "all-wound-up") as live, headless.chromium(*PHONE) as driver:
        report = live.box.engine.report
        webshots._open(driver, live.base, f"/host#t={live.hub.token}", PHONE)
        for_player(driver, 2)                               # a press here opens a wind check: a buzz
        wait(driver, lambda d: "is a buzz" in d.find_element("id", "behalf-result").text, timeout=4)
        assert driver.find_element("id", "behalf-result").text == "\u2717 Cy's press is a buzz: not now"
        assert report()["check"] is None and report()["last_buzz"] is None
        for_player(driver, 1, "hold")                       # Ben: "I crossed the gate"
        live.until(lambda: report()["claim"] == "Ben")
        wait(driver, lambda d: "Ben crossed the gate?" in d.find_element("id", "moment").text)
        live.box.store.wait()
    assert on_behalf(state) == [{"host": "press", "player": 2}, {"host": "hold", "player": 1}]
    assert resumed_report(state)["claim"] == "Ben"
