"""The wiring plan: the driver board's rails, every jumper on the Pi's header, every board hole.

Power reaches the circuits through rails on the driver board, each fed by one jumper from one
named header pin; every other jumper carries one signal, and a header pin takes one jumper.
plan() lists every jumper (plug) and every hole of the driver board for the maker's choices and
pin map, and refuses a plan a maker could not plug in or that would hurt the Pi: two plugs on
one header pin, a rail with no feed or fed from the wrong kind of pin, a hole on a rail the
board lacks, a 3.3 V load (one whose pull-ups reach a GPIO) on the 5 V rail. The header table,
the board's tables and board.svg are generated from this plan and nothing else.

Pure: the caller passes the choices and the pin map in.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from pi_companion.hw.pinmap import HEADER_PIN

# What a wire's colour says (the hook-up wire in the parts list comes in these colours).
COLOURS = {"5V": "red", "3V3": "orange", "GND": "black", "button": "yellow", "lamp": "green",
           "hall": "blue", "piezo": "white"}

# The 40-pin header's power pins (physical pin -> supply). The GPIO are in the pin map.
HEADER_POWER: dict[int, str] = {1: "3V3", 17: "3V3", 2: "5V", 4: "5V",
                                **{pin: "GND" for pin in (6, 9, 14, 20, 25, 30, 34, 39)}}
I2C_PINS = {3: "SDA", 5: "SCL"}



@dataclass(frozen=True)
class Rail:
    """A supply rail along the driver board, fed by one jumper from one header pin."""

    name: str              # the supply it carries: "5V", "3V3" or "GND"
    feed: int | None       # the header pin its one jumper plugs into


RAILS: tuple[Rail, ...] = (Rail("5V", 2), Rail("3V3", 1), Rail("GND", 6))


@dataclass(frozen=True)
class Plug:
    """One female-female jumper on the Pi's header: a header pin, and where its other end goes."""

    pin: int
    signal: str            # the pin map's name, or "SDA"/"SCL", or a rail's name for a feed
    to: str


@dataclass(frozen=True)
class Hole:
    """One place on the driver board a wire starts: J1.n takes a jumper from the Pi's header,
    J2.n a wire out to a button, a lamp, a sensor or a module."""

    name: str              # "J1.4", "J2.3"
    net: str               # a rail's name, or the signal or node it carries
    to: str                # the far end
    colour: str
    rail: str = ""         # the rail this hole is on ("" for a signal)
    key: str = ""          # its place in J2_ORDER


class WiringError(ValueError):
    """A wiring plan a maker could not plug in, or one that would hurt the Pi (one line)."""


# J1 and J2 positions are fixed by these orders over the 8-player map, so that a 4-player board
# leaves the places of players 5 to 8 empty and growing it moves no wire.
J1_ORDER = ("5V", "3V3", "GND", *(f"{kind}{n}" for n in range(1, 9) for kind in ("P", "LED")),
            "YES", "NO", "MENU", "PIEZO", "HALL_A", "HALL_B")
J2_ORDER = ("COM", "LAMP+", *(f"{kind}{n}" for n in range(1, 9) for kind in ("P", "LAMP-")),
            "YES", "NO", "MENU", "PIEZO+", "PIEZO-", "HALL_VCC", "HALL_GND", "HALL_A", "HALL_B",
            "OLED_VCC", "OLED_GND", "ENC_VCC", "ENC_GND")
# Loads that face a GPIO (their pull-ups or outputs reach one): never on the 5 V rail.
GPIO_FACING = {"OLED_VCC", "ENC_VCC", "HALL_VCC"}


def _holes(options: Mapping[str, object], pins: Mapping[str, int]) -> list[tuple[str, str, str, str, str]]:
    """(J2 key, net, far end, colour, rail) for every J2 hole the choices use."""
    out = [("COM", "GND", "every button's COM tab, hopping from tab to tab", COLOURS["GND"], "GND")]
    players = sorted(int(name[1:]) for name in pins if re.fullmatch(r"P\d", name))
    if any(f"LED{n}" in pins for n in players):
        out.append(("LAMP+", "5V", "every lit button's lamp + tab, hopping from tab to tab", COLOURS["5V"], "5V"))
    for n in players:
        out.append((f"P{n}", f"P{n}", f"player {n} button, NO tab", COLOURS["button"], ""))
        if f"LED{n}" in pins:
            out.append((f"LAMP-{n}", f"LED{n} collector", f"player {n} button, lamp − tab", COLOURS["lamp"], ""))
    out += [(name, name, f"{name} button, NO tab", COLOURS["button"], "") for name in ("YES", "NO", "MENU")
            if name in pins]
    if options["piezo"] == "plain":
        out += [("PIEZO+", "PIEZO after 470 Ω", "piezo +", COLOURS["piezo"], ""),
                ("PIEZO-", "GND", "piezo −", COLOURS["GND"], "GND")]
    else:
        out += [("PIEZO+", "5V", "piezo +", COLOURS["5V"], "5V"),
                ("PIEZO-", "PIEZO collector", "piezo −", COLOURS["piezo"], "")]
    if options["hall"] == "gpio":
        out += [("HALL_VCC", "3V3", "both hall sensors' VCC", COLOURS["3V3"], "3V3"),
                ("HALL_GND", "GND", "both hall sensors' GND", COLOURS["GND"], "GND"),
                ("HALL_A", "HALL_A", "hall sensor A's OUT", COLOURS["hall"], ""),
                ("HALL_B", "HALL_B", "hall sensor B's OUT", COLOURS["hall"], "")]
    out += [("OLED_VCC", "3V3", "OLED VCC (jumper)", COLOURS["3V3"], "3V3"),
            ("OLED_GND", "GND", "OLED GND (jumper)", COLOURS["GND"], "GND"),
            ("ENC_VCC", "3V3", "KY-040 + (jumper)", COLOURS["3V3"], "3V3"),
            ("ENC_GND", "GND", "KY-040 GND (jumper)", COLOURS["GND"], "GND")]
    return out


def plan(options: Mapping[str, object], pins: Mapping[str, int],
         rails: tuple[Rail, ...] = RAILS) -> tuple[list[Plug], list[Hole]]:
    """Every jumper on the header and every hole of the driver board; WiringError if the plan
    cannot be plugged in (two plugs on one pin, a rail without a feed or fed from the wrong
    kind of pin, a GPIO-facing load on the 5 V rail, a hole on a rail the board lacks)."""
    holes = [Hole(f"J2.{J2_ORDER.index(key) + 1}", net, to, colour, rail, key)
             for key, net, to, colour, rail in _holes(options, pins)]
    plugs: list[Plug] = []
    by_rail = {rail.name: rail for rail in rails}
    for rail in rails:
        if rail.feed is not None:
            plugs.append(Plug(rail.feed, rail.name, f"driver board J1.{J1_ORDER.index(rail.name) + 1} "
                                                     f"({rail.name} rail)"))
    board_signals = [name for name in J1_ORDER[3:] if name in pins
                     and not (name.startswith("HALL_") and options["hall"] != "gpio")]
    for name in board_signals:
        plugs.append(Plug(HEADER_PIN[pins[name]], name, f"driver board J1.{J1_ORDER.index(name) + 1}"))
    plugs += [Plug(pin, name, f"OLED {name}") for pin, name in I2C_PINS.items()]
    plugs += [Plug(HEADER_PIN[pins[name]], name, f"KY-040 {pin}")
              for name, pin in (("ENC_A", "CLK"), ("ENC_B", "DT")) if name in pins]
    check_wiring(plugs, holes, by_rail)
    return sorted(plugs, key=lambda p: p.pin), sorted(holes, key=lambda h: int(h.name[3:]))


def check_wiring(plugs: list[Plug], holes: list[Hole], rails: Mapping[str, Rail]) -> None:
    """The faults a maker would meet with a soldering iron in hand, refused in one line each."""
    on_pin: dict[int, list[str]] = {}
    for plug in plugs:
        on_pin.setdefault(plug.pin, []).append(plug.to)
    for pin, ends in sorted(on_pin.items()):
        if len(ends) > 1:
            raise WiringError(f"header pin {pin} has {len(ends)} plugs ({'; '.join(ends)}): one Dupont "
                              "plug fits a pin; feed the others from a driver-board rail")
    for name, rail in rails.items():
        if rail.feed is None:
            users = [hole.to for hole in holes if hole.rail == name]
            raise WiringError(f"the {name} rail has no feed (it powers {', '.join(users) or 'nothing'}): "
                              "name the header pin its jumper plugs into")
        if HEADER_POWER.get(rail.feed) != name:
            what = HEADER_POWER.get(rail.feed, "a GPIO" if rail.feed not in I2C_PINS else "I2C")
            raise WiringError(f"the {name} rail is fed from header pin {rail.feed}, which is {what}")
    for hole in holes:
        if hole.rail and hole.rail not in rails:
            raise WiringError(f"{hole.name} ({hole.to}) is on a {hole.rail} rail the driver board lacks")
        if hole.rail == "5V" and hole.key in GPIO_FACING:
            raise WiringError(f"{hole.name} ({hole.to}) is on the 5V rail: its pull-ups would put 5 V on a "
                              "GPIO; use the 3V3 rail")
