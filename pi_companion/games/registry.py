"""Find a game by its contract name; modules load on first use."""
from __future__ import annotations

from importlib import import_module

from .base import Game

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
