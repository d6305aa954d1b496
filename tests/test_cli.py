"""The command line: version, flag errors as usage errors (exit 2) naming the flag, games in --help."""
from __future__ import annotations

import importlib.metadata

import pytest

from pi_companion.cli import main


def run(capsys, *argv):
    try:
        rc = main(list(argv))
    except SystemExit as stop:
        rc = stop.code
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(capsys, flag):
    rc, out, _ = run(capsys, flag)
    assert rc == 0 and out.strip() == f"pi-companion {importlib.metadata.version('pi-companion')}"


def test_help_lists_the_games(capsys):
    for argv in (["--help"], ["simulate", "--help"]):
        rc, out, _ = run(capsys, *argv)
        assert rc == 0
        for line in ("grab-bag", "Hands Up! (2-8 players)", "hold-your-breath"):
            assert line in out


def test_help_offers_only_what_is_taken_and_names_every_command(capsys):
    rc, out, _ = run(capsys, "--help")
    assert rc == 0 and "status, web, doctor." in " ".join(out.split())     # the description line too
    rc, out, _ = run(capsys, "simulate", "--help")
    pins = " ".join(out.split()).split("--pins {mock}", 2)[2].split("--display")[0]
    assert rc == 0 and "auto" not in pins and "default mock" in pins     # simulate refuses auto
    rc, out, _ = run(capsys, "simulate", "--pins", "auto")
    assert rc == 2
    rc, out, _ = run(capsys, "web", "--help")
    assert rc == 0 and "(default 0.0.0.0" in " ".join(out.split())


@pytest.mark.parametrize("argv, flag", [
    (["simulate", "--game", "nope"], "--game"),
    (["simulate", "--game", "grab-bag", "--players", "A,B,C,D,E"], "--players"),
    (["simulate", "--players", "A,B,C,D,E"], "--players"),     # the config's game (grab-bag)
    (["simulate", "--players", "A,A"], "--players"),
    (["simulate", "--players", "A"], "--players"),
    (["run", "--game", "hands-up", "--players", "A,B,C,D,E,F,G,H,I"], "--players"),
    (["simulate", "--pins", "auto"], "--pins"),                  # simulate drives mock pins only
    (["simulate", "--display", "ssd1306"], "--display"),
])
def test_flag_errors_are_usage_errors_naming_the_flag(capsys, argv, flag):
    rc, out, err = run(capsys, *argv, "--config", "/nonexistent")
    assert rc == 2 and out == ""
    assert f"error: argument {flag}" in err and "config names" not in err


def test_a_reader_that_goes_away_ends_the_command_quietly():
    """`pi-companion replay x.json | head -5`: the pipe closes before the report is written;
    the command stops with a shell's SIGPIPE status and no traceback."""
    import os
    import subprocess
    import sys
    read_end, write_end = os.pipe()
    os.close(read_end)                                       # the reader is already gone
    try:
        done = subprocess.run([sys.executable, "-m", "pi_companion", "replay", "docs/scenarios/grab-bag-first-round.json"],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60,
                              cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    finally:
        os.close(write_end)
    assert done.returncode == 141 and done.stderr == ""
