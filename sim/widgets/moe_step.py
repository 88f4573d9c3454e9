"""One decode step of a mixture-of-experts model on one GPU against the batch (sim/physics/moe.py): the experts the
batch touches (moe.touched_share), the weights it reads (routing.weights_read_bytes), its roofline time (moe.decode)
beside dense models of the MoE's active and total sizes (moe.as_dense), and the batch at which its advantage over the
total-size model first falls below 2x (moe.advantage_batch). Whether the weights and this batch's KV fit is
memory.py's count; a setting that does not fit is timed as if it fit, and says so.

The second figure is measured, whatever the model and GPU chosen: the MoE block of Qwen3-30B-A3B on one RTX PRO 6000
(measured.moe_block, vLLM 0.19.0's layer profiler from LLMServingSim), its time against the experts activated for a
few token counts, beside moe.block's bound, with the experts the chosen batch touches in expectation marked: the
time follows the experts touched, not the tokens.
"""

from __future__ import annotations

import functools
import math

from sim.kit import (
    Controls,
    Derivations,
    Figure,
    Flag,
    Range,
    Readout,
    Readouts,
    Select,
    Text,
    Widget,
    alt,
    output,
    palette,
    view,
)
from sim.page.display import (
    fmt_bytes,
    fmt_chance,
    fmt_grouped,
    fmt_ms,
    fmt_share,
    fmt_sig,
    fmt_signed_bytes,
    step_time_derivation,
)
from sim.physics import measured, memory, model_size, moe, presets, routing

TEXT = {
    "zh": {
        "title": "MoE 模型 decode 一步：读多少字节、要多久，随 batch 变化",
        "model": "模型",
        "gpu": "GPU",
        "batch": "这一步里的请求数（每个请求一个 token）",
        "context": "每个请求已缓存的 token 数",
        "touched": "读到的路由专家比例（期望）",
        "touched_of": "每个 MoE 层 {experts} 个里的 {touched} 个",
        "weights": "每步读的权重",
        "step": "一步的时间（MoE）",
        "dense_active": "同样激活参数量的稠密模型",
        "dense_total": "同样总参数量的稠密模型",
        "advantage": "比总参数量的稠密模型快",
        "advantage_batch": "优势降到 2× 以下的 batch",
        "per_request": "每个请求看到的速度",
        "fits": "权重加这批请求的 KV 放不放得下",
        "fits_note": "需要 {need}，显存 {memory}",
        "unit.per_s": "{rate} token/s",
        "unit.times": "{x}×",
        "advantage_batch.at": "batch {batch} 时第一次低于 2×",
        "advantage_batch.never": "到 batch {limit} 都不低于 2×",
        "fits.yes": "放得下，还剩 {spare}",
        "fits.no": "放不下，差 {short}",
        "no_weights": "光是权重（{resident}）就超过了这张 {gpu_name} 的显存（{memory}）：一张这样的卡放不下这个模型，"
                      "这里所有的时间都是「假设放得下」算的。",
        "over_batch": "这张 {gpu_name} 在权重之外只放得下 {max_batch} 个这个上下文长度的请求："
                      "这一批是「假设放得下」算的。",
        "how.touched": "1 − (1 − {k}/{experts})^{batch} = 1 − {missed} = {share}"
                       "（每个 MoE 层 {experts} 个里期望 {touched} 个）",
        "how.weights": "全部矩阵乘权重 {full} − {experts} × {expert} + {touched} × {expert} = {read}"
                       "（一个专家在 {layers} 个 MoE 层里共 {params} 个参数 × {bpp} = {expert}）",
        "how.step": "MoE（矩阵乘读碰到的专家）：{terms}",
        "how.dense_active": "{params} 个参数的稠密模型（每个 batch 都读全部权重）：{terms}",
        "how.dense_total": "{params} 个参数的稠密模型：{terms}",
        "how.advantage": "{dense_total} ÷ {step} = {advantage}",
        "how.advantage_batch.at": "batch {before}：{a_before} ≥ 2×；batch {batch}：{a_batch} < 2×",
        "how.advantage_batch.first": "batch 1 就已经是 {a_batch} < 2×",
        "how.advantage_batch.never": "从 batch 1 到 {limit}，总参数量的稠密模型的时间 ÷ MoE 的时间都不低于 2×",
        "how.per_request": "每步 1 个 token ÷ {step} = {rate}",
        "how.fits": "权重 {resident} + {batch} 个请求 × 每个 {per_request} 的 KV（{context} 个 token）= {need}；"
                    "{memory} − {need} = {spare}；这个上下文长度最多放 {max_batch} 个请求",
        "bytes.1": "1 字节（FP8）",
        "bytes.2": "2 字节（BF16）",
        "steps": "一步的时间随 batch 的变化：MoE 和两个稠密模型",
        "axis.batch": "这一步里的请求数（对数刻度）",
        "axis.step": "一步的时间（毫秒，对数刻度）",
        "trace.moe": "MoE",
        "trace.dense_active": "稠密，激活参数量",
        "trace.dense_total": "稠密，总参数量",
        "trace.chosen": "所选 batch",
        "region.over": "放不下（假设放得下）",
        "alt.steps.head": "{model} 在 {gpu} 上、上下文 {context}，一步的时间随 batch",
        "alt.steps.point": "batch {batch}：MoE {moe}，稠密激活 {active}，稠密总量 {total}",
        "alt.steps.over": "batch {max_batch} 以上放不下",
        "measured.caption": "下图是实测，不随上面选的模型和 GPU 变：Qwen3-30B-A3B 的一个 MoE 块（路由器加"
                            "一个层的 128 个专家）在一张 RTX PRO 6000 上的时间。来源：vLLM 0.19.0 的逐层 profiler，"
                            "取自 LLMServingSim（MIT 许可）@5daddb2，BF16，eager 模式（没有 CUDA graph），3 次的"
                            "平均；profiler 强制路由，让 token 恰好碰到那么多专家。点是实测，虚线是各个 token 数的 "
                            "moe.block 屋顶线下限（路由器和每个碰到的专家读一次，每个 token 过路由器和它的 8 个专家），"
                            "受带宽限制时它们重合成一条。标记：{batch_tokens} 个 token 在这个模型里期望碰到的专家数"
                            "（均匀路由，128 个里挑 8 个）。",
        "measured": "实测：一个 MoE 块的时间随碰到的专家数（Qwen3-30B-A3B，RTX PRO 6000）",
        "axis.experts": "碰到的专家数（128 个里）",
        "axis.us": "一个 MoE 块的时间（微秒）",
        "trace.tokens": "{tokens} 个 token",
        "trace.bound": "{tokens} 个 token 的下限",
        "trace.bounds": "屋顶线下限（moe.block）",
        "trace.mark": "这个 batch 期望碰到的专家",
        "unit.batch_tokens": "{batch} 个",
        "alt.measured.head": "Qwen3-30B-A3B 的一个 MoE 块在 RTX PRO 6000 上的实测时间随碰到的专家数",
        "alt.measured.tokens": "{tokens} 个 token：{points}",
        "alt.measured.point": "{experts} 个专家 {time}（下限 {bound}）",
        "alt.measured.mark": "{batch} 个 token 期望碰到 {experts} 个专家，下限 {bound}",
        "note": "一步 decode：每个请求生成 1 个 token，按屋顶线算：矩阵乘、注意力、状态各取「FLOPs ÷ 峰值算力」和"
                "「字节 ÷ 满带宽」里大的那个，一个接一个。MoE 的矩阵乘对每个 token 算它激活的参数（每个权重 2 FLOPs），"
                "权重只读这一批碰到的专家（加上注意力、共享专家、路由器、稠密层和 LM head），每个读一次；碰到多少按均匀"
                "路由的期望算，这是我们的选择：E(1 − (1 − k/E)^B)。两个稠密模型和这个 MoE 有同样的注意力和 KV，每一步"
                "读固定的权重：「激活」读 MoE 每个 token 用到的那么多参数，FLOPs 和 MoE 一样；「总量」读全部参数，"
                "每个 token 对每个参数算 2 FLOPs。权重 BF16 每个参数 2 字节，DeepSeek-V3 的 FP8 每个 1 字节，所有乘法"
                "都按这张卡的 BF16 峰值算。放不放得下：整个 checkpoint 加每个请求的 KV 和 GPU 报告的全部显存比；"
                "放不下的配置按「假设放得下」算。GB = 10⁹ 字节，MB = 10⁶ 字节。",
    },
    "en": {
        "title": "One decode step of an MoE model: bytes and time against the batch",
        "model": "Model",
        "gpu": "GPU",
        "batch": "Requests in the step (one token each)",
        "context": "Cached tokens per request",
        "touched": "Share of the routed experts read (expected)",
        "touched_of": "{touched} of {experts} in each MoE layer",
        "weights": "Weights read per step",
        "step": "Step time (MoE)",
        "dense_active": "A dense model of its active size",
        "dense_total": "A dense model of its total size",
        "advantage": "Faster than the total-size dense model",
        "advantage_batch": "Batch where the advantage falls below 2×",
        "per_request": "Speed one request sees",
        "fits": "Weights and this batch's KV on the GPU",
        "fits_note": "needs {need} of {memory}",
        "unit.per_s": "{rate} tok/s",
        "unit.times": "{x}×",
        "advantage_batch.at": "below 2× first at batch {batch}",
        "advantage_batch.never": "never below 2× up to batch {limit}",
        "fits.yes": "fits, {spare} to spare",
        "fits.no": "does not fit, {short} short",
        "no_weights": "The weights alone ({resident}) are more than the {gpu_name}'s memory ({memory}): no single GPU "
                      "of this kind holds this model, and every time here is as if it fit.",
        "over_batch": "Beside the weights the {gpu_name} holds only {max_batch} requests of this context: this batch "
                      "is timed as if it fit.",
        "how.touched": "1 − (1 − {k}/{experts})^{batch} = 1 − {missed} = {share} ({touched} of {experts} expected in "
                       "each MoE layer)",
        "how.weights": "all matmul weights {full} − {experts} × {expert} + {touched} × {expert} = {read} (one expert "
                       "in its {layers} MoE layers: {params} parameters × {bpp} = {expert})",
        "how.step": "the MoE, its matmuls reading the experts touched: {terms}",
        "how.dense_active": "a dense model of {params} parameters, read whole at every batch: {terms}",
        "how.dense_total": "a dense model of {params} parameters: {terms}",
        "how.advantage": "{dense_total} ÷ {step} = {advantage}",
        "how.advantage_batch.at": "batch {before}: {a_before} ≥ 2×; batch {batch}: {a_batch} < 2×",
        "how.advantage_batch.first": "already {a_batch} < 2× at batch 1",
        "how.advantage_batch.never": "from batch 1 to {limit} the total-size dense model's time ÷ the MoE's stays at "
                                     "2× or more",
        "how.per_request": "1 token a step ÷ {step} = {rate}",
        "how.fits": "weights {resident} + {batch} requests × {per_request} of KV each ({context} tokens) = {need}; "
                    "{memory} − {need} = {spare}; at most {max_batch} requests of this context fit",
        "bytes.1": "1 byte (FP8)",
        "bytes.2": "2 bytes (BF16)",
        "steps": "Step time against the batch: the MoE and two dense models",
        "axis.batch": "Requests in the step (log scale)",
        "axis.step": "Step time (ms, log scale)",
        "trace.moe": "MoE",
        "trace.dense_active": "dense, active size",
        "trace.dense_total": "dense, total size",
        "trace.chosen": "batch chosen",
        "region.over": "does not fit (as if it fit)",
        "alt.steps.head": "Step time of {model} on the {gpu} at {context} tokens of context, against the batch",
        "alt.steps.point": "batch {batch}: MoE {moe}, dense active {active}, dense total {total}",
        "alt.steps.over": "past batch {max_batch} it does not fit",
        "measured.caption": "The figure below is measured and stays the same whatever model and GPU are chosen above: "
                            "the MoE block (the router and one layer's 128 experts) of Qwen3-30B-A3B on one RTX PRO "
                            "6000. Source: vLLM 0.19.0's layer-wise profiler, from LLMServingSim (MIT licence) "
                            "@5daddb2, BF16, eager mode (no CUDA graphs), the mean of 3 runs; the profiler forces the "
                            "routing so that the tokens touch exactly that many experts. Points are measured; the "
                            "dashed lines are moe.block's roofline bound for each token count (the router and each "
                            "expert touched read once, each token through the router and its 8 experts), one line "
                            "where they are memory-bound. The "
                            "marker: the experts {batch_tokens} tokens touch in expectation in this model (uniform "
                            "routing, 8 of 128).",
        "measured": "Measured: one MoE block's time against the experts touched (Qwen3-30B-A3B, RTX PRO 6000)",
        "axis.experts": "Experts touched (of 128)",
        "axis.us": "One MoE block's time (µs)",
        "trace.tokens": "{tokens} tokens",
        "trace.bound": "bound at {tokens} tokens",
        "trace.bounds": "roofline bound (moe.block)",
        "trace.mark": "this batch's experts, expected",
        "unit.batch_tokens": "{batch}",
        "alt.measured.head": "Measured time of one MoE block of Qwen3-30B-A3B on the RTX PRO 6000 against the experts "
                             "touched",
        "alt.measured.tokens": "{tokens} tokens: {points}",
        "alt.measured.point": "{experts} experts {time} (bound {bound})",
        "alt.measured.mark": "{batch} tokens touch {experts} experts in expectation, bound {bound}",
        "note": "One decode step, each request adding 1 token, timed by the roofline: the matmuls, attention and "
                "state each take the larger of FLOPs ÷ peak compute and bytes ÷ full bandwidth, one after another. "
                "The MoE's matmuls multiply each token by the parameters it activates (2 FLOPs a weight) and read "
                "only the experts the batch touches (besides attention, shared experts, routers, dense layers and "
                "the LM head), each once; how many it touches is uniform routing's expectation, OUR CHOICE: "
                "E(1 − (1 − k/E)^B). The two dense models have the MoE's attention and KV and read a fixed set of "
                "weights every step: \"active\" as many parameters as one token of the MoE uses, with the MoE's "
                "FLOPs; \"total\" all of them, 2 FLOPs a parameter a token. Weights are BF16 at 2 bytes a "
                "parameter, DeepSeek-V3's FP8 at 1 byte, every multiply at the GPU's BF16 peak. Fitting: the whole "
                "checkpoint plus each request's KV against all the memory the GPU reports; what does not fit is "
                "timed as if it fit. GB = 10⁹ bytes, MB = 10⁶ bytes.",
    },
}

MODELS = tuple(presets.moe_model_keys())
GPUS = (*presets.hardware_keys(), "rtx-pro-6000")
# The batch slider's stops: powers of two and the halves between, 1 to 512.
BATCHES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
CONTEXTS = (0, 128, 256, 512, 1_024, 2_048, 4_096, 8_192, 16_384, 32_768)
FACTOR = 2.0  # the advantage_batch readout: the batch where the MoE is first less than 2x faster
LIMIT = 4_096  # moe.advantage_batch's search limit
MAX_PLOTTED = 1_024
CURVE_BATCHES = tuple(sorted({round(2 ** (k / 3)) for k in range(31)} | {8, 64}))  # 1 to 1,024, 3 a doubling
SPOKEN_BATCHES = (1, 8, 64, 256, 1_024)
X_RANGE = (round(math.log10(0.8), 4), round(math.log10(MAX_PLOTTED * 1.25), 4))

MEASURED_RUN = "rtx-pro-6000-dp2-ep2"  # its GPU and model (measured.RUNS)
MEASURED_TOKENS = (16, 64, 256, 1_024)
MEASURED_COLOURS = ("prefill", "decode", "kv", "state")

WIDGET = Widget(
    controls=(
        Select("model", default="qwen3-30b-a3b", options=MODELS, names={k: presets.model(k).name for k in MODELS}),
        Select("gpu", default="h100-sxm", options=GPUS, style="buttons",
               names={k: presets.hardware(k).short_name for k in GPUS}),
        Range.over("batch", BATCHES, default=64),
        Range.over("context", CONTEXTS, default=1_024),
    ),
    layout=(
        Controls(),
        Flag("no_weights"),
        Flag("over_batch"),
        Readouts(Readout("touched", note="touched_of"), "weights", "step", "dense_active", "dense_total", "advantage",
                 "advantage_batch", "per_request", Readout("fits", note="fits_note")),
        Figure("steps"),
        Text("measured.caption"),
        Figure("measured"),
        Derivations("touched", "weights", "step", "dense_active", "dense_total", "advantage", "advantage_batch",
                    "per_request", "fits"),
        Text("note"),
    ),
)


def _times(x: float) -> str:
    return f"{x:.2f}×"


def _near(x: float) -> str:
    """A ratio beside FACTOR with the digits it takes to tell them apart: 2.07×, 1.998×."""
    decimals = 2
    while round(x, decimals) == FACTOR and decimals < 6:
        decimals += 1
    return f"{x:.{decimals}f}×"


@functools.cache
def curves(model: str, gpu: str, context: int) -> dict[str, tuple[float, ...]]:
    """Step time (s) at each of CURVE_BATCHES for the MoE and the two dense models (a batch move redraws none)."""
    m, hw = presets.model(model), presets.hardware(gpu)
    return {
        "moe": tuple(moe.decode(m, hw, b, context).time_s for b in CURVE_BATCHES),
        "dense_active": tuple(moe.as_dense(m, hw, b, context, "active").time_s for b in CURVE_BATCHES),
        "dense_total": tuple(moe.as_dense(m, hw, b, context, "total").time_s for b in CURVE_BATCHES),
    }


@functools.cache
def advantage_batch(model: str, gpu: str, context: int) -> tuple[int | None, float, float]:
    """moe.advantage_batch at FACTOR, and the advantage there and one batch before (nan where there is none), once
    per model, GPU and context."""
    m, hw = presets.model(model), presets.hardware(gpu)
    first = moe.advantage_batch(m, hw, context, FACTOR, LIMIT)
    if first is None:
        return None, math.nan, math.nan
    before = moe.advantage(m, hw, first - 1, context) if first > 1 else math.nan
    return first, before, moe.advantage(m, hw, first, context)


def render(state) -> dict:
    """The moe-step view for any state (invalid values replaced by defaults)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    m, hw = presets.model(s["model"]), presets.hardware(s["gpu"])
    batch, context = s["batch"], s["context"]
    e = m.experts
    share = moe.touched_share(m, batch)
    touched = routing.touched(m, batch)
    read = routing.weights_read_bytes(m, batch)
    step = moe.decode(m, hw, batch, context)
    active = moe.as_dense(m, hw, batch, context, "active")
    total = moe.as_dense(m, hw, batch, context, "total")
    advantage = total.time_s / step.time_s
    first, before, at = advantage_batch(s["model"], s["gpu"], context)
    resident = model_size.resident_weight_bytes(m)
    need = moe.memory_per_gpu(m, batch, context)
    spare = hw.memory_bytes - need
    max_batch = memory.max_batch(m, hw, context)
    no_weights = resident > hw.memory_bytes
    rate = t["unit.per_s"]
    outputs = {
        "touched": output(share, fmt_share(share)),
        "touched_of": output(touched, t["touched_of"].format(touched=f"{touched:,.1f}", experts=fmt_grouped(e.routed))),
        "weights": output(read / 1e9, fmt_bytes(read)),
        "step": output(step.time_s * 1e3, fmt_ms(step.time_s)),
        "dense_active": output(active.time_s * 1e3, fmt_ms(active.time_s)),
        "dense_total": output(total.time_s * 1e3, fmt_ms(total.time_s)),
        "advantage": output(advantage, _times(advantage)),
        "advantage_batch": output(first or 0, t["advantage_batch.at"].format(batch=fmt_grouped(first)) if first
                                  else t["advantage_batch.never"].format(limit=fmt_grouped(LIMIT))),
        "per_request": output(1 / step.time_s, rate.format(rate=fmt_sig(1 / step.time_s))),
        "fits": output(spare / 1e9, t["fits.yes"].format(spare=fmt_bytes(spare)) if spare >= 0
                       else t["fits.no"].format(short=fmt_bytes(-spare))),
        "fits_note": output(need / 1e9, t["fits_note"].format(need=fmt_bytes(need), memory=fmt_bytes(hw.memory_bytes))),
        "resident": output(resident / 1e9, fmt_bytes(resident)),
        "memory": output(hw.memory_bytes / 1e9, fmt_bytes(hw.memory_bytes)),
        "gpu_name": output(0, hw.short_name),
        "max_batch": output(max_batch, fmt_grouped(max_batch)),
        "batch_tokens": output(batch, t["unit.batch_tokens"].format(batch=fmt_grouped(batch))),
    }
    flags = {"no_weights": no_weights, "over_batch": not no_weights and max_batch < batch}
    expert = m.moe_layers * model_size.expert_params(m) * m.weight_bytes_per_param
    per_request = memory.bytes_per_request(m, context)
    derivations = {
        "touched": t["how.touched"].format(k=e.per_token, experts=fmt_grouped(e.routed), batch=fmt_grouped(batch),
                                           missed=fmt_chance(routing.missed(e.routed, e.per_token, batch)),
                                           share=fmt_share(share), touched=f"{touched:,.1f}"),
        "weights": t["how.weights"].format(full=fmt_bytes(model_size.matmul_weight_bytes(m)),
                                           experts=fmt_grouped(e.routed), expert=fmt_bytes(expert),
                                           touched=f"{touched:,.1f}", read=fmt_bytes(read), layers=m.moe_layers,
                                           params=fmt_grouped(model_size.expert_params(m) * m.moe_layers),
                                           bpp=t[f"bytes.{m.weight_bytes_per_param}"]),
        "step": t["how.step"].format(terms=step_time_derivation(step, hw)),
        "dense_active": t["how.dense_active"].format(params=fmt_grouped(model_size.active_params(m)),
                                                     terms=step_time_derivation(active, hw)),
        "dense_total": t["how.dense_total"].format(params=fmt_grouped(model_size.matmul_params(m)),
                                                   terms=step_time_derivation(total, hw)),
        "advantage": t["how.advantage"].format(dense_total=fmt_ms(total.time_s), step=fmt_ms(step.time_s),
                                               advantage=_times(advantage)),
        "advantage_batch": advantage_derivation(first, before, at, t),
        "per_request": t["how.per_request"].format(step=fmt_ms(step.time_s),
                                                   rate=rate.format(rate=fmt_sig(1 / step.time_s))),
        "fits": t["how.fits"].format(resident=fmt_bytes(resident), batch=fmt_grouped(batch),
                                     per_request=fmt_bytes(per_request), context=fmt_grouped(context),
                                     need=fmt_bytes(need), memory=fmt_bytes(hw.memory_bytes),
                                     spare=fmt_signed_bytes(spare), max_batch=fmt_grouped(max_batch)),
    }
    figures = {"steps": steps_figure(m, hw, s, (step, active, total), max_batch),
               "measured": measured_figure(batch, s["lang"])}
    return view(s, outputs, figures=figures, flags=flags, derivations=derivations)


def advantage_derivation(first: int | None, before: float, at: float, t: dict) -> str:
    """The advantage on each side of the first batch below FACTOR."""
    if first is None:
        return t["how.advantage_batch.never"].format(limit=fmt_grouped(LIMIT))
    if first == 1:
        return t["how.advantage_batch.first"].format(a_batch=_near(at))
    return t["how.advantage_batch.at"].format(before=fmt_grouped(first - 1), a_before=_near(before),
                                              batch=fmt_grouped(first), a_batch=_near(at))


# --- step time against the batch -----------------------------------------------------------------------------------

SERIES = (("moe", "decode", "solid"), ("dense_active", "memory", "dash"), ("dense_total", "roof", "dot"))


def _paper_x(batch: float) -> float:
    return round((math.log10(batch) - X_RANGE[0]) / (X_RANGE[1] - X_RANGE[0]), 4)


def steps_figure(m, hw, s: dict, chosen, max_batch: int) -> dict:
    """Step time (ms, log) against the batch (log) for the MoE and the two dense models, the chosen batch marked on
    each, and the batches that do not fit shaded."""
    t = TEXT[s["lang"]]
    by_series = curves(s["model"], s["gpu"], s["context"])
    data = []
    for (name, colour, dash) in SERIES:
        data.append({"type": "scatter", "mode": "lines", "name": t[f"trace.{name}"], "x": list(CURVE_BATCHES),
                     "y": [round(y * 1e3, 5) for y in by_series[name]],
                     "line": {"color": palette.colour(colour), "width": 2.5 if name == "moe" else 2, "dash": dash},
                     "hovertemplate": f"{t[f'trace.{name}']}<br>B = %{{x:,}}: %{{y:.3g}} ms<extra></extra>"})
    data.append({"type": "scatter", "mode": "markers", "name": t["trace.chosen"], "x": [s["batch"]] * 3,
                 "y": [round(e.time_s * 1e3, 5) for e in chosen],
                 "marker": {"color": palette.colour("ink"), "size": 10, "symbol": "circle-open", "line": {"width": 2}},
                 "hovertemplate": f"{t['trace.chosen']}<br>B = %{{x:,}}: %{{y:.3g}} ms<extra></extra>"})
    everything = [y for ys in by_series.values() for y in ys]
    y_range = [round(math.log10(min(everything) * 1e3 / 1.5), 4), round(math.log10(max(everything) * 1e3 * 1.5), 4)]
    shapes, annotations = [], []
    edge = _paper_x(max_batch + 0.5) if max_batch else 0.0
    if edge < 1:
        shapes.append({"type": "rect", "xref": "paper", "yref": "paper", "x0": max(0.0, edge), "x1": 1, "y0": 0,
                       "y1": 1, "fillcolor": palette.colour("region-over"), "line": {"width": 0}, "layer": "below"})
        annotations.append({"xref": "paper", "yref": "paper", "x": 0.99, "y": 0.02, "xanchor": "right",
                            "yanchor": "bottom", "text": t["region.over"], "showarrow": False,
                            "bgcolor": palette.colour("surface"), "borderpad": 2,
                            "font": {"color": palette.colour("over"), "size": 12}})
    layout = palette.plot_layout({
        "xaxis": {"title": {"text": t["axis.batch"]}, "type": "log", "range": list(X_RANGE), "dtick": 1,
                  "fixedrange": True},
        "yaxis": {"title": {"text": t["axis.step"]}, "type": "log", "range": y_range, "dtick": 1, "fixedrange": True},
        "shapes": shapes,
        "annotations": annotations,
        "margin": {"l": 56, "r": 16, "t": 24, "b": 48},
        "height": 340,
        "legend": palette.legend_above(),
        "uirevision": "moe-step",
    })
    spoken = []
    for b in SPOKEN_BATCHES:
        i = CURVE_BATCHES.index(b)
        spoken.append(t["alt.steps.point"].format(batch=fmt_grouped(b), moe=fmt_ms(by_series["moe"][i]),
                                                  active=fmt_ms(by_series["dense_active"][i]),
                                                  total=fmt_ms(by_series["dense_total"][i])))
    if max_batch < MAX_PLOTTED:
        spoken.append(t["alt.steps.over"].format(max_batch=fmt_grouped(max_batch)))
    head = t["alt.steps.head"].format(model=m.name, gpu=hw.short_name, context=fmt_grouped(s["context"]))
    return {"data": data, "layout": layout, "alt": alt.sentence(s["lang"], head, spoken)}


# --- the measured MoE block ----------------------------------------------------------------------------------------

def _us(seconds: float) -> str:
    return f"{fmt_sig(seconds * 1e6)} µs"


@functools.cache
def measured_setup() -> tuple[presets.Model, presets.Hardware]:
    """The model and GPU of the measured run."""
    gpu, model = measured.RUNS[MEASURED_RUN][:2]
    return presets.model(model), presets.hardware(gpu)


def marked_experts(batch: int) -> float:
    """The experts of the measured model's layer a batch of `batch` tokens touches in expectation."""
    m, _ = measured_setup()
    e = m.experts
    return routing.expected_touched(e.routed, e.per_token, batch)


@functools.cache
def measured_traces(lang: str) -> tuple[tuple[dict, ...], tuple[str, ...]]:
    """The measured points and their bounds, one colour per token count, and their text alternative (the same for
    every state)."""
    t = TEXT[lang]
    m, hw = measured_setup()
    rows = measured.moe_block(MEASURED_RUN)
    e = m.experts
    bounds, data, spoken = [], [], []
    for tokens, colour in zip(MEASURED_TOKENS, MEASURED_COLOURS):
        points = rows[tokens]
        name = t["trace.tokens"].format(tokens=fmt_grouped(tokens))
        activated = list(range(e.per_token, min(e.routed, tokens * e.per_token) + 1, e.per_token))
        bound_name = t["trace.bound"].format(tokens=fmt_grouped(tokens))
        # One colour and one legend entry for every bound: where the block is memory-bound they coincide.
        bounds.append({"type": "scatter", "mode": "lines", "name": t["trace.bounds"], "legendgroup": "bounds",
                       "showlegend": not bounds, "x": activated,
                       "y": [round(moe.block(m, hw, tokens, a).time_s * 1e6, 4) for a in activated],
                       "line": {"color": palette.colour("roof"), "width": 1.5, "dash": "dash"},
                       "hovertemplate": f"{bound_name}<br>%{{x}}: %{{y:.3g}} µs<extra></extra>"})
        data.append({"type": "scatter", "mode": "markers", "name": name,
                     "x": [a for a, _ in points], "y": [round(sec * 1e6, 4) for _, sec in points],
                     "marker": {"color": palette.colour(colour), "size": 8},
                     "hovertemplate": f"{name}<br>%{{x}}: %{{y:.3g}} µs<extra></extra>"})
        said = [t["alt.measured.point"].format(experts=a, time=_us(sec), bound=_us(moe.block(m, hw, tokens, a).time_s))
                for a, sec in (points[0], points[-1])]
        spoken.append(t["alt.measured.tokens"].format(tokens=fmt_grouped(tokens), points=alt.parts(lang, said)))
    return (*bounds, *data), tuple(spoken)


def measured_figure(batch: int, lang: str) -> dict:
    """The measured MoE block against the experts activated, its bounds, and the chosen batch's expected experts
    marked on its own bound."""
    t = TEXT[lang]
    m, hw = measured_setup()
    e = m.experts
    data, spoken = measured_traces(lang)
    experts = min(float(e.routed), max(float(e.per_token), marked_experts(batch)))
    bound = moe.block(m, hw, batch, experts).time_s
    mark = {"type": "scatter", "mode": "markers", "name": t["trace.mark"], "x": [round(experts, 4)],
            "y": [round(bound * 1e6, 4)],
            "marker": {"color": palette.colour("ink"), "size": 12, "symbol": "diamond-open", "line": {"width": 2.5}},
            "hovertemplate": f"{t['trace.mark']}<br>%{{x:.1f}}: %{{y:.3g}} µs<extra></extra>"}
    layout = palette.plot_layout({
        "xaxis": {"title": {"text": t["axis.experts"]}, "range": [0, e.routed + 8], "tickvals": [8, 16, 32, 64, 128],
                  "fixedrange": True},
        "yaxis": {"title": {"text": t["axis.us"]}, "rangemode": "tozero", "fixedrange": True},
        "margin": {"l": 56, "r": 16, "t": 24, "b": 48},
        "height": 340,
        "legend": palette.legend_above(),
        "uirevision": "moe-step-measured",
    })
    said = [*spoken, t["alt.measured.mark"].format(batch=fmt_grouped(batch), experts=f"{experts:,.1f}",
                                                   bound=_us(bound))]
    return {"data": [*data, mark], "layout": layout, "alt": alt.sentence(lang, t["alt.measured.head"], said)}
