"""The Pi Zero 2 W column's source: Cortex-A53 instructions and cycles for the n-body kernel.

Not part of `make bench` (it takes minutes and needs tools a developer sets up once); its
results are the constants in `cpu_factor.py`, which `make bench` scales by this machine's own
time for the same kernel. docs/performance.md section 0 has the set-up, the figures and their
error, and the `perf stat` recipe for a real Zero.

1. Instructions: Debian's arm64 python3.11 (the interpreter a Pi running Raspberry Pi OS
   bookworm has) runs `cpu_factor.advance` under `qemu-aarch64 -cpu cortex-a53` with QEMU's
   `insn` TCG plugin (tests/plugin/insn.c of Debian's qemu source, built against the same
   version's qemu-plugin.h). The count of a run of 0 steps is taken from one of STEPS steps:
   what is left is the kernel's own (start-up and imports cancel). The same is counted for
   Debian's amd64 python3.11 under `qemu-x86_64`, for comparison.
2. Cycles per instruction: the `hotblocks` plugin lists the hottest translated blocks (start
   address, instructions, executions); each is disassembled from the arm64 python3.11 (a
   non-PIE executable: guest addresses are file addresses) and priced by
   `llvm-mca -mcpu=cortex-a53` (steady state over 100 iterations, and a single pass),
   weighted by executions. llvm-mca assumes every load hits L1 and every branch is predicted.

Usage: python benchmarks/zero2w_count.py ROOTFS PLUGINS
  ROOTFS: an arm64 Debian tree with python3.11 (mmdebstrap --variant=extract
          --architectures=arm64 --include=python3.11 bookworm ROOTFS)
  PLUGINS: a folder with insn.so and hotblocks.so built from that qemu's source
Prints one JSON object.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
STEPS = 4000
BLOCKS = 400


def kernel_script(tmp: Path) -> Path:
    script = tmp / "nbody.py"
    script.write_text("import sys\n"
                      f"sys.path.insert(0, {str(HERE)!r})\n"
                      "import cpu_factor\n"
                      "cpu_factor.advance(0.01, int(sys.argv[1]), cpu_factor.bodies())\n")
    return script


def count(cmd: list[str], log: Path) -> int:
    subprocess.run(cmd, check=True, capture_output=True, timeout=3600)
    match = re.search(r"insns: (\d+)", log.read_text())
    if match is None:
        raise RuntimeError(f"no instruction count in {log}")
    return int(match.group(1))


def per_step(prefix: list[str], python: str, plugin: Path, script: Path, tmp: Path) -> float:
    counts = []
    for steps in (0, 0, STEPS):              # the first run of 0 may compile and write .pyc
        log = tmp / "insn.log"
        counts.append(count([*prefix, "-plugin", f"{plugin},inline=on", "-d", "plugin", "-D", str(log),
                             python, "-S", "-E", str(script), str(steps)], log))
    return (counts[2] - counts[1]) / STEPS


def block_asm(binary: Path, pc: int, n: int) -> list[str] | None:
    out = subprocess.run(["llvm-objdump", "--triple=aarch64", "-d", "--no-show-raw-insn",
                          f"--start-address={pc}", f"--stop-address={pc + 4 * n}", str(binary)],
                         capture_output=True, text=True, check=True).stdout
    lines = [m[1] for line in out.splitlines() if (m := re.match(r"\s+[0-9a-f]+:\s+(.*)", line))]
    lines = [re.sub(r"\s*<[^>]*>", "", line.split("//")[0]).strip().replace("\t", " ") for line in lines]
    # Branch targets and page addresses become one label: llvm-mca prices, it does not jump.
    lines = [re.sub(r"^((?:b|bl|cbz|cbnz|tbz|tbnz|adrp|adr|b\.\w+) (?:[^,]+, )*)0x[0-9a-f]+$", r"\1L", line)
             for line in lines]
    return lines if len(lines) == n else None


def mca_cycles(asm: list[str], cpu: str, iterations: int) -> float:
    out = subprocess.run(["llvm-mca", "-mtriple=aarch64", f"-mcpu={cpu}", f"-iterations={iterations}"],
                         input="L:\n" + "\n".join(asm) + "\n", capture_output=True, text=True, check=True).stdout
    match = re.search(r"Total Cycles:\s+(\d+)", out)
    if match is None:
        raise RuntimeError("llvm-mca gave no cycle count")
    return int(match.group(1)) / iterations


def cpi(binary: Path, hot: Path, total: int) -> dict[str, float]:
    rows = [(int(m[1], 16), int(m[2]), int(m[3])) for line in hot.read_text().splitlines()
            if (m := re.match(r"0x([0-9a-f]+), \d+, (\d+), (\d+)", line))]
    cycles = {"a53_steady": 0.0, "a53_single_pass": 0.0, "a72_steady": 0.0}
    covered = 0
    for pc, n, execs in rows:
        asm = block_asm(binary, pc, n)
        if asm is None:                      # a block that runs into another symbol, or data
            continue
        cycles["a53_steady"] += mca_cycles(asm, "cortex-a53", 100) * execs
        cycles["a53_single_pass"] += mca_cycles(asm, "cortex-a53", 1) * execs
        cycles["a72_steady"] += mca_cycles(asm, "cortex-a72", 100) * execs
        covered += n * execs
    return {"covered": covered / total, "blocks": len(rows),
            **{f"cpi_{k}": v / covered for k, v in cycles.items()}}


def main(rootfs: Path, plugins: Path) -> dict[str, float]:
    a64_python = rootfs / "usr/bin/python3.11"
    qemu_a64 = ["env", f"QEMU_LD_PREFIX={rootfs}", "qemu-aarch64", "-cpu", "cortex-a53"]
    with tempfile.TemporaryDirectory(prefix="zero2w-") as name:
        tmp = Path(name)
        script = kernel_script(tmp)
        a64 = per_step(qemu_a64, str(a64_python), plugins / "insn.so", script, tmp)
        x86 = per_step(["qemu-x86_64"], "/usr/bin/python3.11", plugins / "insn.so", script, tmp)
        hot = tmp / "hot.txt"
        subprocess.run([*qemu_a64, "-plugin", str(plugins / "hotblocks.so"), "-d", "plugin", "-D", str(hot),
                        str(a64_python), "-S", "-E", str(script), str(STEPS)], check=True, timeout=3600)
        total = count([*qemu_a64, "-plugin", f"{plugins / 'insn.so'},inline=on", "-d", "plugin",
                       "-D", str(tmp / "insn.log"), str(a64_python), "-S", "-E", str(script), str(STEPS)],
                      tmp / "insn.log")
        return {"a64_insns_per_step": a64, "x86_64_insns_per_step": x86, **cpi(a64_python, hot, total)}


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(json.dumps(main(Path(sys.argv[1]), Path(sys.argv[2])), indent=2))
