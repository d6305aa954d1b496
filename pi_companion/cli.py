"""The `pi-companion` command: run, simulate, replay, config, doctor."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXIT_USAGE = 2
EXIT_CONFIG = 78        # EX_CONFIG: systemd does not restart on it (RestartPreventExitStatus)
DEFAULT_CONFIG = Path("/etc/pi-companion/config.toml")


def cmd_replay(args: argparse.Namespace) -> int:
    from .replay import ScenarioError, load_scenario, run_scenario
    try:
        text = sys.stdin.read() if args.scenario == "-" else Path(args.scenario).read_text()
    except OSError as err:
        print(f"scenario: cannot read {args.scenario}: {err.strerror}", file=sys.stderr)
        return EXIT_USAGE
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        print(f"scenario: not valid JSON: {err.msg} at line {err.lineno} column {err.colno}",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        scenario = load_scenario(data)
    except ScenarioError as err:
        print(str(err), file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(run_scenario(scenario), indent=2, ensure_ascii=False))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from .app import run_daemon
    return run_daemon(args)


def cmd_simulate(args: argparse.Namespace) -> int:
    from .simulate import simulate
    return simulate(args)


def cmd_config(args: argparse.Namespace) -> int:
    from .config import ConfigError, load_config, template_text
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


def cmd_doctor(args: argparse.Namespace) -> int:
    from .doctor import doctor
    return doctor(args)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pi-companion", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    def box_options(sp: argparse.ArgumentParser, pins: str, display: str) -> None:
        sp.add_argument("--config", default=str(DEFAULT_CONFIG),
                        help="TOML config (absent file = defaults)")
        sp.add_argument("--game", help="game to start (overrides the config)")
        sp.add_argument("--players", help="comma-separated player names (overrides the config)")
        sp.add_argument("--pins", choices=("auto", "mock"), default=pins,
                        help="auto = the real pin factory; mock = gpiozero MockFactory")
        sp.add_argument("--display", choices=("auto", "ssd1306", "dummy", "none"), default=display)
        sp.add_argument("--state-dir", help="where the game log lives (overrides the config)")

    r = sub.add_parser("run", help="the daemon: real pins and display on a Pi")
    box_options(r, "auto", "auto")
    r.set_defaults(func=cmd_run)
    s = sub.add_parser("simulate", help="the emulated box in this terminal (keys are the buttons)")
    box_options(s, "mock", "dummy")
    s.add_argument("--puck", choices=("fake",), help="fake: the turntable keys drive a software "
                   "wind puck on a pty, read through the real serial link")
    s.set_defaults(func=cmd_simulate)
    rp = sub.add_parser("replay", help="play a scenario on a virtual clock; print the JSON report")
    rp.add_argument("scenario", help="scenario file, or - for stdin")
    rp.set_defaults(func=cmd_replay)
    c = sub.add_parser("config", help="check a config file or print the commented default")
    csub = c.add_subparsers(dest="action", required=True)
    chk = csub.add_parser("check")
    chk.add_argument("file")
    csub.add_parser("default")
    c.set_defaults(func=cmd_config)
    d = sub.add_parser("doctor", help="check pins, display, puck, state dir and config")
    d.add_argument("--config", default=str(DEFAULT_CONFIG))
    d.add_argument("--pins", choices=("auto", "mock"), default="auto")
    d.set_defaults(func=cmd_doctor)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
