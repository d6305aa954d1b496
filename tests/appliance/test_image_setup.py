"""The SD-card image's first-boot settings (systemd/image/files/pi-companion-setup.py): what a
user writes on the card's FAT partition becomes the hostname, the Wi-Fi connection and country,
SSH on or off and the box's config. Run as the real script on a temporary root (--root)."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "systemd" / "image" / "files" / "pi-companion-setup.py"
TEMPLATE = REPO / "systemd" / "image" / "files" / "pi-companion-setup.toml"
NM = "etc/NetworkManager/system-connections/pi-companion-wifi.nmconnection"
HOTSPOT = "etc/NetworkManager/system-connections/pi-companion-hotspot.nmconnection"
HOTSPOT_JSON = "var/lib/pi-companion-setup/hotspot.json"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBq9l5oSBa2z1xzYQb2sH3Q7aW5mVq7xk0n2QeXvG4lM you@laptop"

spec = importlib.util.spec_from_file_location("pi_companion_setup", SCRIPT)
assert spec is not None and spec.loader is not None
setup_mod = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = setup_mod       # dataclasses look their module up there
spec.loader.exec_module(setup_mod)


def run(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)],
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def card(tmp_path: Path) -> Path:
    """A root tree as the image ships it: SSH off, the FAT partition under boot/firmware."""
    root = tmp_path / "root"
    (root / "boot/firmware").mkdir(parents=True)
    (root / "etc/ssh").mkdir(parents=True)
    (root / "etc/ssh/sshd_not_to_be_run").write_text("")
    (root / "etc/hosts").write_text("127.0.0.1\tlocalhost\n127.0.1.1\tpi-companion\n")
    (root / "boot/firmware/pi-companion-setup.toml").write_text(TEMPLATE.read_text())
    return root


def test_the_shipped_template_changes_nothing_but_is_valid(card: Path) -> None:
    assert setup_mod.parse_setup(TEMPLATE.read_text()) == setup_mod.Setup()
    result = run(card)
    assert result.returncode == 0 and result.stderr == ""
    assert (card / "etc/ssh/sshd_not_to_be_run").exists()
    assert not (card / NM).exists() and not (card / "etc/hostname").exists()
    # The box's own hotspot is on by default: named after the box, with a password made for
    # this box once (kept: the next start shows the same one).
    hotspot = (card / HOTSPOT).read_text()
    assert stat.S_IMODE((card / HOTSPOT).stat().st_mode) == 0o600
    assert keyfile_value(hotspot, "wifi", "mode") == "ap" and keyfile_value(hotspot, "ipv4", "method") == "shared"
    assert keyfile_value(hotspot, "wifi", "ssid") == "".join(f"{b};" for b in b"pi-companion")
    assert int(keyfile_value(hotspot, "connection", "autoconnect-priority")) < 0
    network = json.loads((card / HOTSPOT_JSON).read_text())
    assert stat.S_IMODE((card / HOTSPOT_JSON).stat().st_mode) == 0o600
    assert network["ssid"] == "pi-companion" and keyfile_value(hotspot, "wifi-security", "psk") == network["password"]
    assert re.fullmatch(r"[a-km-np-z2-9]{5}-[a-km-np-z2-9]{5}", network["password"])
    assert run(card).returncode == 0
    assert json.loads((card / HOTSPOT_JSON).read_text()) == network
    assert (card / HOTSPOT).read_text() == hotspot


def test_the_template_uncommented_is_applied_whole(card: Path) -> None:
    # A user who removes the leading "# " of each example line gets exactly those settings.
    text = "\n".join(line[2:] if line.startswith("# ") and " = " in line else line
                     for line in TEMPLATE.read_text().splitlines())
    text = text.replace("ssh-ed25519 AAAA... you@laptop", KEY)
    (card / "boot/firmware/pi-companion-setup.toml").write_text(text)
    (card / "boot/firmware/pi-companion.toml").write_text("[web]\nenabled = true\n")
    result = run(card)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert (card / "etc/hostname").read_text() == "pi-companion\n"
    connection = (card / NM).read_text()
    assert stat.S_IMODE((card / NM).stat().st_mode) == 0o600
    assert "ssid=" + "".join(f"{b};" for b in b"Home network") in connection
    assert "psk=its password\n" in connection
    assert (card / "etc/modprobe.d/pi-companion-wifi.conf").read_text().endswith("ieee80211_regdom=GB\n")
    assert (card / "root/.ssh/authorized_keys").read_text() == KEY + "\n"
    assert stat.S_IMODE((card / "root/.ssh/authorized_keys").stat().st_mode) == 0o600
    assert not (card / "etc/ssh/sshd_not_to_be_run").exists()
    assert (card / "etc/pi-companion/config.toml").read_text() == "[web]\nenabled = true\n"
    assert json.loads((card / HOTSPOT_JSON).read_text()) == {"ssid": "pi-companion", "password": "a password of yours"}
    assert keyfile_value((card / HOTSPOT).read_text(), "wifi-security", "psk") == "a password of yours"


def test_the_hotspot_follows_the_box_name_and_can_be_switched_off(card: Path) -> None:
    setup_file = card / "boot/firmware/pi-companion-setup.toml"
    setup_file.write_text('hostname = "games-table"\n')
    assert run(card).returncode == 0
    assert json.loads((card / HOTSPOT_JSON).read_text())["ssid"] == "games-table"
    setup_file.write_text('hostname = "games-table"\n[hotspot]\nenabled = false\n')
    assert run(card).returncode == 0
    assert not (card / HOTSPOT).exists() and not (card / HOTSPOT_JSON).exists()


def test_taking_settings_away_undoes_them(card: Path) -> None:
    setup_file = card / "boot/firmware/pi-companion-setup.toml"
    setup_file.write_text(f'hostname = "games"\n[wifi]\ncountry = "de"\nssid = "x"\npassword = "12345678"\n'
                          f'[ssh]\nauthorized_key = "{KEY}"\n')
    assert run(card).returncode == 0
    assert (card / "etc/hosts").read_text() == "127.0.0.1\tlocalhost\n127.0.1.1\tgames\n"
    assert "ieee80211_regdom=DE" in (card / "etc/modprobe.d/pi-companion-wifi.conf").read_text()
    setup_file.write_text("")
    assert run(card).returncode == 0
    assert not (card / NM).exists()
    assert not (card / "etc/modprobe.d/pi-companion-wifi.conf").exists()
    assert not (card / "root/.ssh/authorized_keys").exists()
    assert (card / "etc/ssh/sshd_not_to_be_run").exists()
    # The name stays what it was: a box does not rename itself because a line was deleted.
    assert (card / "etc/hostname").read_text() == "games\n"


@pytest.mark.parametrize("text, words", [
    ('hostname = "my box"', "hostname 'my box'"),
    ('hostname = "-box"', "hostname '-box'"),
    ('[wifi]\ncountry = "GBR"', "wifi.country 'GBR'"),
    ('[wifi]\nssid = "home"\npassword = "short"', "wifi.password must be 8 to 63"),
    ('[wifi]\npassword = "12345678"', "wifi.ssid is empty"),
    ('[wifi]\nssid = "' + "x" * 33 + '"', "wifi.ssid must be 1 to 32 bytes"),
    ('[wifi]\nsid = "home"', "unknown key wifi.sid"),
    ('[ssh]\nauthorized_key = "ssh-ed25519 AAAA\\nssh-rsa BBBB"', "not one SSH public key line"),
    ('wifi = "home"', "wifi must be a table"),
    ('hostname = "a"\nhostname = "b"', "not valid TOML"),
    ('[hotspot]\nenabled = "yes"', "hotspot.enabled must be true or false"),
    ('[hotspot]\npassword = "short"', "hotspot.password must be 8 to 63"),
    ('[hotspot]\npassword = "' + "0a" * 32 + '"', "hotspot.password must be 8 to 63"),   # a raw key: not for people
    ('[hotspot]\nssid = "tab\\there"', "hotspot.ssid must be printable"),
    ('[hotspot]\nchannel = 6', "unknown key hotspot.channel"),
])
def test_a_wrong_setting_is_one_line_and_keeps_the_network(card: Path, text: str, words: str) -> None:
    setup_file = card / "boot/firmware/pi-companion-setup.toml"
    setup_file.write_text('[wifi]\nssid = "home"\npassword = "12345678"\n')
    assert run(card).returncode == 0
    before = (card / NM).read_text()
    setup_file.write_text(text)
    (card / "boot/firmware/pi-companion.toml").write_text("[box]\n")
    result = run(card)
    assert result.returncode == 0
    assert len(result.stderr.splitlines()) == 1 and words in result.stderr, result.stderr
    assert (card / NM).read_text() == before          # the box still joins its network
    assert (card / "etc/pi-companion/config.toml").read_text() == "[box]\n"   # and still starts


def keyfile_value(connection: str, section: str, key: str) -> str:
    """Read one value back as GKeyFile does (the escapes the script writes: \\s, \\\\)."""
    current = None
    for line in connection.splitlines():
        if line.startswith("["):
            current = line.strip("[]")
        elif current == section and line.startswith(key + "="):
            raw, out, i = line[len(key) + 1:], [], 0
            while i < len(raw):
                if raw[i] == "\\":
                    out.append({"s": " ", "\\": "\\"}[raw[i + 1]])
                    i += 2
                else:
                    out.append(raw[i])
                    i += 1
            return "".join(out)
    raise KeyError(f"{section}.{key}")


ssids = st.text(min_size=1, max_size=32).filter(lambda s: 1 <= len(s.encode()) <= 32)
passwords = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), min_size=8, max_size=63)


@settings(max_examples=200, deadline=None)
@given(ssid=ssids, password=passwords)
def test_any_network_name_and_password_read_back_exactly(ssid: str, password: str) -> None:
    toml = f'[wifi]\nssid = {toml_string(ssid)}\npassword = {toml_string(password)}\n'
    setup = setup_mod.parse_setup(toml)
    assert (setup.ssid, setup.password) == (ssid, password)
    connection = setup_mod.nm_connection(setup.ssid, setup.password)
    ssid_bytes = bytes(int(b) for b in keyfile_value(connection, "wifi", "ssid").split(";") if b)
    assert ssid_bytes.decode() == ssid
    assert keyfile_value(connection, "wifi-security", "psk") == password
    # Nothing a user types can add a line (or a section) to the keyfile.
    assert len(connection.splitlines()) == len(setup_mod.nm_connection("x", "12345678").splitlines())


@settings(max_examples=100, deadline=None)
@given(ssid=ssids.filter(str.isprintable), password=passwords)
def test_any_hotspot_name_and_password_read_back_exactly(ssid: str, password: str) -> None:
    setup = setup_mod.parse_setup(f'[hotspot]\nssid = {toml_string(ssid)}\npassword = {toml_string(password)}\n')
    assert (setup.hotspot_ssid, setup.hotspot_password) == (ssid, password)
    connection = setup_mod.nm_hotspot(ssid, password)
    ssid_bytes = bytes(int(b) for b in keyfile_value(connection, "wifi", "ssid").split(";") if b)
    assert ssid_bytes.decode() == ssid
    assert keyfile_value(connection, "wifi-security", "psk") == password
    assert len(connection.splitlines()) == len(setup_mod.nm_hotspot("x", "12345678").splitlines())


def toml_string(text: str) -> str:
    return '"' + "".join(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}" for c in text) + '"'


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_no_text_on_the_card_crashes_the_parser(text: str) -> None:
    try:
        setup_mod.parse_setup(text)
    except setup_mod.SetupError as error:
        assert "\n" not in str(error).strip() or "not valid TOML" in str(error)


def test_the_image_runs_the_oled_bus_at_400_khz() -> None:
    """The image's config.txt lines (raspi-firmware appends them) set the I2C bus's speed as
    `pi-companion doctor` reads it: a frame at 100 kHz takes four times as long."""
    from pi_companion.doctor import parse_baudrate
    custom = REPO / "systemd" / "image" / "files" / "raspi-firmware-custom"
    assert parse_baudrate(custom.read_text()) == 400_000
