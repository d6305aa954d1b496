"""State to picture: one 128x64 frame from the engine's view; each game draws its own body, in
the ui module named for it in games/registry.py's `GAMES`."""
from __future__ import annotations

from importlib import import_module
from typing import Any

from PIL import Image

from .. import __version__
from . import canvas
from ..core.menu import CARD_LINES, confirm_lines
from ..games import registry
from .canvas import banner, centred, left, new_frame, top_banner


def render(view: Any, links: tuple[str, ...] = ()) -> Image.Image:
    """`view` is the engine (rules, players, game, table, menu, notice, ...); `links` what the
    QR screens carry, as the hub makes them (`Hub.links`: the board's and the host's URLs, the
    address by name and by IP, the hotspot's name and password), none of it game state."""
    image, draw = new_frame()
    seconds = view.power_off_in()
    if seconds is not None:                 # MENU held: over everything, until it is let go
        draw_power_off(draw, seconds)
        return image
    if view.testing:
        draw_button_test(draw, view)
        return image
    if view.menu is not None and view.menu.qr == "about":
        draw_about(draw, links)
        return image
    if view.menu is not None and view.menu.qr:
        from .qr import draw as draw_qr   # deferred: the QR encoder's imports cost every start
        draw_qr(draw, links, view.menu.qr)
        return image
    if view.menu is not None:
        draw_menu(draw, view.menu)
        return image
    screen = import_module(f"{__package__}.{registry.GAMES[view.rules.name]}")
    screen.draw(draw, view)
    if view.notice:
        banner(draw, view.notice)
    elif view.rules.is_over(view.game):
        top_banner(draw, "YES: play again")      # over the result's title, never its content
    return image


def draw_about(draw: Any, links: tuple[str, ...]) -> None:
    """MENU > About: the software's version and where a phone or the TV reaches the box (by IP
    when known, else by name; none without the big screen's hub)."""
    by_name, by_ip = (links[2], links[3]) if len(links) >= 4 else ("", "")
    centred(draw, 0, "ABOUT", 10)
    draw.line((0, 11, 127, 11), fill=1)
    centred(draw, 14, f"pi-companion {__version__}", 11)
    for i, line in enumerate(addr.removeprefix("http://").rstrip("/") for addr in (by_ip, by_name) if addr):
        centred(draw, 29 + i * 11, line, 9)
    if not (by_ip or by_name):
        centred(draw, 29, "big screen off", 9)
    centred(draw, 53, "NO: back", 9)


def draw_power_off(draw: Any, seconds: int) -> None:
    """MENU is held: the box powers off in `seconds` unless it is let go."""
    centred(draw, 2, "Powering off in", 12)
    centred(draw, 18, str(seconds), 30)
    centred(draw, 52, "let go of MENU: cancel", 9)


def draw_button_test(draw: Any, view: Any) -> None:
    """Every input shown as it happens: held buttons, encoder count, hall levels and steps."""
    centred(draw, 0, "BUTTON TEST", 10)
    held = view.held()
    centred(draw, 12, " ".join(held) if held else "press any", 17)
    players = [b for b in held if b.startswith("P")]
    if players and int(players[-1][1:]) <= len(view.tunes):
        centred(draw, 29, f"{players[-1]} tune: {view.tunes[int(players[-1][1:]) - 1]}", 9)
    hall = view.hall
    centred(draw, 40, f"enc {view.menu.dial:+d}  A{hall.a} B{hall.b}  steps {hall.net:+d}", 10)
    centred(draw, 52, "hold YES or NO: exit", 9)


def draw_menu(draw: Any, menu: Any) -> None:
    if menu.card:
        more = len(menu.card) > CARD_LINES
        title = f"{menu.card_title} {menu.top + 1}-{min(menu.top + CARD_LINES, len(menu.card))}/" \
                f"{len(menu.card)}" if more else menu.card_title
        centred(draw, 0, title, 10)
        draw.line((0, 11, 127, 11), fill=1)
        for i, line in enumerate(menu.card[menu.top:menu.top + CARD_LINES]):
            left(draw, 1, 13 + i * 10, line, 9)
        return
    if menu.confirm:
        question, how = confirm_lines(menu)
        centred(draw, 4, question, 14)
        centred(draw, 26, how, 11)
        centred(draw, 42, "NO: back", 11)
        return
    centred(draw, 0, menu.title, 10)
    draw.line((0, 12, 127, 12), fill=1)
    first = max(0, min(menu.cursor - 2, len(menu.items) - 4))
    for row, (key, label) in enumerate(menu.items[first:first + 4]):
        y = 14 + row * 12
        selected = first + row == menu.cursor
        if selected:
            draw.rectangle((0, y - 1, 127, y + 10), fill=1)
            l, top, _, _ = canvas.bbox(label, 10)
            canvas.write(draw, (4 - l, y - top), label, 10, fill=0)
        else:
            left(draw, 4, y, label, 10)
        if key in menu.disabled:
            grey(draw, y - 1, y + 10, 0 if selected else 1)


def grey(draw: Any, y0: int, y1: int, ink: int) -> None:
    """A disabled menu entry: every other pixel of its row knocked out (greyed on one bit)."""
    for y in range(y0, y1 + 1):
        for x in range((y % 2), 128, 2):
            draw.point((x, y), fill=1 - ink)


def message_frame(text: str) -> Image.Image:
    image, draw = new_frame()
    centred(draw, 22, text, 16)
    return image


def farewell() -> Image.Image:
    return message_frame("powered off")
