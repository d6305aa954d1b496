"""The files in systemd/: the unit's sandbox score and syntax, sysusers, udev and polkit rules."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

SYSTEMD_DIR = Path(__file__).resolve().parents[2] / "systemd"
UNIT = SYSTEMD_DIR / "pi-companion.service"
MAX_EXPOSURE = 1.0


def tool(name: str, required: str | None = None) -> str:
    """The tool's path; skip without it, or fail if `required` says how to install it."""
    path = shutil.which(name)
    if path is None:
        if required:
            pytest.fail(f"{name} is not installed ({required}): this check must not be skipped")
        pytest.skip(f"{name} is not installed")
    return path


def directives(unit: Path) -> list[tuple[str, str]]:
    """(key, value) for every assignment, in order; repeated keys stay repeated."""
    pairs = []
    for line in unit.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            pairs.append((key.strip(), value.strip()))
    return pairs


def values(key: str) -> list[str]:
    return [value for k, value in directives(UNIT) if k == key]


def test_security_exposure_is_at_most_one() -> None:
    analyze = tool("systemd-analyze")
    result = subprocess.run([analyze, "security", "--offline=true", "--no-pager", str(UNIT)],
                            capture_output=True, text=True, timeout=60)
    match = re.search(r"Overall exposure level for pi-companion\.service: (\d+\.\d+)",
                      result.stdout)
    assert match, result.stdout + result.stderr
    assert float(match.group(1)) <= MAX_EXPOSURE, result.stdout


def test_unit_verifies_cleanly(tmp_path: Path) -> None:
    # verify insists that ExecStart= exists: check a copy that runs /bin/true with the same
    # arguments. Unknown keys and bad values are only warnings, so any output is a failure.
    analyze = tool("systemd-analyze")
    text = UNIT.read_text()
    exec_start = "ExecStart=/opt/pi-companion/venv/bin/pi-companion "
    assert exec_start in text
    copy = tmp_path / UNIT.name
    copy.write_text(text.replace(exec_start, "ExecStart=/bin/true "))
    result = subprocess.run([analyze, "verify", "--man=no", str(copy)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout + result.stderr == ""


def test_verify_would_catch_a_typo(tmp_path: Path) -> None:
    analyze = tool("systemd-analyze")
    copy = tmp_path / UNIT.name
    copy.write_text(UNIT.read_text().replace("ExecStart=/opt/pi-companion/venv/bin/pi-companion ",
                                             "ExecStart=/bin/true ")
                    .replace("LockPersonality=", "LockPersonalty="))
    result = subprocess.run([analyze, "verify", "--man=no", str(copy)],
                            capture_output=True, text=True, timeout=60)
    assert "LockPersonalty" in result.stderr


def test_unit_keeps_the_appliance_contract() -> None:
    single = {key: vals[-1] for key in {k for k, _ in directives(UNIT)}
              if (vals := values(key))}
    assert single["Type"] == "notify"
    assert single["NotifyAccess"] == "main"
    assert single["WatchdogSec"] == "10"
    assert single["Restart"] == "on-failure"
    assert single["RestartPreventExitStatus"] == "78"
    assert single["User"] == "pi-companion"
    assert single["ExecStart"] == ("/opt/pi-companion/venv/bin/pi-companion run "
                                   "--config /etc/pi-companion/config.toml")
    assert single["WorkingDirectory"] == "%t/pi-companion"
    assert single["RuntimeDirectory"] == "pi-companion"
    assert single["StateDirectory"] == "pi-companion"
    assert single["CapabilityBoundingSet"] == ""
    assert single["DevicePolicy"] == "closed"
    assert "GPIOZERO_PIN_FACTORY=lgpio" in values("Environment")
    assert set(single["SupplementaryGroups"].split()) == {"gpio", "i2c", "dialout"}
    assert {"char-gpiochip rw", "char-i2c rw", "char-ttyACM rw"} <= set(values("DeviceAllow"))


def test_unit_keeps_devices_and_device_tree_visible() -> None:
    # PrivateDevices=yes would hide GPIO, I2C and serial; ProcSubset=pid hides /proc/device-tree.
    assert values("PrivateDevices") in ([], ["no"])
    assert values("ProcSubset") in ([], ["all"])
    assert values("DynamicUser") in ([], ["no"])


def read_db(path: Path) -> dict[str, list[str]]:
    """/etc/passwd or /etc/group as {name: fields}."""
    return {line.split(":")[0]: line.split(":") for line in path.read_text().splitlines()}


def test_sysusers_creates_the_user_in_the_device_groups(tmp_path: Path) -> None:
    sysusers = tool("systemd-sysusers")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    (tmp_path / "etc/group").write_text("root:x:0:\ndialout:x:20:\n")
    conf = str(SYSTEMD_DIR / "pi-companion.conf")
    for _ in range(2):  # a second run changes nothing and does not fail
        result = subprocess.run([sysusers, f"--root={tmp_path}", conf],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
    passwd = read_db(tmp_path / "etc/passwd")
    groups = read_db(tmp_path / "etc/group")
    user = passwd["pi-companion"]
    assert 0 < int(user[2]) < 1000, "a system user"
    assert user[6].endswith("nologin")
    assert groups["dialout"][2] == "20", "an existing group keeps its GID"
    for group in ("gpio", "i2c", "dialout"):
        assert groups[group][3].split(",") == ["pi-companion"]
    # The big screen's user: its own, in the daemon's group only (hub socket, history/).
    web = passwd["pi-companion-web"]
    assert 0 < int(web[2]) < 1000 and web[2] != user[2] and web[6].endswith("nologin")
    assert web[3] != user[3], "a primary group of its own"
    member_of = {name for name, fields in groups.items() if "pi-companion-web" in fields[3].split(",")}
    assert member_of == {"pi-companion"}


def test_udev_rule_names_the_puck() -> None:
    rules = [line for line in (SYSTEMD_DIR / "99-pi-companion-puck.rules").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert len(rules) == 1
    pairs = re.findall(r'([A-Z_]+(?:\{[A-Za-z_]+\})?)(==|!=|\+=|-=|:=|=)"([^"]*)"', rules[0])
    assert ", ".join(f'{k}{op}"{v}"' for k, op, v in pairs) == rules[0].strip(), "unparsed text"
    keys = {(k, op): v for k, op, v in pairs}
    assert keys[("SUBSYSTEM", "==")] == "tty"
    assert keys[("ATTRS{idVendor}", "==")] == "2e8a"
    assert keys[("ATTRS{idProduct}", "==")] == "0005"
    assert keys[("SYMLINK", "+=")] == "pi-companion-puck"
    assert keys[("GROUP", "=")] == "dialout"
    assert keys[("MODE", "=")] == "0660"


POLKIT_HARNESS = """
const fs = require("fs");
const rules = [];
const polkit = {Result: {YES: "yes", NO: "no", NOT_HANDLED: null}, addRule: (f) => rules.push(f)};
eval(fs.readFileSync(process.argv[2], "utf8"));
const out = {};
for (const user of ["pi-companion", "pi-companion-web", "pi"]) {
  for (const id of JSON.parse(process.argv[3])) {
    let answer = null;
    for (const rule of rules) {
      answer = rule({id: id}, {user: user});
      if (answer !== null && answer !== undefined) break;
    }
    out[user + " " + id] = answer === undefined ? null : answer;
  }
}
console.log(JSON.stringify(out));
"""


def test_polkit_rule_allows_power_off_and_nothing_else(tmp_path: Path) -> None:
    node = tool("node", required="apt-get install nodejs; .ci/run does")
    actions = ["org.freedesktop.login1.power-off",
               "org.freedesktop.login1.power-off-multiple-sessions",
               "org.freedesktop.login1.power-off-ignore-inhibit",
               "org.freedesktop.login1.reboot",
               "org.freedesktop.login1.suspend",
               "org.freedesktop.systemd1.manage-units"]
    harness = tmp_path / "harness.js"
    harness.write_text(POLKIT_HARNESS)
    rules = SYSTEMD_DIR / "50-pi-companion-shutdown.rules"
    result = subprocess.run([node, str(harness), str(rules), json.dumps(actions)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    answers = json.loads(result.stdout)
    allowed = {key for key, answer in answers.items() if answer is not None}
    assert allowed == {"pi-companion org.freedesktop.login1.power-off",
                       "pi-companion org.freedesktop.login1.power-off-multiple-sessions"}
    assert answers["pi-companion org.freedesktop.login1.power-off"] == "yes"


WEB_UNIT = SYSTEMD_DIR / "pi-companion-web.service"


def test_the_web_unit_is_sandboxed_and_verifies(tmp_path: Path) -> None:
    analyze = tool("systemd-analyze")
    result = subprocess.run([analyze, "security", "--offline=true", "--no-pager", str(WEB_UNIT)],
                            capture_output=True, text=True, timeout=60)
    match = re.search(r"Overall exposure level for pi-companion-web\.service: (\d+\.\d+)", result.stdout)
    assert match, result.stdout + result.stderr
    assert float(match.group(1)) <= MAX_EXPOSURE, result.stdout
    copy = tmp_path / WEB_UNIT.name
    copy.write_text(WEB_UNIT.read_text().replace("ExecStart=/opt/pi-companion/venv/bin/pi-companion ",
                                                 "ExecStart=/bin/true "))
    verify = subprocess.run([analyze, "verify", "--man=no", str(copy)], capture_output=True, text=True,
                            timeout=60)
    assert verify.returncode == 0 and verify.stdout + verify.stderr == "", verify.stderr


def test_the_web_unit_has_no_gpio_and_cannot_write_the_state() -> None:
    pairs = directives(WEB_UNIT)
    get = {k: v for k, v in pairs}
    assert get["PrivateDevices"] == "yes" and not [v for k, v in pairs if k == "DeviceAllow"]
    assert get["ProtectSystem"] == "strict" and "/var/lib/pi-companion" in get["ReadOnlyPaths"]
    assert not {"StateDirectory", "RuntimeDirectory", "ReadWritePaths"} & get.keys()
    # Its own user, with the daemon's group as its group (PrivateUsers= maps only User= and
    # Group=, so a supplementary group would not reach the hub socket); no device group.
    assert get["User"] == "pi-companion-web" and get["Group"] == "pi-companion"
    assert "SupplementaryGroups" not in get and get["PrivateUsers"] == "yes"
    daemon = dict(directives(UNIT))
    assert daemon["StateDirectoryMode"] == "0710" and daemon["RuntimeDirectoryMode"] == "0710"
    assert "AF_INET" in get["RestrictAddressFamilies"] and "PrivateNetwork" not in get
    assert "--socket /run/pi-companion/hub.sock" in get["ExecStart"]
    assert "PrivateNetwork" in {k for k, _ in directives(UNIT)}     # the daemon stays offline


def test_the_web_unit_talks_only_to_the_home_network_and_bounds_its_descriptors() -> None:
    """IP traffic only from and to loopback, link-local and the private ranges (a port
    forwarded by mistake reaches nothing); a descriptor limit set on purpose, which the
    server's connection limits (web/gate.py) stay far below."""
    import ipaddress

    from pi_companion.web.gate import BACKLOG, FD_RESERVE, MAX_CONNECTIONS
    pairs = directives(WEB_UNIT)
    get = {k: v for k, v in pairs}
    assert [v for k, v in pairs if k == "IPAddressDeny"] == ["any"]
    allowed = " ".join(v for k, v in pairs if k == "IPAddressAllow").split()
    assert {"localhost", "link-local"} <= set(allowed)
    nets = [ipaddress.ip_network(a) for a in allowed if a not in ("localhost", "link-local")]
    assert nets and all(net.is_private and not net.is_loopback for net in nets)
    assert {str(n) for n in nets} == {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"}
    limit = int(get["LimitNOFILE"])
    assert MAX_CONNECTIONS + 2 * BACKLOG + FD_RESERVE <= limit // 2 < limit == 1024
    assert get["PrivateUsers"] == "yes" and "MemoryMax" in get and "TasksMax" in get
    daemon = {k: v for k, v in directives(UNIT)}
    assert daemon["IPAddressDeny"] == "any" and "IPAddressAllow" not in daemon
