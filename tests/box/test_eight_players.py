"""Five to eight players get buttons: the box is told its pin map (`box.pinmap`), and presses on
P5-P8 reach the game through the real Box on gpiozero mock pins (virtual clock)."""
from __future__ import annotations

import pytest

from helpers.common import Clock, VirtualFactory, VirtualPin, run_cli
from helpers import boxes
from pi_companion.box import Wake
from pi_companion.config import Config, ConfigError, check_buttons, load_config
from pi_companion.hw.pinmap import load_pinmap

EIGHT = ("Ada", "Ben", "Cy", "Di", "Eve", "Flo", "Gus", "Hal")


@pytest.fixture
def factory():
    Clock.now = 0.0
    f = VirtualFactory(pin_class=VirtualPin)
    yield f
    f.reset()


def make_box(factory, game, **options):
    config = Config(game=game, players=EIGHT, pinmap="8players", seed=4, sound=False,
                    games={game: options} if options else {})
    return boxes.make_box(factory, config=config, display="dummy")


def at(box, t):
    """Run the box's clock on to `t` and fire what is due."""
    Clock.now = t
    box.queue.put(Wake())
    box.pump()


def tap(box, factory, name, t, hold=0.08):
    pin = factory.pin(load_pinmap("8players")[name])
    at(box, t)
    pin.drive_low()
    box.pump()
    at(box, t + hold)
    pin.drive_high()
    box.pump()


def test_hands_up_with_eight_players_a_grab_on_p7_wins(factory):
    box = make_box(factory, "hands-up", beat_ms=300)
    try:
        assert set(box.inputs) >= {f"P{i}" for i in range(1, 9)}
        at(box, 0.35)                                        # one beat: every hand flipped a card
        assert box.engine.report()["flips"] == 1
        tap(box, factory, "P7", 0.40)
        at(box, 0.50)
        report = box.engine.report()
        assert report["phase"] == "judging" and report["last_buzz"]["winner"] == "Gus"
        tap(box, factory, "NO", 0.60)                        # false alarm: Gus takes the face-up cards
        report = box.engine.report()
        assert report["phase"] == "flipping" and report["face_up"]["Gus"] == 0
        assert report["hands"]["Gus"] > report["hands"]["Hal"]
    finally:
        box.close()


def test_hold_everything_with_eight_players_p5_to_p8_reach_the_game(factory):
    box = make_box(factory, "hold-everything")
    try:
        for button, name in (("P5", "Eve"), ("P8", "Hal"), ("P6", "Flo")):
            tap(box, factory, button, Clock.now + 0.2)
            assert box.engine.report()["showing"] == name
        tap(box, factory, "YES", Clock.now + 0.2)                 # start play: Ada's turn
        assert box.engine.report()["phase"] == "turn"
        tap(box, factory, "P7", Clock.now + 0.2)                  # Gus dropped something
        tap(box, factory, "NO", Clock.now + 0.2)
        assert box.engine.report()["extras"]["Gus"] == 1
        tap(box, factory, "P8", Clock.now + 0.2, hold=2.2)        # Hal holds 2 s: he wins
        report = box.engine.report()
        assert report["over"] and report["winners"] == ["Hal"]
    finally:
        box.close()


def test_a_player_without_a_button_is_rejected_naming_the_player(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[box]\ngame = "hands-up"\nplayers = ["A", "B", "C", "D", "Eve"]\n')
    with pytest.raises(ConfigError, match=r"box.players: 'Eve' \(player 5\) has no button"):
        load_config(path)
    out = run_cli("config", "check", str(path))
    assert out.returncode == 78 and out.stderr.count("\n") == 1 and "'Eve' (player 5)" in out.stderr
    path.write_text(path.read_text() + 'pinmap = "8players"\n')
    assert load_config(path).pin_map()["P5"] == 4
    # a [pins] entry gives one more player a button on the 4-player map
    path.write_text('[box]\ngame = "hands-up"\nplayers = ["A", "B", "C", "D", "Eve"]\n[pins]\nP5 = 4\n')
    assert load_config(path).players[4] == "Eve"


def test_pinmap_names_a_file(tmp_path):
    mine = tmp_path / "mine.toml"
    mine.write_text((load_pinmap.__globals__["default_pinmap_text"]("8players"))
                    .replace("P8 = 15\n", "").replace("LED8 = 10\n", ""))
    config = tmp_path / "config.toml"
    config.write_text(f'[box]\ngame = "hands-up"\npinmap = "{mine}"\nplayers = {list(EIGHT[:7])}\n'
                      .replace("'", '"'))
    assert "P8" not in load_config(config).pin_map()
    config.write_text(config.read_text().replace('"Gus"]', '"Gus", "Hal"]'))
    with pytest.raises(ConfigError, match=r"'Hal' \(player 8\) has no button: pin map /.*mine.toml wires P1-P7"):
        load_config(config)
    for bad, why in (("7players", "must be 4players, 8players or the absolute path"),
                     ("/nowhere.toml", "cannot read /nowhere.toml")):
        config.write_text(f'[box]\npinmap = "{bad}"\n')
        with pytest.raises(ConfigError, match=why):
            load_config(config)


def test_run_override_of_players_is_checked_too(tmp_path):
    out = run_cli("run", "--config", "/dev/null", "--game", "hands-up", "--players", "A,B,C,D,E",
                  "--pins", "mock", "--display", "none", "--state-dir", str(tmp_path))
    assert out.returncode == 78 and out.stderr.count("\n") == 1
    assert "--players: 'E' (player 5) has no button" in out.stderr


def test_check_buttons_returns_the_map():
    pins = check_buttons(Config(players=EIGHT, pinmap="8players"))
    assert [pins[f"P{i}"] for i in range(5, 9)] == [4, 8, 7, 15]
