"""The driver board and the box's inside: their tables and pictures, from wiring.plan().

board.svg draws the driver board (J1 from the Pi on the left, the rails, a driver per lamp,
J2 out to the panel on the right), inside.svg the box seen from above with the panel off: the
panel's parts (panel.layout), the Pi and the driver board on the base and the depth the box
needs. Both, and the README's hole and per-button tables, come from the same wiring plan, so
a hole number a maker reads in a table is the one in the picture.

Pure: the caller passes the choices, the pin map and the panel layout in.
"""
from __future__ import annotations

import math
from typing import Mapping
from xml.sax.saxutils import escape

import circuits
import panel
import wiring
from pi_companion.hw.pinmap import HEADER_PIN

FONT = 'font-family="DejaVu Sans, Helvetica, Arial, sans-serif"'
INK = {"red": "#d0021b", "orange": "#f5a623", "black": "#222", "yellow": "#e6c200", "green": "#3a9d23",
       "blue": "#1f6fd1", "white": "#999"}

# What stands on the base (millimetres): footprint seen from above and height above the base.
# Pi 3/4/5: 85 x 56 board; Zero 2 W: 65 x 30. On 11 mm standoffs, with a Dupont plug standing on
# its header (8.5 mm pins + a 14 mm housing) as the tallest part.
BASE_ITEMS = {"pi": {"pi3b+": (85, 56), "pi4": (85, 56), "pi5": (85, 56), "zero2w": (65, 30)},
              "board": {"*": (70, 90)}}
HEIGHT = {"pi": 11 + 1.6 + 22.5, "board": 11 + 1.6 + 22.5}
# How deep each panel part reaches below the panel (mm): a button with its microswitch, the
# KY-040 module with its pins and plugs, the OLED module with its plugs.
BELOW = {"button": circuits.MECHANICS["button_below"], "ENC": 30.0, "OLED": 25.0}


def _text(x, y, text, size=12, anchor="start", weight="normal", fill="#000"):
    bold = ' font-weight="bold"' if weight == "bold" else ""
    return (f'<text x="{x:g}" y="{y:g}" font-size="{size}" text-anchor="{anchor}" fill="{fill}"{bold}>'
            f'{escape(text)}</text>')


def _header(pin: int) -> str:
    gpio = {h: g for g, h in HEADER_PIN.items()}.get(pin)
    return f"{pin} (GPIO{gpio})" if gpio is not None else str(pin)


# --- the tables ----------------------------------------------------------------------------

def holes_markdown(options: Mapping[str, object], pins: Mapping[str, int]) -> str:
    plugs, holes = wiring.plan(options, pins)
    out = ["**J1**: a male pin strip; each pin takes one jumper from the Pi's header.", "",
           "| J1 | From header pin | Carries |", "|---|---|---|"]
    on_j1 = [p for p in plugs if p.to.startswith("driver board J1.")]
    for plug in sorted(on_j1, key=lambda p: wiring.J1_ORDER.index(p.signal)):
        out.append(f"| {plug.to.split()[2]} | {_header(plug.pin)} | {plug.signal} |")
    out += ["", "**J2**: where the wires leave the board (J2.28 to J2.31 are pins for jumpers, the "
            "rest solder holes).", "", "| J2 | Net on the board | Goes to | Wire colour |", "|---|---|---|---|"]
    out += [f"| {h.name} | {h.net} | {h.to} | {h.colour} |" for h in holes]
    direct = [p for p in plugs if not p.to.startswith("driver board")]
    out += ["", "Straight from the header to a module, not through the board: "
            + "; ".join(f"pin {_header(p.pin)} to {p.to}" for p in direct) + "."]
    return "\n".join(out)


def buttons_markdown(options: Mapping[str, object], pins: Mapping[str, int]) -> str:
    plugs, holes = wiring.plan(options, pins)
    hole = {h.key: h for h in holes}
    feed = {p.signal: p.pin for p in plugs}
    names = [n for n in (*(f"P{i}" for i in range(1, 9)), "YES", "NO", "MENU") if n in pins]
    out = ["| Button | Tab | Wire colour | Board hole | Header pin | Check it as you wire it |",
           "|---|---|---|---|---|---|"]
    for name in names:
        gpio = pins[name]
        out.append(f"| {name} | NO | {hole[name].colour} | {hole[name].name} | {_header(HEADER_PIN[gpio])} "
                   f"| `pinctrl get {gpio}`: `hi`, and `lo` while pressed |")
        out.append(f"| {name} | COM | {hole['COM'].colour} | {hole['COM'].name} (chained) "
                   f"| {feed['GND']} (GND rail) | |")
        lamp = f"LED{name[1:]}" if name.startswith("P") else ""
        if lamp in pins:
            led = pins[lamp]
            out.append(f"| {name} | lamp + | {hole['LAMP+'].colour} | {hole['LAMP+'].name} (chained) "
                       f"| {feed['5V']} (5V rail) | |")
            out.append(f"| {name} | lamp − | {hole[f'LAMP-{name[1:]}'].colour} | {hole[f'LAMP-{name[1:]}'].name} "
                       f"| {_header(HEADER_PIN[led])} drives it | `pinctrl set {led} op dh` lights it, "
                       f"`pinctrl set {led} op dl` puts it out |")
    return "\n".join(out)


# --- the box's depth -----------------------------------------------------------------------

def base_items(options: Mapping[str, object], layout: Mapping) -> list[tuple[str, float, float, float, float]]:
    """(name, left, top, right, bottom) in panel coordinates of what stands on the base."""
    inside = layout.get("inside", {})
    out = []
    for name, sizes in BASE_ITEMS.items():
        w, h = sizes.get(str(options["pi"]), sizes.get("*", (0, 0))) if name == "pi" else sizes["*"]
        x, y = inside.get(name, [0, 0])
        out.append((name, x - w / 2, y - h / 2, x + w / 2, y + h / 2))
    return out


def _hits(part: panel.Part, box: tuple[float, float, float, float]) -> bool:
    left, top, right, bottom = box
    pl, pt, pr, pb = panel.keepout_box(part)
    return pl < right and left < pr and pt < bottom and top < pb


def depth(options: Mapping[str, object], layout: Mapping) -> tuple[float, dict[str, str]]:
    """The box's smallest inside depth in whole mm (from the panel's underside to the base)
    and, per base item, the panel parts above it that
    set it: every part whose keep-out lies over the item's footprint (the deepest counts)."""
    _, _, _, parts = panel.layout(layout, options)
    m = circuits.MECHANICS
    need = m["button_below"] + m["clearance"]
    over: dict[str, str] = {}
    for name, *box in base_items(options, layout):
        above = [(BELOW.get(p.name, BELOW["button"]), p.name) for p in parts if _hits(p, tuple(box))]
        deepest = max((d for d, _ in above), default=0.0)
        over[name] = ", ".join(sorted(who for _, who in above)) or "nothing"
        need = max(need, deepest + m["clearance"] + HEIGHT[name])
    return float(math.ceil(need)), over


# --- board.svg -----------------------------------------------------------------------------

def board_svg(options: Mapping[str, object], pins: Mapping[str, int]) -> str:
    plugs, holes = wiring.plan(options, pins)
    top, step, j1x, j2x = 120, 20, 175, 720
    rails = {"5V": 280, "3V3": 330, "GND": 380}
    rows = max(len(wiring.J1_ORDER), len(wiring.J2_ORDER))
    width, height = 1120, top + rows * step + 70

    def y(n: int) -> float:
        return top + (n - 1) * step

    def y2(n: int) -> float:
        # J2's rows sit half a row below J1's, so that a line from a rail to J2 never looks
        # like the continuation of a J1 line that ends on another rail.
        return y(n) + step / 2

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" {FONT}>', f'<rect width="{width}" height="{height}" fill="#fff"/>',
           _text(width / 2, 32, "The driver board: J1 from the Pi, the rails, J2 out to the panel", 19, "middle", "bold"),
           _text(width / 2, 54, f"{options['players']} players, piezo {options['piezo']}, hall sensors on "
                 f"{'the Pi' if options['hall'] == 'gpio' else 'the wind puck'}. Generated from wiring.py; "
                 "empty places are for players 5 to 8.", 12, "middle"),
           f'<rect x="{j1x - 30}" y="{top - 40}" width="{j2x - j1x + 60}" height="{rows * step + 50}" rx="8" '
           'fill="#eef5e9" stroke="#6a8f5a"/>']
    for name, x in rails.items():
        colour = INK[wiring.COLOURS[name]]
        out.append(f'<line x1="{x}" y1="{top - 20}" x2="{x}" y2="{top + (rows - 1) * step + 6}" stroke="{colour}" '
                   'stroke-width="5"/>')
        out.append(_text(x, top - 26, name, 12, "middle", "bold", colour))
    j1 = {plug.signal: plug for plug in plugs if plug.to.startswith("driver board J1.")}
    for n, name in enumerate(wiring.J1_ORDER, 1):
        plug = j1.get(name)
        fill = "#333" if plug else "#ccc"
        out.append(f'<rect x="{j1x - 6}" y="{y(n) - 6}" width="12" height="12" fill="{fill}"/>')
        out.append(_text(j1x - 12, y(n) + 4, f"J1.{n}", 11, "end"))
        if plug:
            out.append(_text(20, y(n) + 4, f"pin {_header(plug.pin)}", 11, "start", fill="#555"))
            out.append(_text(j1x + 12, y(n) + 4, name, 11, "start", "bold"))
            if name in rails:
                out.append(_wire([(j1x + 50, y(n)), (rails[name], y(n))], INK[wiring.COLOURS[name]], 3))
                out.append(f'<circle cx="{rails[name]}" cy="{y(n)}" r="5" fill="{INK[wiring.COLOURS[name]]}"/>')
    by_key = {h.key: h for h in holes}
    for n, key in enumerate(wiring.J2_ORDER, 1):
        hole = by_key.get(key)
        out.append(f'<circle cx="{j2x}" cy="{y2(n)}" r="5" fill="{"#333" if hole else "#ccc"}"/>')
        out.append(_text(j2x + 12, y2(n) + 4, f"J2.{n}", 11, "start", "bold" if hole else "normal"))
        if not hole:
            continue
        out.append(_text(j2x + 58, y2(n) + 4, f"{hole.to} ({hole.colour})", 11))
        colour = INK[hole.colour]
        if hole.rail:
            out.append(_wire([(rails[hole.rail], y2(n)), (j2x - 6, y2(n))], colour, 2))
            out.append(f'<circle cx="{rails[hole.rail]}" cy="{y2(n)}" r="4" fill="{colour}"/>')
            continue
        source = _source(key)
        if source in j1:
            sy = y(wiring.J1_ORDER.index(source) + 1)
            out.append(_wire([(j1x + 60, sy), (420, sy), (440, y2(n)), (j2x - 6, y2(n))], colour, 2))
            out.append(_part_label(key, options, 570, y2(n)))
    out.append(_text(20, height - 24, "J1: pins for the jumpers from the Pi. J2: solder holes (J2.28 to J2.31: "
                     "pins). A dot on a rail: that line is soldered to it.", 11))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _source(key: str) -> str:
    if key.startswith("LAMP-"):
        return f"LED{key[5:]}"
    return {"PIEZO+": "PIEZO", "PIEZO-": "PIEZO"}.get(key, key)


def _part_label(key: str, options: Mapping[str, object], x: float, y: float) -> str:
    if key.startswith("LAMP-"):
        words = "1 kΩ, NPN (E to GND, C out), 10 kΩ"
    elif key == "PIEZO+":
        words = "470 Ω in series"
    elif key == "PIEZO-":
        words = "1 kΩ, NPN, 10 kΩ; 1 kΩ + 1N4148 across"
    elif key.startswith("HALL_"):
        words = "10 kΩ up to the 3V3 rail"
    else:
        return ""
    return (f'<rect x="{x - 100}" y="{y - 8}" width="200" height="15" rx="3" fill="#fff" stroke="#999"/>'
            + _text(x, y + 4, words, 9.5, "middle"))


def _wire(points, colour, width=2):
    d = " ".join(f"{'M' if i == 0 else 'L'} {x:g} {y:g}" for i, (x, y) in enumerate(points))
    return f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="{width}" stroke-linejoin="round"/>'


# --- inside.svg ----------------------------------------------------------------------------

def inside_svg(options: Mapping[str, object], layout: Mapping, pins: Mapping[str, int]) -> str:
    width, height, _, parts = panel.layout(layout, options)
    scale, margin = 3.0, 40
    need, over = depth(options, layout)
    wall = float(layout.get("inside", {}).get("wall", 9))
    size_w, size_h = width * scale + 2 * margin + 260, height * scale + 2 * margin + 90

    def px(x: float, y: float) -> tuple[float, float]:
        return margin + (x + width / 2) * scale, 80 + margin + (y + height / 2) * scale

    x0, y0 = px(-width / 2, -height / 2)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size_w:g}" height="{size_h:g}" '
           f'viewBox="0 0 {size_w:g} {size_h:g}" {FONT}>', f'<rect width="{size_w:g}" height="{size_h:g}" fill="#fff"/>',
           _text(size_w / 2, 32, "Inside the box, seen from above with the panel lifted off", 19, "middle", "bold"),
           _text(size_w / 2, 54, f"Dashed: what hangs under the panel. Filled: what stands on the base. "
                 f"Inside depth at least {need:.0f} mm.", 12, "middle"),
           f'<rect x="{x0:g}" y="{y0:g}" width="{width * scale:g}" height="{height * scale:g}" fill="#c8a46e"/>',
           f'<rect x="{x0 + wall * scale:g}" y="{y0 + wall * scale:g}" width="{(width - 2 * wall) * scale:g}" '
           f'height="{(height - 2 * wall) * scale:g}" fill="#f4ead8"/>']
    _, holes = wiring.plan(options, pins)
    board = {name: box for name, *box in base_items(options, layout)}
    for name, left, top, right, bottom in base_items(options, layout):
        (ax, ay), (bx, by) = px(left, top), px(right, bottom)
        fill = "#2e7d32" if name == "pi" else "#6a8f5a"
        label = {"pi": f"Raspberry Pi ({options['pi']})", "board": "driver board"}[name]
        out.append(f'<rect x="{ax:g}" y="{ay:g}" width="{bx - ax:g}" height="{by - ay:g}" rx="4" fill="{fill}" '
                   'fill-opacity="0.85"/>')
        out.append(_text((ax + bx) / 2, (ay + by) / 2, label, 12, "middle", "bold", "#fff"))
        out.append(_text((ax + bx) / 2, (ay + by) / 2 + 16, f"under {over[name]}", 10, "middle", fill="#fff"))
    left, top, right, bottom = board["board"]
    start = px((left + right) / 2, (top + bottom) / 2)
    for part in parts:
        cx, cy = px(part.x, part.y)
        if part.keepout_d:
            out.append(f'<circle cx="{cx:g}" cy="{cy:g}" r="{part.keepout_d / 2 * scale:g}" fill="none" '
                       'stroke="#555" stroke-dasharray="6 4" stroke-width="1.5"/>')
        else:
            w, h = part.keepout_wh
            out.append(f'<rect x="{cx - w / 2 * scale:g}" y="{cy - h / 2 * scale:g}" width="{w * scale:g}" '
                       f'height="{h * scale:g}" fill="none" stroke="#555" stroke-dasharray="6 4" stroke-width="1.5"/>')
        out.append(_text(cx, cy + 4, part.name, 12, "middle", "bold", "#333"))
        if part.name in pins or part.name in {"YES", "NO", "MENU"}:
            out.append(_wire([start, (cx, cy)], INK["yellow"], 1.5))
    out.append(_text(x0 + width * scale + 20, y0 + 14, "Depth, from the data:", 12, "start", "bold"))
    m = circuits.MECHANICS
    facts = [f"button below the panel {m['button_below']:g} mm",
             f"clearance {m['clearance']:g} mm", f"Pi / board with plugs {HEIGHT['pi']:g} mm",
             f"= at least {need:.0f} mm from the panel's", "underside to the base", "", "Yellow: a button's NO wire", "from the board's J2."]
    for i, fact in enumerate(facts):
        out.append(_text(x0 + width * scale + 20, y0 + 36 + 18 * i, fact, 12))
    out.append("</svg>")
    return "\n".join(out) + "\n"
