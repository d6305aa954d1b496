"""The OLED's "Show on TV / phone" screen: its QR codes decode (read by zxing-cpp, as a phone camera would) to the
scoreboard's address and to the host's link with the token; "New host" changes the token."""
from __future__ import annotations

import pytest
import zxingcpp

from helpers.common import Clock, VirtualFactory, VirtualPin
from pi_companion.box import Wake
from pi_companion.core.events import Turn
from helpers.boxes import attach_hub, make_box, tap

URL = "http://testbox.local:8080/"


def decode(image, path):
    """The text of the QR code in a 128x64 frame, as a phone would see the OLED (lit = light),
    read by zxing-cpp (a dev dependency); the picture is saved at `path` for a look."""
    big = image.convert("L").resize((512, 256), 0)
    big.save(path)
    found = zxingcpp.read_barcodes(big, formats=zxingcpp.BarcodeFormat.QRCode)
    assert len(found) == 1, f"{len(found)} QR codes found in {path}"
    return found[0].text


@pytest.fixture
def rig(tmp_path):
    Clock.now = 0.0
    factory = VirtualFactory(pin_class=VirtualPin)
    box = make_box(factory, players=("Ada", "Ben"), display="dummy")
    hub = attach_hub(box, tmp_path, board_url=URL)
    box.pump()
    yield box, factory, hub
    box.close()
    factory.reset()


def open_web_menu(box, factory, t):
    tap(box, factory, "MENU", t)
    box.queue.put(Wake(Turn(t + 0.2, -1)))               # the last item
    box.pump()
    assert box.engine.menu.selected == "web"
    tap(box, factory, "YES", t + 0.3)


def test_the_scoreboard_qr_decodes_to_the_address(rig, tmp_path):
    box, factory, hub = rig
    open_web_menu(box, factory, 1.0)
    tap(box, factory, "YES", 2.0)                         # "Scoreboard QR"
    assert box.engine.menu.qr == "board"
    assert decode(box.display.device.image, tmp_path / "board.png") == URL
    tap(box, factory, "NO", 3.0)
    assert box.engine.menu is None


def test_the_host_qr_carries_the_token_and_new_host_rotates_it(rig, tmp_path):
    box, factory, hub = rig
    open_web_menu(box, factory, 1.0)
    box.queue.put(Wake(Turn(2.0, 1)))
    box.pump()
    tap(box, factory, "YES", 2.1)                         # "Host remote QR"
    first = decode(box.display.device.image, tmp_path / "host.png")
    assert first == f"{URL}host#t={hub.token}"
    tap(box, factory, "NO", 3.0)
    open_web_menu(box, factory, 4.0)
    for t in (5.0, 5.1):
        box.queue.put(Wake(Turn(t, 1)))
    box.pump()
    tap(box, factory, "YES", 5.2)                         # "New host"
    second = decode(box.display.device.image, tmp_path / "host2.png")
    assert second == f"{URL}host#t={hub.token}" and second != first


def test_with_the_web_off_the_screen_says_how_to_turn_it_on(text_boxes):
    Clock.now = 0.0
    factory = VirtualFactory(pin_class=VirtualPin)
    box = make_box(factory, players=("Ada", "Ben"), display="dummy")
    try:
        box.pump()
        open_web_menu(box, factory, 1.0)
        tap(box, factory, "YES", 2.0)
        assert box.engine.menu.qr == "board"
        texts = [t for t, _ in text_boxes]
        assert "Big screen is off" in texts and "set web.enabled = true" in texts
        assert all(0 <= b[0] and b[2] <= 128 and 0 <= b[1] and b[3] <= 64 for _, b in text_boxes)
    finally:
        box.close()
        factory.reset()


def test_the_host_qr_uses_two_pixel_modules():
    """A 29-module code (the host link) gets 2x2-pixel modules with a one-module quiet zone."""
    from PIL import Image, ImageDraw

    from pi_companion.ui.qr import draw as draw_qr, qr_matrix

    links = (URL, f"{URL}host#t=AbCdEfGhIjKl")
    assert len(qr_matrix(links[1])) == 29
    image = Image.new("1", (128, 64))
    draw_qr(ImageDraw.Draw(image), links, "host")
    assert image.crop((0, 0, 64, 64)).getbbox() == (1, 1, 63, 63)      # 31 modules x 2 px


def test_the_qr_screens_carry_the_ip_address_the_web_process_reports(tmp_path, text_boxes):
    """Android phones often cannot resolve NAME.local: once the real web link (HubLink, over the
    hub's socket) has said this machine's IP address, both codes carry it and the screen
    writes the name, the IP address and the port as text to type."""
    import asyncio

    from pi_companion.web.server import HubLink
    Clock.now = 0.0
    factory = VirtualFactory(pin_class=VirtualPin)
    box = make_box(factory, players=("Ada", "Ben"), display="dummy")
    hub = attach_hub(box, tmp_path, board_url=URL)
    hub.start()
    try:
        async def tell():
            link = HubLink(hub.path, lambda: "192.168.1.23")
            task = asyncio.ensure_future(link.run())
            for _ in range(300):
                if hub.address:
                    break
                await asyncio.sleep(0.01)
            task.cancel()
        asyncio.run(tell())
        assert hub.address == "http://192.168.1.23:8080/"
        box.pump()
        open_web_menu(box, factory, 1.0)
        text_boxes.clear()
        tap(box, factory, "YES", 2.0)                     # "Scoreboard QR"
        assert decode(box.display.device.image, tmp_path / "board-ip.png") == "http://192.168.1.23:8080/"
        texts = [t for t, _ in text_boxes]
        screen = text_boxes[texts.index("TV/phone"):]                 # the QR screen's (not the menu's)
        assert [t for t, _ in screen][1:4] == ["testbox.local", "192.168.1.23", ":8080"], screen
        assert all(64 <= b[0] and b[2] <= 128 and 0 <= b[1] and b[3] <= 64 for _, b in screen), screen
        tap(box, factory, "NO", 3.0)
        open_web_menu(box, factory, 4.0)
        box.queue.put(Wake(Turn(5.0, 1)))
        box.pump()
        tap(box, factory, "YES", 5.1)                     # "Host remote QR"
        assert decode(box.display.device.image, tmp_path / "host-ip.png") == \
            f"http://192.168.1.23:8080/host#t={hub.token}"
    finally:
        hub.close()
        box.close()
        factory.reset()


def test_a_long_name_goes_on_two_lines_and_nothing_leaves_the_screen(text_boxes):
    from PIL import Image, ImageDraw

    from pi_companion.ui.qr import draw as draw_qr

    links = ("http://10.0.0.200:8080/", "http://10.0.0.200:8080/host#t=AbCdEfGhIjKl",
             "http://pi-companion.local:8080/", "http://10.0.0.200:8080/")
    for which in ("board", "host"):
        text_boxes.clear()
        draw_qr(ImageDraw.Draw(Image.new("1", (128, 64))), links, which)
        texts = [t for t, _ in text_boxes]
        assert texts[1:5] == ["pi-companion", ".local", "10.0.0.200", ":8080"], texts
        assert all(64 <= b[0] and b[2] <= 128 and 0 <= b[1] and b[3] <= 64 for _, b in text_boxes), text_boxes
        tops = [b[1] for _, b in text_boxes]
        assert tops == sorted(tops)                        # one under the other
