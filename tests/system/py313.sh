#!/usr/bin/env bash
# `make test` on Debian 13 trixie's Python 3.13, on a host of any Debian release: a trixie amd64
# root (mmdebstrap, cached) with the tools the tests use, the checkout copied in, and the whole
# suite run there by `make test`, in a mount namespace of its own (nothing is left mounted).
# With the CI host's own `make test` (bookworm's 3.11) both ends of requires-python are run.
#
#   sudo tests/system/py313.sh          (or: sudo make test-py313)
#
# Needs root and Debian's and PyPI's package registries. Caches the root under
# $PY313_CACHE (default /var/cache/pi-companion-py313), keyed on this script, and pip's
# downloads beside it. TEST_WORKERS is passed on to `make test`; PY313_TESTS="tests/x.py ..."
# runs only those tests (pytest's arguments) instead of the whole suite.
set -euo pipefail
HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd -- "$HERE/../.." && pwd)
CACHE=${PY313_CACHE:-/var/cache/pi-companion-py313}
T0=$(date +%s)
say() { printf '### [%4ds] %s\n' "$(($(date +%s) - T0))" "$*"; }
die() { say "PY313 TEST FAILED: $*" >&2; exit 1; }
[[ $EUID -eq 0 ]] || die "run as root (mmdebstrap, chroot, mounts)"

# The tools the suite runs for real (each test that needs one says so when it is missing):
# mount and util-linux's unshare (the install's private mounts), iproute2 and dnsmasq-base (the
# phone's DHCP between namespaces), poppler-utils (the panel template), systemd
# (systemd-analyze, sysusers), nodejs (the polkit rule), the image tools, make and git.
PACKAGES=python3,python3-venv,python3-dev,make,git,ca-certificates,mount,util-linux,iproute2,dnsmasq-base,poppler-utils,systemd,nodejs,parted,mtools,dosfstools,e2fsprogs,xz-utils,procps,kmod,device-tree-compiler,zstd,cpio
MIRROR=${MIRROR:-$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}
MIRROR=${MIRROR:-$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)}
[[ -n $MIRROR ]] || die "no Debian mirror found; set MIRROR"

if ! command -v mmdebstrap >/dev/null; then
    say "apt-get install mmdebstrap"
    DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null || die "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >/dev/null \
        || die "apt-get install mmdebstrap"
fi

# Keyed on what goes into it (the checkout and the venv are made afresh at every run).
KEY=$(printf '%s\n' trixie "$PACKAGES" "$MIRROR" | sha256sum | cut -c1-16)
ROOT=$CACHE/root-$KEY
mkdir -p "$CACHE/pip"
if [[ ! -f $ROOT/.complete ]]; then
    say "building the trixie root $ROOT (cached afterwards)"
    rm -rf "$ROOT"
    mmdebstrap --variant=minbase --include="$PACKAGES" \
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' \
        trixie "$ROOT" "deb $MIRROR trixie main" >"$CACHE/build.log" 2>&1 \
        || { tail -n 20 "$CACHE/build.log" >&2; die "mmdebstrap (log: $CACHE/build.log)"; }
    touch "$ROOT/.complete"
    for old in "$CACHE"/root-*; do [[ $old == "$ROOT" ]] || rm -rf -- "$old"; done
    say "root built"
fi

# The checkout as it is in the working tree (tracked and new files), into a fresh directory.
RUN=$ROOT/run-src
rm -rf -- "$RUN"
mkdir -p "$RUN"
git -C "$REPO" ls-files -z --cached --others --exclude-standard \
    | (cd "$REPO" && tar --null --ignore-failed-read -T - -cf -) | tar -C "$RUN" -xf - \
    || die "copying the checkout"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
mkdir -p "$ROOT/root/.cache/pip"

say "make test on $(chroot "$ROOT" python3 -V) in the trixie root"
rc=0
# A private mount namespace: the root's /proc, /sys, /dev, /run and /tmp go away with it.
unshare --mount --propagation private -- bash -c '
    set -e
    R=$1 PIPCACHE=$2
    # The root a mount point of its own, as a real system'"'"'s is: unshare --propagation and
    # ip netns exec change the propagation of / (EINVAL on a plain directory).
    mount --bind "$R" "$R"
    mount -t proc proc "$R/proc"
    mount --rbind /sys "$R/sys"
    mount --rbind /dev "$R/dev"
    mount -t tmpfs tmpfs "$R/run"
    mount -t tmpfs tmpfs "$R/tmp"
    mount --bind "$PIPCACHE" "$R/root/.cache/pip"
    # The host'"'"'s trust store: the way this host reaches PyPI is the way the root does.
    mount --bind -o ro /etc/ssl/certs/ca-certificates.crt "$R/etc/ssl/certs/ca-certificates.crt"
    exec chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        PIP_CERT=/etc/ssl/certs/ca-certificates.crt CI="${CI:-}" PI_COMPANION_NEED_IMAGE_TOOLS=1 TEST_WORKERS="${TEST_WORKERS:-auto}" \
        PY313_TESTS="${PY313_TESTS:-}" bash -c '"'"'cd /run-src
            if [ -z "$PY313_TESTS" ]; then exec make test TEST_WORKERS="$TEST_WORKERS"; fi
            make .venv/.installed && exec .venv/bin/python -m pytest -n 0 $PY313_TESTS'"'"'
' bash "$ROOT" "$CACHE/pip" || rc=$?
rm -rf -- "$RUN"
((rc == 0)) || die "make test on Python 3.13 failed (exit status $rc)"
say "make test passed on Python 3.13 (trixie)"
