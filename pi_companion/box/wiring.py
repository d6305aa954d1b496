"""The hardware wiring: which pins the box claims, as what.

Every player button and LED the pin map has is claimed, not only the config's players': the
players can change (MENU > Players, a resumed log), and a button beyond them does nothing.
With the wind puck as the wind source the hall pins are the puck's, never claimed here. The
sensors' levels are read as the pins are set up, before the log is folded: an edge meanwhile
is queued and decoded from there.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from ..config import Config
from ..core.controls import BUTTONS
from ..hw.inputs import LEVEL_NAMES, EdgeInput, build_inputs, player_lines, reading_levels
from ..hw.outputs import Leds, Piezo


class Wiring(NamedTuple):
    """The box's devices on its pins, and what they read at start."""
    seats: int                                     # player buttons on the pin map: its engines are told
    inputs: dict[str, EdgeInput]
    player_lines: tuple[tuple[str, Any, int], ...]  # read as each settle window closes
    start_levels: dict[str, int]                   # the sensors' levels as the pins were set up
    leds: Leds
    piezo: Piezo


def wire(config: Config, factory: Any, sink: Any) -> Wiring:
    """Claim the pins of `config`'s pin map on `factory`; every input's edges go to `sink`."""
    pins = config.pin_map()
    n = sum(1 for b in BUTTONS if b[0] == "P")
    seats = sum(1 for i in range(1, n + 1) if f"P{i}" in pins)
    if config.wind_source == "puck":
        pins = {k: v for k, v in pins.items() if not k.startswith("HALL")}
    inputs = build_inputs(pins, n, sink, factory)
    lines = player_lines(inputs)
    start_levels = reading_levels(inputs, LEVEL_NAMES)
    leds = Leds(pins, n, factory)
    piezo = Piezo(pins.get("PIEZO") if config.sound else None, factory, config.tunes)
    return Wiring(seats, inputs, lines, start_levels, leds, piezo)
