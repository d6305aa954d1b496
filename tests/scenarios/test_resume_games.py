"""Resume for every game: a box that played a documented scenario into its log, killed and
restarted, comes back with exactly the report it had (the scenario's own expected keys too)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.common import Clock, VirtualFactory, VirtualPin
from helpers.boxes import make_box

from pi_companion.box import Wake
from pi_companion.config import Config
from pi_companion.gamelog import open_log
from pi_companion.replay import load_scenario
from pi_companion.core.engine import Engine, fold_records
from pi_companion.core.records import header_seats
from pi_companion.games import registry

DOCS = Path(__file__).parents[2] / "docs" / "scenarios"
SCENARIOS = sorted(p for p in DOCS.glob("*.json") if not p.name.endswith(".expected.json"))
# Scenarios after which the live box plays a new game with other players (MENU > Players).
NEW_PLAYERS = {"grab-bag-players-from-the-menu": ("P1", "P2", "P3")}




def box_for(scenario, factory, state_dir):
    config = Config(game=scenario.game, players=scenario.players, seed=scenario.seed, sound=False,
                    games={scenario.game: scenario.options})
    return make_box(factory, state_dir, config=config)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_resume_after_a_power_cut(path, tmp_path):
    scenario = load_scenario(json.loads(path.read_text()))
    Clock.now = 0.0
    factory = VirtualFactory(pin_class=VirtualPin)
    box = box_for(scenario, factory, tmp_path)
    for event in scenario.events:
        Clock.now = max(Clock.now, event.t)
        box.queue.put(Wake(event))
        box.pump()
    if scenario.end is not None:
        Clock.now = max(Clock.now, scenario.end)
        box.queue.put(Wake())
        box.pump()
    before = box.engine.report()
    expected = json.loads(path.with_name(path.stem + ".expected.json").read_text())
    assert box.engine.players == NEW_PLAYERS.get(path.stem, scenario.players)
    if box.engine.players != scenario.players:
        # MENU > Players: the box started a new game with the new players (a replay keeps the
        # scenario's). The first game's log, now in history, folds to the replay's report ...
        box.store.wait()
        (old,) = sorted((tmp_path / "history").glob("*.log"))
        with open_log(old) as reader:
            header, records = reader.header, list(reader.records())
        first = Engine(registry.get(header["game"]), tuple(header["players"]), header["options"], header["seed"],
                       seats=header_seats(header))
        assert fold_records(first, records)[1] is None
        assert {k: first.report()[k] for k in expected} == expected
        assert first.notice == f"New game: {len(box.engine.players)} players"
        # ... and the new game's log resumes below like any other.
        assert before["players"] == list(box.engine.players) and not before["over"]
    else:
        assert {k: before[k] for k in expected} == expected      # the live box agrees with replay
    box.store.close()                                        # the power goes: no clean shutdown
    factory.reset()
    Clock.now += 30.0                                        # ... and comes back later
    again = box_for(scenario, VirtualFactory(pin_class=VirtualPin), tmp_path)
    try:
        # ... the same game; a shutdown the scenario asked for is never carried across a restart
        assert again.resumed and again.engine.report() == {**before, "shutdown_requested": False}
    finally:
        again.close()
