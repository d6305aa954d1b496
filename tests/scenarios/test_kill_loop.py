"""SIGKILL the real daemon with buttons held, restart it, and count the actions nobody made.

Each run starts `pi-companion run --pins mock` (tests/helpers/pinpad.py puts fingers on its
mock pins), checks what the restarted box does with no input, plays a few taps, then closes
one to three of YES, NO, MENU and the player buttons and SIGKILLs the process a random moment
later. Some of those buttons are still closed when the next run powers up.

A phantom action is any of these after a restart, before any new input:
- the box asks for a shutdown or exits by itself (MENU's long press);
- the game differs from the fold of the inputs logged before the kill: scores, deck, round,
  Grab Master, winners (an undo by NO's long press, a judgement by a YES or NO short press,
  a new game...). The only change allowed is the one the logged presses make anyway: a settle
  window open at the kill is decided on the presses it holds (phase `judging`, the earliest
  press wins);
- a timer is still running (a long press, a player hold, a contact settle): it would fire on
  a press that is not happening. If one is, the test waits for it and counts what it did;
- the box's buttons differ from the real pins: a button down now is held, every other is up;
- releasing a button held since power-up changes the game;
- the log grows with no input (an `advance` record means a timer fired).

`make test` runs 20 kills of daemons forked from a warm interpreter (tests/helpers/zygote.py:
the same `pi-companion run` code in its own process, without the interpreter's start);
`make torture` runs 240 kills of daemons started as fresh interpreters (marker `torture`).
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pi_companion.core.engine import Engine
from pi_companion.core.records import from_record
from pi_companion.gamelog import decode
from pi_companion.games import registry
from helpers.zygote import Child, Zygote

HELPER = Path(__file__).parents[1] / "helpers" / "pinpad.py"
ROOT = Path(__file__).parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HELPER.parent), *sys.path])}
PLAYERS = ("P1", "P2", "P3")
AT_KILL = ("P1", "P2", "P3", "YES", "NO", "MENU")
TAPS = ("P1", "P2", "P3", "YES", "YES", "NO")
CONFIG = """[box]
game = "grab-bag"
players = ["Ada", "Ben", "Cy"]
[games.grab-bag]
cards = 200
"""
GAME_KEYS = ("scores", "deck", "round", "grab_master", "winners", "over", "set_aside", "target")


@pytest.fixture(scope="module")
def zygote():
    server = Zygote(ENV)
    yield server
    server.close()


class Daemon:
    """`pi-companion run --pins mock` in its own process: forked from the zygote, or a fresh
    interpreter (`zygote=None`)."""

    def __init__(self, tmp: Path, held: tuple[str, ...], run: int, zygote: Zygote | None) -> None:
        argv = ["run", "--pins", "mock", "--display", "dummy",
                "--config", str(tmp / "box.toml"), "--state-dir", str(tmp / "state")]
        env = {"PINPAD_HELD": ",".join(held)}
        self.proc: subprocess.Popen[str] | None = None
        if zygote is not None:
            self.child = zygote.spawn("pinpad", argv, tmp, env)
        else:
            with open(tmp / f"stderr-{run}.txt", "w") as stderr:
                self.proc = subprocess.Popen([sys.executable, str(HELPER), *argv],
                                             env={**ENV, **env}, stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=stderr, text=True)
            self.child = Child(self.proc.pid, self.proc.stdin, self.proc.stdout)
        line = self.child.out.readline()
        if not line.startswith("ready"):
            self.kill()
            raise AssertionError(f"run {run}: the daemon did not start: {line!r}")

    def send(self, *lines: str) -> None:
        try:
            self.child.inp.write("".join(f"{line}\n" for line in lines))
            self.child.inp.flush()
        except BrokenPipeError:                  # it has gone: report() says so
            pass

    def report(self) -> dict[str, Any] | None:
        """The live engine's view; None if the daemon has gone."""
        self.send("report")
        line = self.child.out.readline()
        return json.loads(line.split(" ", 1)[1]) if line.startswith("report ") else None

    def kill(self) -> None:
        self.child.kill()
        if self.proc is not None:
            self.proc.wait()


def read_log(state: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and complete records (a line the kill tore is not one)."""
    lines = (state / "current.log").read_bytes().split(b"\n")[:-1]
    parsed = [decode(line, 2) for line in lines]      # the daemon writes format v2
    return parsed[0], parsed[1:]


def fold(header: dict[str, Any], records: list[dict[str, Any]]) -> Engine:
    engine = Engine(registry.get(header["game"]), tuple(header["players"]), header["options"],
                    int(header["seed"]))
    for rec in records:
        event = from_record(rec)
        engine.advance(event) if isinstance(event, float) else engine.feed(event)
    return engine


def game_of(report: dict[str, Any]) -> dict[str, Any]:
    return {k: report.get(k) for k in GAME_KEYS}


def phantoms_after_restart(daemon: Daemon, state: Path, held: tuple[str, ...],
                           run: int) -> list[str]:
    """What the restarted box did that nobody made (empty: nothing)."""
    found: list[str] = []
    live = daemon.report()                          # (its log is flushed by then)
    if live is None:
        return [f"run {run}: the box exited at start"]
    header, records = read_log(state)
    cut = len(records)
    if records and "resume" in records[-1]:
        cut -= 1                                    # the restart's own record
    before = fold(header, records[:cut])
    expected = before.report()
    if live["deadline"] is not None:               # something is running: wait and see
        time.sleep(max(0.0, live["deadline"] - live["clock"]) + 0.3)
        waited = daemon.report()
        if waited is None:
            return [f"run {run}: the box exited by itself (powered off?)"]
        if waited["report"] != live["report"]:
            changed = {k: (v, waited["report"][k]) for k, v in live["report"].items()
                       if waited["report"][k] != v}
            found.append(f"run {run}: a timer from before the kill acted: {changed}")
        found.append(f"run {run}: a timer was running after the restart (due {live['deadline']})")
        live = waited
    got = live["report"]
    if got["shutdown_requested"]:
        found.append(f"run {run}: shutdown requested after the restart")
    if game_of(got) != game_of(expected):
        found.append(f"run {run}: the game changed: {game_of(expected)} -> {game_of(got)}")
    if got["phase"] != expected["phase"]:
        window = before.window
        earliest = [] if window is None else [
            header["players"][p] for p, t in window.presses.items() if t == min(window.presses.values())]
        if not (window is not None and got["phase"] == "judging"
                and got["last_buzz"]["winner"] in earliest):
            found.append(f"run {run}: phase {expected['phase']} -> {got['phase']}")
    if sorted(live["held"]) != sorted(held):
        found.append(f"run {run}: buttons held {live['held']}, the pins say {sorted(held)}")
    if held:
        daemon.send(*(f"release {b}" for b in held))
        released = daemon.report()
        if released is None or released["report"] != live["report"] or released["held"]:
            changed = released and {k: (v, released["report"][k]) for k, v in live["report"].items()
                                     if released["report"][k] != v}
            found.append(f"run {run}: releasing {held} (held since power-up) acted: {changed}, "
                         f"still held {released and released['held']}")
    _, after = read_log(state)
    grown = [r for r in after[len(records):] if "release" not in r]
    if grown:
        found.append(f"run {run}: the log grew with no input: {grown}")
    return found


def kill_loop(tmp_path: Path, kills: int, seed: int, zygote: Zygote | None) -> dict[str, Any]:
    (tmp_path / "box.toml").write_text(CONFIG)
    state = tmp_path / "state"
    rng = random.Random(seed)
    phantoms: list[str] = []
    phantom_runs = 0
    at_kill: Counter[str] = Counter()
    at_start: Counter[str] = Counter()
    logged_at_kill = 0
    held: tuple[str, ...] = ()
    for run in range(kills + 1):
        daemon = Daemon(tmp_path, held, run, zygote)
        try:
            if run:
                found = phantoms_after_restart(daemon, state, held, run)
                phantoms += found
                phantom_runs += bool(found)
            if run == kills:                       # the last restart idles past every long press
                _, records = read_log(state)
                before = daemon.report()
                time.sleep(3.2)
                after = daemon.report()
                _, later = read_log(state)
                if after is None or after["report"] != before["report"] or later != records:
                    phantoms.append(f"run {run}: the box acted while idle for 3.2 s")
                    phantom_runs += not found
                break
            for _ in range(rng.randint(0, 3)):
                button = rng.choice(TAPS)
                daemon.send(f"press {button}")
                time.sleep(rng.uniform(0.01, 0.05))
                daemon.send(f"release {button}")
                time.sleep(0.01)
            pressed = tuple(rng.sample(AT_KILL, rng.randint(1, 3)))
            if run == kills - 1 and "MENU" not in pressed:
                pressed += ("MENU",)               # the repro: a cut while MENU is down
            daemon.send(*(f"press {b}" for b in pressed))
            if run == kills - 1:                   # ... and its press is in the log
                deadline = time.monotonic() + 5
                while (time.monotonic() < deadline
                       and not any(r.get("press") == "MENU" for r in read_log(state)[1][-3:])):
                    time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 0.03))
        finally:
            daemon.kill()
        _, records = read_log(state)
        open_presses = {r["press"] for r in records[-len(pressed):] if "press" in r}
        logged_at_kill += len(open_presses & set(pressed))
        at_kill.update(pressed)
        held = tuple(b for b in pressed if rng.random() < 0.3)
        at_start.update(held)
    return {"kills": kills, "phantoms": phantoms, "restarts_with_phantoms": phantom_runs, "held_at_kill": dict(at_kill),
            "presses_logged_at_kill": logged_at_kill, "held_at_power_up": dict(at_start),
            "records": len(read_log(state)[1])}


def test_twenty_kills_with_buttons_held_make_no_phantom_action(tmp_path, zygote):
    result = kill_loop(tmp_path, kills=20, seed=1, zygote=zygote)
    print(json.dumps({k: v for k, v in result.items() if k != "phantoms"}))
    assert result["phantoms"] == [], "\n".join(result["phantoms"])
    assert result["presses_logged_at_kill"] >= 10        # the kills really cut held presses
    assert result["held_at_power_up"]                    # and some stayed down across one


@pytest.mark.torture
def test_two_hundred_forty_kills_with_buttons_held_make_no_phantom_action(tmp_path):
    result = kill_loop(tmp_path, kills=240, seed=2, zygote=None)
    print(json.dumps({k: v for k, v in result.items() if k != "phantoms"}))
    assert result["phantoms"] == [], "\n".join(result["phantoms"])
