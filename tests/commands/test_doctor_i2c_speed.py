"""doctor's i2c row reads the bus speed back from the device tree the kernel booted (real files
under a fake root, laid out as /sys and /proc/device-tree lay them out)."""
from __future__ import annotations

import argparse

from pi_companion.doctor import doctor

ALIAS = b"/soc/i2c@7e804000\0"


def i2c_row(tmp_path, root) -> str:
    config = tmp_path / "c.toml"
    config.write_text(f"[box]\nstate_dir = '{tmp_path}'\n[display]\ndriver = 'ssd1306'\n")
    lines: list[str] = []
    doctor(argparse.Namespace(config=str(config), pins="mock"), out=lines.append, root=root)
    [row] = [line for line in lines if line[5:].startswith("i2c ")]
    return row


def proc_tree(root, hz=None):
    """/proc/device-tree with the i2c1 alias and its node (a clock-frequency when hz)."""
    tree = root / "proc/device-tree"
    (tree / "aliases").mkdir(parents=True)
    (tree / "aliases/i2c1").write_bytes(ALIAS)
    node = tree / "soc/i2c@7e804000"
    node.mkdir(parents=True)
    (node / "compatible").write_bytes(b"brcm,bcm2835-i2c\0")
    if hz is not None:
        (node / "clock-frequency").write_bytes(hz.to_bytes(4, "big"))
    return node


def boot_config(root, text):
    (root / "boot/firmware").mkdir(parents=True)
    (root / "boot/firmware/config.txt").write_text(text)


def test_a_config_txt_that_did_not_reach_the_device_tree_is_named(tmp_path):
    """A device tree without the property runs at the driver's 100 kHz, whatever config.txt
    asks: the row says both, not the 400 kHz the file promises."""
    root = tmp_path / "root"
    node = root / "sys/class/i2c-adapter/i2c-1/of_node"
    node.mkdir(parents=True)
    (node / "compatible").write_bytes(b"brcm,bcm2835-i2c\0")
    boot_config(root, "[all]\ndtparam=i2c_arm=on,i2c_arm_baudrate=400000\n")
    row = i2c_row(tmp_path, root)
    assert row.startswith("WARN i2c") and "runs at 100 kHz" in row
    assert "no clock-frequency" in row and "config.txt asks for 400 kHz" in row


def test_the_speed_is_read_through_proc_device_tree_s_alias(tmp_path):
    root = tmp_path / "root"
    node = proc_tree(root, hz=400_000)
    boot_config(root, "dtparam=i2c_arm=on\n")          # the tree outranks the file
    row = i2c_row(tmp_path, root)
    assert row.startswith("OK   i2c") and "400 kHz" in row and str(node / "clock-frequency") in row


def test_a_slow_tree_under_the_alias_warns_with_the_fix(tmp_path):
    root = tmp_path / "root"
    proc_tree(root, hz=100_000)
    row = i2c_row(tmp_path, root)
    assert row.startswith("WARN i2c") and "100 kHz" in row and "i2c_arm_baudrate=400000" in row


def test_an_alias_to_nowhere_falls_back_to_config_txt(tmp_path):
    root = tmp_path / "root"
    (root / "proc/device-tree/aliases").mkdir(parents=True)
    (root / "proc/device-tree/aliases/i2c1").write_bytes(ALIAS)
    boot_config(root, "dtparam=i2c_arm_baudrate=400000\n")
    row = i2c_row(tmp_path, root)
    assert row.startswith("OK   i2c") and "400 kHz" in row and "config.txt" in row
