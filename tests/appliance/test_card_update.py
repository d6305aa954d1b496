"""systemd/pi-companion-update: a package dropped in the boot partition's pi-companion-update/
is moved into done/ first, installed only with the right SHA-256, when it is pi-companion's and
newer, and leaves one line for the OLED and doctor.

Real files throughout: small packages built with dpkg-deb, a FAT-like folder, and the real dpkg
installing into a sandbox (--root, its maintainer scripts run outside a chroot), so that what the
script asks dpkg is what dpkg does."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "systemd/pi-companion-update"

pytestmark = pytest.mark.skipif(shutil.which("dpkg-deb") is None or shutil.which("dpkg") is None,
                                reason="dpkg is Debian's")


def make_deb(where: Path, version: str, package: str = "pi-companion", fails: bool = False) -> Path:
    """A package holding /opt/pi-companion/VERSION; its postinst notes the environment the
    update gave it (or fails, as a broken package would)."""
    stage = where / f"stage-{package}-{version}"
    deb = where / f"{package}_{version}_all.deb"
    if deb.exists():
        return deb
    (stage / "DEBIAN").mkdir(parents=True)
    (stage / "opt/pi-companion").mkdir(parents=True)
    (stage / "opt/pi-companion/VERSION").write_text(version + "\n")
    (stage / "DEBIAN/control").write_text(
        f"Package: {package}\nVersion: {version}\nArchitecture: all\n"
        "Maintainer: test <root@localhost>\nDescription: a test package\n")
    postinst = stage / "DEBIAN/postinst"
    postinst.write_text("#!/bin/sh\nset -e\n" + ("exit 1\n" if fails else
                        'echo "update=${PI_COMPANION_UPDATE:-}" >"$DPKG_ROOT/postinst-saw"\n'))
    postinst.chmod(0o755)
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(stage), str(deb)],
                   check=True, capture_output=True)
    return deb


def drop(card: Path, deb: Path, checksum: str | None = None) -> Path:
    """Onto the card's folder, with its .sha256 as sha256sum writes it (or the one given)."""
    folder = card / "pi-companion-update"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(deb, folder / deb.name)
    digest = hashlib.sha256(deb.read_bytes()).hexdigest() if checksum is None else checksum
    if checksum != "":
        (folder / f"{deb.name}.sha256").write_text(f"{digest}  {deb.name}\n")
    return folder


@pytest.fixture
def box(tmp_path):
    """A dpkg sandbox (an empty database), a card, and the state directory."""
    root = tmp_path / "root"
    admin = root / "var/lib/dpkg"
    for sub in ("info", "updates", "triggers"):
        (admin / sub).mkdir(parents=True)
    (admin / "status").touch()
    card, state = tmp_path / "card", tmp_path / "state"
    card.mkdir()

    def run() -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "UPDATE_DIRS": f"{card}/pi-companion-update {tmp_path}/usb/pi-companion-update",
               "RESULT": str(state / "update-result"),
               "DPKG_ARGS": f"--root={root} --force-script-chrootless --force-not-root "
                            f"--force-bad-path --log={tmp_path}/dpkg.log"}
        return subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True,
                              timeout=120)

    def installed() -> str | None:
        marker = root / "opt/pi-companion/VERSION"
        return marker.read_text().strip() if marker.exists() else None

    def result() -> str | None:
        path = state / "update-result"
        return path.read_text() if path.exists() else None

    return run, installed, result, card, root


def test_a_package_with_its_checksum_is_installed_once_and_moved_aside(box, tmp_path):
    run, installed, result, card, root = box
    folder = drop(card, make_deb(tmp_path, "0.2.1"))
    done = run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert installed() == "0.2.1"
    assert result() == "updated to 0.2.1\n"
    # dpkg's postinst was told it runs under the update (it queues the daemon's restart)
    assert (root / "postinst-saw").read_text() == "update=1\n"
    assert sorted(p.name for p in folder.iterdir()) == ["done"]
    assert sorted(p.name for p in (folder / "done").iterdir()) == [
        "pi-companion_0.2.1_all.deb", "pi-companion_0.2.1_all.deb.sha256"]
    # the next boot finds nothing and leaves the line as it was
    again = run()
    assert again.returncode == 0 and "no package" in again.stdout
    assert result() == "updated to 0.2.1\n"


def test_a_wrong_checksum_installs_nothing_and_says_so(box, tmp_path):
    run, installed, result, card, _ = box
    folder = drop(card, make_deb(tmp_path, "0.2.1"), checksum="0" * 64)
    done = run()
    assert done.returncode == 1
    assert installed() is None
    assert result() == "update refused: checksum\n"
    assert not list(folder.glob("*.deb")), "a refused package would be tried at every boot"
    assert (folder / "done/pi-companion_0.2.1_all.deb").exists()


def test_no_checksum_file_is_refused(box, tmp_path):
    run, installed, result, card, _ = box
    drop(card, make_deb(tmp_path, "0.2.1"), checksum="")
    assert run().returncode == 1
    assert installed() is None
    assert result() == ("update refused: no checksum (no pi-companion_0.2.1_all.deb.sha256 nor a "
                        "line in SHA256SUMS)\n")


def test_make_release_s_sha256sums_does_as_well(box, tmp_path):
    run, installed, result, card, _ = box
    deb = make_deb(tmp_path, "0.2.1")
    folder = drop(card, deb, checksum="")
    digest = hashlib.sha256(deb.read_bytes()).hexdigest()
    sums = folder / "SHA256SUMS"
    sums.write_text(f"{'1' * 64}  pi_companion-0.2.1.tar.gz\n{'2' * 64}  {deb.name}\n")
    assert run().returncode == 1
    assert result() == "update refused: checksum\n"
    drop(card, deb, checksum="")
    sums.write_text(f"{'1' * 64}  pi_companion-0.2.1.tar.gz\n{digest}  {deb.name}\n")
    assert run().returncode == 0
    assert installed() == "0.2.1" and result() == "updated to 0.2.1\n"


def test_an_older_or_the_same_version_is_refused(box, tmp_path):
    run, installed, result, card, _ = box
    drop(card, make_deb(tmp_path, "0.2.1"))
    assert run().returncode == 0 and installed() == "0.2.1"
    drop(card, make_deb(tmp_path, "0.2.0"))
    assert run().returncode == 1
    assert installed() == "0.2.1"
    assert result() == "update refused: 0.2.0 is not newer than 0.2.1\n"
    drop(card, make_deb(tmp_path, "0.2.1"))
    assert run().returncode == 1
    assert result() == "update refused: 0.2.1 is not newer than 0.2.1\n"


def test_another_package_and_two_packages_are_refused(box, tmp_path):
    run, installed, result, card, _ = box
    drop(card, make_deb(tmp_path, "1.0", package="something-else"))
    assert run().returncode == 1
    assert result() == "update refused: not a pi-companion package\n"
    drop(card, make_deb(tmp_path, "0.2.1"))
    drop(tmp_path / "usb", make_deb(tmp_path, "0.2.2"))
    assert run().returncode == 1
    assert installed() is None
    assert result() == "update refused: 2 packages, drop one\n"
    assert not list(card.glob("*/*.deb")) and not list((tmp_path / "usb").glob("*/*.deb"))


def test_a_failing_install_says_so_and_is_not_tried_again(box, tmp_path):
    run, _, result, card, _ = box
    folder = drop(card, make_deb(tmp_path, "0.2.1", fails=True))
    done = run()
    assert done.returncode == 1
    assert result() == "update failed: dpkg, see journalctl -u pi-companion-update\n"
    assert not list(folder.glob("*.deb"))
    assert "no package" in run().stdout
