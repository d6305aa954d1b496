"""The box's own Wi-Fi hotspot, as the SD image's NetworkManager dispatcher writes it.

While the hotspot is up the dispatcher (root) keeps `HOTSPOT_PATH`: `{"ssid", "password",
"address"}`; when it goes down the file is gone. The file is read whole, at most `HOTSPOT_MAX`
bytes, and taken only if every field is what the dispatcher writes.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..core.frozen import lazy_frozen
from .addresses import address_url
from .protocol import CommandError

HOTSPOT_PATH = "/run/pi-companion-net/hotspot.json"
HOTSPOT_MAX = 1024


@lazy_frozen
class Hotspot:
    """The box's own Wi-Fi network while it is up: what a phone needs to join it."""
    ssid: str
    password: str
    address: str = ""              # the box's IP address on it ("" if not said)


def read_hotspot(path: str | Path) -> Hotspot | None:
    """The hotspot file: None when there is none (the hotspot is down, or this is no image);
    ValueError with a one-line reason when it is not what the dispatcher writes."""
    try:
        with open(path, "rb") as f:
            raw = f.read(HOTSPOT_MAX + 1)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ValueError(f"cannot read it ({err.strerror})") from None
    if len(raw) > HOTSPOT_MAX:
        raise ValueError(f"longer than {HOTSPOT_MAX} bytes")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ValueError("not JSON") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    ssid, password, address = data.get("ssid"), data.get("password"), data.get("address", "")
    if not isinstance(ssid, str) or not 1 <= len(ssid.encode()) <= 32 or not ssid.isprintable():
        raise ValueError("ssid: 1 to 32 bytes of printable text")
    if not isinstance(password, str) or not (8 <= len(password) <= 63 and password.isascii()
                                             and password.isprintable()):
        raise ValueError("password: 8 to 63 printable ASCII characters")
    if not isinstance(address, str):
        raise ValueError("address: one IP address")
    if address:
        try:
            address_url("http://x/", address)
        except CommandError as err:
            raise ValueError(str(err)) from None
    return Hotspot(ssid, password, address)
