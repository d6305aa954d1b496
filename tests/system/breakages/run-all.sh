#!/usr/bin/env bash
# Runs the system test once per breakage in this directory (or those named), each applied alone
# (BREAK=NAME: tests/system/run.sh applies it to a copy of the checkout and runs only the steps
# it concerns), and prints one line per breakage: CAUGHT with the check's message, or NOT
# CAUGHT. Exit status 0 only when every breakage was caught by the check it names.
#   sudo tests/system/breakages/run-all.sh [NAME...]      (or: sudo make system-test-breakages)
set -uo pipefail
HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
names=("$@")
((${#names[@]})) || mapfile -t names < <(cd "$HERE" && ls *.patch | sed 's/\.patch$//')
LOGS=${BREAK_LOGS:-/var/tmp/pi-companion-breakages}
mkdir -p "$LOGS"
summary=() missed=0
for name in "${names[@]}"; do
    t=$(date +%s)
    BREAK=$name bash "$HERE/../run.sh" >"$LOGS/$name.log" 2>&1
    line=$(grep -m1 '^### BREAKAGE' "$LOGS/$name.log" || echo "### BREAKAGE $name: no verdict (log: $LOGS/$name.log)")
    [[ $line == *" CAUGHT "* && $line != *"NOT CAUGHT"* ]] || missed=$((missed + 1))
    summary+=("$line ($(($(date +%s) - t)) s, load $(cut -d' ' -f1 /proc/loadavg))")
    echo "${summary[-1]}"
done
echo "### ${#names[@]} breakages, $missed not caught (logs in $LOGS)"
((missed == 0))
