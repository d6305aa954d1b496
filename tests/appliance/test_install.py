"""systemd/install.sh under a temporary root: files laid down, idempotent, uninstall keeps state."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "systemd" / "install.sh"
LIVE_TOOLS = ("systemctl", "udevadm", "systemd-sysusers")

# (source in the repo, where install.sh puts it under DESTDIR)
LAID_DOWN = [
    ("systemd/pi-companion.service", "etc/systemd/system/pi-companion.service"),
    ("systemd/pi-companion.conf", "etc/sysusers.d/pi-companion.conf"),
    ("systemd/99-pi-companion-puck.rules", "etc/udev/rules.d/99-pi-companion-puck.rules"),
    ("systemd/60-pi-companion-pwm.rules", "etc/udev/rules.d/60-pi-companion-pwm.rules"),
    ("systemd/50-pi-companion-shutdown.rules",
     "etc/polkit-1/rules.d/50-pi-companion-shutdown.rules"),
]
VENV = "opt/pi-companion/venv"
CONFIG = "etc/pi-companion/config.toml"


@pytest.fixture
def run(tmp_path: Path):
    """Run install.sh with fake systemctl/udevadm/systemd-sysusers that record any call."""
    fake_bin = tmp_path / "fake-bin"
    fake_bin.mkdir()
    calls = tmp_path / "live-calls.log"
    for name in LIVE_TOOLS:
        tool = fake_bin / name
        tool.write_text(f'#!/bin/sh\necho "{name} $*" >> "{calls}"\n')
        tool.chmod(0o755)

    def run_script(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
        environ = {key: value for key, value in os.environ.items() if key != "DESTDIR"}
        environ.update({
            "PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}",
            "PYTHON": sys.executable,
            # Only the package, not its dependencies: fast, and the script's logic is the same.
            "PI_COMPANION_PIP_ARGS": "--no-deps",
            **env,
        })
        return subprocess.run(["bash", str(SCRIPT), *args], env=environ,
                              capture_output=True, text=True, timeout=300)

    run_script.calls = calls  # type: ignore[attr-defined]
    return run_script


def check(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_install_update_uninstall(tmp_path: Path, run) -> None:
    root = tmp_path / "root"

    # A first install lays everything down. The interpreter can import lgpio (as with
    # Raspberry Pi OS's python3-lgpio): the venv is made to see the system's packages.
    system_site = tmp_path / "system-site"
    system_site.mkdir()
    (system_site / "lgpio.py").write_text("")
    out = check(run(DESTDIR=str(root), PYTHONPATH=str(system_site)))
    assert "the venv uses the system site-packages" in out
    assert "include-system-site-packages = true" in (root / VENV / "pyvenv.cfg").read_text()
    # Such a venv runs the system's pip when there is one, rather than installing its own.
    base_python = Path(sys.base_prefix, "bin", "python3")
    base_has_pip = subprocess.run([base_python, "-c", "import pip"],
                                  capture_output=True).returncode == 0
    if base_has_pip:
        assert "the venv uses the system's pip" in out
        assert not list((root / VENV / "lib").glob("python3*/site-packages/pip")), "own pip"
    else:
        assert "the venv has no pip: adding one" in out
    for source, target in LAID_DOWN:
        assert (root / target).read_bytes() == (REPO / source).read_bytes(), target
        assert (root / target).stat().st_mode & 0o777 == 0o644, target
    assert os.access(root / VENV / "bin" / "pi-companion", os.X_OK)
    package = next((root / VENV / "lib").glob("python3*/site-packages/pi_companion"))
    assert list((package / "__pycache__").glob("systemd.*.pyc")), "byte-compiled"
    config = root / CONFIG
    assert isinstance(tomllib.loads(config.read_text()), dict)
    assert config.read_text().strip(), "a config with content"

    # A second run replaces the package and files but keeps an edited config.
    edited = config.read_text() + "\n# the owner's own edit\n"
    config.write_text(edited)
    (root / LAID_DOWN[0][1]).write_text("stale\n")
    out = check(run(DESTDIR=str(root)))
    assert "reusing venv" in out
    assert config.read_text() == edited
    assert (root / LAID_DOWN[0][1]).read_bytes() == (REPO / LAID_DOWN[0][0]).read_bytes()

    # The staged venv names its final place, not the staging root, and runs from there.
    script = root / VENV / "bin" / "pi-companion"
    assert script.read_text().splitlines()[0] == "#!/opt/pi-companion/venv/bin/python"
    assert str(root) not in (root / VENV / "bin" / "activate").read_text()
    assert str(root).encode() not in next(package.glob("__pycache__/cli.*.pyc")).read_bytes()
    if os.geteuid() == 0 and shutil.which("unshare"):
        # Put the staged tree in place in a private mount namespace (a tmpfs over /opt).
        placed = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c",
             'mount -t tmpfs none /opt && mkdir /opt/pi-companion && '
             'mount --bind "$1" /opt/pi-companion && exec /opt/pi-companion/venv/bin/pi-companion '
             'config check "$2"', "sh", str(root / "opt/pi-companion"), str(config)],
            capture_output=True, text=True, timeout=60)
        assert placed.returncode == 0, placed.stdout + placed.stderr

    # Uninstall removes what install put down and keeps the state and the config.
    state = root / "var/lib/pi-companion/log.jsonl"
    state.parent.mkdir(parents=True)
    state.write_text('{"game": "grab-bag"}\n')
    check(run("--uninstall", DESTDIR=str(root)))
    for _, target in LAID_DOWN:
        assert not (root / target).exists(), target
    assert not (root / VENV).exists()
    assert not (root / "opt/pi-companion").exists()
    assert state.read_text() == '{"game": "grab-bag"}\n'
    assert config.read_text() == edited

    # Uninstalling twice is fine too.
    check(run("--uninstall", DESTDIR=str(root)))

    # With DESTDIR the live system was never touched.
    assert not run.calls.exists(), run.calls.read_text()


def test_dry_run_makes_its_own_root_and_touches_nothing(tmp_path: Path, run) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    out = check(run("--dry-run", "--uninstall", TMPDIR=str(scratch)))
    staged = [line.rsplit(" ", 1)[-1] for line in out.splitlines()
              if "dry run: staging under" in line]
    assert len(staged) == 1 and Path(staged[0]).parent == scratch, out
    assert Path(staged[0]).is_dir()
    assert not run.calls.exists(), run.calls.read_text()


@pytest.mark.parametrize(("args", "env"), [
    (("--bogus",), {}),
    ((), {"PREFIX": "relative/path"}),
    ((), {"PREFIX": "/"}),
    ((), {"PYTHON": "/nonexistent/python3"}),
    ((), {"PI_COMPANION_WHEEL": "/nonexistent/pi_companion-0.1.0-py3-none-any.whl"}),
])
def test_bad_input_fails_before_installing(tmp_path: Path, run, args: tuple[str, ...],
                                           env: dict[str, str]) -> None:
    root = tmp_path / "root"
    # A venv on the system site-packages: a bad wheel is found once the venv is made, and this
    # one is made without its own pip (ensurepip, seconds, would not change the outcome).
    result = run(*args, DESTDIR=str(root), **{"PI_COMPANION_VENV_ARGS": "--system-site-packages", **env})
    assert result.returncode != 0
    assert not (root / "etc").exists()
    assert not (root / "opt").exists()      # no half-made venv either (ensurepip takes minutes on a Pi)


LIVE_INNER = """
set -eu
for d in etc opt run; do
    mkdir -p "$OVERLAYS/$d/up" "$OVERLAYS/$d/work"
    mount -t overlay overlay "/$d" \\
        -o "lowerdir=/$d,upperdir=$OVERLAYS/$d/up,workdir=$OVERLAYS/$d/work" || exit 77
done
mkdir -p /run/systemd/system   # pretend systemd runs, so the script starts the service
bash "$SCRIPT"
bash "$SCRIPT"
sed -i 's/^# enabled = false/enabled = true/' /etc/pi-companion/config.toml   # the big screen on
bash "$SCRIPT"
bash "$SCRIPT" --uninstall
test -f /etc/pi-companion/config.toml
test ! -e /etc/systemd/system/pi-companion.service
test ! -e /opt/pi-companion
"""


@pytest.mark.xdist_group("wheel")   # the session's wheel: built once, on one worker
def test_live_install_runs_the_system_tools_in_order(tmp_path: Path, run, built_wheel: Path) -> None:
    """Without DESTDIR, inside a private mount namespace whose /etc, /opt and /run are overlays.

    What is checked here is the live part (systemd, udev, sysusers, in order), which is the
    same whatever goes into the venv: the package comes from the session's wheel, into a venv
    on the system site-packages (no ensurepip), and the second install keeps that wheel. The
    checkout's own build, a venv with its own pip and a replaced wheel are the other tests'."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare")
    overlays = tmp_path / "overlays"
    overlays.mkdir()
    inner = tmp_path / "inner.sh"
    inner.write_text(LIVE_INNER)
    unshare = ["unshare", "--mount", "--propagation", "private"]
    probe = subprocess.run([*unshare, "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip("no private mount namespaces here")
    environ = {key: value for key, value in os.environ.items() if key != "DESTDIR"}
    environ.update(PATH=f"{run.calls.parent / 'fake-bin'}{os.pathsep}{os.environ['PATH']}",
                   PYTHON=sys.executable, PI_COMPANION_PIP_ARGS="--no-deps",
                   PI_COMPANION_WHEEL=str(built_wheel),
                   PI_COMPANION_VENV_ARGS="--system-site-packages",
                   OVERLAYS=str(overlays), SCRIPT=str(SCRIPT))
    result = subprocess.run([*unshare, "bash", str(inner)], env=environ,
                            capture_output=True, text=True, timeout=300)
    if result.returncode == 77:
        pytest.skip("overlayfs is not available here")
    assert result.returncode == 0, result.stdout + result.stderr
    install = ["systemd-sysusers /etc/sysusers.d/pi-companion.conf",
               "udevadm control --reload",
               "udevadm trigger --action=change --subsystem-match=tty --subsystem-match=gpio "
               "--subsystem-match=i2c-dev --subsystem-match=pwm",
               "udevadm settle --timeout=30",
               "systemctl daemon-reload",
               "systemctl enable pi-companion.service",
               "systemctl restart pi-companion.service",
               "systemctl disable --now pi-companion-web.service"]   # [web] is off by default
    uninstall = ["systemctl disable --now pi-companion.service pi-companion-web.service",
                 "systemctl daemon-reload",
                 "udevadm control --reload"]
    web_on = install[:-1] + ["systemctl enable pi-companion-web.service",
                             "systemctl restart pi-companion-web.service"]
    assert run.calls.read_text().splitlines() == install + install + web_on + uninstall
    assert "big screen started ([web] enabled = true)" in result.stdout
    assert "started; follow it with: journalctl -u pi-companion -f" in result.stdout
    assert "already installed from this wheel" in result.stdout     # the second run kept it


@pytest.mark.xdist_group("wheel")   # the session's wheel: built once, on one worker
def test_install_from_a_prebuilt_wheel(tmp_path: Path, run, built_wheel: Path) -> None:
    """PI_COMPANION_WHEEL: installed as is; the same wheel again is kept, another one replaces it.
    The venv is a plain one, with its own pip (what a PC without python3-lgpio gets)."""
    wheel = tmp_path / built_wheel.name        # a copy: this test rewrites its bytes below
    shutil.copyfile(built_wheel, wheel)
    root = tmp_path / "root"
    out = check(run(DESTDIR=str(root), PI_COMPANION_WHEEL=str(wheel)))
    assert f"installing {wheel} into the venv" in out
    assert "system site-packages" not in out
    assert "include-system-site-packages = false" in (root / VENV / "pyvenv.cfg").read_text()
    assert list((root / VENV / "lib").glob("python3*/site-packages/pip")), "the venv's own pip"
    assert os.access(root / VENV / "bin" / "pi-companion", os.X_OK)

    out = check(run(DESTDIR=str(root), PI_COMPANION_WHEEL=str(wheel)))
    assert "already installed from this wheel" in out

    # Same version, other bytes (a zip comment): an update of the code, installed again.
    with open(wheel, "r+b") as f:
        data = f.read()
        assert data[-2:] == b"\0\0"            # the end record, with no comment yet
        f.seek(len(data) - 2)
        f.write(len(b"rebuilt").to_bytes(2, "little") + b"rebuilt")
    package = next((root / VENV / "lib").glob("python3*/site-packages/pi_companion"))
    (package / "systemd.py").write_text("# stale\n")
    out = check(run(DESTDIR=str(root), PI_COMPANION_WHEEL=str(wheel)))
    assert "already installed" not in out
    assert (package / "systemd.py").read_bytes() == (REPO / "pi_companion/systemd.py").read_bytes()
