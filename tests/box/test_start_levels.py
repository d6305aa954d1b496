"""The hall sensors and the encoder contacts are where they are at start: the box reads their
levels as it powers up, resumes or starts a new game, and the decoders take them without a step.

Real parts: gpiozero mock pins stamped with a virtual clock, the real Box, a real GameLog in a
temporary state directory. "The power goes" is the log closed without a clean end and the pins
forgotten; the box that comes back is a new Box on new pins, resting where the test puts them.
"""
from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from helpers.common import Clock, VirtualFactory, VirtualPin
from helpers.boxes import make_box

from pi_companion.box import Box, Wake
from pi_companion.config import Config
from pi_companion.core.engine import Engine, fold_records
from pi_companion.core.events import HostCommand, Resume
from pi_companion.core.records import from_record, to_record
from pi_companion.gamelog import GameLog
from pi_companion.games import registry
from pi_companion.hw.pinmap import load_pinmap

PINS = load_pinmap()
WIND = Config(game="all-wound-up", players=("Ada", "Ben"), seed=5, sound=False,
              games={"all-wound-up": {"tolerance_steps": 0}})     # the verdict to the step
CW = ((0, 0), (1, 0), (1, 1), (0, 1))        # hall (A, B) clockwise: one step each, 4 a turn


@pytest.fixture(autouse=True)
def clock():
    Clock.now = 50.0


def power_up(state, rest: dict[str, int], config: Config = WIND, store: Any = None) -> Box:
    """A box on fresh pins resting at `rest` (a pin name: its line level, 1 high), with a game
    log in `state`."""
    levels = {f"GPIO{PINS[name]}": level for name, level in rest.items()}

    class Pin(VirtualPin):
        def _set_pull(self, value: str) -> None:
            super()._set_pull(value)          # (a pull-up drives the line high: rest after it)
            if self.info.name in levels:
                self.drive_high() if levels[self.info.name] else self.drive_low()

    factory = VirtualFactory(pin_class=Pin)
    box = make_box(factory, config=config, store=store or GameLog(state))
    box.piezo.play = box.piezo.played.append  # type: ignore[method-assign]
    return box


def cut(box: Box) -> None:
    """The power goes: the log keeps what was synced, nothing else is closed."""
    box.store.close()
    box.factory.reset()


def hall(box: Box, a: int, b: int) -> None:
    """The hall lines to (A, B), one edge at a time, 10 ms apart; handled."""
    for name, level in (("HALL_A", a), ("HALL_B", b)):
        pin = box.factory.pin(PINS[name])
        if pin.state != level:
            Clock.now += 0.01
            pin.drive_high() if level else pin.drive_low()
    box.pump()


def wind(box: Box, steps: int) -> None:
    """Turn the turntable `steps` quadrature steps clockwise from where its lines rest now."""
    a, b = (box.factory.pin(PINS[n]).state for n in ("HALL_A", "HALL_B"))
    at = CW.index((int(a), int(b)))
    for i in range(1, steps + 1):
        hall(box, *CW[(at + i) % 4])


def tap(box: Box, button: str) -> None:
    pin = box.factory.pin(PINS[button])
    Clock.now += 0.05
    pin.drive_low()
    Clock.now += 0.08
    pin.drive_high()
    box.pump()


def settle(box: Box, seconds: float = 2.0) -> None:
    """Still turntable: the loop wakes for the check's settle timer."""
    end = Clock.now + seconds
    while Clock.now < end:
        Clock.now = min(end, Clock.now + 0.25)
        box.queue.put(Wake())
        box.pump()


def logged(state) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    loaded = GameLog(state).load()
    assert loaded is not None
    return loaded[0], list(loaded[1])


def folded(state) -> Engine:
    """What `pi-companion status` and a resume make of the log: a fresh engine through it."""
    header, records = logged(state)
    engine = Engine(registry.get(header["game"]), tuple(header["players"]), header["options"],
                    header["seed"], debounce_s=WIND.debounce_ms / 1000.0)
    assert fold_records(engine, records) == (len(records), None, False)
    return engine


def decoders(engine: Engine) -> tuple[tuple[int, int], tuple[int, int]]:
    return (engine.hall.a, engine.hall.b), (engine.encoder.a, engine.encoder.b)


def same_as_fold(box: Box, state) -> None:
    assert box.store.flush()
    again = folded(state)
    assert again.report() == box.engine.report()
    assert decoders(again) == decoders(box.engine)
    assert (again.hall.net, again.hall.invalid) == (box.engine.hall.net, box.engine.hall.invalid)


def test_the_first_turn_from_a_magnet_resting_on_a_latch_counts_four_steps(tmp_path):
    # The lead's worked example: A=1, B=0 at rest. The engine used to start at 00 and saw the
    # turn 11, 01, 00, 10 as -1, nothing, +1, +1: one quarter instead of a whole turn.
    box = power_up(tmp_path, {"HALL_A": 1, "HALL_B": 0})
    try:
        tap(box, "P1")                                    # Ada's check: target 1 turn
        wind(box, 4)
        check = box.engine.report()["check"]
        assert (check["steps"], check["missed"]) == (4, 0)
        settle(box)
        assert box.engine.report()["attempts"][-1]["verdict"] == "exact"
        assert box.engine.hall.invalid == 0
        assert logged(tmp_path)[1][0] == {"t": 0.0, "resume": 1, "hall": [1, 0]}
        same_as_fold(box, tmp_path)
    finally:
        box.close()


def test_a_fresh_start_with_the_sensors_at_00_logs_nothing(tmp_path):
    box = power_up(tmp_path, {})
    try:
        tap(box, "P2")
        wind(box, 4)
        assert box.engine.report()["check"]["steps"] == 4
        assert box.store.flush()
        assert not any("resume" in r for r in logged(tmp_path)[1])   # nothing to change
    finally:
        box.close()


def test_after_a_cut_the_turntable_moved_while_off_is_counted_from_where_it_is(tmp_path):
    box = power_up(tmp_path, {})
    tap(box, "P1")
    wind(box, 2)                                       # the log leaves the magnet at 11
    assert box.engine.report()["check"]["steps"] == 2
    cut(box)
    # While the power is off a hand knocks the turntable back a step: it now rests at 10. The
    # check is still open at the resume, with the 2 steps the log holds; the level change is no
    # step (nobody saw it happen) and no missed edge.
    again = power_up(tmp_path, {"HALL_A": 1, "HALL_B": 0})
    try:
        check = again.engine.report()["check"]
        assert again.resumed and (check["steps"], check["missed"]) == (2, 0)
        wind(again, 2)                                     # 10 -> 11 -> 01: two more steps
        check = again.engine.report()["check"]
        assert (check["steps"], check["missed"]) == (4, 0)    # (it was 3: 10 -> 11 was lost)
        assert again.store.flush()
        resume = [r for r in logged(tmp_path)[1] if "resume" in r]
        assert resume == [{"t": resume[0]["t"], "resume": 1, "hall": [1, 0]}]
        settle(again)
        assert again.engine.report()["attempts"][-1] == {
            "player": "Ada", "target": 1, "steps": 4, "turns": 1.0, "verdict": "exact"}
        same_as_fold(again, tmp_path)
    finally:
        again.close()


def test_a_resume_where_the_log_left_the_sensors_logs_no_levels(tmp_path):
    box = power_up(tmp_path, {})
    tap(box, "P1")
    wind(box, 3)                                       # the magnet rests at 01
    cut(box)
    again = power_up(tmp_path, {"HALL_A": 0, "HALL_B": 1})
    try:
        assert again.store.flush()
        assert logged(tmp_path)[1][-1] == {"t": again.engine.clock, "resume": 1}
        wind(again, 1)
        assert again.engine.report()["check"]["steps"] == 4
    finally:
        again.close()


class MovedWhileReading(GameLog):
    """A game log whose reading takes long enough for the turntable to move one step meanwhile
    (a long log on a slow card): the edge arrives while the box folds the log."""

    def read(self) -> Any:
        pin = self.box_factory.pin(PINS["HALL_A"])
        Clock.now += 0.01
        pin.drive_low()                               # 11 -> 01: a step
        return super().read()


def test_an_edge_while_the_log_is_folded_is_counted(tmp_path):
    box = power_up(tmp_path, {})
    tap(box, "P1")
    wind(box, 2)                                       # 11
    cut(box)
    store = MovedWhileReading(tmp_path)
    Pin = type("Pin", (VirtualPin,), {})
    factory = VirtualFactory(pin_class=Pin)
    store.box_factory = factory                        # type: ignore[attr-defined]
    factory.pin(PINS["HALL_A"]).drive_high()           # the magnet rests at 11, as logged
    factory.pin(PINS["HALL_B"]).drive_high()
    again = make_box(factory, config=WIND, store=store)
    try:
        again.pump()
        assert again.engine.report()["check"]["steps"] == 3
        wind(again, 1)
        assert again.engine.report()["check"]["steps"] == 4
        same_as_fold(again, tmp_path)
    finally:
        again.close()


def test_a_new_game_starts_its_decoders_where_the_sensors_are(tmp_path):
    box = power_up(tmp_path, {})
    try:
        tap(box, "P1")
        wind(box, 2)                                   # the magnet rests at 11
        settle(box)
        box.put_host_command(HostCommand(0.0, "new"))
        box.pump()
        assert box.store.flush()
        assert box.engine.games_played == 0 and box.engine.report()["attempts"] == []
        tap(box, "P2")
        wind(box, 4)
        check = box.engine.report()["check"]
        assert (check["player"], check["steps"], check["missed"]) == ("Ben", 4, 0)
        assert box.store.flush()
        assert logged(tmp_path)[1][0] == {"t": 0.0, "resume": 1, "hall": [1, 1]}
        same_as_fold(box, tmp_path)
    finally:
        box.close()


def test_an_edge_queued_before_a_new_games_read_is_no_step(tmp_path):
    # The magnet moves (00 -> 10) just as a new game starts: its edge is still queued behind the
    # host's "new" when the box reads the pins for the new engine, which thus starts at 10. The
    # edge then repeats the decoder's level: no step, no missed edge.
    box = power_up(tmp_path, {})
    try:
        box.put_host_command(HostCommand(0.0, "new"))
        Clock.now += 0.01
        box.factory.pin(PINS["HALL_A"]).drive_high()
        box.pump()
        assert (box.engine.hall.net, box.engine.hall.invalid) == (0, 0)
        tap(box, "P1")
        wind(box, 4)
        assert box.engine.report()["check"]["steps"] == 4
        same_as_fold(box, tmp_path)
    finally:
        box.close()


def test_a_resume_record_without_levels_leaves_the_decoders_as_the_log_left_them():
    # A log written before the levels were logged folds as it did (a guard: true before too).
    engine = Engine(registry.get("all-wound-up"), ("Ada", "Ben"), {}, 1)
    for rec in ({"t": 1.0, "hall": "A", "level": 1}, {"t": 1.1, "encoder": "B", "level": 1},
                {"t": 2.0, "resume": 1}, {"t": 2.1, "resume": 1, "held": ["P1"]}):
        engine.feed(from_record(rec))
    assert decoders(engine) == ((1, 0), (0, 1)) and engine.hall.net == 1


def test_one_detent_from_contacts_resting_closed_moves_the_menu_by_one(tmp_path):
    # An encoder whose detents rest with both contacts closed (lines low: level 1 each). From a
    # decoder at 00 the first click was 2 steps of 4: no move, and every later click landed
    # half-way through a detent.
    box = power_up(tmp_path, {"ENC_A": 0, "ENC_B": 0})
    try:
        tap(box, "MENU")
        assert box.engine.menu is not None and box.engine.menu.cursor == 0
        enc_a, enc_b = (box.factory.pin(PINS[n]) for n in ("ENC_A", "ENC_B"))
        for move in (enc_a.drive_high, enc_b.drive_high, enc_a.drive_low):   # 11 -> 01 -> 00 -> 10
            Clock.now += 0.002
            move()
            box.pump()
            assert box.engine.menu.cursor == 0             # no move before the detent
        Clock.now += 0.002
        enc_b.drive_low()                                  # -> 11: the detent
        box.pump()
        assert box.engine.menu.cursor == 1 and box.engine.encoder_steps == 0
        assert logged(tmp_path)[1][0] == {"t": 0.0, "resume": 1, "encoder": [1, 1]}
        same_as_fold(box, tmp_path)
    finally:
        box.close()


# ---- the record ----

levels = st.none() | st.tuples(st.integers(0, 1), st.integers(0, 1))


@settings(max_examples=200, deadline=None)
@given(t=st.floats(0, 1e6, allow_nan=False), held=st.lists(st.sampled_from(["P1", "YES", "MENU"]),
       max_size=3, unique=True), hall_levels=levels, encoder_levels=levels)
def test_a_resume_record_reads_back_as_the_same_event(t, held, hall_levels, encoder_levels):
    event = Resume(round(t, 6), tuple(held), hall_levels, encoder_levels)
    rec = to_record(event)
    assert from_record(rec) == event
    assert ("hall" in rec) == (hall_levels is not None)
    assert ("encoder" in rec) == (encoder_levels is not None)


hostile = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(), st.text(max_size=3),
    st.lists(st.one_of(st.integers(-2, 3), st.booleans(), st.floats(), st.text(max_size=1),
                       st.none(), st.lists(st.integers(0, 1), max_size=2)), max_size=4),
    st.dictionaries(st.text(max_size=1), st.integers(0, 1), max_size=2))


def well_formed(value: Any) -> bool:
    return (isinstance(value, list) and len(value) == 2
            and all(type(v) is int and v in (0, 1) for v in value))


@settings(max_examples=400, deadline=None)
@given(key=st.sampled_from(["hall", "encoder"]), value=hostile, other=st.booleans())
def test_a_hostile_resume_record_is_damage_never_a_crash(key, value, other):
    rec: dict[str, Any] = {"t": 1.5, "resume": 1, key: value}
    if other:
        rec["hall" if key == "encoder" else "encoder"] = [1, 0]
    engine = Engine(registry.get("all-wound-up"), ("Ada", "Ben"), {}, 1)
    count, why, broken = fold_records(engine, [rec, {"t": 2.0, "turn": 1}])
    if well_formed(value):
        assert (count, why) == (2, None)
        assert decoders(engine)[0 if key == "hall" else 1] == tuple(value)
        assert engine.hall.net == engine.hall.invalid == engine.encoder.net == 0
    else:
        assert count == 0 and why is not None and why.startswith("ValueError") and not broken
        with pytest.raises(ValueError, match=f"bad {key} levels"):
            from_record(rec)
