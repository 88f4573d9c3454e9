"""Matmul shapes: the FFN up-projection W_up times T prompt tokens (GEMM, prefill) and times 1 token
(GEMV, decode), drawn to a common scale, with the FLOPs, bytes and arithmetic intensity of each."""

from __future__ import annotations

import math

from sim.kit import Range, Select, Widget, choices, output, palette, view
from sim.page import svg
from sim.page.display import fmt_bytes, fmt_flops, fmt_grouped, fmt_sig
from sim.physics import matmul, presets

# The page's words (site/templates/widgets/matmul-shapes.html keeps only the markup: "{W_up}" in a text is
# drawn W with subscript "up"), then the figures' words: the operands' roles, their text alternatives and
# what the derivations say about them.
TEXT = {
    "zh": {
        "title": "同一个 {W_up}：prefill 乘矩阵，decode 乘向量",
        "T": "提示长度 T",
        "scale": "画法",
        "scale=real": "真实规模",
        "scale=small": "小规模",
        "gemm_caption": "prefill：T 个 token 一起乘同一个权重矩阵——矩阵乘矩阵（GEMM）",
        "gemv_caption": "decode：每步只有 1 个新 token——矩阵乘向量（GEMV）",
        "real_scale": "边长按对数比例缩放，边上写的是真实尺寸；同一个维度符号，在两张图里边长都一样。",
        "small_scale": "小规模：每个小格是一个元素，边长与元素个数成正比；同一个维度符号，在两张图里边长都一样。",
        "dimension": "维度",
        "meaning": "含义",
        "T_meaning": "一次喂进去的 token 数（prefill 时 = 提示长度）",
        "one_meaning": "decode 每步只处理 1 个 token",
        "d_meaning": "隐藏维度 hidden_size",
        "f_meaning": "FFN 中间维度 intermediate_size",
        "gemm_heading": "prefill · GEMM（随 T 变）",
        "gemv_heading": "decode · GEMV（与 T 无关）",
        "flops": "浮点运算",
        "bytes": "读写字节（BF16，输入 + 权重 + 输出）",
        "bytes_note": "这里单看一个矩阵乘，字节把输入 X、权重和输出 H 都算上；屋顶线模拟器算整步时只数权重、"
                      "KV 和状态，不数这些激活，所以 T 很大时这里的强度会低于那里。",
        "intensity": "算术强度",

        "input": "输入", "weight": "参数（可学习）", "output": "输出",
        "gemm_label": "GEMM：输入 X（{T} × {d}）乘上投影的参数 W（{d} × {f}）得到输出 H（{T} × {f}）",
        "gemv_label": "GEMV：输入 x（1 × {d}）乘上投影的参数 W（{d} × {f}）得到输出 h（1 × {f}）",
        "real_note": "，边长按对数比例画",
        "small_note": "，按小规模画，每格一个元素",
        "approx": "≈ T = {T}（T 远小于 d、f：字节几乎全是权重）",
        "below": "< T = {T}（T 已不远小于 d、f，输入和输出的字节不能再忽略）",
        "approx_one": "≈ 1（字节几乎全是权重，每个权重只用一次）",
        "weights_share": "（权重占 {share}）",
    },
    "en": {
        "title": "One {W_up}: prefill multiplies a matrix, decode a vector",
        "T": "Prompt length T",
        "scale": "Drawing",
        "scale=real": "Real size",
        "scale=small": "Small scale",
        "gemm_caption": "prefill: T tokens multiply the same weight matrix together — matrix × matrix (GEMM)",
        "gemv_caption": "decode: one new token per step — matrix × vector (GEMV)",
        "real_scale": "Edge lengths are log-scaled and labelled with the real sizes; the same symbol has the same "
                      "length in both figures.",
        "small_scale": "Small scale: each cell is one element, so edge length is proportional to size; the same "
                       "symbol has the same length in both figures.",
        "dimension": "Dimension",
        "meaning": "Meaning",
        "T_meaning": "tokens fed in one go (= prompt length in prefill)",
        "one_meaning": "decode handles one token per step",
        "d_meaning": "hidden size (hidden_size)",
        "f_meaning": "FFN intermediate size (intermediate_size)",
        "gemm_heading": "prefill · GEMM (changes with T)",
        "gemv_heading": "decode · GEMV (independent of T)",
        "flops": "FLOPs",
        "bytes": "Bytes moved (BF16: input + weight + output)",
        "bytes_note": "One matmul on its own: its bytes count the input X, the weight and the output H. The "
                      "roofline simulator, costing a whole step, counts weights, KV and state but not these "
                      "activations, so at large T the intensity here is below the one there.",
        "intensity": "Arithmetic intensity",

        "input": "input", "weight": "parameter (learnable)", "output": "output",
        "gemm_label": "GEMM: input X ({T} × {d}) times the up-projection's parameter W ({d} × {f}) gives output H "
                      "({T} × {f})",
        "gemv_label": "GEMV: input x (1 × {d}) times the up-projection's parameter W ({d} × {f}) gives output h "
                      "(1 × {f})",
        "real_note": "; edge lengths on a log scale",
        "small_note": "; small scale, one cell per element",
        "approx": "≈ T = {T} (T ≪ d, f: the bytes are almost all weights)",
        "below": "< T = {T} (T is no longer ≪ d, f: input and output bytes count)",
        "approx_one": "≈ 1 (the bytes are almost all weights, each used once)",
        "weights_share": " (weights: {share})",
    },
}

# The page is its own template (site/templates/widgets/matmul-shapes.html): the two figures, a table
# of the dimensions, and the readouts of each case under its heading.
WIDGET = Widget(
    controls=(
        Range("T", default=4, min=1, max=32_768, log=True),
        Select("scale", default="real", options=("real", "small"), style="buttons"),
        choices.model(),
    ),
)
T_MAX = WIDGET.control("T").max

# Small-scale stand-ins, few enough elements to draw one cell each.
SMALL = {"T": 4, "d": 6, "f": 8}
ACTIVATION_BYTES = presets.DTYPE_BYTES["bf16"]  # BF16 inputs, weights and outputs

# Drawing units (the SVG's own pixels). Real sizes: an edge of n elements is EDGE_MIN + EDGE_PER_DECADE·log10(n)
# long, so that 1 is still visible and 32,768 still fits. Small scale: one square cell per element.
EDGE_MIN = 12.0
EDGE_PER_DECADE = 40.0
CELL = 20.0
MARGIN = 30.0  # left of the first matrix: room for its rotated row label
GAP = 52.0  # between matrices: the × or = sign and the next matrix's row label
TOP = 30.0  # above the tallest matrix: column labels
BOTTOM = 44.0  # below it: name and role of each matrix
# A phone's drawing (draw_stacked): its width, the room above the first operand, above each operand for its
# column label, and between two operands for the × or = sign.
NARROW_WIDTH, STACK_TOP, STACK_LABEL, STACK_SIGN = 280, 4.0, 24.0, 24.0
APPROX_TOLERANCE = 0.05  # "≈ T" is said while the intensity is within 5% of T

INK, MUTED = palette.colour("ink"), palette.colour("muted")
COLOURS = {  # (fill, stroke) per role
    role: (palette.colour(f"{role}-fill"), palette.colour(role)) for role in ("input", "weight", "output")
}


def render(state) -> dict:
    """The GEMM-versus-GEMV view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    m = presets.model(s["model"])
    d, f, t = m.hidden, m.intermediate, s["T"]
    gemm = matmul.matmul_cost(t, d, f, ACTIVATION_BYTES)
    gemv = matmul.matmul_cost(1, d, f, ACTIVATION_BYTES)
    text = TEXT[s["lang"]]

    outputs = {
        "T": output(t, fmt_grouped(t)),
        "d": output(d, fmt_grouped(d)),
        "f": output(f, fmt_grouped(f)),
        **{f"{symbol}_small": output(n, fmt_grouped(n)) for symbol, n in SMALL.items()},
    }
    derivations = {}
    for case, cost in (("gemm", gemm), ("gemv", gemv)):
        outputs[f"{case}_flops"] = output(cost.flops, fmt_flops(cost.flops))
        outputs[f"{case}_bytes"] = output(cost.bytes, fmt_bytes(cost.bytes))
        outputs[f"{case}_intensity"] = output(cost.intensity, f"{fmt_sig(cost.intensity, 4)} FLOP/B")
        derivations[f"{case}_flops"] = describe_flops(cost)
        derivations[f"{case}_bytes"] = describe_bytes(cost, text)
        derivations[f"{case}_intensity"] = describe_intensity(cost, text)

    small = s["scale"] == "small"
    sizes = dict(SMALL) if small else {"T": t, "d": d, "f": f}
    labels = {symbol: fmt_grouped(n) for symbol, n in sizes.items()}
    note = text["small_note" if small else "real_note"]
    # Real size keeps room for the largest T, so that the page below does not jump while T is dragged.
    gemm_room = sizes["T"] if small else T_MAX
    # Each drawn twice: in a row for a desktop, stacked for a phone (svg.responsive); the same edge lengths in both.
    figures_svg = {}
    cases = (("gemm", ("T", sizes["T"]), ("X", "H"), gemm_room), ("gemv", ("1", 1), ("x", "h"), 1))
    for case, row, names, room in cases:
        label = text[f"{case}_label"].format(**labels) + note
        dims = (row, ("d", sizes["d"]), ("f", sizes["f"]), names)
        figures_svg[case] = svg.responsive(draw_product(*dims, room, small, label, text),
                                           draw_stacked(*dims, small, label, text))
    return view(
        s,
        outputs,
        svg=figures_svg,
        flags={"real_scale": not small, "small_scale": small},
        derivations=derivations,
    )


def describe_flops(cost: matmul.MatmulCost) -> str:
    """2 × rows × inner × cols with the numbers filled in."""
    return (f"2 × {fmt_grouped(cost.rows)} × {fmt_grouped(cost.inner)} × {fmt_grouped(cost.cols)} "
            f"= {fmt_grouped(cost.flops)} FLOP")


def describe_bytes(cost: matmul.MatmulCost, text: dict) -> str:
    """b × (input + weight + output elements), each product spelled out, and the weights' share."""
    b = cost.bytes_per_element
    rows, inner, cols = (fmt_grouped(n) for n in (cost.rows, cost.inner, cost.cols))
    elements = " + ".join(fmt_grouped(n // b) for n in (cost.input_bytes, cost.weight_bytes, cost.output_bytes))
    share = text["weights_share"].format(share=f"{cost.weight_bytes / cost.bytes:.2%}")
    return (f"{b} × ({rows} × {inner} + {inner} × {cols} + {rows} × {cols}) = {b} × ({elements}) "
            f"= {fmt_grouped(cost.bytes)} B{share}")


def describe_intensity(cost: matmul.MatmulCost, text: dict) -> str:
    """FLOPs ÷ bytes, the same as 1 ÷ (1/rows + 1/inner + 1/cols), and how close it is to rows."""
    # The identity holds because a multiply-add's 2 FLOPs cancel BF16's 2 bytes per element.
    exact = (f"{fmt_grouped(cost.flops)} ÷ {fmt_grouped(cost.bytes)} = {fmt_sig(cost.intensity, 4)} FLOP/B "
             f"= 1 ÷ (1/{fmt_grouped(cost.rows)} + 1/{fmt_grouped(cost.inner)} + 1/{fmt_grouped(cost.cols)}) ")
    if cost.rows == 1:
        return exact + text["approx_one"]
    close = cost.intensity >= (1 - APPROX_TOLERANCE) * cost.rows
    return exact + text["approx" if close else "below"].format(T=fmt_grouped(cost.rows))


def edge_length(n: int, small: bool) -> float:
    """Drawn length of an edge of n elements: log-scaled at real size, one cell per element at small scale.

    Every edge of both figures goes through here, so a dimension has the same length wherever it appears.
    """
    return CELL * n if small else EDGE_MIN + EDGE_PER_DECADE * math.log10(n)


def draw_product(row: tuple[str, int], inner: tuple[str, int], col: tuple[str, int], names: tuple[str, str],
                 room: int, small: bool, label: str, text: dict) -> str:
    """(row × inner) · (inner × col) = (row × col) as an SVG: three labelled operands with × and = between.

    `room` is the largest row count the figure must have space for; matrices are centred on one line.
    """
    operands = _operands(row, inner, col, names)
    tallest = max(edge_length(room, small), edge_length(inner[1], small))
    middle = TOP + tallest / 2
    parts, x = [], MARGIN
    for i, (role, name, (row_symbol, rows), (col_symbol, cols)) in enumerate(operands):
        width, height = edge_length(cols, small), edge_length(rows, small)
        top = middle - height / 2
        parts.append(draw_operand(role, x, top, width, height, rows, cols, small))
        parts.append(edge_label(row_symbol, rows, x - 8, middle, rotate=True))
        parts.append(edge_label(col_symbol, cols, x + width / 2, top - 8))
        parts.append(operand_caption(role, name, x + width / 2, TOP + tallest, text))
        x += width
        if i < len(operands) - 1:
            parts.append(svg.text("×" if i == 0 else "=", {
                "x": x + GAP * 0.38, "y": middle, "font-size": 22, "text-anchor": "middle",
                "dominant-baseline": "central", "fill": INK}))
            x += GAP
    return svg.document(x + 8, TOP + tallest + BOTTOM, label, *parts, css_class="matmul-figure")


def draw_stacked(row: tuple[str, int], inner: tuple[str, int], col: tuple[str, int], names: tuple[str, str],
                 small: bool, label: str, text: dict) -> str:
    """The same product for a phone: the three operands one under another, centred, × and = between them.

    Edges are as long as in draw_product, so the two figures still share one scale; the height follows T (a
    phone's figure keeps no room for the largest T: what lies below it moves, the slider above it does not).
    """
    parts, y, middle_x = [], STACK_TOP, NARROW_WIDTH / 2
    for i, (role, name, (row_symbol, rows), (col_symbol, cols)) in enumerate(_operands(row, inner, col, names)):
        width, height = edge_length(cols, small), edge_length(rows, small)
        x, top = middle_x - width / 2, y + STACK_LABEL
        parts.append(draw_operand(role, x, top, width, height, rows, cols, small))
        parts.append(edge_label(row_symbol, rows, x - 8, top + height / 2, rotate=True))
        parts.append(edge_label(col_symbol, cols, middle_x, top - 8))
        parts.append(operand_caption(role, name, middle_x, top + height, text))
        y = top + height + BOTTOM
        if i < 2:
            parts.append(svg.text("×" if i == 0 else "=", {
                "x": middle_x, "y": y + STACK_SIGN / 2, "font-size": 22, "text-anchor": "middle",
                "dominant-baseline": "central", "fill": INK}))
            y += STACK_SIGN
    return svg.document(NARROW_WIDTH, y, label, *parts, css_class="matmul-figure")


def _operands(row: tuple[str, int], inner: tuple[str, int], col: tuple[str, int], names: tuple[str, str]) -> tuple:
    """(role, (letter, subscript), row dimension, column dimension) of X, W_up and H in order."""
    return (
        ("input", (names[0], ""), row, inner),
        ("weight", ("W", "up"), inner, col),
        ("output", (names[1], ""), row, col),
    )


def draw_operand(role: str, x: float, y: float, width: float, height: float, rows: int, cols: int,
                 small: bool) -> str:
    """One matrix: a filled rectangle, or at small scale a grid with one cell per element."""
    fill, stroke = COLOURS[role]
    outline = svg.element("rect", {"class": f"operand operand-{role}", "x": x, "y": y, "width": width,
                                   "height": height, "fill": "none" if small else fill, "stroke": stroke,
                                   "stroke-width": 1.5})
    if not small:
        return outline
    cells = [
        svg.element("rect", {"class": "cell", "x": x + c * CELL, "y": y + r * CELL, "width": CELL,
                             "height": CELL, "fill": fill, "stroke": stroke, "stroke-width": 0.6})
        for r in range(rows) for c in range(cols)
    ]
    return svg.element("g", {"class": f"cells cells-{role}"}, *cells, outline)


def edge_label(symbol: str, n: int, x: float, y: float, rotate: bool = False) -> str:
    """The size written along an edge: "T = 4", "d = 5,120"; the single-token edge is just "1"."""
    content = symbol if symbol == str(n) else f"{symbol} = {fmt_grouped(n)}"
    attrs = {"class": "edge-label", "x": x, "y": y, "font-size": 13, "text-anchor": "middle", "fill": INK}
    if rotate:
        attrs["transform"] = f"rotate(-90 {svg.number(x)} {svg.number(y)})"
    return svg.text(content, attrs)


def operand_caption(role: str, name: tuple[str, str], x: float, y: float, text: dict) -> str:
    """The operand's symbol, as (letter, subscript), and its role, under the figure."""
    letter, subscript = name
    symbol = svg.tspan(letter, {})
    if subscript:
        symbol += svg.tspan(subscript, {"font-size": 11, "dy": 4})
    return (svg.element("text", {"class": "operand-name", "x": x, "y": y + 20, "font-size": 15,
                                 "font-style": "italic", "text-anchor": "middle", "fill": INK}, symbol)
            + svg.text(text[role], {"class": "operand-role", "x": x, "y": y + 38, "font-size": 12,
                                    "text-anchor": "middle", "fill": MUTED}))
