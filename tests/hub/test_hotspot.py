"""The box's own Wi-Fi hotspot (SD image, no router): NetworkManager's dispatcher script (the
real one, systemd/image/files/pi-companion-hotspot-dispatch, run as a process) writes the
network's name and password and pokes the hub's socket; the box then shows a Wi-Fi QR that a
phone camera joins (read back by zxing-cpp), YES goes on to the page's QR at the hotspot's
address, and the picture any web client gets never shows the password."""
from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zxingcpp
from hypothesis import given, settings, strategies as st
from PIL import Image

from helpers.common import Clock, VirtualFactory, VirtualPin
from pi_companion.box import Box, Wake
from pi_companion.core.events import Turn
from pi_companion.hub import Hotspot, read_hotspot
from pi_companion.hub.server import Hub
from pi_companion.ui.qr import wifi_text
from helpers.boxes import attach_hub, make_box, tap

REPO = Path(__file__).resolve().parents[2]
DISPATCH = REPO / "systemd" / "image" / "files" / "pi-companion-hotspot-dispatch"
URL = "http://games-table.local:8080/"
NETWORK = {"ssid": "games-table", "password": "tabletop-2026"}


def codes(image: Image.Image) -> list[str]:
    big = image.convert("L").resize((512, 256), 0)
    return [c.text for c in zxingcpp.read_barcodes(big, formats=zxingcpp.BarcodeFormat.QRCode)]


def dispatch(tmp_path: Path, hub: Hub, action: str, connection: str = "pi-companion-hotspot"):
    """NetworkManager's call of the dispatcher script, as root would make it (paths moved)."""
    env = dict(os.environ, CONNECTION_ID=connection, IP4_ADDRESS_0="10.42.0.1/24 0.0.0.0",
               PI_COMPANION_HOTSPOT_SOURCE=str(tmp_path / "hotspot-source.json"),
               PI_COMPANION_HOTSPOT_STATE=str(tmp_path / "net" / "hotspot.json"),
               PI_COMPANION_HUB=str(hub.path), PI_COMPANION_GROUP="no-such-group-here")
    return subprocess.run([sys.executable, str(DISPATCH), "wlan0", action], env=env,
                          capture_output=True, text=True, timeout=30)


def wait_for(condition, what: str, box: Box) -> None:
    for _ in range(300):
        box.pump()
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError(f"not within 3 s: {what}")


@pytest.fixture
def rig(tmp_path):
    Clock.now = 0.0
    (tmp_path / "hotspot-source.json").write_text(json.dumps(NETWORK))
    factory = VirtualFactory(pin_class=VirtualPin)
    box = make_box(factory, players=("Ada", "Ben"), display="dummy")
    hub = Hub(tmp_path / "hub.sock", tmp_path, board_url=URL,
              hotspot_path=tmp_path / "net" / "hotspot.json")
    hub.attach(box)
    hub.start()
    box.pump()
    yield box, factory, hub
    hub.close()
    box.close()
    factory.reset()


def test_the_hotspot_coming_up_shows_its_wifi_qr_then_the_page_at_its_address(rig, tmp_path, text_boxes):
    box, factory, hub = rig
    assert box.engine.menu is None
    result = dispatch(tmp_path, hub, "up")
    assert result.returncode == 0, result.stderr
    assert "no group no-such-group-here" in result.stderr      # said, and the file still written
    wait_for(lambda: box.engine.menu is not None and box.engine.menu.qr == "wifi", "the Wi-Fi QR", box)
    assert codes(box.display.device.image) == ["WIFI:T:WPA;S:games-table;P:tabletop-2026;;"]
    texts = [t for t, _ in text_boxes]
    assert "games-table" in texts and "tabletop-2026" in texts and "YES: TV QR" in texts
    assert all(0 <= b[0] and b[2] <= 128 and 0 <= b[1] and b[3] <= 64 for _, b in text_boxes)
    # The hub's plain clients (/oled.png) get a frame without the code or the password.
    def picture(line: bytes) -> Image.Image:
        return Image.open(io.BytesIO(base64.b64decode(json.loads(line)["png"])))
    for _ in range(300):
        with hub.lock:
            plain, true = hub.oled, hub.oled_true
        if true and codes(picture(true)):
            break
        time.sleep(0.01)
    assert codes(picture(true)) == ["WIFI:T:WPA;S:games-table;P:tabletop-2026;;"]
    assert codes(picture(plain)) == []
    assert picture(plain).convert("1").tobytes() != picture(true).convert("1").tobytes()
    # YES: the page's code, at the hotspot's address (no default route: the web process has none).
    tap(box, factory, "YES", 1.0)
    assert box.engine.menu.qr == "board"
    assert codes(box.display.device.image) == ["http://10.42.0.1:8080/"]
    tap(box, factory, "NO", 2.0)
    assert box.engine.menu is None
    # MENU > Show on TV / phone starts with "Join box Wi-Fi" while the hotspot is up ...
    tap(box, factory, "MENU", 3.0)
    box.queue.put(Wake(Turn(3.2, -1)))
    box.pump()
    tap(box, factory, "YES", 3.3)
    assert box.engine.menu.items[0] == ("web:wifi", "Join box Wi-Fi")
    tap(box, factory, "NO", 3.5)
    # ... and not once it is down; the page's code is back at NAME.local.
    result = dispatch(tmp_path, hub, "down")
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "net" / "hotspot.json").exists()
    wait_for(lambda: hub.hotspot is None, "the hotspot gone", box)
    tap(box, factory, "MENU", 4.0)
    box.queue.put(Wake(Turn(4.2, -1)))
    box.pump()
    tap(box, factory, "YES", 4.3)
    assert [k for k, _ in box.engine.menu.items][0] == "web:board"
    tap(box, factory, "YES", 4.5)
    assert codes(box.display.device.image) == [URL]


def test_a_hotspot_up_before_the_box_starts_is_shown_at_start(tmp_path):
    """The box may start after NetworkManager opened the hotspot (the dispatcher's poke found no
    socket then): it reads the file when its hub starts. The screen's input is in the game log
    like a press."""
    (tmp_path / "net").mkdir()
    (tmp_path / "net" / "hotspot.json").write_text(json.dumps(dict(NETWORK, address="10.42.0.1")))
    Clock.now = 0.0
    factory = VirtualFactory(pin_class=VirtualPin)
    box = make_box(factory, players=("Ada", "Ben"), display="dummy")
    hub = attach_hub(box, tmp_path, board_url=URL, hotspot_path=tmp_path / "net" / "hotspot.json")
    try:
        hub.start()
        box.pump()
        assert box.engine.menu is not None and box.engine.menu.qr == "wifi"
        assert codes(box.display.device.image) == [wifi_text("games-table", "tabletop-2026")]
    finally:
        hub.close()
        box.close()
        factory.reset()


def test_other_connections_and_actions_change_nothing(rig, tmp_path):
    box, factory, hub = rig
    for connection, action in (("pi-companion-wifi", "up"), ("pi-companion-hotspot", "dhcp4-change")):
        result = dispatch(tmp_path, hub, action, connection)
        assert result.returncode == 0 and result.stderr == ""
    assert not (tmp_path / "net").exists()
    box.pump()
    assert box.engine.menu is None and hub.hotspot is None


def test_a_broken_hotspot_file_is_one_warning_and_no_screen(rig, tmp_path, caplog):
    box, factory, hub = rig
    (tmp_path / "net").mkdir()
    (tmp_path / "net" / "hotspot.json").write_text('{"ssid": "x", "password": "short"}')
    hub.check_hotspot()
    box.pump()
    assert hub.hotspot is None and box.engine.menu is None
    assert "hotspot file" in caplog.text and "password: 8 to 63" in caplog.text


def test_wifi_text_escapes_what_the_format_reserves():
    assert wifi_text('a;b,c:d"e\\f', "p;1") == 'WIFI:T:WPA;S:a\\;b\\,c\\:d\\"e\\\\f;P:p\\;1;;'


@settings(max_examples=40, deadline=None)
@given(ssid=st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=20),
       password=st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=8, max_size=20))
def test_any_network_decodes_back_from_the_screen(ssid, password):
    """What a phone camera reads off the OLED is the network, whatever its name and password."""

    from PIL import ImageDraw

    from pi_companion.ui.qr import draw
    image = Image.new("1", (128, 64))
    draw(ImageDraw.Draw(image), (URL, "", URL, "", ssid, password), "wifi")
    assert codes(image) == [wifi_text(ssid, password)]


@settings(max_examples=300, deadline=None)
@given(raw=st.one_of(st.binary(max_size=200),
                     st.dictionaries(st.sampled_from(["ssid", "password", "address", "x"]),
                                     st.one_of(st.text(max_size=70), st.integers(), st.none()),
                                     max_size=4).map(lambda d: json.dumps(d).encode())))
def test_no_hotspot_file_crashes_the_reader(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("h") / "hotspot.json"
    path.write_bytes(raw)
    try:
        hotspot = read_hotspot(path)
    except ValueError as err:
        assert str(err) and "\n" not in str(err)
    else:
        assert isinstance(hotspot, Hotspot) and 8 <= len(hotspot.password) <= 63
