"""Batch throughput: total and per-request decode speed against batch size, and where memory stops it."""

from __future__ import annotations

import html
import math
from operator import attrgetter

from sim import batching, memory, presets, roofline
from sim.display import fmt_bytes, fmt_flops, fmt_grouped, fmt_ms, fmt_sig
from sim.kit import Controls, Figure, Flag, Range, Readout, Readouts, Svg, Widget, choices, output, view

MAX_PLOTTED_BATCH = 256

TEXT = {
    "zh": {
        "title": "批处理：一起解码的请求越多，总吞吐和每个请求的速度各怎么变",
        "B": "批大小 B（一起解码的请求数）",
        "context": "每个请求已缓存的上下文（token）",
        "total_tokens_per_s": "总吞吐（B 个请求合计）",
        "per_request_tokens_per_s": "每个请求自己的速度",
        "step_ms": "decode 一步耗时",
        "weights_share": "这一步的字节里权重占多少",
        "max_batch": "显存放得下的请求数",
        "over_capacity": "显存放不下：整份权重加上 B 个请求的 KV 与递归状态，超出了这张卡的显存。"
                         "图上虚线部分只是假想的数字，真要跑这么大的批，得换更大的卡、缩短上下文或把 KV 量化。",
        "throughput": "双对数坐标图：横轴批大小 B，纵轴 tok/s；蓝线总吞吐，橙线每个请求的速度，红色区域显存放不下",
        "x": "批大小 B（对数坐标）", "y": "tok/s（对数坐标）", "total": "总吞吐", "per_request": "每个请求",
        "over_curve": "{curve}（显存放不下）", "over": "显存放不下", "none_fit": "显存放不下：一个请求都放不下",
        "limit": "上限 B = {limit}", "compute_region": "算力受限", "compute": "算力受限", "memory": "带宽受限",
        "current": "当前 B", "table_batch": "B", "table_total": "总吞吐（tok/s）",
        "table_per_request": "每个请求（tok/s）", "table_step": "一步耗时", "table_fits": "显存",
        "fits": "放得下", "does_not_fit": "放不下", "limit_row": "{batch}（上限）",
        "table_caption": "几个批大小下的数字（{gpu} · {model} · 上下文 {context} token）",
        "weights": "权重", "kv": "KV", "state": "状态", "intensity": "强度", "ridge": "拐点",
    },
    "en": {
        "title": "Batching: what more requests per decode step do to total and per-request speed",
        "B": "Batch B (requests decoded together)",
        "context": "Cached context per request (tokens)",
        "total_tokens_per_s": "Total throughput (all B requests)",
        "per_request_tokens_per_s": "Each request's own speed",
        "step_ms": "Decode step",
        "weights_share": "Weights' share of the step's bytes",
        "max_batch": "Requests that fit in memory",
        "over_capacity": "Out of memory: the whole checkpoint plus B requests' KV and recurrent state exceed this "
                         "GPU's memory. The dotted part of the plot is hypothetical; a batch this large needs a "
                         "bigger GPU, a shorter context or a quantised KV cache.",
        "throughput": "Log-log plot of tok/s against batch size B: blue total throughput, orange per-request speed, "
                      "red band where memory runs out",
        "x": "Batch B (log scale)", "y": "tok/s (log scale)", "total": "Total", "per_request": "Per request",
        "over_curve": "{curve} (does not fit)", "over": "Does not fit in memory",
        "none_fit": "Not even one request fits",
        "limit": "limit B = {limit}", "compute_region": "Compute-bound", "compute": "compute-bound",
        "memory": "memory-bound", "current": "current B", "table_batch": "B", "table_total": "Total (tok/s)",
        "table_per_request": "Per request (tok/s)", "table_step": "Step", "table_fits": "Memory",
        "fits": "fits", "does_not_fit": "does not fit", "limit_row": "{batch} (limit)",
        "table_caption": "Figures at a few batch sizes ({gpu} · {model} · {context} tokens of context)",
        "weights": "weights", "kv": "KV", "state": "state", "intensity": "intensity", "ridge": "ridge",
    },
}

WIDGET = Widget(
    controls=(
        Range("B", default=32, min=1, max=MAX_PLOTTED_BATCH, log=True),
        Range("context", default=4_096, min=1, max=131_072, log=True),
        choices.hardware(),
        choices.model(),
        choices.state_dtype(),
    ),
    layout=(
        Controls(),
        Readouts(
            "total_tokens_per_s", "per_request_tokens_per_s", Readout("step_ms", note="bound"),
            "weights_share", "max_batch",
        ),
        Flag("over_capacity"),
        Figure("throughput"),
        Svg("table"),
    ),
)

TABLE_BATCHES = (1, 8, 32, 64, 128, 256)
# Batch sizes drawn: eight per doubling (smooth on a log axis, and cheap enough for every slider move)
# plus the table's rows. Each view adds the chosen B, the memory limit and the compute crossover, so
# that the curves break exactly where the regions begin.
CURVE_BATCHES = frozenset({round(2 ** (k / 8)) for k in range(65)} | set(TABLE_BATCHES))

# Fixed horizontal frame (log10 of B: about 0.8 to 300), so that regions can be placed in paper coordinates.
# Literal numbers, and logarithms rounded, because Pyodide's libm may differ from CPython's in the last bit
# and the browser's view must equal the build's.
X_RANGE = (-0.1, 2.48)
X_TICKS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
Y_PADDING_DECADES = 0.15
LOG_DIGITS = 6
NARROW_BAND_FROM = 0.78  # a band starting right of this (paper x) has no room for its label inside

COLOURS = {"total": "#2563eb", "per_request": "#ea580c", "over": "#b91c1c", "compute": "#7c3aed"}


def render(state) -> dict:
    """The batch-throughput view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    hw, m = presets.hardware(s["hardware"]), presets.model(s["model"])
    ctx, dtype = s["context"], s["state_dtype"]
    limit = memory.max_batch(m, hw, context=ctx, state_dtype=dtype)
    compute_from = batching.first_compute_bound_batch(m, hw, context=ctx, state_dtype=dtype)
    edges = {b for b in (limit, limit + 1, compute_from) if b is not None and 1 <= b <= MAX_PLOTTED_BATCH}
    batches = sorted(CURVE_BATCHES | edges | {s["B"]})
    points = {p.batch: p for p in batching.sweep_batches(m, hw, batches, context=ctx, state_dtype=dtype)}
    current = points[s["B"]]
    step = current.step

    outputs = {
        "total_tokens_per_s": output(current.total_tokens_per_s, f"{fmt_sig(current.total_tokens_per_s)} tok/s"),
        "per_request_tokens_per_s": output(current.per_request_tokens_per_s,
                                           f"{fmt_sig(current.per_request_tokens_per_s)} tok/s"),
        "step_ms": output(current.step_s * 1e3, fmt_ms(current.step_s)),
        "max_batch": output(limit, fmt_grouped(limit)),
        "bound": output(int(step.bound == "compute"), t[step.bound]),
        "weights_share": output(current.weights_share * 100, f"{current.weights_share * 100:.1f}%"),
    }
    return view(
        s,
        outputs,
        figures={"throughput": _figure(list(points.values()), current, limit, compute_from, t)},
        svg={"table": _table(points, limit, hw, m, s, t)},
        flags={"over_capacity": s["B"] > limit},
        derivations=_derivations(m, hw, current, limit, s, t),
    )


def _derivations(m: presets.Model, hw: presets.Hardware, p: batching.BatchPoint, limit: int, s: dict,
                 t: dict) -> dict:
    e = p.step
    kinds = e.bytes_by_kind
    ridge = roofline.ridge_point(hw)
    resident = memory.resident_bytes(m, batch=0, context=s["context"], state_dtype=s["state_dtype"])
    per_request = memory.bytes_per_request(m, context=s["context"], state_dtype=s["state_dtype"])
    step_bytes = (f"{fmt_bytes(kinds['weights'])} {t['weights']} + {fmt_bytes(kinds['kv'])} {t['kv']} "
                  f"+ {fmt_bytes(kinds['state'])} {t['state']}")
    return {
        "step_ms": (f"max({fmt_flops(e.flops)} ÷ {hw.peak_flops_per_s / 1e12:g} TFLOP/s, "
                    f"({step_bytes}) ÷ {hw.bandwidth_bytes_per_s / 1e12:g} TB/s) "
                    f"= max({fmt_ms(e.compute_time_s)}, {fmt_ms(e.memory_time_s)}) = {fmt_ms(e.time_s)}"),
        "total_tokens_per_s": f"{p.batch} ÷ {fmt_ms(p.step_s)} = {fmt_sig(p.total_tokens_per_s)} tok/s",
        "per_request_tokens_per_s": f"1 ÷ {fmt_ms(p.step_s)} = {fmt_sig(p.per_request_tokens_per_s)} tok/s",
        "weights_share": (f"{fmt_bytes(kinds['weights'])} ÷ ({step_bytes}) "
                          f"= {p.weights_share * 100:.1f}%"),
        "max_batch": (f"⌊({fmt_bytes(hw.memory_bytes)} − {fmt_bytes(resident)}) ÷ {fmt_bytes(per_request)}⌋ "
                      f"= {fmt_grouped(limit)}" if hw.memory_bytes > resident
                      else f"{fmt_bytes(resident)} ≥ {fmt_bytes(hw.memory_bytes)} → 0"),
        "bound": (f"{t['intensity']} {fmt_sig(e.intensity)} FLOP/B {'>' if e.bound == 'compute' else '≤'} "
                  f"{t['ridge']} {fmt_sig(ridge)} FLOP/B → {t[e.bound]}"),
    }


def _paper_x(batch: float) -> float:
    """Where a batch size sits across the plot area (0 = left edge, 1 = right edge)."""
    return round((math.log10(batch) - X_RANGE[0]) / (X_RANGE[1] - X_RANGE[0]), LOG_DIGITS)


def _y_range(points) -> list[float]:
    """A log-axis range around every plotted speed, fixed in Python so that plotly.js has nothing to add."""
    lo = min(p.per_request_tokens_per_s for p in points)
    hi = max(p.total_tokens_per_s for p in points)
    return [round(math.log10(lo) - Y_PADDING_DECADES, LOG_DIGITS),
            round(math.log10(hi) + Y_PADDING_DECADES, LOG_DIGITS)]


def _figure(points, current: batching.BatchPoint, limit: int, compute_from: int | None, t: dict) -> dict:
    fitting = [p for p in points if p.batch <= limit]
    # The beyond-capacity curve starts at the last fitting point so that the two pieces join.
    beyond = [p for p in points if p.batch >= limit]

    def curve(name: str, pts, value, colour: str, dash: str, legend: bool = True) -> dict:
        return {
            "type": "scatter", "mode": "lines", "name": name, "showlegend": legend,
            "x": [p.batch for p in pts], "y": [value(p) for p in pts],
            "line": {"color": colour, "width": 2.5 if dash == "solid" else 1.5, "dash": dash},
            "opacity": 1 if dash == "solid" else 0.55,
            "hovertemplate": f"{name}<br>B = %{{x}}<br>%{{y:,.4g}} tok/s<extra></extra>",
        }

    total, per_request = attrgetter("total_tokens_per_s"), attrgetter("per_request_tokens_per_s")
    data = []
    for key, value in (("total", total), ("per_request", per_request)):
        if fitting:
            data.append(curve(t[key], fitting, value, COLOURS[key], "solid"))
        if len(beyond) > 1 or not fitting:
            data.append(curve(t["over_curve"].format(curve=t[key]), beyond, value, COLOURS[key], "dot",
                              legend=not fitting))
    fits = current.fits
    data.append({
        "type": "scatter", "mode": "markers", "name": t["current"], "showlegend": False,
        "x": [current.batch, current.batch], "y": [total(current), per_request(current)],
        "marker": {"size": 12, "symbol": "circle" if fits else "circle-open",
                   "color": [COLOURS["total"], COLOURS["per_request"]], "line": {"width": 2, "color": "#1f2937"}},
        "hovertemplate": f"{t['current']}<br>B = %{{x}}<br>%{{y:,.4g}} tok/s<extra></extra>",
    })

    shapes, annotations = [], []
    if compute_from is not None and compute_from <= MAX_PLOTTED_BATCH:
        x0 = _paper_x(compute_from)
        shapes.append(_region(x0, "rgba(124,58,237,0.08)"))
        annotations.append(_label(x0, 0.4, t["compute_region"], COLOURS["compute"], "top"))
    if limit < MAX_PLOTTED_BATCH:
        x0 = _paper_x(limit) if limit >= 1 else 0
        shapes.append(_region(x0, "rgba(185,28,28,0.08)"))
        if limit >= 1:
            shapes.append({"type": "line", "xref": "paper", "yref": "paper", "x0": x0, "x1": x0, "y0": 0, "y1": 1,
                           "line": {"color": COLOURS["over"], "width": 2, "dash": "dash"}})
        label = f"{t['over']}<br>{t['limit'].format(limit=fmt_grouped(limit))}" if limit >= 1 else t["none_fit"]
        annotations.append(_label(x0, 0.6, label, COLOURS["over"], "bottom"))

    layout = {
        "xaxis": {"type": "log", "range": list(X_RANGE), "title": {"text": t["x"]},
                  "tickvals": list(X_TICKS), "ticktext": [str(b) for b in X_TICKS]},
        "yaxis": {"type": "log", "range": _y_range(points), "title": {"text": t["y"]}, "tickformat": ",~r"},
        "shapes": shapes,
        "annotations": annotations,
        "margin": {"l": 64, "r": 16, "t": 36, "b": 56},
        "height": 380,
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
        "uirevision": "batch-throughput",
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
    }
    return {"data": data, "layout": layout}


def _region(x0: float, fill: str) -> dict:
    """A band from x0 to the right edge of the plot, behind the curves."""
    return {"type": "rect", "xref": "paper", "yref": "paper", "x0": x0, "x1": 1, "y0": 0, "y1": 1,
            "fillcolor": fill, "line": {"width": 0}, "layer": "below"}


def _label(x: float, y: float, text: str, colour: str, anchor: str) -> dict:
    """A band's name just inside its left edge; outside, pointing at it, when the band is too narrow."""
    inside = x <= NARROW_BAND_FROM
    return {"xref": "paper", "yref": "paper", "x": x, "y": y, "yanchor": anchor,
            "xanchor": "left" if inside else "right", "xshift": 4 if inside else -4,
            "text": text if inside else f"{text} →", "showarrow": False, "align": "left" if inside else "right",
            "font": {"color": colour, "size": 12}}


def _table(points, limit: int, hw: presets.Hardware, m: presets.Model, s: dict, t: dict) -> str:
    """An HTML table of a few batch sizes, with the memory limit inserted as its own row: rows past the
    limit muted (their verdict a warning), the limit's label a warning, the chosen B's row current."""
    batches = set(TABLE_BATCHES)
    if 1 <= limit < MAX_PLOTTED_BATCH:
        batches.add(limit)
    rows = []
    for b in sorted(batches):
        p = points[b]
        fits = p.fits
        # The limit's label in a span: the kit's row-head colour would override a class on the <th>.
        label = f'<span class="warn">{html.escape(t["limit_row"].format(batch=b))}</span>' if b == limit else str(b)
        classes = " ".join(c for c in ("" if fits else "muted", "current" if b == s["B"] else "") if c)
        row_class = f' class="{classes}"' if classes else ""
        verdict_class = "" if fits else ' class="warn"'
        rows.append(
            f'<tr{row_class} data-batch="{b}"><th scope="row">{label}</th>'
            f'<td class="number">{fmt_sig(p.total_tokens_per_s)}</td>'
            f'<td class="number">{fmt_sig(p.per_request_tokens_per_s)}</td>'
            f'<td class="number">{fmt_ms(p.step_s)}</td>'
            f"<td{verdict_class}>{html.escape(t['fits'] if fits else t['does_not_fit'])}</td></tr>"
        )
    caption = t["table_caption"].format(gpu=hw.short_name, model=m.name, context=fmt_grouped(s["context"]))
    head = "".join(f'<th scope="col">{html.escape(t[k])}</th>'
                   for k in ("table_batch", "table_total", "table_per_request", "table_step", "table_fits"))
    return (f'<div class="table-scroll"><table class="widget-table"><caption>{html.escape(caption)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")
