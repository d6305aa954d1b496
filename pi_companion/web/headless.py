"""Headless chromium for the big screen's pages: Debian's chromium + chromedriver (no browser
download), driven by selenium. One launcher for `make browser-test`, `make screenshots` and the
web benchmark, so the three see the pages the same way; and `LAYOUT`, the one measure of a TV
board that the browser tests apply to every view."""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
SIZES = {"phone": (390, 844), "tv": (1920, 1080)}


def missing() -> str | None:
    """Why no browser can be started here (one line), or None when one can."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not shutil.which(path):
            return f"{path} is missing (apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    return None


@contextmanager
def chromium(width: int, height: int) -> Iterator[Any]:
    """A headless chromium window of `width` x `height` CSS pixels, in a throwaway profile."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    why = missing()
    if why:
        raise RuntimeError(why)
    profile = tempfile.mkdtemp(prefix="pi-companion-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                "--disable-dev-shm-usage", f"--user-data-dir={profile}", f"--window-size={width},{height}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        driver.set_window_size(width, height)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait(driver: Any, predicate: Any, timeout: float = 5.0) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(driver, timeout, poll_frequency=0.01).until(predicate)


# Everything visible inside the viewport and inside its panel, the moment's parts apart; on a
# TV (arguments[0]) no text under 28 px in the current moment nor under 20 px elsewhere; the
# board fills the width and the height.
LAYOUT = """
const tv = arguments[0], W = window.innerWidth, H = window.innerHeight, out = [];
const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
  (typeof el.className === "string" && el.className ? "." + el.className.split(" ").join(".") : "");
const off = (r) => r.left < -1 || r.top < -1 || r.right > W + 1 || r.bottom > H + 1;
const where = (r) => "[" + [r.left, r.top, r.right, r.bottom].map(Math.round).join(",") + "]";
for (const el of document.body.querySelectorAll("*")) {
  if (!shown(el)) continue;
  const r = el.getBoundingClientRect();
  if ((r.width || r.height) && off(r)) out.push("outside: " + name(el) + " " + where(r));
}
const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let n = walk.nextNode(); n; n = walk.nextNode()) {
  const el = n.parentElement;
  if (!n.textContent.trim() || !shown(el)) continue;
  const range = document.createRange(); range.selectNodeContents(n);
  const cut = getComputedStyle(el).textOverflow === "ellipsis";     // cut with "...": its box counts
  if (!cut) for (const r of range.getClientRects()) if (off(r)) out.push("text outside: '" + n.textContent + "' " + where(r));
  const px = parseFloat(getComputedStyle(el).fontSize), least = el.closest("#moment") ? 28 : 20;
  if (tv && px < least - 0.01) out.push("small: '" + n.textContent.trim() + "' " + px + "px in " + name(el));
}
// Nothing spills out of its panel, and the moment's title, picture and words do not overlap.
const inside = (r, box) => r.left >= box.left - 1 && r.top >= box.top - 1 && r.right <= box.right + 1 && r.bottom <= box.bottom + 1;
for (const id of ["moment", "table"]) {
  const box = document.getElementById(id).getBoundingClientRect();
  for (const el of document.getElementById(id).querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (shown(el) && (r.width || r.height) && !inside(r, box)) out.push("spills from #" + id + ": " + name(el) + " " + where(r));
  }
}
const parts = [...document.querySelectorAll("#moment .moment-title, #moment .art > *, #moment .words > *")]
  .filter((el) => shown(el) && el.textContent.trim() !== "" || el.matches(".art > :not([hidden])")).filter(shown);
for (let i = 0; i < parts.length; i++) for (let j = i + 1; j < parts.length; j++) {
  const a = parts[i].getBoundingClientRect(), b = parts[j].getBoundingClientRect();
  if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1)
    out.push("overlap: " + name(parts[i]) + " " + where(a) + " and " + name(parts[j]) + " " + where(b));
}
const d = document.documentElement;
if (d.scrollHeight > H + 1 || d.scrollWidth > W + 1) out.push("scrolls: " + d.scrollWidth + "x" + d.scrollHeight);
const b = document.getElementById("board").getBoundingClientRect();
if (b.width < 0.9 * W || b.bottom < 0.85 * H) out.push("does not fill: " + where(b));
return out;
"""
