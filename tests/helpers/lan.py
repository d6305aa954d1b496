"""A client on the LAN: HTTP GET and POST with their status, and the QR codes a phone reads off
a picture of the OLED (web/test_attacks,
hub/test_roles)."""
from __future__ import annotations

import io
import json
import urllib.request
from urllib.error import HTTPError

import zxingcpp
from PIL import Image

from pi_companion.box import Wake
from pi_companion.core.events import Turn
from pi_companion.web.live import until


def qr_texts(image: Image.Image) -> list[str]:
    """Every QR code a phone camera would read off a 128x64 picture of the OLED."""
    big = image.convert("L").resize((512, 256), 0)
    return [found.text for found in zxingcpp.read_barcodes(big, formats=zxingcpp.BarcodeFormat.QRCode)]


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes, str]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read(), str(r.headers)
    except HTTPError as err:
        return err.code, err.read(), str(err.headers)


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.load(r)
    except HTTPError as err:
        return err.code, json.load(err)


def show_host_qr(live) -> None:
    """MENU > Show on TV / phone > Host remote QR, on the box's own buttons and encoder."""
    box = live.box
    live.tap("MENU")
    live.until(lambda: box.engine.menu is not None)
    box.queue.put(Wake(Turn(box.now(), -1)))              # the last item: "Show on TV / phone"
    live.until(lambda: box.engine.menu.selected == "web")
    live.tap("YES")
    box.queue.put(Wake(Turn(box.now(), 1)))
    live.until(lambda: box.engine.menu.selected == "web:host")
    live.tap("YES")
    live.until(lambda: box.engine.menu.qr == "host")


def mirrored_oled(live, shown) -> "Image.Image":
    """`/oled.png` once the web process mirrors the frame `shown` (its text side, right of the
    code's square, the same): what any visitor of the page gets for that frame."""
    def mirrored():
        status, body, _ = get(live.base + "/oled.png")
        picture = Image.open(io.BytesIO(body))
        same_text = picture.convert("1").crop((64, 0, 128, 64)).tobytes() == \
            shown.convert("1").crop((64, 0, 128, 64)).tobytes()
        return picture if status == 200 and same_text else None
    until(mirrored, 5, "the web process never mirrored the frame")
    picture = mirrored()
    assert picture is not None
    return picture

