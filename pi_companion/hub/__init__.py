"""The big screen's hub: the daemon's Unix socket that publishes the table to the web process
and takes the host's commands. `protocol` is the wire (pure, shared with the web process),
`server` the socket (`Hub`, imported from there: the web process never loads it), `token` the
host token, `addresses` and `hotspot` what the OLED's QR codes carry."""
from __future__ import annotations

from .addresses import SOCKET_NAME, address_url, board_url, socket_path
from .hotspot import HOTSPOT_PATH, Hotspot, read_hotspot
from .protocol import CommandError, history_name, parse_command, token_text_ok
from .token import TOKEN_MODE, TOKEN_NAME

__all__ = ["HOTSPOT_PATH", "SOCKET_NAME", "TOKEN_MODE", "TOKEN_NAME", "CommandError", "Hotspot", "address_url",
           "board_url", "history_name", "parse_command", "read_hotspot", "socket_path", "token_text_ok"]
