"""`pi-companion doctor`: checks pins, display, puck, state directory and config, and says what to fix."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

Result = tuple[str, str]          # (ok | warn | fail, message)


def check_config(path: Path) -> tuple[Result, Any]:
    from .config import Config, ConfigError, load_config
    try:
        config = load_config(path)
    except ConfigError as err:
        return ("fail", f"{err} — fix that line"), Config()
    where = str(path) if path.exists() else f"{path} absent: using defaults"
    return ("ok", where), config


def check_pins(kind: str) -> Result:
    from gpiozero import Device
    try:
        if kind == "mock":
            from gpiozero.pins.mock import MockFactory
            Device.pin_factory = MockFactory()
        else:
            Device.ensure_pin_factory()
    except Exception as err:
        return ("fail", f"no GPIO pin factory ({type(err).__name__}): on a Pi install the [pi] "
                        "extra and set GPIOZERO_PIN_FACTORY=lgpio; on a PC use --pins mock")
    return ("ok", f"pin factory {type(Device.pin_factory).__name__}")


def check_pinmap(config: Any) -> Result:
    from .hw.pinmap import load_pinmap
    try:
        pins = load_pinmap(overrides=config.pins)
    except ValueError as err:
        return ("fail", f"pin map: {err}")
    return ("ok", f"pin map: {len(pins)} pins")


def check_display(config: Any) -> Result:
    if config.display in ("none", "dummy"):
        return ("ok", f"display driver {config.display}")
    bus = Path(f"/dev/i2c-{config.i2c_port}")
    if not bus.exists():
        return ("warn", f"no {bus}: enable I2C (sudo raspi-config nonint do_i2c 0, or "
                        "dtparam=i2c_arm=on in /boot/firmware/config.txt) and reboot; "
                        "the box plays on without a screen meanwhile")
    from .hw.display import open_device
    try:
        open_device("sh1106" if config.display == "sh1106" else "ssd1306",
                    config.i2c_port, config.i2c_address)
    except Exception as err:
        return ("warn", f"no OLED answered at {config.i2c_address:#04x} on {bus} ({err}): "
                        "check SDA/SCL/3V3/GND and the address (i2cdetect -y 1)")
    return ("ok", f"OLED at {config.i2c_address:#04x} on {bus}")


def check_puck(config: Any) -> Result:
    needed = config.wind_source == "puck"
    try:
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


def doctor(args: Any, out: Callable[[str], None] = print) -> int:
    config_result, config = check_config(Path(args.config))
    results = [("config", config_result), ("pins", check_pins(getattr(args, "pins", "auto"))),
               ("pin map", check_pinmap(config)), ("display", check_display(config)),
               ("puck", check_puck(config)), ("state", check_state_dir(config))]
    for name, (level, message) in results:
        out(f"{level.upper():4} {name:8} {message}")
    return 1 if any(level == "fail" for _, (level, _) in results) else 0
