"""The box's circuits as data: the one place the parts list and every wiring fact come from.

A circuit is a small schematic that is built once, once per player or not at all, depending on
the maker's choices (hardware/build.toml) and the pin map. It names its components (a part
from PARTS, how many per copy, and what that component does there) and the words the wiring
table prints for the GPIO signals it owns. The parts list (bom.csv, README's parts table) is
the sum of the circuits that the choices build: a part appears in it exactly when a circuit
uses it, with the quantity the circuits add up to.

How the circuits are wired to the Pi and to each other (the driver board's rails, the jumpers,
the board's holes) is wiring.py's, which refuses a plan a maker could not plug in.

Pure: no file is read here (gen_docs.py reads build.toml and the pin maps and passes them in).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping

from wiring import COLOURS

# --- the choices -------------------------------------------------------------------------

CHOICES: dict[str, tuple[object, ...]] = {
    "players": (4, 8),
    "pi": ("pi3b+", "pi4", "pi5", "zero2w"),
    "display": ("ssd1306", "sh1106"),
    "display_address": (0x3C, 0x3D),
    "piezo": ("plain", "louder"),
    "hall": ("gpio", "puck"),
    "button_mm": (24, 30),
}


class BuildError(ValueError):
    """build.toml holds a choice that is not one of CHOICES (one line, naming the key)."""


def check_options(options: Mapping[str, object]) -> dict[str, object]:
    unknown = sorted(set(options) - set(CHOICES))
    if unknown:
        raise BuildError(f"build.toml: unknown key {unknown[0]!r} (known: {', '.join(CHOICES)})")
    missing = [key for key in CHOICES if key not in options]
    if missing:
        raise BuildError(f"build.toml: {missing[0]} is missing")
    for key, allowed in CHOICES.items():
        value = options[key]
        if type(value) is not type(allowed[0]) or value not in allowed:
            def show(v):
                return f"0x{v:02X}" if key == "display_address" and type(v) is int else repr(v)
            shown = ", ".join(show(a) for a in allowed)
            raise BuildError(f"build.toml: {key} = {show(value)} is not one of {shown}")
    return dict(options)


# --- the turntable's geometry (turntable.svg and the magnet in the parts list) --------------

# One diametric disc magnet at the centre of the turntable's underside; two latching hall
# sensors under its rim, a quarter of a pole pair apart (90 degrees for the one pole pair of a
# diametric disc). With p pole pairs (a ring of 2p magnets, alternating), the sensors go
# (k + 1/4) * 360 / p degrees apart; B is that far clockwise from A (seen from above), so that
# A leads B when the table turns clockwise.
TURNTABLE = {
    "magnet_diameter": 10.0,    # mm
    "magnet_thickness": 3.0,    # mm
    "pole_pairs": 1,            # a diametric disc
    "gap": (2.0, 4.0),          # mm, the magnet's lower face to the sensors' tops
}


def sensor_spacing(pole_pairs: int, k: int = 0) -> float:
    """Degrees from sensor A clockwise to sensor B for clean quadrature."""
    return (k + 0.25) * 360 / pole_pairs


# --- the parts ---------------------------------------------------------------------------


# The box's mechanics (millimetres): what the panel, the box and the turntable are made of.
MECHANICS = {
    "panel": 3.0,           # top panel thickness: plywood, MDF or acrylic
    "button_below": 40.0,   # a screw-in arcade button with its microswitch, below the panel's underside
    "clearance": 10.0,      # between the lowest part under the panel and what stands on the base
    "disc": 250.0,          # the turntable disc's diameter, on the 150 mm bearing
}

@dataclass(frozen=True)
class Part:
    name: str
    example: str
    notes: str = ""


_MODELS = ("Pi 3 Model B+, Pi 4 Model B, Pi 5 and Pi Zero 2 W share the 40-pin header and the pin map "
           "(`pi` in build.toml).")

PARTS: dict[str, Part] = {
    "pi-pi3b+": Part("Raspberry Pi 3 Model B+", "Raspberry Pi 3 Model B+", "lgpio drives its GPIO. " + _MODELS),
    "pi-pi4": Part("Raspberry Pi 4 Model B", "Raspberry Pi 4 Model B 2GB", "lgpio drives its GPIO. " + _MODELS),
    "pi-pi5": Part("Raspberry Pi 5", "Raspberry Pi 5 2GB", "Its GPIO sit behind the RP1 chip; only the lgpio "
                   "backend drives them, as pi-companion does. " + _MODELS),
    "pi-zero2w": Part("Raspberry Pi Zero 2 W", "Raspberry Pi Zero 2 WH (header fitted)",
                      "Without the H: solder on a 40-pin header. lgpio drives its GPIO. " + _MODELS),
    "psu-microusb": Part("Power supply, 5.1 V 2.5 A micro-USB", "Raspberry Pi 12.5W Micro USB Power Supply",
                         "The box adds 130 to 200 mA (README, power budget)."),
    "psu-usbc-3a": Part("Power supply, 5.1 V 3 A USB-C", "Raspberry Pi 15W USB-C Power Supply",
                        "The box adds 130 to 200 mA (README, power budget)."),
    "psu-usbc-5a": Part("Power supply, 5.1 V 5 A USB-C", "Raspberry Pi 27W USB-C Power Supply",
                        "A 3 A supply works but limits USB. The box adds 130 to 200 mA."),
    "sd": Part("microSD card", "16 GB A1 class microSD", "Any reputable 16 GB or larger card."),
    "oled-ssd1306": Part("OLED display SSD1306 128x64 I2C", "0.96 inch SSD1306 I2C module (4 pins)",
                         "Power it from 3.3 V so its own pull-ups stay at 3.3 V. Check the pin order "
                         "printed on yours. Config: [display] driver = \"ssd1306\"."),
    "oled-sh1106": Part("OLED display SH1106 128x64 I2C", "1.3 inch SH1106 I2C module (4 pins)",
                        "Most 1.3 inch modules are SH1106. Power it from 3.3 V. Config: [display] "
                        "driver = \"sh1106\" (with the SSD1306 driver the picture is shifted)."),
    "button-lit-24": Part("24 mm arcade button with LED lamp", "24 mm illuminated arcade button (5 V lamp)",
                          "5 V lamp with its resistor built in (12 V lamps need a 12 V lamp supply: "
                          "README, Button lamps). Panel hole 24 mm."),
    "button-lit-30": Part("30 mm arcade button with LED lamp", "30 mm illuminated arcade button (5 V lamp)",
                          "5 V lamp with its resistor built in (12 V lamps need a 12 V lamp supply: "
                          "README, Button lamps). Panel hole 30 mm."),
    "button-24": Part("24 mm arcade button", "24 mm arcade button (no lamp needed)",
                      "Illuminated ones work too; their lamps stay unlit. Panel hole 24 mm."),
    "button-30": Part("30 mm arcade button", "30 mm arcade button (no lamp needed)",
                      "Illuminated ones work too; their lamps stay unlit. Panel hole 30 mm."),
    "npn": Part("NPN transistor", "2N3904 (or BC337 / PN2222A)",
                "Up to 8 lamps: one ULN2803A (base resistors built in) can replace the lamp "
                "transistors and their resistors."),
    "r1k": Part("Resistor 1 kohm", "1 kohm 1/4 W"),
    "r10k": Part("Resistor 10 kohm", "10 kohm 1/4 W", "Pull-ups go to 3.3 V, never 5 V."),
    "r470": Part("Resistor 470 ohm", "470 ohm 1/4 W"),
    "1n4148": Part("Diode 1N4148", "1N4148 small-signal diode", "Cathode (ring) to 5 V."),
    "c100n": Part("Capacitor 100 nF ceramic", "100 nF 50 V ceramic", "Soldered across VCC and GND right at the sensor."),
    "ky040": Part("Rotary encoder module", "KY-040",
                  "+ to 3.3 V, never 5 V (its pull-ups go to +). The push switch is not used."),
    "piezo": Part("Passive piezo", "Murata PKM17EPPH4001-B0 (or any passive piezo disc)",
                  "Must be passive (no built-in oscillator). A 'passive buzzer' that measures 10 to "
                  "50 ohm is magnetic: only ever on the louder (transistor) circuit, never on a GPIO."),
    "drv5013": Part("Latching hall sensor DRV5013", "DRV5013ADQLPG (TO-92; SOT-23: DRV5013ADQDBZR)",
                    "Open-drain output: 10 kohm pull-up to 3.3 V. AD = +/-2.7 mT; FA (+/-1.3 mT) also "
                    "fine, AG (+/-6 mT) needs a smaller gap. A DRV5012 (X2SON, push-pull, SEL tied to "
                    "VCC) can replace it if you can solder it."),
    "magnet": Part("Disc magnet diametrically magnetised",
                   f"{TURNTABLE['magnet_diameter']:g} x {TURNTABLE['magnet_thickness']:g} mm N35 diametric disc",
                   "Diametric: N and S are the two halves of the disc; an axial disc will not work."),
    "bearing": Part("Turntable bearing", "150 mm lazy-susan bearing",
                    "Its steel ring sits far from the centre, which is fine; keep steel 2 cm or more "
                    "from the magnet and sensors."),
    "pico": Part("Raspberry Pi Pico", "Raspberry Pi Pico (SC0915)",
                 "Runs firmware/ (make firmware-deploy). Pins: firmware/puck.py."),
    "usb-cable": Part("USB cable, micro-USB to USB-A, data", "1 m micro-USB data cable",
                      "A data cable, not a charge-only one: it powers the Pico and carries its reports. "
                      "A Pi Zero 2 W has no USB-A socket: add a micro-USB OTG adapter."),
    "otg": Part("Micro-USB OTG adapter (Pi Zero 2 W only)", "micro-B plug to USB-A socket OTG adapter",
                "Plugs into the Zero 2 W's USB data port (the one marked USB, not PWR IN)."),
    "protoboard": Part("Protoboard", "half-size solderable breadboard or 7 x 9 cm stripboard",
                       "Carries the transistors, resistors and the 3.3 V / 5 V / GND rails."),
    "standoff-m25": Part("Standoff M2.5, 11 mm, female-female", "M2.5 x 11 mm brass standoff",
                         "Brass or nylon."),
    "screw-m25": Part("Screw M2.5 x 6 mm", "M2.5 x 6 mm pan head", "One each end of every standoff."),
    "screw-m2": Part("Screw M2 x 10 mm with nut", "M2 x 10 mm pan head + M2 nut",
                     "Through the panel and the OLED module's corner holes."),
    "spacer-m2": Part("Spacer M2, 3 mm", "M2 x 3 mm nylon spacer",
                      "Between the panel and the OLED module, so its components clear the panel."),
    "terminal": Part("Quick-disconnect terminal, female, insulated", "2.8 mm or 4.8 mm spade receptacle",
                     "Sized for your microswitch and lamp tabs (2.8 mm or 4.8 mm; check yours)."),
    "jumper-ff": Part("Jumper wire, female-female", "20 cm Dupont jumper, female both ends",
                      "From the Pi's header pins to the protoboard, the OLED and the encoder."),
    "wire": Part("Hook-up wire", "0.25 mm2 (24 AWG) stranded: " + ", ".join(dict.fromkeys(COLOURS.values())),
                 "A few metres; twist long signal runs with a ground. The colours: README, wiring tables."),
    "pinheader": Part("Pin header strip, male, 2.54 mm", "1 x 40 breakaway male header",
                      "Soldered on the driver board: J1 (a pin for each jumper from the Pi) and J2.28 to J2.31."),
    "knob": Part("Knob for a 6 mm D shaft", "20 mm knob, 6 mm D bore, set screw",
                 "The KY-040's shaft is 6 mm with a flat: a knob with a D bore (or a set screw) fits."),
    "panel": Part("Top panel", f"{MECHANICS['panel']:g} mm plywood, MDF or acrylic, 190 x 190 mm",
                  "Screw-in buttons with a plastic nut (not snap-in ones: those clip onto 1.6 mm metal)."),
    "box": Part("Box under the panel", "wooden box or 9 mm plywood walls, inside depth from README, Mechanics",
                "Its inside depth comes from the layout (README, Mechanics)."),
    "disc": Part("Turntable disc", f"{MECHANICS['disc']:g} mm round, 9 mm plywood",
                 "Screwed to the bearing's top ring; the magnet in a recess at its centre."),
}


# --- the circuits ------------------------------------------------------------------------

PSU = {"pi3b+": "psu-microusb", "pi4": "psu-usbc-3a", "pi5": "psu-usbc-5a", "zero2w": "psu-microusb"}

@dataclass(frozen=True)
class Component:
    part: str            # key in PARTS
    per_copy: int        # how many in one copy of the circuit
    role: str            # what it does there


@dataclass(frozen=True)
class Circuit:
    key: str
    title: str
    # how many copies the choices and the pin map build (0 = not built)
    copies: Callable[[Mapping[str, object], Mapping[str, int]], int]
    components: Callable[[Mapping[str, object]], tuple[Component, ...]]
    # wiring table words for the GPIO signals this circuit owns: regex on the pin name -> text
    # ("{n}" is the name's number, "{size}" the button size)
    signals: dict[str, str] = field(default_factory=dict)


def _players(options, pins):
    return sum(1 for name in pins if re.fullmatch(r"P\d", name))


def _lamps(options, pins):
    return sum(1 for name in pins if re.fullmatch(r"LED\d", name))


def _one(options, pins):
    return 1


def _when(key, value):
    return lambda options, pins: int(options[key] == value)


def _host_buttons(options, pins):
    return sum(1 for name in ("YES", "NO", "MENU") if name in pins)


CIRCUITS: tuple[Circuit, ...] = (
    Circuit("pi", "The Raspberry Pi", _one, lambda o: (
        Component(f"pi-{o['pi']}", 1, "runs the daemon"),
        Component(PSU[str(o["pi"])], 1, "powers the Pi and everything on it"),
        Component("sd", 1, "the operating system and the game log"),
        Component("standoff-m25", 4, "hold the Pi off the box's base"),
        Component("screw-m25", 8, "fix the Pi to its standoffs and the standoffs to the base"),
    )),
    Circuit("protoboard", "The driver board", _one, lambda o: (
        Component("protoboard", 1, "carries the drivers, resistors and supply rails"),
        Component("standoff-m25", 4, "hold the driver board off the base"),
        Component("screw-m25", 8, "fix the driver board to its standoffs and them to the base"),
        Component("jumper-ff", 3, "Pi header to the driver board's rails: 5 V, 3.3 V, GND (one each)"),
        Component("pinheader", 1, "J1 and the module pins of J2 on the driver board"),
        Component("wire", 1, "the driver board's runs to the buttons and sensors"),
        Component("panel", 1, "carries the buttons, the OLED and the encoder"),
        Component("box", 1, "holds the Pi and the driver board under the panel"),
    )),
    Circuit("player", "Player button with a lit lamp (section 3, section 4 A)", _players, lambda o: (
        Component(f"button-lit-{o['button_mm']}", 1, "a player's buzzer"),
        Component("npn", 1, "switches a player's lamp from 5 V"),
        Component("r1k", 1, "base resistor of a lamp transistor"),
        Component("r10k", 1, "base pull-down of a lamp transistor (lamp dark while the Pi boots)"),
        Component("terminal", 4, "a lit button's COM, NO and two lamp tabs"),
        Component("jumper-ff", 2, "a player's button and lamp lines from the header"),
    ), {r"P(\d)": "Player {n} button: microswitch NO tab",
        r"LED(\d)": "Player {n} lamp driver: 1 kΩ to the NPN base, 10 kΩ base to GND"}),
    Circuit("host-buttons", "YES, NO and MENU (section 3)", _host_buttons, lambda o: (
        Component(f"button-{o['button_mm']}", 1, "YES, NO or MENU"),
        Component("terminal", 2, "a button's COM and NO tabs"),
        Component("jumper-ff", 1, "a button line from the header"),
    ), {r"YES|NO|MENU": "{name} button: microswitch NO tab"}),
    Circuit("display", "The OLED (section 5)", _one, lambda o: (
        Component(f"oled-{o['display']}", 1,
                  f"the screen, at I2C address 0x{o['display_address']:02X}"),
        Component("screw-m2", 4, "hold the OLED module behind its panel window"),
        Component("spacer-m2", 4, "keep the OLED module's parts clear of the panel"),
        Component("jumper-ff", 4, "OLED SDA and SCL from the header, VCC and GND from the board"),
    )),
    Circuit("encoder", "The rotary encoder (section 6)", _one, lambda o: (
        Component("ky040", 1, "menu navigation"),
        Component("knob", 1, "the encoder's knob"),
        Component("jumper-ff", 4, "encoder CLK and DT from the header, + and GND from the board"),
    ), {r"ENC_A": "KY-040 CLK", r"ENC_B": "KY-040 DT"}),
    Circuit("piezo-plain", "The piezo, plain (section 7)", _when("piezo", "plain"), lambda o: (
        Component("piezo", 1, "tones and tunes"),
        Component("r470", 1, "in series with the piezo: caps its charging current at 7 mA (3.3 V / 470 ohm)"),
        Component("jumper-ff", 1, "the piezo's line from the header"),
    ), {r"PIEZO": "Piezo + through 470 Ω"}),
    Circuit("piezo-louder", "The piezo, louder: on 5 V through an NPN (section 7)", _when("piezo", "louder"), lambda o: (
        Component("piezo", 1, "tones and tunes"),
        Component("npn", 1, "switches the piezo from 5 V"),
        Component("r1k", 1, "base resistor of the piezo transistor"),
        Component("r10k", 1, "base pull-down of the piezo transistor (silent while the Pi boots)"),
        Component("r1k", 1, "across the piezo: discharges it when the transistor turns off"),
        Component("1n4148", 1, "across the piezo, cathode to 5 V: clamps the collector's swing above 5 V"),
        Component("jumper-ff", 1, "the piezo driver's line from the header"),
    ), {r"PIEZO": "Piezo driver: 1 kΩ to the NPN base, 10 kΩ base to GND"}),
    Circuit("hall", "Two hall sensors (section 8)", _one, lambda o: (
        Component("drv5013", 2, "turntable channels A and B"),
        Component("c100n", 2, "decoupling at a hall sensor"),
    )),
    Circuit("hall-gpio", "Hall sensors on the Pi (section 8)", _when("hall", "gpio"), lambda o: (
        Component("r10k", 2, "pull-up of a hall sensor's output, to 3.3 V"),
        Component("jumper-ff", 2, "hall A and B lines from the header"),
    ), {r"HALL_(A|B)": "Hall sensor {n} OUT, and 10 kΩ to 3.3 V"}),
    Circuit("puck", "The wind puck (the wind puck)", _when("hall", "puck"), lambda o: (
        Component("pico", 1, "reads the hall sensors and reports counts over USB"),
        Component("usb-cable", 1, "the puck's power and data, to a USB port of the Pi"),
        *((Component("otg", 1, "the Zero 2 W's micro-USB data port to the puck's cable"),)
          if o["pi"] == "zero2w" else ()),
        Component("r10k", 2, "pull-up of a hall sensor's output, to the Pico's 3V3(OUT)"),
    )),
    Circuit("turntable", "The turntable (section 10)", _one, lambda o: (
        Component("magnet", 1, "turns with the turntable over the hall sensors"),
        Component("bearing", 1, "lets the turntable spin"),
        Component("disc", 1, "the turntable itself"),
    )),
)


# --- the parts list ----------------------------------------------------------------------

@dataclass(frozen=True)
class Line:
    key: str
    part: Part
    quantity: int
    roles: tuple[tuple[str, int], ...]     # (role, how many of the quantity) in circuit order


def built(options: Mapping[str, object], pins: Mapping[str, int]) -> list[tuple[Circuit, int, tuple[Component, ...]]]:
    """(circuit, copies, components) for every circuit the choices build."""
    out = []
    for circuit in CIRCUITS:
        copies = circuit.copies(options, pins)
        if copies:
            out.append((circuit, copies, circuit.components(options)))
    return out


def parts_list(options: Mapping[str, object], pins: Mapping[str, int]) -> list[Line]:
    """The sum of the built circuits' components, one line per part, in PARTS order."""
    totals: dict[str, list[tuple[str, int]]] = {}
    for circuit, copies, components in built(options, pins):
        for component in components:
            if component.part not in PARTS:
                raise KeyError(f"circuit {circuit.key}: unknown part {component.part!r}")
            count = component.per_copy * copies
            roles = totals.setdefault(component.part, [])
            roles.append((component.role, count))
    lines = []
    for key, part in PARTS.items():
        if key in totals:
            roles = _merge(totals[key])
            quantity = sum(n for _, n in roles)
            lines.append(Line(key, part, quantity, roles))
    return lines


def _merge(roles: list[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    merged: dict[str, int] = {}
    for role, count in roles:
        merged[role] = merged.get(role, 0) + count
    return tuple(merged.items())


def role_text(line: Line) -> str:
    if len(line.roles) == 1:
        return "; ".join(role for role, _ in line.roles)
    return "; ".join(f"{n}: {role}" for role, n in line.roles)


def signal_text(name: str, options: Mapping[str, object], pins: Mapping[str, int]) -> str | None:
    """The wiring table's words for a GPIO signal, from the built circuit that owns it."""
    for circuit, _, _ in built(options, pins):
        for pattern, text in circuit.signals.items():
            match = re.fullmatch(pattern, name)
            if match:
                n = match.group(1) if match.groups() else ""
                return text.format(n=n, name=name)
    return None
