"""The official libgpiod binding (`gpiod` 2.x, a compiled wheel) beside our own uAPI v2 reader
(pi_companion/hw/gpio_cdev.py, standard library only): what importing each costs a fresh
interpreter, measured in the same run, interleaved, as CPU time (time.process_time) inside
the child, so that the machine's other load moves both alike.

Not part of `make bench`: gpiod is no dependency of the project. Run it with an interpreter
that has gpiod installed and this checkout on its path:

    python -m venv /tmp/gpiod && /tmp/gpiod/bin/pip install 'gpiod>=2,<3'
    /tmp/gpiod/bin/python benchmarks/gpiod_binding.py [RUNS]

docs/performance.md ("gpiod 2.x or our own reader") has the figures and the decision.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The child measures the import alone; the interpreter's own start-up is outside the figure.
# "cold": in a bare interpreter; "in the daemon": after what the daemon has imported before
# its pins (gpiozero, logging, threading, dataclasses), the cost it would really add.
CHILD = "{1}import time; t = time.process_time(); import {0}; print(time.process_time() - t)"
PRELOAD = {"cold": "", "in the daemon": "import gpiozero, logging, threading, dataclasses; "}
MODULES = {"gpiod": "gpiod", "ours": "pi_companion.hw.gpio_cdev"}


def import_ms(module: str, preload: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", CHILD.format(module, preload)], env=env,
                         capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1]) * 1000


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    for module in MODULES.values():
        import_ms(module, "")             # byte code written, files in the page cache
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(runs):
        for where, preload in PRELOAD.items():
            for name, module in MODULES.items():
                times.setdefault((where, name), []).append(import_ms(module, preload))
    import gpiod
    print(f"Python {sys.version.split()[0]}, gpiod {gpiod.__version__}, {runs} runs each, interleaved")
    for where in PRELOAD:
        for name, module in MODULES.items():
            values = times[(where, name)]
            print(f"  {where:13} import {module:28} CPU median {statistics.median(values):6.2f} ms, "
                  f"min {min(values):6.2f} ms")
        ratio = statistics.median(times[(where, "gpiod")]) / statistics.median(times[(where, "ours")])
        print(f"  {where:13} gpiod / ours: x{ratio:.2f}")


if __name__ == "__main__":
    main()
