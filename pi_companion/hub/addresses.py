"""The big screen's addresses as the OLED's QR codes carry them.

Only an address of the home network or of this machine ever gets into a URL: the host's QR
carries the token, so a code that pointed anywhere else would hand the token to whoever is
there.
"""
from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .protocol import CommandError

SOCKET_NAME = "hub.sock"


def board_url(port: int) -> str:
    return f"http://{socket.gethostname()}.local:{port}/"


def address_url(board: str, address: Any) -> str:
    """The big screen by IP (Android phones often cannot resolve NAME.local): the port of `board`
    at `address`, which must be one IP address (v4 or v6) of a home network or this machine -
    private, link-local or loopback, not multicast or unspecified. CommandError otherwise."""
    if not isinstance(address, str) or len(address) > 64:
        raise CommandError("address: one IP address")
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        raise CommandError("address: one IP address") from None
    if ip.is_multicast or ip.is_unspecified or not (ip.is_private or ip.is_loopback or ip.is_link_local):
        raise CommandError("address: not a home network's address")
    if isinstance(ip, ipaddress.IPv6Address) and ip.scope_id:
        raise CommandError("address: no scope")
    port = urlsplit(board).port
    host = f"[{ip.compressed}]" if ip.version == 6 else ip.compressed
    return f"http://{host}:{port}/" if port else f"http://{host}/"


def socket_path(state_dir: str | Path) -> Path:
    """`$RUNTIME_DIRECTORY/hub.sock` under systemd, else in the state directory."""
    runtime = os.environ.get("RUNTIME_DIRECTORY", "").split(":")[0]
    return Path(runtime or state_dir) / SOCKET_NAME
