#!/usr/bin/env bash
# Builds the pi-companion SD-card image: Debian 13 trixie arm64 from Debian's own packages, with
# the kernel from trixie-backports (the first Debian kernel with the Pi 5's SD card and RP1
# drivers), the box installed from its own Debian package (the one `make release` ships, so a
# card and an update by card run the same files), first-boot settings on the FAT partition.
#
#   sudo systemd/image/build.sh pi-companion_VERSION_arm64.deb OUTPUT.img.xz   (make image)
#
# Needs (Debian): mmdebstrap qemu-user-static parted dosfstools mtools e2fsprogs xz-utils
# device-tree-compiler, and
# binfmt_misc with qemu-aarch64 registered (the script mounts and registers it if it can).
# No loop devices and no mounts of the image: the root file system is made from a directory
# with `mke2fs -d`, the FAT one with `mkfs.vfat -C` + `mcopy`, and both are put into the
# partitioned file with `dd`.
#
# Environment:
#   IMAGE_CACHE     downloaded .debs, kept between builds
#                   (default /var/cache/pi-companion-image); never inside the repository
#   IMAGE_WORK      scratch directory for the root tree (default /var/tmp/pi-companion-image)
#   IMAGE_MIRROR    Debian mirror (default http://deb.debian.org/debian)
#   SOURCE_DATE_EPOCH   every time stamp in the image (default: the last commit's time)
#   KEEP_RAW=1      keep the uncompressed .img beside the .img.xz (make image-test uses it)
#   IMAGE_KEEP_WORK=1   keep IMAGE_WORK when the build fails, to look into the tree
set -euo pipefail
umask 022

say() { printf 'image: %s\n' "$*" >&2; }
die() { printf 'image: error: %s\n' "$*" >&2; exit 1; }

[[ $# -eq 2 ]] || die "usage: build.sh pi-companion_VERSION_arm64.deb OUTPUT.img.xz"
PACKAGE=$(realpath -- "$1")
OUTPUT=$(realpath -m -- "$2")
[[ -f $PACKAGE ]] || die "no package $1 (make image builds it with systemd/debian/build.sh)"
[[ $(dpkg-deb -f "$PACKAGE" Package 2>/dev/null) == pi-companion \
    && $(dpkg-deb -f "$PACKAGE" Architecture 2>/dev/null) == arm64 ]] \
    || die "not pi-companion's arm64 package: $1"
[[ $OUTPUT == *.img.xz ]] || die "the output must end in .img.xz: $2"
[[ $EUID -eq 0 ]] || die "run as root (mmdebstrap's root mode; no loop devices are used)"

HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd -- "$HERE/../.." && pwd)
CACHE=${IMAGE_CACHE:-/var/cache/pi-companion-image}
WORK=${IMAGE_WORK:-/var/tmp/pi-companion-image}
MIRROR=${IMAGE_MIRROR:-http://deb.debian.org/debian}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || date +%s)}

for tool in dpkg-deb mmdebstrap parted mkfs.vfat mcopy mmd mke2fs xz dtc; do
    command -v "$tool" >/dev/null \
        || die "$tool is missing: apt install mmdebstrap qemu-user-static parted dosfstools mtools e2fsprogs xz-utils device-tree-compiler"
done
case $REPO/ in "$CACHE"/* | "$WORK"/*) die "IMAGE_CACHE and IMAGE_WORK must be outside the repository" ;; esac
case $CACHE/ in "$REPO"/*) die "IMAGE_CACHE must be outside the repository: $CACHE" ;; esac
# mmdebstrap's special hooks (sync-in, sync-out) split their arguments on blanks.
[[ $CACHE =~ ^[A-Za-z0-9/._-]+$ ]] || die "IMAGE_CACHE may hold only letters, digits and / . _ -: $CACHE"

# arm64 programs run under qemu-user in the chroot: binfmt_misc must know them ("F": the
# interpreter is opened now, so it works inside the chroot too).
if ! command -v arch-test >/dev/null || ! arch-test arm64 >/dev/null 2>&1; then
    mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    if [[ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 && -f /usr/lib/binfmt.d/qemu-aarch64.conf ]]; then
        /usr/lib/systemd/systemd-binfmt /usr/lib/binfmt.d/qemu-aarch64.conf
    fi
    [[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] \
        || die "cannot run arm64 programs: apt install qemu-user-static (and binfmt_misc must be available)"
fi

ROOT=$WORK/root
# A build killed inside mmdebstrap leaves its chroot's /proc, /sys and /dev mounted: rm -rf
# would walk into them. Say so instead.
left=$(findmnt -rn -o TARGET | grep -F -- "$WORK/" | head -n 3 | tr '\n' ' ' || true)
[[ -z $left ]] || die "mounts left below $WORK by an interrupted build: $left(umount -l them, or set IMAGE_WORK)"
rm -rf -- "$WORK"
mkdir -p -- "$WORK" "$CACHE/apt"
# IMAGE_KEEP_WORK=1 keeps the tree after a failure (a rebuild of it costs the whole dpkg run).
trap '[[ ${IMAGE_KEEP_WORK:-0} == 1 ]] || rm -rf -- "$WORK"' EXIT

# Files that must exist before their packages are unpacked (dpkg keeps them: force-confold).
mkdir -p "$WORK/preseed/etc/default" "$WORK/preseed/etc/initramfs-tools/conf.d"
install -m 0644 "$HERE/files/raspi-firmware.default" "$WORK/preseed/etc/default/raspi-firmware"
install -m 0644 "$HERE/files/initramfs-modules" "$WORK/preseed/etc/initramfs-tools/modules"
install -m 0644 "$HERE/files/initramfs.conf" "$WORK/preseed/etc/initramfs-tools/conf.d/pi-companion.conf"
# The kernel comes from trixie-backports, and stays there on upgrades (the pin is kept on the card).
install -D -m 0644 "$HERE/files/kernel-backports.pref" "$WORK/preseed/etc/apt/preferences.d/pi-companion-kernel.pref"

# The venv came with the package, built from wheels for arm64 and CPython 3.13 (trixie's): the
# card needs no compiler. lgpio has no cp313 wheel for arm64, and the image must not need it
# (edges = "kernel" never imports it).
if dpkg-deb -c "$PACKAGE" | grep -qi '/site-packages/lgpio'; then
    die "the package's venv holds lgpio, which has no CPython 3.13 wheel for arm64"
fi

PACKAGES=(
    # boot: kernel, the Pi's firmware and its hooks (config.txt, cmdline.txt, DTBs), initramfs
    linux-image-arm64 raspi-firmware initramfs-tools zstd
    # system (mount is no longer essential in trixie: findmnt, lsblk and partx for the growfs)
    systemd-sysv udev dbus libpam-systemd systemd-timesyncd kmod fdisk e2fsprogs iproute2 mount
    util-linux
    ca-certificates
    # Wi-Fi and the network: the Pi's radios, the regulatory database, NetworkManager, mDNS
    firmware-brcm80211 wireless-regdb iw wpasupplicant network-manager avahi-daemon libnss-mdns
    # the box's own hotspot: NetworkManager's shared mode runs dnsmasq for DHCP
    dnsmasq-base
    # the box's package needs (its control file): python3.13, systemd, udev; polkit for the
    # power-off via logind
    polkitd python3 python3.13
    # SSH: installed, but off unless the FAT partition holds a key
    openssh-server
)
IFS=, ; INCLUDE="${PACKAGES[*]}"; unset IFS

say "building the root tree (mmdebstrap, arm64 under qemu-user; SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH)"
start=$(date +%s)
# Hooks get the root tree as $1; environment variables carry the paths.
export IMAGE_PACKAGE=$PACKAGE IMAGE_CACHE_DIR=$CACHE IMAGE_FILES=$HERE/files IMAGE_PRESEED=$WORK/preseed
mmdebstrap --mode=root --variant=minbase --architectures=arm64 \
    --include="$INCLUDE" \
    --dpkgopt=force-confold \
    --aptopt='Acquire::Retries "3"' \
    --skip=essential/unlink \
    --setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
    --setup-hook="sync-in $CACHE/apt /var/cache/apt/archives/" \
    --setup-hook='cp -a "$IMAGE_PRESEED/." "$1/"' \
    --setup-hook='mkdir -p "$1/boot/firmware"' \
    --customize-hook="sync-out /var/cache/apt/archives $CACHE/apt" \
    --customize-hook="bash $HERE/customize.sh \"\$1\"" \
    trixie "$ROOT" \
    "deb $MIRROR trixie main non-free-firmware" \
    "deb $MIRROR trixie-updates main non-free-firmware" \
    "deb http://deb.debian.org/debian-security trixie-security main non-free-firmware" \
    "deb $MIRROR trixie-backports main non-free-firmware"
say "root tree built in $(( $(date +%s) - start )) s"
# apt's lock file and partial/ came in with the download cache (sync-in) and keep the cache's
# times, which assemble.sh leaves alone (they are older than SOURCE_DATE_EPOCH): the card
# must not depend on which cache built it.
touch -h -d "@$SOURCE_DATE_EPOCH" "$ROOT/var/cache/apt/archives" "$ROOT/var/cache/apt/archives/lock" \
    "$ROOT/var/cache/apt/archives/partial"

bash "$HERE/assemble.sh" "$ROOT" "$OUTPUT"
