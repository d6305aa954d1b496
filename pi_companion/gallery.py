"""`make screenshots`: every documented scenario's screens, drawn by the real screen code on luma's dummy device.

Each scenario in docs/scenarios is replayed; the frame after its last event (or at its SHOT_AT
time, where the scenario goes on past what its name shows), and the menu,
rules card and button test of each game, is saved scaled up, nearest neighbour, as a PNG.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Iterator

from PIL import Image

from . import webshots
from .assemble import make_display
from .config import Config

from .core.engine import Engine
from .core.events import Edge, Effect, Turn
from .games import registry
from .pictures import write_if_changed
from .replay import load_scenario
from .ui.screens import render
from .web import headless

SCALE = 4
# Scenarios whose picture is taken before their end (seconds): the name says what it shows.
SHOT_AT = {"hold-your-breath-descent": 13.0}


def scenario_engines(folder: Path) -> Iterator[tuple[str, Engine]]:
    """(name, engine after the scenario) for every scenario in `folder`."""
    for path in sorted(folder.glob("*.json")):
        if path.name.endswith(".expected.json"):
            continue
        scenario = load_scenario(json.loads(path.read_text()))
        engine = registry.new_engine(scenario.game, scenario.players, scenario.options, scenario.seed)
        stop = SHOT_AT.get(path.stem)
        for event in scenario.events:
            if stop is not None and event.t > stop:
                break
            engine.feed(event)
        if stop is not None:
            engine.advance(stop)
        elif scenario.end is not None:
            engine.advance(scenario.end)
        yield path.stem, engine


def menu_engines() -> Iterator[tuple[str, Engine]]:
    """Each available game's menu, rules card and the button test."""
    for name in registry.available():
        rules = registry.get(name)
        players = tuple(["Ada", "Ben", "Cy", "Di"][: max(rules.min_players, 3)])
        engine = registry.new_engine(rules, players, {}, 1)
        engine.feed(Edge(1.0, "MENU", True))
        engine.feed(Edge(1.05, "MENU", False))
        yield f"{name}-menu", engine
        if rules.rules_card():
            card = registry.new_engine(rules, players, {}, 1)
            choose(card, "rules")
            yield f"{name}-rules", card
        if name == "grab-bag":                     # one rules card per variant
            for variant in ("all-seekers", "strict"):
                card = registry.new_engine(rules, players, {"variant": variant}, 1)
                choose(card, "rules")
                yield f"{name}-rules-{variant}", card
    test = registry.new_engine("grab-bag", ("Ada", "Ben", "Cy"), {}, 1)
    choose(test, "test")
    test.feed(Edge(9.0, "P2", True))
    test.feed(Edge(9.0, "NO", True))
    yield "button-test", test


def choose(engine: Engine, key: str, t: float = 1.0) -> list[Effect]:
    """Open the menu, turn the encoder to `key` and press YES, as a player would.
    Returns the effects of choosing it."""
    engine.feed(Edge(t, "MENU", True))
    engine.feed(Edge(t + 0.05, "MENU", False))
    assert engine.menu is not None
    keys = [k for k, _ in engine.menu.items]
    for i in range(keys.index(key)):
        engine.feed(Turn(t + 0.1 + i * 0.01, 1))
    engine.feed(Edge(t + 0.5, "YES", True))
    effects = engine.feed(Edge(t + 0.55, "YES", False))
    if engine.menu is not None and engine.menu.confirm == key:      # it asks a second YES
        engine.feed(Edge(t + 0.6, "YES", True))
        effects += engine.feed(Edge(t + 0.65, "YES", False))
    return effects


def through_luma(engine: Engine) -> Image.Image:
    """The frame as the OLED gets it: through the box's own display part (assemble.make_display)
    on luma's dummy device."""
    display = make_display("dummy", Config())
    display.show(render(engine), 0.0)
    image: Image.Image = display.device.image
    return image


def save(engines: Iterator[tuple[str, Any]], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, engine in engines:
        image = through_luma(engine).convert("L").resize((128 * SCALE, 64 * SCALE), Image.NEAREST)
        path = out / f"{name}.png"
        write_if_changed(path, image)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = Path(__file__).parents[1]
    out = Path(argv[0]) if argv else root / "docs" / "screens"
    written = save(scenario_engines(root / "docs" / "scenarios"), out)
    written += save(menu_engines(), out)
    print(f"{len(written)} screens in {out}")
    # The big screen's pages need a browser; the OLED gallery above never does.
    why = headless.missing()
    if why:
        print(f"web pages not rendered: {why}")
        return 0
    pages = webshots.save(out)
    print(f"{len(pages)} web pages in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
