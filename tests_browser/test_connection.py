"""Honest connection state in headless chromium, with the real processes: the daemon
(`pi-companion run --pins mock`, its hub socket) and `pi-companion web`.

- the daemon killed with SIGKILL while the web process lives: the scoreboard and the host page
  say "box offline" within 3 s, the host's commands are disabled; a new daemon on the same
  state directory brings both back by itself;
- the daemon frozen (SIGSTOP: its socket stays open, only the hub's beat stops): the same;
- the web process frozen (SIGSTOP: the browser's connection stays open, only its beat stops):
  the pages say "reconnecting", and come back on their own when it runs again.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from pi_companion.web import headless
from pi_companion.web.live import start_web

wait = headless.wait
PHONE = (390, 844)

# Every connection state the page reaches, with the browser's clock (the same machine's).
RECORD = """
window.__states = [];
document.addEventListener("board:connection", (e) => window.__states.push([e.detail.state, Date.now()]));
"""


@pytest.fixture(scope="module")
def need_browser():
    why = headless.missing()
    if why:
        pytest.fail(why)


class Daemon:
    """The real `pi-companion run` on mock pins, its hub in `run/` (as systemd's RuntimeDirectory)."""

    def __init__(self, tmp_path):
        self.config = tmp_path / "config.toml"
        self.config.write_text('[box]\nplayers = ["Ada", "Ben", "Cy"]\nseed = 1\n[web]\nenabled = true\n')
        (tmp_path / "run").mkdir()
        self.env = {**os.environ, "RUNTIME_DIRECTORY": str(tmp_path / "run")}
        self.state = tmp_path / "state"
        self.hub = tmp_path / "run" / "hub.sock"
        self.proc: subprocess.Popen | None = None

    def start(self):
        self.proc = subprocess.Popen([sys.executable, "-m", "pi_companion", "run", "--pins", "mock",
                                      "--display", "dummy", "--config", str(self.config),
                                      "--state-dir", str(self.state)],
                                     env=self.env, stderr=subprocess.DEVNULL)
        end = time.monotonic() + 30
        while not (self.state / "host-token").exists() or not self.hub.exists():
            assert self.proc.poll() is None and time.monotonic() < end, "the daemon did not start"
            time.sleep(0.05)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(timeout=10)


@pytest.fixture
def processes(tmp_path):
    daemon = Daemon(tmp_path)
    daemon.start()
    web, base = None, ""
    try:
        end = time.monotonic() + 30
        web, base = start_web(daemon.state, daemon.hub)
        while json.load(urllib.request.urlopen(base + "/api/snapshot", timeout=2)).get("type") != "snapshot":
            assert time.monotonic() < end
            time.sleep(0.05)
        yield daemon, web, base
    finally:
        if web is not None:
            web.send_signal(signal.SIGCONT)
            web.terminate()
            web.wait(timeout=10)
        daemon.stop()


def open_pages(driver, base, token):
    """The scoreboard in the first tab, the host page in a second; both live."""
    driver.get(base + "/")
    wait(driver, lambda d: d.find_element("id", "status").text == "live", timeout=10)
    driver.execute_script(RECORD)
    board = driver.current_window_handle
    driver.switch_to.new_window("tab")
    driver.get(f"{base}/host#t={token}")
    wait(driver, lambda d: d.find_element("id", "status").text == "live", timeout=10)
    wait(driver, lambda d: d.find_elements("css selector", "#names input"))
    driver.execute_script(RECORD)
    return board, driver.current_window_handle


def reached(driver, state, since_ms, timeout):
    """Seconds from `since_ms` (epoch ms) until the page told its scripts `state`."""
    wait(driver, lambda d: any(s == state for s, _ in d.execute_script("return window.__states")),
         timeout=timeout)
    at = next(t for s, t in driver.execute_script("return window.__states") if s == state)
    return (at - since_ms) / 1000.0


def commands_enabled(driver):
    return [driver.find_element("id", c).is_enabled() for c in ("yes", "no", "undo")]


# How the board reads: the page's background and text size, and the colour of every name,
# score and word of the moment (the banner apart).
LOOKS = """
const css = (el) => getComputedStyle(el);
return [css(document.body).backgroundColor, css(document.body).fontSize,
        ...[...document.querySelectorAll("#moment .big, #players .name, #players .score")]
          .map((el) => el.textContent + ": " + css(el).color + " " + css(el).fontSize)];
"""


def looks(driver, tabs):
    out = {}
    for tab in tabs:
        driver.switch_to.window(tab)
        out[tab] = driver.execute_script(LOOKS)
    return out


def check_offline(driver, tabs, since_ms, word, status, before=None):
    board, host = tabs
    for tab in (board, host):
        driver.switch_to.window(tab)
        took = reached(driver, word, since_ms, timeout=10)
        print(f"{'board' if tab == board else 'host'} page: {word} {took * 1000:.0f} ms after the daemon stopped")
        assert took < 3.0, f"{word} shown {took:.2f} s after the daemon stopped"
        assert driver.find_element("id", "offline").is_displayed()
        assert driver.find_element("id", "status").text.startswith(status)
        if before is not None:      # the board "shows the last it knew" as readably as before
            # (the banner's own style once reached the whole page: dark names on dark panels)
            assert driver.execute_script(LOOKS) == before[tab]
    assert not any(commands_enabled(driver))
    return took


def check_live(driver, tabs, timeout):
    for tab in tabs:
        driver.switch_to.window(tab)
        wait(driver, lambda d: d.find_element("id", "status").text == "live", timeout=timeout)
        assert not driver.find_element("id", "offline").is_displayed()
    assert all(commands_enabled(driver))


def test_killing_the_daemon_shows_box_offline_within_3_s_and_a_new_daemon_brings_it_back(
        processes, need_browser):
    daemon, web, base = processes
    token = (daemon.state / "host-token").read_text().strip()
    with headless.chromium(*PHONE) as driver:
        tabs = open_pages(driver, base, token)
        before = looks(driver, tabs)
        killed = time.time() * 1000
        daemon.proc.kill()                                  # SIGKILL: no goodbye
        daemon.proc.wait()
        check_offline(driver, tabs, killed, "offline", "box offline", before)
        assert "Box offline" in driver.find_element("id", "offline").text
        assert web.poll() is None
        daemon.start()                                      # the same state: the game resumes
        check_live(driver, tabs, timeout=30)


def test_a_frozen_daemon_is_offline_too_and_live_again_when_it_runs(processes, need_browser):
    daemon, web, base = processes
    token = (daemon.state / "host-token").read_text().strip()
    with headless.chromium(*PHONE) as driver:
        tabs = open_pages(driver, base, token)
        stopped = time.time() * 1000
        daemon.proc.send_signal(signal.SIGSTOP)             # its socket stays open: only the beat stops
        check_offline(driver, tabs, stopped, "offline", "box offline")
        daemon.proc.send_signal(signal.SIGCONT)
        check_live(driver, tabs, timeout=10)


def test_a_frozen_web_process_is_reconnecting_and_live_again_when_it_runs(processes, need_browser):
    daemon, web, base = processes
    token = (daemon.state / "host-token").read_text().strip()
    with headless.chromium(*PHONE) as driver:
        tabs = open_pages(driver, base, token)
        stopped = time.time() * 1000
        web.send_signal(signal.SIGSTOP)                     # the browser's connection stays open
        for tab in tabs:
            driver.switch_to.window(tab)
            took = reached(driver, "reconnecting", stopped, timeout=10)
            print(f"reconnecting {took * 1000:.0f} ms after the web process stopped")
            assert took < 4.5, f"reconnecting shown {took:.2f} s after the web process stopped"
            assert "Reconnecting" in driver.find_element("id", "offline").text
        assert not any(commands_enabled(driver))
        web.send_signal(signal.SIGCONT)
        check_live(driver, tabs, timeout=15)
