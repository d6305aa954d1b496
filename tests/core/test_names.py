"""Players' names: one rule (core/names.py) for the config, the host's rename and the engine, and
a screen whose cost does not grow with the text it is given."""
from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings, strategies as st
from PIL import ImageFont

from helpers.common import run_cli
from pi_companion.config import ConfigError, parse_config
from pi_companion.core.engine import Engine
from pi_companion.core.events import HostCommand
from pi_companion.core.names import NAME_MAX, REFUSED_CATEGORIES, name_problem
from pi_companion.games import registry
from pi_companion.hub import CommandError, parse_command

# What an attacker or a stray paste puts in a name: NUL, a newline, an escape, RIGHT-TO-LEFT
# OVERRIDE, a bidi isolate, a zero width space, LINE SEPARATOR.
NASTY = ["a\u0000b", "a\nb", "Bo\x1b[2J", "a\u0000\n\u202eb", "\u202eadA", "\u2066x\u2069",
         "a\u200bb", "a\u2028b"]


@given(st.text(min_size=1, max_size=40))
@settings(max_examples=400, deadline=None)
def test_the_rule_refuses_exactly_long_empty_and_invisible_names(text):
    problem = name_problem(text)
    ok = (0 < len(text.strip()) <= NAME_MAX
          and not any(unicodedata.category(c) in REFUSED_CATEGORIES for c in text))
    assert (problem is None) is ok
    if problem is not None:
        assert "\n" not in problem and len(problem) < 120


@pytest.mark.parametrize("name", NASTY + ["x" * (NAME_MAX + 1), " ", ""])
def test_the_config_and_the_host_refuse_the_same_names(name):
    with pytest.raises(ConfigError, match=r"box\.players: (player 2: a name must|must be a list of 2 to 8 non-empty)"):
        parse_config({"box": {"players": ["Ada", name]}})
    with pytest.raises(CommandError, match="a name must"):
        parse_command({"cmd": "rename", "player": 0, "name": name}, ("Ada", "Ben"))
    engine = Engine(registry.get("grab-bag"), ("Ada", "Ben"), {}, 1)
    engine.feed(HostCommand(1.0, "rename", 0, name))     # a log written before the rule
    assert engine.players == ("Ada", "Ben") and engine.notice == "Rename refused"


def test_names_people_use_pass_everywhere():
    names = ["Zoë", "Ana María", "李雷", "Jo-Jo", "O'Neil", "x" * NAME_MAX, "👩\u200d🚀"[0]]
    assert parse_config({"box": {"players": names[:4]}}).players == tuple(names[:4])
    for name in names:
        assert parse_command({"cmd": "rename", "player": 0, "name": name}, ("Ada", "Ben")).name == name


@pytest.mark.parametrize("name, words", [
    ("x" * 3000, "a name must be 1 to 16 characters (this one has 3000)"),
    ("a\u202eb", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("a\\u0000b", "U+0000"),
])
def test_config_check_refuses_a_bad_name_in_one_line(tmp_path, name, words):
    bad = tmp_path / "bad.toml"
    bad.write_text(f'[box]\nplayers = ["Ada", "{name}"]\n', encoding="utf-8")
    out = run_cli("config", "check", str(bad))
    assert out.returncode == 78 and out.stderr.count("\n") == 1, out.stderr
    assert "box.players: player 2:" in out.stderr and words in out.stderr
    assert len(out.stderr) < len(str(bad)) + 150           # never the name itself echoed back


class Budget:
    """Counts the characters Pillow is asked to measure or draw; too many fails the test at
    once (before the fix a frame with a 10 000-character name ran for minutes)."""

    def __init__(self, monkeypatch, limit):
        self.used, self.limit = 0, limit
        for name in ("getbbox", "getmask2", "getlength"):
            real = getattr(ImageFont.FreeTypeFont, name)

            def counted(face, text, *args, _real=real, **kwargs):
                self.used += len(text)
                if self.used > self.limit:
                    raise AssertionError(f"a frame measured more than {self.limit} characters")
                return _real(face, text, *args, **kwargs)
            monkeypatch.setattr(ImageFont.FreeTypeFont, name, counted)


@pytest.mark.parametrize("game", registry.available())
@pytest.mark.parametrize("length", [3000, 10000])
def test_a_frame_costs_the_same_whatever_the_length_of_a_name(monkeypatch, game, length):
    """A name can still come from a log written before the rule (resume folds its header): the
    screens cut text to what a line can show before measuring it."""
    from pi_companion.ui import canvas
    from pi_companion.ui.screens import render
    rules = registry.get(game)
    players = ("W" * length, "\u0301" * length) + tuple(f"p{i}" for i in range(2, rules.min_players))
    engine = Engine(rules, players, {}, 1)
    canvas._bbox.cache_clear()
    canvas._ink.cache_clear()
    budget = Budget(monkeypatch, 200_000)
    frame = render(engine)
    assert frame.size == (128, 64) and frame.getbbox() is not None
    assert budget.used < 200_000
