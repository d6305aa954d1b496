"""One writer per state directory: the first `pi-companion run` holds an exclusive flock on the
directory's lock file for its life; a second daemon, or a `simulate --state-dir` on the same
directory, stops at once with one line naming the holder's pid (exit 75), and never touches the
log. Readers (`status`, the web's history) read without the lock. Real processes throughout."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request

from helpers.common import wait_for
from helpers.daemons import ready
from helpers.terminal import Terminal

from pi_companion.web.live import start_web

EXIT_BUSY = 75


def second_daemon(state):
    return subprocess.run([sys.executable, "-m", "pi_companion", "run", "--pins", "mock",
                           "--display", "dummy", "--config", os.devnull, "--state-dir", str(state)],
                          capture_output=True, text=True, timeout=60)


def test_a_second_daemon_stops_at_once_naming_the_first_and_leaves_the_log_alone(tmp_path):
    state = tmp_path / "state"
    with ready(tmp_path) as (first, sock):
        assert wait_for(lambda: (state / "current.log").exists())      # the writer's
        log_before = (state / "current.log").read_bytes()
        out = second_daemon(state)
        assert out.returncode == EXIT_BUSY
        assert out.stderr.count("\n") == 1 and f"pid {first.pid}" in out.stderr, out.stderr
        assert "Traceback" not in out.stderr
        assert (state / "current.log").read_bytes() == log_before        # not a byte written
        assert first.poll() is None                                       # the first plays on
        status = subprocess.run([sys.executable, "-m", "pi_companion", "status", "--config", os.devnull,
                                 "--state-dir", str(state), "--json"],
                                capture_output=True, text=True, timeout=60)
        assert status.returncode == 0, status.stderr            # a reader needs no lock
        assert json.loads(status.stdout)["game"] == "grab-bag"


def test_the_lock_goes_with_its_process_even_a_killed_one(tmp_path):
    with ready(tmp_path) as (first, sock):
        first.send_signal(signal.SIGKILL)                 # no clean-up ran: the kernel lets go
        first.wait()
    (tmp_path / "notify.sock").unlink()
    with ready(tmp_path) as (again, sock):
        again.send_signal(signal.SIGTERM)
        assert again.wait(timeout=10) == 0


def test_simulate_on_a_state_dir_in_use_stops_naming_the_holder(tmp_path):
    with ready(tmp_path) as (first, sock):
        term = Terminal(80, 24, "--state-dir", str(tmp_path / "state"))
        try:
            assert term.proc.wait(timeout=30) == EXIT_BUSY
            err = term.proc.stderr.read().decode()
            assert err.count("\n") == 1 and f"pid {first.pid}" in err, err
        finally:
            term.close()


def test_the_web_history_reads_while_the_daemon_holds_the_lock(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[web]\nenabled = true\n")
    state = tmp_path / "state"
    history = state / "history"
    history.mkdir(parents=True)
    with ready(tmp_path, {"RUNTIME_DIRECTORY": ""}, args=("--config", str(config))) as (first, sock):
        assert (state / "lock").read_text().strip() == str(first.pid)
        web, base = start_web(state, state / "hub.sock")
        try:
            with urllib.request.urlopen(base + "/history", timeout=10) as page:
                assert page.status == 200
        finally:
            web.terminate()
            web.wait(timeout=10)
