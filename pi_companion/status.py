"""`pi-companion status`: the game in progress, read from the state directory's game log.

It folds the log exactly as the daemon does when it resumes (the same loader, the same engine),
so what it prints is what the box will show after its next start. It never writes: the loader
runs on a private copy, since loading may trim a torn last line or move a bad log aside.
"""
from __future__ import annotations

import json
import logging
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from .config import ConfigError, load_config
from .core.engine import Engine, fold_records
from .gamelog import GameLog, TooNew
from .games import registry


class _Said(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


class NoGame(Exception):
    """No game log to read, or one that cannot be folded (the message says which)."""


def fold(header: dict[str, Any], records: list[dict[str, Any]], debounce_s: float
         ) -> tuple[Engine, int, str | None]:
    """The engine a logged game leads to, the number of records folded into it and, if a record
    ended the valid prefix, why: the daemon's resume (`fold_records`) on the loaded records."""
    def new_engine() -> Engine:
        return registry.engine_for(header, debounce_s=debounce_s)

    engine = new_engine()
    count, why, broken = fold_records(engine, records)
    if broken:                            # the engine may be half-changed: fold the prefix again
        engine = new_engine()
        fold_records(engine, records[:count])
    return engine, count, None if why is None else f"record {count + 1}: {why}"


def read_state(state_dir: Path, debounce_s: float) -> tuple[Engine, int]:
    """The engine of the game in progress in `state_dir` and its number of logged records."""
    log_path = state_dir / "current.log"
    with tempfile.TemporaryDirectory(prefix="pi-companion-status.") as scratch:
        try:
            shutil.copyfile(log_path, Path(scratch) / "current.log")
        except FileNotFoundError:
            raise NoGame(f"no game in progress ({log_path} does not exist)") from None
        except OSError as err:
            raise NoGame(f"cannot read {log_path}: {err.strerror}") from None
        said = _Said()
        store_log = logging.getLogger(GameLog.__module__)
        store_log.addHandler(said)
        store_log.propagate = False       # the loader's words are about the copy, not the log
        try:
            loaded = GameLog(scratch).load()
        except TooNew as err:
            raise NoGame(f"{log_path} is in {err}; the daemon will not start on it") from None
        finally:
            store_log.removeHandler(said)
            store_log.propagate = True
    if loaded is None:
        why = said.messages[-1].split(";")[0] if said.messages else "no game"
        raise NoGame(f"{log_path} cannot be resumed ({why}); the daemon will set it aside")
    header, records = loaded
    try:
        engine, count, damage = fold(header, records, debounce_s)
    except Exception as err:
        raise NoGame(f"{log_path} cannot be resumed ({type(err).__name__}: {err})") from None
    if damage is not None:
        print(f"pi-companion: {log_path}: {damage}; the daemon will resume the {count} records "
              "before it", file=sys.stderr)
    return engine, count


def table(report: dict[str, Any]) -> str:
    lines = [f"game     {report['game']}", f"phase    {report['phase']}"]
    scores = report.get("scores")
    if isinstance(scores, dict):
        lines.append("scores   " + ", ".join(f"{name} {score}" for name, score in scores.items()))
    else:
        lines.append("players  " + ", ".join(report["players"]))
    if report.get("winners"):
        lines.append("winners  " + ", ".join(report["winners"]))
    return "\n".join(lines)


def status(args: Any) -> int:
    try:
        config = load_config(Path(args.config))
    except ConfigError as err:
        print(f"pi-companion: {err}", file=sys.stderr)
        return 78
    state_dir = Path(args.state_dir or config.state_dir)
    try:
        engine, count = read_state(state_dir, config.debounce_ms / 1000.0)
    except NoGame as err:
        print(f"pi-companion: {err}", file=sys.stderr)
        return 1
    report = {**engine.report(), "logged_inputs": count}
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        print(table(report))
    return 0
