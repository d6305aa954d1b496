"""The wind puck's loop: hall sensors on hard interrupts, counts reports and host commands.

The interrupt handler only reads both pins, calls the shared decoder and stamps the edge;
none of that allocates. Everything else (formatting, USB serial, the watchdog) happens in
the main loop. Tests run this module on CPython with a fake `machine` and a fake clock
(assigned to the module attribute `time`).
"""

import os
import time

from machine import Pin
import machine

import protocol
from quadrature import Quadrature

HALL_A_PIN = 14          # GP14, physical pin 19
HALL_B_PIN = 15          # GP15, physical pin 20
HEARTBEAT_MS = 250       # a report at least this often
MIN_GAP_MS = 20          # on-change reports at most this often
LOOP_MS = 1              # main loop sleep
WDT_TIMEOUT_MS = 8000    # rp2040 maximum is 8388
PRODUCTION_FLAG = "production"   # this file on the Pico's filesystem = production mode
MAX_INPUT_PER_STEP = 64  # command bytes read per loop turn


def new_boot_id():
    """8 hex digits from the hardware random source, new on every boot."""
    return "".join("%02x" % x for x in os.urandom(4))


def is_production(flag=PRODUCTION_FLAG):
    try:
        os.stat(flag)
        return True
    except OSError:
        return False


class Puck:
    """One turntable: two hall pins, the decoder, the report schedule and the command reader."""

    def __init__(self, write, read, wdt=None, mode="dev", pin_a=HALL_A_PIN, pin_b=HALL_B_PIN,
                 heartbeat_ms=HEARTBEAT_MS, boot_id=None):
        self.write = write          # callable(str): one line out
        self.read = read            # callable() -> next input byte (int) or -1
        self.wdt = wdt
        self.mode = mode
        self.boot_id = boot_id or new_boot_id()
        self.heartbeat_ms = heartbeat_ms
        self.pin_a = Pin(pin_a, Pin.IN, Pin.PULL_UP)
        self.pin_b = Pin(pin_b, Pin.IN, Pin.PULL_UP)
        self.quad = Quadrature(self.pin_a.value(), self.pin_b.value())
        self.edges = 0              # written by the interrupt handler only
        self.edge_tick = 0          # written by the interrupt handler only
        self.seq = 0
        self.uptime_ms = 0
        self.last_tick = time.ticks_ms()
        self.last_report_ms = -protocol.HEARTBEAT_MAX_MS   # first report at once
        self.reported_edges = 0
        self.seen_edges = 0
        self.edge_uptime_ms = -1
        self.reader = protocol.CommandReader()
        self._attach()
        self.hello()

    def _attach(self):
        handler = self._on_edge     # the bound method is allocated here, once
        trigger = Pin.IRQ_RISING | Pin.IRQ_FALLING
        self.pin_a.irq(handler=handler, trigger=trigger, hard=True)
        self.pin_b.irq(handler=handler, trigger=trigger, hard=True)

    def _on_edge(self, pin):
        self.quad.update(self.pin_a.value(), self.pin_b.value())
        self.edge_tick = time.ticks_ms()
        self.edges = (self.edges + 1) & 0xFFFFFF    # stays a small int: no allocation

    def hello(self):
        self.write(protocol.hello(self.boot_id, self.mode, self.heartbeat_ms))

    def step(self):
        """One turn of the main loop: clock, commands, report if due, feed the watchdog."""
        now = time.ticks_ms()
        self.uptime_ms += time.ticks_diff(now, self.last_tick)
        self.last_tick = now
        self._read_commands()
        snap = self._snapshot()
        self._track_edges(snap, now)
        if self._report_due(snap[7]):
            self._report(snap)
        if self.wdt is not None:
            self.wdt.feed()

    def run(self, loops=-1):
        """Loop forever (or `loops` times, for tests)."""
        while loops != 0:
            self.step()
            time.sleep_ms(LOOP_MS)
            if loops > 0:
                loops -= 1

    def _snapshot(self):
        """(net, forward, backward, invalid, a, b, edge_tick, edges), copied with interrupts
        off so that a report never mixes two edges."""
        state = machine.disable_irq()
        q = self.quad
        snap = (q.net, q.forward, q.backward, q.invalid, q.a, q.b, self.edge_tick, self.edges)
        machine.enable_irq(state)
        return snap

    def _track_edges(self, snap, now):
        if snap[7] != self.seen_edges:
            self.seen_edges = snap[7]
            self.edge_uptime_ms = self.uptime_ms - time.ticks_diff(now, snap[6])

    def _report_due(self, edges):
        gap = self.uptime_ms - self.last_report_ms
        if edges != self.reported_edges:
            return gap >= MIN_GAP_MS
        return gap >= self.heartbeat_ms

    def _report(self, snap):
        since = -1 if self.edge_uptime_ms < 0 else self.uptime_ms - self.edge_uptime_ms
        self.write(protocol.counts(self.seq, self.boot_id, snap[0], snap[1], snap[2], snap[3],
                                   snap[4], snap[5], since, self.uptime_ms))
        self.seq += 1
        self.last_report_ms = self.uptime_ms
        self.reported_edges = snap[7]

    def _read_commands(self):
        for _ in range(MAX_INPUT_PER_STEP):
            byte = self.read()
            if byte < 0:
                return
            command = self.reader.feed(byte)
            if command is not None:
                self._command(command)

    def _command(self, command):
        kind = command[0]
        if kind == "INFO":
            self.hello()
        elif kind == "PING":
            self.write(protocol.pong(command[1], self.uptime_ms))
        elif kind == "CFG":
            self.heartbeat_ms = command[2]
            self.write(protocol.config(command[1], command[2]))
        else:
            self.write(protocol.error(command[1], command[2]))



def usb_io():
    """(read, write) over the USB serial console: non-blocking byte reads, line writes."""
    import select
    import sys
    poller = select.poll()
    poller.register(sys.stdin, select.POLLIN)
    stdin = sys.stdin.buffer
    stdout = sys.stdout

    def read():
        if poller.poll(0):
            data = stdin.read(1)
            if data:
                return data[0]
        return -1

    def write(line):
        stdout.write(line)

    return read, write


def start(flag=PRODUCTION_FLAG, io=None, loops=-1):
    """Boot: pick the mode from the flag file, arm the watchdog in production, run."""
    production = is_production(flag)
    wdt = machine.WDT(timeout=WDT_TIMEOUT_MS) if production else None
    read, write = io if io is not None else usb_io()
    puck = Puck(write, read, wdt=wdt, mode="prod" if production else "dev")
    puck.run(loops)
    return puck
