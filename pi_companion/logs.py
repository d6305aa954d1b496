"""Logging for the daemon: `LEVEL name: message` on stderr in a terminal; under systemd the
same lines each start with the sd-daemon `<N>` syslog priority, so journald files every line at
its own priority and `journalctl -p warning -u pi-companion` filters.

systemd sets JOURNAL_STREAM to "DEVICE:INODE" of the stream it connected stdout/stderr to; the
prefix is used only when stderr is still that stream (not when a shell redirected it)."""
from __future__ import annotations

import logging
import os
import sys
from typing import TextIO

FORMAT = "%(levelname)s %(name)s: %(message)s"
# syslog priorities (sd-daemon.h: SD_ERR "<3>", SD_WARNING "<4>", SD_INFO "<6>", SD_DEBUG "<7>")
PRIORITY = {logging.CRITICAL: 2, logging.ERROR: 3, logging.WARNING: 4, logging.INFO: 6, logging.DEBUG: 7}


def priority(levelno: int) -> int:
    """The syslog priority of a Python level (levels between the named ones round down)."""
    return next((p for level, p in sorted(PRIORITY.items(), reverse=True) if levelno >= level), 7)


class JournalFormatter(logging.Formatter):
    """Every line gets the prefix, so a traceback stays at its record's priority in the journal
    (journald turns each line of a stream into an entry of its own)."""

    def format(self, record: logging.LogRecord) -> str:
        prefix = f"<{priority(record.levelno)}>"
        return "\n".join(prefix + line for line in super().format(record).splitlines())


def connected_to_journal(stream: TextIO) -> bool:
    value = os.environ.get("JOURNAL_STREAM", "")
    try:
        device, inode = (int(part) for part in value.split(":"))
        st = os.fstat(stream.fileno())
    except (ValueError, OSError):
        return False
    return (st.st_dev, st.st_ino) == (device, inode)


def setup(level: str, stream: TextIO | None = None) -> logging.Handler:
    """Install our root handler (replacing one an earlier call installed) at `level` ("info", ...).

    Like logging.basicConfig, it leaves a root logger that someone else configured alone (a
    test run in-process)."""
    root = logging.getLogger()
    if any(h.get_name() != "pi-companion" for h in root.handlers):
        return root.handlers[0]
    stream = stream if stream is not None else sys.stderr
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JournalFormatter(FORMAT) if connected_to_journal(stream) else logging.Formatter(FORMAT))
    handler.set_name("pi-companion")
    for old in root.handlers[:]:
        if old.get_name() == "pi-companion":
            root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    return handler
