"""How much slower a Pi Zero 2 W runs Python than this machine: a derived factor, stated sources.

The kernel is the Computer Language Benchmarks Game's n-body (plain Python, floats, lists,
loops: CPU-bound interpreter work like the box's loop), timed here (STEPS steps, best of
REPEATS, thread CPU time) each run. The Zero 2 W's time for one step is derived, not assumed:
- instructions: Debian's arm64 python3.11 runs the same kernel under `qemu-aarch64 -cpu
  cortex-a53` with QEMU's `insn` TCG plugin: A53_INSNS_PER_STEP Arm instructions a step (a run
  of 0 steps taken from a run of 4 000: start-up cancels; the same on any host, run to run);
- cycles: llvm-mca's Cortex-A53 model prices the 400 hottest translated blocks (86 % of the
  kernel's instructions, weighted by executions): A53_CPI cycles per instruction in steady
  state, A53_CPI_SINGLE_PASS for each block run once from an empty pipeline;
- the Zero 2 W's clock: 1.0 GHz.
`benchmarks/zero2w_count.py` reproduces the two constants (docs/performance.md section 0 says
how to set it up, and the error: llvm-mca sees no cache miss and no mispredicted branch, each of
which only adds cycles on the real core; we state +-40 % on the Zero's time).

Cross-check: a published run of n-body on a Raspberry Pi 4 Model B (Cortex-A72, 1.5 GHz) took
158.263 s for 5 000 000 steps (Chaitanya Mehta, "Performance Analysis of Languages on Raspberry
Pi", https://chaitanyamehta.github.io/projects/performance-analysis-of-programming-languages), on
an older, slower Python than 3.11. The factor before this one assumed the Zero 2 W 2.5x slower
than that Pi 4 (PI4_TO_ZERO2W_ASSUMED); the derived time is 4.5x, and both are reported.
"""
from __future__ import annotations

import time
from typing import Any

PUBLISHED_PI4_S = 158.263
PUBLISHED_PI4_STEPS = 5_000_000
PI4_TO_ZERO2W_ASSUMED = 2.5       # the old column's assumption, kept for comparison
A53_INSNS_PER_STEP = 57_579       # qemu-aarch64 -cpu cortex-a53, insn plugin, Debian python3.11 3.11.2
A53_CPI = 2.48                    # llvm-mca -mcpu=cortex-a53, steady state, 400 hottest blocks
A53_CPI_SINGLE_PASS = 2.75        # the same blocks, each run once from an empty pipeline
ZERO2W_HZ = 1.0e9
ZERO2W_ERROR = 0.4                # +-40 % on the Zero's time (see docs/performance.md section 0)
STEPS = 100_000
REPEATS = 3

PI = 3.14159265358979323
SOLAR_MASS = 4 * PI * PI
DAYS_PER_YEAR = 365.24


def bodies() -> list[tuple[list[float], list[float], float]]:
    return [
        ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], SOLAR_MASS),
        ([4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01],
         [1.66007664274403694e-03 * DAYS_PER_YEAR, 7.69901118419740425e-03 * DAYS_PER_YEAR,
          -6.90460016972063023e-05 * DAYS_PER_YEAR], 9.54791938424326609e-04 * SOLAR_MASS),
        ([8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01],
         [-2.76742510726862411e-03 * DAYS_PER_YEAR, 4.99852801234917238e-03 * DAYS_PER_YEAR,
          2.30417297573763929e-05 * DAYS_PER_YEAR], 2.85885980666130812e-04 * SOLAR_MASS),
        ([1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01],
         [2.96460137564761618e-03 * DAYS_PER_YEAR, 2.37847173959480950e-03 * DAYS_PER_YEAR,
          -2.96589568540237556e-05 * DAYS_PER_YEAR], 4.36624404335156298e-05 * SOLAR_MASS),
        ([1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01],
         [2.68067772490389322e-03 * DAYS_PER_YEAR, 1.62824170038242295e-03 * DAYS_PER_YEAR,
          -9.51592254519715870e-05 * DAYS_PER_YEAR], 5.15138902046611451e-05 * SOLAR_MASS),
    ]


def advance(dt: float, n: int, system: list[tuple[list[float], list[float], float]]) -> None:
    pairs = [(system[i], system[j]) for i in range(len(system)) for j in range(i + 1, len(system))]
    for _ in range(n):
        for (([x1, y1, z1], v1, m1), ([x2, y2, z2], v2, m2)) in pairs:
            dx, dy, dz = x1 - x2, y1 - y2, z1 - z2
            mag = dt * ((dx * dx + dy * dy + dz * dz) ** (-1.5))
            b1m, b2m = m1 * mag, m2 * mag
            v1[0] -= dx * b2m
            v1[1] -= dy * b2m
            v1[2] -= dz * b2m
            v2[0] += dx * b1m
            v2[1] += dy * b1m
            v2[2] += dz * b1m
        for (r, [vx, vy, vz], _m) in system:
            r[0] += dt * vx
            r[1] += dt * vy
            r[2] += dt * vz


def kernel_s(steps: int = STEPS) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        system = bodies()
        start = time.thread_time()
        advance(0.01, steps, system)
        best = min(best, time.thread_time() - start)
    return best


def zero2w_step_s() -> float:
    """The Zero 2 W's time for one n-body step: Arm instructions x cycles each / clock."""
    return A53_INSNS_PER_STEP * A53_CPI / ZERO2W_HZ


def run() -> dict[str, Any]:
    here = kernel_s()
    per_step_here = here / STEPS
    per_step_pi4 = PUBLISHED_PI4_S / PUBLISHED_PI4_STEPS
    pi4 = per_step_pi4 / per_step_here
    zero = zero2w_step_s() / per_step_here
    return {"kernel": "n-body (Benchmarks Game, Python)", "steps": STEPS, "here_s": here,
            "published_pi4_s": PUBLISHED_PI4_S, "published_pi4_steps": PUBLISHED_PI4_STEPS,
            "pi4_factor": pi4, "a53_insns_per_step": A53_INSNS_PER_STEP, "a53_cpi": A53_CPI,
            "zero2w_step_us": 1e6 * zero2w_step_s(), "zero2w_factor": zero,
            "zero2w_factor_range": [zero * (1 - ZERO2W_ERROR), zero * (1 + ZERO2W_ERROR)],
            "zero2w_over_pi4": zero2w_step_s() / per_step_pi4,
            "zero2w_factor_assumed": pi4 * PI4_TO_ZERO2W_ASSUMED}
