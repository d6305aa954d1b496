"""Screens: every frame of every documented scenario fits 128x64 with no text cut off at the edges."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_companion.core.engine import Engine
from pi_companion.gallery import menu_engines, through_luma
from pi_companion.games import registry
from pi_companion.replay import load_scenario
from pi_companion.ui.screens import render

DOCS = Path(__file__).parents[2] / "docs" / "scenarios"
SCENARIOS = sorted(p for p in DOCS.glob("*.json") if not p.name.endswith(".expected.json"))


def assert_inside(boxes, where):
    for text, (x0, y0, x1, y1) in boxes:
        assert x0 >= 0 and y0 >= 0 and x1 <= 128 and y1 <= 64, f"{where}: {text!r} at {(x0, y0, x1, y1)}"
    boxes.clear()


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_frame_of_a_scenario_fits(path, text_boxes):
    scenario = load_scenario(json.loads(path.read_text()))
    engine = Engine(registry.get(scenario.game), scenario.players, scenario.options, scenario.seed)
    frames = set()
    for index, event in enumerate(scenario.events):
        engine.feed(event)
        image = render(engine)
        assert image.size == (128, 64) and image.mode == "1"
        assert image.getbbox() is not None, f"{path.name} event {index}: blank screen"
        frames.add(image.tobytes())
        assert_inside(text_boxes, f"{path.name} event {index}")
    assert len(frames) > 1 or not scenario.events


def test_menus_rules_cards_and_button_test_fit(text_boxes):
    names = []
    for name, engine in menu_engines():
        image = through_luma(engine)
        assert image.getbbox() is not None
        assert_inside(text_boxes, name)
        names.append(name)
    assert "grab-bag-menu" in names and "grab-bag-rules" in names and "button-test" in names


def test_eight_long_names_fit_where_a_game_takes_eight(text_boxes):
    players = tuple(f"Player{i}longname" for i in range(1, 9))
    for name in registry.available():
        rules = registry.get(name)
        n = rules.max_players
        engine = Engine(rules, players[:n], {}, 3)
        render(engine)
        assert_inside(text_boxes, f"{name} with {n} long names")


def test_the_buzz_screen_shows_name_and_margin():
    from pi_companion.core.events import Edge
    engine = Engine(registry.get("grab-bag"), ("Ada", "Ben", "Cy"), {}, 1)
    engine.feed(Edge(1.0, "P2", True))
    engine.feed(Edge(1.012, "P3", True))
    engine.advance(1.1)
    engine.feed(Edge(1.15, "P3", False))
    plain = render(Engine(registry.get("grab-bag"), ("Ada", "Ben", "Cy"), {}, 1))
    buzz = render(engine)
    assert buzz.tobytes() != plain.tobytes()
    assert engine.table.last_buzz.ordered()[1] == (2, 12.0)


def test_each_scenario_picture_shows_what_its_name_says():
    from pi_companion.gallery import scenario_engines
    shots = dict(scenario_engines(DOCS))
    assert shots["hold-your-breath-descent"].game.phase.startswith("descent")
    assert shots["hold-your-breath-surface-win"].game.phase == "over"


def every_screen():
    """Every frame of every documented scenario, the menus, rules cards and button test, and
    each game with eight long names: the engines that draw them, one at a time."""
    for path in SCENARIOS:
        scenario = load_scenario(json.loads(path.read_text()))
        engine = Engine(registry.get(scenario.game), scenario.players, scenario.options, scenario.seed)
        for index, event in enumerate(scenario.events):
            engine.feed(event)
            yield f"{path.stem} event {index}", engine
    yield from menu_engines()
    players = tuple(f"Player{i}longname" for i in range(1, 9))
    for name in registry.available():
        rules = registry.get(name)
        yield f"{name} long names", Engine(rules, players[:rules.max_players], {}, 3)


def test_cached_text_draws_every_screen_exactly_as_pillow_does(monkeypatch):
    """Strings are drawn from cached masks; each frame must be the one Pillow's own text
    drawing gives, pixel for pixel, on a cold cache and again on a warm one."""
    from pi_companion.ui import canvas
    canvas._ink.cache_clear()
    frames = 0
    for where, engine in every_screen():
        monkeypatch.setattr(canvas, "TEXT_CACHE", False)
        pillow = render(engine).tobytes()
        monkeypatch.setattr(canvas, "TEXT_CACHE", True)
        assert render(engine).tobytes() == pillow, f"{where}: cold cache"
        assert render(engine).tobytes() == pillow, f"{where}: warm cache"
        frames += 1
    assert frames > 400 and canvas._ink.cache_info().hits > 0


def test_cached_text_matches_pillow_anywhere_in_either_ink():
    """The same string at any integer position - off the edges too - in white on black and
    black on white, at every size the screens use."""
    from PIL import Image, ImageDraw

    from pi_companion.ui import canvas
    for size in range(8, 25):
        for text in ("Ada 3", "gyj|Q_", "+0.35 ms", " ", "", "two\nlines"):
            for x, y in ((0, 0), (-5, -7), (120, 58), (37, 21)):
                for ink in (1, 0):
                    a = Image.new("1", (128, 64), 1 - ink)
                    b = Image.new("1", (128, 64), 1 - ink)
                    ImageDraw.Draw(a).text((x, y), text, font=canvas.font(size), fill=ink)
                    canvas.write(ImageDraw.Draw(b), (x, y), text, size, fill=ink)
                    assert a.tobytes() == b.tobytes(), (size, text, x, y, ink)


# ---- players whose names start alike ----

def _cells(frame, y0: int, y1: int, x0: int, cell: int, n: int) -> list[bytes]:
    return [frame.crop((x0 + i * cell, y0, x0 + (i + 1) * cell, y1)).tobytes() for i in range(n)]


def test_eight_players_whose_names_start_alike_are_told_apart_on_hands_up():
    """Eight players leave a Hands Up! column two letters: 'Ben' and 'Bea' both read 'Be', and
    'Sam', 'Sara' and 'Sal' all 'Sa'. Each now ends on a letter of its own: Bn, Ba, Sm, Sr, Sl."""
    from pi_companion.ui.hands_up import LABEL_W, cell_width
    players = ("Ben", "Bea", "Sam", "Sara", "Sal", "Di", "Ed", "Flo")
    engine = Engine(registry.get("hands-up"), players, {}, 1)
    frame = render(engine)
    names = _cells(frame, 0, 11, LABEL_W, cell_width(8), 8)
    assert len(set(names)) == 8, "two players' names look the same"


def test_grab_bag_scores_tell_alexander_from_alexandra():
    """The score line shows three letters a player: 'Ale 0' twice named nobody. The second
    ends on its first letter of its own: 'Ale' and 'Alr'."""
    players = ("Alexander", "Alexandra", "Bo", "Cy")
    engine = Engine(registry.get("grab-bag"), players, {"variant": "standard"}, 1)
    frame = render(engine)
    cells = _cells(frame, 53, 64, 0, 128 // 4, 4)
    assert cells[0] != cells[1]


def test_distinct_short_names_properties():
    from hypothesis import given, settings, strategies as st

    from pi_companion.ui.canvas import distinct

    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.text(alphabet="ABab.é", min_size=1, max_size=6), min_size=1, max_size=8,
                    unique=True), st.integers(1, 4))
    def check(names, k):
        shorten = lambda name: name[:k]  # noqa: E731
        out = distinct(names, shorten, lambda short: len(short) <= k)
        plain = [shorten(n) for n in names]
        assert len(out) == len(names)
        for name, short, made in zip(names, plain, out):
            assert made == short or (len(made) == len(short) and made[:-1] == short[:-1]
                                     and made[-1] in name[len(short) - 1:])
        assert len(set(out)) >= len(set(plain))          # never more alike than before
        changed = [i for i, (a, b) in enumerate(zip(out, plain)) if a != b]
        for i in changed:                                  # a new form is nobody else's
            assert out.count(out[i]) == 1 and out[i] not in plain
    check()


@pytest.mark.parametrize("players", [("Kai", "Lu"), ("Ada", "Ben", "Cy"), ("Ty", "Jo", "Quy", "Bea")])
def test_all_wound_up_guide_line_keeps_its_descender_room_whatever_the_names(text_boxes, players):
    """The round guide's line along the bottom ("R1 Kai deals 4") starts its line so that its
    descender room ends on the last row, whatever the first letters' height: a name whose ink
    starts a row higher (K, T, J) once pushed that room one row off the screen."""
    engine = Engine(registry.get("all-wound-up"), players, {}, 3)
    render(engine)
    assert any(text.startswith("R1 ") for text, _ in text_boxes)
    assert_inside(text_boxes, f"all-wound-up with {players}")


@pytest.mark.parametrize("text, size, width", [
    ("0.00", 24, 100), ("12.25", 24, 100), ("100.50", 24, 100), ("3.50 to go", 10, 128),
    ("on target: stop!", 10, 128), ("TOO MANY: 1.25 over", 10, 128), ("missed edge x3!", 10, 128)])
def test_a_live_count_is_pillows_text_of_each_piece_at_its_pen_position(text, size, width):
    """A live count (the wind screen's turns and status, #27 item 3) is drawn as runs: each
    numeral a piece from the mask cache. The frame must hold exactly what Pillow's own text
    draws for each piece, each at the pen position the pieces before it advance to, the run
    centred on its measured box."""
    from PIL import Image, ImageDraw
    from pi_companion.ui import canvas
    drawn = Image.new("1", (canvas.WIDTH, canvas.HEIGHT), 0)
    canvas.centred_run(ImageDraw.Draw(drawn), 15, text, size, width=width)
    face = canvas.font(size)
    pens, pen = [], 0
    for piece in canvas.pieces(text):
        pens.append((pen, piece))
        pen += int(round(face.getlength(piece)))
    boxes = [(p + b[0], b[1], p + b[2], b[3]) for p, piece in pens
             for b in [face.getbbox(piece, mode="1")] if b[2] > b[0]]
    left = min(b[0] for b in boxes)
    top = min(b[1] for b in boxes)
    right = max(b[2] for b in boxes)
    assert right - left <= width - 2           # drawn as runs (a wider text is drawn whole)
    expected = Image.new("1", (canvas.WIDTH, canvas.HEIGHT), 0)
    draw = ImageDraw.Draw(expected)
    x, y = (width - (right - left)) // 2 - left, 15 - top
    for p, piece in pens:
        draw.text((x + p, y), piece, font=face, fill=1)
    assert drawn.tobytes() == expected.tobytes()
