"""Quantizing one tensor: the grid, the granularity of its scales, and AWQ's scaling, against the error they leave.

The quantizer and the synthetic tensor are sim/techniques/quantization.py (its docstring states every convention:
asymmetric integer grids, symmetric FP8 grids and which E4M3, what a scale costs in bits, AWQ's search, the output
error). The figure draws the histogram of the original weights and of the values they were rounded to.
"""

from __future__ import annotations

from sim.kit import Controls, Figure, Flag, Readouts, Select, Text, Widget, alt, output, palette, view
from sim.page.display import fmt_pct, fmt_sig
from sim.techniques import quantization

TEXT = {
    "zh": {
        "title": "把一个张量量化：网格、scale 的粒度和 AWQ",
        "format": "格式",
        "format=int8": "INT8",
        "format=int4": "INT4",
        "format=fp8-e4m3": "FP8 E4M3",
        "format=fp8-e5m2": "FP8 E5M2",
        "granularity": "几个权重共用一个 scale",
        "granularity=tensor": "整个张量一个",
        "granularity=channel": "每个输出通道（每行）一个",
        "granularity=group": "每组一个",
        "group_size": "每组的权重数",
        "scaling": "缩放",
        "scaling=none": "不缩放",
        "scaling=awq": "AWQ 式（按激活放大显著通道）",
        "bits_per_weight": "每个权重的位数（含 scale 和零点）",
        "rms_error": "权重误差（均方根）",
        "max_error": "最大的单个权重误差",
        "output_error": "这一层输出的相对误差",
        "salient_error": "显著通道权重的误差（均方根）",
        "levels": "量化后不同取值的个数",
        "alpha": "AWQ 搜到的指数 α",
        "alpha.off": "未缩放",
        "group_unused": "粒度不是「每组」时，每组的权重数不起作用。",
        "note": "一个 {rows} × {cols} 的合成权重张量（固定种子）：每行的尺度不同，有 8 个特别大的权重；"
                "{salient} 个输入通道的激活比其他通道大 20 倍（AWQ 说的约 1% 显著通道）。"
                "INT 网格是非对称的：n 位时每组的最小到最大值分成 2ⁿ − 1 步，存一个 FP16 scale 和一个同位宽的零点。"
                "FP8 网格是对称的：每组最大的绝对值缩放到格式的最大值（E4M3 按 OCP 的 E4M3FN，±448；E5M2 为 ±57,344），"
                "每个权重再舍入到最近的 FP8 数。AWQ 把输入通道 j 乘以它平均激活的 α 次方再量化、再除回去，"
                "α 在 0 到 1 的 11 个值里"
                "挑输出误差最小的。输出误差按各通道激活的均方根加权：‖ΔW x‖ ÷ ‖W x‖ 的期望意义。",
        "figure": "权重的分布和量化后的取值",
        "trace.original": "原来的权重",
        "trace.rounded": "量化后的值",
        "axis.x": "权重值",
        "axis.y": "权重个数",
        "alt.levels": "{count} 个不同的值",
        "alt.range": "原权重从 {low} 到 {high}",
    },
    "en": {
        "title": "Quantizing one tensor: the grid, how widely a scale is shared, and AWQ",
        "format": "Format",
        "format=int8": "INT8",
        "format=int4": "INT4",
        "format=fp8-e4m3": "FP8 E4M3",
        "format=fp8-e5m2": "FP8 E5M2",
        "granularity": "Weights sharing one scale",
        "granularity=tensor": "the whole tensor",
        "granularity=channel": "each output channel (row)",
        "granularity=group": "each group",
        "group_size": "Weights per group",
        "scaling": "Scaling",
        "scaling=none": "none",
        "scaling=awq": "AWQ-style (salient channels scaled up by their activations)",
        "bits_per_weight": "Bits per weight (scales and zero points included)",
        "rms_error": "Weight error (RMS)",
        "max_error": "Largest error of one weight",
        "output_error": "Relative error of the layer's output",
        "salient_error": "Error of the salient channels' weights (RMS)",
        "levels": "Distinct values after rounding",
        "alpha": "AWQ's exponent α, as searched",
        "alpha.off": "no scaling",
        "group_unused": "Weights per group has no effect unless the scales are per group.",
        "note": "A synthetic {rows} × {cols} weight tensor (a fixed seed): each row has its own spread, and 8 weights "
                "are far larger than the rest; {salient} input channels have activations 20 times the others' (AWQ's "
                "salient channels, about 1%). Integer grids are asymmetric: each group's range from its smallest to "
                "its largest value is cut into 2ⁿ − 1 steps at n bits, stored as an FP16 scale and a zero point of "
                "the same width. FP8 grids are symmetric: each group's largest magnitude is scaled onto the format's "
                "largest value (E4M3 is OCP's E4M3FN, ±448; E5M2 ±57,344), and each weight rounds to the nearest FP8 "
                "number. AWQ multiplies input channel j by its mean activation to the power α before rounding and "
                "divides it back out after, picking α from 11 values between 0 and 1 for the lowest output error. "
                "The output error weighs each channel by its activations' RMS: the expected ‖ΔW x‖ ÷ ‖W x‖.",
        "figure": "The weights' distribution and the values they were rounded to",
        "trace.original": "original weights",
        "trace.rounded": "after rounding",
        "axis.x": "Weight value",
        "axis.y": "Weights",
        "alt.levels": "{count} distinct values",
        "alt.range": "the original weights run from {low} to {high}",
    },
}

WIDGET = Widget(
    controls=(
        Select("format", default="int4", options=quantization.TENSOR_FORMATS, style="buttons"),
        Select("granularity", default="tensor", options=quantization.GRANULARITIES, style="buttons"),
        Select("group_size", default="128", options=tuple(str(g) for g in quantization.GROUP_SIZES),
               names={str(g): str(g) for g in quantization.GROUP_SIZES}, style="buttons"),
        Select("scaling", default="none", options=("none", "awq"), style="buttons"),
    ),
    layout=(
        Controls(),
        Flag("group_unused", tone="note", controls=("group_size",)),
        Readouts("bits_per_weight", "rms_error", "max_error", "output_error", "salient_error", "levels",
                 "alpha"),
        Figure("figure"),
        Text("note"),
    ),
    slow=True,  # AWQ's search rounds the tensor eleven times: about a quarter of a second in the page
)

BINS = 80


def render(state) -> dict:
    """The quantize-tensor view for any state (invalid values replaced by defaults)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    q = quantization.quantize_tensor(s["format"], s["granularity"], int(s["group_size"]), s["scaling"] == "awq")
    levels = q.distinct_values
    outputs = {
        "rows": output(quantization.ROWS, f"{quantization.ROWS}"),
        "cols": output(quantization.COLS, f"{quantization.COLS}"),
        "salient": output(quantization.SALIENT, f"{quantization.SALIENT}"),
        "bits_per_weight": output(q.bits_per_weight, fmt_sig(q.bits_per_weight, 4)),
        "rms_error": output(q.rms_error, fmt_sig(q.rms_error, 3)),
        "max_error": output(q.max_error, fmt_sig(q.max_error, 3)),
        "output_error": output(q.output_error, fmt_pct(q.output_error, 2)),
        "salient_error": output(q.salient_rms_error, fmt_sig(q.salient_rms_error, 3)),
        "levels": output(levels, f"{levels:,}"),
        "alpha": output(q.alpha, f"{q.alpha:.1f}" if s["scaling"] == "awq" else t["alpha.off"]),
    }
    flags = {"group_unused": s["granularity"] != "group"}
    return view(s, outputs, figures={"figure": histogram_figure(q, s["lang"])}, flags=flags)


def histogram_figure(q: quantization.Quantized, lang: str) -> dict:
    """Bars: how many weights fall in each of BINS bins, before and after rounding, on one axis."""
    t = TEXT[lang]
    original = [w for row in q.original for w in row]
    rounded = [w for row in q.dequantized for w in row]
    low, high = min(original + rounded), max(original + rounded)
    width = (high - low) / BINS

    def counts(values) -> list[int]:
        bins = [0] * BINS
        for v in values:
            bins[min(BINS - 1, int((v - low) / width))] += 1
        return bins

    centres = [round(low + (k + 0.5) * width, 6) for k in range(BINS)]

    def bars(name: str, values, colour: str, opacity: float) -> dict:
        return {"type": "bar", "name": name, "x": centres, "y": counts(values), "width": width,
                "marker": {"color": colour}, "opacity": opacity,
                "hovertemplate": f"{name}<br>%{{x:.4f}}: %{{y}}<extra></extra>"}

    data = [bars(t["trace.original"], original, palette.colour("weights"), 0.55),
            bars(t["trace.rounded"], rounded, palette.colour("decode"), 0.85)]
    layout = palette.plot_layout({
        "barmode": "overlay",
        "xaxis": {"title": {"text": t["axis.x"]}, "fixedrange": True},
        "yaxis": {"title": {"text": t["axis.y"]}, "type": "log", "fixedrange": True, "dtick": 1},  # no minor labels
        "margin": {"l": 56, "r": 16, "t": 24, "b": 48},
        "height": 280,
        "legend": palette.legend_above(),
        "bargap": 0,
        "uirevision": "figure",
    })
    spoken = [t["alt.levels"].format(count=f"{len(set(rounded)):,}"),
              t["alt.range"].format(low=fmt_sig(min(original), 3), high=fmt_sig(max(original), 3))]
    return {"data": data, "layout": layout, "alt": alt.sentence(lang, t["figure"], spoken)}
