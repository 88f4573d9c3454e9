"""Roofline: where one prefill step and one decode step of a model land on a GPU's roofline."""

from __future__ import annotations

import math

from sim import memory, presets, roofline
from sim.widgets.common import hardware_select, model_select, state_dtype_select
from sim.widgets.controls import Range, coerce_state
from sim.widgets.view import fmt_bytes, fmt_flops, fmt_grouped, fmt_ms, fmt_sig, output, view

PARAMS = (
    Range("T", {"zh": "提示长度 T（token）", "en": "Prompt length T (tokens)"}, default=4, min=1, max=32_768, log=True),
    Range("B", {"zh": "批大小 B（请求数）", "en": "Batch B (requests)"}, default=1, min=1, max=1_024, log=True),
    Range("context", {"zh": "每个请求已缓存的上下文（token）", "en": "Cached context per request (tokens)"},
          default=4, min=1, max=131_072, log=True),
    hardware_select(),
    model_select(),
    state_dtype_select(),
)

# Fixed axes (log10 of FLOP/byte and of TFLOP/s) so that switching GPU moves the roof, not the frame.
X_RANGE = (math.log10(0.3), math.log10(1e5))
Y_RANGE = (math.log10(0.3), math.log10(5e3))

TEXT = {
    "zh": {
        "x": "算术强度（FLOP / 字节）", "y": "可达算力（TFLOP/s）", "roof": "屋顶线", "ridge": "拐点",
        "prefill": "prefill", "decode": "decode",
    },
    "en": {
        "x": "Arithmetic intensity (FLOP / byte)", "y": "Attainable compute (TFLOP/s)", "roof": "Roofline",
        "ridge": "Ridge", "prefill": "prefill", "decode": "decode",
    },
}


def render(state) -> dict:
    """The roofline view for any state (invalid values replaced by defaults or clamped)."""
    s = coerce_state(PARAMS, state)
    hw, m = presets.hardware(s["hardware"]), presets.model(s["model"])
    pre = roofline.prefill(m, hw, tokens=s["T"], state_dtype=s["state_dtype"])
    dec = roofline.decode(m, hw, batch=s["B"], context=s["context"], state_dtype=s["state_dtype"])
    fits = memory.max_batch(m, hw, context=s["context"], state_dtype=s["state_dtype"])
    per_request = memory.bytes_per_request(m, context=s["context"], state_dtype=s["state_dtype"])
    weights = memory.resident_bytes(m, batch=0, context=s["context"], state_dtype=s["state_dtype"])
    resident = weights + s["B"] * per_request

    outputs = {
        "prefill_ms": output(pre.time_s * 1e3, fmt_ms(pre.time_s)),
        "prefill_intensity": output(pre.intensity, f"{fmt_sig(pre.intensity)} FLOP/B"),
        "decode_ms": output(dec.time_s * 1e3, fmt_ms(dec.time_s)),
        "decode_intensity": output(dec.intensity, f"{fmt_sig(dec.intensity)} FLOP/B"),
        "tokens_per_s": output(dec.tokens_per_s, f"{fmt_grouped(dec.tokens_per_s)} tok/s"),
        "memory_gb": output(resident / 1e9, f"{resident / 1e9:,.1f} GB"),
        "max_batch": output(fits, fmt_grouped(fits)),
    }
    derivations = {
        "prefill_ms": _time_derivation(pre, hw),
        "decode_ms": _time_derivation(dec, hw),
        "prefill_intensity": f"{fmt_flops(pre.flops)} ÷ {fmt_bytes(pre.bytes)} = {fmt_sig(pre.intensity)} FLOP/B",
        "decode_intensity": f"{fmt_flops(dec.flops)} ÷ {fmt_bytes(dec.bytes)} = {fmt_sig(dec.intensity)} FLOP/B",
        "tokens_per_s": f"{s['B']} ÷ {fmt_ms(dec.time_s)} = {fmt_grouped(dec.tokens_per_s)} tok/s",
        "memory_gb": f"{fmt_bytes(weights)} + {s['B']} × {fmt_bytes(per_request)} = {fmt_bytes(resident)}",
        "max_batch": f"⌊({fmt_bytes(hw.memory_bytes)} − {fmt_bytes(weights)}) ÷ {fmt_bytes(per_request)}⌋ = {fits}",
    }
    return view(
        s,
        outputs,
        figures={"roofline": _figure(hw, pre, dec, s)},
        flags={"capacity": s["B"] > fits},
        derivations=derivations,
    )


def _time_derivation(e: roofline.Estimate, hw: presets.Hardware) -> str:
    return (
        f"max({fmt_flops(e.flops)} ÷ {hw.peak_flops_per_s / 1e12:g} TFLOP/s, "
        f"{fmt_bytes(e.bytes)} ÷ {hw.bandwidth_bytes_per_s / 1e12:g} TB/s) "
        f"= max({fmt_ms(e.compute_time_s)}, {fmt_ms(e.memory_time_s)}) = {fmt_ms(e.time_s)}"
    )


def _figure(hw: presets.Hardware, pre: roofline.Estimate, dec: roofline.Estimate, s: dict) -> dict:
    t = TEXT[s["lang"]]
    peak_t = hw.peak_flops_per_s / 1e12
    bw_t = hw.bandwidth_bytes_per_s / 1e12  # TFLOP/s per (FLOP/byte)
    ridge = roofline.ridge_point(hw)
    x_lo, x_hi = 10 ** X_RANGE[0], 10 ** X_RANGE[1]

    def point(name: str, e: roofline.Estimate, colour: str, symbol: str) -> dict:
        return {
            "type": "scatter", "mode": "markers", "name": name,
            "x": [e.intensity], "y": [e.attained_flops_per_s / 1e12],
            "marker": {"size": 13, "color": colour, "symbol": symbol, "line": {"width": 1, "color": "#1f2937"}},
            "hovertemplate": f"{name}<br>%{{x:.3g}} FLOP/B<br>%{{y:.4g}} TFLOP/s<extra></extra>",
        }

    data = [
        {
            "type": "scatter", "mode": "lines", "name": f"{t['roof']} · {hw.short_name}",
            "x": [x_lo, ridge, x_hi], "y": [bw_t * x_lo, peak_t, peak_t],
            "line": {"color": "#374151", "width": 2}, "hoverinfo": "skip",
        },
        {
            "type": "scatter", "mode": "markers+text", "name": t["ridge"], "showlegend": False,
            "x": [ridge], "y": [peak_t], "text": [f"{t['ridge']} {fmt_sig(ridge)}"], "textposition": "top left",
            "marker": {"size": 8, "color": "#374151", "symbol": "diamond"},
            "hovertemplate": f"{t['ridge']}<br>%{{x:.4g}} FLOP/B<extra></extra>",
        },
        point(t["prefill"], pre, "#16a34a", "circle"),
        point(t["decode"], dec, "#2563eb", "square"),
    ]
    layout = {
        "xaxis": {"type": "log", "range": list(X_RANGE), "title": {"text": t["x"]}},
        "yaxis": {"type": "log", "range": list(Y_RANGE), "title": {"text": t["y"]}},
        "margin": {"l": 64, "r": 16, "t": 16, "b": 56},
        "height": 380,
        "legend": {"x": 0.01, "y": 0.99, "bgcolor": "rgba(255,255,255,0.8)"},
        "uirevision": "roofline",
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
    }
    return {"data": data, "layout": layout}
