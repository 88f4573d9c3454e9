"""Batching timeline: one GPU serving a trace of requests, batch by batch (static) or step by step (continuous).

The simulation is sim/scheduler.py (its docstring states every convention: how a step is costed from the
roofline, how joiners' prefill is paid, how memory limits admission, how the metrics are defined); the
requests come from sim/traces.py. This module only draws it. Both policies are simulated on every move,
so that the time axis is the same for both (toggling the policy shows the same trace on the same scale)
and the gain of one over the other can be read off directly.

Fixed here, all OUR CHOICE (scheduler.DEFAULT_*): 48 requests of seed 0, and every request reserving KV for
MAX_TOKENS = 2,048 tokens (FasterTransformer's pre-allocation, Orca §6.1; vLLM's Orca(Max), §6.1).
"""

from __future__ import annotations

import math

from sim import cache, model_size, presets, scheduler, svg, traces
from sim.display import fmt_bytes, fmt_grouped, fmt_ms, fmt_sig
from sim.kit import (
    Controls,
    Flag,
    Range,
    Readout,
    Readouts,
    Select,
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
from sim.widgets.kv_capacity import text_width

TEXT = {
    "zh": {
        "title": "静态批处理与连续批处理：同一串请求，两种排法",
        "policy": "调度方式",
        "policy=static": "静态：整批跑完才换下一批",
        "policy=continuous": "连续：每一步都可以进出",
        "rate": "到达率（每秒请求数，泊松到达）",
        "trace": "请求长度",
        "trace=orca": "Orca 的合成负载：提示 32–512、输出 1–128 token",
        "trace=chat": "类聊天：提示 32–1,024、输出 1–1,024 token",
        "max_batch": "最大批大小 max_batch",
        "throughput_tokens_per_s": "吞吐（输出 token）",
        "requests_per_s": "合 {value} 个请求/秒",
        "latency_per_token_p50_ms": "每个输出 token 的延迟：中位数",
        "latency_per_token_p90_ms": "每个输出 token 的延迟：p90",
        "mean_batch": "平均每步一起算的请求数",
        "makespan_s": "从第一个请求到达到最后一个返回",
        "continuous_gain": "连续批处理的吞吐是静态的几倍",
        "memory_limit": "按 2,048 token 预留时显存放得下的请求数",
        "memory_bound": "显存只放得下 {memory_limit} 个请求（每个按 2,048 token 预留 KV）：max_batch 调得再大，"
                        "一批也进不了更多请求。",
        "note": "一共 {requests} 个请求，长度和到达时刻都是固定随机种子生成的，两种调度面对的是同一串请求。"
                "每一步的耗时按前几课的屋顶线估算：权重每步读一遍，KV 和递归状态随批里的请求和它们的上下文增长，"
                "新加入请求的提示要在它加入的那一步里一起算完（prefill），那一步就更慢。"
                "静态批处理：GPU 空下来时，把正在等的请求凑成一批，一直跑到最长的那个生成完；"
                "这期间新来的请求只能排队，先写完的请求也要等整批结束才能返回（Orca §1）。"
                "连续批处理：每一步之后，写完的请求立刻离开并返回，排队的请求立刻补进来（Orca 的迭代级调度）。"
                "每个请求进来时按 2,048 token 预留 KV 显存，放不下就继续排队。"
                "「每个输出 token 的延迟」=（返回时刻 − 到达时刻）÷ 输出 token 数，"
                "是 Orca 和 vLLM 论文用的归一化延迟。",
        "timeline_label": "请求时间线与每步批大小",
        "legend.wait": "排队",
        "legend.prefill": "prefill（处理提示）",
        "legend.decode": "decode（逐个生成）",
        "legend.held": "已写完，等整批结束才返回",
        "rows": "每行一个请求，从上到下按到达顺序",
        "batch_axis": "每一步一起算的请求数",
        "cap": "max_batch = {max_batch}",
        "memory_cap": "显存上限 {limit}",
        "time_axis": "时间（秒）",
        "seconds": "{value} 秒",
        "alt.head": "{policy}下 {n} 个请求的时间线",
        "alt.throughput": "吞吐 {value} tok/s",
        "alt.latency": "每个输出 token 的延迟中位数 {p50}、p90 {p90}",
        "alt.batch": "平均每步 {mean} 个请求（上限 {cap}）",
        "alt.end": "最后一个请求在 {end} 秒返回",
        "alt.other": "同一串请求用{other}：吞吐 {value} tok/s，最后一个在 {end} 秒返回",
        "alt.static": "静态批处理",
        "alt.continuous": "连续批处理",
        "derive.throughput": "{tokens} 个输出 token ÷ {makespan}（{first} 秒第一个请求到达，{last} 秒最后一个返回）"
                             "= {value} tok/s",
        "derive.p50": "{n} 个请求各自的（返回 − 到达）÷ 输出 token 数，排序后取中位数 = {value}",
        "derive.p90": "{n} 个请求各自的（返回 − 到达）÷ 输出 token 数，排序后取第 90 百分位（线性插值）= {value}",
        "derive.mean_batch": "Σ（每步耗时 × 这一步的请求数）÷ GPU 忙碌的 {busy}（共 {steps} 步）= {value}",
        "derive.makespan": "{last} 秒 − {first} 秒 = {value}",
        "derive.gain": "连续 {continuous} tok/s ÷ 静态 {static} tok/s = {value}",
        "derive.memory": "⌊({usable} − 权重 {weights}) ÷ (2,048 × {kv} + 递归状态 {state})⌋ = {value}",
    },
    "en": {
        "title": "Static vs continuous batching: one stream of requests, two ways to schedule it",
        "policy": "Scheduling",
        "policy=static": "Static: a batch runs to its end before the next",
        "policy=continuous": "Continuous: requests leave and join every step",
        "rate": "Arrival rate (requests per second, Poisson)",
        "trace": "Request lengths",
        "trace=orca": "Orca's synthetic trace: prompts 32–512, outputs 1–128 tokens",
        "trace=chat": "Chat-like: prompts 32–1,024, outputs 1–1,024 tokens",
        "max_batch": "Max batch size (max_batch)",
        "throughput_tokens_per_s": "Throughput (output tokens)",
        "requests_per_s": "{value} requests/s",
        "latency_per_token_p50_ms": "Latency per output token: median",
        "latency_per_token_p90_ms": "Latency per output token: p90",
        "mean_batch": "Requests computed per step, on average",
        "makespan_s": "First arrival to last response",
        "continuous_gain": "Continuous batching's throughput over static's",
        "memory_limit": "Requests that fit in memory at 2,048-token reservations",
        "memory_bound": "Memory holds only {memory_limit} requests (each reserving KV for 2,048 tokens): a larger "
                        "max_batch lets no more of them into a batch.",
        "note": "{requests} requests, their lengths and arrival times drawn from a fixed random seed, so both policies "
                "face the same stream. Each step's time is the roofline estimate of the earlier lessons: the "
                "weights are read once per step, KV and recurrent-state traffic grow with the requests in the "
                "batch and their contexts, and a request's prompt is processed in the step it joins (its "
                "prefill), which makes that step slower. Static batching: when the GPU is free, the waiting "
                "requests form a batch, which runs until its longest member is done; new arrivals queue "
                "meanwhile, and a request that finishes early is returned only when the whole batch ends "
                "(Orca §1). Continuous batching: after every step, finished requests leave and are returned at "
                "once, and waiting ones join (Orca's iteration-level scheduling). Each request reserves KV "
                "memory for 2,048 tokens when it is admitted, and waits while that does not fit. Latency per "
                "output token = (response time − arrival time) ÷ output tokens, the normalized latency of the "
                "Orca and vLLM papers.",
        "timeline_label": "Request timeline and batch size per step",
        "legend.wait": "Waiting",
        "legend.prefill": "Prefill (the prompt)",
        "legend.decode": "Decode (token by token)",
        "legend.held": "Done, held until its batch ends",
        "rows": "One row per request, top to bottom in order of arrival",
        "batch_axis": "Requests computed per step",
        "cap": "max_batch = {max_batch}",
        "memory_cap": "memory limit {limit}",
        "time_axis": "Time (s)",
        "seconds": "{value} s",
        "alt.head": "Timeline of {n} requests under {policy}",
        "alt.throughput": "throughput {value} tok/s",
        "alt.latency": "latency per output token median {p50}, p90 {p90}",
        "alt.batch": "{mean} requests per step on average (at most {cap})",
        "alt.end": "the last request returned at {end} s",
        "alt.other": "the same requests under {other}: {value} tok/s, the last returned at {end} s",
        "alt.static": "static batching",
        "alt.continuous": "continuous batching",
        "derive.throughput": "{tokens} output tokens ÷ {makespan} (first arrival at {first} s, last response at "
                             "{last} s) = {value} tok/s",
        "derive.p50": "(response − arrival) ÷ output tokens of each of {n} requests, sorted, median = {value}",
        "derive.p90": "(response − arrival) ÷ output tokens of each of {n} requests, sorted, 90th percentile "
                      "(interpolated) = {value}",
        "derive.mean_batch": "Σ (step time × requests in the step) ÷ {busy} the GPU is busy ({steps} steps) = {value}",
        "derive.makespan": "{last} s − {first} s = {value}",
        "derive.gain": "continuous {continuous} tok/s ÷ static {static} tok/s = {value}",
        "derive.memory": "⌊({usable} − weights {weights}) ÷ (2,048 × {kv} + recurrent state {state})⌋ = {value}",
    },
}

WIDGET = Widget(
    controls=(
        Select("policy", default="static", options=scheduler.POLICIES, style="buttons"),
        Range("rate", default=scheduler.DEFAULT_RATE_PER_S, min=0.5, max=50, step=0.5, log=True),
        Select("trace", default=scheduler.DEFAULT_TRACE, options=traces.PRESETS, style="buttons"),
        Range("max_batch", default=scheduler.DEFAULT_MAX_BATCH, min=1, max=64, log=True),
        choices.hardware(),
        choices.model(),
    ),
    layout=(
        Controls(),
        Flag("capacity"),
        Readouts(
            Readout("throughput_tokens_per_s", note="requests_per_s"), "latency_per_token_p50_ms",
            "latency_per_token_p90_ms", "mean_batch", "makespan_s", "continuous_gain", "memory_limit",
        ),
        Flag("memory_bound", tone="note"),
        Svg("timeline", label="timeline_label"),
        Text("note"),
    ),
)

COLOURS = {"wait": palette.colour("reserved"), "prefill": palette.colour("prefill"),
           "decode": palette.colour("decode"), "held": palette.colour("per-request")}

# The diagram's frame, in px of its viewBox (it scrolls sideways on a phone rather than shrink its text).
WIDTH, SIDE = 600, 12
ROW, BAR = 6, 5  # one request per row
CHART = 72  # height of the batch-size chart
TICK_STEPS = (1, 2, 5)


def render(state) -> dict:
    """The batching-timeline view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    hw, m = choices.gpu(s), presets.model(s["model"])
    scenario = {"trace": s["trace"], "rate_per_s": s["rate"], "max_batch": s["max_batch"]}
    runs = {policy: scheduler.serve(m, hw, policy, **scenario) for policy in scheduler.POLICIES}
    run, other = runs[s["policy"]], runs["continuous" if s["policy"] == "static" else "static"]
    weights = model_size.resident_weight_bytes(m)
    limit = scheduler.fit_at_max(m, hw)
    static_tps, continuous_tps = (runs[p].throughput_tokens_per_s for p in scheduler.POLICIES)
    gain = continuous_tps / static_tps if static_tps else 0.0
    p50, p90 = run.latency_per_token_p50_s, run.latency_per_token_p90_s
    first = min((x.request.arrival_s for x in run.served), default=0.0)

    outputs = {
        "throughput_tokens_per_s": output(run.throughput_tokens_per_s,
                                          f"{fmt_sig(run.throughput_tokens_per_s)} tok/s"),
        "requests_per_s": output(run.requests_per_s, t["requests_per_s"].format(value=fmt_sig(run.requests_per_s))),
        "latency_per_token_p50_ms": output(p50 * 1e3, fmt_ms(p50)),
        "latency_per_token_p90_ms": output(p90 * 1e3, fmt_ms(p90)),
        "mean_batch": output(run.mean_batch, fmt_sig(run.mean_batch)),
        "makespan_s": output(run.makespan_s, _seconds(run.makespan_s, t)),
        "continuous_gain": output(gain, f"{fmt_sig(gain)}×"),
        "memory_limit": output(limit, fmt_grouped(limit)),
        "requests": output(len(run.requests), fmt_grouped(len(run.requests))),
        **capacity.outputs(weights, hw),
    }
    n = len(run.served)
    derivations = {
        "throughput_tokens_per_s": t["derive.throughput"].format(
            tokens=fmt_grouped(run.output_tokens), makespan=_seconds(run.makespan_s, t), first=fmt_sig(first),
            last=fmt_sig(run.end_s), value=fmt_sig(run.throughput_tokens_per_s)),
        "latency_per_token_p50_ms": t["derive.p50"].format(n=n, value=fmt_ms(p50)),
        "latency_per_token_p90_ms": t["derive.p90"].format(n=n, value=fmt_ms(p90)),
        "mean_batch": t["derive.mean_batch"].format(busy=_seconds(run.busy_s, t), steps=fmt_grouped(run.step_count),
                                                    value=fmt_sig(run.mean_batch)),
        "makespan_s": t["derive.makespan"].format(last=fmt_sig(run.end_s), first=fmt_sig(first),
                                                  value=_seconds(run.makespan_s, t)),
        "continuous_gain": t["derive.gain"].format(continuous=fmt_sig(continuous_tps), static=fmt_sig(static_tps),
                                                   value=f"{fmt_sig(gain)}×"),
        "memory_limit": t["derive.memory"].format(
            usable=fmt_bytes(hw.memory_bytes), weights=fmt_bytes(weights), kv=fmt_bytes(cache.kv_bytes_per_token(m)),
            state=fmt_bytes(cache.state_bytes_per_request(m)), value=fmt_grouped(limit)),
    }
    flags = {"capacity": not capacity.fits(weights, hw), "memory_bound": capacity.fits(weights, hw)
             and limit < s["max_batch"]}
    timeline = _timeline(run, other, s, limit, t)
    return view(s, outputs, svg={"timeline": timeline}, flags=flags, derivations=derivations)


def _seconds(x: float, t: dict) -> str:
    return t["seconds"].format(value=fmt_sig(x))


def _tick_step(span: float) -> float:
    """A round step (1, 2 or 5 x 10^k seconds) that puts at most 8 ticks across `span`."""
    if span <= 0:
        return 1.0
    exponent = math.floor(math.log10(span / 8))
    for scale in (10.0**exponent, 10.0 ** (exponent + 1)):
        for step in TICK_STEPS:
            if span / (step * scale) <= 8:
                return step * scale
    return 10.0 ** (exponent + 2)


def _legend(keys: list[str], y: float, t: dict) -> tuple[list[str], float]:
    """Swatches and their labels, wrapped onto as many rows as the width needs; returns them and the last row's y."""
    parts, x = [], float(SIDE)
    for key in keys:
        label = t[f"legend.{key}"]
        width = 28 + text_width(label, 13)
        if x + width > WIDTH - SIDE and x > SIDE:
            x, y = float(SIDE), y + 20
        parts.append(svg.element("rect", {"x": x, "y": y, "width": 12, "height": 12, "fill": COLOURS[key],
                                          "stroke": palette.colour("outline"), "stroke-width": 0.5}))
        parts.append(svg.text(label, {"x": x + 16, "y": y + 11, "class": "svg-label"}))
        x += width
    return parts, y


def _timeline(run: scheduler.Schedule, other: scheduler.Schedule, s: dict, limit: int, t: dict) -> str:
    """One row per request (waiting, prefill, decode, and for static batches the time a finished request is held),
    and below it the requests computed in each step, on one time axis shared by both policies."""
    span = max(run.end_s, other.end_s)
    step = _tick_step(span)
    axis_end = step * max(1, math.ceil(span / step - 1e-9))
    scale = (WIDTH - 2 * SIDE) / axis_end  # px per second

    def x(seconds: float) -> float:
        return SIDE + seconds * scale

    keys = ["wait", "prefill", "decode"] + (["held"] if s["policy"] == "static" else [])
    legend, y = _legend(keys, 8.0, t)
    rows_label_y = y + 34
    rows_y = rows_label_y + 8
    n = len(run.requests)
    chart_label_y = rows_y + n * ROW + 24
    chart_top = chart_label_y + 10
    chart_bottom = chart_top + CHART
    axis_y = chart_bottom + 16
    height = axis_y + 22

    parts = [svg.text(t["rows"], {"x": SIDE, "y": rows_label_y, "class": "svg-muted"})]
    ticks = []
    for k in range(round(axis_end / step) + 1):
        tx = x(k * step)
        ticks.append(svg.element("line", {"x1": tx, "y1": rows_y - 2, "x2": tx, "y2": chart_bottom,
                                          "stroke": palette.colour("grid"), "stroke-width": 1}))
        anchor = "start" if k == 0 else "middle"
        ticks.append(svg.text(f"{k * step:g}", {"x": tx, "y": axis_y, "text-anchor": anchor, "class": "svg-muted"}))
    ticks.append(svg.text(t["time_axis"], {"x": WIDTH - SIDE, "y": axis_y + 16, "text-anchor": "end",
                                           "class": "svg-muted"}))

    # Written out rather than through svg.element: this runs for every bar on every move, and every value in it
    # is a number or a fixed name. A rejected request (it could never fit in memory) has an empty row.
    rows = []
    for served in run.requests:
        if not served.served:
            continue
        r = served.request
        head = f'<rect y="{rows_y + r.id * ROW:.1f}" height="{BAR}" data-request="{r.id}" x="'
        for kind, a, b in (("wait", r.arrival_s, served.start_s), ("prefill", served.start_s, served.first_token_s),
                           ("decode", served.first_token_s, served.done_s), ("held", served.done_s, served.finish_s)):
            if b > a:
                width = (b - a) * scale
                rows.append(f'{head}{SIDE + a * scale:.1f}" width="{width if width > 0.75 else 0.75:.1f}" '
                            f'fill="{COLOURS[kind]}" data-kind="{kind}"/>')

    cap = max(s["max_batch"], 1)

    def y_of(batch: int) -> float:
        return chart_bottom - batch / cap * CHART

    path, end = [f"M{SIDE} {chart_bottom:.1f}"], 0.0
    for g in run.segments:
        if g.start_s > end:  # the GPU idled: no request in a step
            path.append(f"H{x(g.start_s):.1f}V{chart_bottom:.1f}")
        end = g.end_s
        path.append(f"V{y_of(g.batch):.1f}H{x(end):.1f}")
    path.append(f"V{chart_bottom:.1f}")
    chart = [
        svg.text(t["batch_axis"], {"x": SIDE, "y": chart_label_y, "class": "svg-muted"}),
        svg.element("line", {"x1": SIDE, "y1": chart_bottom, "x2": WIDTH - SIDE, "y2": chart_bottom,
                             "stroke": palette.colour("outline"), "stroke-width": 1}),
        svg.element("line", {"x1": SIDE, "y1": chart_top, "x2": WIDTH - SIDE, "y2": chart_top,
                             "stroke": palette.colour("muted"), "stroke-width": 1, "stroke-dasharray": "4 3"}),
        svg.text(t["cap"].format(max_batch=s["max_batch"]), {"x": WIDTH - SIDE, "y": chart_top - 3,
                                                             "text-anchor": "end", "class": "svg-muted"}),
        svg.element("path", {"d": "".join(path), "fill": "none", "stroke": COLOURS["decode"], "stroke-width": 1.5,
                             "data-series": "batch"}),
    ]
    if 0 < limit < s["max_batch"]:
        ly = y_of(limit)
        chart.append(svg.element("line", {"x1": SIDE, "y1": ly, "x2": WIDTH - SIDE, "y2": ly,
                                          "stroke": palette.colour("over"), "stroke-width": 1,
                                          "stroke-dasharray": "2 2"}))
        chart.append(svg.text(t["memory_cap"].format(limit=limit), {"x": SIDE + 2, "y": ly - 3,
                                                                     "class": "svg-muted"}))
    spoken = alt.sentence(s["lang"], t["alt.head"].format(n=n, policy=t[f"alt.{s['policy']}"]), [
        t["alt.throughput"].format(value=fmt_sig(run.throughput_tokens_per_s)),
        t["alt.latency"].format(p50=fmt_ms(run.latency_per_token_p50_s), p90=fmt_ms(run.latency_per_token_p90_s)),
        t["alt.batch"].format(mean=fmt_sig(run.mean_batch), cap=s["max_batch"]),
        t["alt.end"].format(end=fmt_sig(run.end_s)),
        t["alt.other"].format(other=t[f"alt.{other.policy}"], value=fmt_sig(other.throughput_tokens_per_s),
                              end=fmt_sig(other.end_s)),
    ])
    return svg.document(WIDTH, height, spoken, svg.text_node("title", t["timeline_label"]), *legend, *ticks, *rows,
                        *chart, *parts, css_class="batching-timeline")
