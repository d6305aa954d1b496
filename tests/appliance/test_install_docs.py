"""The docs' tables of installed files, units and settings against what `make install` lays down.

Read generically: install.sh is run for real (`make install DESTDIR=...`) and every file it
puts down must have a row in systemd/README.md's "The files" table, and every row a file. A
newly installed file only needs its row.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SYSTEMD_README = REPO / "systemd" / "README.md"
README = REPO / "README.md"
SCRIPT = REPO / "systemd" / "install.sh"
PREFIX = "/opt/pi-companion"


def files_table(text: str) -> list[tuple[str, str]]:
    """(file, installed-to directory) of each row of "## The files" with a directory."""
    section = text[text.index("## The files"):]
    section = section[:section.index("\n## ", 1)]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        name = re.match(r"`([^`]+)`", cells[0]).group(1)
        where = re.match(r"`([^`]+)`", cells[1])
        if where:
            rows.append((name, where.group(1).rstrip("/") + "/"))
    return rows


def installed(root: Path) -> list[tuple[str, str]]:
    """(name, directory) of everything `make install` put under root: each file outside the
    venv, and the venv itself as one entry."""
    out = []
    venv = root / PREFIX.lstrip("/") / "venv"
    assert venv.is_dir()
    out.append(("venv", PREFIX + "/"))
    for path in sorted(root.rglob("*")):
        if path.is_file() and venv not in path.parents:
            out.append((path.name, "/" + str(path.parent.relative_to(root)) + "/"))
    return out


@pytest.fixture(scope="module")
def staged(tmp_path_factory, built_wheel) -> Path:
    root = tmp_path_factory.mktemp("destdir")
    environ = {key: value for key, value in os.environ.items() if key != "DESTDIR"}
    environ.update(PI_COMPANION_PIP_ARGS="--no-deps", PI_COMPANION_WHEEL=str(built_wheel),
                   PI_COMPANION_VENV_ARGS="--system-site-packages")
    done = subprocess.run(["make", "-s", "-C", str(REPO), "install", f"DESTDIR={root}",
                           f"PYTHON={sys.executable}"], env=environ, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"staged under {root}" in done.stdout
    return root


@pytest.mark.xdist_group("wheel")   # the session's wheel: built once, on one worker
def test_the_files_table_is_what_make_install_lays_down(staged):
    table = files_table(SYSTEMD_README.read_text())
    assert len(table) == len(set(table)), "a row twice"
    laid_down = installed(staged)
    missing = sorted(set(laid_down) - set(table))
    extra = sorted(set(table) - set(laid_down))
    assert not missing, f"installed but not in systemd/README.md's table: {missing}"
    assert not extra, f"in systemd/README.md's table but not installed: {extra}"


@pytest.mark.xdist_group("wheel")
def test_the_readme_names_every_installed_unit_and_rule(staged):
    """README.md's appliance section names each unit and kind of file make install puts down."""
    readme = README.read_text()
    section = readme[readme.index("## The appliance"):]
    section = " ".join(section[:section.index("\n## ", 1)].split())      # line breaks as spaces
    for name, where in installed(staged):
        if name.endswith(".service"):
            assert f"`{name}`" in section, f"README.md's appliance section does not name {name}"
    kinds = {"/etc/sysusers.d/": "sysusers.d", "/etc/udev/rules.d/": "udev rule",
             "/etc/polkit-1/rules.d/": "polkit rule", "/etc/pi-companion/": "config.toml",
             PREFIX + "/": "venv"}
    for name, where in installed(staged):
        if where in kinds:
            assert kinds[where] in section, (name, where)


def test_every_unit_install_sh_enables_is_a_documented_file():
    """The units install.sh enables or restarts, resolved from its own variables."""
    script = SCRIPT.read_text()
    variables = dict(re.findall(r"^([A-Z_]+)=([\w.-]+)$", script, re.M))
    units = set()
    for verb, target in re.findall(r'systemctl (enable|restart) "\$(\w+)"', script):
        units.add(variables[target])
    assert "pi-companion.service" in units
    documented = {name for name, _ in files_table(SYSTEMD_README.read_text())}
    assert units <= documented, units - documented


def test_every_option_and_setting_of_install_sh_is_documented():
    script = SCRIPT.read_text()
    options = re.findall(r"^\s+(--[a-z-]+)(?: \| [-a-z]+)*\)", script, re.M)
    assert "--uninstall" in options and "--dry-run" in options
    header = script[:script.index("set -euo")]
    settings = re.findall(r"^#   ([A-Z][A-Z_]+)\s", header, re.M)
    assert {"DESTDIR", "PREFIX", "PYTHON"} <= set(settings)
    docs = SYSTEMD_README.read_text()
    for word in options + settings:
        assert re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", docs), \
            f"systemd/README.md does not mention {word}"
    makefile = (REPO / "Makefile").read_text()
    for target in set(re.findall(r"`(?:sudo )?make (\w[\w-]*)", docs)):
        assert re.search(rf"^{target}:", makefile, re.M), f"make {target} is documented but missing"
