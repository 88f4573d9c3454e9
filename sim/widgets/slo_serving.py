"""SLO serving: a stream of requests under latency targets, prefill and decode on the same GPUs or apart.

The simulation is sim/serving/slo.py (its docstring states every convention: the three policies, how requests are dealt
to GPUs, how the KV crosses the link, how TTFT, TPOT, attainment and goodput are defined), each GPU simulated by
sim/serving/scheduler.py. This module only shows it: the percentiles at the chosen rate against the two targets, drawn
as bars beside each target's line, and the goodput per GPU, the highest rate at which the goal share of requests
meets both (computed once per setting: a move of the rate alone re-runs one trace).
"""

from __future__ import annotations

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
from sim.physics import model_size, presets
from sim.serving import slo

TEXT = {
    "zh": {
        "title": "在延迟目标下服务：同卡混跑、分块，还是 P/D 分离",
        "policy": "调度方式",
        "policy=prefill-first": "prefill 优先：新请求整段提示在它加入的那一步算完",
        "policy=chunked": "分块 prefill：先给每个 decode 一个 token，再用剩下的预算切提示",
        "policy=disaggregated": "P/D 分离：prefill 卡只算提示，decode 卡只生成",
        "short.prefill-first": "prefill 优先",
        "short.chunked": "分块 prefill",
        "short.disaggregated": "P/D 分离",
        "workload": "请求长度",
        "workload=distserve": "DistServe 图 1：提示 512、输出 64 token",
        "workload=chat": "聊天：提示 32–1,024、输出 1–1,024",
        "workload=code": "代码补全：提示 64–512、输出 16–256",
        "workload=summarisation": "摘要：提示 1,024–4,096、输出 16–256",
        "rate": "到达率（每秒请求数，所有 GPU 合计，泊松到达）",
        "token_budget": "每步 token 预算（分块 prefill 和 prefill 卡）",
        "prefill_gpus": "prefill GPU 数（P/D 分离）",
        "decode_gpus": "decode GPU 数（P/D 分离）",
        "link": "KV 从 prefill 卡传到 decode 卡走",
        "link=nvlink": "NVLink（同一台机器内）",
        "link=25gbps": "25 Gbit/s 网络（跨机器）",
        "ttft_slo_ms": "TTFT 目标（ms）",
        "tpot_slo_ms": "TPOT 目标（ms）",
        "goal": "达标比例目标（%）",
        "ttft_p50_ms": "首 token 延迟 TTFT：中位数",
        "ttft_p90_ms": "TTFT：p90",
        "tpot_p50_ms": "每个输出 token 的时间 TPOT：中位数",
        "tpot_p90_ms": "TPOT：p90",
        "throughput_tokens_per_s": "吞吐（输出 token，所有 GPU 合计）",
        "attainment": "两个目标都达到的请求比例",
        "goodput_rps_per_gpu": "goodput：每张 GPU 每秒达标的请求数",
        "goodput_rate": "即 {gpus} 张 GPU 合计 {rate} 个请求/秒",
        "goodput_rate_one": "即这 1 张 GPU 每秒 {rate} 个请求",
        "kv_transfer_ms": "KV 传输：提示算完到 KV 到达 decode 卡（平均）",
        "gpus": "用了几张 GPU",
        "rps": "{value} 个请求/秒",
        "behind": "这个到达率超过了容量 {capacity}：队列越排越长，这串请求越长，延迟就越大，"
                  "这里的延迟只说明这串请求有多长。",
        "capacity_per_s": "容量：队列永远不空时每秒返回的请求",
        "meets": "这个到达率下，{share} 的请求两个目标都达到，不低于 {goal_share} 的目标。",
        "misses": "这个到达率下只有 {share} 的请求两个目标都达到，低于 {goal_share} 的目标。",
        "colocated_gpus": "同卡混跑只用 1 张 GPU：prefill / decode GPU 数和传输链路只对 P/D 分离起作用。",
        "budget_unused": "prefill 优先不切提示：每步 token 预算只对分块 prefill 和 P/D 分离的 prefill 卡起作用。",
        "no_goodput": "最低的到达率 {lowest_rate} 个请求/秒下都达不到目标：goodput 为 0。",
        "note": "每张 GPU 都是连续批处理，KV 按 vLLM 的 16 token 一块分页，"
                "每一步按逐算子屋顶线计时（算力和带宽按下面设的实际比例，都为 1 时是下界）；每步最多 "
                "{max_batch} 个请求（vLLM 服务端在 A100 上 max_num_seqs "
                "的默认值）。请求按 DistServe 的调度分卡：prefill 交给排队最短的卡，"
                "decode 交给手上请求最少的卡。TTFT = 首个 "
                "token − 到达；TPOT = (最后一个 token − 首个 token) "
                "÷ (输出 token 数 − 1)。P/D 分离时每个 token 都由 decode 卡发给客户端（vLLM 的 P/D 也是如此），"
                "所以 KV 的传输和在 decode 卡上的排队都算进 TTFT。每次模拟 {n} 个请求，去掉最先到的 {warmup}，"
                "那时 GPU 还是空的。goodput 从 {lowest_rate} 个请求/秒起、"
                "每 {rate_step} 一档，找出不超过容量、且达标比例不低于目标的最高到达率，"
                "再除以 GPU 数（DistServe 对每卡 goodput 的定义）。",
        "bars_label": "TTFT 和 TPOT 的中位数与 p90，对照各自的目标",
        "bar.ttft": "TTFT",
        "bar.tpot": "TPOT",
        "bar.p50": "中位数",
        "bar.p90": "p90",
        "target": "目标 {value}",
        "legend.met": "达到目标",
        "legend.missed": "超出目标",
        "alt.head": "{policy}，{rate} 个请求/秒",
        "alt.ttft": "TTFT 中位数 {p50}、p90 {p90}，目标 {target}",
        "alt.tpot": "TPOT 中位数 {p50}、p90 {p90}，目标 {target}",
        "alt.goodput": "每卡 goodput {value} 个请求/秒",
        "derive.percentile": "{what}，{n} 个请求排序后取{which}（线性插值）= {value}",
        "what.ttft": "每个请求的（首个 token − 到达）",
        "what.tpot": "每个请求的（最后一个 token − 首个 token）÷（输出 token 数 − 1）",
        "which.50": "中位数",
        "which.90": "第 90 百分位",
        "derive.throughput": "{n} 个请求按返回先后排，取中间一半（去掉开头和收尾），"
                             "输出 token {tokens} ÷ 它们返回所跨的 {window} = {value}",
        "derive.attainment": "TTFT ≤ {ttft} 且 TPOT ≤ {tpot} 的请求 {met} ÷ {n} = {value}",
        "derive.goodput": "不超过容量、达标比例 ≥ {goal} 的最高到达率 {rate} 个请求/秒 ÷ {gpus} = {value}",
        "gpu_count": "{n} 张 GPU",
        "gpu_one": "1 张 GPU",
        "derive.capacity": "{n} 个请求在 t = 0 全部排好队，按返回先后取中间一半，每秒返回 = {value}",
        "derive.kv_transfer": "每个请求的 KV（提示 token × {per_token}，加递归状态 {state}）÷ 链路 {link}，"
                              "加上等链路空出来的时间，{n} 个请求平均 = {value}",
        "derive.kv_none": "同卡混跑：KV 不用搬 = 0",
    },
    "en": {
        "title": "Serving under latency targets: together, in chunks, or prefill and decode apart",
        "policy": "Scheduling",
        "policy=prefill-first": "Prefill first: a newcomer's whole prompt runs in the step it joins",
        "policy=chunked": "Chunked prefill: each decode gets its token first, the rest of the budget goes to prompts",
        "policy=disaggregated": "P/D disaggregated: prefill GPUs only run prompts, decode GPUs only generate",
        "short.prefill-first": "Prefill first",
        "short.chunked": "Chunked prefill",
        "short.disaggregated": "P/D disaggregated",
        "workload": "Request lengths",
        "workload=distserve": "DistServe Fig. 1: prompt 512, output 64 tokens",
        "workload=chat": "Chat: prompt 32–1,024, output 1–1,024",
        "workload=code": "Code completion: prompt 64–512, output 16–256",
        "workload=summarisation": "Summarisation: prompt 1,024–4,096, output 16–256",
        "rate": "Arrival rate (requests per second, all GPUs together, Poisson)",
        "token_budget": "Token budget per step (chunked prefill and prefill GPUs)",
        "prefill_gpus": "Prefill GPUs (disaggregated)",
        "decode_gpus": "Decode GPUs (disaggregated)",
        "link": "The KV goes from prefill to decode GPU over",
        "link=nvlink": "NVLink (within one machine)",
        "link=25gbps": "A 25 Gbit/s network (between machines)",
        "ttft_slo_ms": "TTFT target (ms)",
        "tpot_slo_ms": "TPOT target (ms)",
        "goal": "Share of requests that must meet both (%)",
        "ttft_p50_ms": "Time to first token (TTFT): median",
        "ttft_p90_ms": "TTFT: p90",
        "tpot_p50_ms": "Time per output token (TPOT): median",
        "tpot_p90_ms": "TPOT: p90",
        "throughput_tokens_per_s": "Throughput (output tokens, all GPUs)",
        "attainment": "Requests meeting both targets",
        "goodput_rps_per_gpu": "Goodput: requests per second per GPU within the targets",
        "goodput_rate": "{rate} req/s on {gpus} GPUs together",
        "goodput_rate_one": "{rate} req/s on its one GPU",
        "kv_transfer_ms": "KV transfer: prompt done to its KV on a decode GPU (mean)",
        "gpus": "GPUs used",
        "rps": "{value} req/s",
        "behind": "This rate is above the capacity of {capacity}: the queue keeps growing, every latency grows with "
                  "the stream, and these only say how long the stream is.",
        "capacity_per_s": "Capacity: requests returned per second with a queue that never empties",
        "meets": "At this rate {share} of the requests meet both targets, at least the goal of {goal_share}.",
        "misses": "At this rate only {share} of the requests meet both targets, short of the goal of {goal_share}.",
        "colocated_gpus": "Colocated policies use one GPU: the prefill and decode GPU counts and the link apply to "
                          "the disaggregated policy only.",
        "budget_unused": "Prefill first does not cut prompts into chunks: the token budget applies to chunked prefill "
                         "and to the disaggregated policy's prefill GPUs only.",
        "no_goodput": "Even the lowest rate, {lowest_rate} req/s, misses the goal: the goodput is 0.",
        "note": "Every GPU runs continuous batching with KV paged in vLLM's blocks of 16 tokens, each step costed "
                "by the per-operation roofline at the shares of peak compute and bandwidth set below (both 1: "
                "a lower bound), at most {max_batch} requests per step (vLLM's server default max_num_seqs on "
                "an A100). Requests are dealt as DistServe's controller deals them: a prompt to the prefill GPU "
                "with the shortest queue, a request whose KV has landed to the decode GPU holding the fewest. "
                "TTFT = first token − arrival; TPOT = (last token − first token) ÷ (output tokens − 1). Disaggregated, "
                "the client gets every token from the decode GPU (as in vLLM's P/D), so the KV transfer and the "
                "wait for a decode GPU count in the TTFT. Each run "
                "is {n} requests, without the first {warmup}, which met empty GPUs. Goodput tries rates from "
                "{lowest_rate} req/s in steps of {rate_step} and takes the highest within the capacity "
                "at which the goal share meets both targets, divided by the GPUs (DistServe's per-GPU goodput).",
        "bars_label": "Median and p90 of TTFT and TPOT against their targets",
        "bar.ttft": "TTFT",
        "bar.tpot": "TPOT",
        "bar.p50": "median",
        "bar.p90": "p90",
        "target": "target {value}",
        "legend.met": "Within the target",
        "legend.missed": "Over the target",
        "alt.head": "{policy} at {rate} req/s",
        "alt.ttft": "TTFT median {p50}, p90 {p90}, target {target}",
        "alt.tpot": "TPOT median {p50}, p90 {p90}, target {target}",
        "alt.goodput": "goodput {value} req/s per GPU",
        "derive.percentile": "{what} of each of {n} requests, sorted, {which} (interpolated) = {value}",
        "what.ttft": "(first token − arrival)",
        "what.tpot": "(last token − first token) ÷ (output tokens − 1)",
        "which.50": "median",
        "which.90": "90th percentile",
        "derive.throughput": "of {n} requests in the order they return, the middle half (not the start, nor the "
                             "drain at the end): their output tokens, {tokens}, ÷ the {window} they return over = "
                             "{value}",
        "derive.attainment": "requests with TTFT ≤ {ttft} and TPOT ≤ {tpot}, {met} ÷ {n} = {value}",
        "derive.capacity": "{n} requests all queued at t = 0, returns per second over the middle half of them = "
                           "{value}",
        "derive.goodput": "the highest rate within the capacity with ≥ {goal} of requests within both, {rate} req/s, "
                          "÷ {gpus} = {value}",
        "gpu_count": "{n} GPUs",
        "gpu_one": "1 GPU",
        "derive.kv_transfer": "each request's KV (prompt tokens × {per_token}, plus its recurrent state {state}) ÷ the "
                              "link's {link}, plus any wait for the link, averaged over {n} requests = {value}",
        "derive.kv_none": "colocated: no KV to move = 0",
    },
}

WIDGET = Widget(
    controls=(
        Select("policy", default="chunked", options=slo.POLICIES, style="buttons"),
        Range("rate", default=slo.DEFAULT_RATE_PER_S, min=slo.RATE_GRID_PER_S[0], max=slo.RATE_GRID_PER_S[-1],
              step=slo.RATE_STEP_PER_S, log=True),
        Select("workload", default=slo.DEFAULT_WORKLOAD, options=slo.WORKLOADS, style="buttons"),
        Select("token_budget", default=str(slo.DEFAULT_TOKEN_BUDGET), options=tuple(map(str, slo.TOKEN_BUDGETS)),
               style="buttons", names={str(b): fmt_grouped(b) for b in slo.TOKEN_BUDGETS}),
        Range("prefill_gpus", default=1, min=1, max=8),
        Range("decode_gpus", default=1, min=1, max=8),
        Select("link", default="nvlink", options=slo.LINKS, style="buttons"),
        Range("ttft_slo_ms", default=round(slo.DEFAULT_TTFT_SLO_S * 1e3), min=10, max=5_000, step=10, log=True),
        Range("tpot_slo_ms", default=round(slo.DEFAULT_TPOT_SLO_S * 1e3), min=5, max=500, log=True),
        Range("goal", default=round(slo.DEFAULT_GOAL * 100), min=50, max=99),
        choices.hardware(),
        choices.model(),
        choices.compute_efficiency(),
        choices.bandwidth_efficiency(),
    ),
    layout=(
        Controls(),
        Flag("capacity"),
        Flag("behind"),
        Flag("meets", tone="note"),
        Flag("misses"),
        Flag("colocated_gpus", tone="note", controls=("prefill_gpus", "decode_gpus", "link")),
        Flag("budget_unused", tone="note", controls=("token_budget",)),
        Flag("no_goodput"),
        Readouts(
            "ttft_p50_ms", "ttft_p90_ms", "tpot_p50_ms", "tpot_p90_ms", "throughput_tokens_per_s", "attainment",
            Readout("goodput_rps_per_gpu", note="goodput_rate"), "capacity_per_s", "kv_transfer_ms", "gpus",
        ),
        Svg("bars", label="bars_label"),
        Text("note"),
    ),
    slow=True,
)

# Percentile readouts: output name -> (Run property, what it is, which percentile).
PERCENTILES = {"ttft_p50_ms": ("ttft_p50_s", "ttft", "50"), "ttft_p90_ms": ("ttft_p90_s", "ttft", "90"),
               "tpot_p50_ms": ("tpot_p50_s", "tpot", "50"), "tpot_p90_ms": ("tpot_p90_s", "tpot", "90")}

# The bars' frame, in px of its viewBox: the wide drawing and the phone's (sim/page/svg.py responsive).
WIDTH, NARROW_WIDTH, SIDE = 600, 300, 12
LABEL, NARROW_LABEL = 110, 76  # room for a row's label
ROW, BAR, GAP = 26, 16, 18  # a bar's row, the bar, the gap between the two metrics
SCALE = 2.0  # the axis runs to twice the target, or to the longest bar if that is further
COLOURS = {"met": palette.colour("decode"), "missed": palette.colour("over")}
VALUE_ROOM = 84  # right of the plot, for the values


def scenario(s: dict) -> dict:
    """The slo.serve / slo.goodput arguments of a state (the rate and the targets apart)."""
    return {"workload": s["workload"], "token_budget": int(s["token_budget"]), "prefill_gpus": s["prefill_gpus"],
            "decode_gpus": s["decode_gpus"], "link": s["link"]}


def render(state) -> dict:
    """The slo-serving view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    hw, m = choices.gpu(s), presets.model(s["model"])
    weights = model_size.resident_weight_bytes(m)
    fits = capacity.fits(weights, hw)
    ttft_slo, tpot_slo, goal = s["ttft_slo_ms"] / 1e3, s["tpot_slo_ms"] / 1e3, s["goal"] / 100
    args = scenario(s)
    outputs = {**capacity.outputs(weights, hw)}
    flags = {"capacity": not fits}
    if not fits:  # nothing runs: every readout says so
        for name in (*PERCENTILES, "throughput_tokens_per_s", "attainment", "goodput_rps_per_gpu", "kv_transfer_ms",
                     "goodput_rate", "gpus", "capacity_per_s"):
            outputs[name] = output(0, "—")
        return view(s, outputs, svg={"bars": ""}, flags=flags)
    run = slo.serve(m, hw, s["policy"], rate_per_s=s["rate"], **args)
    good = slo.goodput(m, hw, s["policy"], ttft_slo_s=ttft_slo, tpot_slo_s=tpot_slo, goal=goal, **args)
    attainment = run.attainment(ttft_slo, tpot_slo)
    n = len(run.measured)
    for name, (attribute, _, _) in PERCENTILES.items():
        value = getattr(run, attribute)
        outputs[name] = output(value * 1e3, fmt_duration(value))
    transfer = run.transfer_mean_s
    window, _, tokens = run._window
    outputs.update({
        "throughput_tokens_per_s": output(run.throughput_tokens_per_s, f"{fmt_sig(run.throughput_tokens_per_s)} tok/s"),
        "attainment": output(attainment * 100, fmt_share(attainment)),
        "goodput_rps_per_gpu": output(good.per_gpu, t["rps"].format(value=fmt_sig(good.per_gpu))),
        "goodput_rate": output(good.rate_per_s, t["goodput_rate" if good.gpus > 1 else "goodput_rate_one"].format(
            rate=fmt_sig(good.rate_per_s), gpus=good.gpus)),
        "kv_transfer_ms": output(transfer * 1e3, fmt_duration(transfer)),
        "gpus": output(run.gpus, fmt_grouped(run.gpus)),
        "share": output(attainment * 100, fmt_share(attainment)),
        "goal_share": output(s["goal"], fmt_share(goal)),
        "capacity_per_s": output(run.capacity_per_s, t["rps"].format(value=fmt_sig(run.capacity_per_s))),
        "capacity": output(run.capacity_per_s, t["rps"].format(value=fmt_sig(run.capacity_per_s))),
        "lowest_rate": output(slo.RATE_GRID_PER_S[0], fmt_sig(slo.RATE_GRID_PER_S[0])),
        "rate_step": output(slo.RATE_STEP_PER_S, fmt_sig(slo.RATE_STEP_PER_S)),
        "max_batch": output(slo.MAX_BATCH, fmt_grouped(slo.MAX_BATCH)),
        "n": output(slo.REQUESTS, fmt_grouped(slo.REQUESTS)),
        "warmup": output(slo.WARMUP_SHARE * 100, fmt_share(slo.WARMUP_SHARE)),
    })
    derivations = {name: t["derive.percentile"].format(what=t[f"what.{what}"], n=fmt_grouped(n),
                                                       which=t[f"which.{which}"], value=outputs[name]["text"])
                   for name, (_, what, which) in PERCENTILES.items()}
    ttft_text, tpot_text = _target(ttft_slo), _target(tpot_slo)
    met = sum(r.meets(ttft_slo, tpot_slo) for r in run.measured)
    per_token = slo.kv_transfer_bytes(m, 1) - slo.kv_transfer_bytes(m, 0)
    derivations.update({
        "throughput_tokens_per_s": t["derive.throughput"].format(
            n=fmt_grouped(n), tokens=fmt_grouped(tokens), window=fmt_duration(window),
            value=outputs["throughput_tokens_per_s"]["text"]),
        "attainment": t["derive.attainment"].format(ttft=ttft_text, tpot=tpot_text, met=fmt_grouped(met),
                                                    n=fmt_grouped(n), value=fmt_share(attainment)),
        "capacity_per_s": t["derive.capacity"].format(n=fmt_grouped(slo.REQUESTS),
                                                      value=outputs["capacity_per_s"]["text"]),
        "goodput_rps_per_gpu": t["derive.goodput"].format(
            goal=fmt_share(goal), rate=fmt_sig(good.rate_per_s), value=outputs["goodput_rps_per_gpu"]["text"],
            gpus=t["gpu_count" if good.gpus > 1 else "gpu_one"].format(n=good.gpus)),
        "kv_transfer_ms": (t["derive.kv_transfer"].format(
            per_token=fmt_bytes(per_token), state=fmt_bytes(slo.kv_transfer_bytes(m, 0)),
            link=f"{fmt_sig(slo.link_bytes_per_s(hw, s['link']) / 1e9)} GB/s", n=fmt_grouped(n),
            value=outputs["kv_transfer_ms"]["text"])
            if s["policy"] == "disaggregated" else t["derive.kv_none"]),
    })
    flags.update({
        "behind": not run.keeps_up,
        "meets": run.keeps_up and attainment >= goal,
        "misses": run.keeps_up and attainment < goal,
        "colocated_gpus": s["policy"] != "disaggregated",
        "budget_unused": s["policy"] == "prefill-first",
        "no_goodput": good.run is None,
    })
    bars = svg.responsive(_bars(run, ttft_slo, tpot_slo, s["lang"], WIDTH, LABEL),
                          _bars(run, ttft_slo, tpot_slo, s["lang"], NARROW_WIDTH, NARROW_LABEL))
    return view(s, outputs, svg={"bars": bars}, flags=flags, derivations=derivations)


def _bars(run: slo.Run, ttft_slo: float, tpot_slo: float, lang: str, width: float, label_w: float) -> str:
    """Two groups of bars, TTFT and TPOT, each its median and p90 against its target's dashed line."""
    t = TEXT[lang]
    parts, y = [], 8.0
    plot = width - 2 * SIDE - label_w - VALUE_ROOM
    for key, target, p50, p90 in (("ttft", ttft_slo, run.ttft_p50_s, run.ttft_p90_s),
                                  ("tpot", tpot_slo, run.tpot_p50_s, run.tpot_p90_s)):
        span = max(SCALE * target, p90, p50)
        x0 = SIDE + label_w
        parts.append(svg.text(t[f"bar.{key}"], {"x": SIDE, "y": y + 12, "class": "svg-label"}))
        y += 18
        for which, value in (("p50", p50), ("p90", p90)):
            colour = COLOURS["met" if value <= target else "missed"]
            parts.append(svg.text(t[f"bar.{which}"], {"x": SIDE, "y": y + BAR - 4, "class": "svg-label"}))
            w = max(1.0, plot * value / span)
            parts.append(svg.element("rect", {"x": x0, "y": y, "width": w, "height": BAR, "fill": colour}))
            # the value in its own column at the right, clear of the bars and of the target's line
            parts.append(svg.text(fmt_duration(value), {"x": width - SIDE, "y": y + BAR - 4, "class": "svg-label",
                                                        "text-anchor": "end"}))
            y += ROW
        xt = x0 + plot * target / span
        top = y - 2 * ROW - 4
        parts.append(svg.element("line", {"x1": xt, "x2": xt, "y1": top, "y2": y - ROW + BAR + 4,
                                          "stroke": palette.colour("outline"), "stroke-width": 1.5,
                                          "stroke-dasharray": "4 3"}))
        target_text = t["target"].format(value=_target(target))
        anchor = "end" if xt + svg.text_width(target_text, 12) > width - SIDE else None
        parts.append(svg.text(target_text, {"x": xt - 4 if anchor else xt + 4, "y": top - 2, "class": "svg-label",
                                            "text-anchor": anchor}))
        y += GAP
    x = float(SIDE)
    for key in ("met", "missed"):
        words = t[f"legend.{key}"]
        parts.append(svg.element("rect", {"x": x, "y": y, "width": 12, "height": 12, "fill": COLOURS[key]}))
        parts.append(svg.text(words, {"x": x + 16, "y": y + 11, "class": "svg-label"}))
        x += 28 + svg.text_width(words, 13)
    label = alt.sentence(lang, t["alt.head"].format(policy=t[f"short.{run.policy}"], rate=fmt_sig(run.rate_per_s)),
                         [t["alt.ttft"].format(p50=fmt_duration(run.ttft_p50_s), p90=fmt_duration(run.ttft_p90_s),
                                               target=_target(ttft_slo)),
                          t["alt.tpot"].format(p50=fmt_duration(run.tpot_p50_s), p90=fmt_duration(run.tpot_p90_s),
                                               target=_target(tpot_slo))])
    return svg.document(width, y + 20, label, *parts)


def _target(seconds: float) -> str:
    """A target as the student set it, in whole milliseconds: 250 ms, 1,000 ms."""
    return f"{fmt_grouped(round(seconds * 1e3))} ms"
