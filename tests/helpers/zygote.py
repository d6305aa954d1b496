"""Start test programs as processes forked from one warm interpreter, to SIGKILL them cheaply.

A fresh interpreter spends ~0.3 s (more on a busy machine) importing pi_companion, gpiozero,
luma and PIL before the box is up; a kill loop of hundreds of runs would spend most of its
time there. `python zygote.py` imports everything once, then forks one child per request; each
child is its own process running the program's `main(argv)` (pinpad: `pi-companion run`;
crash_child: a scripted box), with stdin/stdout on two FIFOs and stderr in a file, so the
test talks to it, kills it with SIGKILL and sees it gone (EOF on its stdout) as with any
process.
"""
from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
PROGRAMS = ("pinpad", "crash_child")


def serve() -> None:
    """stdin: one JSON job per line {module, argv, env, stdin, stdout, stderr}; stdout: its pid."""
    for name in PROGRAMS:
        importlib.import_module(name).warm()
    import gc
    gc.collect()
    gc.freeze()

    def reap(*_: Any) -> None:
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass

    signal.signal(signal.SIGCHLD, reap)
    while line := sys.stdin.readline():
        job = json.loads(line)
        pid = os.fork()
        if pid:
            sys.stdout.write(f"{pid}\n")
            sys.stdout.flush()
            continue
        code = 1
        try:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.environ.update(job["env"])
            err = os.open(job["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(err, 2)
            os.dup2(os.open(job["stdin"], os.O_RDONLY), 0)
            os.dup2(os.open(job["stdout"], os.O_WRONLY), 1)
            sys.stdin = open(0, closefd=False)
            sys.stdout = open(1, "w", buffering=1, closefd=False)
            sys.stderr = open(2, "w", buffering=1, closefd=False)
            code = importlib.import_module(job["module"]).main(job["argv"])
        finally:
            os._exit(code or 0)


class Child:
    """One forked program: `inp`/`out` are its stdin/stdout."""

    def __init__(self, pid: int, inp: Any, out: Any) -> None:
        self.pid, self.inp, self.out = pid, inp, out

    def kill(self) -> None:
        """SIGKILL, and wait until it is gone."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.out.read()                          # EOF once the process (its fd) is gone
        for stream in (self.inp, self.out):
            try:
                stream.close()
            except BrokenPipeError:
                pass


class Zygote:
    """The test's side: one server for the session, `spawn` per child."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, str(HERE / "zygote.py")], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.runs = 0

    def spawn(self, module: str, argv: list[str], tmp: Path, env: dict[str, str] | None = None) -> Child:
        self.runs += 1
        stdin, stdout = tmp / f"stdin-{self.runs}", tmp / f"stdout-{self.runs}"
        os.mkfifo(stdin)
        os.mkfifo(stdout)
        job = {"module": module, "argv": argv, "env": env or {}, "stdin": str(stdin),
               "stdout": str(stdout), "stderr": str(tmp / f"stderr-{self.runs}.txt")}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        pid = int(self.proc.stdout.readline())
        return Child(pid, open(stdin, "w"), open(stdout))

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    serve()
