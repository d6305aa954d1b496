"""Presses the box's buttons through gpio-sim and watches its lamps, inside the system test VM.

Run with the installed venv's Python (it reads the pin map from the installed package):
    drive.py round FIRST SECOND PID  the daemon (PID) frozen by SIGSTOP, FIRST's line written,
                                  GAP_S later SECOND's, then SIGCONT: both edges wait in the
                                  kernel, stamped there, and reach the daemon together. The box
                                  must pick FIRST and put SECOND behind by the kernel's gap
                                  (checked by the stage); then YES. Prints JSON: the bounds of
                                  the gap between the two edges and the latencies
    drive.py hold BUTTON SECONDS  press, hold, release
    drive.py lamps                the lit player lamps, e.g. "P2 P4"
    drive.py lines                the chip's requested lines as JSON {line: consumer} (the
                                  kernel's line info, GPIO_V2_GET_LINEINFO_IOCTL)
    drive.py consumers            who holds each input line of the pin map (buttons, encoder,
                                  hall): JSON {name: consumer}; "pi-companion" is the daemon's
                                  own line request (its kernel edge reader), anything else lgpio
    drive.py watch-open PATH SECS a line each time PATH is opened (inotify), for SECS
    drive.py series N PID LAST    N rounds as `round` (two of the lit seekers each time, the
                                  lamps checked, not the log; LAST wins the last round only),
                                  JSON list of their latencies
    drive.py idle SECONDS PID...  what each process (every thread of it) costs while the box
                                  idles: CPU time (schedstat, ns; utime+stime, ticks) and
                                  wake-ups (voluntary + involuntary context switches) over
                                  SECONDS, as JSON, with the threads that woke most
    drive.py ready CONFIG         the installed daemon started as a transient unit (the unit
                                  stopped) with the test's notify socket, its queue full, so
                                  that READY=1 blocks in sendto() until read: the lines
                                  requested at that moment and a second after, as JSON
Writing "pull-down" to a line's sim_gpioN/pull grounds it, as a pressed button does; the lamps
are the box's output lines, read back through sim_gpioN/value.
"""
from __future__ import annotations

import ctypes
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from pi_companion.hw.pinmap import load_pinmap

SYSFS = Path(Path("/run/gpio-sim/sysfs").read_text().strip())
PINS = load_pinmap()
PLAYERS = sorted(k for k in PINS if k.startswith("P") and k[1:].isdigit())
LOG = Path("/var/lib/pi-companion/current.log")
GAP_S = 0.020          # well inside the test config's 50 ms buzz window; far above any jitter
TONE_WAIT_S = 2.0      # how long the piezo's line is watched for the buzz tone after the lamp
CHIP = Path("/dev") / SYSFS.name           # the gpio-sim chip's character device


def pull(button: str) -> int:
    return os.open(SYSFS / f"sim_gpio{PINS[button]}" / "pull", os.O_WRONLY)


def press(button: str) -> None:
    fd = pull(button)
    os.write(fd, b"pull-down")
    os.close(fd)


def release(button: str) -> None:
    fd = pull(button)
    os.write(fd, b"pull-up")
    os.close(fd)


def lamps() -> frozenset[str]:
    lit = set()
    for player in PLAYERS:
        led = f"LED{player[1:]}"
        if led in PINS and (SYSFS / f"sim_gpio{PINS[led]}" / "value").read_text().strip() == "1":
            lit.add(player)
    return frozenset(lit)


def wait_lamps(want: frozenset[str], what: str, timeout: float = 15.0) -> int:
    """Spin until the lamps show `want`; the monotonic ns when they did."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if lamps() == want:
            return time.monotonic_ns()
        time.sleep(0.0002)
    sys.exit(f"FAIL: {what}: lamps {' '.join(sorted(lamps())) or 'none'}, "
             f"expected {' '.join(sorted(want)) or 'none'} within {timeout:.0f} s")


def frozen(pid: int) -> None:
    """SIGSTOP `pid` and wait until every one of its threads is stopped."""
    os.kill(pid, signal.SIGSTOP)
    end = time.monotonic() + 10
    while time.monotonic() < end:
        states = []
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                states.append((task / "stat").read_text().rsplit(")", 1)[1].split()[0])
            except FileNotFoundError:
                pass
        if states and all(s in "tT" for s in states):
            return
        time.sleep(0.001)
    sys.exit(f"FAIL: the daemon (pid {pid}) did not stop within 10 s of SIGSTOP")


def round_(first: str, second: str, pid: int) -> dict[str, float]:
    seekers = lamps()
    if first not in seekers or second not in seekers:
        sys.exit(f"FAIL: {first} and {second} must both be seekers; lit: {sorted(seekers)}")
    size = LOG.stat().st_size
    a, b = pull(first), pull(second)
    frozen(pid)                            # the daemon reads nothing until SIGCONT
    try:
        t0 = time.monotonic_ns()
        os.write(a, b"pull-down")          # the kernel stamps this edge now ...
        t0_end = time.monotonic_ns()
        while time.monotonic_ns() - t0_end < GAP_S * 1e9:
            pass
        t1 = time.monotonic_ns()
        os.write(b, b"pull-down")          # ... and this one GAP_S later
        t1_end = time.monotonic_ns()
    finally:
        t_cont = time.monotonic_ns()
        os.kill(pid, signal.SIGCONT)       # both edges now wait in the kernel, stamped
    t_logged = None
    end = time.monotonic() + 15.0
    while time.monotonic() < end:          # the first edge is fsynced into the log ...
        if t_logged is None and LOG.stat().st_size > size:
            t_logged = time.monotonic_ns()
        if lamps() == {first}:             # ... and the box lights the winner's lamp alone
            break
        time.sleep(0.0002)
    else:
        sys.exit(f"FAIL: after {first} then {second}: lamps {sorted(lamps())}, expected only {first}")
    t_decided = time.monotonic_ns()
    t_logged = t_logged or t_decided
    # The buzz tone starts with the lamp, on the piezo's line: high and low again is a PWM that
    # ran. Under TCG its thread can wait its turn behind a process that starts (the big screen
    # just restarted: one round after step slowsync once saw a single toggle in 0.3 s), so the
    # line is watched until the tone shows, for TONE_WAIT_S, and how late it came is reported.
    toggles, t_tone = tone_toggles(TONE_WAIT_S, enough=2)
    if toggles < 2:
        sys.exit(f"FAIL: after {first} then {second}: the piezo's line (GPIO{PINS['PIEZO']}) "
                 f"toggled {toggles} times in the {TONE_WAIT_S:.0f} s after the lamp, expected a tone")
    os.write(a, b"pull-up")
    os.write(b, b"pull-up")
    os.close(a)
    os.close(b)
    time.sleep(0.1)
    press("YES")
    time.sleep(0.1)
    t_yes = time.monotonic_ns()
    release("YES")
    # YES: the winner scores and becomes Grab Master; everybody else seeks again.
    t_ack = wait_lamps(frozenset(PLAYERS[: len(seekers) + 1]) - {first}, f"YES for {first}")
    # Where the kernel's stamps of the two edges can lie, on the same clock (CLOCK_MONOTONIC):
    # each inside its own write() call. The daemon read neither before SIGCONT, so the time it
    # read them says nothing about their order or their gap: only the kernel's stamps do.
    return {"gap_min_ms": (t1 - t0_end) / 1e6, "gap_max_ms": (t1_end - t0) / 1e6,
            "cont_to_logged_ms": (t_logged - t_cont) / 1e6,
            "cont_to_decision_ms": (t_decided - t_cont) / 1e6,
            "yes_to_ack_ms": (t_ack - t_yes) / 1e6, "tone_toggles": toggles,
            "lamp_to_tone_ms": (t_tone - t_decided) / 1e6}


def tone_toggles(seconds: float, enough: int) -> tuple[int, int]:
    """How often the piezo's line changed level, sampled until it had changed `enough` times or
    for `seconds`; and the monotonic ns of the last change seen (of the start if none was)."""
    path = SYSFS / f"sim_gpio{PINS['PIEZO']}" / "value"
    fd = os.open(path, os.O_RDONLY)
    try:
        last, changes, end = None, 0, time.monotonic() + seconds
        t_change = time.monotonic_ns()
        while changes < enough and time.monotonic() < end:
            level = os.pread(fd, 2, 0)
            if last is not None and level != last:
                changes += 1
                t_change = time.monotonic_ns()
            last = level
            time.sleep(0.0001)             # a guest CPU left for the daemon's tone thread
    finally:
        os.close(fd)
    return changes, t_change


# ---- the kernel's line info: which lines are requested, and by whom ---------------------------
class LineInfo(ctypes.Structure):          # struct gpio_v2_line_info (linux/gpio.h), 256 bytes
    _fields_ = [("name", ctypes.c_char * 32), ("consumer", ctypes.c_char * 32),
                ("offset", ctypes.c_uint32), ("num_attrs", ctypes.c_uint32),
                ("flags", ctypes.c_uint64), ("attrs", ctypes.c_uint8 * (10 * 16)),
                ("padding", ctypes.c_uint32 * 4)]


GPIO_V2_GET_LINEINFO_IOCTL = (3 << 30) | (ctypes.sizeof(LineInfo) << 16) | (0xB4 << 8) | 0x05
GPIO_V2_LINE_FLAG_USED = 1


def lines() -> dict[int, str]:
    """{offset: consumer} of every requested line of the gpio-sim chip."""
    used = {}
    fd = os.open(CHIP, os.O_RDONLY)
    try:
        for offset in range(28):
            info = LineInfo(offset=offset)
            fcntl.ioctl(fd, GPIO_V2_GET_LINEINFO_IOCTL, info)
            if info.flags & GPIO_V2_LINE_FLAG_USED:
                used[offset] = info.consumer.decode() or "?"
    finally:
        os.close(fd)
    return used


INPUTS = ("P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8", "YES", "NO", "MENU", "ENC_A", "ENC_B",
          "HALL_A", "HALL_B")


def consumers() -> dict[str, str]:
    held = lines()
    return {name: held.get(PINS[name], "(free)") for name in INPUTS if name in PINS}


def watch_open(path: str, seconds: float) -> None:
    """Print a line each time `path` is opened, for `seconds` (inotify IN_OPEN)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    if fd < 0 or libc.inotify_add_watch(fd, path.encode(), 0x20) < 0:      # IN_OPEN
        sys.exit(f"FAIL: cannot watch {path}: {os.strerror(ctypes.get_errno())}")
    print("watching", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            if os.read(fd, 4096):
                print(f"opened at {time.monotonic():.3f}", flush=True)
        except BlockingIOError:
            time.sleep(0.05)


def series(n: int, pid: int, last: str) -> list[dict[str, float]]:
    """`n` rounds, each between two of the lit seekers (a new pair each time); `last` wins the
    last one (and no other), so that the game goes on from a known Grab Master."""
    rows = []
    for i in range(n):
        seekers = sorted(lamps())
        if len(seekers) < 2:
            sys.exit(f"FAIL: round {i + 1} of {n}: fewer than two seekers lit: {seekers}")
        if i == n - 1:
            if last not in seekers:
                sys.exit(f"FAIL: {last} should be a seeker for the last round; lit: {seekers}")
            first = last
        else:
            others = [s for s in seekers if s != last]
            first = others[i % len(others)]
        second = next(s for s in seekers[seekers.index(first) + 1:] + seekers if s != first)
        rows.append(round_(first, second, pid))
    return rows


# ---- idle: what a process costs while nothing happens ------------------------------------------
# x86_64 system call numbers a sleeping thread of the box may sit in (/proc/TID/syscall)
SYSCALLS = {"0": "read", "7": "poll", "23": "select", "202": "futex", "232": "epoll_wait",
            "271": "ppoll", "270": "pselect6", "281": "epoll_pwait", "441": "epoll_pwait2",
            "230": "clock_nanosleep", "35": "nanosleep", "running": "running"}


def tasks(pid: int) -> dict[int, dict[str, object]]:
    """Every thread of `pid`: CPU ns (schedstat), CPU ticks (utime + stime), context switches,
    and the system call it sleeps in."""
    out: dict[int, dict[str, object]] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            run_ns = int((task / "schedstat").read_text().split()[0])
            stat = (task / "stat").read_text().rsplit(")", 1)[1].split()
            status = dict(line.split(":", 1) for line in (task / "status").read_text().splitlines() if ":" in line)
            try:
                call = (task / "syscall").read_text().split()[0]
            except PermissionError:
                call = "?"
            wchan = SYSCALLS.get(call, f"syscall {call}")
        except (FileNotFoundError, ProcessLookupError):
            continue                                 # ended meanwhile
        out[int(task.name)] = {"ns": run_ns, "ticks": int(stat[11]) + int(stat[12]),
                               "ctx": int(status["voluntary_ctxt_switches"]) + int(status["nonvoluntary_ctxt_switches"]),
                               "wchan": wchan}
    return out


def idle(seconds: float, pids: list[int]) -> dict[str, object]:
    hz = os.sysconf("SC_CLK_TCK")
    before = {pid: tasks(pid) for pid in pids}
    t0 = time.monotonic()
    # The system call each thread sits in, sampled every 0.5 s (a busy poller is sometimes
    # caught running: under TCG lgpio's alert thread was, in one of two runs).
    calls: dict[int, set[str]] = {}
    while time.monotonic() - t0 < seconds:
        time.sleep(min(0.5, max(0.0, seconds - (time.monotonic() - t0))))
        for pid in pids:
            for tid, now in tasks(pid).items():
                calls.setdefault(tid, set()).add(str(now["wchan"]))
    after = {pid: tasks(pid) for pid in pids}
    wall = time.monotonic() - t0
    report: dict[str, object] = {"seconds": wall, "load": Path("/proc/loadavg").read_text().split()[:3]}
    for pid in pids:
        threads = []
        for tid, now in after[pid].items():
            was = before[pid].get(tid, {"ns": 0, "ticks": 0, "ctx": 0})   # a thread born meanwhile: all of it
            seen = sorted(calls.get(tid, set()) | {str(now["wchan"])})
            threads.append({"tid": tid, "wchan": "/".join(seen), "polls": bool({"poll", "ppoll"} & set(seen)),
                            "ns": now["ns"] - was["ns"],
                            "ticks": now["ticks"] - was["ticks"], "ctx": now["ctx"] - was["ctx"]})
        ns = sum(t["ns"] for t in threads)
        ticks = sum(t["ticks"] for t in threads)
        ctx = sum(t["ctx"] for t in threads)
        threads.sort(key=lambda t: -t["ctx"])
        report[str(pid)] = {
            "cpu_pct": ns / 1e9 / wall * 100, "cpu_pct_ticks": ticks / hz / wall * 100,
            "wakeups_per_s": ctx / wall, "threads": len(threads), "gone": len(set(before[pid]) - set(after[pid])),
            "busiest": [f"tid {t['tid']} in {t['wchan']}: {t['ctx'] / wall:.2f}/s, {t['ns'] / 1e6:.1f} ms"
                        for t in threads[:3]],
            # every thread seen waiting in poll/ppoll that woke more than twice a second: a poller
            "pollers": [f"tid {t['tid']} in {t['wchan']}: {t['ctx'] / wall:.2f}/s"
                        for t in threads if t["polls"] and t["ctx"] / wall > 2.5]}
    return report


# ---- READY=1 against the kernel's line info --------------------------------------------------
READY_UNIT = "systest-ready"


def unit_prop(name: str) -> str:
    return subprocess.run(["systemctl", "show", "-p", name, "--value", READY_UNIT],
                          capture_output=True, text=True).stdout.strip()


def journal(lines: int = 60) -> str:
    return subprocess.run(["journalctl", "-b", "-u", READY_UNIT, "-o", "cat", "--no-pager",
                           "-n", str(lines)], capture_output=True, text=True).stdout


def blocked_in_sendto(pid: int) -> int | None:
    """The thread of `pid` that sits in sendto(2) (x86_64 syscall 44), if one does."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            call = (task / "syscall").read_text().split()
        except OSError:
            continue
        if call and call[0] == "44":
            return int(task.name)
    return None


def ready(config: str) -> dict[str, object]:
    """The lines the daemon has requested when its READY=1 is sent (it blocks there until read)."""
    work = Path("/run/systest-ready")
    subprocess.run(["rm", "-rf", str(work)], check=True)
    work.mkdir(mode=0o755)
    uid, gid = (int(x) for x in subprocess.check_output(
        ["sh", "-c", "id -u pi-companion; id -g pi-companion"], text=True).split())
    os.chown(work, uid, gid)
    # The same config, with debug logging: a READY=1 that could not be sent says why.
    text = Path(config).read_text().replace("[box]\n", '[box]\nlog_level = "debug"\n', 1)
    (work / "config.toml").write_text(text)
    path = str(work / "notify")
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    receiver.bind(path)
    os.chmod(path, 0o666)
    # Fill the receiver's queue: the daemon's first datagram (READY=1: no WATCHDOG_USEC here)
    # then blocks in sendto() until the test reads, whatever the daemon would do next. systemd
    # raises net.unix.max_dgram_qlen to 512 (sysctl.d/50-default.conf), more than one sender's
    # buffer holds (278 datagrams in the VM: one filler stopped there and READY=1 went straight
    # through), so fillers are added until a fresh one cannot send at all: the queue is full.
    fillers = []
    filled = 0
    while True:
        filler = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        filler.setblocking(False)
        fillers.append(filler)
        sent = 0
        while True:
            try:
                filler.sendto(b"filler", path)
                sent += 1
            except BlockingIOError:
                break
        filled += sent
        if sent == 0:
            break
    subprocess.run(["systemctl", "reset-failed", READY_UNIT], capture_output=True)
    # A transient unit with what the daemon needs from pi-companion.service (its user, groups,
    # the Pi's /proc/cpuinfo, a working directory for lgpio) and none of the notify protocol:
    # Type=exec, so systemd sets no NOTIFY_SOCKET of its own and this one is the daemon's.
    t0 = time.monotonic()
    subprocess.run(
        ["systemd-run", "--quiet", f"--unit={READY_UNIT}", "--service-type=exec",
         "-p", "User=pi-companion", "-p", "Group=pi-companion", "-p", "UMask=0077",
         "-p", "SupplementaryGroups=gpio i2c dialout",
         "-p", "BindReadOnlyPaths=/run/gpio-sim/cpuinfo:/proc/cpuinfo",
         "-p", f"WorkingDirectory={work}",
         "--setenv=GPIOZERO_PIN_FACTORY=lgpio", "--setenv=PYTHONUNBUFFERED=1",
         "--setenv=PYTHONDONTWRITEBYTECODE=1", "--setenv=PYTHONFAULTHANDLER=1",
         f"--setenv=NOTIFY_SOCKET={path}", f"--setenv=RUNTIME_DIRECTORY={work}",
         "/opt/pi-companion/venv/bin/pi-companion", "run", "--config", str(work / "config.toml")],
        check=True)
    try:
        end = t0 + 300               # a daemon start takes 5-60 s under TCG on a loaded host
        tid = None
        while time.monotonic() < end:
            pid = int(unit_prop("MainPID") or 0)
            if unit_prop("ActiveState") not in ("active", "activating") or pid == 0:
                sys.exit(f"FAIL: the daemon started for the READY check ended: {journal()}")
            tid = blocked_in_sendto(pid)
            if tid is not None:
                time.sleep(0.2)      # blocked there, not passing through
                if blocked_in_sendto(pid) == tid:
                    break
            if "ready:" in journal(5):
                sys.exit(f"FAIL: the daemon went past READY=1 without blocking in sendto() "
                         f"(the test's queue of {filled} datagrams was full): {journal()}")
            time.sleep(0.01)
        else:
            os.kill(pid, signal.SIGABRT)       # PYTHONFAULTHANDLER: every thread's stack
            time.sleep(3)
            sys.exit(f"FAIL: the daemon never blocked in sendto() (READY=1) within 300 s: {journal(120)}")
        t_block = time.monotonic()
        start_s = t_block - t0
        held = lines()                         # the moment of READY=1: the daemon cannot go on
        receiver.settimeout(10)
        got = [receiver.recv(4096) for _ in range(filled + 1)]
        held_s = time.monotonic() - t_block
        if got[-1] != b"READY=1" or any(g != b"filler" for g in got[:-1]):
            sys.exit(f"FAIL: the blocked datagram was {got[-1]!r}, not READY=1")
        time.sleep(1.0)
        after = lines()
        return {"at_ready": held, "a_second_later": after, "filled": filled,
                "start_s": start_s, "held_s": held_s}
    finally:
        subprocess.run(["systemctl", "stop", READY_UNIT], capture_output=True)
        subprocess.run(["systemctl", "reset-failed", READY_UNIT], capture_output=True)
        receiver.close()


def main(argv: list[str]) -> None:
    if argv[0] == "round":
        print(json.dumps(round_(argv[1], argv[2], int(argv[3]))))
    elif argv[0] == "series":
        print(json.dumps(series(int(argv[1]), int(argv[2]), argv[3])))
    elif argv[0] == "ready":
        print(json.dumps(ready(argv[1])))
    elif argv[0] == "idle":
        print(json.dumps(idle(float(argv[1]), [int(a) for a in argv[2:]])))
    elif argv[0] == "consumers":
        print(json.dumps(consumers()))
    elif argv[0] == "lines":
        print(json.dumps(lines()))
    elif argv[0] == "watch-open":
        watch_open(argv[1], float(argv[2]))
    elif argv[0] == "hold":
        press(argv[1])
        time.sleep(float(argv[2]))
        release(argv[1])
    elif argv[0] == "lamps":
        print(" ".join(sorted(lamps())))
    else:
        sys.exit(f"unknown command {argv[0]}")


if __name__ == "__main__":
    main(sys.argv[1:])
