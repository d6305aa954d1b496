"""A game log that cannot be written: the box plays on from memory, says so once, retries, and
then writes a log holding exactly the records the engine acted on; the watchdog is fed only by
a loop that handles its inputs; a state directory that cannot be written is not a config error.

Faults are injected at every write site of the writer thread (open, write, fdatasync, fsync of
the directory, replace, mkdir) at the start, on append and on archive; the real daemon runs
with `RLIMIT_FSIZE` and in a directory it may not write."""
from __future__ import annotations

import errno
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from helpers.common import wait_for
from helpers.boxes import make_box
from pi_companion.box import Box, Wake, frames
from pi_companion.config import Config
from pi_companion.core.events import Edge, Request
from pi_companion.core.records import to_record
from pi_companion.gamelog import GameLog

CONFIG = Config(players=("Ada", "Ben", "Cy"), seed=9, sound=False)


class Faults:
    """Makes one os function raise OSError(code) in the log's writer thread while `on`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, name: str, code: int) -> None:
        self.on = False
        self.hits = 0
        real = getattr(os, name)

        def faulty(*args, **kwargs):
            if self.on and threading.current_thread().name == "game-log":
                self.hits += 1
                raise OSError(code, os.strerror(code))
            return real(*args, **kwargs)

        monkeypatch.setattr(os, name, faulty)


def taps(start: float, *buttons: str) -> list[Edge]:
    out, t = [], start
    for button in buttons:
        out += [Edge(t, button, True), Edge(t + 0.05, button, False)]
        t += 0.5
    return out


FIRST = taps(1.0, "P2", "YES", "P3", "NO")
SECOND = taps(5.0, "P1", "YES", "P2", "YES", "P3")

# (phase, os function, errno): every write site the phase reaches.
CASES = [
    ("start", "open", errno.EROFS), ("start", "write", errno.ENOSPC),
    ("start", "fdatasync", errno.EIO), ("start", "replace", errno.EACCES),
    ("start", "fsync", errno.EIO), ("start", "mkdir", errno.EROFS),
    ("append", "write", errno.ENOSPC), ("append", "fdatasync", errno.EIO),
    ("archive", "replace", errno.EROFS), ("archive", "mkdir", errno.ENOSPC),
    ("archive", "open", errno.EIO), ("archive", "write", errno.EFBIG),
]
WORDS = {errno.EROFS: "read-only", errno.EACCES: "read-only", errno.ENOSPC: "disk full",
         errno.EIO: "disk error", errno.EFBIG: "file too big"}


def feed(box: Box, events: list[Edge]) -> None:
    for event in events:
        box.queue.put(Wake(event))
        box.pump()


@pytest.mark.parametrize("phase,name,code", CASES, ids=[f"{p}-{n}" for p, n, _ in CASES])
def test_a_failed_write_drops_no_input_and_the_log_catches_up(phase, name, code, mock_factory,
                                                            tmp_path, monkeypatch, caplog):
    banners: list[str] = []
    real_banner = frames.banner
    monkeypatch.setattr(frames, "banner", lambda draw, text: banners.append(text) or real_banner(draw, text))
    faults = Faults(monkeypatch, name, code)
    state = tmp_path / "state"
    faults.on = phase == "start"
    box = make_box(mock_factory, config=CONFIG, store=GameLog(state, retry_s=0.05))
    try:
        feed(box, FIRST)
        if phase == "archive":
            box.store.flush()
            faults.on = True
            box.request(Request("new"))
        faults.on = faults.on or phase == "append"
        feed(box, SECOND)
        acted = (SECOND if phase == "archive" else FIRST + SECOND)
        assert box.handled == len(FIRST) + len(SECOND)            # every input reached the engine
        reference = make_box(MockFactory(pin_class=MockPWMPin), config=CONFIG)   # no log
        feed(reference, FIRST)
        if phase == "archive":
            reference.request(Request("new"))
        feed(reference, SECOND)
        assert box.engine.report() == reference.engine.report()
        reference.close()
        time.sleep(0.2)                                            # a few retries fail meanwhile
        assert faults.hits >= 2, "the writer retries"
        why = WORDS[code]
        assert box.store.problem == why and f"not saving: {why}" in banners
        assert caplog.text.count("not saving") == 1                 # in the journal once
        faults.on = False
        assert box.store.flush(timeout=5), (box.store.durable, box.store.seq, box.store.problem, box.store._inbox)
        assert box.store.problem is None and "saving again" in caplog.text
        header, records = GameLog(state).load()
        assert records == [to_record(e) for e in acted]             # exactly what was acted on
        before = box.engine.report()
    finally:
        box.close()
    again = make_box(mock_factory, state, config=CONFIG)
    try:
        assert again.resumed and again.engine.report() == before
    finally:
        again.close()


def test_a_loop_that_fails_every_pass_does_not_feed_the_watchdog(mock_factory, tmp_path, caplog):
    kicks = []
    box = make_box(mock_factory, tmp_path, config=CONFIG, watchdog=lambda: kicks.append(1))
    box.start()
    try:
        deadline = time.monotonic() + 5
        while not kicks and time.monotonic() < deadline:
            time.sleep(0.01)
        assert kicks, "a healthy loop feeds the watchdog"

        def broken() -> float:
            raise RuntimeError("a bug in every pass")
        box.engine.next_deadline = broken  # type: ignore[method-assign]
        box.queue.put(Wake())
        time.sleep(0.1)
        kicks.clear()
        time.sleep(0.4)
        assert not kicks and "a bug in every pass" in caplog.text
    finally:
        box.engine.next_deadline = lambda: None  # type: ignore[method-assign]
        box.close()


# ---- the real daemon ----------------------------------------------------------------------

def start_daemon(base: Path, state: Path, preexec=None):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = base / "notify.sock"
    sock.bind(str(path))
    path.chmod(0o777)
    sock.settimeout(15)
    env = {**os.environ, "NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "400000"}
    proc = subprocess.Popen([sys.executable, "-m", "pi_companion", "run", "--pins", "mock",
                             "--display", "dummy", "--config", "/dev/null",
                             "--state-dir", str(state)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=preexec, cwd=str(Path(__file__).parents[2]))
    return proc, sock


def messages(sock: socket.socket, seconds: float) -> list[str]:
    """Datagrams until READY and three WATCHDOG=1 have come, or `seconds` have passed."""
    seen, end = [], time.monotonic() + seconds
    while time.monotonic() < end and not ("READY=1" in seen and seen.count("WATCHDOG=1") >= 3):
        sock.settimeout(max(0.01, end - time.monotonic()))
        try:
            seen.append(sock.recv(4096).decode())
        except socket.timeout:
            break
    return seen


def wait_for_file(path: Path, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and path.stat().st_size > 0:
            return True
        time.sleep(0.05)
    return False


def check_header(path: Path) -> None:
    header, records = GameLog(path.parent).load()
    assert header["v"] == 2 and header["game"] == "grab-bag" and records == []


def stop(proc: subprocess.Popen, sock: socket.socket) -> str:
    proc.send_signal(signal.SIGTERM)
    try:
        assert proc.wait(timeout=10) == 0
        return proc.stderr.read()
    finally:
        proc.kill()
        sock.close()


def test_the_daemon_plays_on_when_the_file_size_limit_stops_the_log(tmp_path):
    state = tmp_path / "state"
    proc, sock = start_daemon(tmp_path, state, preexec=lambda: resource.setrlimit(
        resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY)))
    try:
        seen = messages(sock, 15.0)
        assert proc.poll() is None, proc.stderr.read()               # not exit 78: it plays on
        assert "READY=1" in seen and seen.count("WATCHDOG=1") >= 3    # the loop is alive
        assert not (state / "current.log").exists()
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        assert wait_for_file(state / "current.log", 5.0)              # the retry writes it
        check_header(state / "current.log")
    finally:
        err = stop(proc, sock)
    assert err.count("not saving (file too big") == 1 and "saving again" in err
    assert "Traceback" not in err


def drop_root_overrides() -> None:
    """In the child, before exec: root without CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and
    CAP_FOWNER (dropped from the bounding set) obeys a directory's mode like anyone else."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2, 3):
        if libc.prctl(24, cap, 0, 0, 0) != 0:          # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_the_daemon_plays_on_in_a_state_dir_it_may_not_write(tmp_path):
    base = Path(tempfile.mkdtemp(prefix="pi-companion-ro-"))
    try:
        base.chmod(0o755)
        state = base / "state"
        state.mkdir(mode=0o755)
        state.chmod(0o555)
        preexec = drop_root_overrides if os.geteuid() == 0 else None
        unlock = lambda: state.chmod(0o755)  # noqa: E731
        proc, sock = start_daemon(base, state, preexec)
        try:
            seen = messages(sock, 15.0)
            assert proc.poll() is None, proc.stderr.read()
            assert "READY=1" in seen and seen.count("WATCHDOG=1") >= 3
            unlock()
            assert wait_for_file(state / "current.log", 5.0)
            check_header(state / "current.log")
        finally:
            err = stop(proc, sock)
        assert err.count("not saving (read-only") == 1 and "Traceback" not in err
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=False)


def test_the_oled_says_saving_again_without_waiting_for_an_input(mock_factory, tmp_path, monkeypatch):
    """The real loop thread, a real GameLog and luma's dummy OLED: a disk that fills and then
    frees. Once the writer's retry succeeds the OLED drops "not saving" on its own; it used to
    keep it until somebody pressed something (the loop sleeps with nothing due)."""
    banners: list[str] = []
    drawn: list[bool] = []                    # per frame drawn: did it carry the banner?
    real_banner, real_draw = frames.banner, Box.draw
    monkeypatch.setattr(frames, "banner", lambda draw, text: banners.append(text) or real_banner(draw, text))

    def draw(self):
        before = len(banners)
        real_draw(self)
        drawn.append(len(banners) > before)
    monkeypatch.setattr(Box, "draw", draw)
    faults = Faults(monkeypatch, "write", errno.ENOSPC)
    box = make_box(mock_factory, config=CONFIG, display="dummy",
                   store=GameLog(tmp_path / "state", retry_s=0.1))
    box.start()
    try:
        assert wait_for(lambda: drawn)
        faults.on = True
        feed(box, [Edge(box.now() + 0.01, "P2", True)])
        assert wait_for(lambda: drawn and drawn[-1]), "the OLED says not saving"
        assert banners[-1] == "not saving: disk full"
        faults.on = False                      # the disk has room again; nobody touches a button
        assert wait_for(lambda: box.store.problem is None)
        assert wait_for(lambda: not drawn[-1], timeout=3), "the OLED still says not saving"
    finally:
        box.close()
