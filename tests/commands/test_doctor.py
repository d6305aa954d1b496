"""`pi-companion doctor` reports each part and what to fix; it fails only on what stops the box."""
from __future__ import annotations

from helpers.common import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st


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


def test_doctor_sums_up_gpiozero_fallbacks_in_one_row(tmp_path):
    """On a PC gpiozero warns once per backend it tries (two lines each); doctor prints only
    its table, the pins row naming what was tried."""
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "GPIOZERO_PIN_FACTORY"}
    out = subprocess.run([sys.executable, "-m", "pi_companion", "doctor", "--config", os.devnull,
                          "--pins", "auto"], env=env, capture_output=True, text=True, timeout=30)
    assert out.stderr == ""
    assert "PinFactoryFallback" not in out.stdout
    pins = [line for line in out.stdout.splitlines() if line[5:].startswith("pins ")]
    assert len(pins) == 1 and "tried lgpio: " in pins[0], out.stdout
    assert all(line[:4] in ("OK  ", "WARN", "FAIL") for line in out.stdout.splitlines()), out.stdout


def test_doctor_as_the_readme_shows_it_on_a_pc_says_it_is_a_pc_and_exits_0(tmp_path):
    """No GPIO and no config: the pins and the box's state directory are not asked for. One INFO
    row each says why and what `--pins mock` does; nothing fails."""
    import os
    import subprocess
    import sys
    from pi_companion.doctor import is_pc
    assert is_pc()                                   # this test machine has no GPIO chip
    env = {k: v for k, v in os.environ.items() if k != "GPIOZERO_PIN_FACTORY"}
    import pytest
    from pi_companion.cli import DEFAULT_CONFIG
    if DEFAULT_CONFIG.exists():
        pytest.skip(f"{DEFAULT_CONFIG} exists on this machine: not the README's fresh PC")
    out = subprocess.run([sys.executable, "-m", "pi_companion", "doctor"],       # as the README shows it
                         env=env, capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert out.returncode == 0 and out.stderr == "", out.stdout + out.stderr
    rows = {line[5:14].strip(): line for line in out.stdout.splitlines()}
    assert rows["pins"].startswith("INFO") and "this is a PC" in rows["pins"] and "--pins mock" in rows["pins"]
    from pi_companion.config import Config
    if os.path.isdir(Config.state_dir):               # a machine where a box once ran: it is there
        assert rows["state"].startswith(("OK", "INFO")), rows["state"]
    else:
        assert rows["state"].startswith("INFO") and "--state-dir" in rows["state"]
    assert "FAIL" not in out.stdout
    # No I2C bus on a PC is no fault to mend: not the Pi's raspi-config advice, but what shows the OLED here.
    assert rows["display"].startswith("INFO") and "this is a PC" in rows["display"], rows["display"]
    assert "raspi-config" not in rows["display"] and "simulate" in rows["display"]


def test_doctor_on_a_pi_still_fails_on_its_pins_and_state(tmp_path):
    from types import SimpleNamespace
    from pi_companion.doctor import doctor, is_pc
    lines = []
    config = tmp_path / "config.toml"             # not the machine's: its state dir may exist
    config.write_text(f"[box]\nstate_dir = '{tmp_path / 'not-made-yet'}'\n")
    args = SimpleNamespace(config=str(config), pins=None)
    assert doctor(args, lines.append, pc=False) == 1
    assert any(l.startswith("FAIL state") for l in lines)
    (tmp_path / "dev").mkdir()
    assert is_pc(tmp_path)
    (tmp_path / "proc/device-tree").mkdir(parents=True)
    (tmp_path / "proc/device-tree/model").write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\0")
    assert not is_pc(tmp_path)
    (tmp_path / "proc/device-tree/model").unlink()
    (tmp_path / "dev/gpiochip0").touch()
    assert not is_pc(tmp_path)


def test_doctor_names_every_player_without_a_button(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text(f"[box]\nstate_dir = '{tmp_path}'\ngame = 'hands-up'\n"
                      "players = ['Ada', 'Ben', 'Cy', 'Di', 'Eve', 'Flo']\n")
    out = run_cli("doctor", "--config", str(config), "--pins", "mock")
    assert out.returncode == 1
    row = next(line for line in out.stdout.splitlines() if line.startswith("FAIL pin map"))
    assert "no button for Eve (P5), Flo (P6)" in row and 'box.pinmap = "8players"' in row
    config.write_text(config.read_text() + "pinmap = '8players'\n")
    out = run_cli("doctor", "--config", str(config), "--pins", "mock")
    row = next(line for line in out.stdout.splitlines() if "pin map" in line)
    assert out.returncode == 0, out.stdout
    assert row.startswith("OK   pin map") and "buttons P1-P6 for Ada, Ben, Cy, Di, Eve, Flo" in row


def test_an_explicit_config_that_does_not_exist_is_an_error(tmp_path):
    missing = str(tmp_path / "typo.toml")
    out = run_cli("run", "--config", missing, "--pins", "mock", "--display", "none",
                  "--state-dir", str(tmp_path))
    assert out.returncode == 78 and out.stderr.count("\n") == 1
    assert f"{missing}: no such file" in out.stderr
    out = run_cli("doctor", "--config", missing, "--pins", "mock")
    assert out.returncode == 1 and f"FAIL config   {missing}: no such file" in out.stdout


def test_only_the_default_config_may_be_absent(tmp_path, monkeypatch):
    from pi_companion import config
    from pi_companion.config import Config, load_config_arg
    # The default path made the test's own, absent whatever this machine has in /etc.
    monkeypatch.setattr(config, "DEFAULT_CONFIG", tmp_path / "config.toml")
    assert load_config_arg(str(config.DEFAULT_CONFIG)) == Config()


def test_doctor_shows_the_big_screens_address(tmp_path):
    import socket
    config = tmp_path / "c.toml"
    config.write_text(f"[box]\nstate_dir = '{tmp_path}'\n[web]\nenabled = true\nport = 8090\n")
    out = run_cli("doctor", "--config", str(config), "--pins", "mock")
    assert f"OK   web      big screen at http://{socket.gethostname()}.local:8090/" in out.stdout
    config.write_text(f"[box]\nstate_dir = '{tmp_path}'\n")
    assert "big screen off" in run_cli("doctor", "--config", str(config), "--pins", "mock").stdout


# The I2C bus speed (issue 27): a fake root with the device tree's property and/or config.txt.

def doctor_rows(tmp_path, root, port=1):
    import argparse

    from pi_companion.doctor import doctor
    config = tmp_path / "c.toml"
    config.write_text(f"[box]\nstate_dir = '{tmp_path}'\n[display]\ndriver = 'ssd1306'\ni2c_port = {port}\n")
    lines: list[str] = []
    doctor(argparse.Namespace(config=str(config), pins="mock"), out=lines.append, root=root)
    return [line for line in lines if line[5:].startswith("i2c ")]


def fake_root(tmp_path, hz=None, config_txt=None, where="boot/firmware/config.txt", port=1):
    root = tmp_path / "root"
    if hz is not None:
        node = root / f"sys/class/i2c-adapter/i2c-{port}/of_node"
        node.mkdir(parents=True)
        (node / "clock-frequency").write_bytes(hz.to_bytes(4, "big"))
    if config_txt is not None:
        (root / where).parent.mkdir(parents=True, exist_ok=True)
        (root / where).write_text(config_txt)
    root.mkdir(exist_ok=True)
    return root


def test_doctor_warns_when_the_running_bus_is_at_100_khz(tmp_path):
    [row] = doctor_rows(tmp_path, fake_root(tmp_path, hz=100_000))
    assert row.startswith("WARN i2c") and "100 kHz" in row and "i2c_arm_baudrate=400000" in row
    assert "of_node/clock-frequency" in row


def test_doctor_is_content_with_400_khz_and_the_kernel_outranks_config_txt(tmp_path):
    root = fake_root(tmp_path, hz=400_000, config_txt="dtparam=i2c_arm=on\n")   # edited, not rebooted
    [row] = doctor_rows(tmp_path, root)
    assert row.startswith("OK   i2c") and "400 kHz" in row


def test_doctor_reads_config_txt_without_a_device_tree(tmp_path):
    root = fake_root(tmp_path, config_txt="[all]\ndtparam=i2c_arm=on\n")
    [row] = doctor_rows(tmp_path, root)
    assert row.startswith("WARN i2c") and "100 kHz" in row and "config.txt" in row
    root = fake_root(tmp_path / "b", config_txt="dtparam=i2c_arm=on,i2c_arm_baudrate=400000 # fast\n",
                     where="boot/config.txt")
    [row] = doctor_rows(tmp_path / "b", root)
    assert row.startswith("OK   i2c") and "400 kHz" in row


def test_doctor_says_nothing_it_does_not_know(tmp_path):
    [row] = doctor_rows(tmp_path, fake_root(tmp_path))
    assert row.startswith("OK   i2c") and "not known" in row
    [row] = doctor_rows(tmp_path / "b", fake_root(tmp_path / "b", config_txt="dtparam=i2c_arm=on\n"), port=3)
    assert row.startswith("OK   i2c") and "not known" in row          # config.txt sets bus 1 only


PARAM = st.sampled_from(["i2c_arm=on", "i2c_arm_baudrate", "i2c_baudrate", "spi=on", "audio=on"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.lists(st.tuples(PARAM, st.integers(1, 3_400_000)), min_size=1,
                                                  max_size=3)), max_size=6), st.text(max_size=40))
def test_config_txt_baudrate_is_the_last_one_set(lines, noise):
    """Any config.txt: the parser never raises, and reports the last baudrate set on a line
    that is not a comment (`noise` is a comment line or a line of other text)."""
    from pi_companion.doctor import parse_baudrate
    text, expected = [], None
    for commented, params in lines:
        parts = []
        for name, number in params:
            if name.endswith("baudrate"):
                parts.append(f"{name}={number}")
                if not commented:
                    expected = number
            else:
                parts.append(name)
        text.append(("# " if commented else "") + "dtparam=" + ",".join(parts))
        text.append("#" + " ".join(noise.splitlines()))
    assert parse_baudrate("\n".join(text)) == expected
    parse_baudrate(noise)


# The pins row names the board (the device tree's model) and the header's chip (path and label).

def test_doctor_s_pins_row_names_the_board_and_the_header_chip(tmp_path, monkeypatch):
    import argparse

    from gpiozero import Device

    from pi_companion import assemble
    from pi_companion.doctor import board_model, check_pins, doctor
    root = tmp_path / "root"
    (root / "proc/device-tree").mkdir(parents=True)
    (root / "proc/device-tree/model").write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\0")
    assert board_model(root) == "Raspberry Pi 5 Model B Rev 1.0"
    assert board_model(tmp_path) is None

    class Found:                      # what KernelFactory says it found, without a chip here
        chip_path, chip_label = "/dev/gpiochip4", "pinctrl-rp1"

    monkeypatch.setattr(Device, "pin_factory", None)
    monkeypatch.setattr(assemble, "make_factory",
                        lambda kind, edges: setattr(Device, "pin_factory", Found()))
    level, row = check_pins("auto", "kernel", root)
    assert level == "ok" and row.startswith('pin factory Found on /dev/gpiochip4 "pinctrl-rp1" (every pin')
    assert row.endswith("; board: Raspberry Pi 5 Model B Rev 1.0"), row
    assert "board" not in check_pins("auto", "kernel", tmp_path)[1]

    config = tmp_path / "c.toml"
    config.write_text(f"[box]\nstate_dir = '{tmp_path}'\n")
    lines: list[str] = []
    doctor(argparse.Namespace(config=str(config), pins="auto"), out=lines.append, pc=False, root=root)
    pins = next(line for line in lines if line[5:].startswith("pins "))
    assert pins.startswith("OK   pins") and '/dev/gpiochip4 "pinctrl-rp1"' in pins
    assert "board: Raspberry Pi 5 Model B Rev 1.0" in pins
