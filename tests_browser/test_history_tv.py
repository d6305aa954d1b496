"""/history on a TV across the room and from the host's phone (headless chromium, the real
stack): each game's numbers say what they are and which way wins (a pawn's space in Hold
Everything! decides nothing; Grab Bag's cards, most wins), the text is the size read from 3 m
(measured: every line at least 24 px, the tables' cells at least 28 px, at 1280x720 and
1920x1080), nothing is wider than the screen, and the host page links to it."""
from __future__ import annotations

import json

import pytest

from pi_companion import webshots
from pi_companion.core.events import HostCommand
from pi_companion.web import headless
from pi_companion.web.live import live_box

wait = headless.wait

# Every text's size in px (the smallest per element kind), and anything wider than the screen.
MEASURE = """
const W = window.innerWidth, sizes = {}, wide = [];
const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let n = walk.nextNode(); n; n = walk.nextNode()) {
  const el = n.parentElement;
  if (!n.textContent.trim() || !el.getClientRects().length) continue;
  const tag = el.closest("td") ? "td" : el.tagName.toLowerCase(), px = parseFloat(getComputedStyle(el).fontSize);
  sizes[tag] = Math.min(sizes[tag] || 999, px);
}
for (const el of document.body.querySelectorAll("*")) {
  const r = el.getBoundingClientRect();
  if (el.tagName === "BUTTON" && el.getClientRects().length > 0) {
    const words = document.createRange(); words.selectNodeContents(el);
    if (new Set([...words.getClientRects()].map((q) => Math.round(q.top))).size > 1) wide.push("a button on two lines");
  }
  if (el.getClientRects().length && r.width && r.right > W + 1) wide.push(el.tagName);
}
if (document.documentElement.scrollWidth > W + 1) wide.push("page");
return [sizes, wide];
"""


@pytest.fixture
def need_browser():
    why = headless.missing()
    if why:
        pytest.fail(why)


def host(live, command, **fields):
    live.box.put_host_command(HostCommand(0.0, command, **fields))
    live.until(lambda: live.box.queue.empty() and not live.box.stale)


def test_history_says_what_each_games_numbers_are_large_enough_for_a_tv(tmp_path, need_browser):
    state = tmp_path / "state"
    with live_box(state, "hold-everything") as live:
        box = live.box
        host(live, "yes")                                           # the deal seen: play
        host(live, "menu", name="claim")
        host(live, "press", player=1)                               # Ben holds nothing
        live.until(lambda: box.engine.report()["over"])
        host(live, "switch", name="grab-bag", options=json.dumps({"cards": 4}))
        live.until(lambda: box.engine.rules.name == "grab-bag", timeout=10)
        while not box.engine.rules.is_over(box.engine.game):
            seekers = sorted(box.engine.rules.buzzers(box.engine.game))
            live.buzz([f"P{seekers[0] + 1}"])
            webshots.judged(live)
        box.store.wait()
        live.until(lambda: len(list((state / "history").glob("*.log"))) >= 2)
        with headless.chromium(*webshots.SCREENS["tv"]) as driver:
            webshots._open(driver, live.base, f"/host#t={live.hub.token}", webshots.SCREENS["phone"])
            link = driver.find_element("id", "history-link")
            assert link.is_displayed()
            link.click()
            wait(driver, lambda d: d.find_element("tag name", "h1").text == "Finished games")
            games = {r.find_elements("tag name", "td")[1].text: r.find_elements("tag name", "td")[2].text
                     for r in driver.find_elements("css selector", "#games tr[data-file]")}
            assert games["Hold Everything!"].startswith("pawn's space (does not decide): ")
            assert games["Grab Bag"].startswith("cards (most wins): ")
            for name in ("tv", "tv720"):
                webshots._viewport(driver, *webshots.SCREENS[name])
                sizes, wide = driver.execute_script(MEASURE)
                driver.save_screenshot(str(tmp_path / f"history-{name}.png"))
                assert not wide, (name, wide)
                assert min(sizes.values()) >= 24 and sizes["td"] >= 28, (name, sizes)
            webshots._viewport(driver, *webshots.SCREENS["phone"])
            sizes, wide = driver.execute_script(MEASURE)
            driver.save_screenshot(str(tmp_path / "history-phone.png"))
            assert not wide and min(sizes.values()) >= 13, (sizes, wide)
