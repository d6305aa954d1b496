"""The Debian package (systemd/debian/build.sh): dpkg-deb's own reading of it says its name,
version and conffile; it holds every unit, rule and sysusers file of systemd/ byte for byte,
in the distribution's directories; its venv runs; two builds are the same bytes; lintian
raises nothing that the overrides do not explain.

The package is built here from the session's wheel alone (an empty wheel list: no download),
for this interpreter's version, so that its venv can run on this machine."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pi_companion

REPO = Path(__file__).resolve().parents[2]
PY = f"{sys.version_info.major}.{sys.version_info.minor}"
PACKAGE_DIRS = {".service": "usr/lib/systemd/system", ".rules": None, ".conf": "usr/lib/sysusers.d"}
RULE_DIRS = {"99-pi-companion-puck.rules": "usr/lib/udev/rules.d",
             "60-pi-companion-pwm.rules": "usr/lib/udev/rules.d",
             "50-pi-companion-shutdown.rules": "usr/share/polkit-1/rules.d"}

pytestmark = pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="dpkg-deb is Debian's")


def build(tmp_path: Path, wheel: Path, name: str) -> Path:
    work = tmp_path / name
    (work / "out").mkdir(parents=True)
    empty = work / "requirements.txt"
    empty.write_text("# no wheels: the package alone\n")
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000", "PY_VERSION": PY,
           "PIP": f"{sys.executable} -m pip", "REQUIREMENTS": str(empty),
           "STAGE": str(work / "stage"), "WHEELHOUSE": str(work / "wheels"),
           "CONFIG_DEFAULT": f"{sys.executable} -m pi_companion config default"}
    done = subprocess.run(["bash", str(REPO / "systemd/debian/build.sh"), "amd64", str(wheel),
                           str(work / "out")], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    deb = Path(done.stdout.strip().splitlines()[-1])
    assert deb.name == f"pi-companion_{pi_companion.__version__}_amd64.deb"
    return deb


@pytest.fixture(scope="module")
def deb(tmp_path_factory, built_wheel) -> Path:
    return build(tmp_path_factory.mktemp("deb"), built_wheel, "first")


def field(deb: Path, name: str) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.mark.xdist_group("wheel")
def test_dpkg_reads_its_name_version_and_conffile(deb, tmp_path):
    assert field(deb, "Package") == "pi-companion"
    assert field(deb, "Version") == pi_companion.__version__
    assert field(deb, "Architecture") == "amd64"
    assert f"python{PY}" in field(deb, "Depends").split(", ")
    control = tmp_path / "control"
    subprocess.run(["dpkg-deb", "-e", str(deb), str(control)], check=True)
    assert (control / "conffiles").read_text() == "/etc/pi-companion/config.toml\n"
    for script in ("postinst", "prerm", "postrm"):
        assert os.access(control / script, os.X_OK)
        assert subprocess.run(["sh", "-n", str(control / script)]).returncode == 0


@pytest.mark.xdist_group("wheel")
def test_it_holds_every_file_install_sh_installs_byte_for_byte(deb, tmp_path):
    root = tmp_path / "root"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    sources = sorted(p for p in (REPO / "systemd").iterdir()
                     if p.suffix in (".service", ".rules") or p.name == "pi-companion.conf")
    assert len(sources) == 7                 # install.sh's six and the card's update unit
    for source in sources:
        folder = RULE_DIRS.get(source.name) or PACKAGE_DIRS[source.suffix]
        assert (root / folder / source.name).read_bytes() == source.read_bytes(), source.name
    update = root / "usr/libexec/pi-companion/pi-companion-update"
    assert update.read_bytes() == (REPO / "systemd/pi-companion-update").read_bytes()
    assert os.access(update, os.X_OK)
    assert f"ExecStart=/{update.relative_to(root)}\n" in \
        (root / "usr/lib/systemd/system/pi-companion-update.service").read_text()
    config = subprocess.run([sys.executable, "-m", "pi_companion", "config", "default"],
                            capture_output=True, text=True, check=True).stdout
    assert (root / "etc/pi-companion/config.toml").read_text() == config
    # The venv runs from where it is unpacked (its interpreter is the system's python3.X).
    if not Path(f"/usr/bin/python{PY}").exists():
        pytest.skip(f"no /usr/bin/python{PY} to run the venv with")
    venv = root / "opt/pi-companion/venv"
    ran = subprocess.run([str(venv / "bin/python3"), "-c", "import sys, pi_companion; "
                          "print(pi_companion.__version__, sys.prefix, pi_companion.__file__)"],
                         capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    version, prefix, where = ran.stdout.split()
    assert version == pi_companion.__version__ and Path(prefix) == venv
    assert Path(where).is_relative_to(venv / f"lib/python{PY}/site-packages")


@pytest.mark.xdist_group("wheel")
def test_two_builds_are_the_same_bytes(deb, tmp_path, built_wheel):
    again = build(tmp_path, built_wheel, "second")
    assert hashlib.sha256(again.read_bytes()).digest() == hashlib.sha256(deb.read_bytes()).digest()


@pytest.mark.xdist_group("wheel")
def test_every_file_a_record_lists_is_in_the_package(deb, tmp_path):
    """pip's console scripts name the building machine's interpreter, so build.sh drops them;
    a RECORD still listing one carries a hash of that path, and two checkouts in two places
    would build two different packages."""
    root = tmp_path / "root"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    site = root / "opt/pi-companion/venv/lib" / f"python{PY}" / "site-packages"
    records = sorted(site.glob("*.dist-info/RECORD"))
    assert records
    missing = [f"{record.parent.name}: {path}" for record in records
               for path in (line.split(",")[0] for line in record.read_text().splitlines() if line)
               if not (site / path).exists()]
    assert not missing, missing


@pytest.mark.xdist_group("wheel")
def test_lintian_raises_nothing_the_overrides_do_not_explain(deb):
    if shutil.which("lintian") is None:
        pytest.skip("lintian is not installed (apt install lintian)")
    out = subprocess.run(["lintian", "--tag-display-limit", "0", str(deb)], capture_output=True,
                         text=True, timeout=300)
    said = [line for line in out.stdout.splitlines() if line[:2] in ("E:", "W:")]
    assert said == [], "\n".join(said)
