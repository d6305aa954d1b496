"""The live box (`Box`): one loop thread owns the engine and the outputs; see loop.py.

One module per part: the loop (loop.py), the wake kinds (wakes.py), the box clock (clock.py),
the pins it claims (wiring.py), record and durable (recorder.py), the lamp rule (lamp.py), the
frame pacer (frames.py), the live engine (session.py) and the wind puck (puck.py).
"""
from __future__ import annotations

from .clock import game_time, precise_timers
from .frames import FRAME_S
from .loop import Box
from .wakes import FRAME_WAKE, TIMER, FrameWake, PuckWake, Wake

__all__ = ["FRAME_S", "FRAME_WAKE", "TIMER", "Box", "FrameWake", "PuckWake", "Wake", "game_time",
           "precise_timers"]
