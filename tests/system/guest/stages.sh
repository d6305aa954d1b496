#!/bin/bash
# The system test's checks inside the VM, one stage per boot (run by systest-runner as root).
# Three boots; each ends in a different way, so that each ending is itself a check:
#   install   make install twice (the second changes nothing); another user's PowerOff is
#             refused by polkit; then MENU held: the box powers the VM off through polkit
#   play      boot as shipped, security score, Grab Bag rounds decided by the kernel's edge
#             timestamps, no display said once, SIGKILL, SIGSTOP, bad config; then a game in
#             progress for the host to cut the power on (QEMU killed)
#   resume    after the hard power-off every acknowledged judgement is back; an OLED stand-in
#             (i2c-stub) on a real /dev/i2c-N; make uninstall keeps state, config and user;
#             then the runner powers off cleanly
# Every check prints "ok - ..." or stops the stage with "FAIL: ..." (exit 1). Each step's
# time goes to /systest/times (NAME SECONDS) for the host's timing table.
set -uo pipefail
S=/systest
STAGE=$1
UNIT=pi-companion.service
VENV=/opt/pi-companion/venv
PC="$VENV/bin/pi-companion"
STATE=/var/lib/pi-companion
CONFIG=/etc/pi-companion/config.toml
T0=$(cut -d' ' -f1 /proc/uptime)

ok() { echo "ok - $*"; }
LAP=$(date +%s%N)
# lap NAME: the seconds since the last lap, into the host's timing table
lap() {
    local now ms
    now=$(date +%s%N)
    ms=$(((now - LAP) / 1000000))
    printf '%s: %s %d.%d\n' "$STAGE" "$1" $((ms / 1000)) $((ms % 1000 / 100)) >> $S/times
    LAP=$now
}
fail() {
    echo "FAIL: $*"
    echo "--- devices:"; ls -l /dev/gpiochip* /dev/i2c-* 2>&1
    echo "--- journal of $UNIT:"; journalctl -b -u $UNIT -o short-monotonic --no-pager | tail -n 40
    exit 1
}
# stamp WHAT: prefix each line with WHAT and the seconds since the first line (where time goes)
stamp() {
    local line t=$SECONDS
    while IFS= read -r line; do printf '[%s +%ds] %s\n' "$1" $((SECONDS - t)) "$line"; done
}
prop() { systemctl show -p "$1" --value $UNIT; }
# wait_for SECONDS WHAT COMMAND...: poll COMMAND every 0.2 s until it succeeds
wait_for() {
    local secs=$1 what=$2 end
    shift 2
    end=$(($(date +%s) + secs))
    until "$@" >/dev/null 2>&1; do
        (($(date +%s) < end)) || fail "$what: not within ${secs} s"
        sleep 0.2
    done
}
active() { [[ $(prop ActiveState) == active ]]; }
restarted() { [[ $(prop MainPID) != "$1" && $(prop MainPID) != 0 ]]; }
new_pid() { [[ $(prop ActiveState) == active && $(prop MainPID) != "$1" && $(prop MainPID) != 0 ]]; }
status_json() { "$PC" status --json; }
# field EXPR: a Python expression over the status report `r`
field() { status_json | python3 -c "import json,sys; r=json.load(sys.stdin); print($1)"; }
drive() { "$VENV/bin/python" "$S/drive.py" "$@" || fail "drive.py $*"; }
scores() { field 'json.dumps(r["scores"], sort_keys=True)'; }

# Where the boot's time went (TCG makes every boot slow): called once the boot has finished,
# since the stage runner starts before the end of the boot. Only with SYSTEST_BOOT_REPORT=1 on
# the host: systemd-analyze takes about 10 s under TCG.
boot_report() {
    [[ -e $S/boot-report ]] || return 0
    systemd-analyze time 2>/dev/null | sed -n '1s/^/boot: /p'
    systemd-analyze blame --no-pager 2>/dev/null | head -n 8 | sed 's/^ */    blame: /'
    systemd-analyze critical-chain --no-pager 2>/dev/null | sed -n '4,$s/^/    chain: /p'
    lap "boot report (systemd-analyze)"
}

stage_install() {
    rm -rf /root/pi-companion
    mkdir /root/pi-companion
    tar -C /root/pi-companion -xf "$S/src.tar" || fail "no copy of the checkout"
    cd /root/pi-companion || fail "no copy of the checkout"
    # Offline: only the wheels the host vendored (the VM has no network at all).
    export PIP_NO_INDEX=1 PIP_FIND_LINKS=$S/wheels PIP_DISABLE_PIP_VERSION_CHECK=1
    # pi-companion's wheel, built by the host from this same checkout.
    PI_COMPANION_WHEEL=$(ls $S/wheels/pi_companion-*.whl) || fail "no pi-companion wheel"
    export PI_COMPANION_WHEEL
    lap "copy the checkout and wheels"
    local t=$SECONDS
    make install 2>&1 | tee /root/install-1.log | stamp "make install 1" || fail "make install"
    ok "make install ($((SECONDS - t)) s)"
    lap "make install"
    getent passwd pi-companion >/dev/null || fail "sysusers did not create the pi-companion user"
    for g in gpio i2c dialout; do
        id -nG pi-companion | tr ' ' '\n' | grep -qx $g || fail "pi-companion is not in group $g"
    done
    ok "sysusers: user pi-companion in gpio, i2c, dialout ($(getent passwd pi-companion | cut -d: -f3,7))"
    [[ $(systemctl is-enabled $UNIT) == enabled ]] || fail "unit not enabled"
    ok "unit enabled"
    [[ -s $CONFIG ]] || fail "no $CONFIG"
    "$PC" config check $CONFIG || fail "the installed config does not pass config check"
    ok "config template in $CONFIG"
    grep -qx 'include-system-site-packages = true' $VENV/pyvenv.cfg \
        || fail "the venv does not use the system's lgpio (system-site-packages)"
    grep -q "system site-packages" /root/install-1.log || fail "install.sh did not say it uses the system lgpio"
    ok "venv on the system site-packages: lgpio from the system, not compiled"
    grep -q "the system's pip" /root/install-1.log && [[ ! -e $VENV/bin/pip ]] \
        || fail "install.sh did not use the system's pip (python3-pip) for the venv"
    ok "venv without a pip of its own: the system's pip (python3-pip) installed into it"
    wait_for 90 "$UNIT active after make install" active
    ok "service active after make install"

    snapshot() {
        # Not compared: byte code (it records source mtimes) and pip's record of where it
        # installed from (direct_url.json names install.sh's temporary copy; RECORD hashes it).
        find /etc /opt/pi-companion -xdev -type f ! -path '*/__pycache__/*' ! -name '*.pyc' \
            ! -name direct_url.json ! -path '*.dist-info/RECORD' -print0 | sort -z | xargs -0 sha256sum
        find /etc /opt/pi-companion -xdev -printf '%p %m %u %g\n' | sort
        systemctl is-enabled $UNIT
    }
    lap "checks after make install"
    snapshot > /root/snap-1
    make install 2>&1 | tee /root/install-2.log | stamp "make install 2" || fail "second make install"
    snapshot > /root/snap-2
    diff -u /root/snap-1 /root/snap-2 || fail "the second make install changed the files above"
    ok "a second make install changes nothing (content, mode and owner of every file under /etc and /opt/pi-companion)"
    wait_for 90 "$UNIT active after the second make install" active
    lap "second make install, compared"

    # The test's own settings: a known seed, and a buzz window wide enough for TCG's jitter on
    # a loaded host (presses written 1 ms apart must both land inside it, so that the kernel's
    # timestamps decide).
    printf '[box]\nseed = 7\n\n[games.grab-bag]\nsettle_ms = 50\n' > $CONFIG
    "$PC" config check $CONFIG || fail "the test config"
    systemctl stop $UNIT
    rm -f $STATE/current.log     # a fresh game on the test config
    systemctl start $UNIT || fail "start with the test config"
    ok "test config written, a fresh game started"

    # --- power-off: another unprivileged user is refused by polkit
    id mallory >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin mallory
    local out
    if out=$(runuser -u mallory -- busctl call --system org.freedesktop.login1 /org/freedesktop/login1 \
            org.freedesktop.login1.Manager PowerOff b false 2>&1); then
        fail "user mallory could power the box off"
    fi
    echo "$out" | grep -qiE 'access denied|interactive authentication required|not authorized' \
        || fail "mallory refused for another reason: $out"
    ok "another unprivileged user cannot power off: $out"
    lap "test config, polkit refusal"

    boot_report
    # --- MENU held 3 s: the daemon powers the VM off through the polkit rule. The host sees
    # QEMU exit by itself and reads logind's words on the serial console.
    touch $S/menu-held
    drive hold MENU 3.5
    sleep 120
    fail "MENU held 3.5 s, but the box is still running"
}

stage_play() {
    wait_for 120 "$UNIT active after boot" active
    ok "after boot: $UNIT active at uptime $(cut -d' ' -f1 /proc/uptime) s"
    [[ $(prop Type) == notify ]] || fail "Type=$(prop Type)"
    local pid user
    pid=$(prop MainPID)
    user=$(ps -o user= -p "$pid")
    [[ $user == pi-companion ]] || fail "the daemon runs as $user"
    tr '\0' '\n' < /proc/$pid/environ | grep -qx GPIOZERO_PIN_FACTORY=lgpio || fail "no GPIOZERO_PIN_FACTORY=lgpio"
    ls -l /proc/$pid/fd | grep -q '/dev/gpiochip' || fail "the daemon has no /dev/gpiochip open"
    grep -q '^CapEff:[[:space:]]*0*$' /proc/$pid/status || fail "the daemon has capabilities: $(grep CapEff /proc/$pid/status)"
    ok "Type=notify, user pi-companion, no capabilities, lgpio holds $(ls -l /proc/$pid/fd | grep -o '/dev/gpiochip[0-9]*' | head -n1)"
    cmp "$(prop FragmentPath)" /root/pi-companion/systemd/pi-companion.service \
        || fail "the unit in use is not the one shipped"
    local d
    for d in $(prop DropInPaths); do
        [[ $d == /etc/systemd/system/pi-companion.service.d/systest.conf || $d == /usr/lib/* ]] \
            || fail "an unexpected drop-in: $d"
    done
    ok "the unit as shipped, plus only the test drop-in: $(prop DropInPaths)"

    local score claimed
    score=$(systemd-analyze security $UNIT --no-pager | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\) .*/\1/p')
    claimed=$(cat $S/claimed-score)
    [[ -n $score ]] || fail "systemd-analyze security gave no score"
    [[ $score == "$claimed" ]] || fail "systemd-analyze security scores $score, the docs claim $claimed"
    ok "systemd-analyze security: $score, as systemd/README.md claims"
    lap "boot checks, security score"

    # --- play: round 1, the higher-numbered line written first; round 2, the lower one first
    [[ $(field 'r["game"], r["phase"], r["grab_master"]') == 'grab-bag searching Red' ]] \
        || fail "fresh game: $(status_json)"
    # round FIRST SECOND WINNER LOSER: FIRST's line written 1 ms before SECOND's; the box must
    # name WINNER and put LOSER behind by the gap between the kernel's stamps of the two edges,
    # which lie inside the two write() calls (drive.py measures their bounds).
    round_checked() {
        local r said
        r=$(drive round "$1" "$2")
        echo "$r" >> $S/latency.jsonl
        said=$(status_json | python3 -c '
import json, sys
r, status = json.loads(sys.argv[1]), json.load(sys.stdin)
first, second, winner, loser = sys.argv[2:]
buzz = status["last_buzz"]
if buzz["winner"] != winner:
    sys.exit(f"{first} pressed before {second}, but the box names {buzz}")
after = [o["after_ms"] for o in buzz["order"] if o["player"] == loser][0]
lo, hi = r["gap_min_ms"], r["gap_max_ms"]
gap = f"{lo:.2f}-{hi:.2f}"
if not lo - 0.5 <= after <= hi + 0.5:
    sys.exit(f"{loser} after {winner} by {after} ms, but the two edges were written {gap} ms apart")
print(f"{first} ({winner}) pressed before {second} ({loser}): {winner} wins, {loser} {after} ms "
      f"later by the kernel timestamps (the lines were written {gap} ms apart)")
' "$r" "$@" 2>&1) || fail "$said"
        ok "$said"
    }
    : > $S/latency.jsonl
    round_checked P3 P2 Green Blue      # the higher-numbered line first
    round_checked P1 P2 Red Blue        # the lower-numbered line first
    [[ $(scores) == '{"Blue": 0, "Green": 1, "Red": 1, "Yellow": 0}' ]] || fail "scores: $(scores)"
    ok "judgements in $STATE/current.log, read back by pi-companion status: $(scores)"
    # More rounds for the latency figure; each winner becomes the next Grab Master.
    for pair in "P4 P2" "P2 P3" "P3 P1" "P1 P4"; do
        drive round $pair >> $S/latency.jsonl
    done
    [[ $(scores) == '{"Blue": 1, "Green": 2, "Red": 2, "Yellow": 1}' ]] || fail "scores after six rounds: $(scores)"
    ok "six rounds played: $(scores)"

    # --- display absent (checked after the rounds: the daemon has retried the display for a while)
    local said
    said=$(journalctl -b -u $UNIT -o cat | grep -c 'display unavailable')
    [[ $said == 1 ]] || fail "'display unavailable' said $said times (want once)"
    ok "no I2C display: said once in the journal, the game played on"
    lap "six rounds"

    # --- SIGKILL: systemd restarts it, the game resumes with the same scores
    local before restarts
    before=$(scores)
    restarts=$(prop NRestarts)
    pid=$(prop MainPID)
    kill -KILL "$pid"
    wait_for 60 "restart after SIGKILL" new_pid "$pid"
    [[ $(prop NRestarts) == $((restarts + 1)) ]] || fail "NRestarts $(prop NRestarts), expected $((restarts + 1))"
    [[ $(scores) == "$before" ]] || fail "scores after SIGKILL $(scores), before $before"
    drive round P3 P4 >/dev/null
    [[ $(field 'r["scores"]["Green"]') == $(($(python3 -c "import json; print(json.loads('$before')['Green'])") + 1)) ]] \
        || fail "the resumed game did not go on from the same scores: $(scores)"
    ok "SIGKILL: restarted by systemd (NRestarts $(prop NRestarts)); the game went on from $before to $(scores)"
    lap "SIGKILL"

    # --- SIGSTOP: the watchdog kills and restarts it
    local wd rs t_stop elapsed limit
    wd=$(($(prop WatchdogUSec | sed 's/s$//')))
    rs=$(($(prop RestartUSec | sed 's/ms$//;s/s$//')))
    limit=$((wd + rs + 8))
    before=$(scores)
    pid=$(prop MainPID)
    t_stop=$(date +%s.%N)
    kill -STOP "$pid"
    # Restarted: a new main process, started (it then needs its own start-up time, many
    # seconds under TCG, to reach READY=1; that is not the watchdog's part).
    wait_for $((limit + 30)) "restart after SIGSTOP" restarted "$pid"
    elapsed=$(python3 -c "import time; print(f'{time.time() - $t_stop:.1f}')")
    wait_for 90 "active after the watchdog restart" active
    journalctl -b -u $UNIT -o cat | grep -q 'Watchdog timeout' || fail "no watchdog timeout in the journal"
    python3 -c "import sys; sys.exit(not $elapsed <= $limit)" || fail "watchdog restart took $elapsed s (limit $limit s)"
    [[ $(scores) == "$before" ]] || fail "scores after the watchdog restart: $(scores), before $before"
    ok "SIGSTOP: watchdog timeout, restarted after $elapsed s (WatchdogSec $wd s + RestartSec $rs s; limit $limit s)"
    lap "SIGSTOP"

    # --- a broken config: exit 78 and no restart loop
    cp $CONFIG /root/config.good
    printf '[box]\ngame = "no-such-game"\n' > $CONFIG
    systemctl restart $UNIT 2>/dev/null && fail "the service started with a broken config"
    restarts=$(prop NRestarts)
    sleep $((rs + 2))              # a restart would have come RestartSec after the exit
    [[ $(prop ActiveState) == failed ]] || fail "ActiveState $(prop ActiveState) with a broken config"
    [[ $(prop ExecMainStatus) == 78 ]] || fail "exit status $(prop ExecMainStatus), want 78"
    [[ $(prop NRestarts) == "$restarts" ]] || fail "restarted with a broken config: NRestarts $restarts -> $(prop NRestarts)"
    journalctl -b -u $UNIT -o cat | grep -q 'box.game' || fail "the journal does not name the bad key (box.game)"
    cp /root/config.good $CONFIG
    systemctl restart $UNIT || fail "restart with the good config"
    [[ $(scores) == "$before" ]] || fail "scores after the config fix: $(scores)"
    lap "broken config"
    ok "broken config: exit 78, failed, NRestarts stays $restarts over $((rs + 2)) s; fixed config resumes the game"

    # --- a game in progress for the host's hard power-off: judgements acknowledged by the lamps
    drive round P4 P1 >/dev/null
    drive round P2 P1 >/dev/null
    scores > $S/acked-scores
    ok "acknowledged before the power cut: $(cat $S/acked-scores)"
    lap "two rounds before the power cut"
    boot_report
    touch $S/cut-power-now          # the host kills QEMU when it sees this
    sleep 600
    fail "the host did not cut the power"
}

stage_resume() {
    wait_for 120 "$UNIT active after the power cut" active
    local acked
    acked=$(cat $S/acked-scores)
    [[ $(scores) == "$acked" ]] || fail "after the power cut: $(scores); acknowledged $acked"
    journalctl -b -u $UNIT -o cat | grep -q 'resumed grab-bag' || fail "the daemon did not say it resumed"
    ok "after the hard power-off: the game resumed with every acknowledged judgement: $acked"

    lap "resume checked"

    # --- an OLED stand-in on a real I2C bus: the kernel's i2c-stub answers at the display's
    # address on a new /dev/i2c-N, so the daemon opens a real bus, in its sandbox, through the
    # i2c group (the udev rule as on Raspberry Pi OS). luma's set-up commands are SMBus block
    # writes, which the stub keeps in its registers; a frame is one plain I2C transfer
    # (I2C_RDWR), which the stub does not do: the display fails, is said once, the game goes on.
    modprobe i2c-dev && modprobe i2c-stub chip_addr=0x3c || fail "cannot load i2c-stub"
    local dev n=
    for dev in /sys/class/i2c-dev/i2c-*; do
        grep -q 'SMBus stub' "$dev/device/name" 2>/dev/null && n=${dev##*-}
    done
    [[ -n $n ]] || fail "i2c-stub made no /dev/i2c-N"
    udevadm settle
    [[ $(stat -c %G /dev/i2c-$n) == i2c ]] || fail "/dev/i2c-$n belongs to group $(stat -c %G /dev/i2c-$n), not i2c"
    printf '\n[display]\ni2c_port = %d\n' "$n" >> $CONFIG
    "$PC" config check $CONFIG || fail "the config with i2c_port = $n"
    local before
    before=$(scores)
    systemctl restart $UNIT || fail "restart with the OLED stand-in"
    "$VENV/bin/python" - "$n" <<'PY' || fail "the daemon's display set-up did not reach the stub on /dev/i2c-$n"
import sys
from smbus2 import SMBus
with SMBus(int(sys.argv[1])) as bus:
    regs = bytes(bus.read_byte_data(0x3C, r) for r in range(256))
# SSD1306 set-up: charge pump on (0x8D 0x14), as every driver for the panel sends it
sys.exit(b"\x8d\x14" not in regs)
PY
    drive round P3 P4 > /dev/null
    # Past the display's first retry (5 s after the start): still said only once.
    local since
    since=$(( $(cut -d. -f1 /proc/uptime) - $(prop ActiveEnterTimestampMonotonic) / 1000000 ))
    ((since >= 6)) || sleep $((6 - since))
    local said
    said=$(journalctl -b _SYSTEMD_INVOCATION_ID="$(prop InvocationID)" -o cat | grep 'display unavailable\|display error')
    [[ $(grep -c . <<< "$said") == 1 ]] || fail "the display's failure said $(grep -c . <<< "$said") times: $said"
    [[ $(field 'r["scores"]["Green"]') == $(($(python3 -c "import json; print(json.loads('$before')['Green'])") + 1)) ]] \
        || fail "with the OLED stand-in the game did not go on: $(scores), before $before"
    ok "OLED stand-in (i2c-stub at 0x3c on /dev/i2c-$n, group i2c): the daemon's set-up commands reached it from its sandbox; the frame transfer (plain I2C) failed, said once: '$said'; the game went on: $(scores)"
    lap "OLED stand-in (i2c-stub)"

    # --- make uninstall: the unit and the venv go, the game log, the config and the user stay
    [[ -s $STATE/current.log ]] || fail "the daemon wrote no game log to $STATE"
    sha256sum $STATE/current.log $CONFIG > /root/kept
    cd /root/pi-companion || fail "no checkout"
    make uninstall || fail "make uninstall"
    [[ $(prop LoadState) == not-found ]] || fail "unit still loaded after uninstall: $(prop LoadState)"
    [[ ! -e /opt/pi-companion ]] || fail "/opt/pi-companion left behind"
    sha256sum -c --quiet /root/kept || fail "uninstall changed the state or the config"
    getent passwd pi-companion >/dev/null || fail "uninstall removed the user"
    ok "make uninstall: unit and venv gone; game log, config and user kept"
    lap "make uninstall"
    boot_report
}

echo "== stage $STAGE (uptime $T0 s)"
printf '%s: boot to the stage runner %s\n' "$STAGE" "$T0" >> $S/times
"stage_$STAGE"
echo "== stage $STAGE passed (uptime $(cut -d' ' -f1 /proc/uptime) s)"
