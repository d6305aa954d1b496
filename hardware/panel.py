"""The top panel's 1:1 drilling template, as SVG and as PDF, from panel.toml and build.toml.

One drawing (a list of shapes in millimetres, origin at the sheet's top-left corner, y down)
goes to two writers: svg() (width/height in mm, viewBox in mm) and pdf() (a hand-written
PDF 1.4 page: one uncompressed content stream of vector paths, scaled by 72/25.4 so one
unit is one millimetre, and the standard Helvetica font, which every PDF reader has). No
dependency: a PDF of lines, Bezier circles and text is a few hundred bytes of syntax.

Pure: the caller reads the files and passes their contents in.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping
from xml.sax.saxutils import escape

PAPERS = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
PAPER_NAMES = {"a4": "A4", "letter": "US Letter"}
MARGIN = 8.0
TITLE_H = 10.0                      # the title lines above the panel
SCALE_H = 58.0                      # the scale check below the panel
CARD = (85.60, 53.98, 3.18)         # ISO/IEC 7810 ID-1: a bank card, its corner radius
BAR = 100.0                         # the scale bar's length
MM = 72 / 25.4                      # PDF points per millimetre


class LayoutError(ValueError):
    """panel.toml describes a panel that cannot be drilled (one line, naming the part)."""


# --- shapes ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Circle:
    cx: float
    cy: float
    r: float
    kind: str             # hole | keepout | pilot
    name: str = ""


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    kind: str             # outline | window | keepout | card
    name: str = ""
    rx: float = 0.0


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    kind: str             # cross | bar | tick
    name: str = ""


@dataclass(frozen=True)
class Text:
    x: float
    y: float
    size: float           # mm (cap height is about 0.72 of it)
    text: str
    anchor: str = "middle"   # start | middle | end
    bold: bool = False


STYLE = {  # kind: (stroke colour as r g b 0..1, line width mm, dashed, fill)
    "outline": ((0, 0, 0), 0.35, False),
    "hole": ((0, 0, 0), 0.35, False),
    "window": ((0, 0, 0), 0.35, False),
    "pilot": ((0, 0, 0), 0.2, False),
    "keepout": ((0.55, 0.55, 0.55), 0.2, True),
    "cross": ((0, 0, 0), 0.15, False),
    "card": ((0.1, 0.3, 0.7), 0.3, False),
    "bar": ((0, 0, 0), 0.5, False),
    "tick": ((0, 0, 0), 0.3, False),
}


# --- the layout ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Part:
    """One thing on the panel, centred at (x, y) in panel coordinates (origin at its centre)."""

    name: str
    label: str
    x: float
    y: float
    hole: float = 0.0                     # round hole's diameter (0: none)
    keepout_d: float = 0.0                # round keep-out's diameter
    keepout_wh: tuple[float, float] = (0.0, 0.0)   # rectangular keep-out (the OLED board)
    window: tuple[float, float, float, float] = (0, 0, 0, 0)   # (dx, dy, w, h) of a cut-out
    screws: tuple[tuple[float, float], ...] = ()                # (dx, dy) of screw holes
    screw_d: float = 0.0


def _pair(value, where: str) -> tuple[float, float]:
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
        raise LayoutError(f"panel.toml: {where} must be [x, y] in mm, not {value!r}")
    return float(value[0]), float(value[1])


def _number(table: Mapping, key: str, where: str) -> float:
    value = table.get(key) if isinstance(table, Mapping) else None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise LayoutError(f"panel.toml: {where}.{key} must be a positive number of mm, not {value!r}")
    return float(value)


def _table(data: Mapping, key: str, where: str = "") -> Mapping:
    value = data.get(key)
    if not isinstance(value, Mapping):
        raise LayoutError(f"panel.toml: [{where}{key}] is missing")
    return value


def layout(panel: Mapping, options: Mapping) -> tuple[float, float, float, list[Part]]:
    """(width, height, corner radius, parts) of the panel; LayoutError if it cannot be drilled."""
    size = _table(panel, "panel")
    width, height = _number(size, "width", "panel"), _number(size, "height", "panel")
    corner = float(size.get("corner_radius", 0))
    edge = _number(size, "edge", "panel")
    button = _table(_table(panel, "button"), str(options["button_mm"]), "button.")
    hole, keep = _number(button, "hole", f"button.{options['button_mm']}"), _number(
        button, "keepout", f"button.{options['button_mm']}")
    players = _table(panel, "players").get(str(options["players"]))
    if not isinstance(players, list) or len(players) != options["players"]:
        raise LayoutError(f"panel.toml: [players] {options['players']} must list "
                          f"{options['players']} [x, y] positions")
    parts = [Part(f"P{i}", f"P{i}", *_pair(xy, f"players.{options['players']}[{i - 1}]"),
                  hole=hole, keepout_d=keep) for i, xy in enumerate(players, 1)]
    host = _table(panel, "host")
    for name in ("YES", "NO", "MENU"):
        parts.append(Part(name, name, *_pair(host.get(name), f"host.{name}"), hole=hole, keepout_d=keep))
    encoder = _table(panel, "encoder")
    parts.append(Part("ENC", "encoder", *_pair(encoder.get("at"), "encoder.at"),
                      hole=_number(encoder, "hole", "encoder"), keepout_d=_number(encoder, "keepout", "encoder")))
    oled = _table(panel, "oled")
    module = _table(oled, str(options["display"]), "oled.")
    where = f"oled.{options['display']}"
    board = _pair(module.get("board"), f"{where}.board")
    window = _pair(module.get("window"), f"{where}.window")
    offset = _pair(module.get("window_offset", [0, 0]), f"{where}.window_offset")
    holes = _pair(module.get("holes"), f"{where}.holes")
    hx, hy = holes[0] / 2, holes[1] / 2
    parts.append(Part("OLED", f"OLED ({options['display'].upper()})", *_pair(oled.get("at"), "oled.at"),
                      keepout_wh=board, window=(offset[0], offset[1], *window),
                      screws=((-hx, -hy), (hx, -hy), (-hx, hy), (hx, hy)),
                      screw_d=_number(module, "hole", where)))
    check_layout(width, height, edge, parts, _number(size, "spacing", "panel"))
    return width, height, corner, parts


def keepout_box(part: Part) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) of a part's keep-out."""
    if part.keepout_d:
        r = part.keepout_d / 2
        return part.x - r, part.y - r, part.x + r, part.y + r
    w, h = part.keepout_wh
    return part.x - w / 2, part.y - h / 2, part.x + w / 2, part.y + h / 2


def gap(a: Part, b: Part) -> float:
    """The smallest distance between two parts' keep-outs in mm (negative: they overlap)."""
    if a.keepout_d and b.keepout_d:
        return math.dist((a.x, a.y), (b.x, b.y)) - (a.keepout_d + b.keepout_d) / 2
    circle, box = (a, b) if a.keepout_d else (b, a)
    left, top, right, bottom = keepout_box(box)
    if not circle.keepout_d:
        l2, t2, r2, b2 = keepout_box(circle)
        dx, dy = max(l2 - right, left - r2), max(t2 - bottom, top - b2)
        return max(dx, dy) if dx < 0 or dy < 0 else math.hypot(dx, dy)
    # A circle against a rectangle: the rectangle's nearest point to the circle's centre.
    nx, ny = min(max(circle.x, left), right), min(max(circle.y, top), bottom)
    inside = left < circle.x < right and top < circle.y < bottom
    return (-1.0 if inside else math.dist((nx, ny), (circle.x, circle.y))) - circle.keepout_d / 2


def overlap(a: Part, b: Part) -> bool:
    return gap(a, b) < 0


def check_layout(width: float, height: float, edge: float, parts: list[Part], spacing: float = 0.0) -> None:
    for part in parts:
        left, top, right, bottom = keepout_box(part)
        if left < -width / 2 + edge or right > width / 2 - edge or top < -height / 2 + edge \
                or bottom > height / 2 - edge:
            raise LayoutError(f"panel.toml: {part.name} at ({part.x:g}, {part.y:g}) comes closer than "
                              f"{edge:g} mm to the panel's edge")
    for i, a in enumerate(parts):
        for b in parts[i + 1:]:
            between = gap(a, b)
            if between < 0:
                raise LayoutError(f"panel.toml: {a.name} at ({a.x:g}, {a.y:g}) and {b.name} at "
                                  f"({b.x:g}, {b.y:g}) overlap")
            if between < spacing:
                raise LayoutError(f"panel.toml: {a.name} at ({a.x:g}, {a.y:g}) and {b.name} at "
                                  f"({b.x:g}, {b.y:g}) are {between:.1f} mm apart; keep at least "
                                  f"{spacing:g} mm (spacing)")


# --- the drawing ---------------------------------------------------------------------------

def drawing(panel: Mapping, options: Mapping, paper: str) -> tuple[tuple[float, float], list]:
    """(page size in mm, shapes) of the template on one paper size."""
    page_w, page_h = PAPERS[paper]
    width, height, corner, parts = layout(panel, options)
    if width > page_w - 2 * MARGIN or height + TITLE_H + SCALE_H > page_h - 2 * MARGIN:
        raise LayoutError(f"panel.toml: a {width:g} x {height:g} mm panel does not fit on "
                          f"{PAPER_NAMES[paper]} with the scale check; at most "
                          f"{page_w - 2 * MARGIN:g} x {page_h - 2 * MARGIN - TITLE_H - SCALE_H:g} mm")
    ox, oy = page_w / 2, MARGIN + TITLE_H + height / 2        # the panel's centre on the page
    shapes: list = [
        Text(page_w / 2, MARGIN + 3.5, 4.2, f"pi-companion top panel: drilling template, 1:1, "
             f"{PAPER_NAMES[paper]}", bold=True),
        Text(page_w / 2, MARGIN + 8, 2.8, f"{options['players']} players, {options['button_mm']} mm buttons, "
             f"{options['display'].upper()} OLED. Seen from above; the bottom edge is the host's side."),
        Rect(ox - width / 2, oy - height / 2, width, height, "outline", "panel", corner),
    ]
    for part in parts:
        x, y = ox + part.x, oy + part.y
        if part.keepout_d:
            shapes.append(Circle(x, y, part.keepout_d / 2, "keepout", part.name))
        else:
            w, h = part.keepout_wh
            shapes.append(Rect(x - w / 2, y - h / 2, w, h, "keepout", part.name))
        if part.hole:
            shapes += cross(x, y, 4 if part.hole > 10 else 2.5)
            shapes.append(Circle(x, y, part.hole / 2, "hole", part.name))
            shapes.append(Circle(x, y, 1.5, "pilot", part.name))
        if part.hole > 10:
            shapes.append(Text(x, y - part.hole / 4 + 1.2, 3.6, part.label, bold=True))
            shapes.append(Text(x, y + part.hole / 4 + 1.0, 2.8, f"Ø{part.hole:g}"))
        elif part.hole:
            shapes.append(Text(x, y + part.keepout_d / 2 - 2.5, 2.8, f"{part.label} Ø{part.hole:g}"))
        if part.window[2]:
            dx, dy, w, h = part.window
            shapes.append(Rect(x + dx - w / 2, y + dy - h / 2, w, h, "window", part.name))
            shapes += cross(x + dx, y + dy, 2.0)
            bw, bh = part.keepout_wh
            shapes.append(Text(x, y - bh / 2 - 1.5, 3.2, part.label, bold=True))
            shapes.append(Text(x + dx, y + dy + h / 2 - 2.0, 2.4, f"cut out {w:g} x {h:g}"))
            for sx, sy in part.screws:
                shapes.append(Circle(x + sx, y + sy, part.screw_d / 2, "hole", f"{part.name} screw"))
                shapes += cross(x + sx, y + sy, 1.8)
            shapes.append(Text(x, y + bh / 2 + 3.2, 2.4, f"screws Ø{part.screw_d:g}, "
                               f"{part.screws[1][0] * 2:g} x {part.screws[2][1] * 2:g} apart"))
    shapes += scale_check(page_w, MARGIN + TITLE_H + height + 6)
    return (page_w, page_h), shapes


def cross(x: float, y: float, arm: float) -> list[Line]:
    return [Line(x - arm, y, x + arm, y, "cross"), Line(x, y - arm, x, y + arm, "cross")]


def scale_check(page_w: float, top: float) -> list:
    left = MARGIN + 2
    shapes: list = [
        Text(left, top + 3, 3.2, "Check the scale before drilling:", anchor="start", bold=True),
        Text(left, top + 7.5, 2.8, "print at 100 % (\"actual size\", not \"fit to page\").", anchor="start"),
        Text(left, top + 11.5, 2.8, "The bar must measure 100 mm and a bank card", anchor="start"),
        Text(left, top + 15.5, 2.8, "must cover the blue box exactly.", anchor="start"),
    ]
    y = top + 26
    shapes.append(Line(left, y, left + BAR, y, "bar", "100 mm"))
    for i in range(11):
        tall = 3.0 if i % 5 == 0 else 1.8
        shapes.append(Line(left + 10 * i, y - tall, left + 10 * i, y, "tick"))
        if i % 5 == 0:
            shapes.append(Text(left + 10 * i, y + 4, 2.6, f"{10 * i}"))
    shapes.append(Text(left + BAR / 2, y + 9, 2.8, "100 mm"))
    # A 50 mm bar downwards too: a printer can stretch one direction only.
    vx = left + BAR + 4
    shapes.append(Line(vx, top + 1, vx, top + 51, "bar", "50 mm"))
    for i in range(6):
        shapes.append(Line(vx - (3.0 if i % 5 == 0 else 1.8), top + 1 + 10 * i, vx, top + 1 + 10 * i, "tick"))
    shapes.append(Text(vx - 4, top + 47, 2.6, "50 mm", anchor="end"))
    cw, ch, cr = CARD
    cx = page_w - MARGIN - cw
    shapes.append(Rect(cx, top + 1, cw, ch, "card", "bank card", cr))
    shapes.append(Text(cx + cw / 2, top + 1 + ch / 2 - 1, 3.0, "bank card", bold=True))
    shapes.append(Text(cx + cw / 2, top + 1 + ch / 2 + 3.5, 2.6, f"{cw:.2f} x {ch:.2f} mm"))
    return shapes


# --- SVG -----------------------------------------------------------------------------------

def _n(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".")


def _rgb(colour) -> str:
    return "#" + "".join(f"{round(c * 255):02x}" for c in colour)


def svg(page: tuple[float, float], shapes: list) -> str:
    w, h = page
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(w)}mm" height="{_n(h)}mm" '
           f'viewBox="0 0 {_n(w)} {_n(h)}" font-family="Helvetica, Arial, DejaVu Sans, sans-serif">',
           f'<rect width="{_n(w)}" height="{_n(h)}" fill="#fff"/>']
    for shape in shapes:
        out.append(_svg_shape(shape))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _stroke(kind: str) -> str:
    colour, width, dashed = STYLE[kind]
    dash = ' stroke-dasharray="1.5 1"' if dashed else ""
    return f'fill="none" stroke="{_rgb(colour)}" stroke-width="{_n(width)}"{dash}'


def _svg_shape(shape) -> str:
    name = f' data-name="{escape(shape.name)}"' if getattr(shape, "name", "") else ""
    if isinstance(shape, Circle):
        return (f'<circle class="{shape.kind}"{name} cx="{_n(shape.cx)}" cy="{_n(shape.cy)}" '
                f'r="{_n(shape.r)}" {_stroke(shape.kind)}/>')
    if isinstance(shape, Rect):
        rx = f' rx="{_n(shape.rx)}"' if shape.rx else ""
        return (f'<rect class="{shape.kind}"{name} x="{_n(shape.x)}" y="{_n(shape.y)}" width="{_n(shape.w)}" '
                f'height="{_n(shape.h)}"{rx} {_stroke(shape.kind)}/>')
    if isinstance(shape, Line):
        return (f'<line class="{shape.kind}"{name} x1="{_n(shape.x1)}" y1="{_n(shape.y1)}" x2="{_n(shape.x2)}" '
                f'y2="{_n(shape.y2)}" {_stroke(shape.kind)}/>')
    weight = ' font-weight="bold"' if shape.bold else ""
    return (f'<text x="{_n(shape.x)}" y="{_n(shape.y)}" font-size="{_n(shape.size)}" '
            f'text-anchor="{shape.anchor}"{weight}>{escape(shape.text)}</text>')


# --- PDF -----------------------------------------------------------------------------------

# Helvetica's advance widths (1/1000 em, from its AFM) for centring text.
_WIDTHS = {**{c: 556 for c in "0123456789abdeghnopqu$#?_"}, " ": 278, ".": 278, ",": 278, ":": 278,
           ";": 278, "/": 278, "!": 278, "-": 333, "(": 333, ")": 333, "\"": 355, "'": 191, "%": 889,
           "=": 584, "+": 584, "×": 584, "Ø": 778, "c": 500, "k": 500, "s": 500, "v": 500, "x": 500,
           "y": 500, "z": 500, "f": 278, "t": 278, "i": 222, "j": 222, "l": 222, "r": 333, "m": 833,
           "w": 722, "A": 667, "B": 667, "C": 722, "D": 722, "E": 667, "F": 611, "G": 778, "H": 722,
           "I": 278, "J": 500, "K": 667, "L": 556, "M": 833, "N": 722, "O": 778, "P": 667, "Q": 778,
           "R": 722, "S": 667, "T": 611, "U": 722, "V": 667, "W": 944, "X": 667, "Y": 667, "Z": 611}
_BOLD_EXTRA = 1.06          # Helvetica-Bold is about this much wider on average


def text_width(text: str, size: float, bold: bool = False) -> float:
    em = sum(_WIDTHS.get(c, 556) for c in text) / 1000
    return em * size * (_BOLD_EXTRA if bold else 1)


KAPPA = 4 * (math.sqrt(2) - 1) / 3      # a quarter circle as one cubic Bezier


def _circle_path(cx: float, cy: float, r: float) -> str:
    k = KAPPA * r
    p = _n
    return (f"{p(cx + r)} {p(cy)} m "
            f"{p(cx + r)} {p(cy + k)} {p(cx + k)} {p(cy + r)} {p(cx)} {p(cy + r)} c "
            f"{p(cx - k)} {p(cy + r)} {p(cx - r)} {p(cy + k)} {p(cx - r)} {p(cy)} c "
            f"{p(cx - r)} {p(cy - k)} {p(cx - k)} {p(cy - r)} {p(cx)} {p(cy - r)} c "
            f"{p(cx + k)} {p(cy - r)} {p(cx + r)} {p(cy - k)} {p(cx + r)} {p(cy)} c h")


def _rounded_rect_path(x: float, y: float, w: float, h: float, r: float) -> str:
    if not r:
        return f"{_n(x)} {_n(y)} {_n(w)} {_n(h)} re"
    k = KAPPA * r
    p = _n
    return (f"{p(x + r)} {p(y)} m {p(x + w - r)} {p(y)} l "
            f"{p(x + w - r + k)} {p(y)} {p(x + w)} {p(y + r - k)} {p(x + w)} {p(y + r)} c "
            f"{p(x + w)} {p(y + h - r)} l "
            f"{p(x + w)} {p(y + h - r + k)} {p(x + w - r + k)} {p(y + h)} {p(x + w - r)} {p(y + h)} c "
            f"{p(x + r)} {p(y + h)} l "
            f"{p(x + r - k)} {p(y + h)} {p(x)} {p(y + h - r + k)} {p(x)} {p(y + h - r)} c "
            f"{p(x)} {p(y + r)} l "
            f"{p(x)} {p(y + r - k)} {p(x + r - k)} {p(y)} {p(x + r)} {p(y)} c h")


def _pdf_string(text: str) -> str:
    raw = text.encode("cp1252")
    return "(" + "".join(chr(b) if 32 <= b < 127 and chr(b) not in "()\\" else f"\\{b:03o}"
                         for b in raw) + ")"


def pdf(page: tuple[float, float], shapes: list, title: str) -> bytes:
    w, h = page
    # Millimetres, origin top-left, y down: the same coordinates as the SVG.
    ops = [f"{MM:.6f} 0 0 {-MM:.6f} 0 {h * MM:.4f} cm", "1 J 1 j"]
    for shape in shapes:
        if isinstance(shape, Text):
            font = "/F2" if shape.bold else "/F1"
            shift = {"start": 0, "middle": 0.5, "end": 1}[shape.anchor]
            x = shape.x - shift * text_width(shape.text, shape.size, shape.bold)
            ops.append(f"BT {font} {_n(shape.size)} Tf 1 0 0 -1 {_n(x)} {_n(shape.y)} Tm "
                       f"0 g {_pdf_string(shape.text)} Tj ET")
            continue
        colour, width, dashed = STYLE[shape.kind]
        ops.append(f"{' '.join(_n(c) for c in colour)} RG {_n(width)} w {'[1.5 1] 0 d' if dashed else '[] 0 d'}")
        if isinstance(shape, Circle):
            ops.append(_circle_path(shape.cx, shape.cy, shape.r) + " S")
        elif isinstance(shape, Rect):
            ops.append(_rounded_rect_path(shape.x, shape.y, shape.w, shape.h, shape.rx) + " S")
        else:
            ops.append(f"{_n(shape.x1)} {_n(shape.y1)} m {_n(shape.x2)} {_n(shape.y2)} l S")
    content = ("\n".join(ops) + "\n").encode("ascii")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w * MM:.3f} {h * MM:.3f}] "
         f"/Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> /Contents 4 0 R >>").encode(),
        b"<< /Length " + str(len(content)).encode() + b" >>\nstream\n" + content + b"endstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
        b"<< /Title " + _pdf_string(title).encode("latin-1") + b" /Producer (pi-companion hardware/panel.py) >>",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info {len(objects)} 0 R >>\n"
            f"startxref\n{xref}\n%%EOF\n").encode()
    return bytes(out)


def template(panel: Mapping, options: Mapping, paper: str) -> tuple[str, bytes]:
    """(SVG text, PDF bytes) of the template on one paper size."""
    page, shapes = drawing(panel, options, paper)
    title = f"pi-companion drilling template ({PAPER_NAMES[paper]}, 1:1)"
    return svg(page, shapes), pdf(page, shapes, title)
