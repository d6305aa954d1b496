"""`pi-companion run` on mock pins under a NOTIFY_SOCKET of the test's (commands/test_daemon,
gamelog/test_state_lock, hub/test_roles)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path


def start(tmp_path: Path, extra_env=None, args=(), code: str | None = None,
          config: str | Path = os.devnull):
    """`pi-companion run` on mock pins under a NOTIFY_SOCKET of the test's; `code`: a Python
    snippet run with `-c` instead of `-m pi_companion` (it runs the package itself), from
    `tmp_path`."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = tmp_path / "notify.sock"
    sock.bind(str(path))
    sock.settimeout(15)
    env = {**os.environ, "NOTIFY_SOCKET": str(path), **(extra_env or {})}
    head = ["-m", "pi_companion"] if code is None else ["-c", code]
    proc = subprocess.Popen([sys.executable, *head, "run", "--pins", "mock",
                             "--display", "dummy", "--config", str(config),
                             "--state-dir", str(tmp_path / "state"), *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path)
    return proc, sock


def receive_until(sock, wanted):
    seen = []
    while wanted not in seen:
        seen.append(sock.recv(4096).decode())
    return seen


@contextmanager
def ready(tmp_path: Path, *args, **kwargs):
    """`start(...)` up to its READY=1; yields (proc, sock). On the way out, however the test
    ended, the process is killed and reaped and the socket closed."""
    proc, sock = start(tmp_path, *args, **kwargs)
    try:
        assert "READY=1" in receive_until(sock, "READY=1")
        yield proc, sock
    finally:
        proc.kill()
        proc.wait(timeout=10)
        sock.close()
