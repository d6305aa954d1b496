#!/usr/bin/env bash
# make image-test, first step, no boot: reads the card file by file for what only a real board
# would use. No emulator boots a Pi 5, a Pi 4 or a Zero 2 W (QEMU's raspi3b is the only one
# `make image-test` boots), so their boot files are checked here instead:
#
#   - the FAT partition: the kernel and initramfs that config.txt names, each board's device
#     trees (the Pi 5's both steppings), the firmware for the Zero 2 W/3 and the 4, and the
#     box's PWM overlay;
#   - config.txt: a section per board ([pi02] [pi3] [pi4] [pi5]), the piezo's PWM overlay in
#     each but the Pi 5's (RP1's PWM has no driver), every file it names present;
#   - the device trees: the Pi 5's is a Pi 5's and its SD controller is one the initramfs can
#     drive; the PWM overlay applies to the Zero 2 W's, 3's and 4's trees (fdtoverlay) and
#     gives GPIO18 to the PWM block;
#   - the initramfs, read archive by archive: the SD, pin, GPIO and RP1 modules of every board;
#   - the root file system (debugfs): the same kernel's modules, the PWM driver, the
#     kernel's backports pin, a Python 3.13 venv without lgpio, no compiler, and the box
#     installed by its Debian package (dpkg's status), with the update folder on the FAT.
#
#   tests/image/card-check.sh build/image/pi-companion-VERSION-arm64.img[.xz]
#
# Each finding is one line, "ok: ..." or "FAIL: ..."; the exit status is 1 if any failed.
# Environment: IMAGE_TEST_WORK (scratch directory, default /var/tmp/pi-companion-card-check).
set -euo pipefail
say() { printf 'card-check: %s\n' "$*" >&2; }
die() { printf 'card-check: FAIL: %s\n' "$*" >&2; exit 1; }

[[ $# -eq 1 ]] || die "usage: card-check.sh IMAGE.img[.xz]"
IMAGE=$1
WORK=${IMAGE_TEST_WORK:-/var/tmp/pi-companion-card-check}
PATH=$PATH:/usr/sbin:/sbin
for tool in mcopy mdir parted debugfs fdtget fdtoverlay zstd xz python3; do
    command -v "$tool" >/dev/null \
        || die "$tool is missing: apt install mtools parted e2fsprogs device-tree-compiler cpio zstd xz-utils"
done
rm -rf "$WORK" && mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT

RAW=${IMAGE%.xz}
if [[ $IMAGE != *.xz ]]; then
    [[ -f $IMAGE ]] || die "no image $IMAGE"
    CARD=$IMAGE
elif [[ -f $RAW && ( ! -f $IMAGE || $RAW -nt $IMAGE ) ]]; then
    CARD=$RAW
else
    [[ -f $IMAGE ]] || die "no image $IMAGE (make image first)"
    xz -dc "$IMAGE" | cp --sparse=always /dev/stdin "$WORK/card.img"
    CARD=$WORK/card.img
fi

fail=0
ok() { say "ok: $*"; }
bad() { say "FAIL: $*"; fail=1; }
claim() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# --- the partitions ----------------------------------------------------------------------
offsets=$( (parted -m -s "$CARD" unit B print 2>/dev/null || true) \
    | awk -F: '$1 ~ /^[0-9]+$/ {sub("B", "", $2); print $1, $2}')
fat_start=$(awk '$1 == 1 {print $2}' <<<"$offsets")
root_start=$(awk '$1 == 2 {print $2}' <<<"$offsets")
[[ -n $fat_start && -n $root_start ]] || die "$CARD has no FAT and root partition (parted sees: ${offsets:-nothing})"
FAT="$CARD@@$fat_start"
ROOTFS="$CARD?offset=$root_start"
fat_ls() { MTOOLS_SKIP_CHECK=1 mdir -b -i "$FAT" "::/$1" 2>/dev/null | sed "s|^::/${1:+$1/}||"; }
fat_get() { MTOOLS_SKIP_CHECK=1 mcopy -n -i "$FAT" "::/$1" "$2" 2>/dev/null; }
root_has() { ! debugfs -R "stat \"$1\"" "$ROOTFS" 2>&1 | grep -q 'File not found'; }
root_ls() { debugfs -R "ls -p \"$1\"" "$ROOTFS" 2>/dev/null | awk -F/ 'NF > 5 && $6 != "." && $6 != ".." {print $6}'; }

listing=$(fat_ls "")
on_fat() { grep -qxF "$1" <<<"$listing"; }

# --- config.txt: global lines, then one section per board ---------------------------------
fat_get config.txt "$WORK/config.txt" || die "no config.txt on the FAT partition"
tr -d '\r' <"$WORK/config.txt" | sed 's/[[:space:]]*#.*//; /^[[:space:]]*$/d' >"$WORK/config.lines"
# section NAME: the lines under [NAME] up to the next section; "" for those before any.
section() { awk -v want="$1" '/^\[/ {cur = substr($0, 2, length($0) - 2); next} cur == want' "$WORK/config.lines"; }
global=$(section "")
kernel=$(sed -n 's/^kernel=//p' <<<"$global" | tail -1)
initrd=$(sed -n 's/^initramfs[[:space:]]\+\([^[:space:]]*\).*/\1/p' <<<"$global" | tail -1)
claim "config.txt: arm_64bit=1 and upstream_kernel=1 for every board" \
    eval 'grep -qx "arm_64bit=1" <<<"$global" && grep -qx "upstream_kernel=1" <<<"$global"'
claim "config.txt: kernel=${kernel:-(none)} is on the FAT partition" eval '[[ -n $kernel ]] && on_fat "$kernel"'
claim "config.txt: initramfs ${initrd:-(none)} is on the FAT partition" eval '[[ -n $initrd ]] && on_fat "$initrd"'
PWM_LINE="dtoverlay=pwm,pin=18,func=2"
for board in pi02 pi3 pi4 pi5; do
    if ! grep -qx "\[$board\]" "$WORK/config.lines"; then bad "config.txt: no [$board] section"; continue; fi
    lines=$(section "$board")
    if grep -q '^kernel=\|^initramfs' <<<"$lines"; then
        bad "config.txt: [$board] names its own kernel or initramfs (every board shares one)"
    fi
    tree=$(sed -n 's/^device_tree=//p' <<<"$lines" | tail -1)
    if [[ -n $tree ]] && ! on_fat "$tree"; then bad "config.txt: [$board] device_tree=$tree is not on the FAT partition"; fi
    if [[ $board == pi5 ]]; then
        claim "config.txt: [pi5] without the PWM overlay (RP1's PWM has no driver)" eval '! grep -q "^dtoverlay=pwm" <<<"$lines"'
    else
        claim "config.txt: [$board] $PWM_LINE" grep -qxF "$PWM_LINE" <<<"$lines"
    fi
done
claim "config.txt: [pi02] device_tree=bcm2837-rpi-zero-2-w.dtb" grep -qx 'device_tree=bcm2837-rpi-zero-2-w.dtb' <<<"$(section pi02)"

# --- the FAT partition's boot files ---------------------------------------------------------
for f in bootcode.bin start.elf fixup.dat start4.elf fixup4.dat cmdline.txt overlays/pwm.dtbo \
         bcm2837-rpi-zero-2-w.dtb bcm2837-rpi-3-b.dtb bcm2837-rpi-3-b-plus.dtb bcm2837-rpi-3-a-plus.dtb \
         bcm2711-rpi-4-b.dtb bcm2711-rpi-400.dtb bcm2712-rpi-5-b.dtb bcm2712-d-rpi-5-b.dtb; do
    if [[ $f == */* ]]; then
        claim "FAT: $f" eval 'fat_ls "${f%/*}" | grep -qxF "${f##*/}"'
    else
        claim "FAT: $f" on_fat "$f"
    fi
done

# --- the device trees -------------------------------------------------------------------------
mkdir -p "$WORK/dtb"
for f in bcm2837-rpi-zero-2-w bcm2837-rpi-3-b bcm2711-rpi-4-b bcm2712-rpi-5-b bcm2712-d-rpi-5-b; do
    fat_get "$f.dtb" "$WORK/dtb/$f.dtb" || true
done
fat_get overlays/pwm.dtbo "$WORK/dtb/pwm.dtbo" || true
pi5_sd=
for f in bcm2712-rpi-5-b bcm2712-d-rpi-5-b; do
    dtb=$WORK/dtb/$f.dtb
    [[ -f $dtb ]] || continue
    claim "$f.dtb is a Raspberry Pi 5's tree" eval 'fdtget "$dtb" / compatible | grep -qw "raspberrypi,5-model-b"'
    # The SD slot is the SoC's own SDHCI (mmc@fff000 on its soc bus): its compatible strings,
    # for the initramfs check below.
    sd=/$(fdtget -l "$dtb" / | grep -m1 '^soc@')/mmc@fff000
    compat=$(fdtget "$dtb" "$sd" compatible 2>/dev/null || true)
    if [[ -n $compat ]]; then ok "$f.dtb: the SD slot ($sd) is $compat"; pi5_sd+=" $compat"
    else bad "$f.dtb: no SD slot at $sd"; fi
done
if [[ -f $WORK/dtb/pwm.dtbo ]]; then
    for f in bcm2837-rpi-zero-2-w bcm2837-rpi-3-b bcm2711-rpi-4-b; do
        dtb=$WORK/dtb/$f.dtb
        [[ -f $dtb ]] || continue
        # The firmware applies the overlay with pin=18,func=2, which are also its defaults.
        if ! fdtoverlay -i "$dtb" -o "$WORK/dtb/$f-pwm.dtb" "$WORK/dtb/pwm.dtbo" 2>"$WORK/dtb/err"; then
            bad "overlays/pwm.dtbo does not apply to $f.dtb: $(head -1 "$WORK/dtb/err")"; continue
        fi
        out=$WORK/dtb/$f-pwm.dtb
        pin=$(fdtget "$out" /soc/pwm@7e20c000 pinctrl-0 2>/dev/null || true)
        group=$(fdtget "$out" /__symbols__ pi_companion_pwm_pin 2>/dev/null || true)
        claim "overlays/pwm.dtbo on $f.dtb: the PWM block on, GPIO18 in function 2 (ALT5, PWM0)" eval '
            [[ $(fdtget "$out" /soc/pwm@7e20c000 status) == okay ]] && [[ -n $group && -n $pin ]] &&
            [[ $(fdtget "$out" "$group" phandle) == "$pin" ]] &&
            [[ $(fdtget "$out" "$group" brcm,pins) == 18 && $(fdtget "$out" "$group" brcm,function) == 2 ]]'
    done
fi

# --- the initramfs: unpacked, its modules listed ---------------------------------------------
version=${kernel#vmlinuz-}
mods=
# An initramfs may be several cpio archives one after the other (an uncompressed early one,
# then the compressed main one), as initramfs-tools writes them: each is read to its trailer.
list_initramfs() {
    python3 - "$1" "$2" <<'PY'
import subprocess, sys
data, out = open(sys.argv[1], "rb").read(), sys.argv[2]
MAGICS = {b"\x28\xb5\x2f\xfd": ["zstd", "-dcq"], b"\x1f\x8b": ["gzip", "-dc"], b"\xfd7zXZ": ["xz", "-dc"]}
names = []
while data:
    data = data.lstrip(b"\0")
    if not data:
        break
    if not data.startswith(b"0707"):
        tool = next((t for m, t in MAGICS.items() if data.startswith(m)), None)
        if tool is None:
            sys.exit("neither a cpio archive nor a zstd, gzip or xz one")
        data = subprocess.run(tool, input=data, capture_output=True, check=True).stdout
        continue
    pos = 0
    while True:
        head = data[pos:pos + 110]
        if not head.startswith(b"07070"):
            sys.exit("a cpio header is broken")
        size, namesize = int(head[54:62], 16), int(head[94:102], 16)
        name = data[pos + 110:pos + 110 + namesize - 1].decode()
        body = (pos + 110 + namesize + 3) & ~3
        if name == "TRAILER!!!":
            data = data[(body + size + 3) & ~3:]
            break
        names.append(name)
        if name.endswith("/modules.alias"):
            open(out, "wb").write(data[body:body + size])
        pos = (body + size + 3) & ~3
print("\n".join(names))
PY
}
if [[ -n $initrd ]] && fat_get "$initrd" "$WORK/initrd"; then
    if names=$(list_initramfs "$WORK/initrd" "$WORK/modules.alias" 2>"$WORK/initrd.err"); then
        mods=$(grep '\.ko' <<<"$names" | sed 's|.*/||; s/\.ko.*//; s/-/_/g' | sort -u)
        ok "initramfs $initrd unpacked: $(grep -c . <<<"$mods") modules"
        claim "initramfs: the modules are the kernel's ($version)" grep -q "lib/modules/$version/kernel/" <<<"$names"
    else
        bad "initramfs $initrd: cannot unpack it: $(tail -1 "$WORK/initrd.err")"
    fi
else
    bad "initramfs: cannot read ${initrd:-(none named)} from the FAT partition"
fi
need_module() { grep -qx "${1//-/_}" <<<"$mods"; }
for m in sdhci-brcmstb pinctrl-brcmstb-bcm2712 gpio-brcmstb irq-bcm2712-mip rp1_pci clk-rp1 pinctrl-rp1; do
    claim "initramfs: $m (Pi 5)" need_module "$m"
done
for m in sdhci-iproc bcm2835 fixed gpio-regulator ext4; do
    claim "initramfs: $m (Zero 2 W, 3, 4; ext4)" need_module "$m"
done
# The Pi 5's SD slot, by its device tree's compatible strings: a module in the initramfs must
# claim one of them (modules.alias), or the kernel waits for the root file system forever.
alias_file=$( [[ -s $WORK/modules.alias ]] && echo "$WORK/modules.alias" || true)
claims_sd() {
    local c
    [[ -n $alias_file ]] || return 1
    for c in $pi5_sd; do grep -q "^alias of:N\*T\*C${c}[C*]" "$alias_file" && return 0; done
    return 1
}
if [[ -n $pi5_sd ]]; then
    claim "initramfs: a module claims the Pi 5's SD slot ($(tr ' ' '\n' <<<"$pi5_sd" | sort -u | xargs))" claims_sd
fi

# --- the root file system ----------------------------------------------------------------------
moddir=/usr/lib/modules/$version/kernel/drivers
claim "root: kernel $version's modules, with pwm-bcm2835 (the piezo's PWM)" root_has "$moddir/pwm/pwm-bcm2835.ko.xz"
claim "root: sdhci-brcmstb beside them (the Pi 5's SD card)" root_has "$moddir/mmc/host/sdhci-brcmstb.ko.xz"
claim "root: the kernel pinned to trixie-backports" root_has /etc/apt/preferences.d/pi-companion-kernel.pref
venv_lib=$(root_ls /opt/pi-companion/venv/lib | tr '\n' ' ')
claim "root: the venv runs Python 3.13 (lib: ${venv_lib:-none})" eval '[[ $venv_lib == "python3.13 " ]]'
site=$(root_ls /opt/pi-companion/venv/lib/python3.13/site-packages)
claim "root: the venv holds pi_companion and no lgpio" eval 'grep -q "^pi_companion" <<<"$site" && ! grep -qi "^lgpio" <<<"$site"'
claim "root: no C compiler on the card" eval '! root_has /usr/bin/gcc && ! root_has /usr/bin/cc'
# The box came from its package (so an update by card replaces it, and dpkg owns every file).
package=$(debugfs -R "cat /var/lib/dpkg/status" "$ROOTFS" 2>/dev/null \
    | awk -v RS= '/(^|\n)Package: pi-companion\n/ {print}')
package_version=$(sed -n 's/^Version: //p' <<<"$package")
claim "root: pi-companion ${package_version:-(none)} installed by its package (dpkg: install ok installed)" \
    eval 'grep -qx "Status: install ok installed" <<<"$package"'
claim "root: no systemd/install.sh copy of the units in /etc/systemd/system" \
    eval '! root_has /etc/systemd/system/pi-companion.service'
claim "FAT: pi-companion-update/, the folder an update by card goes into" eval 'on_fat pi-companion-update/'

(( fail == 0 )) || die "see above"
say "PASS"
