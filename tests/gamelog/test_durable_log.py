"""The durable game log: resume after a power cut, torn lines, corrupt logs, history, SIGKILL loop."""
from __future__ import annotations

import json
import os
import pickle
import random
import shutil
import tempfile
import sys
import time
from pathlib import Path


from helpers import boxes
from pi_companion.box import Wake
from pi_companion.config import Config
from pi_companion.core.engine import Engine
from pi_companion.core.events import Edge
from pi_companion.core.records import from_record
from pi_companion.gamelog import GameLog
from pi_companion.games import registry

from helpers import crash_child
from helpers.zygote import Zygote

CONFIG = Config(players=("Ada", "Ben", "Cy"), seed=9, sound=False)


def make_box(factory, state_dir, config=CONFIG):
    return boxes.make_box(factory, state_dir, config=config)


def play(box, events):
    for ev in events:
        box.queue.put(Wake(ev))
    box.pump()


def taps(*pairs):
    out = []
    for t, button in pairs:
        out += [Edge(t, button, True), Edge(t + 0.05, button, False)]
    return out


def test_resume_gives_the_same_scores_phase_and_grab_master(mock_factory, tmp_path):
    box = make_box(mock_factory, tmp_path)
    play(box, taps((1.0, "P2"), (1.5, "YES"), (2.0, "P3"), (2.5, "NO"), (3.0, "P1")))
    before = box.engine.report()
    box.close()
    again = make_box(mock_factory, tmp_path)
    try:
        assert again.resumed and again.engine.report() == before
        assert before["grab_master"] == "Ben" and before["phase"] == "judging"
        play(again, taps((again.engine.clock + 1, "YES")))
        assert again.engine.report()["scores"]["Ada"] == 1
    finally:
        again.close()


def test_a_different_config_does_not_replace_the_game_in_progress(mock_factory, tmp_path):
    box = make_box(mock_factory, tmp_path)
    play(box, taps((1.0, "P2"), (1.5, "YES")))
    box.close()
    other = make_box(mock_factory, tmp_path, Config(players=("X", "Y"), seed=1, sound=False))
    try:
        assert other.engine.players == ("Ada", "Ben", "Cy")
    finally:
        other.close()


def test_torn_last_line_is_dropped(mock_factory, tmp_path, caplog):
    store = GameLog(tmp_path)
    store.start({"game": "grab-bag", "players": ["Ada", "Ben", "Cy"], "options": {}, "seed": 9})
    store.append({"t": 1.0, "press": "P1"})
    store.close()
    whole = store.path.read_bytes()
    with open(store.path, "ab") as f:
        f.write(b'{"t": 1.05, "rele')
    header, records = GameLog(tmp_path).load()
    assert records == [{"t": 1.0, "press": "P1"}] and header["game"] == "grab-bag"
    box = make_box(mock_factory, tmp_path)
    try:
        assert box.resumed and box.resumed_records == 1
        assert box.store.flush()
        assert "torn" in caplog.text
        repaired = store.path.read_bytes()                          # the torn tail is gone:
        assert repaired.startswith(whole)                           # what follows is the
        assert [r.get("resume") for r in GameLog(tmp_path).load()[1]] == [None, 1]  # restart's record
        assert not list(tmp_path.glob("corrupt-*.log"))             # a torn line is no damage
    finally:
        box.close()


def test_damaged_record_resumes_the_prefix_and_keeps_the_file(mock_factory, tmp_path, caplog):
    box = make_box(mock_factory, tmp_path)
    play(box, taps((1.0, "P2"), (1.5, "YES")))
    before = box.engine.report()
    play(box, taps((2.0, "P3"), (2.5, "YES")))
    box.close()
    content = store_bytes = (tmp_path / "current.log").read_bytes()
    lines = content.split(b"\n")
    lines[6] = lines[6].replace(b'"P3"', b'"P1"')                 # a press that never happened
    (tmp_path / "current.log").write_bytes(b"\n".join(lines))
    again = make_box(mock_factory, tmp_path)
    try:
        assert again.resumed and again.resumed_records == 5
        assert again.engine.report()["scores"] == before["scores"]
        assert again.engine.notice.startswith("recovered to 0:0")
        assert again.store.flush()
        aside = list(tmp_path.glob("corrupt-*.log"))
        assert len(aside) == 1 and aside[0].read_bytes() == b"\n".join(lines)
        prefix = b"\n".join(store_bytes.split(b"\n")[:6]) + b"\n"
        assert (tmp_path / "current.log").read_bytes().startswith(prefix)  # then the restart's record
        assert "record 6: checksum mismatch" in caplog.text
    finally:
        again.close()


def test_corrupt_header_is_moved_aside_not_deleted(mock_factory, tmp_path, caplog):
    store = GameLog(tmp_path)
    store.start({"game": "grab-bag", "players": ["A", "B", "C"], "options": {}, "seed": 1})
    store.append({"t": 1.0, "press": "P2"})
    store.close()
    content = store.path.read_bytes()
    store.path.write_bytes(content.replace(b'"game"', b'\x00\xffgame"'))
    box = make_box(mock_factory, tmp_path)
    try:
        assert not box.resumed and box.engine.report()["round"] == 1
        aside = list(tmp_path.glob("corrupt-*.log"))
        assert len(aside) == 1 and aside[0].read_bytes() == content.replace(b'"game"', b'\x00\xffgame"')
        assert "moved it to" in caplog.text
    finally:
        box.close()


def test_unknown_game_in_header_is_moved_aside(mock_factory, tmp_path):
    store = GameLog(tmp_path)
    store.start({"game": "chess", "players": ["A", "B"], "options": {}, "seed": 1})
    store.close()
    box = make_box(mock_factory, tmp_path)
    try:
        assert not box.resumed and list(tmp_path.glob("corrupt-*.log"))
    finally:
        box.close()


def test_history_keeps_the_last_n_games(tmp_path):
    store = GameLog(tmp_path, history=3)
    for seed in range(6):
        store.start({"game": "grab-bag", "players": ["A", "B"], "options": {}, "seed": seed})
    store.close()
    kept = sorted((tmp_path / "history").glob("*.log"))
    assert len(kept) == 3
    seeds = [json.loads(p.read_text().splitlines()[0].rpartition(" ")[0])["seed"] for p in kept]
    assert seeds == [2, 3, 4]


def test_history_is_ordered_and_pruned_by_the_box_s_number_not_the_clock(tmp_path, monkeypatch):
    """The wall clock went back an hour between games (no RTC, NTP not yet synced, a DST
    mistake): the newest games must stay, and /history must still list them first."""
    import time as real_time

    from pi_companion.gamelog import history_files
    from pi_companion.web.history import history
    stamps = iter(f"20261201-{23 - i:02d}0000" for i in range(20))      # each game an hour earlier
    real_strftime = real_time.strftime
    monkeypatch.setattr(real_time, "strftime",
                        lambda fmt, *a: next(stamps) if fmt == "%Y%m%d-%H%M%S" else real_strftime(fmt, *a))
    hist = tmp_path / "history"
    hist.mkdir()
    (hist / "20251231-235959-1.log").write_text("{}\n")     # a name from before the numbers
    store = GameLog(tmp_path, history=3)
    for seed in range(6):
        store.start({"game": "grab-bag", "players": ["A", "B"], "options": {}, "seed": seed})
        assert store.flush()
    store.close()
    kept = history_files(hist)
    seeds = [json.loads(p.read_text().splitlines()[0].rpartition(" ")[0])["seed"] for p in kept]
    assert seeds == [2, 3, 4], [p.name for p in kept]
    assert not (hist / "20251231-235959-1.log").exists()   # the oldest, whatever its name
    # /history reads the same order (newest first): write a finished game into each file.
    from pi_companion.web import history as web_history
    monkeypatch.setattr(web_history, "game_summary",
                        lambda path: {"over": True, "players": [], "winners": [], "path": path.name})
    assert [g["path"] for g in history(tmp_path)[0]] == [p.name for p in reversed(kept)]


def test_history_is_the_only_thing_the_group_may_read(tmp_path):
    """Under the unit's UMask=0077 the big screen's user (in the daemon's group) reads the
    finished games in history/ and nothing else: the current game stays the daemon's."""
    old_umask = os.umask(0o077)
    try:
        store = GameLog(tmp_path, history=3)
        (tmp_path / "history").mkdir(mode=0o700)             # as an older version left it
        for seed in range(3):
            store.start({"game": "grab-bag", "players": ["A", "B"], "options": {}, "seed": seed})
        store.close()
    finally:
        os.umask(old_umask)
    mode = lambda p: p.stat().st_mode & 0o777              # noqa: E731
    assert mode(tmp_path / "history") == 0o750
    games = sorted((tmp_path / "history").glob("*.log"))
    assert len(games) == 2 and {mode(p) for p in games} == {0o640}
    assert mode(tmp_path / "current.log") == 0o600


def memory_dir(tmp_path):
    """A real directory in memory where there is one (SIGKILL keeps what was written either
    way; fsync on a busy disk would only slow the loop down)."""
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return Path(tempfile.mkdtemp(prefix="pi-companion-", dir="/dev/shm"))
    return tmp_path / "state"


class Fold:
    """The test's own fold of the log's records (resume's own rules, not its code path): the
    reports it gives, kept from run to run of the SIGKILL loop."""

    def __init__(self) -> None:
        self.engine = Engine(registry.get("grab-bag"), crash_child.CONFIG.players,
                             crash_child.CONFIG.options_for("grab-bag"), crash_child.CONFIG.seed or 0)
        self.records: list[dict] = []

    @staticmethod
    def feed(engine, rec):
        event = from_record(rec)
        engine.advance(event) if isinstance(event, float) else engine.feed(event)

    def extend(self, records, at, where):
        """Fold the records added since the last call; the report after record `at` (a new one)."""
        n = len(self.records)
        assert records[:n] == self.records, f"{where}: the log changed what it held"
        assert at is None or at >= n, f"{where}: acknowledged before this run"
        there = None
        for i in range(n, len(records)):
            self.feed(self.engine, records[i])
            if i == at:
                there = self.engine.report()
        self.records = list(records)
        return there

    def resumed(self):
        """The report of the fold, then the cut: a `resume` at the last logged time."""
        if not self.records:
            return self.engine.report()
        engine = pickle.loads(pickle.dumps(self.engine))
        self.feed(engine, {"t": self.records[-1]["t"], "resume": 1})
        return engine.report()


def test_sigkill_at_random_moments_loses_no_acknowledged_event(mock_factory, tmp_path):
    # The children fork from one warm interpreter (tests/helpers/zygote.py): each is its own
    # process, SIGKILLed as before, without paying the interpreter's start 100 times.
    # Each child resumes the log its predecessor left: its first line is the report it resumed
    # to, checked against the test's own fold of that log (then the cut). The fold is kept
    # from run to run (the log only grows), so the test folds each record once, not each run.
    rng = random.Random(7)
    script = crash_child.script()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2]), *sys.path])}
    server = Zygote(env)
    state = memory_dir(tmp_path)
    folded = Fold()
    resumed = folded.resumed()                    # what the first child starts from: a new game
    try:
        for run in range(100):
            child = server.spawn("crash_child", [str(state)], tmp_path)
            start = child.out.readline().split(" ", 2)
            acked, reports = int(start[1]), {}
            assert json.loads(start[2]) == resumed, f"run {run}: resumed to another state"
            for _ in range(rng.randrange(0, 25)):
                line = child.out.readline()
                if not line:
                    break
                _, index, report = line.split(" ", 2)
                acked, reports[int(index)] = int(index), json.loads(report)
            time.sleep(rng.random() * 0.002)
            child.kill()
            loaded = GameLog(state).load()
            assert loaded is not None, f"run {run}: the log was lost"
            records = loaded[1]
            inputs = [i for i, r in enumerate(records) if "resume" not in r]
            logged = [crash_child.Edge(records[i]["t"], records[i].get("press", records[i].get("release")),
                                       "press" in records[i]) for i in inputs]
            assert len(logged) >= acked, f"run {run}: acknowledged {acked}, logged {len(logged)}"
            assert logged == script[:len(logged)], f"run {run}: the log differs from what was played"
            then = folded.extend(records, inputs[acked - 1] if reports else None, f"run {run}")
            if reports:                  # what the child acknowledged is what its log folds to
                assert reports[acked] == then, f"run {run}"
            resumed = folded.resumed()   # ... and the next resume is that fold, then the cut
        box = make_box(mock_factory, state, crash_child.CONFIG)
        try:                             # the last run's log, resumed here
            assert box.engine.report() == resumed
        finally:
            box.close()
    finally:
        server.close()
        shutil.rmtree(state, ignore_errors=True)
    assert len(logged) > 100          # the game really went on across the kills


def test_a_record_that_is_not_json_is_reported_and_the_log_writes_on(tmp_path, caplog):
    """Records are encoded on the writer thread: one that cannot be (a bug upstream) costs
    that record and a one-line error, not the writer - later records are still made durable."""
    log = GameLog(tmp_path)
    log.start({"game": "grab-bag", "players": ["Ada", "Ben"], "options": {}, "seed": 1})
    log.append({"t": 1.0, "press": "P1"})
    log.append({"t": 1.1, "press": object()})
    seq = log.append({"t": 1.2, "release": "P1"})
    assert log.wait(seq) and log.problem is None
    log.close()
    assert "record not saved, not JSON" in caplog.text
    header, records = GameLog(tmp_path).load()
    assert [r["t"] for r in records] == [1.0, 1.2]
