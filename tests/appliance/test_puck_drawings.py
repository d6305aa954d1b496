"""puck.svg and turntable.svg: drawn from the firmware's pin constants and the turntable geometry."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hypothesis import given, settings, strategies as st

from helpers.hardware_modules import load  # (one loader for the three files)

from pi_companion.core.quadrature import Quadrature

ROOT = Path(__file__).resolve().parents[2]
HARDWARE = ROOT / "hardware"
FIRMWARE = ROOT / "firmware" / "puck.py"
SVG_NS = "{http://www.w3.org/2000/svg}"



circuits = load("circuits")
turntable = load("turntable")
gen_docs = load("gen_docs")


def firmware_constants(text: str) -> dict[str, int]:
    """The constants as MicroPython would see them: run the two assignment lines."""
    found: dict[str, int] = {}
    for line in text.splitlines():
        if re.match(r"HALL_[AB]_PIN\s*=", line):
            exec(line, {}, found)
    return {"A": found["HALL_A_PIN"], "B": found["HALL_B_PIN"]}


def coloured_pins(svg: str) -> dict[int, str]:
    """{physical pin: fill} of the Pico's pads (the pads' numbers are the labels beside them)."""
    root = ET.fromstring(svg)
    elements = list(root)
    pads = {}
    for i, element in enumerate(elements):
        if element.tag == f"{SVG_NS}circle" and element.get("r") == "6":
            number = elements[i + 2].text
            pads[int(number)] = element.get("fill")
    return pads


def moved_firmware(tmp_path: Path, a: str, b: str = "15") -> Path:
    text = FIRMWARE.read_text()
    text = re.sub(r"^HALL_A_PIN = \d+", f"HALL_A_PIN = {a}", text, flags=re.M)
    text = re.sub(r"^HALL_B_PIN = \d+", f"HALL_B_PIN = {b}", text, flags=re.M)
    path = tmp_path / "puck.py"
    path.write_text(text)
    return path


def test_the_drawings_and_tables_name_the_firmwares_pins():
    pins = firmware_constants(FIRMWARE.read_text())
    assert turntable.read_firmware_pins(FIRMWARE) == pins
    puck_svg = (HARDWARE / "puck.svg").read_text()
    pads = coloured_pins(puck_svg)
    assert len(pads) == 40
    for channel, gpio in pins.items():
        physical = turntable.PHYSICAL[f"GP{gpio}"]
        assert pads[physical] == turntable.HALL_COLOUR
        assert f"Hall {channel} OUT → GP{gpio} (pin {physical})" in puck_svg
        row = f"| Hall {channel} OUT (DRV5013: + 10 kΩ to 3V3(OUT)) | GP{gpio} | {physical} |"
        assert row in (HARDWARE / "README.md").read_text()
        assert f"| hall {channel} OUT | **GP{gpio}**, physical pin {physical} |" in (
            ROOT / "firmware" / "README.md").read_text()
    assert [pin for pin, fill in pads.items() if fill == turntable.HALL_COLOUR] == sorted(
        turntable.PHYSICAL[f"GP{g}"] for g in pins.values())
    assert f"puck's GP{pins['A']}" in (HARDWARE / "turntable.svg").read_text()


def test_a_moved_pin_moves_the_picture(tmp_path, monkeypatch):
    monkeypatch.setattr(gen_docs, "FIRMWARE", moved_firmware(tmp_path, "16", "28"))
    outputs = gen_docs.generate()
    puck_svg = outputs[gen_docs.PUCK_SVG]
    pads = coloured_pins(puck_svg)
    assert pads[21] == pads[34] == turntable.HALL_COLOUR           # GP16 and GP28
    assert pads[19] != turntable.HALL_COLOUR and pads[20] != turntable.HALL_COLOUR
    assert "HALL_A_PIN = 16, HALL_B_PIN = 28" in puck_svg
    assert "Hall B OUT → GP28 (pin 34)" in puck_svg
    assert "| Hall A OUT (DRV5013: + 10 kΩ to 3V3(OUT)) | GP16 | 21 |" in outputs[gen_docs.README]
    assert "puck's GP16" in outputs[gen_docs.TURNTABLE_SVG]
    # and the committed files are now stale
    assert gen_docs.main(["--check"]) == 1


@pytest.mark.parametrize("a, b, words", [
    ("23", "15", "HALL_A_PIN = 23 is not a Pico GPIO"),
    ("29", "15", "HALL_A_PIN = 29 is not a Pico GPIO"),
    ("'14'", "15", "HALL_A_PIN = '14' is not a Pico GPIO"),
    ("14", "14", "both GP14"),
    ("PIN_A", "15", "HALL_A_PIN = 'PIN_A' is not a Pico GPIO"),
])
def test_bad_firmware_pins_are_one_line(tmp_path, monkeypatch, a, b, words):
    monkeypatch.setattr(gen_docs, "FIRMWARE", moved_firmware(tmp_path, a, b))
    with pytest.raises(SystemExit) as caught:
        gen_docs.generate()
    assert words in str(caught.value) and "\n" not in str(caught.value)


def turn(geometry, spacing, degrees, direction=1):
    quad = Quadrature(*turntable.levels(geometry, spacing, 0))
    for step in range(1, degrees + 1):
        quad.update(*turntable.levels(geometry, spacing, direction * step))
    return quad


@pytest.mark.parametrize("pole_pairs", [1, 2, 3])
def test_the_drawn_placement_counts_four_per_pole_pair_clockwise(pole_pairs):
    """The box's own decoder, fed what sensors placed as drawn report over three turns."""
    geometry = dict(circuits.TURNTABLE, pole_pairs=pole_pairs)
    spacing = circuits.sensor_spacing(pole_pairs)
    clockwise = turn(geometry, spacing, 3 * 360)
    assert (clockwise.net, clockwise.invalid) == (12 * pole_pairs, 0)
    back = turn(geometry, spacing, 3 * 360, -1)
    assert (back.net, back.invalid) == (-12 * pole_pairs, 0)


def test_the_waveform_is_the_geometrys():
    """The A and B traces under the top view are levels() of the drawn placement."""
    root = ET.fromstring((HARDWARE / "turntable.svg").read_text())
    geometry = circuits.TURNTABLE
    spacing = circuits.sensor_spacing(geometry["pole_pairs"])
    sensors = {e.get("data-sensor"): e for e in root.iter(f"{SVG_NS}rect") if e.get("data-sensor")}
    assert float(sensors["B"].get("data-angle")) - float(sensors["A"].get("data-angle")) == spacing == 90
    # B is drawn a quarter turn clockwise from A (A at 12 o'clock, B at 3 o'clock).
    ax, ay = float(sensors["A"].get("x")), float(sensors["A"].get("y"))
    bx, by = float(sensors["B"].get("x")), float(sensors["B"].get("y"))
    assert bx > ax and by > ay
    traces = {e.get("data-channel"): e.get("d") for e in root.iter(f"{SVG_NS}path") if e.get("data-channel")}
    for row, channel in enumerate("AB"):
        points = [tuple(map(float, pair)) for pair in re.findall(r"[ML] ([\d.]+) ([\d.]+)", traces[channel])]
        low = max(y for _, y in points)
        x0, x1 = points[0][0], points[-1][0]
        for degrees in range(-40, 315, 10):
            x = x0 + (x1 - x0) * (degrees + 45) / 360
            # the last point at or before x
            y = [py for px, py in points if px <= x + 1e-6][-1]
            assert (y < low) == bool(turntable.levels(geometry, spacing, degrees)[row]), (channel, degrees)


def test_the_readmes_show_the_template_and_the_puck_wiring_as_pictures():
    guide = (HARDWARE / "README.md").read_text()
    for picture in ("panel-a4.svg", "puck.svg", "turntable.svg", "wiring.svg"):
        assert re.search(rf"!\[[^\]]+\]\({re.escape(picture)}\)", guide), picture
        assert re.search(rf"!\[[^\]]+\]\(hardware/{re.escape(picture)}\)", (ROOT / "README.md").read_text()), picture
        assert (HARDWARE / picture).read_text().startswith("<svg")
    for pdf in ("panel-a4.pdf", "panel-letter.pdf"):
        assert f"]({pdf})" in guide and f"](hardware/{pdf})" in (ROOT / "README.md").read_text()


@settings(deadline=None, max_examples=100)
@given(st.one_of(st.integers(-5, 45).map(str), st.text(max_size=6).map(repr), st.sampled_from(["None", "1.5", "[14]", "0x0E"])),
       st.one_of(st.integers(-5, 45).map(str), st.just("15")))
def test_the_firmware_pin_reader_accepts_pico_gpio_or_says_one_line(a, b):
    path = Path(__file__).parent / "__never_written__.py"      # read_firmware_pins reads only
    text = FIRMWARE.read_text()
    text = re.sub(r"^HALL_A_PIN = \d+", lambda _: f"HALL_A_PIN = {a}", text, flags=re.M)
    text = re.sub(r"^HALL_B_PIN = \d+", lambda _: f"HALL_B_PIN = {b}", text, flags=re.M)

    class Source:
        name = path.name

        @staticmethod
        def read_text():
            return text

    try:
        pins = turntable.read_firmware_pins(Source)
    except turntable.FirmwareError as error:
        assert "\n" not in str(error) and str(error).startswith(path.name)
    else:
        assert pins == firmware_constants(text)
        assert pins["A"] != pins["B"]
        assert all(f"GP{gpio}" in turntable.PHYSICAL for gpio in pins.values())


def test_a_failed_write_leaves_the_old_file_whole(tmp_path, monkeypatch, capsys):
    """make diagram stopped by a full disk: README.md (hand-written text) is old or new, never cut."""
    readme = tmp_path / "README.md"
    old = (HARDWARE / "README.md").read_text().replace("| **P1** |", "| **P9** |", 1)
    readme.write_text(old)
    monkeypatch.setattr(gen_docs, "README", readme)
    real_write = Path.write_bytes

    def full_disk(self, data):
        real_write(self, data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full_disk)
    assert gen_docs.main([]) == 1
    assert readme.read_text() == old
    assert [p.name for p in tmp_path.iterdir()] == ["README.md"]
    assert "could not write" in capsys.readouterr().err
