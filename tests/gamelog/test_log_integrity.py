"""What a damaged or hostile game log does to a resume, and what the group-committing writer
guarantees: flipped bits are detected and the valid prefix resumes (0 silent wrong states), a
v1 log still resumes, arbitrary bytes and JSON never crash the start, a hall spin shares its
fsyncs, nothing is shown before its record is durable, and resume holds no list of records."""
from __future__ import annotations

import json
import logging
import os
import random
import signal
import socket
import subprocess
import sys
import time
import tracemalloc
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.common import Clock, VirtualFactory, VirtualPin
from helpers.boxes import make_box, virtual_box

from pi_companion.box import Box, Wake
from pi_companion.config import Config
from pi_companion.core.engine import Engine
from pi_companion.core.events import Edge, HallLevel
from pi_companion.core.records import from_record, to_record
from pi_companion.gamelog import GameLog
from pi_companion.games import registry
from pi_companion.ui.screens import render

CONFIG = Config(players=("Ada", "Ben", "Cy"), seed=5, sound=False, games={"grab-bag": {"cards": 200}})
# `make test` flips 500 logs and fuzzes 150; `make torture` flips the 3 000, fuzzes 5 000.
BITFLIP_TRIES = int(os.environ.get("PI_COMPANION_BITFLIP_TRIES", "500"))
LOG_FUZZ_EXAMPLES = int(os.environ.get("PI_COMPANION_LOG_FUZZ_EXAMPLES", "150"))


def session(rounds: int = 16, seed: int = 3) -> list[Edge | None]:
    """Grab Bag inputs: close buzzes, judgements, an undo now and then; None is a timer wake."""
    rng = random.Random(seed)
    out: list[Edge | None] = []
    t = 1.0
    for _ in range(rounds):
        for i, racer in enumerate(rng.sample(["P1", "P2", "P3"], rng.randint(1, 2))):
            out += [Edge(t + i * 0.0007, racer, True), Edge(t + 0.1 + i * 0.0007, racer, False)]
        out.append(None)
        t += 1.0
        verdict = rng.choice(["YES", "YES", "NO"])
        hold = 1.2 if rng.random() < 0.15 else 0.05
        out += [Edge(t, verdict, True), Edge(t + hold, verdict, False)]
        t += 2.0
    return out


def write_log(state: Path) -> list[dict]:
    """Play `session()` on a real Box into a real log; its records."""
    Clock.now = 0.0
    factory = VirtualFactory(pin_class=VirtualPin)
    box = make_box(factory, state, config=CONFIG)
    try:
        for item in session():
            if item is not None:
                Clock.now = max(Clock.now, item.t)
            else:
                Clock.now += 0.01
            box.queue.put(Wake(item))
            box.pump()
    finally:
        box.close()
        factory.reset()
    return GameLog(state).load()[1]


def prefix_reports(records: list[dict]) -> list[dict]:
    """The engine's report after folding each prefix of `records` (index = records folded)."""
    engine = Engine(registry.get("grab-bag"), CONFIG.players, CONFIG.options_for("grab-bag"), CONFIG.seed)
    out = [engine.report()]
    for rec in records:
        event = from_record(rec)
        engine.advance(event) if isinstance(event, float) else engine.feed(event)
        out.append(engine.report())
    return out


@pytest.fixture
def nosync(monkeypatch):
    """These tests are about reading: skip the disk flushes that make a resume durable."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    monkeypatch.setattr(os, "fdatasync", lambda fd: None)


@pytest.fixture
def resumer(tmp_path):
    """A Box whose `_resume` can be run again on another state directory (pins built once)."""
    Clock.now = 100.0
    factory = VirtualFactory(pin_class=VirtualPin)
    box = make_box(factory, config=CONFIG)
    yield box
    box.close()
    factory.reset()


def resume_in(box: Box, state: Path) -> tuple[bool, GameLog]:
    box.store = GameLog(state)
    try:
        return box._resume(), box.store
    finally:
        box.store.close()


def test_flipped_bits_resume_the_valid_prefix_never_a_wrong_state(tmp_path, nosync, resumer, caplog):
    caplog.set_level(logging.CRITICAL)
    source = tmp_path / "source"
    records = write_log(source)
    good = prefix_reports(records)
    original = (source / "current.log").read_bytes()
    starts = [0]                                      # byte offset where each line starts
    for line in original.split(b"\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    assert len(records) > 60 and good[-1]["scores"] != good[0]["scores"]
    rng = random.Random(1234)
    state = tmp_path / "state"
    state.mkdir()
    outcomes = {"resumed": 0, "moved_aside": 0, "silent_wrong": 0, "short_prefix": 0}
    for attempt in range(BITFLIP_TRIES):
        data = bytearray(original)
        bits = rng.sample(range(8 * len(data)), rng.randint(1, 4))
        for bit in bits:
            data[bit // 8] ^= 1 << (bit % 8)
        first = min(bits) // 8
        line = max(i for i, s in enumerate(starts) if s <= first)     # the first damaged line
        for stale in state.iterdir():
            stale.unlink()
        (state / "current.log").write_bytes(bytes(data))
        resumed, store = resume_in(resumer, state)
        if line == 0:                                  # the header: nothing to resume, kept aside
            assert not resumed and list(state.glob("corrupt-*.log")), f"try {attempt}"
            outcomes["moved_aside"] += 1
            continue
        assert resumed, f"try {attempt}: bits {bits}"
        outcomes["resumed"] += 1
        folded = resumer.resumed_records
        if resumer.engine.report() != good[folded]:
            outcomes["silent_wrong"] += 1
        if folded != line - 1:
            outcomes["short_prefix"] += 1
        kept = list(state.glob("corrupt-*.log"))
        torn = first == len(original) - 1              # the last newline: a torn line, no damage
        assert torn or (len(kept) == 1 and kept[0].read_bytes() == bytes(data)), f"try {attempt}"
        assert torn or resumer.engine.notice.startswith("recovered to "), f"try {attempt}"
    print(f"bit flips: {BITFLIP_TRIES} logs of {len(records)} records: {outcomes}")
    assert outcomes["silent_wrong"] == 0 and outcomes["short_prefix"] == 0, outcomes
    assert outcomes["resumed"] > 0.9 * BITFLIP_TRIES


ABSURD_TIMES = {                      # CRC-valid lines no box writes: a time that is not one
    "nan-press": b'{"t":NaN,"press":"P1"}', "inf-release": b'{"t":Infinity,"release":"P2"}',
    "far-advance": b'{"t":1e300,"advance":1}', "far-pending": b'{"t":1e300,"pending":["P1"],"until":1e300}',
    "minus-inf-pending": b'{"t":-Infinity,"pending":["P1"],"until":0}',
}


@pytest.mark.parametrize("name", list(ABSURD_TIMES))
def test_a_record_whose_time_is_not_a_time_ends_the_valid_prefix(tmp_path, nosync, resumer, name):
    """A NaN press time became a NaN buzz margin (the big screen's JSON is then invalid), and a
    clock at 1e300 absorbs every settle window (each later press a tie): damage, not a record."""
    source = tmp_path / "source"
    records = write_log(source)
    half = len(records) // 2
    lines = (source / "current.log").read_bytes().split(b"\n")
    lines.insert(1 + half, ABSURD_TIMES[name] + b" %08x" % zlib.crc32(ABSURD_TIMES[name]))
    (source / "current.log").write_bytes(b"\n".join(lines))
    resumed, _ = resume_in(resumer, source)
    assert resumed and resumer.resumed_records == half
    assert resumer.engine.report() == prefix_reports(records)[half]
    assert resumer.engine.notice.startswith("recovered to ")
    assert len(list(source.glob("corrupt-*.log"))) == 1
    json.dumps(resumer.engine.report(), allow_nan=False)


def v1_lines(header: dict, records: list[dict]) -> bytes:
    """A log exactly as the version before checksums wrote it."""
    return b"".join(json.dumps(obj, separators=(",", ":")).encode() + b"\n"
                    for obj in [{"v": 1, **header}, *records])


def test_a_v1_log_resumes_and_carries_on_in_v1(tmp_path, resumer):
    source = tmp_path / "source"
    records = write_log(source)
    header = GameLog(source).load()[0]
    del header["v"]
    state = tmp_path / "state"
    state.mkdir()
    half = len(records) // 2
    (state / "current.log").write_bytes(v1_lines(header, records[:half]))
    assert resume_in(resumer, state)[0] and resumer.resumed_records == half
    assert resumer.engine.report() == prefix_reports(records[:half])[-1]
    box = virtual_box(state, config=CONFIG)
    try:
        for rec in records[half:]:
            event = from_record(rec)
            if isinstance(event, float):
                Clock.now = box.t0 + event
                box.queue.put(Wake())
            else:
                box.queue.put(Wake(event))
            box.pump()
        assert box.engine.report() == prefix_reports(records)[-1]
    finally:
        box.close()
    assert (state / "current.log").read_bytes().startswith(v1_lines(header, records[:half]))
    assert GameLog(state).load()[0]["v"] == 1


# ---- the loader against arbitrary bytes and JSON --------------------------------------------

def v2(obj_bytes: bytes) -> bytes:
    return obj_bytes + b" %08x\n" % zlib.crc32(obj_bytes)


HEADER = {"v": 2, "game": "grab-bag", "players": ["Ada", "Ben", "Cy"], "options": {}, "seed": 5}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8)
nasty = st.sampled_from([
    b"9" * 5000, b"[" * 100_000 + b"]" * 100_000, b'{"t":' + b"1" * 5000 + b',"press":"P1"}',
    b'{"t":1.0,"press":"\xff\xfe"}', b'{"t":1.0,"press":"\\ud800"}', b'{"t":"x","press":"P1"}',
    b'{"t":1e308,"hall":"Z","level":7}', b'{"t":NaN,"advance":1}', b'{"t":1.0,"turn":"many"}',
    b'{"t":1.0,"puck":"counts","boot":[],"net":{},"invalid":null}', b"[]", b'"x"', b"{}",
])
headers = st.one_of(
    st.just(HEADER),
    st.fixed_dictionaries({"v": st.sampled_from([1, 2, "2", None, 3]), "game": st.sampled_from(
        ["grab-bag", "chess", 5, None, ["grab-bag"]]), "players": st.one_of(
        st.just(["Ada", "Ben"]), json_values), "options": st.one_of(st.just({}), json_values),
        "seed": st.one_of(st.integers(), st.just(10 ** 4000), json_values)}),
)


def record_bytes() -> st.SearchStrategy[bytes]:
    return st.one_of(
        json_values.map(lambda v: json.dumps(v).encode()),
        nasty,
        st.binary(max_size=40),
        st.sampled_from([{"t": 1.0, "press": "P1"}, {"t": 1.1, "release": "P1"},
                         {"t": 1.2, "advance": 1}]).map(lambda r: json.dumps(r).encode()),
    )


@st.composite
def logs(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["bytes", "v2", "v1"]))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    header = draw(headers)
    lines = [json.dumps(header).encode()] + draw(st.lists(record_bytes(), max_size=6))
    if kind == "v1":
        body = b"".join(line + b"\n" for line in lines)
    else:
        body = b"".join(v2(line) for line in lines)
    return body[: len(body) - draw(st.integers(0, 3))]


@settings(max_examples=LOG_FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(data=logs())
def test_any_log_is_resumed_or_moved_aside_never_a_crash(tmp_path_factory, nosync, resumer, data):
    state = tmp_path_factory.mktemp("fuzz")
    (state / "current.log").write_bytes(data)
    handler = Lines()
    logging.getLogger("pi_companion").addHandler(handler)
    try:
        resumed, _ = resume_in(resumer, state)
    finally:
        logging.getLogger("pi_companion").removeHandler(handler)
    aside = list(state.glob("corrupt-*.log"))
    if resumed:
        json.dumps(resumer.engine.report())
        render(resumer.engine)                       # and the resumed game can be drawn
        assert len(aside) <= 1
    else:
        assert len(aside) == 1 and aside[0].read_bytes() == data
        assert len(handler.errors) == 1 and "\n" not in handler.errors[0]


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.errors: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.errors.append(record.getMessage())


HOSTILE = {
    "huge-number": v2(json.dumps(HEADER).encode()) + v2(b'{"t":' + b"9" * 5000 + b',"press":"P1"}'),
    "deep-nesting": v2(json.dumps(HEADER).encode()) + v2(b"[" * 100_000 + b"]" * 100_000),
    "deep-header": b"[" * 100_000 + b"]" * 100_000 + b"\n",
    "huge-header-number": json.dumps({**HEADER, "v": 1}).encode().replace(b'"seed": 5', b'"seed": ' + b"7" * 5000) + b"\n",
    "not-utf8": v2(json.dumps(HEADER).encode()) + v2(b'{"t":1.0,"press":"\xff"}'),
    "lone-surrogate": json.dumps({**HEADER, "v": 1}).encode() + b'\n{"t":1.0,"press":"\\udc80"}\n',
    "header-types": json.dumps({"v": 1, "game": "grab-bag", "players": 5, "options": [], "seed": "x"}).encode() + b"\n",
    "wrong-version": json.dumps({**HEADER, "v": 7}).encode() + b"\n",
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_the_daemon_starts_over_any_hostile_log(tmp_path, name):
    state = tmp_path / "state"
    state.mkdir()
    (state / "current.log").write_bytes(HOSTILE[name])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "n.sock"))
    sock.settimeout(15)
    proc = subprocess.Popen([sys.executable, "-m", "pi_companion", "run", "--pins", "mock",
                             "--display", "dummy", "--config", "/dev/null",
                             "--state-dir", str(state)],
                            env={**os.environ, "NOTIFY_SOCKET": str(tmp_path / "n.sock")},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert sock.recv(4096) == b"READY=1"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        err = proc.stderr.read()
    finally:
        proc.kill()
        sock.close()
    assert "Traceback" not in err
    kept = [p.read_bytes() for p in state.glob("corrupt-*.log")]
    lines = sum("game log:" in line for line in err.splitlines())
    if name == "lone-surrogate":          # a button nobody has: folded, and ignored
        assert "resumed grab-bag after 1 logged inputs" in err and lines == 0 and not kept
    else:                                 # resumed up to the damage, or moved aside: one line
        assert lines == 1 and kept == [HOSTILE[name]], err


# ---- the group-committing writer ------------------------------------------------------------

class CountSyncs:
    def __init__(self, monkeypatch: pytest.MonkeyPatch, delay: float = 0.0) -> None:
        self.count = 0
        for name in ("fsync", "fdatasync"):
            real = getattr(os, name)

            def counted(fd, real=real):
                self.count += 1
                if delay:
                    time.sleep(delay)
                return real(fd)
            monkeypatch.setattr(os, name, counted)


def test_a_fast_hall_spin_shares_its_fsyncs(tmp_path, monkeypatch):
    Clock.now = 0.0
    syncs = CountSyncs(monkeypatch)
    factory = VirtualFactory(pin_class=VirtualPin)
    config = Config(game="all-wound-up", players=("Ada", "Ben"), seed=1, sound=False)
    box = make_box(factory, tmp_path, config=config)
    try:
        for e in (Edge(1.0, "P1", True), Edge(1.08, "P1", False)):
            box.queue.put(Wake(e))
        box.pump()
        before, logged = syncs.count, box.store.lines
        forward = (("A", 1), ("B", 1), ("A", 0), ("B", 0))
        for i in range(2000):
            box.queue.put(Wake(HallLevel(2.0 + i * 1e-4, *forward[i % 4])))
        box.pump()
        assert box.engine.game.check.steps == 2000
        assert box.store.lines - logged == 2000
        assert syncs.count - before <= 2000 // 20, f"{syncs.count - before} syncs for 2000 edges"
    finally:
        box.close()
        factory.reset()
    records = GameLog(tmp_path).load()[1]
    assert len(records) == 2002 and records[-1] == to_record(HallLevel(2.0 + 1999e-4, "B", 0))


def test_nothing_is_shown_before_its_record_is_durable(tmp_path, monkeypatch):
    """Live loop thread, a slow disk: at every LED change and every frame, the records that
    caused it are on disk - except a decided buzz's lamp, shown at the decision (#27 item 1:
    no record is waited for; its judgement's LEDs are); everything else every record."""
    from gpiozero.pins.mock import MockFactory, MockPWMPin
    CountSyncs(monkeypatch, delay=0.004)
    factory = MockFactory(pin_class=MockPWMPin)
    violations: list[str] = []
    shown = {"leds": 0, "frames": 0}
    box = make_box(factory, tmp_path, config=CONFIG, on_frame=lambda frame: check("frame", 0))
    store = box.store

    def check(what: str, slack: int) -> None:
        shown["frames" if what == "frame" else "leds"] += 1
        if store.durable < store.seq - slack:
            violations.append(f"{what}: durable {store.durable} < handed {store.seq}")

    real_show, real_now = box.leds.show, box._show_now
    buzz = {"now": False, "shown": 0}

    def show_now(effects):
        buzz["now"] = True
        buzz["shown"] += 1
        try:
            real_now(effects)
        finally:
            buzz["now"] = False
    box._show_now = show_now  # type: ignore[method-assign]

    def show(lit):
        if frozenset(lit) != box.leds.lit and not buzz["now"]:
            check("leds", 0)
        real_show(lit)
    box.leds.show = show  # type: ignore[method-assign]
    box.display.show = lambda frame, now: True  # type: ignore[method-assign]
    box.start()
    try:
        pins = {name: factory.pin(pin) for name, pin in
                __import__("pi_companion.hw.pinmap", fromlist=["load_pinmap"]).load_pinmap().items()}
        rng = random.Random(2)
        for _ in range(15):
            for racer in rng.sample(["P1", "P2", "P3"], 2):
                pins[racer].drive_low()
            time.sleep(0.03)
            for racer in ("P1", "P2", "P3"):
                pins[racer].drive_high()
            time.sleep(0.03)
            verdict = pins[rng.choice(["YES", "NO"])]
            verdict.drive_low()
            time.sleep(0.03)
            verdict.drive_high()
            time.sleep(0.05)
        assert box.store.flush()
        time.sleep(0.05)
    finally:
        box.close()
        factory.reset()
    assert shown["leds"] > 10 and shown["frames"] > 10 and buzz["shown"] >= 10
    assert not violations, violations[:5]


# ---- streaming resume ------------------------------------------------------------------------

def hall_log(state: Path, edges: int) -> None:
    """A Grab Bag log of `edges` hall edges (the game ignores them: its state stays small)."""
    store = GameLog(state)
    store.start({"game": "grab-bag", "players": list(CONFIG.players), "options": {"cards": 200},
                 "seed": 5})
    forward = (("A", 1), ("B", 1), ("A", 0), ("B", 0))
    for i in range(edges):
        store.append(to_record(HallLevel(1.0 + i * 1e-3, *forward[i % 4])))
    store.close()


def resume_peak(box: Box, state: Path) -> int:
    tracemalloc.start()
    try:
        assert resume_in(box, state)[0]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_resume_streams_its_peak_memory_does_not_grow_with_the_log(tmp_path, resumer):
    small, big = tmp_path / "small", tmp_path / "big"
    hall_log(small, 1_000)
    hall_log(big, 12_000)
    peak_small = resume_peak(resumer, small)
    peak_big = resume_peak(resumer, big)
    assert resumer.resumed_records == 12_000
    assert peak_big - peak_small < 256 * 1024, (peak_small, peak_big)
