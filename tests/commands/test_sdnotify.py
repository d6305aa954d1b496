"""sd_notify over real AF_UNIX datagram sockets, the watchdog period, power-off's failures."""
from __future__ import annotations

import logging
import os
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_companion import systemd


@pytest.fixture
def path_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify"))
    sock.settimeout(2)
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "notify"))
    yield sock
    sock.close()


@pytest.fixture
def abstract_socket(monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    name = f"pi-companion-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(2)
    monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
    yield sock
    sock.close()


@pytest.mark.parametrize("state", ["READY=1", "WATCHDOG=1", "STOPPING=1", "STATUS=grab-bag"])
def test_notify_reaches_a_path_socket(path_socket: socket.socket, state: str) -> None:
    assert systemd.notify(state) is True
    assert path_socket.recv(4096) == state.encode()


def test_notify_reaches_an_abstract_socket(abstract_socket: socket.socket) -> None:
    for state in ("READY=1", "WATCHDOG=1", "STOPPING=1"):
        assert systemd.notify(state) is True
        assert abstract_socket.recv(4096) == state.encode()


def test_notify_without_a_socket_is_false(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert systemd.notify("READY=1") is False
    monkeypatch.setenv("NOTIFY_SOCKET", "")
    assert systemd.notify("READY=1") is False


@pytest.mark.parametrize("address",
                         ["/nonexistent/notify", "@pi-companion-nobody-listens", "vsock:2:1234"])
def test_notify_to_a_missing_socket_is_false_not_an_error(
        monkeypatch: pytest.MonkeyPatch, address: str) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", address)
    assert systemd.notify("WATCHDOG=1") is False


def test_notify_to_a_socket_that_went_away(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify"))
    sock.close()  # the file stays, nobody listens: connect() is refused
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "notify"))
    assert systemd.notify("READY=1") is False


@pytest.mark.parametrize(("usec", "expected"), [
    ("10000000", 5.0), ("1000000", 0.5), ("1", 0.0000005),
    ("0", None), ("-5", None), ("", None), ("ten", None),
])
def test_watchdog_interval_is_half_the_period(
        monkeypatch: pytest.MonkeyPatch, usec: str, expected: float | None) -> None:
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    monkeypatch.setenv("WATCHDOG_USEC", usec)
    assert systemd.watchdog_interval() == expected


def test_watchdog_interval_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    assert systemd.watchdog_interval() is None


def test_watchdog_interval_checks_the_pid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", "10000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert systemd.watchdog_interval() == 5.0
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid() + 1))
    assert systemd.watchdog_interval() is None


def test_power_off_asks_logind_for_poweroff_only(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, ...]] = []

    def fake_run(argv: tuple[str, ...], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(tuple(argv))
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(subprocess, "run", fake_run)
    systemd.power_off()
    assert calls == [("busctl", "call", "--system", "org.freedesktop.login1",
                      "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                      "PowerOff", "b", "false")]


@pytest.mark.parametrize("failure", [
    FileNotFoundError(2, "No such file or directory", "busctl"),
    subprocess.TimeoutExpired("busctl", 30),
    subprocess.CompletedProcess(["busctl"], 1, "", "Access denied"),
])
def test_power_off_logs_failures_and_does_not_raise(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        failure: BaseException | subprocess.CompletedProcess[str]) -> None:
    def fake_run(argv: tuple[str, ...], **kwargs: object) -> subprocess.CompletedProcess[str]:
        if isinstance(failure, BaseException):
            raise failure
        return failure

    monkeypatch.setattr(subprocess, "run", fake_run)
    with caplog.at_level(logging.ERROR, logger="pi_companion.systemd"):
        systemd.power_off()
    assert "power-off" in caplog.text

