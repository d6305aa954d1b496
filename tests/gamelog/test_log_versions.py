"""The log format's version rule (docs/reliability.md): a log the previous release wrote is
resumed exactly; a log that names a later format is refused by the daemon in one line and left
untouched, byte for byte, with nothing moved aside."""
from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from helpers.boxes import make_box
from helpers.common import Clock, VirtualFactory, VirtualPin, run_cli
from pi_companion.gamelog import Damaged, TooNew
from pi_companion.gamelog.format import decode_header

DATA = Path(__file__).parent / "data"
# Written by pi-companion 0.1.0 (commit 10efd8b): Grab Bag for three, mid-game; its status as
# 0.1.0 printed it, and the undo steps 0.1.0's engine held then.
OLD_LOG = DATA / "current-0.1.0.log"
OLD_STATUS = json.loads((DATA / "current-0.1.0.status.json").read_text())
OLD_UNDO = ["NO for Ben", "YES for Cy", "YES for Ada"]


def v2_line(obj: dict) -> bytes:
    payload = json.dumps(obj, separators=(",", ":")).encode()
    return payload + b" %08x\n" % zlib.crc32(payload)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file and folder (the state directory's `lock`, which any start takes, aside)."""
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>"
            for p in sorted(folder.rglob("*")) if p.name != "lock"}


def config(tmp_path: Path) -> str:
    path = tmp_path / "config.toml"
    path.write_text('[box]\nplayers = ["Ada", "Ben", "Cy"]\n')
    return str(path)


def daemon_argv(tmp_path: Path, state: Path) -> list[str]:
    return [sys.executable, "-m", "pi_companion", "run", "--pins", "mock", "--display", "dummy",
            "--config", config(tmp_path), "--state-dir", str(state)]


def test_the_previous_release_s_log_resumes_the_same_state_and_undo_steps(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    shutil.copy(OLD_LOG, state / "current.log")
    status = run_cli("status", "--state-dir", str(state), "--config", config(tmp_path), "--json")
    # A newer version may add to the status (the board's players out, ...); what the old one
    # said must read the same.
    got = json.loads(status.stdout)
    assert {k: got.get(k) for k in OLD_STATUS} == OLD_STATUS, status.stderr
    Clock.now = 100.0
    factory = VirtualFactory(pin_class=VirtualPin)
    box = make_box(factory, state, players=("Ada", "Ben", "Cy"), display="dummy")
    try:
        assert box.resumed
        report = box.engine.report()
        assert {k: report.get(k) for k in OLD_STATUS if k != "logged_inputs"} \
            == {k: v for k, v in OLD_STATUS.items() if k != "logged_inputs"}
        assert [label for _, label in box.engine.undo_stack] == OLD_UNDO
    finally:
        box.close()
        factory.reset()
    assert (state / "current.log").read_bytes().startswith(OLD_LOG.read_bytes())


def test_the_real_daemon_resumes_the_previous_release_s_log(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    shutil.copy(OLD_LOG, state / "current.log")
    daemon = subprocess.Popen(daemon_argv(tmp_path, state), stderr=subprocess.PIPE, text=True)
    try:
        said = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = daemon.stderr.readline()
            said.append(line)
            if "ready:" in line or not line:
                break
        assert any("resumed grab-bag after 18 logged inputs" in line for line in said), said
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=10)
    assert daemon.returncode == 0
    assert (state / "current.log").read_bytes().startswith(OLD_LOG.read_bytes())


NEWER = [
    pytest.param(v2_line({"v": 3, "game": "grab-bag", "players": ["A", "B"], "seed": 1}), id="v3-in-v2-shape"),
    pytest.param(b'{"v":3,"compressed":"zstd"}\n\x28\xb5\x2f\xfd\x00binary', id="v3-other-shape"),
    pytest.param(b'{"v":12}\n', id="v12-bare"),
]


@pytest.mark.parametrize("header", NEWER)
def test_a_newer_format_is_refused_by_the_daemon_in_one_line_and_left_untouched(tmp_path, header):
    state = tmp_path / "state"
    (state / "history").mkdir(parents=True)
    (state / "current.log").write_bytes(header + OLD_LOG.read_bytes().split(b"\n", 1)[1])
    before = snapshot(state)
    out = subprocess.run(daemon_argv(tmp_path, state), capture_output=True, text=True, timeout=30)
    assert out.returncode == 78
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "current.log is in format v" in lines[0] and "newer than" in lines[0], lines
    assert snapshot(state) == before
    status = run_cli("status", "--state-dir", str(state), "--config", config(tmp_path))
    assert status.returncode != 0 and "newer than" in status.stderr
    assert snapshot(state) == before


def test_the_header_rule_tells_newer_from_damaged():
    assert decode_header(v2_line({"v": 2, "game": "x"})) == ({"v": 2, "game": "x"}, 2)
    assert decode_header(b'{"v":1,"game":"x"}\n') == ({"v": 1, "game": "x"}, 1)
    with pytest.raises(TooNew) as err:
        decode_header(b'{"v":3,"game":"x"} 00000000\n')
    assert err.value.version == 3
    for damaged in (b'{"v":2,"game":"x"} 00000000\n', b'{"v":"3"}\n', b'{"game":"x","v":3}\n',
                    b'{"v":30000000000}\n', b'{"v":1.5}\n'):
        with pytest.raises(Damaged):
            decode_header(damaged)
