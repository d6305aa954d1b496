"""Every example scenario in docs/scenarios runs through `pi-companion replay` and gives its documented report."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_companion.cli import main

DOCS = Path(__file__).parents[2] / "docs" / "scenarios"
SCENARIOS = sorted(p for p in DOCS.glob("*.json") if not p.name.endswith(".expected.json"))


def test_there_are_scenarios_for_grab_bag():
    assert any(p.name.startswith("grab-bag-") for p in SCENARIOS)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_documented_scenario(path, capsys):
    expected_path = path.with_name(path.stem + ".expected.json")
    assert expected_path.exists(), f"{path.name} has no .expected.json beside it"
    assert main(["replay", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    expected = json.loads(expected_path.read_text())
    for key, value in expected.items():
        assert report.get(key) == value, f"{path.name}: {key}"
    again = main(["replay", str(path)])      # same scenario + seed = same report
    assert again == 0 and json.loads(capsys.readouterr().out) == report


def test_the_cli_replays_from_stdin():
    from helpers.common import run_cli
    path = DOCS / "grab-bag-first-round.json"
    out = run_cli("replay", "-", stdin=path.read_text())
    assert out.returncode == 0 and out.stderr == ""
    assert json.loads(out.stdout)["grab_master"] == "Ben"
