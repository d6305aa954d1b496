"""The daemon's side of its systemd units: sd_notify, the watchdog period, power-off, and the
line pi-companion-update.service leaves in the state directory (shown once, then kept as seen)."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
from pathlib import Path

log = logging.getLogger(__name__)

# logind's PowerOff(interactive=false) over the system bus. polkit allows it for the service
# user only (systemd/50-pi-companion-shutdown.rules); busctl ships with systemd itself.
POWER_OFF_COMMAND: tuple[str, ...] = (
    "busctl", "call", "--system",
    "org.freedesktop.login1", "/org/freedesktop/login1",
    "org.freedesktop.login1.Manager", "PowerOff", "b", "false",
)


def notify(state: str) -> bool:
    """Send one sd_notify datagram ("READY=1", "WATCHDOG=1", ...); False if not delivered."""
    address = os.environ.get("NOTIFY_SOCKET", "")
    if address.startswith("@"):
        address = "\0" + address[1:]  # the abstract namespace
    elif not address.startswith("/"):
        return False  # unset, or a kind of address (vsock) this box never has
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(state.encode())
    except OSError as error:
        log.debug("sd_notify %r not sent: %s", state, error)
        return False
    return True


def watchdog_interval() -> float | None:
    """Seconds between WATCHDOG=1 pings (half the unit's WatchdogSec), None if not watched."""
    pid = os.environ.get("WATCHDOG_PID")
    if pid is not None and pid != str(os.getpid()):
        return None  # the watchdog is meant for another process
    try:
        usec = int(os.environ.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    return usec / 2_000_000 if usec > 0 else None


def power_off() -> None:
    """Ask logind to power the box off; a refusal or failure is logged, never raised."""
    try:
        result = subprocess.run(POWER_OFF_COMMAND, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as error:
        log.error("power-off failed: %s", error)
        return
    if result.returncode != 0:
        log.error("power-off refused (exit %d): %s", result.returncode, result.stderr.strip())


UPDATE_RESULT = "update-result"        # written by systemd/pi-companion-update (root, 0644)
UPDATE_SEEN = "update-result.seen"     # the daemon's rename once it has shown it


def update_result(state_dir: str, take: bool = False) -> str | None:
    """The last update's one line ("updated to 0.2.1", "update refused: checksum"), or None.
    `take` (the daemon at start): only a line not yet shown, then marked as shown."""
    fresh, seen = Path(state_dir) / UPDATE_RESULT, Path(state_dir) / UPDATE_SEEN
    for path in (fresh,) if take else (fresh, seen):
        try:
            line = path.read_text(errors="replace").strip().splitlines()[0][:80]
        except (OSError, IndexError):
            continue
        if take:
            try:
                path.replace(seen)
            except OSError as err:      # shown again at the next start: no harm
                log.warning("cannot mark %s as shown: %s", path, err)
        return line
    return None
