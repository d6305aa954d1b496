"""`pi-companion doctor` reports each part and what to fix; it fails only on what stops the box."""
from __future__ import annotations

from conftest import run_cli


def test_doctor_on_a_pc_with_mock_pins(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text(f"[box]\nstate_dir = '{tmp_path}'\n[display]\ni2c_port = 19\n")
    out = run_cli("doctor", "--config", str(config), "--pins", "mock")
    lines = out.stdout.splitlines()
    assert out.returncode == 0, out.stdout + out.stderr
    assert any(l.startswith("OK   pins") and "MockFactory" in l for l in lines)
    assert any(l.startswith("WARN display") and "enable I2C" in l for l in lines)
    assert any(l.startswith("OK   state") for l in lines)


def test_doctor_fails_on_a_missing_state_dir_and_a_bad_config(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text(f"[box]\nstate_dir = '{tmp_path / 'nope'}'\n")
    out = run_cli("doctor", "--config", str(config), "--pins", "mock")
    assert out.returncode == 1 and "FAIL state" in out.stdout and "install -d" in out.stdout
    config.write_text("[box]\nhistory = 'lots'\n")
    out = run_cli("doctor", "--config", str(config), "--pins", "mock")
    assert out.returncode == 1 and "box.history: must be an integer" in out.stdout


def test_doctor_without_a_pin_factory(tmp_path):
    import os
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "pi_companion", "doctor", "--config", str(tmp_path / "x")],
                         env={**os.environ, "GPIOZERO_PIN_FACTORY": "lgpio"},
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 1 and "FAIL pins" in out.stdout and "--pins mock" in out.stdout


def test_simulate_without_a_terminal_says_so_in_one_line():
    out = run_cli("simulate", stdin="")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "needs an interactive terminal" in out.stderr
