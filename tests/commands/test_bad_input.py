"""Bad input never gets a traceback: any config file is a Config that runs, or one line and
exit 78; any scenario file is a report, or one line and exit 2.

The bulk of the examples go through the loader functions (`load_config`, `parse_scenario`)
in-process; a sample, including every input that was seen to crash, goes through the real CLI
(`config check`, `run --pins mock --display dummy`, `replay`) in subprocesses."""
from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from helpers.common import run_cli
from pi_companion.config import SCHEMA, Config, ConfigError, load_config, template_text
from pi_companion.games import registry
from pi_companion.replay import (MAX_EVENTS, MAX_TIME_S, ScenarioError, parse_scenario,
                                 run_scenario)

# FUZZ_EXAMPLES=5000 for a long run; `make test` uses 100 of each.
FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "100")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def one_line(text: str) -> bool:
    return text.count("\n") == 1 and text.endswith("\n") and "Traceback" not in text


# ---------------------------------------------------------------- a TOML writer for the fuzzer

class Raw(str):
    """A value written as it is (a 5 000-digit number, `nan`, a malformed token)."""


def toml_value(value: object) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return {"inf": "inf", "-inf": "-inf", "nan": "nan"}.get(repr(value), repr(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_key(key: str) -> str:
    return key if key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key) else toml_value(key)


def toml_text(doc: dict[str, dict[str, object]]) -> str:
    lines = []
    for section, body in doc.items():
        lines.append(f"[{toml_key(section)}]")
        lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in body.items()]
    return "\n".join(lines) + "\n"


no_surrogates = st.characters(exclude_categories=["Cs"])
names = st.sampled_from(["Ada", "Ben", "Cy", "Zoë", "Di", "Ed", "Flo", "Gus", "Hal", ""]) | st.text(no_surrogates, max_size=6)
long_digits = st.integers(4290, 5000).map(lambda n: Raw("1" + "0" * n))
scalars = (st.booleans() | st.integers(-3, 300) | st.integers() | st.floats() | long_digits
           | st.sampled_from(["grab-bag", "hands-up", "hold-everything", "dummy", "none", "puck",
                              "8players", "4players", "/nonexistent/map.toml", "info", "debug",
                              "/tmp/a\x00b", "", "Zoë"])
           | st.text(no_surrogates, max_size=8))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(no_surrogates, max_size=4), inner, max_size=3), max_leaves=10)
known_keys = {section: list(keys) for section, keys in SCHEMA.items()}
known_keys["pins"] = ["P1", "P5", "P8", "YES", "LED5", "PIEZO", "HALL_A"]


@st.composite
def config_docs(draw) -> dict[str, dict[str, object]]:
    """Mostly the real sections and keys with values of every type, sometimes nonsense."""
    doc: dict[str, dict[str, object]] = {}
    for section in draw(st.lists(st.sampled_from([*known_keys, "games.grab-bag", "games.hands-up", "bogus"]),
                                 max_size=4, unique=True)):
        keys = known_keys.get(section, ["cards", "variant", "beat_ms", "mode", "x"])
        body = {}
        for key in draw(st.lists(st.sampled_from(keys) | st.text(no_surrogates, min_size=1, max_size=4),
                                 max_size=3, unique=True)):
            if key == "players":
                body[key] = draw(st.lists(names, min_size=0, max_size=9) | values)
            elif section == "pins":
                body[key] = draw(st.integers(0, 30) | values)
            else:
                body[key] = draw(values)
        doc[section] = body
    return doc


PLAUSIBLE = {
    "game": st.sampled_from(sorted(registry.GAMES)), "seed": st.integers(0, 2**63 - 1),
    "players": st.lists(names, min_size=2, max_size=8, unique=True),
    "log_level": st.sampled_from(["debug", "info", "warning", "error"]), "history": st.integers(0, 30),
    "pinmap": st.sampled_from(["4players", "8players"]), "debounce_ms": st.floats(5, 50),
    "driver": st.sampled_from(["dummy", "none"]), "i2c_address": st.sampled_from([0x3C, 0x3D, 0x3E]),
    "rotate": st.integers(0, 3), "enabled": st.booleans(), "source": st.just("gpio"),
}


@st.composite
def plausible_configs(draw) -> dict[str, dict[str, object]]:
    """Real keys with values that are mostly right: most of these are accepted and must run."""
    doc: dict[str, dict[str, object]] = {}
    for section, keys in SCHEMA.items():
        for key in draw(st.lists(st.sampled_from(list(keys)), max_size=3, unique=True)):
            if key in PLAUSIBLE:
                doc.setdefault(section, {})[key] = draw(PLAUSIBLE[key])
    return doc


deep = st.integers(100, 3000).map(lambda n: "a = " + "[" * n + "]" * n + "\n")
config_texts = st.one_of(
    plausible_configs().map(lambda doc: toml_text(doc).encode("utf-8")),
    config_docs().map(lambda doc: toml_text(doc).encode("utf-8")),
    config_docs().map(lambda doc: toml_text(doc).encode("latin-1", "replace")),
    st.binary(max_size=200),
    deep.map(str.encode),
    st.tuples(st.just(template_text().encode()), st.integers(0, len(template_text()) - 1), st.integers(0, 255))
    .map(lambda t: t[0][:t[1]] + bytes([t[2]]) + t[0][t[1] + 1:]),
)


def runs(config: Config, state_dir: Path) -> None:
    """What `run` does with an accepted config, in-process: the real Box on mock pins."""
    from dataclasses import replace

    from gpiozero.pins.mock import MockFactory, MockPWMPin

    from pi_companion.box import Box
    from pi_companion.assemble import make_display
    from pi_companion.gamelog import GameLog
    factory = MockFactory(pin_class=MockPWMPin)
    config = replace(config, state_dir=str(state_dir), seed=config.seed or 1)
    box = Box(config, factory, make_display("dummy", config), store=GameLog(config.state_dir, config.history))
    try:
        for name, pin in config.pin_map().items():
            if name in (f"P{i}" for i in range(1, len(config.players) + 1)):
                factory.pin(pin).drive_low()
                factory.pin(pin).drive_high()
        box.pump()
        assert box.handled >= 2 * len(config.players)
    finally:
        box.close()
        factory.reset()


@FUZZ
@given(raw=config_texts)
@example(raw=b'[box]\nplayers = ["Zo\xeb", "Ben"]\n')            # Latin-1
@example(raw=b"[box]\nseed = " + b"9" * 5000 + b"\n")
@example(raw=b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n")
@example(raw=b'[box]\nstate_dir = "/tmp/a\\u0000b"\n')
@example(raw=b'[box]\nplayers = ["A", "B", "C", "D", "E"]\npinmap = "8players"\ngame = "hands-up"\n')
@example(raw=b'["a\\nb"]\nx = 1\n')
def test_any_config_is_accepted_and_runs_or_one_line(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("c") / "config.toml"
    path.write_bytes(raw)
    try:
        config = load_config(path, must_exist=True)
    except ConfigError as err:
        assert str(err) and "\n" not in str(err) and "\r" not in str(err)
        event("rejected")
        return
    event("accepted")
    runs(config, tmp_path_factory.mktemp("state"))


# The inputs that were seen to crash, and a good config, through the real CLI.
CLI_CONFIGS = [
    (b'[box]\nplayers = ["Zo\xeb", "Ben"]\n', "not UTF-8 (byte 0xeb at line 2 column 15)"),
    (b"[box]\nseed = " + b"9" * 5000 + b"\n", "more than 4300 digits"),
    (b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deeply"),
    (b'[box]\nstate_dir = "/tmp/a\\u0000b"\n', "box.state_dir: must not contain control characters"),
    (b'[box]\nstate_dir = ""\n', "box.state_dir: must not be empty"),
    (b'[box]\ngame = "hands-up"\nplayers = ["A", "B", "C", "D", "E", "F"]\n', "'E' (player 5) has no button"),
    (b'[box]\npinmap = "6players"\n', "box.pinmap: must be 4players, 8players or the absolute path"),
    (b'[box]\nplayers = ["A", "B", "C", "D", "E"]\npinmap = "8players"\n', "Grab Bag takes 2 to 4 players"),
]


@pytest.mark.parametrize("raw,message", CLI_CONFIGS, ids=[m[:30] for _, m in CLI_CONFIGS])
def test_bad_configs_through_check_and_run(tmp_path, raw, message):
    path = tmp_path / "config.toml"
    path.write_bytes(raw)
    for args in (["config", "check", str(path)],
                 ["run", "--config", str(path), "--pins", "mock", "--display", "dummy"]):
        out = run_cli(*args)
        assert out.returncode == 78, f"a bad config must exit 78 (EX_CONFIG: systemd does not restart it), got {out.returncode}: {out.stderr}"
        assert one_line(out.stderr) and message in out.stderr, out.stderr
        assert out.stdout == ""


def start_run(tmp_path: Path, config: Path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify.sock"))
    sock.settimeout(20)
    proc = subprocess.Popen([sys.executable, "-m", "pi_companion", "run", "--pins", "mock", "--display",
                             "dummy", "--config", str(config)],
                            env={**os.environ, "NOTIFY_SOCKET": str(tmp_path / "notify.sock")},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, sock


@pytest.mark.parametrize("body", [
    '[box]\nplayers = ["Zoë", "Ben", "Cy"]\n',
    '[box]\ngame = "hands-up"\npinmap = "8players"\nplayers = ["A", "B", "C", "D", "E", "F", "G", "H"]\n',
])
def test_configs_that_check_accepts_run(tmp_path, body):
    path = tmp_path / "config.toml"
    path.write_text(body + f'state_dir = "{tmp_path / "state"}"\n', encoding="utf-8")
    (tmp_path / "state").mkdir()
    assert run_cli("config", "check", str(path)).returncode == 0
    proc, sock = start_run(tmp_path, path)
    try:
        while sock.recv(4096) != b"READY=1":
            pass
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()
        sock.close()


# ---------------------------------------------------------------- scenarios

def json_text(value: object) -> str:
    """JSON with room for Raw tokens (huge numbers, NaN) where json.dumps would not put them."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(json_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {json_text(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)     # lone surrogates become \ud800 escapes, as a hostile file has them


json_scalars = (st.none() | st.booleans() | st.integers(-5, 300) | st.integers() | st.floats(-1, 60)
                | st.floats() | long_digits | st.sampled_from([Raw("1e308"), Raw("-0"), Raw("NaN"), Raw("Infinity")])
                | st.sampled_from(["P1", "P2", "P5", "YES", "NO", "MENU", "A", "B", "grab-bag", "hands-up", "Ada"])
                | st.text(max_size=5))
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.sampled_from(["t", "press", "release", "turn", "hall", "level", "x"])
                                             | st.text(max_size=3), inner, max_size=3), max_leaves=10)
small_times = st.floats(0, 40) | st.integers(0, 40)
events = st.lists(st.fixed_dictionaries({"t": small_times | json_values},
                                        optional={"press": st.sampled_from(["P1", "P2", "P3", "YES", "NO"]) | json_values,
                                                  "release": st.sampled_from(["P1", "P2", "YES", "NO"])}), max_size=12)


@st.composite
def scenario_docs(draw) -> dict[str, object]:
    game = draw(st.sampled_from(sorted(registry.GAMES)) | json_values)
    doc = {"game": game,
           "players": draw(st.just(["Ada", "Ben", "Cy"]) | st.lists(st.text(max_size=4) | json_values, max_size=9)),
           "events": draw(events | json_values)}
    for key, strategy in (("seed", st.integers() | json_values), ("end", small_times | json_values),
                          ("options", st.dictionaries(st.sampled_from(["cards", "beat_ms", "mode", "variant", "x"]),
                                                      json_values, max_size=2))):
        if draw(st.booleans()):
            doc[key] = draw(strategy)
    return doc


@st.composite
def plausible_scenarios(draw) -> dict[str, object]:
    """Valid shapes with mostly valid values: most of these are accepted and must replay."""
    game = draw(st.sampled_from(sorted(registry.GAMES)))
    rules = registry.get(game)
    players = draw(st.lists(st.text(min_size=1, max_size=5).filter(str.strip), unique=True,
                            min_size=rules.min_players, max_size=rules.max_players))
    buttons = [f"P{i}" for i in range(1, len(players) + 1)] + ["YES", "NO", "MENU"]
    event = st.one_of(st.fixed_dictionaries({"t": small_times, "press": st.sampled_from(buttons)}),
                      st.fixed_dictionaries({"t": small_times, "release": st.sampled_from(buttons)}),
                      st.fixed_dictionaries({"t": small_times, "turn": st.sampled_from([1, -1])}),
                      st.fixed_dictionaries({"t": small_times, "hall": st.sampled_from(["A", "B"]),
                                             "level": st.integers(0, 1)}))
    doc = {"game": game, "players": players, "events": draw(st.lists(event, max_size=20)),
           "seed": draw(st.integers(-(2**63), 2**64 - 1))}
    if draw(st.booleans()):
        doc["end"] = draw(small_times)
    return doc


scenario_bytes = st.one_of(
    plausible_scenarios().map(lambda d: json_text(d).encode("utf-8", "surrogatepass")),
    scenario_docs().map(lambda d: json_text(d).encode("utf-8", "surrogatepass")),
    scenario_docs().map(lambda d: json.dumps(d, ensure_ascii=False, default=str).encode("latin-1", "replace")),
    st.binary(max_size=200),
    st.integers(50, 5000).map(lambda n: ('{"game": "grab-bag", "players": ["A", "B"], "events": '
                                         + "[" * n + "]" * n + "}").encode()),
)


@FUZZ
@given(raw=scenario_bytes)
@example(raw=b'{"game": [], "players": ["A", "B"], "events": []}')
@example(raw=b'{"game": "grab-bag", "players": ["Zo\xeb", "B"], "events": []}')
@example(raw=b'{"game": "grab-bag", "players": ["\\ud800", "B"], "events": []}')
@example(raw=b'{"game": "grab-bag", "players": ["A", "B"], "events": [], "seed": 1' + b"0" * 5000 + b"}")
@example(raw=b'{"game": "grab-bag", "players": ["A", "B"], "events": [], "seed": 1' + b"0" * 4000 + b"}")
@example(raw=b'{"game": "hands-up", "players": ["A", "B"], "events": [], "end": 1e308}')
@example(raw=b'{"game": "hands-up", "players": ["A", "B"], "events": [{"t": 1' + b"0" * 400 + b', "press": "P1"}]}')
def test_any_scenario_is_a_report_or_one_line(raw):
    try:
        scenario = parse_scenario(raw)
    except ScenarioError as err:
        assert str(err) and "\n" not in str(err) and "\r" not in str(err)
        event("rejected")
        return
    event("accepted")
    report = run_scenario(scenario)
    json.dumps(report, ensure_ascii=False).encode("utf-8")      # what the CLI prints


CLI_SCENARIOS = [
    (b'{"game": [], "players": ["A", "B"], "events": []}', "game: unknown game []"),
    (b'{"game": "grab-bag", "players": ["Zo\xeb", "B"], "events": []}', "not UTF-8"),
    (b'{"game": "grab-bag", "players": ["\\ud800", "B"], "events": []}', "lone surrogate"),
    (b"[" * 100000 + b"]" * 100000, "nested more than"),
    (b'{"game": "grab-bag", "players": ["A", "B"], "events": [], "seed": 1' + b"0" * 5000 + b"}",
     "more than 4300 digits"),
    (b'{"game": "grab-bag", "players": ["A", "B"], "events": [], "seed": 1' + b"0" * 40 + b"}",
     "seed: must be a 64-bit integer"),
    (b'{"game": "hands-up", "players": ["A", "B"], "events": [], "end": 1e308}',
     f"end: must be a number of seconds from 0 to {MAX_TIME_S:.0f}"),
    (b'{"game": "hands-up", "players": ["A", "B"], "events": [], "end": NaN}', "NaN is not a JSON number"),
    (json.dumps({"game": "grab-bag", "players": ["A", "B"],
                 "events": [{"t": 1, "press": "YES"}] * (MAX_EVENTS + 1)}).encode(), "events: more than"),
]


@pytest.mark.parametrize("raw,message", CLI_SCENARIOS, ids=[m[:30] for _, m in CLI_SCENARIOS])
def test_bad_scenarios_through_replay(tmp_path, raw, message):
    path = tmp_path / "s.json"
    path.write_bytes(raw)
    out = run_cli("replay", str(path))
    assert out.returncode == 2 and out.stdout == ""
    assert one_line(out.stderr) and message in out.stderr, out.stderr[-300:]


def test_a_name_with_an_accent_replays():
    raw = '{"game": "grab-bag", "players": ["Zoë", "Bjørn"], "events": [{"t": 1, "press": "P2"}], "end": 2}'
    out = run_cli("replay", "-", stdin=raw)
    assert out.returncode == 0 and json.loads(out.stdout)["last_buzz"]["winner"] == "Bjørn"


def test_time_at_the_limit_is_accepted():
    scenario = parse_scenario(json.dumps({"game": "grab-bag", "players": ["A", "B"], "end": MAX_TIME_S,
                                          "events": [{"t": MAX_TIME_S, "press": "P1"}]}).encode())
    assert scenario.end == MAX_TIME_S and math.isclose(scenario.events[0].t, MAX_TIME_S)
    with pytest.raises(ScenarioError):
        parse_scenario(json.dumps({"game": "grab-bag", "players": ["A", "B"], "end": MAX_TIME_S + 0.001,
                                   "events": []}).encode())


def test_a_config_nested_too_deeply_runs_no_finalizer_at_the_recursion_limit(tmp_path, monkeypatch):
    """tomllib meets "nested too deeply" at the interpreter's recursion limit. A garbage collection
    down there ran other objects' finalizers with no stack left (the full suite failed on 66
    unraisable exceptions whose reporting hit the limit: garbage of earlier tests): the parse
    must not collect garbage, whatever the process holds."""
    import gc
    import sys

    import pi_companion.config as config_module

    parsing = []
    real_loads = config_module.tomllib.loads

    def loads(text):
        for _ in range(300):
            Cycle()                             # cyclic garbage, waiting for a collection
        gc.set_threshold(1, 1, 1)               # a collection at the parse's next allocation
        parsing.append(True)
        try:
            return real_loads(text)
        finally:
            parsing.pop()

    class Cycle:
        def __init__(self):
            self.me = self

        def __del__(self):
            raise ValueError("finalized")      # unraisable: the hook says where it ran

    path = tmp_path / "config.toml"
    path.write_bytes(b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n")
    ran = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: ran.append("in the parse" if parsing else "after"))
    monkeypatch.setattr(config_module.tomllib, "loads", loads)
    old = gc.get_threshold()
    gc.collect()
    try:
        with pytest.raises(ConfigError, match="nested too deeply"):
            load_config(path, must_exist=True)
    finally:
        gc.set_threshold(*old)
        gc.collect()
    assert ran and "in the parse" not in ran, ran.count("in the parse")
