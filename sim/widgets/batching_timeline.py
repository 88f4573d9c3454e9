"""Batching timeline: one GPU serving a trace of requests, batch by batch (static) or step by step (continuous).

The simulation is sim/serving/scheduler.py (its docstring states every convention: how a step is costed from the
roofline, how joiners' prefill is paid, how memory limits admission, how the metrics are defined); the
requests come from sim/serving/traces.py. This module only draws it. Both policies are simulated on every move,
so that the time axis is the same for both (toggling the policy shows the same trace on the same scale)
and the gain of one over the other can be read off directly.

The readouts are scheduler.serve()'s steady state (a trace doubled until its percentiles settle, or flagged
overloaded or unsettled); the timeline draws the first scheduler.DRAWN_REQUESTS = 48 requests of the same trace.
Fixed here, OUR CHOICE: seed 0, the goodput targets scheduler.DEFAULT_TTFT_TARGET_S and DEFAULT_TPOT_TARGET_S.
"""

from __future__ import annotations

import math

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
from sim.page import svg
from sim.page.display import fmt_bytes, fmt_duration, fmt_grouped, fmt_share, fmt_sig
from sim.physics import cache, model_size, presets
from sim.serving import scheduler, traces

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
        "kv_policy": "KV 显存怎么分",
        "kv_policy=contiguous-max": "按最大长度 2,048 预留",
        "kv_policy=contiguous-pow2": "提示 + 输出按 2 的幂预留",
        "kv_policy=contiguous-oracle": "按真实长度预留（先知）",
        "kv_policy=paged": "分页：写到哪分到哪，不够就抢占重算",
        "capacity_per_s": "容量：队列永远不空时每秒能返回的请求",
        "load": "到达率占容量的比例",
        "throughput_tokens_per_s": "吞吐（输出 token）",
        "requests_per_s": "合 {value} 个请求/秒",
        "ttft_p50_ms": "首 token 延迟 TTFT：中位数",
        "ttft_p90_ms": "TTFT：p90",
        "mean_wait_ms": "平均排队时间（到达 → 开始 prefill）",
        "tpot_p50_ms": "之后每个 token 的间隔 TPOT：中位数",
        "tpot_p90_ms": "TPOT：p90",
        "latency_p90_s": "端到端延迟：p90",
        "latency_per_token_p50_ms": "每个输出 token 的延迟（归一化）：中位数",
        "latency_per_token_p90_ms": "每个输出 token 的延迟（归一化）：p90",
        "goodput_per_s": "goodput：TTFT 和 TPOT 都达标的请求",
        "capacity_gain": "连续批处理的容量是静态的几倍",
        "mean_batch": "平均每步一起算的请求数",
        "preemptions": "被抢占、之后重算的次数",
        "memory_limit": "按 2,048 token 预留时显存放得下的请求数",
        "overloaded": "超载：每秒到达 {rate} 个请求，这种调度最多每秒返回 {capacity} 个。队列会无限变长，"
                      "延迟随请求串变长而变大，这时的百分位数只反映请求串有多长，所以不显示。",
        "unsettled": "离容量很近：请求串加倍时，百分位数还会变 {settle_change}。排队来得慢、散得也慢，"
                     "要很长的请求串才量得准。",
        "memory_bound": "显存只放得下 {memory_limit} 个请求（每个按 2,048 token 预留 KV）：max_batch 调得再大，"
                        "一批也进不了更多请求。",
        "not_shown": "超载",
        "note": "读数取稳态：请求串从 2,000 个起加倍，直到每个百分位数变动不到 2%（最多 8,000 个），去掉最前面 "
                "10% 的预热；时间线只画前 {requests} 个。每一步的耗时按前几课的屋顶线估算：权重每步读一遍，"
                "KV 和递归状态随批里的请求和上下文增长，新加入请求的提示在它加入的那一步一起算完（prefill），"
                "logits 只在提示的最后一个位置算。静态批处理：GPU 空下来时，把正在等的请求凑成一批，一直跑到最长的"
                "那个生成完；这期间新来的请求只能排队，先写完的请求也要等整批结束才返回（Orca §1）。连续批处理："
                "每一步之后，写完的请求立刻离开，排队的请求立刻补进来（Orca 的迭代级调度）。KV 按所选方式占显存，"
                "放不下就继续排队；分页时显存不够，最后加入的请求被抢占，"
                "之后连同已生成的 token 一起重算（vLLM V1）。"
                "TTFT = 第一个 token − 到达；TPOT =（最后一个 token − 第一个）÷（输出 token 数 − 1）"
                "（DistServe 的定义）；"
                "端到端延迟 = 返回 − 到达；归一化延迟 = 端到端 ÷ 输出 token 数（Orca、vLLM 论文用的）。"
                "容量：所有请求在 0 时刻就排好队时每秒返回的请求数。",
        "timeline_label": "请求时间线与每步批大小",
        "legend.wait": "排队",
        "legend.prefill": "prefill（处理提示）",
        "legend.decode": "decode（逐个生成）",
        "legend.held": "已写完，等整批结束才返回",
        "rows": "前 {n} 个请求，每行一个，从上到下按到达顺序",
        "batch_axis": "每一步一起算的请求数",
        "cap": "max_batch = {max_batch}",
        "memory_cap": "显存上限 {limit}",
        "time_axis": "时间（秒）",
        "seconds": "{value} 秒",
        "alt.head": "{policy}下前 {n} 个请求的时间线",
        "alt.batch": "平均每步 {mean} 个请求（上限 {cap}）",
        "alt.end": "最后一个在 {end} 秒返回",
        "alt.other": "同样这些请求用{other}：最后一个在 {end} 秒返回",
        "alt.static": "静态批处理",
        "alt.continuous": "连续批处理",
        "derive.capacity": "{n} 个请求都在 0 时刻排队，去掉预热后每秒返回的请求数 = {value}",
        "derive.load": "{rate} ÷ {capacity} = {value}",
        "derive.throughput": "{n} 个稳态请求里，第一个返回之后返回的请求共 {tokens} 个输出 token ÷ {window} = {value}",
        "derive.percentile": "{n} 个稳态请求各自的{what}，排序后取{which}（线性插值）= {value}",
        "derive.overloaded": "到达 {rate} > 容量 {capacity}：队列不停变长，这个百分位数只量出请求串有多长",
        "derive.mean_wait": "Σ（开始 prefill − 到达）÷ {n} 个稳态请求 = {value}",
        "derive.mean_wait_overloaded": "到达 {rate} > 容量 {capacity}：队列不停变长，平均排队时间只量出请求串有多长",
        "what.ttft": "（第一个 token − 到达）",
        "what.tpot": "（最后一个 token − 第一个）÷（输出 token 数 − 1）",
        "what.latency": "（返回 − 到达）",
        "what.latency_per_token": "（返回 − 到达）÷ 输出 token 数",
        "which.50": "中位数",
        "which.90": "第 90 百分位",
        "derive.goodput": "{rps} × 同时做到 TTFT ≤ {ttft}、TPOT ≤ {tpot} 的比例 {share} = {value}",
        "derive.goodput_overloaded": "超载：队列不停变长，长期看没有请求能在 TTFT 目标内拿到第一个 token = 0",
        "derive.gain": "连续 {continuous} ÷ 静态 {static} = {value}",
        "derive.mean_batch": "Σ（每步耗时 × 这一步的请求数）÷ GPU 忙碌的 {busy}（共 {steps} 步）= {value}",
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
        "kv_policy": "KV memory",
        "kv_policy=contiguous-max": "Reserve the max length, 2,048",
        "kv_policy=contiguous-pow2": "Reserve prompt + output rounded up to a power of two",
        "kv_policy=contiguous-oracle": "Reserve the true length (oracle)",
        "kv_policy=paged": "Paged: blocks as written; preempt and recompute when full",
        "capacity_per_s": "Capacity: requests returned per second with a queue that never empties",
        "load": "Arrival rate as a share of capacity",
        "throughput_tokens_per_s": "Throughput (output tokens)",
        "requests_per_s": "{value} requests/s",
        "ttft_p50_ms": "Time to first token (TTFT): median",
        "ttft_p90_ms": "TTFT: p90",
        "mean_wait_ms": "Mean wait (arrival → its prefill starts)",
        "tpot_p50_ms": "Time per output token after it (TPOT): median",
        "tpot_p90_ms": "TPOT: p90",
        "latency_p90_s": "End-to-end latency: p90",
        "latency_per_token_p50_ms": "Latency per output token (normalized): median",
        "latency_per_token_p90_ms": "Latency per output token (normalized): p90",
        "goodput_per_s": "Goodput: requests meeting the TTFT and TPOT targets",
        "capacity_gain": "Continuous batching's capacity over static's",
        "mean_batch": "Requests computed per step, on average",
        "preemptions": "Preemptions, each recomputed later",
        "memory_limit": "Requests that fit in memory at 2,048-token reservations",
        "overloaded": "Overloaded: {rate} requests arrive per second, and this policy returns at most "
                      "{capacity}. The queue grows without end and every latency grows with the stream, so a "
                      "percentile here would only measure how long the stream is; none is shown.",
        "unsettled": "Close to capacity: the percentiles still move by {settle_change} when the stream doubles. Queues "
                     "build and drain slowly here, and it takes a very long stream to measure them.",
        "memory_bound": "Memory holds only {memory_limit} requests (each reserving KV for 2,048 tokens): a larger "
                        "max_batch lets no more of them into a batch.",
        "not_shown": "overloaded",
        "note": "Readouts are a steady state: the stream doubles from 2,000 requests until every percentile moves by "
                "less than 2 % (8,000 at most), the first 10 % left out as a warm-up; the timeline draws the first "
                "{requests}. Each step's time is the roofline estimate of the earlier lessons: the weights are read "
                "once per step, KV and recurrent-state traffic grow with the requests in the batch and their "
                "contexts, a request's prompt is processed in the step it joins (its prefill), and logits are "
                "computed only at the prompt's last position. Static batching: when the GPU is free, the waiting "
                "requests form a batch, which runs until its longest member is done; new arrivals queue meanwhile, "
                "and a request that finishes early is returned only when the whole batch ends (Orca §1). Continuous "
                "batching: after every step, finished requests leave and waiting ones join (Orca's iteration-level "
                "scheduling). KV takes memory as the chosen policy says, and a request waits while it does not fit; "
                "paged, when memory runs out the request admitted last is preempted and later recomputed with the "
                "tokens it had (vLLM V1). TTFT = first token − arrival; TPOT = (last token − first) ÷ (output tokens − "
                "1) (DistServe's definitions); end-to-end latency = response − arrival; normalized latency = "
                "end-to-end ÷ output tokens (the Orca and vLLM papers'). Capacity: requests returned per second when "
                "every request is already queued at t = 0.",
        "timeline_label": "Request timeline and batch size per step",
        "legend.wait": "Waiting",
        "legend.prefill": "Prefill (the prompt)",
        "legend.decode": "Decode (token by token)",
        "legend.held": "Done, held until its batch ends",
        "rows": "The first {n} requests, one per row, top to bottom in order of arrival",
        "batch_axis": "Requests computed per step",
        "cap": "max_batch = {max_batch}",
        "memory_cap": "memory limit {limit}",
        "time_axis": "Time (s)",
        "seconds": "{value} s",
        "alt.head": "Timeline of the first {n} requests under {policy}",
        "alt.batch": "{mean} requests per step on average (at most {cap})",
        "alt.end": "the last returned at {end} s",
        "alt.other": "the same requests under {other}: the last returned at {end} s",
        "alt.static": "static batching",
        "alt.continuous": "continuous batching",
        "derive.capacity": "{n} requests all queued at t = 0, returns per second after the warm-up = {value}",
        "derive.load": "{rate} ÷ {capacity} = {value}",
        "derive.throughput": "of {n} steady-state requests, the output tokens of those returned after the first, "
                             "{tokens}, ÷ {window} = {value}",
        "derive.percentile": "{what} of each of {n} steady-state requests, sorted, {which} (interpolated) = {value}",
        "derive.overloaded": "arrivals {rate} > capacity {capacity}: the queue keeps growing, and this percentile "
                             "would only measure how long the stream is",
        "derive.mean_wait": "Σ (prefill starts − arrival) ÷ {n} steady-state requests = {value}",
        "derive.mean_wait_overloaded": "arrivals {rate} > capacity {capacity}: the queue keeps growing, and the mean "
                                       "wait would only measure how long the stream is",
        "what.ttft": "(first token − arrival)",
        "what.tpot": "(last token − first) ÷ (output tokens − 1)",
        "what.latency": "(response − arrival)",
        "what.latency_per_token": "(response − arrival) ÷ output tokens",
        "which.50": "median",
        "which.90": "90th percentile",
        "derive.goodput": "{rps} × share with TTFT ≤ {ttft} and TPOT ≤ {tpot} {share} = {value}",
        "derive.goodput_overloaded": "overloaded: the queue keeps growing, so in the long run no request gets its "
                                     "first token within the TTFT target = 0",
        "derive.gain": "continuous {continuous} ÷ static {static} = {value}",
        "derive.mean_batch": "Σ (step time × requests in the step) ÷ {busy} the GPU is busy ({steps} steps) = {value}",
        "derive.memory": "⌊({usable} − weights {weights}) ÷ (2,048 × {kv} + recurrent state {state})⌋ = {value}",
    },
}

WIDGET = Widget(
    controls=(
        Select("policy", default="static", options=scheduler.POLICIES, style="buttons"),
        Range("rate", default=scheduler.DEFAULT_RATE_PER_S, min=scheduler.MIN_RATE_PER_S, max=scheduler.MAX_RATE_PER_S,
              step=scheduler.RATE_STEP_PER_S, log=True),
        Select("trace", default=scheduler.DEFAULT_TRACE, options=traces.PRESETS, style="buttons"),
        Range("max_batch", default=scheduler.DEFAULT_MAX_BATCH, min=1, max=256, log=True),
        Select("kv_policy", default=scheduler.DEFAULT_KV_POLICY, options=scheduler.KV_POLICIES),
        choices.hardware(),
        choices.model(),
    ),
    layout=(
        Controls(),
        Flag("capacity"),
        Flag("overloaded"),
        Flag("unsettled", tone="note"),
        Readouts(
            "capacity_per_s", "load", Readout("throughput_tokens_per_s", note="requests_per_s"),
            "ttft_p50_ms", "ttft_p90_ms", "mean_wait_ms", "tpot_p50_ms", "tpot_p90_ms", "latency_p90_s",
            "latency_per_token_p50_ms", "latency_per_token_p90_ms", "goodput_per_s", "capacity_gain", "mean_batch",
            "preemptions", "memory_limit",
        ),
        Flag("memory_bound", tone="note"),
        Svg("timeline", label="timeline_label"),
        Text("note"),
    ),
    slow=True,
)

# Percentile readouts: output name -> (Schedule property, what it is, which percentile, unit).
PERCENTILE_READOUTS = {
    "ttft_p50_ms": ("ttft_p50_s", "ttft", "50", "ms"), "ttft_p90_ms": ("ttft_p90_s", "ttft", "90", "ms"),
    "tpot_p50_ms": ("tpot_p50_s", "tpot", "50", "ms"), "tpot_p90_ms": ("tpot_p90_s", "tpot", "90", "ms"),
    "latency_p90_s": ("latency_p90_s", "latency", "90", "s"),
    "latency_per_token_p50_ms": ("latency_per_token_p50_s", "latency_per_token", "50", "ms"),
    "latency_per_token_p90_ms": ("latency_per_token_p90_s", "latency_per_token", "90", "ms"),
}

COLOURS = {"wait": palette.colour("waiting"), "prefill": palette.colour("prefill"),
           "decode": palette.colour("decode"), "held": palette.colour("per-request")}
# A bar's edge: an outline around the wait (it is the background), and a gap of the background around decode,
# which parts it from the prefill before it and the time held after it. The prefill, often a pixel or two wide,
# keeps every pixel.
EDGES = {"wait": palette.colour("outline"), "prefill": "none", "decode": palette.colour("surface"), "held": "none"}

# The diagram's frame, in px of its viewBox: the wide drawing, and the phone's (sim/page/svg.py responsive), about a
# 375 px phone's frame wide so that its 11 px text is drawn at 11 px or more.
WIDTH, NARROW_WIDTH, SIDE = 600, 288, 12
MAX_TICKS, NARROW_MAX_TICKS = 8, 6
ROW, BAR = 6, 5  # one request per row
CHART = 72  # height of the batch-size chart
TICK_STEPS = (1, 2, 5)


def render(state) -> dict:
    """The batching-timeline view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    hw, m = choices.gpu(s), presets.model(s["model"])
    scenario = {"trace": s["trace"], "rate_per_s": s["rate"], "max_batch": s["max_batch"], "kv_policy": s["kv_policy"]}
    # The chosen policy's steady state; of the other, only its capacity (the gain) and its drawn timeline are shown.
    run = scheduler.serve(m, hw, s["policy"], **scenario)
    drawn = {policy: scheduler.serve(m, hw, policy, n=scheduler.DRAWN_REQUESTS, **scenario)
             for policy in scheduler.POLICIES}
    other = "continuous" if s["policy"] == "static" else "static"
    weights = model_size.resident_weight_bytes(m)
    limit = scheduler.fit_at_max(m, hw)
    # positional, as serve() asks: the same cache entry
    static_cap, continuous_cap = (scheduler.capacity(m, hw, p, s["trace"], s["max_batch"], scheduler.DEFAULT_SEED,
                                                     s["kv_policy"], "fp32") for p in scheduler.POLICIES)
    gain = continuous_cap / static_cap if static_cap else 0.0
    load = s["rate"] / run.capacity_per_s if run.capacity_per_s else 0.0
    goodput = run.goodput_per_s()
    ttft_target, tpot_target = (f"{x:g} s" if x >= 1 else f"{x * 1e3:g} ms"
                                for x in (scheduler.DEFAULT_TTFT_TARGET_S, scheduler.DEFAULT_TPOT_TARGET_S))
    n = len(run.measured)

    outputs = {
        "capacity_per_s": output(run.capacity_per_s, t["requests_per_s"].format(value=fmt_sig(run.capacity_per_s))),
        "load": output(load * 100, fmt_share(load)),
        "throughput_tokens_per_s": output(run.throughput_tokens_per_s,
                                          f"{fmt_sig(run.throughput_tokens_per_s)} tok/s"),
        "requests_per_s": output(run.requests_per_s, t["requests_per_s"].format(value=fmt_sig(run.requests_per_s))),
        "goodput_per_s": output(goodput, t["requests_per_s"].format(value=fmt_sig(goodput))),
        "capacity_gain": output(gain, f"{fmt_sig(gain)}×"),
        "mean_batch": output(run.mean_batch, fmt_sig(run.mean_batch)),
        "preemptions": output(run.preemptions, fmt_grouped(run.preemptions)),
        "memory_limit": output(limit, fmt_grouped(limit)),
        "requests": output(scheduler.DRAWN_REQUESTS, fmt_grouped(scheduler.DRAWN_REQUESTS)),
        "rate": output(s["rate"], fmt_sig(s["rate"])),
        "capacity": output(run.capacity_per_s, fmt_sig(run.capacity_per_s)),
        "settle_change": output((run.settle_change or 0) * 100, fmt_share(run.settle_change or 0)),
        **capacity.outputs(weights, hw),
    }
    derivations = {
        "capacity_per_s": t["derive.capacity"].format(n=fmt_grouped(scheduler.CAPACITY_REQUESTS),
                                                      value=outputs["capacity_per_s"]["text"]),
        "load": t["derive.load"].format(rate=fmt_sig(s["rate"]), capacity=fmt_sig(run.capacity_per_s),
                                        value=fmt_share(load)),
        "throughput_tokens_per_s": t["derive.throughput"].format(
            n=fmt_grouped(n), tokens=fmt_grouped(round(run.throughput_tokens_per_s * run.window_s)),
            window=_seconds(run.window_s, t), value=outputs["throughput_tokens_per_s"]["text"]),
        "capacity_gain": t["derive.gain"].format(continuous=fmt_sig(continuous_cap), static=fmt_sig(static_cap),
                                                 value=f"{fmt_sig(gain)}×"),
        "mean_batch": t["derive.mean_batch"].format(busy=_seconds(run.busy_s, t), steps=fmt_grouped(run.step_count),
                                                    value=fmt_sig(run.mean_batch)),
        "memory_limit": t["derive.memory"].format(
            usable=fmt_bytes(hw.memory_bytes), weights=fmt_bytes(weights), kv=fmt_bytes(cache.kv_bytes_per_token(m)),
            state=fmt_bytes(cache.state_bytes_per_request(m)), value=fmt_grouped(limit)),
        "goodput_per_s": (t["derive.goodput_overloaded"] if run.overloaded else t["derive.goodput"].format(
            rps=outputs["requests_per_s"]["text"], ttft=ttft_target, tpot=tpot_target,
            share=fmt_share(run.attainment()),
            value=outputs["goodput_per_s"]["text"])),
    }
    for name, (attribute, what, which, unit) in PERCENTILE_READOUTS.items():
        value = getattr(run, attribute)
        text = fmt_duration(value) if not run.overloaded else t["not_shown"]
        outputs[name] = output(value * (1e3 if unit == "ms" else 1), text)
        if run.overloaded:
            derivations[name] = t["derive.overloaded"].format(rate=fmt_sig(s["rate"]),
                                                              capacity=fmt_sig(run.capacity_per_s))
        else:
            derivations[name] = t["derive.percentile"].format(what=t[f"what.{what}"], n=fmt_grouped(n),
                                                              which=t[f"which.{which}"], value=text)
    wait = run.mean_wait_s
    outputs["mean_wait_ms"] = output(wait * 1e3, fmt_duration(wait) if not run.overloaded else t["not_shown"])
    derivations["mean_wait_ms"] = (
        t["derive.mean_wait_overloaded"].format(rate=fmt_sig(s["rate"]), capacity=fmt_sig(run.capacity_per_s))
        if run.overloaded else t["derive.mean_wait"].format(n=fmt_grouped(n), value=fmt_duration(wait)))
    fits = capacity.fits(weights, hw)
    flags = {"capacity": not fits, "overloaded": fits and run.overloaded,
             "unsettled": fits and not run.overloaded and not run.settled,
             "memory_bound": fits and s["kv_policy"] == "contiguous-max" and limit < s["max_batch"]}
    timeline = _timeline(drawn[s["policy"]], drawn[other], s, limit if s["kv_policy"] == "contiguous-max" else 0, t)
    return view(s, outputs, svg={"timeline": timeline}, flags=flags, derivations=derivations)


def _seconds(x: float, t: dict) -> str:
    return t["seconds"].format(value=fmt_sig(x))


def _tick_step(span: float, most: int = MAX_TICKS) -> float:
    """A round step (1, 2 or 5 x 10^k seconds) that puts at most `most` ticks across `span`."""
    if span <= 0:
        return 1.0
    exponent = math.floor(math.log10(span / most))
    for scale in (10.0**exponent, 10.0 ** (exponent + 1)):
        for step in TICK_STEPS:
            if span / (step * scale) <= most:
                return step * scale
    return 10.0 ** (exponent + 2)


def _legend(keys: list[str], y: float, t: dict, frame: float = WIDTH) -> tuple[list[str], float]:
    """Swatches and their labels, wrapped onto as many rows as the width needs; returns them and the last row's y."""
    parts, x = [], float(SIDE)
    for key in keys:
        label = t[f"legend.{key}"]
        width = 28 + svg.text_width(label, 13)
        if x + width > frame - SIDE and x > SIDE:
            x, y = float(SIDE), y + 20
        parts.append(svg.element("rect", {"x": x, "y": y, "width": 12, "height": 12, "fill": COLOURS[key],
                                          "stroke": palette.colour("outline"), "stroke-width": 1}))
        parts.append(svg.text(label, {"x": x + 16, "y": y + 11, "class": "svg-label"}))
        x += width
    return parts, y


def _timeline(run: scheduler.Schedule, other: scheduler.Schedule, s: dict, limit: int, t: dict) -> str:
    """The timeline drawn twice (sim/page/svg.py responsive): WIDTH wide, and NARROW_WIDTH wide for a phone, with
    fewer ticks, the legend and the rows' caption wrapped onto more lines and the chart's caption on a line of its
    own; both draw every request's every bar."""
    return svg.responsive(_timeline_svg(run, other, s, limit, t, WIDTH, MAX_TICKS),
                          _timeline_svg(run, other, s, limit, t, NARROW_WIDTH, NARROW_MAX_TICKS))


def _timeline_svg(run: scheduler.Schedule, other: scheduler.Schedule, s: dict, limit: int, t: dict,
                  frame: float, most_ticks: int) -> str:
    """One row per request (waiting, prefill, decode, and for static batches the time a finished request is held),
    and below it the requests computed in each step, on one time axis shared by both policies."""
    span = max(run.end_s, other.end_s)
    step = _tick_step(span, most_ticks)
    axis_end = step * max(1, math.ceil(span / step - 1e-9))
    scale = (frame - 2 * SIDE) / axis_end  # px per second
    narrow = frame < WIDTH

    def x(seconds: float) -> float:
        return SIDE + seconds * scale

    keys = ["wait", "prefill", "decode"] + (["held"] if s["policy"] == "static" else [])
    legend, y = _legend(keys, 8.0, t, frame)
    n = len(run.requests)
    caption = t["rows"].format(n=n)
    caption = svg.wrap(caption, frame - 2 * SIDE, lambda line: svg.text_width(line, 11)) if narrow else [caption]
    rows_label_y = y + 34
    rows_y = rows_label_y + 8 + (len(caption) - 1) * 14
    chart_label_y = rows_y + n * ROW + 24
    chart_top = chart_label_y + (18 if narrow else 10)  # on a phone max_batch's label has a line of its own
    chart_bottom = chart_top + CHART
    axis_y = chart_bottom + 16
    height = axis_y + 22

    parts = [svg.text(line, {"x": SIDE, "y": rows_label_y + k * 14, "class": "svg-muted"})
             for k, line in enumerate(caption)]
    ticks = []
    for k in range(round(axis_end / step) + 1):
        tx = x(k * step)
        ticks.append(svg.element("line", {"x1": tx, "y1": rows_y - 2, "x2": tx, "y2": chart_bottom,
                                          "stroke": palette.colour("grid"), "stroke-width": 1}))
        anchor = "start" if k == 0 else "middle"
        ticks.append(svg.text(f"{k * step:g}", {"x": tx, "y": axis_y, "text-anchor": anchor, "class": "svg-muted"}))
    ticks.append(svg.text(t["time_axis"], {"x": frame - SIDE, "y": axis_y + 16, "text-anchor": "end",
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
                            f'fill="{COLOURS[kind]}" stroke="{EDGES[kind]}" data-kind="{kind}"/>')

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
        svg.element("line", {"x1": SIDE, "y1": chart_bottom, "x2": frame - SIDE, "y2": chart_bottom,
                             "stroke": palette.colour("outline"), "stroke-width": 1}),
        svg.element("line", {"x1": SIDE, "y1": chart_top, "x2": frame - SIDE, "y2": chart_top,
                             "stroke": palette.colour("muted"), "stroke-width": 1, "stroke-dasharray": "4 3"}),
        svg.text(t["cap"].format(max_batch=s["max_batch"]), {"x": frame - SIDE, "y": chart_top - 3,
                                                             "text-anchor": "end", "class": "svg-muted"}),
        svg.element("path", {"d": "".join(path), "fill": "none", "stroke": COLOURS["decode"], "stroke-width": 1.5,
                             "data-series": "batch"}),
    ]
    if 0 < limit < s["max_batch"]:
        ly = y_of(limit)
        chart.append(svg.element("line", {"x1": SIDE, "y1": ly, "x2": frame - SIDE, "y2": ly,
                                          "stroke": palette.colour("over"), "stroke-width": 1,
                                          "stroke-dasharray": "2 2"}))
        chart.append(svg.text(t["memory_cap"].format(limit=limit), {"x": SIDE + 2, "y": ly - 3,
                                                                     "class": "svg-muted"}))
    spoken = alt.sentence(s["lang"], t["alt.head"].format(n=n, policy=t[f"alt.{s['policy']}"]), [
        t["alt.batch"].format(mean=fmt_sig(run.mean_batch), cap=s["max_batch"]),
        t["alt.end"].format(end=fmt_sig(run.end_s)),
        t["alt.other"].format(other=t[f"alt.{other.policy}"], end=fmt_sig(other.end_s)),
    ])
    return svg.document(frame, height, spoken, svg.text_node("title", t["timeline_label"]), *legend, *ticks, *rows,
                        *chart, *parts, css_class="batching-timeline")
