"""/history in headless chromium, through the real stack (pi_companion.web.live: the box on mock
pins with its loop thread, game log and hub, and the real `pi-companion web`):

- a game played to its end appears on an open /history page at its game over, without a reload
  and before any next game, with the per-player totals (games, won, buzzes won, median margin);
- the host (the token in the tab, from /host) removes a finished game: "Remove", then "Tap again
  to remove"; the game leaves the page and goes to the state directory's removed/; a page
  without the token shows no remove button.
"""
from __future__ import annotations

import statistics

import pytest

from pi_companion.gamelog import history_files
from pi_companion.web import headless
from pi_companion.web.live import live_box
from pi_companion.webshots import judged

wait = headless.wait
PHONE = (390, 844)


@pytest.fixture(scope="module")
def need_browser():
    why = headless.missing()
    if why:
        pytest.fail(why)


def play_to_the_end(live, gaps_ms):
    """Buzzes stamped `gaps_ms` apart (a seeker, then another), judged YES until the game is
    over; what each player won, with margins, as the engine decided it (a press the rules
    ignore is not in it)."""
    from pi_companion.box import Wake
    from pi_companion.core.events import Edge
    box, i = live.box, 0
    won = {}
    while not box.engine.rules.is_over(box.engine.game):
        seekers = sorted(box.engine.rules.buzzers(box.engine.game))
        order = [f"P{seekers[(i + k) % len(seekers)] + 1}" for k in range(2)]
        t0 = box.now()
        for k, name in enumerate(order):
            box.queue.put(Wake(Edge(t0 + k * gaps_ms[i % len(gaps_ms)] / 1000, name, True)))
        live.until(lambda: box.engine.table.judging and box.engine.report()["last_buzz"] is not None)
        live.until(lambda: box.queue.empty())
        t1 = box.now()
        for name in order:
            box.queue.put(Wake(Edge(t1, name, False)))
        buzz = box.engine.report()["last_buzz"]
        won.setdefault(buzz["winner"], []).append(buzz["order"][1]["after_ms"] if len(buzz["order"]) > 1 else None)
        judged(live)
        i += 1
    return won


def rows(driver):
    return driver.find_elements("css selector", "#games tr[data-file]")


def totals(driver):
    return {r.find_elements("tag name", "td")[0].text: [td.text for td in r.find_elements("tag name", "td")[1:]]
            for r in driver.find_elements("css selector", "#totals tr") if r.find_elements("tag name", "td")}


def inside(driver):
    """Nothing on the page reaches past a portrait phone's right edge (no sideways scroll)."""
    width = driver.execute_script("return window.innerWidth")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= width
    for el in driver.find_elements("css selector", "#history-body th, #history-body td, button.remove"):
        if el.is_displayed():
            right = driver.execute_script("return arguments[0].getBoundingClientRect().right", el)
            assert right <= width, (el.text, right, width)
    # No heading is cut inside a word ("Playe / r", "Game / s" on a phone): a heading takes at
    # most one line per word.
    cut = driver.execute_script("""
      return [...document.querySelectorAll('#history-body th')].filter((th) => th.offsetParent)
        .map((th) => { const r = document.createRange(); r.selectNodeContents(th);
          const lines = new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size;
          return [th.textContent.trim(), lines]; })
        .filter(([text, lines]) => lines > text.split(/\\s+/).length);""")
    assert not cut, cut


def test_a_game_appears_at_game_over_with_the_totals_and_the_host_removes_it(tmp_path, need_browser):
    state = tmp_path / "state"
    with live_box(state, "grab-bag", {"cards": 3, "first_grab_master": "Ada"}) as live, \
            headless.chromium(*PHONE) as driver:      # a fixed first Grab Master: the same evening every run
        driver.get(f"{live.base}/host#t={live.hub.token}")          # the token into this tab
        wait(driver, lambda d: d.find_element("id", "status").text == "live")
        driver.get(live.base + "/history")
        assert "No finished games yet." in driver.page_source and not rows(driver)
        won = play_to_the_end(live, [5.0, 12.0, 7.0])
        wait(driver, lambda d: len(rows(d)) == 1, timeout=10)       # no reload, no next game
        assert len(history_files(state / "history")) == 1 and (state / "current.log").exists()
        shown = totals(driver)
        for name, gaps in won.items():
            margins = [g for g in gaps if g is not None]
            median = f"{statistics.median(margins):.1f} ms" if margins else "-"
            assert shown[name][2] == str(len(gaps)) and shown[name][3] == median, (name, won, shown)
        assert sum(int(v[0]) for v in shown.values()) == 3                          # 3 players, 1 game
        game = rows(driver)[0].get_attribute("data-file")
        inside(driver)

        refreshed = driver.execute_script("return document.body.dataset.refreshed || ''")
        before = live.box.store.seq                                  # the next game: the first
        live.new_game()                                              # is no longer the current log
        live.until(lambda: live.box.store.seq >= before + 2 and live.box.store.flush())
        wait(driver, lambda d: d.execute_script("return document.body.dataset.refreshed || ''") != refreshed)
        button = rows(driver)[0].find_element("css selector", "button.remove")
        assert button.is_displayed()
        inside(driver)                                               # the button too
        button.click()
        assert button.text == "Tap again to remove" and len(rows(driver)) == 1      # asks first
        button.click()
        wait(driver, lambda d: not rows(d), timeout=10)
        assert "\u2713 removed" in driver.find_element("id", "removal").text
        assert (state / "removed" / game).is_file() and history_files(state / "history") == []

    with live_box(tmp_path / "other", "grab-bag", {"cards": 2}) as live, headless.chromium(*PHONE) as driver:
        play_to_the_end(live, [4.0])
        live.until(lambda: len(history_files(tmp_path / "other" / "history")) == 1)
        driver.get(live.base + "/history")                          # no token in this tab
        assert len(rows(driver)) == 1
        assert not any(b.is_displayed() for b in driver.find_elements("css selector", "button.remove"))
