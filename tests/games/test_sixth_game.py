"""Adding a game is its rules module, its screen module and one line of the registry's list
(games/registry.py's `GAMES`), nothing else. Tap Race, a sixth game made here (first to tap
its button `target` times wins), is put in as those three and nothing more; then it replays,
draws on the OLED, shows its score on the big screen, is offered by "Change game", is taken
by the config, and its player range is checked, each through the code every game goes by."""
from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

import pytest

from pi_companion.config import ConfigError, check_game, parse_config
from pi_companion.core.engine import Engine
from pi_companion.core.events import Action, PlayerPress
from pi_companion.core.game import NO_EFFECTS, Effects, Game, Option, players_problem
from pi_companion.core.snapshot import table_view
from pi_companion.gallery import choose
from pi_companion.games import registry
from pi_companion.games.base import check_known, opt_int
from pi_companion.replay import ScenarioError, load_scenario, run_scenario
from pi_companion.ui.canvas import centred, new_frame
from pi_companion.ui.screens import render


@dataclass(frozen=True)
class TapRace:
    players: tuple[str, ...]
    target: int
    taps: tuple[int, ...]

    @property
    def over(self) -> bool:
        return max(self.taps) >= self.target


class TapRaceGame(Game):
    name = "tap-race"
    title = "Tap Race"
    min_players = 2
    max_players = 3
    hears_buzz_opened = False
    option_names = frozenset({"target"})
    options = (Option("target", "Taps to win", "int", 3, 1, 9),)
    score_key, score_label, score_wins = "taps", "taps", "high"

    def new_game(self, players: tuple[str, ...], options: Any, seed: int) -> TapRace:
        check_known(options, self.option_names)
        return TapRace(tuple(players), opt_int(options, "target", 3, 1, 9), (0,) * len(players))

    def step(self, state: TapRace, action: Action) -> tuple[TapRace, Effects]:
        if isinstance(action, PlayerPress) and not state.over:
            taps = tuple(n + (i == action.player) for i, n in enumerate(state.taps))
            return replace(state, taps=taps), NO_EFFECTS
        return state, NO_EFFECTS

    def report(self, state: TapRace) -> dict[str, Any]:
        return {"over": state.over, "phase": "over" if state.over else "tapping",
                "winners": [state.taps.index(max(state.taps))] if state.over else [],
                "taps": dict(zip(state.players, state.taps))}


def draw_tap_race(draw: Any, view: Any) -> None:
    centred(draw, 20, " ".join(str(n) for n in view.game.taps), 16)


@pytest.fixture
def tap_race(monkeypatch: pytest.MonkeyPatch) -> Game:
    """Tap Race's two modules, as if games/tap_race.py and ui/tap_race.py were on disk, and its
    line in the registry's list."""
    rules, screen = ModuleType("pi_companion.games.tap_race"), ModuleType("pi_companion.ui.tap_race")
    rules.GAME = TapRaceGame()              # type: ignore[attr-defined]
    screen.draw = draw_tap_race             # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, rules.__name__, rules)
    monkeypatch.setitem(sys.modules, screen.__name__, screen)
    monkeypatch.setitem(registry.GAMES, "tap-race", "tap_race")
    return registry.get("tap-race")


def taps(*buttons: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for i, button in enumerate(buttons):
        events += [{"t": 1.0 + i, "press": button}, {"t": 1.1 + i, "release": button}]
    return events


def tapped(*buttons: str) -> Engine:
    """A two-player Tap Race after these taps."""
    engine = registry.new_engine("tap-race", ("Ada", "Ben"), {}, 1)
    for event in load_scenario({"game": "tap-race", "players": ["Ada", "Ben"], "events": taps(*buttons)}).events:
        engine.feed(event)
    return engine


def test_a_replay_scenario_of_it_runs(tap_race):
    scenario = load_scenario({"game": "tap-race", "players": ["Ada", "Ben"], "options": {"target": 2},
                              "events": taps("P1", "P2", "P1")})
    report = run_scenario(scenario)
    assert (report["over"], report["winners"], report["taps"]) == (True, ["Ada"], {"Ada": 2, "Ben": 1})


def test_its_oled_frame_is_its_own_screen(tap_race):
    engine = tapped("P2")
    image, draw = new_frame()
    draw_tap_race(draw, engine)
    assert render(engine).tobytes() == image.tobytes()


def test_its_board_snapshot_shows_its_score(tap_race):
    view = table_view(tapped("P2"))
    assert (view["game"], view["title"], view["score_label"], view["score_wins"]) == \
        ("tap-race", "Tap Race", "taps", "high")
    assert [(p["name"], p["score"]) for p in view["players"]] == [("Ada", 0), ("Ben", 1)]
    assert view["moment"] == {"kind": "text", "big": "tapping", "small": ""}


def test_change_game_offers_it_and_greys_it_for_too_many_players(tap_race):
    engine = registry.new_engine("grab-bag", ("Ada", "Ben", "Cy"), {}, 1)
    choose(engine, "switch")
    assert ("switch:tap-race", "Tap Race") in engine.menu.items
    assert "switch:tap-race" not in engine.menu.disabled
    four = registry.new_engine("hands-up", ("Ada", "Ben", "Cy", "Di"), {}, 1)
    choose(four, "switch")
    assert dict(four.menu.why)["switch:tap-race"] == "2 to 3 players, not 4"


def test_the_config_takes_it_and_its_options(tap_race):
    config = parse_config({"box": {"game": "tap-race", "players": ["Ada", "Ben"]},
                           "games": {"tap-race": {"target": 5}}})
    check_game(config)
    assert (config.game, config.options_for("tap-race")) == ("tap-race", {"target": 5})
    with pytest.raises(ConfigError, match="games.tap-race.target: must be an integer from 1 to 9"):
        parse_config({"games": {"tap-race": {"target": 10}}})


def test_its_player_range_is_checked_by_the_one_function(tap_race):
    assert players_problem(tap_race, 3) is None
    assert players_problem(tap_race, 4) == "Tap Race takes 2 to 3 players"
    with pytest.raises(ConfigError, match="box.players: Tap Race takes 2 to 3 players"):
        check_game(parse_config({"box": {"game": "tap-race", "players": ["A", "B", "C", "D"]}}))
    with pytest.raises(ScenarioError, match="players: Tap Race takes 2 to 3 players, got 4"):
        load_scenario({"game": "tap-race", "players": ["A", "B", "C", "D"], "events": []})
