#!/usr/bin/env bash
# make image-test: boots the SD-card image under qemu-system-aarch64 -M raspi3b (the Debian
# kernel, initramfs and bcm2837-rpi-3-b.dtb from its own FAT partition, the card as an emulated
# SD card) and checks from the serial console that the daemon reaches READY, the big screen
# answers and the journal holds no error of ours. QEMU cannot drive the Pi's GPIO inputs: this
# proves the image boots and the box starts, not that it plays (the x86 system test does that).
#
#   tests/image/boot-test.sh build/image/pi-companion-VERSION-arm64.img.xz
#
# The uncompressed .img beside it (make image KEEP_RAW=1) is used when it is the newer.
#
# The update from the card at a real boot: the card's own package (IMAGE_TEST_PACKAGE, the
# arm64 .deb the image was built from) goes into the test copy's pi-companion-update/ with its
# .sha256. It is not newer than the installed one, so the update unit must refuse it before
# the daemon starts, move it to done/, and the daemon must say so (a refusal costs no dpkg run
# under emulation; installing is checked by the x86 system test).
#
# Environment: IMAGE_TEST_PACKAGE (required), IMAGE_TEST_TIMEOUT (s, default 1800),
# IMAGE_TEST_WORK (scratch directory).
set -euo pipefail
say() { printf 'image-test: %s\n' "$*" >&2; }
die() { printf 'image-test: FAIL: %s\n' "$*" >&2; exit 1; }

[[ $# -eq 1 ]] || die "usage: boot-test.sh IMAGE.img.xz"
IMAGE=$1
HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
TIMEOUT=${IMAGE_TEST_TIMEOUT:-1800}
WORK=${IMAGE_TEST_WORK:-/var/tmp/pi-companion-image-test}
for tool in qemu-system-aarch64 mcopy fdtput fdtoverlay parted xz; do
    command -v "$tool" >/dev/null \
        || die "$tool is missing: apt install qemu-system-arm mtools device-tree-compiler parted xz-utils"
done
[[ -f $IMAGE || -f ${IMAGE%.xz} ]] || die "no image $IMAGE (make image first)"
PACKAGE=${IMAGE_TEST_PACKAGE:-}
[[ -n $PACKAGE && -f $PACKAGE ]] \
    || die "no package to drop on the card: IMAGE_TEST_PACKAGE='$PACKAGE' (make image-test sets it to the image's .deb)"
PACKAGE_VERSION=$(dpkg-deb -f "$PACKAGE" Version) || die "not a package: $PACKAGE"
rm -rf "$WORK" && mkdir -p "$WORK"
QEMU_PID=
cleanup() { [[ -z $QEMU_PID ]] || kill "$QEMU_PID" 2>/dev/null || true; rm -f "$WORK/card.img"; }
trap cleanup EXIT

# The card: a copy (the image stays as built), grown to a power of two as QEMU's SD card
# needs; the root partition grows into it at first start, as on a real card.
RAW=${IMAGE%.xz}
if [[ $IMAGE != *.xz || ( -f $RAW && ( ! -f $IMAGE || $RAW -nt $IMAGE ) ) ]]; then
    cp --sparse=always "$RAW" "$WORK/card.img"
else
    xz -dc "$IMAGE" | cp --sparse=always /dev/stdin "$WORK/card.img"
fi
size=$(stat -c %s "$WORK/card.img")
card=$((1024 * 1024 * 1024))
while (( card < size )); do card=$((card * 2)); done
truncate -s "$card" "$WORK/card.img"

# The FAT partition's offset, and from it the kernel, initramfs and device tree.
fat_start=$(parted -m -s "$WORK/card.img" unit B print | awk -F: '$1 == "1" {sub("B", "", $2); print $2}')
[[ -n $fat_start ]] || die "no FAT partition in $IMAGE"
FAT="$WORK/card.img@@$fat_start"
listing=$(MTOOLS_SKIP_CHECK=1 mdir -b -i "$FAT" ::/)
kernel=$(grep -o 'vmlinuz-[^ ]*' <<<"$listing" | sort -V | tail -1) || die "no kernel on the FAT partition"
initrd=$(grep -o 'initrd.img-[^ ]*' <<<"$listing" | sort -V | tail -1) || die "no initramfs on the FAT partition"
for f in "$kernel" "$initrd" bcm2837-rpi-3-b.dtb; do
    MTOOLS_SKIP_CHECK=1 mcopy -n -i "$FAT" "::/$f" "$WORK/$f"
done
# On a Pi the firmware writes the board revision into the device tree, and gpiozero reads it
# from there; QEMU has no such firmware. a02082: a Raspberry Pi 3 Model B.
fdtput -p -t x "$WORK/bcm2837-rpi-3-b.dtb" /system linux,revision a02082
# The firmware also applies config.txt's [pi3] dtoverlay=pwm,pin=18,func=2 (the piezo's
# hardware PWM): here fdtoverlay does, with the card's own overlay (pin 18, function 2 are its
# defaults; the [pi3] line is checked by card-check.sh).
MTOOLS_SKIP_CHECK=1 mcopy -n -i "$FAT" ::/overlays/pwm.dtbo "$WORK/pwm.dtbo" || die "no overlays/pwm.dtbo on the FAT partition"
fdtoverlay -i "$WORK/bcm2837-rpi-3-b.dtb" -o "$WORK/bcm2837-rpi-3-b.dtb" "$WORK/pwm.dtbo" \
    || die "overlays/pwm.dtbo does not apply to bcm2837-rpi-3-b.dtb"
# The check runs from the test's copy of the card (systemd.run=): the image has no test code.
MTOOLS_SKIP_CHECK=1 mcopy -o -i "$FAT" "$HERE/guest-check.sh" ::/image-test.sh
# A user's settings, written on the card as a user would: a hostname, an SSH key and the
# box's players (the check reads them back from the booted box).
MTOOLS_SKIP_CHECK=1 mcopy -n -i "$FAT" ::/pi-companion.toml "$WORK/pi-companion.toml"
grep -q '^# players = ' "$WORK/pi-companion.toml" || die "no players line to change in the card's pi-companion.toml"
sed -i 's/^# players = .*/players = ["Ann", "Bob", "Cy"]/' "$WORK/pi-companion.toml"
cat >"$WORK/pi-companion-setup.toml" <<'TOML'
hostname = "games-table"
[ssh]
authorized_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBq9l5oSBa2z1xzYQb2sH3Q7aW5mVq7xk0n2QeXvG4lM image-test"
TOML
MTOOLS_SKIP_CHECK=1 mcopy -o -i "$FAT" "$WORK/pi-companion.toml" "$WORK/pi-companion-setup.toml" ::/
# An update as a user drops it: the package and its .sha256 in the folder the card has.
deb_name=$(basename -- "$PACKAGE")
cp -- "$PACKAGE" "$WORK/$deb_name"
(cd "$WORK" && sha256sum -- "$deb_name" >"$deb_name.sha256")
MTOOLS_SKIP_CHECK=1 mcopy -o -i "$FAT" "$WORK/$deb_name" "$WORK/$deb_name.sha256" ::/pi-companion-update/ \
    || die "no pi-companion-update/ folder on the card's FAT partition"

say "booting $kernel under qemu-system-aarch64 -M raspi3b (timeout $TIMEOUT s)"
LOG=$WORK/console.log
: >"$LOG"
start=$(date +%s)
# QEMU's first serial port is the PL011 (ttyAMA0), its second the mini UART (ttyS1, the
# header's serial console on a Pi 3, the image's console=). The kernel writes to both; the
# check's lines go to /dev/console, the last console= (ttyAMA0). systemd.run= makes its own
# default target, which pulls in only the check: systemd.wants= brings back the normal boot
# (multi-user.target, where the box's units are). systemd.default_timeout_start_sec: QEMU's
# raspi3b runs about 20x slower than a Pi Zero 2 W here (the daemon's start, ~5 s on a Zero by
# docs/performance.md, took over the default 90 s and systemd restarted it once); the units
# themselves set no start timeout, so a real card keeps systemd's default.
# systemd.default_device_timeout_sec likewise: on a loaded host udev named the FAT partition
# (/dev/disk/by-label/RASPIFIRM) after systemd's 90 s and the boot fell into emergency mode.
qemu-system-aarch64 -M raspi3b -m 1G \
    -kernel "$WORK/$kernel" -initrd "$WORK/$initrd" -dtb "$WORK/bcm2837-rpi-3-b.dtb" \
    -append "console=ttyS1,115200 console=ttyAMA0,115200 root=LABEL=RASPIROOT rootwait rw systemd.show_status=1 systemd.default_timeout_start_sec=900 systemd.default_device_timeout_sec=900 systemd.wants=multi-user.target systemd.run=\"/bin/sh /boot/firmware/image-test.sh\" systemd.run_success_action=none" \
    -drive "file=$WORK/card.img,if=sd,format=raw" \
    -serial "file:$LOG" -serial "file:$WORK/ttyS1.log" -display none -monitor none -no-reboot &
QEMU_PID=$!
while ! grep -q '^IMAGE-TEST: DONE' "$LOG"; do
    kill -0 "$QEMU_PID" 2>/dev/null || die "QEMU ended before the check finished (console: $LOG)"
    (( $(date +%s) - start < TIMEOUT )) || die "no result within $TIMEOUT s (console: $LOG)"
    sleep 5
done
took=$(( $(date +%s) - start ))
kill "$QEMU_PID" && wait "$QEMU_PID" 2>/dev/null || true
QEMU_PID=
tr -d '\r' <"$LOG" >"$LOG.txt"
grep '^IMAGE-TEST:' "$LOG.txt" >&2 || true

fail=0
check() { if grep -qE "$1" "$LOG.txt"; then say "ok: $2"; else say "FAIL: $2"; fail=1; fi; }
refuse() { if grep -qE "$1" "$LOG.txt"; then say "FAIL: $2"; fail=1; else say "ok: $2"; fi; }
check '^IMAGE-TEST: pi-companion.service active/running' "the daemon reached READY (Type=notify: active only after READY=1)"
check '^IMAGE-TEST: web ok' "the big screen answered on port 8080"
check '^IMAGE-TEST: gpiochip: crw-rw---- root gpio' "/dev/gpiochip0 belongs to the gpio group (the image's udev rule)"
# The pin map's 16 lines but GPIO18, which the PWM block drives (the piezo's tones): the udev
# rule gave the service pwm0's files. A daemon that fell back to the software PWM holds 16.
check '^IMAGE-TEST: daemon\| .*GPIO18: tones from the hardware PWM pwmchip0/pwm0$' "the daemon plays its tones on the hardware PWM (pwmchip0/pwm0, given to it by the udev rule)"
check '^IMAGE-TEST: gpio lines requested: 15$' "the daemon holds the pin map's other 15 GPIO lines"
check '^IMAGE-TEST: snapshot .*"Ann".*"Bob".*"Cy"' "the live game has the card's players (pi-companion.toml on the FAT partition)"
check '^IMAGE-TEST: pwm: pwmchip0 npwm 2 device [0-9a-f]*20c000\.pwm driver bcm2835-pwm$' "the PWM overlay's PWM block is driven (pwm-bcm2835, /sys/class/pwm/pwmchip0)"
check '^IMAGE-TEST: pinmux: pin 18 \(gpio18\): (device )?[0-9a-f]*20c000\.pwm' "GPIO18 is muxed to the PWM block"
check '^IMAGE-TEST: hostname games-table$' "the hostname from the card's pi-companion-setup.toml"
check '^IMAGE-TEST: ssh active key image-test$' "SSH on, with the card's key only"
once=$(grep -c '^IMAGE-TEST: daemon| .*display unavailable' "$LOG.txt" || true)
if (( once == 1 )); then say "ok: the missing OLED is said once"; else say "FAIL: the missing OLED is said $once times"; fail=1; fi
v=${PACKAGE_VERSION//./\\.}
check "^IMAGE-TEST: package $v installed unit /usr/lib/systemd/system/pi-companion.service update-unit enabled\$" \
    "the box is its package's ($PACKAGE_VERSION, dpkg: installed; the package's units, the update unit enabled)"
check "^IMAGE-TEST: update\| .*update refused: $v is not newer than $v" "the update unit ran at boot and refused the same version"
check "^IMAGE-TEST: update folder: / done: ${deb_name//./\\.} ${deb_name//./\\.}\.sha256 \$" "the package and its .sha256 moved to done/"
check "^IMAGE-TEST: daemon\| .*update refused: $v is not newer than $v" "the daemon, started after the update unit, said its result"
# The refused update's unit failed (exit 1), as it should: the only failure allowed.
if grep -E '^IMAGE-TEST: err\|.*pi[-_]companion' "$LOG.txt" | grep -qv 'pi-companion-update'; then
    say "FAIL: no error from pi-companion in the journal (but the refused update's)"; fail=1
else
    say "ok: no error from pi-companion in the journal (but the refused update's)"
fi
check '^IMAGE-TEST: pi-companion.service active/running .*\(restarts: 0\)' "the daemon started once (no restart)"
if grep -E '^IMAGE-TEST: failed units: ' "$LOG.txt" | sed 's/pi-companion-update\.service//' | grep -q 'pi-companion'; then
    say "FAIL: no failed pi-companion unit (but the refused update)"; fail=1
else
    say "ok: no failed pi-companion unit (but the refused update)"
fi
say "boot and checks took $took s; console log: $LOG.txt"
(( fail == 0 )) || die "see above"
say "PASS"
