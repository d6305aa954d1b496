"""The engine's state as a comparable value, and what a resume folds from a log so far (scenarios/test_resume_exact,
box/test_settle_in_flight and box/test_lamps)."""
from __future__ import annotations

import os
import tempfile
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from pi_companion.config import Config
from pi_companion.core.engine import Engine
from pi_companion.core.records import from_record
from pi_companion.gamelog import GameLog
from pi_companion.games import registry


# The box's settle time (every config of these tests keeps the default).
DEBOUNCE_S = Config().debounce_ms / 1000.0


def canon(v: Any) -> Any:
    """A value's full content, floats as their exact bits."""
    if isinstance(v, float):
        return v.hex()
    if is_dataclass(v) and not isinstance(v, type):
        return (type(v).__name__, tuple((f.name, canon(getattr(v, f.name))) for f in fields(v)))
    if isinstance(v, dict):
        return ("dict", tuple((canon(k), canon(x)) for k, x in v.items()))
    if isinstance(v, (set, frozenset)):
        return ("set", tuple(sorted(repr(canon(x)) for x in v)))
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(canon(x) for x in v))
    if hasattr(v, "__dict__") and not callable(v):
        return (type(v).__name__, canon(vars(v)))
    return repr(v)


def state(engine: Engine) -> Any:
    # `_bouncing` is a hint, not state: the live loop's extra `next_deadline` calls clear it
    # sooner than a fold does. It may only be False when no contact settle is due.
    assert engine._bouncing or all(d.settle_due is None for d in engine.buttons.values())
    controls = {k: v for k, v in vars(engine.controls).items() if k != "bouncing"}   # (the hint)
    return canon({k: controls if k == "controls" else v for k, v in vars(engine).items()
                  if k not in ("rules", "_effects")})


def fold(store: GameLog) -> Engine:
    """What a resume would fold: the log so far through a fresh engine."""
    loaded = store.load()
    assert loaded is not None
    header, records = loaded
    engine = registry.engine_for(header, debounce_s=DEBOUNCE_S)   # as the box's resume makes it
    for rec in records:
        event = from_record(rec)
        engine.advance(event) if isinstance(event, float) else engine.feed(event)
    return engine


def state_directory(tmp_path_factory: Any) -> Path:
    """A real directory, in memory where there is one: thousands of fsyncs, each one cheap."""
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return Path(tempfile.mkdtemp(prefix="pi-companion-", dir="/dev/shm"))
    return Path(tmp_path_factory.mktemp("log"))
