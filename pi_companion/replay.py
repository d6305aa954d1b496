"""The replay contract: a scripted table session through the live pipeline on a virtual clock.

`parse_scenario` reads a scenario file's bytes, `load_scenario` checks a parsed scenario and names
the first problem (`ScenarioError`); `run_scenario` feeds it to the engine and returns the report.
A host command is checked when it comes, against the players at the table then, by the same
parser as the live box's hub (`hub/protocol.py`): one the hub would refuse does nothing, and the
report lists it under `refused`. No file or clock is touched here.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from .core.events import Edge, HallLevel, HostCommand, InputEvent, Turn
from .core.game import Game, players_problem
from .core.records import hotspot_state
from .core.table import HOST_COMMANDS
from .games import registry
from .games.base import OptionError
from .hub.protocol import FIELDS, CommandError, parse_command

TOP_KEYS = {"game", "players", "options", "seed", "end", "events"}
BUTTON_NAMES = {f"P{i}" for i in range(1, 9)} | {"YES", "NO", "MENU"}
KINDS = ("press", "release", "turn", "hall", "host", "hotspot")

# Limits (docs/replay.md, "Limits"): a scenario is a table session, not a stress test. Beyond
# them it is rejected, so a replay always ends, in seconds and in a few megabytes.
MAX_BYTES = 16 * 1024 * 1024       # the scenario text
MAX_EVENTS = 100_000
MAX_TIME_S = 6 * 3600.0            # every `t` and `end`: six hours of virtual time
MAX_DEPTH = 32                     # arrays and objects inside one another
SEED_RANGE = (-(2**63), 2**64 - 1)  # any 64-bit seed, signed or not


class ScenarioError(ValueError):
    """An invalid scenario; the message is the one line printed on stderr (control characters
    from the scenario are shown escaped)."""

    def __init__(self, message: str) -> None:
        super().__init__("".join(c if c.isprintable() or c == " "
                                 else c.encode("unicode_escape", "backslashreplace").decode("ascii")
                                 for c in message))


@dataclass(frozen=True)
class Scenario:
    game: str
    players: tuple[str, ...]
    options: dict[str, Any]
    seed: int
    end: float | None
    events: tuple[InputEvent | dict[str, Any], ...]    # a host command: its message, checked when it comes


def _number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:                  # an integer too large for a float
        return False


def _time(value: Any) -> bool:
    """A number of seconds from 0 to MAX_TIME_S."""
    return _number(value) and 0 <= value <= MAX_TIME_S


def parse_scenario(raw: bytes) -> Scenario:
    """The scenario in `raw` (a file's bytes), checked; ScenarioError names the first problem."""
    if len(raw) > MAX_BYTES:
        raise ScenarioError(f"scenario: larger than {MAX_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        column = err.start - raw.rfind(b"\n", 0, err.start)
        raise ScenarioError(f"scenario: not UTF-8 (byte {raw[err.start]:#04x} at line {line} column {column})") from None

    def constant(name: str) -> Any:
        raise ScenarioError(f"scenario: not valid JSON: {name} is not a JSON number")
    try:
        data = json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as err:
        raise ScenarioError(f"scenario: not valid JSON: {err.msg} at line {err.lineno} column {err.colno}") from None
    except RecursionError:
        raise ScenarioError(f"scenario: nested more than {MAX_DEPTH} deep") from None
    except ValueError as err:
        if isinstance(err, ScenarioError):
            raise
        why = "an integer has more than 4300 digits" if "integer string conversion" in str(err) else str(err)
        raise ScenarioError(f"scenario: not valid JSON here: {why}") from None
    return load_scenario(data)


def _check_values(data: Any) -> None:
    """No nesting deeper than MAX_DEPTH, no lone surrogate (it cannot be written out as UTF-8)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                raise ScenarioError(f"scenario: nested more than {MAX_DEPTH} deep")
            items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
        elif isinstance(value, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            raise ScenarioError(f"scenario: the string {value!r} holds a lone surrogate (not a character)")


def load_scenario(data: Any) -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioError("scenario: must be a JSON object")
    _check_values(data)
    for key in data:
        if key not in TOP_KEYS:
            raise ScenarioError(f"{key}: unknown key (allowed: {', '.join(sorted(TOP_KEYS))})")
    for key in ("game", "players", "events"):
        if key not in data:
            raise ScenarioError(f"{key}: missing")
    game = data["game"]
    if not isinstance(game, str) or game not in registry.GAMES:
        raise ScenarioError(f"game: unknown game {game!r} (one of {', '.join(registry.GAMES)})")
    try:
        rules = registry.get(game)
    except ImportError:
        raise ScenarioError(f"game: {game!r} is not available in this build") from None
    players = _players(data["players"], rules)
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise ScenarioError("options: must be an object")
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ScenarioError("seed: must be an integer")
    if not SEED_RANGE[0] <= seed <= SEED_RANGE[1]:
        raise ScenarioError("seed: must be a 64-bit integer (from -2**63 to 2**64-1)")
    end = data.get("end")
    if end is not None and not _time(end):
        raise ScenarioError(f"end: must be a number of seconds from 0 to {MAX_TIME_S:.0f}")
    try:
        rules.new_game(players, options, seed)
    except OptionError as err:
        raise ScenarioError(str(err)) from None
    events = data["events"]
    if not isinstance(events, list):
        raise ScenarioError("events: must be a list")
    if len(events) > MAX_EVENTS:
        raise ScenarioError(f"events: more than {MAX_EVENTS} events")
    parsed = tuple(_event(i, ev, len(players)) for i, ev in enumerate(events))
    return Scenario(game, players, options, seed, None if end is None else float(end), parsed)


def _players(value: Any, rules: Game) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(p, str) and p.strip() for p in value):
        raise ScenarioError("players: must be a list of non-empty names")
    if len(set(value)) != len(value):
        raise ScenarioError("players: names must be unique")
    problem = players_problem(rules, len(value))
    if problem is not None:
        raise ScenarioError(f"players: {problem}, got {len(value)}")
    return tuple(value)


def _event(index: int, ev: Any, n_players: int) -> InputEvent:
    where = f"event {index}"
    if not isinstance(ev, dict):
        raise ScenarioError(f"{where}: must be an object")
    kinds = [k for k in KINDS if k in ev]
    fields = {"level"} if kinds == ["hall"] else set(FIELDS.get(ev["host"], ())) \
        if kinds == ["host"] and isinstance(ev["host"], str) else set()
    allowed = {"t"} | set(kinds) | fields
    for key in ev:
        if key not in allowed:
            known = key in KINDS or key == "level" or any(key in f for f in FIELDS.values())
            raise ScenarioError(f"{where}: {'unexpected' if known else 'unknown'} field {key!r}")
    if len(kinds) != 1:
        raise ScenarioError(f"{where}: needs exactly one of {', '.join(KINDS)}")
    t = ev.get("t")
    if not _time(t):
        raise ScenarioError(f"{where}: t must be a number of seconds from 0 to {MAX_TIME_S:.0f}")
    kind = kinds[0]
    if kind == "host":
        if ev["host"] not in HOST_COMMANDS:
            raise ScenarioError(f"{where}: unknown host command {json.dumps(ev['host'])} (one of {', '.join(HOST_COMMANDS)})")
        return {**ev, "t": float(t)}
    if kind == "hotspot":
        try:
            return hotspot_state(float(t), ev["hotspot"])
        except ValueError as err:
            raise ScenarioError(f"{where}: {err}") from None
    if kind in ("press", "release"):
        return Edge(float(t), _button(where, ev[kind], n_players), kind == "press")
    if kind == "turn":
        if ev["turn"] not in (1, -1) or isinstance(ev["turn"], bool):
            raise ScenarioError(f"{where}: turn must be +1 or -1")
        return Turn(float(t), int(ev["turn"]))
    if ev["hall"] not in ("A", "B"):
        raise ScenarioError(f"{where}: hall must be \"A\" or \"B\"")
    if "level" not in ev or ev["level"] not in (0, 1) or isinstance(ev["level"], bool):
        raise ScenarioError(f"{where}: hall events need level 0 or 1")
    return HallLevel(float(t), ev["hall"], int(ev["level"]))


def _button(where: str, name: Any, n_players: int) -> str:
    if not isinstance(name, str) or name not in BUTTON_NAMES:
        raise ScenarioError(f"{where}: unknown button {name!r}".replace("'", '"'))
    if name.startswith("P") and int(name[1:]) > n_players:
        raise ScenarioError(f"{where}: button \"{name}\" has no player ({n_players} players)")
    return name


def run_scenario(scenario: Scenario) -> dict[str, Any]:
    engine = registry.new_engine(scenario.game, scenario.players, scenario.options, scenario.seed)
    refused: list[dict[str, Any]] = []
    for index, event in enumerate(scenario.events):
        if isinstance(event, dict):
            try:
                command = parse_command({**event, "cmd": event["host"]}, tuple(engine.players))
            except CommandError as err:
                refused.append({"event": index, "error": str(err)})
                continue
            event = HostCommand(event["t"], command.command, command.player, command.name,
                                command.options, command.delta)
        engine.feed(event)
    if scenario.end is not None:
        engine.advance(scenario.end)
    report = engine.report()
    if refused:
        report["refused"] = refused
    return report
