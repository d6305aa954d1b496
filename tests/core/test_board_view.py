"""The TV board's words (core/snapshot.py's `moment`, the games' `facts`, players'
`n`/`tune`/`note`), built from real engines: every documented scenario replayed through the
engine, as the hub builds the view on the box."""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from pi_companion.core.snapshot import table_view
from pi_companion.games.all_wound_up import quarters
from pi_companion.core.tunes import DEFAULT_TUNES
from pi_companion.gallery import scenario_engines

ROOT = Path(__file__).resolve().parents[2]
VIEWS = {name: table_view(engine) for name, engine in scenario_engines(ROOT / "docs" / "scenarios")}
KINDS = {"buzz", "wind", "verdict", "beat", "die", "depths", "winners", "text", "card", "menu"}


def test_every_scenario_has_a_moment_in_words_and_is_json():
    for name, view in VIEWS.items():
        m = view["moment"]
        assert m["kind"] in KINDS and m["big"], name
        json.dumps(view)
        assert [p["n"] for p in view["players"]] == list(range(1, len(view["players"]) + 1))
        assert [p["tune"] for p in view["players"]] == list(DEFAULT_TUNES[:len(view["players"])])


def test_a_finished_game_shows_its_winners_and_no_ones_turn():
    finished = {n: v for n, v in VIEWS.items() if v["over"]}
    assert len(finished) >= 6
    for name, view in finished.items():
        assert view["moment"]["kind"] == "winners", name
        assert view["moment"]["names"] == view["winners"]
        assert not any(p["turn"] for p in view["players"]), name


def test_the_wind_verdict_is_held_after_the_check_settles():
    """The OLED keeps the verdict until the next check; so does the view."""
    view = VIEWS["all-wound-up-ccw-strict"]
    assert view["wind"] is None
    assert view["moment"] == {"kind": "verdict", "big": "TOO FEW", "small": "Ben: 1\u00be of 2 turns",
                              "verdict": "too-few", "player": "Ben"}


def test_a_buzz_being_judged_is_the_moment_with_its_margins():
    view = VIEWS["grab-bag-wrong-then-undo"]
    m = view["moment"]
    assert m["kind"] == "buzz" and m["big"] == "Di first!" and m["player"] == "Di"
    assert [o["player"] for o in m["order"]][:2] == ["Di", "Cy"] and m["order"][1]["after_ms"] == 12.0
    assert {"label": "Round", "value": "1"} in view["facts"]
    assert {"label": "Cards left", "value": "12"} in view["facts"]


def test_hands_up_quick_scores_what_wins_and_shows_the_beat():
    quick = VIEWS["hands-up-quick-ending"]
    assert quick["score_label"] == "set aside" and quick["score_wins"] == "low"
    assert [p["score"] for p in quick["players"]] == [4, 0]
    beat = VIEWS["hands-up-police"]["moment"]
    assert beat["kind"] == "beat" and beat["big"] == "Flip 3" and beat["small"] == "last grab: Ben, police"
    assert VIEWS["hands-up-police"]["players"][0]["note"] == "3 face up"


def test_the_depth_board_and_the_die():
    descent = VIEWS["hold-your-breath-descent"]["moment"]
    assert descent["kind"] == "depths" and descent["depths"] == {"Ada": 20, "Ben": 15, "Cy": 10}
    assert {"label": "Now", "value": "going down"} in VIEWS["hold-your-breath-descent"]["facts"]
    turns = VIEWS["hold-everything-first-turns"]
    assert turns["moment"]["big"] == "Cy's turn" and turns["moment"]["player"] == "Cy"


@given(st.integers(min_value=-400, max_value=400))
def test_quarters_say_whole_turns_then_the_quarter(steps):
    text = quarters(steps)
    whole, q = divmod(abs(steps), 4)
    assert text.startswith("\u2212") == (steps < 0)
    body = text.lstrip("\u2212")
    assert body == (str(whole) if whole or not q else "") + ["", "\u00bc", "\u00bd", "\u00be"][q]


def test_a_one_turn_card_is_said_in_the_singular():
    from pi_companion.games.all_wound_up import _turns
    assert (_turns(1), _turns(2), _turns(3)) == ("1 turn", "2 turns", "3 turns")
