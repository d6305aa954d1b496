"""The drilling template: read back from its SVG and its PDF, in millimetres, at 1:1."""
from __future__ import annotations

import itertools
import math
import re
import shutil
import subprocess
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from helpers.hardware_modules import load  # (one loader for the three files)

ROOT = Path(__file__).resolve().parents[2]
HARDWARE = ROOT / "hardware"
SVG_NS = "{http://www.w3.org/2000/svg}"



panel = load("panel")
gen_docs = load("gen_docs")
LAYOUT = tomllib.loads((HARDWARE / "panel.toml").read_text())
PAPER_MM = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}     # ISO 216; 8.5 x 11 in
CASES = [dict(players=p, button_mm=b, display=d, paper=paper)
         for p, b, d, paper in itertools.product((4, 8), (24, 30), ("ssd1306", "sh1106"), ("a4", "letter"))]


# --- reading the SVG back --------------------------------------------------------------------

def read_svg(text: str):
    root = ET.fromstring(text)
    width, height = (re.fullmatch(r"([\d.]+)mm", root.get(k)) for k in ("width", "height"))
    assert width and height, "the page size is given in mm"
    view = [float(v) for v in root.get("viewBox").split()]
    page = float(width.group(1)), float(height.group(1))
    assert view == [0, 0, *page], "one user unit is one millimetre"
    circles = [(e.get("class"), e.get("data-name"), float(e.get("cx")), float(e.get("cy")), float(e.get("r")))
               for e in root.iter(f"{SVG_NS}circle")]
    rects = [(e.get("class"), e.get("data-name"), float(e.get("x")), float(e.get("y")),
              float(e.get("width")), float(e.get("height")))
             for e in root.iter(f"{SVG_NS}rect") if e.get("class")]
    lines = [(e.get("class"), e.get("data-name"), *(float(e.get(k)) for k in ("x1", "y1", "x2", "y2")))
             for e in root.iter(f"{SVG_NS}line")]
    return page, circles, rects, lines


# --- reading the PDF back --------------------------------------------------------------------

def read_pdf(data: bytes):
    """(MediaBox in points, the content's paths in user units, the cm scale)."""
    assert data.startswith(b"%PDF-1.4\n") and data.rstrip().endswith(b"%%EOF")
    # The cross-reference table points at every object.
    start = int(re.search(rb"startxref\n(\d+)", data).group(1))
    xref = data[start:]
    assert xref.startswith(b"xref\n")
    count = int(re.match(rb"xref\n0 (\d+)\n", xref).group(1))
    offsets = [int(m) for m in re.findall(rb"(\d{10}) 00000 n ", xref)]
    assert len(offsets) == count - 1
    for number, offset in enumerate(offsets, 1):
        assert data[offset:].startswith(f"{number} 0 obj".encode()), number
    box = [float(v) for v in re.search(rb"/MediaBox \[([^\]]+)\]", data).group(1).split()]
    length = int(re.search(rb"/Length (\d+)", data).group(1))
    begin = data.index(b"stream\n") + len(b"stream\n")
    content = data[begin:begin + length].decode("ascii")
    assert data[begin + length:].startswith(b"endstream")
    content = re.sub(r"BT .*? ET", "", content)         # text: not geometry
    tokens = content.split()
    stack: list[str] = []
    scale = None
    paths, current = [], []
    for token in tokens:
        if token == "cm":
            a, b, c, d, e, f = map(float, stack[-6:])
            scale = (a, d, e, f)
        elif token in ("m", "l"):
            current.append((token, [(float(stack[-2]), float(stack[-1]))]))
        elif token == "c":
            values = list(map(float, stack[-6:]))
            current.append(("c", [tuple(values[i:i + 2]) for i in (0, 2, 4)]))
        elif token == "re":
            x, y, w, h = map(float, stack[-4:])
            current.append(("re", [(x, y), (x + w, y + h)]))
        elif token == "S":
            paths.append(current)
            current = []
        if re.fullmatch(r"-?[\d.]+", token):
            stack.append(token)
        else:
            stack.clear()
    return box, paths, scale


def pdf_circles(paths):
    out = []
    for path in paths:
        ops = [op for op, _ in path]
        if ops == ["m", "c", "c", "c", "c"]:
            xs = [p[0] for _, points in path for p in points]
            ys = [p[1] for _, points in path for p in points]
            w, h = max(xs) - min(xs), max(ys) - min(ys)
            assert math.isclose(w, h, abs_tol=1e-3), "a circle, not an ellipse"
            out.append((round((max(xs) + min(xs)) / 2, 2), round((max(ys) + min(ys)) / 2, 2), round(w / 2, 2)))
    return sorted(out)


def pdf_segments(paths):
    return [(path[0][1][0], path[1][1][0]) for path in paths if [op for op, _ in path] == ["m", "l"]]


def path_box(path):
    xs = [p[0] for _, points in path for p in points]
    ys = [p[1] for _, points in path for p in points]
    return min(xs), min(ys), max(xs), max(ys)


# --- the tests -------------------------------------------------------------------------------

def make(case):
    options = {k: v for k, v in case.items() if k != "paper"}
    return panel.template(LAYOUT, options, case["paper"])


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c.values())))
def test_the_svg_is_1_to_1_and_drillable(case):
    svg, _ = make(case)
    page, circles, rects, lines = read_svg(svg)
    assert page == PAPER_MM[case["paper"]]
    buttons = [c for c in circles if c[0] == "hole" and re.fullmatch(r"P\d|YES|NO|MENU", c[1])]
    assert len(buttons) == case["players"] + 3
    assert {c[4] for c in buttons} == {case["button_mm"] / 2}, "a hole of the button's size"
    assert len([c for c in circles if c[0] == "hole" and c[1] == "OLED screw"]) == 4
    assert [c[1] for c in circles if c[0] == "hole" and c[1] == "ENC"] == ["ENC"]
    # Keep-outs (bezels and nuts, the OLED board) stay the layout's spacing apart, measured on
    # the drawing itself.
    spacing = LAYOUT["panel"]["spacing"]
    round_keepouts = [c for c in circles if c[0] == "keepout"]
    for a, b in itertools.combinations(round_keepouts, 2):
        assert math.dist(a[2:4], b[2:4]) >= a[4] + b[4] + spacing - 1e-9, (a[1], b[1])
    (board,) = [r for r in rects if r[0] == "keepout"]
    for c in round_keepouts:
        nx = min(max(c[2], board[2]), board[2] + board[4])
        ny = min(max(c[3], board[3]), board[3] + board[5])
        assert math.dist((nx, ny), c[2:4]) >= c[4] + spacing - 1e-9, c[1]
    # Every hole lies in the panel, and everything on the page within its margins.
    (outline,) = [r for r in rects if r[0] == "outline"]
    for kind, name, cx, cy, r in circles:
        assert outline[2] < cx - r and cx + r < outline[2] + outline[4], name
        assert outline[3] < cy - r and cy + r < outline[3] + outline[5], name
    width, height = page
    for _, _, x, y, w, h in rects:
        assert panel.MARGIN <= x and x + w <= width - panel.MARGIN
        assert panel.MARGIN <= y and y + h <= height - panel.MARGIN
    for *_, x1, y1, x2, y2 in lines:
        assert panel.MARGIN <= min(x1, x2) and max(x1, x2) <= width - panel.MARGIN
        assert panel.MARGIN <= min(y1, y2) and max(y1, y2) <= height - panel.MARGIN
    # The scale check: a 100 mm bar, a 50 mm bar across it, a bank card (85.60 x 53.98 mm).
    bars = {name: math.dist((x1, y1), (x2, y2)) for kind, name, x1, y1, x2, y2 in lines if kind == "bar"}
    assert bars == {"100 mm": pytest.approx(100.0, abs=1e-9), "50 mm": pytest.approx(50.0, abs=1e-9)}
    (card,) = [r for r in rects if r[0] == "card"]
    assert card[4:] == (85.6, 53.98)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c.values())))
def test_the_pdf_draws_the_same_millimetres(case):
    svg, pdf = make(case)
    page, circles, rects, lines = read_svg(svg)
    box, paths, scale = read_pdf(pdf)
    points_per_mm = 72 / 25.4
    assert box[:2] == [0, 0]
    assert box[2] == pytest.approx(page[0] * points_per_mm, abs=1e-3)
    assert box[3] == pytest.approx(page[1] * points_per_mm, abs=1e-3)
    # One unit is one millimetre; y runs down from the top, as in the SVG.
    assert scale[0] == pytest.approx(points_per_mm, rel=1e-6)
    assert scale[1] == pytest.approx(-points_per_mm, rel=1e-6)
    assert scale[3] == pytest.approx(box[3], abs=1e-3)
    # Every circle of the SVG, and nothing else round, at the same place and size.
    assert pdf_circles(paths) == sorted((round(c[2], 2), round(c[3], 2), round(c[4], 2)) for c in circles)
    lengths = sorted(round(math.dist(a, b), 3) for a, b in pdf_segments(paths))
    assert 100.0 in lengths and 50.0 in lengths
    boxes = [path_box(p) for p in paths if [op for op, _ in p][:2] == ["m", "l"] and len(p) > 2]
    sizes = {(round(x2 - x1, 2), round(y2 - y1, 2)) for x1, y1, x2, y2 in boxes}
    assert (85.6, 53.98) in sizes, "the bank card"


def test_the_committed_templates_are_the_configured_panel():
    outputs = gen_docs.generate()
    for paper, (svg_path, pdf_path) in gen_docs.TEMPLATES.items():
        assert svg_path.read_text() == outputs[svg_path]
        assert pdf_path.read_bytes() == outputs[pdf_path]
        page, *_ = read_svg(svg_path.read_text())
        assert page == PAPER_MM[paper]


@pytest.mark.skipif(not shutil.which("pdftoppm"), reason="poppler-utils is not installed")
@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_poppler_renders_the_pdf_at_its_size(tmp_path, paper):
    pdf = HARDWARE / f"panel-{paper}.pdf"
    # At 254 dpi one pixel is a tenth of a millimetre (poppler rounds the page up).
    done = subprocess.run(["pdftoppm", "-r", "254", "-png", "-singlefile", str(pdf), str(tmp_path / "p")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not done.stderr, done.stderr
    png = (tmp_path / "p.png").read_bytes()
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert width == pytest.approx(PAPER_MM[paper][0] * 10, abs=1)
    assert height == pytest.approx(PAPER_MM[paper][1] * 10, abs=1)


def moved(**host) -> dict:
    layout = tomllib.loads((HARDWARE / "panel.toml").read_text())
    layout["host"].update(host)
    return layout


OPTIONS = dict(players=8, button_mm=30, display="sh1106")


def test_overlapping_parts_are_refused_naming_both():
    with pytest.raises(panel.LayoutError) as caught:
        panel.layout(moved(YES=[20, 26]), OPTIONS)
    assert str(caught.value) == "panel.toml: YES at (20, 26) and NO at (30, 26) overlap"


def test_keepouts_closer_than_the_spacing_are_refused_naming_both():
    """The 8-player layout as it once was: P3's and MENU's keep-outs 0.4 mm apart."""
    layout = moved(MENU=[-38, -32])
    layout["encoder"] = dict(layout["encoder"], at=[38, -32])
    layout["players"] = dict(layout["players"], **{"8": [[-42, 73], [-73, 42], [-73, -42], [-42, -73],
                                                         [42, -73], [73, -42], [73, 42], [42, 73]]})
    with pytest.raises(panel.LayoutError) as caught:
        panel.layout(layout, OPTIONS)
    assert str(caught.value) == ("panel.toml: P3 at (-73, -42) and MENU at (-38, -32) are 0.4 mm apart; "
                                 "keep at least 3 mm (spacing)")
    layout["panel"] = dict(layout["panel"], spacing=0.3)
    panel.layout(layout, OPTIONS)


@pytest.mark.parametrize("spacing", [0, -1, "3", True])
def test_the_spacing_must_be_a_positive_number(spacing):
    layout = moved()
    layout["panel"] = dict(layout["panel"], spacing=spacing)
    with pytest.raises(panel.LayoutError, match=r"panel\.spacing must be a positive number of mm"):
        panel.layout(layout, OPTIONS)


def test_a_part_off_the_panel_is_refused():
    with pytest.raises(panel.LayoutError, match=r"MENU at \(-80, -32\) comes closer than 4 mm"):
        panel.layout(moved(MENU=[-80, -32]), OPTIONS)


def test_a_panel_too_big_for_the_paper_is_refused():
    layout = moved()
    layout["panel"]["height"] = 230
    with pytest.raises(panel.LayoutError, match="does not fit on US Letter"):
        panel.drawing(layout, OPTIONS, "letter")


@pytest.mark.parametrize("value", [[1], "x", [True, 2], None, [1, 2, 3]])
def test_a_bad_position_is_one_line(value):
    with pytest.raises(panel.LayoutError) as caught:
        panel.layout(moved(NO=value), OPTIONS)
    assert "host.NO" in str(caught.value) and "\n" not in str(caught.value)


coordinate = st.floats(min_value=-120, max_value=120, allow_nan=False)


@settings(deadline=None, max_examples=150)
@given(st.dictionaries(st.sampled_from(["YES", "NO", "MENU"]), st.lists(coordinate, min_size=2, max_size=2)),
       st.sampled_from([24, 30]))
def test_any_layout_is_either_refused_in_one_line_or_drillable(host, size):
    options = dict(OPTIONS, button_mm=size)
    try:
        svg, _ = panel.template(moved(**host), options, "letter")
    except panel.LayoutError as error:
        assert "\n" not in str(error) and str(error).startswith("panel.toml: ")
        return
    _, circles, rects, _ = read_svg(svg)
    keepouts = [c for c in circles if c[0] == "keepout"]
    for a, b in itertools.combinations(keepouts, 2):
        assert math.dist(a[2:4], b[2:4]) >= a[4] + b[4] + LAYOUT["panel"]["spacing"] - 1e-9
