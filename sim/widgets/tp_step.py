"""One decode step under tensor parallelism: each GPU's roofline over its shard, plus the all-reduces that join them
(sim/physics/parallel.py decode: 2 all-reduces per layer of batch x hidden BF16 activations, no overlap).

The link is the GPU's own NVLink through NVSwitch (parallel.default_interconnect) or PCIe with no NVLink (Gen4 for the
A100, Gen5 for the others). "formula" timing is the measured small-message floor plus the ring term; "measured" is
Vidur's median, interpolated, where the link has a curve at that degree and size (else the formula, and a note says
so). The speed-up divides by TP 1's step at the same model, GPU, batch and context, timed as if it fit where it does
not; `fits` is parallel.max_batch on the chosen degree.
"""

from __future__ import annotations

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
from sim.page.display import fmt_bytes, fmt_flops, fmt_grouped, fmt_ms, fmt_pct, fmt_share, fmt_sig
from sim.physics import parallel, presets

TEXT = {
    "zh": {
        "title": "张量并行下的一步 decode：矩阵乘、注意力和 all-reduce",
        "model": "模型",
        "gpu": "GPU",
        "tp": "张量并行度（几张卡分一个模型）",
        "link": "卡与卡之间的链路",
        "link=nvlink": "NVLink（经 NVSwitch）",
        "link=pcie": "PCIe（没有 NVLink）",
        "timing": "all-reduce 的时间",
        "timing=formula": "公式：延迟下限 + 环形项",
        "timing=measured": "实测（Vidur 中位数）",
        "batch": "这一步里的请求数",
        "context": "每个请求已缓存的 token 数",
        "step": "一步的时间",
        "matmuls": "矩阵乘（每张卡读自己那份权重）",
        "attention": "注意力及其余（每张卡）",
        "all_reduce": "all-reduce（每步合计）",
        "message": "一次 all-reduce 的数据量",
        "comm_share": "通信占一步的比例",
        "speedup": "比单卡快几倍",
        "efficiency": "扩展效率（加速比 ÷ 卡数）",
        "per_request": "每个请求看到的速度",
        "per_gpu": "每张卡的吞吐",
        "fits": "这几张卡放得下的请求数（这个上下文长度）",
        "unit.requests": "{n} 个请求",
        "unit.per_s": "{rate} token/s",
        "note": "一步 decode：每个请求生成 1 个 token。每张卡放 1/TP 的注意力头和 1/TP 的 MLP（Megatron-LM 的切法；"
                "K/V 头不少于 TP 个时也各放 1/TP，少于 TP 个时每张卡放一个，同一个头复制到几张卡上），每张卡的时间"
                "按屋顶线算：每个操作取「FLOPs ÷ 峰值算力」和「字节 ÷ 满带宽」里大的那个，操作一个接一个。注意力的"
                "输出投影之后、MLP 的 down 投影之后，各卡把部分结果用一次 all-reduce 加起来：每层 2 次，每次 batch "
                "× hidden 个 BF16 激活（每个 2 字节）；embedding 的那次 all-reduce 和 logits 的汇集没有算。不重叠："
                "all-reduce 等它前面的矩阵乘算完，下一个矩阵乘再等它。公式：实测的小消息延迟下限 + 环形项 2(n−1)/n "
                "× 消息 ÷ 链路单向带宽（NVIDIA/nccl-tests）。实测：Vidur 在那个大小上测得的 NCCL all-reduce 中位数"
                "（两点之间插值），eager 调用、没有 CUDA graph；推理引擎自己的 all-reduce kernel、NVLS 和 CUDA "
                "graph 会让小消息更快，这份数据里没有。H200 的 NVLink 用 H100 DGX 的数据（同一代 NVLink 和 NVSwitch）；"
                "B200 没人测过，延迟下限借 H100 DGX 的，没有实测曲线；只走 PCIe 的环也没人测过，延迟下限借 Vidur 那"
                "两台 4 卡机器的（两对 NVLink 之间靠一条较慢的链路相连，这里当作 PCIe）。KiB = 1,024 字节，"
                "MiB = 1,048,576 字节。",
        "link_used": "{link}，单向 {bandwidth} GB/s",
        "tp1": "TP 1：一张卡放整个模型，没有 all-reduce，链路和计时方式只改变图里 TP 2、4、8 那几根柱子。",
        "no_measured": "这条链路（{link_used}）在这个卡数下没有实测的 all-reduce（Vidur 没测过这样的机器）："
                       "选「实测」也按公式算。",
        "past_measured": "这次 all-reduce 比这条链路（{link_used}）上实测过的最大消息还大：选「实测」也按公式算。",
        "refused": "这个张量并行度切不开这个模型：查询头、K/V 头或 MLP 宽度不能被它整除（parallel.shard 拒绝），"
                   "没有可算的一步。",
        "no_weights": "每张卡分到的权重（{weights_per_gpu}）已经超过一张卡的显存：这个配置跑不起来，"
                      "下面的时间是「假设放得下」算的。",
        "over_batch": "这几张卡在权重之外只放得下 {fits}：这一批请求的时间是「假设放得下」算的。",
        "baseline_no_weights": "加速比除的是单卡（TP 1）的一步，而一张卡连这个模型的权重都放不下："
                               "那一步是「假设放得下」算的。",
        "baseline_over_batch": "加速比除的是单卡（TP 1）的一步，而一张卡在权重之外只放得下 {fits_one}："
                               "那一步是「假设放得下」算的。",
        "how.step": "矩阵乘 {matmuls} + 注意力及其余 {attention} + all-reduce {all_reduce} = {step}",
        "how.matmuls": "{share}：max({flops} ÷ {peak}, {bytes} ÷ {bandwidth}) = {time}",
        "share.weights": "每张卡 1/{tp} 的权重",
        "share.weights.one": "一张卡上的全部权重",
        "how.attention": "{share}：{terms} = {time}",
        "share.heads": "每张卡 1/{tp} 的注意力头",
        "share.heads.one": "一张卡上的全部注意力头",
        "how.all_reduce.formula": "2 × {layers} 层 × ({floor} + {factor} × {message} ÷ {bandwidth}) "
                                  "= {count} × {one} = {total}",
        "how.all_reduce.measured": "2 × {layers} 层 × {one}（Vidur 在 {setup} 上 {tp} 张卡、{message} 的实测中位数）"
                                   " = {total}",
        "how.all_reduce.none": "TP 1：只有一张卡，没有要加起来的东西，0 ms",
        "how.message": "{batch} 个请求 × hidden {hidden} × 2 字节（BF16）= {bytes} 字节 = {binary}",
        "how.speedup": "{one}（TP 1{as_if}）÷ {this} = {speedup}",
        "as_if": "，假设放得下",
        "how.efficiency": "{speedup} ÷ {tp} 张卡 = {efficiency}",
        "how.comm_share": "{all_reduce} ÷ {step} = {share}",
        "how.per_request": "每步 1 个 token ÷ {step} = {rate}",
        "how.per_gpu": "{batch} 个 token ÷ {step} ÷ {tp} 张卡 = {rate}",
        "how.fits": "⌊({memory} − 每张卡的权重 {weights}) ÷ 每个请求在每张卡上的 KV {per_request}⌋ = {fits}",
        "how.fits.none": "每张卡的权重 {weights} > 一张卡的显存 {memory}：一个请求也放不下",
        "none": "—",
        "figure": "TP 1、2、4、8 各自一步的时间",
        "axis.y": "一步的时间（毫秒）",
        "trace.matmuls": "矩阵乘",
        "trace.attention": "注意力及其余",
        "trace.all_reduce": "all-reduce",
        "bar.as_if": "（假设放得下）",
        "bar.refused": "切不开",
        "alt.bar": "TP {tp} {step}（矩阵乘 {matmuls}、注意力及其余 {attention}、all-reduce {all_reduce}）{as_if}",
        "alt.refused": "TP {tp} 切不开这个模型",
        "alt.head": "{model} 在 {gpu} 上、batch {batch}、上下文 {context}，一步的时间（毫秒）",
    },
    "en": {
        "title": "One decode step under tensor parallelism: matmuls, attention and all-reduces",
        "model": "Model",
        "gpu": "GPU",
        "tp": "Tensor-parallel degree (GPUs sharing one model)",
        "link": "Link between the GPUs",
        "link=nvlink": "NVLink (through NVSwitch)",
        "link=pcie": "PCIe (no NVLink)",
        "timing": "All-reduce time",
        "timing=formula": "Formula: floor + ring term",
        "timing=measured": "Measured (Vidur's medians)",
        "batch": "Requests in the step",
        "context": "Cached tokens per request",
        "step": "Step time",
        "matmuls": "Matmuls (each GPU reads its share of the weights)",
        "attention": "Attention and the rest (each GPU)",
        "all_reduce": "All-reduces (per step, in all)",
        "message": "Bytes in one all-reduce",
        "comm_share": "Share of the step spent communicating",
        "speedup": "Speed-up over one GPU",
        "efficiency": "Scaling efficiency (speed-up ÷ GPUs)",
        "per_request": "Speed one request sees",
        "per_gpu": "Throughput per GPU",
        "fits": "Requests of this context that fit on these GPUs",
        "unit.requests": "{n} requests",
        "unit.per_s": "{rate} tok/s",
        "note": "One decode step, each request adding 1 token. Each GPU holds 1/TP of the attention heads and 1/TP of "
                "the MLP (Megatron-LM's split; the K/V heads 1/TP while there are at least TP of them, else one copied "
                "to each GPU), and its time is the roofline's: each operation takes the larger of FLOPs ÷ peak compute "
                "and bytes ÷ full bandwidth, one operation after another. After attention's output projection and "
                "after the MLP's down projection the GPUs add up their partial outputs in an all-reduce: 2 per layer, "
                "each of batch × hidden BF16 activations (2 bytes each); the embedding's all-reduce and the gather of "
                "the logits are left out. No overlap: each all-reduce waits for its matmul, and the next matmul for "
                "it. Formula: the measured small-message floor plus the ring term 2(n−1)/n × message ÷ the link's "
                "bandwidth each way (NVIDIA/nccl-tests). Measured: Vidur's median NCCL all-reduce at that size "
                "(interpolated between sizes), called eagerly, without CUDA graphs; engines' own all-reduce kernels, "
                "NVLS and CUDA graphs make small all-reduces faster, and none of them is in this data. "
                "An H200's NVLink is timed with the H100 DGX's data (the same NVLink and NVSwitch generation); "
                "no B200 was measured, so its floor is the H100 DGX's and it has no measured curve; no ring over "
                "PCIe alone was measured either, so PCIe's floor is that of Vidur's 4-GPU machines whose two NVLink "
                "pairs are joined by a slower link, read here as PCIe. KiB = 1,024 bytes, MiB = 1,048,576 bytes.",
        "link_used": "{link}, {bandwidth} GB/s each way",
        "tp1": "TP 1: one GPU holds the whole model and nothing is all-reduced: the link and the timing change only "
               "the bars of TP 2, 4 and 8 in the figure.",
        "no_measured": "No all-reduce was measured on this link ({link_used}) among this many GPUs (Vidur measured "
                       "no such machine): \"measured\" timing uses the formula here.",
        "past_measured": "This all-reduce is larger than any measured on this link ({link_used}): \"measured\" "
                         "timing uses the formula here.",
        "refused": "This tensor-parallel degree does not split this model: it does not divide the query heads, the "
                   "K/V heads or the MLP width (parallel.shard refuses it), so there is no step to time.",
        "no_weights": "Each GPU's share of the weights ({weights_per_gpu}) is more than one GPU's memory: this cannot "
                      "run, and the times below are as if it fit.",
        "over_batch": "Beside the weights these GPUs hold only {fits}: this batch is timed as if it fit.",
        "baseline_no_weights": "The speed-up divides TP 1's step by this one, and one GPU cannot even hold this "
                               "model's weights: TP 1 is timed as if it fit.",
        "baseline_over_batch": "The speed-up divides TP 1's step by this one, and beside the weights one GPU holds "
                               "only {fits_one}: TP 1 is timed as if it fit.",
        "how.step": "matmuls {matmuls} + attention and the rest {attention} + all-reduces {all_reduce} = {step}",
        "how.matmuls": "{share}: max({flops} ÷ {peak}, {bytes} ÷ {bandwidth}) = {time}",
        "share.weights": "1/{tp} of the weights per GPU",
        "share.weights.one": "all the weights on one GPU",
        "how.attention": "{share}: {terms} = {time}",
        "share.heads": "1/{tp} of the attention heads per GPU",
        "share.heads.one": "every attention head on one GPU",
        "how.all_reduce.formula": "2 × {layers} layers × ({floor} + {factor} × {message} ÷ {bandwidth}) "
                                  "= {count} × {one} = {total}",
        "how.all_reduce.measured": "2 × {layers} layers × {one} (Vidur's median for {message} among {tp} GPUs of "
                                   "{setup}) = {total}",
        "how.all_reduce.none": "TP 1: one GPU, nothing to add up: 0 ms",
        "how.message": "{batch} requests × hidden {hidden} × 2 bytes (BF16) = {bytes} bytes = {binary}",
        "how.speedup": "{one} (TP 1{as_if}) ÷ {this} = {speedup}",
        "as_if": ", as if it fit",
        "how.efficiency": "{speedup} ÷ {tp} GPUs = {efficiency}",
        "how.comm_share": "{all_reduce} ÷ {step} = {share}",
        "how.per_request": "1 token a step ÷ {step} = {rate}",
        "how.per_gpu": "{batch} tokens ÷ {step} ÷ {tp} GPUs = {rate}",
        "how.fits": "⌊({memory} − {weights} of weights per GPU) ÷ {per_request} of KV per request per GPU⌋ = {fits}",
        "how.fits.none": "{weights} of weights per GPU > {memory} of memory: no request fits",
        "none": "—",
        "figure": "Step time at TP 1, 2, 4 and 8",
        "axis.y": "Step time (ms)",
        "trace.matmuls": "matmuls",
        "trace.attention": "attention and the rest",
        "trace.all_reduce": "all-reduces",
        "bar.as_if": " (as if it fit)",
        "bar.refused": "does not split",
        "alt.bar": "TP {tp} {step} (matmuls {matmuls}, attention and the rest {attention}, all-reduces "
                   "{all_reduce}){as_if}",
        "alt.refused": "TP {tp} does not split this model",
        "alt.head": "Step time of {model} on {gpu}, batch {batch}, context {context} (ms)",
    },
}

MODELS = ("llama-2-70b", "qwen3-32b", "llama-2-13b")
DEGREES = ("1", "2", "4", "8")
LINKS = parallel.LINK_KINDS

WIDGET = Widget(
    controls=(
        Select("model", default="llama-2-70b", options=MODELS, names={k: presets.model(k).name for k in MODELS}),
        Select("gpu", default="h100-sxm", options=tuple(presets.hardware_keys()), style="buttons",
               names={k: presets.hardware(k).short_name for k in presets.hardware_keys()}),
        Select("tp", default="8", options=DEGREES, style="buttons", names={d: d for d in DEGREES}),
        Select("link", default="nvlink", options=LINKS, style="buttons"),
        Select("timing", default="formula", options=parallel.TIMINGS, style="buttons"),
        Range("batch", default=64, min=1, max=256, log=True),
        Range("context", default=1_024, min=128, max=32_768, log=True),
    ),
    layout=(
        Controls(),
        Flag("refused"),
        Flag("no_weights"),
        Flag("over_batch"),
        Flag("tp1", tone="note"),
        Flag("no_measured", tone="note", controls=("timing",)),
        Flag("past_measured", tone="note", controls=("timing",)),
        Readouts("step", "matmuls", "attention", Readout("all_reduce", note="link_used"), "message", "comm_share",
                 "speedup", "efficiency", "per_request", "per_gpu", "fits"),
        Flag("baseline_no_weights", tone="note"),
        Flag("baseline_over_batch", tone="note"),
        Figure("figure"),
        Derivations("step", "matmuls", "attention", "all_reduce", "message", "comm_share", "speedup", "efficiency",
                    "per_request", "per_gpu", "fits"),
        Text("note"),
    ),
)

KIB, MIB = 1_024, 1_048_576



def measured_gap(ic: parallel.Interconnect, n: int, message: int) -> str | None:
    """Why "measured" timing cannot be read for this all-reduce ("no_measured", "past_measured"), or None."""
    if n == 1:
        return None
    if ic.curve is None or n not in parallel.measured_gpus(ic.curve):
        return "no_measured"
    if message > parallel.measured_all_reduce(ic.curve, n)[-1][0]:
        return "past_measured"
    return None


def step_at(m, hw, n: int, s: dict, ic: parallel.Interconnect) -> parallel.Step | None:
    """The step at TP n with the state's batch, context and timing (the formula where nothing was measured), or None
    where parallel.shard refuses the split."""
    message = s["batch"] * m.hidden * parallel.ACTIVATION_BYTES
    timing = "formula" if measured_gap(ic, n, message) else s["timing"]
    try:
        return parallel.decode(m, hw, n, s["batch"], s["context"], ic, timing)
    except ValueError:
        return None


def fits_at(m, hw, n: int, context: int) -> int | None:
    try:
        return parallel.max_batch(m, hw, n, context)
    except ValueError:
        return None


def binary(n: float) -> str:
    """Bytes in KiB or MiB, to three significant digits without trailing zeros: 16 KiB, 1 MiB, 1.56 MiB."""
    for unit, scale in (("MiB", MIB), ("KiB", KIB)):
        if n >= scale:
            return f"{_trim(fmt_sig(n / scale))} {unit}"
    return f"{fmt_grouped(n)} B"


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def _us(seconds: float) -> str:
    return f"{fmt_sig(seconds * 1e6)} µs"


def _ratio(x: float) -> str:
    return f"{x:.2f}×"


def render(state) -> dict:
    """The tp-step view for any state (invalid values replaced by defaults)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    m, hw = presets.model(s["model"]), presets.hardware(s["gpu"])
    n, batch, context = int(s["tp"]), s["batch"], s["context"]
    ic = parallel.link_of_kind(hw, s["link"])
    steps = {int(d): step_at(m, hw, int(d), s, ic) for d in DEGREES}
    step, one = steps[n], steps[1]
    fits, fits_one = fits_at(m, hw, n, context), fits_at(m, hw, 1, context)
    message = batch * m.hidden * parallel.ACTIVATION_BYTES
    gap = measured_gap(ic, n, message)
    link_used = t["link_used"].format(link=ic.short_name, bandwidth=fmt_sig(ic.bandwidth_bytes_per_s / 1e9))
    refused = step is None or one is None or fits is None
    flags = {
        "refused": refused,
        "tp1": n == 1,
        "no_measured": gap == "no_measured",
        "past_measured": gap == "past_measured",
        "no_weights": not refused and fits == 0,
        "over_batch": not refused and 0 < fits < batch,
        "baseline_no_weights": not refused and n > 1 and fits_one == 0,
        "baseline_over_batch": not refused and n > 1 and fits_one is not None and 0 < fits_one < batch,
    }
    outputs = {
        "link_used": output(ic.bandwidth_bytes_per_s / 1e9, link_used),
        "message": output(message, binary(message)),
        "fits_one": output(fits_one or 0, t["unit.requests"].format(n=fmt_grouped(fits_one or 0))),
        "weights_per_gpu": output(0, t["none"]),
    }
    derivations = {"message": t["how.message"].format(batch=fmt_grouped(batch), hidden=fmt_grouped(m.hidden),
                                                       bytes=fmt_grouped(message), binary=binary(message))}
    if refused:
        for name in ("step", "matmuls", "attention", "all_reduce", "comm_share", "speedup", "efficiency",
                     "per_request", "per_gpu", "fits"):
            outputs[name] = output(0, t["none"])
    else:
        outputs.update(step_outputs(step, one, n, fits, t))
        derivations.update(step_derivations(m, hw, step, one, n, context, fits, fits_one, ic, message, t))
        weights = parallel.memory_per_gpu(m, n, 0, context)
        outputs["weights_per_gpu"] = output(weights / 1e9, fmt_bytes(weights))
    return view(s, outputs, figures={"figure": figure(m, hw, steps, n, s)}, flags=flags, derivations=derivations)


def step_outputs(step: parallel.Step, one: parallel.Step, n: int, fits: int, t: dict) -> dict:
    speedup = one.time_s / step.time_s
    rate = t["unit.per_s"]
    return {
        "step": output(step.time_s * 1e3, fmt_ms(step.time_s)),
        "matmuls": output(step.weights_time_s * 1e3, fmt_ms(step.weights_time_s)),
        "attention": output(_rest_s(step) * 1e3, fmt_ms(_rest_s(step))),
        "all_reduce": output(step.communication_time_s * 1e3, fmt_ms(step.communication_time_s)),
        "comm_share": output(step.communication_share, fmt_share(step.communication_share)),
        "speedup": output(speedup, _ratio(speedup)),
        "efficiency": output(speedup / n, fmt_pct(speedup / n)),
        "per_request": output(step.tokens_per_s_per_request, rate.format(rate=fmt_sig(step.tokens_per_s_per_request))),
        "per_gpu": output(step.tokens_per_s_per_gpu, rate.format(rate=fmt_sig(step.tokens_per_s_per_gpu))),
        "fits": output(fits, t["unit.requests"].format(n=fmt_grouped(fits))),
    }


def _rest_s(step: parallel.Step) -> float:
    """Attention and every other operation on one GPU: the compute time less the weight matmuls."""
    return step.compute_time_s - step.weights_time_s


def _share(t: dict, what: str, n: int) -> str:
    return t[f"share.{what}.one"] if n == 1 else t[f"share.{what}"].format(tp=n)


def _bound(op, hw) -> str:
    peak, bandwidth = f"{hw.peak_flops_per_s / 1e12:g} TFLOP/s", f"{hw.bandwidth_bytes_per_s / 1e12:g} TB/s"
    return f"max({fmt_flops(op.flops)} ÷ {peak}, {fmt_bytes(op.bytes)} ÷ {bandwidth})"


def step_derivations(m, hw, step: parallel.Step, one: parallel.Step, n: int, context: int, fits: int,
                     fits_one: int, ic: parallel.Interconnect, message: int, t: dict) -> dict:
    ms = fmt_ms
    matmul = step.per_gpu.op("matmuls")
    rest = [op for op in step.per_gpu.ops if op.name != "matmuls"]
    rest_terms = " + ".join(_bound(op, hw) for op in rest) or "0"
    speedup = one.time_s / step.time_s
    per_s = t["unit.per_s"]
    out = {
        "step": t["how.step"].format(matmuls=ms(step.weights_time_s), attention=ms(_rest_s(step)),
                                     all_reduce=ms(step.communication_time_s), step=ms(step.time_s)),
        "matmuls": t["how.matmuls"].format(
            share=_share(t, "weights", n), flops=fmt_flops(matmul.flops),
            peak=f"{hw.peak_flops_per_s / 1e12:g} TFLOP/s", bytes=fmt_bytes(matmul.bytes),
            bandwidth=f"{hw.bandwidth_bytes_per_s / 1e12:g} TB/s", time=ms(step.weights_time_s)),
        "attention": t["how.attention"].format(share=_share(t, "heads", n), terms=rest_terms, time=ms(_rest_s(step))),
        "all_reduce": all_reduce_derivation(m, step, n, ic, message, t),
        "comm_share": t["how.comm_share"].format(all_reduce=ms(step.communication_time_s), step=ms(step.time_s),
                                                 share=fmt_share(step.communication_share)),
        "speedup": t["how.speedup"].format(one=ms(one.time_s),
                                           as_if=t["as_if"] if (fits_one or 0) < step.requests else "",
                                           this=ms(step.time_s), speedup=_ratio(speedup)),
        "efficiency": t["how.efficiency"].format(speedup=_ratio(speedup), tp=n, efficiency=fmt_pct(speedup / n)),
        "per_request": t["how.per_request"].format(step=ms(step.time_s),
                                                   rate=per_s.format(rate=fmt_sig(step.tokens_per_s_per_request))),
        "per_gpu": t["how.per_gpu"].format(batch=fmt_grouped(step.requests), step=ms(step.time_s), tp=n,
                                           rate=per_s.format(rate=fmt_sig(step.tokens_per_s_per_gpu))),
    }
    return {**out, "fits": fits_derivation(m, hw, n, context, fits, t)}


def fits_derivation(m, hw, n: int, context: int, fits: int, t: dict) -> str:
    """parallel.max_batch with its numbers: each GPU's memory less its weight shard, over each request's share."""
    weights = parallel.memory_per_gpu(m, n, 0, context)
    memory = fmt_bytes(hw.memory_bytes)
    if fits == 0:
        return t["how.fits.none"].format(weights=fmt_bytes(weights), memory=memory)
    per_request = parallel.memory_per_gpu(m, n, 1, context) - weights
    return t["how.fits"].format(memory=memory, weights=fmt_bytes(weights), per_request=fmt_bytes(per_request),
                                fits=fmt_grouped(fits))


def all_reduce_derivation(m, step: parallel.Step, n: int, ic: parallel.Interconnect, message: int, t: dict) -> str:
    if n == 1:
        return t["how.all_reduce.none"]
    total = fmt_ms(step.communication_time_s)
    if step.timing == "measured":
        return t["how.all_reduce.measured"].format(layers=m.layers, one=_us(step.all_reduce_s), message=binary(message),
                                                   tp=n, setup=ic.curve, total=total)
    return t["how.all_reduce.formula"].format(
        layers=m.layers, floor=_us(parallel.floor_for(ic, n)), factor=f"2·{n - 1}/{n}", message=binary(message),
        bandwidth=f"{fmt_sig(ic.bandwidth_bytes_per_s / 1e9)} GB/s", count=step.all_reduces,
        one=_us(step.all_reduce_s), total=total)


PARTS = (("matmuls", "weights"), ("attention", "attention"), ("all_reduce", "shared"))  # (part, palette colour)


def _parts_s(step: parallel.Step) -> dict[str, float]:
    return {"matmuls": step.weights_time_s, "attention": _rest_s(step), "all_reduce": step.communication_time_s}


def figure(m, hw, steps: dict[int, parallel.Step | None], chosen: int, s: dict) -> dict:
    """Stacked bars of the step at each degree: matmuls, attention and the rest, all-reduces; the chosen degree
    opaque, the others faded; a degree whose batch does not fit hatched (timed as if it fit)."""
    t = TEXT[s["lang"]]
    degrees = [int(d) for d in DEGREES]
    names = [f"TP {d}" for d in degrees]
    fit = {d: (fits_at(m, hw, d, s["context"]) or 0) >= s["batch"] for d in degrees}
    opacity = [1.0 if d == chosen else 0.45 for d in degrees]
    pattern = {"shape": ["" if fit[d] else "/" for d in degrees], "solidity": 0.25}
    as_if = ["" if fit[d] else t["bar.as_if"] for d in degrees]
    data = []
    for part, colour in PARTS:
        ys = [round(_parts_s(steps[d])[part] * 1e3, 4) if steps[d] else None for d in degrees]
        data.append({
            "type": "bar", "name": t[f"trace.{part}"], "x": names, "y": ys, "customdata": as_if,
            "marker": {"color": palette.colour(colour), "opacity": opacity, "pattern": pattern,
                       "line": {"color": palette.colour("surface"), "width": 1}},
            "hovertemplate": f"{t[f'trace.{part}']}<br>%{{x}}: %{{y:.2f}} ms%{{customdata}}<extra></extra>",
        })
    annotations = [{"x": names[i], "y": round(steps[d].time_s * 1e3, 4) if steps[d] else 0, "yanchor": "bottom",
                    "text": fmt_ms(steps[d].time_s) if steps[d] else t["bar.refused"], "showarrow": False,
                    "font": {"color": palette.colour("ink"), "size": 12}}
                   for i, d in enumerate(degrees)]
    layout = palette.plot_layout({
        "barmode": "stack",
        "xaxis": {"fixedrange": True},
        "yaxis": {"title": {"text": t["axis.y"]}, "rangemode": "tozero", "fixedrange": True},
        "annotations": annotations,
        "margin": {"l": 56, "r": 16, "t": 24, "b": 40},
        "height": 320,
        "legend": palette.legend_above(),
        "uirevision": "tp-step",
    })
    spoken = []
    for d in degrees:
        if steps[d] is None:
            spoken.append(t["alt.refused"].format(tp=d))
            continue
        parts = _parts_s(steps[d])
        spoken.append(t["alt.bar"].format(tp=d, step=fmt_ms(steps[d].time_s), matmuls=fmt_ms(parts["matmuls"]),
                                          attention=fmt_ms(parts["attention"]),
                                          all_reduce=fmt_ms(parts["all_reduce"]), as_if=as_if[degrees.index(d)]))
    head = t["alt.head"].format(model=m.name, gpu=hw.short_name, batch=fmt_grouped(s["batch"]),
                                context=fmt_grouped(s["context"]))
    return {"data": data, "layout": layout, "alt": alt.sentence(s["lang"], head, spoken)}
