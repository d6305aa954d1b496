"""`make screenshots` on a machine without chromium: one line says so, the OLED gallery is
still drawn in full (it never needs a browser)."""
from __future__ import annotations

import os
import subprocess
import time
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_screenshots_without_a_browser_render_the_oled_only(tmp_path):
    env = {**os.environ, "CHROMIUM": str(tmp_path / "no-chromium")}
    done = subprocess.run([sys.executable, "-m", "pi_companion.gallery", str(tmp_path / "out")],
                          capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == f"web pages not rendered: {tmp_path / 'no-chromium'} is missing " \
                        "(apt-get install chromium chromium-driver)"
    written = sorted(p.name for p in (tmp_path / "out").glob("*.png"))
    screens = ROOT / "docs" / "screens"
    oled = [p for p in screens.glob("*.png") if not p.name.startswith("web-")]
    assert "button-test.png" in written and len(written) == len(oled)
    assert not [n for n in written if n.startswith("web-")]


def test_screenshots_rewrite_only_pictures_that_changed(tmp_path, monkeypatch):
    """A second `make screenshots` on an unchanged checkout writes nothing (a clean tree stays
    clean); a picture that differs is written again."""
    from PIL import Image
    from pi_companion import gallery
    from pi_companion.web import headless
    monkeypatch.setattr(headless, "CHROMIUM", str(tmp_path / "no-chromium"))   # the OLED part only
    out = tmp_path / "out"
    assert gallery.main([str(out)]) == 0
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.glob("*.png")}
    Image.new("L", (512, 256)).save(out / "button-test.png")                  # a stale picture
    time.sleep(0.01)
    assert gallery.main([str(out)]) == 0
    after = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.glob("*.png")}
    assert after.pop("button-test.png")[1] == before.pop("button-test.png")[1]   # drawn again
    assert after == before                                                       # untouched
