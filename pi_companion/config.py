"""The config file (TOML): every key checked at start; a bad one is one line naming it (exit 78)."""
from __future__ import annotations

import gc
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from collections.abc import Callable
from typing import Any

from .core.game import players_problem
from .core.names import name_problem
from .core.colours import DEFAULT_COLOURS, NAMED_COLOURS
from .core.tunes import DEFAULT_TUNES, parse_tune
from .games import registry
from .games.base import OptionError
from .hw.pinmap import NAMES, PinMapError, load_pinmap, player_buttons

DEFAULT_CONFIG = Path("/etc/pi-companion/config.toml")
DEFAULT_PLAYERS = ("Red", "Blue", "Green", "Yellow")
LOG_LEVELS = ("debug", "info", "warning", "error")
PINMAPS = ("4players", "8players")
# How a Pi's pins are driven: "kernel" (every pin a line request of the GPIO character device,
# edges from its line events read by one thread waiting without a timeout, tones from a thread
# that runs only while one plays: hw/kernel_pins.py) or "lgpio" (gpiozero's lgpio factory, whose
# threads wake 50 times a second, and every 0.5 ms while any edge is watched).
EDGE_SOURCES = ("kernel", "lgpio")     # the built-in pin maps; anything else is a file path
MAX_CONFIG_BYTES = 1 << 20             # a config is a page of text; more is not a config


class ConfigError(ValueError):
    """A bad config: the message names the key and the problem, on one line (control
    characters from the file, such as a newline in a quoted key, are shown escaped)."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


def one_line(text: str) -> str:
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii")
                   for c in text)


@dataclass(frozen=True)
class Config:
    """The box's settings: the config file's, with the command line's over them. (Every
    dataclass on the way to READY has a docstring: without one, `dataclass` builds one from the
    class's signature, about 1.6 million instructions for this class alone.)"""
    game: str = "grab-bag"
    players: tuple[str, ...] = DEFAULT_PLAYERS
    seed: int | None = None
    log_level: str = "info"
    state_dir: str = "/var/lib/pi-companion"
    pinmap: str = "4players"
    history: int = 20
    debounce_ms: float = 5.0
    edges: str = "kernel"                       # where a Pi's input edges come from (EDGE_SOURCES)
    display: str = "auto"
    i2c_port: int = 1
    i2c_address: int = 0x3C
    rotate: int = 0
    sound: bool = True
    tunes: tuple[str, ...] = DEFAULT_TUNES      # each player's buzz tune, P1 first
    colours: tuple[str, ...] = DEFAULT_COLOURS  # each player button's colour (#rrggbb), P1 first
    wind_source: str = "gpio"
    puck_port: str = ""
    pins: dict[str, int] = field(default_factory=dict)
    games: dict[str, dict[str, Any]] = field(default_factory=dict)
    web_enabled: bool = False
    web_port: int = 8080
    web_hosts: tuple[str, ...] = ()

    def options_for(self, game: str) -> dict[str, Any]:
        return dict(self.games.get(game, {}))

    def with_game(self, game: str) -> "Config":
        return replace(self, game=game)

    def pin_map(self) -> dict[str, int]:
        """{name: BCM pin}: the chosen pin map with this config's [pins] over it."""
        return load_pinmap(self.pinmap, overrides=self.pins)


# section -> key -> (field, checker)
def _int(lo: int, hi: int):  # type: ignore[no-untyped-def]
    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise ValueError(f"must be an integer from {lo} to {hi}")
        return v
    return check


def _num(lo: float, hi: float):  # type: ignore[no-untyped-def]
    def check(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
            raise ValueError(f"must be a number from {lo:g} to {hi:g}")
        return float(v)
    return check


def _choice(*choices: str):  # type: ignore[no-untyped-def]
    def check(v: Any) -> str:
        if v not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return str(v)
    return check


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError("must be a string")
    return v


def _text(v: Any) -> str:
    """A name or a path: no control characters (a NUL cannot be in a path or on the OLED)."""
    v = _str(v)
    bad = next((c for c in v if ord(c) < 0x20 or ord(c) == 0x7F), None)
    if bad is not None:
        raise ValueError(f"must not contain control characters (found U+{ord(bad):04X})")
    return v


def _path(v: Any) -> str:
    if not _text(v):
        raise ValueError("must not be empty")
    return v


def _pinmap(v: Any) -> str:
    v = _text(v)
    if v in PINMAPS:
        return v
    what = f"must be {', '.join(PINMAPS)} or the absolute path of a pin map file"
    if not v.startswith("/"):
        raise ValueError(what)
    try:
        load_pinmap(v)
    except PinMapError as err:
        raise ValueError(f"{what}: {'; '.join(err.problems)}") from None
    return v


# The SSD1306's two I2C addresses (datasheet: 0111100 or 0111101, chosen by its SA0 pin, which
# modules bring out as an address jumper or resistor, often printed 0x78 / 0x7A: shifted by 1).
OLED_ADDRESSES = (0x3C, 0x3D)


def _oled_address(v: Any) -> int:
    if isinstance(v, int) and not isinstance(v, bool) and v in OLED_ADDRESSES:
        return v
    if isinstance(v, int) and not isinstance(v, bool) and v in (0x78, 0x7A):
        raise ValueError(f"{v:#04x} is the 8-bit form printed on some boards: write {v >> 1:#04x}")
    raise ValueError("must be 0x3C or 0x3D (an SSD1306 answers at one of the two, set by its "
                     "address jumper; i2cdetect -y 1 shows which)")


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError("must be true or false")
    return v


def _players(v: Any) -> tuple[str, ...]:
    if (not isinstance(v, list) or not 2 <= len(v) <= 8
            or not all(isinstance(p, str) and p.strip() for p in v)):
        raise ValueError("must be a list of 2 to 8 non-empty names")
    for i, p in enumerate(v, start=1):
        problem = name_problem(p)
        if problem is not None:
            raise ValueError(f"player {i}: {problem}")
    if len(set(v)) != len(v):
        raise ValueError("names must be unique")
    return tuple(v)


def _per_button(value: Any, defaults: tuple[str, ...], example: str,
                each: Callable[[Any], str]) -> tuple[str, ...]:
    """A table { P1 = ..., P3 = ... } over `defaults` (P1 first): each value through `each`
    (ValueError: why, said after its key); buttons not named keep their default."""
    if not isinstance(value, dict):
        raise ValueError(f"must be a table like {example}")
    out = list(defaults)
    for key, item in value.items():
        if key not in [f"P{i}" for i in range(1, 9)]:
            raise ValueError(f"{key}: must be P1 to P8")
        try:
            out[int(key[1:]) - 1] = each(item)
        except ValueError as err:
            raise ValueError(f"{key}: {err}") from None
    return tuple(out)


def _colour(text: Any) -> str:
    named = NAMED_COLOURS.get(text.lower()) if isinstance(text, str) else None
    if named is None and not (isinstance(text, str) and len(text) == 7 and text[0] == "#"
                              and all(c in "0123456789abcdefABCDEF" for c in text[1:])):
        raise ValueError(f"must be #rrggbb or one of {', '.join(NAMED_COLOURS)}")
    return named or text.lower()


def _colours(value: Any) -> tuple[str, ...]:
    """[box] colours = { P1 = "red", P5 = "#ff8800" }: the buttons' colours, for the big
    screen's badges (players not named keep the default order red, blue, green, yellow, ...)."""
    return _per_button(value, DEFAULT_COLOURS, '{ P1 = "red", P2 = "#3e8ef7" }', _colour)


def _tune(text: Any) -> str:
    if not isinstance(text, str):
        raise ValueError('must be a string of notes like "C5 E5"')
    parse_tune(text)
    return text


def _tunes(value: Any) -> tuple[str, ...]:
    """[sound] tunes = { P1 = "C5 E5", P3 = "G4 G5" }: players not named keep their default."""
    return _per_button(value, DEFAULT_TUNES, '{ P1 = "C5 E5", P2 = "E5 C5" }', _tune)


def _game(v: Any) -> str:
    return str(_choice(*registry.GAMES)(v))       # the list as it is now, not at import


def _hosts(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(h, str) and h and h.strip() == h
                                          and "/" not in h for h in v):
        raise ValueError("must be a list of host names or addresses")
    return tuple(h.lower() for h in v)


SCHEMA: dict[str, dict[str, tuple[str, Any]]] = {
    "box": {
        "game": ("game", _game),
        "players": ("players", _players),
        "seed": ("seed", _int(0, 2**63 - 1)),
        "log_level": ("log_level", _choice(*LOG_LEVELS)),
        "state_dir": ("state_dir", _path),
        "history": ("history", _int(0, 1000)),
        "pinmap": ("pinmap", _pinmap),
        "colours": ("colours", _colours),
    },
    "input": {"debounce_ms": ("debounce_ms", _num(5, 50)), "edges": ("edges", _choice(*EDGE_SOURCES))},
    "display": {
        "driver": ("display", _choice("auto", "ssd1306", "sh1106", "dummy", "none")),
        "i2c_port": ("i2c_port", _int(0, 20)),
        "i2c_address": ("i2c_address", _oled_address),
        "rotate": ("rotate", _int(0, 3)),
    },
    "sound": {"enabled": ("sound", _bool), "tunes": ("tunes", _tunes)},
    "wind": {
        "source": ("wind_source", _choice("gpio", "puck")),
        "puck_port": ("puck_port", _text),
    },
    "web": {
        "enabled": ("web_enabled", _bool),
        "port": ("web_port", _int(1024, 65535)),
        "hosts": ("web_hosts", _hosts),
    },
}


def parse_config(data: dict[str, Any], source: str = "config") -> Config:
    values: dict[str, Any] = {}
    for section, body in data.items():
        if section == "pins":
            values["pins"] = _pins(body, source)
            continue
        if section == "games":
            continue
        if section not in SCHEMA:
            raise ConfigError(f"{source}: [{section}]: unknown section "
                              f"(known: {', '.join([*SCHEMA, 'pins', 'games'])})")
        if not isinstance(body, dict):
            raise ConfigError(f"{source}: {section}: must be a table")
        for key, value in body.items():
            if key not in SCHEMA[section]:
                raise ConfigError(f"{source}: {section}.{key}: unknown key "
                                  f"(known: {', '.join(SCHEMA[section])})")
            name, check = SCHEMA[section][key]
            try:
                values[name] = check(value)
            except ValueError as err:
                raise ConfigError(f"{source}: {section}.{key}: {err}") from None
    config = Config(**values)
    check_buttons(config, source)
    config = replace(config, games=_games(data.get("games", {}), config.players, source))
    check_game(config, source)
    return config


def check_game(config: Config, source: str = "") -> None:
    """The game the box starts with takes this many players and these options."""
    at = f"{source}: " if source else ""
    try:
        rules = registry.get(config.game)
    except ImportError:
        raise ConfigError(f"{at}box.game: {config.game} is not available in this build") from None
    problem = players_problem(rules, len(config.players))
    if problem is not None:
        raise ConfigError(f"{at}box.players: {problem}, the config names {len(config.players)}")
    try:
        rules.new_game(config.players, config.options_for(config.game), 0)
    except OptionError as err:
        raise ConfigError(f"{at}games.{config.game}.{str(err).removeprefix('options.')}") from None


def check_buttons(config: Config, source: str = "config", key: str = "box.players") -> dict[str, int]:
    """The config's pin map, checked; every player must have a button on it (else ConfigError
    naming the first player without one)."""
    try:
        pins = config.pin_map()
    except ValueError as err:
        raise ConfigError(f"{source}: pins: {err}") from None
    wired = player_buttons(pins)
    for i, name in enumerate(config.players, start=1):
        if f"P{i}" not in pins:
            have = f"P1-P{len(wired)}" if wired == [f"P{j}" for j in range(1, len(wired) + 1)] \
                else ", ".join(wired) or "no player buttons"
            hint = ('set box.pinmap = "8players" if P5-P8 are wired, or '
                    if config.pinmap == "4players" and i <= 8 else "")
            raise ConfigError(f"{source}: {key}: {name!r} (player {i}) has no button: "
                              f"pin map {config.pinmap} wires {have}; {hint}add P{i} to [pins]")
    return pins


def _pins(body: Any, source: str) -> dict[str, int]:
    if not isinstance(body, dict):
        raise ConfigError(f"{source}: pins: must be a table of name = BCM number")
    for key, value in body.items():
        if key not in NAMES:
            raise ConfigError(f"{source}: pins.{key}: unknown pin name")
        if isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= 27:
            raise ConfigError(f"{source}: pins.{key}: must be a BCM GPIO number from 2 to 27")
    return dict(body)


def _games(body: Any, players: tuple[str, ...], source: str) -> dict[str, dict[str, Any]]:
    if not isinstance(body, dict):
        raise ConfigError(f"{source}: games: must be a table of per-game option tables")
    out: dict[str, dict[str, Any]] = {}
    for name, options in body.items():
        if name not in registry.GAMES:
            raise ConfigError(f"{source}: games.{name}: unknown game (known: {', '.join(registry.GAMES)})")
        if not isinstance(options, dict):
            raise ConfigError(f"{source}: games.{name}: must be a table of options")
        try:
            rules = registry.get(name)
        except ImportError:
            out[name] = dict(options)
            continue
        try:
            if players_problem(rules, len(players)) is None:
                rules.new_game(players, options, 0)
            else:
                rules.new_game(tuple(f"p{i}" for i in range(rules.min_players)), options, 0)
        except OptionError as err:
            raise ConfigError(f"{source}: games.{name}.{str(err).removeprefix('options.')}") from None
        out[name] = dict(options)
    return out


def load_config(path: Path, must_exist: bool = False) -> Config:
    """Read and check `path`; an absent file means all defaults (unless `must_exist`).

    Whatever the file holds, the result is a Config or one ConfigError line: never another
    exception (bytes that are not UTF-8, nesting too deep, numbers too long, ...)."""
    data = read_toml(path, must_exist)
    return Config() if data is None else parse_config(data, str(path))


def read_toml(path: Path, must_exist: bool = False) -> dict[str, Any] | None:
    """The file's TOML table, unchecked; None if it is absent (and may be)."""
    try:
        with open(path, "rb") as file:
            raw = file.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        if must_exist:
            raise ConfigError(f"{path}: no such file (only the default config may be absent)") from None
        return None
    except OSError as err:
        raise ConfigError(f"{path}: cannot read: {err.strerror or err}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes: not a config file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 (byte {raw[err.start]:#04x} at {where_in(raw, err.start)}): "
                          "save the file as UTF-8") from None
    # No garbage collection inside the parse: a config nested too deeply meets the interpreter's
    # recursion limit down there, and a collection at that depth would run whatever finalizers
    # the process has pending with no stack left (each an unraisable RecursionError).
    collecting = gc.isenabled()
    gc.disable()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML here: arrays or tables nested too deeply") from None
    except ValueError as err:               # an integer of more than 4300 digits
        why = ("an integer has more than 4300 digits" if "integer string conversion" in str(err)
               else str(err))
        raise ConfigError(f"{path}: not valid TOML here: {why}") from None
    finally:
        if collecting:
            gc.enable()
    return data


def where_in(raw: bytes, offset: int) -> str:
    line = raw.count(b"\n", 0, offset) + 1
    column = offset - raw.rfind(b"\n", 0, offset)
    return f"line {line} column {column}"


def load_config_arg(path: str) -> Config:
    """The config named on the command line: only the default path may be absent."""
    return load_config(Path(path), must_exist=Path(path) != DEFAULT_CONFIG)


def template_text() -> str:
    from importlib import resources          # only here: its imports would slow every start
    return resources.files(__package__).joinpath("data/config-template.toml").read_text()
