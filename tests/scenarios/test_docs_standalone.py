"""The docs stand alone: nothing points outside the repository, and the replay reference is complete."""
from __future__ import annotations

import re
from pathlib import Path

from pi_companion.games import registry
from pi_companion.replay import KINDS, TOP_KEYS

ROOT = Path(__file__).resolve().parents[2]


def test_readme_and_docs_never_point_at_shared():
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    hits = [f"{f.relative_to(ROOT)}:{n}" for f in files
            for n, line in enumerate(f.read_text().splitlines(), 1) if "shared/" in line]
    assert hits == []


def test_replay_reference_names_every_key_event_and_option():
    text = (ROOT / "docs" / "replay.md").read_text()
    for word in [*TOP_KEYS, *KINDS, "level", "shutdown_requested", "last_buzz", "after_ms"]:
        assert f"`{word}`" in text or f'"{word}"' in text, word
    for name in registry.GAMES:
        assert f"`{name}`" in text, name
        for option in registry.get(name).option_names:
            assert f"`{option}`" in text, f"{name}: {option}"


def test_replay_reference_lists_every_scenario_error():
    source = (ROOT / "pi_companion" / "replay.py").read_text()
    text = (ROOT / "docs" / "replay.md").read_text()
    messages = re.findall(r'ScenarioError\(f?"((?:[^"\\]|\\.)*)"', source)
    assert len(messages) > 15
    for message in messages:
        # Each {placeholder} may read anything in the docs (`event N`, `GAME`, `...`).
        parts = re.split(r"\{[^}]*\}", message.replace('\\"', '"'))
        pattern = ".+?".join(re.escape(part) for part in parts)
        assert re.search(pattern, text), message
