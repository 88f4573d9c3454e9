"""The matmul-shapes widget: readouts from the model's d and f, and the two SVG figures it draws."""

import re
import xml.etree.ElementTree as ET

import pytest

from sim import widgets
from sim.page import svg
from sim.widgets import matmul_shapes
from tests.sim.test_widgets import check_responsive, check_view, drawings

NS = {"svg": "http://www.w3.org/2000/svg"}
D, F = 5_120, 17_408  # Qwen3.8-27B hidden and intermediate sizes


def render(**state) -> dict:
    return widgets.render("matmul-shapes", state)


LAYOUTS = ["wide", "narrow"]  # every figure is drawn in a row for a desktop and stacked for a phone


def parse(markup: str, layout: str = "wide") -> ET.Element:
    """One drawing's svg root; raises on markup that is not well-formed XML."""
    return drawings(markup)[layout]


def operand(root: ET.Element, role: str) -> tuple[float, float]:
    """(width, height) of the outline rectangle of one operand."""
    rect = root.find(f".//svg:rect[@class='operand operand-{role}']", NS)
    return float(rect.get("width")), float(rect.get("height"))


def texts(root: ET.Element, css_class: str) -> list[str]:
    return ["".join(t.itertext()) for t in root.iterfind(f".//svg:text[@class='{css_class}']", NS)]


def test_default_readouts_are_the_anchor_up_projection():
    view = render()
    check_view(view)
    out = view["outputs"]
    assert (out["T"]["value"], out["d"]["value"], out["f"]["value"]) == (4, D, F)
    assert (out["T_small"]["value"], out["d_small"]["value"], out["f_small"]["value"]) == (4, 6, 8)
    assert out["gemm_flops"]["text"] == "713.0 MFLOP"  # 2 · 4 · 5,120 · 17,408 = 713,031,680
    assert out["gemm_bytes"]["text"] == "178.4 MB"  # 2 · (20,480 + 89,128,960 + 69,632) = 178,438,144
    assert out["gemm_intensity"] == {"value": 3.99596, "text": "3.996 FLOP/B"}
    assert out["gemv_flops"]["text"] == "178.3 MFLOP"  # 2 · 5,120 · 17,408 = 178,257,920
    assert out["gemv_bytes"]["text"] == "178.3 MB"  # 2 · (5,120 + 89,128,960 + 17,408) = 178,302,976
    assert out["gemv_intensity"] == {"value": 0.999747, "text": "0.9997 FLOP/B"}
    assert view["flags"] == {"real_scale": True, "small_scale": False}


def test_derivations_show_the_numbers_and_the_approximations():
    d = render()["derivations"]
    assert d["gemm_flops"] == "2 × 4 × 5,120 × 17,408 = 713,031,680 FLOP"
    assert d["gemm_bytes"].startswith(
        "2 × (4 × 5,120 + 5,120 × 17,408 + 4 × 17,408) = 2 × (20,480 + 89,128,960 + 69,632) = 178,438,144 B")
    assert "权重占 99.90%" in d["gemm_bytes"]  # 89,128,960 / 89,219,072
    assert d["gemm_intensity"].startswith(
        "713,031,680 ÷ 178,438,144 = 3.996 FLOP/B = 1 ÷ (1/4 + 1/5,120 + 1/17,408) ≈ T = 4")
    assert d["gemv_flops"] == "2 × 1 × 5,120 × 17,408 = 178,257,920 FLOP"
    assert "= 178,302,976 B" in d["gemv_bytes"]
    assert d["gemv_intensity"].startswith("178,257,920 ÷ 178,302,976 = 0.9997 FLOP/B")
    assert "≈ 1" in d["gemv_intensity"]


def test_long_prompts_fall_below_t_and_say_so():
    view = render(T=32_768)
    # 1 / (1/32,768 + 1/5,120 + 1/17,408) ≈ 3,530: the input and output are no longer small next to W_up.
    assert view["outputs"]["gemm_intensity"]["text"] == "3,530 FLOP/B"
    assert "< T = 32,768" in view["derivations"]["gemm_intensity"]
    assert "≈ T" not in view["derivations"]["gemm_intensity"]
    assert view["outputs"]["gemv_intensity"] == render()["outputs"]["gemv_intensity"]  # decode ignores T


@pytest.mark.parametrize("layout", LAYOUTS)
def test_other_model_and_english(layout):
    view = render(T=2_048, model="llama-2-7b", lang="en")
    check_view(view)
    d, f = 4_096, 11_008  # Llama-2-7B hidden and intermediate sizes
    # Readout values carry 6 significant digits; the derivations carry every digit.
    assert view["derivations"]["gemm_flops"].endswith(f"= {2 * 2_048 * d * f:,} FLOP")
    assert f"= {2 * (2_048 * d + d * f + 2_048 * f):,} B" in view["derivations"]["gemm_bytes"]
    assert f"= {2 * (d + d * f + f):,} B" in view["derivations"]["gemv_bytes"]
    assert view["outputs"]["gemm_flops"]["value"] == pytest.approx(2 * 2_048 * d * f, rel=5e-6)
    root = parse(view["svg"]["gemm"], layout)
    assert texts(root, "operand-role") == ["input", "parameter (learnable)", "output"]
    assert texts(root, "edge-label") == ["T = 2,048", "d = 4,096", "d = 4,096", "f = 11,008", "T = 2,048", "f = 11,008"]


# CJK ideographs, CJK punctuation and full-width forms (，：（）).
CHINESE = re.compile("[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


@pytest.mark.parametrize("state", [{}, {"T": 32_768}, {"T": 300, "scale": "small", "model": "llama-2-7b"}])
def test_both_languages_render_and_english_has_no_chinese(state):
    zh, en = render(**state), render(**state, lang="en")
    check_view(en)
    assert en["state"] == {**zh["state"], "lang": "en"}
    assert {k: o["value"] for k, o in en["outputs"].items()} == {k: o["value"] for k, o in zh["outputs"].items()}
    assert en["svg"].keys() == zh["svg"].keys() and en["flags"] == zh["flags"]
    roots = [root for markup in en["svg"].values() for root in drawings(markup).values()]
    svg_texts = [root.get("aria-label") for root in roots] + [
        "".join(t.itertext()) for root in roots for t in root.iterfind(".//svg:text", NS)]
    for text in [o["text"] for o in en["outputs"].values()] + list(en["derivations"].values()) + svg_texts:
        assert not CHINESE.search(text), text
    assert CHINESE.search(zh["derivations"]["gemm_intensity"])  # the check can fail


def test_english_page_words_have_no_chinese():
    assert matmul_shapes.TEXT["en"].keys() == matmul_shapes.TEXT["zh"].keys()
    assert all("{W_up}" in words["title"] for words in matmul_shapes.TEXT.values())  # drawn W<sub>up</sub>
    for key, text in matmul_shapes.TEXT["en"].items():
        assert not CHINESE.search(text), key


@pytest.mark.parametrize("state", [
    {},
    {"T": 1},
    {"T": 32_768, "scale": "small"},
    {"T": "2048", "scale": "small", "model": "qwen3-32b", "lang": "en"},
    {"T": "<b>", "scale": "huge", "model": "gpt", "lang": "fr"},
    {"T": float("inf"), "scale": None},
])
def test_any_state_gives_a_valid_view_with_two_figures(state):
    view = render(**state)
    check_view(view)
    assert set(view["svg"]) == {"gemm", "gemv"}
    for markup, layout in ((markup, layout) for markup in view["svg"].values() for layout in LAYOUTS):
        root = parse(markup, layout)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert root.get("role") == "img" and root.get("aria-label") and root.get("viewBox")
        assert root.find(".//svg:script", NS) is None and "href" not in markup and "<b>" not in markup


@pytest.mark.parametrize("layout", LAYOUTS)
def test_real_scale_figures_label_every_edge_with_its_real_size(layout):
    view = render()
    gemm, gemv = parse(view["svg"]["gemm"], layout), parse(view["svg"]["gemv"], layout)
    # Per operand: row edge, then column edge (X: T × d, W_up: d × f, H: T × f).
    assert texts(gemm, "edge-label") == ["T = 4", "d = 5,120", "d = 5,120", "f = 17,408", "T = 4", "f = 17,408"]
    assert texts(gemv, "edge-label") == ["1", "d = 5,120", "d = 5,120", "f = 17,408", "1", "f = 17,408"]
    assert texts(gemm, "operand-role") == ["输入", "参数（可学习）", "输出"]
    assert texts(gemm, "operand-name") == ["X", "Wup", "H"] and texts(gemv, "operand-name") == ["x", "Wup", "h"]
    assert gemm.findall(".//svg:rect[@class='cell']", NS) == []
    assert "4 × 5,120" in gemm.get("aria-label") and "1 × 17,408" in gemv.get("aria-label")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("scale", ["real", "small"])
def test_a_dimension_has_one_length_in_both_figures(scale, layout):
    view = render(T=300, scale=scale)
    gemm, gemv = parse(view["svg"]["gemm"], layout), parse(view["svg"]["gemv"], layout)
    x, w, h = (operand(gemm, role) for role in ("input", "weight", "output"))
    x1, w1, h1 = (operand(gemv, role) for role in ("input", "weight", "output"))
    d_edges = {x[0], w[1], x1[0], w1[1]}
    f_edges = {w[0], h[0], w1[0], h1[0]}
    assert len(d_edges) == 1 and len(f_edges) == 1
    assert x[1] == h[1] and x1[1] == h1[1]  # T in GEMM, 1 in GEMV
    assert x1[1] < x[1] < d_edges.pop() < f_edges.pop()  # 1 < T < d < f, drawn in that order
    assert gemm.get("viewBox").split()[2] == gemv.get("viewBox").split()[2]  # equally wide: one scale on the page


@pytest.mark.parametrize("state", [{}, {"T": 32_768, "model": "qwen3-32b"}, {"T": 1, "scale": "small"},
                                   {"T": 64, "lang": "en"}])
def test_a_phone_gets_the_operands_stacked_inside_its_width(state):
    view = render(**state)
    for case in ("gemm", "gemv"):
        narrow = check_responsive(view["svg"][case])["narrow"]
        width = float(narrow.get("viewBox").split()[2])
        boxes = [(float(r.get("x")), float(r.get("y")), float(r.get("width")), float(r.get("height")))
                 for r in narrow.iterfind(".//svg:rect[@class]", NS) if r.get("class").startswith("operand ")]
        assert len(boxes) == 3
        for (_, y, _, h), below in zip(boxes, boxes[1:]):
            assert below[1] > y + h  # X, then W_up under it, then H: one column
        for x, _, w, _ in boxes:
            assert x - 8 - 13 >= 0 and x + w <= width  # the rotated row label left of it fits too
    widths = {drawings(markup)["narrow"].get("viewBox").split()[2] for markup in view["svg"].values()}
    assert len(widths) == 1  # equally wide on a phone too: one scale for both figures


def test_edge_length_is_monotonic_and_one_cell_per_element_at_small_scale():
    real = [matmul_shapes.edge_length(n, small=False) for n in range(1, 40_000, 7)]
    assert all(a < b for a, b in zip(real, real[1:]))
    assert real[0] > 0
    # Log scale: every doubling adds the same length.
    step = matmul_shapes.edge_length(2, False) - matmul_shapes.edge_length(1, False)
    assert matmul_shapes.edge_length(8_192, False) - matmul_shapes.edge_length(4_096, False) == pytest.approx(step)
    small = [matmul_shapes.edge_length(n, small=True) for n in (1, 4, 6, 8)]
    assert small == [matmul_shapes.CELL * n for n in (1, 4, 6, 8)]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_small_scale_draws_one_cell_per_element(layout):
    view = render(T=2_048, scale="small")
    gemm, gemv = parse(view["svg"]["gemm"], layout), parse(view["svg"]["gemv"], layout)
    assert len(gemm.findall(".//svg:rect[@class='cell']", NS)) == 4 * 6 + 6 * 8 + 4 * 8  # T·d + d·f + T·f
    assert len(gemv.findall(".//svg:rect[@class='cell']", NS)) == 1 * 6 + 6 * 8 + 1 * 8
    assert texts(gemm, "edge-label") == ["T = 4", "d = 6", "d = 6", "f = 8", "T = 4", "f = 8"]
    assert texts(gemv, "edge-label") == ["1", "d = 6", "d = 6", "f = 8", "1", "f = 8"]
    assert view["flags"] == {"real_scale": False, "small_scale": True}
    # The readouts stay at real size: only the drawing shrinks.
    assert view["outputs"]["T"]["value"] == 2_048 and view["outputs"]["gemm_flops"]["value"] > 3e11


def test_svg_helpers_escape_text_and_attributes():
    markup = svg.document(10, 10, 'a "quoted" <label>', svg.text("<script>&", {"x": 1.005, "class": "x'y"}))
    root = ET.fromstring(markup)
    assert root.get("aria-label") == 'a "quoted" <label>'
    assert root[0].text == "<script>&" and root[0].get("class") == "x'y"
    assert "<script>" not in markup
    assert svg.number(12.0) == "12" and svg.number(12.5) == "12.5" and svg.number(-0.001) == "0"


def test_a_responsive_diagram_holds_both_drawings_in_order():
    wide, narrow = (svg.document(w, 10, "one name", svg.text(str(w), {})) for w in (600, 280))
    found = check_responsive(svg.responsive(wide, narrow))
    assert "".join(found["wide"].itertext()) == "600" and "".join(found["narrow"].itertext()) == "280"
