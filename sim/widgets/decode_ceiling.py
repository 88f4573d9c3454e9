"""Decode ceiling: one request's tokens/s can never beat bandwidth ÷ weight bytes, whatever the compute.

Convention (sim/serving/serving.py): batch 1, weights only; each step reads every matmul weight once and
does 2 FLOPs per weight. KV and recurrent-state traffic would only lower the ceiling.
A preset model counts its exact matmul parameters (the `params_b` field shows them rounded to
whole billions); a custom model has exactly params_b billion parameters.

The ceiling is bandwidth-bound by definition, so the GPU's achieved bandwidth (`bandwidth_efficiency`,
achieved ÷ peak) scales it; the ridge point and the GPU ratios stay the datasheet's.

Capacity (sim/kit/capacity.py): the weights held in memory are the whole checkpoint in the chosen format for a
preset, the weights read per token for a custom model. When they do not fit on one GPU, the ceiling and the time
per token are those of the fewest GPUs that hold them, in tensor parallel: each GPU holds and reads 1/N of the
weights at once, so the ceiling is one GPU's bandwidth ÷ (weights ÷ N), the roofline's ideal before any
communication between the GPUs.
"""

from __future__ import annotations

from sim.kit import (
    Controls,
    Figure,
    Flag,
    Range,
    Readout,
    Readouts,
    Select,
    Text,
    Widget,
    alt,
    capacity,
    choices,
    output,
    palette,
    view,
)
from sim.page.display import fmt_bytes, fmt_grouped, fmt_ms, fmt_sig
from sim.physics import memory, model_size, presets, roofline
from sim.serving import serving

TEXT = {
    "zh": {
        "title": "decode 的天花板：带宽 ÷ 模型大小",
        "params_b": "参数量（十亿，B）",
        "weight_dtype": "权重精度",
        "weight_dtype=bf16": "BF16 · 2 字节",
        "weight_dtype=fp8": "FP8 · 1 字节",
        "weight_dtype=int4": "INT4 · 0.5 字节",
        "note": "单个请求（batch 1），只算权重：每生成 1 个 token 都要把全部矩阵权重从显存读一遍。"
                "选预设模型时按它精确的矩阵参数数计算，参数量一栏只显示取整后的十亿数；改这一栏就换成「自定义」。",
        "weights_gb": "每个 token 读的权重",
        "ceiling_tokens_per_s": "单请求速度上限",
        "step_ms": "每个 token 至少要",
        "intensity": "decode 算术强度（只算权重）",
        "ridge": "这张卡的拐点",
        "gap": "拐点是 decode 强度的几倍",
        "compute_vs_a100": "算力是 A100 的",
        "decode_vs_a100": "decode 上限是 A100 的",
        "ratios": "四张 GPU 的峰值算力与 decode 上限，都以 A100 为 1 倍",
        "alt.gpu": "{gpu} 算力 ×{compute}、decode 上限 ×{decode}",
        "tensor_parallel": "所以下面的速度上限和每个 token 的时间按 {gpus_needed} 张卡张量并行计算：每张卡只存、只读"
                           "权重的 1/{gpus_needed}，各卡同时读，上限 = 单卡带宽 ÷（权重 ÷ 卡数）。"
                           "这是屋顶线的理想值：卡与卡之间交换激活的通信时间没有算进去，实际只会更慢。",
        "gpus.one": "单张 {gpu}",
        "gpus.many": "{n} 张 {gpu} 张量并行（理想值）",
        "unit.params": "参数",
        "unit.per_param": "FLOP/参数",
        "unit.bytes_per_param": "B/参数",
        "trace.compute": "峰值算力",
        "trace.decode": "decode 上限（带宽）",
        "axis.y": "相对 A100 的倍数",
    },
    "en": {
        "title": "The decode ceiling: bandwidth ÷ model size",
        "params_b": "Parameters (billions)",
        "weight_dtype": "Weight format",
        "weight_dtype=bf16": "BF16 · 2 bytes",
        "weight_dtype=fp8": "FP8 · 1 byte",
        "weight_dtype=int4": "INT4 · 0.5 byte",
        "note": "One request (batch 1), weights only: every token reads all matmul weights from memory once. "
                "A preset counts its exact matmul parameters (the field shows them rounded to billions); "
                "editing the field switches to Custom.",
        "weights_gb": "Weights read per token",
        "ceiling_tokens_per_s": "Ceiling for one request",
        "step_ms": "Each token takes at least",
        "intensity": "Decode intensity (weights only)",
        "ridge": "This GPU's ridge point",
        "gap": "Ridge over decode intensity",
        "compute_vs_a100": "Compute vs A100",
        "decode_vs_a100": "Decode ceiling vs A100",
        "ratios": "Peak compute and decode ceiling of four GPUs, as multiples of an A100",
        "alt.gpu": "{gpu} compute ×{compute}, decode ceiling ×{decode}",
        "tensor_parallel": "So the ceiling and the time per token below are for {gpus_needed} GPUs in tensor "
                           "parallel: each holds and reads only 1/{gpus_needed} of the weights, all at once, so the "
                           "ceiling = one GPU's bandwidth ÷ (weights ÷ GPUs). That is the roofline's ideal: the time "
                           "the GPUs spend exchanging activations is not counted, so a real run is slower.",
        "gpus.one": "one {gpu}",
        "gpus.many": "{n} × {gpu} in tensor parallel (ideal)",
        "unit.params": "params",
        "unit.per_param": "FLOP/param",
        "unit.bytes_per_param": "B/param",
        "trace.compute": "Peak compute",
        "trace.decode": "Decode ceiling (bandwidth)",
        "axis.y": "Times an A100",
    },
}

BASE_GPU = "a100-sxm-80gb"  # the GPU the ratios are taken against, as in the reference lesson
MODEL_FIELDS = ("params_b",)  # what picking a preset fills in

WIDGET = Widget(
    controls=(
        choices.model("llama-2-7b", custom=True),
        Range("params_b", default=7, min=1, max=1_000, log=True),
        Select("weight_dtype", default="bf16", options=("bf16", "fp8", "int4"), style="buttons"),
        choices.hardware(BASE_GPU),
        choices.bandwidth_efficiency(),
    ),
    layout=(
        Controls(),
        Text("note"),
        Flag("capacity"),
        Flag("tensor_parallel", tone="note"),
        Readouts("weights_gb", Readout("ceiling_tokens_per_s", note="gpus"), Readout("step_ms", note="gpus"),
                 "intensity", "ridge", "gap", "compute_vs_a100", "decode_vs_a100"),
        Figure("ratios"),
    ),
)


def render(state) -> dict:
    """The decode-ceiling view for any state (invalid values replaced by defaults or clamped)."""
    s = settle_model(WIDGET.coerce(state), WIDGET.changed(state))
    t = TEXT[s["lang"]]
    spec, base = presets.hardware(s["hardware"]), presets.hardware(BASE_GPU)
    hw = choices.gpu(s)  # the bandwidth its kernels reach
    n = count_params(s)
    weights = serving.weight_bytes(n, s["weight_dtype"])
    held = resident_bytes(s, weights)
    gpus = memory.gpus_for_weights(held, hw)
    ceiling = serving.decode_ceiling_tokens_per_s(hw, weights / gpus)  # each GPU reads its 1/gpus at once
    step_s = 1 / ceiling
    intensity = serving.weights_only_decode_intensity(s["weight_dtype"])
    ridge = roofline.ridge_point(spec)
    gap = ridge / intensity
    compute_x, decode_x = serving.compute_ratio(spec, base), serving.bandwidth_ratio(spec, base)
    bytes_per_param = serving.WEIGHT_DTYPE_BYTES[s["weight_dtype"]]
    bw_t, peak_t = f"{spec.bandwidth_bytes_per_s / 1e12:g} TB/s", f"{spec.peak_flops_per_s / 1e12:g} TFLOP/s"
    efficiency = s["bandwidth_efficiency"]
    achieved_t = bw_t if efficiency == 1 else f"{efficiency:g} × {bw_t}"
    share_t = fmt_bytes(weights) if gpus == 1 else f"({fmt_bytes(weights)} ÷ {gpus})"
    gpus_t = (t["gpus.one"] if gpus == 1 else t["gpus.many"]).format(n=gpus, gpu=spec.short_name)

    outputs = {
        **capacity.outputs(held, hw),
        "gpus": output(gpus, gpus_t),
        "weights_gb": output(weights / 1e9, fmt_bytes(weights)),
        "ceiling_tokens_per_s": output(ceiling, f"{fmt_sig(ceiling, 4)} tok/s"),
        "step_ms": output(step_s * 1e3, fmt_ms(step_s)),
        "intensity": output(intensity, f"{fmt_sig(intensity)} FLOP/B"),
        "ridge": output(ridge, f"{fmt_sig(ridge, 4)} FLOP/B"),
        "gap": output(gap, f"{fmt_sig(gap)}×"),
        "compute_vs_a100": output(compute_x, f"×{compute_x:.2f}"),
        "decode_vs_a100": output(decode_x, f"×{decode_x:.2f}"),
    }
    derivations = {
        "weights_gb": f"{fmt_grouped(n)} {t['unit.params']} × {bytes_per_param:g} B = {fmt_bytes(weights)}",
        "ceiling_tokens_per_s": f"{achieved_t} ÷ {share_t} = {fmt_sig(ceiling, 4)} tok/s",
        "step_ms": f"{share_t} ÷ {achieved_t if efficiency == 1 else f'({achieved_t})'} = {fmt_ms(step_s)}",
        "intensity": f"2 {t['unit.per_param']} ÷ {bytes_per_param:g} {t['unit.bytes_per_param']} "
                     f"= {fmt_sig(intensity)} FLOP/B",
        "ridge": f"{peak_t} ÷ {bw_t} = {fmt_sig(ridge, 4)} FLOP/B",
        "gap": f"{fmt_sig(ridge, 4)} ÷ {fmt_sig(intensity)} = {fmt_sig(gap)}×",
        "compute_vs_a100": f"{spec.peak_flops_per_s / 1e12:g} ÷ {base.peak_flops_per_s / 1e12:g} "
                           f"= ×{compute_x:.2f}",
        "decode_vs_a100": f"{spec.bandwidth_bytes_per_s / 1e12:g} ÷ {base.bandwidth_bytes_per_s / 1e12:g} "
                          f"= ×{decode_x:.2f}",
    }
    too_big = not capacity.fits(held, hw)
    return view(s, outputs, figures={"ratios": ratio_figure(spec, base, s["lang"])},
                flags={"capacity": too_big, "tensor_parallel": too_big}, derivations=derivations)


def settle_model(s: dict, changed: str | None) -> dict:
    """The state with a preset's fields filled in, or the model switched to custom if a field was just edited."""
    s = dict(s)
    if changed in MODEL_FIELDS:
        s["model"] = choices.CUSTOM
    if s["model"] != choices.CUSTOM:
        s["params_b"] = WIDGET.control("params_b").coerce(model_size.matmul_params(presets.model(s["model"])) / 1e9)
    return s


def count_params(s: dict) -> int:
    """Weights read per token: a preset's exact matmul parameters, or params_b billion for a custom model."""
    if s["model"] == choices.CUSTOM:
        return s["params_b"] * 10**9
    return model_size.matmul_params(presets.model(s["model"]))


def resident_bytes(s: dict, weights: float) -> float:
    """The weights held in memory: a preset's whole checkpoint in the chosen format, a custom model's weights."""
    if s["model"] == choices.CUSTOM:
        return weights
    return serving.weight_bytes(model_size.resident_params(presets.model(s["model"])), s["weight_dtype"])


def ratio_figure(hw: presets.Hardware, base: presets.Hardware, lang: str) -> dict:
    """Grouped bars: each GPU's compute and bandwidth as multiples of base's, the chosen GPU highlighted."""
    t = TEXT[lang]
    gpus = [presets.hardware(k) for k in presets.hardware_keys()]
    names = [g.short_name for g in gpus]
    opacity = [1.0 if g.key == hw.key else 0.45 for g in gpus]

    def bars(name: str, ratios: list[float], colour: str) -> dict:
        return {
            "type": "bar", "name": name, "x": names, "y": [round(r, 4) for r in ratios],
            "text": [f"×{r:.2f}" for r in ratios], "textposition": "outside", "cliponaxis": False,
            "marker": {"color": colour, "opacity": opacity},
            "hovertemplate": f"{name}<br>%{{x}}: ×%{{y:.2f}}<extra></extra>",
        }

    data = [
        bars(t["trace.compute"], [serving.compute_ratio(g, base) for g in gpus], palette.colour("peak")),
        bars(t["trace.decode"], [serving.bandwidth_ratio(g, base) for g in gpus], palette.colour("decode")),
    ]
    layout = palette.plot_layout({
        "barmode": "group",
        "yaxis": {"title": {"text": t["axis.y"]}, "rangemode": "tozero", "fixedrange": True},
        "xaxis": {"fixedrange": True},
        "margin": {"l": 56, "r": 16, "t": 24, "b": 40},
        "height": 300,
        "legend": palette.legend_above(),
        "uirevision": "ratios",
    })
    spoken = [t["alt.gpu"].format(gpu=g.short_name, compute=f"{serving.compute_ratio(g, base):.2f}",
                                  decode=f"{serving.bandwidth_ratio(g, base):.2f}") for g in gpus]
    return {"data": data, "layout": layout, "alt": alt.sentence(lang, t["ratios"], spoken)}
