"""`make bench`: every figure beside its baseline, measured in the same run; a table and results.json.

Usage: python benchmarks/run.py [--only NAME,NAME] [--out PATH]
Names: cpu (the Pi Zero 2 W factor), fairness, latency, instructions (callgrind), hall, process (idle + start-up),
display, resume, durability, web (the big screen), tone (hardware vs software PWM). BENCH_DAEMON_PRESSES sets the headline latency's presses (default 1 000).
docs/performance.md explains each figure and how it is measured.
"""
from __future__ import annotations

import argparse
import json
import logging
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

import cpu_factor
import display_traffic
import durability
import fairness
import hall
import instructions
import latency
import process
import resume
import tone_pwm
import web
from harness import machine

FIGURES: dict[str, Callable[[], dict[str, Any]]] = {
    "cpu": cpu_factor.run,
    "fairness": fairness.run,
    "latency": latency.run,
    "instructions": instructions.run,
    "hall": hall.run,
    "process": process.run,
    "display": display_traffic.run,
    "resume": resume.run,
    "durability": durability.run,
    "web": web.run,
    "tone": tone_pwm.run,
}
Row = tuple[str, str, str, str, str, str]
DEFAULT_ZERO2W_FACTOR = 30.0      # used only by a partial run without the `cpu` figure (derived: ~143 us / ~4-6 us a step)
DOCS = HERE.parent / "docs" / "performance.md"
LATEST = HERE.parent / "bench-latest" / "results.json"   # untracked (.gitignore: bench-*/)
START, END = "<!-- bench:start -->", "<!-- bench:end -->"


def ms(x: float) -> str:
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


# Goals issue 27 retired (none is something a player can feel; docs/performance.md, "Retired
# goals"): their rows still print the figure beside its baseline, with the old target in
# brackets and no verdict.
RETIRED = "retired"


def latency_text(s: dict[str, float]) -> str:
    return f"{ms(s['p50_ms'])} / {ms(s['p99_ms'])} / {ms(s['max_ms'])} ms"


DRIVERS_SHOWN = ("ssd1306", "sh1106")


def rows(r: dict[str, Any]) -> list[Row]:
    out: list[Row] = []
    k = r["cpu"]["zero2w_factor"] if "cpu" in r else DEFAULT_ZERO2W_FACTOR

    def zero(value: float, unit: str, ok: bool, fmt: str = "{:.2f}") -> str:
        return f"{fmt.format(value)} {unit}" + ("" if ok else " MISSES")

    if "cpu" in r:
        c = r["cpu"]
        lo, hi = c["zero2w_factor_range"]
        out.append(("0 Pi Zero 2 W factor", f"x{c['zero2w_factor']:.1f} ({lo:.0f}-{hi:.0f}; n-body "
                    f"{c['here_s']:.3f} s here, {c['zero2w_step_us']:.0f} us a step on the A53)",
                    f"Pi 4 published: x{c['pi4_factor']:.1f}; Zero = Pi 4 x{c['zero2w_over_pi4']:.1f} "
                    f"(was assumed x2.5: x{c['zero2w_factor_assumed']:.1f})", "", "", ""))
    if "fairness" in r:
        f = r["fairness"]
        out.append(("1 fairness, pumped", f"{pct(f['ours_correct'])} of {f['pairs']} pairs",
                    f"callback order {pct(f['callback_order_correct'])}", "100 %",
                    verdict(f["ours_correct"] == 1.0), ""))
        lv = f["live"]
        ours = " / ".join(f"{100 * lv['ours'][d]:.1f}" for d in lv["ours"])
        no_look = " / ".join(f"{100 * lv['no_look'][d]:.1f}" for d in lv["no_look"])
        old = " / ".join(f"{100 * lv['old_loop'][d]:.1f}" for d in lv["old_loop"])
        delays = " / ".join(lv["ours"])
        out.append((f"  live, late {delays} ms", f"{ours} % ({lv['races_per_delay']} races each)",
                    f"no look at the pins {no_look} %; old loop {old} %; "
                    f"10 ms polling thread {pct(f['polling_10ms_correct'])}",
                    "100 %", verdict(all(v == 1.0 for v in lv["ours"].values())), ""))
    if "latency" in r:
        lat = r["latency"]
        d = lat["daemon"]
        goal = d["settle_ms"] + 0.5
        out.append(("2 press->LED, daemon config", latency_text(d) + f" (n={d['n']})",
                    f"gpiozero when_pressed->LED {latency_text(lat['floor'])}", f"(p99 <= {goal:.1f} ms)",
                    RETIRED, ""))
        out.append(("  loop CPU per decision", f"p50 {ms(d['cpu_p50_ms'])} / p99 {ms(d['cpu_p99_ms'])} ms",
                    "(press, window close, 2 fsynced records, LEDs)", "(<= 0.15 ms)", RETIRED,
                    zero(d["cpu_p50_ms"] * k, "ms", True)))
        if "cpu_wait_floor_p50_ms" in d:
            out.append(("  of it: the two waits alone", f"p50 {ms(d['cpu_wait_floor_p50_ms'])} ms",
                        f"a thread woken by a put, then a {d['settle_ms']:g} ms timed wait, nothing "
                        f"else; ours warm ({d['warm_idle_ms']:g} ms idle) p50 {ms(d['cpu_warm_p50_ms'])} ms",
                        "", "", ""))
        out.append(("  frame after the decision", f"p50 {ms(d['frame_cpu_p50_ms'])} ms CPU", "(render + send)",
                    "", "", zero(d["frame_cpu_p50_ms"] * k, "ms", True)))
        if "phases_ms" in d:
            ph = d["phases_ms"]

            def p50_p99(key: str) -> str:
                return f"{ph[key]['p50']:.3f}/{ph[key]['p99']:.2f}"
            out.append(("  where it goes, p50/p99 ms", f"wake {p50_p99('wake')}; window closed late "
                        f"{p50_p99('close_late')}", f"press records' fsync wait {p50_p99('durable_wait')}; "
                        f"decision + LEDs {p50_p99('decide_and_leds')}", "", "", ""))
        out.append(("  warm, settle 0, no log", latency_text(lat["warm_settle0"]), "(the old headline)",
                    "", f"n={lat['warm_settle0']['n']}", ""))
    if "instructions" in r:
        ins = r["instructions"]
        if "skipped" in ins:
            out.append(("  instructions per buzz", f"skipped: {ins['skipped']}", "", "", "", ""))
        else:
            out.append(("  instructions per buzz", f"{ins['per_buzz']:,.0f} (callgrind, {ins['buzzes']} buzzes)",
                        f"gpiozero when_pressed->LED {ins['gpiozero_per_press']:,.0f} per press "
                        f"(x{ins['per_buzz'] / ins['gpiozero_per_press']:.2f})", "<= 4x",
                        verdict(ins["per_buzz"] <= 4 * ins["gpiozero_per_press"]), ""))
    if "hall" in r:
        h = r["hall"]
        for key, label, need in (("decoder", "3 hall: pure decoder", 4000), ("engine", "  engine (no pins)", 4000),
                                 ("box", "  mock pins -> Box", 4000),
                                 ("box_logged", "  mock pins -> Box, log on", 10000)):
            if key not in h:
                continue
            x = h[key]
            out.append((label, f"{x['edges_per_s']:,.0f} edges/s, lost {x['lost_steps']}",
                        f"{x['edges_per_s'] / h['hand_edges_per_s']:,.0f}x a fast hand (40/s)",
                        f">= {need:,} /s", verdict(x["edges_per_s"] >= need and x["lost_steps"] == 0),
                        zero(x["edges_per_s"] / k, "/s", x["edges_per_s"] / k >= 40, "{:,.0f}")))
    if "hall" in r and "spin_coalesced" in r["hall"]:
        h = r["hall"]
        c, e, f = h["spin_coalesced"], h["spin_every_edge"], h["spin_no_frames"]
        x = c["loop_cpu_per_edge_ms"]
        out.append((f"  spin {c['rate']:.0f} edges/s: loop CPU per edge",
                    f"{x:.3f} ms ({c['frames']} frames, 1/{1 / h['spin_frame_s']:.0f} s; last shows {c['last_frame_count']}"
                    f"/{c['edges']})",
                    f"every edge drawn {e['loop_cpu_per_edge_ms']:.3f} ms ({e['frames']} frames); "
                    + (f"every edge waking the loop {h['spin_no_tray']['loop_cpu_per_edge_ms']:.3f} ms; "
                       if "spin_no_tray" in h else "")
                    + f"edges alone {f['loop_cpu_per_edge_ms']:.3f} ms", "<= 0.1 ms",
                    verdict(x <= 0.1 and c["lost_steps"] == 0 and c["last_frame_count"] == c["edges"]),
                    zero(x * k, "ms", x * k <= 1.0, "{:.2f}")))
        if "spin_wake_floor" in h:
            w = h["spin_wake_floor"]
            edge_ms = 1 / (w["period_s"] * c["rate"]) / 1000      # per wake -> per edge, ms
            out.append(("  of a spin: waking once a frame",
                        f"a bare thread {w['nothing_us']:.0f} us a wake ({w['nothing_us'] * edge_ms:.3f} ms "
                        f"an edge); drawing a frame {w['frame_us']:.0f} us ({w['frame_us'] * edge_ms:.3f} ms)",
                        f"the same without sleeping: {w['nothing_warm_us']:.1f} / {w['frame_warm_us']:.0f} us "
                        "(warm)", "", "", ""))
        if "pin_cpu_per_edge_ms" in c:
            out.append(("  of a spin: the pin callbacks",
                        f"{c['pin_cpu_per_edge_ms']:.3f} ms CPU per edge, the driving thread",
                        "gpiozero's mock pin machinery + the device's callback + the hand-over", "", "",
                        zero(c["pin_cpu_per_edge_ms"] * k, "ms", True, "{:.2f}")))
    if "latency" in r and "sync_delay" in r["latency"]:
        rows = r["latency"]["sync_delay"]
        base = rows["0"]
        for key in [k for k in rows if "waits" not in k]:
            row, before = rows[key], rows.get(f"{key} lamp waits")
            moved = row["cpu_p99_ms"] - base["cpu_p99_ms"]
            out.append((f"  press -> LED, each sync +{key} ms",
                        f"p50 {row['p50_ms']:.2f} / p99 {row['p99_ms']:.2f} ms; loop CPU p50 "
                        f"{row['cpu_p50_ms']:.3f} / p99 {row['cpu_p99_ms']:.3f} ms (n {row['n']})",
                        "" if before is None else f"lamp waiting for the sync: p50 {before['p50_ms']:.2f} / "
                        f"p99 {before['p99_ms']:.2f} ms", "p99 moves <= 1 ms",
                        verdict(row["p50_ms"] - base["p50_ms"] <= 1.0 and moved <= 1.0), ""))
    if "process" in r:
        i, s_ = r["process"]["idle"], r["process"]["startup"]
        out.append((f"4 idle CPU ({i['window_s']:.0f} s)", f"{i['daemon_pct_core']:.4f} % of a core, "
                    f"{i['daemon_wakeups_per_s']:.2f} wake-ups/s",
                    f"sleep: {i['sleep_pct_core']:.4f} %", "<= 0.03 %", verdict(i["daemon_pct_core"] <= 0.03),
                    zero(i["daemon_pct_core"] * k, "%", i["daemon_pct_core"] * k <= 0.3, "{:.3f}")))
        # The verdict rests on the main thread's CPU time (load barely moves it); wall beside it.
        cpu_runs = s_["cpu_ratios_each_run"]
        out.append(("5 start-up to READY=1", f"{s_['ready_cpu_s']:.3f} s CPU; wall {s_['ready_s']:.3f} s "
                    f"(medians of {s_['runs']})",
                    f"importing the 3 libraries {s_['floor_cpu_s']:.3f} s CPU, x{s_['cpu_ratio']:.2f} "
                    f"(runs x{min(cpu_runs):.2f}-{max(cpu_runs):.2f}); wall {s_['floor_s']:.3f} s, x{s_['ratio']:.2f}",
                    "<= 1.15x", verdict(s_["cpu_ratio"] <= 1.15), zero(s_["ready_cpu_s"] * k, "s", True)))
        out.append(("  our modules imported", f"{s_['our_imports_cpu_s']:.3f} s CPU; wall {s_['our_imports_s']:.3f} s",
                    "(where the gap is)", "", "", ""))
        rss = s_["peak_rss_kb"] / 1024
        floor_rss = s_["floor_rss_kb"] / 1024
        out.append(("  RSS at READY (VmHWM)", f"{rss:.1f} MB; after idle {i['peak_rss_kb_after_idle'] / 1024:.1f} MB",
                    f"import floor {floor_rss:.1f} MB; x{rss / floor_rss:.2f}", "<= 1.1x",
                    verdict(rss / floor_rss <= 1.1), ""))
    if "display" in r:
        dd = r["display"]
        for c, label in (("ssd1306", "6 OLED bus, Hands Up! hour"), ("sh1106", "  the same on an SH1106")):
            hh = dd["hands_up_hour"][c]
            every = hh["frames_drawn"] * dd["full_frame_ms"][c] / 1000
            out.append((label, f"{hh['ours']['bus_s']:.2f} s, {hh['ours']['transfers']:,} transfers",
                        f"luma + skip {hh['luma']['bus_s']:.2f} s ({pct(hh['share'])}); luma every frame "
                        f"{every:.1f} s ({pct(hh['ours']['bus_s'] / every)})", "(<= 25 %)", RETIRED, ""))
        if "worst_case_ms" in dd:
            for c in DRIVERS_SHOWN:
                hh = dd["hands_up_hour"][c]
                out.append((f"  worst single frame, {c}", f"hour {hh['worst_frame_ms']:.3f} ms; any frame "
                            f"{dd['worst_case_ms'][c]:.3f} ms (400 kHz)",
                            f"luma {dd['full_frame_ms'][c]:.3f} ms; hour frames over luma's: "
                            f"{hh['frames_over_luma']}", "<= 25 ms",
                            verdict(max(hh["worst_frame_ms"], dd["worst_case_ms"][c]) <= 25.0), ""))
        hh = dd["hands_up_hour"]["ssd1306"]
        out.append(("  floor: differing bytes alone", f"{hh['bound_bus_s']:.2f} s ({hh['differing_bytes']:,} B)",
                    f"{pct(hh['bound_bus_s'] / hh['luma']['bus_s'])} of luma + skip", "", "", ""))
        for key, label in (("buzz", "  a buzz"), ("score_change", "  a score change"),
                           ("wind_count", "  a live wind count")):
            u = dd["typical"][key]
            out.append((label, f"{ms(u['ours_bus_ms'])} ms, {u['ours_transfers']} transfers ({pct(u['share'])})",
                        f"luma {ms(u['luma_bus_ms'])} ms; {u['changed_bytes']} B differ", "(<= 25 %)",
                        RETIRED, ""))
    if "resume" in r:
        z = r["resume"]
        for size, goal in (("100000", 1.0), ("600000", None), ("1000000", None)):
            if size in z:
                x = z[size]
                # The verdict rests on CPU time (the machine's other load barely moves it); the
                # wall-clock time is shown beside it.
                cpu = x["resume_cpu_s"]
                label = f"7 resume {int(size):,} records" + (" (10x an evening)" if size == "600000" else "")
                out.append((label,
                            f"{cpu:.2f} s CPU ({x['resume_s']:.2f} s wall), RSS +{x['rss_over_fresh_mb']:.1f} MB",
                            f"read+check only {x['read_only_cpu_s']:.2f} s CPU; fresh start "
                            f"{z['fresh_start_cpu_s']:.3f} s CPU, {z['fresh_peak_rss_kb'] / 1024:.1f} MB",
                            f"< {goal:g} s, +10 MB" if goal else "+10 MB",
                            verdict((goal is None or cpu < goal) and x["rss_over_fresh_mb"] <= 10
                                    and x["same_game"]),
                            zero(cpu * k, "s", True)))
    if "durability" in r:
        d = r["durability"]
        dec, base = d["decision"], d["decision_per_record"]
        out.append(("8 syncs per decision",
                    f"{dec['syncs_per_decision']:.2f} ({dec['records_per_decision']:.0f} records)",
                    f"sync per record {base['syncs_per_decision']:.2f}", "< 1 per record",
                    verdict(dec["syncs_per_decision"] < dec["records_per_decision"]), ""))
        out.append(("  press -> LED p50/p99",
                    f"{dec['press_to_led_p50_ms']:.2f} / {dec['press_to_led_p99_ms']:.2f} ms",
                    f"sync per record {base['press_to_led_p50_ms']:.2f} / "
                    f"{base['press_to_led_p99_ms']:.2f} ms", "", "", ""))
        w, wb = d["wind"], d["wind_per_record"]
        out.append(("  syncs per wind", f"{w['syncs_per_wind']:.1f} ({w['records_per_wind']:.0f} records)",
                    f"sync per record {wb['syncs_per_wind']:.1f}", "< 1 per record",
                    verdict(w["syncs_per_wind"] < w["records_per_wind"]), ""))
        h, hu = d["hall_logged"], d["hall_unlogged"]
        out.append(("  hall with the log on",
                    f"{h['edges_per_s']:,.0f} edges/s, {h['syncs']} syncs, lost {h['lost_steps']}",
                    f"no log {hu['edges_per_s']:,.0f} edges/s (x{h['edges_per_s'] / hu['edges_per_s']:.2f})",
                    ">= 10,000 /s", verdict(h["edges_per_s"] >= 10_000 and h["lost_steps"] == 0),
                    zero(h["edges_per_s"] / k, "/s", h["edges_per_s"] / k >= 40, "{:,.0f}")))
        y = d["sync"]
        out.append(("  one line made durable", f"fdatasync {y['fdatasync_us']:,.0f} us",
                    f"fsync {y['fsync_us']:,.0f} us; preallocated {y['prealloc_fdatasync_us']:,.0f} us",
                    "", "", ""))
    if "web" in r:
        w = r["web"]
        c0, c50, off, h32 = w["cpu_0"], w["cpu_50"], w["cpu_off"], w["cpu_hub32"]
        out.append(("9 big screen: loop CPU/decision",
                    f"50 WebSockets {c50['loop_median_us']:.0f} us (x{w['ratio_50_to_0']:.3f})",
                    f"0 clients {c0['loop_median_us']:.0f} us; web off {off['loop_median_us']:.0f} us",
                    "< +5 %", verdict(w["met"]), f"{c50['loop_median_us'] * k / 1000:.1f} ms"))
        out.append((f"  hub's {w['hub_clients_max']} clients, snapshots",
                    f"{h32['loop_median_us']:.0f} us (x{w['ratio_hub32_to_0']:.3f}); snapshots "
                    f"{c0['snapshot_median_us']:.0f} us of it",
                    f"medians of {c0['n']} decisions each, interleaved", "", "", ""))
        out.append(("  off the loop: hub, web proc.",
                    f"50 WS: hub thread {c50['hub_median_us']:.0f} us, web {c50['web_mean_us']:.0f} us",
                    f"0 clients: hub thread {c0['hub_median_us']:.0f} us, web {c0['web_mean_us']:.0f} us",
                    "", "", ""))
        b = w["browser"]
        out.append(("  web process", f"RSS {w['web_rss_mib']:.1f} MiB with 50 sockets, import {w['import_ms']:.0f} ms",
                    "", "", "", f"import {w['import_ms'] * k / 1000:.1f} s"))
        if "page" in w:
            out.append(("  TV board page weight", f"{w['page']['bytes']:,} B in {len(w['page']['files'])} files",
                        f"{w['page']['external']} references elsewhere", "no external fetch",
                        verdict(w["page"]["external"] == 0), ""))
        out.append(("  press->TV board p50 / p99",
                    "no chromium here" if b is None else f"{ms(b['p50_ms'])} / {ms(b['p99_ms'])} ms (n={b['n']})",
                    "" if b is None or "oled_p50_ms" not in b else
                    f"press->box's OLED frame {ms(b['oled_p50_ms'])} / {ms(b['oled_p99_ms'])} ms",
                    "p50 < 200 ms", "" if b is None else verdict(b["p50_ms"] < 200), ""))
    if "tone" in r:
        out += tone_pwm.rows(r["tone"], k)
    return out


def table(lines: list[Row]) -> str:
    head: Row = ("figure", "ours", "baseline (same run)", "target", "", "Pi Zero 2 W estimate")
    widths = [max(len(row[i]) for row in [head, *lines]) for i in range(6)]
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


class ErrorCount(logging.Handler):
    """Counts the ERROR records the box logs while a figure runs."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.count, self.first = 0, None

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        if self.first is None:
            self.first = record.getMessage() + (f" ({record.exc_info[1]!r})" if record.exc_info else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated figures: " + ", ".join(FIGURES))
    parser.add_argument("--out", help="where to write the JSON (default: bench-latest/results.json "
                        "for a full run, benchmarks/results.json with --record; a partial --only run "
                        "writes nothing unless given --out)")
    parser.add_argument("--record", action="store_true", help="a full run only: write the figures "
                        "into the tracked benchmarks/results.json and docs/performance.md (make bench "
                        "RECORD=1); without it a run leaves every tracked file alone")
    parser.add_argument("--no-docs", action="store_true", help="with --record: leave docs/performance.md alone")
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(FIGURES)
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        parser.error(f"unknown figure(s): {', '.join(unknown)}")
    results: dict[str, Any] = {"machine": machine()}
    started = time.perf_counter()
    errors = ErrorCount()
    logging.getLogger().addHandler(errors)
    for name in names:
        t = time.perf_counter()
        print(f"... {name}", file=sys.stderr, flush=True)
        results[name] = FIGURES[name]()
        results[name]["seconds"] = round(time.perf_counter() - t, 1)
        if errors.first is not None:
            # A box that logged an error measured something else than the daemon (a stale
            # stand-in once made every turn of the loop raise): no figure from it is kept.
            print(f"error: figure {name}: the box logged {errors.count} error(s), the first: {errors.first}",
                  file=sys.stderr)
            return 1
    results["machine"]["load_after"] = os.getloadavg()[0]
    results["machine"]["seconds"] = round(time.perf_counter() - started, 1)
    lines = rows(results)
    results["table"] = [dict(zip(("figure", "ours", "baseline", "target", "verdict", "zero2w"), row))
                        for row in lines]
    record = args.record and not args.only
    out = args.out or (None if args.only else str(HERE / "results.json" if record else LATEST))
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(results, indent=2) + "\n")
    m = results["machine"]
    print(header(m))
    print(table(lines))
    if out:
        print(f"written: {out}")
    if record and not args.no_docs and update_docs(header(m), table(lines)):
        print(f"updated: {DOCS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
