"""SIGTERM the real daemon at random moments: it exits within 2 s every time (issue 27, item 7).

Each try starts `pi-companion run --pins mock --display dummy` as a fresh interpreter under a
fake systemd (NOTIFY_SOCKET), waits a random time between 0 and twice its start -> READY time
(so the signal lands in the imports, in the start-up, around READY and the main thread's first
sleep, and on an idle box; every tenth try right after READY, which also measures that time
anew; every fourth try a random time after READY, to a thread other than the main one, so
that the case that hung is never left to chance), and sends one SIGTERM. Half the other tries send it as `kill` does (the
kernel picks the thread, almost always the main one); the other half hand it to a thread other
than the main one, picked at random (tgkill), which is what the kernel does when the main
thread has the signal blocked or another one pending: the case that left the daemon asleep
(it took a second SIGTERM to end it). Before its handlers are installed the daemon dies of the signal
(-SIGTERM, as systemd expects); after, it exits 0. Nothing else is allowed. No try may leave the
daemon running 20 s after the signal (the race's daemon never exited without a second signal),
and none may take over 2 s from the signal to the exit unless the machine is overloaded (load
average above its cores: then the exit's own work, a thread join and the log's last sync, can
take longer, and the test warns instead).

`make test` runs 30 tries; `make torture` runs the issue's 500 (marker `torture`).
"""
from __future__ import annotations

import ctypes
import os
import random
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
EXIT_S = 2.0       # the promise: exit within 2 s of the signal
HANG_S = 20.0      # not gone by then: the signal was lost (the race left the daemon asleep for good)
LIBC = ctypes.CDLL(None, use_errno=True)


def tgkill(pid: int, tid: int, sig: int) -> bool:
    """Send `sig` to thread `tid` of process `pid`; False if that thread is gone."""
    return LIBC.tgkill(pid, tid, sig) == 0


def threads(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except FileNotFoundError:
        return []


def ready_seen(sock: socket.socket) -> bool:
    seen = False
    while True:
        try:
            seen = sock.recv(4096) == b"READY=1" or seen
        except BlockingIOError:
            return seen


def one_try(tmp: Path, delay: float | None, rng: random.Random,
            after_ready: float | None = None) -> dict:
    """One daemon, one SIGTERM `delay` s after its start (None: right after READY).

    With `after_ready`, the signal goes `after_ready` s after READY, always to a thread other
    than the main one: the case that hung, tried on purpose rather than left to chance."""
    tmp.mkdir()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp / "notify.sock"))
    env = {**os.environ, "NOTIFY_SOCKET": str(tmp / "notify.sock")}
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "pi_companion", "run", "--pins", "mock",
                             "--display", "dummy", "--config", os.devnull,
                             "--state-dir", str(tmp / "state")],
                            env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        if delay is None or after_ready is not None:
            sock.settimeout(30)
            while sock.recv(4096) != b"READY=1":
                pass
            time.sleep(after_ready or 0.0)
        else:
            time.sleep(max(0.0, delay - (time.monotonic() - start)))
        sock.setblocking(False)
        ready = ready_seen(sock) or (delay is None or after_ready is not None)
        to_thread = after_ready is not None or rng.random() < 0.5
        others = [t for t in threads(proc.pid) if t != proc.pid]
        target = rng.choice(others) if to_thread and others else None
        sent = time.monotonic()
        if target is None or not tgkill(proc.pid, target, signal.SIGTERM):
            proc.send_signal(signal.SIGTERM)
            target = None
        try:
            code = proc.wait(timeout=HANG_S)
        except subprocess.TimeoutExpired:
            code = None                           # asleep for good: it would need a second signal
        took = time.monotonic() - sent
        return {"code": code, "took": took, "ready": ready, "elapsed": sent - start,
                "thread": target, "main": target in (None, proc.pid),
                "stderr": "" if code is None else proc.stderr.read()}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
        sock.close()


def sigterm_loop(tmp_path: Path, tries: int) -> None:
    rng = random.Random(int.from_bytes(os.urandom(4), "big"))
    first = one_try(tmp_path / "t0", None, rng)                # also: how long start -> READY takes
    results = [first]
    ready_s = first["elapsed"]
    for i in range(1, tries):
        if i % 10 == 0:                          # right after READY: also follows the machine's load
            result = one_try(tmp_path / f"t{i}", None, rng)
            ready_s = 0.7 * ready_s + 0.3 * result["elapsed"]
        elif i % 4 == 1:                         # the box up, a non-main thread: never left to chance
            result = one_try(tmp_path / f"t{i}", None, rng, after_ready=rng.uniform(0, ready_s))
        else:
            result = one_try(tmp_path / f"t{i}", rng.uniform(0, 2 * ready_s), rng)
        results.append(result)
    hung = [r for r in results if r["code"] is None]
    assert not hung, (f"{len(hung)} of {tries} SIGTERMs left the daemon running {HANG_S:g} s later: "
                      + "; ".join(f"{r['elapsed']:.3f} s after start, READY {'sent' if r['ready'] else 'not yet'}, "
                                  f"{'main thread' if r['main'] else 'thread ' + str(r['thread'])}"
                                  for r in hung[:5]))
    wrong = [r for r in results if r["code"] not in (0, -signal.SIGTERM)
             or (r["code"] == 0 and "Traceback" in r["stderr"])]
    assert not wrong, [(r["code"], r["stderr"][-400:]) for r in wrong[:3]]
    # Within 2 s: held when the machine has a core to spare; on an overloaded one (other suites,
    # VMs syncing their disks) the exit's own work - the loop thread's join, the log's last
    # sync - can take longer, which says nothing about the code: reported, not failed.
    slow = [r for r in results if r["took"] > EXIT_S]
    if slow:
        message = (f"{len(slow)} of {tries} exits took over {EXIT_S:g} s (longest {max(r['took'] for r in slow):.1f} s, "
                   f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
        assert os.getloadavg()[0] > (os.cpu_count() or 1), message
        warnings.warn(message)
    # The case that hung: the box up and the signal on a thread other than the main one (every
    # fourth try is made so; this fails only if the box had no thread but the main one).
    assert sum(r["ready"] and not r["main"] for r in results) >= tries // 8, \
        "too few tries hit a running box on a non-main thread to mean anything"


def test_sigterm_at_random_moments_always_ends_the_daemon(tmp_path):
    sigterm_loop(tmp_path, int(os.environ.get("PI_COMPANION_SIGTERM_TRIES", "30")))


@pytest.mark.torture
def test_five_hundred_sigterms_at_random_moments(tmp_path):
    sigterm_loop(tmp_path, 500)
