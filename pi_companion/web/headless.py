"""Headless chromium for the big screen's pages: Debian's chromium + chromedriver (no browser
download), driven by selenium. One launcher for `make browser-test`, `make screenshots` and the
web benchmark, so the three see the pages the same way."""
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
