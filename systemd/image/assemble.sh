#!/usr/bin/env bash
# Second half of systemd/image/build.sh: the root tree ($1) -> a partitioned SD-card image,
# compressed ($2, .img.xz). No loop devices and no mounts: each file system is made in a file
# of its own (mkfs.vfat -C + mcopy, mke2fs -d) and copied into place with dd.
#
#   partition 1  FAT32  RASPIFIRM  /boot/firmware  (the Pi's firmware, kernel, settings)
#   partition 2  ext4   RASPIROOT  /               (grown to the card at first start)
set -euo pipefail
ROOT=$1
OUTPUT=$2
WORK=$(dirname -- "$ROOT")
say() { printf 'image: %s\n' "$*" >&2; }
: "${SOURCE_DATE_EPOCH:?}"
start=$(date +%s)

MIB=$((1024 * 1024))
FAT_START=4          # MiB, as Debian's raspi images
FAT_SIZE=252         # MiB: two kernels and initramfs images fit while one is upgraded
ROOT_START=$((FAT_START + FAT_SIZE))

# Every file gets the same time stamp (files made by the hooks would carry the build's time).
find "$ROOT" -newermt "@$SOURCE_DATE_EPOCH" -print0 | xargs -0r touch --no-dereference --date="@$SOURCE_DATE_EPOCH"

# The FAT partition: the firmware tree moves out of the root tree (its mount point stays).
say "FAT partition (RASPIFIRM, $FAT_SIZE MiB)"
BOOT=$WORK/boot
rm -rf "$BOOT" && mv "$ROOT/boot/firmware" "$BOOT" && mkdir -m 0755 "$ROOT/boot/firmware"
touch --date="@$SOURCE_DATE_EPOCH" "$ROOT/boot/firmware" "$ROOT/boot"
rm -f "$WORK/fat.img"
# A fixed volume id and --invariant: no random or time-based values in the file system.
mkfs.vfat -C -F 32 -n RASPIFIRM -i 2e8a0005 --invariant "$WORK/fat.img" $((FAT_SIZE * 1024)) >/dev/null
# Sorted, so that the directory entries are in the same order in every build.
(cd "$BOOT" && find . -mindepth 1 -maxdepth 1 -printf '%P\n' | LC_ALL=C sort) | while read -r name; do
    MTOOLS_SKIP_CHECK=1 mcopy -s -m -o -i "$WORK/fat.img" "$BOOT/$name" "::/$name"
done

# The root partition: its files plus a quarter for the first start (it grows to the card).
used=$(du -s --block-size=$MIB "$ROOT" | cut -f1)
ROOT_SIZE=$(( (used * 5 / 4 + 256 + 3) / 4 * 4 ))
say "root partition (RASPIROOT, $ROOT_SIZE MiB for $used MiB of files)"
rm -f "$WORK/root.img"
# Fixed UUID and hash seed (mke2fs would pick random ones); E2FSPROGS_FAKE_TIME fixes the
# file system's own time stamps.
UUID=5049434f-4d50-414e-494f-4e2d524f4f54
E2FSPROGS_FAKE_TIME=$SOURCE_DATE_EPOCH mke2fs -q -t ext4 -L RASPIROOT -U "$UUID" \
    -E "hash_seed=$UUID,root_owner=0:0" -d "$ROOT" "$WORK/root.img" "${ROOT_SIZE}M"
# mke2fs -d (e2fsprogs 1.47.0) copies each file's access and change times from the build
# host, which no environment variable fixes: debugfs sets both to SOURCE_DATE_EPOCH on every
# inode, by path (debugfs quotes with " and takes a backslash as it is, as in systemd's
# system-systemd\x2dcryptsetup.slice; no name with a " is expected in a Debian tree).
if find "$ROOT" -name '*"*' -print -quit | grep -q .; then
    say "error: a file name holds a \", which the debugfs step cannot quote"; exit 1
fi
(cd "$ROOT" && find . -printf '%P\n') | while IFS= read -r path; do
    printf 'sif "/%s" atime @%s\nsif "/%s" ctime @%s\n' "$path" "$SOURCE_DATE_EPOCH" "$path" "$SOURCE_DATE_EPOCH"
done >"$WORK/times.debugfs"
E2FSPROGS_FAKE_TIME=$SOURCE_DATE_EPOCH debugfs -w -f "$WORK/times.debugfs" "$WORK/root.img" \
    >/dev/null 2>"$WORK/times.err"
if grep -v '^debugfs [0-9.]* (' "$WORK/times.err" | grep -q .; then
    say "error: setting the time stamps failed:"; head -5 "$WORK/times.err" >&2; exit 1
fi
rm -f "$WORK/times.debugfs" "$WORK/times.err"

# The card: MBR (the Pi 3's boot ROM reads only MBR), FAT first.
IMG=${OUTPUT%.xz}
TOTAL=$((ROOT_START + ROOT_SIZE))
say "partitioning $IMG ($TOTAL MiB)"
rm -f "$IMG"
truncate -s "${TOTAL}M" "$IMG"
parted -s "$IMG" mklabel msdos \
    mkpart primary fat32 "${FAT_START}MiB" "${ROOT_START}MiB" \
    mkpart primary ext4 "${ROOT_START}MiB" 100%
# A fixed disk identifier (parted picks a random one); the boot uses labels, not this id.
printf '\x05\x00\x8a\x2e' | dd of="$IMG" bs=1 seek=440 conv=notrunc status=none
dd if="$WORK/fat.img" of="$IMG" bs=1M seek=$FAT_START conv=notrunc,sparse status=none
dd if="$WORK/root.img" of="$IMG" bs=1M seek=$ROOT_START conv=notrunc,sparse status=none
rm -f "$WORK/fat.img" "$WORK/root.img"

say "compressing (xz)"
xz -T2 -6 --force --keep "$IMG"
[[ ${KEEP_RAW:-0} == 1 ]] || rm -f "$IMG"
say "wrote $OUTPUT: $(du --apparent-size -m "$OUTPUT" | cut -f1) MiB compressed, $TOTAL MiB on the card, in $(( $(date +%s) - start )) s"
