"""`make bench`: every figure beside its baseline, measured in the same run; a table and results.json.

Usage: python benchmarks/run.py [--only NAME,NAME] [--out PATH]
Names: fairness, latency, hall, process (idle + start-up), display, resume.
docs/performance.md explains each figure and how it is measured.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
warnings.filterwarnings("ignore", category=DeprecationWarning)   # luma + Pillow 13 (getdata)

import display_traffic
import fairness
import hall
import latency
import process
import resume
from harness import machine

FIGURES: dict[str, Callable[[], dict[str, Any]]] = {
    "fairness": fairness.run,
    "latency": latency.run,
    "hall": hall.run,
    "process": process.run,
    "display": display_traffic.run,
    "resume": resume.run,
}
Row = tuple[str, str, str, str, str]
DOCS = HERE.parent / "docs" / "performance.md"
START, END = "<!-- bench:start -->", "<!-- bench:end -->"


def ms(x: float) -> str:
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def latency_text(s: dict[str, float]) -> str:
    return f"{ms(s['p50_ms'])} / {ms(s['p99_ms'])} / {ms(s['max_ms'])} ms"


def rows(r: dict[str, Any]) -> list[Row]:
    out: list[Row] = []
    if "fairness" in r:
        f = r["fairness"]
        out.append(("1 fairness, correct share", f"{pct(f['ours_correct'])} of {f['pairs']} pairs",
                    f"callback order {pct(f['callback_order_correct'])}; 10 ms polling "
                    f"{pct(f['polling_10ms_correct'])}", "100 %", verdict(f["ours_correct"] == 1.0)))
    if "latency" in r:
        lat = r["latency"]
        out.append(("2 latency p50/p99/max", latency_text(lat["ours"]),
                    f"gpiozero when_pressed->LED {latency_text(lat['floor'])}", "p99 < 1 ms",
                    verdict(lat["ours"]["p99_ms"] < 1.0)))
        out.append(("  with the durable log", latency_text(lat["ours_with_log"]), "(fsync per input)",
                    "", f"n={lat['ours_with_log']['n']}"))
    if "hall" in r:
        h = r["hall"]
        need = 100 * h["hand_edges_per_s"]
        for key, label in (("decoder", "3 hall: pure decoder"), ("engine", "  engine (no pins)"),
                           ("box", "  mock pins -> Box")):
            x = h[key]
            out.append((label, f"{x['edges_per_s']:,.0f} edges/s, lost {x['lost_steps']}",
                        f"{x['edges_per_s'] / h['hand_edges_per_s']:,.0f}x a fast hand (40/s)",
                        f">= {need:,} /s",
                        verdict(x["edges_per_s"] >= need and x["lost_steps"] == 0)))
    if "process" in r:
        i, s = r["process"]["idle"], r["process"]["startup"]
        out.append(("4 idle CPU (10 s)", f"{i['daemon_pct_core']:.3f} % of a core, "
                    f"{i['daemon_wakeups_per_s']:.1f} wake-ups/s",
                    f"sleep 10: {i['sleep_pct_core']:.3f} %", "< 1 %", verdict(i["daemon_pct_core"] < 1.0)))
        out.append(("5 start-up to READY=1", f"{s['ready_s']:.3f} s (median of {s['runs']})",
                    f"importing the 3 libraries {s['floor_s']:.3f} s; x{s['ratio']:.2f}", "<= 1.5x",
                    verdict(s["ratio"] <= 1.5)))
        out.append(("  our modules imported", f"{s['our_imports_s']:.3f} s", "(where the gap is)", "", ""))
        rss = max(s["peak_rss_kb"], i["peak_rss_kb_after_idle"]) / 1024
        out.append(("  peak RSS (VmHWM)", f"{rss:.1f} MB", "", "< 50 MB", verdict(rss < 50)))
    if "display" in r:
        d = r["display"]
        for key, label in (("buzz", "6 display: a buzz"), ("score_change", "  a score change"),
                           ("wind_count", "  a live wind count"), ("unchanged", "  an unchanged frame")):
            u = d["updates"][key]
            out.append((label, f"{u['ours']} B ({pct(u['share'])}); {u['changed_bytes']} B differ",
                        f"luma ssd1306 {u['luma']} B",
                        "<= 25 %", verdict(u["share"] <= 0.25)))
        g = d["whole_game"]
        out.append(("  a whole game", f"{g['ours']:,} B for {g['frames']} frames",
                    f"luma {g['luma_every_frame']:,} B ({pct(g['share_of_luma_every_frame'])}); "
                    f"luma + skip {g['luma_changed_frames']:,} B", "<= 25 %",
                    verdict(g["share_of_luma_every_frame"] <= 0.25)))
    if "resume" in r:
        z = r["resume"]
        out.append(("7 resume", f"{z['resume_s']:.3f} s for {z['records']:,} records",
                    f"fresh start {z['fresh_start_s']:.3f} s; JSON parse alone {z['json_parse_s']:.3f} s",
                    "< 0.5 s", verdict(z["resume_s"] < 0.5 and z["same_game"])))
    return out


def table(lines: list[Row]) -> str:
    head: Row = ("figure", "ours", "baseline (same run)", "target", "")
    widths = [max(len(row[i]) for row in [head, *lines]) for i in range(5)]
    fmt = " | ".join(f"{{:<{w}}}" for w in widths)
    rule = "-+-".join("-" * w for w in widths)
    return "\n".join([fmt.format(*head), rule, *(fmt.format(*row) for row in lines)])


def header(m: dict[str, Any]) -> str:
    return (f"pi-companion benchmarks, {m['when']}, {m['cpu']} x{m['cores']}, Python {m['python']}, "
            f"commit {m['commit']}, load {m['load_before']:.2f} -> {m['load_after']:.2f}, "
            f"{m['seconds']:.0f} s")


def update_docs(head: str, body: str) -> bool:
    """Put the table between the markers in docs/performance.md (a full run only)."""
    try:
        text = DOCS.read_text()
    except OSError:
        return False
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        return False
    block = f"{START}\n```\n{head}\n{body}\n```\n"
    DOCS.write_text(text[:start] + block + text[end:])
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated figures: " + ", ".join(FIGURES))
    parser.add_argument("--out", help="where to write the JSON (default: results.json for a full "
                        "run; a partial --only run writes nothing unless given --out)")
    parser.add_argument("--no-docs", action="store_true", help="leave docs/performance.md alone")
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(FIGURES)
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        parser.error(f"unknown figure(s): {', '.join(unknown)}")
    results: dict[str, Any] = {"machine": machine()}
    started = time.perf_counter()
    for name in names:
        t = time.perf_counter()
        print(f"... {name}", file=sys.stderr, flush=True)
        results[name] = FIGURES[name]()
        results[name]["seconds"] = round(time.perf_counter() - t, 1)
    results["machine"]["load_after"] = os.getloadavg()[0]
    results["machine"]["seconds"] = round(time.perf_counter() - started, 1)
    lines = rows(results)
    results["table"] = [dict(zip(("figure", "ours", "baseline", "target", "verdict"), row)) for row in lines]
    out = args.out or (None if args.only else str(HERE / "results.json"))
    if out:
        Path(out).write_text(json.dumps(results, indent=2) + "\n")
    m = results["machine"]
    print(header(m))
    print(table(lines))
    if out:
        print(f"written: {out}")
    if not args.no_docs and not args.only and update_docs(header(m), table(lines)):
        print(f"updated: {DOCS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
