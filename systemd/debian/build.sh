#!/usr/bin/env bash
# Builds pi-companion_VERSION_ARCH.deb with dpkg-deb from a staged tree.
#
#   systemd/debian/build.sh ARCH WHEEL OUTDIR     ARCH: arm64 or amd64
#
# WHEEL is pi-companion's wheel built from this checkout. The package holds a venv under
# /opt/pi-companion made of wheels only, for the target's CPython (PY_VERSION, default 3.13,
# Debian trixie's) and architecture: pip fetches them for that platform (not this machine's),
# so an amd64 machine with any Python builds both packages, with no emulation and no compiler.
# The rest of the tree is systemd/files.sh's list (what install.sh installs, in the
# distribution's directories), the config as a conffile, and the maintainer scripts here.
#
# Environment: SOURCE_DATE_EPOCH (required: every mtime, so the same inputs give the same
# bytes), PY_VERSION, PIP (default: python3 -m pip), WHEELHOUSE (a cache of the downloaded
# wheels, default build/deb/wheels), CONFIG_DEFAULT (a command printing the default config,
# default: python3 -m pi_companion config default, from this checkout), REQUIREMENTS (the
# pinned wheels, default requirements.txt here; the tests give an empty list), STAGE (where the
# tree is staged, default build/deb/ARCH).
set -euo pipefail
umask 022

die() { printf 'pi-companion: error: %s\n' "$*" >&2; exit 1; }
[[ $# == 3 ]] || die "usage: $0 ARCH WHEEL OUTDIR"
ARCH=$1 WHEEL=$2 OUT=$3
HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd -- "$HERE/../.." && pwd)
PY=${PY_VERSION:-3.13}
PIP=${PIP:-python3 -m pip}
WHEELHOUSE=${WHEELHOUSE:-$REPO/build/deb/wheels}
REQUIREMENTS=${REQUIREMENTS:-$HERE/requirements.txt}
[[ -n ${SOURCE_DATE_EPOCH:-} ]] || die "SOURCE_DATE_EPOCH is not set (make release sets it from git)"
[[ $PY =~ ^3\.[0-9]+$ ]] || die "PY_VERSION must look like 3.13: $PY"
[[ -f $WHEEL && $(basename -- "$WHEEL") == pi_companion-*-py3-none-any.whl ]] \
    || die "not a pi_companion wheel: $WHEEL"
case $ARCH in
    arm64) MACHINE=aarch64 ;;
    amd64) MACHINE=x86_64 ;;
    *) die "ARCH must be arm64 or amd64: $ARCH" ;;
esac
VERSION=$(basename -- "$WHEEL" | cut -d- -f2)
PREFIX=/opt/pi-companion
STAGE=${STAGE:-$REPO/build/deb/$ARCH}
SITE=$STAGE$PREFIX/venv/lib/python$PY/site-packages
ABI=cp${PY/./}
PLATFORM=()
for tag in manylinux_2_36 manylinux_2_34 manylinux_2_28 manylinux_2_17 manylinux2014; do
    PLATFORM+=(--platform "${tag}_$MACHINE")
done
TARGET=("${PLATFORM[@]}" --python-version "$PY" --implementation cp --abi "$ABI" --abi abi3
        --abi none --only-binary=:all:)

rm -rf -- "$STAGE"
mkdir -p -- "$STAGE/DEBIAN" "$SITE" "$WHEELHOUSE/$ARCH-$PY" "$OUT"
if grep -q '^[^#]' "$REQUIREMENTS"; then
    # shellcheck disable=SC2086  # PIP is a command with its arguments
    $PIP download --quiet --disable-pip-version-check --no-deps "${TARGET[@]}" \
        -d "$WHEELHOUSE/$ARCH-$PY" -r "$REQUIREMENTS"
fi
# shellcheck disable=SC2086
$PIP install --quiet --disable-pip-version-check --no-deps --no-index --no-compile \
    "${TARGET[@]}" --find-links "$WHEELHOUSE/$ARCH-$PY" --target "$SITE" \
    -r "$REQUIREMENTS" "$WHEEL"
# pip's console scripts name this machine's interpreter, and direct_url.json this build's path:
# both go, and so do their lines in RECORD (a script's hash there is of that interpreter's path,
# so two checkouts in two folders would otherwise build two different packages).
rm -rf -- "$SITE/bin"
rm -f -- "$SITE"/*.dist-info/direct_url.json
sed -i -E '/^(\.\.\/)*bin\/[^,\/]+,/d; /^[^,\/]+\.dist-info\/direct_url\.json,/d' "$SITE"/*.dist-info/RECORD
# The venv around it, for the target's interpreter. On arm64 it also sees the system's
# site-packages: Raspberry Pi OS ships lgpio (python3-lgpio), which has no wheel for 3.13.
mkdir -p -- "$STAGE$PREFIX/venv/bin"
ln -s "/usr/bin/python$PY" "$STAGE$PREFIX/venv/bin/python$PY"
ln -s "python$PY" "$STAGE$PREFIX/venv/bin/python3"
ln -s "python$PY" "$STAGE$PREFIX/venv/bin/python"
system_site=false
[[ $ARCH == arm64 ]] && system_site=true
printf 'home = /usr/bin\ninclude-system-site-packages = %s\nversion = %s\nexecutable = /usr/bin/python%s\n' \
    "$system_site" "$PY" "$PY" >"$STAGE$PREFIX/venv/pyvenv.cfg"
printf '#!%s/venv/bin/python3\nimport sys\nfrom pi_companion.cli import main\nsys.exit(main())\n' \
    "$PREFIX" >"$STAGE$PREFIX/venv/bin/pi-companion"
chmod 0755 "$STAGE$PREFIX/venv/bin/pi-companion"

# shellcheck source=systemd/files.sh
source "$REPO/systemd/files.sh"
stage_appliance_files "$STAGE" "$PREFIX" package
install -d -m 0755 "$STAGE/etc/pi-companion"
${CONFIG_DEFAULT:-python3 -m pi_companion config default} >"$STAGE/etc/pi-companion/config.toml"
[[ -s $STAGE/etc/pi-companion/config.toml ]] || die "no default config"
chmod 0644 "$STAGE/etc/pi-companion/config.toml"
DOC=$STAGE/usr/share/doc/pi-companion
install -d -m 0755 "$DOC"
{ printf 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n'
  printf 'Upstream-Name: pi-companion\n\nFiles: *\nCopyright: The pi-companion maintainers\n'
  printf 'License: MIT\n'; sed 's/^$/./; s/^/ /' "$REPO/LICENSE"
  printf '\nFiles: opt/pi-companion/venv/lib/*\nCopyright: their authors, as each *.dist-info says\n'
  printf 'License: various\n See each package'"'"'s *.dist-info directory (METADATA, licenses/).\n'
} >"$DOC/copyright"
{ printf 'pi-companion (%s) unstable; urgency=medium\n\n' "$VERSION"
  printf '  * Release %s: see docs/CHANGELOG.md in the source.\n\n' "$VERSION"
  printf ' -- The pi-companion maintainers <root@localhost>  %s\n' \
      "$(LC_ALL=C date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$DOC/changelog.gz"
install -D -m 0644 "$HERE/lintian-overrides" "$STAGE/usr/share/lintian/overrides/pi-companion"
# Shared objects are not programs (pip keeps the wheels' 0755).
find "$SITE" -name '*.so*' -type f -exec chmod 0644 {} +

for script in postinst prerm postrm; do
    install -m 0755 "$HERE/$script" "$STAGE/DEBIAN/$script"
done
echo /etc/pi-companion/config.toml >"$STAGE/DEBIAN/conffiles"
chmod 0644 "$STAGE/DEBIAN/conffiles"
recommends=
[[ $ARCH == arm64 ]] && recommends=", python3-lgpio"
size=$(du -sk --apparent-size --exclude=DEBIAN "$STAGE" | cut -f1)
sed -e "s/@VERSION@/$VERSION/; s/@ARCH@/$ARCH/; s/@SIZE@/$size/; s/@PY@/$PY/g" \
    -e "s/@RECOMMENDS@/$recommends/" "$HERE/control.in" >"$STAGE/DEBIAN/control"
(cd "$STAGE" && find . -path ./DEBIAN -prune -o -type f -print | LC_ALL=C sort | sed 's#^\./##' \
    | xargs -d '\n' md5sum) >"$STAGE/DEBIAN/md5sums"
chmod -R u+rwX,go+rX,go-w "$STAGE"
find "$STAGE" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
DEB=$OUT/pi-companion_${VERSION}_$ARCH.deb
dpkg-deb --root-owner-group -Zxz --build "$STAGE" "$DEB" >/dev/null
echo "$DEB"
