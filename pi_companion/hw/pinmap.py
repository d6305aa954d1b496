"""The pin map: which BCM GPIO each named input and output is wired to, and the rules it obeys.

Standard library only: the docs generator (hardware/gen_docs.py) and the tests import it off a Pi.
"""
from __future__ import annotations

import tomllib
from collections import defaultdict
from pathlib import Path
from typing import Mapping

PLAYER_BUTTONS = tuple(f"P{i}" for i in range(1, 9))
PLAYER_LEDS = tuple(f"LED{i}" for i in range(1, 9))
NAMES = PLAYER_BUTTONS + PLAYER_LEDS + (
    "YES", "NO", "MENU", "ENC_A", "ENC_B", "PIEZO", "HALL_A", "HALL_B")

# BCM numbers wired to the 40-pin header; GPIO0/1 are the HAT ID EEPROM bus, never ours.
USABLE_GPIO = range(2, 28)
# Always taken by the OLED's I2C bus; a pin map file's [reserved] table may add more.
RESERVED = {"SDA": 2, "SCL": 3}
# The four GPIO with a hardware PWM channel on every supported Pi (3B+, 4, 5, Zero 2 W).
HARDWARE_PWM = frozenset({12, 13, 18, 19})
# Names driven by PWM (gpiozero TonalBuzzer), so they must sit on a hardware PWM pin.
NEEDS_PWM = frozenset({"PIEZO"})
# Names that make sense only together: (needs, needed) - an LED lights a button, an encoder
# and a turntable have two channels each.
PAIRS = tuple((led, button) for led, button in zip(PLAYER_LEDS, PLAYER_BUTTONS)) + (
    ("ENC_A", "ENC_B"), ("ENC_B", "ENC_A"), ("HALL_A", "HALL_B"), ("HALL_B", "HALL_A"))

# Physical header pin of each BCM GPIO (the same on every 40-pin Pi).
HEADER_PIN = {
    2: 3, 3: 5, 4: 7, 14: 8, 15: 10, 17: 11, 18: 12, 27: 13, 22: 15, 23: 16, 24: 18, 10: 19,
    9: 21, 25: 22, 11: 23, 8: 24, 7: 26, 0: 27, 1: 28, 5: 29, 6: 31, 12: 32, 13: 33, 19: 35,
    16: 36, 26: 37, 20: 38, 21: 40,
}


class PinMapError(ValueError):
    """A pin map that cannot be wired; `problems` holds one line per bad key."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("bad pin map: " + "; ".join(self.problems))


# The built-in maps, by the name a config's `box.pinmap` gives them.
BUILTIN = {"4players": "data/pinmap.toml", "8players": "data/pinmap-8players.toml"}
PACKAGE_DIR = Path(__file__).resolve().parent.parent
MAX_MAP_BYTES = 1 << 16


def default_pinmap_text(name: str = "4players") -> str:
    # A plain path beside the package (installed as files, never zipped): importlib.resources
    # would add its own imports, about 3 ms, to every daemon start before READY=1.
    return (PACKAGE_DIR / BUILTIN[name]).read_text(encoding="utf-8")


def _map_text(path: str | Path | None) -> str:
    if path is None or str(path) in BUILTIN:
        return default_pinmap_text(str(path or "4players"))
    try:
        with open(path, "rb") as file:
            raw = file.read(MAX_MAP_BYTES + 1)
    except OSError as err:
        raise PinMapError([f"cannot read {path}: {err.strerror or err}"]) from None
    except ValueError:                       # a NUL in the path
        raise PinMapError([f"cannot read {path!r}: not a file name"]) from None
    if len(raw) > MAX_MAP_BYTES:
        raise PinMapError([f"{path} is larger than {MAX_MAP_BYTES} bytes: not a pin map"])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise PinMapError([f"{path}: not UTF-8 text (byte {raw[err.start]:#04x} on line {line})"]) from None


def load_pinmap(path: str | Path | None = None, overrides: Mapping[str, int] | None = None) -> dict[str, int]:
    """Return {name: BCM pin} from `path`: None or a built-in name ("4players", "8players")
    or a pin map file; `overrides` (from the config's [pins]) replace single entries.

    The merged map is validated: PinMapError (a ValueError) names every bad key.
    """
    text = _map_text(path)
    key = (str(path), text, repr(sorted((overrides or {}).items())))
    known = _CHECKED.get(key)
    if known is not None:
        return dict(known)
    where = path or "default pin map"
    try:
        table = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError) as err:
        raise PinMapError([f"{where}: not a valid TOML pin map ({type(err).__name__})"]) from None
    if not isinstance(table.get("pins"), dict):
        raise PinMapError([f"{where} has no [pins] table"])
    reserved = table.get("reserved", {})
    if not isinstance(reserved, dict):
        raise PinMapError([f"{where}: [reserved] must be a table of name = BCM number"])
    pins = {**table["pins"], **(overrides or {})}
    problems = validate_pinmap(pins, reserved)
    if problems:
        raise PinMapError(problems)
    if len(_CHECKED) < 8:
        _CHECKED[key] = dict(pins)
    return pins


# Pin maps already parsed and found valid, by their text: the config check, the box's wiring
# and the key pad each ask for the same map before READY, and a parse is about a million
# instructions. The text is read every time, so an edited file is parsed again.
_CHECKED: dict[tuple[str, str, str], dict[str, int]] = {}


def validate_pinmap(pins: Mapping[str, object], reserved: Mapping[str, object] | None = None) -> list[str]:
    """Every problem with `pins`, one line each naming the key; empty when the map can be wired."""
    reserved = {**RESERVED, **(reserved or {})}
    problems = [f"reserved {name} = {pin!r}: must be a BCM GPIO number (an integer)"
                for name, pin in reserved.items() if type(pin) is not int]
    taken = {pin: name for name, pin in reserved.items() if type(pin) is int}
    problems += [p for name, pin in pins.items() for p in _entry_problems(name, pin, taken)]
    return problems + _duplicates(pins) + _missing_partners(pins)


def player_buttons(pins: Mapping[str, object]) -> list[str]:
    """The player buttons a map wires, in order (P1, P2, ...)."""
    return [name for name in PLAYER_BUTTONS if name in pins]


def _entry_problems(name: str, pin: object, taken: Mapping[object, str]) -> list[str]:
    problems = [] if name in NAMES else [f"{name}: unknown pin name (known: {', '.join(NAMES)})"]
    if type(pin) is not int:
        return problems + [f"{name} = {pin!r}: a pin must be a BCM GPIO number (an integer)"]
    if pin not in USABLE_GPIO:
        return problems + [f"{name} = {pin}: not a usable BCM GPIO (2..27){_header_hint(pin)}"]
    if pin in taken:
        problems.append(f"{name} = {pin}: GPIO{pin} is reserved for {taken[pin]}")
    if name in NEEDS_PWM and pin not in HARDWARE_PWM:
        problems.append(f"{name} = {pin}: needs a hardware PWM pin (GPIO12, 13, 18 or 19)")
    return problems


def _header_hint(pin: int) -> str:
    """A nudge for the common slip of writing a header pin number instead of a BCM number."""
    bcm = {header: gpio for gpio, header in HEADER_PIN.items()}.get(pin)
    return f"; header pin {pin} is GPIO{bcm}, write {bcm}" if bcm in USABLE_GPIO else ""


def _duplicates(pins: Mapping[str, object]) -> list[str]:
    users: dict[int, list[str]] = defaultdict(list)
    for name, pin in pins.items():
        if type(pin) is int:
            users[pin].append(name)
    return [f"{' and '.join(names)} = {pin}: GPIO{pin} is wired twice"
            for pin, names in users.items() if len(names) > 1]


def _missing_partners(pins: Mapping[str, object]) -> list[str]:
    return [f"{name}: has no {partner} (they go together)"
            for name, partner in PAIRS if name in pins and partner not in pins]
