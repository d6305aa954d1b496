"""`pi-companion doctor`: checks pins, display, puck, state directory and config, and says what to fix."""
from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, Callable

from gpiozero import Device
from gpiozero.exc import PinFactoryFallback
from gpiozero.pins.mock import MockFactory

from . import __version__
from .config import PINMAPS, Config, ConfigError, load_config_arg, read_toml
from .hub import board_url
from .hw.display import open_device
from .hw.pinmap import load_pinmap
from .hw.pwm_sysfs import find as find_pwm
from .systemd import update_result

Result = tuple[str, str]          # (ok | warn | fail, message)


def check_config(path: Path) -> tuple[Result, Any]:
    try:
        config = load_config_arg(str(path))
    except ConfigError as err:
        return ("fail", f"{err}{' — fix that line' if path.exists() else ''}"), Config()
    where = str(path) if path.exists() else f"{path} absent: using defaults"
    return ("ok", where), config


def is_pc(root: Path = Path("/")) -> bool:
    """No GPIO here: no GPIO character device and no Raspberry Pi model in the device tree."""
    if any((root / "dev").glob("gpiochip*")):
        return False
    return "Raspberry Pi" not in (board_model(root) or "")


def board_model(root: Path = Path("/")) -> str | None:
    """The device tree's model ("Raspberry Pi 5 Model B Rev 1.0"); None where there is none."""
    try:
        raw = (root / "proc/device-tree/model").read_bytes()
    except OSError:
        return None
    return raw.split(b"\0", 1)[0].decode("ascii", "replace").strip() or None


PC_PINS = ("this is a PC (no GPIO chip, no Raspberry Pi): there are no box pins to check. "
           "`--pins mock` runs the box on gpiozero's mock pins, wired to nothing (`simulate` "
           "always does, its keys are the buttons; `run --pins mock` is the daemon, headless)")
PC_STATE = ("the box's state directory, made by its systemd unit on the Pi; on a PC give "
            "`simulate` or `run` a --state-dir to keep a game log")
PC_DISPLAY = ("this is a PC: no I2C bus for the box's OLED here. `simulate` draws the OLED in "
              "the terminal; `run --display dummy` runs the daemon without one")


def check_pins(kind: str, edges: str = "kernel", root: Path = Path("/")) -> Result:
    """The pin factory the daemon would use (assemble's `make_factory`, the config's `edges`),
    in one row naming the board (the device tree's model under `root`) and the GPIO chip (path
    and label) when there are: gpiozero's PinFactoryFallback warnings (one multi-line warning
    per backend it tried) are caught and summed up here."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if kind == "mock":
                Device.pin_factory = MockFactory()
            else:
                from .assemble import make_factory
                make_factory(kind, edges)
        except OSError as err:          # the chip itself (busy, permission): its one line
            return ("fail", f"{err.strerror or err}: the daemon could not open its GPIO lines")
        except Exception as err:
            tried = _fallbacks(caught)
            return ("fail", f"no GPIO pin factory ({type(err).__name__}{'; tried ' + tried if tried else ''}): "
                            "on a Pi install the [pi] extra and set GPIOZERO_PIN_FACTORY=lgpio; "
                            "on a PC use --pins mock")
    tried = _fallbacks(caught)
    chip = getattr(Device.pin_factory, "chip_path", None)
    label = getattr(Device.pin_factory, "chip_label", None)
    board = board_model(root)
    return ("ok", f"pin factory {type(Device.pin_factory).__name__}"
                  + (f" on {chip}" + (f' "{label}"' if label else "")
                     + " (every pin a line request of the kernel's GPIO character device, "
                     "edges from its line events)" if chip else "")
                  + (f" (after falling back from {tried})" if tried else "")
                  + (f"; board: {board}" if board else ""))


def _fallbacks(caught: list[Any]) -> str:
    """'lgpio: No module named ...; native: ...' from gpiozero's fallback warnings."""
    return "; ".join(str(w.message).removeprefix("Falling back from ").splitlines()[0]
                     for w in caught if issubclass(w.category, PinFactoryFallback))


def check_pinmap(path: Path, config: Any, config_ok: bool) -> Result:
    """The pin map and which players have a button on it. When the config was rejected, its
    players, pinmap and [pins] are read without the other checks, to name every player
    without a button."""
    players, pinmap, overrides = config.players, config.pinmap, config.pins
    if not config_ok:
        try:
            data = read_toml(path) or {}
        except ConfigError:
            data = {}
        box = data.get("box") if isinstance(data.get("box"), dict) else {}
        if isinstance(box.get("players"), list) and all(isinstance(p, str) for p in box["players"]):
            players = tuple(box["players"])
        if isinstance(box.get("pinmap"), str):
            pinmap = box["pinmap"]
        if isinstance(data.get("pins"), dict):
            overrides = data["pins"]
    if pinmap not in PINMAPS and not pinmap.startswith("/"):
        pinmap = Config.pinmap
    try:
        pins = load_pinmap(pinmap, overrides=overrides)
    except ValueError as err:
        return ("fail", f"{pinmap}: {err}")
    missing = [f"{name} (P{i})" for i, name in enumerate(players, start=1) if f"P{i}" not in pins]
    if missing:
        return ("fail", f"{pinmap}: no button for {', '.join(missing)}: set box.pinmap = "
                        '"8players" if P5-P8 are wired, or add them to [pins]')
    return ("ok", f"{pinmap}: {len(pins)} pins; buttons P1-P{len(players)} for "
                  f"{', '.join(players)}")


def check_display(config: Any) -> Result:
    if config.display in ("none", "dummy"):
        return ("ok", f"display driver {config.display}")
    bus = Path(f"/dev/i2c-{config.i2c_port}")
    if not bus.exists():
        return ("warn", f"no {bus}: enable I2C (sudo raspi-config nonint do_i2c 0, or "
                        "dtparam=i2c_arm=on in /boot/firmware/config.txt) and reboot; "
                        "the box plays on without a screen meanwhile")
    try:
        open_device("sh1106" if config.display == "sh1106" else "ssd1306",
                    config.i2c_port, config.i2c_address)
    except Exception as err:
        return ("warn", f"no OLED answered at {config.i2c_address:#04x} on {bus} ({err}): "
                        "check SDA/SCL/3V3/GND and the address (i2cdetect -y 1)")
    return ("ok", f"OLED at {config.i2c_address:#04x} on {bus}")


I2C_DEFAULT_HZ = 100_000
BOOT_CONFIGS = ("boot/firmware/config.txt", "boot/config.txt")   # Bookworm's place, then the older one


def parse_baudrate(text: str) -> int | None:
    """The I2C bus speed a Raspberry Pi config.txt asks for (`dtparam=i2c_arm_baudrate=N`, or
    its alias `i2c_baudrate`, alone or among other comma-separated parameters); the last one
    wins, as the firmware reads the file top to bottom. None if it sets none (or no number)."""
    rate: int | None = None
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        key, eq, value = line.partition("=")
        if not eq or key.strip() != "dtparam":
            continue
        for param in value.split(","):
            name, eq, number = param.strip().partition("=")
            if eq and name.strip() in ("i2c_arm_baudrate", "i2c_baudrate"):
                number = number.strip()
                if number.isascii() and number.isdigit():
                    rate = int(number)
    return rate


def i2c_speed(port: int, root: Path = Path("/")) -> tuple[int, str] | None:
    """The bus speed in Hz and where it was read: the running kernel's device tree (the
    adapter's `clock-frequency`, a big-endian 32-bit number, under /sys or, by the `i2cN`
    alias, under /proc/device-tree; a node without one runs at the driver's 100 kHz default),
    else the boot config.txt's dtparam (which sets bus 1, the pins' I2C); None if neither says."""
    for node in _i2c_nodes(port, root):
        prop = node / "clock-frequency"
        try:
            raw = prop.read_bytes()
        except OSError:
            if node.is_dir():
                return I2C_DEFAULT_HZ, f"{node} has no clock-frequency: the driver's default"
            continue
        if len(raw) == 4:
            return int.from_bytes(raw, "big"), str(prop)
    if port != 1:
        return None
    for name in BOOT_CONFIGS:
        path = root / name
        try:
            rate = parse_baudrate(path.read_text(errors="replace"))
        except OSError:
            continue
        return (rate if rate is not None else I2C_DEFAULT_HZ), str(path)
    return None


def _i2c_nodes(port: int, root: Path) -> list[Path]:
    """The adapter's device-tree node as sysfs links it, then as /proc/device-tree's alias
    `i2cN` names it (a NUL-terminated path)."""
    nodes = [root / f"sys/class/i2c-adapter/i2c-{port}/of_node"]
    try:
        alias = (root / f"proc/device-tree/aliases/i2c{port}").read_bytes().split(b"\0", 1)[0]
    except OSError:
        alias = b""
    if alias.startswith(b"/"):
        nodes.append(root / "proc/device-tree" / alias.decode("ascii", "replace").lstrip("/"))
    return nodes


def check_i2c_speed(config: Any, root: Path = Path("/")) -> Result:
    """A 100 kHz bus (the Pi's default) makes every OLED frame 4x longer than at 400 kHz: a
    whole frame takes about 93 ms instead of 23 ms, and the screen lags the game. The speed
    the kernel runs is read back, and a config.txt asking for more than that is named: its
    dtparam did not reach the device tree the kernel booted."""
    if config.display in ("none", "dummy"):
        return ("ok", f"display driver {config.display}: no I2C bus used")
    found = i2c_speed(config.i2c_port, root)
    if found is None:
        return ("ok", f"i2c-{config.i2c_port} speed not known here (no device tree, no config.txt)")
    hz, where = found
    asked = None
    if config.i2c_port == 1 and not where.endswith("config.txt"):
        for name in BOOT_CONFIGS:
            try:
                asked = parse_baudrate((root / name).read_text(errors="replace"))
            except OSError:
                continue
            break
    if hz <= I2C_DEFAULT_HZ:
        if asked and asked > hz:
            return ("warn", f"i2c-{config.i2c_port} runs at {hz // 1000} kHz ({where}) although config.txt "
                            f"asks for {asked // 1000} kHz: its dtparam did not reach the device tree this "
                            "kernel booted (reboot after editing; a device tree without the Raspberry Pi "
                            "overrides ignores it), so every OLED frame takes 4x as long (~93 ms)")
        return ("warn", f"i2c-{config.i2c_port} runs at {hz // 1000} kHz ({where}): every OLED frame "
                        "takes 4x as long as at 400 kHz (a whole frame ~93 ms); add "
                        "dtparam=i2c_arm_baudrate=400000 to /boot/firmware/config.txt and reboot")
    return ("ok", f"i2c-{config.i2c_port} at {hz // 1000} kHz ({where})")


def check_piezo(config: Any, root: Path = Path("/")) -> Result:
    """How the piezo's tones are made: the hardware PWM channel routed to its pin (read under
    `root`/sys), or the software PWM and what would route it (the daemon chooses the same way
    at start, and falls back as well if the channel does not export)."""
    try:
        gpio = load_pinmap(config.pinmap, overrides=config.pins).get("PIEZO")
    except ValueError as err:
        return ("warn", f"no pin map to find the piezo in: {err}")
    if gpio is None:
        return ("ok", "no piezo in the pin map")
    route, why = find_pwm(gpio, root / "sys")
    if route is not None:
        return ("ok", f"hardware PWM {route.name} on GPIO{gpio}")
    return ("warn", f"software PWM (a thread toggling GPIO{gpio}): {why}")


def check_puck(config: Any) -> Result:
    needed = config.wind_source == "puck"
    try:                       # optional: a build without pyserial has no puck link
        from .link.serial_port import discover
    except ImportError:
        return ("warn", "puck link not in this build")
    port = discover(config.puck_port or None)
    if port:
        return ("ok", f"wind puck on {port}")
    what = "no wind puck found: plug it in (USB), or set wind.puck_port"
    return ("fail" if needed else "ok", what if needed else "no wind puck (not needed: wind.source = gpio)")


def check_state_dir(config: Any) -> Result:
    path = Path(config.state_dir)
    if not path.is_dir():
        return ("fail", f"state directory {path} missing: sudo install -d -o pi-companion {path} "
                        "(the systemd unit's StateDirectory= makes it)")
    if not os.access(path, os.W_OK):
        return ("fail", f"state directory {path} is not writable by this user")
    return ("ok", f"state directory {path} writable")


def check_web(config: Any) -> Result:
    if not config.web_enabled:
        return ("ok", "big screen off ([web] enabled = false)")
    return ("ok", f"big screen at {board_url(config.web_port)} (same Wi-Fi; "
                  "systemctl status pi-companion-web)")


def version_row() -> Result:
    """The version running, the interpreter and where it is installed (a venv's prefix)."""
    import platform
    import sys
    return ("ok", f"pi-companion {__version__}, Python {platform.python_version()} in {sys.prefix}")


def doctor(args: Any, out: Callable[[str], None] = print, pc: bool | None = None,
           root: Path = Path("/")) -> int:
    """Print one row per check; 1 if something asked for is broken. On a PC (`pc`, else found
    out) the pins and the default state directory of a box are not asked for: unless --pins
    or a config says otherwise, they get an INFO row saying so instead of a FAIL. `root`: where
    /sys, /boot and the pins row's /proc/device-tree are read from (a test's fake tree)."""
    pc = is_pc() if pc is None else pc
    config_result, config = check_config(Path(args.config))
    asked_pins = getattr(args, "pins", None)
    if pc and asked_pins is None and not os.environ.get("GPIOZERO_PIN_FACTORY"):
        pins = ("info", PC_PINS)
    else:
        pins = check_pins(asked_pins or "auto", config.edges, root)
    state = check_state_dir(config)
    from .config import Config
    if pc and state[0] == "fail" and not Path(args.config).exists() and config.state_dir == Config.state_dir:
        state = ("info", f"{config.state_dir} absent: {PC_STATE}")
    display = check_display(config)
    if pc and display[0] == "warn" and not Path(args.config).exists() \
            and not Path(f"/dev/i2c-{config.i2c_port}").exists():
        display = ("info", PC_DISPLAY)      # no bus on a PC is no fault: the Pi's advice would mislead
    piezo = check_piezo(config, root)
    if pc and asked_pins is None and piezo[0] == "warn":
        piezo = ("info", piezo[1])          # a PC has no PWM to route: nothing to fix here
    update = update_result(config.state_dir)
    results = [("version", version_row()), ("config", config_result), ("pins", pins),
               ("pin map", check_pinmap(Path(args.config), config, config_result[0] == "ok")),
               ("display", display), ("i2c", check_i2c_speed(config, root)),
               ("piezo", piezo),
               ("puck", check_puck(config)), ("state", state), ("web", check_web(config))]
    if update is not None:      # the last package from the card (systemd/pi-companion-update)
        results.insert(1, ("update", ("ok" if update.startswith("updated") else "warn", update)))
    for name, (level, message) in results:
        out(f"{level.upper():4} {name:8} {message}")
    return 1 if any(level == "fail" for _, (level, _) in results) else 0
