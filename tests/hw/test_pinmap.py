"""The pin map: its rules, the committed maps, the generated docs and the packaged copy."""
from __future__ import annotations

import csv
import importlib.util
import shutil
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path

import pytest

from pi_companion.hw.pinmap import (
    HARDWARE_PWM, HEADER_PIN, NAMES, USABLE_GPIO, PinMapError, load_pinmap, validate_pinmap)

ROOT = Path(__file__).resolve().parents[2]
HARDWARE = ROOT / "hardware"
DEFAULT = HARDWARE / "pinmap.toml"
EIGHT = HARDWARE / "pinmap-8players.toml"


def load_gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", HARDWARE / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


# --- the rules ---------------------------------------------------------------------------

@pytest.mark.parametrize("overrides, key, words", [
    ({"LED1": 17}, "LED1", "wired twice"),                # P1 is on 17
    ({"YES": 2}, "YES", "reserved for SDA"),
    ({"MENU": 3}, "MENU", "reserved for SCL"),
    ({"PIEZO": 17}, "PIEZO", "hardware PWM"),
    ({"P1": 28}, "P1", "not a usable BCM GPIO"),
    ({"P1": 1}, "P1", "not a usable BCM GPIO"),
    ({"P1": "17"}, "P1", "integer"),
    ({"P1": True}, "P1", "integer"),
    ({"P1": 17.0}, "P1", "integer"),
    ({"BUZZER": 4}, "BUZZER", "unknown pin name"),
    ({"LED5": 4}, "LED5", "has no P5"),
])
def test_a_bad_override_is_refused_naming_the_key(overrides, key, words):
    with pytest.raises(PinMapError) as caught:
        load_pinmap(overrides=overrides)
    message = str(caught.value)
    assert key in message and words in message
    assert "\n" not in message


def test_a_header_pin_number_gets_a_hint():
    problems = validate_pinmap({"P1": 40})
    assert problems == ["P1 = 40: not a usable BCM GPIO (2..27); header pin 40 is GPIO21, write 21"]


def test_every_problem_is_reported_at_once():
    problems = validate_pinmap({"P1": 4, "P2": 4, "PIEZO": 5, "ENC_A": 2})
    assert len(problems) == 4
    assert any("P1 and P2" in p for p in problems)


def test_a_good_override_moves_one_pin():
    pins = load_pinmap(overrides={"PIEZO": 13, "HALL_B": 18})
    assert pins["PIEZO"] == 13 and pins["HALL_B"] == 18 and pins["P1"] == 17


def test_a_file_can_reserve_more_pins(tmp_path):
    path = tmp_path / "map.toml"
    path.write_text("[pins]\nP1 = 4\nPIEZO = 18\n[reserved]\nONE_WIRE = 4\n")
    with pytest.raises(PinMapError, match="P1 = 4: GPIO4 is reserved for ONE_WIRE"):
        load_pinmap(path)


def test_the_i2c_pins_stay_reserved_even_if_a_file_forgets_them(tmp_path):
    path = tmp_path / "map.toml"
    path.write_text("[pins]\nP1 = 2\n")
    with pytest.raises(PinMapError, match="reserved for SDA"):
        load_pinmap(path)


def test_a_file_without_pins_is_refused(tmp_path):
    path = tmp_path / "map.toml"
    path.write_text("[reserved]\nSDA = 2\n")
    with pytest.raises(PinMapError, match=r"no \[pins\] table"):
        load_pinmap(path)


def test_the_header_table_is_the_40_pin_header():
    assert sorted(HEADER_PIN) == list(range(28))
    assert len(set(HEADER_PIN.values())) == 28 and max(HEADER_PIN.values()) == 40
    assert HARDWARE_PWM <= set(USABLE_GPIO)


# --- the committed maps ------------------------------------------------------------------

@pytest.mark.parametrize("path", [DEFAULT, EIGHT], ids=["default", "8players"])
def test_the_committed_maps_are_valid(path):
    pins = load_pinmap(path)
    assert validate_pinmap(pins) == []
    assert all(isinstance(pin, int) for pin in pins.values())


def test_the_default_map_has_4_lit_players_and_every_control():
    pins = load_pinmap(DEFAULT)
    assert set(pins) == set(NAMES) - {f"{kind}{i}" for kind in ("P", "LED") for i in range(5, 9)}


def test_the_8_player_map_extends_the_default_without_moving_a_wire():
    default, eight = load_pinmap(DEFAULT), load_pinmap(EIGHT)
    assert set(eight) == set(NAMES)
    assert {name: eight[name] for name in default} == default


# --- the packaged copy -------------------------------------------------------------------

def test_the_package_data_is_the_hardware_pin_map():
    packaged = resources.files("pi_companion").joinpath("data/pinmap.toml").read_text()
    assert packaged == DEFAULT.read_text()
    assert load_pinmap() == load_pinmap(DEFAULT)


def source_tree(tmp_path: Path) -> Path:
    """The parts of the repository a build reads, copied with the symlink kept as a symlink."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "pi_companion", src / "pi_companion", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (src / "hardware").mkdir()
    shutil.copy2(DEFAULT, src / "hardware" / "pinmap.toml")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, src / name)
    assert (src / "pi_companion" / "data" / "pinmap.toml").is_symlink() == (
        ROOT / "pi_companion" / "data" / "pinmap.toml").is_symlink()
    return src


def can_build_wheels() -> bool:
    for name in ("setuptools.command.bdist_wheel", "wheel.bdist_wheel"):
        try:
            if importlib.util.find_spec(name) is not None:
                return True
        except ImportError:
            pass
    return False


@pytest.mark.skipif(not can_build_wheels(), reason="setuptools < 70.1 without the wheel package cannot build wheels")
@pytest.mark.xdist_group("wheel")   # the session's wheel: built once, on one worker
def test_the_wheel_carries_the_real_pin_map(built_wheel):
    # The session's wheel (conftest.py), built by pip from a copy of the checkout that keeps
    # data/pinmap.toml a symlink.
    with zipfile.ZipFile(built_wheel) as archive:
        assert archive.read("pi_companion/data/pinmap.toml").decode() == DEFAULT.read_text()


def test_the_build_copies_the_real_pin_map(tmp_path):
    """What bdist_wheel zips is build_py's output: the symlink must arrive there as a file."""
    src, out = source_tree(tmp_path), tmp_path / "lib"
    subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q",
                    "build_py", "--build-lib", str(out)], check=True, cwd=src, capture_output=True)
    built = out / "pi_companion" / "data" / "pinmap.toml"
    assert not built.is_symlink() and built.read_text() == DEFAULT.read_text()


# --- the generated docs ------------------------------------------------------------------

def test_the_readme_table_and_wiring_svg_are_up_to_date():
    assert load_gen_docs().main(["--check"]) == 0, "run `make diagram` (python hardware/gen_docs.py)"


def test_the_check_notices_a_stale_table(tmp_path, monkeypatch):
    gen_docs = load_gen_docs()
    stale = tmp_path / "README.md"
    stale.write_text((HARDWARE / "README.md").read_text().replace("| **P1** |", "| **P9** |", 1))
    monkeypatch.setattr(gen_docs, "README", stale)
    assert gen_docs.main(["--check"]) == 1


def test_the_docs_follow_the_map(tmp_path, monkeypatch):
    gen_docs = load_gen_docs()
    moved = tmp_path / "pinmap.toml"
    moved.write_text(DEFAULT.read_text().replace("PIEZO = 18", "PIEZO = 12").replace("HALL_A = 12", "HALL_A = 18"))
    monkeypatch.setattr(gen_docs, "DEFAULT_MAP", moved)
    monkeypatch.setattr(gen_docs, "FULL_MAP", moved)
    outputs = gen_docs.generate()
    assert "| 32 | GPIO12 | **PIEZO** |" in outputs[gen_docs.README]
    assert "HALL_A</tspan> · GPIO18" in outputs[gen_docs.SVG]


def test_the_readme_shows_both_drawings_and_the_bom_has_its_columns():
    readme = (HARDWARE / "README.md").read_text()
    assert "](wiring.svg)" in readme and "](turntable.svg)" in readme
    assert (HARDWARE / "turntable.svg").read_text().startswith("<svg")
    with (HARDWARE / "bom.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["part", "example_part_number", "quantity", "role", "notes"]
    assert all(row["quantity"].isdigit() for row in rows)
    text = " ".join(" ".join(row.values()) for row in rows)
    for part in ("SSD1306", "KY-040", "DRV5013", "DRV5012", "diametric", "lgpio", "Zero 2 W"):
        assert part in text
