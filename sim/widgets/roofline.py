"""Roofline: where one prefill step and one decode step of a model land on a GPU's roofline, what
bytes each step moves, and how many requests fit in memory."""

from __future__ import annotations

import math

from sim import memory, presets, roofline, svg
from sim.display import fmt_bytes, fmt_flops, fmt_grouped, fmt_ms, fmt_sig, step_time_derivation
from sim.kit import Controls, Figure, Flag, Range, Readout, Readouts, Svg, Widget, choices, output, view

TEXT = {
    "zh": {
        "title": "屋顶线：prefill 与 decode 各落在哪",
        "T": "提示长度 T（token）",
        "B": "批大小 B（请求数）",
        "context": "每个请求已缓存的上下文（token）",
        "prefill_ms": "prefill 一步耗时",
        "prefill_intensity": "prefill 算术强度",
        "decode_ms": "decode 一步耗时",
        "decode_intensity": "decode 算术强度",
        "weights_only_intensity": "decode 强度（只算权重，虚线圈）",
        "tokens_per_s": "decode 总吞吐（所有请求）",
        "memory_gb": "显存占用（权重 + B 个请求的 KV 与状态）",
        "max_batch": "放得下的请求数",
        "capacity": "显存放不下：整份权重加上 B 个请求的 KV 与状态超过了这张卡的显存，"
                    "这个上下文长度下最多只能放 {max_batch} 个请求。",
        "roofline": "对数坐标的屋顶线图：横轴算术强度，纵轴可达算力；绿点 prefill，蓝点 decode，"
                    "虚线圈 decode 只算权重，紫色小点 decode 注意力",
        "bytes_caption": "每一步读写的字节（同一比例尺）",
        "x": "算术强度（FLOP / 字节）", "y": "可达算力（TFLOP/s）", "roof": "屋顶线", "ridge": "拐点",
        "prefill": "prefill", "decode": "decode", "weights_only": "decode（只算权重）",
        "attention": "decode 注意力", "compute": "算力受限", "memory": "带宽受限",
        "weights": "权重", "state": "递归状态", "kv": "KV cache", "bars": "每一步读写的字节",
        "on": "（{gpu}）",
    },
    "en": {
        "title": "Roofline: where prefill and decode land",
        "T": "Prompt length T (tokens)",
        "B": "Batch B (requests)",
        "context": "Cached context per request (tokens)",
        "prefill_ms": "Prefill step",
        "prefill_intensity": "Prefill intensity",
        "decode_ms": "Decode step",
        "decode_intensity": "Decode intensity",
        "weights_only_intensity": "Decode intensity, weights only (open circle)",
        "tokens_per_s": "Decode throughput (all requests)",
        "memory_gb": "Memory in use (weights + B requests' KV and state)",
        "max_batch": "Requests that fit",
        "capacity": "Out of memory: the whole checkpoint plus B requests' KV and state exceed this GPU's memory; "
                    "at this context at most {max_batch} requests fit.",
        "roofline": "Log-log roofline: arithmetic intensity against attainable compute; green prefill, blue decode, "
                    "open circle decode weights only, small purple point decode attention",
        "bytes_caption": "Bytes moved per step (one scale)",
        "x": "Arithmetic intensity (FLOP / byte)", "y": "Attainable compute (TFLOP/s)", "roof": "Roofline",
        "ridge": "Ridge", "prefill": "prefill", "decode": "decode", "weights_only": "decode (weights only)",
        "attention": "decode attention", "compute": "compute-bound", "memory": "memory-bound",
        "weights": "weights", "state": "recurrent state", "kv": "KV cache", "bars": "Bytes moved per step",
        "on": " ({gpu})",
    },
}

WIDGET = Widget(
    controls=(
        Range("T", default=4, min=1, max=32_768, log=True),
        Range("B", default=1, min=1, max=1_024, log=True),
        Range("context", default=4, min=1, max=131_072, log=True),
        choices.hardware(),
        choices.model(),
        choices.state_dtype(),
    ),
    layout=(
        Controls(),
        Readouts(
            Readout("prefill_ms", note="prefill_bound"), "prefill_intensity",
            Readout("decode_ms", note="decode_bound"), "decode_intensity",
            "weights_only_intensity", "tokens_per_s", "memory_gb", "max_batch",
        ),
        Flag("capacity"),
        Figure("roofline"),
        Svg("bytes", caption="bytes_caption"),
    ),
)

# Fixed axes (log10 of FLOP/byte and of TFLOP/s) so that switching GPU moves the roof, not the frame.
# Rounded: Pyodide's libm and glibc may differ in the last bit of log10, and the view must be identical.
X_LIMITS = (0.3, 1e5)
X_RANGE = (round(math.log10(X_LIMITS[0]), 6), round(math.log10(X_LIMITS[1]), 6))
Y_RANGE = (round(math.log10(0.3), 6), round(math.log10(5e3), 6))

COLOURS = {"prefill": "#16a34a", "decode": "#2563eb", "weights": "#94a3b8", "state": "#9333ea", "kv": "#f97316",
           "attention": "#a855f7", "roof": "#374151"}


def render(state) -> dict:
    """The roofline view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    hw, m = presets.hardware(s["hardware"]), presets.model(s["model"])
    pre = roofline.prefill(m, hw, tokens=s["T"], state_dtype=s["state_dtype"])
    dec = roofline.decode(m, hw, batch=s["B"], context=s["context"], state_dtype=s["state_dtype"])
    fits = memory.max_batch(m, hw, context=s["context"], state_dtype=s["state_dtype"])
    per_request = memory.bytes_per_request(m, context=s["context"], state_dtype=s["state_dtype"])
    weights = memory.resident_bytes(m, batch=0, context=s["context"], state_dtype=s["state_dtype"])
    resident = weights + s["B"] * per_request
    ridge = roofline.ridge_point(hw)
    weights_only = dec.flops / dec.bytes_by_kind["weights"]
    on_gpu = t["on"].format(gpu=hw.short_name)

    def both(fn) -> str:
        return f"prefill {fn(pre)} · decode {fn(dec)}"

    outputs = {
        "prefill_ms": output(pre.time_s * 1e3, fmt_ms(pre.time_s)),
        "prefill_intensity": output(pre.intensity, f"{fmt_sig(pre.intensity)} FLOP/B"),
        "prefill_bound": output(int(pre.bound == "compute"), t[pre.bound]),
        "decode_ms": output(dec.time_s * 1e3, fmt_ms(dec.time_s)),
        "decode_intensity": output(dec.intensity, f"{fmt_sig(dec.intensity)} FLOP/B"),
        "decode_bound": output(int(dec.bound == "compute"), t[dec.bound]),
        "weights_only_intensity": output(weights_only, f"{fmt_sig(weights_only)} FLOP/B"),
        "attention_intensity": output(roofline.decode_attention_intensity(m),
                                      f"{fmt_sig(roofline.decode_attention_intensity(m))} FLOP/B"),
        "tokens_per_s": output(dec.tokens_per_s, f"{fmt_grouped(dec.tokens_per_s)} tok/s"),
        "memory_gb": output(resident / 1e9, f"{resident / 1e9:,.1f} GB"),
        "max_batch": output(fits, fmt_grouped(fits)),
        # The values behind the roofline formula's clickable terms (lessons/terms.yml).
        "peak": output(hw.peak_flops_per_s, f"{hw.peak_flops_per_s / 1e12:g} TFLOP/s{on_gpu}"),
        "bandwidth": output(hw.bandwidth_bytes_per_s, f"{hw.bandwidth_bytes_per_s / 1e12:g} TB/s{on_gpu}"),
        "ridge": output(ridge, f"{fmt_sig(ridge)} FLOP/B{on_gpu}"),
        "step_flops": output(dec.flops, both(lambda e: fmt_flops(e.flops))),
        "step_bytes": output(dec.bytes, both(lambda e: fmt_bytes(e.bytes))),
        "step_time": output(dec.time_s * 1e3, both(lambda e: fmt_ms(e.time_s))),
        "intensity": output(dec.intensity, both(lambda e: f"{fmt_sig(e.intensity)} FLOP/B")),
    }
    derivations = {
        "prefill_ms": step_time_derivation(pre, hw),
        "decode_ms": step_time_derivation(dec, hw),
        "prefill_intensity": f"{fmt_flops(pre.flops)} ÷ {fmt_bytes(pre.bytes)} = {fmt_sig(pre.intensity)} FLOP/B",
        "decode_intensity": f"{fmt_flops(dec.flops)} ÷ {fmt_bytes(dec.bytes)} = {fmt_sig(dec.intensity)} FLOP/B",
        "weights_only_intensity": f"{fmt_flops(dec.flops)} ÷ {fmt_bytes(dec.bytes_by_kind['weights'])} "
                                  f"= {fmt_sig(weights_only)} FLOP/B",
        "tokens_per_s": f"{s['B']} ÷ {fmt_ms(dec.time_s)} = {fmt_grouped(dec.tokens_per_s)} tok/s",
        "memory_gb": f"{fmt_bytes(weights)} + {s['B']} × {fmt_bytes(per_request)} = {fmt_bytes(resident)}",
        "max_batch": f"⌊({fmt_bytes(hw.memory_bytes)} − {fmt_bytes(weights)}) ÷ {fmt_bytes(per_request)}⌋ = {fits}",
    }
    return view(
        s,
        outputs,
        figures={"roofline": _figure(hw, m, pre, dec, s)},
        svg={"bytes": _byte_bars(pre, dec, s)},
        flags={"capacity": s["B"] > fits},
        derivations=derivations,
    )


def _figure(hw: presets.Hardware, m: presets.Model, pre: roofline.Estimate, dec: roofline.Estimate, s: dict) -> dict:
    t = TEXT[s["lang"]]
    peak_t = hw.peak_flops_per_s / 1e12
    ridge = roofline.ridge_point(hw)
    x_lo, x_hi = X_LIMITS

    def point(name: str, intensity: float, attained: float, colour: str, symbol: str, size: int = 13) -> dict:
        return {
            "type": "scatter", "mode": "markers", "name": name,
            "x": [intensity], "y": [attained / 1e12],
            "marker": {"size": size, "color": colour, "symbol": symbol, "line": {"width": 2, "color": colour}},
            "hovertemplate": f"{name}<br>%{{x:.3g}} FLOP/B<br>%{{y:.4g}} TFLOP/s<extra></extra>",
        }

    weights_only = dec.flops / dec.bytes_by_kind["weights"]
    attention = roofline.decode_attention_intensity(m)
    data = [
        {
            "type": "scatter", "mode": "lines", "name": f"{t['roof']} · {hw.short_name}",
            "x": [x_lo, ridge, x_hi], "y": [hw.bandwidth_bytes_per_s / 1e12 * x_lo, peak_t, peak_t],
            "line": {"color": COLOURS["roof"], "width": 2}, "hoverinfo": "skip",
        },
        {
            "type": "scatter", "mode": "markers+text", "name": t["ridge"], "showlegend": False,
            "x": [ridge], "y": [peak_t], "text": [f"{t['ridge']} {fmt_sig(ridge)}"], "textposition": "top left",
            "marker": {"size": 8, "color": COLOURS["roof"], "symbol": "diamond"},
            "hovertemplate": f"{t['ridge']}<br>%{{x:.4g}} FLOP/B<extra></extra>",
        },
        point(t["prefill"], pre.intensity, pre.attained_flops_per_s, COLOURS["prefill"], "circle"),
        point(t["decode"], dec.intensity, dec.attained_flops_per_s, COLOURS["decode"], "circle"),
        point(t["weights_only"], weights_only, roofline.attainable_flops_per_s(hw, weights_only),
              COLOURS["decode"], "circle-open-dot"),
        point(t["attention"], attention, roofline.attainable_flops_per_s(hw, attention),
              COLOURS["attention"], "circle", size=8),
    ]
    layout = {
        # Fixed axes: nothing to zoom, and touch scrolling passes over the plot. One tick label per decade:
        # plotly.js measures every label on every update, and the minor ones cost a third of a slider move.
        "xaxis": {"type": "log", "range": list(X_RANGE), "title": {"text": t["x"]}, "fixedrange": True, "dtick": 1},
        "yaxis": {"type": "log", "range": list(Y_RANGE), "title": {"text": t["y"]}, "fixedrange": True, "dtick": 1},
        "margin": {"l": 64, "r": 16, "t": 16, "b": 56},
        "height": 380,
        "legend": {"x": 0.01, "y": 0.99, "bgcolor": "rgba(255,255,255,0.85)"},
        "uirevision": "roofline",
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
    }
    return {"data": data, "layout": layout}


def _byte_bars(pre: roofline.Estimate, dec: roofline.Estimate, s: dict) -> str:
    """Stacked bars of the bytes each step moves, split into weights, recurrent state and KV, on one scale."""
    t = TEXT[s["lang"]]
    width, label_w, bar_h, gap = 640, 130, 26, 14
    scale = (width - label_w - 10) / max(pre.bytes, dec.bytes)
    parts = []
    for i, (label, e) in enumerate(((f"prefill T={s['T']:,}", pre), (f"decode B={s['B']:,}", dec))):
        y = 10 + i * (bar_h + gap)
        parts.append(svg.text(label, {"x": 0, "y": y + bar_h * 0.7, "class": "svg-label"}))
        x = float(label_w)
        for kind in ("weights", "state", "kv"):
            n = e.bytes_by_kind[kind]
            w = n * scale
            parts.append(svg.element("rect", {"x": x, "y": y, "width": w, "height": bar_h, "fill": COLOURS[kind],
                                              "data-kind": kind}, svg.text_node("title", f"{t[kind]}: {fmt_bytes(n)}")))
            if w > 70:
                parts.append(svg.text(fmt_bytes(n), {"x": x + 4, "y": y + bar_h * 0.7, "class": "svg-value"}))
            x += w
        parts.append(svg.text(fmt_bytes(e.bytes), {"x": min(x + 4, width - 4), "y": y - 2, "class": "svg-muted",
                                                  "text-anchor": "end"}))
    legend_y = 10 + 2 * (bar_h + gap) + 4
    for j, kind in enumerate(("weights", "state", "kv")):
        lx = label_w + j * 150
        parts.append(svg.element("rect", {"x": lx, "y": legend_y, "width": 12, "height": 12, "fill": COLOURS[kind]}))
        parts.append(svg.text(t[kind], {"x": lx + 16, "y": legend_y + 11, "class": "svg-label"}))
    return svg.document(width, legend_y + 20, t["bars"], *parts, css_class="byte-bars")
