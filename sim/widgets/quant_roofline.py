"""Decode with fewer bytes: one step's time in each weight and KV format, against the same step in BF16.

The physics is sim/techniques/quantization.py (its docstring states every convention: what stays in BF16, which formats
multiply at which peak, the dequantization stand-in, the KV formats and what an unfused kernel reads). The figure
draws each weight format's speed-up over BF16 against the batch, with the chosen KV format.
"""

from __future__ import annotations

from sim.kit import Controls, Figure, Flag, Range, Readouts, Select, Text, Widget, alt, choices, output, palette, view
from sim.page.display import fmt_gb, fmt_grouped, fmt_ms, fmt_sig
from sim.physics import presets
from sim.techniques import quantization

TEXT = {
    "zh": {
        "title": "权重和 KV 用更少的字节：decode 一步快多少",
        "weights": "权重格式",
        "weights=bf16": "BF16",
        "weights=fp8": "FP8（W8A8）",
        "weights=int8": "INT8（W8A16）",
        "weights=int4": "INT4（W4A16）",
        "group_size": "INT4 每组权重数（共用一个 scale 和零点）",
        "kv": "KV 格式",
        "kv=bf16": "BF16",
        "kv=fp8": "FP8",
        "kv=int2": "2 bit（KIVI 式）",
        "kv_dequant": "KV 反量化",
        "kv_dequant=fused": "融合进注意力",
        "kv_dequant=unfused": "不融合（先还原成 BF16）",
        "batch": "batch（同时 decode 的请求数）",
        "context": "每个请求已缓存的上下文（token）",
        "step_ms": "decode 一步",
        "bf16_step_ms": "同一步全用 BF16",
        "speedup_vs_bf16": "比全 BF16 快",
        "tokens_per_s": "每个请求的速度",
        "bits_per_weight": "每个量化权重的位数（含 scale）",
        "weights_gb": "一步读的权重",
        "resident_gb": "显存里的整份权重",
        "kv_per_token": "每个 token 的 KV（存储格式）",
        "kv_read_gb": "一步读的 KV（所有请求）",
        "ridge_batch": "权重矩阵乘变成算力受限的 batch",
        "max_requests": "这个上下文下放得下的请求数",
        "fits": "这个 batch 放得下吗",
        "fits.yes": "放得下",
        "fits.no": "放不下",
        "unit.tok_s": "token/s",
        "unit.requests": "{value} 个",
        "memory": "batch {batch} 在一张 {gpu} 上放不下（最多 {max_requests} 个请求）："
                  "这里的时间是假设放得下时的屋顶线值。",
        "no_room": "权重本身就放不下一张 {gpu}：一个请求也装不下。",
        "no_fp8": "{gpu} 没有 FP8 张量核：FP8 权重只能先还原成 16 位再乘（vLLM 在 Ampere 上的做法），"
                  "和 INT8 一样只省读字节。",
        "past_ridge": "batch {batch} 已过这个格式的拐点 {ridge_batch}：矩阵乘变成算力受限，少读的字节不再换来时间。",
        "dequant_unused": "KV 是 BF16 时没有反量化：融合与否对它不起作用。",
        "unfused": "反量化没融合进注意力：注意力读的仍是 BF16 的副本，这一步不会因为 KV 变小而变快，"
                   "只是放得下更多请求。",
        "note": "每一步都是屋顶线下限：峰值算力、满带宽，每个算子各自取界再相加。量化的是解码层里的矩阵乘权重；"
                "LM head、嵌入、MTP 层和视觉塔留在 BF16。W8A8 在有 FP8 张量核的卡上按 FP8 峰值乘"
                "（留在 BF16 的 LM head 仍按 BF16 峰值）；"
                "W8A16、W4A16 先把权重还原成 BF16，按 BF16 峰值乘，"
                "外加每个权重每步 {dequant} 次运算的反量化（我们的取法）。"
                "INT4 每组存一个 FP16 scale 和一个 4 bit 零点；FP8 和 INT8 的逐通道 scale 不到 0.01 bit，没算。"
                "2 bit KV 仿 KIVI：每 32 个元素一个 FP16 scale 和零点（每元素 3 bit），"
                "每个请求最新的 32 个 token 留在 BF16。"
                "递归状态一直是 FP32。",
        "curve": "各种权重格式比 BF16 快多少，随 batch 变化",
        "axis.x": "batch（对数刻度）",
        "axis.y": "比 BF16 快",
        "alt.point": "batch {batch}：{speedup}",
        "alt.head": "{format} 比 BF16 快",
    },
    "en": {
        "title": "Weights and KV in fewer bytes: how much faster a decode step gets",
        "weights": "Weight format",
        "weights=bf16": "BF16",
        "weights=fp8": "FP8 (W8A8)",
        "weights=int8": "INT8 (W8A16)",
        "weights=int4": "INT4 (W4A16)",
        "group_size": "INT4 weights per group (sharing one scale and zero point)",
        "kv": "KV format",
        "kv=bf16": "BF16",
        "kv=fp8": "FP8",
        "kv=int2": "2-bit (KIVI-style)",
        "kv_dequant": "KV dequantization",
        "kv_dequant=fused": "fused into attention",
        "kv_dequant=unfused": "not fused (widened to BF16 first)",
        "batch": "Batch (requests decoding together)",
        "context": "Context cached per request (tokens)",
        "step_ms": "One decode step",
        "bf16_step_ms": "The same step, all in BF16",
        "speedup_vs_bf16": "Faster than all-BF16 by",
        "tokens_per_s": "Speed per request",
        "bits_per_weight": "Bits per quantized weight (scales included)",
        "weights_gb": "Weights read per step",
        "resident_gb": "The whole checkpoint in memory",
        "kv_per_token": "KV per token (as stored)",
        "kv_read_gb": "KV read per step (every request)",
        "ridge_batch": "Batch at which the weight matmuls turn compute-bound",
        "max_requests": "Requests that fit at this context",
        "fits": "Does this batch fit?",
        "fits.yes": "yes",
        "fits.no": "no",
        "unit.tok_s": "tok/s",
        "unit.requests": "{value}",
        "memory": "Batch {batch} does not fit on one {gpu} (at most {max_requests} requests): the times here are the "
                  "roofline's as if it did.",
        "no_room": "The weights alone do not fit on one {gpu}: not a single request fits.",
        "no_fp8": "The {gpu} has no FP8 tensor cores: FP8 weights are widened to 16 bits before multiplying (what vLLM "
                  "does on Ampere), so like INT8 they only save bytes.",
        "past_ridge": "Batch {batch} is past this format's ridge at {ridge_batch}: the matmuls are compute-bound, and "
                      "fewer bytes read no longer buy time.",
        "dequant_unused": "BF16 KV needs no dequantization: fused or not makes no difference to it.",
        "unfused": "Dequantization is not fused into attention: attention still reads a BF16 copy, so the step gets no "
                   "faster from the smaller KV; only more requests fit.",
        "note": "Every step is a roofline lower bound: peak compute, full bandwidth, each operation bounded on its own "
                "and the bounds added. The format applies to the decoder layers' matmul weights; the LM head, the "
                "embedding, the MTP layer and the vision tower stay in BF16. W8A8 multiplies at the FP8 peak on a GPU "
                "with FP8 tensor cores (the LM head, still BF16, at the BF16 peak); W8A16 and W4A16 widen the weights "
                "to BF16 and multiply at the BF16 peak, plus {dequant} operations per weight per step for the "
                "dequantization (our choice of a stand-in). INT4 stores an FP16 scale and a 4-bit zero point per "
                "group; the per-channel scales of FP8 and INT8, under "
                "0.01 bits, are left out. The 2-bit KV follows KIVI: an FP16 scale and zero point per 32 elements "
                "(3 bits per element), each request's newest 32 tokens kept in BF16. The recurrent state is always "
                "FP32.",
        "curve": "How much faster each weight format is than BF16, against the batch",
        "axis.x": "Batch (log scale)",
        "axis.y": "Faster than BF16 by",
        "alt.point": "batch {batch}: {speedup}",
        "alt.head": "{format} against BF16",
    },
}

WIDGET = Widget(
    controls=(
        Select("weights", default="int4", options=quantization.WEIGHT_FORMATS, style="buttons"),
        Select("group_size", default="128", options=tuple(str(g) for g in quantization.INT4_GROUP_SIZES),
               names={str(g): str(g) for g in quantization.INT4_GROUP_SIZES}),
        Select("kv", default="bf16", options=quantization.KV_FORMATS, style="buttons"),
        Select("kv_dequant", default="fused", options=("fused", "unfused"), style="buttons"),
        Range("batch", default=1, min=1, max=2_048, log=True),
        Range("context", default=1_024, min=1, max=131_072, log=True),
        choices.model(),
        choices.hardware(),
    ),
    layout=(
        Controls(),
        Flag("no_room"),
        Flag("memory"),
        Flag("no_fp8", tone="note"),
        Flag("past_ridge", tone="note"),
        Flag("unfused", tone="note"),
        Flag("dequant_unused", tone="note", controls=("kv_dequant",)),
        Readouts("step_ms", "bf16_step_ms", "speedup_vs_bf16", "tokens_per_s", "bits_per_weight", "weights_gb",
                 "resident_gb", "kv_per_token", "kv_read_gb", "ridge_batch", "max_requests",
                 "fits"),
        Figure("curve"),
        Text("note"),
    ),
)

TRACE_NAMES = {"fp8": "FP8", "int8": "INT8", "int4": "INT4"}  # short, so the legend fits a phone on one line
CURVE_BATCHES = tuple(sorted({round(2 ** (k / 4)) for k in range(45)}))  # 1 to 2,048, four points per doubling


def formats(s: dict) -> dict:
    """The quantization module's keyword arguments for this state."""
    return {"weights": s["weights"], "group_size": int(s["group_size"]), "kv": s["kv"],
            "kv_fused": s["kv_dequant"] == "fused"}


def render(state) -> dict:
    """The quant-roofline view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    m, hw = presets.model(s["model"]), presets.hardware(s["hardware"])
    f = formats(s)
    b, ctx, w, g = s["batch"], s["context"], f["weights"], f["group_size"]
    step = quantization.decode(m, hw, b, ctx, **f)
    base = quantization.decode(m, hw, b, ctx)
    speedup = base.time_s / step.time_s
    ridge = quantization.ridge_batch(m, hw, w, g)
    fit = quantization.max_requests(m, hw, ctx, w, g, f["kv"])
    bits = quantization.weight_bits(w, g)
    read = quantization.matmul_weight_bytes(m, w, g)
    resident = quantization.resident_weight_bytes(m, w, g)
    # stored bytes per token past KIVI's BF16 window (the same at any context for BF16 and FP8)
    per_token = quantization.kv_elements_per_token(m) * quantization.kv_bits(f["kv"]) / 8
    kv_read = step.op("attention").bytes if step.op("attention") else 0
    outputs = {
        "gpu": output(0, hw.short_name),
        "batch": output(b, fmt_grouped(b)),
        "dequant": output(quantization.DEQUANT_FLOPS_PER_WEIGHT, f"{quantization.DEQUANT_FLOPS_PER_WEIGHT}"),
        "step_ms": output(step.time_s * 1e3, fmt_ms(step.time_s)),
        "bf16_step_ms": output(base.time_s * 1e3, fmt_ms(base.time_s)),
        "speedup_vs_bf16": output(speedup, f"{speedup:.2f}×"),
        "tokens_per_s": output(1 / step.time_s, f"{fmt_sig(1 / step.time_s, 3)} {t['unit.tok_s']}"),
        "bits_per_weight": output(bits, fmt_sig(bits, 4)),
        "weights_gb": output(read / 1e9, fmt_gb(read)),
        "resident_gb": output(resident / 1e9, fmt_gb(resident)),
        "kv_per_token": output(per_token, f"{fmt_grouped(per_token)} B"),
        "kv_read_gb": output(kv_read / 1e9, fmt_gb(kv_read)),
        "ridge_batch": output(ridge, fmt_grouped(ridge)),
        "max_requests": output(fit, t["unit.requests"].format(value=fmt_grouped(fit))),
        "fits": output(int(b <= fit), t["fits.yes" if b <= fit else "fits.no"]),
    }
    derivations = {
        "speedup_vs_bf16": f"{fmt_ms(base.time_s)} ÷ {fmt_ms(step.time_s)} = {speedup:.2f}×",
        "bits_per_weight": f"4 + (16 + 4) ÷ {g} = {fmt_sig(bits, 4)}" if w == "int4" else f"{fmt_sig(bits, 4)}",
    }
    flags = {
        "no_room": fit == 0,
        "memory": 0 < fit < b,
        "no_fp8": w == "fp8" and hw.fp8_peak_flops_per_s is None,
        "past_ridge": w != "bf16" and b >= ridge,
        "unfused": f["kv"] != "bf16" and not f["kv_fused"],
        "dequant_unused": f["kv"] == "bf16",
    }
    return view(s, outputs, figures={"curve": curve_figure(m, hw, s, f)}, flags=flags, derivations=derivations)


def curve_figure(m, hw, s: dict, f: dict) -> dict:
    """Each quantized weight format's speed-up over all-BF16 against the batch, the chosen format drawn thick."""
    t = TEXT[s["lang"]]
    xs = list(CURVE_BATCHES)
    colours = {"fp8": "prefill", "int8": "kv", "int4": "decode"}
    curves = {}
    for w in colours:
        fw = {**f, "weights": w}
        curves[w] = [quantization.decode(m, hw, b, s["context"]).time_s
                     / quantization.decode(m, hw, b, s["context"], **fw).time_s for b in xs]
    data = []
    for w, ys in curves.items():
        name = TRACE_NAMES[w]
        chosen = w == f["weights"]
        data.append({"type": "scatter", "mode": "lines", "name": name, "x": xs, "y": [round(y, 4) for y in ys],
                     "line": {"color": palette.colour(colours[w]), "width": 3 if chosen else 1.5,
                              "dash": "solid" if chosen else "dot"},
                     "hovertemplate": f"{name}<br>batch %{{x}}: %{{y:.2f}}×<extra></extra>"})
    data.append({"type": "scatter", "mode": "lines", "name": "1×", "x": xs, "y": [1.0] * len(xs),
                 "line": {"color": palette.colour("muted"), "dash": "dash", "width": 1.5}, "hoverinfo": "skip"})
    if f["weights"] in curves:  # the chosen batch on the chosen format's curve
        here = quantization.decode(m, hw, s["batch"], s["context"]).time_s \
            / quantization.decode(m, hw, s["batch"], s["context"], **f).time_s
        data.append({"type": "scatter", "mode": "markers", "x": [s["batch"]], "y": [round(here, 4)],
                     "showlegend": False,
                     "marker": {"color": palette.colour(colours[f["weights"]]), "size": 10}, "hoverinfo": "skip"})
    layout = palette.plot_layout({
        "xaxis": {"title": {"text": t["axis.x"]}, "type": "log", "fixedrange": True, "dtick": 1},  # no minor labels
        "yaxis": {"title": {"text": t["axis.y"]}, "rangemode": "tozero", "fixedrange": True},
        "margin": {"l": 56, "r": 16, "t": 24, "b": 48},
        "height": 300,
        "legend": palette.legend_above(),
        "uirevision": "curve",
    })
    shown = f["weights"] if f["weights"] in curves else "int4"
    marks = (1, 16, 64, 256, 1024)
    spoken = [t["alt.point"].format(batch=b, speedup=f"{curves[shown][xs.index(b)]:.2f}×") for b in marks]
    return {"data": data, "layout": layout,
            "alt": alt.sentence(s["lang"], t["alt.head"].format(format=t[f"weights={shown}"]), spoken)}
