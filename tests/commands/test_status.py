"""`pi-companion status`: the game in progress, folded from the state directory's log by the
real command, equal to what the live box had; it never changes the log it reads."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers.common import Clock
from helpers.boxes import virtual_box

from pi_companion.box import Wake
from pi_companion.config import Config
from pi_companion.replay import load_scenario

SCENARIO = Path(__file__).parents[2] / "docs" / "scenarios" / "grab-bag-first-round.json"


def status(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pi_companion", "status", *args],
                          capture_output=True, text=True, timeout=60)


def play_into(state_dir: Path) -> dict:
    scenario = load_scenario(json.loads(SCENARIO.read_text()))
    Clock.now = 0.0
    config = Config(game=scenario.game, players=scenario.players, seed=scenario.seed, sound=False,
                    games={scenario.game: scenario.options})
    box = virtual_box(state_dir, config=config)
    for event in scenario.events:
        Clock.now = max(Clock.now, event.t)
        box.queue.put(Wake(event))
        box.pump()
    report = box.engine.report()
    box.close()
    return report


def test_status_prints_the_live_state_and_leaves_the_log_alone(tmp_path: Path) -> None:
    live = play_into(tmp_path)
    kept = sorted(p.name for p in tmp_path.iterdir())        # the log, and the box's names.json
    log = tmp_path / "current.log"
    torn = log.read_bytes() + b'{"t":99.0,"pre'       # a power cut in mid-write
    log.write_bytes(torn)
    result = status("--config", str(tmp_path / "absent.toml"), "--state-dir", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["game"] == "grab-bag"
    assert {k: report[k] for k in live} == json.loads(json.dumps(live))
    assert any(live["scores"].values()), "a scenario that scores"
    assert report["logged_inputs"] == len(torn.splitlines()) - 2   # header and torn line
    assert log.read_bytes() == torn                          # read-only: nothing trimmed
    assert sorted(p.name for p in tmp_path.iterdir()) == kept and "current.log" in kept

    table = status("--config", str(tmp_path / "absent.toml"), "--state-dir", str(tmp_path))
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].split() == ["game", "grab-bag"]
    scores = next(line for line in table.stdout.splitlines() if line.startswith("scores"))
    for name, score in live["scores"].items():
        assert f"{name} {score}" in scores


def test_status_without_a_game_says_so_in_one_line(tmp_path: Path) -> None:
    result = status("--config", str(tmp_path / "absent.toml"), "--state-dir", str(tmp_path))
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "no game in progress" in result.stderr


def test_status_of_an_unreadable_log_says_so_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "current.log").write_bytes(b"\xff\xfe not json\n")
    result = status("--config", str(tmp_path / "absent.toml"), "--state-dir", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "cannot be resumed" in result.stderr
    assert (tmp_path / "current.log").read_bytes() == b"\xff\xfe not json\n"


def test_status_shows_the_valid_prefix_the_daemon_resumes_when_a_record_is_damaged(tmp_path: Path) -> None:
    """A record whose checksum holds but whose content is impossible (here a time of NaN) ends
    the valid prefix for the daemon's resume: status shows that same prefix, not 'cannot be
    resumed', and says once what it stopped at."""
    from pi_companion.gamelog import encode

    live = play_into(tmp_path)
    log = tmp_path / "current.log"
    good = len(log.read_bytes().splitlines()) - 1                 # records after the header
    damaged = log.read_bytes() + encode({"t": float("nan"), "press": "P1"}) \
        + encode({"t": 99.0, "press": "P2"})
    log.write_bytes(damaged)
    result = status("--config", str(tmp_path / "absent.toml"), "--state-dir", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert {k: report[k] for k in live} == json.loads(json.dumps(live))
    assert report["logged_inputs"] == good
    assert result.stderr.count("\n") == 1 and f"record {good + 1}" in result.stderr
    assert log.read_bytes() == damaged                       # read-only
