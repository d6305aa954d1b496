"""The emulated box: keys drive mock pins, the OLED is drawn in the terminal, q quits.

The terminal tests run `pi-companion simulate` on a real pty of a set size and read the screen
through pyte (a terminal emulator), so they see what a person would see.
"""
from __future__ import annotations

import signal
import time

import pytest
from PIL import Image

from helpers.common import wait_for
from pi_companion.hw.pinmap import load_pinmap
from pi_companion.simulate import MESSAGE_S, PLAYER_HOLD_S, SOUND_S, TAP_S, KeyPad, Status
from pi_companion.ui.terminal import QUADRANTS, choose_layout, frame_lines
from helpers.terminal import Terminal


def test_frame_lines_half_blocks_and_braille():
    image = Image.new("1", (128, 64))
    image.putpixel((0, 0), 1)
    image.putpixel((127, 63), 1)
    half = frame_lines(image, "half")
    assert len(half) == 32 and all(len(line) == 128 for line in half)
    assert half[0][0] == "▀" and half[31][127] == "▄"
    braille = frame_lines(image, "braille")
    assert len(braille) == 16 and all(len(line) == 64 for line in braille)
    assert braille[0][0] == "\u2801" and braille[15][63] == "\u2880"
    assert frame_lines(image, "braille", unicode=False)[0][0] == "#"


def test_sextants_draw_2x3_pixels_a_cell_in_unicode_order():
    """Each of the 64 patterns of a 2x3 cell is the sextant Unicode names for it."""
    import unicodedata
    for bits in range(64):
        image = Image.new("1", (128, 64))
        for i in range(6):
            if bits >> i & 1:
                image.putpixel((2 + i % 2, 3 + i // 2), 1)      # the second cell of the second row
        lines = frame_lines(image, "sextant")
        assert len(lines) == 22 and all(len(line) == 64 for line in lines)   # 64 rows: 21 and a third
        ch = lines[1][1]
        assert set("".join(lines).replace(ch, "", 1)) <= {" "}
        lit = "".join(str(i + 1) for i in range(6) if bits >> i & 1)
        older = {"": " ", "135": "▌", "246": "▐", "123456": "█"}
        assert ch == older[lit] if lit in older else unicodedata.name(ch) == f"BLOCK SEXTANT-{lit}", (bits, ch)
    image = Image.new("1", (128, 64))
    image.putpixel((127, 63), 1)                                # the last row is one pixel tall
    assert frame_lines(image, "sextant")[21][63] == "\U0001FB01"       # BLOCK SEXTANT-2


# The common terminal sizes and what each draws (docs/controls.md, "The OLED in a terminal").
COMMON_SIZES = {(80, 24): ("braille", "side"), (100, 30): ("sextant", "side"),
                (120, 40): ("quad", "side"), (132, 43): ("half", "below"),
                (160, 50): ("half", "side")}


def test_layout_fits_the_terminal():
    for (cols, rows), want in COMMON_SIZES.items():
        assert tuple(choose_layout(cols, rows)) == want, (cols, rows)
    assert tuple(choose_layout(144, 39)) == ("half", "side")     # the smallest full size
    assert tuple(choose_layout(131, 40)) == ("half", "below")
    assert tuple(choose_layout(130, 40)) == ("quad", "side")     # 128 columns and two borders
    assert tuple(choose_layout(80, 39)) == ("quad", "side")
    assert tuple(choose_layout(80, 29)) == ("sextant", "side")   # 22 lines of 3 pixel rows
    assert tuple(choose_layout(80, 28)) == ("braille", "side")
    assert choose_layout(60, 24) is None and choose_layout(80, 22) is None
    # A style asked for (--oled, the o key) if it fits; the best that fits if not.
    assert tuple(choose_layout(160, 50, "braille")) == ("braille", "side")
    assert tuple(choose_layout(80, 24, "half")) == ("braille", "side")


def set_inputs(factory, pins, names):
    for name in names:
        factory.pin(pins[name]).function = "input"


def test_keys_drive_the_mock_pins(mock_factory):
    pins = load_pinmap()
    set_inputs(mock_factory, pins, ("P2", "YES", "ENC_A", "ENC_B", "HALL_A", "HALL_B"))
    pad = KeyPad(mock_factory, pins, 3)
    assert pad.key("2") and not pad.key("9") and not pad.key("4") and not pad.key("x")
    pad.run_due()
    assert mock_factory.pin(pins["P2"]).state == 0           # pressed (pulled to ground)
    assert wait_for(lambda: (pad.run_due(), mock_factory.pin(pins["P2"]).state)[1] == 1, 1.0)
    pad.key(".")                                             # one turntable step: A rises
    pad.run_due()
    assert mock_factory.pin(pins["HALL_A"]).state == 1 and mock_factory.pin(pins["HALL_B"]).state == 0
    assert pad.key("KEY_RIGHT") and pad.key("KEY_LEFT")     # curses' names for the arrows


def test_hold_key_then_digit_holds_a_player_on_any_layout(mock_factory):
    pins = load_pinmap()
    pad = KeyPad(mock_factory, pins, 3)
    assert pad.key("h", now=10.0) and pad.hold_next
    assert pad.key("2", now=10.1) and not pad.hold_next
    assert pad.due == [(10.1, "P2", True), (10.1 + PLAYER_HOLD_S, "P2", False)]
    pad.due.clear()
    pad.key("2", now=20.0)                                   # without h: a tap again
    assert pad.due == [(20.0, "P2", True), (20.0 + TAP_S, "P2", False)]


def test_eight_players_get_keys_5_to_8(mock_factory):
    from pi_companion.config import Config
    pins = load_pinmap("8players")
    set_inputs(mock_factory, pins, ("P8",))
    pad = KeyPad(mock_factory, pins, 8)
    assert pad.key("8")
    pad.run_due()
    assert mock_factory.pin(pins["P8"]).state == 0
    pad = KeyPad(mock_factory, Config(pins={"P5": 9}).pin_map(), 8)   # a 4-player map and one more
    assert pad.key("5") and not pad.key("6")                 # no pin for P6: an unknown key, said so


def test_status_messages_and_sounds_expire():
    status = Status()
    status.say("unknown key 'x'", now=100.0)
    assert status.line(100.0, ["buzz"], over="") == "unknown key 'x'   sound: buzz"
    assert status.line(100.0 + SOUND_S + 0.1, ["buzz"], over="") == "unknown key 'x'"
    assert status.line(100.0 + MESSAGE_S + 0.1, ["buzz"], over="") == ""
    line = status.line(200.0, ["buzz"], over="Ben wins")
    assert line.startswith("Game over: Ben wins. Play again")


def log_presses(state_dir):
    from pi_companion.gamelog import GameLog
    loaded = GameLog(state_dir).load()          # v2 lines end with their checksum
    return [r for r in loaded[1] if "press" in r] if loaded else []


def test_80x24_terminal_shows_everything_and_two_keys_in_one_read_are_two_presses(tmp_path):
    term = Terminal(80, 24, "--players", "Ada,Ben,Cy,Dee", "--state-dir", str(tmp_path))
    try:
        assert term.wait_for("Grab Bag - pi-companion simulate", "q quit", "1 Ada", "4 Dee"), term.text()
        lines = term.screen.display
        assert lines[0].startswith(" Grab Bag") and any("q quit" in line for line in lines)
        term.type(b"34")                                      # one write: Cy and Dee together
        assert term.wait_for("3 Cy       ●", "4 Dee      ○", "sound: buzz"), term.text()
        assert term.quit() == (0, b"")
    finally:
        term.close()
    presses = log_presses(tmp_path)
    assert [p["press"] for p in presses] == ["P3", "P4"]
    # In read order, each stamped as it was read: near-simultaneous, though a loaded machine can
    # preempt the emulator between the two reads (52 ms once in a fresh-clone `make test` beside
    # a VM), so the bound is loose; what it holds is that both came from the one write.
    assert 0 < presses[1]["t"] - presses[0]["t"] < 0.5
    # The state directory lets the emulator resume like the box: Cy's buzz is still being judged.
    term = Terminal(80, 24, "--players", "Ada,Ben,Cy,Dee", "--state-dir", str(tmp_path))
    try:
        assert term.wait_for("3 Cy       ●", "2 Ben      ○"), term.text()
        assert term.quit()[0] == 0
    finally:
        term.close()


def test_narrow_terminal_says_what_it_needs_and_redraws_on_resize(tmp_path):
    names = "A,B,C,D,E,F,G,H"
    term = Terminal(60, 24, "--game", "hands-up", "--players", names, "--display", "none",
                    "--state-dir", str(tmp_path))
    try:
        assert term.wait_for("Terminal too small: needs 80x23, this is 60x24"), term.text()
        assert all(len(line.rstrip()) <= 60 for line in term.screen.display)
        term.resize(80, 24)
        assert term.wait_for("Hands Up! - pi-companion simulate", "8 H", "q quit",
                             "--display none: no OLED"), term.text()
        term.type(b"8")                                       # an 8-player game: key 8 is H's button
        assert wait_for(lambda: (tmp_path / "current.log").exists()
                        and [p["press"] for p in log_presses(tmp_path)] == ["P8"], 5.0)
        assert term.quit() == (0, b"")
    finally:
        term.close()


def fold_log(state_dir):
    """The engine a resume would build from the emulator's log (its menu state included)."""
    from pi_companion.core.engine import Engine, fold_records
    from pi_companion.games import registry
    from pi_companion.gamelog import GameLog
    header, records = GameLog(state_dir).load()
    engine = Engine(registry.get(header["game"]), tuple(header["players"]), header["options"], header["seed"])
    assert fold_records(engine, records)[1] is None
    return engine


def test_keys_typed_quickly_are_each_their_own_input_and_down_moves_the_menu_down(tmp_path):
    """`]]]` in one write is three detents, `ww` two whole turns (each key its own input, not
    lost in the edges of the one before); the Down arrow moves the menu cursor down."""
    term = Terminal(100, 30, "--game", "all-wound-up", "--players", "Ada,Ben", "--state-dir", str(tmp_path))
    try:
        assert term.wait_for("All Wound Up - pi-companion simulate", "q quit"), term.text()
        term.type(b"1")                                     # Ada's check opens (target 1)
        time.sleep(0.5)
        term.type(b"]]]")                                   # Wind 4: three detents in one read
        time.sleep(0.5)
        term.type(b"ww")                                    # two turns in one read
        time.sleep(2.8)                                     # ... and the check settles (1.5 s)
        term.type(b"m")
        time.sleep(0.3)
        term.type(b"\x1bOB")                                # the Down arrow (keypad mode, as curses sets it)
        time.sleep(0.5)
        assert term.quit()[0] == 0
    finally:
        term.close()
    engine = fold_log(tmp_path)
    attempt = engine.report()["attempts"][0]
    assert (attempt["target"], attempt["steps"]) == (4, 8)
    assert engine.menu is not None and engine.menu.cursor == 1   # down from the first entry


def frame_chars(term):
    """The characters drawn inside the OLED's frame."""
    chars = set()
    for line in term.screen.display[2:]:
        if line.startswith("│"):
            chars |= set(line[1:].split("│")[0]) - {" "}
    return chars


def drawn_in(chars, style):
    """Whether the frame's characters are that style's (and would be no other's)."""
    if style == "braille":
        return all(0x2800 < ord(c) <= 0x28FF for c in chars)
    if style == "sextant":
        return all(0x1FB00 <= ord(c) <= 0x1FB3B or c in "▌▐█" for c in chars)
    if style == "quad":
        return chars <= set(QUADRANTS) and bool(chars & set("▘▝▖▗▚▞▛▜▙▟"))
    return chars <= set("▀▄█")


@pytest.mark.parametrize("size", list(COMMON_SIZES), ids=lambda s: "%dx%d" % s)
def test_every_common_terminal_gets_its_oled_drawing_and_says_who_won(tmp_path, size):
    """The real emulator on a pty of each common size draws the OLED in the style chosen for
    it, the players where that layout puts them, and at game over names the winner in words
    (All Wound Up: Ada holds her button, YES) - also once the terminal is too small to draw."""
    cols, rows = size
    style, panel = COMMON_SIZES[size]
    term = Terminal(cols, rows, "--game", "all-wound-up", "--players", "Ada,Ben", "--state-dir", str(tmp_path))
    try:
        assert term.wait_for("All Wound Up - pi-companion simulate", "q quit", "2 Ben"), term.text()
        term.wait_for("the first frame", timeout=1.0)          # (reads the screen meanwhile)
        chars = frame_chars(term)
        assert chars and drawn_in(chars, style), term.text()
        width = max(len(line.rstrip()) for line in term.screen.display)
        assert width <= cols - 1 and sum(1 for line in term.screen.display if line.strip()) <= rows
        ben = next(line for line in term.screen.display if "2 Ben" in line)
        if panel == "below":
            assert ben.startswith(" keys: 1 Ada") and "key player" not in term.text()
        else:
            assert ben.index("2 Ben") > 64 and "key player" in term.text()
        term.type(b"h1")                                # Ada holds her button: "I crossed the gate"
        time.sleep(2.8)
        term.type(b"y")                                 # YES: the game is over
        assert term.wait_for("Game over: Ada wins. Play again: y, then y again"), term.text()
        term.resize(70, 20)
        assert term.wait_for("Terminal too small", "Game over: Ada wins."), term.text()
        assert term.quit()[0] == 0
    finally:
        term.close()


def test_o_draws_the_oled_in_the_next_style_that_fits_and_oled_asks_for_one(tmp_path):
    """A font without sextants shows boxes: o moves on to the next drawing that fits (120x40:
    quadrants, sextants, braille, quadrants again); --oled braille asks for braille at once."""
    term = Terminal(120, 40, "--game", "all-wound-up", "--players", "Ada,Ben", "--state-dir", str(tmp_path))
    try:
        assert term.wait_for("All Wound Up - pi-companion simulate", "o OLED look"), term.text()
        term.wait_for("the first frame", timeout=1.0)
        assert drawn_in(frame_chars(term), "quad"), term.text()
        for style, words in (("sextant", "sextants"), ("braille", "braille"), ("quad", "quadrant blocks")):
            term.type(b"o")
            assert term.wait_for(f"OLED drawn in {words}"), term.text()
            term.wait_for("the next frame", timeout=0.5)
            assert drawn_in(frame_chars(term), style), (style, term.text())
        assert term.quit()[0] == 0
    finally:
        term.close()
    term = Terminal(160, 50, "--oled", "braille", "--state-dir", str(tmp_path / "b"))
    try:
        assert term.wait_for("Grab Bag - pi-companion simulate", "q quit"), term.text()
        term.wait_for("the first frame", timeout=1.0)
        assert drawn_in(frame_chars(term), "braille"), term.text()
        assert term.quit()[0] == 0
    finally:
        term.close()


def test_flags_that_differ_from_the_saved_game_resume_it_and_say_so_in_one_line(tmp_path):
    """A saved four-player Grab Bag and `--game hands-up --players Ada,Ben`: the saved game goes
    on - the title, the side panel, the keys and the OLED all play it - and one line says so."""
    term = Terminal(160, 45, "--players", "Ada,Ben,Cy,Dee", "--state-dir", str(tmp_path))
    try:
        assert term.wait_for("Grab Bag - pi-companion simulate, 4 players", "4 Dee"), term.text()
        term.type(b"3")                                       # Cy buzzes: the other seekers go dark
        assert term.wait_for("3 Cy       ●", "2 Ben      ○", "4 Dee      ○"), term.text()
        assert term.quit()[0] == 0
    finally:
        term.close()
    term = Terminal(160, 45, "--game", "hands-up", "--players", "Ada,Ben", "--state-dir", str(tmp_path))
    try:
        assert term.wait_for("Grab Bag - pi-companion simulate, 4 players", "4 Dee", "3 Cy       ●",
                             "Resumed the saved Grab Bag (4 players), not hands-up for Ada, Ben"), term.text()
        assert "Hands Up" not in term.text() and "2 players" not in term.text()
        term.type(b"n")                                       # Cy's buzz was wrong: Dee may buzz
        assert term.wait_for("3 Cy       ○", "2 Ben      ●", "4 Dee      ●"), term.text()
        term.type(b"4")                                       # Dee buzzes: Ben goes dark
        assert term.wait_for("4 Dee      ●", "2 Ben      ○"), term.text()
        assert "no player" not in term.text()
        assert term.quit()[0] == 0
    finally:
        term.close()
    term = Terminal(80, 24, "--game", "hands-up", "--players", "Ada,Ben", "--state-dir", str(tmp_path))
    try:                                           # the newcomer's terminal: the line whole
        assert term.wait_for("Resumed the saved Grab Bag (4 players), not hands-up for Ada, Ben"), term.text()
        assert term.quit()[0] == 0
    finally:
        term.close()
    from pi_companion.gamelog import GameLog
    header, _ = GameLog(tmp_path).load()
    assert header["game"] == "grab-bag" and header["players"] == ["Ada", "Ben", "Cy", "Dee"]
    assert [p["press"] for p in log_presses(tmp_path)] == ["P3", "NO", "P4"]


def test_simulate_web_serves_the_big_screen_beside_the_emulator_and_says_where(tmp_path):
    """`pi-companion simulate --web` (what `make run` starts) on a real pty: it prints the big
    screen's address and keeps it on the title line; the real `pi-companion web` serves the
    scoreboard there, a key pressed in the terminal reaches it, and q ends both."""
    import json
    import socket
    import urllib.request
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"http://localhost:{port}/"
    term = Terminal(100, 30, "--players", "Ada,Ben,Cy", "--web", "--web-port", str(port))
    try:
        assert term.wait_for("Grab Bag - pi-companion simulate", f"TV: {address}", timeout=40), term.text()
        page = urllib.request.urlopen(address, timeout=5).read().decode()
        assert "board.js" in page and "<title>pi-companion scoreboard</title>" in page
        snap = json.load(urllib.request.urlopen(address + "api/snapshot", timeout=5))
        assert snap["title"] == "Grab Bag" and [p["name"] for p in snap["players"]] == ["Ada", "Ben", "Cy"]
        seeker = next(p for p in snap["players"] if p["turn"])["n"]          # the Grab Master cannot buzz
        key = next(n for n in (1, 2, 3) if n != seeker)
        term.type(str(key).encode())
        end = time.monotonic() + 10
        while time.monotonic() < end and json.load(urllib.request.urlopen(address + "api/snapshot", timeout=5))["buzz"] is None:
            time.sleep(0.05)
        snap = json.load(urllib.request.urlopen(address + "api/snapshot", timeout=5))
        assert snap["buzz"]["winner"] == ["Ada", "Ben", "Cy"][key - 1]
        assert term.quit()[0] == 0
    finally:
        term.close()
    with pytest.raises(OSError):                                   # the web process went with it
        urllib.request.urlopen(address, timeout=2)
    # `make run` again at once: the port's closed connections (TIME_WAIT) do not hold it - the
    # web process binds with SO_REUSEADDR, so the emulator's check that it is free must too.
    term = Terminal(100, 30, "--players", "Ada,Ben,Cy", "--web", "--web-port", str(port))
    try:
        assert term.wait_for(f"TV: {address}", timeout=40), term.text() + term.proc.stderr.read1().decode()
        assert term.quit()[0] == 0
    finally:
        term.close()


def test_simulate_web_new_game_from_the_host_remote_can_be_undone(tmp_path):
    """`make run`'s host remote (the address it prints): New game is undone like a judgement,
    the card won before it comes back. Without --state-dir the emulator once kept no log, so
    Undo after New game said "Nothing to undo" (the very thing issue 25 names)."""
    import json
    import re
    import socket
    import urllib.request
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"http://localhost:{port}/"
    term = Terminal(100, 30, "--players", "Ada,Ben", "--web", "--web-port", str(port))

    def snapshot():
        return json.load(urllib.request.urlopen(address + "api/snapshot", timeout=5))

    def until(check, timeout=10.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            snap = snapshot()
            if check(snap):
                return snap
            time.sleep(0.05)
        raise AssertionError(f"never: {snapshot()}")

    try:
        assert term.wait_for(f"TV: {address}", timeout=40), term.text()
        token = re.search(rb"host#t=([A-Za-z0-9_-]+)", term.raw).group(1).decode()

        def command(body):
            request = urllib.request.Request(address + "api/command", data=json.dumps(body).encode(),
                                             headers={"X-Host-Token": token, "Content-Type": "application/json"})
            return json.load(urllib.request.urlopen(request, timeout=5))
        seeker = next(p for p in snapshot()["players"] if not p["turn"])["n"]
        term.type(str(seeker).encode())
        until(lambda s: s["buzz"] is not None)
        assert command({"cmd": "yes"})["ok"]
        until(lambda s: s["players"][seeker - 1]["score"] == 1)
        assert command({"cmd": "new"})["ok"]
        until(lambda s: all(p["score"] == 0 for p in s["players"]))
        assert command({"cmd": "undo"})["ok"]
        snap = until(lambda s: s["players"][seeker - 1]["score"] == 1 or s["notice"] == "Nothing to undo")
        assert snap["players"][seeker - 1]["score"] == 1, snap["notice"]
        assert term.quit()[0] == 0
    finally:
        term.close()


def test_simulate_web_killed_takes_its_web_process_along(tmp_path):
    """SIGTERM (or a closed terminal's SIGHUP) to `simulate --web`: the web process goes too,
    the port is free again."""
    import socket
    import urllib.request
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    term = Terminal(100, 30, "--web", "--web-port", str(port))
    try:
        assert term.wait_for(f"TV: http://localhost:{port}/", timeout=40), term.text()
        term.proc.send_signal(signal.SIGHUP)
        assert term.proc.wait(timeout=10) == 128 + signal.SIGHUP
        end = time.monotonic() + 10
        while time.monotonic() < end:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1).close()
                time.sleep(0.1)
            except OSError:
                break
        with pytest.raises(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
    finally:
        term.close()


def test_simulate_web_on_a_port_something_listens_on_says_so_in_one_line(tmp_path):
    """A port another program listens on is refused before anything starts, in one line."""
    import socket
    with socket.socket() as other:
        other.bind(("0.0.0.0", 0))
        other.listen()
        port = other.getsockname()[1]
        term = Terminal(100, 30, "--web", "--web-port", str(port), "--state-dir", str(tmp_path))
        try:
            assert term.proc.wait(timeout=30) == 75
            assert term.proc.stderr.read().decode() == \
                f"pi-companion: port {port} is in use: give another with --web-port\n"
        finally:
            term.close()


def test_the_top_line_keeps_the_tv_address_whole_at_80_columns():
    """The big screen's address on the top line is whole at every width: a cut one reads as a
    plausible wrong address. The words before it give way."""
    from pi_companion.simulate import title_line
    web = "http://localhost:8080/"
    for title in ("Hold Your Breath!", "Hold Everything!", "Grab Bag"):
        for players in (2, 8):
            for cols in (80, 60, 40, 30):
                line = title_line(title, players, web, cols)
                assert len(line) <= cols and line.endswith(f"TV: {web}"), (title, cols, line)
    assert title_line("Grab Bag", 3, web, 120) == f" Grab Bag - pi-companion simulate, 3 players   TV: {web}"
    assert title_line("Grab Bag", 3, "", 80) == " Grab Bag - pi-companion simulate, 3 players"


def test_the_emulator_at_80x24_shows_the_whole_tv_address(tmp_path):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"http://localhost:{port}/"
    term = Terminal(80, 24, "--game", "hold-your-breath", "--players", "Ada,Ben,Cy,Dee", "--web",
                    "--web-port", str(port))
    try:
        assert term.wait_for(f"TV: {address}", "Hold Your Breath!", timeout=40), term.text()
        top = term.text().splitlines()[0]
        assert top.rstrip().endswith(f"TV: {address}"), top
        assert term.quit()[0] == 0
    finally:
        term.close()
