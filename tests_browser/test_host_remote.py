"""The host remote on a phone (390x844, headless Debian chromium): every control reaches the
box's log as the matching host command, its result is drawn beside it and inside the screen,
New game / Players / Change game are undone from the page, and what the page did survives a
resume (the log, folded as a restart folds it, gives the live box's table).

The stack is pi_companion.web.live's: a box on mock pins with its real loop thread, game log
and hub, and the real `pi-companion web` process."""
from __future__ import annotations

import time

import pytest

from pi_companion.core.engine import fold_records
from pi_companion.core.records import header_seats
from pi_companion.gamelog import open_log
from pi_companion.games import registry
from pi_companion.web import headless
from pi_companion.web.live import live_box

PHONE = headless.SIZES["phone"]
wait = headless.wait


@pytest.fixture
def need_browser():
    why = headless.missing()
    if why:
        pytest.fail(why)


def host_records(state):
    """Every host command logged, in the current game and the archived ones."""
    out = []
    for path in sorted((state / "history").glob("*.log")) + [state / "current.log"]:
        with open_log(path) as reader:
            out += [r for r in reader.records() if "host" in r]
    return out


def resumed_report(state):
    """The table a restart would resume: current.log folded through a fresh engine."""
    with open_log(state / "current.log") as reader:
        h = reader.header
        engine = registry.new_engine(h["game"], tuple(h["players"]), h["options"], h["seed"],
                                     seats=header_seats(h))
        count, why, _ = fold_records(engine, reader.records())
        assert why is None and reader.damage is None
    return engine.report()


def click(driver, element):
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()


def result_of(driver, out_id):
    """The text of a result once the box has answered (a click writes "..." at once) and the
    table's notice has had its time to follow."""
    wait(driver, lambda d: d.find_element("id", out_id).text not in ("", "\u2026"), timeout=6)
    time.sleep(1.4)
    return driver.find_element("id", out_id).text


def entry(driver, key):
    """The game's menu entry `key` on the page, once it can be tapped (not greyed)."""
    css = f"#entries button[data-key='{key}']:not([disabled])"
    wait(driver, lambda d: d.find_elements("css selector", css))
    return driver.find_element("css selector", css)


def tap_confirmed(driver, element_id):
    button = driver.find_element("id", element_id)
    click(driver, button)
    assert button.text.startswith("Tap again"), button.text          # asks first
    click(driver, button)


def settled(live):
    """The box's loop has handled what was queued (the page's commands reach it by the hub)."""
    time.sleep(0.3)
    live.until(lambda: live.box.queue.empty())
    time.sleep(0.1)


def open_host(driver, live):
    driver.get(f"{live.base}/host#t={live.hub.token}")
    wait(driver, lambda d: d.find_elements("css selector", "#options [data-key]")
         and d.find_elements("css selector", "#seats input"), timeout=10)


def test_every_host_control_of_hands_up_round_trips_through_the_log_and_a_resume(tmp_path, need_browser):
    from selenium.webdriver.common.keys import Keys
    with live_box(tmp_path, "hands-up", {"beat_ms": 2000, "cards": 30}) as live, \
            headless.chromium(*PHONE) as driver:
        open_host(driver, live)
        box = live.box

        # the game's own entries: Pause beats, then Resume beats (the box's menu, one for one)
        click(driver, entry(driver, "pause"))
        wait(driver, lambda d: d.find_elements("css selector", "#entries button[data-key='resume']"))
        assert box.engine.report()["paused"] is True
        click(driver, entry(driver, "resume"))
        wait(driver, lambda d: d.find_elements("css selector", "#entries button[data-key='pause']"))
        assert box.engine.report()["paused"] is False
        click(driver, entry(driver, "pause"))
        wait(driver, lambda d: box.engine.report()["paused"] is True)     # no beat from here on:
                                                                          # the tables compare whole
        # tempo: the dial's two buttons
        assert driver.find_element("id", "dial-up").text.startswith("Faster")
        click(driver, driver.find_element("id", "dial-up"))
        wait(driver, lambda d: box.engine.game.beat_ms < 2000)
        click(driver, driver.find_element("id", "dial-down"))
        wait(driver, lambda d: box.engine.game.beat_ms == 2000)

        # a grab, then police from the phone; undo it from the phone
        live.tap("P2")
        live.until(lambda: box.engine.report()["phase"] == "judging")
        assert driver.find_element("id", "special").text.startswith("Police")
        click(driver, driver.find_element("id", "special"))
        wait(driver, lambda d: box.engine.report()["phase"] == "flipping")
        click(driver, driver.find_element("id", "undo"))
        assert "Undone" in result_of(driver, "result")
        live.until(lambda: box.engine.report()["phase"] == "judging")
        click(driver, driver.find_element("id", "no"))
        wait(driver, lambda d: box.engine.report()["phase"] == "flipping")
        live.tap("P1")
        live.until(lambda: box.engine.report()["phase"] == "judging")
        click(driver, driver.find_element("id", "yes"))
        wait(driver, lambda d: box.engine.report()["phase"] == "flipping")
        click(driver, entry(driver, "pause"))
        wait(driver, lambda d: box.engine.report()["paused"] is True)     # (a judgement resumes beats)
        settled(live)
        before_new = box.engine.report()

        # New game asks twice, then Undo from the page brings the game before back exactly
        tap_confirmed(driver, "new")
        wait(driver, lambda d: box.engine.report() != before_new)
        click(driver, driver.find_element("id", "undo"))
        assert result_of(driver, "result") == "\u2713 Undone: New game"
        settled(live)
        assert box.engine.report() == before_new

        # Players: four, the new one renamed, moved first; then undone
        select = driver.find_element("id", "count")
        click(driver, select)
        select.find_element("css selector", "option[value='4']").click()
        wait(driver, lambda d: len(d.find_elements("css selector", "#seats input")) == 4)
        field = driver.find_elements("css selector", "#seats input")[3]
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys("Dee")
        click(driver, driver.find_elements("css selector", "#seats button")[3])     # Dee up one
        tap_confirmed(driver, "set-players")
        wait(driver, lambda d: box.engine.players == ("Ada", "Ben", "Dee", "Cy"), timeout=6)
        assert "4 players" in result_of(driver, "players-result")
        settled(live)
        click(driver, driver.find_element("id", "undo"))
        wait(driver, lambda d: box.engine.players == ("Ada", "Ben", "Cy"), timeout=6)

        # Change game with real option controls: Grab Bag, 20 cards, strict
        game = driver.find_element("id", "game")
        click(driver, game)
        game.find_element("css selector", "option[value='grab-bag']").click()
        wait(driver, lambda d: d.find_element("id", "options").get_attribute("data-game") == "grab-bag")
        cards = driver.find_element("css selector", "#options input[data-key='cards']")
        assert (cards.get_attribute("min"), cards.get_attribute("max")) == ("1", "200")
        cards.send_keys(Keys.CONTROL, "a")
        cards.send_keys("20")
        variant = driver.find_element("css selector", "#options select[data-key='variant']")
        variant.find_element("css selector", "option[value='strict']").click()
        tap_confirmed(driver, "change")
        wait(driver, lambda d: box.engine.rules.name == "grab-bag", timeout=6)
        assert box.engine.report()["deck"] == 20 and box.engine.game.variant == "strict"
        settled(live)
        click(driver, driver.find_element("id", "undo"))
        wait(driver, lambda d: box.engine.rules.name == "hands-up", timeout=6)
        settled(live)
        final = box.engine.report()
        assert final == before_new

        logged = host_records(tmp_path)
        kinds = [r["host"] for r in logged]
        for kind in ("menu", "dial", "special", "undo", "no", "yes", "new", "players", "switch"):
            assert kind in kinds, kind
        assert {"host": "players", "names": ["Ada", "Ben", "Dee", "Cy"]}.items() <= \
            next(r for r in logged if r["host"] == "players").items()
        switch = next(r for r in logged if r["host"] == "switch")
        assert switch["game"] == "grab-bag" and switch["options"] == {"cards": 20, "variant": "strict", "settle_ms": 2}
        assert [r["delta"] for r in logged if r["host"] == "dial"] == [1, -1]
        assert resumed_report(tmp_path) == final                 # a restart resumes this table


def test_the_brain_token_bank_from_the_phone(tmp_path, need_browser):
    with live_box(tmp_path, "all-wound-up") as live, headless.chromium(*PHONE) as driver:
        open_host(driver, live)
        box = live.box
        none = box.engine.report()["tokens"]["Ada"]
        click(driver, entry(driver, "bank"))
        wait(driver, lambda d: box.engine.report()["screen"] == "bank")
        first = box.engine.game.selected
        click(driver, driver.find_element("id", "dial-up"))
        wait(driver, lambda d: box.engine.game.selected != first)
        click(driver, driver.find_element("id", "dial-down"))
        wait(driver, lambda d: box.engine.game.selected == first)
        click(driver, driver.find_element("id", "yes"))
        wait(driver, lambda d: box.engine.report()["tokens"]["Ada"] != none)
        settled(live)
        taken = box.engine.report()
        click(driver, driver.find_element("id", "no"))                 # closes the bank
        wait(driver, lambda d: box.engine.report()["screen"] == "main")
        settled(live)
        assert box.engine.report()["tokens"] == taken["tokens"]
        assert resumed_report(tmp_path) == box.engine.report()


def test_a_refused_rename_puts_the_name_back_and_says_why_beside_it(tmp_path, need_browser):
    from selenium.webdriver.common.keys import Keys
    with live_box(tmp_path, "grab-bag") as live, headless.chromium(*PHONE) as driver:
        open_host(driver, live)
        field = driver.find_elements("css selector", "#names input")[1]
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", field)
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys("Ada", Keys.TAB)   # Ada is playing already
        out = field.find_element("xpath", "following-sibling::output")
        wait(driver, lambda d: out.text.startswith("\u2717"))
        assert "already playing" in out.text
        wait(driver, lambda d: field.get_attribute("value") == "Ben")
        assert live.box.engine.players == ("Ada", "Ben", "Cy")


# Which result each control writes to (the <output> beside it).
RESULTS = {"yes": "result", "no": "result", "special": "result", "undo": "result",
           "dial-down": "game-result", "dial-up": "game-result", "new": "new-result",
           "count": "players-result", "set-players": "players-result",
           "game": "switch-result", "change": "switch-result", "behalf-player": "behalf-result",
           "behalf-press": "behalf-result", "behalf-hold": "behalf-result"}


def test_on_a_phone_every_control_and_its_result_fit_on_the_screen_together(tmp_path, need_browser):
    """390x844: no sideways scrolling; every control lies inside the screen's width, and each
    can be scrolled to a place where its result is on the screen with it (for the name fields,
    the result beside the field; for the option fields, Change game's)."""
    with live_box(tmp_path, "all-wound-up") as live, headless.chromium(*PHONE) as driver:
        open_host(driver, live)
        assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        height, width = driver.execute_script("return [window.innerHeight, window.innerWidth]")
        controls = driver.find_elements("css selector", ".remote button, .remote input, .remote select")
        assert len(controls) > 20
        for control in controls:
            ident = control.get_attribute("id")
            if ident in RESULTS:
                out = driver.find_element("id", RESULTS[ident])
            elif control.get_attribute("data-key") and control.tag_name == "button":
                out = driver.find_element("id", "game-result")
            elif driver.execute_script("return !!arguments[0].closest('#names')", control):
                out = control.find_element("xpath", "following-sibling::output")
            elif driver.execute_script("return !!arguments[0].closest('#seats')", control):
                out = driver.find_element("id", "players-result")
            else:
                out = driver.find_element("id", "switch-result")
            driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", control)
            top, left, right = driver.execute_script(
                "const r = arguments[0].getBoundingClientRect(); return [r.top, r.left, r.right]", control)
            bottom = driver.execute_script("return arguments[0].getBoundingClientRect().bottom", out)
            out_left, out_right = driver.execute_script(
                "const r = arguments[0].getBoundingClientRect(); return [r.left, r.right]", out)
            what = f"{control.tag_name}#{ident or control.get_attribute('data-key') or control.get_attribute('value')}"
            assert 0 <= left and right <= width, f"{what} is wider than the phone"
            assert 0 <= out_left and out_right <= width, f"{what}'s result is wider than the phone"
            assert bottom - top <= height, f"{what}: its result is {bottom - top:.0f} px below it"


def test_new_seats_on_the_phone_get_the_names_the_box_menu_gives(tmp_path, need_browser):
    """3 -> 4 players names seat 4 P4, 3 -> 8 names seats 4-8 P4-P8, as MENU > Players does
    (a P-number already at the table is skipped)."""
    from pi_companion.config import Config
    from pi_companion.core.players_menu import name_sets
    config = Config(players=("Ada", "P5", "Cy"), game="hands-up", seed=1, sound=False, pinmap="8players")
    with live_box(tmp_path, config=config) as live, headless.chromium(*PHONE) as driver:
        open_host(driver, live)
        select = driver.find_element("id", "count")
        for count, names in (("4", ["Ada", "P5", "Cy", "P4"]),
                             ("8", ["Ada", "P5", "Cy", "P4", "P6", "P7", "P8", "P9"])):
            click(driver, select)
            select.find_element("css selector", f"option[value='{count}']").click()
            wait(driver, lambda d: len(d.find_elements("css selector", "#seats input")) == int(count))
            shown = [i.get_attribute("value") for i in driver.find_elements("css selector", "#seats input")]
            menu = dict(name_sets(tuple(live.box.engine.players), int(count)))["keep"]
            assert shown == names == list(menu), (shown, menu)
