"""`make bench` leaves a clean checkout clean: its run-to-run figures go to the untracked
bench-latest/; only `make bench RECORD=1` (--record) writes benchmarks/results.json and the
table in docs/performance.md. (The figures themselves are stubbed: a real run takes minutes.)"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_run():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_writes_tracked_files_only_when_asked_to_record(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "path", list(sys.path))       # run.py puts benchmarks/ first: undone after
    run = load_run()
    here, docs, latest = tmp_path / "benchmarks", tmp_path / "performance.md", tmp_path / "bench-latest" / "results.json"
    here.mkdir()
    docs.write_text(f"intro\n{run.START}\nold table\n{run.END}\nrest\n")
    monkeypatch.setattr(run, "HERE", here)
    monkeypatch.setattr(run, "DOCS", docs)
    monkeypatch.setattr(run, "LATEST", latest)
    monkeypatch.setattr(run, "FIGURES", {})               # no figure measured: the run is instant
    assert run.main([]) == 0
    assert latest.exists() and not (here / "results.json").exists()
    assert "old table" in docs.read_text()                # the tracked page is left alone
    assert run.main(["--record"]) == 0
    assert (here / "results.json").exists() and "old table" not in docs.read_text()
    assert docs.read_text().startswith("intro\n") and docs.read_text().endswith(f"{run.END}\nrest\n")
