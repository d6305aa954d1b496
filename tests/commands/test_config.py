"""Config: every key checked; a bad one is one line naming the key, exit 78."""
from __future__ import annotations

import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.common import run_cli
from pi_companion.config import Config, ConfigError, load_config, parse_config, template_text

BAD = [
    ("[boxx]\ngame = 'grab-bag'\n", "[boxx]: unknown section"),
    ("[box]\ngmae = 'grab-bag'\n", "box.gmae: unknown key"),
    ("[box]\ngame = 'chess'\n", "box.game: must be one of"),
    ("[box]\nplayers = 'Ada'\n", "box.players: must be a list of 2 to 8 non-empty names"),
    ("[box]\nplayers = ['Ada', 'Ada']\n", "box.players: names must be unique"),
    ("[box]\nseed = 'seven'\n", "box.seed: must be an integer"),
    ("[box]\nlog_level = 'loud'\n", "box.log_level: must be one of"),
    ("[box]\nhistory = -1\n", "box.history: must be an integer from 0 to 1000"),
    ("[input]\ndebounce_ms = 2\n", "input.debounce_ms: must be a number from 5 to 50"),
    ("[input]\ndebounce_ms = true\n", "input.debounce_ms: must be a number"),
    ("[input]\nedges = 'poll'\n", "input.edges: must be one of kernel, lgpio"),
    ("[display]\ndriver = 'hdmi'\n", "display.driver: must be one of"),
    ("[display]\ni2c_address = 300\n", "display.i2c_address: must be 0x3C or 0x3D"),
    ("[display]\ni2c_address = 0x3E\n", "display.i2c_address: must be 0x3C or 0x3D"),
    ("[display]\ni2c_address = 0x78\n", "display.i2c_address: 0x78 is the 8-bit form printed on some boards: write 0x3c"),
    ("[display]\ni2c_address = true\n", "display.i2c_address: must be 0x3C or 0x3D"),
    ("[sound]\nenabled = 'yes'\n", "sound.enabled: must be true or false"),
    ("[wind]\nsource = 'usb'\n", "wind.source: must be one of gpio, puck"),
    ("[pins]\nP9 = 4\n", "pins.P9: unknown pin name"),
    ("[pins]\nP1 = 40\n", "pins.P1: must be a BCM GPIO number from 2 to 27"),
    ("[games.grab-bag]\ncards = 0\n", "games.grab-bag.cards: must be an integer from 1 to 200"),
    ("[games.grab-bag]\nvariant = 'wild'\n", "games.grab-bag.variant: must be one of"),
    ("[games.chess]\nx = 1\n", "games.chess: unknown game"),
    ("box = 3\n", "box: must be a table"),
    ("[box\n", "not valid TOML"),
]


@pytest.mark.parametrize("text,message", BAD, ids=[b[1][:30] for b in BAD])
def test_bad_config_names_the_key(tmp_path, text, message):
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_pin_conflict_after_override_is_caught(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("[pins]\nP1 = 22\n")          # P2 is on 22 in the default map
    with pytest.raises(ConfigError, match="pins"):
        load_config(path)


def test_absent_file_means_defaults(tmp_path):
    assert load_config(tmp_path / "absent.toml") == Config()


def test_both_ssd1306_addresses_are_accepted(tmp_path):
    path = tmp_path / "config.toml"
    for address in (0x3C, 0x3D):
        path.write_text(f"[display]\ni2c_address = {address:#04x}\n")
        assert load_config(path).i2c_address == address


def test_template_is_valid_and_says_the_defaults():
    data = tomllib.loads(template_text())
    assert parse_config(data) == Config()
    uncommented = "\n".join(line.lstrip("# ") for line in template_text().splitlines()
                            if line.startswith("# ") and "=" in line and not line.startswith("# P1"))
    assert "game = \"grab-bag\"" in uncommented and "debounce_ms = 5" in uncommented


def test_cli_config_check_and_default(tmp_path):
    good = tmp_path / "good.toml"
    good.write_text("[box]\nplayers = ['Ada', 'Ben', 'Cy']\n")
    assert run_cli("config", "check", str(good)).returncode == 0
    bad = tmp_path / "bad.toml"
    bad.write_text("[display]\nrotate = 9\n")
    out = run_cli("config", "check", str(bad))
    assert out.returncode == 78 and out.stderr.strip().endswith("display.rotate: must be an integer from 0 to 3")
    assert out.stderr.count("\n") == 1
    out = run_cli("config", "default")
    assert out.returncode == 0 and "[games.grab-bag]" in out.stdout


def test_run_with_a_bad_config_exits_78_in_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[box]\ngame = 'grab-bag'\nplayers = ['A','B','C','D','E']\n")
    out = run_cli("run", "--config", str(bad), "--pins", "mock", "--display", "none")
    assert out.returncode == 78
    assert out.stderr.count("\n") == 1 and "box.players" in out.stderr


def test_config_template_pin_examples_agree_with_the_pin_map():
    from pi_companion.hw.pinmap import load_pinmap
    pins = load_pinmap()
    examples = [line.lstrip("# ").split("=") for line in template_text().splitlines()
                if line.startswith("# P") and "=" in line]
    assert examples
    for name, value in examples:
        assert pins[name.strip()] == int(value), f"config template says {name.strip()} = {value.strip()}"
    assert Config().pins == {}          # no pin defaults of its own: the map is the default


def test_button_colours_by_name_or_hex_and_bad_ones_named_in_one_line():
    from pi_companion.core.colours import DEFAULT_COLOURS
    assert Config().colours == DEFAULT_COLOURS
    got = parse_config({"box": {"colours": {"P1": "Pink", "P8": "#A0B1C2"}}}).colours
    assert got == ("#e93d82", *DEFAULT_COLOURS[1:7], "#a0b1c2")
    for bad, words in [({"P9": "red"}, "P9: must be P1 to P8"), ({"P1": "mauve"}, "P1: must be #rrggbb"),
                       ({"P1": "#12345g"}, "P1: must be #rrggbb"), ({"P1": 3}, "P1: must be #rrggbb"),
                       (["red"], "must be a table")]:
        with pytest.raises(ConfigError) as err:
            parse_config({"box": {"colours": bad}})
        assert words in str(err.value) and "box.colours" in str(err.value) and "\n" not in str(err.value)


@given(st.dictionaries(st.text(max_size=4), st.one_of(st.text(max_size=9), st.integers()), max_size=4))
def test_any_colours_table_is_taken_or_refused_in_one_line(table):
    """Whatever a hand-edited config holds, colours parse to 8 #rrggbb strings or one ConfigError."""
    import re
    try:
        got = parse_config({"box": {"colours": table}}).colours
    except ConfigError as err:
        assert "\n" not in str(err)
        return
    assert len(got) == 8 and all(re.fullmatch("#[0-9a-f]{6}", c) for c in got)


def test_edges_come_from_the_kernel_unless_the_config_or_the_command_line_says_lgpio(tmp_path):
    from pi_companion.assemble import build_config
    from pi_companion.cli import parser
    path = tmp_path / "config.toml"
    assert load_config(path).edges == "kernel"            # the default: the kernel's line events
    path.write_text("[input]\nedges = 'lgpio'\n")
    assert load_config(path).edges == "lgpio"
    assert build_config(parser().parse_args(["run", "--config", str(path)])).edges == "lgpio"
    assert build_config(parser().parse_args(["run", "--config", str(path), "--edges", "kernel"])).edges == "kernel"
