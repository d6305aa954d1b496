"""A fresh screen in a real browser (headless chromium) while one LAN client holds a slowloris
of 1 000 half-open requests and others 200 WebSockets against the real `pi-companion web`
(loopback only, bounded: tests/helpers/siege.py). The figure goes in docs/reliability.md."""
from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

import pytest

from pi_companion.web import headless
from pi_companion.web.gate import BACKLOG, FD_RESERVE, MAX_CONNECTIONS
from pi_companion.web.live import live_box

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "helpers"))
from siege import siege  # noqa: E402


def test_a_fresh_page_in_chromium_goes_live_during_the_siege(tmp_path):
    why = headless.missing()
    if why:
        pytest.fail(why)
    with live_box(tmp_path) as live, headless.chromium(*headless.SIZES["phone"]) as browser:
        resource.prlimit(live.web.pid, resource.RLIMIT_NOFILE, (1024, 1024))   # the unit's
        port = int(live.base.rsplit(":", 1)[1])

        def page() -> float:
            browser.get("about:blank")
            start = time.monotonic()
            browser.get(live.base + "/")
            headless.wait(browser, lambda d: d.find_element("id", "status").text == "live", timeout=5.0)
            return time.monotonic() - start
        figures = siege(port, live.web.pid, pages=3, seconds=2.0, probe=page)
        print(f"\nchromium, fresh page live under siege: "
              f"{', '.join(f'{s * 1000:.0f} ms' for s in figures.page_s)}; fds at peak {figures.fds_peak}")
        assert figures.page_errors == [] and len(figures.page_s) == 3, figures.page_errors
        assert MAX_CONNECTIONS + 2 * BACKLOG + FD_RESERVE <= 512 and figures.fds_peak <= 512   # of 1 024
        assert "Traceback" not in live.web_stderr()
