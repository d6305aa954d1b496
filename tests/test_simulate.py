"""The emulated box: keys drive mock pins, the OLED is drawn in the terminal, q quits."""
from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

from PIL import Image

from conftest import wait_for
from pi_companion.hw.pinmap import load_pinmap
from pi_companion.simulate import KeyPad, frame_lines


def test_frame_lines_full_and_half_size():
    image = Image.new("1", (128, 64))
    image.putpixel((0, 0), 1)
    image.putpixel((127, 63), 1)
    full = frame_lines(image, 140)
    assert len(full) == 32 and all(len(line) == 128 for line in full)
    assert full[0][0] == "▀" and full[31][127] == "▄"
    half = frame_lines(image, 80)
    assert len(half) == 32 and all(len(line) == 64 for line in half)
    assert half[0][0] == "▘" and half[31][63] == "▗"


def test_keys_drive_the_mock_pins(mock_factory):
    pins = load_pinmap()
    for name in ("P2", "YES", "ENC_A", "ENC_B", "HALL_A", "HALL_B"):
        mock_factory.pin(pins[name]).function = "input"
    pad = KeyPad(mock_factory, pins, 3)
    assert pad.key("2") and not pad.key("9") and not pad.key("x")
    pad.run_due()
    assert mock_factory.pin(pins["P2"]).state == 0           # pressed (pulled to ground)
    assert wait_for(lambda: (pad.run_due(), mock_factory.pin(pins["P2"]).state)[1] == 1, 1.0)
    pad.key(".")                                             # one turntable step: A rises
    pad.run_due()
    assert mock_factory.pin(pins["HALL_A"]).state == 1 and mock_factory.pin(pins["HALL_B"]).state == 0


def test_simulate_in_a_real_terminal_plays_and_quits():
    leader, follower = pty.openpty()
    os.set_blocking(leader, False)
    env = {**os.environ, "COLUMNS": "140", "LINES": "45", "TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-m", "pi_companion", "simulate", "--players", "Ada,Ben,Cy",
                             "--config", "/nonexistent"], stdin=follower, stdout=follower,
                            stderr=subprocess.PIPE, env=env, close_fds=True)
    os.close(follower)
    seen = b""

    def read_until(marker, timeout=15.0):
        nonlocal seen
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            ready, _, _ = select.select([leader], [], [], 0.1)
            if ready:
                try:
                    seen += os.read(leader, 65536)
                except OSError:
                    break
            if marker in seen:
                return True
        return False

    try:
        assert read_until("Grab Bag".encode())
        seen = b""
        os.write(leader, b"2")
        assert read_until("Ada○ Ben● Cy○".encode())            # Ben buzzed: only his lamp is lit
        assert "sound: buzz".encode() in seen or read_until(b"sound: buzz")
        os.write(leader, b"q")
        assert proc.wait(timeout=10) == 0
        assert b"Traceback" not in proc.stderr.read()
    finally:
        proc.kill()
        os.close(leader)
