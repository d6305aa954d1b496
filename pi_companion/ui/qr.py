"""The "Show on TV / phone" screen: a QR code of the big screen's address (or the host's link,
which carries the host token in the URL fragment), drawn dark on a lit square so that phone
cameras read it, with the address as text and a "same Wi-Fi" hint. On the box's own hotspot, a
third code joins a phone to its Wi-Fi (`WIFI:T:WPA;S:...;P:...;;`, the form phone cameras
read), with the network's name and password as text."""
from __future__ import annotations

from typing import Any

from .canvas import centred, fitted, left, text_width

SIZE = 64           # the QR's square: the OLED's full height


def qr_matrix(text: str) -> tuple[bytearray, ...]:
    """Rows of modules (1 = dark), the smallest QR with low error correction."""
    # Here, not at import: segno's own imports (urllib, http.client, ssl, xml) cost about as
    # much as the rest of the daemon's start.
    import segno
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


def wifi_text(ssid: str, password: str) -> str:
    """A Wi-Fi network as phone cameras join it: `\\ ; , : "` in the name and password are
    escaped with a backslash."""
    def escaped(text: str) -> str:
        return "".join("\\" + c if c in '\\;,:"' else c for c in text)
    return f"WIFI:T:WPA;S:{escaped(ssid)};P:{escaped(password)};;"


def draw(draw: Any, links: tuple[str, ...], which: str) -> None:
    """The QR screen `which` ("board", "host", "wifi") for `links` (see `screens.render`)."""
    if which == "wifi":
        draw_wifi(draw, links)
        return
    board, host = (tuple(links) + ("", ""))[:2]
    url = host if which == "host" else board
    if not url:
        centred(draw, 4, "Big screen is off", 11)
        centred(draw, 22, "set web.enabled = true", 9)
        centred(draw, 34, "in the config file", 9)
        centred(draw, 52, "NO: back", 9)
        return
    draw_code(draw, url)
    # Beside the code, to type (Android phones often cannot resolve NAME.local): the name (cut
    # before ".local" when it is too long for one line), the IP address, the port; then the
    # hint when there is room. The smallest size still reads on the OLED.
    name, ip, port = addresses(links)
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


def draw_wifi(draw: Any, links: tuple[str, ...]) -> None:
    """The box's own Wi-Fi: its code, name and password; YES then shows the page's code."""
    ssid, password = (links[4], links[5]) if len(links) > 5 else ("", "")
    if not ssid:
        centred(draw, 10, "The box's Wi-Fi", 11)
        centred(draw, 26, "hotspot is off", 11)
        centred(draw, 52, "NO: back", 9)
        return
    draw_code(draw, wifi_text(ssid, password))
    left(draw, 66, 0, "JOIN Wi-Fi", 10)
    rows = [(line, 9) for line in wrapped(ssid, 62, 7)] + [("password", 8)] \
        + [(line, 9) for line in wrapped(password, 62, 7)]
    hint = len(rows) <= 4                      # where the page's code is, when there is room
    for i, (line, size) in enumerate(rows[:4 if hint else 5]):
        left(draw, 66, 13 + 10 * i, line, fitted(line, 62, size, 7))
    if hint:
        left(draw, 66, 55, "YES: TV QR", 8)


def wrapped(text: str, width: int, size: int) -> list[str]:
    """`text` cut into lines that fit `width` at `size` (a name or password has no spaces to
    break at: it is cut anywhere, as it is typed)."""
    lines, line = [], ""
    for c in text:
        if line and text_width(line + c, size) > width:
            lines.append(line)
            line = ""
        line += c
    return lines + [line] if line else lines


def draw_code(draw: Any, text: str) -> None:
    """`text` as a QR code in the left square: as large as fits, dark on a lit quiet zone."""
    matrix = qr_matrix(text)
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


def carries_secret(view: Any) -> str:
    """Does the frame drawn for `view` (the engine) carry a secret, and which: "host" (the host
    QR holds the host token: whoever reads it off a picture of the OLED can take the remote),
    "wifi" (the hotspot's password, in the code and as text) or ""."""
    menu = getattr(view, "menu", None)
    return menu.qr if menu is not None and menu.qr in ("host", "wifi") else ""


def without_secret(frame: Any, kind: str = "host") -> Any:
    """A copy of a secret-carrying frame for anyone who has not proved the host token
    (/oled.png, the hub's plain clients): the code's square is blanked and says where to find
    it. For the host QR the text beside it stays; for the Wi-Fi QR (its password is in the
    text) the whole frame is replaced. No module of a code is left, so nothing of a secret can
    be read or guessed."""
    from PIL import ImageDraw
    public = frame.copy()
    draw = ImageDraw.Draw(public)
    if kind == "wifi":
        draw.rectangle((0, 0, public.width - 1, public.height - 1), fill=0)
        centred(draw, 8, "Wi-Fi QR and", 11)
        centred(draw, 24, "password shown", 11)
        centred(draw, 40, "on the box only", 11)
        return public
    draw.rectangle((0, 0, SIZE - 1, SIZE - 1), fill=0)
    draw.rectangle((2, 2, SIZE - 3, SIZE - 3), outline=1)
    centred(draw, 16, "QR shown", 9, 0, SIZE)
    centred(draw, 28, "on the box", 9, 0, SIZE)
    centred(draw, 40, "only", 9, 0, SIZE)
    return public
