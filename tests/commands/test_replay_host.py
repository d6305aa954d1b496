"""Replay's host and hotspot events: what the box's game log records for the host's commands and
its own Wi-Fi is what a scenario says, and a replay of it reports what the live box has."""
from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from helpers.boxes import Rig

from pi_companion.core.table import HOST_COMMANDS
from pi_companion.gamelog import open_log
from pi_companion.hub.protocol import FIELDS
from pi_companion.replay import ScenarioError, load_scenario, parse_scenario, run_scenario


def scenario(events, game="grab-bag", players=("Ada", "Ben", "Cy")):
    return {"game": game, "players": list(players), "seed": 1, "events": events}


def test_the_live_boxs_log_replayed_as_a_scenario_gives_its_report(tmp_path):
    rig = Rig(tmp_path)
    try:
        for kind, arg in [("host", {"cmd": "rename", "player": 1, "name": "Bea"}), ("press", "P2"),
                          ("host", {"cmd": "yes"}), ("hotspot", ("games-table", "tabletop-2026", "10.42.0.1")),
                          ("press", "NO"), ("press", "P3"), ("host", {"cmd": "no"}), ("host", {"cmd": "undo"}),
                          ("host", {"cmd": "dial", "delta": 1}), ("hotspot", None), ("press", "P1"),
                          ("host", {"cmd": "rename", "player": 0, "name": "Ava"})]:
            rig.act(kind, arg)
        live = rig.box.engine.report()
        assert rig.box.store.flush()
        with open_log(rig.box.store.path) as reader:
            header, records = reader.header, list(reader.records())
        kinds = {next(k for k in r if k != "t") for r in records}
        assert {"host", "hotspot", "press", "release"} <= kinds <= {"host", "hotspot", "press", "release", "advance"}
        events = [r for r in records if "advance" not in r]
        replayed = run_scenario(load_scenario({"game": header["game"], "players": header["players"],
                                               "options": header["options"], "seed": header["seed"],
                                               "events": events}))
        assert replayed == live
        assert replayed["players"] == ["Ava", "Bea", "Cy"]
    finally:
        rig.close()


def test_a_command_the_hub_would_refuse_does_nothing_and_is_listed():
    report = run_scenario(load_scenario(scenario([
        {"t": 1.0, "host": "rename", "player": 5, "name": "X"},
        {"t": 2.0, "host": "rename", "player": 1, "name": "Cy"},
        {"t": 3.0, "host": "switch", "game": "hands-up", "options": {"beats": 3}},
        {"t": 4.0, "host": "rename", "player": 1, "name": "Bea"},
    ])))
    assert report["players"] == ["Ada", "Bea", "Cy"]
    assert report["refused"] == [{"event": 0, "error": "player must be 0 to 2"},
                                 {"event": 1, "error": "Cy is already playing"},
                                 {"event": 2, "error": report["refused"][2]["error"]}]
    assert report["refused"][2]["error"].startswith("options.beats")
    assert "refused" not in run_scenario(load_scenario(scenario([{"t": 1.0, "host": "yes"}])))


def test_the_hotspot_opens_the_wifi_qr_and_its_menu_entry():
    from pi_companion.games import registry
    events = load_scenario(scenario([{"t": 1.0, "hotspot": {"ssid": "games-table", "address": "10.42.0.1"}},
                                     {"t": 2.0, "press": "NO"}, {"t": 2.1, "release": "NO"}])).events
    engine = registry.new_engine("grab-bag", ("Ada", "Ben", "Cy"), {}, 1)
    engine.feed(events[0])
    assert engine.menu.qr == "wifi" and engine.hotspot == ("games-table", "10.42.0.1")
    for event in events[1:]:
        engine.feed(event)
    assert engine.menu is None
    engine.feed(events[0])                               # the same state again: nothing
    assert engine.menu is None


def test_bad_host_and_hotspot_events_are_one_line_errors():
    cases = [({"t": 1, "host": "fly"}, 'event 0: unknown host command "fly"'),
             ({"t": 1, "host": "rename", "names": ["x"]}, "event 0: unexpected field 'names'"),
             ({"t": 1, "host": "yes", "colour": 1}, "event 0: unknown field 'colour'"),
             ({"t": 1, "hotspot": {"ssid": ""}}, "event 0: hotspot.ssid: 1 to 32 bytes"),
             ({"t": 1, "hotspot": {"ssid": "x", "password": "secret12"}}, 'event 0: hotspot: null or'),
             ({"t": 1, "hotspot": "up"}, 'event 0: hotspot: null or'),
             ({"t": 1, "host": "yes", "press": "P1"}, "event 0: needs exactly one of")]
    for event, said in cases:
        try:
            load_scenario(scenario([event]))
        except ScenarioError as err:
            assert str(err).startswith(said) and "\n" not in str(err), (event, str(err))
        else:
            raise AssertionError(f"{event} was taken")


VALUES = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-3, 9), st.text(max_size=20)),
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                      max_leaves=8)


@settings(max_examples=300)
@given(cmd=st.sampled_from(HOST_COMMANDS + ("wifi", "")),
       fields=st.dictionaries(st.sampled_from(sorted({f for fs in FIELDS.values() for f in fs})), VALUES, max_size=3),
       hotspot=VALUES)
def test_any_host_or_hotspot_event_is_a_report_or_one_clear_error(cmd, fields, hotspot):
    for event in ({"t": 1.0, "host": cmd, **fields}, {"t": 1.0, "hotspot": hotspot}):
        raw = json.dumps(scenario([event, {"t": 2.0, "press": "P2"}, {"t": 2.1, "release": "P2"}])).encode()
        try:
            report = run_scenario(parse_scenario(raw))
        except ScenarioError as err:
            assert str(err) and "\n" not in str(err)
            continue
        assert report["game"] in ("grab-bag",) and isinstance(report.get("refused", []), list)
