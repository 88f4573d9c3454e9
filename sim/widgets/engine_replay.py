"""A real vLLM run replayed: the 300 requests an RTX 4090 served, the 300 that two RTX PRO 6000s served with
Qwen3-32B split over them by tensor parallelism, or the 300 that two RTX PRO 6000s served with Qwen3-30B-A3B's
experts split over them (expert parallelism, each GPU an engine of its own: LLMServingSim's public runs),
at the times the engine queued them,
through the course's scheduler with the engine's settings (sim/serving/replay.py). The student picks the run and sets
the bandwidth and compute the roofline may use; the view sets the replay's TTFT, TPOT and latency beside the
measured ones, and beside the replay costed from the same GPU's per-operation vLLM profile with nothing fitted.
"""

from __future__ import annotations

from sim.kit import Controls, Figure, Flag, Row, Select, Table, Widget, alt, choices, output, palette, view
from sim.page.display import fmt_duration, fmt_ms
from sim.physics import measured, presets
from sim.serving import replay
from sim.serving.scheduler import percentile

RUN = "rtx-4090"  # the default run

TEXT = {
    "zh": {
        "title": "真实的 vLLM 运行，用课程的调度器重放",
        "run": "哪一次运行",
        "run=rtx-4090": "RTX 4090 · Llama-3.1-8B",
        "run=rtx-pro-6000-tp2": "2 × RTX PRO 6000（TP 2）· Qwen3-32B",
        "run=rtx-pro-6000-dp2-ep2": "2 × RTX PRO 6000（DP 2 + EP 2）· Qwen3-30B-A3B",
        "metric": "画哪个指标的分布",
        "metric=ttft": "TTFT",
        "metric=tpot": "TPOT",
        "metric=latency": "端到端延迟",
        "table": "实测与两种预测（每个请求都算在内）",
        "col.metric": "指标",
        "col.measured": "实测（vLLM）",
        "col.roofline": "屋顶线重放",
        "col.profiled": "按算子实测表重放",
        "row.ttft_p50_s": "TTFT 中位数",
        "row.ttft_p90_s": "TTFT P90",
        "row.tpot_p50_s": "TPOT 中位数",
        "row.tpot_p90_s": "TPOT P90",
        "row.latency_p50_s": "延迟中位数",
        "row.latency_mean_s": "延迟平均",
        "error": "（{error}）",
        "trace.measured": "实测（vLLM 0.19）",
        "trace.roofline": "屋顶线重放",
        "trace.profiled": "按算子实测表重放",
        "axis.x.ttft": "TTFT（秒）",
        "axis.x.tpot": "TPOT（毫秒）",
        "axis.x.latency": "端到端延迟（秒）",
        "axis.y": "不超过这个值的请求比例",
        "figure": "各请求 {metric} 的累积分布",
        "alt.point": "{name}：中位数 {p50}，P90 {p90}",
        "note.tp2": "运行：casys-kaist/LLMServingSim（MIT 许可）公开的一次 vLLM 0.19 运行，两块 RTX PRO 6000 "
                    "Blackwell Server Edition 用张量并行 2 跑 Qwen3-32B（BF16），两卡之间没有 NVLink；"
                    "300 个 ShareGPT 请求，每秒约 10 个，远超它的服务能力，所以 TTFT 以几十秒计。"
                    "引擎设置 max_num_seqs 128、max_num_batched_tokens 2,048，取自它的 meta.json；"
                    "meta.json 没记 KV 池，这里照 LLMServingSim 的算法取「显存 × 0.9 − 每卡的权重」，"
                    "这次运行远没把它用满。每层的两次 all-reduce 走 LLMServingSim 为这次运行设的链路："
                    "16 GB/s、每跳 20 微秒。按算子实测表重放用的是同一块卡上半个模型的逐层实测，"
                    "不拟合任何参数；屋顶线按数据手册的上限算。",
        "note.ep2": "运行：casys-kaist/LLMServingSim（MIT 许可）公开的一次 vLLM 0.19 运行，混合专家模型 "
                    "Qwen3-30B-A3B（BF16，每层 128 个专家，每个 token 选 8 个）跑在两块 RTX PRO 6000 Blackwell "
                    "Server Edition 上：数据并行 2（每块卡是一个引擎，有自己的请求和 KV），加专家并行（每块卡放每层 "
                    "64 个专家，注意力整份）；两卡之间没有 NVLink。300 个 ShareGPT 请求，每秒约 10 个。每个引擎的设置"
                    " max_num_seqs 128、max_num_batched_tokens 2,048 取自它的 meta.json；KV 池照 LLMServingSim 的算法"
                    "取「显存 × 0.9 − 每卡的权重」。重放把请求按到达顺序轮流分给两个引擎（我们的选择：vLLM 的前端"
                    "把请求交给它看来最空闲的引擎），假定另一个引擎的负载和这个一样，各自的步骤不互相等待。每个 MoE "
                    "层两次 all-to-all，走 LLMServingSim 为这次运行设的链路：16 GB/s、每跳 20 微秒。按算子实测表重放"
                    "读同一块卡上 vLLM 的逐层实测：MoE 块按两块卡一起送进来的 token 数和这块卡上被碰到的专家数插值，"
                    "不拟合任何参数；屋顶线按数据手册的上限算。",
        "note": "运行：casys-kaist/LLMServingSim（MIT 许可）公开的一次 vLLM 0.19 运行，一块 RTX 4090 上的 "
                "Llama-3.1-8B（BF16），300 个 ShareGPT 请求，每秒约 10 个；引擎设置 max_num_seqs 256、"
                "max_num_batched_tokens 2,048（分块预填充）、KV 池 2,588 块 × 16 = 41,408 个 token，都取自它的 "
                "meta.json。时间从引擎把请求放进队列算起。屋顶线重放的误差是「预测 ÷ 实测 − 1」；按算子实测表重放"
                "不拟合任何参数，每一步的时间从同一块卡上 vLLM 的逐层实测表里插值出来。",
    },
    "en": {
        "title": "A real vLLM run, replayed through the course's scheduler",
        "run": "Which run",
        "run=rtx-4090": "RTX 4090 · Llama-3.1-8B",
        "run=rtx-pro-6000-tp2": "2 × RTX PRO 6000 (TP 2) · Qwen3-32B",
        "run=rtx-pro-6000-dp2-ep2": "2 × RTX PRO 6000 (DP 2 + EP 2) · Qwen3-30B-A3B",
        "metric": "Distribution to draw",
        "metric=ttft": "TTFT",
        "metric=tpot": "TPOT",
        "metric=latency": "End-to-end latency",
        "table": "Measured and the two predictions (every request counted)",
        "col.metric": "Metric",
        "col.measured": "Measured (vLLM)",
        "col.roofline": "Roofline replay",
        "col.profiled": "Profiled replay",
        "row.ttft_p50_s": "TTFT median",
        "row.ttft_p90_s": "TTFT p90",
        "row.tpot_p50_s": "TPOT median",
        "row.tpot_p90_s": "TPOT p90",
        "row.latency_p50_s": "Latency median",
        "row.latency_mean_s": "Latency mean",
        "error": "\u00a0({error})",
        "trace.measured": "measured (vLLM 0.19)",
        "trace.roofline": "roofline replay",
        "trace.profiled": "profiled replay",
        "axis.x.ttft": "TTFT (s)",
        "axis.x.tpot": "TPOT (ms)",
        "axis.x.latency": "End-to-end latency (s)",
        "axis.y": "Share of requests at or below",
        "figure": "Cumulative distribution of each request's {metric}",
        "alt.point": "{name}: median {p50}, p90 {p90}",
        "note.tp2": "The run: a public vLLM 0.19 run by casys-kaist/LLMServingSim (MIT licence), Qwen3-32B in BF16 "
                    "split by tensor parallelism over two RTX PRO 6000 Blackwell Server Editions with no NVLink "
                    "between them; 300 ShareGPT requests at about 10 per second, far more than it can serve, so TTFTs "
                    "run to tens of seconds. The engine's settings, max_num_seqs 128 and max_num_batched_tokens 2,048,"
                    " come from its meta.json, which records no KV pool: the replay sizes it as LLMServingSim does, "
                    "memory × 0.9 less each GPU's weights, and the run never fills it. Each layer's 2 all-reduces take"
                    " the link LLMServingSim set for this run, 16 GB/s and 20 µs a hop. The profiled replay reads "
                    "vLLM's layer-by-layer timings of one GPU's half of the model and fits nothing; the roofline is "
                    "the datasheet's bound.",
        "note.ep2": "The run: a public vLLM 0.19 run by casys-kaist/LLMServingSim (MIT licence) of the "
                    "mixture-of-experts Qwen3-30B-A3B (BF16, 128 experts a layer, 8 chosen per token) on two RTX PRO "
                    "6000 Blackwell Server Editions with no NVLink between them: data parallel 2 (each GPU an engine "
                    "with its own requests and KV) with expert parallelism (each GPU holds 64 experts of every layer "
                    "and the whole of attention). 300 ShareGPT requests at about 10 per second. Each engine's "
                    "settings, max_num_seqs 128 and max_num_batched_tokens 2,048, come from its meta.json; its KV "
                    "pool is sized as LLMServingSim sizes it, memory × 0.9 less each GPU's weights. The replay deals "
                    "the requests to the two engines in turn as they arrive (our choice: vLLM's front end hands each "
                    "to the engine it finds least busy), takes the other engine's load to equal this one's, and lets "
                    "neither wait for the other's steps. Each MoE layer's 2 all-to-alls take the link LLMServingSim "
                    "set for this run, 16 GB/s and 20 µs a hop. The profiled replay reads vLLM's layer-by-layer "
                    "timings on the same GPU, the MoE block at the tokens both GPUs send it and the experts they touch "
                    "on this one, and fits nothing; the roofline is the datasheet's bound.",
        "note": "The run: a public vLLM 0.19 run by casys-kaist/LLMServingSim (MIT licence), Llama-3.1-8B in BF16 on "
                "one RTX 4090, 300 ShareGPT requests at about 10 per second; the engine's settings, max_num_seqs 256, "
                "max_num_batched_tokens 2,048 (chunked prefill) and a KV pool of 2,588 blocks × 16 = 41,408 tokens, "
                "come from its meta.json. Times count from the moment the engine queued a request. An error is "
                "predicted ÷ measured − 1. The profiled replay fits nothing: each step's time is interpolated from "
                "vLLM's layer-by-layer timings on the same GPU.",
    },
}

METRIC_ROWS = replay.METRICS
WIDGET = Widget(
    controls=(
        Select("run", default=RUN, options=tuple(measured.RUNS), style="buttons"),
        choices.bandwidth_efficiency(),
        choices.compute_efficiency(),
        Select("metric", default="ttft", options=("ttft", "tpot", "latency"), style="buttons"),
    ),
    layout=(
        Controls(),
        Table("table", ("col.metric", "col.measured", "col.roofline", "col.profiled"),
              tuple(Row(f"row.{k}", f"measured.{k}", (f"roofline.{k}", f"error.roofline.{k}"),
                        (f"profiled.{k}", f"error.profiled.{k}")) for k in METRIC_ROWS)),
        Figure("figure"),
        Flag("one_gpu", text="note", tone="note"),
        Flag("two_gpus", text="note.tp2", tone="note"),
        Flag("experts", text="note.ep2", tone="note"),
    ),
    # A replay of 300 requests is some 6,000 steps: about 15 ms in CPython, 50 in Pyodide, and its CDFs redraw 900
    # points: run apart, so that no other widget waits for it.
    slow=True,
)


def _text(key: str, seconds: float) -> str:
    return fmt_ms(seconds) if key.startswith("tpot") else fmt_duration(seconds)


def _signed_pct(fraction: float) -> str:
    return f"{fraction * 100:+.1f}%".replace("-", "−")


def render(state) -> dict:
    """The engine-replay view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    key = s["run"]
    run = measured.run(key)
    gpu, model, _ = measured.RUNS[key]
    served = replay.predicted(run, presets.hardware(gpu), presets.model(model),
                              bandwidth_efficiency=s["bandwidth_efficiency"],
                              compute_efficiency=s["compute_efficiency"], link=replay.LINKS.get(key))
    columns = {
        "measured": [(r.ttft_s, r.tpot_s, r.latency_s) for r in run.requests],
        "roofline": [(x.ttft_s, x.tpot_s, x.latency_s) for x in served],
        "profiled": list(replay.shipped_profiled(key)),
    }
    summaries = {name: replay.summary(*zip(*rows)) for name, rows in columns.items()}
    outputs = {}
    for name, metrics in summaries.items():
        for k in METRIC_ROWS:
            outputs[f"{name}.{k}"] = output(metrics[k], _text(k, metrics[k]))
            if name != "measured":
                error = metrics[k] / summaries["measured"][k] - 1
                outputs[f"error.{name}.{k}"] = output(error, t["error"].format(error=_signed_pct(error)))
    flags = {"one_gpu": key == "rtx-4090", "two_gpus": key == "rtx-pro-6000-tp2",
             "experts": key == "rtx-pro-6000-dp2-ep2"}
    return view(s, outputs, figures={"figure": figure(columns, s)}, flags=flags)


COLOURS = {"measured": ("ink", "solid", 3), "roofline": ("roof", "solid", 2), "profiled": ("prefill", "dash", 2)}


def figure(columns: dict, s: dict) -> dict:
    t = TEXT[s["lang"]]
    metric = s["metric"]
    index = ("ttft", "tpot", "latency").index(metric)
    scale = 1e3 if metric == "tpot" else 1.0
    data, spoken = [], []
    for name, rows in columns.items():
        values = sorted(r[index] for r in rows if r[index] is not None)
        xs = [v * scale for v in values]
        ys = [(k + 1) / len(xs) for k in range(len(xs))]
        key = f"{metric}_p50_s"
        spoken.append(t["alt.point"].format(name=t[f"trace.{name}"], p50=_text(key, percentile(values, 50)),
                                            p90=_text(key, percentile(values, 90))))
        colour, dash, width = COLOURS[name]
        data.append({"type": "scatter", "mode": "lines", "name": t[f"trace.{name}"], "x": xs, "y": ys,
                     "line": {"color": palette.colour(colour), "width": width, "dash": dash, "shape": "hv"},
                     "hovertemplate": f"{t[f'trace.{name}']}<br>%{{x:.3g}}: %{{y:.0%}}<extra></extra>"})
    layout = palette.plot_layout({
        "xaxis": {"title": {"text": t[f"axis.x.{metric}"]}, "fixedrange": True, "rangemode": "tozero"},
        "yaxis": {"title": {"text": t["axis.y"]}, "fixedrange": True, "range": [0, 1], "tickformat": ".0%"},
        "margin": {"l": 56, "r": 16, "t": 24, "b": 48},
        "height": 340,
        "legend": palette.legend_above(),
        "uirevision": f"{s['run']}-{metric}",  # a new run or metric draws its own axis range
    })
    return {"data": data, "layout": layout,
            "alt": alt.sentence(s["lang"], t["figure"].format(metric=t[f"metric={metric}"]), spoken)}
