"""The games: `GAMES`, the one list of them, and their lookup. A game is two modules of one
name: games/<module>.py, whose `GAME` carries everything about it (contract name, title, player
range, options, rules, score and words for the big screen), and ui/<module>.py, whose `draw`
is its OLED screen (ui/screens.py finds it here). Adding a game is those two modules and one
line of `GAMES`. Modules load on first use.

Also an engine for one of them, with this catalogue behind its "Change game" menu (the engine
in `core` knows no game)."""
from __future__ import annotations

from importlib import import_module
from typing import Any, Mapping

from ..core.debounce import DEBOUNCE_S
from ..core.engine import Engine
from ..core.game import Game, players_problem
from ..core.namelist import grown
from ..core.records import header_seats, hotspot_state

# contract name -> the module of its rules here and of its screen in ui/, in menu order
GAMES = {
    "grab-bag": "grab_bag",
    "hands-up": "hands_up",
    "all-wound-up": "all_wound_up",
    "hold-everything": "hold_everything",
    "hold-your-breath": "hold_your_breath",
}


def available() -> list[str]:
    """The games whose module is present, in menu order."""
    names = []
    for name in GAMES:
        try:
            get(name)
        except ImportError:
            continue
        names.append(name)
    return names


def get(name: str) -> Game:
    if name not in GAMES:
        raise KeyError(name)
    module = import_module(f"{__package__}.{GAMES[name]}")
    game: Game = module.GAME
    return game


def catalogue() -> tuple[Game, ...]:
    """Every available game, in menu order (what "Change game" lists)."""
    return tuple(get(name) for name in available())


def new_engine(game: str | Game, players: tuple[str, ...], options: Mapping[str, Any], seed: int, *,
               debounce_s: float = DEBOUNCE_S, seats: int = 8) -> Engine:
    """An engine for `game` (a name or the game itself) that can offer every game here."""
    rules = get(game) if isinstance(game, str) else game
    return Engine(rules, tuple(players), options, seed, debounce_s=debounce_s, catalogue=catalogue,
                  seats=seats)


def engine_for(header: dict[str, Any], *, debounce_s: float = DEBOUNCE_S) -> Engine:
    """The engine a game log's header starts: its game, players, options, seed, the box's
    player buttons (`seats`) and, if the box's own Wi-Fi was up as the game started, that
    (`hotspot`) and tonight's names (`names`). ValueError or LookupError, with a one-line reason, for a header that is not one."""
    players, options = header.get("players"), header.get("options")
    if not isinstance(players, list) or not all(isinstance(p, str) and p for p in players) \
            or len(set(players)) != len(players) or not isinstance(options, dict):
        raise ValueError("header: players must be unique names and options an object")
    rules = get(str(header["game"]))
    problem = players_problem(rules, len(players))
    if problem is not None:
        raise ValueError(f"header: {problem}")
    engine = new_engine(rules, tuple(players), options, int(header["seed"]), debounce_s=debounce_s,
                        seats=header_seats(header))
    names = header.get("names", [])
    if not isinstance(names, list):
        raise ValueError("header: names must be a list")
    engine.tonight = grown((), names)
    hotspot = hotspot_state(0.0, header.get("hotspot"))
    engine.hotspot = (hotspot.ssid, hotspot.address) if hotspot.ssid else None
    return engine

