"""Start-up counted in instructions (#27 item 4): the daemon's main thread from its start to
READY=1, beside the import floor's to the end of its imports, by valgrind's callgrind, which the
machine's load does not move (the wall-clock and CPU-time figures of `process.py` do move).

Usage: python benchmarks/startup_instructions.py [RUNS]   (about 15 s a count; needs valgrind)

Three processes, each counted RUNS times (`--separate-threads=yes`: the main thread's count):
- floor: the interpreter importing gpiozero, luma.oled.device and pyserial, then `os._exit(0)`;
- daemon: `pi-companion run` as `process.py` starts it (mock pins, luma's dummy display, no config
  file, a fresh state directory), ended by `os._exit(0)` where it would send READY=1;
- daemon, web on: the same with the shipped config as the SD image has it (the big screen on)
  and a host token from an earlier start (a box makes its token once, at its first start).
Each runs in a temporary directory (`-c` puts the working directory first on sys.path). `os._exit`
ends each where it is: no interpreter shutdown is counted, and the loop thread the
daemon has started by READY is counted apart (not here). The package is byte-compiled first,
as `make install` does. Set PYTHONPATH to count another checkout.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

FLOOR = "import gpiozero, luma.oled.device, serial, os; os._exit(0)"
DAEMON = """import os, runpy, sys
import pi_companion.systemd as systemd
send = systemd.notify
systemd.notify = lambda state: os._exit(0) if state == "READY=1" else send(state)
sys.argv[0] = "pi-companion"
runpy.run_module("pi_companion", run_name="__main__")"""


def count(code: str, args: list[str], tmp: Path) -> int:
    """Instructions of the main thread of `python -c code args`."""
    out = tmp / "callgrind.out"
    subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes", f"--callgrind-out-file={out}",
                    sys.executable, "-c", code, *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env={**os.environ, "NOTIFY_SOCKET": ""}, cwd=tmp)
    main = next(tmp.glob("callgrind.out-01"))
    total = next(int(line.split()[1]) for line in main.read_text().splitlines() if line.startswith("summary:"))
    for f in tmp.glob("callgrind.out*"):
        f.unlink()
    return total


def daemon_args(tmp: Path, config: str) -> list[str]:
    return ["run", "--pins", "mock", "--display", "dummy", "--config", config, "--state-dir", str(tmp / "state")]


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    import pi_companion
    from pi_companion.config import template_text
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(pi_companion.__file__).parent)],
                   check=True, stdout=subprocess.DEVNULL)
    print(f"pi_companion from {Path(pi_companion.__file__).parent}")
    figures: dict[str, list[int]] = {"floor": [], "daemon": [], "daemon, web on": []}
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="startup-count-") as name:
            tmp = Path(name)
            figures["floor"].append(count(FLOOR, [], tmp))
            figures["daemon"].append(count(DAEMON, daemon_args(tmp, os.devnull), tmp))
        with tempfile.TemporaryDirectory(prefix="startup-count-") as name:
            tmp = Path(name)
            config = tmp / "config.toml"
            config.write_text(template_text().replace("\n# enabled = false\n", "\nenabled = true\n"))
            (tmp / "state").mkdir()
            (tmp / "state" / "host-token").write_text("a-token-from-before\n")
            figures["daemon, web on"].append(count(DAEMON, daemon_args(tmp, str(config)), tmp))
    floor = min(figures["floor"])
    for name, counts in figures.items():
        shown = ", ".join(f"{c / 1e6:.1f}" for c in counts)
        print(f"{name:<15} {shown} million instructions (x{min(counts) / floor:.3f} of the floor's least)")


if __name__ == "__main__":
    main()
