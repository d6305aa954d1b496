"""The wiring plan (hardware/wiring.py's rails, plugs and board holes) and what the maker reads
from it: the faults a maker would meet are refused, and the README's tables and board.svg say
what the plan says."""
from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers.hardware_modules import load
from pi_companion.hw.pinmap import HEADER_PIN

HARDWARE = Path(__file__).resolve().parents[2] / "hardware"
SVG_NS = "{http://www.w3.org/2000/svg}"

circuits = load("circuits")
wiring = load("wiring")
gen_docs = load("gen_docs")
board = load("board")

ALL_CHOICES = [dict(zip(circuits.CHOICES, values))
               for values in itertools.product(*circuits.CHOICES.values())]
JUMPER_HOLES = {"OLED_VCC", "OLED_GND", "ENC_VCC", "ENC_GND"}


def plan(options, rails=None):
    pins = gen_docs.pins_for(options)
    return wiring.plan(options, pins, *(() if rails is None else (rails,)))


@pytest.mark.parametrize("options", ALL_CHOICES, ids=lambda o: "-".join(map(str, o.values())))
def test_every_choice_plugs_one_jumper_a_pin_and_feeds_every_rail(options):
    plugs, holes = plan(options)
    pins = [plug.pin for plug in plugs]
    assert len(pins) == len(set(pins)), "two plugs on one header pin"
    feeds = {plug.signal: plug.pin for plug in plugs if plug.signal in ("5V", "3V3", "GND")}
    for hole in holes:
        if hole.rail:
            assert wiring.HEADER_POWER[feeds[hole.rail]] == hole.rail, hole
    # 3.3 V loads (their pull-ups reach a GPIO) hang on the 3V3 rail, never on 5 V.
    assert {h.key: h.rail for h in holes if h.key in wiring.GPIO_FACING} == {
        key: "3V3" for key in wiring.GPIO_FACING if key != "HALL_VCC" or options["hall"] == "gpio"}
    # The jumpers the parts list counts are the plugs on the header and J2's module pins.
    quantities = {line.key: line.quantity for line in circuits.parts_list(options, gen_docs.pins_for(options))}
    assert quantities["jumper-ff"] == len(plugs) + sum(h.key in JUMPER_HOLES for h in holes)


def test_the_old_plan_s_two_plugs_on_pin_1_are_refused():
    """OLED VCC and KY-040 + both on header pin 1, as the guide once had it."""
    plugs = [wiring.Plug(1, "3V3", "OLED VCC"), wiring.Plug(1, "3V3", "KY-040 +")]
    with pytest.raises(wiring.WiringError) as caught:
        wiring.check_wiring(plugs, [], {rail.name: rail for rail in wiring.RAILS})
    message = str(caught.value)
    assert message.startswith("header pin 1 has 2 plugs (OLED VCC; KY-040 +)") and "\n" not in message


def test_a_rail_fed_from_a_pin_a_signal_already_uses_is_two_plugs():
    options = gen_docs.load_options()
    rails = (wiring.Rail("5V", 2), wiring.Rail("3V3", 1), wiring.Rail("GND", 11))     # 11: P1
    with pytest.raises(wiring.WiringError, match=r"^header pin 11 has 2 plugs \(driver board J1\.3"):
        plan(options, rails)


def test_a_rail_with_no_feed_is_refused_naming_what_it_powers():
    options = gen_docs.load_options()
    rails = (wiring.Rail("5V", 2), wiring.Rail("3V3", None), wiring.Rail("GND", 6))
    with pytest.raises(wiring.WiringError) as caught:
        plan(options, rails)
    message = str(caught.value)
    assert message.startswith("the 3V3 rail has no feed") and "OLED VCC" in message and "KY-040 +" in message


@pytest.mark.parametrize("rail, pin, what", [("3V3", 4, "5V"), ("5V", 17, "3V3"), ("GND", 4, "5V"),
                                             ("5V", 7, "a GPIO"), ("GND", 17, "3V3")])
def test_a_rail_fed_from_the_wrong_kind_of_pin_is_refused(rail, pin, what):
    options = dict(gen_docs.load_options(), players=4)
    rails = tuple(wiring.Rail(r.name, pin if r.name == rail else r.feed) for r in wiring.RAILS)
    with pytest.raises(wiring.WiringError, match=f"the {rail} rail is fed from header pin {pin}, which is {what}$"):
        plan(options, rails)


def test_a_3v3_load_on_the_5v_rail_is_refused():
    holes = [wiring.Hole("J2.28", "5V", "OLED VCC (jumper)", "red", "5V", "OLED_VCC")]
    with pytest.raises(wiring.WiringError, match=r"J2\.28 \(OLED VCC \(jumper\)\) is on the 5V rail"):
        wiring.check_wiring([], holes, {rail.name: rail for rail in wiring.RAILS})


def test_the_louder_piezo_takes_its_5v_from_the_rail_and_pin_4_stays_free():
    options = dict(gen_docs.load_options(), piezo="louder")
    plugs, holes = plan(options)
    assert [h.rail for h in holes if h.key == "PIEZO+"] == ["5V"]
    assert 4 not in {plug.pin for plug in plugs} and 17 not in {plug.pin for plug in plugs}
    assert {plug.pin for plug in plugs if plug.signal == "5V"} == {2}


def test_the_header_table_names_each_power_pin_s_one_jumper_or_says_spare():
    readme = (HARDWARE / "README.md").read_text()
    rows = dict(re.findall(r"^\| (\d+) \| (?:3V3|5V|GND) \|  \|  \| ([^|]+) \|", readme, re.M))
    plugs, _ = plan(dict(gen_docs.load_options(), players=8))
    feeds = {plug.pin: plug for plug in plugs if plug.signal in ("5V", "3V3", "GND")}
    assert set(map(int, rows)) == set(wiring.HEADER_POWER)
    for pin, text in rows.items():
        plug = feeds.get(int(pin))
        if plug:
            assert text.strip() == f"{plug.signal} rail: jumper to {plug.to.split(' (')[0]}"
        else:
            assert text.strip() == "spare: leave free"
    assert "spare" in rows["17"] and "spare" in rows["4"] and "3V3 rail" in rows["1"]


def test_the_per_button_table_is_the_plan():
    readme = (HARDWARE / "README.md").read_text()
    begin, end = gen_docs.marker("button-wiring")
    section = readme[readme.index(begin):readme.index(end)]
    rows = re.findall(r"^\| (\w+) \| (NO|COM|lamp \+|lamp −) \| (\w+) \| (J2\.\d+)[^|]* \| (\d+)", section, re.M)
    options = gen_docs.load_options()
    pins = gen_docs.pins_for(options)
    _, holes = plan(options)
    hole = {h.key: h for h in holes}
    buttons = [n for n in pins if re.fullmatch(r"P\d|YES|NO|MENU", n)]
    assert sorted({row[0] for row in rows}) == sorted(buttons)
    for name, tab, colour, where, header in rows:
        key = {"NO": name, "COM": "COM", "lamp +": "LAMP+", "lamp −": f"LAMP-{name[1:]}"}[tab]
        assert (colour, where) == (hole[key].colour, hole[key].name), (name, tab)
        if tab == "NO":
            assert int(header) == HEADER_PIN[pins[name]]
        if tab == "lamp −":
            assert int(header) == HEADER_PIN[pins[f"LED{name[1:]}"]]


def test_board_svg_labels_every_hole_as_the_tables_do():
    options = gen_docs.load_options()
    pins = gen_docs.pins_for(options)
    plugs, holes = plan(options)
    texts = ["".join(t.itertext()) for t in ET.fromstring((HARDWARE / "board.svg").read_text()).iter(f"{SVG_NS}text")]
    for hole in holes:
        assert f"{hole.to} ({hole.colour})" in texts, hole
        assert hole.name in texts
    for plug in plugs:
        if plug.to.startswith("driver board J1."):
            n = plug.to.split()[2]
            assert n in texts and any(t.startswith(f"pin {plug.pin}") for t in texts)
    assert (HARDWARE / "board.svg").read_text() == board.board_svg(options, pins)


def test_a_pi_standing_under_a_button_makes_the_box_deeper():
    """Depth = the deepest panel part over a base item + clearance + the item's height; with
    nothing overhead the buttons themselves (and the clearance) set it."""
    options = gen_docs.load_options()
    layout = gen_docs.load_panel()
    m = circuits.MECHANICS
    need, over = board.depth(options, layout)
    assert "P1" in over["pi"]
    assert need == -(-(m["button_below"] + m["clearance"] + board.HEIGHT["pi"]) // 1)
    away = dict(layout, inside=dict(layout["inside"], pi=[0, 400], board=[0, -400]))
    free, over = board.depth(options, away)
    assert over == {"pi": "nothing", "board": "nothing"}
    assert free == m["button_below"] + m["clearance"]
