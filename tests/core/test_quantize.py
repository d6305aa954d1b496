"""core.records.quantize remembers the time it returned last (the live box quantizes an input's
time, then logs it): whatever order times come in, it returns exactly `round(t, 6)`, bit for bit."""
from __future__ import annotations

import math
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_companion.core import records
from pi_companion.core.records import quantize


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


times = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                  st.floats(min_value=-1e10, max_value=1e10),           # where the log's times live
                  st.integers(-10**15, 10**15).map(lambda k: k / 1e6),  # six places already
                  st.sampled_from([0.0, -0.0, 2.0**30, 2.0**33 + 0.5e-6, 1e9, -1e9, 5e-324]))


@settings(max_examples=600)
@given(st.lists(times, min_size=1, max_size=12), st.lists(st.booleans(), min_size=12, max_size=12))
def test_every_call_is_round_to_six_places_bit_for_bit(ts, again):
    for t, twice in zip(ts, again):
        q = quantize(t)
        want = round(t, 6)
        assert bits(q) == bits(want) or (math.isnan(q) and math.isnan(want)), (t, q, want)
        if twice:                                   # what the box does: the same time again
            assert bits(quantize(q)) == bits(q) or math.isnan(q)


def test_a_time_quantized_again_is_not_rounded_again(monkeypatch):
    """The memo is used: the second call of the same logged time makes no `round`."""
    calls = []
    real = round
    monkeypatch.setitem(records.__dict__, "round", lambda t, n: calls.append(t) or real(t, n))
    q = quantize(12.3456789)
    assert quantize(q) == q == 12.345679
    assert calls == [12.3456789]
    assert quantize(-0.0) == 0.0 and math.copysign(1.0, quantize(-0.0)) == -1.0
