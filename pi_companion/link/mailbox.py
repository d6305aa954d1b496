"""The hand-off from the puck's reader thread to the box loop: latest values, one wake token.

The puck's counters are absolute, so only the newest report matters: a puck (or anything on
its port) that sends faster than the loop can log and act on them must not fill the loop's
queue. The reader thread `post`s events here; the mailbox puts a single wake token on the
loop's queue when it goes from empty to non-empty, and the loop `take`s everything pending
when it reaches the token. So the loop's queue holds at most one puck item, however fast
the puck talks, and a button edge waits behind at most that one.

What is kept, in the order the loop gets it:

- `before`: the newest Counts that arrived before a pending status change (their steps
  still count for the check the change then voids);
- `gone`: the first disconnect not yet handled (PuckStatus connected=False);
- `status`: the newest connection (a Hello's PuckStatus) not yet handled;
- `counts`: the newest Counts after those.

Counts between two status changes are dropped: the second change resets the counting
base anyway, and a later Counts carries the totals. Nothing else is lost: the engine
sees every disconnect, the newest boot id and the newest counters.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

from ..core.events import HallCounts, PuckStatus

PuckEvent = HallCounts | PuckStatus


class PuckMailbox:
    def __init__(self, wake: Callable[[], None]) -> None:
        self._wake = wake
        self._lock = threading.Lock()
        self._before: HallCounts | None = None
        self._gone: PuckStatus | None = None
        self._status: PuckStatus | None = None
        self._counts: HallCounts | None = None
        self._armed = False          # a wake token is on the loop's queue
        self.posted = 0
        self.taken = 0

    def post(self, event: PuckEvent) -> None:
        """Keep `event` (reader thread); wake the loop unless a wake is already queued."""
        with self._lock:
            self.posted += 1
            if isinstance(event, HallCounts):
                self._counts = event
            else:
                if self._gone is None and self._status is None:
                    self._before, self._counts = self._counts, None
                else:
                    self._counts = None
                if event.connected:
                    self._status = event
                else:
                    self._gone = self._gone or event
                    self._status = None
            wake, self._armed = not self._armed, True
        if wake:
            self._wake()

    def take(self) -> list[PuckEvent]:
        """Everything pending, in order, and the next post wakes the loop again (loop)."""
        with self._lock:
            events = [e for e in (self._before, self._gone, self._status, self._counts)
                      if e is not None]
            self._before = self._gone = self._status = self._counts = None
            self._armed = False
            self.taken += len(events)
        return events

    def pending(self) -> int:
        with self._lock:
            return sum(e is not None for e in (self._before, self._gone, self._status,
                                               self._counts))
