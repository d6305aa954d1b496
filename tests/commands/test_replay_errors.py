"""Invalid scenarios: exit 2, nothing on stdout, one line on stderr naming the problem."""
from __future__ import annotations

import json

import pytest

from pi_companion.cli import main

GOOD = {"game": "grab-bag", "players": ["Ada", "Ben", "Cy"], "events": []}


def with_(**changes):
    data = dict(GOOD)
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


CASES = [
    (with_(events=[{"t": 1, "press": "P9"}]), 'event 0: unknown button "P9"'),
    (with_(events=[{"t": 1, "press": "P4"}]), 'event 0: button "P4" has no player'),
    (with_(events=[{"t": 1, "press": "P1"}, {"t": 2, "press": "P1", "colour": "red"}]),
     "event 1: unknown field 'colour'"),
    (with_(events=[{"t": 1}]), "event 0: needs exactly one of"),
    (with_(events=[{"t": 1, "press": "P1", "release": "P1"}]), "event 0: needs exactly one of"),
    (with_(events=[{"t": -1, "press": "P1"}]), "event 0: t must be"),
    (with_(events=[{"t": "soon", "press": "P1"}]), "event 0: t must be"),
    (with_(events=[{"t": 1, "turn": 2}]), "event 0: turn must be +1 or -1"),
    (with_(events=[{"t": 1, "hall": "C", "level": 1}]), 'event 0: hall must be "A" or "B"'),
    (with_(events=[{"t": 1, "hall": "A"}]), "event 0: hall events need level 0 or 1"),
    (with_(events=[{"t": 1, "press": "P1", "level": 1}]), "event 0: unexpected field 'level'"),
    (with_(events={"t": 1}), "events: must be a list"),
    (with_(events=None), "events: missing"),
    (with_(game="chess"), "game: unknown game 'chess'"),
    (with_(players=["Ada"]), "players: Grab Bag takes 2 to 4 players, got 1"),
    (with_(players=["Ada", "Ada"]), "players: names must be unique"),
    (with_(players=["Ada", ""]), "players: must be a list of non-empty names"),
    (with_(options={"cards": 0}), "options.cards: must be an integer from 1 to 200"),
    (with_(options={"variant": "chaos"}), "options.variant: must be one of"),
    (with_(options={"jokers": 2}), "options.jokers: unknown option"),
    (with_(options={"first_grab_master": "Zed"}), "options.first_grab_master: must be one of the players"),
    (with_(seed=1.5), "seed: must be an integer"),
    (with_(end=-2), "end: must be a number"),
    (dict(GOOD, extra=1), "extra: unknown key"),
    ([1, 2], "scenario: must be a JSON object"),
]


@pytest.mark.parametrize("data,message", CASES, ids=[c[1][:40] for c in CASES])
def test_invalid_scenario(tmp_path, capsys, data, message):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    assert main(["replay", str(path)]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.count("\n") == 1 and message in out.err


def test_not_json_and_missing_file(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text("{nope")
    assert main(["replay", str(path)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "absent.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
