"""Decode ceiling: one request's tokens/s can never beat bandwidth ÷ weight bytes, whatever the compute.

Convention (sim/serving.py): batch 1, weights only; each step reads every matmul weight once and
does 2 FLOPs per weight. KV and recurrent-state traffic would only lower the ceiling.
A preset model counts its exact matmul parameters (the `params_b` field shows them rounded to
whole billions); a custom model has exactly params_b billion parameters.
"""

from __future__ import annotations

from sim import params, presets, roofline, serving
from sim.widgets.common import hardware_select, model_select
from sim.widgets.controls import Range, Select, changed_param, coerce_state
from sim.widgets.view import fmt_bytes, fmt_grouped, fmt_ms, fmt_sig, output, view

CUSTOM = "custom"
BASE_GPU = "a100-sxm-80gb"  # the GPU the ratios are taken against, as in the reference lesson
MODEL_FIELDS = ("params_b",)  # what picking a preset fills in

_presets = model_select(default="llama-2-7b")
PARAMS_B = Range("params_b", {"zh": "参数量（十亿，B）", "en": "Parameters (billions)"},
                 default=7, min=1, max=1_000, log=True, unit="B")
PARAMS = (
    Select(_presets.name, _presets.label, default=_presets.default,
           options=_presets.options + ((CUSTOM, {"zh": "自定义", "en": "Custom"}),)),
    PARAMS_B,
    Select("weight_dtype", {"zh": "权重精度", "en": "Weight format"}, default="bf16", style="buttons",
           options=(("bf16", {"zh": "BF16 · 2 字节", "en": "BF16 · 2 bytes"}),
                    ("fp8", {"zh": "FP8 · 1 字节", "en": "FP8 · 1 byte"}),
                    ("int4", {"zh": "INT4 · 0.5 字节", "en": "INT4 · 0.5 byte"}))),
    hardware_select(default=BASE_GPU),
)

TEXT = {
    "zh": {"params": "参数", "per_param": "FLOP/参数", "bytes_per_param": "B/参数",
           "compute": "峰值算力", "decode": "decode 上限（带宽）", "y": "相对 A100 的倍数"},
    "en": {"params": "params", "per_param": "FLOP/param", "bytes_per_param": "B/param",
           "compute": "Peak compute", "decode": "Decode ceiling (bandwidth)", "y": "Times an A100"},
}


def render(state) -> dict:
    """The decode-ceiling view for any state (invalid values replaced by defaults or clamped)."""
    s = settle_model(coerce_state(PARAMS, state), changed_param(PARAMS, state))
    t = TEXT[s["lang"]]
    hw, base = presets.hardware(s["hardware"]), presets.hardware(BASE_GPU)
    n = count_params(s)
    weights = serving.weight_bytes(n, s["weight_dtype"])
    ceiling = serving.decode_ceiling_tokens_per_s(hw, weights)
    step_s = 1 / ceiling
    intensity = serving.weights_only_decode_intensity(s["weight_dtype"])
    ridge = roofline.ridge_point(hw)
    gap = ridge / intensity
    compute_x, decode_x = serving.compute_ratio(hw, base), serving.bandwidth_ratio(hw, base)
    bytes_per_param = serving.WEIGHT_DTYPE_BYTES[s["weight_dtype"]]
    bw_t, peak_t = f"{hw.bandwidth_bytes_per_s / 1e12:g} TB/s", f"{hw.peak_flops_per_s / 1e12:g} TFLOP/s"

    outputs = {
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
        "weights_gb": f"{fmt_grouped(n)} {t['params']} × {bytes_per_param:g} B = {fmt_bytes(weights)}",
        "ceiling_tokens_per_s": f"{bw_t} ÷ {fmt_bytes(weights)} = {fmt_sig(ceiling, 4)} tok/s",
        "step_ms": f"{fmt_bytes(weights)} ÷ {bw_t} = {fmt_ms(step_s)}",
        "intensity": f"2 {t['per_param']} ÷ {bytes_per_param:g} {t['bytes_per_param']} = {fmt_sig(intensity)} FLOP/B",
        "ridge": f"{peak_t} ÷ {bw_t} = {fmt_sig(ridge, 4)} FLOP/B",
        "gap": f"{fmt_sig(ridge, 4)} ÷ {fmt_sig(intensity)} = {fmt_sig(gap)}×",
        "compute_vs_a100": f"{hw.peak_flops_per_s / 1e12:g} ÷ {base.peak_flops_per_s / 1e12:g} = ×{compute_x:.2f}",
        "decode_vs_a100": f"{hw.bandwidth_bytes_per_s / 1e12:g} ÷ {base.bandwidth_bytes_per_s / 1e12:g} "
                          f"= ×{decode_x:.2f}",
    }
    return view(s, outputs, figures={"ratios": ratio_figure(hw, base, t)}, derivations=derivations)


def settle_model(s: dict, changed: str | None) -> dict:
    """The state with a preset's fields filled in, or the model switched to custom if a field was just edited."""
    s = dict(s)
    if changed in MODEL_FIELDS:
        s["model"] = CUSTOM
    if s["model"] != CUSTOM:
        s["params_b"] = PARAMS_B.coerce(params.matmul_params(presets.model(s["model"])) / 1e9)
    return s


def count_params(s: dict) -> int:
    """Weights read per token: a preset's exact matmul parameters, or params_b billion for a custom model."""
    if s["model"] == CUSTOM:
        return s["params_b"] * 10**9
    return params.matmul_params(presets.model(s["model"]))


def ratio_figure(hw: presets.Hardware, base: presets.Hardware, t: dict) -> dict:
    """Grouped bars: each GPU's compute and bandwidth as multiples of base's, the chosen GPU highlighted."""
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
        bars(t["compute"], [serving.compute_ratio(g, base) for g in gpus], "#9ca3af"),
        bars(t["decode"], [serving.bandwidth_ratio(g, base) for g in gpus], "#2563eb"),
    ]
    layout = {
        "barmode": "group",
        "yaxis": {"title": {"text": t["y"]}, "rangemode": "tozero", "fixedrange": True},
        "xaxis": {"fixedrange": True},
        "margin": {"l": 56, "r": 16, "t": 24, "b": 40},
        "height": 300,
        "legend": {"orientation": "h", "x": 0, "y": 1.12},
        "uirevision": "ratios",
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
    }
    return {"data": data, "layout": layout}
