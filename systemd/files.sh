# shellcheck shell=bash
# The appliance's files, one list for both ways of installing them: systemd/install.sh (a clone
# on the box: the administrator's directories under /etc) and the Debian package
# (systemd/debian/build.sh: the distribution's directories under /usr). Sourced, not run.
#
#   stage_appliance_files ROOT PREFIX LAYOUT   copy every file below ROOT (LAYOUT local|package);
#                                              the units name the venv under PREFIX
#   appliance_path LAYOUT FILE                 where FILE (a name in APPLIANCE_FILES or
#                                              PACKAGE_ONLY_FILES) goes

# KIND FILE: the files of systemd/ the box needs, by kind.
APPLIANCE_FILES=(
    "unit pi-companion.service"
    "unit pi-companion-web.service"
    "sysusers pi-companion.conf"
    "udev 99-pi-companion-puck.rules"
    "udev 60-pi-companion-pwm.rules"
    "polkit 50-pi-companion-shutdown.rules"
)
# The package's alone: the update from the card installs a package (a make install's units in
# /etc would shadow the package's, so such a box updates with git and make install).
PACKAGE_ONLY_FILES=(
    "unit pi-companion-update.service"
    "program pi-companion-update"
)

# appliance_dir LAYOUT KIND: the folder a kind of file goes to.
appliance_dir() {
    case $1/$2 in
        local/unit) echo /etc/systemd/system ;;
        local/sysusers) echo /etc/sysusers.d ;;
        local/udev) echo /etc/udev/rules.d ;;
        local/polkit) echo /etc/polkit-1/rules.d ;;
        package/unit) echo /usr/lib/systemd/system ;;
        package/sysusers) echo /usr/lib/sysusers.d ;;
        package/udev) echo /usr/lib/udev/rules.d ;;
        package/polkit) echo /usr/share/polkit-1/rules.d ;;
        package/program) echo /usr/libexec/pi-companion ;;
        *) echo "appliance_dir: no folder for $1/$2" >&2; return 1 ;;
    esac
}

appliance_path() {
    local entry
    for entry in "${APPLIANCE_FILES[@]}" "${PACKAGE_ONLY_FILES[@]}"; do
        if [[ ${entry#* } == "$2" ]]; then
            echo "$(appliance_dir "$1" "${entry%% *}")/$2"
            return
        fi
    done
    echo "appliance_path: $2 is not in APPLIANCE_FILES" >&2
    return 1
}

stage_appliance_files() {
    local root=$1 prefix=$2 layout=$3 here entry kind file target entries
    here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
    entries=("${APPLIANCE_FILES[@]}")
    [[ $layout == package ]] && entries+=("${PACKAGE_ONLY_FILES[@]}")
    for entry in "${entries[@]}"; do
        kind=${entry%% *} file=${entry#* }
        target=$root$(appliance_dir "$layout" "$kind")/$file
        install -d -m 0755 "$(dirname -- "$target")"
        if [[ $kind == unit ]]; then
            # The units name /opt/pi-companion; follow PREFIX (a no-op for the default).
            sed "s#/opt/pi-companion/venv/#$prefix/venv/#g" "$here/$file" >"$target.tmp"
            chmod 0644 "$target.tmp"
            mv -- "$target.tmp" "$target"
        elif [[ $kind == program ]]; then
            install -m 0755 "$here/$file" "$target"
        else
            install -m 0644 "$here/$file" "$target"
        fi
    done
}
