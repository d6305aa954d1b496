# shellcheck shell=bash
# The Debian package's life on a box, sourced by stages.sh at the end of stage resume: after
# make uninstall, since a make install's units in /etc would shadow the package's. The game in
# progress, the config and the history are the ones the stages before left.
#   upgrade   the previous release's package (S/debs/old: 0.1.0's code and units, built by
#             run.sh, which says from what), on a state of its own: a finished game in history/
#             and a game in progress, both written by it, a round played; then the new package
#             over it: the daemon restarts and resumes the same game (every field of the old
#             status --json the same, and NO held undoes the round played on the previous
#             release); history and config untouched
#   remove    the units and the venv go; /etc/pi-companion and /var/lib/pi-companion stay
#   purge     both go
#   card      the previous release again, the new package and its .sha256 in the boot
#             partition's stand-in: the update unit (started as at boot) installs it without
#             hanging on the daemon's restart, moves it aside, and the daemon shows the result

# snapshot: the game as status --json reports it, one line (sorted keys), but for the count of
# logged inputs: a resumed daemon logs one Resume record (buttons released, timers stopped)
snapshot() {
    status_json | python3 -c 'import json, sys; r = json.load(sys.stdin); r.pop("logged_inputs"); print(json.dumps(r, sort_keys=True))'
}
# same_game BEFORE AFTER: every field of the older version's report has the same value in the
# newer one's (which may add fields: it prints their names); else says what changed
same_game() {
    python3 -c 'import json, sys
before, after = json.loads(sys.argv[1]), json.loads(sys.argv[2])
changed = {k: (v, after.get(k, "(gone)")) for k, v in before.items() if after.get(k, "(gone)") != v}
if changed:
    sys.exit("the game changed across the upgrade: " + "; ".join(f"{k}: {a} -> {b}" for k, (a, b) in sorted(changed.items())))
print(" ".join(sorted(set(after) - set(before))) or "none")' "$1" "$2"
}
# tree_sums DIR...: every file's SHA-256 under DIR
tree_sums() { find "$@" -type f -print0 | sort -z | xargs -0 -r sha256sum; }
installed_version() { dpkg-query -W -f '${db:Status-Status} ${Version}' pi-companion 2>/dev/null; }

step_upgrade() {
    local old new old_v new_v pid seeker before_round before after kept
    old=$(ls $S/debs/old/*.deb) && new=$(ls $S/debs/new/*.deb) || fail "no packages from the host"
    old_v=$(dpkg-deb -f "$old" Version) new_v=$(dpkg-deb -f "$new" Version)
    CHECK="upgrade $old_v -> $new_v mid-game"
    if [[ -e /etc/systemd/system/$UNIT ]]; then      # a make install's units would shadow the package's
        (cd /root/pi-companion && make uninstall) >/root/uninstall.log 2>&1 || fail "make uninstall"
    fi
    systemctl stop $WEB_UNIT $UNIT 2>/dev/null
    # The previous release starts as on a box that only ever ran it: the state the stages before
    # left was written by this checkout, so it goes (the config stays: it is the test's).
    rm -rf /root/state-before-upgrade && mv $STATE /root/state-before-upgrade
    # --force-confold: the config make install left is the administrator's, kept as it is
    dpkg --force-confold -i "$old" >/root/dpkg-old.log 2>&1 || { tail -n 20 /root/dpkg-old.log; fail "dpkg -i $old"; }
    [[ $(installed_version) == "installed $old_v" ]] || fail "dpkg says $(installed_version)"
    [[ $(prop FragmentPath) == /usr/lib/systemd/system/$UNIT ]] || fail "not the package's unit: $(prop FragmentPath)"
    wait_for 120 "$UNIT active on $old_v" active
    [[ $("$PC" --version) == *" $old_v"* ]] || fail "--version says $("$PC" --version), not $old_v"
    # A finished game in history/, moved there by the previous release's own code (GameLog, as
    # the daemon's user and umask, the daemon stopped), then a new game in progress.
    systemctl stop $UNIT
    setpriv --reuid=pi-companion --regid=pi-companion --init-groups -- sh -c 'umask 077; exec "$@"' sh \
        "$VENV/bin/python" -c 'import sys; from pi_companion.gamelog import GameLog
g = GameLog(sys.argv[1]); g.start({"game": "grab-bag", "players": ["Red", "Blue", "Green", "Yellow"], "options": {}, "seed": 8}); g.close()' $STATE \
        || fail "could not start a new game log with $old_v's GameLog"
    ls $STATE/history/*.log >/dev/null 2>&1 || fail "$old_v moved no finished game to $STATE/history"
    systemctl start $UNIT || fail "start $old_v after the new game"
    wait_for 120 "$UNIT active on $old_v" active
    seeker=$(drive lamps) || exit 1
    seeker=${seeker%% *}
    before_round=$(scores)
    drive series 1 "$(prop MainPID)" "$seeker" >/dev/null || exit 1
    wait_for 10 "the round on $old_v logged" eval '[[ $(scores) != "$before_round" ]]'
    before=$(snapshot)
    [[ $(scores) != "$before_round" ]] || fail "the round on $old_v changed no score: $before_round"
    kept=$(tree_sums $STATE/history; sha256sum $CONFIG)
    pid=$(prop MainPID)
    dpkg --force-confold -i "$new" >/root/dpkg-new.log 2>&1 || { tail -n 20 /root/dpkg-new.log; fail "dpkg -i $new"; }
    [[ $(installed_version) == "installed $new_v" ]] || fail "dpkg says $(installed_version)"
    wait_for 120 "$UNIT restarted on $new_v" new_pid "$pid"
    [[ $("$PC" --version) == *" $new_v"* ]] || fail "--version says $("$PC" --version), not $new_v"
    journalctl -b _SYSTEMD_INVOCATION_ID="$(prop InvocationID)" -o cat | grep -q 'resumed grab-bag' \
        || fail "the daemon on $new_v did not say it resumed"
    after=$(snapshot)
    local added
    added=$(same_game "$before" "$after" 2>&1) || fail "$added"
    [[ $(tree_sums $STATE/history; sha256sum $CONFIG) == "$kept" ]] || fail "the upgrade changed the history or the config"
    drive hold NO 1.5 || exit 1
    wait_for 10 "NO held on $new_v undoes the round played on $old_v (scores $before_round)" \
        eval '[[ $(scores) == "$before_round" ]]'
    ok "upgrade $old_v ($(cat $S/debs/old/from)) -> $new_v mid-game: the daemon restarted, resumed the same game (every field of $old_v's status the same; $new_v adds: $added; $(scores) after NO held), $old_v's history and the config untouched"
    lap "upgrade mid-game"

    CHECK="remove keeps the state"
    systemctl stop $WEB_UNIT $UNIT
    kept=$(tree_sums $STATE /etc/pi-companion)
    dpkg -r pi-companion >/root/dpkg-remove.log 2>&1 || { tail -n 20 /root/dpkg-remove.log; fail "dpkg -r"; }
    [[ $(prop LoadState) == not-found ]] || fail "unit still loaded after remove: $(prop LoadState)"
    [[ ! -e $VENV ]] || fail "$VENV left behind"
    [[ $(installed_version) == "config-files $new_v" ]] || fail "dpkg says $(installed_version)"
    [[ $(tree_sums $STATE /etc/pi-companion) == "$kept" ]] || fail "remove changed $STATE or /etc/pi-companion"
    ok "dpkg -r: units and venv gone; $STATE and /etc/pi-companion kept byte for byte"
    CHECK="purge deletes the state"
    dpkg -P pi-companion >/root/dpkg-purge.log 2>&1 || { tail -n 20 /root/dpkg-purge.log; fail "dpkg -P"; }
    [[ ! -e $STATE && ! -e /etc/pi-companion ]] || fail "purge left $(ls -d $STATE /etc/pi-companion 2>/dev/null)"
    [[ -z $(installed_version) || $(installed_version) == not-installed* ]] || fail "dpkg says $(installed_version)"
    ok "dpkg -P: $STATE and /etc/pi-companion gone"
    lap "remove, purge"

    CHECK="update from the card"
    local card=/boot/firmware/pi-companion-update
    dpkg -i "$old" >/root/dpkg-old-2.log 2>&1 || { tail -n 20 /root/dpkg-old-2.log; fail "dpkg -i $old"; }
    wait_for 120 "$UNIT active on $old_v" active
    pid=$(prop MainPID)
    mkdir -p $card
    cp "$new" $card/
    (cd $card && sha256sum "$(basename -- "$new")" >"$(basename -- "$new").sha256")
    # As at boot: the daemon ordered after the unit, whose dpkg restarts it (queued, not waited
    # for: waiting would hang until the unit's timeout).
    local t=$SECONDS
    timeout 300 systemctl start pi-companion-update.service \
        || fail "pi-companion-update.service did not finish within 300 s (rc $?): $(journalctl -b -u pi-companion-update -o cat | tail -n 5)"
    wait_for 120 "$UNIT restarted on $new_v" new_pid "$pid"
    [[ $(installed_version) == "installed $new_v" ]] || fail "dpkg says $(installed_version)"
    [[ -e $card/done/$(basename -- "$new") && ! -e $card/$(basename -- "$new") ]] || fail "the package was not moved aside: $(ls -R $card)"
    wait_for 30 "the daemon showed the update" grep -qx "updated to $new_v" $STATE/update-result.seen
    journalctl -b -u $UNIT -o cat | grep -q "updated to $new_v" || fail "the daemon did not say 'updated to $new_v'"
    local said
    said=$("$PC" doctor --config $CONFIG 2>&1)      # its other rows may FAIL on the VM: not ours
    grep -q "update   updated to $new_v" <<<"$said" || fail "doctor does not show the update: $said"
    ok "update from the card: $new_v installed by the unit in $((SECONDS - t)) s (no wait on the daemon's restart), moved to done/, 'updated to $new_v' shown by the daemon and doctor"
    dpkg -P pi-companion >/dev/null 2>&1 || fail "dpkg -P after the card's update"
    lap "update from the card"
}
