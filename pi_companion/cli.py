"""The `pi-companion` command: run, simulate, replay, config, status, web, doctor."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from . import __version__
from .config import DEFAULT_CONFIG, EDGE_SOURCES, ConfigError, load_config, template_text
from .core.game import players_problem
from .games import registry

if TYPE_CHECKING:
    import argparse

# Each command's module is imported when the command runs (python -X importtime): `run` would
# otherwise pay for aiohttp (web, about 0.5 s here), curses and the others at every start.
# argparse itself is imported only when the whole parser is built (see `daemon_args`).

EXIT_USAGE = 2
EXIT_CONFIG = 78        # EX_CONFIG: systemd does not restart on it (RestartPreventExitStatus)


def cmd_replay(args: argparse.Namespace) -> int:
    from .replay import MAX_BYTES, ScenarioError, parse_scenario, run_scenario
    try:
        if args.scenario == "-":
            raw = sys.stdin.buffer.read(MAX_BYTES + 1)
        else:
            with open(args.scenario, "rb") as file:
                raw = file.read(MAX_BYTES + 1)
    except OSError as err:
        print(f"scenario: cannot read {args.scenario}: {err.strerror}", file=sys.stderr)
        return EXIT_USAGE
    try:
        scenario = parse_scenario(raw)
    except ScenarioError as err:
        print(str(err), file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(run_scenario(scenario), indent=2, ensure_ascii=False))
    return 0


def cmd_run(args: Any) -> int:        # the parser's namespace or daemon_args'
    from .daemon import main
    return main(args)


def cmd_simulate(args: argparse.Namespace) -> int:
    from .simulate import simulate
    return simulate(args)


def cmd_config(args: argparse.Namespace) -> int:
    if args.action == "default":
        sys.stdout.write(template_text())
        return 0
    try:
        load_config(Path(args.file), must_exist=True)
    except ConfigError as err:
        print(str(err), file=sys.stderr)
        return EXIT_CONFIG
    print(f"{args.file}: ok")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from .status import status
    return status(args)


def cmd_web(args: argparse.Namespace) -> int:
    from .web.server import main
    return main(args)


def cmd_doctor(args: argparse.Namespace) -> int:
    from .doctor import doctor
    return doctor(args)


def games_help() -> str:
    lines = []
    for name in registry.available():
        rules = registry.get(name)
        lines.append(f"  {name:<18} {rules.title} ({rules.min_players}-{rules.max_players} players)")
    return "games (--game NAME, or `game` in the config):\n" + "\n".join(lines)


GAMES_EPILOG = "(the games, listed when help is shown)"


def player_names(text: str) -> tuple[str, ...]:
    """--players: 2 to 8 unique, non-empty names, comma-separated (argparse turns errors into exit 2)."""
    from argparse import ArgumentTypeError
    names = tuple(n.strip() for n in text.split(","))
    if not all(names):
        raise ArgumentTypeError(f"an empty name in {text!r}")
    if len(set(names)) != len(names):
        raise ArgumentTypeError(f"a name given twice in {text!r}")
    if not 2 <= len(names) <= 8:
        raise ArgumentTypeError(f"give 2 to 8 names, got {len(names)}")
    return names


# `run`'s options as `daemon_args` reads them: flag -> (default, the values it takes or None for
# any). tests/commands/test_cli.py checks them against the parser's `run` below.
RUN_PINS = ("auto", "mock")
RUN_DISPLAYS = ("auto", "ssd1306", "sh1106", "dummy", "none")
RUN_OPTIONS: dict[str, tuple[str | None, tuple[str, ...] | None]] = {
    "--config": (str(DEFAULT_CONFIG), None),
    "--game": (None, tuple(registry.GAMES)),
    "--pins": (RUN_PINS[0], RUN_PINS),
    "--display": (RUN_DISPLAYS[0], RUN_DISPLAYS),
    "--state-dir": (None, None),
    "--edges": (None, EDGE_SOURCES),
}


def daemon_args(argv: list[str]) -> SimpleNamespace | None:
    """The daemon's command line as systemd gives it (`run --config PATH`, each option as
    `--flag value`), read without argparse: importing argparse (and gettext) and building the
    parser of every command was about 20 million instructions of the way to READY=1. Anything
    else - help, --players, an unknown, abbreviated or repeated flag, a value
    not taken - is None: the parser below reads it, and reports its errors, as always."""
    if not argv or argv[0] != "run" or len(argv) % 2 == 0:
        return None
    values = {flag: default for flag, (default, _) in RUN_OPTIONS.items()}
    given: set[str] = set()
    for flag, value in zip(argv[1::2], argv[2::2]):
        if flag not in RUN_OPTIONS or flag in given or value.startswith("-"):
            return None
        taken = RUN_OPTIONS[flag][1]
        if taken is not None and value not in taken:
            return None
        given.add(flag)
        values[flag] = value
    return SimpleNamespace(command="run", func=cmd_run, players=None,
                           **{flag[2:].replace("-", "_"): value for flag, value in values.items()})


def parser() -> argparse.ArgumentParser:
    import argparse

    class HelpFormatter(argparse.RawDescriptionHelpFormatter):
        """Lists the games only when help is printed: listing them imports every game module,
        which `run` would otherwise pay for on every start before READY=1 (about 10 ms here)."""

        def add_text(self, text: str | None) -> None:
            super().add_text(games_help() if text == GAMES_EPILOG else text)

    formatter = HelpFormatter
    p = argparse.ArgumentParser(prog="pi-companion", description=__doc__, epilog=GAMES_EPILOG,
                                formatter_class=formatter)
    p.add_argument("-V", "--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    def box_options(sp: argparse.ArgumentParser, pins: tuple[str, ...], displays: tuple[str, ...]) -> None:
        sp.add_argument("--config", default=str(DEFAULT_CONFIG),
                        help="TOML config (only the default path may be absent: then all defaults)")
        sp.add_argument("--game", choices=tuple(registry.GAMES), metavar="GAME",
                        help="game to start (overrides the config): " + ", ".join(registry.GAMES))
        sp.add_argument("--players", type=player_names, metavar="A,B,...",
                        help="2 to 8 comma-separated player names (overrides the config)")
        meaning = {"auto": "auto = the real pin factory", "mock": "mock = gpiozero MockFactory"}
        sp.add_argument("--pins", choices=pins, default=pins[0],
                        help="; ".join(meaning[k] for k in pins) + f" (default {pins[0]})")
        sp.add_argument("--display", choices=displays, default=displays[0])
        sp.add_argument("--state-dir", help="where the game log lives (overrides the config)")

    r = sub.add_parser("run", help="the daemon: real pins and display on a Pi",
                       epilog=GAMES_EPILOG, formatter_class=formatter)
    box_options(r, RUN_PINS, RUN_DISPLAYS)
    r.add_argument("--edges", choices=EDGE_SOURCES, help="how the real pins are driven "
                   "(overrides the config's input.edges, default kernel): kernel = the GPIO "
                   "character device, edges from its line events, nothing awake while idle; "
                   "lgpio = gpiozero's lgpio factory, whose threads wake 50 times a second and "
                   "every 0.5 ms while edges are watched")
    r.set_defaults(func=cmd_run)
    s = sub.add_parser("simulate", help="the emulated box in this terminal (keys are the buttons)",
                       description="The emulated box: mock pins driven by the keyboard, the OLED "
                       "drawn in the terminal (at least 80x23). --state-dir keeps a game log and "
                       "resumes from it, as the box does.", epilog=GAMES_EPILOG, formatter_class=formatter)
    box_options(s, ("mock",), ("dummy", "none"))
    s.add_argument("--puck", choices=("fake",), help="fake: the turntable keys drive a software "
                   "wind puck on a pty, read through the real serial link")
    s.add_argument("--oled", choices=("auto", "half", "quad", "sextant", "braille"), default="auto",
                   help="how the OLED is drawn (default auto: the largest that fits; the o key "
                   "cycles through those that fit): half blocks from 131x40, quad(rant) blocks "
                   "from 80x39, sextants from 80x29, braille from 80x23")
    s.add_argument("--pinmap", default="8players", help="pin map of the emulated box (default "
                   "8players: a button for every player; replaces the config's pinmap and [pins])")
    s.add_argument("--web", action="store_true", help="also serve the big screen (scoreboard, host "
                   "remote, history) on http://localhost:PORT/ (this machine only) and print its address")
    s.add_argument("--web-port", type=int, metavar="PORT", help="the big screen's port (default: web.port "
                   "of the config, 8080)")
    s.set_defaults(func=cmd_simulate)
    rp = sub.add_parser("replay", help="play a scenario on a virtual clock; print the JSON report",
                        description="Play a scenario (docs/replay.md) on a virtual clock; print "
                        "the JSON report. Exit 2 with one line on stderr for an invalid scenario.")
    rp.add_argument("scenario", help="scenario file, or - for stdin")
    rp.set_defaults(func=cmd_replay)
    c = sub.add_parser("config", help="check a config file or print the commented default")
    csub = c.add_subparsers(dest="action", required=True)
    chk = csub.add_parser("check")
    chk.add_argument("file")
    csub.add_parser("default")
    c.set_defaults(func=cmd_config)
    st = sub.add_parser("status", help="the game in progress, from the state directory's game log")
    st.add_argument("--config", default=str(DEFAULT_CONFIG))
    st.add_argument("--state-dir", help="where the game log lives (overrides the config)")
    st.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    st.set_defaults(func=cmd_status)
    w = sub.add_parser("web", help="the big screen: scoreboard and host remote over HTTP",
                       description="Serve the scoreboard (/), the host's remote (/host), the OLED "
                       "(/oled.png) and finished games (/history), reading the daemon's hub socket.")
    w.add_argument("--config", default=str(DEFAULT_CONFIG))
    w.add_argument("--state-dir", help="where the daemon keeps its log (read only)")
    w.add_argument("--socket", help="the daemon's hub socket (default: $RUNTIME_DIRECTORY/hub.sock, "
                   "else in the state directory)")
    w.add_argument("--bind", default="0.0.0.0",
                   help="address to listen on (default 0.0.0.0: every interface, so phones and the "
                   "TV on the Wi-Fi reach it; 127.0.0.1 for this machine only)")
    w.add_argument("--port", type=int, help="port (default: web.port of the config)")
    w.set_defaults(func=cmd_web)
    d = sub.add_parser("doctor", help="check pins, display, puck, state dir and config")
    d.add_argument("--config", default=str(DEFAULT_CONFIG))
    d.add_argument("--pins", choices=("auto", "mock"), default=None,
                   help="auto = check the real pin factory; mock = gpiozero MockFactory (default: "
                   "auto on a Raspberry Pi; on a PC, say that it is one and what --pins mock does)")
    d.set_defaults(func=cmd_doctor)
    return p


def check_flags(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--players must fit the game (--game's, else the config's): a flag error is exit 2, not 78."""
    if getattr(args, "players", None) is None:
        return
    game = args.game
    if game is None:
        try:
            game = load_config(Path(args.config)).game
        except (ConfigError, OSError):
            return                        # the config's own error is reported where it is loaded
    try:
        rules = registry.get(game)
    except (KeyError, ImportError):
        return
    problem = players_problem(rules, len(args.players))
    if problem is not None:
        p.exit(EXIT_USAGE, f"{p.prog} {args.command}: error: argument --players: {problem}, "
               f"got {len(args.players)}\n")


def main(argv: list[str] | None = None) -> int:
    args: Any = daemon_args(sys.argv[1:] if argv is None else argv)
    if args is None:
        p = parser()
        args = p.parse_args(argv)
        if isinstance(getattr(args, "players", None), tuple):
            check_flags(p, args)
            args.players = ",".join(args.players)      # the form build_config reads
    try:
        code = int(args.func(args))
        sys.stdout.flush()                          # a closed pipe is found here, not at exit
        return code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`replay x.json | head`): stop quietly, as a shell tool does;
        # stdout goes to /dev/null so the interpreter's own last flush cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141                                  # 128 + SIGPIPE, what a shell reports


if __name__ == "__main__":
    sys.exit(main())
