"""How much slower a Pi Zero 2 W runs Python than this machine: a measured factor, stated sources.

The kernel is the Computer Language Benchmarks Game's n-body (plain Python, floats, lists,
loops: CPU-bound interpreter work like the box's loop). A published run of it on a Raspberry Pi
4 Model B (Cortex-A72, 1.5 GHz, performance governor) took 158.263 s for 5 000 000 steps
(Chaitanya Mehta, "Performance Analysis of Languages on Raspberry Pi",
https://chaitanyamehta.github.io/projects/performance-analysis-of-programming-languages).
We time the same kernel here (STEPS steps, best of REPEATS) and take the ratio per step: the
Pi 4 factor. We found no published time of a Python kernel on the Zero 2 W itself; it has the
Pi 3's Cortex-A53 at 1.0 GHz, and we take it as PI4_TO_ZERO2W = 2.5x slower than the Pi 4
(1.5x the clock, times about 1.7x the A72's work per clock on interpreter code) - an
assumption, stated as such, and cross-checked against the 6-12x the audit gave for this
machine. The published run used the Python of its day (3.7 or so), slower than the 3.11 timed
here, which makes the factor pessimistic rather than flattering.
"""
from __future__ import annotations

import time
from typing import Any

PUBLISHED_PI4_S = 158.263
PUBLISHED_PI4_STEPS = 5_000_000
PI4_TO_ZERO2W = 2.5
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


def run() -> dict[str, Any]:
    here = kernel_s()
    per_step_here = here / STEPS
    per_step_pi4 = PUBLISHED_PI4_S / PUBLISHED_PI4_STEPS
    pi4 = per_step_pi4 / per_step_here
    return {"kernel": "n-body (Benchmarks Game, Python)", "steps": STEPS, "here_s": here,
            "published_pi4_s": PUBLISHED_PI4_S, "published_pi4_steps": PUBLISHED_PI4_STEPS,
            "pi4_factor": pi4, "pi4_to_zero2w": PI4_TO_ZERO2W, "zero2w_factor": pi4 * PI4_TO_ZERO2W}
