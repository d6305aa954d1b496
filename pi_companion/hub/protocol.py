"""The hub's wire protocol: every message between the daemon's hub and its clients, parsed and
built here and nowhere else. Pure: no socket, no file, no clock.

A client speaks newline-delimited JSON objects of at most `LINE_LIMIT` bytes. Its first line
says who it is, `{"cmd": "hello", "role": ROLE}`, and that role fixes, for the connection's life,
the verbs it may send (`VERBS`) and what the hub sends it:

| role | who | verbs | gets |
|---|---|---|---|
| `board` | the web process's link | `watch`, `address` | snapshots, OLED frames (host QR blanked), beats while watching |
| `host` | a host page's commands (the web process forwards them on a connection of their own) | `HOST_COMMANDS`, `forget`, `auth`, each with the token | replies; once `auth` proved the token, the true OLED frames |
| `dispatcher` | the SD image's hotspot dispatcher (root, or the daemon's own user) | `hotspot` | replies |

A verb outside the connection's role is refused whatever token the message carries, so a
message a page got forwarded can never reach `address`, `watch` or `hotspot`. The web process
forwards only `FORWARDED` (the host verbs a page may send), each rebuilt from its own fields
(`host_message`).

The hub answers every command with `{"type": "reply", "id": ID, "ok": BOOL, ...}`: `denied`
when the token is wrong, `error` with a one-line reason, and for a game's input `saved`, true
once its record is durable (or false with the reason it is not).
"""
from __future__ import annotations

import json
import re
from typing import Any

from ..core.events import HostCommand
from ..core.game import players_problem
from ..core.names import name_problem
from ..core.table import HOST_COMMANDS, names_problem
from ..games import registry
from ..games.base import OptionError

LINE_LIMIT = 4096
TOKEN_MAX = 64
MENU_KEY_MAX = 24

ROLES = ("board", "host", "dispatcher")
VERBS: dict[str, frozenset[str]] = {
    "board": frozenset({"watch", "address"}),
    "host": frozenset(HOST_COMMANDS) | {"forget", "auth"},
    "dispatcher": frozenset({"hotspot"}),
}
TOKEN_VERBS = VERBS["host"]
FORWARDED: tuple[str, ...] = HOST_COMMANDS + ("forget",)
# The fields each forwarded verb carries besides `cmd`; anything else a page sends is dropped.
FIELDS: dict[str, tuple[str, ...]] = {
    "rename": ("player", "name"), "players": ("names",), "switch": ("game", "options"),
    "dial": ("delta",), "menu": ("key",), "forget": ("game",), "press": ("player",), "hold": ("player",),
}
KNOWN = frozenset().union(*VERBS.values()) | {"hello"}
BEAT = b'{"type":"beat"}\n'
NOT_HOST = "not the host: scan the host QR"
HISTORY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,120}\.log")


class CommandError(ValueError):
    """A message that cannot be taken; its text goes back to the sender in one line."""


def line(obj: dict[str, Any]) -> bytes:
    """One message as it goes on the wire."""
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def parse_line(raw: bytes) -> dict[str, Any]:
    """One received line as a message object; CommandError if it is not one."""
    if len(raw) > LINE_LIMIT:
        raise CommandError("command too long")
    try:
        msg = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise CommandError("not JSON") from None
    if not isinstance(msg, dict):
        raise CommandError("a command must be a JSON object")
    return msg


def message_id(msg: dict[str, Any]) -> Any:
    """The id a reply echoes: a number or short text, else none."""
    given = msg.get("id")
    if isinstance(given, bool) or not isinstance(given, (int, str)) or \
            (isinstance(given, str) and len(given) > 64):
        return None
    return given


def hello(role: str) -> bytes:
    return line({"cmd": "hello", "role": role, "id": 0})


def hello_role(msg: dict[str, Any]) -> str:
    """The role a connection's first message names; CommandError unless it is a hello."""
    if msg.get("cmd") != "hello":
        raise CommandError(f'say who you are first: {{"cmd": "hello", "role": one of {", ".join(ROLES)}}}')
    role = msg.get("role")
    if role not in ROLES:
        raise CommandError(f"role: one of {', '.join(ROLES)}")
    return str(role)


def verb_problem(role: str, msg: dict[str, Any]) -> str | None:
    """Why a connection of `role` may not send `msg` (None: it may)."""
    cmd = msg.get("cmd")
    if cmd == "hello":
        return "hello: said already"
    if not isinstance(cmd, str) or cmd not in KNOWN:
        return "unknown command"
    if cmd not in VERBS[role]:
        return f"{cmd}: not a {role} connection's command"
    return None


def reply(msg_id: Any, ok: bool, error: str = "", **extra: Any) -> bytes:
    body: dict[str, Any] = {"type": "reply", "id": msg_id, "ok": ok, **extra}
    if error:
        body["error"] = error
    return line(body)


def denied(msg_id: Any) -> bytes:
    return reply(msg_id, False, NOT_HOST, denied=True)


def watch(on: bool) -> bytes:
    return line({"cmd": "watch", "on": on, "id": 0})


def address(ip: str) -> bytes:
    return line({"cmd": "address", "address": ip, "id": 0})


def snapshot(view: dict[str, Any]) -> bytes:
    return line({"type": "snapshot", **view})


def oled(png_base64: str) -> bytes:
    return line({"type": "oled", "png": png_base64})


def host_message(page: dict[str, Any], token: str, msg_id: int) -> bytes:
    """What the web process sends the hub for a page's command: its verb, that verb's own fields,
    the token from the page's header and the link's id. CommandError for a verb a page may not
    send: it never reaches the hub."""
    cmd = page.get("cmd")
    if not isinstance(cmd, str) or cmd not in FORWARDED:
        raise CommandError(f"unknown command (one of {', '.join(FORWARDED)})")
    fields = {k: page[k] for k in FIELDS.get(cmd, ()) if k in page}
    return line({"cmd": cmd, **fields, "token": token, "id": msg_id})


def token_text_ok(given: Any) -> bool:
    """Could `given` be a token at all (1 to TOKEN_MAX of URL-safe base64's characters)? Anything
    else is refused before any comparison."""
    return (isinstance(given, str) and 0 < len(given) <= TOKEN_MAX and given.isascii()
            and all(c.isalnum() or c in "-_" for c in given))


def history_name(value: Any) -> str:
    """A finished game's file name as /history gives it (`game-000042-20261201-213000.log`):
    one plain name, no directory, no dot but the ".log"; CommandError otherwise."""
    if not isinstance(value, str) or not HISTORY_NAME.fullmatch(value):
        raise CommandError("game: the name of a finished game")
    return value


def parse_command(msg: Any, players: tuple[str, ...]) -> HostCommand:
    """One host command checked against the players at the table: the HostCommand to queue
    (its time filled in by the box) or CommandError."""
    if not isinstance(msg, dict):
        raise CommandError("a command must be a JSON object")
    cmd = msg.get("cmd")
    if cmd not in HOST_COMMANDS:
        raise CommandError(f"unknown command (one of {', '.join(HOST_COMMANDS)})")
    if cmd in ("press", "hold"):     # whether the press may be made now is the table's to say
        return HostCommand(0.0, cmd, _player(msg, players))
    if cmd == "rename":
        player, name = _player(msg, players), msg.get("name")
        problem = name_problem(name)
        if problem is not None or not isinstance(name, str):
            raise CommandError(problem or "a name must not be empty")
        name = name.strip()
        if name in players[:player] + players[player + 1:]:
            raise CommandError(f"{name} is already playing")
        return HostCommand(0.0, "rename", player, name)
    if cmd == "players":           # the count is the table's to check, against the game in play
        names = msg.get("names")
        problem = names_problem(names)
        if problem is not None or not isinstance(names, list):
            raise CommandError(problem or "players must be a list of names")
        return HostCommand(0.0, "players", -1, "", json.dumps([n.strip() for n in names]))
    if cmd == "switch":
        game, options = msg.get("game"), msg.get("options", {})
        if game not in registry.available():
            raise CommandError(f"unknown game (one of {', '.join(registry.available())})")
        if not isinstance(options, dict):
            raise CommandError("options must be an object")
        rules = registry.get(game)
        problem = players_problem(rules, len(players))
        if problem is not None:
            raise CommandError(problem)
        try:
            rules.new_game(players, options, 0)
        except OptionError as err:
            raise CommandError(str(err)) from None
        return HostCommand(0.0, "switch", -1, game, json.dumps(options, separators=(",", ":"))
                           if options else "")
    if cmd == "dial":
        delta = msg.get("delta")
        if isinstance(delta, bool) or delta not in (1, -1):
            raise CommandError("delta must be 1 or -1")
        return HostCommand(0.0, "dial", delta=delta)
    if cmd == "menu":              # the table checks that the game has this entry
        key = msg.get("key")
        if not isinstance(key, str) or not 0 < len(key) <= MENU_KEY_MAX or not key.isascii() \
                or not all(c.isalnum() or c == "-" for c in key):
            raise CommandError("key must be a menu entry's name (letters, digits, -)")
        return HostCommand(0.0, "menu", name=key)
    return HostCommand(0.0, cmd)


def _player(msg: dict[str, Any], players: tuple[str, ...]) -> int:
    """The player a command names: an index at the table, else CommandError."""
    player = msg.get("player")
    if isinstance(player, bool) or not isinstance(player, int) or not 0 <= player < len(players):
        raise CommandError(f"player must be 0 to {len(players) - 1}")
    return player


def parse_server_line(raw: bytes) -> dict[str, Any]:
    """A line from the hub, as the web process reads it: an object with a known `type`."""
    msg = json.loads(raw)
    if not isinstance(msg, dict) or msg.get("type") not in ("snapshot", "oled", "beat", "reply"):
        raise ValueError("not a hub message")
    return msg
