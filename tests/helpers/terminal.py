"""`pi-companion simulate` on a real pty, its screen kept by pyte (commands/test_simulate,
gamelog/test_state_lock)."""
from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time

import pyte


class Terminal:
    """`pi-companion simulate` on a pty of a given size, its screen kept by pyte."""

    def __init__(self, cols, rows, *args):
        self.leader, follower = pty.openpty()
        self.resize_pty(follower, cols, rows)
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = b""                                  # every byte written, the screen's too
        env = {k: v for k, v in os.environ.items() if k not in ("LINES", "COLUMNS")}
        env.update(TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pi_companion", "simulate", "--config", os.devnull, *args],
            stdin=follower, stdout=follower, stderr=subprocess.PIPE, env=env, close_fds=True)
        self.follower = follower

    @staticmethod
    def resize_pty(fd, cols, rows):
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def resize(self, cols, rows):
        self.resize_pty(self.follower, cols, rows)
        self.screen.resize(rows, cols)
        self.proc.send_signal(signal.SIGWINCH)      # what the kernel sends a terminal's foreground

    def text(self):
        return "\n".join(self.screen.display)

    def wait_for(self, *needles, timeout=15.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            ready, _, _ = select.select([self.leader], [], [], 0.05)
            if ready:
                try:
                    data = os.read(self.leader, 65536)
                    self.raw += data
                    self.stream.feed(data)
                except OSError:
                    break
            if all(n in self.text() for n in needles):
                return True
        return False

    def type(self, data: bytes):
        os.write(self.leader, data)

    def quit(self):
        self.type(b"q")
        rc = self.proc.wait(timeout=10)
        err = self.proc.stderr.read()
        self.close()
        return rc, err

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.leader, self.follower):
            try:
                os.close(fd)
            except OSError:
                pass
