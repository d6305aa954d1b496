"""The SD-card image's assembly step (systemd/image/assemble.sh) is reproducible: the same root
tree, copied at another moment (so every file has other access and change times on the host),
gives the same card byte for byte, compressed and not. Runs the real script on a small tree
with the real tools (parted, mkfs.vfat + mcopy, mke2fs -d, debugfs, xz); no loop devices."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ASSEMBLE = REPO / "systemd" / "image" / "assemble.sh"
EPOCH = 1796170240
TOOLS = ("parted", "mcopy", "mkfs.vfat", "mke2fs", "debugfs", "xz")


@pytest.fixture(autouse=True)
def tools() -> None:
    """The image's tools are not a newcomer's: without them this test says what to install and
    skips, unless PI_COMPANION_NEED_IMAGE_TOOLS=1 (.ci/run, which installs them) makes it fail."""
    missing = [t for t in TOOLS if shutil.which(t) is None and not Path("/sbin", t).exists()
               and not Path("/usr/sbin", t).exists()]
    if missing:
        why = f"the image tools are missing: {', '.join(missing)} (apt install parted mtools dosfstools e2fsprogs xz-utils)"
        if os.environ.get("PI_COMPANION_NEED_IMAGE_TOOLS") == "1":
            pytest.fail(why)
        pytest.skip(why)


def small_tree(root: Path) -> None:
    """A root tree in the shape build.sh hands over: /boot/firmware holds the FAT's files."""
    (root / "boot/firmware/overlays").mkdir(parents=True)
    (root / "boot/firmware/config.txt").write_text("dtparam=i2c_arm=on\n")
    (root / "boot/firmware/overlays/a.dtbo").write_bytes(bytes(range(256)) * 8)
    (root / "etc/pi-companion").mkdir(parents=True)
    (root / "etc/pi-companion/config.toml").write_text("[web]\nenabled = true\n")
    (root / "etc/with space").write_text("a name debugfs must quote\n")
    (root / "etc/system-systemd\\x2dcryptsetup.slice").write_text("a backslash, as systemd names units\n")
    (root / "usr/bin").mkdir(parents=True)
    (root / "usr/bin/tool").write_bytes(b"\x7fELF" + b"\0" * 4000)
    os.chmod(root / "usr/bin/tool", 0o755)
    (root / "bin").symlink_to("usr/bin")
    os.link(root / "usr/bin/tool", root / "usr/bin/tool-again")


def assemble(work: Path) -> Path:
    env = dict(os.environ, SOURCE_DATE_EPOCH=str(EPOCH), KEEP_RAW="1")
    out = work / "card.img.xz"
    result = subprocess.run(["bash", str(ASSEMBLE), str(work / "root"), str(out)],
                            env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return out


def sha(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def test_the_same_tree_assembled_twice_gives_the_same_card(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    small_tree(first / "root")
    time.sleep(1.1)                  # the second copy's files get later change times
    second.mkdir()
    subprocess.run(["cp", "-a", str(first / "root"), str(second / "root")], check=True)   # keeps the hard link
    for path in (second / "root").rglob("*"):
        if path.is_file() and not path.is_symlink():
            path.read_bytes()                    # a later access time
            os.chmod(path, path.stat().st_mode)  # a later change time
    cards = [assemble(first), assemble(second)]
    raw = [card.with_suffix("") for card in cards]
    assert sha(raw[0]) == sha(raw[1])
    assert sha(cards[0]) == sha(cards[1])
    # Every time stamp in the root file system is SOURCE_DATE_EPOCH, not the host's.
    part = subprocess.run(["parted", "-m", "-s", str(raw[0]), "unit", "B", "print"],
                          capture_output=True, text=True, check=True).stdout
    start, end = (int(field.rstrip("B")) for field in
                  next(line for line in part.splitlines() if line.startswith("2:")).split(":")[1:3])
    ext4 = tmp_path / "root.ext4"
    with raw[0].open("rb") as src, ext4.open("wb") as dst:
        src.seek(start)
        dst.write(src.read(end - start + 1))
    stat = subprocess.run(["debugfs", "-R", 'stat "/etc/with space"', str(ext4)],
                          capture_output=True, text=True, check=True).stdout
    times = [line.split()[1] for line in stat.splitlines()
             if line.strip().split(":")[0] in ("ctime", "atime", "mtime", "crtime")]
    assert times == [f"0x{EPOCH:08x}:00000000"] * 4, stat
