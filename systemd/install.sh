#!/usr/bin/env bash
# Installs pi-companion as a systemd appliance service, or removes it with --uninstall.
#
#   sudo systemd/install.sh               install or update, then (re)start the service
#   sudo systemd/install.sh --uninstall   stop and remove; keeps /var/lib/pi-companion,
#                                         /etc/pi-companion/config.toml and the user
#   systemd/install.sh --dry-run          lay the files down under a temporary root only
#
# Environment:
#   DESTDIR   a staging root: files go under it and nothing on the live system is touched
#             (no systemctl, udevadm or systemd-sysusers). --dry-run makes one if unset.
#             The staged venv names PREFIX, not DESTDIR: it runs once the tree is copied to /
#             (e.g. into an SD card image), not from inside DESTDIR.
#   PREFIX    where the venv lives (default /opt/pi-companion)
#   PYTHON    the interpreter the venv is made from (default python3, must be >= 3.11)
#   PI_COMPANION_PIP_ARGS   extra arguments for `pip install`, e.g. "--no-deps" for a fast
#                           test install that skips the dependencies
#   PI_COMPANION_VENV_ARGS  extra arguments for `python -m venv`, e.g. --system-site-packages
#   PI_COMPANION_WHEEL      a wheel of pi-companion built from this checkout (pip wheel .):
#                           installed instead of building the checkout here (an offline
#                           install, or a slow board: the build runs elsewhere)
#
# Safe to run again: files are replaced, the venv is reused and the package reinstalled,
# an existing config.toml is never overwritten.
set -euo pipefail
umask 022

SERVICE=pi-companion.service
REPO=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
PREFIX=${PREFIX:-/opt/pi-companion}
DESTDIR=${DESTDIR:-}
PYTHON=${PYTHON:-python3}
MODE=install
DRY_RUN=0

say() { printf 'pi-companion: %s\n' "$*"; }
warn() { printf 'pi-companion: warning: %s\n' "$*" >&2; }
die() { printf 'pi-companion: error: %s\n' "$*" >&2; exit 1; }
SRC_COPY=
trap '[[ -z $SRC_COPY ]] || rm -rf -- "$SRC_COPY"' EXIT

for arg in "$@"; do
    case $arg in
        --uninstall) MODE=uninstall ;;
        --dry-run) DRY_RUN=1 ;;
        -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) die "unknown argument: $arg (try --help)" ;;
    esac
done

PREFIX=${PREFIX%/}
[[ $PREFIX =~ ^(/[A-Za-z0-9._-]+)+$ ]] \
    || die "PREFIX must be an absolute path other than / (letters, digits, . _ -): $PREFIX"
if [[ $DRY_RUN == 1 && -z $DESTDIR ]]; then
    DESTDIR=$(mktemp -d -t pi-companion-root.XXXXXX)
    say "dry run: staging under $DESTDIR"
fi
DESTDIR=${DESTDIR%/}
LIVE=0
[[ -z $DESTDIR ]] && LIVE=1
# systemd runs (rather than, say, a chroot building an SD card image): units can be started.
RUNNING=0
[[ $LIVE == 1 && -d /run/systemd/system ]] && RUNNING=1

# shellcheck source=systemd/files.sh
source "$REPO/systemd/files.sh"
VENV=$DESTDIR$PREFIX/venv
UNIT=$DESTDIR$(appliance_path local "$SERVICE")
WEB_SERVICE=pi-companion-web.service
WEB_UNIT=$DESTDIR$(appliance_path local "$WEB_SERVICE")
SYSUSERS=$DESTDIR$(appliance_path local pi-companion.conf)
UDEV_RULE=$DESTDIR$(appliance_path local 99-pi-companion-puck.rules)
PWM_RULE=$DESTDIR$(appliance_path local 60-pi-companion-pwm.rules)
POLKIT_RULE=$DESTDIR$(appliance_path local 50-pi-companion-shutdown.rules)
CONFIG=$DESTDIR/etc/pi-companion/config.toml
TEMPLATE=$REPO/pi_companion/data/config-template.toml

if [[ $LIVE == 1 && $EUID -ne 0 ]]; then
    die "run as root (sudo make install), or set DESTDIR / pass --dry-run"
fi
# A wrong wheel is said before anything is made (a venv with ensurepip takes minutes on a Pi).
if [[ $MODE == install && -n ${PI_COMPANION_WHEEL:-} ]]; then
    [[ -f $PI_COMPANION_WHEEL && $(basename -- "$PI_COMPANION_WHEEL") == pi_companion-*.whl ]] \
        || die "PI_COMPANION_WHEEL is not a pi_companion wheel: $PI_COMPANION_WHEEL"
fi

make_venv() {
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || die "$PYTHON is older than Python 3.11"
    if "$VENV/bin/python" -c '' 2>/dev/null; then
        say "reusing venv $VENV"
    else
        local venv_args=${PI_COMPANION_VENV_ARGS-}
        # Raspberry Pi OS ships lgpio as python3-lgpio: use it rather than compile it with swig.
        if [[ -z ${PI_COMPANION_VENV_ARGS+set} ]] && "$PYTHON" -c 'import lgpio' 2>/dev/null; then
            venv_args=--system-site-packages
            say "lgpio is installed system-wide (python3-lgpio): the venv uses the system site-packages"
        fi
        # A venv on the system site-packages can run the system's pip (python3-pip): skip
        # ensurepip, which installs and byte-compiles a pip of its own (minutes on a slow
        # board). Without a system pip, ensurepip runs below after all.
        [[ $venv_args == --system-site-packages ]] && venv_args="$venv_args --without-pip"
        say "creating venv $VENV"
        # shellcheck disable=SC2086  # word splitting of the extra arguments is wanted
        "$PYTHON" -m venv --clear $venv_args "$VENV" \
            || die "could not create the venv (on Debian: apt install python3-venv)"
        if [[ $venv_args == *--without-pip* ]] && "$VENV/bin/python" -c 'import pip' 2>/dev/null; then
            say "the venv uses the system's pip (python3-pip)"
        fi
    fi
    # No pip in the venv (no system pip, or it has gone since: apt remove python3-pip): add one.
    if ! "$VENV/bin/python" -c 'import pip' 2>/dev/null; then
        say "the venv has no pip: adding one (ensurepip)"
        "$VENV/bin/python" -m ensurepip --default-pip >/dev/null \
            || die "could not add pip to the venv (on Debian: apt install python3-pip)"
    fi
}

# pip builds in the source tree (build/, *.egg-info); build from a copy so that a root-owned
# build never lands in the user's checkout.
install_package() {
    local spec extra=
    case "$(uname -s)/$(uname -m)" in
        Linux/aarch64 | Linux/armv7l | Linux/armv6l) extra="[pi]" ;;
    esac
    if [[ -n ${PI_COMPANION_WHEEL:-} ]]; then
        install_wheel "$PI_COMPANION_WHEEL" "$extra"
        compile_package
        return
    fi
    SRC_COPY=$(mktemp -d -t pi-companion-src.XXXXXX)
    tar -C "$REPO" --exclude=./.git --exclude=./.venv --exclude=./build \
        --exclude='*.egg-info' --exclude=__pycache__ --exclude=.pytest_cache \
        --exclude=.hypothesis -cf - . | tar -C "$SRC_COPY" -xf -
    spec=$SRC_COPY$extra
    say "installing $REPO$extra into the venv"
    # shellcheck disable=SC2086
    "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
        ${PI_COMPANION_PIP_ARGS:-} "$spec"
    compile_package
}

# install_wheel WHEEL EXTRA: a pre-built wheel of this checkout (PI_COMPANION_WHEEL).
install_wheel() {
    local wheel=$1 extra=$2 purelib uri sum
    [[ -f $wheel && $(basename -- "$wheel") == pi_companion-*.whl ]] \
        || die "PI_COMPANION_WHEEL is not a pi_companion wheel: $wheel"
    say "installing $wheel$extra into the venv"
    { read -r purelib; read -r uri; } < <("$VENV/bin/python" -c 'import pathlib, sys, sysconfig
print(sysconfig.get_path("purelib")); print(pathlib.Path(sys.argv[1]).resolve().as_uri())' "$wheel")
    # With its sha256 in the URL, pip checks the wheel and records the sum (direct_url.json).
    sum=$(sha256sum -- "$wheel" | cut -d' ' -f1)
    if compgen -G "$purelib/pi_companion-*.dist-info" >/dev/null; then
        # The very same wheel again (make install run twice): nothing to change, and pip
        # would take minutes on a slow board.
        if grep -qs "sha256=$sum" "$purelib"/pi_companion-*.dist-info/direct_url.json; then
            say "pi-companion is already installed from this wheel (sha256 ${sum:0:16}): kept"
            return
        fi
        # pip keeps an installed wheel of the same version: replace it (an update of the code
        # without a new version number), then let the next call add any new dependency.
        # shellcheck disable=SC2086
        "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
            ${PI_COMPANION_PIP_ARGS:-} --force-reinstall --no-deps "pi-companion @ $uri#sha256=$sum"
    fi
    # shellcheck disable=SC2086
    "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
        ${PI_COMPANION_PIP_ARGS:-} "pi-companion$extra @ $uri#sha256=$sum"
}

compile_package() {
    # The service runs with a read-only /opt: compile everything now, not on first import.
    local purelib
    purelib=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    if [[ -n $DESTDIR ]]; then
        # Staged: the byte code names the final paths, and so do the scripts (next).
        "$VENV/bin/python" -m compileall -q -f -j 0 -s "$DESTDIR" "$purelib/pi_companion"
        relocate_venv
    else
        "$VENV/bin/python" -m compileall -q -j 0 "$purelib/pi_companion"
    fi
}

# A venv names its own path in its scripts' #! lines and activate files. Staged under DESTDIR,
# those must name PREFIX, where the venv will run once the staged tree is copied into place.
relocate_venv() {
    "$VENV/bin/python" - "$VENV" "$PREFIX/venv" <<'PY'
import pathlib, sys
staged, final = sys.argv[1], sys.argv[2]
venv = pathlib.Path(staged)
for path in [*venv.joinpath("bin").iterdir(), venv / "pyvenv.cfg"]:
    if path.is_symlink() or not path.is_file():
        continue
    data = path.read_bytes()
    if b"\0" in data[:1024] or staged.encode() not in data:
        continue          # a binary, or nothing to change
    path.write_bytes(data.replace(staged.encode(), final.encode()))
PY
}

install_files() {
    stage_appliance_files "$DESTDIR" "$PREFIX" local
    say "installed $UNIT, $SYSUSERS, $UDEV_RULE, $PWM_RULE, $POLKIT_RULE"
}

# --- the piezo's PWM overlay ---------------------------------------------------------------
# The pwm overlay routes GPIO18 (the piezo) to PWM channel 0: tones from the hardware PWM
# instead of a thread toggling the line (the daemon falls back to that without it, as on a
# Pi 5). Written only where the boot config exists (a Raspberry Pi), once, in an [all] section
# of its own so that no board section above holds it back; effective at the next boot. Debian's
# raspi-firmware rewrites config.txt at every kernel update from its own template plus
# /etc/default/raspi-firmware-custom: there the line goes into that file too.
PWM_OVERLAY=dtoverlay=pwm,pin=18,func=2
BOOT_CONFIG=$DESTDIR/boot/firmware/config.txt
RASPI_CUSTOM=$DESTDIR/etc/default/raspi-firmware-custom
RASPI_HOOK=$DESTDIR/etc/kernel/postinst.d/z50-raspi-firmware

# add_overlay FILE: append the overlay line unless FILE already has it; refuse to add a second
# pwm overlay beside someone else's (the later one would re-route the first).
add_overlay() {
    local file=$1 other
    if grep -Eq "^[[:space:]]*${PWM_OVERLAY}[[:space:]]*(#.*)?$" "$file" 2>/dev/null; then
        say "$file already routes GPIO18 to the PWM ($PWM_OVERLAY): kept"
        return
    fi
    other=$(grep -Em1 '^[[:space:]]*dtoverlay=pwm(-2chan)?([,[:space:]]|$)' "$file" 2>/dev/null || true)
    if [[ -n $other ]]; then
        warn "$file has '$other': left alone, so the piezo's tones come from the software PWM unless it routes GPIO18"
        return
    fi
    { [[ ! -s $file || -z $(tail -c1 -- "$file") ]] || echo
      printf '\n# pi-companion: the piezo (GPIO18) on PWM channel 0, tones from the hardware PWM\n[all]\n%s\n' \
          "$PWM_OVERLAY"; } >>"$file"
    say "added $PWM_OVERLAY to $file (the piezo's tones from the hardware PWM after the next reboot)"
}

install_overlay() {
    if [[ -f $BOOT_CONFIG ]]; then
        add_overlay "$BOOT_CONFIG"
    fi
    if [[ -f $RASPI_HOOK ]]; then
        install -d -m 0755 "$(dirname -- "$RASPI_CUSTOM")"
        add_overlay "$RASPI_CUSTOM"
    fi
}

install_config() {
    if [[ -e $CONFIG ]]; then
        say "keeping the existing $CONFIG"
        return
    fi
    local tmp
    install -d -m 0755 "$(dirname -- "$CONFIG")"
    tmp=$(mktemp "$CONFIG.XXXXXX")
    if "$VENV/bin/pi-companion" config default >"$tmp" 2>/dev/null && [[ -s $tmp ]]; then
        say "wrote $CONFIG (pi-companion config default)"
    elif [[ -f $TEMPLATE ]]; then
        cp -- "$TEMPLATE" "$tmp"
        say "wrote $CONFIG (from $TEMPLATE)"
    else
        rm -f -- "$tmp"
        die "no config: 'pi-companion config default' failed and $TEMPLATE is missing"
    fi
    chmod 0644 "$tmp"
    mv -- "$tmp" "$CONFIG"
}

activate() {
    systemd-sysusers "$SYSUSERS"
    if [[ $RUNNING == 1 ]]; then
        if command -v udevadm >/dev/null; then
            udevadm control --reload
            # Apply the rules again to devices already there: a puck plugged in, and the GPIO
            # and I2C devices, whose rules name the gpio and i2c groups that sysusers may have
            # only just created (udev left them root-only at boot; the service could not open them).
            udevadm trigger --action=change --subsystem-match=tty --subsystem-match=gpio \
                --subsystem-match=i2c-dev --subsystem-match=pwm
            udevadm settle --timeout=30 || warn "udev did not settle within 30 s"
        fi
        systemctl daemon-reload
    fi
    # `enable` works offline too: in a chroot it only makes the symlink.
    systemctl enable "$SERVICE"
    if [[ $RUNNING == 0 ]]; then
        warn "systemd is not running here: the service starts at the next boot"
        return
    fi
    # restart, not `enable --now`: an update must replace a daemon that is already running.
    systemctl restart "$SERVICE"
    say "started; follow it with: journalctl -u pi-companion -f"
    # The big screen runs only when the config's [web] enabled = true.
    if "$VENV/bin/python" -c 'import sys; from pathlib import Path; from pi_companion.config import load_config; sys.exit(not load_config(Path(sys.argv[1])).web_enabled)' "$CONFIG" 2>/dev/null; then
        systemctl enable "$WEB_SERVICE"
        systemctl restart "$WEB_SERVICE"
        say "big screen started ([web] enabled = true)"
    else
        systemctl disable --now "$WEB_SERVICE" 2>/dev/null || true
    fi
}

check_host() {
    if ! command -v pkaction >/dev/null; then
        warn "polkitd is not installed, so the box cannot power itself off: apt install polkitd"
    fi
    if ! compgen -G '/dev/i2c-*' >/dev/null; then
        warn "no /dev/i2c-*: enable I2C for the display (raspi-config nonint do_i2c 0)"
    fi
}

do_install() {
    make_venv
    install_package
    install_files
    install_overlay
    install_config
    if [[ $LIVE == 1 ]]; then
        check_host
        activate
    else
        say "staged under $DESTDIR (nothing on this system was changed)"
    fi
}

do_uninstall() {
    if [[ $RUNNING == 1 ]]; then
        systemctl disable --now "$SERVICE" "$WEB_SERVICE" || true
    elif [[ $LIVE == 1 ]]; then
        systemctl disable "$SERVICE" || true
    fi
    rm -f -- "$UNIT" "$WEB_UNIT" "$SYSUSERS" "$UDEV_RULE" "$PWM_RULE" "$POLKIT_RULE"
    rm -rf -- "$VENV"
    rmdir -- "$DESTDIR$PREFIX" 2>/dev/null || true
    if [[ $RUNNING == 1 ]]; then
        systemctl daemon-reload
        if command -v udevadm >/dev/null; then udevadm control --reload; fi
    fi
    say "removed; kept $DESTDIR/var/lib/pi-companion, $CONFIG and the pi-companion user"
}

if [[ $MODE == install ]]; then do_install; else do_uninstall; fi
