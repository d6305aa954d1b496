"""The host's remote runs the evening: every command the phone sends is a logged input that
does what the box's own button or menu entry does, and New game / Change game / Players are
undone like a judgement - on the table (replay) and on the live box, whose game before comes
back from history/ exactly, across a power cut too.

The live box runs on MockFactory pins with its real game log in a real directory; "a power
cut" is a second Box started on the same directory."""
from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings, strategies as st

from helpers import boxes
from pi_companion.box import Wake
from pi_companion.core.events import Edge, HostCommand, Request, Turn
from pi_companion.core.table import HOST_COMMANDS, GameBefore
from pi_companion.gamelog import encode
from pi_companion.games import registry
from pi_companion.hub import CommandError, parse_command

PLAYERS = ("Ada", "Ben", "Cy")


def engine(game="grab-bag", players=PLAYERS, options=None, seed=3):
    return registry.new_engine(game, players, options or {}, seed)


def host(e, command, t, **fields):
    return e.feed(HostCommand(t, command, **fields))


def press(e, button, t, hold=0.05):
    e.feed(Edge(t, button, True))
    e.feed(Edge(t + hold, button, False))


def played_grab_bag():
    """Grab Bag after two judged buzzes: scores, an undo stack, a round on."""
    e = engine()
    press(e, "P2", 1.0)
    host(e, "yes", 1.5)
    press(e, "P1", 2.0)
    host(e, "no", 2.5)
    return e


def state(e):
    return (e.report(), e.table, list(e.undo_stack), e.games_played, e.rules.name)


# ---- the table (what replay and every fold do) ----

def test_new_game_then_undo_restores_the_game_before_exactly():
    e = played_grab_bag()
    before = state(e)
    host(e, "new", 3.0)
    assert e.report()["scores"] == {p: 0 for p in PLAYERS} and e.notice == "New game"
    press(e, "P3", 4.0)                      # the new game is played a little: a buzz
    host(e, "undo", 5.0)
    assert e.notice == "Undone: New game"
    assert state(e) == before
    host(e, "undo", 6.0)                     # and on back, as if New game had not happened
    assert e.notice.startswith("Undone: NO") and len(e.undo_stack) == 1


def test_new_game_from_the_box_menu_is_undone_by_a_long_no():
    e = played_grab_bag()
    before = state(e)
    e.feed(Edge(3.0, "MENU", True))
    e.feed(Edge(3.05, "MENU", False))
    keys = [k for k, _ in e.menu.items]
    for i in range(keys.index("new")):
        e.feed(Turn(3.1 + i / 100, 1))
    for t in (3.5, 3.7):                     # YES, YES: asked twice
        press(e, "YES", t)
    assert e.notice == "New game" and e.undo_stack[-1][1] == "New game"
    e.feed(Edge(4.0, "NO", True))
    e.advance(5.1)                           # held 1 s: undo
    assert e.notice == "Undone: New game"
    e.feed(Edge(5.2, "NO", False))
    assert state(e)[:4] == before[:4]


def test_change_game_and_players_are_undo_steps_that_ask_the_box():
    """On the table they change nothing (the box plays them in a new engine and log): their
    undo step keeps the game whole, so the box's fold of this log can take them back."""
    e = played_grab_bag()
    before = state(e)
    host(e, "switch", 3.0, name="hands-up")
    assert e.undo_stack[-1][1] == "Change game" and isinstance(e.undo_stack[-1][0], GameBefore)
    host(e, "undo", 3.5)
    assert e.notice == "Undone: Change game" and state(e)[:4] == before[:4]
    host(e, "players", 4.0, options=json.dumps(["Ada", "Ben"]))
    assert e.undo_stack[-1][1] == "Players"
    host(e, "undo", 4.5)
    assert state(e)[:4] == before[:4]


def test_undo_with_nothing_to_undo_asks_the_box_for_the_game_before():
    e = engine()
    effects = host(e, "undo", 1.0)
    assert e.notice == "Nothing to undo" and e.restore_asked
    assert [x.name for x in effects if isinstance(x, Request)] == ["restore"]
    press(e, "P1", 2.0)                      # the next input: the request is answered (or not)
    assert not e.restore_asked


def test_police_is_the_hosts_special_judgement():
    """Hands Up!: a grab, then the host's police (the box's long YES): only the grabber's own
    face-up cards are shared out."""
    e = engine("hands-up", options={"cards": 30, "beat_ms": 1000})
    e.advance(2.5)                           # two beats: everyone has 2 face up
    press(e, "P1", 2.6)
    e.advance(2.7)
    assert e.report()["phase"] == "judging"
    hands = e.report()["hands"]
    host(e, "special", 3.0)
    assert e.report()["face_up"] == {"Ada": 0, "Ben": 2, "Cy": 2}     # theirs stay face up
    assert e.report()["hands"] == {**hands, "Ben": hands["Ben"] + 1, "Cy": hands["Cy"] + 1}
    host(e, "undo", 3.1)
    assert e.report()["face_up"] == {"Ada": 2, "Ben": 2, "Cy": 2}


def test_pause_resume_and_tempo_from_the_phone():
    e = engine("hands-up", options={"beat_ms": 2000})
    host(e, "menu", 0.5, name="pause")
    assert e.report()["paused"] is True and e.rules.next_timer(e.game) is None
    host(e, "menu", 0.6, name="pause")      # the entry is "Resume beats" now: refused, said
    assert e.notice == "pause: not now" and e.report()["paused"] is True
    host(e, "menu", 0.7, name="resume")
    assert e.report()["paused"] is False
    host(e, "dial", 0.8, delta=1)            # clockwise: faster
    assert e.game.beat_ms < 2000
    host(e, "dial", 0.9, delta=-1)
    assert e.game.beat_ms == 2000


def test_the_brain_token_bank_from_the_phone():
    """All Wound Up: the menu's Brain tokens opens the bank, the dial moves the cursor, YES
    takes the action, NO closes it - the box's controls, one for one."""
    e = engine("all-wound-up")
    none = e.report()["tokens"]["Ada"]
    host(e, "menu", 0.5, name="bank")
    assert e.report()["screen"] == "bank"
    first = e.game.selected
    host(e, "dial", 0.6, delta=1)
    assert e.game.selected != first
    host(e, "dial", 0.7, delta=-1)
    assert e.game.selected == first
    host(e, "yes", 0.8)                      # the first action: Ada gains a token
    assert e.report()["tokens"]["Ada"] != none
    host(e, "undo", 0.9)
    assert e.report()["tokens"]["Ada"] == none
    host(e, "no", 1.0)
    assert e.report()["screen"] == "main"


def test_an_unknown_menu_entry_is_refused_with_a_notice():
    e = engine("grab-bag")
    before = e.report()
    host(e, "menu", 0.5, name="bank")
    assert e.notice == "bank: not now" and e.report() == before


# ---- the hub's parser: every message is a command or one clear line ----

JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
                       | st.text(max_size=30),
                       lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                       max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(cmd=st.sampled_from(HOST_COMMANDS + ("auth", "", "dial ")), fields=st.dictionaries(
    st.sampled_from(["delta", "key", "player", "name", "names", "game", "options"]), JSONISH, max_size=4))
def test_any_command_message_is_a_command_or_one_clear_line(cmd, fields):
    try:
        out = parse_command({"cmd": cmd, **fields}, PLAYERS)
    except CommandError as err:
        text = str(err)
        assert text and "\n" not in text and len(text) < 200
        return
    assert out.command in HOST_COMMANDS
    if out.command == "dial":
        assert out.delta in (1, -1)
    if out.command == "menu":
        assert out.name and len(out.name) <= 24


@pytest.mark.parametrize("msg, why", [
    ({"cmd": "dial", "delta": 2}, "delta must be 1 or -1"),
    ({"cmd": "dial", "delta": True}, "delta must be 1 or -1"),
    ({"cmd": "dial"}, "delta must be 1 or -1"),
    ({"cmd": "menu", "key": "../x"}, "key must be"),
    ({"cmd": "menu", "key": ""}, "key must be"),
    ({"cmd": "menu", "key": "p" * 25}, "key must be"),
])
def test_bad_dial_and_menu_commands_are_refused_saying_why(msg, why):
    with pytest.raises(CommandError, match=why):
        parse_command(msg, PLAYERS)


# ---- the live box: logged, undone from history/, resumed after a power cut ----

def make_box(factory, state_dir, game="grab-bag"):
    return boxes.make_box(factory, state_dir, game=game, players=PLAYERS, seed=5, display="dummy")


def send(box, msg):
    box.put_host_command(parse_command(msg, tuple(box.engine.players)))
    box.pump()
    box.store.flush()


def buzz_and_judge(box, button, verdict):
    t = box.now()
    box.queue.put(Wake(Edge(t, button, True)))
    box.queue.put(Wake(Edge(t + 0.05, button, False)))
    box.pump()
    time.sleep(0.01)
    box.handle(Wake(None))                   # the settle window closes
    assert box.engine.table.judging
    send(box, {"cmd": verdict})


def records(path):
    return [json.loads(line.rsplit(" ", 1)[0]) for line in path.read_text().splitlines()]


def history(state_dir):
    return sorted(p.name for p in (state_dir / "history").glob("*.log"))


@pytest.mark.parametrize("how", [{"cmd": "new"}, {"cmd": "switch", "game": "hands-up", "options": {"cards": 20}},
                                 {"cmd": "players", "names": ["Ada", "Ben"]}], ids=["new", "switch", "players"])
def test_the_box_brings_the_game_before_back_and_a_power_cut_keeps_it(mock_factory, tmp_path, how):
    box = make_box(mock_factory, tmp_path)
    try:
        buzz_and_judge(box, "P2", "yes")
        buzz_and_judge(box, "P1", "no")
        before = box.engine.report()
        steps = len(box.engine.undo_stack)
        old_log = (tmp_path / "current.log").read_bytes()
        send(box, how)
        after = box.engine.report()
        assert (after["game"], after["players"], after["scores"] if "scores" in after else None) != \
            (before["game"], before["players"], before["scores"])
        assert len(history(tmp_path)) == 1
        assert records(tmp_path / "current.log")[0]["previous"] == 1   # the game it follows
        send(box, {"cmd": "undo"})
        assert box.engine.report() == before
        assert box.engine.notice.startswith("Undone: ")
        assert len(box.engine.undo_stack) == steps           # its own undo steps came back too
        assert history(tmp_path) == []                       # it left history/ for current.log
        assert (tmp_path / "current.log").read_bytes().startswith(old_log)   # two records more
        tail = records(tmp_path / "current.log")[-2:]
        assert "resume" in tail[0] and tail[1]["host"] == "undo"
        buzz_and_judge(box, "P3", "yes")                     # it plays on
        final = box.engine.report()
    finally:
        box.close()
    again = make_box(mock_factory, tmp_path)                 # power cut: the log resumes
    try:
        assert again.engine.report() == final
    finally:
        again.close()


def test_a_power_cut_between_the_undo_and_the_game_before_finishes_it_at_start(mock_factory, tmp_path):
    """The undo is on disk in the new game's log, the game before is still in history/: the
    next start folds that undo, and brings the game before back as the live box would have."""
    box = make_box(mock_factory, tmp_path)
    try:
        buzz_and_judge(box, "P3", "yes")
        before = box.engine.report()
        send(box, {"cmd": "new"})
        t = box.now()
    finally:
        box.close()
    with open(tmp_path / "current.log", "ab") as f:             # the undo, then the cut
        f.write(encode({"t": round(t, 6), "host": "undo"}))
    again = make_box(mock_factory, tmp_path)
    try:
        assert again.engine.report() == before
        assert history(tmp_path) == []
    finally:
        again.close()


def test_a_power_cut_after_the_rename_drops_the_copy_left_in_history(mock_factory, tmp_path):
    box = make_box(mock_factory, tmp_path)
    try:
        buzz_and_judge(box, "P3", "yes")
        send(box, {"cmd": "new"})
        archived = tmp_path / "history" / history(tmp_path)[0]
        kept = archived.read_bytes()
        send(box, {"cmd": "undo"})
        before = box.engine.report()
    finally:
        box.close()
    archived.write_bytes(kept)                  # as if the cut came before its unlink
    again = make_box(mock_factory, tmp_path)
    try:
        assert again.engine.report() == before
        assert history(tmp_path) == []
    finally:
        again.close()


def test_undo_in_the_first_game_has_nothing_to_bring_back(mock_factory, tmp_path):
    box = make_box(mock_factory, tmp_path)
    try:
        before = box.engine.report()
        send(box, {"cmd": "undo"})
        assert box.engine.notice == "Nothing to undo" and box.engine.report() == before
    finally:
        box.close()


def test_a_game_before_that_was_pruned_is_said_so(mock_factory, tmp_path):
    box = make_box(mock_factory, tmp_path)
    try:
        send(box, {"cmd": "new"})
        for path in (tmp_path / "history").glob("*.log"):
            path.unlink()
        before = box.engine.report()
        send(box, {"cmd": "undo"})
        assert box.engine.notice == "Game before: not kept" and box.engine.report() == before
    finally:
        box.close()


def test_a_greyed_game_entry_is_refused_from_the_phone_as_on_the_box():
    """Hands Up! while a grab is judged: *Pause beats* is greyed on the box's menu, and the
    phone's command for it does nothing but say so."""
    e = engine("hands-up", options={"beat_ms": 1000})
    press(e, "P2", 0.5)
    e.advance(0.6)
    assert e.report()["phase"] == "judging"
    host(e, "menu", 0.7, name="pause")
    assert e.notice == "Pause beats: not now" and e.report()["paused"] is False


def test_a_replay_with_new_game_then_long_no_reports_the_game_before():
    """Through the replay contract's own pipeline: MENU > New game (YES, YES), then long NO,
    reports exactly what the same scenario without them reports - twice the same (deterministic)."""
    from helpers.common import replay, scenario, tap
    played = tap("P2", 1.0) + tap("YES", 1.5) + tap("P3", 2.0) + tap("NO", 2.5)
    menu = tap("MENU", 3.0)
    rules = registry.get("grab-bag")
    keys = ([k for k, _ in rules.menu_items(None)] + (["rules"] if rules.rules_card() else [])
            + ["new"])
    turns = [{"t": round(3.2 + i / 10, 6), "turn": 1} for i in range(keys.index("new"))]
    again = tap("YES", 4.0) + tap("YES", 4.3) + tap("P1", 5.0)       # a new game, a buzz in it
    undo = [{"t": 6.0, "press": "NO"}, {"t": 7.2, "release": "NO"}]
    plain = replay(scenario("grab-bag", list(PLAYERS), played, seed=4, end=8.0))
    undone = scenario("grab-bag", list(PLAYERS), played + menu + turns + again + undo, seed=4, end=8.0)
    assert replay(undone) == plain == replay(undone)
    assert plain["scores"] == {"Ada": 0, "Ben": 1, "Cy": 0}


@pytest.mark.parametrize("rules", registry.catalogue(), ids=lambda g: g.name)
def test_each_declared_option_is_what_the_game_accepts(rules):
    """The remote's controls come from `options`: its ends, steps and choices must be values
    the game takes, one past each end a value it refuses (else a phone offers a setting the box
    turns down, or hides one it would take)."""
    from pi_companion.games.base import OptionError
    players = PLAYERS[:max(rules.min_players, 3)] if rules.max_players >= 3 else PLAYERS[:2]
    assert {o.key for o in rules.options} <= rules.option_names
    for opt in rules.options:
        if opt.kind == "int":
            lo = max(opt.lo, len(players)) if opt.lo_players else opt.lo
            for ok in (lo, opt.hi, opt.default) + ((0,) if opt.zero else ()):
                rules.new_game(players, {opt.key: ok}, 1)
            for bad in (lo - 1, opt.hi + 1):
                if bad == 0 and opt.zero:
                    continue
                with pytest.raises(OptionError, match=opt.key):
                    rules.new_game(players, {opt.key: bad}, 1)
        elif opt.kind == "choice":
            for choice in opt.choices:
                rules.new_game(players, {opt.key: choice}, 1)
            with pytest.raises(OptionError, match=opt.key):
                rules.new_game(players, {opt.key: "nonesuch"}, 1)
        else:
            assert opt.kind == "player"
            rules.new_game(players, {opt.key: players[-1]}, 1)
            with pytest.raises(OptionError, match=opt.key):
                rules.new_game(players, {opt.key: "Nobody"}, 1)


@settings(max_examples=200, deadline=None)
@given(game=st.sampled_from([g.name for g in registry.catalogue()]),
       options=st.dictionaries(st.sampled_from(["cards", "beat_ms", "settle_ms", "variant", "mode",
                                                "direction", "tolerance_steps", "max_target",
                                                "first_player", "first_dealer", "first_grab_master", "x"]),
                               JSONISH, max_size=4))
def test_any_change_game_message_is_a_command_or_one_clear_line(game, options):
    try:
        out = parse_command({"cmd": "switch", "game": game, "options": options}, PLAYERS)
    except CommandError as err:
        assert str(err) and "\n" not in str(err)
        return
    assert out.name == game and json.loads(out.options or "{}") == options
