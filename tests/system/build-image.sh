#!/usr/bin/env bash
# Builds the system test's Debian 13 trixie disk image: systemd, udev, dbus, polkitd, Python
# 3.13, make, a kernel with the gpio-sim module and the test's own units. pi-companion is NOT
# in it: the test installs it with `make install`. No lgpio: the default edges = "kernel" path
# never imports it, and trixie has no python3-lgpio package.
#   build-image.sh OUT_DIR MODULE_CACHE_DIR
# Writes OUT_DIR/{root.img,vmlinuz,initrd.img}. Runs as root on a Debian host.
set -euo pipefail
OUT=$1 MODCACHE=$2
HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
MIRROR=${MIRROR:-$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}
MIRROR=${MIRROR:-$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)}
[[ -n $MIRROR ]] || { echo "build-image: no Debian mirror found; set MIRROR" >&2; exit 1; }
SECURITY=${SECURITY_MIRROR:-${MIRROR%/debian}/debian-security}

WORK=$(mktemp -d -t pi-companion-image.XXXXXX)
trap 'rm -rf -- "$WORK"' EXIT
ROOT=$WORK/root
mkdir -p "$OUT" "$MODCACHE"

# Runs on the host with the root filesystem as $1: builds gpio-sim.ko once per kernel version
# (cached), installs it and the test units.
cat >"$WORK/customize.sh" <<HOOK
#!/bin/bash
set -euo pipefail
R=\$1
CH="chroot \$R env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive"
KVER=\$(ls "\$R/lib/modules" | head -n1)
KO="$MODCACHE/gpio-sim-\$KVER.ko"
if [[ ! -s \$KO ]]; then
    echo "build-image: building gpio-sim.ko for \$KVER"
    DEPS="linux-headers-\$KVER gcc libc6-dev xz-utils"   # not make: the image keeps it
    \$CH apt-get install -y -q --no-install-recommends \$DEPS >/dev/null
    SRCVER=\$(\$CH dpkg-query -W -f='\${Version}' "linux-headers-\$KVER")
    SERIES=\$(echo "\$KVER" | cut -d. -f1,2)
    \$CH sh -c "cd /tmp && apt-get download -q linux-source-\$SERIES=\$SRCVER" >/dev/null
    B=/tmp/gpio-sim
    mkdir -p "\$R\$B"
    cp "$HERE/image/gpio-sim.mk" "\$R\$B/Makefile"
    L=linux-source-\$SERIES
    \$CH sh -c "dpkg-deb --fsys-tarfile /tmp/linux-source-*.deb | tar -xO ./usr/src/\$L.tar.xz | tar -xJ -C /tmp \$L/drivers/gpio/gpio-sim.c \$L/drivers/gpio/gpiolib.h \$L/kernel/irq/irq_sim.c"
    cp "\$R/tmp/\$L/drivers/gpio/gpio-sim.c" "\$R\$B/gpio-sim-core.c"
    cp "\$R/tmp/\$L/drivers/gpio/gpiolib.h" "\$R/tmp/\$L/kernel/irq/irq_sim.c" "\$R\$B/"
    # irq_to_desc() is not exported to modules; generic_handle_irq() does the same here.
    sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "\$R\$B/irq_sim.c"
    grep -q 'generic_handle_irq(irqnum);' "\$R\$B/irq_sim.c" || { echo "irq_sim.c patch did not apply" >&2; exit 1; }
    \$CH make -s -C \$B KVER="\$KVER" 2>&1 | grep -v 'Skipping BTF' || true
    [[ -s \$R\$B/gpio-sim.ko ]] || { echo "build-image: gpio-sim.ko did not build" >&2; exit 1; }
    cp "\$R\$B/gpio-sim.ko" "\$KO.tmp" && mv "\$KO.tmp" "\$KO"
    \$CH apt-get purge -y -q --autoremove \$DEPS >/dev/null
    rm -rf "\$R"/tmp/linux-source* "\$R\$B"
fi
install -D -m 0644 "\$KO" "\$R/lib/modules/\$KVER/updates/gpio-sim.ko"
# Without its debug information the module is a fraction of the size: faster to load under TCG.
strip --strip-debug "\$R/lib/modules/\$KVER/updates/gpio-sim.ko"
\$CH depmod "\$KVER"

echo systest > "\$R/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 systest\n' > "\$R/etc/hosts"
# No fstab: the kernel mounts the root read-write (root=/dev/vda rw), so the boot waits for no
# disk device unit and runs no fsck (ext4's journal is replayed at mount after a power cut).
: > "\$R/etc/fstab"
chroot "\$R" passwd -d root >/dev/null
install -D -m 0755 "$HERE/image/gpio-sim-setup" "\$R/usr/local/sbin/gpio-sim-setup"
install -D -m 0755 "$HERE/image/systest-runner" "\$R/usr/local/sbin/systest-runner"
install -D -m 0644 "$HERE/image/gpio-sim-setup.service" "\$R/etc/systemd/system/gpio-sim-setup.service"
install -D -m 0644 "$HERE/image/systest-runner.service" "\$R/etc/systemd/system/systest-runner.service"
install -D -m 0644 "$HERE/image/systest.mount" "\$R/etc/systemd/system/systest.mount"
install -D -m 0644 "$HERE/image/99-gpiochip.rules" "\$R/etc/udev/rules.d/99-gpiochip.rules"
install -D -m 0644 "$HERE/image/pi-companion-test.conf" "\$R/etc/systemd/system/pi-companion.service.d/systest.conf"
install -D -m 0644 "$HERE/image/cpuinfo-pi4" "\$R/etc/systest/cpuinfo-pi4"
install -D -m 0644 "$HERE/image/cpuinfo-pi5" "\$R/etc/systest/cpuinfo-pi5"
# Whether trixie packages lgpio (the log says; the image does not use it).
\$CH apt-cache policy python3-lgpio | head -n 3 | sed 's/^/build-image: /'

# The VM's address on QEMU's user network (the resume stage starts systemd-networkd).
mkdir -p "\$R/etc/systemd/network"
printf '[Match]\nType=ether\n\n[Network]\nAddress=10.0.2.15/24\nLinkLocalAddressing=no\nIPv6AcceptRA=no\n' \
    > "\$R/etc/systemd/network/20-systest.network"
mkdir -p "\$R/etc/systemd/journald.conf.d" "\$R/etc/systemd/system.conf.d"
printf '[Journal]\nStorage=volatile\n' > "\$R/etc/systemd/journald.conf.d/systest.conf"
printf '[Manager]\nShowStatus=error\n' > "\$R/etc/systemd/system.conf.d/systest.conf"
# In this test image only (never in the shipped units): what a test boot does not need. Under
# TCG every unit costs, and these load kernel modules or run jobs nothing here uses.
chroot "\$R" systemctl mask -q apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
    e2scrub_reap.service fstrim.timer serial-getty@ttyS0.service getty@tty1.service \
    dpkg-db-backup.timer systemd-tmpfiles-clean.timer modprobe@drm.service \
    modprobe@dm_mod.service modprobe@loop.service modprobe@efi_pstore.service \
    modprobe@fuse.service systemd-binfmt.service proc-sys-fs-binfmt_misc.automount \
    sys-fs-fuse-connections.mount systemd-pstore.service 2>/dev/null || true
chroot "\$R" systemctl enable -q gpio-sim-setup.service systest.mount systest-runner.service
HOOK
chmod +x "$WORK/customize.sh"

# The kernel's modules for hardware a QEMU guest without network, sound or USB never has: the
# image's used space goes from 770 to 530 MB, less to unpack and to copy into the disk image.
MODULE_EXCLUDES=()
for m in drivers/net drivers/gpu drivers/media drivers/scsi drivers/infiniband drivers/iio \
    drivers/staging drivers/usb drivers/bluetooth drivers/isdn sound net/wireless net/mac80211 \
    net/bluetooth net/netfilter; do
    MODULE_EXCLUDES+=("--dpkgopt=path-exclude=/lib/modules/*/kernel/$m/*"
                      "--dpkgopt=path-exclude=/usr/lib/modules/*/kernel/$m/*")
done
# ... but the resume boot's network card (virtio-net, for the big screen's pages from the host).
MODULE_EXCLUDES+=("--dpkgopt=path-include=/lib/modules/*/kernel/drivers/net/virtio_net.ko*"
                  "--dpkgopt=path-include=/usr/lib/modules/*/kernel/drivers/net/virtio_net.ko*"
                  "--dpkgopt=path-include=/lib/modules/*/kernel/drivers/net/net_failover.ko*"
                  "--dpkgopt=path-include=/usr/lib/modules/*/kernel/drivers/net/net_failover.ko*")
echo "build-image: mmdebstrap trixie from $MIRROR"
mmdebstrap --variant=minbase --dpkgopt=force-unsafe-io \
    --include=systemd,systemd-sysv,udev,dbus,polkitd,linux-image-amd64,python3,python3-venv,python3-pip,make,kmod,initramfs-tools,procps,mount,dmsetup,e2fsprogs,passwd \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
    "${MODULE_EXCLUDES[@]}" \
    --essential-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" "$1/usr/share/initramfs-tools/modules.d"; echo MODULES=list > "$1/etc/initramfs-tools/conf.d/systest.conf"; printf "virtio_pci\nvirtio_blk\next4\ncrc32c_generic\n" > "$1/usr/share/initramfs-tools/modules.d/systest"' \
    --customize-hook="$WORK/customize.sh \"\$1\"" \
    trixie "$ROOT" "deb $MIRROR trixie main" "deb $SECURITY trixie-security main"
[[ -x $ROOT/sbin/init ]] || { echo "build-image: mmdebstrap left no /sbin/init" >&2; exit 1; }

cp "$ROOT"/boot/vmlinuz-* "$OUT/vmlinuz.tmp" && mv "$OUT/vmlinuz.tmp" "$OUT/vmlinuz"
cp "$ROOT"/boot/initrd.img-* "$OUT/initrd.img.tmp" && mv "$OUT/initrd.img.tmp" "$OUT/initrd.img"
mke2fs -q -F -t ext4 -L root -E root_owner=0:0 -d "$ROOT" "$OUT/root.img.tmp" 2G
mv "$OUT/root.img.tmp" "$OUT/root.img"
echo "build-image: done"
