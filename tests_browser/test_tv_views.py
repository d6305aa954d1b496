"""The views a family on a sofa needs beyond each game's moments (pi_companion/web/tvshots.py),
in headless chromium against the real stack (a box on mock pins with its loop, log and hub; the
real `pi-companion web`), each measured at 1920x1080, 1280x720 and 390x844: everything inside
the screen, nothing to scroll, on the TVs the moment's text at least 28 px and the rest at least
20 px (web.headless.LAYOUT), and what the view must say."""
from __future__ import annotations

import pytest

from pi_companion import webshots
from pi_companion.web import headless, tvshots
from pi_companion.web.live import live_box

SCREENS = webshots.SCREENS
wait = headless.wait

# The depth board's labels: the text each shows whole (a label cut with "..." scrolls inside).
LABELS = """
return [...document.querySelectorAll('#depths .label > span')].map((el) =>
  [el.textContent, el.scrollWidth > el.clientWidth + 1, parseFloat(getComputedStyle(el).fontSize)]);
"""


@pytest.fixture(scope="module")
def need_browser():
    why = headless.missing()
    if why:
        pytest.fail(why)


def play(name, tmp_path, check):
    """Play view `name` with the scoreboard open; at each of its moments, at every size: the
    layout measured, a picture saved in tmp_path, then `check(label, size_name, driver, live)`."""
    game, options, players, script = tvshots.VIEWS[name]
    seen = []
    with live_box(tmp_path / "state", game, options, players=players) as live, \
            headless.chromium(*SCREENS["tv"]) as driver:
        webshots._open(driver, live.base, "/", SCREENS["tv"])

        def shoot(label):
            with webshots._held(live, driver):
                for size_name, size in SCREENS.items():
                    webshots._viewport(driver, *size)
                    problems = driver.execute_script(headless.LAYOUT, size_name != "phone")
                    driver.save_screenshot(str(tmp_path / f"{name}-{label}-{size_name}.png"))
                    assert not problems, f"{name}, {label}, {size_name}: {problems[:6]}"
                    check(label, size_name, driver, live)
            seen.append(label)
        script(live, shoot)
    return seen


def row_text(driver, player):
    rows = driver.find_elements("css selector", "#players .player")
    return next(r for r in rows if r.find_element("css selector", ".name").text == player)


def moment(driver):
    box = driver.find_element("id", "moment")
    return box.get_attribute("data-kind"), box.text


def test_panic_cards_and_the_shark_stay_on_the_board_and_no_diver_label_is_cut(tmp_path, need_browser):
    def check(label, size, driver, live):
        assert "1 Panic" in row_text(driver, "Ben").text, (label, size)
        assert "Shark" in row_text(driver, "Dee").text, (label, size)
        assert "Panic" not in row_text(driver, "Alexa").text
        labels = driver.execute_script(LABELS)
        assert [t for t, _, _ in labels if "ft" not in t] == ["Alexa", "Ben", "Cy", "Dee"]
        cut = [t for t, c, _ in labels if c]
        assert not cut, f"{label} {size}: cut {cut}"
        if size != "phone":
            assert min(px for _, _, px in labels) >= 28
    assert tvshots.dives.__name__ and play("hold-your-breath-cards", tmp_path, check) == ["dee", "alexa"]


def test_every_screen_of_the_box_has_its_view(tmp_path, need_browser):
    brains = {}

    def check(label, size, driver, live):
        kind, words = moment(driver)
        if label == "menu":
            items = driver.find_elements("css selector", "#menu-items li")
            assert kind == "menu" and [i.text for i in items][:3] == \
                ["\u25B6 Brain tokens", "Round guide", "Token effects"]
            assert "selected" in items[0].get_attribute("class")
        elif label.startswith("bank"):
            rows = driver.find_elements("css selector", "#card-table tbody tr")
            assert kind == "card" and "brain tokens" in words.lower()
            assert rows[0].text.split()[0] == "Bank" and len(rows) == 4
            brains[label] = rows[0].text
            assert driver.find_elements("css selector", "#card-table tr.selected")
        elif label == "guide":
            assert kind == "card" and "deals 10" in words and "round 1" in words.lower()
        elif label == "effects":
            lines = [li.text for li in driver.find_elements("css selector", "#card-lines li")]
            assert kind == "card" and lines[0] == "black: -1 turn (winding)" and len(lines) == 5
    assert play("all-wound-up-screens", tmp_path, check) == ["menu", "bank", "bank-after", "guide", "effects"]
    assert brains["bank"] != brains["bank-after"]            # the bank's row changed on the TV


def test_a_seeker_judged_wrong_is_marked_out(tmp_path, need_browser):
    def check(label, size, driver, live):
        ben = row_text(driver, "Ben")
        assert "out" in ben.get_attribute("class").split() and "out this round" in ben.text
        assert "line-through" in ben.find_element("css selector", ".name").value_of_css_property("text-decoration")
        assert "out" not in row_text(driver, "Cy").get_attribute("class").split()
    play("grab-bag-out", tmp_path, check)


def test_a_pause_during_the_deal_is_shown(tmp_path, need_browser):
    def check(label, size, driver, live):
        kind, words = moment(driver)
        assert "Paused" in words and "the beat starts soon" not in words
    play("hands-up-deal-paused", tmp_path, check)


def test_a_verdict_inside_the_tolerance_says_so(tmp_path, need_browser):
    def check(label, size, driver, live):
        kind, words = moment(driver)
        assert kind == "verdict" and "EXACT" in words
        assert "Ada: 2\u00bc of 2 turns: \u00bc over, in tolerance" in words
    play("all-wound-up-tolerance", tmp_path, check)


def test_the_tv_board_shows_a_qr_of_its_own_address_never_the_host_token(tmp_path, need_browser):
    import zxingcpp
    from io import BytesIO

    from PIL import Image

    def check(label, size, driver, live):
        join = driver.find_element("id", "join")
        if size == "phone":
            assert not join.is_displayed()
            return
        wait(driver, lambda d: d.find_element("id", "join").is_displayed()
             and d.execute_script("return document.getElementById('join-qr').naturalWidth") > 0)
        url = live.base + "/"
        assert driver.find_element("id", "join-url").text == url.removeprefix("http://").rstrip("/")
        shot = Image.open(BytesIO(driver.get_screenshot_as_png()))
        codes = [c.text for c in zxingcpp.read_barcodes(shot)]
        assert codes == [url], codes
        token = live.hub.token
        assert token not in driver.page_source and all(token not in c for c in codes)
        px = driver.execute_script("return document.getElementById('join-qr').getBoundingClientRect().width")
        assert px >= 120, px                              # a phone camera reads it from the sofa
    play("join", tmp_path, check)


def test_an_old_notice_is_not_shown_on_a_freshly_opened_host_page(tmp_path, need_browser):
    from pi_companion.core.events import HostCommand
    phone = SCREENS["phone"]
    with live_box(tmp_path / "state", "grab-bag") as live, headless.chromium(*phone) as driver:
        live.new_game()
        live.box.put_host_command(HostCommand(0.0, "undo"))
        live.until(lambda: live.box.engine.notice == "Undone: New game")
        webshots._open(driver, live.base, f"/host#t={live.hub.token}", phone)
        webshots.drawn_latest(driver, live)
        assert driver.find_element("id", "notice").text == ""
        assert "Undone" not in driver.find_element("tag name", "body").text
        driver.find_element("id", "undo").click()                  # something new: said at once
        wait(driver, lambda d: d.find_element("id", "notice").text == "Nothing to undo")
