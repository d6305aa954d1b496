"""The replay contract: a scripted table session through the live pipeline on a virtual clock.

`load_scenario` checks a parsed scenario and names the first problem (`ScenarioError`);
`run_scenario` feeds it to the engine and returns the report. No file or clock is touched here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .core.engine import Engine
from .core.events import Edge, HallLevel, InputEvent, Turn
from .games import registry
from .games.base import OptionError

TOP_KEYS = {"game", "players", "options", "seed", "end", "events"}
BUTTON_NAMES = {f"P{i}" for i in range(1, 9)} | {"YES", "NO", "MENU"}
KINDS = ("press", "release", "turn", "hall")


class ScenarioError(ValueError):
    """An invalid scenario; the message is the one line printed on stderr."""


@dataclass(frozen=True)
class Scenario:
    game: str
    players: tuple[str, ...]
    options: dict[str, Any]
    seed: int
    end: float | None
    events: tuple[InputEvent, ...]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def load_scenario(data: Any) -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioError("scenario: must be a JSON object")
    for key in data:
        if key not in TOP_KEYS:
            raise ScenarioError(f"{key}: unknown key (allowed: {', '.join(sorted(TOP_KEYS))})")
    for key in ("game", "players", "events"):
        if key not in data:
            raise ScenarioError(f"{key}: missing")
    game = data["game"]
    if game not in registry.GAMES:
        raise ScenarioError(f"game: unknown game {game!r} (one of {', '.join(registry.GAMES)})")
    try:
        rules = registry.get(game)
    except ImportError:
        raise ScenarioError(f"game: {game!r} is not available in this build") from None
    players = _players(data["players"], rules.min_players, rules.max_players, game)
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise ScenarioError("options: must be an object")
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ScenarioError("seed: must be an integer")
    end = data.get("end")
    if end is not None and not (_number(end) and end >= 0):
        raise ScenarioError("end: must be a number of seconds, 0 or more")
    try:
        rules.new_game(players, options, seed)
    except OptionError as err:
        raise ScenarioError(str(err)) from None
    events = data["events"]
    if not isinstance(events, list):
        raise ScenarioError("events: must be a list")
    parsed = tuple(_event(i, ev, len(players)) for i, ev in enumerate(events))
    return Scenario(game, players, options, seed, None if end is None else float(end), parsed)


def _players(value: Any, lo: int, hi: int, game: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(p, str) and p.strip() for p in value):
        raise ScenarioError("players: must be a list of non-empty names")
    if len(set(value)) != len(value):
        raise ScenarioError("players: names must be unique")
    if not lo <= len(value) <= hi:
        raise ScenarioError(f"players: {game} takes {lo} to {hi} players, got {len(value)}")
    return tuple(value)


def _event(index: int, ev: Any, n_players: int) -> InputEvent:
    where = f"event {index}"
    if not isinstance(ev, dict):
        raise ScenarioError(f"{where}: must be an object")
    kinds = [k for k in KINDS if k in ev]
    allowed = {"t"} | set(kinds) | ({"level"} if kinds == ["hall"] else set())
    for key in ev:
        if key not in allowed:
            what = "unknown field" if key not in KINDS and key != "level" else "unexpected field"
            raise ScenarioError(f"{where}: {what} {key!r}")
    if len(kinds) != 1:
        raise ScenarioError(f"{where}: needs exactly one of press, release, turn, hall")
    t = ev.get("t")
    if not (_number(t) and t >= 0):
        raise ScenarioError(f"{where}: t must be a number of seconds, 0 or more")
    kind = kinds[0]
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
    engine = Engine(registry.get(scenario.game), scenario.players, scenario.options, scenario.seed)
    for event in scenario.events:
        engine.feed(event)
    if scenario.end is not None:
        engine.advance(scenario.end)
    return engine.report()
