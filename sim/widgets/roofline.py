"""Roofline: where one prefill step and one decode step of a model land on a GPU's roofline, the time each
of their operations takes and what bounds it, what bytes each step moves, and how many requests fit in memory."""

from __future__ import annotations

import math

from sim.kit import (
    Controls,
    Figure,
    Flag,
    Range,
    Readout,
    Readouts,
    Svg,
    Text,
    Widget,
    alt,
    capacity,
    choices,
    output,
    palette,
    view,
)
from sim.kit.view import round_sig
from sim.page import svg
from sim.page.display import fmt_bytes, fmt_flops, fmt_grouped, fmt_ms, fmt_sig
from sim.physics import memory, model_size, presets, roofline

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
        "weights_only_intensity": "decode 权重矩阵乘的强度（空心圈）",
        "critical_batch": "临界批大小（权重矩阵乘从这里起算力受限）",
        "tokens_per_s": "decode 总吞吐（所有请求）",
        "memory_gb": "显存占用（权重 + B 个请求的 KV 与状态）",
        "max_batch": "放得下的请求数",
        "overflow": "显存放不下：整份权重加上 B 个请求的 KV 与状态超过了这张卡的显存，"
                    "这个上下文长度下最多只能放 {max_batch} 个请求。",
        "roofline": "对数坐标的屋顶线图：横轴算术强度，纵轴可达算力；绿点 prefill，蓝点 decode，"
                    "空心圈 decode 的权重矩阵乘，紫色小点 decode 的注意力",
        "intensity_note": "这里的强度只数权重、KV 与递归状态的字节，不数激活值。",
        "ops_caption": "每一步的各个操作依次执行，各自受算力或带宽限制（同一时间比例尺）",
        "bytes_caption": "每一步读写的字节（同一比例尺）",
        "alt.point": "{name} 强度 {intensity} FLOP/B、可达 {attained} TFLOP/s",
        "alt.ridge": "{gpu} 的拐点 {ridge} FLOP/B、屋顶 {peak} TFLOP/s",
        "alt.bytes": "{step} 共 {total}（{parts}）",
        "x": "算术强度（FLOP/B）", "y": "可达算力（TFLOP/s）", "roof": "屋顶线", "ridge": "拐点",
        "prefill": "prefill", "decode": "decode",
        "weights_only": "decode · 权重矩阵乘", "attention": "decode · 注意力",
        "compute": "算力受限", "memory": "带宽受限",
        "op_matmuls": "权重矩阵乘", "op_attention": "注意力", "op_state": "递归状态",
        "and": "与",
        "mixed": "{ops}算力受限，其余带宽受限",
        "op_line": "{op}：max({flops} ÷ {peak}, {bytes} ÷ {bandwidth}) = {ms}（{bound}）",
        "sum_head": "各操作依次执行，逐个取 max(FLOPs ÷ π, bytes ÷ β) 再相加：",
        "overlapped_line": "若所有内核完全重叠：max(ΣFLOPs ÷ π, Σbytes ÷ β) = max({flops} ÷ {peak}, "
                           "{bytes} ÷ {bandwidth}) = {ms}",
        "critical_line": "拐点 π ÷ β = {peak} ÷ {bandwidth} = {ridge} FLOP/B；"
                         "权重矩阵乘的强度 = B × {flops} ÷ {bytes} = B × {per} FLOP/B > {ridge} → B = {batch}",
        "overlapped": "完全重叠 {ms}",
        "overlapped_legend": "完全重叠时的下界",
        "ops_step": "{step}：{total} = {parts}；完全重叠时 {overlapped}",
        "ops_part": "{op} {ms}（{bound}）",
        "ops_aria": "{prefill}。{decode}。",
        "op_title": "{op}：{ms}，{bound}（{flops}，{bytes}）",
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
        "weights_only_intensity": "Decode weight-matmul intensity (open circle)",
        "critical_batch": "Critical batch (weight matmuls compute-bound from here)",
        "tokens_per_s": "Decode throughput (all requests)",
        "memory_gb": "Memory in use (weights + B requests' KV and state)",
        "max_batch": "Requests that fit",
        "overflow": "Out of memory: the whole checkpoint plus B requests' KV and state exceed this GPU's memory; "
                    "at this context at most {max_batch} requests fit.",
        "roofline": "Log-log roofline: arithmetic intensity against attainable compute; green prefill, blue decode, "
                    "open circle decode weight matmuls, small purple point decode attention",
        "intensity_note": "Intensity here counts the bytes of weights, KV and recurrent state, not activations.",
        "ops_caption": "Each step's operations run one after another, each compute-bound or memory-bound "
                       "(one time scale)",
        "bytes_caption": "Bytes moved per step (one scale)",
        "alt.point": "{name} at {intensity} FLOP/B, {attained} TFLOP/s",
        "alt.ridge": "{gpu} ridge at {ridge} FLOP/B, roof {peak} TFLOP/s",
        "alt.bytes": "{step}, {total} in all ({parts})",
        "x": "Arithmetic intensity (FLOP/B)", "y": "Attainable compute (TFLOP/s)", "roof": "Roofline",
        "ridge": "Ridge", "prefill": "prefill", "decode": "decode",
        "weights_only": "decode · weight matmuls", "attention": "decode · attention",
        "compute": "compute-bound", "memory": "memory-bound",
        "op_matmuls": "weight matmuls", "op_attention": "attention", "op_state": "recurrent state",
        "and": " and ",
        "mixed": "{ops} compute-bound, the rest memory-bound",
        "op_line": "{op}: max({flops} ÷ {peak}, {bytes} ÷ {bandwidth}) = {ms} ({bound})",
        "sum_head": "Operations one after another, each max(FLOPs ÷ π, bytes ÷ β), summed:",
        "overlapped_line": "If every kernel overlapped: max(ΣFLOPs ÷ π, Σbytes ÷ β) = max({flops} ÷ {peak}, "
                           "{bytes} ÷ {bandwidth}) = {ms}",
        "critical_line": "Ridge π ÷ β = {peak} ÷ {bandwidth} = {ridge} FLOP/B; weight-matmul intensity "
                         "= B × {flops} ÷ {bytes} = B × {per} FLOP/B > {ridge} → B = {batch}",
        "overlapped": "overlapped {ms}",
        "overlapped_legend": "bound if every kernel overlapped",
        "ops_step": "{step}: {total} = {parts}; overlapped {overlapped}",
        "ops_part": "{op} {ms} ({bound})",
        "ops_aria": "{prefill}. {decode}.",
        "op_title": "{op}: {ms}, {bound} ({flops}, {bytes})",
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
        choices.memory_fraction(),
        choices.compute_efficiency(),
        choices.bandwidth_efficiency(),
    ),
    layout=(
        Controls(),
        choices.no_state_note(),
        Readouts(
            Readout("prefill_ms", note="prefill_bound"), "prefill_intensity",
            Readout("decode_ms", note="decode_bound"), "decode_intensity",
            "weights_only_intensity", "critical_batch", "tokens_per_s", "memory_gb", "max_batch",
        ),
        Flag("capacity"),
        Flag("overflow"),
        Svg("ops", caption="ops_caption"),
        Figure("roofline"),
        Text("intensity_note"),
        Svg("bytes", caption="bytes_caption"),
    ),
)

# Fixed axes (log10 of FLOP/byte and of TFLOP/s) so that switching GPU moves the roof, not the frame.
# Rounded: Pyodide's libm and glibc may differ in the last bit of log10, and the view must be identical.
X_LIMITS = (0.3, 1e5)
X_RANGE = (round(math.log10(X_LIMITS[0]), 6), round(math.log10(X_LIMITS[1]), 6))
Y_RANGE = (round(math.log10(0.3), 6), round(math.log10(5e3), 6))

COLOURS = {name: palette.colour(name) for name in ("prefill", "decode", "weights", "state", "kv", "attention", "roof",
           # What bounds an operation (the ops diagram), and the overlapped bound's marker.
                                                   "compute", "memory", "overlapped")}


def render(state) -> dict:
    """The roofline view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    hw, m = choices.gpu(s), presets.model(s["model"])
    reported = presets.hardware(s["hardware"])
    pre = roofline.prefill(m, hw, tokens=s["T"], state_dtype=s["state_dtype"])
    dec = roofline.decode(m, hw, batch=s["B"], context=s["context"], state_dtype=s["state_dtype"])
    fits = memory.max_batch(m, hw, context=s["context"], state_dtype=s["state_dtype"])
    per_request = memory.bytes_per_request(m, context=s["context"], state_dtype=s["state_dtype"])
    weights = model_size.resident_weight_bytes(m)
    weights_fit = capacity.fits(weights, hw)
    resident = weights + s["B"] * per_request
    ridge = roofline.ridge_point(hw)
    critical = roofline.critical_batch(m, hw)
    matmuls, attention = dec.op("matmuls"), dec.op("attention")
    peak, bandwidth = f"{hw.peak_flops_per_s / 1e12:g} TFLOP/s", f"{hw.bandwidth_bytes_per_s / 1e12:g} TB/s"
    on_gpu = t["on"].format(gpu=hw.short_name)

    def both(fn) -> str:
        return f"prefill {fn(pre)} · decode {fn(dec)}"

    def intensity(x: float) -> dict:
        return output(x, f"{fmt_sig(x)} FLOP/B")

    outputs = {
        "prefill_ms": output(pre.time_s * 1e3, fmt_ms(pre.time_s)),
        "prefill_overlapped_ms": output(pre.overlapped_time_s * 1e3, fmt_ms(pre.overlapped_time_s)),
        "prefill_intensity": intensity(pre.intensity),
        "prefill_bound": output(int(pre.bound == "compute"), _bound_note(pre, t)),
        "decode_ms": output(dec.time_s * 1e3, fmt_ms(dec.time_s)),
        "decode_overlapped_ms": output(dec.overlapped_time_s * 1e3, fmt_ms(dec.overlapped_time_s)),
        "decode_intensity": intensity(dec.intensity),
        "decode_bound": output(int(dec.bound == "compute"), _bound_note(dec, t)),
        "weights_only_intensity": intensity(matmuls.intensity),
        "attention_intensity": intensity(attention.intensity if attention else 0),
        "critical_batch": output(critical, fmt_grouped(critical)),
        "tokens_per_s": output(dec.tokens_per_s, f"{fmt_grouped(dec.tokens_per_s)} tok/s"),
        "memory_gb": output(resident / 1e9, f"{resident / 1e9:,.1f} GB"),
        "max_batch": output(fits, fmt_grouped(fits)),
        **capacity.outputs(weights, hw),
        # The values behind the roofline formula's clickable terms (lessons/terms.yml).
        "peak": output(hw.peak_flops_per_s, f"{peak}{on_gpu}"),
        "bandwidth": output(hw.bandwidth_bytes_per_s, f"{bandwidth}{on_gpu}"),
        "ridge": output(ridge, f"{fmt_sig(ridge)} FLOP/B{on_gpu}"),
        "step_flops": output(dec.flops, both(lambda e: fmt_flops(e.flops))),
        "step_bytes": output(dec.bytes, both(lambda e: fmt_bytes(e.bytes))),
        "step_time": output(dec.time_s * 1e3, both(lambda e: fmt_ms(e.time_s))),
        "intensity": output(dec.intensity, both(lambda e: f"{fmt_sig(e.intensity)} FLOP/B")),
    }
    usable = fmt_bytes(hw.memory_bytes)
    if hw.memory_bytes != reported.memory_bytes:
        usable = f"{s['memory_fraction']:g} × {fmt_bytes(reported.memory_bytes)}"
    per_b = matmuls.flops / s["B"]
    derivations = {
        "prefill_ms": _sum_derivation(pre, peak, bandwidth, t),
        "decode_ms": _sum_derivation(dec, peak, bandwidth, t),
        "prefill_intensity": f"{fmt_flops(pre.flops)} ÷ {fmt_bytes(pre.bytes)} = {fmt_sig(pre.intensity)} FLOP/B",
        "decode_intensity": f"{fmt_flops(dec.flops)} ÷ {fmt_bytes(dec.bytes)} = {fmt_sig(dec.intensity)} FLOP/B",
        "weights_only_intensity": f"{s['B']:,} × {fmt_flops(per_b)} ÷ {fmt_bytes(matmuls.bytes)} "
                                  f"= {fmt_sig(matmuls.intensity)} FLOP/B",
        "critical_batch": t["critical_line"].format(
            peak=peak, bandwidth=bandwidth, ridge=fmt_sig(ridge, 4), flops=fmt_flops(per_b),
            bytes=fmt_bytes(matmuls.bytes), per=fmt_sig(per_b / matmuls.bytes), batch=critical),
        "tokens_per_s": f"{s['B']:,} ÷ {fmt_ms(dec.time_s)} = {fmt_grouped(dec.tokens_per_s)} tok/s",
        "memory_gb": f"{fmt_bytes(weights)} + {s['B']:,} × {fmt_bytes(per_request)} = {fmt_bytes(resident)}",
        "max_batch": (f"⌊({usable} − {fmt_bytes(weights)}) ÷ {fmt_bytes(per_request)}⌋ = {fits:,}" if weights_fit
                      else f"{usable} − {fmt_bytes(weights)} < 0 → 0"),
    }
    return view(
        s,
        outputs,
        figures={"roofline": _figure(hw, pre, dec, s)},
        svg={"ops": _op_bars(pre, dec, s), "bytes": _byte_bars(pre, dec, s)},
        flags={"capacity": not weights_fit, "overflow": weights_fit and s["B"] > fits, "no_state": choices.no_state(m)},
        derivations=derivations,
    )


def _bound_note(e: roofline.Estimate, t: dict) -> str:
    """The step's bound in words: one bound, or which operations are compute-bound when they differ."""
    if not e.mixed:
        return t[e.bound]
    return t["mixed"].format(ops=t["and"].join(t[f"op_{op.name}"] for op in e.ops if op.bound == "compute"))


def _sum_derivation(e: roofline.Estimate, peak: str, bandwidth: str, t: dict) -> str:
    """The step time as the sum over its operations, then the overlapped bound beside it."""
    lines = [t["sum_head"]]
    for i, op in enumerate(e.ops):
        lines.append(("  " if i == 0 else "+ ") + t["op_line"].format(
            op=t[f"op_{op.name}"], flops=fmt_flops(op.flops), peak=peak, bytes=fmt_bytes(op.bytes),
            bandwidth=bandwidth, ms=fmt_ms(op.time_s), bound=t[op.bound]))
    lines.append(f"= {fmt_ms(e.time_s)}")
    lines.append(t["overlapped_line"].format(flops=fmt_flops(e.flops), peak=peak, bytes=fmt_bytes(e.bytes),
                                             bandwidth=bandwidth, ms=fmt_ms(e.overlapped_time_s)))
    return "\n".join(lines)


def _figure(hw: presets.Hardware, pre: roofline.Estimate, dec: roofline.Estimate, s: dict) -> dict:
    t = TEXT[s["lang"]]
    peak_t = hw.peak_flops_per_s / 1e12
    ridge = roofline.ridge_point(hw)
    x_lo, x_hi = X_LIMITS

    def point(name: str, intensity: float, attained: float, colour: str, symbol: str, size: int = 13) -> dict:
        # Six significant digits: a step's time is a sum of its operations' times, and Python's float sum
        # differs in the last bit between CPython versions (3.12 compensates); the view must be identical.
        return {
            "type": "scatter", "mode": "markers", "name": name,
            "x": [round_sig(intensity, 6)], "y": [round_sig(attained / 1e12, 6)],
            "marker": {"size": size, "color": colour, "symbol": symbol, "line": {"width": 2, "color": colour}},
            "hovertemplate": f"{name}<br>%{{x:.3g}} FLOP/B<br>%{{y:.4g}} TFLOP/s<extra></extra>",
        }

    def op_point(op: roofline.Op | None, name: str, colour: str, symbol: str, size: int = 13) -> dict:
        # An operation sits on the roof at its own intensity (FLOPs over the bytes it moves itself).
        if op is None or op.flops == 0:
            return point(name, 1, 0, colour, symbol, size) | {"x": [], "y": []}
        return point(name, op.intensity, op.flops / op.time_s, colour, symbol, size)

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
        op_point(dec.op("matmuls"), t["weights_only"], COLOURS["decode"], "circle-open-dot"),
        op_point(dec.op("attention"), t["attention"], COLOURS["attention"], "circle", size=8),
    ]
    layout = palette.plot_layout({
        # Fixed axes: nothing to zoom, and touch scrolling passes over the plot. One tick label per decade:
        # plotly.js measures every label on every update, and the minor ones cost a third of a slider move.
        "xaxis": {"type": "log", "range": list(X_RANGE), "title": {"text": t["x"]}, "fixedrange": True, "dtick": 1},
        "yaxis": {"type": "log", "range": list(Y_RANGE), "title": {"text": t["y"]}, "fixedrange": True, "dtick": 1},
        "margin": {"l": 64, "r": 16, "t": 16, "b": 56},
        "height": 400,
        # Above the plot, not inside it: inside, the legend covers the ridge and the weights-only point.
        "legend": palette.legend_above(),
        "uirevision": "roofline",
    })
    # What the plot shows, with its numbers: each point where it sits, then the roof (read aloud as one sentence).
    points = [(t["prefill"], pre.intensity, pre.attained_flops_per_s),
              (t["decode"], dec.intensity, dec.attained_flops_per_s)]
    points += [(name, op.intensity, op.flops / op.time_s) for op, name in
               ((dec.op("matmuls"), t["weights_only"]), (dec.op("attention"), t["attention"])) if op and op.flops]
    spoken = [t["alt.point"].format(name=name, intensity=fmt_sig(i), attained=fmt_sig(a / 1e12))
              for name, i, a in points]
    spoken.append(t["alt.ridge"].format(gpu=hw.short_name, ridge=fmt_sig(ridge), peak=f"{peak_t:g}"))
    return {"data": data, "layout": layout, "alt": alt.sentence(s["lang"], t["roofline"], spoken)}


def _text_width(content: str, px: float) -> float:
    """A rough width of a label: ASCII about 0.56 em, CJK and other wide characters 1 em."""
    return math.fsum(px * (0.56 if ord(c) < 0x2E80 else 1.0) for c in content)


def _steps(pre: roofline.Estimate, dec: roofline.Estimate, s: dict):
    return ((f"prefill T={s['T']:,}", pre), (f"decode B={s['B']:,}", dec))


# A diagram's width in its own units: a desktop column, and a 375 px phone's frame (where the step's name and total
# go above its bar, which then takes the whole width).
WIDE, NARROW = 640, 300
PAD = 4  # the narrow drawing's inset from its frame


def _op_bars(pre: roofline.Estimate, dec: roofline.Estimate, s: dict) -> str:
    return svg.responsive(_draw_op_bars(pre, dec, s, WIDE), _draw_op_bars(pre, dec, s, NARROW))


def _byte_bars(pre: roofline.Estimate, dec: roofline.Estimate, s: dict) -> str:
    return svg.responsive(_draw_byte_bars(pre, dec, s, WIDE), _draw_byte_bars(pre, dec, s, NARROW))


def _legend(keys: list[tuple[str, str]], x0: float, y: float, wrap_at: float | None = None,
            spacing: float | None = None, box: float = 14) -> tuple[list[str], float]:
    """Colour keys (key, words) in a row from x0, each `spacing` apart or as far as its words need; with
    `wrap_at`, a key that would pass it starts a new row. A key's box is `box` tall (12 × 12 at 12). Returns the
    markup and the last row's top."""
    parts, x = [], x0
    for key, words in keys:
        if wrap_at is not None and x + 16 + _text_width(words, 13) > wrap_at and x > x0:
            x, y = x0, y + 20
        marker = key == "overlapped"
        parts.append(svg.element("rect", {"x": x + 5 if marker else x, "y": y - (box - 12) / 2,
                                          "width": 2 if marker else 12, "height": box, "fill": COLOURS[key]}))
        parts.append(svg.text(words, {"x": x + 16, "y": y + 11, "class": "svg-label"}))
        x += spacing or 16 + _text_width(words, 13) + 24
    return parts, y


def _draw_op_bars(pre: roofline.Estimate, dec: roofline.Estimate, s: dict, width: float) -> str:
    """Stacked time per operation of each step on one time scale, each segment coloured by what bounds it,
    with a thin marker at the overlapped bound (the aggregate max) where the two estimates part.

    Wide: the step's name left of its bar and its total right of it. Narrow: both on a line above the bar."""
    t = TEXT[s["lang"]]
    narrow = width < WIDE
    label_w, right_w, bar_h, gap, top = (PAD, PAD, 34, 18, 4) if narrow else (130, 92, 34, 26, 22)
    above = 36 if narrow else 0  # the name and total line, then the overlapped bound's words
    pre_s, dec_s = pre.time_s, dec.time_s
    scale = (width - label_w - right_w) / max(pre_s, dec_s)
    bars, parts, described = [], [], {}
    steps = ((f"prefill T={s['T']:,}", pre, pre_s), (f"decode B={s['B']:,}", dec, dec_s))
    for i, (label, e, total_s) in enumerate(steps):
        y = top + above + i * (above + bar_h + gap)
        if narrow:
            parts.append(svg.text(label, {"x": PAD, "y": y - 23, "class": "svg-label"}))
        else:
            parts.append(svg.text(label, {"x": 0, "y": y + bar_h * 0.6, "class": "svg-label"}))
        x = float(label_w)
        spoken = []
        for op in e.ops:
            op_s, bound = op.time_s, op.bound
            w = op_s * scale
            name, ms, bound_words = t[f"op_{op.name}"], fmt_ms(op_s), t[bound]
            title = t["op_title"].format(op=name, ms=ms, bound=bound_words, flops=fmt_flops(op.flops),
                                         bytes=fmt_bytes(op.bytes))
            bars.append(svg.element("rect", {"x": x, "y": y, "width": w, "height": bar_h, "fill": COLOURS[bound],
                                             "data-op": op.name, "data-bound": bound}, svg.text_node("title", title)))
            # The operation's name over its time where both fit, its time alone where only that does.
            # (A phone's narrower segments are judged a size up: there a name that barely fits crowds the edge.)
            ms_w = _text_width(ms, 13 if narrow else 12) + 8
            if ms_w <= w and _text_width(name, 13 if narrow else 12) + 8 <= w:
                parts.append(svg.text(name, {"x": x + 4, "y": y + 14, "class": "svg-value"}))
                parts.append(svg.text(ms, {"x": x + 4, "y": y + 29, "class": "svg-value"}))
            elif ms_w <= w:
                parts.append(svg.text(ms, {"x": x + 4, "y": y + 22, "class": "svg-value"}))
            spoken.append(t["ops_part"].format(op=name, ms=ms, bound=bound_words))
            x += w
        total, overlapped = fmt_ms(total_s), fmt_ms(e.overlapped_time_s)
        if narrow:
            parts.append(svg.text(total, {"x": width - PAD, "y": y - 23, "class": "svg-label", "text-anchor": "end"}))
        else:
            parts.append(svg.text(total, {"x": x + 6, "y": y + bar_h * 0.6, "class": "svg-label"}))
        mark = label_w + e.overlapped_time_s * scale
        over = t["overlapped"].format(ms=overlapped)
        parts.append(svg.element("rect", {"x": mark - 1, "y": y - 5, "width": 2, "height": bar_h + 10,
                                          "fill": COLOURS["overlapped"], "data-marker": "overlapped"},
                                 svg.text_node("title", over)))
        parts.append(svg.text(over, {"x": max(mark, label_w + _text_width(over, 11)), "y": y - 8,
                                     "class": "svg-muted", "text-anchor": "end"}))
        described[label.split()[0]] = t["ops_step"].format(step=label, total=total, overlapped=overlapped,
                                                           parts=" + ".join(spoken))
    legend, legend_y = _legend([(key, t["overlapped_legend" if key == "overlapped" else key])
                                for key in ("compute", "memory", "overlapped")],
                               float(label_w), top + 2 * (above + bar_h + gap) - 6,
                               wrap_at=width if narrow else None)
    # Segments are edged in white, so that neighbours bound the same way still read as two operations.
    return svg.document(width, legend_y + 20, t["ops_aria"].format(**described),
                        svg.element("g", {"stroke": palette.colour("surface"), "stroke-width": 1}, *bars), *parts,
                        *legend, css_class="op-bars")


# The byte bars' edges: weights and the recurrent state are drawn with a gap of the background around them, which
# parts each from what follows; KV, last and in a prefill often under a pixel wide, keeps its pixel.
EDGES = {"weights": palette.colour("surface"), "state": palette.colour("surface"), "kv": None}


def _draw_byte_bars(pre: roofline.Estimate, dec: roofline.Estimate, s: dict, width: float) -> str:
    """Stacked bars of the bytes each step moves, split into weights, recurrent state and KV, on one scale.

    Wide: the step's name left of its bar, its total above the bar's end. Narrow: both on a line above the bar."""
    t = TEXT[s["lang"]]
    narrow = width < WIDE
    label_w, right_w, bar_h, gap, above = (PAD, PAD, 26, 14, 18) if narrow else (130, 10, 26, 14, 0)
    scale = (width - label_w - right_w) / max(pre.bytes, dec.bytes)
    parts = []
    for i, (label, e) in enumerate(_steps(pre, dec, s)):
        y = 10 + above + i * (above + bar_h + gap)
        parts.append(svg.text(label, {"x": PAD if narrow else 0, "y": y - 5 if narrow else y + bar_h * 0.7,
                                      "class": "svg-label"}))
        x = float(label_w)
        for kind in ("weights", "state", "kv"):
            n = e.bytes_by_kind[kind]
            w = n * scale
            parts.append(svg.element("rect", {"x": x, "y": y, "width": w, "height": bar_h, "fill": COLOURS[kind],
                                              "stroke": EDGES[kind], "stroke-width": 1, "data-kind": kind},
                                     svg.text_node("title", f"{t[kind]}: {fmt_bytes(n)}")))
            if w > 70:
                parts.append(svg.text(fmt_bytes(n), {"x": x + 4, "y": y + bar_h * 0.7, "class": "svg-value"}))
            x += w
        if narrow:
            parts.append(svg.text(fmt_bytes(e.bytes), {"x": width - PAD, "y": y - 5, "class": "svg-label",
                                                      "text-anchor": "end"}))
        else:
            parts.append(svg.text(fmt_bytes(e.bytes), {"x": min(x + 4, width - 4), "y": y - 2, "class": "svg-muted",
                                                      "text-anchor": "end"}))
    legend, legend_y = _legend([(kind, t[kind]) for kind in ("weights", "state", "kv")], float(label_w),
                               10 + 2 * (above + bar_h + gap) + 4, wrap_at=width if narrow else None,
                               spacing=None if narrow else 150, box=12)
    spoken = [t["alt.bytes"].format(step=label, total=fmt_bytes(e.bytes), parts=alt.parts(s["lang"], (
        f"{t[kind]} {fmt_bytes(e.bytes_by_kind[kind])}" for kind in ("weights", "state", "kv"))))
        for label, e in _steps(pre, dec, s)]
    return svg.document(width, legend_y + 20, alt.sentence(s["lang"], t["bars"], spoken), *parts, *legend,
                        css_class="byte-bars")
