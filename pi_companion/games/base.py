"""The option checks every game's scenarios and configs share, and the `Game` protocol they
implement (defined in core/game.py, where the engine that drives it lives; named here too, so
that a game needs one import)."""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ..core.game import NO_EFFECTS, Effects, Game, Option

__all__ = ["NO_EFFECTS", "Effects", "Game", "Option", "OptionError", "check_known", "most", "opt_choice",
           "opt_int", "opt_names", "opt_number", "opt_player", "opt_settle_ms", "SETTLE_OPTION"]


class OptionError(ValueError):
    """A bad game option; the message names it: `options.cards: must be ...`."""


def check_known(options: Mapping[str, Any], allowed: Iterable[str]) -> None:
    allowed = set(allowed)
    for key in options:
        if key not in allowed:
            raise OptionError(f"options.{key}: unknown option (allowed: {', '.join(sorted(allowed))})")


def opt_int(options: Mapping[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise OptionError(f"options.{key}: must be an integer from {lo} to {hi}")
    return value


def opt_number(options: Mapping[str, Any], key: str, default: float, lo: float, hi: float) -> float:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
        raise OptionError(f"options.{key}: must be a number from {lo:g} to {hi:g}")
    return float(value)


def opt_choice(options: Mapping[str, Any], key: str, default: str, choices: Sequence[str]) -> str:
    value = options.get(key, default)
    if value not in choices:
        raise OptionError(f"options.{key}: must be one of {', '.join(choices)}")
    return str(value)


def opt_player(options: Mapping[str, Any], key: str, players: Sequence[str], default: int = 0) -> int:
    """A player named in the options, as an index."""
    if key not in options:
        return default
    value = options[key]
    if value not in players:
        raise OptionError(f"options.{key}: must be one of the players ({', '.join(players)})")
    return list(players).index(value)


def opt_names(options: Mapping[str, Any], key: str, default: Sequence[str], least: int = 1) -> tuple[str, ...]:
    value = options.get(key, list(default))
    if (not isinstance(value, list) or len(value) < least
            or not all(isinstance(v, str) and v.strip() for v in value) or len(set(value)) != len(value)):
        raise OptionError(f"options.{key}: must be a list of at least {least} unique non-empty names")
    return tuple(value)


SETTLE_OPTION = Option("settle_ms", "Settle window (ms)", "int", 2, 0, 100)


def opt_settle_ms(options: Mapping[str, Any], default: float = 2.0) -> float:
    return opt_number(options, "settle_ms", default, 0.0, 100.0)


def most(scores: Sequence[int]) -> tuple[int, ...]:
    """Indices of every player with the highest score (ties: several winners)."""
    top = max(scores)
    return tuple(i for i, s in enumerate(scores) if s == top)
