"""Who may hold a connection to the big screen, and for how long.

One LAN client must not take the screen down for everyone: a slowloris (hundreds of requests
that never finish their headers) once used up the process's file descriptors, and 200 held
WebSockets turned every new screen away. The gate sits under aiohttp, at the TCP connection:

- at most `PER_ADDRESS` connections from one address and `MAX_CONNECTIONS` in all, both far
  below the unit's `LimitNOFILE=` (the process never reaches EMFILE, so accepting never fails);
- a new connection over a limit takes the place of the oldest *idle* one (a request still
  being sent or a keep-alive waiting for its next; then the oldest WebSocket viewer) of its
  own address, or, over the total, of the address holding the most; a connection busy with a
  request is never cut. So a new screen always gets in, and an attacker mostly evicts itself;
- a connection has `IDLE_S` seconds from connecting (and from each answer) to send a complete
  request's headers (aiohttp's keep-alive timer, which it starts at the connection);
- refusals and evictions are counted and said in one line at most every `LOG_EVERY_S`
  seconds, never a traceback per connection; an accept that fails for want of descriptors
  (another process's fault, say) and a request aiohttp's parser refuses (which it would log
  with a traceback each) are said the same way.
"""
from __future__ import annotations

import asyncio
import errno
import logging
import resource
import time
from dataclasses import dataclass, field
from typing import Any, Callable

log = logging.getLogger("pi_companion.web")

PER_ADDRESS = 32             # connections from one address (a phone opens about 6 and a WebSocket)
MAX_CONNECTIONS = 256        # in all; the unit's LimitNOFILE=1024 leaves the rest for the process
FD_RESERVE = 64              # descriptors kept for the process itself (hub, history files, epoll)
BACKLOG = 64                 # listen backlog, and so the most connections asyncio accepts at once:
                             # a refused or evicted one's descriptor closes on the loop's next pass,
                             # so at the peak MAX_CONNECTIONS + 2 * BACKLOG (384) connections hold
                             # one, plus the process's own: under 512, half the unit's LimitNOFILE
LISTEN_QUEUE = 1024          # connections the kernel queues for accepting (not descriptors of ours)
IDLE_S = 5.0                 # to send a request's headers, from connect or from the last answer
LOG_EVERY_S = 10.0


@dataclass(eq=False)
class Conn:
    address: str
    opened: float
    transport: asyncio.BaseTransport
    busy: int = 0            # requests being answered: never evicted meanwhile
    viewer: bool = False     # a WebSocket viewer (evicted after idle connections)
    gone: bool = False


@dataclass
class Counts:
    refused: int = 0
    evicted: int = 0
    fd_errors: int = 0
    malformed: int = 0
    addresses: dict[str, int] = field(default_factory=dict)


def total_limit(wanted: int = MAX_CONNECTIONS) -> int:
    """`wanted`, or less if the descriptor limit is lower than the unit sets (a shell's 1024
    is fine; a tiny one is not a reason to fail)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(8, min(wanted, soft - FD_RESERVE - 2 * BACKLOG))


class Gate:
    def __init__(self, per_address: int = PER_ADDRESS, total: int | None = None) -> None:
        self.per_address = per_address
        self.total = total_limit() if total is None else total
        self.conns: dict[asyncio.BaseTransport, Conn] = {}
        self.by_address: dict[str, list[Conn]] = {}
        self.peak = 0
        self.counts = Counts()
        self.refused_total = 0
        self.evicted_total = 0
        self._log_due: asyncio.TimerHandle | None = None

    # ---- the protocol's side ----

    def factory(self, make_handler: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        """A protocol factory for `loop.create_server`: aiohttp's handler behind the gate."""
        return lambda: _Guarded(self, make_handler())

    def admit(self, transport: asyncio.BaseTransport) -> Conn | None:
        """A new connection: its Conn, or None to refuse it (the caller aborts it)."""
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        own = self.by_address.get(address, [])
        victim: Conn | None = None
        if len(own) >= self.per_address:
            victim = self._idlest(own)
        elif len(self.conns) >= self.total:
            victim = self._idlest(max(self.by_address.values(), key=len))
        if (len(own) >= self.per_address or len(self.conns) >= self.total) and victim is None:
            self.refused_total += 1
            self._note(address, refused=True)
            return None
        if victim is not None:
            self.evict(victim)
        conn = Conn(address, time.monotonic(), transport)
        self.conns[transport] = conn
        self.by_address.setdefault(address, []).append(conn)
        self.peak = max(self.peak, len(self.conns))
        return conn

    def release(self, conn: Conn) -> None:
        if conn.gone:
            return
        conn.gone = True
        self.conns.pop(conn.transport, None)
        own = self.by_address.get(conn.address)
        if own is not None:
            try:
                own.remove(conn)
            except ValueError:
                pass
            if not own:
                del self.by_address[conn.address]

    def evict(self, conn: Conn) -> None:
        self.release(conn)
        conn.transport.abort()
        self.evicted_total += 1
        self._note(conn.address, refused=False)

    @staticmethod
    def _idlest(conns: list[Conn]) -> Conn | None:
        """The connection to give up first: the oldest idle one, else the oldest viewer."""
        idle = next((c for c in conns if not c.busy and not c.viewer), None)
        return idle or next((c for c in conns if c.viewer), None)

    # ---- the WebSocket viewers ----

    def viewers(self) -> list[Conn]:
        return [c for c in self.conns.values() if c.viewer]

    def make_room_for_viewer(self, address: str, limit: int) -> None:
        """Before a new WebSocket: with `limit` viewers already, the oldest viewer of the same
        address goes, else the oldest of the address with the most viewers."""
        viewers = self.viewers()
        if len(viewers) < limit:
            return
        own = [c for c in viewers if c.address == address]
        if not own:
            per: dict[str, list[Conn]] = {}
            for c in viewers:
                per.setdefault(c.address, []).append(c)
            own = max(per.values(), key=len)
        self.evict(own[0])

    # ---- saying so, once in a while ----

    def _note(self, address: str, refused: bool) -> None:
        counts = self.counts
        if refused:
            counts.refused += 1
        else:
            counts.evicted += 1
        counts.addresses[address] = counts.addresses.get(address, 0) + 1
        self._schedule()

    def exception_handler(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """The loop's exception handler: an accept that failed for want of descriptors or
        memory is counted into the rate-limited line; anything else goes to asyncio's own."""
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS,
                                                       errno.ENOMEM):
            self.counts.fd_errors += 1
            self._schedule()
            return
        loop.default_exception_handler(context)

    def quiet(self, logger: logging.Logger) -> None:
        """aiohttp logs a request its parser refuses (a byte HTTP forbids, a broken request
        line) with a traceback, once per request: count those into the line instead. Any
        other error it logs (a bug of ours) keeps its traceback."""
        logger.addFilter(_Malformed(self))

    def _schedule(self) -> None:
        if self._log_due is None:
            loop = asyncio.get_running_loop()
            self._say()
            self._log_due = loop.call_later(LOG_EVERY_S, self._window_over)

    def _window_over(self) -> None:
        self._log_due = None
        c = self.counts
        if c.refused or c.evicted or c.fd_errors or c.malformed:
            self._schedule()

    def _say(self) -> None:
        c, self.counts = self.counts, Counts()
        if not (c.refused or c.evicted or c.fd_errors or c.malformed):
            return
        busiest = max(c.addresses.items(), key=lambda kv: kv[1])[0] if c.addresses else "-"
        log.warning("connections: %d refused, %d idle ones closed for new ones, %d accepts out of "
                    "descriptors, %d malformed requests (limits %d per address, %d in all; most "
                    "from %s)", c.refused, c.evicted, c.fd_errors, c.malformed, self.per_address,
                    self.total, busiest)


class _Malformed(logging.Filter):
    def __init__(self, gate: Gate) -> None:
        super().__init__()
        self.gate = gate

    def filter(self, record: logging.LogRecord) -> bool:
        from aiohttp.http_exceptions import HttpProcessingError
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, (HttpProcessingError, ConnectionError)):
            self.gate.counts.malformed += 1
            try:
                self.gate._schedule()
            except RuntimeError:              # no running loop: say nothing now
                pass
            return False
        return True


class _Guarded(asyncio.Protocol):
    """aiohttp's request handler for one connection, behind the gate."""

    def __init__(self, gate: Gate, handler: asyncio.Protocol) -> None:
        self.gate = gate
        self.handler = handler
        self.conn: Conn | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.conn = self.gate.admit(transport)
        if self.conn is None:
            transport.abort()
            return
        self.handler.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.conn is not None and not self.conn.gone:
            self.handler.data_received(data)

    def eof_received(self) -> bool | None:
        return self.handler.eof_received() if self.conn is not None else None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.conn is not None:
            self.gate.release(self.conn)
            self.handler.connection_lost(exc)

    def pause_writing(self) -> None:
        self.handler.pause_writing()

    def resume_writing(self) -> None:
        self.handler.resume_writing()
