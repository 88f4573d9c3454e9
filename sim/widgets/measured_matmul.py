"""A real matmul beside its roofline: Vidur's measured times of one Llama-2-7B weight matmul on an A100 and an
H100, against the number of tokens it multiplies, with the datasheet's bound over them and the bound at the
fractions the measurement reaches (sim/physics/measured.py: the achieved bandwidth read at 1 token, the achieved FLOP
rate at 4,096, and the knee where the two meet).
"""

from __future__ import annotations

from sim.kit import Controls, Figure, Readouts, Select, Text, Widget, alt, output, palette, view
from sim.page.display import fmt_grouped, fmt_pct, fmt_sig
from sim.physics import measured, presets

TEXT = {
    "zh": {
        "title": "实测的矩阵乘：A100 和 H100 上的时间对照屋顶线",
        "gpu": "GPU（Vidur 测的那块）",
        "op": "Llama-2-7B 一层里的哪个矩阵乘",
        "op=attn_pre_proj": "QKV（4,096 × 12,288）",
        "op=attn_post_proj": "O（4,096 × 4,096）",
        "op=mlp_up_proj": "gate + up（4,096 × 22,016）",
        "op=mlp_down_proj": "down（11,008 × 4,096）",
        "flat": "1 个 token 的实测时间",
        "flat_ratio": "64 个 token ÷ 1 个 token 的时间",
        "bandwidth_fraction": "1 个 token 时达到的带宽（占数据手册的比例）",
        "compute_fraction": "4,096 个 token 时达到的算力（占数据手册的比例）",
        "knee_bound": "屋顶线的拐点（数据手册）",
        "knee_achieved": "按实测比例算的拐点",
        "unit.tokens": "{value} 个 token",
        "datasheet": "（{gpu} SXM 的数据手册）",
        "trace.measured": "实测（Vidur，中位数）",
        "trace.bound": "屋顶线（数据手册）",
        "trace.achieved": "屋顶线 × 实测比例",
        "axis.x": "一次乘的 token 数（对数刻度）",
        "axis.y": "时间（毫秒，对数刻度）",
        "figure": "矩阵乘时间随 token 数的变化",
        "alt.point": "{tokens} 个 token：实测 {measured} 毫秒，屋顶线 {bound} 毫秒",
        "note": "数据：microsoft/vidur（MIT 许可）的 data/profiling/compute，FP16，单卡，每个点是 2 次预热后 20 次"
                "计时的中位数。屋顶线按 FP16 每个元素 2 字节、每个操作数读一次、结果写一次算。"
                "Vidur 没写测的是 SXM 还是 PCIe 版（它的文档说 a100 的数据同时用于 A100 80GB PCIe 节点和 "
                "A100 DGX），这里按 SXM 版的数据手册画屋顶线。",
    },
    "en": {
        "title": "A measured matmul: its time on an A100 and an H100 against the roofline",
        "gpu": "GPU (the one Vidur measured)",
        "op": "Which matmul of a Llama-2-7B layer",
        "op=attn_pre_proj": "QKV (4,096 × 12,288)",
        "op=attn_post_proj": "O (4,096 × 4,096)",
        "op=mlp_up_proj": "gate + up (4,096 × 22,016)",
        "op=mlp_down_proj": "down (11,008 × 4,096)",
        "flat": "Measured time at 1 token",
        "flat_ratio": "Time at 64 tokens ÷ time at 1 token",
        "bandwidth_fraction": "Bandwidth reached at 1 token (share of the datasheet's)",
        "compute_fraction": "FLOP rate reached at 4,096 tokens (share of the datasheet's)",
        "knee_bound": "The roofline's knee (datasheet)",
        "knee_achieved": "The knee at the measured shares",
        "unit.tokens": "{value} tokens",
        "datasheet": " (the {gpu} SXM datasheet)",
        "trace.measured": "measured (Vidur, median)",
        "trace.bound": "roofline (datasheet)",
        "trace.achieved": "roofline × measured shares",
        "axis.x": "Tokens multiplied at once (log scale)",
        "axis.y": "Time (ms, log scale)",
        "figure": "Matmul time against the number of tokens",
        "alt.point": "{tokens} tokens: measured {measured} ms, roofline {bound} ms",
        "note": "Data: microsoft/vidur (MIT licence), data/profiling/compute, FP16, one GPU; each point is the median "
                "of 20 timed runs after 2 warm-up runs. The roofline counts 2 bytes per FP16 element, each operand "
                "read once and the result written once. Vidur does not say whether it measured the SXM or the PCIe "
                "part (its docs use the a100 data for both an A100 80GB PCIe node and an A100 DGX); the roofline here "
                "is the SXM datasheets'.",
    },
}

WIDGET = Widget(
    controls=(
        Select("gpu", default="a100", options=tuple(measured.VIDUR_GPUS), style="buttons",
               names={g: presets.hardware(k).short_name for g, k in measured.VIDUR_GPUS.items()}),
        Select("op", default="mlp_up_proj", options=tuple(measured.VIDUR_OPS)),
    ),
    layout=(
        Controls(),
        Readouts("flat", "flat_ratio", "bandwidth_fraction", "compute_fraction", "knee_bound", "knee_achieved"),
        Figure("figure"),
        Text("note"),
    ),
)

SPOKEN_TOKENS = (1, 64, 256, 1024, 4096)  # the points the figure's text alternative reads out


def render(state) -> dict:
    """The measured-matmul view for any state (invalid values replaced by defaults)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    gpu, op = s["gpu"], s["op"]
    hw = presets.hardware(measured.VIDUR_GPUS[gpu])
    inner, cols = measured.matmul_shape(op)
    bw, fl = measured.achieved_fractions(gpu, op)
    flat = measured.measured_s(gpu, op, measured.FLAT_TOKENS)
    ratio = measured.measured_s(gpu, op, 64) / flat
    full = measured.measured_s(gpu, op, measured.FULL_TOKENS)
    knee, achieved = measured.knee_tokens(hw, op), measured.knee_tokens(hw, op, bw, fl)
    tokens = t["unit.tokens"]
    outputs = {
        "flat": output(flat * 1e3, f"{fmt_sig(flat * 1e3)} ms"),
        "flat_ratio": output(ratio, f"{ratio:.2f}×"),
        "bandwidth_fraction": output(bw, fmt_pct(bw)),
        "compute_fraction": output(fl, fmt_pct(fl)),
        "knee_bound": output(knee, tokens.format(value=fmt_grouped(knee))),
        "knee_achieved": output(achieved, tokens.format(value=fmt_grouped(achieved))),
    }
    flat_bytes = 2 * (inner + inner * cols + cols)
    full_flops = 2 * measured.FULL_TOKENS * inner * cols
    bandwidth_tb = hw.bandwidth_bytes_per_s / 1e12
    peak_tf = hw.peak_flops_per_s / 1e12
    sheet = t["datasheet"].format(gpu=hw.short_name)
    derivations = {
        "bandwidth_fraction": f"2 × ({fmt_grouped(inner)} + {fmt_grouped(inner)} × {fmt_grouped(cols)} + "
                              f"{fmt_grouped(cols)}) B = {fmt_sig(flat_bytes / 1e6, 4)} MB; "
                              f"{fmt_sig(flat_bytes / 1e6, 4)} MB ÷ {fmt_sig(flat * 1e3)} ms = "
                              f"{fmt_sig(flat_bytes / flat / 1e12)} TB/s; ÷ {_rate(bandwidth_tb)} TB/s{sheet} = "
                              f"{fmt_pct(bw)}",
        "compute_fraction": f"2 × {fmt_grouped(measured.FULL_TOKENS)} × {fmt_grouped(inner)} × {fmt_grouped(cols)} = "
                            f"{fmt_sig(full_flops / 1e12, 4)} TFLOP; ÷ {fmt_sig(full * 1e3)} ms = "
                            f"{fmt_sig(full_flops / full / 1e12)} TFLOP/s; ÷ {_rate(peak_tf)} TFLOP/s{sheet} = "
                            f"{fmt_pct(fl)}",
        "knee_bound": _knee_text(inner, cols, bandwidth_tb, peak_tf, knee),
        "knee_achieved": _knee_text(inner, cols, bandwidth_tb * bw, peak_tf * fl, achieved),
    }
    return view(s, outputs, figures={"figure": figure(gpu, op, hw, bw, fl, s)}, derivations=derivations)


def _rate(x: float) -> str:
    """A rate to four significant digits, without a trailing zero (312, 2.039, 222.2)."""
    text = fmt_sig(x, 4)
    return text.rstrip("0").rstrip(".") if "." in text else text


def _knee_text(inner: int, cols: int, bandwidth_tb: float, peak_tf: float, knee: float) -> str:
    """T = (KN / B) / (KN / P - (K + N) / B) with its numbers."""
    return (f"T = (K·N ÷ B) ÷ (K·N ÷ P − (K + N) ÷ B), K = {fmt_grouped(inner)}, N = {fmt_grouped(cols)}, "
            f"B = {_rate(bandwidth_tb)} TB/s, P = {_rate(peak_tf)} TFLOP/s: T = {fmt_grouped(knee)}")


def figure(gpu: str, op: str, hw, bw: float, fl: float, s: dict) -> dict:
    t = TEXT[s["lang"]]
    points = measured.matmul_times(gpu, op)
    xs = [n for n, _ in points]
    measured_ms = [sec * 1e3 for _, sec in points]
    bound = [measured.matmul_bound_s(hw, op, n) * 1e3 for n in xs]
    achieved = [measured.matmul_bound_s(hw, op, n, bw, fl) * 1e3 for n in xs]
    data = [
        {"type": "scatter", "mode": "lines", "name": t["trace.bound"], "x": xs, "y": bound,
         "line": {"color": palette.colour("roof"), "width": 2},
         "hovertemplate": f"{t['trace.bound']}<br>%{{x:,}}: %{{y:.3f}} ms<extra></extra>"},
        {"type": "scatter", "mode": "lines", "name": t["trace.achieved"], "x": xs, "y": achieved,
         "line": {"color": palette.colour("muted"), "width": 2, "dash": "dash"},
         "hovertemplate": f"{t['trace.achieved']}<br>%{{x:,}}: %{{y:.3f}} ms<extra></extra>"},
        {"type": "scatter", "mode": "markers", "name": t["trace.measured"], "x": xs, "y": measured_ms,
         "marker": {"color": palette.colour("prefill"), "size": 5},
         "hovertemplate": f"{t['trace.measured']}<br>%{{x:,}}: %{{y:.3f}} ms<extra></extra>"},
    ]
    layout = palette.plot_layout({
        "xaxis": {"title": {"text": t["axis.x"]}, "type": "log", "fixedrange": True, "dtick": 1},
        "yaxis": {"title": {"text": t["axis.y"]}, "type": "log", "fixedrange": True, "dtick": 1},
        "margin": {"l": 56, "r": 16, "t": 24, "b": 48},
        "height": 340,
        "legend": palette.legend_above(),
        "uirevision": "figure",
    })
    by_tokens = dict(points)
    spoken = [t["alt.point"].format(tokens=fmt_grouped(n), measured=fmt_sig(by_tokens[n] * 1e3),
                                    bound=fmt_sig(measured.matmul_bound_s(hw, op, n) * 1e3))
              for n in SPOKEN_TOKENS]
    return {"data": data, "layout": layout, "alt": alt.sentence(s["lang"], t["figure"], spoken)}
