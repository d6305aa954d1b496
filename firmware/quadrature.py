"""The hall quadrature decoder: levels of sensors A and B in, signed steps and counters out.

Shared verbatim with the wind puck firmware (`firmware/sync.py` copies this file to
`firmware/quadrature.py`), so it stays MicroPython-compatible: no imports, no dataclasses,
no annotations (mypy reads the type comments), and `update` allocates nothing, so a hard
interrupt handler may call it.

Convention: clockwise seen from above, A leads B, (A,B) = 00 -> 10 -> 11 -> 01 -> 00 is
+1 step per transition (+4 per turn); the reverse order is -1 each. Both levels changing
at once is a missed edge: counted in `invalid`, no step, the state takes the new levels.
The same levels again change nothing. There is no time-based debounce: the latches'
hysteresis does that job, and rocking over one edge nets to zero by construction.
"""

_INVALID = 2

# Indexed by (old_ab << 2) | new_ab, where ab = (A << 1) | B.
_TABLE = (
    0, -1, 1, _INVALID,     # from 00: to 00, 01 (backward), 10 (forward), 11 (missed)
    1, 0, _INVALID, -1,     # from 01: to 00 (forward), 01, 10 (missed), 11 (backward)
    -1, _INVALID, 0, 1,     # from 10: to 00 (backward), 01 (missed), 10, 11 (forward)
    _INVALID, 1, -1, 0,     # from 11: to 00 (missed), 01 (forward), 10 (backward), 11
)


class Quadrature:
    """Decodes two-sensor quadrature; keeps net, forward, backward and invalid counts."""

    def __init__(self, a=0, b=0):
        # type: (int, int) -> None
        self.a = 1 if a else 0
        self.b = 1 if b else 0
        self.net = 0
        self.forward = 0
        self.backward = 0
        self.invalid = 0

    def update(self, a, b):
        # type: (int, int) -> int
        """Take the new levels of both sensors; return the step: -1, 0 or +1."""
        a = 1 if a else 0
        b = 1 if b else 0
        step = _TABLE[(self.a << 3) | (self.b << 2) | (a << 1) | b]
        self.a = a
        self.b = b
        if step == 0:
            return 0
        if step == _INVALID:
            self.invalid += 1
            return 0
        self.net += step
        if step > 0:
            self.forward += 1
        else:
            self.backward += 1
        return step

    def set_level(self, sensor, level):
        # type: (str, int) -> int
        """Take a new level of one sensor ('A' or 'B'); return the step."""
        if sensor == "A":
            return self.update(level, self.b)
        if sensor == "B":
            return self.update(self.a, level)
        raise ValueError("sensor must be 'A' or 'B'")

    def reset_counts(self):
        # type: () -> None
        """Set every counter to 0; the levels are kept."""
        self.net = 0
        self.forward = 0
        self.backward = 0
        self.invalid = 0
