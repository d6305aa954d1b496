#!/usr/bin/env bash
# mmdebstrap --customize-hook for systemd/image/build.sh: turns the Debian root tree ($1) into
# the box. Runs on the build host; arm64 programs run in the tree under qemu-user (chroot).
set -euo pipefail
ROOT=$1
FILES=$IMAGE_FILES
say() { printf 'image: %s\n' "$*" >&2; }
# The host's pip and locale settings must not leak into the chroot.
in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    SOURCE_DATE_EPOCH="$SOURCE_DATE_EPOCH" "$@"; }

# --- the box: its Debian package (venv, units, sysusers, rules, config), as an update installs it
say "installing $(basename -- "$IMAGE_PACKAGE") into the image (dpkg in the arm64 chroot)"
cp -- "$IMAGE_PACKAGE" "$ROOT/tmp/pi-companion.deb"
# postinst makes the users, compiles the venv's byte code and enables the units; with no systemd
# running in the chroot it starts nothing.
in_root dpkg --force-confold -i /tmp/pi-companion.deb
rm -f "$ROOT/tmp/pi-companion.deb"
in_root dpkg-query -W -f 'image: package ${Package} ${Version} ${db:Status-Status}\n' pi-companion >&2
in_root /opt/pi-companion/venv/bin/python -c 'import importlib.metadata as m
for d in sorted(m.distributions(), key=lambda d: d.metadata["Name"].lower()):
    print("image: venv: %s==%s" % (d.metadata["Name"], d.version))' >&2

# --- devices: the gpio and i2c groups get the GPIO chips and I2C buses; i2c-dev at boot -----
install -D -m 0644 "$FILES/60-pi-companion-devices.rules" "$ROOT/etc/udev/rules.d/60-pi-companion-devices.rules"
install -D -m 0644 "$FILES/modules-load.conf" "$ROOT/etc/modules-load.d/pi-companion.conf"
install -D -m 0644 "$FILES/raspi-firmware-custom" "$ROOT/etc/default/raspi-firmware-custom"
# The piezo's hardware PWM (config.txt's dtoverlay=pwm): the overlay, compiled here by the
# host's dtc (the card has no compiler). On the FAT partition, which no package owns.
mkdir -p "$ROOT/boot/firmware/overlays"
dtc -q -@ -I dts -O dtb -o "$ROOT/boot/firmware/overlays/pwm.dtbo" "$FILES/pwm-overlay.dts"

# --- first boot and every boot: the settings on the FAT partition ---------------------------
install -D -m 0755 "$FILES/pi-companion-setup.py" "$ROOT/usr/local/lib/pi-companion/setup.py"
install -D -m 0644 "$FILES/pi-companion-setup.service" "$ROOT/etc/systemd/system/pi-companion-setup.service"
install -D -m 0755 "$FILES/pi-companion-growfs" "$ROOT/usr/local/lib/pi-companion/growfs"
install -D -m 0644 "$FILES/pi-companion-growfs.service" "$ROOT/etc/systemd/system/pi-companion-growfs.service"
# The box's own hotspot: NetworkManager's dispatcher tells the box when it goes up or down.
install -D -m 0755 "$FILES/pi-companion-hotspot-dispatch" "$ROOT/etc/NetworkManager/dispatcher.d/90-pi-companion-hotspot"
# The update by card: the folder a new package is dropped into (systemd/README.md).
mkdir -p "$ROOT/boot/firmware/pi-companion-update"
# The box's config, as the user sees it on the card: the template with the big screen on.
sed -e 's/^# enabled = false$/enabled = true/' "$ROOT/etc/pi-companion/config.toml" \
    >"$ROOT/boot/firmware/pi-companion.toml"
grep -q '^enabled = true$' "$ROOT/boot/firmware/pi-companion.toml" \
    || { say "error: could not switch the big screen on in the config template"; exit 1; }
cp "$ROOT/boot/firmware/pi-companion.toml" "$ROOT/etc/pi-companion/config.toml"
install -m 0644 "$FILES/pi-companion-setup.toml" "$ROOT/boot/firmware/pi-companion-setup.toml"

# --- the system ---------------------------------------------------------------------------
install -m 0644 "$FILES/fstab" "$ROOT/etc/fstab"
echo pi-companion >"$ROOT/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tpi-companion\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
    >"$ROOT/etc/hosts"
: >"$ROOT/etc/resolv.conf"
# SSH stays off until the FAT partition holds a key (the setup service removes this file and
# makes the host keys then: an image must not ship host keys every box would share).
: >"$ROOT/etc/ssh/sshd_not_to_be_run"
rm -f "$ROOT"/etc/ssh/ssh_host_*
# A small journal on the SD card.
install -D -m 0644 /dev/stdin "$ROOT/etc/systemd/journald.conf.d/pi-companion.conf" <<'CONF'
# pi-companion image: keep the journal small on the SD card.
[Journal]
SystemMaxUse=64M
CONF
in_root systemctl enable pi-companion-setup.service pi-companion-growfs.service \
    pi-companion-web.service NetworkManager.service avahi-daemon.service systemd-timesyncd.service
# The raspi-firmware hooks wrote /boot/firmware when the kernel was installed, before the
# custom config.txt lines existed: run them again.
in_root dpkg-reconfigure raspi-firmware
say "boot partition: $(ls "$ROOT/boot/firmware" | tr '\n' ' ')"
