"""A Pi's install (`.[pi]`, what install.sh installs on ARM) needs no compiler on any Python the
project supports: lgpio, which PyPI has as wheels for some Pi Pythons only (an empty placeholder
for CPython 3.13, a build from source that needs gcc and swig), is only in the `[lgpio]` extra,
for `input.edges = "lgpio"`.

The requirements are read from pyproject.toml and their markers evaluated as pip would on each
Pi's platform and each supported CPython.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
PI_MACHINES = ("aarch64", "armv7l", "armv6l")
# From requires-python's floor to trixie's Python.
PYTHONS = ("3.11", "3.12", "3.13")


def wanted(extra: str, machine: str, python: str) -> list[str]:
    """The names pip installs for `.[extra]` on a Linux `machine` with CPython `python`."""
    env = {"platform_system": "Linux", "platform_machine": machine, "sys_platform": "linux",
           "python_version": python, "python_full_version": python + ".0",
           "implementation_name": "cpython", "platform_python_implementation": "CPython",
           "os_name": "posix", "extra": extra}
    reqs = [Requirement(r) for r in PROJECT["dependencies"] + PROJECT["optional-dependencies"].get(extra, [])]
    return sorted(r.name for r in reqs if r.marker is None or r.marker.evaluate(env))


@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize("machine", PI_MACHINES)
def test_the_pi_extra_needs_no_lgpio_on_any_pi_or_python(machine, python):
    names = wanted("pi", machine, python)
    assert "lgpio" not in names, f".[pi] on {machine}, CPython {python}: {names}"
    assert "gpiozero" in names


@pytest.mark.parametrize("machine", PI_MACHINES)
def test_the_lgpio_extra_brings_lgpio_on_a_pi(machine):
    assert "lgpio" in wanted("lgpio", machine, "3.13")


def test_the_lgpio_extra_brings_nothing_on_a_pc():
    assert "lgpio" not in wanted("lgpio", "x86_64", "3.13")


def test_the_readme_asks_no_compiler_for_a_pi_install():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## The appliance (on the Raspberry Pi)", 1)[1].split("```", 2)[1]
    for tool in ("gcc", "swig", "python3-dev"):
        assert tool not in block, f"README's Pi install asks for {tool}:\n{block}"
