"""The parts list (hardware/bom.csv, README's parts table) against the circuits it comes from."""
from __future__ import annotations

import csv
import itertools
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from helpers.hardware_modules import load  # (one loader for the three files)

ROOT = Path(__file__).resolve().parents[2]
HARDWARE = ROOT / "hardware"



circuits = load("circuits")
gen_docs = load("gen_docs")

ALL_CHOICES = [dict(zip(circuits.CHOICES, values))
               for values in itertools.product(*circuits.CHOICES.values())]


def quantities(options) -> dict[str, int]:
    """Counted here from the circuits, without parts_list(): copies x per copy, summed."""
    pins = gen_docs.pins_for(options)
    total: dict[str, int] = {}
    for circuit in circuits.CIRCUITS:
        copies = circuit.copies(options, pins)
        for component in circuit.components(options) if copies else ():
            total[component.part] = total.get(component.part, 0) + component.per_copy * copies
    return total


def test_the_committed_bom_is_exactly_the_built_circuits_parts():
    """A part no circuit uses, or a circuit's part missing, or a wrong count: this fails."""
    options = gen_docs.load_options()
    expected = {circuits.PARTS[key].name: n for key, n in quantities(options).items()}
    with (HARDWARE / "bom.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == gen_docs.BOM_COLUMNS
    listed = {row["part"]: int(row["quantity"]) for row in rows}
    assert len(listed) == len(rows), "a part listed twice"
    assert listed == expected
    assert all(row["role"].strip() for row in rows), "every part says what it does"


@pytest.mark.parametrize("options", ALL_CHOICES, ids=lambda o: "-".join(map(str, o.values())))
def test_every_choice_gives_a_list_that_adds_up(options):
    lines = circuits.parts_list(options, gen_docs.pins_for(options))
    assert {line.key: line.quantity for line in lines} == quantities(options)
    for line in lines:
        assert line.quantity == sum(n for _, n in line.roles) > 0
    # What the README's circuits need, counted from the choices alone.
    q = quantities(options)
    players = options["players"]
    louder = options["piezo"] == "louder"
    assert q["npn"] == players + louder                    # a lamp driver each, the piezo driver
    assert q["r1k"] == players + 2 * louder                # base resistors; across the piezo
    assert q["r10k"] == players + louder + 2               # base pull-downs; hall pull-ups
    assert q.get("r470", 0) == (not louder)
    assert q.get("1n4148", 0) == louder
    assert q[f"button-lit-{options['button_mm']}"] == players
    assert q[f"button-{options['button_mm']}"] == 3
    assert q["terminal"] == 4 * players + 2 * 3
    assert q["drv5013"] == q["c100n"] == 2
    assert q.get("pico", 0) == q.get("usb-cable", 0) == (options["hall"] == "puck")
    assert q[f"oled-{options['display']}"] == 1 and q["screw-m2"] == 4
    assert q["standoff-m25"] * 2 == q["screw-m25"]
    assert sum(q.get(k, 0) for k in circuits.PARTS if k.startswith("oled-")) == 1


def test_every_part_in_the_catalogue_is_used_by_some_choice():
    used = set().union(*(quantities(options) for options in ALL_CHOICES))
    assert used == set(circuits.PARTS), "parts no circuit uses (or circuits naming unknown parts)"


def test_the_wiring_words_name_only_values_of_their_circuits_parts():
    value_part = {"1 kΩ": "r1k", "10 kΩ": "r10k", "470 Ω": "r470"}
    for options in ALL_CHOICES:
        for circuit in circuits.CIRCUITS:
            parts = {c.part for c in circuit.components(options)}
            for text in circuit.signals.values():
                values = re.findall(r"\d+ k?Ω", text)
                for value in values:
                    assert value_part[value] in parts, (circuit.key, text)


def test_the_readme_lists_the_same_parts():
    readme = (HARDWARE / "README.md").read_text()
    section = readme[readme.index(gen_docs.PARTS_BEGIN):readme.index(gen_docs.PARTS_END)]
    rows = re.findall(r"^\| (\d+) \| ([^|]+) \|", section, re.M)
    options = gen_docs.load_options()
    assert {name: int(n) for n, name in rows} == {
        circuits.PARTS[k].name: n for k, n in quantities(options).items()}


def test_the_wiring_table_follows_the_piezo_and_hall_choices(tmp_path, monkeypatch):
    build = tmp_path / "build.toml"
    build.write_text((HARDWARE / "build.toml").read_text()
                     .replace('piezo = "plain"', 'piezo = "louder"').replace('hall = "gpio"', 'hall = "puck"'))
    monkeypatch.setattr(gen_docs, "BUILD", build)
    outputs = gen_docs.generate()
    readme = outputs[gen_docs.README]
    assert "| 12 | GPIO18 | **PIEZO** | **PIEZO** | Piezo driver: 1 kΩ to the NPN base" in readme
    assert "| 32 | GPIO12 | **HALL_A** | **HALL_A** | not wired: the hall sensors go to the wind puck" in readme
    bom = outputs[gen_docs.BOM]
    assert "Diode 1N4148" in bom and "Raspberry Pi Pico" in bom and "470 ohm" not in bom


@pytest.mark.parametrize("text, words", [
    ("players = 6", "players = 6 is not one of 4, 8"),
    ('players = "8"', "players = '8' is not one of 4, 8"),
    ("display_address = 0x3E", "display_address = 0x3E is not one of 0x3C, 0x3D"),
    ("buttons_mm = 30", "unknown key 'buttons_mm'"),
    ("players = ", "build.toml"),
])
def test_a_bad_build_file_is_one_line_naming_the_key(tmp_path, text, words):
    build = tmp_path / "build.toml"
    original = (HARDWARE / "build.toml").read_text()
    key = text.split(" =")[0]
    lines = [line for line in original.splitlines() if not line.startswith(f"{key} =")]
    build.write_text("\n".join(lines) + "\n" + text + "\n")
    with pytest.raises(SystemExit) as caught:
        gen_docs.load_options(build)
    message = str(caught.value)
    assert words in message and "\n" not in message


@settings(deadline=None)
@given(st.dictionaries(st.sampled_from([*circuits.CHOICES, "other"]),
                       st.one_of(st.integers(), st.text(max_size=8), st.booleans(),
                                 st.sampled_from([v for vs in circuits.CHOICES.values() for v in vs]))))
def test_the_choices_checker_accepts_or_says_one_line(data):
    try:
        checked = circuits.check_options(data)
    except circuits.BuildError as error:
        assert "\n" not in str(error) and str(error).startswith("build.toml: ")
    else:
        assert checked == data and set(data) == set(circuits.CHOICES)
