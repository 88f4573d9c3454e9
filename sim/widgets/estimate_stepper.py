"""Estimate stepper: design a speed estimate yourself in three steps (count FLOPs, see it fail, count bytes).

Like every widget with a model and a GPU it carries the shared capacity flag (sim/kit/capacity.py), raised when
the whole checkpoint does not fit in the GPU's memory; no preset pair raises it today.
"""

from __future__ import annotations

from sim.kit import Controls, Flag, Output, Panel, Readouts, Select, Text, Widget, capacity, choices, output, view
from sim.page.display import fmt_bytes, fmt_grouped, fmt_ms, fmt_sig
from sim.physics import model_size, presets
from sim.serving import request

STEPS = ("naive", "fails", "improved")

BASELINE = "h100-sxm"  # every GPU is compared with the one the lesson's figures are quoted on

# Simple fractions (and whole multiples) a ratio may be called by, with the TEXT key of their words. A ratio
# gets the words only when it is within NAME_TOLERANCE of the fraction, in units of the baseline (0.03 = three
# percent of the H100 figure).
NAMED_RATIOS = (
    (1 / 5, "ratio=1/5"),
    (1 / 4, "ratio=1/4"),
    (1 / 3, "ratio=1/3"),
    (2 / 5, "ratio=2/5"),
    (1 / 2, "ratio=1/2"),
    (3 / 5, "ratio=3/5"),
    (2 / 3, "ratio=2/3"),
    (3 / 4, "ratio=3/4"),
    (4 / 5, "ratio=4/5"),
    (1, "ratio=1"),
    (2, "ratio=2"),
    (3, "ratio=3"),
    (4, "ratio=4"),
    (5, "ratio=5"),
)
NAME_TOLERANCE = 0.03

TEXT = {
    "zh": {
        "title": "生成 1 个 token 要多久：先自己估一估",
        "step": "三步",
        "step=naive": "① 朴素方案",
        "step=fails": "② 它在哪失败",
        "step=improved": "③ 改进方案",
        "heading.naive": "① 朴素方案：只按算力估",
        "heading.fails": "② 它在哪失败：单个用户实际看到的速度",
        "heading.improved": "③ 改进方案：按字节估",
        "intro.naive": "每个矩阵乘参数对新 token 做一次乘加（2 FLOP），把这些 FLOPs 除以显卡的峰值算力：",
        "intro.improved": "每出 1 个 token 都要把矩阵乘权重从显存读一遍，把这些字节除以显存带宽：",
        "naive_ms": "每个 token 的时间（只算 FLOPs）",
        "naive_tokens_per_s": "按算力估的生成速度",
        "naive_vs_h100": "与 H100 相比（按算力）",
        "overestimate": "朴素方案高估了",
        "utilisation": "batch 1 时算力用上的比例",
        "bytes_ms": "每个 token 的时间（只算读权重）",
        "bytes_tokens_per_s": "按字节估的生成速度",
        "bytes_vs_h100": "与 H100 相比（按带宽）",
        "same": "1×（与 {base} 相同）", "named": "约 {r}×（{name}）", "plain": "约 {r}×", "tok_s": "{x} tok/s",
        "over": "约 {x}×",
        "fails_note": "单个用户每秒只收到约 {actual} 个 token，不是 {naive} 个：每出 1 个 token 都要把 {weights} "
                      "权重从显存读一遍，{bw} TB/s 下要 {bytes_ms}；"
                      "真正的计算只要 {naive_ms}，其余时间算力都在等数据。",
        "weights": "{n} × {bpp} B = {b}", "then": "；",
        "ratio=1/5": "约五分之一",
        "ratio=1/4": "约四分之一",
        "ratio=1/3": "约三分之一",
        "ratio=2/5": "约五分之二",
        "ratio=1/2": "约一半",
        "ratio=3/5": "约五分之三",
        "ratio=2/3": "约三分之二",
        "ratio=3/4": "约四分之三",
        "ratio=4/5": "约五分之四",
        "ratio=1": "与 {base} 相差无几",
        "ratio=2": "约两倍",
        "ratio=3": "约三倍",
        "ratio=4": "约四倍",
        "ratio=5": "约五倍",
    },
    "en": {
        "title": "How long does one token take? Estimate it yourself",
        "step": "Three steps",
        "step=naive": "① Naive estimate",
        "step=fails": "② Where it fails",
        "step=improved": "③ Improved estimate",
        "heading.naive": "① Naive: count FLOPs only",
        "heading.fails": "② Where it fails: what a single user sees",
        "heading.improved": "③ Improved: count bytes",
        "intro.naive": "Each matmul parameter does one multiply-add (2 FLOPs) for the new token; divide those FLOPs "
                       "by the GPU's peak:",
        "intro.improved": "Every token reads the matmul weights from memory once; divide those bytes by the memory "
                          "bandwidth:",
        "naive_ms": "Time per token (FLOPs only)",
        "naive_tokens_per_s": "Speed by compute",
        "naive_vs_h100": "Against H100 (by compute)",
        "overestimate": "The naive estimate is too high by",
        "utilisation": "Compute used at batch 1",
        "bytes_ms": "Time per token (weight reads only)",
        "bytes_tokens_per_s": "Speed by bytes",
        "bytes_vs_h100": "Against H100 (by bandwidth)",
        "same": "1× (same as {base})", "named": "about {r}× ({name})", "plain": "about {r}×",
        "tok_s": "{x} tok/s", "over": "about {x}×",
        "fails_note": "A single user receives about {actual} tokens per second, not {naive}: every token needs the "
                      "whole {weights} of weights read from memory, {bytes_ms} at {bw} TB/s, while the arithmetic "
                      "takes only {naive_ms}. The rest of the time the compute units wait for data.",
        "weights": "{n} × {bpp} B = {b}", "then": "; ",
        "ratio=1/5": "about a fifth",
        "ratio=1/4": "about a quarter",
        "ratio=1/3": "about a third",
        "ratio=2/5": "about two-fifths",
        "ratio=1/2": "about half",
        "ratio=3/5": "about three-fifths",
        "ratio=2/3": "about two-thirds",
        "ratio=3/4": "about three-quarters",
        "ratio=4/5": "about four-fifths",
        "ratio=1": "close to {base}",
        "ratio=2": "about twice",
        "ratio=3": "about three times",
        "ratio=4": "about four times",
        "ratio=5": "about five times",
    },
}

WIDGET = Widget(
    controls=(
        Select("step", "naive", STEPS, style="buttons"),
        choices.hardware(),
        choices.model(),
    ),
    layout=(
        Controls(),
        Flag("capacity"),
        Panel("step_naive", "heading.naive",
              Text("intro.naive", tone="body"),
              Readouts("naive_ms", "naive_tokens_per_s", "naive_vs_h100")),
        Panel("step_fails", "heading.fails",
              Output("fails_note", tone="body"),
              Readouts("overestimate", "utilisation")),
        Panel("step_improved", "heading.improved",
              Text("intro.improved", tone="body"),
              Readouts("bytes_ms", "bytes_tokens_per_s", "bytes_vs_h100")),
    ),
)


def describe_ratio(ratio: float, lang: str = "zh") -> str:
    """A ratio to the baseline as text: "约 0.61×（约五分之三）" when a simple fraction is close, else "约 1.43×"."""
    t = TEXT[lang]
    base = presets.hardware(BASELINE).short_name
    if ratio == 1:
        return t["same"].format(base=base)
    value, key = min(NAMED_RATIOS, key=lambda named: abs(named[0] - ratio))
    shown = f"{ratio:.2f}"
    if abs(value - ratio) <= NAME_TOLERANCE:
        return t["named"].format(r=shown, name=t[key].format(base=base))
    return t["plain"].format(r=shown)


def render(state) -> dict:
    """The stepper's view for any state: all three steps' numbers; flags say which panel is showing."""
    s = WIDGET.coerce(state)
    lang = s["lang"]
    t = TEXT[lang]
    hw, m, base = choices.gpu(s), presets.model(s["model"]), presets.hardware(BASELINE)
    resident = model_size.resident_weight_bytes(m)
    n = model_size.matmul_params(m)
    weights = model_size.matmul_weight_bytes(m)
    naive_s = request.compute_only_time_s(m, hw)
    bytes_s = request.weights_only_time_s(m, hw)
    naive_rate, bytes_rate = 1 / naive_s, 1 / bytes_s
    overestimate = naive_rate / bytes_rate
    attained = 2 * n / bytes_s  # FLOP/s actually used while the step waits on the weights
    utilisation = attained / hw.peak_flops_per_s
    naive_ratio = hw.peak_flops_per_s / base.peak_flops_per_s
    bytes_ratio = hw.bandwidth_bytes_per_s / base.bandwidth_bytes_per_s
    peak, bw, base_peak, base_bw = _tflops(hw), _tb_per_s(hw), _tflops(base), _tb_per_s(base)
    flops = f"2 × {fmt_grouped(n)} FLOP"
    weights_text = t["weights"].format(n=fmt_grouped(n), bpp=m.weight_bytes_per_param, b=fmt_bytes(weights))

    outputs = {
        **capacity.outputs(resident, hw),
        "naive_ms": output(naive_s * 1e3, fmt_ms(naive_s)),
        "naive_tokens_per_s": output(naive_rate, t["tok_s"].format(x=fmt_grouped(naive_rate))),
        "bytes_ms": output(bytes_s * 1e3, fmt_ms(bytes_s)),
        "bytes_tokens_per_s": output(bytes_rate, t["tok_s"].format(x=fmt_sig(bytes_rate))),
        "overestimate": output(overestimate, t["over"].format(x=fmt_sig(overestimate))),
        "utilisation": output(utilisation * 100, f"{utilisation * 100:.2f}%"),
        "naive_vs_h100": output(naive_ratio, describe_ratio(naive_ratio, lang)),
        "bytes_vs_h100": output(bytes_ratio, describe_ratio(bytes_ratio, lang)),
        "fails_note": output(0, t["fails_note"].format(
            actual=fmt_sig(bytes_rate, 2), naive=fmt_grouped(naive_rate), weights=fmt_bytes(weights), bw=bw,
            bytes_ms=fmt_ms(bytes_s), naive_ms=fmt_ms(naive_s))),
    }
    derivations = {
        "naive_ms": f"{flops} ÷ {peak} TFLOP/s = {fmt_ms(naive_s)}",
        "naive_tokens_per_s": f"{peak} TFLOP/s ÷ ({flops}) = {fmt_grouped(naive_rate)} tok/s",
        "bytes_ms": f"{weights_text}{t['then']}{fmt_bytes(weights)} ÷ {bw} TB/s = {fmt_ms(bytes_s)}",
        "bytes_tokens_per_s": f"{bw} TB/s ÷ {fmt_bytes(weights)} = {fmt_sig(bytes_rate)} tok/s",
        "overestimate": f"{fmt_grouped(naive_rate)} ÷ {fmt_sig(bytes_rate)} tok/s = {fmt_sig(overestimate)}×",
        "utilisation": f"({flops} ÷ {fmt_ms(bytes_s)}) ÷ {peak} TFLOP/s "
                       f"= {fmt_sig(attained / 1e12)} TFLOP/s ÷ {peak} TFLOP/s = {utilisation * 100:.2f}%",
        "naive_vs_h100": f"{peak} ÷ {base_peak} TFLOP/s = {_ratio_digits(naive_ratio)}",
        "bytes_vs_h100": f"{bw} ÷ {base_bw} TB/s = {_ratio_digits(bytes_ratio)}",
    }
    flags = {f"step_{key}": s["step"] == key for key in STEPS} | {"capacity": not capacity.fits(resident, hw)}
    return view(s, outputs, flags=flags, derivations=derivations)


def _ratio_digits(ratio: float) -> str:
    """Three decimals, or a plain 1 when the two GPUs are equal."""
    return "1" if ratio == 1 else f"{ratio:.3f}"


def _tflops(hw: presets.Hardware) -> str:
    return f"{hw.peak_flops_per_s / 1e12:g}"


def _tb_per_s(hw: presets.Hardware) -> str:
    return f"{hw.bandwidth_bytes_per_s / 1e12:g}"
