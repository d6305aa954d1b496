"""The "Show on TV / phone" screen: a QR code of the big screen's address (or the host's link,
which carries the host token in the URL fragment), drawn dark on a lit square so that phone
cameras read it, with the address as text and a "same Wi-Fi" hint."""
from __future__ import annotations

from typing import Any

import segno

from .canvas import centred, clip, left

SIZE = 64           # the QR's square: the OLED's full height


def qr_matrix(text: str) -> tuple[bytearray, ...]:
    """Rows of modules (1 = dark), the smallest QR with low error correction."""
    return tuple(segno.make_qr(text, error="l", boost_error=False).matrix)


def draw(draw: Any, view: Any, which: str) -> None:
    board, host = view.web
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
    address = board.split("//", 1)[-1].rstrip("/")
    name, _, port = address.rpartition(":")
    left(draw, 66, 0, "HOST" if which == "host" else "TV/phone", 10)
    left(draw, 66, 14, "same Wi-Fi", 9)
    left(draw, 66, 28, clip(name or address, 62, 9), 9)
    left(draw, 66, 40, f":{port}" if name else "", 9)
    left(draw, 66, 53, "host only" if which == "host" else "NO: back", 9)


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
