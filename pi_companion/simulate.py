"""The emulated box in a terminal: keys drive gpiozero mock pins, the OLED is drawn in text.

The very same Box (inputs, engine, outputs, display code) runs as on the Pi; only the pin
factory (MockFactory), the display (luma's dummy device) and the fingers (keys) are stand-ins.
A terminal has no key-up events, so a key is a press followed by a release after a hold time.
The screen is handled by the standard library's curses: it knows the terminal's size, redraws
on a resize, and hands over every key of a read one at a time.
"""
from __future__ import annotations

import curses
import locale
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from .assemble import StateDirBusy, assemble, build_config
from .core.events import Request
from .gamelog import TooNew
from .ui.terminal import HELP, LAYOUTS, STYLE_WORDS, choose_layout, fits, frame_lines, frame_size, minimum_size
from .web.live import start_web, stop_web

TAP_S = 0.08
LONG_S = 1.2
MENU_LONG_S = 3.2
PLAYER_HOLD_S = 2.2
HOLD_KEY = "h"                                     # h then a digit: hold that player's button
SHIFTED_DIGITS = "!@#$%^&*"                        # shift+1..8 on a US layout: the same
STEP_GAP_S = 0.03
MESSAGE_S = 5.0                                    # a message stays this long
RESUMED_S = 30.0                                   # "Resumed the saved game, not the asked one"
SOUND_S = 2.0                                      # "sound: ..." stays this long
FORWARD = ((0, 0), (1, 0), (1, 1), (0, 1))        # hall (A, B) levels, clockwise order
# Right and Down turn the encoder clockwise (the menu cursor moves down), Left and Up back.
KEY_NAMES = {"KEY_RIGHT": "]", "KEY_DOWN": "]", "KEY_LEFT": "[", "KEY_UP": "["}
REPEAT_GAP_S = 0.06       # between two uses of one control typed faster than they take: a button's
                          # presses this far apart are distinct whatever the debounce setting
STYLE_KEY = "o"           # draw the OLED in the next style that fits (a font without sextants)


class KeyPad:
    """Turns keys into timed mock-pin edges; every key is stamped with the time it was read."""

    def __init__(self, factory: Any, pins: dict[str, int], n_players: int, puck: Any = None) -> None:
        self.factory = factory
        self.puck = puck                                 # a FakePuck: the turntable keys drive it
        self.pins = pins
        self.n = n_players
        self.due: list[tuple[float, str, bool]] = []    # (when, pin name, drive low?)
        self.hall = 0                                    # index into FORWARD
        self.hold_next = False                           # HOLD_KEY was pressed: the next digit holds
        self.free: dict[str, float] = {}                 # control -> when its last key's edges end
        self.lock = threading.Lock()

    def pin(self, name: str) -> Any:
        return self.factory.pin(self.pins[name])

    def slot(self, control: str, now: float, length: float) -> float:
        """When a key's edges on `control` start: at `now`, or after the edges of the keys typed
        before on that control (`]]]` in one read is three detents, `ww` two turns, `yy` two
        presses: overlapping, their edges would cancel out). Other controls are not waited for:
        `34` stays a near-simultaneous buzz."""
        start = max(now, self.free.get(control, now))
        self.free[control] = start + length + REPEAT_GAP_S
        return start

    def press(self, name: str, hold: float, now: float | None = None) -> None:
        now = self.slot(name, time.monotonic() if now is None else now, hold)
        self.at(now, name, True)
        self.at(now + hold, name, False)

    def at(self, when: float, name: str, low: bool) -> None:
        with self.lock:
            self.due.append((when, name, low))
            self.due.sort()

    def encoder(self, delta: int, now: float) -> None:
        seq = (("ENC_A", True), ("ENC_B", True), ("ENC_A", False), ("ENC_B", False))
        if delta < 0:
            seq = (("ENC_B", True), ("ENC_A", True), ("ENC_B", False), ("ENC_A", False))
        now = self.slot("ENC", now, 3 * 0.004)
        for i, (name, low) in enumerate(seq):
            self.at(now + i * 0.004, name, low)

    def hall_steps(self, steps: int, now: float) -> None:
        if self.puck is not None:
            for _ in range(abs(steps)):
                self.puck.step(1 if steps > 0 else -1)
            return
        now = self.slot("HALL", now, abs(steps) * STEP_GAP_S)
        for i in range(abs(steps)):
            old = FORWARD[self.hall]
            self.hall = (self.hall + (1 if steps > 0 else -1)) % 4
            new = FORWARD[self.hall]
            name = "HALL_A" if old[0] != new[0] else "HALL_B"
            level = new[0] if name == "HALL_A" else new[1]
            self.at(now + i * STEP_GAP_S, name, not level)   # drive_low = level 0

    def player(self, digit: str) -> int | None:
        """The player button number for a digit key, if this game has that player."""
        if digit.isdigit() and 1 <= int(digit) <= self.n and f"P{digit}" in self.pins:
            return int(digit)
        return None

    def key(self, key: str, now: float | None = None) -> bool:
        """Act on one key read at `now`; False for an unknown key (or a player the game lacks)."""
        now = time.monotonic() if now is None else now
        key = KEY_NAMES.get(key, key)
        hold, self.hold_next = self.hold_next, False
        if key == HOLD_KEY:
            self.hold_next = True
        elif self.player(key) is not None:
            self.press(f"P{key}", PLAYER_HOLD_S if hold else TAP_S, now)
        elif key in SHIFTED_DIGITS and SHIFTED_DIGITS.index(key) < self.n:
            self.press(f"P{SHIFTED_DIGITS.index(key) + 1}", PLAYER_HOLD_S, now)
        elif key in ("y", "n", "m"):
            self.press({"y": "YES", "n": "NO", "m": "MENU"}[key], TAP_S, now)
        elif key in ("Y", "N"):
            self.press("YES" if key == "Y" else "NO", LONG_S, now)
        elif key == "M":
            self.press("MENU", MENU_LONG_S, now)
        elif key in ("]", "["):
            self.encoder(+1 if key == "]" else -1, now)
        elif key in (".", ",", "w"):
            self.hall_steps({".": 1, ",": -1, "w": 4}[key], now)
        else:
            return False
        return True

    def run_due(self) -> None:
        now = time.monotonic()
        with self.lock:
            ready = [d for d in self.due if d[0] <= now]
            self.due = [d for d in self.due if d[0] > now]
        for _, name, low in ready:
            if name in self.pins:
                pin = self.pin(name)
                pin.drive_low() if low else pin.drive_high()


def simulate(args: Any) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("pi-companion simulate: needs an interactive terminal (keys are the buttons); "
              "for scripted play use `pi-companion replay SCENARIO`", file=sys.stderr)
        return 2
    config = build_config(args)
    if config is None:
        return 78
    web = bool(getattr(args, "web", False))
    port = getattr(args, "web_port", None) or config.web_port
    if web and not port_free(port):
        print(f"pi-companion: port {port} is in use: give another with --web-port", file=sys.stderr)
        return 75
    # --web: the hub's socket, the web process's messages (the terminal is the emulator's) and,
    # without --state-dir, the host token live in a directory of this run's own.
    scratch = Path(tempfile.mkdtemp(prefix="pi-companion-simulate-")) if web else None
    if scratch is not None and not getattr(args, "state_dir", None):
        config = replace(config, state_dir=str(scratch))
    requests: list[Request] = []
    changed = threading.Event()
    try:
        # --state-dir: resume and log like the box. --web without it logs into the scratch
        # directory (gone at the end): New game's undo and /history read the game logs.
        built = assemble(config, pins="mock", display=args.display,
                         store=bool(getattr(args, "state_dir", None)) or web,
                         puck=getattr(args, "puck", None), on_frame=lambda _f: changed.set(),
                         on_request=requests.append,
                         hub=web, hub_path=scratch / "hub.sock" if scratch else None,
                         hub_board_url=f"http://localhost:{port}/")
    except StateDirBusy as err:
        print(f"pi-companion: {err}", file=sys.stderr)
        return 75
    except TooNew as err:
        print(f"pi-companion: {config.state_dir}/current.log is in {err}", file=sys.stderr)
        return 78
    except OSError as err:
        print(f"pi-companion: state directory {config.state_dir}: {err.strerror}", file=sys.stderr)
        return 78
    box, factory, config = built.box, built.factory, built.config
    pad = KeyPad(factory, config.pin_map(), len(box.engine.players), built.puck)
    for name in ("ENC_A", "ENC_B"):
        pad.pin(name).drive_high()                       # the encoder rests with both contacts open
    box.start()
    server: subprocess.Popen[bytes] | None = None
    if web:     # a closed terminal (SIGHUP) or a kill ends the web process too, not only q
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda signum, _frame: sys.exit(128 + signum))
    try:
        address = ""
        if scratch is not None and built.hub is not None:
            try:
                with open(scratch / "web.log", "w+b") as log:   # not on the emulator's terminal
                    server, _ = start_web(Path(config.state_dir), built.hub.path, log, port)
            except RuntimeError as err:
                print(f"pi-companion: the big screen did not start ({err})", file=sys.stderr)
                return 1
            address = f"http://localhost:{port}/"
            print(f"big screen: {address}  host remote: {address}host#t={built.hub.token}", flush=True)
        locale.setlocale(locale.LC_ALL, "")
        os.environ.setdefault("ESCDELAY", "25")            # a lone Esc is not an arrow's start
        for name in ("LINES", "COLUMNS"):                # the size comes from the terminal itself
            os.environ.pop(name, None)
        style = None if getattr(args, "oled", "auto") == "auto" else args.oled
        code = int(curses.wrapper(
            lambda scr: Emulator(scr, box, pad, changed, requests, style, address).run()))
        if address:
            print(f"big screen was at {address}")
        return code
    finally:
        if server is not None:
            stop_web(server, 5)
        built.close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def port_free(port: int) -> bool:
    """Whether `pi-companion web` can listen on `port`. It binds with SO_REUSEADDR (asyncio's
    default on POSIX), so the probe does too: connections closed a moment ago (TIME_WAIT, up to
    a minute; the emulator's own start-up check leaves one) do not hold the port, a listener does."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def title_line(title: str, players: int, web: str, cols: int) -> str:
    """The emulator's top line: the game, the players and the big screen's address. The address
    is never cut (a cut one reads as a plausible wrong address): the words before it go first."""
    tv = f"   TV: {web}" if web else ""
    for head in (f" {title} - pi-companion simulate, {players} players", f" {title}, {players} players",
                 f" {title}"):
        if len(head) + len(tv) <= cols:
            return head + tv
    return f" TV: {web}" if web else f" {title}"


def winners_words(winners: list[str], players: int) -> str:
    """`Ben wins`, `Ada and Cy share the win`, `everyone shares the win`, `no winner`."""
    if not winners:
        return "no winner"
    if len(winners) == 1:
        return f"{winners[0]} wins"
    if len(winners) == players:
        return "everyone shares the win"
    return f"{', '.join(winners[:-1])} and {winners[-1]} share the win"


class Status:
    """The status line: messages and sounds that expire, and what to do at game over."""

    def __init__(self, sounds_seen: int = 0) -> None:
        self.message = ""
        self.message_until = 0.0
        self.sounds_seen = sounds_seen
        self.sound = ""
        self.sound_until = 0.0

    def say(self, text: str, now: float) -> None:
        self.message, self.message_until = text, now + MESSAGE_S

    def line(self, now: float, played: list[str], over: str) -> str:
        """`over`: who won, in words, once the game is over (else empty)."""
        if len(played) > self.sounds_seen:
            self.sounds_seen = len(played)
            self.sound, self.sound_until = played[-1], now + SOUND_S
        parts = [f"Game over: {over}. Play again: y, then y again"] if over else []
        if now < self.message_until:
            parts.append(self.message)
        if now < self.sound_until:
            parts.append(f"sound: {self.sound}")
        return "   ".join(parts)


class Emulator:
    """The terminal side: reads keys, shows the frame, the lamps, sounds and messages."""

    def __init__(self, scr: Any, box: Any, pad: KeyPad, changed: threading.Event,
                 requests: list[Request], style: str | None = None, web: str = "") -> None:
        self.web = web                  # the big screen's address (--web), on the title line
        self.curses = curses
        self.style = style                               # asked for (--oled, o); None: the best
        self.scr = scr
        self.box = box
        self.pad = pad
        self.changed = changed
        self.requests = requests
        self.status = Status(len(box.piezo.played))
        self.unicode = "UTF-8" in (locale.getpreferredencoding(False) or "").upper().replace("UTF8", "UTF-8")
        try:
            curses.curs_set(0)
        except curses.error:
            pass
        scr.keypad(True)
        scr.nodelay(True)
        if box.resumed_other:           # the saved game goes on, not the one the flags asked for
            self.status.message, self.status.message_until = box.resumed_other, time.monotonic() + RESUMED_S

    def say(self, text: str, now: float) -> None:
        self.status.say(text, now)

    def run(self) -> int:
        last_draw = 0.0
        while True:
            keys = self.read_keys()
            self.pad.n = len(self.box.engine.players)      # the players can change (MENU > Players)
            for key, when in keys:
                if key in ("q", "\x03"):
                    return 0
                if key == "KEY_RESIZE":
                    self.curses.update_lines_cols()
                elif key == STYLE_KEY:
                    self.say(self.next_style(), when)
                elif not self.pad.key(key, when):
                    self.say(self.unknown(key), when)
                elif self.pad.hold_next:
                    self.say(f"hold: now a player key (1-{self.pad.n}) holds that button 2 s", when)
            self.pad.run_due()
            for req in self.requests[:]:
                self.requests.remove(req)
                if req.name == "shutdown":
                    self.draw(override="Shut down chosen: on the box this powers the Pi off. Bye.")
                    time.sleep(1.0)
                    return 0
                self.say(self.request_words(req), time.monotonic())
            now = time.monotonic()
            if self.changed.is_set() or keys or now - last_draw > 0.25:
                self.changed.clear()
                self.draw()
                last_draw = now
            else:
                self.curses.napms(10)

    def next_style(self) -> str:
        """The o key: the next style that fits this terminal, round to the best again."""
        rows, cols = self.scr.getmaxyx()
        styles = list(dict.fromkeys(layout.style for layout in LAYOUTS if fits(layout, cols, rows)))
        if not styles:
            return "the terminal is too small for any OLED drawing"
        shown = choose_layout(cols, rows, self.style)
        current = shown.style if shown else styles[0]
        self.style = styles[(styles.index(current) + 1) % len(styles)]
        fine = len(styles) > 1 or self.style != current
        return (f"OLED drawn in {STYLE_WORDS[self.style]} (o: the next)" if fine
                else f"OLED drawn in {STYLE_WORDS[self.style]}: nothing else fits this terminal")

    def read_keys(self) -> list[tuple[str, float]]:
        """Every key waiting in the input, each on its own, stamped with the time it was read."""
        keys = []
        while True:
            try:
                ch = self.scr.get_wch()
            except self.curses.error:
                return keys
            now = time.monotonic()
            keys.append((ch if isinstance(ch, str) else self.curses.keyname(ch).decode(), now))

    def unknown(self, key: str) -> str:
        if key.isdigit() and 1 <= int(key) <= min(self.pad.n, 8):
            return f"player {key} has no button in this pin map (see hardware/pinmap-8players.toml)"
        if key.isdigit() and 1 <= int(key) <= 8:
            return f"no player {key}: this game has {self.pad.n} players"
        return f"unknown key {key!r}: the keys are listed below"

    def request_words(self, req: Request) -> str:
        if req.name == "new":
            return "New game, same players"
        if req.name == "switch":
            return f"Now playing {self.box.engine.rules.title}"
        if req.name == "players":
            return f"New game with {', '.join(self.box.engine.players)}"
        return req.name.replace("_", " ").capitalize()

    def over(self) -> str:
        """Who won, in plain words, once the game is over (the OLED's picture may be too small
        to read in a compact terminal); empty while it goes on."""
        engine = self.box.engine
        try:
            if not engine.rules.is_over(engine.game):
                return ""
            winners = list(engine.report()["winners"])
        except Exception:                                # a state read mid-update: not this time
            return ""
        return winners_words(winners, len(engine.players))

    def draw(self, override: str | None = None) -> None:
        curses = self.curses
        scr = self.scr
        rows, cols = scr.getmaxyx()
        now = time.monotonic()
        scr.erase()
        layout = choose_layout(cols, rows, self.style)
        if layout is None or override:
            need = "%dx%d" % minimum_size()
            text = override or f"Terminal too small: needs {need}, this is {cols}x{rows}. q quits"
            lines = textwrap.wrap(text, max(cols - 1, 10))
            over = self.over()
            if over and not override:            # who won, in words, even here
                lines += textwrap.wrap(f"Game over: {over}.", max(cols - 1, 10))
            for i, line in enumerate(lines):
                self.put(i, 0, line, cols)
            scr.refresh()
            return
        box = self.box
        title = box.engine.rules.title
        players = box.engine.players                      # what is played (a resumed log's)
        self.put(0, 0, title_line(title, len(players), self.web, cols), cols)
        fw, fh = frame_size(layout.style)
        image = box.display.device.image if box.display.device is not None else None
        if image is not None:
            lines = frame_lines(image, layout.style, self.unicode)
        else:
            lines = [" (--display none: no OLED, the box plays on)".ljust(fw)] + [""] * (fh - 1)
        h, v, corners = ("─", "│", "┌┐└┘") if self.unicode else ("-", "|", "++++")
        self.put(1, 0, corners[0] + h * fw + corners[1], cols)
        for i, line in enumerate(lines):
            self.put(2 + i, 0, v + line.ljust(fw) + v, cols)
        self.put(2 + fh, 0, corners[2] + h * fw + corners[3], cols)
        lit_mark, dark_mark = ("●", "○") if self.unicode else ("*", "o")
        entries = [f"{i + 1} {name[:8]:<8} {lit_mark if i in box.leds.lit else dark_mark}"
                   for i, name in enumerate(players)]
        below = 0
        if layout.panel == "side":
            self.put(1, fw + 3, "key player", cols)
            for i, entry in enumerate(entries):
                self.put(2 + i, fw + 3, entry, cols)
        else:
            self.put(3 + fh, 0, " keys: " + "  ".join(entries), cols)
            below = 1
        self.put(3 + fh + below, 0, " " + self.status.line(now, box.piezo.played, self.over()), cols)
        for i, line in enumerate(HELP):
            self.put(4 + fh + below + i, 0, " " + line, cols)
        scr.refresh()

    def put(self, y: int, x: int, text: str, cols: int) -> None:
        """Write text clipped to the screen (curses refuses the bottom-right cell)."""
        try:
            self.scr.addnstr(y, x, text, max(0, cols - x - 1))
        except self.curses.error:
            pass
