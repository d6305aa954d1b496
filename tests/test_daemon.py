"""`pi-companion run` under a fake systemd: READY after the hardware is up, WATCHDOG, STOPPING, clean exit."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def start(tmp_path: Path, extra_env=None, args=()):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = tmp_path / "notify.sock"
    sock.bind(str(path))
    sock.settimeout(15)
    env = {**os.environ, "NOTIFY_SOCKET": str(path), **(extra_env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "pi_companion", "run", "--pins", "mock",
                             "--display", "dummy", "--config", str(tmp_path / "absent.toml"),
                             "--state-dir", str(tmp_path / "state"), *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, sock


def receive_until(sock, wanted):
    seen = []
    while wanted not in seen:
        seen.append(sock.recv(4096).decode())
    return seen


def test_ready_watchdog_stopping_and_a_clean_exit(tmp_path):
    proc, sock = start(tmp_path, {"WATCHDOG_USEC": "400000"})
    try:
        assert "READY=1" in receive_until(sock, "READY=1")
        assert "WATCHDOG=1" in receive_until(sock, "WATCHDOG=1")
        assert (tmp_path / "state" / "current.log").exists()
        proc.send_signal(signal.SIGTERM)
        assert "STOPPING=1" in receive_until(sock, "STOPPING=1")
        assert proc.wait(timeout=10) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        proc.kill()
        sock.close()


def test_ready_without_a_display(tmp_path):
    env = {"PI_COMPANION_TEST": "1"}
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "n.sock"))
    sock.settimeout(15)
    proc = subprocess.Popen([sys.executable, "-m", "pi_companion", "run", "--pins", "mock",
                             "--display", "ssd1306", "--config", str(tmp_path / "absent.toml"),
                             "--state-dir", str(tmp_path / "state")],
                            env={**os.environ, **env, "NOTIFY_SOCKET": str(tmp_path / "n.sock")},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "READY=1" in receive_until(sock, "READY=1")    # no I2C bus here: plays on without one
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        err = proc.stderr.read()
        assert err.count("display unavailable") == 1 and "Traceback" not in err
    finally:
        proc.kill()
        sock.close()


def test_run_without_a_pin_factory_says_so(tmp_path):
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "lgpio"}
    out = subprocess.run([sys.executable, "-m", "pi_companion", "run", "--display", "none",
                          "--config", str(tmp_path / "absent.toml"), "--state-dir", str(tmp_path)],
                         env=env, capture_output=True, text=True, timeout=30)
    assert out.returncode == 1
    assert "no GPIO pin factory" in out.stderr and "--pins mock" in out.stderr
    assert out.stderr.count("\n") == 1
