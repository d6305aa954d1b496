#!/usr/bin/python3
"""pi-companion image: apply the settings a user wrote on the card's FAT partition.

Runs at every start (pi-companion-setup.service), before the network and the box:
  /boot/firmware/pi-companion-setup.toml   hostname, Wi-Fi network and country, the box's own
                                           hotspot, SSH key
  /boot/firmware/pi-companion.toml         the box's config -> /etc/pi-companion/config.toml

A wrong setting is said in one line (the journal and the console) and skipped; the rest is
still applied and the box still starts. `--root DIR` applies to a tree under DIR instead of
/ and runs no system commands (the tests use it).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

VENV_PYTHON = "/opt/pi-companion/venv/bin/python"
NM_CONNECTION = "etc/NetworkManager/system-connections/pi-companion-wifi.nmconnection"
NM_HOTSPOT = "etc/NetworkManager/system-connections/pi-companion-hotspot.nmconnection"
# The hotspot's name and password for the NetworkManager dispatcher, which hands them to the box
# (the OLED's Wi-Fi QR) while the hotspot is up; and the password made for this box when the card
# names none (root only).
HOTSPOT_JSON = "var/lib/pi-companion-setup/hotspot.json"
HOTSPOT_MADE = "var/lib/pi-companion-setup/hotspot-password"
# Letters and digits that cannot be misread on the OLED (no 0/O, 1/l/I).
PASSWORD_CHARS = "abcdefghjkmnpqrstuvwxyz23456789"
REGDOM_CONF = "etc/modprobe.d/pi-companion-wifi.conf"
SSH_OFF = "etc/ssh/sshd_not_to_be_run"
KEYS = {"hostname": str, "wifi": dict, "hotspot": dict, "ssh": dict}
WIFI_KEYS = {"country", "ssid", "password"}
HOTSPOT_KEYS = {"enabled", "ssid", "password"}
SSH_KEYS = {"authorized_key"}
HOSTNAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
KEY_LINE = re.compile(r"(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com"
                      r"|sk-ecdsa-sha2-nistp256@openssh\.com) [A-Za-z0-9+/]+={0,3}( [ -~]*)?")


class SetupError(ValueError):
    """One wrong setting, said in one line."""


@dataclass(frozen=True)
class Setup:
    hostname: str | None = None
    country: str | None = None
    ssid: str | None = None
    password: str | None = None
    authorized_key: str | None = None
    hotspot: bool = True
    hotspot_ssid: str | None = None
    hotspot_password: str | None = None


def check_network(section: str, ssid: str | None, password: str | None, raw_key: bool = True) -> None:
    """A network's name and password; `raw_key`: the password may also be the 64 hex digits
    of a raw key (a network to join; the hotspot's password is shown to people)."""
    if ssid is not None and not 1 <= len(ssid.encode()) <= 32:
        raise SetupError(f"pi-companion-setup.toml: {section}.ssid must be 1 to 32 bytes")
    if password is not None and not (re.fullmatch(r"[ -~]{8,63}", password)
                                     or raw_key and re.fullmatch(r"[0-9A-Fa-f]{64}", password)):
        raise SetupError(f"pi-companion-setup.toml: {section}.password must be 8 to 63 printable ASCII characters")


def parse_setup(text: str) -> Setup:
    """The settings in pi-companion-setup.toml; SetupError names the first wrong one."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SetupError(f"pi-companion-setup.toml is not valid TOML: {error}") from None
    for key, value in data.items():
        if key not in KEYS:
            raise SetupError(f"pi-companion-setup.toml: unknown key {key!r} (known: {', '.join(KEYS)})")
        if not isinstance(value, KEYS[key]):
            raise SetupError(f"pi-companion-setup.toml: {key} must be a {'table' if KEYS[key] is dict else 'string'}")
    wifi, hotspot, ssh = data.get("wifi", {}), data.get("hotspot", {}), data.get("ssh", {})
    for section, table, known in (("wifi", wifi, WIFI_KEYS), ("hotspot", hotspot, HOTSPOT_KEYS),
                                  ("ssh", ssh, SSH_KEYS)):
        for key, value in table.items():
            if key not in known:
                raise SetupError(f"pi-companion-setup.toml: unknown key {section}.{key} (known: {', '.join(sorted(known))})")
            if key == "enabled":
                if not isinstance(value, bool):
                    raise SetupError(f"pi-companion-setup.toml: {section}.{key} must be true or false")
            elif not isinstance(value, str):
                raise SetupError(f"pi-companion-setup.toml: {section}.{key} must be a string")
    hostname = data.get("hostname") or None
    if hostname is not None and not HOSTNAME.fullmatch(hostname):
        raise SetupError(f"pi-companion-setup.toml: hostname {hostname!r}: use letters, digits and hyphens (at most 63)")
    country = wifi.get("country") or None
    if country is not None:
        if not re.fullmatch(r"[A-Za-z]{2}", country):
            raise SetupError(f"pi-companion-setup.toml: wifi.country {country!r} is not a two-letter country code")
        country = country.upper()
    ssid, password = wifi.get("ssid") or None, wifi.get("password") or None
    check_network("wifi", ssid, password)
    if password is not None and ssid is None:
        raise SetupError("pi-companion-setup.toml: wifi.password is set but wifi.ssid is empty")
    hotspot_ssid, hotspot_password = hotspot.get("ssid") or None, hotspot.get("password") or None
    check_network("hotspot", hotspot_ssid, hotspot_password, raw_key=False)
    if hotspot_ssid is not None and not hotspot_ssid.isprintable():
        raise SetupError("pi-companion-setup.toml: hotspot.ssid must be printable (it is shown on the OLED)")
    key = (ssh.get("authorized_key") or "").strip() or None
    if key is not None and not KEY_LINE.fullmatch(key):
        raise SetupError("pi-companion-setup.toml: ssh.authorized_key is not one SSH public key line")
    return Setup(hostname, country, ssid, password, key, hotspot.get("enabled", True), hotspot_ssid,
                 hotspot_password)


def keyfile_text(text: str) -> str:
    """A printable-ASCII value (checked) as GKeyFile reads it back: only the backslash and a
    leading space need escaping."""
    text = text.replace("\\", "\\\\")
    return "\\s" + text[1:] if text.startswith(" ") else text


def keyfile_ssid(ssid: str) -> str:
    """A network name as its bytes (a list of numbers), which needs no escaping whatever it holds."""
    return "".join(f"{b};" for b in ssid.encode())


def nm_connection(ssid: str, password: str | None) -> str:
    """A NetworkManager keyfile for the network to join."""
    lines = ["[connection]", "id=pi-companion-wifi", "type=wifi", "autoconnect=true",
             # Tried before the box's own hotspot, if any.
             "autoconnect-priority=10", "",
             "[wifi]", "mode=infrastructure", "ssid=" + keyfile_ssid(ssid), ""]
    if password is not None:
        lines += ["[wifi-security]", "key-mgmt=wpa-psk", f"psk={keyfile_text(password)}", ""]
    lines += ["[ipv4]", "method=auto", "", "[ipv6]", "method=auto", ""]
    return "\n".join(lines)


def nm_hotspot(ssid: str, password: str) -> str:
    """A NetworkManager keyfile for the box's own Wi-Fi: an access point with WPA2 (CCMP) on
    channel 6 (allowed in every country, so the AP starts even before the country is known),
    the box at 10.42.0.1 handing out addresses (shared mode runs dnsmasq). Its autoconnect
    priority is far below a known network's: NetworkManager opens it only when no known network
    is in reach (and does not leave it by itself when one appears later: a restart does)."""
    return "\n".join([
        "[connection]", "id=pi-companion-hotspot", "type=wifi", "autoconnect=true",
        "autoconnect-priority=-999", "",
        "[wifi]", "mode=ap", "band=bg", "channel=6", "ssid=" + keyfile_ssid(ssid), "",
        "[wifi-security]", "key-mgmt=wpa-psk", "proto=rsn;", "pairwise=ccmp;", "group=ccmp;", f"psk={keyfile_text(password)}", "",
        "[ipv4]", "method=shared", "", "[ipv6]", "method=ignore", ""])


def made_password() -> str:
    """A password for a box whose card names none: ten characters (about 49 bits) in two
    groups, easy to copy off the OLED."""
    chars = [secrets.choice(PASSWORD_CHARS) for _ in range(10)]
    return "".join(chars[:5]) + "-" + "".join(chars[5:])


def write(path: Path, text: str, mode: int = 0o644) -> bool:
    """Write a file whole (a power cut leaves the old or the new one); False if unchanged."""
    if path.exists() and path.read_text() == text and (path.stat().st_mode & 0o777) == mode:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    os.chmod(tmp, mode)
    os.replace(tmp, path)
    return True


def remove(path: Path) -> None:
    path.unlink(missing_ok=True)


class System:
    """Applies settings to a root tree; `live` also runs the commands a booted box needs."""

    def __init__(self, root: Path, live: bool) -> None:
        self.root, self.live = root, live

    def path(self, rel: str) -> Path:
        return self.root / rel

    def run(self, *argv: str) -> bool:
        if not self.live:
            return True
        result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:
            say(f"{argv[0]} failed: {result.stderr.strip().splitlines()[-1:] or result.returncode}")
        return result.returncode == 0


def say(message: str) -> None:
    print(f"pi-companion-setup: {message}", file=sys.stderr, flush=True)


def apply_setup(setup: Setup, system: System) -> None:
    if setup.hostname:
        write(system.path("etc/hostname"), setup.hostname + "\n")
        hosts = system.path("etc/hosts")
        lines = hosts.read_text().splitlines() if hosts.exists() else ["127.0.0.1\tlocalhost"]
        lines = [line for line in lines if not line.startswith("127.0.1.1")] + [f"127.0.1.1\t{setup.hostname}"]
        write(hosts, "\n".join(lines) + "\n")
        if system.live:
            socket.sethostname(setup.hostname)
    if setup.country:
        write(system.path(REGDOM_CONF), f"# pi-companion-setup: wifi.country\noptions cfg80211 ieee80211_regdom={setup.country}\n")
        system.run("iw", "reg", "set", setup.country)
    else:
        remove(system.path(REGDOM_CONF))
    if setup.ssid:
        write(system.path(NM_CONNECTION), nm_connection(setup.ssid, setup.password), 0o600)
    else:
        remove(system.path(NM_CONNECTION))
    apply_hotspot(setup, system)
    keys = system.path("root/.ssh/authorized_keys")
    if setup.authorized_key:
        keys.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write(keys, setup.authorized_key + "\n", 0o600)
        if not any(system.path("etc/ssh").glob("ssh_host_*_key")):
            system.run("ssh-keygen", "-A")
        remove(system.path(SSH_OFF))
    else:
        remove(keys)
        write(system.path(SSH_OFF), "")


def apply_hotspot(setup: Setup, system: System) -> None:
    """The box's own Wi-Fi, on unless the card says `enabled = false`: named as the card says,
    else after the box (its hostname); its password the card's, else one made once per box."""
    if not setup.hotspot:
        remove(system.path(NM_HOTSPOT))
        remove(system.path(HOTSPOT_JSON))
        return
    hostname_file = system.path("etc/hostname")
    ssid = setup.hotspot_ssid or (setup.hostname or "")[:32] \
        or (hostname_file.read_text().strip()[:32] if hostname_file.exists() else "") or "pi-companion"
    password = setup.hotspot_password
    if password is None:
        made = system.path(HOTSPOT_MADE)
        password = made.read_text().strip() if made.exists() else ""
        if not re.fullmatch(r"[ -~]{8,63}", password):
            password = made_password()
            made.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            write(made, password + "\n", 0o600)
    system.path(HOTSPOT_JSON).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write(system.path(HOTSPOT_JSON), json.dumps({"ssid": ssid, "password": password}) + "\n", 0o600)
    write(system.path(NM_HOTSPOT), nm_hotspot(ssid, password), 0o600)


def apply_config(source: Path, system: System) -> None:
    """The box's config from the card, if `pi-companion config check` accepts it; else the
    last good one stays. The big screen's unit follows [web] enabled."""
    target = system.path("etc/pi-companion/config.toml")
    if source.exists():
        text = source.read_text(errors="replace")
        if system.live:
            check = subprocess.run([VENV_PYTHON, "-m", "pi_companion", "config", "check", str(source)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if check.returncode != 0:
                reason = (check.stderr.strip().splitlines() or ["rejected"])[-1]
                say(f"{source.name} is not used (the last good config stays): {reason}")
                return
        write(target, text)
    if system.live and target.exists():
        enabled = subprocess.run(
            [VENV_PYTHON, "-c", "import sys; from pathlib import Path; from pi_companion.config import load_config;"
             " sys.exit(not load_config(Path(sys.argv[1])).web_enabled)", str(target)]).returncode == 0
        verb = ("enable", "start") if enabled else ("disable", "stop")
        system.run("systemctl", "--quiet", verb[0], "pi-companion-web.service")
        system.run("systemctl", "--no-block", verb[1], "pi-companion-web.service")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, help="apply to this tree, run no commands")
    parser.add_argument("--boot", type=Path, help="the FAT partition (default ROOT/boot/firmware)")
    args = parser.parse_args(argv)
    root = args.root or Path("/")
    boot = args.boot or root / "boot/firmware"
    system = System(root, live=args.root is None)
    setup_file = boot / "pi-companion-setup.toml"
    try:
        setup = parse_setup(setup_file.read_text(errors="replace")) if setup_file.exists() else Setup()
    except SetupError as error:
        say(f"{error}; network settings left as they were")
    else:
        apply_setup(setup, system)
    apply_config(boot / "pi-companion.toml", system)
    return 0


if __name__ == "__main__":
    sys.exit(main())
