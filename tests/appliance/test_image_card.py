"""tests/image/card-check.sh, the file-by-file check of the boards no emulator boots (Pi 5, 4,
Zero 2 W), passes a card laid out as the image build lays it out and fails, naming the finding,
on a card that lacks any of its claims. The card is small but real: an MBR with a FAT and an
ext4 partition (mkfs.vfat + mcopy, mke2fs -d), the image's own config.txt lines
(systemd/image/files/raspi-firmware-custom), its PWM overlay compiled from its source, device
trees compiled with dtc, and an initramfs (a zstd cpio archive) holding the modules that
systemd/image/files/initramfs-modules names."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHECK = REPO / "tests" / "image" / "card-check.sh"
FILES = REPO / "systemd" / "image" / "files"
VERSION = "7.3.4+deb13-arm64"
TOOLS = ("parted", "mcopy", "mkfs.vfat", "mke2fs", "debugfs", "dtc", "fdtget", "fdtoverlay", "zstd", "cpio", "xz")
MIB = 1024 * 1024


@pytest.fixture(autouse=True)
def tools() -> None:
    """As test_image_assemble.py: skip with what to install, fail under .ci/run."""
    missing = [t for t in TOOLS if shutil.which(t) is None and not Path("/sbin", t).exists()
               and not Path("/usr/sbin", t).exists()]
    if missing:
        why = (f"the image tools are missing: {', '.join(missing)} (apt install parted mtools dosfstools"
               " e2fsprogs device-tree-compiler zstd cpio xz-utils)")
        if os.environ.get("PI_COMPANION_NEED_IMAGE_TOOLS") == "1":
            pytest.fail(why)
        pytest.skip(why)


def run(*args: str, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=os.environ.get("PATH", "") + ":/usr/sbin:/sbin", MTOOLS_SKIP_CHECK="1")
    return subprocess.run(args, check=True, capture_output=True, env=env, timeout=120, **kw)


def soc_dts(model: str, soc: str) -> str:
    """A BCM2837/BCM2711 board's tree, as far as the overlay and the check read it."""
    return f"""/dts-v1/;
/ {{ compatible = "{model}", "{soc}"; #address-cells = <1>; #size-cells = <1>;
  soc {{ #address-cells = <1>; #size-cells = <1>;
    gpio: gpio@7e200000 {{ compatible = "brcm,bcm2835-gpio"; reg = <0x7e200000 0xb4>; }};
    pwm: pwm@7e20c000 {{ compatible = "brcm,bcm2835-pwm"; reg = <0x7e20c000 0x28>; status = "disabled"; }};
  }};
}};
"""


def pi5_dts(sd_compatible: str) -> str:
    return f"""/dts-v1/;
/ {{ compatible = "raspberrypi,5-model-b", "brcm,bcm2712"; #address-cells = <2>; #size-cells = <2>;
  soc@107c000000 {{ #address-cells = <1>; #size-cells = <1>;
    mmc@fff000 {{ compatible = "{sd_compatible}", "brcm,sdhci-brcmstb"; reg = <0xfff000 0x260>; }};
  }};
}};
"""


def module_names() -> list[str]:
    return [line.strip() for line in (FILES / "initramfs-modules").read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def make_card(tmp: Path, *, custom: str | None = None, drop_fat: str = "", drop_module: str = "",
              sd_compatible: str = "brcm,bcm2712-sdhci", site: tuple[str, ...] = ("pi_companion",),
              venv_python: str = "python3.13", status: str = "install ok installed",
              units_in_etc: bool = False) -> Path:
    """A card as the build leaves it; each keyword breaks one thing."""
    fat = tmp / "fat"
    (fat / "overlays").mkdir(parents=True)
    custom = (FILES / "raspi-firmware-custom").read_text() if custom is None else custom
    # The head of config.txt as raspi-firmware's hook writes it, then the image's lines.
    (fat / "config.txt").write_text(
        "# Do not modify this file!\narm_64bit=1\n\nenable_uart=1\nupstream_kernel=1\n\n"
        f"kernel=vmlinuz-{VERSION}\ninitramfs initrd.img-{VERSION}\n\n"
        f"# Inserted by /etc/default/raspi-firmware-custom\n{custom}")
    (fat / "cmdline.txt").write_text("console=tty0 root=LABEL=RASPIROOT rw rootwait\n")
    for name in ("bootcode.bin", "start.elf", "fixup.dat", "start4.elf", "fixup4.dat", f"vmlinuz-{VERSION}"):
        (fat / name).write_bytes(b"\0" * 64)
    dts = tmp / "dts"
    dts.mkdir()
    boards = {"bcm2837-rpi-zero-2-w": soc_dts("raspberrypi,model-zero-2-w", "brcm,bcm2837"),
              "bcm2837-rpi-3-b": soc_dts("raspberrypi,3-model-b", "brcm,bcm2837"),
              "bcm2837-rpi-3-b-plus": soc_dts("raspberrypi,3-model-b-plus", "brcm,bcm2837"),
              "bcm2837-rpi-3-a-plus": soc_dts("raspberrypi,3-model-a-plus", "brcm,bcm2837"),
              "bcm2711-rpi-4-b": soc_dts("raspberrypi,4-model-b", "brcm,bcm2711"),
              "bcm2711-rpi-400": soc_dts("raspberrypi,400", "brcm,bcm2711"),
              "bcm2712-rpi-5-b": pi5_dts(sd_compatible),
              "bcm2712-d-rpi-5-b": pi5_dts(sd_compatible)}
    for name, source in boards.items():
        (dts / f"{name}.dts").write_text(source)
        run("dtc", "-q", "-@", "-I", "dts", "-O", "dtb", "-o", str(fat / f"{name}.dtb"), str(dts / f"{name}.dts"))
    run("dtc", "-q", "-@", "-I", "dts", "-O", "dtb", "-o", str(fat / "overlays" / "pwm.dtbo"),
        str(FILES / "pwm-overlay.dts"))
    # The initramfs: every listed module (but the dropped one) and their aliases.
    initramfs = tmp / "initramfs"
    moddir = initramfs / "usr" / "lib" / "modules" / VERSION
    (moddir / "kernel" / "drivers").mkdir(parents=True)
    aliases = []
    for name in module_names():
        if name == drop_module:
            continue
        (moddir / "kernel" / "drivers" / f"{name}.ko.xz").write_bytes(b"\xfd7zXZ\0")
        if name == "sdhci-brcmstb":
            aliases.append("alias of:N*T*Cbrcm,bcm2712-sdhciC* sdhci_brcmstb\n")
    (moddir / "modules.alias").write_text("".join(aliases))
    files = subprocess.run(["find", ".", "-mindepth", "1"], cwd=initramfs, check=True, capture_output=True).stdout
    archive = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=initramfs, input=files,
                             check=True, capture_output=True).stdout
    # As initramfs-tools writes it: an uncompressed early archive, then the zstd main one.
    early = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=tmp, input=b"dts\n",
                           check=True, capture_output=True).stdout
    (fat / f"initrd.img-{VERSION}").write_bytes(
        early + subprocess.run(["zstd", "-q", "-c"], input=archive, check=True, capture_output=True).stdout)
    (fat / "pi-companion-update").mkdir()
    if drop_fat:
        (fat / drop_fat).unlink() if (fat / drop_fat).is_file() else (fat / drop_fat).rmdir()
    # The root tree: the kernel's modules, the kernel pin, the venv.
    root = tmp / "root"
    drivers = root / "usr" / "lib" / "modules" / VERSION / "kernel" / "drivers"
    (drivers / "pwm").mkdir(parents=True)
    (drivers / "mmc" / "host").mkdir(parents=True)
    (drivers / "pwm" / "pwm-bcm2835.ko.xz").write_bytes(b"\xfd7zXZ\0")
    (drivers / "mmc" / "host" / "sdhci-brcmstb.ko.xz").write_bytes(b"\xfd7zXZ\0")
    (root / "etc" / "apt" / "preferences.d").mkdir(parents=True)
    shutil.copy(FILES / "kernel-backports.pref", root / "etc" / "apt" / "preferences.d" / "pi-companion-kernel.pref")
    for name in site:
        (root / "opt" / "pi-companion" / "venv" / "lib" / venv_python / "site-packages" / name).mkdir(parents=True)
    # dpkg's status as the package leaves it, between two other packages.
    (root / "var" / "lib" / "dpkg").mkdir(parents=True)
    (root / "var" / "lib" / "dpkg" / "status").write_text(
        "Package: pi-companion-extra\nStatus: install ok installed\nVersion: 9\n\n"
        f"Package: pi-companion\nStatus: {status}\nPriority: optional\nVersion: 0.2.0\n\n"
        "Package: zstd\nStatus: install ok installed\nVersion: 1.5.7\n")
    if units_in_etc:
        (root / "etc" / "systemd" / "system").mkdir(parents=True)
        (root / "etc" / "systemd" / "system" / "pi-companion.service").write_text("[Unit]\n")
    # The card: FAT at 1 MiB, ext4 after it, as assemble.sh lays them out (smaller).
    run("mkfs.vfat", "-C", "-F", "32", "-n", "RASPIFIRM", str(tmp / "fat.img"), str(40 * 1024))
    for entry in sorted(fat.iterdir()):
        run("mcopy", "-s", "-i", str(tmp / "fat.img"), str(entry), f"::/{entry.name}")
    run("mke2fs", "-q", "-t", "ext4", "-d", str(root), str(tmp / "root.img"), "16M")
    card = tmp / "card.img"
    with open(card, "wb") as f:
        f.truncate(60 * MIB)
    run("parted", "-s", str(card), "mklabel", "msdos", "mkpart", "primary", "fat32", "1MiB", "41MiB",
        "mkpart", "primary", "ext4", "41MiB", "100%")
    run("dd", f"if={tmp / 'fat.img'}", f"of={card}", "bs=1M", "seek=1", "conv=notrunc", "status=none")
    run("dd", f"if={tmp / 'root.img'}", f"of={card}", "bs=1M", "seek=41", "conv=notrunc", "status=none")
    return card


def check(card: Path, tmp: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, IMAGE_TEST_WORK=str(tmp / "check-work"))
    return subprocess.run(["bash", str(CHECK), str(card)], capture_output=True, text=True, env=env, timeout=300)


def test_the_image_layout_passes(tmp_path: Path) -> None:
    result = check(make_card(tmp_path), tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert "card-check: PASS" in lines
    assert not [line for line in lines if "FAIL" in line]
    # The claims that matter for the boards no emulator boots are each said.
    for claim in ("config.txt: [pi5] without the PWM overlay", "config.txt: [pi4] dtoverlay=pwm,pin=18,func=2",
                  "FAT: bcm2712-d-rpi-5-b.dtb", "initramfs: sdhci-brcmstb (Pi 5)",
                  "initramfs: a module claims the Pi 5's SD slot",
                  "overlays/pwm.dtbo on bcm2711-rpi-4-b.dtb: the PWM block on, GPIO18 in function 2",
                  "root: the venv runs Python 3.13", "root: pi-companion 0.2.0 installed by its package",
                  "FAT: pi-companion-update/"):
        assert any(line.startswith("card-check: ok: " + claim) for line in lines), claim


CUSTOM = (FILES / "raspi-firmware-custom").read_text()


def without_pi4_pwm(text: str) -> str:
    head, pi4 = text.split("[pi4]\n")
    pi4, tail = pi4.split("[pi5]\n")
    assert "dtoverlay=pwm,pin=18,func=2\n" in pi4
    return head + "[pi4]\n" + pi4.replace("dtoverlay=pwm,pin=18,func=2\n", "") + "[pi5]\n" + tail


BROKEN = {
    "no [pi5] section": (dict(custom=CUSTOM.replace("[pi5]", "[pi500]")), "config.txt: no [pi5] section"),
    "a PWM overlay on the Pi 5": (dict(custom=CUSTOM.replace("[all]", "dtoverlay=pwm,pin=18,func=2\n[all]")),
                                  "config.txt: [pi5] without the PWM overlay"),
    "no PWM overlay on the Pi 4": (dict(custom=without_pi4_pwm(CUSTOM)),
                                   "config.txt: [pi4] dtoverlay=pwm,pin=18,func=2"),
    "no Pi 5 D0 tree": (dict(drop_fat="bcm2712-d-rpi-5-b.dtb"), "FAT: bcm2712-d-rpi-5-b.dtb"),
    "no overlay": (dict(drop_fat="overlays/pwm.dtbo"), "FAT: overlays/pwm.dtbo"),
    "no SD driver for the Pi 5": (dict(drop_module="sdhci-brcmstb"), "initramfs: sdhci-brcmstb (Pi 5)"),
    "no RP1 in the initramfs": (dict(drop_module="rp1_pci"), "initramfs: rp1_pci (Pi 5)"),
    "an SD slot no module claims": (dict(sd_compatible="brcm,bcm2799-sdhci"), "initramfs: a module claims the Pi 5's SD slot"),
    "lgpio in the venv": (dict(site=("pi_companion", "lgpio")), "root: the venv holds pi_companion and no lgpio"),
    "an older Python": (dict(venv_python="python3.11"), "root: the venv runs Python 3.13"),
    "the package only unpacked": (dict(status="install ok unpacked"), "root: pi-companion 0.2.0 installed by its package"),
    "install.sh's units": (dict(units_in_etc=True), "root: no systemd/install.sh copy"),
    "no update folder": (dict(drop_fat="pi-companion-update"), "FAT: pi-companion-update/"),
}


@pytest.mark.parametrize("breakage", list(BROKEN))
def test_a_card_without_a_claim_fails_naming_it(tmp_path: Path, breakage: str) -> None:
    kwargs, claim = BROKEN[breakage]
    result = check(make_card(tmp_path, **kwargs), tmp_path)
    assert result.returncode == 1, result.stderr
    failed = [line for line in result.stderr.splitlines() if line.startswith("card-check: FAIL: ")]
    assert any(line.startswith("card-check: FAIL: " + claim) for line in failed), result.stderr
    assert failed[-1] == "card-check: FAIL: see above"


def test_a_file_that_is_no_card_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "not-a-card.img").write_bytes(b"\0" * MIB)
    result = check(tmp_path / "not-a-card.img", tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("card-check: FAIL: ")
    assert "has no FAT and root partition" in result.stderr
