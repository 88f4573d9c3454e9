"""Estimate stepper: design a speed estimate yourself in three steps (count FLOPs, see it fail, count bytes)."""

from __future__ import annotations

from sim import params, presets, request
from sim.widgets.common import hardware_select, model_select
from sim.widgets.controls import Select, coerce_state
from sim.widgets.view import fmt_bytes, fmt_grouped, fmt_ms, fmt_sig, output, view

STEPS = (
    ("naive", {"zh": "① 朴素方案", "en": "① Naive estimate"}),
    ("fails", {"zh": "② 它在哪失败", "en": "② Where it fails"}),
    ("improved", {"zh": "③ 改进方案", "en": "③ Improved estimate"}),
)

PARAMS = (
    Select("step", {"zh": "三步", "en": "Three steps"}, default="naive", options=STEPS, style="buttons"),
    hardware_select(),
    model_select(),
)

BASELINE = "h100-sxm"  # every GPU is compared with the one the lesson's figures are quoted on

# Simple fractions (and whole multiples) a ratio may be called by. A ratio gets the words only when it is
# within NAME_TOLERANCE of the fraction, in units of the baseline (0.03 = three percent of the H100 figure).
NAMED_RATIOS = (
    (1 / 5, {"zh": "约五分之一", "en": "about a fifth"}),
    (1 / 4, {"zh": "约四分之一", "en": "about a quarter"}),
    (1 / 3, {"zh": "约三分之一", "en": "about a third"}),
    (2 / 5, {"zh": "约五分之二", "en": "about two-fifths"}),
    (1 / 2, {"zh": "约一半", "en": "about half"}),
    (3 / 5, {"zh": "约五分之三", "en": "about three-fifths"}),
    (2 / 3, {"zh": "约三分之二", "en": "about two-thirds"}),
    (3 / 4, {"zh": "约四分之三", "en": "about three-quarters"}),
    (4 / 5, {"zh": "约五分之四", "en": "about four-fifths"}),
    (1, {"zh": "与 {base} 相差无几", "en": "close to {base}"}),
    (2, {"zh": "约两倍", "en": "about twice"}),
    (3, {"zh": "约三倍", "en": "about three times"}),
    (4, {"zh": "约四倍", "en": "about four times"}),
    (5, {"zh": "约五倍", "en": "about five times"}),
)
NAME_TOLERANCE = 0.03

TEXT = {
    "zh": {
        "same": "1×（与 {base} 相同）", "named": "约 {r}×（{name}）", "plain": "约 {r}×", "tok_s": "{x} tok/s",
        "over": "约 {x}×",
        "fails": "单个用户每秒只收到约 {actual} 个 token，不是 {naive} 个：每出 1 个 token 都要把 {weights} "
                 "权重从显存读一遍，{bw} TB/s 下要 {bytes_ms}；真正的计算只要 {naive_ms}，其余时间算力都在等数据。",
        "weights": "{n} × {bpp} B = {b}", "then": "；",
    },
    "en": {
        "same": "1× (same as {base})", "named": "about {r}× ({name})", "plain": "about {r}×",
        "tok_s": "{x} tok/s", "over": "about {x}×",
        "fails": "A single user receives about {actual} tokens per second, not {naive}: every token needs the whole "
                 "{weights} of weights read from memory, {bytes_ms} at {bw} TB/s, while the arithmetic takes only "
                 "{naive_ms}. The rest of the time the compute units wait for data.",
        "weights": "{n} × {bpp} B = {b}", "then": "; ",
    },
}


def describe_ratio(ratio: float, lang: str = "zh") -> str:
    """A ratio to the baseline as text: "约 0.61×（约五分之三）" when a simple fraction is close, else "约 1.43×"."""
    t = TEXT[lang]
    base = presets.hardware(BASELINE).short_name
    if ratio == 1:
        return t["same"].format(base=base)
    value, name = min(NAMED_RATIOS, key=lambda named: abs(named[0] - ratio))
    shown = f"{ratio:.2f}"
    if abs(value - ratio) <= NAME_TOLERANCE:
        return t["named"].format(r=shown, name=name[lang].format(base=base))
    return t["plain"].format(r=shown)


def render(state) -> dict:
    """The stepper's view for any state: all three steps' numbers; flags say which panel is showing."""
    s = coerce_state(PARAMS, state)
    lang = s["lang"]
    t = TEXT[lang]
    hw, m, base = presets.hardware(s["hardware"]), presets.model(s["model"]), presets.hardware(BASELINE)
    n = params.matmul_params(m)
    weights = params.matmul_weight_bytes(m)
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
        "naive_ms": output(naive_s * 1e3, fmt_ms(naive_s)),
        "naive_tokens_per_s": output(naive_rate, t["tok_s"].format(x=fmt_grouped(naive_rate))),
        "bytes_ms": output(bytes_s * 1e3, fmt_ms(bytes_s)),
        "bytes_tokens_per_s": output(bytes_rate, t["tok_s"].format(x=fmt_sig(bytes_rate))),
        "overestimate": output(overestimate, t["over"].format(x=fmt_sig(overestimate))),
        "utilisation": output(utilisation * 100, f"{utilisation * 100:.2f}%"),
        "naive_vs_h100": output(naive_ratio, describe_ratio(naive_ratio, lang)),
        "bytes_vs_h100": output(bytes_ratio, describe_ratio(bytes_ratio, lang)),
        "fails_note": output(0, t["fails"].format(
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
    flags = {f"step_{key}": s["step"] == key for key, _ in STEPS}
    return view(s, outputs, flags=flags, derivations=derivations)


def _ratio_digits(ratio: float) -> str:
    """Three decimals, or a plain 1 when the two GPUs are equal."""
    return "1" if ratio == 1 else f"{ratio:.3f}"


def _tflops(hw: presets.Hardware) -> str:
    return f"{hw.peak_flops_per_s / 1e12:g}"


def _tb_per_s(hw: presets.Hardware) -> str:
    return f"{hw.bandwidth_bytes_per_s / 1e12:g}"

