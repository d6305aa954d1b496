"""The host token: who may run the table from a phone.

It lives in `TOKEN_NAME` in the daemon's state directory, mode 0600 (the daemon's user only: the
web process never reads it), and leaves the daemon only inside the OLED's host QR. It is
compared in constant time. hmac and secrets are imported when a token is made or checked, not
at import: they bring OpenSSL's hashlib, which the way to READY does not need.
"""
from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

from .protocol import token_text_ok

log = logging.getLogger("pi_companion.hub")
TOKEN_NAME = "host-token"
TOKEN_MODE = 0o600


class HostToken:
    """The current token, kept in `folder` (None: in memory only), replaced by `rotate`."""

    def __init__(self, folder: str | Path | None) -> None:
        self.path = Path(folder) / TOKEN_NAME if folder is not None else None
        self._lock = threading.Lock()
        self._value = self._load()

    @property
    def value(self) -> str:
        with self._lock:
            return self._value

    def _load(self) -> str:
        if self.path is not None:
            try:
                token = self.path.read_text().strip()
                if len(token) >= 8:
                    return token
            except OSError:
                pass
        return self._new()

    def _new(self) -> str:
        import secrets
        token = secrets.token_urlsafe(9)        # 72 bits: short enough for a QR on the OLED
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                tmp = self.path.with_suffix(".tmp")
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, TOKEN_MODE)
                with os.fdopen(fd, "w") as f:
                    f.write(token + "\n")
                os.replace(tmp, self.path)
            except OSError as err:
                log.warning("host token not saved (%s): it changes at the next start", err)
        return token

    def rotate(self) -> str:
        """A new token ("New host"): every page holding the old one stops working."""
        token = self._new()
        with self._lock:
            self._value = token
        return token

    def matches(self, given: Any) -> bool:
        import hmac
        token = self.value
        return token_text_ok(given) and hmac.compare_digest(given.encode(), token.encode())
