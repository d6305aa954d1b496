"""`pi-companion run` under a fake systemd: READY after the hardware is up, WATCHDOG, STOPPING, clean exit."""
from __future__ import annotations

import ast
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from helpers.common import stop_at_ready, wait_for
from helpers.daemons import ready, receive_until, start


def test_ready_watchdog_stopping_and_a_clean_exit(tmp_path):
    with ready(tmp_path, {"WATCHDOG_USEC": "400000"}) as (proc, sock):
        assert "WATCHDOG=1" in receive_until(sock, "WATCHDOG=1")
        assert wait_for(lambda: (tmp_path / "state" / "current.log").exists())  # the writer's
        proc.send_signal(signal.SIGTERM)
        assert "STOPPING=1" in receive_until(sock, "STOPPING=1")
        assert proc.wait(timeout=10) == 0
        assert "Traceback" not in proc.stderr.read()


def test_ready_without_a_display(tmp_path):
    env = {"PI_COMPANION_TEST": "1"}
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "n.sock"))
    sock.settimeout(15)
    proc = subprocess.Popen([sys.executable, "-m", "pi_companion", "run", "--pins", "mock",
                             "--display", "ssd1306", "--config", os.devnull,
                             "--state-dir", str(tmp_path / "state")],
                            env={**os.environ, **env, "NOTIFY_SOCKET": str(tmp_path / "n.sock")},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "READY=1" in receive_until(sock, "READY=1")    # no I2C bus here: plays on without one
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        err = proc.stderr.read()
        assert err.count("display unavailable") == 1 and "Traceback" not in err
    finally:
        proc.kill()
        sock.close()


def test_run_without_a_pin_factory_says_so(tmp_path):
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "lgpio"}
    out = subprocess.run([sys.executable, "-m", "pi_companion", "run", "--display", "none",
                          "--config", os.devnull, "--state-dir", str(tmp_path)],
                         env=env, capture_output=True, text=True, timeout=30)
    assert out.returncode == 1
    assert "no GPIO pin factory" in out.stderr and "--pins mock" in out.stderr
    assert out.stderr.count("\n") == 1


def hold_menu_on_a_running_daemon(tmp_path, monkeypatch) -> list[int]:
    """Run `daemon.main` on mock pins in a thread, hold MENU until it returns; its result.
    `systemd.power_off` is patched: the test's `powered_off` event tells whether it was called."""
    import argparse

    from gpiozero import Device

    from helpers.common import daemon_in_a_thread
    from pi_companion.hw.pinmap import load_pinmap

    args = argparse.Namespace(config=os.devnull, game=None, players=None,
                              pins="mock", display="dummy", state_dir=str(tmp_path / "state"))
    with daemon_in_a_thread(monkeypatch, args) as (thread, result):
        deadline = time.monotonic() + 10
        while not (tmp_path / "state" / "current.log").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
        Device.pin_factory.pin(load_pinmap()["MENU"]).drive_low()
        thread.join(timeout=10)
        return result


def test_menu_held_three_seconds_shows_shutting_down_and_powers_off(tmp_path, monkeypatch):
    import threading

    from pi_companion import daemon, systemd
    from pi_companion.ui import screens

    powered_off = threading.Event()
    shown = []
    monkeypatch.setattr(systemd, "power_off", powered_off.set)
    real_message = screens.message_frame

    def message(text):
        shown.append(text)
        return real_message(text)
    # daemon.py holds its own name for it (imported once per process: any test before this one
    # that imported the daemon kept the real one there, and "Shutting down" went unseen)
    monkeypatch.setattr(screens, "message_frame", message)
    monkeypatch.setattr(daemon, "message_frame", message)
    assert hold_menu_on_a_running_daemon(tmp_path, monkeypatch) == [0] and powered_off.is_set()
    assert shown == ["Shutting down", "powered off"]      # the last frame stays on the panel


def test_menu_power_off_when_a_pin_will_not_let_go(tmp_path, monkeypatch, caplog):
    """In the system test's VM, lgpio refused to reclaim the MENU line on close ('GPIO busy'):
    the daemon crashed before powering off, and systemd restarted it instead."""
    import threading

    from gpiozero.pins.mock import MockPin

    from pi_companion import systemd
    from pi_companion.hw.pinmap import load_pinmap

    menu_pin = load_pinmap()["MENU"]
    real_close = MockPin.close

    def close(pin):
        if pin.info.name == f"GPIO{menu_pin}":
            raise RuntimeError("GPIO busy")          # what lgpio.error said in the VM
        real_close(pin)

    monkeypatch.setattr(MockPin, "close", close)
    powered_off = threading.Event()
    monkeypatch.setattr(systemd, "power_off", powered_off.set)
    try:
        assert hold_menu_on_a_running_daemon(tmp_path, monkeypatch) == [0] and powered_off.is_set()
        assert "closing input MENU: RuntimeError: GPIO busy" in caplog.text
    finally:
        monkeypatch.setattr(MockPin, "close", real_close)


def test_idle_without_a_display_once_its_retry_is_due(tmp_path):
    """The display missing: its retry (every 5 s) once spun the loop on a whole core.

    The box resumes a game logged up to 100 s, after a power cut, say: the display's failed
    open at start is stamped 0 on the game's clock, so its first retry (5 s) is already due
    when the loop starts, and the second is 5 s after that. The measured seconds follow a due,
    failed retry, as 6 s into a new game would, without waiting those 6 s."""
    from pi_companion.config import DEFAULT_PLAYERS
    from pi_companion.gamelog import GameLog

    store = GameLog(tmp_path / "state")
    store.start({"game": "grab-bag", "players": list(DEFAULT_PLAYERS), "options": {}, "seed": 1})
    store.append({"t": 100.0, "press": "P1"})
    store.append({"t": 100.05, "release": "P1"})
    store.close()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "n.sock"))
    sock.settimeout(15)
    proc = subprocess.Popen([sys.executable, "-m", "pi_companion", "run", "--pins", "mock",
                             "--display", "ssd1306", "--config", os.devnull,
                             "--state-dir", str(tmp_path / "state")],
                            env={**os.environ, "NOTIFY_SOCKET": str(tmp_path / "n.sock")},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def cpu_s() -> float:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    try:
        assert "READY=1" in receive_until(sock, "READY=1")
        time.sleep(0.5)                # the first retry is due at once: the loop has made it
        before = cpu_s()
        time.sleep(2)
        used = cpu_s() - before
        assert used < 0.5, f"{used:.2f} s of CPU in 2 s with nothing to do"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        err = proc.stderr.read()
        assert "resumed grab-bag after 2 logged inputs" in err, err
        assert err.count("display unavailable") == 1, err
    finally:
        proc.kill()
        sock.close()


def test_the_daemon_imports_only_the_game_it_plays(tmp_path):
    # Start-up time to READY=1 is mostly imports: the help text's list of games (built whether
    # or not help was asked for) imported all five game modules on every start.
    modules = tmp_path / "modules"
    code = ("import atexit, runpy, sys; atexit.register(lambda: open(sys.argv[0], 'w').write(' '.join("
            "sorted(m for m in sys.modules if m.startswith('pi_companion.games.'))))); "
            "runpy.run_module('pi_companion', run_name='__main__')")
    with ready(tmp_path, code=code) as (proc, sock):
        time.sleep(0.5)                                   # the first frame is drawn after READY
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    assert (tmp_path / "-c").read_text().split() == [          # the default game: Grab Bag
        "pi_companion.games.base", "pi_companion.games.grab_bag", "pi_companion.games.registry"]


def test_a_hung_loop_stops_the_watchdog_while_the_process_lives(tmp_path):
    """The watchdog is fed by the box loop itself: block that one thread (the debug-only
    SIGUSR2 trigger, PI_COMPANION_DEBUG_HANG=1) and the WATCHDOG=1 datagrams stop, although
    the process, its main thread and every other thread live on. A watchdog fed by a timer
    thread would keep pinging and systemd would never restart a hung box."""
    proc, sock = start(tmp_path, {"WATCHDOG_USEC": "400000", "PI_COMPANION_DEBUG_HANG": "1"})
    try:
        assert "READY=1" in receive_until(sock, "READY=1")

        said: list[str] = []

        def pings(seconds: float) -> int:
            end, n = time.monotonic() + seconds, 0
            while (left := end - time.monotonic()) > 0:
                sock.settimeout(left)
                try:
                    lines = sock.recv(4096).decode().split("\n")
                except TimeoutError:
                    break
                said.extend(lines)
                n += lines.count("WATCHDOG=1")
            return n

        assert pings(1.5) >= 3                     # every 0.2 s while the loop runs
        proc.send_signal(signal.SIGUSR2)
        pings(0.6)                                 # the ping of the pass it was in may still come
        silent = pings(2.0)
        assert proc.poll() is None, proc.stderr.read()
        assert silent == 0, f"{silent} WATCHDOG=1 in 2 s after the loop hung"
        # ... and the trigger's own signal did not stop the daemon (a SIGUSR2 read as a stop by
        # the main thread's wake-up pipe ended it cleanly, and systemd saw no hang at all).
        assert "STOPPING=1" not in said, "the hang's SIGUSR2 stopped the daemon"
        # The process is alive and its main thread still takes a signal: not a frozen process.
        assert len(os.listdir(f"/proc/{proc.pid}/task")) >= 2
    finally:
        proc.kill()
        proc.wait(timeout=10)
        sock.close()
    assert "the box loop hangs" in proc.stderr.read()


def test_the_debug_hang_is_off_unless_asked_for(tmp_path):
    """Without PI_COMPANION_DEBUG_HANG=1 (the shipped unit) SIGUSR2 is not the hang trigger:
    Python's default for it ends the process, and the watchdog never stops while it lives."""
    with ready(tmp_path, {"WATCHDOG_USEC": "400000"}) as (proc, sock):
        proc.send_signal(signal.SIGUSR2)
        assert proc.wait(timeout=10) == -signal.SIGUSR2
    assert "the box loop hangs" not in proc.stderr.read()


def test_ready_comes_after_every_pin_is_claimed_and_the_first_frame(tmp_path, monkeypatch):
    """READY=1 tells systemd (and the system test) that the box is up: at that moment every
    pin the box will ever hold is claimed and one frame has gone to the display. Checked at
    the very call, in the real daemon.main on mock pins: no race with the loop thread."""
    import argparse

    from gpiozero import Device

    from pi_companion import daemon
    from pi_companion.hw import display as display_mod

    frames: list[int] = []
    real_show = display_mod.Display.show
    monkeypatch.setattr(display_mod.Display, "show",
                        lambda self, frame, now: frames.append(1) or real_show(self, frame, now))
    at_ready: dict[str, object] = {}

    def claimed() -> set[str]:
        return {str(getattr(info, "name", info)) for info in Device.pin_factory._reservations}

    def look() -> None:
        if not at_ready:
            at_ready["pins"] = claimed()
            at_ready["frames"] = len(frames)

    stop_at_ready(monkeypatch, look)             # stopped, as systemd would, once the test has looked
    args = argparse.Namespace(config=os.devnull, game=None, players=None,
                              pins="mock", display="dummy", state_dir=str(tmp_path / "state"))
    previous = Device.pin_factory
    try:
        from pi_companion.box import Box
        steady: set[str] = set()
        real_close = Box.close

        def close(box):
            steady.update(claimed())                 # everything the box held, as it stops
            real_close(box)

        monkeypatch.setattr(Box, "close", close)
        assert daemon.main(args) == 0
    finally:
        Device.pin_factory.reset()
        Device.pin_factory = previous
    assert at_ready, "no READY=1"
    assert len(steady) >= 7, steady                  # 4 players, YES, NO, MENU at least
    assert steady <= at_ready["pins"], f"not yet claimed at READY: {sorted(steady - at_ready['pins'])}"
    assert at_ready["frames"] >= 1, "READY=1 before the first frame was drawn"


# What the way to READY=1 leaves out (#27 item 4): each of these cost millions of instructions
# of the start, and nothing the buttons need uses it. argparse (with gettext): the daemon's own
# command line is read without it (cli.daemon_args); segno (with urllib, http.client, ssl, xml):
# only a QR screen draws a code (ui/qr.py imports it then); hmac and secrets (OpenSSL's hashlib): only a new host token or a client's command.
NOT_BEFORE_READY = ("argparse", "gettext", "hmac", "secrets", "segno")


def test_the_way_to_ready_imports_nothing_the_buttons_do_not_need(tmp_path):
    """The daemon as the SD image runs it - the shipped config with the big screen on, a host
    token from an earlier start - with the modules it has loaded written down at READY=1."""
    from pi_companion.config import template_text
    config = tmp_path / "config.toml"
    config.write_text(template_text().replace("\n# enabled = false\n", "\nenabled = true\n"))
    state = tmp_path / "state"
    state.mkdir()
    (state / "host-token").write_text("an-earlier-token\n")
    loaded = tmp_path / "loaded"
    code = ("import runpy, sys; import pi_companion.systemd as s; send = s.notify\n"
            "def notify(state):\n"
            f"    if state == 'READY=1': open({str(loaded)!r}, 'w').write(' '.join(sorted(sys.modules)))\n"
            "    return send(state)\n"
            "s.notify = notify; runpy.run_module('pi_companion', run_name='__main__')")
    with ready(tmp_path, code=code, config=config) as (proc, sock):
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    modules = set(loaded.read_text().split())
    assert "pi_companion.hub" in modules and "pi_companion.box" in modules    # the web is on
    assert sorted(m for m in NOT_BEFORE_READY if m in modules) == []
    # A dataclass without a docstring gets one built from its signature (inspect.signature, as
    # it is made): every one in the modules loaded by READY has its own.
    undocumented = [f"{name}.{node.name}" for name in sorted(modules) if name.startswith("pi_companion.")
                    for node in ast.walk(ast.parse(Path(importlib.util.find_spec(name).origin).read_text()))
                    if isinstance(node, ast.ClassDef) and ast.get_docstring(node) is None
                    and any("dataclass" in ast.unparse(d) for d in node.decorator_list)]
    assert undocumented == []


def test_the_ready_line_names_the_game_played_not_the_one_configured(tmp_path):
    """A resumed Hold Your Breath! goes on whatever the config names: the journal's ready line
    names that game and its players, not the config's."""
    saved = tmp_path / "saved.toml"
    saved.write_text('[box]\ngame = "hold-your-breath"\nplayers = ["Ada", "Ben", "Cy"]\n')
    with ready(tmp_path, config=saved) as (first, sock):
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=15) == 0
    (tmp_path / "notify.sock").unlink()
    with ready(tmp_path) as (again, sock):              # no config: Grab Bag for the defaults
        again.send_signal(signal.SIGTERM)
        assert again.wait(timeout=15) == 0
        said = [line for line in again.stderr.read().splitlines() if "ready:" in line]
    assert said and said[-1].endswith("ready: hold-your-breath for Ada, Ben, Cy"), said
