"""The daemon's side of its systemd unit: sd_notify, the watchdog period, and power-off."""

from __future__ import annotations

import logging
import os
import socket
import subprocess

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
