"""The puck translation: the wind puck's messages become the engine's puck events.

The puck's reader thread only translates and posts: a `Hello` from a new boot becomes a
connected `PuckStatus`, a `Counts` with something new a `HallCounts` stamped at its last edge
(`since_edge_ms` back, at most `PUCK_EDGE_AGE_MAX_MS`), a lost link a disconnected
`PuckStatus`. Repeats (the same boot's hello, a heartbeat with the same counts) are dropped.
The events wait in the mailbox, which puts at most one `PuckWake` on the loop's queue however
fast the puck talks; the loop takes them all, in order, when it reaches that wake.
The puck is opened only when the config's wind source is the puck.
"""
from __future__ import annotations

from typing import Any, Callable

from ..config import Config
from ..core.events import HallCounts, PuckStatus
from ..link.mailbox import PuckMailbox
from .wakes import PuckWake, Wake

# A puck's since_edge_ms beyond this is taken as this (a report on change comes within 20 ms of
# the edge).
PUCK_EDGE_AGE_MAX_MS = 1000


class PuckFeed:
    """The wind puck's link, its mailbox, and what its reader thread posts there."""
    config: Config
    queue: Any
    now: Callable[[], float]
    handle: Callable[[Any], None]
    puck: Any                                  # the puck's link (None: no puck)
    _puck_last: tuple[str, int, int] | None    # the last counts posted: (boot, net, invalid)
    _puck_hello: str | None                    # the boot whose hello was posted
    puck_mail: PuckMailbox

    def _init_puck(self) -> None:
        self.puck = None
        self._puck_last = None
        self._puck_hello = None
        self.puck_mail = PuckMailbox(lambda: self.queue.put(PuckWake()))
        if self.config.wind_source == "puck":
            self._start_puck()

    def _start_puck(self) -> None:
        from ..link.serial_port import PuckLink   # deferred: pyserial costs ~35 ms; only with a puck
        self.puck = PuckLink(self.config.puck_port or None, self._puck_message, self._puck_status)
        self.puck.start()

    def _puck_message(self, msg: Any) -> None:
        from ..link import proto       # deferred: only a box with a puck (its CRC table)
        now = self.now()
        if isinstance(msg, proto.Hello):
            if msg.boot_id == self._puck_hello:    # asked again, same boot: nothing new
                return
            self._puck_hello = msg.boot_id
            self.puck_mail.post(PuckStatus(now, True, msg.boot_id))
        elif isinstance(msg, proto.Counts):
            key = (msg.boot_id, msg.net, msg.invalid)
            if key == self._puck_last:         # a heartbeat with nothing new: nothing to log
                return
            self._puck_last = key
            age_ms = min(max(msg.since_edge_ms, 0), PUCK_EDGE_AGE_MAX_MS)
            self.puck_mail.post(HallCounts(now - age_ms / 1000.0, msg.boot_id, msg.net,
                                           msg.invalid))

    def _puck_status(self, connected: bool) -> None:
        if not connected:
            self._puck_last = self._puck_hello = None
            self.puck_mail.post(PuckStatus(self.now(), False))

    def _puck_take(self) -> None:
        """The loop reached the puck's wake token: handle what the mailbox holds, in order."""
        for event in self.puck_mail.take():
            self.handle(Wake(event))
