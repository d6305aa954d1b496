"""The pin map: which BCM GPIO each named input and output is wired to."""
from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Mapping

PLAYER_BUTTONS = tuple(f"P{i}" for i in range(1, 9))
PLAYER_LEDS = tuple(f"LED{i}" for i in range(1, 9))
NAMES = PLAYER_BUTTONS + PLAYER_LEDS + (
    "YES", "NO", "MENU", "ENC_A", "ENC_B", "PIEZO", "HALL_A", "HALL_B")


def default_pinmap_text() -> str:
    return resources.files("pi_companion").joinpath("data/pinmap.toml").read_text()


def load_pinmap(path: Path | None = None, overrides: Mapping[str, int] | None = None) -> dict[str, int]:
    """Return {name: BCM pin}; `overrides` (from the config's [pins]) replace single entries."""
    text = path.read_text() if path else default_pinmap_text()
    pins = dict(tomllib.loads(text)["pins"])
    pins.update(overrides or {})
    return pins
