"""The "Show on TV / phone" screen: a QR code of the big screen's address (or the host's link,
which carries the host token in the URL fragment), drawn dark on a lit square so that phone
cameras read it, with the address as text and a "same Wi-Fi" hint."""
from __future__ import annotations

from typing import Any

import segno

from .canvas import centred, fitted, left, text_width

SIZE = 64           # the QR's square: the OLED's full height


def qr_matrix(text: str) -> tuple[bytearray, ...]:
    """Rows of modules (1 = dark), the smallest QR with low error correction."""
    return tuple(segno.make_qr(text, error="l", boost_error=False).matrix)


def addresses(web: tuple[str, ...]) -> tuple[str, str, str]:
    """What the screen writes beside the code, as someone would type it: NAME.local, the IP
    address (when the web process has said it) and the port."""
    board = web[0]
    named = web[2] if len(web) > 2 and web[2] else board
    by_ip = web[3] if len(web) > 3 else ""
    name, _, port = named.split("//", 1)[-1].rstrip("/").rpartition(":")
    ip = by_ip.split("//", 1)[-1].rstrip("/").rpartition(":")[0] if by_ip else ""
    return (name, ip, port) if name else (named.split("//", 1)[-1].rstrip("/"), ip, "")


def draw(draw: Any, view: Any, which: str) -> None:
    board, host = view.web[:2]
    url = host if which == "host" else board
    if not url:
        centred(draw, 4, "Big screen is off", 11)
        centred(draw, 22, "set web.enabled = true", 9)
        centred(draw, 34, "in the config file", 9)
        centred(draw, 52, "NO: back", 9)
        return
    matrix = qr_matrix(url)
    n = len(matrix)
    quiet = 2                                  # light modules around the code
    if SIZE // (n + 2 * quiet) < 2 <= SIZE // (n + 2):
        quiet = 1                              # 2-pixel modules matter more to a phone camera
    scale = max(1, SIZE // (n + 2 * quiet))
    side = (n + 2 * quiet) * scale
    x0 = y0 = (SIZE - side) // 2
    draw.rectangle((x0, y0, x0 + side - 1, y0 + side - 1), fill=1)
    for r, row in enumerate(matrix):
        for c, dark in enumerate(row):
            if dark:
                x, y = x0 + (c + quiet) * scale, y0 + (r + quiet) * scale
                draw.rectangle((x, y, x + scale - 1, y + scale - 1), fill=0)
    # Beside the code, to type (Android phones often cannot resolve NAME.local): the name (cut
    # before ".local" when it is too long for one line), the IP address, the port; then the
    # hint when there is room. The smallest size still reads on the OLED.
    name, ip, port = addresses(view.web)
    lines = [("HOST" if which == "host" else "TV/phone", 10)]
    head, dot, tail = name.rpartition(".")
    if dot and text_width(name, 7) > 62:
        lines += [(head, fitted(head, 62, 9, 7)), (dot + tail, 9)]
    else:
        lines.append((name, fitted(name, 62, 9, 7)))
    if ip:
        lines.append((ip, fitted(ip, 62, 9, 7)))
    if port:
        lines.append((f":{port}", 9))
    if len(lines) < 5:
        lines.append(("same Wi-Fi", 8))
    for i, (line, size) in enumerate(lines):
        left(draw, 66, 13 + 11 * (i - 1) if i else 0, line, size)
    left(draw, 66, 55, "host only" if which == "host" else "NO: back", 8)


def carries_secret(view: Any) -> bool:
    """Does the frame drawn for `view` (the engine) carry a secret? The host's QR holds the host
    token: whoever reads it off a picture of the OLED can take the remote."""
    menu = getattr(view, "menu", None)
    return menu is not None and menu.qr == "host"


def without_secret(frame: Any) -> Any:
    """A copy of a host-QR frame for anyone who has not proved the token (/oled.png, the hub's
    plain clients): the code's square is blanked and says where to find it; the text beside it
    stays. No module of the code is left, so nothing of the token can be read or guessed."""
    from PIL import ImageDraw
    public = frame.copy()
    draw = ImageDraw.Draw(public)
    draw.rectangle((0, 0, SIZE - 1, SIZE - 1), fill=0)
    draw.rectangle((2, 2, SIZE - 3, SIZE - 3), outline=1)
    centred(draw, 16, "QR shown", 9, 0, SIZE)
    centred(draw, 28, "on the box", 9, 0, SIZE)
    centred(draw, 40, "only", 9, 0, SIZE)
    return public
