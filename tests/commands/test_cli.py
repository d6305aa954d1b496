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
                              cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    finally:
        os.close(write_end)
    assert done.returncode == 141 and done.stderr == ""


# The daemon's own command line is read without argparse (cli.daemon_args, #27 item 4): what it
# reads must be what the parser would have made of it, and anything else must go to the parser.
READ_WITHOUT_ARGPARSE = [
    ["run"],
    ["run", "--config", "/etc/pi-companion/config.toml"],                   # the unit's ExecStart
    ["run", "--pins", "mock", "--display", "dummy", "--config", "/dev/null", "--state-dir", "/tmp/s"],
    ["run", "--game", "hands-up", "--edges", "lgpio", "--display", "sh1106"],
    ["run", "--config", ""],
    ["run", "--state-dir", "a b", "--pins", "auto", "--display", "none", "--edges", "kernel"],
]
LEFT_TO_THE_PARSER = [             # its errors, help, abbreviations, repeats, other forms, --players
    ["run", "--game", "nope"], ["run", "--pins", "real"], ["run", "--display", "oled"],
    ["run", "--edges", "gpio"], ["run", "--config"], ["run", "--conf", "x"], ["run", "--config=x"],
    ["run", "--config", "a", "--config", "b"], ["run", "-h"], ["run", "--help"], ["run", "x", "y"],
    ["run", "--state-dir", "-x"], ["run", "--players", "A,B"], ["run", "--web", "1"],
    ["simulate"], ["--version"], [], ["config", "default"],
]


@pytest.mark.parametrize("argv", READ_WITHOUT_ARGPARSE, ids=" ".join)
def test_the_daemon_s_own_command_line_reads_as_the_parser_reads_it(argv):
    from pi_companion.cli import daemon_args, parser
    fast = daemon_args(argv)
    assert fast is not None and vars(fast) == vars(parser().parse_args(argv))


@pytest.mark.parametrize("argv", LEFT_TO_THE_PARSER, ids=" ".join)
def test_any_other_command_line_is_left_to_the_parser(argv):
    from pi_companion.cli import daemon_args
    assert daemon_args(argv) is None


def test_the_daemon_s_options_are_the_parser_s_run_options():
    """A flag added to `run` must be added to cli.RUN_OPTIONS too (or be one the parser reads
    alone, as --players is): else the daemon would start without its default."""
    import argparse

    from pi_companion.cli import RUN_OPTIONS, parser
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    run_options = {a.option_strings[-1]: (a.default, tuple(a.choices) if a.choices else None)
                   for a in sub.choices["run"]._actions if a.option_strings and a.dest != "help"}
    assert run_options.pop("--players") == (None, None)
    assert run_options == RUN_OPTIONS
