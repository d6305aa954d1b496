"""The line pi-companion-update.service leaves in the state directory: the real daemon shows it
on its first frame at the next start (luma's dummy device), once; doctor shows the last one."""
from __future__ import annotations

import argparse
import os

from helpers.common import run_cli, stop_at_ready


def start_and_stop(tmp_path, monkeypatch) -> list[bytes]:
    """daemon.main on mock pins and the dummy display, stopped at READY=1: the frames shown."""
    from gpiozero import Device

    from pi_companion import daemon
    from pi_companion.hw import display as display_mod

    frames: list[bytes] = []
    real_show = display_mod.Display.show
    monkeypatch.setattr(display_mod.Display, "show",
                        lambda self, frame, now: frames.append(frame.tobytes()) or real_show(self, frame, now))
    monkeypatch.setattr(daemon, "UPDATE_SHOWN_S", 0.0)
    stop_at_ready(monkeypatch)
    args = argparse.Namespace(config=os.devnull, game=None, players=None,
                              pins="mock", display="dummy", state_dir=str(tmp_path / "state"))
    previous = Device.pin_factory
    try:
        assert daemon.main(args) == 0
    finally:
        Device.pin_factory.reset()
        Device.pin_factory = previous
    return frames


def test_the_daemon_shows_the_update_once_at_start(tmp_path, monkeypatch):
    from pi_companion.ui.screens import message_frame

    state = tmp_path / "state"
    state.mkdir()
    (state / "update-result").write_text("updated to 0.2.1\n")
    frames = start_and_stop(tmp_path, monkeypatch)
    assert frames[0] == message_frame("updated to 0.2.1").tobytes()
    assert frames[1] != frames[0]                      # then the game
    assert not (state / "update-result").exists()
    assert (state / "update-result.seen").read_text() == "updated to 0.2.1\n"
    again = start_and_stop(tmp_path, monkeypatch)
    assert message_frame("updated to 0.2.1").tobytes() not in again


def test_doctor_shows_the_last_update(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text(f"[box]\nstate_dir = '{tmp_path}'\n")
    out = run_cli("doctor", "--config", str(config), "--pins", "mock")
    assert "update" not in out.stdout
    (tmp_path / "update-result").write_text("update refused: checksum\n")
    out = run_cli("doctor", "--config", str(config), "--pins", "mock")
    assert "WARN update   update refused: checksum" in out.stdout.splitlines()
    (tmp_path / "update-result").rename(tmp_path / "update-result.seen")
    (tmp_path / "update-result.seen").write_text("updated to 0.2.1\n")
    out = run_cli("doctor", "--config", str(config), "--pins", "mock")
    assert "OK   update   updated to 0.2.1" in out.stdout.splitlines()
