"""The TV board in headless chromium, through the real stack (pi_companion.web.live: a box on
mock pins with its loop thread and hub, and the real `pi-companion web`).

For each of the five games, the scripted evening of `make screenshots` (pi_companion.webshots)
is played on the pins; at each of its moments the scoreboard is looked at in a 1080p TV, a 720p
TV and a portrait phone: every element and every line of text lies inside the screen (a TV
cannot scroll), the board fills the screen, and on the TVs the current moment's text is at least
28 px and the rest at least 20 px. Also: each player's buzz tune through Web Audio and the
winner's name spoken (both switched on the page), nothing fetched from elsewhere, and the page
saying "Reconnecting" with the host's commands disabled while the web process is away (it stops
within 2 s of SIGTERM with a browser connected)."""
from __future__ import annotations

import signal
import time
from urllib.parse import urlsplit

import pytest

from pi_companion import webshots
from pi_companion.web import headless
from pi_companion.web.live import live_box, start_web

SCREENS = webshots.SCREENS
wait = headless.wait

LAYOUT = headless.LAYOUT

# What each game's evening must have shown large, by moment: the kind of picture and a text.
SHOWN = {
    "grab-bag": {"search": ("text", "Grab Master"), "buzz": ("buzz", "(first)"), "winners": ("winners", "wins!")},
    "hands-up": {"deal": ("text", "Deal 12 cards"), "beat": ("beat", "Flip"), "grab": ("buzz", "Ben first!"),
                 "result": ("beat", "last grab: Ben, theft"), "winners": ("winners", "win")},
    "all-wound-up": {"wind": ("wind", "\u00be to go"), "verdict": ("verdict", "TOO FEW"),
                     "gate": ("text", "Ben crossed the gate?"), "winners": ("winners", "Ben wins!")},
    "hold-everything": {"t3": ("die", "rolled"), "winners": ("winners", "Ada wins!")},
    "hold-your-breath": {"t9": ("depths", "ft"), "winners": ("winners", "wins!")},
}


@pytest.fixture(scope="module")
def need_browser():
    why = headless.missing()
    if why:
        pytest.fail(why)


def moment(driver):
    box = driver.find_element("id", "moment")
    return box.get_attribute("data-kind"), box.text


@pytest.mark.parametrize("game", list(webshots.EVENINGS))
def test_every_moment_of_an_evening_fits_the_tv_and_the_phone(game, tmp_path, need_browser):
    seen = {}
    with webshots.evening(game, tmp_path / "state") as (live, play), \
            headless.chromium(*SCREENS["tv"]) as driver:
        webshots._open(driver, live.base, "/", SCREENS["tv"])

        def shoot(label):
            # One moment at every size, as `make screenshots` takes it: the box's clock held (on
            # a loaded machine a Hands Up! beat came before the deal was seen) and the box's
            # latest state drawn first (the page was once a frame behind the box's last YES).
            with webshots._held(live, driver):
                for size_name, size in SCREENS.items():
                    webshots._viewport(driver, *size)
                    seen.setdefault(label, moment(driver))
                    problems = driver.execute_script(LAYOUT, size_name != "phone")
                    driver.save_screenshot(str(tmp_path / f"{label}-{size_name}.png"))
                    assert not problems, f"{game}, {label}, {size_name} {size}: {problems[:6]}"
            if live.box.engine.rules.is_over(live.box.engine.game):
                assert not driver.find_elements("css selector", "#players .turn")    # no stale turn
                assert driver.find_element("id", "trophy").is_displayed()
        play(live, shoot)
    for label, (kind, words) in SHOWN[game].items():
        assert label in seen, f"{game}: no {label} moment in {sorted(seen)}"
        assert seen[label][0] == kind and words in seen[label][1], (label, seen[label])


def test_the_wind_verdict_stays_on_the_tv_until_the_next_check(tmp_path, need_browser):
    """The OLED keeps "TOO FEW" after the check settles; so must the TV (it once vanished)."""
    with live_box(tmp_path, "all-wound-up") as live, headless.chromium(*SCREENS["tv"]) as driver:
        webshots._open(driver, live.base, "/", SCREENS["tv"])
        webshots.wind_part_way(live)
        live.until(lambda: live.box.engine.report()["check"] is None, timeout=15)
        wait(driver, lambda d: moment(d)[0] == "verdict")
        time.sleep(2.0)
        webshots.drawn_latest(driver, live)
        assert moment(driver)[0] == "verdict" and "TOO FEW" in moment(driver)[1]
        assert "Ada: 2\u00bc of 3 turns" in moment(driver)[1]
        live.tap("P2")                                          # the next check replaces it
        wait(driver, lambda d: moment(d)[0] == "wind")
        assert "TOO FEW" not in moment(driver)[1]


# Spies installed before the page's own script: every oscillator started (its frequency) and
# every utterance spoken.
SPIES = """
window.__notes = []; window.__spoken = [];
const start = OscillatorNode.prototype.start;
OscillatorNode.prototype.start = function (...a) { window.__notes.push(Math.round(this.frequency.value)); return start.apply(this, a); };
if (window.speechSynthesis) speechSynthesis.speak = (u) => window.__spoken.push(u.text);
"""


def test_each_buzz_plays_the_players_tune_and_the_winner_is_spoken(tmp_path, need_browser):
    with live_box(tmp_path, "grab-bag", {"cards": 3}) as live, headless.chromium(*SCREENS["tv"]) as driver:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SPIES})
        webshots._open(driver, live.base, "/", SCREENS["tv"])
        box = live.box
        seekers = sorted(box.engine.rules.buzzers(box.engine.game))
        live.buzz([f"P{seekers[0] + 1}"])                         # sound off: silent
        webshots.drawn_latest(driver, live)
        assert driver.execute_script("return window.__notes") == []
        webshots.judged(live)
        assert driver.find_element("id", "sound").text == "\u266b Sound off"
        driver.find_element("id", "sound").click()                  # a tap: audio may start
        driver.find_element("id", "voice").click()
        assert driver.find_element("id", "sound").get_attribute("aria-pressed") == "true"
        tunes = {1: [659, 523], 2: [392, 784]}                      # Ben "E5 C5", Cy "G4 G5"
        for seat in (1, 2):
            if seat not in box.engine.rules.buzzers(box.engine.game):
                continue
            driver.execute_script("window.__notes = []")
            live.buzz([f"P{seat + 1}"])
            wait(driver, lambda d: d.execute_script("return window.__notes").__len__() == len(tunes[seat]))
            assert driver.execute_script("return window.__notes") == tunes[seat]
            webshots.judged(live)
        while not box.engine.rules.is_over(box.engine.game):
            seekers = sorted(box.engine.rules.buzzers(box.engine.game))
            live.buzz([f"P{seekers[0] + 1}"])
            webshots.judged(live)
        winners = box.engine.report()["winners"]
        wait(driver, lambda d: d.execute_script("return window.__spoken"))
        spoken = driver.execute_script("return window.__spoken")
        assert spoken == [" & ".join(winners) + (" wins!" if len(winners) == 1 else " win!")]
        driver.refresh()                                          # the choice is remembered
        wait(driver, lambda d: d.find_element("id", "sound").get_attribute("aria-pressed") == "true")
        hosts = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        assert all(urlsplit(u).netloc == urlsplit(live.base).netloc for u in hosts), hosts


def test_the_pages_say_reconnecting_and_disable_commands_while_the_web_process_is_away(tmp_path, need_browser):
    """SIGTERM to the real `pi-companion web` with a host page connected over its WebSocket:
    the process is gone within 2 s (it took 27-33 s); the page says "Reconnecting" and its
    commands are disabled; a new web process on the same port brings both back."""
    with live_box(tmp_path, "grab-bag") as live, headless.chromium(*SCREENS["phone"]) as driver:
        webshots._open(driver, live.base, f"/host#t={live.hub.token}", SCREENS["phone"])
        assert driver.find_element("id", "undo").is_enabled()
        assert not driver.find_element("id", "offline").is_displayed()
        web = live.web
        began = time.monotonic()
        web.send_signal(signal.SIGTERM)
        code = web.wait(timeout=30)
        stopped = time.monotonic() - began
        assert stopped < 2.0, f"pi-companion web took {stopped:.1f} s to stop on SIGTERM"
        assert code == 0
        wait(driver, lambda d: d.find_element("id", "offline").is_displayed())
        assert "Reconnecting" in driver.find_element("id", "offline").text
        assert driver.find_element("id", "status").text.startswith("reconnecting")
        for control in ("yes", "no", "undo", "new"):
            assert not driver.find_element("id", control).is_enabled(), control
        assert not any(e.is_enabled() for e in driver.find_elements("css selector", "#names input"))
        again, _ = start_web(live.state, live.hub.path, port=urlsplit(live.base).port)
        try:
            wait(driver, lambda d: d.find_element("id", "status").text == "live", timeout=10)
            assert not driver.find_element("id", "offline").is_displayed()
            assert driver.find_element("id", "undo").is_enabled()
        finally:
            again.terminate()
            again.wait(timeout=10)


def test_a_moment_held_longer_than_the_pages_patience_is_pictured_live(tmp_path, need_browser):
    """`make screenshots` holds one moment while it takes its three sizes; on a loaded machine
    that took more than the 3 s after which a page hearing nothing says "reconnecting", and the
    phone pictures (taken last) showed the red banner - a picture that changed run to run and
    dirtied a clean checkout. Held 4 s, the page is still live and still on that moment."""
    with live_box(tmp_path, "grab-bag") as live, headless.chromium(*SCREENS["tv"]) as driver:
        webshots._open(driver, live.base, "/", SCREENS["tv"])
        with webshots._held(live, driver):
            seq = driver.find_element("tag name", "body").get_attribute("data-seq")
            time.sleep(4.0)                                     # longer than the page's 3 s
            assert driver.find_element("tag name", "body").get_attribute("data-connection") == "live"
            assert driver.find_element("id", "status").text == "live"
            picture = webshots._picture(driver, tmp_path / "held-phone.png", SCREENS["phone"])
            assert driver.find_element("tag name", "body").get_attribute("data-seq") == seq
        assert picture.exists()


def test_a_page_that_is_not_live_is_never_pictured(tmp_path, need_browser):
    """The web process stopped: once the page says "reconnecting", `make screenshots` says so
    and writes no picture of the banner."""
    with live_box(tmp_path, "grab-bag") as live, headless.chromium(*SCREENS["phone"]) as driver:
        webshots._open(driver, live.base, "/", SCREENS["phone"])
        live.web.send_signal(signal.SIGSTOP)
        try:
            wait(driver, lambda d: d.find_element("id", "status").text.startswith("reconnecting"), timeout=10)
            with pytest.raises(RuntimeError, match="not live"):
                webshots._picture(driver, tmp_path / "away-phone.png", SCREENS["phone"])
        finally:
            live.web.send_signal(signal.SIGCONT)
        assert not (tmp_path / "away-phone.png").exists()


EIGHT = ("Alexandrina", "Bartholomew", "Cy", "Dorothea", "Ebenezer", "Florentyna", "Gus", "Henrietta")


def test_eight_players_with_long_names_fit_every_screen(tmp_path, need_browser):
    """The most a table holds: Hands Up! with eight players, long names, the beat and a grab."""
    from pi_companion.config import Config
    config = Config(game="hands-up", players=EIGHT, pinmap="8players", seed=4, sound=False,
                    games={"hands-up": {"cards": 60, "beat_ms": 3000}})
    with live_box(tmp_path / "state", config=config) as live, headless.chromium(*SCREENS["tv"]) as driver:
        webshots._open(driver, live.base, "/", SCREENS["tv"])
        live.until(lambda: live.box.engine.report()["beats"] >= 1, timeout=10)
        for label in ("beat", "grab"):
            if label == "grab":
                live.buzz(["P2", "P1"], gap_s=0.006)
            for size_name, size in SCREENS.items():
                webshots._viewport(driver, *size)
                webshots.drawn_latest(driver, live)
                problems = driver.execute_script(LAYOUT, size_name != "phone")
                driver.save_screenshot(str(tmp_path / f"eight-{label}-{size_name}.png"))
                assert not problems, f"eight players, {label}, {size_name} {size}: {problems[:6]}"
            assert len(driver.find_elements("css selector", "#players .player")) == 8


def test_each_badge_has_the_colour_of_that_players_button(tmp_path, need_browser):
    """[box] colours (the buttons' caps) reach the TV: each badge is drawn in its player's
    colour, with dark figures on a light one; a player the config does not name keeps the
    default order (P3 green)."""
    from dataclasses import replace as with_
    from pi_companion.config import Config, parse_config
    colours = parse_config({"box": {"colours": {"P1": "#123456", "P2": "white"}}}).colours
    config = with_(Config(players=("Ada", "Ben", "Cy"), game="grab-bag", seed=1, sound=False),
                   colours=colours)
    with live_box(tmp_path, config=config) as live, headless.chromium(*SCREENS["tv"]) as driver:
        webshots._open(driver, live.base, "/", SCREENS["tv"])
        wait(driver, lambda d: len(d.find_elements("css selector", ".players .badge")) == 3)
        badges = driver.find_elements("css selector", ".players .badge")
        shown = [(b.text, b.value_of_css_property("background-color"), "light" in b.get_attribute("class"))
                 for b in badges]
        assert shown == [("1", "rgba(18, 52, 86, 1)", False), ("2", "rgba(238, 238, 238, 1)", True),
                         ("3", "rgba(48, 164, 108, 1)", False)], shown


def test_a_moment_pictured_slowly_is_pictured_live_at_every_size(tmp_path, need_browser, monkeypatch):
    """`make screenshots` on a loaded machine: the three sizes of one moment took longer than
    the page's 3 s of silence (the web process was stopped meanwhile), and the phone's picture
    of Hands Up!'s deal said "Reconnecting to the box..." in a red page. Each picture here takes
    1.6 s; every one must be of the live page and of the one snapshot."""
    taken = []
    picture = webshots._picture

    def slow(driver, out, size):
        time.sleep(1.6)
        taken.append((size, driver.find_element("id", "status").text,
                      driver.find_element("id", "offline").is_displayed(),
                      driver.find_element("tag name", "body").get_attribute("data-seq")))
        return picture(driver, out, size)
    monkeypatch.setattr(webshots, "_picture", slow)
    with live_box(tmp_path / "state", "grab-bag") as live, headless.chromium(*SCREENS["tv"]) as driver:
        webshots._open(driver, live.base, "/", SCREENS["tv"])
        written = webshots.moment_pictures(live, driver, tmp_path, "slow")
    assert len(written) == 3 and all(p.is_file() for p in written)
    assert [(status, banner) for _, status, banner, _ in taken] == [("live", False)] * 3, taken
    assert len({seq for *_, seq in taken}) == 1, taken
