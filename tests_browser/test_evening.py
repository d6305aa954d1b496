"""The evening's standings and podium in headless chromium, through the real stack (a box on
mock pins with its loop, log and hub; the real `pi-companion web`): three games of Grab Bag
played on the pins, then the host's phone ends the evening. At 1920x1080, 1280x720 and
390x844 the board shows the standings between games and then the podium, measured: every
element of the evening inside the screen and inside its panel, no text cut or wrapped out of
its box, the page never scrolls, text at least 20 px on the TVs (titles and podium names 28
px) and 14 px on the phone. /evening, its own page, the same; /history lists the evening."""
from __future__ import annotations

import pytest

from pi_companion import webshots
from pi_companion.web import headless
from pi_companion.web.live import live_box

SCREENS = webshots.SCREENS
wait = headless.wait

MEASURE = """
const tv = arguments[0], W = window.innerWidth, H = window.innerHeight, out = [];
const section = document.getElementById("evening");
if (!section || section.hidden) return ["no #evening shown"];
const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
const name = (el) => el.tagName.toLowerCase() + (el.className && typeof el.className === "string" ? "." + el.className.split(" ").join(".") : "");
const box = section.getBoundingClientRect();
const where = (r) => "[" + [r.left, r.top, r.right, r.bottom].map(Math.round).join(",") + "]";
const inside = (r, b) => r.left >= b.left - 1 && r.top >= b.top - 1 && r.right <= b.right + 1 && r.bottom <= b.bottom + 1;
if (!inside(box, {left: 0, top: 0, right: W, bottom: H})) out.push("panel outside the screen " + where(box));
for (const el of section.querySelectorAll("*")) {
  if (!shown(el)) continue;
  const r = el.getBoundingClientRect();
  if ((r.width || r.height) && !inside(r, box)) out.push("spills: " + name(el) + " " + where(r));
  const cut = getComputedStyle(el).textOverflow === "ellipsis";
  if (!cut && el.children.length === 0 && (el.scrollWidth > el.clientWidth + 1) && getComputedStyle(el).display !== "inline")
    out.push("text wider than its box: " + name(el) + " '" + el.textContent + "'");
}
const walk = document.createTreeWalker(section, NodeFilter.SHOW_TEXT);
for (let n = walk.nextNode(); n; n = walk.nextNode()) {
  const el = n.parentElement;
  if (!n.textContent.trim() || !shown(el)) continue;
  const range = document.createRange(); range.selectNodeContents(n);
  for (const r of range.getClientRects()) if (!inside(r, box)) out.push("text outside: '" + n.textContent + "' " + where(r));
  const px = parseFloat(getComputedStyle(el).fontSize);
  const big = el.closest(".evening-title, .podium .names");
  const least = tv ? (big ? 28 : 20) : 14;
  if (px < least - 0.01) out.push("small: '" + n.textContent.trim() + "' " + px + "px in " + name(el));
}
const d = document.documentElement;
if (d.scrollHeight > H + 1 || d.scrollWidth > W + 1) out.push("scrolls: " + d.scrollWidth + "x" + d.scrollHeight);
return out;
"""


@pytest.fixture(scope="module")
def need_browser():
    why = headless.missing()
    if why:
        pytest.fail(why)


def rows(driver):
    return [tr.text.split("\n")[:2] for tr in driver.find_elements("css selector", "#evening .standings tr[data-rank]")]


def measured(driver, tmp_path, label):
    for size_name, size in SCREENS.items():
        webshots._viewport(driver, *size)
        problems = driver.execute_script(MEASURE, size_name != "phone")
        driver.save_screenshot(str(tmp_path / f"{label}-{size_name}.png"))
        assert not problems, f"{label} {size_name} {size}: {problems[:6]}"


def test_the_standings_between_games_and_the_podium_fit_every_screen(tmp_path, need_browser):
    with live_box(tmp_path / "state", "grab-bag", {"cards": 2, "variant": "all-seekers"}) as live, \
            headless.chromium(*SCREENS["tv"]) as driver:
        webshots._open(driver, live.base, "/", SCREENS["tv"])
        assert driver.find_element("id", "evening").get_attribute("hidden")     # a game in play

        def end_on_the_phone():
            webshots._open(driver, live.base, f"/host#t={live.hub.token}", SCREENS["phone"])
            button = driver.find_element("id", "end-evening")
            button.click()
            assert button.text == "Tap again: end the evening"
            button.click()
            wait(driver, lambda d: "\u2713" in d.find_element("id", "evening-result").text
                 or d.find_element("id", "evening-result").text.strip(), timeout=10)
            webshots._open(driver, live.base, "/", SCREENS["tv"])

        def shoot(view):
            webshots.evening_view_shown(driver, view, 3)
            assert not driver.find_element("id", "moment").is_displayed()     # in the moment's place
            if view == "standings":
                assert rows(driver) == [["1", "Cy"], ["2", "Ben"], ["3", "Ada"]]
                assert "Grab Bag: won 2 of 3" in driver.find_element("id", "evening").text
            else:
                steps = driver.find_elements("css selector", "#evening .podium .step")
                assert [s.text.split("\n")[:2] for s in steps] == [["2nd", "Ben"], ["1st", "Cy"], ["3rd", "Ada"]]
            measured(driver, tmp_path, view)
        webshots.tonight(live, shoot, end_on_the_phone)

        live.new_game()                                    # the next game: the board is the game's again
        wait(driver, lambda d: not d.find_element("id", "evening").is_displayed(), timeout=10)
        assert driver.find_element("id", "moment").is_displayed()

        webshots._open(driver, live.base, "/evening", SCREENS["tv"])
        wait(driver, lambda d: d.find_element("id", "evening").get_attribute("data-view") == "podium", timeout=10)
        measured(driver, tmp_path, "page")
        driver.get(live.base + "/history")
        assert "Evening 1 (ended)" in driver.find_element("id", "evenings").text
