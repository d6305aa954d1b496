"""Per-player buzz tunes: every player's buzz sounds different, configurable, played in the button test."""
from __future__ import annotations

import time

import pytest

from helpers.common import wait_for
from pi_companion.config import ConfigError, parse_config
from pi_companion.core.engine import Engine
from pi_companion.core.events import Edge, Sound
from pi_companion.core.tunes import DEFAULT_TUNES, parse_tune
from pi_companion.gallery import choose
from pi_companion.games import registry
from pi_companion.hw.pinmap import load_pinmap
from pi_companion.ui.screens import render


def buzz_sound_of(player: int) -> list[Sound]:
    engine = Engine(registry.get("grab-bag"), ("Ada", "Ben", "Cy", "Di"), {}, 1)
    engine.feed(Edge(1.0, f"P{player + 1}", True))
    return [e for e in engine.advance(1.1) if isinstance(e, Sound)]


def test_each_player_buzzes_with_their_own_sound():
    sounds = {p: buzz_sound_of(p) for p in (1, 2, 3)}           # the three seekers
    assert sounds[1] == [Sound("buzz:P2")] and sounds[3] == [Sound("buzz:P4")]
    assert len({s[0] for s in sounds.values()}) == 3


def test_the_eight_default_tunes_are_distinct_and_playable():
    assert len(DEFAULT_TUNES) == 8 and len(set(DEFAULT_TUNES)) == 8
    shapes = {tuple(n for n, _ in parse_tune(t) if n) for t in DEFAULT_TUNES}
    assert len(shapes) == 8


def test_a_players_tune_plays_its_notes_on_the_piezo_pin(mock_factory):
    from pi_companion.hw.outputs import Piezo
    piezo = Piezo(load_pinmap()["PIEZO"], mock_factory, ("C5 E5", "G4 G5"))
    pin = mock_factory.pin(load_pinmap()["PIEZO"])
    seen = set()
    try:
        piezo.play("buzz:P2")                                    # G4 then G5
        end = time.monotonic() + 2
        while time.monotonic() < end and len(seen) < 2:
            if pin.frequency:
                seen.add(round(pin.frequency))
            time.sleep(0.002)
        assert seen >= {392, 784}
        assert wait_for(lambda: not pin.frequency or pin.state == 0)
    finally:
        piezo.close()


def test_tunes_are_set_in_the_config_and_checked():
    config = parse_config({"sound": {"tunes": {"P3": "A4 A4 A5"}}})
    assert config.tunes[2] == "A4 A4 A5" and config.tunes[0] == DEFAULT_TUNES[0]
    for bad, words in (({"P9": "C5"}, "P9: must be P1 to P8"), ({"P1": "C9"}, "outside the piezo's range"),
                       ({"P1": "do re"}, "is not a note"), ({"P1": ""}, "1 to 4 notes"),
                       ({"P1": 5}, "must be a string")):
        with pytest.raises(ConfigError, match="sound.tunes") as err:
            parse_config({"sound": {"tunes": bad}})
        assert words in str(err.value) and "\n" not in str(err.value)


def test_the_button_test_plays_and_shows_the_pressed_players_tune(text_boxes):
    engine = Engine(registry.get("grab-bag"), ("Ada", "Ben", "Cy"), {}, 1)
    choose(engine, "test")
    effects = engine.feed(Edge(3.0, "P2", True))
    assert Sound("buzz:P2") in effects
    text_boxes.clear()
    render(engine)
    assert f"P2 tune: {DEFAULT_TUNES[1]}" in [text for text, _ in text_boxes]
