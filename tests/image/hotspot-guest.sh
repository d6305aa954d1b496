#!/bin/sh
# Runs inside the booted image under make image-test's hotspot boot (tests/image/hotspot-test.sh,
# qemu-system-aarch64 -M virt with no network card), started by systemd.run= from the test's
# copy of the FAT partition. Three simulated radios (mac80211_hwsim): the first is the box's,
# the second is a phone's, moved into a network namespace of its own, the third the home
# network's, in another. The box must open its hotspot by itself (nothing here creates or starts
# it); the phone then joins it as a phone does: WPA2 password, DHCP, NAME.local by mDNS, the big
# screen's page and live snapshot. Last, the home network's access point starts and the box's
# network starts again: it must join the home network (the card's [wifi]), not the hotspot.
#
# Every line it prints starts with "HOTSPOT-TEST:" and goes to the serial console, where
# hotspot-test.sh reads it and decides; this script only reports. It goes on after a failed
# step where it can, and always ends with "HOTSPOT-TEST: DONE" (dash: no pipefail, and no -e,
# so that one failure still leaves the report whole).
set -u
exec >/dev/console 2>&1
say() { echo "HOTSPOT-TEST: $*"; }
now() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}'; }
# Waits are by the clock (each try's nmcli or wpa_cli takes a while under TCG): "until" gives
# the uptime N s from now, "within" says whether that time is still ahead.
until_() { awk -v a="$(now)" -v n="$1" 'BEGIN {printf "%.1f", a + n}'; }
within() { awk -v d="$1" -v b="$(now)" 'BEGIN {exit !(b < d)}'; }
HERE=/boot/firmware
SSID=games-table
PSK=tabletop-2026
NAME=games-table.local
PROFILE=pi-companion-hotspot
BOX_MAC=02:00:00:00:00:00      # mac80211_hwsim's radio N has the address 02:00:00:00:0N:00
PHONE_MAC=02:00:00:00:01:00
HOME_MAC=02:00:00:00:02:00     # the home network's access point (phase 8)
HOME_SSID=home-net
HOME_PSK=home-password-1
KNOWN=pi-companion-wifi
RUN=/run/hotspot-test
mock_since=0
mkdir -p "$RUN"
phone() { ip netns exec phone python3 "$HERE/phone.py" "$@"; }
finish() {
    journalctl -b -u pi-companion.service --no-pager -o cat | sed 's/^/HOTSPOT-TEST: daemon| /'
    journalctl -b -u NetworkManager.service --no-pager -o cat | grep -iE 'hotspot|wlan|dnsmasq|shared|error|warn' \
        | tail -60 | sed 's/^/HOTSPOT-TEST: nm| /'
    journalctl -b -u pi-companion-setup.service --no-pager -o cat | sed 's/^/HOTSPOT-TEST: setup| /'
    say "failed units: $(systemctl list-units --failed --plain --no-legend | awk '{print $1}' | tr '\n' ' ')"
    say "daemon at end $(systemctl show -p ActiveState --value pi-companion.service)/$(systemctl show -p SubState --value pi-companion.service) (restarts $(systemctl show -p NRestarts --value pi-companion.service))"
    say "multi-user.target reached at $(systemctl show -p ActiveEnterTimestampMonotonic --value multi-user.target | awk '{printf "%.1f", $1 / 1e6}') s"
    journalctl -b -p err --no-pager --no-hostname -o short-monotonic | sed 's/^/HOTSPOT-TEST: err| /'
    journalctl -b -p err --since "@$mock_since" --no-pager --no-hostname -o short-monotonic \
        | sed 's/^/HOTSPOT-TEST: err since mock| /'
    say "DONE at $(now) s"
    exit 0
}
say "boot reached $(now) s"

# 1. The daemon on gpiozero's mock pins. -M virt has no Pi GPIO controller: with the unit's
# lgpio the daemon cannot start. The raspi3b boot (boot-test.sh) proves the GPIO lines; this
# boot proves the network, so a runtime drop-in (in /run: gone at the next start) swaps the pin
# factory and nothing else.
mkdir -p /run/systemd/system/pi-companion.service.d
cat >/run/systemd/system/pi-companion.service.d/hotspot-test.conf <<'EOF'
[Service]
Environment=GPIOZERO_PIN_FACTORY=mock GPIOZERO_MOCK_PIN_CLASS=mockpwmpin
EOF
systemctl daemon-reload
# Stopped first: its start on lgpio may fail by itself meanwhile (no GPIO here), and that error
# is older than the journal's "since mock" window, which begins a second after the stop.
systemctl stop pi-companion.service
sleep 1
mock_since=$(date +%s)
systemctl reset-failed pi-companion.service 2>/dev/null
systemctl start --no-block pi-companion.service
end=$(until_ 600) state=unknown
while within "$end"; do
    state=$(systemctl show -p ActiveState --value pi-companion.service)/$(systemctl show -p SubState --value pi-companion.service)
    [ "$state" = active/running ] && break
    sleep 1
done
say "daemon $state on mock pins at $(now) s ($(systemctl show -p Environment --value pi-companion.service | tr ' ' '\n' | grep -c '^GPIOZERO_PIN_FACTORY=mock$') mock factory)"

# 2. Keep the phone's radio away from the box's NetworkManager before it exists: NM would
# otherwise take it too (and might open the hotspot on it, or scan with it).
mkdir -p /run/NetworkManager/conf.d
printf '[keyfile]\nunmanaged-devices=mac:%s;mac:%s\n' "$PHONE_MAC" "$HOME_MAC" >/run/NetworkManager/conf.d/90-hotspot-test-phone.conf
nmcli general reload conf || say "nmcli general reload conf failed"

# 3. Three radios, then the second one's phy into the phone's network namespace and the third
# one's into the home network's (its access point starts only in phase 8: while the box opens
# its hotspot, no known network is in reach).
t_radios=$(now)
modprobe mac80211_hwsim radios=3 || { say "radios: modprobe mac80211_hwsim failed"; finish; }
box_phy= box_if= phone_phy= phone_if= home_phy= home_if=
for i in 1 2 3 4 5 6 7 8 9 10; do
    for net in /sys/class/net/*; do
        [ -e "$net/phy80211" ] || continue
        phy=$(basename "$(readlink "$net/phy80211")")
        mac=$(cat "/sys/class/ieee80211/$phy/macaddress")
        if [ "$mac" = "$BOX_MAC" ]; then box_phy=$phy; box_if=${net##*/}; fi
        if [ "$mac" = "$PHONE_MAC" ]; then phone_phy=$phy; phone_if=${net##*/}; fi
        if [ "$mac" = "$HOME_MAC" ]; then home_phy=$phy; home_if=${net##*/}; fi
    done
    [ -n "$box_if" ] && [ -n "$phone_if" ] && [ -n "$home_if" ] && break
    sleep 1
done
say "radios: box $box_phy $box_if $BOX_MAC, phone $phone_phy $phone_if $PHONE_MAC"
[ -n "$box_if" ] && [ -n "$phone_if" ] || finish
sleep 2     # NM decides about a new device within a moment of its appearance
say "phone radio in NetworkManager: $(nmcli -g GENERAL.STATE device show "$phone_if" 2>&1)"
say "home radio: $home_phy $home_if $HOME_MAC, in NetworkManager: $(nmcli -g GENERAL.STATE device show "$home_if" 2>&1)"
if [ -n "$home_if" ]; then
    ip netns add home
    iw phy "$home_phy" set netns name home || say "home: iw phy $home_phy set netns failed"
    ip -n home link set lo up
    say "home namespace: $(ip -n home -br link show dev "$home_if" 2>&1 | tr -s ' ' ' ') ($(ip -o link show "$home_if" 2>/dev/null | wc -l) left outside)"
fi
ip netns add phone
iw phy "$phone_phy" set netns name phone || { say "phone: iw phy $phone_phy set netns failed"; finish; }
ip -n phone link set lo up
ip -n phone link set "$phone_if" up
say "phone namespace: $(ip -n phone -br link show dev "$phone_if" | tr -s ' ' ' ') ($(ip -o link show "$phone_if" 2>/dev/null | wc -l) left outside)"

# 4. The box opens its hotspot by itself (NetworkManager's autoconnect: no known network).
end=$(until_ 600)
while within "$end"; do
    [ "$(nmcli -g GENERAL.STATE connection show "$PROFILE" 2>/dev/null)" = activated ] && break
    sleep 1
done
say "hotspot $(nmcli -g GENERAL.STATE connection show "$PROFILE" 2>/dev/null || echo missing) on $(nmcli -g GENERAL.DEVICES connection show "$PROFILE" 2>/dev/null) (box radio $box_if) after $(since "$t_radios") s (radios at $t_radios s)"
[ "$(nmcli -g GENERAL.STATE connection show "$PROFILE" 2>/dev/null)" = activated ] || {
    say "wifi devices: $(nmcli -t -f DEVICE,TYPE,STATE,CONNECTION device | tr '\n' ' ')"
    say "connections: $(nmcli -t -f NAME,TYPE,AUTOCONNECT connection show | tr '\n' ' ')"
    finish
}
# By itself: NetworkManager's autoconnect started it, and nobody asked NetworkManager to.
nmlog=$(journalctl -b -u NetworkManager.service --no-pager -o cat)
say "hotspot auto-activations $(printf '%s\n' "$nmlog" | grep -c "policy: auto-activating connection '$PROFILE'"), activation requests $(printf '%s\n' "$nmlog" | grep -c 'audit: op="connection-activate"')"
say "profile: $(nmcli -t -f connection.autoconnect,connection.autoconnect-priority,802-11-wireless.ssid,802-11-wireless.mode,802-11-wireless.band,802-11-wireless.channel,802-11-wireless-security.key-mgmt,802-11-wireless-security.proto,802-11-wireless-security.pairwise,ipv4.method connection show "$PROFILE" 2>&1 | tr '\n' ' ')"
say "box radio: $(iw dev "$box_if" info 2>&1 | awk '$1 == "ssid" || $1 == "type" || $1 == "channel" {print}' | tr -s '\t\n' '  ')"
say "box address: $(ip -4 -o addr show dev "$box_if" | awk '{print $4}')"
say "avahi: $(systemctl is-active avahi-daemon.service) hostname $(hostname)"
end=$(until_ 180)
line=
while within "$end"; do
    line=$(journalctl -b -u pi-companion.service --no-pager -o cat | grep -F "hotspot on: Wi-Fi \"$SSID\"" | head -1)
    [ -n "$line" ] && break
    sleep 1
done
say "daemon line: ${line:-none} (at $(now) s)"

# 5. The phone sees the box's beacon: RSN (WPA2) with CCMP and a pre-shared key.
scan=
for i in 1 2 3 4 5 6 7 8 9 10; do
    scan=$(ip netns exec phone iw dev "$phone_if" scan ssid "$SSID" 2>&1)
    printf '%s\n' "$scan" | grep -q "SSID: $SSID\$" && break
    sleep 2
done
printf '%s\n' "$scan" | grep -E '^BSS |^\s(freq|capability|SSID|RSN|WPA):|^\s+\* ' | sed 's/^/HOTSPOT-TEST: scan| /'
printf '%s\n' "$scan" | awk -v ssid="$SSID" '
    function flush() { if (mine) printf "HOTSPOT-TEST: beacon ssid %s freq %s privacy %s rsn %s wpa1 %s pairwise %s akm %s\n", ssid, freq, priv, rsn, wpa, pw, akm }
    /^BSS / {flush(); mine = 0; freq = "-"; priv = "no"; rsn = "no"; wpa = "no"; pw = "-"; akm = "-"; ie = ""}
    /^\tfreq:/ {freq = $2}
    /^\tcapability:/ && /Privacy/ {priv = "yes"}
    $0 ~ "^\tSSID: " ssid "$" {mine = 1}
    /^\tRSN:/ {rsn = "yes"; ie = "rsn"}
    /^\tWPA:/ {wpa = "yes"; ie = "wpa"}
    ie == "rsn" && /Pairwise ciphers:/ {sub(/.*Pairwise ciphers: */, ""); pw = $0}
    ie == "rsn" && /Authentication suites:/ {sub(/.*Authentication suites: */, ""); akm = $0}
    END {flush()}'

# 6. A phone with a wrong password is refused (the 4-way handshake fails), then the right one.
wpa() { # CONF-NAME PSK: start the phone's wpa_supplicant (its own, in the namespace)
    cat >"$RUN/$1.conf" <<EOF
ctrl_interface=$RUN/wpa-$1
network={
    ssid="$SSID"
    psk="$2"
    key_mgmt=WPA-PSK
    scan_ssid=1
}
EOF
    : >"$RUN/$1.log"
    ip netns exec phone wpa_supplicant -B -D nl80211 -i "$phone_if" -c "$RUN/$1.conf" -P "$RUN/$1.pid" -f "$RUN/$1.log"
}
wpa_state() { wpa_cli -p "$RUN/wpa-$1" -i "$phone_if" status 2>/dev/null | sed -n 's/^wpa_state=//p'; }
wpa_stop() {
    pid=$(cat "$RUN/$1.pid" 2>/dev/null) && kill "$pid" 2>/dev/null
    i=0; while [ -n "${pid:-}" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 20 ]; do sleep 0.5; i=$((i + 1)); done
}
t=$(now)
wpa wrong not-the-password || say "wrong password: wpa_supplicant did not start"
end=$(until_ 90) state=
while within "$end"; do
    state=$(wpa_state wrong)
    [ "$state" = COMPLETED ] && break
    grep -q 'reason=WRONG_KEY' "$RUN/wrong.log" && break
    sleep 1
done
sleep 3; state=$(wpa_state wrong)   # still not in, a moment after the refusal
say "wrong password: state $state, $(grep -c 'reason=WRONG_KEY' "$RUN/wrong.log") WRONG_KEY refusals, $(since "$t") s"
grep -E 'WRONG_KEY|4-Way Handshake failed|CTRL-EVENT-(CONNECTED|DISCONNECTED)' "$RUN/wrong.log" | head -5 | sed 's/^/HOTSPOT-TEST: wrong| /'
wpa_stop wrong

t=$(now)
wpa right "$PSK" || say "phone: wpa_supplicant did not start"
end=$(until_ 120) state=
while within "$end"; do
    state=$(wpa_state right)
    [ "$state" = COMPLETED ] && break
    sleep 1
done
status=$(wpa_cli -p "$RUN/wpa-right" -i "$phone_if" status 2>/dev/null)
field() { printf '%s\n' "$status" | sed -n "s/^$1=//p"; }
say "phone joined: state $state in $(since "$t") s: ssid=$(field ssid) freq=$(field freq) key_mgmt=$(field key_mgmt) pairwise_cipher=$(field pairwise_cipher) group_cipher=$(field group_cipher)"
[ "$state" = COMPLETED ] || { sed 's/^/HOTSPOT-TEST: right| /' "$RUN/right.log" | tail -30; finish; }

# 7. DHCP from the box, the box's name by mDNS, the big screen by that address.
t=$(now)
lease=$(phone dhcp "$phone_if" --timeout 90 2>&1) && say "lease $lease in $(since "$t") s" || { say "lease FAIL: $lease"; finish; }
t=$(now)
address=$(phone mdns "$phone_if" "$NAME" --timeout 60 2>&1) && say "mdns $NAME is $address in $(since "$t") s" || { say "mdns FAIL: $address"; finish; }
t=$(now)
end=$(until_ 300) page=
while within "$end"; do
    page=$(phone get "http://$NAME:8080/" --address "$address" --max-bytes 20000 2>&1) && break
    sleep 5
done
say "page $(printf '%s\n' "$page" | head -1) html $(printf '%s' "$page" | grep -ci '<html') in $(since "$t") s"
end=$(until_ 300) snap=
while within "$end"; do
    snap=$(phone get "http://$NAME:8080/api/snapshot" --address "$address" --max-bytes 600 2>&1) && break
    sleep 5
done
say "snapshot $(printf '%s\n' "$snap" | head -1)"
say "snapshot body $(printf '%s\n' "$snap" | tail -n +2 | tr -d '\n')"
say "phone done at $(now) s"
wpa_stop right

# 8. A known network comes into reach: the card's [wifi] network (pi-companion-wifi, priority
# 10) as a WPA2 access point (the image's own wpa_supplicant in AP mode) in the home namespace,
# with a DHCP server (dnsmasq). Then the box's network starts again (nmcli networking off/on,
# as at the box's next start): NetworkManager's autoconnect must join home-net, not open the
# hotspot, and the daemon must hear that the hotspot is off.
[ -n "$home_if" ] || finish
cat >"$RUN/home.conf" <<EOF
ctrl_interface=$RUN/wpa-home
network={
    ssid="$HOME_SSID"
    mode=2
    frequency=2412
    key_mgmt=WPA-PSK
    proto=RSN
    pairwise=CCMP
    group=CCMP
    psk="$HOME_PSK"
}
EOF
: >"$RUN/home.log"
ip -n home addr add 192.168.77.1/24 dev "$home_if"
ip -n home link set "$home_if" up
ip netns exec home wpa_supplicant -B -D nl80211 -i "$home_if" -c "$RUN/home.conf" -P "$RUN/home.pid" -f "$RUN/home.log" \
    || say "home: wpa_supplicant did not start"
end=$(until_ 60) state=
while within "$end"; do
    state=$(wpa_cli -p "$RUN/wpa-home" -i "$home_if" status 2>/dev/null | sed -n 's/^wpa_state=//p')
    [ "$state" = COMPLETED ] && break
    sleep 1
done
say "home AP: state $state, $(ip netns exec home iw dev "$home_if" info 2>&1 | awk '$1 == "ssid" || $1 == "type" || $1 == "channel" {print}' | tr -s '\t\n' '  ')"
ip netns exec home dnsmasq --keep-in-foreground --conf-file=/dev/null --bind-interfaces --interface="$home_if" \
    --except-interface=lo --port=0 --dhcp-range=192.168.77.10,192.168.77.50,1h --dhcp-leasefile="$RUN/home.leases" \
    --user=root --group=root --log-dhcp --log-facility="$RUN/home-dnsmasq.log" &
sleep 1
off_before=$(journalctl -b -u pi-companion.service --no-pager -o cat | grep -c 'hotspot off$')
t=$(now)
nmcli networking off || say "nmcli networking off failed"
end=$(until_ 60)
while within "$end"; do
    [ "$(nmcli -g GENERAL.STATE connection show "$PROFILE" 2>/dev/null)" = activated ] || break
    sleep 1
done
sleep 2
nmcli networking on || say "nmcli networking on failed"
t_on=$(now)
end=$(until_ 300) kstate=
while within "$end"; do
    kstate=$(nmcli -g GENERAL.STATE connection show "$KNOWN" 2>/dev/null)
    [ "$kstate" = activated ] && break
    sleep 1
done
say "known network: $KNOWN ${kstate:-not-active} on $(nmcli -g GENERAL.DEVICES connection show "$KNOWN" 2>/dev/null) (box radio $box_if) after $(since "$t_on") s; hotspot $(nmcli -g GENERAL.STATE connection show "$PROFILE" 2>/dev/null || true)"
say "active connections: $(nmcli -t -f NAME,DEVICE,STATE connection show --active | tr '\n' ' ')"
nmlog=$(journalctl -b -u NetworkManager.service --no-pager -o cat)
say "known auto-activations $(printf '%s\n' "$nmlog" | grep -c "policy: auto-activating connection '$KNOWN'"), activation requests $(printf '%s\n' "$nmlog" | grep -c 'audit: op="connection-activate"')"
say "box radio now: $(iw dev "$box_if" info 2>&1 | awk '$1 == "ssid" || $1 == "type" || $1 == "channel" {print}' | tr -s '\t\n' '  ')"
say "box link now: $(iw dev "$box_if" link 2>&1 | awk '/^Connected to/ {print "connected to", $3} $1 == "SSID:" {print "ssid", $2} $1 == "freq:" {print "freq", $2}' | tr '\n' ' ')"
say "home AP stations: $(ip netns exec home iw dev "$home_if" station dump 2>/dev/null | awk '/^Station/ {print $2}' | tr '\n' ' ')"
end=$(until_ 60) addr=
while within "$end"; do
    addr=$(ip -4 -o addr show dev "$box_if" | awk '{print $4}' | grep '^192\.168\.77\.' | head -1)
    [ -n "$addr" ] && break
    sleep 1
done
say "box address on home-net: ${addr:-none} ($(since "$t_on") s after networking on)"
end=$(until_ 120) line=
while within "$end"; do
    n=$(journalctl -b -u pi-companion.service --no-pager -o cat | grep -c 'hotspot off$')
    [ "$n" -gt "$off_before" ] && { line="hotspot off"; break; }
    sleep 1
done
say "daemon after networking off: ${line:-no-hotspot-off} ($off_before before; seen $(since "$t") s after networking off); hotspot file $( [ -e /run/pi-companion-net/hotspot.json ] && echo present || echo absent)"
grep -E 'AP-ENABLED|AP-STA-CONNECTED|AP-STA-DISCONNECTED|EAPOL-4WAY|WRONG_KEY|CTRL-EVENT' "$RUN/home.log" | tail -10 | sed 's/^/HOTSPOT-TEST: home| /'
tail -5 "$RUN/home-dnsmasq.log" 2>/dev/null | sed 's/^/HOTSPOT-TEST: home-dhcp| /'
say "home done at $(now) s"
finish

