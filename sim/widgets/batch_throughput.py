"""Batch throughput: total and per-request decode speed against batch size, and where memory stops it."""

from __future__ import annotations

import math
from operator import attrgetter

from sim.kit import Range, Widget, alt, capacity, choices, output, palette, view
from sim.kit.layout import Controls, Derivations, Figure, Flag, Readout, Readouts, Svg, Text
from sim.kit.table import html_table
from sim.kit.view import round_sig
from sim.page.display import fmt_bytes, fmt_flops, fmt_grouped, fmt_ms, fmt_share, fmt_sig
from sim.page.markup import escape
from sim.physics import memory, model_size, presets, roofline
from sim.serving import batching

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
        "critical_batch": "临界批大小：权重矩阵乘从这个 B 起算力受限",
        "critical_in_plot": "图中紫色区域从这里开始",
        "critical_beyond_plot": "超出图的范围（B ≤ {max_plotted}）",
        "critical_beyond_memory": "而显存只放得下 {limit} 个请求",
        "critical_note": "随 B 变成算力受限的只有权重矩阵乘：权重每步只读一遍、B 个请求共用，强度随 B 上升；"
                         "注意力读的 KV 和递归状态是每个请求自己的，强度不随 B 变，B 再大也带宽受限。",
        "bound": "这一步被什么限制",
        "over_capacity": "显存放不下：整份权重加上 B 个请求的 KV 与递归状态，超出了这张卡可用的显存。"
                         "图上虚线部分只是假想的数字，真要跑这么大的批，得换更大的卡、缩短上下文或把 KV 量化。",
        "throughput": "双对数坐标图：横轴批大小 B，纵轴 tok/s；蓝线总吞吐，橙线每个请求的速度，"
                      "紫色区域权重矩阵乘算力受限，红色区域显存放不下",
        "alt.current": "B = {batch} 时总吞吐 {total} tok/s、每个请求 {per} tok/s",
        "alt.critical": "从 B = {batch} 起权重矩阵乘算力受限",
        "alt.limit": "显存最多放 {limit} 个请求",
        "x": "批大小 B（对数坐标）", "y": "tok/s（对数坐标）", "total": "总吞吐", "per_request": "每个请求",
        "over_curve": "{curve}（显存放不下）", "over": "显存放不下", "none_fit": "显存放不下：\n一个请求都放不下",
        "limit": "上限 B = {limit}", "compute_region": "权重矩阵乘\n算力受限", "critical": "B ≥ {batch}",
        "compute_beyond": "权重矩阵乘\n算力受限：\nB ≥ {batch} →",
        "compute": "算力受限", "memory": "带宽受限", "mixed_compute": "{ops}算力受限", "mixed_rest": "其余带宽受限",
        "mixed_join": "，",
        "op.matmuls": "矩阵乘", "op.attention": "注意力", "op.state": "递归状态",
        "list_sep": "、", "list_last": "和", "clause_sep": "；",
        "current": "当前 B", "table_batch": "B", "table_total": "总吞吐（tok/s）",
        "table_per_request": "每个请求（tok/s）", "table_step": "一步耗时", "table_bound": "瓶颈",
        "table_fits": "显存", "fits": "放得下", "does_not_fit": "放不下", "limit_row": "{batch}（上限）",
        "critical_row": "{batch}（临界）",
        "table_caption": "几个批大小下的数字（{gpu} · {model} · 上下文 {context} token）",
        "table_label": "几个批大小下的数字",
        "weights": "权重", "kv": "KV", "state": "状态",
        "overlapped": "（若各算子完全重叠：max({compute}, {memory}) = {time}）",
        "op_bound": "{op}强度 {intensity} FLOP/B {cmp} 拐点 {ridge} FLOP/B → {bound}（{time}）",
        "compute_share": "算力受限的时间 {compute} ÷ {total} = {share} → {bound}",
        "critical_derivation": "权重矩阵乘强度 = B × {flops} ÷ {weights} = B × {per_request} FLOP/B > "
                               "拐点 {ridge} FLOP/B → B ≥ {batch}",
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
        "critical_batch": "Critical batch: the weight matmuls are compute-bound from this B on",
        "critical_in_plot": "where the purple band of the plot begins",
        "critical_beyond_plot": "beyond the plot (B ≤ {max_plotted})",
        "critical_beyond_memory": "but memory holds only {limit} requests",
        "critical_note": "Only the weight matmuls turn compute-bound as B grows: the weights are read once per step "
                         "and shared by all B requests, so their intensity rises with B. Attention reads each "
                         "request's own KV and the recurrent state is each request's own, so their intensity stays "
                         "the same whatever B is, and they stay memory-bound.",
        "bound": "What bounds the step",
        "over_capacity": "Out of memory: the whole checkpoint plus B requests' KV and recurrent state exceed the "
                         "memory this GPU can use. The dotted part of the plot is hypothetical; a batch this large "
                         "needs a bigger GPU, a shorter context or a quantized KV cache.",
        "throughput": "Log-log plot of tok/s against batch size B: blue total throughput, orange per-request speed, "
                      "purple band where the weight matmuls are compute-bound, red band where memory runs out",
        "alt.current": "at B = {batch}, {total} tok/s in total and {per} tok/s per request",
        "alt.critical": "weight matmuls compute-bound from B = {batch}",
        "alt.limit": "memory holds at most {limit} requests",
        "x": "Batch B (log scale)", "y": "tok/s (log scale)", "total": "Total", "per_request": "Per request",
        "over_curve": "{curve} (does not fit)", "over": "Does not fit\nin memory",
        "none_fit": "Not even one\nrequest fits",
        "limit": "limit B = {limit}", "compute_region": "Weight matmuls\ncompute-bound", "critical": "B ≥ {batch}",
        "compute_beyond": "Weight matmuls\ncompute-bound\nfrom B = {batch} →",
        "compute": "compute-bound", "memory": "memory-bound", "mixed_compute": "{ops} compute-bound",
        "mixed_rest": "the rest memory-bound", "mixed_join": ", ",
        "op.matmuls": "matmuls", "op.attention": "attention", "op.state": "recurrent state",
        "list_sep": ", ", "list_last": " and ", "clause_sep": "; ",
        "current": "current B", "table_batch": "B", "table_total": "Total (tok/s)",
        "table_per_request": "Per request (tok/s)", "table_step": "Step", "table_bound": "Bound",
        "table_fits": "Memory", "fits": "fits", "does_not_fit": "does not fit", "limit_row": "{batch} (limit)",
        "critical_row": "{batch} (critical)",
        "table_caption": "Figures at a few batch sizes ({gpu} · {model} · {context} tokens of context)",
        "table_label": "Figures at a few batch sizes",
        "weights": "weights", "kv": "KV", "state": "state",
        "overlapped": " (if the kernels overlapped perfectly: max({compute}, {memory}) = {time})",
        "op_bound": "{op}: intensity {intensity} FLOP/B {cmp} ridge {ridge} FLOP/B → {bound} ({time})",
        "compute_share": "time compute-bound {compute} ÷ {total} = {share} → {bound}",
        "critical_derivation": "weight matmuls' intensity = B × {flops} ÷ {weights} = B × {per_request} FLOP/B > "
                               "ridge {ridge} FLOP/B → B ≥ {batch}",
    },
}

WIDGET = Widget(
    controls=(
        Range("B", default=32, min=1, max=MAX_PLOTTED_BATCH, log=True),
        Range("context", default=4_096, min=1, max=131_072, log=True),
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
        Flag("capacity"),
        Readouts(
            "total_tokens_per_s", "per_request_tokens_per_s", Readout("step_ms", note="bound"),
            "weights_share", "max_batch", Readout("critical_batch", note="critical_where"),
        ),
        Flag("over_capacity"),
        Figure("throughput"),
        Text("critical_note"),
        Svg("table", label="table_label"),
        Derivations("bound"),
    ),
)

TABLE_BATCHES = (1, 8, 32, 64, 128, 256)
# Batch sizes drawn: eight per doubling (smooth on a log axis, and cheap enough for every slider move)
# plus the table's rows. Each view adds the chosen B, the memory limit and the critical batch, so
# that the curves break exactly where the regions begin.
CURVE_BATCHES = frozenset({round(2 ** (k / 8)) for k in range(65)} | set(TABLE_BATCHES))

# Fixed horizontal frame (log10 of B: about 0.8 to 300), so that regions can be placed in paper coordinates.
# Literal numbers, and logarithms rounded, because Pyodide's libm may differ from CPython's in the last bit
# and the browser's view must equal the build's.
X_RANGE = (-0.1, 2.48)
X_TICKS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
Y_PADDING_DECADES = 0.15
LOG_DIGITS = 6
LABELS_FROM = 0.5  # paper x: the band names, right-aligned, reach about this far left on a phone
LABEL_GAP = 0.03  # paper y between the two band names

COLOURS = {"total": palette.colour("decode"), "per_request": palette.colour("per-request"),
           "over": palette.colour("over"), "compute": palette.colour("region-compute-ink")}


def render(state) -> dict:
    """The batch-throughput view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    hw, m = choices.gpu(s), presets.model(s["model"])
    ctx, dtype = s["context"], s["state_dtype"]
    weights = model_size.resident_weight_bytes(m)
    limit = memory.max_batch(m, hw, context=ctx, state_dtype=dtype)
    critical = roofline.critical_batch(m, hw)
    edges = {b for b in (limit, limit + 1, critical) if 1 <= b <= MAX_PLOTTED_BATCH}
    batches = sorted(CURVE_BATCHES | edges | {s["B"]})
    points = {p.batch: p for p in batching.sweep_batches(m, hw, batches, context=ctx, state_dtype=dtype)}
    current = points[s["B"]]
    step = current.step
    fits = capacity.fits(weights, hw)

    where = [t["critical_in_plot"] if critical <= MAX_PLOTTED_BATCH
             else t["critical_beyond_plot"].format(max_plotted=MAX_PLOTTED_BATCH)]
    if critical > limit > 0:  # (no request at all fitting is the flags' to say)
        where.append(t["critical_beyond_memory"].format(limit=fmt_grouped(limit)))
    outputs = {
        "total_tokens_per_s": output(current.total_tokens_per_s, f"{fmt_sig(current.total_tokens_per_s)} tok/s"),
        "per_request_tokens_per_s": output(current.per_request_tokens_per_s,
                                           f"{fmt_sig(current.per_request_tokens_per_s)} tok/s"),
        "step_ms": output(current.step_s * 1e3, fmt_ms(current.step_s)),
        "max_batch": output(limit, fmt_grouped(limit)),
        "bound": output(int(step.bound == "compute"), bound_words(step, t)),
        "weights_share": output(current.weights_share * 100, f"{current.weights_share * 100:.1f}%"),
        "critical_batch": output(critical, fmt_grouped(critical)),
        "critical_where": output(int(critical <= MAX_PLOTTED_BATCH), t["clause_sep"].join(where)),
        **capacity.outputs(weights, hw),
    }
    return view(
        s,
        outputs,
        figures={"throughput": _figure(list(points.values()), current, limit, critical, s["lang"])},
        svg={"table": _table(points, limit, critical, hw, m, s, t)},
        flags={"capacity": not fits, "over_capacity": fits and s["B"] > limit, "no_state": choices.no_state(m)},
        derivations=_derivations(m, hw, current, limit, critical, s, t),
    )


def bound_words(e: roofline.Estimate, t: dict, join: str | None = None) -> str:
    """What bounds a step, truthfully when its operations differ: "matmuls compute-bound, the rest memory-bound"
    (its two clauses joined by `join`, default the language's comma)."""
    if not e.mixed:
        return t[e.bound]
    compute = t["mixed_compute"].format(ops=_join([t[f"op.{op.name}"] for op in e.ops if op.bound == "compute"], t))
    return (t["mixed_join"] if join is None else join).join((compute, t["mixed_rest"]))


def _join(items: list[str], t: dict) -> str:
    """a, b and c (in the page's language)."""
    return items[0] if len(items) == 1 else t["list_sep"].join(items[:-1]) + t["list_last"] + items[-1]


def _derivations(m: presets.Model, hw: presets.Hardware, p: batching.BatchPoint, limit: int, critical: int,
                 s: dict, t: dict) -> dict:
    e = p.step
    kinds = e.bytes_by_kind
    ridge = roofline.ridge_point(hw)
    peak, bandwidth = f"{hw.peak_flops_per_s / 1e12:g} TFLOP/s", f"{hw.bandwidth_bytes_per_s / 1e12:g} TB/s"
    resident = memory.resident_bytes(m, batch=0, context=s["context"], state_dtype=s["state_dtype"])
    per_request = memory.bytes_per_request(m, context=s["context"], state_dtype=s["state_dtype"])
    reported = presets.hardware(s["hardware"]).memory_bytes
    usable = fmt_bytes(reported) if s["memory_fraction"] == 1 else f"{s['memory_fraction']:g} × {fmt_bytes(reported)}"
    step_bytes = (f"{fmt_bytes(kinds['weights'])} {t['weights']} + {fmt_bytes(kinds['kv'])} {t['kv']} "
                  f"+ {fmt_bytes(kinds['state'])} {t['state']}")
    terms = [f"{t[f'op.{op.name}']} max({fmt_flops(op.flops)} ÷ {peak}, {fmt_bytes(op.bytes)} ÷ {bandwidth})"
             if op.flops else f"{t[f'op.{op.name}']} {fmt_bytes(op.bytes)} ÷ {bandwidth}" for op in e.ops]
    bounds = [t["op_bound"].format(op=t[f"op.{op.name}"], intensity=fmt_sig(op.intensity),
                                   cmp=">" if op.bound == "compute" else "≤", ridge=fmt_sig(ridge),
                                   bound=t[op.bound], time=fmt_ms(op.time_s)) for op in e.ops]
    share = fmt_share(e.compute_bound_time_s / e.time_s)
    matmuls = e.op("matmuls")
    return {
        "step_ms": (" + ".join(terms) + " = " + " + ".join(fmt_ms(op.time_s) for op in e.ops) + f" = {fmt_ms(e.time_s)}"
                    + t["overlapped"].format(compute=fmt_ms(e.compute_time_s), memory=fmt_ms(e.memory_time_s),
                                             time=fmt_ms(e.overlapped_time_s))),
        "total_tokens_per_s": f"{p.batch} ÷ {fmt_ms(p.step_s)} = {fmt_sig(p.total_tokens_per_s)} tok/s",
        "per_request_tokens_per_s": f"1 ÷ {fmt_ms(p.step_s)} = {fmt_sig(p.per_request_tokens_per_s)} tok/s",
        "weights_share": (f"{fmt_bytes(kinds['weights'])} ÷ ({step_bytes}) "
                          f"= {p.weights_share * 100:.1f}%"),
        "max_batch": (f"⌊({usable} − {fmt_bytes(resident)}) ÷ {fmt_bytes(per_request)}⌋ "
                      f"= {fmt_grouped(limit)}" if hw.memory_bytes > resident
                      else f"{fmt_bytes(resident)} ≥ {usable} → 0"),
        "bound": t["clause_sep"].join(bounds) + t["clause_sep"] + t["compute_share"].format(
            compute=fmt_ms(e.compute_bound_time_s), total=fmt_ms(e.time_s), share=share,
            bound=bound_words(e, t)),
        "critical_batch": t["critical_derivation"].format(
            flops=fmt_flops(matmuls.flops / p.batch), weights=fmt_bytes(matmuls.bytes),
            per_request=fmt_sig(matmuls.flops / p.batch / matmuls.bytes), ridge=fmt_sig(ridge, 4),
            batch=fmt_grouped(critical)),
    }


def _plotted(speed: float) -> float:
    """A speed as the plot gets it: six significant digits, like an output's value (all a plot can show, and
    a shorter view to send on every slider move)."""
    return round_sig(speed, 6)


def _paper_x(batch: float) -> float:
    """Where a batch size sits across the plot area (0 = left edge, 1 = right edge)."""
    return round((math.log10(batch) - X_RANGE[0]) / (X_RANGE[1] - X_RANGE[0]), LOG_DIGITS)


def _y_range(points) -> list[float]:
    """A log-axis range around every plotted speed, fixed in Python so that plotly.js has nothing to add."""
    lo = min(p.per_request_tokens_per_s for p in points)
    hi = max(p.total_tokens_per_s for p in points)
    return [round(math.log10(lo) - Y_PADDING_DECADES, LOG_DIGITS),
            round(math.log10(hi) + Y_PADDING_DECADES, LOG_DIGITS)]


def _figure(points, current: batching.BatchPoint, limit: int, critical: int, lang: str) -> dict:
    t = TEXT[lang]
    fitting = [p for p in points if p.batch <= limit]
    # The beyond-capacity curve starts at the last fitting point so that the two pieces join.
    beyond = [p for p in points if p.batch >= limit]

    def curve(name: str, pts, value, colour: str, dash: str, legend: bool = True) -> dict:
        return {
            "type": "scatter", "mode": "lines", "name": name, "showlegend": legend,
            "x": [p.batch for p in pts], "y": [_plotted(value(p)) for p in pts],
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
        "x": [current.batch, current.batch], "y": [_plotted(total(current)), _plotted(per_request(current))],
        "marker": {"size": 12, "symbol": "circle" if fits else "circle-open",
                   "color": [COLOURS["total"], COLOURS["per_request"]],
                   "line": {"width": 2, "color": palette.colour("ink")}},
        "hovertemplate": f"{t['current']}<br>B = %{{x}}<br>%{{y:,.4g}} tok/s<extra></extra>",
    })

    # Each band's name stands at the plot's right edge, where every band reaches, in short lines: plotly does not
    # know how wide the page draws it, and on a phone the names reach across the right part of the plot
    # (tests/browser/test_phone_tables.py). They sit one above the other, or one alone, in the middle of the
    # gap between the two curves there.
    shapes, annotations = [], []
    middle = _gap_middle(points)
    if critical <= MAX_PLOTTED_BATCH:
        shapes.append(_region(_paper_x(critical), palette.colour("region-compute")))
        label = f"{t['compute_region']}\n{t['critical'].format(batch=fmt_grouped(critical))}"
    else:  # beyond the plot: say where, at its right edge
        label = t["compute_beyond"].format(batch=fmt_grouped(critical))
    alone = limit >= MAX_PLOTTED_BATCH
    annotations.append(_label(middle if alone else middle - LABEL_GAP, label, COLOURS["compute"],
                              "middle" if alone else "top"))
    if limit < MAX_PLOTTED_BATCH:
        x0 = _paper_x(limit) if limit >= 1 else 0
        shapes.append(_region(x0, palette.colour("region-over")))
        if limit >= 1:
            shapes.append({"type": "line", "xref": "paper", "yref": "paper", "x0": x0, "x1": x0, "y0": 0, "y1": 1,
                           "line": {"color": COLOURS["over"], "width": 2, "dash": "dash"}})
        label = f"{t['over']}\n{t['limit'].format(limit=fmt_grouped(limit))}" if limit >= 1 else t["none_fit"]
        annotations.append(_label(middle + LABEL_GAP, label, COLOURS["over"], "bottom"))

    layout = palette.plot_layout({
        "xaxis": {"type": "log", "range": list(X_RANGE), "title": {"text": t["x"]},
                  "tickvals": list(X_TICKS), "ticktext": [str(b) for b in X_TICKS]},
        "yaxis": {"type": "log", "range": _y_range(points), "title": {"text": t["y"]}, "tickformat": ",~r"},
        "shapes": shapes,
        "annotations": annotations,
        "margin": {"l": 64, "r": 16, "t": 36, "b": 56},
        "height": 380,
        "legend": palette.legend_above(),
        "uirevision": "batch-throughput",
    })
    spoken = [t["alt.current"].format(batch=fmt_grouped(current.batch), total=fmt_sig(current.total_tokens_per_s),
                                      per=fmt_sig(current.per_request_tokens_per_s)),
              t["alt.critical"].format(batch=fmt_grouped(critical)), t["alt.limit"].format(limit=fmt_grouped(limit))]
    return {"data": data, "layout": layout, "alt": alt.sentence(lang, t["throughput"], spoken)}


def _gap_middle(points) -> float:
    """Halfway (paper y) between the per-request curve's highest and the total curve's lowest point over the right
    part of the plot, where the band names are: between 0.35 and 0.65."""
    lo, hi = _y_range(points)
    right = [p for p in points if _paper_x(p.batch) >= LABELS_FROM]
    top = min(math.log10(p.total_tokens_per_s) for p in right)
    bottom = max(math.log10(p.per_request_tokens_per_s) for p in right)
    return round(min(max(((top + bottom) / 2 - lo) / (hi - lo), 0.35), 0.65), 3)


def _region(x0: float, fill: str) -> dict:
    """A band from x0 to the right edge of the plot, behind the curves."""
    return {"type": "rect", "xref": "paper", "yref": "paper", "x0": x0, "x1": 1, "y0": 0, "y1": 1,
            "fillcolor": fill, "line": {"width": 0}, "layer": "below"}


def _label(y: float, text: str, colour: str, anchor: str) -> dict:
    """A band's name, its lines (\\n in TEXT) right-aligned against the plot's right edge, where every band reaches."""
    return {"xref": "paper", "yref": "paper", "x": 1, "y": y, "yanchor": anchor, "xanchor": "right", "xshift": -4,
            "text": text.replace("\n", "<br>"), "showarrow": False, "align": "right",
            # On the plot's background, so that the limit's dashed line, which a phone's narrow plot draws through
            # the names, does not cross their text.
            "bgcolor": palette.colour("surface"), "borderpad": 2, "font": {"color": colour, "size": 12}}


def _table(points, limit: int, critical: int, hw: presets.Hardware, m: presets.Model, s: dict, t: dict) -> str:
    """An HTML table of a few batch sizes, with the memory limit and the critical batch inserted as their own
    rows: rows past the limit muted (their verdict a warning), the limit's label a warning, the chosen B's row
    current."""
    batches = set(TABLE_BATCHES)
    if 1 <= limit < MAX_PLOTTED_BATCH:
        batches.add(limit)
    if critical <= MAX_PLOTTED_BATCH:
        batches.add(critical)
    rows = []
    for b in sorted(batches):
        p = points[b]
        fits = p.fits
        # The limit's label in a span: the kit's row-head colour would override a class on the <th>.
        if b == limit:
            label = f'<span class="warn">{escape(t["limit_row"].format(batch=b))}</span>'
        else:
            label = escape(t["critical_row"].format(batch=b)) if b == critical else str(b)
        classes = " ".join(c for c in ("" if fits else "muted", "current" if b == s["B"] else "") if c)
        row_class = f' class="{classes}"' if classes else ""
        verdict_class = "" if fits else ' class="warn"'
        rows.append((f'{row_class} data-batch="{b}"', [
            ("th", ' scope="row"', label),
            ("td", ' class="number"', fmt_sig(p.total_tokens_per_s)),
            ("td", ' class="number"', fmt_sig(p.per_request_tokens_per_s)),
            ("td", ' class="number"', fmt_ms(p.step_s)),
            ("td", verdict_class, escape(t["fits"] if fits else t["does_not_fit"])),
            # A mixed bound on two lines, so that the narrow columns beside it are not squeezed into wrapping.
            ("td", "", bound_words(p.step, {k: escape(v) for k, v in t.items()}, t["mixed_join"] + "<br>")),
        ]))
    caption = t["table_caption"].format(gpu=hw.short_name, model=m.name, context=fmt_grouped(s["context"]))
    columns = [t[k] for k in ("table_batch", "table_total", "table_per_request", "table_step", "table_fits",
                              "table_bound")]
    # The page draws it inside a frame that scrolls sideways, or stacks its rows, on a phone (the kit's Svg item).
    return html_table(caption, columns, rows)
