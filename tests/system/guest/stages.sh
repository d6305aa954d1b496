#!/bin/bash
# The system test's checks inside the VM, one stage per boot (run by systest-runner as root).
# Three boots; each ends in a different way, so that each ending is itself a check:
#   install   the test config first, then make install twice (the config is kept, the second
#             changes nothing); polkit refuses another user's PowerOff and grants the daemon's
#             user; then MENU held: the box powers the VM off through polkit
#   play      on a Pi 5's header (gpio-sim labelled pinctrl-rp1, 54 lines: found by its label,
#             named by doctor), boot as shipped (its input edges from the kernel's line events),
#             security score, idle cost, Grab Bag rounds with the daemon frozen while two lines
#             are written in either order (the
#             kernel's edge timestamps decide), no display said once with its reason, no puck
#             looked for, SIGKILL, a hung loop (the watchdog), bad config; then a game in
#             progress for the host to cut the power on (QEMU killed)
#   resume    after the hard power-off every acknowledged judgement is back; the big screen
#             as its own user (no signal, no power-off, only history/; pages load from the
#             host on the VM's address); an OLED stand-in (i2c-stub) on a real /dev/i2c-N;
#             make uninstall keeps state, config and users; then the Debian package
#             (upgrade.sh): upgrade mid-game, remove, purge, the update from the card; then the
#             runner powers off cleanly
# Every check prints "ok - ..." or stops the stage with "FAIL: ..." (exit 1). Each step's
# time goes to /systest/times (NAME SECONDS) for the host's timing table.
set -uo pipefail
S=/systest
STAGE=$1
UNIT=pi-companion.service
WEB_UNIT=pi-companion-web.service
WEB_USER=pi-companion-web
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
# CHECK: the claim the running check is about; every failure names it.
CHECK=
fail() {
    echo "FAIL: ${CHECK:+[$CHECK] }$*"
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
# drive ARGS: drive.py; its FAIL stops the stage, said as the step's claim's failure ("FAIL:
# [claim] reason": the host names the first FAIL line). Inside $(...) `fail` only ends the
# subshell, so the caller writes `r=$(drive ...) || exit 1` (drive has printed the reason).
drive() {
    local err rc=0 why
    err=$(mktemp)
    "$VENV/bin/python" "$S/drive.py" "$@" 2>"$err" || rc=$?
    sed 's/^FAIL: /drive.py: /' "$err" >&2
    why=$(grep -m1 '^FAIL: ' "$err" | sed 's/^FAIL: //')
    rm -f "$err"
    ((rc == 0)) && return 0
    fail "${why:-drive.py $1 ended with status $rc} (drive.py $1)" >&2
}
# us_s MICROSECONDS: seconds with one decimal
us_s() { python3 -c 'import sys; print(f"{int(sys.argv[1]) / 1e6:.1f}")' "$1"; }
# as_web COMMAND...: run COMMAND as the big screen's user, its groups as the unit gives them
as_web() { setpriv --reuid=$WEB_USER --regid=$WEB_USER --init-groups -- "$@"; }
# The player a button belongs to, in the default config: P1 Red, P2 Blue, P3 Green, P4 Yellow
player() { case $1 in P1) echo Red ;; P2) echo Blue ;; P3) echo Green ;; P4) echo Yellow ;; esac; }
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

# install_box: the test config, then make install once (every stage that installs starts so).
install_box() {
    rm -rf /root/pi-companion
    mkdir /root/pi-companion
    tar -C /root/pi-companion -xf "$S/src.tar" || fail "no copy of the checkout"
    cd /root/pi-companion || fail "no copy of the checkout"
    # Offline: only the wheels the host vendored (the VM has no network at all).
    export PIP_NO_INDEX=1 PIP_FIND_LINKS=$S/wheels PIP_DISABLE_PIP_VERSION_CHECK=1
    # systemctl's D-Bus calls wait 25 s by default: under TCG on a host at load 25 a
    # daemon-reload took longer ("Reload daemon failed: Connection timed out"), a test artefact.
    export SYSTEMD_BUS_TIMEOUT=300
    # pi-companion's wheel, built by the host from this same checkout.
    PI_COMPANION_WHEEL=$(ls $S/wheels/pi_companion-*.whl) || fail "no pi-companion wheel"
    export PI_COMPANION_WHEEL
    # The test's own config, there before the install (which must keep it): a known seed, a
    # buzz window wide enough for the rounds' 20 ms gap and a loaded host's jitter, and the
    # big screen on (make install then enables and starts its unit).
    mkdir -p /etc/pi-companion
    printf '[box]\nseed = 7\n\n[games.grab-bag]\nsettle_ms = 50\ncards = 60\n\n[web]\nenabled = true\n' > $CONFIG
    sha256sum $CONFIG > /root/config.sum
    lap "copy the checkout and wheels"
    local t=$SECONDS
    make install 2>&1 | tee /root/install-1.log | stamp "make install 1" || fail "make install"
    ok "make install ($((SECONDS - t)) s)"
    lap "make install"
}

stage_install() {
    install_box
    getent passwd pi-companion >/dev/null || fail "sysusers did not create the pi-companion user"
    for g in gpio i2c dialout; do
        id -nG pi-companion | tr ' ' '\n' | grep -qx $g || fail "pi-companion is not in group $g"
    done
    ok "sysusers: user pi-companion in gpio, i2c, dialout ($(getent passwd pi-companion | cut -d: -f3,7))"
    [[ $(id -nG $WEB_USER 2>&1) == "$WEB_USER pi-companion" ]] \
        || fail "sysusers: $WEB_USER should be in its own group and pi-companion only: $(id $WEB_USER 2>&1)"
    ok "sysusers: user $WEB_USER in its own group and the daemon's only ($(id $WEB_USER))"
    [[ $(systemctl is-enabled $UNIT) == enabled ]] || fail "unit not enabled"
    ok "unit enabled"
    sha256sum --quiet -c /root/config.sum || fail "make install changed the existing $CONFIG"
    grep -q "keeping the existing $CONFIG" /root/install-1.log || fail "install.sh did not say it kept $CONFIG"
    "$PC" config check $CONFIG || fail "the config does not pass config check"
    ok "the existing $CONFIG kept as it was"
    # The default pins (input.edges = "kernel") need no lgpio, and the install no compiler: the
    # guest has none, and every dependency came from the host's wheels for its Python.
    command -v gcc cc >/dev/null && fail "the test image has a compiler: the check below proves nothing"
    python3 -c 'import lgpio' 2>/dev/null && fail "the test image has a system lgpio: the check below proves nothing"
    "$VENV/bin/python" -c 'import lgpio' 2>/dev/null && fail "make install put lgpio into the venv (the [pi] extra should not need it)"
    grep -qx 'include-system-site-packages = false' $VENV/pyvenv.cfg \
        || fail "the venv uses the system site-packages with no system lgpio to see"
    ok "venv on $("$VENV/bin/python" -V) without lgpio and without a compiler: every dependency a wheel"
    wait_for 90 "$UNIT active after make install" active
    ok "service active after make install"
    [[ $(systemctl is-enabled $WEB_UNIT) == enabled ]] || fail "$WEB_UNIT not enabled with [web] enabled = true"
    ok "$WEB_UNIT enabled ([web] enabled = true)"

    snapshot() {
        # Not compared: byte code (it records source mtimes) and pip's record of where it
        # installed from (direct_url.json names install.sh's temporary copy; RECORD hashes it).
        find /etc /opt/pi-companion -xdev -type f ! -path '*/__pycache__/*' ! -name '*.pyc' \
            ! -name direct_url.json ! -path '*.dist-info/RECORD' -print0 | sort -z | xargs -0 sha256sum
        find /etc /opt/pi-companion -xdev -printf '%p %m %u %g\n' | sort
        systemctl is-enabled $UNIT $WEB_UNIT
    }
    lap "checks after make install"
    snapshot > /root/snap-1
    make install 2>&1 | tee /root/install-2.log | stamp "make install 2" || fail "second make install"
    snapshot > /root/snap-2
    diff -u /root/snap-1 /root/snap-2 || fail "the second make install changed the files above"
    ok "a second make install changes nothing (content, mode and owner of every file under /etc and /opt/pi-companion)"
    wait_for 90 "$UNIT active after the second make install" active
    lap "second make install, compared"

    # --- power-off: polkit refuses another unprivileged user and grants the daemon's. logind
    # says "Access denied" by itself (no polkit, or polkit down): only polkit's own answer for
    # a non-interactive call, a challenge, makes it say "Interactive authentication required".
    id mallory >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin mallory
    local out
    if out=$(runuser -u mallory -- busctl call --system org.freedesktop.login1 /org/freedesktop/login1 \
            org.freedesktop.login1.Manager PowerOff b false 2>&1); then
        fail "user mallory could power the box off"
    fi
    grep -q 'Interactive authentication required' <<< "$out" \
        || fail "mallory's PowerOff was refused, but not by polkit: $out"
    polkit_says mallory no
    polkit_says pi-companion yes
    ok "another unprivileged user's PowerOff: '$out' (polkit's challenge); pkcheck: mallory no, pi-companion yes"
    lap "polkit refusal and grant"

    boot_report
    # --- MENU held 3 s: the daemon powers the VM off through the polkit rule. The host sees
    # QEMU exit by itself, reads logind's words on the serial console, and checks that this
    # stage never ended by itself (no rc-install: a failure here ends it, and the runner's own
    # power-off would print the same console lines).
    touch $S/menu-held
    drive hold MENU 3.5
    sleep 120
    fail "MENU held 3.5 s, but the box is still running"
}

# polkit_says USER yes|no: polkit's own answer for power-off to a process of USER (pkcheck asks
# polkitd directly: exit 0 authorized, else not), so that a refusal is polkit's and not logind's.
polkit_says() {
    local rc=0
    command -v pkcheck >/dev/null || fail "no pkcheck (package polkitd)"
    setpriv --reuid="$1" --regid="$1" --init-groups -- sh -c \
        'exec pkcheck --action-id org.freedesktop.login1.power-off --process $$' >/dev/null 2>&1 || rc=$?
    case $2 in
        yes) ((rc == 0)) || fail "polkit does not authorize power-off for $1 (pkcheck exit $rc)" ;;
        no) ((rc != 0)) || fail "polkit authorizes power-off for $1" ;;
    esac
}

# --- play. Every round: the daemon frozen (SIGSTOP), FIRST's line written, 20 ms later
# SECOND's, then SIGCONT: both edges wait in the kernel, stamped, and reach the daemon
# together, so only the kernel's timestamps can say which came first and by how much. The
# box must name FIRST's player and put SECOND's behind by a lag inside the bounds of the
# two write() calls (the stamps lie inside them). Deciding by the time the daemon read the
# edges would give a lag of about 0 ms.
round_checked() {
    local r said
    r=$(drive round "$1" "$2" "$(prop MainPID)") || exit 1
    echo "$r" >> $S/latency.jsonl
    said=$(status_json | python3 -c '
import json, sys
r, status = json.loads(sys.argv[1]), json.load(sys.stdin)
first, second, winner, loser = sys.argv[2:]
buzz = status["last_buzz"]
lo, hi = r["gap_min_ms"], r["gap_max_ms"]
if buzz["winner"] != winner:
    sys.exit(f"{first} pressed {lo:.1f} ms before {second}, but the box names {buzz}")
after = [o["after_ms"] for o in buzz["order"] if o["player"] == loser]
if not after:
    sys.exit(f"{loser} pressed inside the buzz window, but the box has no lag for them: {buzz}")
after = after[0]
gap = f"{lo:.2f}-{hi:.2f}"
if not lo - 0.5 <= after <= hi + 0.5:
    sys.exit(f"{loser} after {winner} by {after} ms, but the kernel stamped the two edges {gap} ms apart")
tone = r["lamp_to_tone_ms"]
print(f"{first} ({winner}) {gap} ms before {second} ({loser}), the daemon frozen: {winner} wins, "
      f"{loser} {after} ms later by the kernel timestamps; the tone on the piezo line {tone:.0f} ms "
      f"after the lamp")
' "$r" "$1" "$2" "$(player "$1")" "$(player "$2")" 2>&1) || fail "$said"
    ok "$said"
}

# Each step_* below is one check of the play stage; the quick stage (make system-test
# BREAK=...) runs only the steps a breakage concerns, on a fresh install.
step_boot() {
    CHECK="Type=notify, the unit as shipped, its user, the security score"
    [[ $(prop Type) == notify ]] || fail "Type=$(prop Type)"
    local pid user
    pid=$(prop MainPID)
    user=$(ps -o user= -p "$pid")
    [[ $user == pi-companion ]] || fail "the daemon runs as $user"
    tr '\0' '\n' < /proc/$pid/environ | grep -qx GPIOZERO_PIN_FACTORY=lgpio || fail "no GPIOZERO_PIN_FACTORY=lgpio"
    ls -l /proc/$pid/fd | grep -q '/dev/gpiochip' || fail "the daemon has no /dev/gpiochip open"
    grep -q '^CapEff:[[:space:]]*0*$' /proc/$pid/status || fail "the daemon has capabilities: $(grep CapEff /proc/$pid/status)"
    ok "Type=notify, user pi-companion, no capabilities, the daemon holds $(ls -l /proc/$pid/fd | grep -o '/dev/gpiochip[0-9]*' | head -n1)"
    # Boot to buttons live (#27 item 4): the unit is active once the daemon sent READY=1, which it
    # sends only with every line requested (step_ready); every time here is CLOCK_MONOTONIC in
    # us, 0 when the kernel started. Under TCG all of it is many times a Pi's.
    local userspace started live finished
    userspace=$(systemctl show -p UserspaceTimestampMonotonic --value)
    finished=$(systemctl show -p FinishTimestampMonotonic --value)
    started=$(prop ExecMainStartTimestampMonotonic)
    live=$(prop ActiveEnterTimestampMonotonic)
    if ((live > 0 && started > 0)); then
        ok "boot to buttons live: READY=1 at $(us_s "$live") s after the kernel started (systemd from" \
           "$(us_s "$userspace") s; the daemon started at $(us_s "$started") s and was ready" \
           "$(us_s $((live - started))) s later; the boot finished at $(us_s "$finished") s; restarts $(prop NRestarts))"
        echo "$live $started $userspace $finished" > $S/boot-to-ready
    fi
    # The config sets no input.edges: by default the inputs' edges are the kernel's line events,
    # read by the daemon's own line requests (so the rounds below are decided on those).
    edges_from kernel
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

    # --- no puck looked for (checked around the SIGKILL restart, below)
    ls -l /proc/$pid/fd | grep -qE '/dev/(tty|pi-companion-puck)' \
        && fail "wind.source = gpio, yet the daemon has a serial device open: $(ls -l /proc/$pid/fd | grep /dev/tty)"
    lap "boot checks, security score"
}

# The play boot's header is a Pi 5's (the host boots it with systest.board=pi5): the gpio-sim
# chip is labelled pinctrl-rp1 with the RP1's 54 lines, /proc/cpuinfo says Raspberry Pi 5. The
# daemon must have found the chip by its label, and doctor must name it.
step_pi5() {
    CHECK="a Pi 5's header chip (pinctrl-rp1, 54 lines) found by its label"
    [[ $(cat /run/gpio-sim/board 2>/dev/null) == pi5 ]] || fail "this boot's header is not a Pi 5's: $(cat /run/gpio-sim/board 2>&1)"
    local chip said doctor
    chip=$(basename "$(cat /run/gpio-sim/sysfs)")
    said=$(journalctl -b -u $UNIT -o cat | grep -m1 'pins: the kernel' || true)
    [[ $said == *"/dev/$chip, label pinctrl-rp1"* ]] || fail "the daemon did not say it uses /dev/$chip labelled pinctrl-rp1: '$said'"
    # doctor as the daemon sees the board: the Pi 5's /proc/cpuinfo (gpiozero reads the model there).
    doctor=$(unshare --mount --propagation private sh -c \
        'mount --bind /run/gpio-sim/cpuinfo /proc/cpuinfo && exec "$0" doctor --config "$1"' "$PC" $CONFIG 2>&1 || true)
    grep -q "on /dev/$chip \"pinctrl-rp1\"" <<< "$doctor" || fail "doctor does not name the Pi 5's chip: $doctor"
    ok "Pi 5 header: '$said'; doctor: '$(grep -m1 -o "pin factory [^;]*\"pinctrl-rp1\"" <<< "$doctor")' ($(sed -n 's/^Model\s*: //p' /run/gpio-sim/cpuinfo) in the daemon's /proc/cpuinfo)"
    lap "Pi 5 header chip by its label, doctor"
}

# edges_from kernel|lgpio: who requested the input lines (the kernel's line info): the daemon's
# own line requests (consumer "pi-companion": its kernel edge reader, input.edges = "kernel") or
# lgpio's alerts (input.edges = "lgpio").
edges_from() {
    local held said
    held=$(drive consumers) || exit 1
    said=$(python3 - "$held" "$1" <<'PY'
import json, sys
held, want = json.loads(sys.argv[1]), sys.argv[2]
ours = sorted(n for n, c in held.items() if c == "pi-companion")
if want == "kernel" and len(ours) != len(held):
    sys.exit(f"input.edges = kernel, but not every input line is the daemon's own request: {held}")
if want == "lgpio" and ours:
    sys.exit(f"input.edges = lgpio, but the daemon requested {ours} itself: {held}")
print(f"{len(held)} input lines held by {sorted(set(held.values()))}")
PY
) || fail "$said"
    ok "edges from the $1: $said"
}

step_rounds() {
    CHECK="the kernel's edge timestamps decide the buzz"
    [[ $(field 'r["game"], r["phase"], r["grab_master"]') == 'grab-bag searching Red' ]] \
        || fail "fresh game: $(status_json)"
    round_checked P3 P2       # the higher-numbered line first
    round_checked P1 P2       # the lower-numbered line first
    [[ $(scores) == '{"Blue": 0, "Green": 1, "Red": 1, "Yellow": 0}' ]] || fail "scores: $(scores)"
    ok "judgements in $STATE/current.log, read back by pi-companion status: $(scores)"
    # More rounds, each as checked; each winner becomes the next Grab Master.
    for pair in "P4 P2" "P2 P3" "P3 P1" "P1 P4"; do
        # shellcheck disable=SC2086
        round_checked $pair
    done
    [[ $(scores) == '{"Blue": 1, "Green": 2, "Red": 2, "Yellow": 1}' ]] || fail "scores after six rounds: $(scores)"
    ok "six rounds played: $(scores)"
    lap "six rounds"
}

step_display() {
    CHECK="'display unavailable' said once, with its reason"
    # --- display absent: said once, with its reason, over at least two of its 5 s retries
    # (counted from the journal's own time of the line, not from a guess at how long is enough).
    local line t_line since pid
    # Once per daemon: an earlier step may have restarted it (step_ready runs its own), and each
    # start says it again, rightly; so the lines of the running daemon's own pid.
    pid=$(systemctl show -p MainPID --value $UNIT)
    line=$(journalctl -b _PID="$pid" -o short-monotonic | grep 'display unavailable' | head -n1)
    [[ -n $line ]] || fail "no 'display unavailable' in the journal"
    grep -qE 'display unavailable: .*(i2c|No such file)' <<< "$line" \
        || fail "'display unavailable' does not give the reason (the missing I2C bus): $line"
    t_line=$(sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p' <<< "$line")
    since=$(python3 -c "import sys; print(int(float(open('/proc/uptime').read().split()[0]) - float(sys.argv[1])))" "$t_line")
    ((since >= 11)) || sleep $((11 - since))
    said=$(journalctl -b _PID="$pid" -o cat | grep -c 'display unavailable')
    [[ $said == 1 ]] || fail "'display unavailable' said $said times over two retries by one daemon (pid $pid; want once)"
    ok "no I2C display: said once in $((since > 11 ? since : 11)) s (retries every 5 s), with its reason: '${line#*: }'"

}

step_puck() {
    CHECK="SIGKILL restarts with the same scores; wind.source = gpio never looks for a puck"
    local pid
    # --- a puck the daemon could find, put in place before the restart after SIGKILL: the
    # udev rule's name /dev/pi-companion-puck, here a plain file so that inotify sees every
    # open of it. A puck reader opens it at once at start (then every 0.5-2 s); the default
    # wind.source = "gpio" must never open it.
    grep -q '^source' $CONFIG && fail "the test config sets a wind source: the default is what is checked"
    : > /dev/pi-companion-puck && chmod 0666 /dev/pi-companion-puck
    [[ -f /dev/pi-companion-puck ]] || fail "could not make the stand-in puck /dev/pi-companion-puck"
    "$VENV/bin/python" $S/drive.py watch-open /dev/pi-companion-puck 900 > /root/puck-opens 2>&1 &
    local watcher=$!
    wait_for 60 "the puck watcher" grep -q watching /root/puck-opens

    # --- SIGKILL: systemd restarts it, the game resumes with the same scores
    local before restarts
    before=$(scores)
    restarts=$(prop NRestarts)
    pid=$(prop MainPID)
    kill -KILL "$pid"
    wait_for 60 "restart after SIGKILL" new_pid "$pid"
    [[ $(prop NRestarts) == $((restarts + 1)) ]] || fail "NRestarts $(prop NRestarts), expected $((restarts + 1))"
    [[ $(scores) == "$before" ]] || fail "scores after SIGKILL $(scores), before $before"
    round_checked P3 P4
    [[ $(field 'r["scores"]["Green"]') == $(($(python3 -c "import json; print(json.loads('$before')['Green'])") + 1)) ]] \
        || fail "the resumed game did not go on from the same scores: $(scores)"
    ok "SIGKILL: restarted by systemd (NRestarts $(prop NRestarts)); the game went on from $before to $(scores)"
    local up
    up=$(( $(cut -d. -f1 /proc/uptime) - $(prop ExecMainStartTimestampMonotonic) / 1000000 ))
    ((up >= 5)) || sleep $((5 - up))
    kill "$watcher" 2>/dev/null
    wait "$watcher" 2>/dev/null
    grep -q '^opened' /root/puck-opens \
        && fail "wind.source = gpio, yet the daemon opened /dev/pi-companion-puck: $(grep -c '^opened' /root/puck-opens) times"
    grep -q '^watching' /root/puck-opens || fail "the puck watcher failed: $(cat /root/puck-opens)"
    rm -f /dev/pi-companion-puck
    ok "wind.source = gpio: a findable puck (/dev/pi-companion-puck) never opened in the daemon's first $((up > 5 ? up : 5)) s after the restart, no serial device open"
    lap "SIGKILL, no puck"
}

step_hang() {
    CHECK="a hung loop in a live process is restarted by the watchdog"
    local pid before
    # --- a hung loop in a live process: the watchdog kills and restarts it. The test drop-in
    # sets PI_COMPANION_DEBUG_HANG=1 (never the shipped unit): SIGUSR2 then blocks the box loop
    # thread for ever while the process and its other threads live on. Only a watchdog fed by
    # the loop stops; systemd must say "Watchdog timeout" and start a new process.
    local wd rs t_hang elapsed limit
    wd=$(($(prop WatchdogUSec | sed 's/s$//')))
    rs=$(($(prop RestartUSec | sed 's/ms$//;s/s$//')))
    # The bound says the watchdog acted, not how precisely: a hung loop is never restarted at
    # all without it. 15 s of slack for a loaded host's timers and systemctl calls under TCG.
    limit=$((wd + rs + 15))
    before=$(scores)
    pid=$(prop MainPID)
    t_hang=$(date +%s.%N)
    kill -USR2 "$pid"
    sleep 2
    kill -0 "$pid" 2>/dev/null && [[ $(prop MainPID) == "$pid" ]] \
        || fail "SIGUSR2 ended the daemon instead of hanging its loop (is PI_COMPANION_DEBUG_HANG=1 set?)"
    journalctl -b -u $UNIT -o cat | grep -q 'the box loop hangs' || fail "the daemon did not say its loop hangs"
    wait_for $((limit + 30)) "restart after the hung loop" restarted "$pid"
    elapsed=$(python3 -c "import time; print(f'{time.time() - $t_hang:.1f}')")
    wait_for 90 "active after the watchdog restart" active
    journalctl -b -u $UNIT -o cat | grep -q 'Watchdog timeout' || fail "no watchdog timeout in the journal"
    python3 -c "import sys; sys.exit(not $elapsed <= $limit)" || fail "watchdog restart took $elapsed s (limit $limit s)"
    [[ $(scores) == "$before" ]] || fail "scores after the watchdog restart: $(scores), before $before"
    ok "hung loop, live process: watchdog timeout, restarted after $elapsed s (WatchdogSec $wd s + RestartSec $rs s; limit $limit s)"
    lap "hung loop (watchdog)"
}

step_badconfig() {
    CHECK="a bad config exits 78, no restart loop, the key named"
    # --- a broken config: exit 78 and no restart loop
    local rs restarts before
    rs=$(($(prop RestartUSec | sed 's/ms$//;s/s$//')))
    before=$(scores)
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
}

step_ready() {
    CHECK="READY=1 only once every configured line is requested"
    # The lines the running daemon holds (the kernel's line info), then the daemon started again
    # as a transient unit (its user, groups and /proc/cpuinfo as the unit gives them) whose
    # NOTIFY_SOCKET is the test's, with a full queue: its READY=1 blocks in sendto() until the
    # test reads it, so the kernel's line info at that moment is the daemon's state at READY.
    local steady ready pins said
    steady=$(drive lines) || exit 1
    systemctl stop $UNIT
    ready=$(drive ready $CONFIG) || exit 1
    pins=$("$VENV/bin/python" -c 'import json; from pi_companion.hw.pinmap import load_pinmap; print(json.dumps(load_pinmap()))')
    said=$(python3 - "$steady" "$ready" "$pins" 2>&1 <<'PY'
import json, sys
steady, ready, pins = (json.loads(a) for a in sys.argv[1:4])
steady = {int(k): v for k, v in steady.items()}
at_ready = {int(k): v for k, v in ready["at_ready"].items()}
later = {int(k): v for k, v in ready["a_second_later"].items()}
buttons = {name: pins[name] for name in ("P1", "P2", "P3", "P4", "YES", "NO", "MENU")}
missing = {n: l for n, l in buttons.items() if l not in steady}
if missing:
    sys.exit(f"the running daemon does not hold the lines of {missing}: {steady}")
late = sorted(set(steady) - set(at_ready))
if late:
    sys.exit(f"READY=1 was sent before lines {late} were requested (requested at READY: {sorted(at_ready)})")
if later != at_ready:
    sys.exit(f"lines changed after READY=1: {sorted(at_ready)} -> {sorted(later)}")
print(f"all {len(steady)} lines the daemon holds were requested when READY=1 was sent "
      f"(consumer {sorted(set(at_ready.values()))}; held {ready['held_s']:.1f} s in sendto() "
      f"behind {ready['filled']} datagrams, {ready['start_s']:.1f} s after the start)")
PY
) || fail "$said"
    ok "$said"
    systemctl start $UNIT || fail "start after the READY check"
    lap "READY=1 against the kernel's line info"
}

# Idle on the real kernel (#27 item 2): the installed daemon and the big screen's process as
# their units run them, the web on, measured from /proc over IDLE_S seconds with the inputs'
# edges from the kernel's line events, and, where the venv can import lgpio (none in the trixie
# image: trixie packages no python3-lgpio, and the install needs none), once more from lgpio's
# alerts in the same boot, side by side (docs/performance.md, section 4). The claim checked:
# with the kernel's line events no thread of the daemon waits in poll/ppoll and wakes more
# than twice a second (a poller). That the measurement sees a poller at all is proven by the
# breakage edges-poll (make system-test BREAK=edges-poll), and by lgpio's alert thread when
# lgpio is there. (lgpio's own output thread sleeps in clock_nanosleep 50 times a second: it is
# reported, not judged here.)
IDLE_S=${IDLE_S:-60}
IDLE_SETTLE_S=20
step_idle() {
    CHECK="idle: with the kernel's pins no thread of the daemon polls and the box wakes at most twice a second"
    local mode modes=kernel dpid wpid said
    "$VENV/bin/python" -c 'import lgpio' 2>/dev/null && modes="lgpio kernel"
    cp $CONFIG /root/config.idle
    for mode in $modes; do
        # The display as a box's works (luma's dummy device): the VM has no OLED, and a missing
        # one is retried every 5 s (step_display checks that), which a real box does not do.
        { cat /root/config.idle; printf '\n[input]\nedges = "%s"\n\n[display]\ndriver = "dummy"\n' $mode; } > $CONFIG
        "$PC" config check $CONFIG >/dev/null || fail "the config with input.edges = $mode"
        systemctl restart $UNIT || fail "restart with input.edges = $mode"
        wait_for 120 "$UNIT active with input.edges = $mode" active
        edges_from $mode
        wait_for 60 "$WEB_UNIT active (the idle is measured with the web on)" systemctl is-active --quiet $WEB_UNIT
        sleep $IDLE_SETTLE_S                  # the start's own work done, the web reconnected
        dpid=$(prop MainPID)
        wpid=$(systemctl show -p MainPID --value $WEB_UNIT)
        drive idle "$IDLE_S" "$dpid" "$wpid" > /root/idle-$mode.json || exit 1
        printf '{"mode": "%s", "daemon": "%s", "web": "%s"}\n' $mode "$dpid" "$wpid" > /root/idle-$mode.pids
        ok "idle with input.edges = $mode measured over $IDLE_S s"
    done
    cp /root/config.idle $CONFIG
    systemctl restart $UNIT || fail "restart with the test config"
    wait_for 120 "$UNIT active after the idle step" active
    said=$(python3 - $(for mode in $modes; do echo /root/idle-$mode; done) <<'PY' 2>&1
import json, sys
WAKE_MAX = 2.0               # lgpio's chip thread alone is 50/s; beats to a web process nobody watches 4.7/s
rows, pollers = [], {}
for base in sys.argv[1:]:
    pids, m = json.load(open(base + ".pids")), json.load(open(base + ".json"))
    d, w = m[pids["daemon"]], m[pids["web"]]
    box_cpu, box_wake = d["cpu_pct"] + w["cpu_pct"], d["wakeups_per_s"] + w["wakeups_per_s"]
    goal = "met" if box_cpu <= 0.05 and box_wake <= 0.5 else "not met"
    rows.append(f"edges {pids['mode']:6}: whole box {box_cpu:.4f} % of a core, {box_wake:.2f} wake-ups/s "
                f"(goal <= 0.05 %, <= 0.5/s: {goal}); daemon {d['cpu_pct']:.4f} % "
                f"(ticks {d['cpu_pct_ticks']:.3f} %), {d['wakeups_per_s']:.2f}/s in {d['threads']} threads "
                f"[{'; '.join(d['busiest'])}]; web {w['cpu_pct']:.4f} %, {w['wakeups_per_s']:.2f}/s "
                f"[{'; '.join(w['busiest'][:2])}]; {m['seconds']:.0f} s, load {' '.join(m['load'])}")
    pollers[pids["mode"]] = d["pollers"]
if box_wake > WAKE_MAX:      # the kernel run's (the last): a timer of ours that wakes while idle
    sys.exit(f"with the kernel's line events the idle box woke {box_wake:.2f} times a second "
             f"(at most {WAKE_MAX} allowed here: the watchdog's ping every 5 s, the web's "
             f"address check every minute, and what emulation adds)\n    " + "\n    ".join(rows))
if pollers["kernel"]:
    sys.exit(f"with the kernel's line events a thread of the daemon polls while idle: "
             f"{'; '.join(pollers['kernel'])}\n    " + "\n    ".join(rows))
if "lgpio" in pollers and not pollers["lgpio"]:
    sys.exit("lgpio's alert thread was not seen polling: the measurement is blind\n    " + "\n    ".join(rows))
lgpio = f"lgpio {'; '.join(pollers['lgpio'])}; " if "lgpio" in pollers else ""
print("\n    ".join(rows) + f"\n    pollers: {lgpio}kernel none")
PY
) || fail "$said"
    ok "idle on the real kernel, the web on (edges from: $modes; /proc schedstat and context switches):
    $said"
    cp /root/idle-*.json /root/idle-*.pids $S/ 2>/dev/null
    lap "idle ($modes)"
}

# dm-delay: the state directory on a device-mapper `delay` target that holds every write and
# flush for SLOW_MS, the way a slow microSD card's sync does. The winner's lamp is lit at the
# decision, before the press record is durable, so it must not move by the delay; a judgement
# (YES) is shown only once durable, so its acknowledgement must move by it (the delay is real).
SLOW_MS=100
step_slowsync() {
    CHECK="the winner's lamp does not wait for the SD card (dm-delay ${SLOW_MS} ms on every sync)"
    local n=${SLOW_ROUNDS:-12} loop sectors dev mnt=/var/tmp/slow-mnt said sync_ms
    # Each series ends with P3 (Green) as the Grab Master, as the rounds before it left the game
    # (the test config deals 60 cards: 7 rounds before, then 2 series, must not end the game).
    drive series "$n" "$(prop MainPID)" P3 > /root/lat-plain.json || exit 1
    modprobe loop && modprobe dm-delay || fail "no loop or dm-delay module"
    truncate -s 96M /var/tmp/slow.img
    loop=$(losetup -f --show /var/tmp/slow.img) || fail "losetup"
    sectors=$(blockdev --getsz "$loop")
    # No udev sync (the test image has no device-mapper rules to wake dmsetup): the kernel's
    # devtmpfs gives the device its /dev/dm-N node.
    dmsetup create --noudevsync pc-slow --table "0 $sectors delay $loop 0 0 $loop 0 $SLOW_MS" \
        || fail "dmsetup create (delay target)"
    dev=/dev/$(dmsetup info -c --noheadings -o blkdevname pc-slow)
    wait_for 30 "$dev" test -b "$dev"
    mkfs.ext4 -q -E nodiscard "$dev" || fail "mkfs on the delayed device"
    # The big screen's unit reads the state directory: stopped meanwhile, so that nothing holds
    # the mounts below.
    systemctl stop $WEB_UNIT $UNIT
    mkdir -p $mnt && mount "$dev" $mnt && rmdir $mnt/lost+found || fail "mount the delayed device"
    cp -a $STATE/. $mnt/ && chown --reference=$STATE $mnt && chmod --reference=$STATE $mnt || fail "copy the state"
    umount $mnt && mount "$dev" $STATE || fail "mount the delayed device on $STATE"
    sync_ms=$(python3 -c '
import os, sys, time
fd = os.open(sys.argv[1] + "/.probe", os.O_WRONLY | os.O_CREAT, 0o600)
os.write(fd, b"x"); os.fsync(fd)
os.write(fd, b"y"); t = time.monotonic(); os.fdatasync(fd); print(f"{(time.monotonic() - t) * 1000:.0f}")
os.close(fd); os.unlink(sys.argv[1] + "/.probe")' $STATE)
    ((sync_ms >= SLOW_MS)) || fail "an fdatasync on the delayed device took $sync_ms ms, not >= $SLOW_MS"
    systemctl start $UNIT || fail "start on the delayed state directory"
    drive series "$n" "$(prop MainPID)" P3 > /root/lat-slow.json || exit 1
    systemctl stop $UNIT
    # Back onto the real disk (the next boot has no such device) with what was played meanwhile.
    umount $STATE && mount "$dev" $mnt && cp -a $mnt/. $STATE/ && umount $mnt || fail "copy the state back"
    dmsetup remove pc-slow; losetup -d "$loop"; rm -f /var/tmp/slow.img
    systemctl start $UNIT $WEB_UNIT || fail "start after the delayed device"
    said=$(python3 - /root/lat-plain.json /root/lat-slow.json $SLOW_MS 2>&1 <<'PY'
import json, sys
plain, slow = (json.load(open(f)) for f in sys.argv[1:3])
delay = int(sys.argv[3])
def q(rows, key, p):
    v = sorted(r[key] for r in rows)
    return v[min(len(v) - 1, int(p * len(v)))]
lp, ls = q(plain, "cont_to_decision_ms", 0.99), q(slow, "cont_to_decision_ms", 0.99)
mp, ms = q(plain, "cont_to_decision_ms", 0.5), q(slow, "cont_to_decision_ms", 0.5)
ap, as_ = q(plain, "yes_to_ack_ms", 0.5), q(slow, "yes_to_ack_ms", 0.5)
said = (f"lamp at the decision p50 {mp:.1f} -> {ms:.1f} ms, p99 {lp:.1f} -> {ls:.1f} ms "
        f"(moved {ls - lp:+.1f} ms at p99); YES -> acknowledged p50 {ap:.1f} -> {as_:.1f} ms; n={len(plain)}+{len(slow)}")
# Under TCG, with the host loaded, 12 rounds' p50 moved by up to 44 ms and their p99 (their
# worst) by up to 100 ms (one full run failed on a p99 bound of half the delay, and its rerun moved
# -117 ms) without the lamp waiting. A lamp that waits for a sync moves every round by a whole
# fdatasync, which on this device is at least twice the delay (the write and the flush are each
# delayed): the bounds say the lamp did not wait, the acknowledgement did (the delay is real).
if ms - mp > delay or ls - lp > 2 * delay:
    sys.exit(f"the winner's lamp waits for the sync: {said}")
if as_ - ap < delay * 0.8:
    sys.exit(f"the delay did not reach the judgements (is the state on the delayed device?): {said}")
print(said)
PY
) || fail "$said"
    ok "dm-delay ${SLOW_MS} ms on every write and flush under $STATE (an fdatasync took $sync_ms ms): $said"
    cp /root/lat-plain.json $S/slowsync-plain.json; cp /root/lat-slow.json $S/slowsync-slow.json
    lap "dm-delay: the lamp against a slow sync"
}

# The quick stage (make system-test BREAK=NAME): one boot, make install once, then only the
# steps named in /systest/steps (a breakage's own), then the runner's clean power-off.
stage_quick() {
    install_box
    wait_for 120 "$UNIT active after make install" active
    : > $S/latency.jsonl
    local step
    for step in $(cat $S/steps); do
        # A misspelt step must not pass as a step that ran (bash would only say "command not
        # found" and go on).
        declare -F "step_$step" >/dev/null || fail "no such step: $step (steps: $(declare -F | sed -n 's/^declare -f step_//p' | xargs))"
        ok "step $step"
        "step_$step"
    done
}

# The Debian package's checks (upgrade.sh) on their own: make system-test BREAK=postinst-waits
step_package() {
    # shellcheck source=tests/system/guest/upgrade.sh
    source $S/upgrade.sh
    step_upgrade
}

stage_play() {
    wait_for 120 "$UNIT active after boot" active
    ok "after boot: $UNIT active at uptime $(cut -d' ' -f1 /proc/uptime) s"
    : > $S/latency.jsonl
    step_boot
    step_pi5
    step_ready
    step_rounds
    step_display
    step_puck
    step_hang
    step_badconfig
    step_idle
    step_slowsync

    # --- a game in progress for the host's hard power-off: judgements acknowledged by the lamps
    round_checked P4 P1
    round_checked P2 P1
    scores > $S/acked-scores
    ok "acknowledged before the power cut: $(cat $S/acked-scores)"
    lap "two rounds before the power cut"
    boot_report
    touch $S/cut-power-now          # the host kills QEMU when it sees this
    sleep 600
    fail "the host did not cut the power"
}

# The big screen as its own user (issue: the web process must not be able to act as the
# daemon). Its unit started at boot; from its user (setpriv with the unit's user and groups):
# no signal to the daemon, no power-off, nothing of the state directory but history/; its
# pages load from the host, through QEMU's user network, on the VM's address.
web_checks() {
    wait_for 90 "$WEB_UNIT active after boot" systemctl is-active --quiet $WEB_UNIT
    local wpid dpid out groups
    wpid=$(systemctl show -p MainPID --value $WEB_UNIT)
    dpid=$(prop MainPID)
    [[ $(ps -o user= -p "$wpid") == "$WEB_USER" ]] || fail "$WEB_UNIT runs as $(ps -o user= -p "$wpid")"
    groups=$(sed -n 's/^Groups:\s*//p' /proc/$wpid/status | xargs -n1 getent group | cut -d: -f1 | sort | xargs)
    # The unit's group is the daemon's; the kernel's list may hold the user's own group too; no
    # device group, nothing else.
    [[ $groups == "pi-companion" || $groups == "pi-companion pi-companion-web" ]] \
        || fail "$WEB_UNIT's groups: '$groups' (want pi-companion, and its own at most)"
    ok "$WEB_UNIT active since boot as $WEB_USER, supplementary groups: $groups"

    # A new finished game in history/, as the daemon moves one there (GameLog, the daemon's
    # own code, as its user and umask; the daemon stopped meanwhile): the pages must show it.
    systemctl stop $UNIT
    setpriv --reuid=pi-companion --regid=pi-companion --init-groups -- sh -c 'umask 077; exec "$@"' sh \
        "$VENV/bin/python" -c 'import sys; from pi_companion.gamelog import GameLog
g = GameLog(sys.argv[1]); g.start({"game": "grab-bag", "players": ["Red", "Blue", "Green", "Yellow"], "options": {}, "seed": 8}); g.close()' $STATE \
        || fail "could not start a new game log as the daemon would"
    systemctl start $UNIT || fail "start after the new game"
    dpid=$(prop MainPID)
    ls $STATE/history/*.log >/dev/null 2>&1 || fail "no finished game in $STATE/history"

    if out=$(as_web kill -0 "$dpid" 2>&1); then fail "$WEB_USER can signal the daemon (pid $dpid)"; fi
    grep -q 'Operation not permitted' <<< "$out" || fail "kill from $WEB_USER failed, but not for want of permission: $out"
    as_web kill -STOP "$dpid" 2>/dev/null && fail "$WEB_USER could SIGSTOP the daemon"
    ok "$WEB_USER cannot signal the daemon: '$out'"
    if out=$(as_web systemctl poweroff 2>&1); then fail "$WEB_USER could run systemctl poweroff"; fi
    grep -q 'Interactive authentication required' <<< "$out" || fail "systemctl poweroff refused, but not by polkit: $out"
    if out=$(as_web busctl call --system org.freedesktop.login1 /org/freedesktop/login1 \
            org.freedesktop.login1.Manager PowerOff b false 2>&1); then
        fail "$WEB_USER could call logind's PowerOff"
    fi
    grep -q 'Interactive authentication required' <<< "$out" || fail "PowerOff refused, but not by polkit: $out"
    polkit_says $WEB_USER no
    polkit_says pi-companion yes
    ok "$WEB_USER cannot power off: systemctl poweroff and logind's PowerOff refused by polkit ('$out'); pkcheck: $WEB_USER no, pi-companion yes"

    [[ -s $STATE/host-token && -s $STATE/current.log ]] || fail "no host-token or current.log to keep from $WEB_USER"
    as_web ls $STATE >/dev/null 2>&1 && fail "$WEB_USER can list $STATE"
    as_web cat $STATE/current.log >/dev/null 2>&1 && fail "$WEB_USER can read the current game's log"
    as_web cat $STATE/host-token >/dev/null 2>&1 && fail "$WEB_USER can read the host token"
    as_web ls /run/pi-companion >/dev/null 2>&1 && fail "$WEB_USER can list /run/pi-companion"
    as_web sh -c "cat $STATE/history/*.log" >/dev/null || fail "$WEB_USER cannot read history/"
    out=$(find $STATE /run/pi-companion ! -user pi-companion)
    [[ -z $out ]] || fail "files in the daemon's directories not the daemon user's: $out"
    ok "$WEB_USER reads $STATE/history/ ($(ls $STATE/history | wc -l) games) and nothing else there: no listing, no current.log, no host-token; every file there is pi-companion's"
    lap "the big screen's user: signal, power-off, state directory"

    # The pages, from the host, on the VM's address (10.0.2.15:8080; QEMU forwards a host port).
    systemctl start systemd-networkd
    wait_for 60 "the VM's address 10.0.2.15" python3 -c 'import socket; socket.socket().bind(("10.0.2.15", 0))'
    touch $S/web-ready
    local end=$(($(date +%s) + 120))
    until [[ -e $S/web-checked ]]; do
        (($(date +%s) < end)) || fail "the host did not check the pages within 120 s"
        sleep 0.5
    done
    [[ $(cat $S/web-checked) == ok* ]] || fail "the pages from the host: $(cat $S/web-checked)"
    ok "pages from the host on the VM's address: $(cat $S/web-checked)"
    lap "pages on the VM's address"
}

stage_resume() {
    wait_for 120 "$UNIT active after the power cut" active
    local acked
    acked=$(cat $S/acked-scores)
    [[ $(scores) == "$acked" ]] || fail "after the power cut: $(scores); acknowledged $acked"
    journalctl -b -u $UNIT -o cat | grep -q 'resumed grab-bag' || fail "the daemon did not say it resumed"
    ok "after the hard power-off: the game resumed with every acknowledged judgement: $acked"

    lap "resume checked"
    web_checks

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
    drive round P3 P4 "$(prop MainPID)" > /dev/null || exit 1
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
    # shellcheck source=tests/system/guest/upgrade.sh
    source $S/upgrade.sh
    step_upgrade
    boot_report
}

echo "== stage $STAGE (uptime $T0 s)"
printf '%s: boot to the stage runner %s\n' "$STAGE" "$T0" >> $S/times
"stage_$STAGE"
echo "== stage $STAGE passed (uptime $(cut -d' ' -f1 /proc/uptime) s)"
