#!/usr/bin/env bash
# make image-test, second boot: the box's own Wi-Fi hotspot ("no router needed"). Boots the
# SD-card image under qemu-system-aarch64 -M virt (Debian's kernel and initramfs from the card's
# FAT partition, the card as a virtio disk, no network card) with three simulated radios
# (mac80211_hwsim, loaded by the check): the box's, a phone's in a network namespace of its own,
# and a home network's in another. With its known Wi-Fi (the card's [wifi] network) out of reach the box must open its
# hotspot by itself; the phone joins it with the card's password (a wrong one is refused), gets
# an address by DHCP, finds NAME.local by mDNS and loads the big screen's page and live snapshot
# (tests/image/phone.py). Then a third radio, in a namespace of its own, becomes the known
# network's access point; at the box's next network start it must join that, not the hotspot.
# The check in the guest is tests/image/hotspot-guest.sh; this script requires its claims.
#
#   tests/image/hotspot-test.sh build/image/pi-companion-VERSION-arm64.img.xz
#
# The uncompressed .img beside it (make image KEEP_RAW=1) is used when it is the newer.
#
# Environment: IMAGE_TEST_TIMEOUT (s, default 1800), IMAGE_TEST_WORK (scratch directory,
# default /var/tmp/pi-companion-hotspot-test).
set -euo pipefail
say() { printf 'hotspot-test: %s\n' "$*" >&2; }
die() { printf 'hotspot-test: FAIL: %s\n' "$*" >&2; exit 1; }

[[ $# -eq 1 ]] || die "usage: hotspot-test.sh IMAGE.img.xz"
IMAGE=$1
HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
TIMEOUT=${IMAGE_TEST_TIMEOUT:-1800}
WORK=${IMAGE_TEST_WORK:-/var/tmp/pi-companion-hotspot-test}
for tool in qemu-system-aarch64 mcopy parted xz; do
    command -v "$tool" >/dev/null \
        || die "$tool is missing: apt install qemu-system-arm mtools parted xz-utils"
done
[[ -f $IMAGE || -f ${IMAGE%.xz} ]] || die "no image $IMAGE (make image first)"
rm -rf "$WORK" && mkdir -p "$WORK"
QEMU_PID=
cleanup() { [[ -z $QEMU_PID ]] || kill "$QEMU_PID" 2>/dev/null || true; rm -f "$WORK/card.img"; }
trap cleanup EXIT

# The card: a copy (the image stays as built), grown as a card is bigger than the image; the
# root partition grows into it at first start, as on a real card.
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

# The FAT partition's offset, and from it the kernel and initramfs (-M virt makes its own
# device tree).
fat_start=$(parted -m -s "$WORK/card.img" unit B print | awk -F: '$1 == "1" {sub("B", "", $2); print $2}')
[[ -n $fat_start ]] || die "no FAT partition in $IMAGE"
FAT="$WORK/card.img@@$fat_start"
listing=$(MTOOLS_SKIP_CHECK=1 mdir -b -i "$FAT" ::/)
kernel=$(grep -o 'vmlinuz-[^ ]*' <<<"$listing" | sort -V | tail -1) || die "no kernel on the FAT partition"
initrd=$(grep -o 'initrd.img-[^ ]*' <<<"$listing" | sort -V | tail -1) || die "no initramfs on the FAT partition"
for f in "$kernel" "$initrd"; do
    MTOOLS_SKIP_CHECK=1 mcopy -n -i "$FAT" "::/$f" "$WORK/$f"
done
# The check and its phone run from the test's copy of the card: the image has no test code.
MTOOLS_SKIP_CHECK=1 mcopy -o -i "$FAT" "$HERE/hotspot-guest.sh" ::/hotspot-test.sh
MTOOLS_SKIP_CHECK=1 mcopy -o -i "$FAT" "$HERE/phone.py" ::/phone.py
# A user's settings, written on the card as a user would: a hostname, the Wi-Fi country, a home
# network to join (not in reach until the check's last phase starts its access point), the
# hotspot's name and password, and the box's players (read back through the phone).
MTOOLS_SKIP_CHECK=1 mcopy -n -i "$FAT" ::/pi-companion.toml "$WORK/pi-companion.toml"
grep -q '^# players = ' "$WORK/pi-companion.toml" || die "no players line to change in the card's pi-companion.toml"
sed -i 's/^# players = .*/players = ["Ann", "Bob", "Cy"]/' "$WORK/pi-companion.toml"
cat >"$WORK/pi-companion-setup.toml" <<'TOML'
hostname = "games-table"
[wifi]
country = "GB"
ssid = "home-net"
password = "home-password-1"
[hotspot]
ssid = "games-table"
password = "tabletop-2026"
TOML
MTOOLS_SKIP_CHECK=1 mcopy -o -i "$FAT" "$WORK/pi-companion.toml" "$WORK/pi-companion-setup.toml" ::/

say "booting $kernel under qemu-system-aarch64 -M virt (timeout $TIMEOUT s)"
LOG=$WORK/console.log
: >"$LOG"
start=$(date +%s)
# -M virt's serial port is a PL011 (ttyAMA0): the kernel, systemd and the check all write
# there. systemd.run= makes its own default target, which pulls in only the check:
# systemd.wants= brings back the normal boot (multi-user.target, where the box's units are).
# systemd.default_timeout_start_sec: TCG runs many times slower than a Pi (see boot-test.sh).
# The console is the test's: no login prompt on it (systemd.mask=), which would run into the
# check's lines. -nic none: no wired network, the radios are the only way in. virtio-rng: the WPA2 handshake
# and avahi need randomness early.
qemu-system-aarch64 -M virt -cpu cortex-a53 -smp 2 -m 1G \
    -kernel "$WORK/$kernel" -initrd "$WORK/$initrd" \
    -append "console=ttyAMA0,115200 root=LABEL=RASPIROOT rootwait rw systemd.show_status=1 systemd.default_timeout_start_sec=900 systemd.default_device_timeout_sec=900 systemd.wants=multi-user.target systemd.run=\"/bin/sh /boot/firmware/hotspot-test.sh\" systemd.run_success_action=none systemd.mask=serial-getty@ttyAMA0.service" \
    -drive "file=$WORK/card.img,if=none,format=raw,id=card" -device virtio-blk-pci,drive=card \
    -device virtio-rng-pci -nic none \
    -serial "file:$LOG" -display none -monitor none -no-reboot &
QEMU_PID=$!
while ! grep -q '^HOTSPOT-TEST: DONE' "$LOG"; do
    kill -0 "$QEMU_PID" 2>/dev/null || die "QEMU ended before the check finished (console: $LOG)"
    (( $(date +%s) - start < TIMEOUT )) || die "no result within $TIMEOUT s (console: $LOG)"
    sleep 5
done
took=$(( $(date +%s) - start ))
kill "$QEMU_PID" && wait "$QEMU_PID" 2>/dev/null || true
QEMU_PID=
tr -d '\r' <"$LOG" >"$LOG.txt"
grep '^HOTSPOT-TEST:' "$LOG.txt" | grep -vE '^HOTSPOT-TEST: (daemon|nm|setup|scan)\| ' >&2 || true

fail=0
ok() { say "ok: $1"; }
bad() { say "FAIL: $1"; fail=1; }
check() { if grep -qE "$1" "$LOG.txt"; then ok "$2"; else bad "$2"; fi; }
refuse() { if grep -qE "$1" "$LOG.txt"; then bad "$2"; else ok "$2"; fi; }
# The test's own set-up: -M virt has no Pi GPIO (the raspi3b boot proves the lines).
check '^HOTSPOT-TEST: daemon active/running on mock pins .*\(1 mock factory\)' "the daemon runs on gpiozero's mock pins (-M virt has no Pi GPIO)"
check '^HOTSPOT-TEST: radios: box phy[0-9]+ [^ ]+ 02:00:00:00:00:00, phone phy[0-9]+ [^ ]+ 02:00:00:00:01:00$' "two hwsim radios: the box's (02:00:00:00:00:00) and the phone's (02:00:00:00:01:00)"
check '^HOTSPOT-TEST: phone radio in NetworkManager: 10 \(unmanaged\)$' "the phone's radio is not the box's NetworkManager's (unmanaged before it moved)"
check '^HOTSPOT-TEST: phone namespace: .* \(0 left outside\)$' "the phone's radio is in its own network namespace"
# The box's side.
check '^HOTSPOT-TEST: hotspot activated on ([^ ]+) \(box radio \1\)' "the box opened its hotspot (pi-companion-hotspot) by itself, on its radio"
check '^HOTSPOT-TEST: hotspot auto-activations [1-9][0-9]*, activation requests 0$' "NetworkManager's autoconnect opened it: no activation was requested (nmcli con up, D-Bus)"
profile=$(sed -n 's/^HOTSPOT-TEST: profile: //p' "$LOG.txt")
for want in connection.autoconnect:yes 802-11-wireless.ssid:games-table 802-11-wireless.mode:ap \
        802-11-wireless.band:bg 802-11-wireless.channel:6 802-11-wireless-security.key-mgmt:wpa-psk ipv4.method:shared; do
    if [[ " $profile " == *" $want "* ]]; then ok "the hotspot profile has $want"; else bad "the hotspot profile has $want (it says: ${profile:-nothing})"; fi
done
priority=$(grep -oE 'connection.autoconnect-priority:-?[0-9]+' <<<"$profile" | head -1 | cut -d: -f2 || true)
if [[ -n $priority ]] && (( priority < 10 )); then ok "the hotspot's autoconnect priority ($priority) is below a known network's (10)"
else bad "the hotspot's autoconnect priority (${priority:-none}) is below a known network's (10)"; fi
check '^HOTSPOT-TEST: box radio: .*ssid games-table .*type AP .*channel 6 \(2437 MHz\)' "the box's radio is an access point, SSID games-table, channel 6"
check '^HOTSPOT-TEST: box address: 10\.42\.0\.1/24$' "the box is 10.42.0.1/24 on its hotspot (NetworkManager's shared mode)"
check '^HOTSPOT-TEST: daemon line: .*hotspot on: Wi-Fi "games-table"' "the daemon says the hotspot is on (the OLED's Wi-Fi QR)"
# The phone's side.
check '^HOTSPOT-TEST: beacon ssid games-table freq 2437(\.0)? privacy yes rsn yes wpa1 no pairwise CCMP akm (.* )?PSK( .*)?$' "the phone sees the hotspot as WPA2 (RSN, CCMP, PSK among its key suites; no WPA1, not open)"
check '^HOTSPOT-TEST: wrong password: state [A-Z_0-9]*, [1-9][0-9]* WRONG_KEY' "a wrong password is refused (4-way handshake: WRONG_KEY)"
refuse '^HOTSPOT-TEST: wrong password: state COMPLETED' "a phone with a wrong password does not get in"
check '^HOTSPOT-TEST: phone joined: state COMPLETED .*ssid=games-table .*key_mgmt=WPA2-PSK pairwise_cipher=CCMP' "the phone joins with the card's password (WPA2-PSK, CCMP)"
check '^HOTSPOT-TEST: lease 10\.42\.0\.[0-9]+/24 server 10\.42\.0\.1 ' "the phone gets an address from the box by DHCP"
check '^HOTSPOT-TEST: mdns games-table\.local is 10\.42\.0\.1 ' "the phone finds games-table.local by mDNS (avahi on the box)"
check '^HOTSPOT-TEST: page 200 text/html.* html [1-9]' "the phone loads the big screen's page (http://games-table.local:8080/)"
check '^HOTSPOT-TEST: snapshot 200 application/json' "the phone fetches the live snapshot (/api/snapshot)"
check '^HOTSPOT-TEST: snapshot body .*"Ann".*"Bob".*"Cy"' "the snapshot has the card's players (pi-companion.toml on the FAT partition)"
check '^HOTSPOT-TEST: daemon at end active/running' "the daemon is still running at the end"
# A known network in reach at the next start (the third radio, in namespace "home").
check '^HOTSPOT-TEST: home radio: phy[0-9]+ [^ ]+ 02:00:00:00:02:00, in NetworkManager: 10 \(unmanaged\)$' "a third hwsim radio (02:00:00:00:02:00), not the box's NetworkManager's"
check '^HOTSPOT-TEST: home namespace: .* \(0 left outside\)$' "the third radio is in its own network namespace (home)"
check '^HOTSPOT-TEST: home AP: state COMPLETED, .*ssid home-net .*type AP' "after the phone's checks, home-net is up as an access point on the third radio (the image's wpa_supplicant, mode=2)"
check '^HOTSPOT-TEST: known network: pi-companion-wifi activated on ([^ ]+) \(box radio \1\)' "at the next network start NetworkManager joins home-net (pi-companion-wifi activated on the box's radio)"
refuse '^HOTSPOT-TEST: known network: .*; hotspot activat' "the hotspot is not open beside it"
check '^HOTSPOT-TEST: known auto-activations [1-9][0-9]*, activation requests 0$' "NetworkManager's autoconnect chose it: no activation was requested"
check '^HOTSPOT-TEST: box radio now: .*type managed' "the box's radio is a client now (managed mode, not AP)"
check '^HOTSPOT-TEST: box link now: connected to [0-9a-f:]{17} ssid home-net ' "the box's radio is associated to home-net (iw link)"
check '^HOTSPOT-TEST: home AP stations: [0-9a-f:]{17}' "the home access point has the box as its station"
check '^HOTSPOT-TEST: box address on home-net: 192\.168\.77\.[0-9]+/24 ' "the box gets an address on home-net by DHCP"
check '^HOTSPOT-TEST: daemon after networking off: hotspot off .*hotspot file absent$' "the daemon says hotspot off (the dispatcher removed hotspot.json)"
refuse '^HOTSPOT-TEST: failed units: .*pi-companion' "no failed pi-companion unit"
refuse '^HOTSPOT-TEST: err since mock\| .*pi[-_]companion' "no error from pi-companion in the journal once on mock pins"

# Times: the host's wall clock for the whole boot, the guest's uptime for its phases.
field() { sed -nE "s/^HOTSPOT-TEST: $1.*/\\1/p" "$LOG.txt" | head -1; }
say "times: kernel to the check $(field 'boot reached ([0-9.]+) s') s; multi-user.target at $(field 'multi-user.target reached at ([0-9.]+) s') s;" \
    "daemon READY on mock pins at $(field 'daemon [^ ]+ on mock pins at ([0-9.]+) s') s;" \
    "hotspot up $(field 'hotspot .* after ([0-9.]+) s') s after the radios;" \
    "phone joined in $(field 'phone joined: state [A-Z]+ in ([0-9.]+) s') s; lease in $(field 'lease .* in ([0-9.]+) s$') s;" \
    "name in $(field 'mdns .* in ([0-9.]+) s$') s; page in $(field 'page .* in ([0-9.]+) s$') s;" \
    "home-net joined $(field 'known network: .* after ([0-9.]+) s;') s after networking on;" \
    "its address $(field 'box address on home-net: .* \(([0-9.]+) s after') s after;" \
    "check done at $(field 'DONE at ([0-9.]+) s') s (guest uptime)"
say "boot and checks took $took s (wall); console log: $LOG.txt"
(( fail == 0 )) || die "see above"
say "PASS"
