"""`make screenshots`' own parts that keep a clean checkout clean (run-to-run identical pictures
of real-time evenings), on a real box: gpiozero's mock pins, its loop thread and game log.

The pictures themselves need chromium (tests_browser/ and `make screenshots`); these parts do
not: the clock held while a moment's pictures are taken, and the exactly stamped buzz."""
from __future__ import annotations

import time

from pi_companion.webshots import exact_buzz, held_clock
from pi_companion.web.live import live_box


def test_the_held_clock_stops_the_beat_and_goes_on_from_where_it_stood(tmp_path):
    with live_box(tmp_path, "hands-up", {"mode": "quick", "cards": 40, "beat_ms": 300}, web=False) as live:
        box = live.box
        live.until(lambda: box.engine.report()["beats"] >= 2, timeout=10)
        with held_clock(box):
            beats, now = box.engine.report()["beats"], box.now()
            time.sleep(1.0)                                  # three beats' time
            assert box.engine.report()["beats"] == beats and box.now() == now
        assert 0 <= box.now() - now < 0.3                   # no jump over the held second
        live.until(lambda: box.engine.report()["beats"] > beats, timeout=5)   # the beat goes on
        live.buzz(["P2"])                                    # a grab on the pins' real clock
        grab_t = box.engine.clock
        assert abs(grab_t - box.now()) < 0.5, (grab_t, box.now())   # stamped in step, not 1 s ahead


def test_an_exact_buzz_shows_the_same_margins_every_run(tmp_path):
    with live_box(tmp_path, "grab-bag", {}, players=("Ada", "Ben", "Cy"), web=False) as live:
        box = live.box
        exact_buzz(live, ["P3", "P2"], gap_s=0.012)          # Ada is the Grab Master: Cy, then Ben
        order = box.engine.report()["last_buzz"]["order"]
        assert [(o["player"], o["after_ms"]) for o in order] == [("Cy", 0.0), ("Ben", 12.0)]
        assert [live.pin(p).state for p in ("P2", "P3")] == [1, 1]   # both released
