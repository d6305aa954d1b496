"""Any stream of inputs, in any order, for every game: the engine never raises and its report
stays JSON (the daemon's loop must survive whatever the table or a scenario throws at it)."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_companion.core.engine import Engine
from pi_companion.core.events import BuzzOpened, Edge, EncoderLevel, HallCounts, HallLevel, PuckStatus, Turn
from pi_companion.games import registry
from pi_companion.ui.screens import render

BUTTONS = ["P1", "P2", "P3", "P4", "P5", "P6", "YES", "NO", "MENU"]
NAMES = ("Ada", "Ben", "Cy", "Di", "Ed", "Flo", "Gus", "Hal")
OPTIONS = {
    "grab-bag": [{}, {"variant": "strict", "cards": 3}, {"variant": "all-seekers", "cards": 2, "settle_ms": 0}],
    "hands-up": [{}, {"mode": "quick", "cards": 12, "beat_ms": 300}, {"beat_ms": 0}],
    "all-wound-up": [{}, {"direction": "ccw", "tolerance_steps": 0, "settle_ms": 100, "max_target": 2}],
    "hold-everything": [{}],
    "hold-your-breath": [{}],
}


@st.composite
def tables(draw):
    game = draw(st.sampled_from(sorted(registry.GAMES)))
    rules = registry.get(game)
    n = draw(st.integers(rules.min_players, rules.max_players))
    return game, NAMES[:n], draw(st.sampled_from(OPTIONS[game]))
times = st.floats(min_value=0.0, max_value=30.0, allow_nan=False)
events = st.one_of(
    st.builds(Edge, times, st.sampled_from(BUTTONS), st.booleans()),
    st.builds(Turn, times, st.sampled_from([1, -1])),
    st.builds(HallLevel, times, st.sampled_from(["A", "B"]), st.integers(0, 1)),
    st.builds(EncoderLevel, times, st.sampled_from(["A", "B"]), st.integers(0, 1)),
    st.builds(HallCounts, times, st.sampled_from(["b1", "b2"]), st.integers(-50, 50), st.integers(0, 3)),
    st.builds(PuckStatus, times, st.booleans(), st.sampled_from(["b1", "b2"])),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=tables(), stream=st.lists(events, max_size=80), sort=st.booleans(), end=times)
def test_any_input_stream_is_survived(table, stream, sort, end):
    game, players, options = table
    if sort:                                  # mostly in order, as a table makes them
        stream = sorted(stream, key=lambda e: e.t)
    engine = Engine(registry.get(game), players, options, 5)
    for event in stream:
        engine.feed(event)
        engine.next_deadline()
    engine.advance(end)
    json.dumps(engine.report())
    render(engine)


DEAF_TO_OPENED = sorted(g for g in registry.GAMES if not registry.get(g).hears_buzz_opened)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=st.sampled_from(DEAF_TO_OPENED), data=st.data(), stream=st.lists(events, max_size=80))
def test_a_game_that_does_not_hear_buzz_opened_ignores_it_in_every_state_it_reaches(game, data, stream):
    """The engine makes no `BuzzOpened` for a game whose `hears_buzz_opened` is False (a frozen
    event and a step per buzz): whatever state play takes it to, such a game must leave its
    state as it is and make no effect when it is given one."""
    rules = registry.get(game)
    players = NAMES[:data.draw(st.integers(rules.min_players, rules.max_players))]
    engine = Engine(rules, players, data.draw(st.sampled_from(OPTIONS[game])), 5)
    for event in sorted(stream, key=lambda e: e.t):
        engine.feed(event)
        state = engine.table.game
        after, effects = rules.step(state, BuzzOpened(engine.clock))
        assert (after is state or after == state) and not effects, (game, state)


def test_grab_bag_and_all_wound_up_make_no_buzz_opened_and_hands_up_does():
    assert {"all-wound-up", "grab-bag"} <= set(DEAF_TO_OPENED)
    assert registry.get("hands-up").hears_buzz_opened     # its beats stop when a window opens


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 300) | st.floats(-1, 50, allow_nan=False)
    | st.sampled_from(["P1", "P2", "YES", "NO", "MENU", "A", "B", "grab-bag", "hands-up", "Ada", ""]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["t", "press", "release", "turn", "hall", "level", "x"]), inner, max_size=3),
    max_leaves=12)
scenario_like = st.fixed_dictionaries(
    {"game": st.sampled_from(sorted(registry.GAMES) + ["chess", 3]),
     "players": st.one_of(st.just(["Ada", "Ben", "Cy"]), st.lists(json_values, max_size=4)),
     "events": st.lists(json_values, max_size=6)},
    optional={"options": st.dictionaries(st.sampled_from(["cards", "variant", "mode", "beat_ms", "settle_ms",
                                                          "direction", "bogus"]), json_values, max_size=2),
              "seed": json_values, "end": json_values})


@settings(max_examples=300, deadline=None)
@given(data=scenario_like)
def test_any_scenario_is_a_report_or_one_clear_error(data):
    from pi_companion.replay import ScenarioError, load_scenario, run_scenario
    try:
        scenario = load_scenario(data)
    except ScenarioError as err:
        assert str(err) and "\n" not in str(err)
        return
    json.dumps(run_scenario(scenario))
