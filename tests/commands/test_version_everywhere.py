"""One version number: the package's `__version__` is what pip recorded, what `--version` and
`doctor` print, and what the real web process's pages say in their footer."""
from __future__ import annotations

import importlib.metadata
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pi_companion
from helpers.common import run_cli


def test_the_installed_metadata_is_the_package_s_version():
    assert importlib.metadata.version("pi-companion") == pi_companion.__version__


def test_version_and_doctor_s_first_line_say_the_version(tmp_path):
    assert run_cli("--version").stdout.strip() == f"pi-companion {pi_companion.__version__}"
    config = tmp_path / "c.toml"
    config.write_text(f"[box]\nstate_dir = '{tmp_path}'\n")
    first = run_cli("doctor", "--config", str(config), "--pins", "mock").stdout.splitlines()[0]
    assert first.startswith(f"OK   version  pi-companion {pi_companion.__version__}, Python ")
    assert first.endswith(f" in {sys.prefix}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_web_pages_footer_says_the_version(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[web]\nenabled = true\n")
    port = free_port()
    env = {**os.environ, "RUNTIME_DIRECTORY": str(tmp_path)}
    web = subprocess.Popen([sys.executable, "-m", "pi_companion", "web", "--config", str(config),
                            "--state-dir", str(tmp_path), "--bind", "127.0.0.1", "--port", str(port)],
                           env=env, stderr=subprocess.PIPE, text=True)
    footer = f'<footer class="version">pi-companion {pi_companion.__version__}</footer>'
    try:
        pages = {}
        for path in ("/", "/host"):
            for _ in range(150):
                try:
                    pages[path] = urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2).read().decode()
                    break
                except OSError:
                    time.sleep(0.1)
        assert set(pages) == {"/", "/host"}, web.stderr
        for text in pages.values():
            assert footer in text and "<!-- version -->" not in text
    finally:
        web.terminate()
        web.wait(timeout=10)
