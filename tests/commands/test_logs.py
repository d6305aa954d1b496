"""Log lines: `LEVEL name: msg` in a terminal; under systemd (JOURNAL_STREAM names our stderr)
each line starts with its sd-daemon `<N>` syslog priority, so `journalctl -p warning` filters."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time


def run_daemon(tmp_path, journal: bool | str):
    """The real daemon with --display ssd1306 (no I2C bus here: one warning), stopped after READY;
    its stderr is a pipe whose device:inode is passed in JOURNAL_STREAM when `journal`."""
    read_end, write_end = os.pipe()
    st = os.fstat(write_end)
    env = {k: v for k, v in os.environ.items() if k != "JOURNAL_STREAM"}
    if journal is True:
        env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
    elif journal:
        env["JOURNAL_STREAM"] = journal
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify.sock"))
    sock.settimeout(20)
    env["NOTIFY_SOCKET"] = str(tmp_path / "notify.sock")
    config = tmp_path / "config.toml"
    config.write_text("[box]\nlog_level = \"debug\"\n")
    proc = subprocess.Popen([sys.executable, "-m", "pi_companion", "run", "--pins", "mock", "--display",
                             "ssd1306", "--config", str(config), "--state-dir", str(tmp_path / "state")],
                            env=env, stderr=write_end, stdout=subprocess.DEVNULL)
    os.close(write_end)
    try:
        while sock.recv(4096) != b"READY=1":
            pass
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        proc.wait()
        sock.close()
    return read_all(read_end).decode("utf-8").splitlines()


def read_all(fd: int, timeout: float = 10.0) -> bytes:
    """What is in the pipe until EOF, or until nothing came for `timeout` seconds."""
    import select
    data = b""
    try:
        while select.select([fd], [], [], timeout)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    return data


def test_under_systemd_every_line_carries_its_priority(tmp_path):
    lines = run_daemon(tmp_path, journal=True)
    assert lines and all(line[:3] in ("<3>", "<4>", "<6>", "<7>") for line in lines), lines
    assert any(line.startswith("<4>WARNING pi_companion.hw.display: ") for line in lines), lines
    assert any(line.startswith("<6>INFO pi_companion: ready") for line in lines), lines


def test_in_a_terminal_or_when_stderr_was_redirected_lines_are_plain(tmp_path):
    for journal in (False, "1:2"):        # unset, or naming another stream than our stderr
        (tmp_path / "notify.sock").unlink(missing_ok=True)
        lines = run_daemon(tmp_path, journal=journal)
        assert any(line.startswith("WARNING pi_companion.hw.display: ") for line in lines), lines
        assert any(line.startswith("INFO pi_companion: ready") for line in lines), lines
        assert not any(line.startswith("<") for line in lines), lines


def test_a_traceback_keeps_its_priority_on_every_line(capsys):
    import io
    import logging

    from pi_companion import logs
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JournalFormatter(logs.FORMAT))
    log = logging.getLogger("pi_companion.test_logs")
    log.addHandler(handler)
    try:
        try:
            raise ZeroDivisionError("boom")
        except ZeroDivisionError:
            log.error("the loop failed", exc_info=True)
    finally:
        log.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert len(lines) > 2 and all(line.startswith("<3>") for line in lines)
    assert [logs.priority(level) for level in (logging.CRITICAL, logging.ERROR, logging.WARNING,
                                               logging.INFO, logging.DEBUG, 25)] == [2, 3, 4, 6, 7, 6]
