#!/usr/bin/env bash
# The system test: pi-companion installed with `make install` on a real Debian 13 trixie
# system (systemd as PID 1, udev, dbus, polkitd, a kernel gpio-sim chip as the Pi's header),
# booted under QEMU, and checked through several boots; the guest's Python is trixie's 3.13.
# See systemd/README.md.
#
#   sudo tests/system/run.sh          (or: sudo make system-test)
#
# Needs root on a Debian host with Debian's and PyPI's package registries reachable; installs
# its own host tools with apt-get. Caches the image, the gpio-sim module and the wheels under
# $SYSTEST_CACHE (default /var/cache/pi-companion-systest), keyed on their inputs.
# SYSTEST_ACCEL=kvm uses KVM where it works (default tcg: KVM is broken on some CI hosts).
# SYSTEST_KEEP=1 keeps the run directory (disk, serial console, stage logs) for inspection.
# SYSTEST_BOOT_REPORT=1 adds systemd-analyze's view of each boot to the stages' output.
# BREAK=NAME (make system-test BREAK=NAME) applies tests/system/breakages/NAME.patch, a
# deliberate breakage of the product, to the copy of the checkout before the wheel is built,
# and runs only the checks that breakage concerns (its "Steps:" line; SYSTEST_STEPS overrides):
# "install" is boot 1 alone, anything else one boot of the quick stage (make install once, then
# those steps of the play stage). Such a run must FAIL, with the check's message; the last line
# says whether the failure matched the breakage's "Expect:" pattern.
set -euo pipefail
HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd -- "$HERE/../.." && pwd)
CACHE=${SYSTEST_CACHE:-/var/cache/pi-companion-systest}
ACCEL=${SYSTEST_ACCEL:-tcg}
PIP=${PIP:-$REPO/.venv/bin/pip}
GUEST_PYTHON=3.13
T0=$(date +%s)
LAP_T=$T0
LAPS=()
FAILED=
PASSED=0
SHARE=
BREAK=${BREAK:-}
BREAK_PATCH=
STEPS=${SYSTEST_STEPS:-}
if [[ -n $BREAK ]]; then
    BREAK_PATCH=$HERE/breakages/$BREAK.patch
    [[ -f $BREAK_PATCH ]] || { echo "no breakage $BREAK: $(cd "$HERE/breakages" && ls *.patch | sed 's/.patch$//' | xargs)" >&2; exit 2; }
    [[ -n $STEPS ]] || STEPS=$(sed -n 's/^Steps: *//p' "$BREAK_PATCH" | head -n1)
    EXPECT=$(sed -n 's/^Expect: *//p' "$BREAK_PATCH" | head -n1)
fi

say() { printf '### [%4ds] %s\n' "$(($(date +%s) - T0))" "$*"; }
fail() {
    FAILED=$*
    printf '### [%4ds] SYSTEM TEST FAILED: %s\n' "$(($(date +%s) - T0))" "$*" >&2
    exit 1
}
# lap NAME: the host's seconds since the last lap, for the timing table
lap() {
    local now
    now=$(date +%s)
    LAPS+=("$(printf '%5d s  %s' $((now - LAP_T)) "$1")")
    LAP_T=$now
}
# The timing table, at the end of every run (passed or not): the host's steps, then the guest's
# steps of each stage (boot to the runner = the kernel's uptime when the stage began).
timing_table() {
    echo "### timing (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; accel $ACCEL)"
    local l
    for l in "${LAPS[@]}"; do echo "    $l"; done
    if [[ -n $SHARE && -s $SHARE/times ]]; then
        echo "    in the guest:"
        awk '{t=$NF; $NF=""; printf "    %7.1f s  %s\n", t, $0}' "$SHARE/times"
    fi
    printf '    %5d s  total\n' $(($(date +%s) - T0))
    if [[ -n $FAILED ]]; then
        echo "### SYSTEM TEST FAILED: $FAILED" >&2
    elif [[ $PASSED != 1 ]]; then
        echo "### SYSTEM TEST FAILED: stopped before the end (exit status $1)" >&2
    fi
    if [[ -n $BREAK ]]; then
        if [[ -n $FAILED ]] && grep -qE -- "$EXPECT" <<< "$FAILED"; then
            echo "### BREAKAGE $BREAK CAUGHT (steps: $STEPS): $FAILED"
        else
            echo "### BREAKAGE $BREAK NOT CAUGHT (steps: $STEPS; expected a failure matching '$EXPECT'): ${FAILED:-the run passed}" >&2
        fi
    fi
}
trap 'timing_table $?' EXIT

[[ $EUID -eq 0 ]] || fail "run as root (it installs host packages and builds a disk image)"
[[ -x $PIP ]] || fail "no $PIP: run 'make .venv/.installed' (make system-test does) or set PIP"

# ---- host tools ---------------------------------------------------------------------------
HOST_PACKAGES=(qemu-system-x86 qemu-utils mmdebstrap e2fsprogs)
host_tools() {
    local missing=()
    for p in "${HOST_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if ((${#missing[@]})); then
        say "apt-get install ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q >/dev/null || fail "apt-get update failed"
        apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
            || fail "apt-get install ${missing[*]} failed"
    fi
}

# ---- wheels: everything `make install` needs in the guest, which has no network ------------
# The project's dependencies (from pyproject.toml) and its build backend, as wheels for the
# guest's Python (trixie's 3.13 on amd64), whatever the host's Python is. Wheels only: the
# guest has no compiler, as a Pi has none.
wheels() {
    local deps key
    deps=$(python3 -c 'import tomllib,sys; p=tomllib.load(open(sys.argv[1],"rb")); print("\n".join(p["project"]["dependencies"] + p["build-system"]["requires"] + ["wheel"]))' "$REPO/pyproject.toml")
    key=$(printf '%s\n' "$deps" "cp$GUEST_PYTHON-x86_64" | sha256sum | cut -c1-16)
    WHEELS=$CACHE/wheels-$key
    if [[ ! -f $WHEELS/.complete ]]; then
        say "downloading wheels into $WHEELS"
        rm -rf "$WHEELS"
        mkdir -p "$WHEELS"
        # shellcheck disable=SC2086
        printf '%s\n' "$deps" >"$WHEELS/requirements.txt"
        "$PIP" download --quiet --disable-pip-version-check --only-binary=:all: \
            --python-version "$GUEST_PYTHON" --implementation cp --platform manylinux2014_x86_64 \
            --platform manylinux_2_28_x86_64 --platform manylinux_2_34_x86_64 \
            -d "$WHEELS" -r "$WHEELS/requirements.txt" || fail "pip download of the wheels failed"
        touch "$WHEELS/.complete"
    fi
}

# ---- the base image -----------------------------------------------------------------------
image() {
    local key
    # Keyed on its inputs and the release (a bookworm image is never reused for trixie).
    key=$(cat "$HERE/build-image.sh" "$HERE"/image/* <(echo trixie) | sha256sum | cut -c1-16)
    IMAGE=$CACHE/image-$key
    if [[ ! -f $IMAGE/.complete ]]; then
        say "building the trixie image $IMAGE (cached afterwards)"
        local t
        t=$(date +%s)
        rm -rf "$IMAGE"
        # Each line of the log with the seconds since the build began (where the time goes).
        bash "$HERE/build-image.sh" "$IMAGE" "$CACHE/modules" 2>&1 \
            | while IFS= read -r line; do printf '[%3ds] %s\n' $(($(date +%s) - t)) "$line"; done \
            >"$CACHE/build-image.log" \
            || { tail -n 30 "$CACHE/build-image.log" >&2; fail "building the image failed (log: $CACHE/build-image.log)"; }
        touch "$IMAGE/.complete"
        # Older images are keyed on older inputs: drop them.
        for old in "$CACHE"/image-*; do [[ $old == "$IMAGE" ]] || rm -rf -- "$old"; done
    fi
}

mkdir -p "$CACHE"
host_tools
lap "host tools (apt-get)"
wheels
lap "wheels (download)"
image
lap "image (mmdebstrap, gpio-sim.ko)"
if [[ ${1:-} == --prepare-only ]]; then PASSED=1; say "prepared: $IMAGE"; exit 0; fi

# ---- one run: a disk of its own on top of the cached image, several boots ------------------
RUN=$(mktemp -d /var/tmp/pi-companion-systest.XXXXXX)
SHARE=$RUN/share
QEMU_PID=
cleanup() {
    local rc=$?
    [[ -z $QEMU_PID ]] || kill -KILL "$QEMU_PID" 2>/dev/null || true
    timing_table $rc
    if [[ ${SYSTEST_KEEP:-0} == 1 ]]; then say "kept $RUN"; else rm -rf -- "$RUN"; fi
}
trap cleanup EXIT
mkdir -p "$SHARE"
# The disk: a qcow2 overlay on the cached image, so the image stays clean. cache=none: QEMU
# writes straight to the file (O_DIRECT, no host page cache) and passes the guest's flushes on,
# like a disk with a write cache: a killed QEMU loses only what the guest never flushed.
qemu-img create -q -f qcow2 -F raw -b "$IMAGE/root.img" "$RUN/disk.qcow2" || fail "qemu-img create"
# A copy of the checkout (tracked and new files, as they are in the working tree).
# One tar file: over 9p under TCG every file costs a round trip.
mkdir "$RUN/build"
git -C "$REPO" ls-files -z --cached --others --exclude-standard \
    | (cd "$REPO" && tar --null --ignore-failed-read -T - -cf -) | tar -C "$RUN/build" -xf - \
    || fail "copying the checkout"
if [[ -n $BREAK ]]; then
    patch -s -p1 -d "$RUN/build" < "$BREAK_PATCH" || fail "breakage $BREAK does not apply to this checkout"
    say "breakage $BREAK applied: $(sed -n '1s/^Breakage: *//p' "$BREAK_PATCH")"
fi
tar -C "$RUN/build" -cf "$SHARE/src.tar" . || fail "copying the checkout"
cp -r "$WHEELS" "$SHARE/wheels"
# pi-companion's own wheel, built here from the same copy of the checkout: the guest's
# `make install` installs it (PI_COMPANION_WHEEL) rather than building it under TCG.
"$PIP" wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
    -w "$SHARE/wheels" "$RUN/build" >"$RUN/wheel.log" 2>&1 \
    || { cat "$RUN/wheel.log" >&2; fail "building pi-companion's wheel"; }
# The upgrade's two amd64 packages (guest/upgrade.sh): this checkout's, and the previous
# release's. That is 0.1.0, commit PREVIOUS_COMMIT (the last one before the Debian package
# existed): its code and its units, packed by this checkout's packaging (systemd/debian/,
# files.sh, the card update's unit and program, and the PWM udev rule the file list names),
# which is what a 0.1.0 package would have held. A clone without that commit (a shallow one)
# falls back to this checkout with its version set back, and says so.
PREVIOUS_COMMIT=10efd8bfedea5beae0df4627708d0a4c2ba865bc
PREVIOUS_VERSION=0.1.0
PACKAGING=(systemd/debian systemd/files.sh systemd/pi-companion-update systemd/pi-companion-update.service
           systemd/60-pi-companion-pwm.rules)
debs() {
    local old=$RUN/old wheel tree f
    mkdir -p "$SHARE/debs/new" "$SHARE/debs/old" "$RUN/old-wheel" "$old"
    if git -C "$REPO" cat-file -e "$PREVIOUS_COMMIT^{commit}" 2>/dev/null; then
        git -C "$REPO" archive "$PREVIOUS_COMMIT" | tar -C "$old" -xf - || return 1
        for f in "${PACKAGING[@]}"; do rm -rf "${old:?}/$f"; cp -a "$RUN/build/$f" "$old/$f" || return 1; done
        echo "commit ${PREVIOUS_COMMIT:0:7} ($PREVIOUS_VERSION) with this checkout's packaging" >"$SHARE/debs/old/from"
    else
        say "WARNING: commit $PREVIOUS_COMMIT (release $PREVIOUS_VERSION) is not in this clone (shallow?):" \
            "the previous release is this checkout with its version set back"
        cp -a "$RUN/build/." "$old/"
        sed -i "s/^__version__ = .*/__version__ = \"$PREVIOUS_VERSION\"/" "$old/pi_companion/__init__.py"
        echo "this checkout with its version set back to $PREVIOUS_VERSION" >"$SHARE/debs/old/from"
    fi
    grep -qx "__version__ = \"$PREVIOUS_VERSION\"" "$old/pi_companion/__init__.py" \
        || { echo "the previous release's tree is not version $PREVIOUS_VERSION" >&2; return 1; }
    "$PIP" wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
        -w "$RUN/old-wheel" "$old" >"$RUN/wheel-old.log" 2>&1 || { cat "$RUN/wheel-old.log" >&2; return 1; }
    for wheel in "$SHARE"/wheels/pi_companion-*.whl "$RUN"/old-wheel/pi_companion-*.whl; do
        # Each package from its own tree: its units, and its own default config as the conffile.
        if [[ $wheel == "$RUN"/old-wheel/* ]]; then tree=$old out=$SHARE/debs/old; else tree=$RUN/build out=$SHARE/debs/new; fi
        SOURCE_DATE_EPOCH=$(git -C "$REPO" log -1 --format=%ct) PY_VERSION=$GUEST_PYTHON \
            PIP="$(dirname -- "$PIP")/python -m pip" WHEELHOUSE=$CACHE/deb-wheels STAGE=$RUN/deb-stage \
            CONFIG_DEFAULT="env PYTHONPATH=$tree $(dirname -- "$PIP")/python -m pi_companion config default" \
            bash "$tree/systemd/debian/build.sh" amd64 "$wheel" "$out" >>"$RUN/debs.log" 2>&1 \
            || { tail -n 20 "$RUN/debs.log" >&2; return 1; }
    done
    rm -rf "$old" "$RUN/deb-stage"
}
debs || fail "building the upgrade's packages"
rm -rf "$RUN/build"
say "built $(cd "$SHARE/wheels" && ls pi_companion-*.whl), $(cd "$SHARE/debs" && ls old new | grep deb | xargs); the previous release: $(cat "$SHARE/debs/old/from")"
lap "overlay disk, checkout copy, pi-companion wheel"
cp "$HERE/guest/stages.sh" "$HERE/guest/drive.py" "$HERE/guest/upgrade.sh" "$SHARE/"
# SYSTEST_BOOT_REPORT=1: each stage ends with systemd-analyze's time, blame and critical chain
# (about 10 s a boot under TCG, so not by default).
[[ ${SYSTEST_BOOT_REPORT:-0} == 1 ]] && touch "$SHARE/boot-report"
# The score the docs claim: "scores **0.6 SAFE**" in systemd/README.md.
sed -n 's/.*scores \*\*\([0-9.]*\) [A-Z]*\*\*.*/\1/p' "$REPO/systemd/README.md" | head -n1 >"$SHARE/claimed-score"
[[ -s $SHARE/claimed-score ]] || fail "systemd/README.md claims no security score"

WEB_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if [[ $ACCEL == kvm ]]; then ACCEL_ARGS=(-accel kvm -cpu host); else ACCEL_ARGS=(-accel tcg,thread=multi -cpu max); fi
# boot STAGE: start the VM on the run's disk with STAGE to run; returns at once (QEMU_PID).
boot() {
    # systemd.default_timeout_start_sec: on a host loaded by other jobs the 9p share's mount
    # took over systemd's default 90 s, and the stage runner that needs it never started.
    # no_timer_check: the kernel's check of the IO-APIC timer runs in real time, and on a host at
    # load 25 the emulated CPU missed it ("IO-APIC + timer doesn't work!", a panic at boot).
    local stage=$1 append="console=ttyS0 root=/dev/vda rw panic=-1 quiet mitigations=off no_timer_check systemd.default_timeout_start_sec=600"
    # Boot 1 ends with the box powering itself off: journald copies the journal to the serial
    # console (a file on the host, written as it goes), where the host reads the power-off.
    [[ $stage == install ]] && append+=" systemd.journald.forward_to_console=1 systemd.journald.max_level_console=info"
    # The play boot's header is a Pi 5's (gpio-sim-setup: pinctrl-rp1, 54 lines), the others a
    # Pi 4's: the daemon must find the chip by its label on both.
    [[ $stage == play || ($stage == quick && " $STEPS " == *" pi5 "*) ]] && append+=" systest.board=pi5"
    echo "$stage" >"$SHARE/stage"
    # The resume boot has a network card: QEMU's user network (restrict=on: no way out of the
    # VM) with the host's port WEB_PORT forwarded to the big screen's 8080 on the VM's
    # 10.0.2.15, so that the host loads its pages as a phone on the LAN would.
    local nic=(-nic none)
    [[ $stage == resume ]] && nic=(-nic "user,model=virtio-net-pci,restrict=on,hostfwd=tcp:127.0.0.1:$WEB_PORT-:8080")
    qemu-system-x86_64 "${ACCEL_ARGS[@]}" -smp 2 -m 1024 -nographic -no-reboot \
        -kernel "$IMAGE/vmlinuz" -initrd "$IMAGE/initrd.img" \
        -append "$append" \
        -drive "file=$RUN/disk.qcow2,if=virtio,format=qcow2,cache=none,aio=threads" \
        -virtfs "local,path=$SHARE,mount_tag=systest,security_model=none,id=systest" \
        "${nic[@]}" -serial "file:$RUN/serial-$stage.log" -monitor none -display none \
        </dev/null >"$RUN/qemu-$stage.log" 2>&1 &
    QEMU_PID=$!
    BOOT_T0=$(date +%s)
}
vm_running() { kill -0 "$QEMU_PID" 2>/dev/null; }
# show STAGE: the stage's output, indented
show() { sed 's/^/    /' "$SHARE/out-$1.log" 2>/dev/null || true; }
died() {
    local why
    show "$1"
    echo "--- serial console (last lines):"; tail -n 25 "$RUN/serial-$1.log" 2>/dev/null | tr -d '\r'
    # The guest's own reason, which names the check (FAIL: [claim] ...)
    why=$(grep -m1 '^FAIL' "$SHARE/out-$1.log" 2>/dev/null || true)
    fail "$2${why:+ -- $why}"
}
# until_file STAGE FILE SECONDS: wait for the guest to create FILE in the share
until_file() {
    local end=$(($(date +%s) + $3))
    until [[ -e $SHARE/$2 ]]; do
        [[ -s $SHARE/rc-$1 ]] && died "$1" "stage $1 ended (rc $(cat "$SHARE/rc-$1")) before $2"
        vm_running || died "$1" "the VM stopped during stage $1 before $2"
        (($(date +%s) < end)) || died "$1" "stage $1: no $2 within $3 s"
        sleep 0.5
    done
}
# until_off STAGE SECONDS [CLAIM]: wait for QEMU to exit by itself (CLAIM: what its failing to
# says is false, named in the failure as the guest's checks name theirs)
until_off() {
    local end=$(($(date +%s) + $2))
    while vm_running; do
        (($(date +%s) < end)) || died "$1" "${3:+[$3] }stage $1: the VM did not power off within $2 s"
        sleep 0.5
    done
    wait "$QEMU_PID" 2>/dev/null || true
    QEMU_PID=
}

# ---- a breakage's run (BREAK=NAME) or SYSTEST_STEPS: one boot, only the steps named -----------
if [[ -n $STEPS && $STEPS != install ]]; then
    echo "$STEPS" >"$SHARE/steps"
    say "one boot: stage quick (make install once, then the steps: $STEPS)"
    boot quick
    until_off quick 3600
    show quick
    [[ $(cat "$SHARE/rc-quick" 2>/dev/null) == 0 ]] \
        || died quick "stage quick failed (rc $(cat "$SHARE/rc-quick" 2>/dev/null || echo none))"
    lap "quick: make install, then $STEPS"
    PASSED=1
    say "SYSTEM TEST PASSED (the steps $STEPS only)"
    exit 0
fi

# ---- boot 1: install; ends with MENU held, the box powering the VM off through polkit --------
say "boot 1: stage install"
boot install
until_file install menu-held 1800
lap "boot 1: install (boot, make install x2, checks)"
MENU_T=$(date +%s)
until_off install 120 "MENU held powers the box off"
show install
# The serial console carries the journal in this boot: logind granted the power-off (it says
# so only once polkit has said yes), and the kernel powered the machine down (not a crash).
# The stage itself must not have ended: the box's power-off cut it short while it waited. A
# stage that failed after MENU (or before it) ends by itself, and the runner's own clean
# power-off prints the same console lines as the box's.
[[ -e $SHARE/rc-install ]] && died install "stage install ended by itself (rc $(cat "$SHARE/rc-install")) instead of being powered off by the box"
grep -q '^FAIL' "$SHARE/out-install.log" && died install "stage install printed a failure"
tr -d '\r' < "$RUN/serial-install.log" > "$RUN/console-install.log"
grep -q 'System is powering down' "$RUN/console-install.log" \
    || { tail -n 30 "$RUN/console-install.log"; fail "the VM stopped after MENU was held, but logind never said 'System is powering down'"; }
grep -q 'reboot: Power down' "$RUN/console-install.log" \
    || { tail -n 30 "$RUN/console-install.log"; fail "the VM stopped after MENU was held, but not by powering down"; }
grep -q 'power-off refused\|power-off failed' "$RUN/console-install.log" \
    && { tail -n 30 "$RUN/console-install.log"; fail "the daemon's power-off call failed"; }
grep -E 'pi-companion|logind' "$RUN/console-install.log" | grep -iE 'shut|power|menu' | head -n 6 | sed 's/^/    /'
say "MENU held: the box powered the VM off through polkit ($(($(date +%s) - MENU_T)) s after the press began)"
lap "boot 1: MENU held -> powered off"
if [[ $STEPS == install ]]; then
    PASSED=1
    say "SYSTEM TEST PASSED (boot 1 only)"
    exit 0
fi

# ---- boot 2: boot as shipped, play, faults; ends with QEMU killed mid-game ---------------------
say "boot 2: stage play"
boot play
until_file play cut-power-now 1800
kill -KILL "$QEMU_PID"                 # the hard power-off: no sync, no shutdown
wait "$QEMU_PID" 2>/dev/null || true
QEMU_PID=
show play
say "stage play passed; QEMU killed mid-game ($(($(date +%s) - BOOT_T0)) s)"
lap "boot 2: play, faults, power cut"

# ---- boot 3: resume after the power cut, the big screen, the OLED stand-in, uninstall, package --
say "boot 3: stage resume"
boot resume
until_file resume web-ready 1200
lap "boot 3: resume, the big screen's user"
# The big screen's pages from here, through the forwarded port, on the VM's address.
python3 - "$WEB_PORT" >"$SHARE/web-checked.tmp" 2>&1 <<'PY' || true
import json, sys, time, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
def get(path):
    with urllib.request.urlopen(base + path, timeout=20) as r:
        return r.status, r.read().decode("utf-8", "replace")
try:
    status, page = get("/")
    assert status == 200 and "pi-companion scoreboard" in page, f"/: {status} {page[:200]!r}"
    status, page = get("/history")
    assert status == 200 and "Finished games" in page, f"/history: {status} {page[:200]!r}"
    end = time.monotonic() + 60       # the big screen reconnects to the restarted daemon's hub
    while True:
        try:
            status, snap = get("/api/snapshot")
            break
        except urllib.error.HTTPError as err:
            if err.code != 503 or time.monotonic() > end:
                raise
            time.sleep(1)
    game = json.loads(snap).get("game")
    assert game == "grab-bag", f"/api/snapshot: {snap[:200]!r}"
    print(f"ok: /, /history and /api/snapshot (game {game}, through the hub socket) from the host")
except Exception as err:
    print(f"FAILED {type(err).__name__}: {err}")
PY
mv "$SHARE/web-checked.tmp" "$SHARE/web-checked"
say "pages from the host: $(cat "$SHARE/web-checked")"
until_off resume 1200
show resume
[[ $(cat "$SHARE/rc-resume" 2>/dev/null) == 0 ]] \
    || died resume "stage resume failed (rc $(cat "$SHARE/rc-resume" 2>/dev/null || echo none))"
say "stage resume passed ($(($(date +%s) - BOOT_T0)) s with boot and power-off)"
lap "boot 3: OLED stand-in, uninstall"

# The latency of the rounds played, from SIGCONT (both edges waiting, stamped, in the kernel) to
# the log and the lamps, and from YES to the next round (see systemd/README.md).
python3 - "$SHARE/latency.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
for key in ("cont_to_logged_ms", "cont_to_decision_ms", "yes_to_ack_ms"):
    v = sorted(r[key] for r in rows)
    print(f"    {key}: median {statistics.median(v):.1f} ms, min {v[0]:.1f}, max {v[-1]:.1f} (n={len(v)})")
PY
PASSED=1
say "SYSTEM TEST PASSED"
