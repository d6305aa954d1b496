"""Input events as flat JSON-able records (the game log's lines; button records read like replay events).

Times are logged to the microsecond (`TIME_DIGITS`). The live box rounds every time to that
precision with `quantize` *before* the engine sees it, so the engine decides on exactly the
values the log holds and folding the log again reaches the same state, bit for bit.
"""
from __future__ import annotations

import json
from typing import Any

from .events import (Edge, EncoderLevel, HallCounts, HallLevel, HostCommand, HotspotState, InputEvent,
                     Pending, PuckStatus, Resume, Turn)

Record = dict[str, Any]
TIME_DIGITS = 6
PENDING_MAX_S = 1.0     # a `pending` record's wait beyond this is damage, not a late edge
TIME_MAX_S = 1e9        # a logged time beyond +-this (31 years; NaN, infinity) is damage, not a
                        # time: past 2**53 us (9e9 s) microseconds are no longer exact, and a
                        # clock that far out absorbs a settle window (every press a tie)


_last_quantized = 0.0   # the value `quantize` returned last


def quantize(t: float) -> float:
    """`t` at the log's precision (idempotent: a logged time reads back as the same float).

    `round(t, 6)` converts to decimal and back (about 3 000 machine instructions), and the live
    box quantizes most times twice: an input's time, then the same time as it is logged (or an
    `advance` record at a wake-up's time). Quantizing is idempotent for every float (below 2**33
    a quantized time is within half a float step, under 1e-7, of its six-place decimal; above,
    the step exceeds 1e-6 and round returns `t` itself), so the time returned last comes back
    as it is. A plain memo: any thread may call this; every value it holds is one `round` made."""
    global _last_quantized
    if t == _last_quantized:          # (never true for NaN; +0.0 and -0.0 are each their own round)
        return t
    q = _last_quantized = round(t, TIME_DIGITS)
    return q


def to_record(event: InputEvent) -> Record:
    t = quantize(event.t)
    if isinstance(event, Edge):
        return {"t": t, "press" if event.pressed else "release": event.button}
    if isinstance(event, Turn):
        return {"t": t, "turn": event.delta}
    if isinstance(event, HallLevel):
        return {"t": t, "hall": event.sensor, "level": event.level}
    if isinstance(event, EncoderLevel):
        return {"t": t, "encoder": event.sensor, "level": event.level}
    if isinstance(event, HallCounts):
        return {"t": t, "puck": "counts", "boot": event.boot_id, "net": event.net, "invalid": event.invalid}
    if isinstance(event, PuckStatus):
        return {"t": t, "puck": "status", "connected": event.connected, "boot": event.boot_id}
    if isinstance(event, Resume):
        resume: Record = {"t": t, "resume": 1}
        if event.held:
            resume["held"] = list(event.held)
        if event.hall is not None:          # written only when a decoder must change
            resume["hall"] = list(event.hall)
        if event.encoder is not None:
            resume["encoder"] = list(event.encoder)
        return resume
    if isinstance(event, Pending):
        return {"t": t, "pending": list(event.buttons), "until": quantize(event.until)}
    if isinstance(event, HostCommand):
        return {"t": t, "host": event.command, **host_fields(event)}
    if isinstance(event, HotspotState):
        return {"t": t, "hotspot": {"ssid": event.ssid, "address": event.address} if event.ssid else None}
    raise TypeError(f"not an input event: {event!r}")


def advance_record(t: float) -> Record:
    """The loop woke for a timer at `t`: resume must fire the same timers at the same time."""
    return {"t": quantize(t), "advance": 1}


def _levels(rec: Record, key: str) -> tuple[int, int] | None:
    """A `resume` record's (A, B) pin levels under `key` (None: not given): two of 0 or 1."""
    if key not in rec:
        return None
    levels = rec[key]
    if not isinstance(levels, list) or len(levels) != 2 \
            or not all(type(v) is int and v in (0, 1) for v in levels):
        raise ValueError(f"bad {key} levels in {rec!r}"[:120])
    return levels[0], levels[1]


def from_record(rec: Record) -> InputEvent | float:
    """The event a record holds, or the time of an `advance` record. KeyError/ValueError if bad."""
    t = float(rec["t"])
    if not -TIME_MAX_S <= t <= TIME_MAX_S:            # (False for NaN too)
        raise ValueError(f"time out of range in {rec!r}"[:120])
    if "advance" in rec:
        return t
    if "resume" in rec:
        held = rec.get("held", [])
        if not isinstance(held, list) or not all(isinstance(b, str) for b in held):
            raise ValueError(f"bad held buttons in {rec!r}")
        return Resume(t, tuple(held), _levels(rec, "hall"), _levels(rec, "encoder"))
    if "pending" in rec:
        buttons, until = rec["pending"], float(rec["until"])
        if not isinstance(buttons, list) or not all(isinstance(b, str) for b in buttons):
            raise ValueError(f"bad pending buttons in {rec!r}")
        if not 0.0 <= until - t <= PENDING_MAX_S:
            raise ValueError(f"pending until must be 0 to {PENDING_MAX_S:g} s after t in {rec!r}")
        return Pending(t, tuple(buttons), until)
    if "press" in rec or "release" in rec:
        return Edge(t, str(rec.get("press", rec.get("release"))), "press" in rec)
    if "turn" in rec:
        return Turn(t, int(rec["turn"]))
    if "hall" in rec:
        return HallLevel(t, rec["hall"], int(rec["level"]))
    if "encoder" in rec:
        return EncoderLevel(t, rec["encoder"], int(rec["level"]))
    if rec.get("puck") == "counts":
        return HallCounts(t, str(rec["boot"]), int(rec["net"]), int(rec["invalid"]))
    if rec.get("puck") == "status":
        return PuckStatus(t, bool(rec["connected"]), str(rec["boot"]))
    if "hotspot" in rec:
        return hotspot_state(t, rec["hotspot"])
    if "host" in rec:
        return host_command(t, rec)
    raise ValueError(f"unknown record {rec!r}")


def host_fields(cmd: HostCommand) -> Record:
    """A host command's fields as the host's page sends them and the log records them:
    `rename` player and name, `players` names, `switch` game (and options), `dial` delta,
    `menu` key, `press` and `hold` player; the other commands have none. Options that are not JSON (no page sends them)
    stay the text they are, so that the fold meets the refusal the box met."""
    if cmd.command == "rename":
        return {"player": cmd.player, "name": cmd.name}
    if cmd.command == "players":
        try:
            return {"names": json.loads(cmd.options) if cmd.options else []}
        except ValueError:
            return {"options": cmd.options}
    if cmd.command == "switch":
        try:
            options = json.loads(cmd.options) if cmd.options else None
        except ValueError:
            return {"name": cmd.name, "options": cmd.options}
        return {"game": cmd.name, **({"options": options} if options else {})}
    if cmd.command == "dial":
        return {"delta": cmd.delta}
    if cmd.command == "menu":
        return {"key": cmd.name}
    if cmd.command in ("press", "hold"):
        return {"player": cmd.player}
    return {}


def host_command(t: float, rec: Record) -> HostCommand:
    """The HostCommand a record (or a checked message) holds. Logs of version 2 and before kept
    `players`' names and `switch`'s options as JSON text in `options`, and `switch`'s game and
    `menu`'s key in `name`: those read the same."""
    command = str(rec["host"] if "host" in rec else rec["cmd"])
    name, options = str(rec.get("name", "")), rec.get("options", "")
    if command == "players" and "names" in rec:
        options = json.dumps(list(rec["names"]))
    elif command == "switch" and "game" in rec:
        name = str(rec["game"])
        options = json.dumps(options, separators=(",", ":")) if options else ""
    elif command == "menu" and "key" in rec:
        name = str(rec["key"])
    if not isinstance(options, str):
        raise ValueError(f"bad host options in {rec!r}"[:120])
    return HostCommand(t, command, int(rec.get("player", -1)), name, options, int(rec.get("delta", 0)))


SSID_MAX = 32           # bytes, as Wi-Fi allows
ADDRESS_MAX = 64


def hotspot_state(t: float, value: Any) -> HotspotState:
    """A `hotspot` record's or scenario event's value: null (down) or {"ssid", "address"} (up).
    ValueError with a one-line reason otherwise."""
    if value is None:
        return HotspotState(t)
    if not isinstance(value, dict) or set(value) - {"ssid", "address"}:
        raise ValueError('hotspot: null or {"ssid": S, "address": A}')
    ssid, address = value.get("ssid"), value.get("address", "")
    if not isinstance(ssid, str) or not 1 <= len(ssid.encode()) <= SSID_MAX or not ssid.isprintable():
        raise ValueError(f"hotspot.ssid: 1 to {SSID_MAX} bytes of printable text")
    if not isinstance(address, str) or len(address) > ADDRESS_MAX or not address.isprintable():
        raise ValueError("hotspot.address: an IP address or \"\"")
    return HotspotState(t, ssid, address)


SEATS = 8       # player buttons a box has at most (a log's header says `seats` if fewer)


def header_seats(header: dict[str, Any]) -> int:
    """The player buttons of the box that wrote a log (its header's `seats`; 8 if not said)."""
    seats = header.get("seats", SEATS)
    if isinstance(seats, bool) or not isinstance(seats, int) or not 1 <= seats <= SEATS:
        raise ValueError("header: seats must be 1 to 8")
    return seats
