#!/bin/sh
# Runs inside the booted image under `make image-test` (systemd.run= on the kernel command
# line, from the test's copy of the FAT partition; the image itself has no test code). Every
# line it prints starts with "IMAGE-TEST:" and goes to the serial console, where
# tests/image/boot-test.sh reads it.
exec >/dev/console 2>&1
say() { echo "IMAGE-TEST: $*"; }
say "boot reached $(cut -d' ' -f1 /proc/uptime) s"
state=unknown
i=0
while [ $i -lt 600 ]; do
    state=$(systemctl show -p ActiveState --value pi-companion.service)
    sub=$(systemctl show -p SubState --value pi-companion.service)
    [ "$state" = active ] && [ "$sub" = running ] && break
    i=$((i + 1)); sleep 1
done
say "pi-companion.service $state/$sub at $(cut -d' ' -f1 /proc/uptime) s (restarts: $(systemctl show -p NRestarts --value pi-companion.service))"
journalctl -b -u pi-companion.service --no-pager -o cat | sed 's/^/IMAGE-TEST: daemon| /'
web=fail
i=0
while [ $i -lt 300 ]; do
    if python3 -c 'import sys, urllib.request
r = urllib.request.urlopen("http://127.0.0.1:8080/", timeout=10)
sys.exit(r.status != 200 or b"<html" not in r.read().lower())' 2>/dev/null; then
        web=ok; break
    fi
    i=$((i + 1)); sleep 1
done
say "web $web at $(cut -d' ' -f1 /proc/uptime) s"
# The live game through the big screen (the daemon's hub socket): the players are the card's.
i=0
while [ $i -lt 120 ]; do
    snap=$(python3 -c 'import urllib.request
print(urllib.request.urlopen("http://127.0.0.1:8080/api/snapshot", timeout=10).read().decode())' 2>/dev/null) && break
    i=$((i + 1)); sleep 1
done
say "snapshot $(printf '%s' "$snap" | head -c 600)"
# The GPIO lines the daemon holds (the kernel's list names each line's consumer).
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
say "gpio lines requested: $(grep -c 'GPIO.*|[^ )]' /sys/kernel/debug/gpio)"
grep 'GPIO.*|[^ )]' /sys/kernel/debug/gpio | sed 's/^/IMAGE-TEST: gpio| /'
# The piezo's hardware PWM: the overlay's PWM block bound to its driver, GPIO18 muxed to it.
for chip in /sys/class/pwm/pwmchip*; do
    [ -e "$chip" ] || { say "pwm: none"; break; }
    say "pwm: $(basename "$chip") npwm $(cat "$chip/npwm") device $(basename "$(readlink -f "$chip/device")") driver $(basename "$(readlink -f "$chip/device/driver")")"
done
say "pinmux: $(grep -h '^pin 18 ' /sys/kernel/debug/pinctrl/*/pinmux-pins 2>/dev/null | head -1)"
# The PWM udev rule at work on a real kernel and udev: a channel the service's user exports
# becomes the gpio group's (only when the daemon holds no channel: it must not be disturbed).
chip=/sys/class/pwm/pwmchip0
if [ -e $chip ] && [ ! -e $chip/pwm0 ]; then
    t0=$(cut -d' ' -f1 /proc/uptime)
    if setpriv --reuid=pi-companion --regid=pi-companion --init-groups sh -c "echo 0 > $chip/export" 2>/dev/null; then
        i=0
        while [ $i -lt 600 ] && [ "$(stat -c %G $chip/pwm0/period 2>/dev/null)" != gpio ]; do
            i=$((i + 1)); sleep 0.1
        done
        t1=$(cut -d' ' -f1 /proc/uptime)
        say "pwm probe: pwm0/period $(stat -c '%G %A' $chip/pwm0/period 2>&1) $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s after the export"
        echo 0 >$chip/unexport
    else
        say "pwm probe: the service's user cannot export ($(stat -c '%G %A' $chip/export))"
    fi
else
    say "pwm probe: skipped (no chip, or the daemon holds pwm0)"
fi
# The settings from the card's FAT partition (pi-companion-setup.toml, pi-companion.toml).
say "hostname $(hostname)"
say "ssh $(systemctl is-active ssh.service) key $(cat /root/.ssh/authorized_keys 2>/dev/null | cut -d' ' -f3)"
say "config $(grep '^players' /etc/pi-companion/config.toml)"
journalctl -b -u pi-companion-web.service --no-pager -o cat | sed 's/^/IMAGE-TEST: web| /'
journalctl -b -u pi-companion-setup.service -u pi-companion-growfs.service --no-pager -o cat \
    | sed 's/^/IMAGE-TEST: setup| /'
# The box as its package installed it, and the update from the card at this boot (the test put
# the card's own package in pi-companion-update/: not newer, so refused, and moved to done/).
say "package $(dpkg-query -W -f '${Version} ${db:Status-Status}' pi-companion) unit $(systemctl show -p FragmentPath --value pi-companion.service) update-unit $(systemctl is-enabled pi-companion-update.service)"
say "update folder: $(find /boot/firmware/pi-companion-update -maxdepth 1 -type f -printf '%f ')/ done: $(ls /boot/firmware/pi-companion-update/done 2>&1 | tr '\n' ' ')"
journalctl -b -u pi-companion-update.service --no-pager -o cat | sed 's/^/IMAGE-TEST: update| /'
say "gpiochip: $(ls -l /dev/gpiochip* 2>&1 | awk '{print $1, $3, $4, $NF}' | tr '\n' ';')"
say "failed units: $(systemctl list-units --failed --plain --no-legend | awk '{print $1}' | tr '\n' ' ')"
journalctl -b -p err --no-pager --no-hostname -o short-monotonic | sed 's/^/IMAGE-TEST: err| /'
say "root: $(df -m / | awk 'NR==2 {print $2 " MiB, " $3 " MiB used"}')"
say "DONE"
