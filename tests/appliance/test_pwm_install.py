"""The hardware PWM's part of the appliance: the unit opens exactly the sysfs directory the tones
are written in (and keeps the rest of /sys read-only), and install.sh writes the pwm overlay
into the boot config once, saying so, only where a boot config exists."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.pwm_tree import Writes, make_tree
from pi_companion.hw.pwm_sysfs import Channel, find

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "systemd" / "pi-companion.service"
SCRIPT = REPO / "systemd" / "install.sh"
LINE = "dtoverlay=pwm,pin=18,func=2"


def unit_values(key: str) -> list[str]:
    out = []
    for line in UNIT.read_text().splitlines():
        k, eq, v = line.strip().partition("=")
        if eq and not line.lstrip().startswith("#") and k == key:
            out.append(v.strip())
    return out


def test_the_unit_opens_exactly_the_chip_every_tone_write_lands_in(tmp_path):
    sysfs = tmp_path / "sys"
    chip = make_tree(sysfs)
    writes = Writes(chip, chip / "pwm0")
    route, _ = find(18, sysfs)
    channel = Channel(route)
    channel.tone(880, 0.5)
    channel.close()
    written = {f"/sys/class/pwm/pwmchip0/{name}" for name, _ in writes.take()}
    assert written == {f"/sys/class/pwm/pwmchip0/{n}" for n in
                       ("export", "unexport", "pwm0/period", "pwm0/duty_cycle", "pwm0/enable")}
    allowed = [p.removeprefix("-") for p in unit_values("ReadWritePaths")]
    assert allowed == ["/sys/class/pwm/pwmchip0"]
    assert all(any(w.startswith(a + "/") for a in allowed) for w in written)
    assert unit_values("ReadWritePaths") == ["-/sys/class/pwm/pwmchip0"], "no chip must be no error"
    # The rest of /sys stays read-only, and nothing else in the sandbox moved.
    for key, value in (("ProtectKernelTunables", "yes"), ("ProtectSystem", "strict"),
                       ("DevicePolicy", "closed"), ("PrivateDevices", None)):
        assert unit_values(key) == ([value] if value else []), key


@pytest.fixture
def install(tmp_path, built_wheel):
    def run(root: Path) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != "DESTDIR"}
        env.update(DESTDIR=str(root), PYTHON=sys.executable, PI_COMPANION_PIP_ARGS="--no-deps",
                   PI_COMPANION_WHEEL=str(built_wheel))
        result = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
        return result
    return run


@pytest.mark.xdist_group("wheel")   # the session's wheel: built once, on one worker
def test_install_writes_the_overlay_once_where_a_boot_config_is(tmp_path, install):
    root = tmp_path / "root"
    boot = root / "boot/firmware/config.txt"
    boot.parent.mkdir(parents=True)
    boot.write_text("[pi4]\narm_boost=1\n[all]\ndtparam=i2c_arm=on")        # no final newline
    out = install(root).stdout
    assert f"added {LINE} to {boot}" in out
    text = boot.read_text()
    assert text.startswith("[pi4]\narm_boost=1\n[all]\ndtparam=i2c_arm=on\n")
    assert text.endswith(f"\n[all]\n{LINE}\n") and text.count(LINE) == 1
    out = install(root).stdout                                              # again: nothing new
    assert f"{boot} already routes GPIO18 to the PWM ({LINE}): kept" in out
    assert boot.read_text() == text
    assert not (root / "etc/default/raspi-firmware-custom").exists()

    # Debian's raspi-firmware rewrites config.txt from its custom file: the line goes there too.
    hook = root / "etc/kernel/postinst.d/z50-raspi-firmware"
    hook.parent.mkdir(parents=True)
    hook.write_text("#!/bin/sh\n")
    install(root)
    assert (root / "etc/default/raspi-firmware-custom").read_text().count(LINE) == 1
    assert boot.read_text() == text

    # Someone else's pwm overlay is left alone, with a warning.
    boot.write_text("dtoverlay=pwm,pin=12,func=4\n")
    result = install(root)
    assert "has 'dtoverlay=pwm,pin=12,func=4': left alone" in result.stderr
    assert boot.read_text() == "dtoverlay=pwm,pin=12,func=4\n"


@pytest.mark.xdist_group("wheel")
def test_install_without_a_boot_config_writes_none(tmp_path, install):
    root = tmp_path / "root"
    out = install(root).stdout
    assert "dtoverlay" not in out and not (root / "boot").exists()
