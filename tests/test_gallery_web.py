"""`make screenshots` on a machine without chromium: one line says so, the OLED gallery is
still drawn in full (it never needs a browser)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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
