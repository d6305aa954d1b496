"""puck.svg (the wind puck's wiring) and turntable.svg (magnet and sensor placement).

The Pico's pins come from the firmware itself (HALL_A_PIN / HALL_B_PIN in firmware/puck.py,
read with ast, never imported: it imports MicroPython's `machine`), the Pi's from the pin map,
the magnet's size and the sensors' spacing from circuits.TURNTABLE. The waveform under the
top view is computed from that geometry (levels()), and the tests feed the same levels to the
box's quadrature decoder.

Pure but for read_firmware_pins(), which reads the one file it is given.
"""
from __future__ import annotations

import ast
import math
from pathlib import Path
from xml.sax.saxutils import escape

# The Pico's 40 pins: physical pin -> name. Pins 1..20 run down the left edge (seen from
# above, USB at the top), 21..40 up the right edge.
PICO_PINS = {
    1: "GP0", 2: "GP1", 3: "GND", 4: "GP2", 5: "GP3", 6: "GP4", 7: "GP5", 8: "GND", 9: "GP6",
    10: "GP7", 11: "GP8", 12: "GP9", 13: "GND", 14: "GP10", 15: "GP11", 16: "GP12", 17: "GP13",
    18: "GND", 19: "GP14", 20: "GP15", 21: "GP16", 22: "GP17", 23: "GND", 24: "GP18", 25: "GP19",
    26: "GP20", 27: "GP21", 28: "GND", 29: "GP22", 30: "RUN", 31: "GP26", 32: "GP27", 33: "AGND",
    34: "GP28", 35: "ADC_VREF", 36: "3V3(OUT)", 37: "3V3_EN", 38: "GND", 39: "VSYS", 40: "VBUS",
}
PHYSICAL = {name: pin for pin, name in PICO_PINS.items()}
FIRMWARE_NAMES = ("HALL_A_PIN", "HALL_B_PIN")


class FirmwareError(ValueError):
    """firmware/puck.py's pin constants are missing or not Pico GPIO (one line)."""


def read_firmware_pins(path: Path) -> dict[str, int]:
    """{"A": gpio, "B": gpio} from the module-level constants of firmware/puck.py."""
    tree = ast.parse(path.read_text(), str(path))
    found: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id in FIRMWARE_NAMES:
                try:
                    found[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    found[node.targets[0].id] = ast.unparse(node.value)
    pins = {}
    for name in FIRMWARE_NAMES:
        value = found.get(name)
        if value is None:
            raise FirmwareError(f"{path.name}: no {name} = <GPIO number> at the top level")
        if type(value) is not int or f"GP{value}" not in PHYSICAL:
            raise FirmwareError(f"{path.name}: {name} = {value!r} is not a Pico GPIO (0..22, 26..28)")
        pins[name[5]] = value
    if pins["A"] == pins["B"]:
        raise FirmwareError(f"{path.name}: HALL_A_PIN and HALL_B_PIN are both GP{pins['A']}")
    return pins


# --- the geometry ------------------------------------------------------------------------------

def sensor_angles(turntable: dict, spacing: float) -> dict[str, float]:
    """Where the sensors sit: degrees clockwise from 12 o'clock, seen from above."""
    return {"A": 0.0, "B": spacing}


def levels(turntable: dict, spacing: float, angle: float) -> tuple[int, int]:
    """(A, B) with the magnet turned `angle` degrees clockwise: 1 = the sensor is under N.

    At angle 0 the N half covers the left half (from 6 through 9 to 12 o'clock), as drawn:
    A (at 12 o'clock) is on its edge and goes under N as soon as the table turns clockwise.
    With p pole pairs the pattern repeats every 360 / p degrees.
    """
    p = turntable["pole_pairs"]
    out = []
    for where in sensor_angles(turntable, spacing).values():
        electrical = ((where - angle) * p + 180) % 360
        out.append(1 if electrical < 180 else 0)
    return out[0], out[1]


# --- puck.svg ------------------------------------------------------------------------------

FONT = 'font-family="DejaVu Sans, Helvetica, Arial, sans-serif"'
HALL_COLOUR, V33, GND_COLOUR = "#17a2a2", "#f5a623", "#333333"


def _text(x, y, text, size=12, anchor="start", weight="normal", fill="#000"):
    bold = ' font-weight="bold"' if weight == "bold" else ""
    return (f'<text x="{x:g}" y="{y:g}" font-size="{size}" text-anchor="{anchor}" fill="{fill}"{bold}>'
            f'{escape(text)}</text>')


def _wire(points, colour, width=2):
    d = " ".join(f"{'M' if i == 0 else 'L'} {x:g} {y:g}" for i, (x, y) in enumerate(points))
    return f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="{width}" stroke-linejoin="round"/>'


def _dot(x, y, colour):
    return f'<circle cx="{x:g}" cy="{y:g}" r="3.5" fill="{colour}"/>'


def _resistor_v(x, y1, y2, label):
    """A vertical resistor between y1 and y2 (zig-zag in the middle)."""
    mid, half = (y1 + y2) / 2, 14
    zig = [(x, mid - half)] + [(x + (6 if i % 2 else -6), mid - half + (i + 0.5) * 2 * half / 6) for i in range(6)] \
        + [(x, mid + half)]
    return [_wire([(x, y1), (x, mid - half)], "#000", 1.5), _wire(zig, "#000", 1.5),
            _wire([(x, mid + half), (x, y2)], "#000", 1.5), _text(x + 10, mid + 4, label, 11)]


def _capacitor_h(x1, x2, y, label):
    mid = (x1 + x2) / 2
    return [_wire([(x1, y), (mid - 4, y)], "#000", 1.5), _wire([(mid + 4, y), (x2, y)], "#000", 1.5),
            _wire([(mid - 4, y - 9), (mid - 4, y + 9)], "#000", 2), _wire([(mid + 4, y - 9), (mid + 4, y + 9)], "#000", 2),
            _text(mid, y - 13, label, 11, "middle")]


def puck_svg(pins: dict[str, int], turntable: dict, spacing: float) -> str:
    width, height = 900, 690
    top, step = 140, 21
    bx, bw = 200, 170                        # the Pico's board
    left_x, right_x = bx + 12, bx + bw - 12

    def pin_y(pin: int) -> float:
        return top + ((pin - 1) if pin <= 20 else (40 - pin)) * step

    def pin_x(pin: int) -> float:
        return left_x if pin <= 20 else right_x

    used = {PHYSICAL[f"GP{pins['A']}"]: HALL_COLOUR, PHYSICAL[f"GP{pins['B']}"]: HALL_COLOUR,
            PHYSICAL["3V3(OUT)"]: V33, 38: GND_COLOUR}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" {FONT}>',
           f'<rect width="{width}" height="{height}" fill="#fff"/>',
           _text(width / 2, 32, "The wind puck: a Raspberry Pi Pico and two hall sensors", 19, "middle", "bold"),
           _text(width / 2, 54, f"Pins from firmware/puck.py: HALL_A_PIN = {pins['A']}, HALL_B_PIN = {pins['B']}. "
                 "Pico seen from above, USB at the top.", 12, "middle"),
           f'<rect x="{bx}" y="{top - 34}" width="{bw}" height="{20 * step + 64}" rx="6" fill="#2e7d32"/>',
           f'<rect x="{bx + bw / 2 - 18}" y="{top - 48}" width="36" height="22" rx="3" fill="#bbb" stroke="#666"/>',
           _text(bx + bw / 2 + 24, top - 38, "micro-USB", 11),
           _text(bx + bw / 2, top + 19 * step + 30, "Raspberry Pi Pico", 12, "middle", "bold", "#fff")]
    for pin, name in PICO_PINS.items():
        x, y = pin_x(pin), pin_y(pin)
        colour = used.get(pin)
        fill = colour or ("#1b1b1b" if "GND" in name else "#e8e8e8")
        out.append(f'<circle cx="{x:g}" cy="{y:g}" r="6" fill="{fill}" stroke="#fff"/>')
        anchor, tx = ("start", x + 11) if pin <= 20 else ("end", x - 11)
        weight = "bold" if colour else "normal"
        out.append(_text(tx, y + 4, f"{name}", 10, anchor, weight, "#fff"))
        nx, nanchor = (bx - 8, "end") if pin <= 20 else (bx + bw + 8, "start")
        out.append(_text(nx, y + 4, str(pin), 10, nanchor, weight, "#000" if colour else "#777")
                   .replace("<text ", '<text stroke="#fff" stroke-width="4" paint-order="stroke" ', 1))
    # USB cable to the Pi.
    out += [_wire([(bx + bw / 2, top - 48), (bx + bw / 2, top - 62), (90, top - 62)], "#555", 4),
            _text(86, top - 58, "to a USB port of the Pi", 11, "end")]
    out[-1] = _text(84, top - 66, "to a USB port", 11, "end")
    out.append(_text(84, top - 52, "of the Pi", 11, "end"))
    # Rails: 3V3(OUT) and GND, vertical.
    rail_3v3, rail_gnd = 470, 800
    y36, y38 = pin_y(36), pin_y(38)
    sensor_ys = [top + 140 + i * 175 for i in range(2)]
    rail_end = sensor_ys[-1] + 60
    out += [_wire([(right_x + 6, y36), (rail_3v3, y36), (rail_3v3, rail_end)], V33, 2.5),
            _wire([(right_x + 6, y38), (rail_gnd, y38), (rail_gnd, rail_end)], GND_COLOUR, 2.5),
            _text(rail_3v3 + 6, y36 - 6, "3.3 V (3V3(OUT), pin 36)", 11),
            _text(rail_gnd, rail_end + 16, "GND (pin 38)", 11, "middle"),
            _text(rail_3v3, rail_end + 16, "3.3 V", 11, "middle")]
    sensor_x = 640
    for i, (channel, gpio) in enumerate(sorted(pins.items())):
        sy = sensor_ys[i]
        vcc_y, out_y = sy - 22, sy + 22
        out.append(f'<rect x="{sensor_x}" y="{sy - 42}" width="70" height="84" rx="4" fill="{HALL_COLOUR}" '
                   'fill-opacity="0.25" stroke="#0b5c5c" stroke-width="1.5"/>')
        out += [_text(sensor_x + 35, sy - 4, f"Hall {channel}", 12, "middle", "bold"),
                _text(sensor_x + 35, sy + 12, "DRV5013", 10, "middle"),
                _text(sensor_x - 4, vcc_y - 4, "1 VCC", 10, "end"),
                _text(sensor_x - 4, out_y + 14, "3 OUT", 10, "end"),
                _text(sensor_x + 74, sy + 16, "2 GND", 10)]
        # VCC from the 3V3 rail, GND to the GND rail.
        out += [_wire([(rail_3v3, vcc_y), (sensor_x, vcc_y)], V33), _dot(rail_3v3, vcc_y, V33),
                _wire([(sensor_x + 70, sy), (rail_gnd, sy)], GND_COLOUR), _dot(rail_gnd, sy, GND_COLOUR)]
        # OUT to the Pico's GPIO: out of the pin to the left, down under the board, across.
        pin = PHYSICAL[f"GP{gpio}"]
        px, py = pin_x(pin), pin_y(pin)
        lane = top + 20 * step + 50 + i * 22
        side = px - 40 - i * 16 if pin <= 20 else px + 40 + i * 16
        out += [_wire([(px + (-6 if pin <= 20 else 6), py), (side, py), (side, lane), (rail_3v3 + 60 + i * 10, lane),
                       (rail_3v3 + 60 + i * 10, out_y), (sensor_x, out_y)], HALL_COLOUR),
                _text(425, lane - 5, f"Hall {channel} OUT → GP{gpio} (pin {pin})", 11, "middle", "bold")]
        # 10 kOhm pull-up from OUT to 3.3 V; 100 nF from VCC to GND at the sensor.
        rx = sensor_x - 40
        out += _resistor_v(rx, vcc_y, out_y, "")
        out += [_text(rx - 8, sy + 4, "10 kΩ", 11, "end"), _dot(rx, vcc_y, V33), _dot(rx, out_y, HALL_COLOUR)]
        cy = sy - 62
        out += [_wire([(sensor_x - 16, vcc_y), (sensor_x - 16, cy), (sensor_x + 20, cy)], "#000", 1.5),
                _dot(sensor_x - 16, vcc_y, V33)]
        out += _capacitor_h(sensor_x + 20, sensor_x + 110, cy, "100 nF")
        out += [_wire([(sensor_x + 110, cy), (sensor_x + 110, sy)], "#000", 1.5), _dot(sensor_x + 110, sy, GND_COLOUR)]
    out += [_text(40, height - 28, "Pull-ups and sensors on the Pico's 3.3 V only, never VBUS or VSYS (5 V): the "
                  "RP2040's pins are not 5 V tolerant.", 11),
            _text(40, height - 12, "The firmware also switches on the internal pull-ups (about 50 kΩ); the 10 kΩ "
                  "give clean edges on longer wires. Where the sensors go: turntable.svg.", 11)]
    out.append("</svg>")
    return "\n".join(out) + "\n"


# --- turntable.svg ------------------------------------------------------------------------------

def turntable_svg(turntable: dict, spacing: float, puck: dict[str, int], pi: dict[str, int]) -> str:
    width, height = 900, 600
    scale = 10                                 # px per mm near the magnet
    d, h = turntable["magnet_diameter"], turntable["magnet_thickness"]
    r_px = d / 2 * scale
    cx, cy = 210, 300
    angles = sensor_angles(turntable, spacing)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" {FONT} font-size="12">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#333"/></marker></defs>',
           f'<rect width="{width}" height="{height}" fill="#fff"/>',
           _text(width / 2, 30, f"Turntable: one diametric magnet, two hall sensors {spacing:g}° apart", 19, "middle", "bold"),
           _text(width / 2, 50, f"Near the magnet {scale} px = 1 mm ({d:g} × {h:g} mm magnet). "
                 "Turntable, base and bearing not to scale.", 12, "middle"),
           _text(cx, 84, "Top view (turntable drawn see-through)", 14, "middle", "bold"),
           f'<circle cx="{cx}" cy="{cy}" r="172" fill="#f3e3c3" fill-opacity="0.5" stroke="#a0784a" stroke-dasharray="6 4"/>',
           _text(cx, 146, "turntable edge", 12, "middle", fill="#7a5a30")]
    # The magnet at angle 0: N half on the left (its middle at 12 o'clock - 90 degrees).
    out += [f'<path d="M {cx} {cy - r_px} A {r_px} {r_px} 0 0 0 {cx} {cy + r_px} Z" fill="#d0021b"/>',
            f'<path d="M {cx} {cy - r_px} A {r_px} {r_px} 0 0 1 {cx} {cy + r_px} Z" fill="#2f6fd0"/>',
            _text(cx - r_px / 2, cy + 6, "N", 16, "middle", "bold", "#fff"),
            _text(cx + r_px / 2, cy + 6, "S", 16, "middle", "bold", "#fff"),
            f'<circle cx="{cx}" cy="{cy}" r="2.5" fill="#000"/>']
    for channel, angle in angles.items():
        rad = math.radians(angle)
        sx, sy = cx + r_px * math.sin(rad), cy - r_px * math.cos(rad)
        out += [f'<rect data-sensor="{channel}" data-angle="{angle:g}" x="{sx - 20:g}" y="{sy - 20:g}" width="40" '
                'height="40" rx="3" fill="#17a2a2" fill-opacity="0.55" stroke="#0b5c5c" stroke-width="1.5" '
                'stroke-dasharray="4 2"/>',
                _text(sx, sy + 5, channel, 14, "middle", "bold")]
    # Clockwise arrow, and the notes.
    out += [f'<path d="M {cx - 120} {cy + 40} A 126 126 0 0 1 {cx - 40} {cy - 120}" fill="none" stroke="#333" '
            'stroke-width="1.5" marker-end="url(#arrow)"/>',
            _text(cx - 160, cy - 70, "clockwise:", 12, "middle", "bold"),
            _text(cx - 160, cy - 55, "A leads B,", 12, "middle"),
            _text(cx - 160, cy - 40, "+4 counts", 12, "middle"),
            _text(cx + 60, cy - 150, f"Sensor A: under the rim, {d / 2:g} mm", 12),
            _text(cx + 60, cy - 135, "from the axis", 12),
            _text(cx + 80, cy + 90, f"Sensor B: same radius, {spacing:g}°", 12),
            _text(cx + 80, cy + 105, "clockwise from A", 12),
            _text(cx - 60, cy + 150, "Diametric disc: N and S are its two halves", 12, "middle")]
    # Side section through the axis and sensor A.
    ax, top = 665, 130
    plank_y = top + 10
    out += [_text(ax, 84, "Side view: a sensor under the magnet's rim", 14, "middle", "bold"),
            f'<line x1="{ax}" y1="{top - 30}" x2="{ax}" y2="{top + 200}" stroke="#555" stroke-dasharray="8 4"/>',
            _text(ax + 6, top - 18, "axis", 12),
            f'<rect x="470" y="{plank_y}" width="390" height="40" fill="#e8cf9c" stroke="#a0784a"/>',
            _text(480, plank_y - 6, "turntable", 12, fill="#7a5a30")]
    mag_top = plank_y + 40 - h * scale
    out += [f'<rect x="{ax - r_px}" y="{mag_top}" width="{r_px}" height="{h * scale}" fill="#d0021b"/>',
            f'<rect x="{ax}" y="{mag_top}" width="{r_px}" height="{h * scale}" fill="#2f6fd0"/>',
            _text(ax - r_px / 2, mag_top + h * scale / 2 + 5, "N", 12, "middle", "bold", "#fff"),
            _text(ax + r_px / 2, mag_top + h * scale / 2 + 5, "S", 12, "middle", "bold", "#fff")]
    gap_lo, gap_hi = turntable["gap"]
    gap_px = (gap_lo + gap_hi) / 2 * scale
    sensor_top = plank_y + 40 + gap_px
    base_y = sensor_top + 15
    out += [f'<rect x="{ax - r_px - 20}" y="{sensor_top}" width="40" height="15" fill="#17a2a2" stroke="#0b5c5c"/>',
            _text(ax - r_px, sensor_top + 12, "A", 11, "middle", "bold", "#fff"),
            f'<rect x="470" y="{base_y}" width="390" height="16" fill="#3b8f3b"/>',
            _text(480, base_y + 12, "base board (fixed)", 11, fill="#fff"),
            f'<rect x="480" y="{plank_y + 40}" width="22" height="{base_y - plank_y - 40}" fill="#999"/>',
            f'<rect x="832" y="{plank_y + 40}" width="22" height="{base_y - plank_y - 40}" fill="#999"/>',
            _text(491, base_y + 34, "bearing (steel):", 12, "start"),
            _text(491, base_y + 49, "far from the magnet", 12, "start"),
            f'<line x1="{ax + r_px + 30}" y1="{plank_y + 40}" x2="{ax + r_px + 30}" y2="{sensor_top}" stroke="#333" '
            'marker-start="url(#arrow)" marker-end="url(#arrow)"/>',
            _text(ax + r_px + 38, (plank_y + 40 + sensor_top) / 2 + 4, f"gap {gap_lo:g}–{gap_hi:g} mm", 12),
            f'<line x1="{ax - r_px}" y1="{base_y + 58}" x2="{ax}" y2="{base_y + 58}" stroke="#333" '
            'marker-start="url(#arrow)" marker-end="url(#arrow)"/>',
            f'<line x1="{ax - r_px}" y1="{sensor_top}" x2="{ax - r_px}" y2="{base_y + 64}" stroke="#999" stroke-dasharray="2 2"/>',
            _text(ax - r_px / 2, base_y + 74, f"{d / 2:g} mm", 12, "middle"),
            _text(470, base_y + 100, "Sensors lie flat, printed (sensing) face up, 100 nF at each.", 12),
            _text(470, base_y + 116, "No steel screws within 2 cm of the magnet or the sensors.", 12),
            _text(470, base_y + 140, f"More magnets: a ring of 2p alternating poles puts the sensors", 12),
            _text(470, base_y + 156, f"(k + ¼) × 360° / p apart (p = 2: 45° or 135°), B clockwise from A.", 12)]
    # One clockwise turn, computed from the geometry: the levels the sensors report.
    wy, x0, x1 = 505, 70, 740
    out += [_text(40, wy - 22, "One clockwise turn, slowly (computed from the placement above):", 14, "start", "bold")]
    for row, channel in enumerate(("A", "B")):
        base = wy + row * 38
        points = []
        for step in range(-45, 316):
            level = levels(turntable, spacing, step)[row]
            x, y = x0 + (x1 - x0) * (step + 45) / 360, base + 12 - level * 16
            if points and points[-1][1] != y:
                points.append((x, points[-1][1]))
            points.append((x, y))
        out += [_text(40, base + 4, channel, 13, "start", "bold"),
                f'<path data-channel="{channel}" d="' + " ".join(
                    f"{'M' if i == 0 else 'L'} {x:.1f} {y:g}" for i, (x, y) in enumerate(points)) +
                f'" fill="none" stroke="{"#17a2a2" if channel == "A" else "#0b5c5c"}" stroke-width="2"/>']
    for deg in range(0, 316, 90):
        x = x0 + (x1 - x0) * (deg + 45) / 360
        out.append(_text(x, wy + 70, f"{deg}°", 10, "middle", fill="#777"))
    out += [_text(760, wy - 2, "high: under N", 11), _text(760, wy + 14, "AB 00 → 10 → 11 → 01", 11),
            _text(760, wy + 30, "+1 each, 4 a turn", 11),
            _text(40, 592, f"Wire A to the puck's GP{puck['A']} or the Pi's HALL_A (GPIO{pi['HALL_A']}), B to GP{puck['B']} "
                  f"or HALL_B (GPIO{pi['HALL_B']}). Counting backwards? Swap the A and B wires.", 12)]
    out.append("</svg>")
    return "\n".join(out) + "\n"
