"""The real daemon at rest: no thread wakes up when there is nothing to do (counts, not time).

`pi-companion run` with mock pins and luma's dummy display, no watchdog configured, Grab Bag
waiting for a press: over two idle seconds the context switches of all its threads (from
/proc/PID/task/*/status) must not grow - the loop waits for an input or a real timer only and
the main thread for a signal. (With the unit's watchdog the loop wakes once per WatchdogSec/2:
tests/box/test_live_loop.py counts that.)
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def switches(pid: int) -> int:
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            for line in (task / "status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def test_an_idle_daemon_does_not_wake_up(tmp_path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify.sock"))
    sock.settimeout(20)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WATCHDOG_")}
    env["NOTIFY_SOCKET"] = str(tmp_path / "notify.sock")
    proc = subprocess.Popen([sys.executable, "-m", "pi_companion", "run", "--pins", "mock",
                             "--display", "dummy", "--config", os.devnull,
                             "--state-dir", str(tmp_path / "state")],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while "READY=1" not in sock.recv(4096).decode():
            pass
        time.sleep(1.0)                         # the first frame, the log's header
        before = switches(proc.pid)
        time.sleep(2.0)
        after = switches(proc.pid)
        assert after - before == 0, f"{after - before} wake-ups while idle"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        sock.close()
