"""Expert parallelism over n GPUs: where each MoE layer's experts live, what each GPU reads in a decode step, and the
two all-to-alls per MoE layer that carry the tokens to them (sim/physics/moe.py decode_ep).

Each of the n GPUs serves its own requests (data-parallel attention), all n with the same load; the routed experts
are split E / n to a GPU, everything else whole on every GPU. The link is the GPU's own NVLink through NVSwitch
(parallel.default_interconnect) or PCIe with no NVLink (Gen4 for the A100, Gen5 for the others, as tp_step maps
it); the RTX PRO 6000 has no NVLink, so both choices give its PCIe 5. `gpus` offers every power of two up to the
largest model's routed experts; a degree above the chosen model's is coerced to its routed experts (each GPU holds at
least one). The diagram lights each GPU's expected experts read, rounded, which ones drawn once from a fixed seed.
"""

from __future__ import annotations

import functools
import math
import random
import re
from dataclasses import dataclass

from sim.kit import (
    Controls,
    Derivations,
    Figure,
    Flag,
    Range,
    Readout,
    Readouts,
    Select,
    Svg,
    Text,
    Widget,
    alt,
    output,
    palette,
    view,
)
from sim.page.display import fmt_bytes, fmt_grouped, fmt_ms, fmt_pct, fmt_share, fmt_sig, step_time_derivation
from sim.page.svg import document, element, responsive, text, wrap
from sim.physics import model_size, moe, parallel, presets, roofline

TEXT = {
    "zh": {
        "title": "专家并行：n 张卡分一个 MoE 模型的专家",
        "model": "模型",
        "gpu": "GPU",
        "gpus": "专家并行度 n（几张卡分专家）",
        "link": "卡与卡之间的链路",
        "link=nvlink": "NVLink（经 NVSwitch）",
        "link=pcie": "PCIe（没有 NVLink）",
        "batch": "每张卡上同时 decode 的请求数",
        "context": "每个请求已缓存的 token 数",
        "experts_per_gpu": "每张卡放的专家（每个 MoE 层）",
        "memory": "一张卡占用的显存",
        "fits": "每张卡放得下的请求数（这个上下文长度）",
        "touched": "每张卡每步在每个 MoE 层读到的专家",
        "weights": "每张卡每步读的权重",
        "remote": "一个 token 的隐藏状态要发往的其他卡",
        "message": "一次 all-to-all 里一张卡发出的数据",
        "all_to_all": "一次 all-to-all 的时间 × 每步次数",
        "compute": "计算（每张卡，屋顶线）",
        "communication": "all-to-all（每步合计）",
        "step": "一步的时间",
        "comm_share": "通信占一步的比例",
        "per_gpu": "每张卡的吞吐",
        "total": "n 张卡合计的吞吐",
        "unit.requests": "{n} 个请求",
        "unit.request": "{n} 个请求",
        "unit.per_s": "{rate} token/s",
        "unit.gpus": "{n} 张卡",
        "experts.text": "{routed} 个路由专家",
        "experts.shared": "{routed} 个路由专家 + {shared} 个共享专家",
        "memory.text": "{used}（共 {memory}）",
        "fits.any": "不受 KV 限制（上下文为 0）",
        "fits.none": "0：权重放不下，至少要 {need} 张卡",
        "fits.never": "0：权重放不下，哪个并行度都不行",
        "touched.text": "{touched} / {held} 个",
        "remote.none": "0（只有一张卡）",
        "reached": "其余 {others} 张卡的 {share}",
        "all_to_all.text": "{one} × {count} 次",
        "need.never": "本模型可选的任何卡数",
        "note": "每张卡各服务自己的一批请求，n 张卡负载相同，这里算的是每张卡上的一步 decode（每个请求生成 1 个 "
                "token）。每个 MoE 层的 E 个路由专家平分到 n 张卡上，每张卡 E/n 个（n 要整除 E，vLLM 也这样放）；其余"
                "部分每张卡都放一整份：注意力（数据并行的注意力，vLLM 开专家并行时就这样跑，DeepSeek-V3 的部署也是）、"
                "稠密层、共享专家、embedding 和 LM head。每张卡的时间按屋顶线算：每个操作取「FLOPs ÷ 峰值算力」和"
                "「字节 ÷ 满带宽」里大的那个，操作一个接一个。它的 MoE 层看到 n 张卡全部的 token，本卡专家里被其中任"
                "何一个选中的，都读一遍；路由按均匀算（每个 token 的 k 个专家是随机的一组，token 之间互不相关；训练出"
                "来的路由器并不完全均匀）。每个 MoE 层多两次 all-to-all：dispatch 把每个 token 的隐藏状态（hidden × "
                "2 字节，BF16）发给每一张放着它那 k 个专家之一的其他卡，combine 再把同样多的字节送回来。每次的时间 = "
                "链路的小消息延迟下限（用它 all-reduce 的下限：查到的资料里没有这些链路上 all-to-all 自己的实测）+ "
                "一张卡发出的字节 ÷ 链路单向带宽；和计算不重叠。超过 8 张卡时，任意两张卡之间仍按同一条链路算，"
                "相当于一个机架规模的 NVLink 域；跨机器的网络会更慢。vLLM 在单机上默认的专家并行后端把每个 token 发给"
                "每一张卡；几乎每个 token 都要发往所有其他卡时，这里的字节数和它相同。显存按 memory.py 的口径：设备报"
                "告的全部显存，放本卡那份权重和每个请求的 KV。上面的图在每张卡里点亮期望读到的专家数（四舍五入），"
                "点亮哪几个、以及框出的那个 token，来自一次固定种子的抽样。KiB = 1,024 字节，MiB = 1,048,576 字节。",
        "link_used": "{link}，单向 {bandwidth} GB/s",
        "ep1": "n = 1：一张卡放下全部专家，什么都不用发送；链路只改变图里其他并行度的那几根柱子。",
        "no_nvlink": "RTX PRO 6000 之间没有 NVLink：两个选项都是它的 PCIe 5。",
        "capped": "这个模型每个 MoE 层只有 {max_gpus} 个路由专家，每张卡至少要放一个：并行度取它能取的最大值。",
        "beyond_node": "超过 8 张卡已经不止一台 8 卡机器：这里仍按同一条链路连着每两张卡算（像机架规模的 NVLink "
                       "域），跨机器的网络会更慢。",
        "no_weights": "每张卡分到的权重（{weights_per_gpu}）已经超过一张卡的显存：至少要 {need_gpus}。"
                      "这个配置跑不起来，下面的时间是「假设放得下」算的。",
        "over_batch": "每张卡在权重之外只放得下 {fits}：这一批请求的时间是「假设放得下」算的。",
        "how.experts": "{routed} 个路由专家 ÷ {n} 张卡 = 每张卡 {held} 个{shared}",
        "how.experts.shared": "，另加每张卡都有的 {shared} 个共享专家",
        "how.memory": "权重 {weights}（每张卡都有的部分 {whole} + 路由专家：{held} 个 × {layers} 个 MoE 层 × "
                      "每个 {expert} = {routed}）+ {batch} 个请求 × 每个的 KV {kv} = {used}，一张卡共 {memory}",
        "how.fits": "⌊({memory} − 每张卡的权重 {weights}) ÷ 每个请求的 KV {kv}⌋ = {fits}",
        "how.fits.any": "上下文为 0 时请求不占 KV：只要权重 {weights} 放得下（一张卡 {memory}），请求数不受显存限制",
        "how.fits.none": "每张卡的权重 {weights} > 一张卡的显存 {memory}：一个请求也放不下；"
                         "权重放得下的最小并行度是 {need}",
        "how.touched": "{held} × (1 − (1 − {k}/{routed})^{seen}) = {touched}，{seen} = {n} × {batch} 是 {n} 张卡"
                       "全部的 token",
        "how.touched.one": "{held} × (1 − (1 − {k}/{routed})^{batch}) = {touched}",
        "how.weights": "每张卡都读的部分 {whole} + {touched} 个读到的专家 × {layers} 个 MoE 层 × 每个 {expert} "
                       "= {total}",
        "how.remote": "{others} × (1 − C({avoid}, {k}) ÷ C({routed}, {k})) = {others} × (1 − {miss}) = {remote}",
        "how.remote.none": "只有一张卡：每个 token 的专家都在本卡，0",
        "how.message": "{batch} 个 token × hidden {hidden} × 2 字节（BF16）× {remote} 张卡 = {bytes} 字节 "
                       "= {binary}",
        "how.all_to_all": "{floor}（延迟下限）+ {message} ÷ {bandwidth} = {one}；每个 MoE 层 2 次（dispatch 和 "
                          "combine）× {layers} 层 = {count} 次",
        "how.all_to_all.none": "只有一张卡：没有 all-to-all",
        "how.compute": "本卡的 {held} 个路由专家和其余整份权重，MoE 层看到 {n} × {batch} 个 token：{bound}",
        "how.communication": "{count} × {one} = {total}",
        "how.step": "计算 {compute} + all-to-all {communication} = {step}",
        "how.comm_share": "{communication} ÷ {step} = {share}",
        "how.per_gpu": "batch {batch} ÷ {step} = {rate}",
        "how.total": "每张卡 {per_gpu} × {n} = {rate}",
        "none": "—",
        "diagram": "专家在各张卡上的分布",
        "gpu_label": "GPU {i}",
        "row.one": "一张卡放下每个 MoE 层全部 {routed} 个路由专家{shared}。实心：这一步的 token 读到的，"
                   "个数取期望值四舍五入；浅色：放着但没读。",
        "row.many": "{n} 张卡，每张放每个 MoE 层的 {held} 个路由专家{shared}。实心：{n} 张卡这一步的 token 读到的，"
                    "个数取每张卡的期望值四舍五入；浅色：放着但没读。",
        "row.shared": "，另加 {shared} 个共享专家（绿色，每张卡一份）",
        "alt.read": "这一步每张卡在每个 MoE 层读到自己 {held} 个路由专家里的 {touched} 个，对应 {tokens} 个 token"
                    "（期望值）。",
        "row.token.one": "粗框：一个 token 选的 {k} 个专家，全在这张卡上，什么都不用发送。",
        "row.token": "粗框：GPU 1 上一个 token 选的 {k} 个专家；箭头：它的隐藏状态发往的其他卡，这里 {sent} 张，"
                     "平均每个 token 发往 {remote} 张。",
        "figure": "各专家并行度下一步的时间（每张卡的请求数不变）",
        "axis.x": "专家并行度 n（卡数）",
        "axis.y": "一步的时间（毫秒）",
        "trace.compute": "计算",
        "trace.all_to_all": "all-to-all",
        "bar.as_if": "（假设放得下）",
        "alt.bar": "n = {n}：{step}（计算 {compute}，all-to-all {all_to_all}）{as_if}",
        "alt.head": "{model} 在 {gpu} 上，每张卡 {batch} 个请求、上下文 {context}，一步的时间",
    },
    "en": {
        "title": "Expert parallelism: n GPUs sharing one MoE model's experts",
        "model": "Model",
        "gpu": "GPU",
        "gpus": "Expert-parallel degree n (GPUs sharing the experts)",
        "link": "Link between the GPUs",
        "link=nvlink": "NVLink (through NVSwitch)",
        "link=pcie": "PCIe (no NVLink)",
        "batch": "Requests decoding on each GPU",
        "context": "Cached tokens per request",
        "experts_per_gpu": "Experts on each GPU (per MoE layer)",
        "memory": "Memory one GPU holds",
        "fits": "Requests of this context that fit on each GPU",
        "touched": "Experts each GPU reads per MoE layer",
        "weights": "Weights each GPU reads per step",
        "remote": "Other GPUs a token's hidden state goes to",
        "message": "Bytes one GPU sends in one all-to-all",
        "all_to_all": "One all-to-all × how many a step",
        "compute": "Compute (each GPU, roofline)",
        "communication": "All-to-alls (per step, in all)",
        "step": "Step time",
        "comm_share": "Share of the step spent communicating",
        "per_gpu": "Throughput per GPU",
        "total": "Throughput of all n GPUs",
        "unit.requests": "{n} requests",
        "unit.request": "{n} request",
        "unit.per_s": "{rate} tok/s",
        "unit.gpus": "{n} GPUs",
        "experts.text": "{routed} routed",
        "experts.shared": "{routed} routed + {shared} shared",
        "memory.text": "{used} of {memory}",
        "fits.any": "no KV limit (context 0)",
        "fits.none": "0: the weights need at least {need} GPUs",
        "fits.never": "0: the weights fit at no degree",
        "touched.text": "{touched} of {held}",
        "remote.none": "0 (one GPU)",
        "reached": "{share} of the other {others}",
        "all_to_all.text": "{one} × {count}",
        "need.never": "any degree this model offers",
        "note": "One decode step (each request adding 1 token) on each of n GPUs that serve their own requests, all n "
                "with the same load. Each GPU holds E/n of every MoE layer's E routed experts (n must divide E, as "
                "vLLM places them) and, whole, everything else: attention (data-parallel attention, as vLLM runs "
                "expert parallelism and DeepSeek-V3 is deployed), the dense layers, the shared experts, the embedding "
                "and the LM head. Its time is the roofline's over that share: each operation takes the larger of "
                "FLOPs ÷ peak compute and bytes ÷ full bandwidth, one operation after another. Its MoE layers see "
                "the tokens of all n GPUs and read once each of its experts that any of them chose, under uniform "
                "routing (each token's k experts a random set, tokens independent; a trained router is not quite "
                "uniform). Each MoE layer adds two all-to-alls: a dispatch sends each token's hidden state (hidden × "
                "2 bytes, BF16) to every other GPU that holds one of its k experts, and a combine brings as many "
                "bytes back. Each costs the link's small-message floor (its all-reduce floor: no checked source "
                "measures an all-to-all's own on these links) plus the bytes one GPU sends ÷ the link's bandwidth "
                "each way, with no overlap with compute. Beyond 8 GPUs every pair keeps the same link, as in a "
                "rack-scale NVLink domain; a network between nodes would be slower. vLLM's default expert-parallel "
                "backend on one node sends every token to every GPU; the bytes here equal it where a token reaches "
                "nearly every other GPU. Memory is memory.py's count: all the memory the device reports, holding the "
                "GPU's share of the weights and each request's KV. The diagram lights in each GPU its expected number "
                "of experts read, rounded; which ones, and the token outlined, come from one draw with a fixed seed. "
                "KiB = 1,024 bytes, MiB = 1,048,576 bytes.",
        "link_used": "{link}, {bandwidth} GB/s each way",
        "ep1": "n = 1: one GPU holds every expert and sends nothing: the link changes only the other degrees' bars in "
               "the figure.",
        "no_nvlink": "RTX PRO 6000s have no NVLink between them: both choices are their PCIe 5.",
        "capped": "This model has {max_gpus} routed experts per MoE layer and each GPU holds at least one: the degree "
                  "is the largest it takes.",
        "beyond_node": "More than 8 GPUs is more than one 8-GPU node: every pair is still joined by the same link "
                       "here (as in a rack-scale NVLink domain); a network between nodes would be slower.",
        "no_weights": "Each GPU's share of the weights ({weights_per_gpu}) is more than one GPU's memory: it takes "
                      "at least {need_gpus}. This cannot run, and the times below are as if it fit.",
        "over_batch": "Beside the weights each GPU holds only {fits}: this batch is timed as if it fit.",
        "how.experts": "{routed} routed experts ÷ {n} GPUs = {held} on each GPU{shared}",
        "how.experts.shared": ", plus {shared} shared on every GPU",
        "how.memory": "weights {weights} ({whole} whole on every GPU + routed experts: {held} × {layers} MoE layers "
                      "× {expert} = {routed}) + KV: batch {batch} × {kv} = {used}, of {memory}",
        "how.fits": "⌊({memory} − {weights} of weights per GPU) ÷ {kv} of KV per request⌋ = {fits}",
        "how.fits.any": "At context 0 a request holds no KV: once the {weights} of weights fit in {memory}, memory "
                        "limits no batch",
        "how.fits.none": "{weights} of weights per GPU > {memory} of memory: no request fits; the weights fit from "
                         "{need}",
        "how.touched": "{held} × (1 − (1 − {k}/{routed})^{seen}) = {touched}, {seen} = {n} × {batch} being the "
                       "tokens of all {n} GPUs",
        "how.touched.one": "{held} × (1 − (1 − {k}/{routed})^{batch}) = {touched}",
        "how.weights": "{whole} read whole + {touched} experts read × {layers} MoE layers × {expert} each = {total}",
        "how.remote": "{others} × (1 − C({avoid}, {k}) ÷ C({routed}, {k})) = {others} × (1 − {miss}) = {remote}",
        "how.remote.none": "One GPU: every token's experts are on it: 0",
        "how.message": "batch {batch} × hidden {hidden} × 2 bytes (BF16) × {remote} GPUs = {bytes} bytes = {binary}",
        "how.all_to_all": "{floor} (floor) + {message} ÷ {bandwidth} = {one}; 2 per MoE layer (dispatch and combine) "
                          "× {layers} layers = {count}",
        "how.all_to_all.none": "One GPU: no all-to-all",
        "how.compute": "its {held} routed experts and the rest whole, its MoE layers seeing {n} × {batch} tokens: "
                       "{bound}",
        "how.communication": "{count} × {one} = {total}",
        "how.step": "compute {compute} + all-to-alls {communication} = {step}",
        "how.comm_share": "{communication} ÷ {step} = {share}",
        "how.per_gpu": "batch {batch} ÷ {step} = {rate}",
        "how.total": "{per_gpu} per GPU × {n} = {rate}",
        "none": "—",
        "diagram": "Where the experts live",
        "gpu_label": "GPU {i}",
        "row.one": "One GPU holds all {routed} routed experts of every MoE layer{shared}. Filled: those the step's "
                   "tokens read (the expected count, rounded); pale: held, not read.",
        "row.many": "{n} GPUs, each holding {held} of every MoE layer's routed experts{shared}. Filled: those the "
                    "step's tokens from all {n} GPUs read (each GPU's expected count, rounded); pale: held, not read.",
        "alt.read": "In this step each GPU reads {touched} of its {held} routed experts of each MoE layer, for "
                    "{tokens} tokens (expected).",
        "row.shared": ", plus {shared} shared (green, a copy on every GPU)",
        "row.token.one": "Bold: the {k} experts one token chose, all on this GPU: nothing is sent.",
        "row.token": "Bold: the {k} experts of one token on GPU 1; arrows: the other GPUs its hidden state goes to, "
                     "{sent} here ({remote} for an average token).",
        "figure": "Step time at each expert-parallel degree (the same requests on each GPU)",
        "axis.x": "Expert-parallel degree n (GPUs)",
        "axis.y": "Step time (ms)",
        "trace.compute": "compute",
        "trace.all_to_all": "all-to-alls",
        "bar.as_if": " (as if it fit)",
        "alt.bar": "n = {n} {step} (compute {compute}, all-to-alls {all_to_all}){as_if}",
        "alt.head": "Step time of {model} on {gpu}, batch {batch} per GPU, context {context}",
    },
}

MODELS = tuple(presets.moe_model_keys())
GPUS = (*presets.hardware_keys(), "rtx-pro-6000")
# Every power of two up to the most routed experts a model offers; each model takes those up to its own.
DEGREES = tuple(str(1 << i) for i in range(max(presets.model(k).experts.routed for k in MODELS).bit_length()))
LINKS = parallel.LINK_KINDS
NODE_GPUS = 8  # the GPUs of one NVSwitch node (presets/interconnects.json)

WIDGET = Widget(
    controls=(
        Select("model", default="deepseek-v3", options=MODELS, names={k: presets.model(k).name for k in MODELS}),
        Select("gpu", default="h200-sxm", options=GPUS, style="buttons",
               names={k: presets.hardware(k).short_name for k in GPUS}),
        Select("gpus", default="8", options=DEGREES, style="buttons", names={d: d for d in DEGREES}),
        Select("link", default="nvlink", options=LINKS, style="buttons"),
        Range("batch", default=32, min=1, max=256, log=True),
        Range("context", default=4_096, min=0, max=32_768),
    ),
    layout=(
        Controls(),
        Flag("no_weights"),
        Flag("over_batch"),
        Flag("capped", tone="note"),
        Flag("ep1", tone="note"),
        Flag("no_nvlink", tone="note", controls=("link",)),
        Flag("beyond_node", tone="note"),
        Svg("layout", label="diagram"),
        Readouts("experts_per_gpu", "memory", "fits", "touched", "weights", Readout("remote", note="reached"),
                 "message", Readout("all_to_all", note="link_used"), "compute", "communication", "step", "comm_share",
                 "per_gpu", "total"),
        Figure("figure"),
        Derivations("experts_per_gpu", "memory", "fits", "touched", "weights", "remote", "message", "all_to_all",
                    "compute", "communication", "step", "comm_share", "per_gpu", "total"),
        Text("note"),
    ),
)

KIB, MIB = 1_024, 1_048_576


def degrees_for(m: presets.Model) -> tuple[int, ...]:
    """The degrees the widget offers for m: the powers of two that divide its routed experts."""
    return tuple(int(d) for d in DEGREES if int(d) <= m.experts.routed)



def binary(n: float) -> str:
    """Bytes in KiB or MiB, to three significant digits without trailing zeros: 16 KiB, 1 MiB, 2.03 MiB."""
    for unit, scale in (("MiB", MIB), ("KiB", KIB)):
        if n >= scale:
            text_ = fmt_sig(n / scale)
            return f"{text_.rstrip('0').rstrip('.') if '.' in text_ else text_} {unit}"
    return f"{fmt_grouped(n)} B"


def _us(seconds: float) -> str:
    return f"{fmt_sig(seconds * 1e6)} µs"


@functools.cache
def _weights_bytes(model: str, n: int) -> int:
    """The weights one GPU holds at degree n (kept: no slider moves them)."""
    return moe.memory_per_gpu(moe.ep_shard(presets.model(model), n), 0, 0)


def gpus_needed(m: presets.Model, hw: presets.Hardware) -> int | None:
    """The smallest degree offered whose share of the weights fits in one GPU's memory, or None."""
    return next((n for n in degrees_for(m) if _weights_bytes(m.key, n) < hw.memory_bytes), None)


def render(state) -> dict:
    """The ep-layout view for any state (invalid values replaced by defaults, a degree above the model's routed
    experts by the largest it takes)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    m, hw = presets.model(s["model"]), presets.hardware(s["gpu"])
    e = m.experts
    asked = int(s["gpus"])
    n = min(asked, e.routed)
    s["gpus"] = str(n)
    batch, context = s["batch"], s["context"]
    ic = parallel.link_of_kind(hw, s["link"])
    steps = {d: moe.decode_ep(m, hw, d, batch, context, ic) for d in degrees_for(m)}
    fits_at = {d: moe.max_batch(m, hw, d, context) for d in steps}
    step, fits = steps[n], fits_at[n]
    shard = moe.ep_shard(m, n)
    weights = _weights_bytes(m.key, n)
    need = gpus_needed(m, hw)
    no_weights = weights >= hw.memory_bytes
    flags = {
        "no_weights": no_weights,
        "over_batch": not no_weights and fits < batch,
        "capped": asked > n,
        "ep1": n == 1,
        "no_nvlink": parallel.default_interconnect(hw).key.startswith("pcie"),
        "beyond_node": n > NODE_GPUS,
    }
    remote = moe.remote_gpus(m, n)
    link_used = t["link_used"].format(link=ic.short_name, bandwidth=fmt_sig(ic.bandwidth_bytes_per_s / 1e9))
    outputs = {
        **readouts(m, hw, n, step, context, fits, weights, need, remote, t),
        "link_used": output(ic.bandwidth_bytes_per_s / 1e9, link_used),
        "weights_per_gpu": output(weights / 1e9, fmt_bytes(weights)),
        "need_gpus": output(need or 0, t["unit.gpus"].format(n=need) if need else t["need.never"]),
        "max_gpus": output(e.routed, fmt_grouped(e.routed)),
    }
    derivations = explain(m, hw, shard, n, step, fits, weights, need, remote, ic, s, t)
    figures = {"figure": figure(m, hw, steps, fits_at, n, s)}
    return view(s, outputs, figures=figures, svg={"layout": layout_diagram(m, n, step, s)}, flags=flags,
                derivations=derivations)


def readouts(m, hw, n: int, step: moe.Step, context: int, fits: int, weights: int, need: int | None,
             remote: float, t: dict) -> dict:
    e = m.experts
    held = e.routed // n
    used = moe.memory_per_gpu(moe.ep_shard(m, n), step.requests, context)
    experts = (t["experts.shared"].format(routed=held, shared=e.shared) if e.shared
               else t["experts.text"].format(routed=held))
    if weights >= hw.memory_bytes:
        fits_text = t["fits.none"].format(need=need) if need else t["fits.never"]
    elif fits >= roofline.MAX_BATCH:
        fits_text = t["fits.any"]
    else:
        fits_text = t["unit.request" if fits == 1 else "unit.requests"].format(n=fmt_grouped(fits))
    read = step.per_gpu.op("matmuls").bytes
    rate = t["unit.per_s"]
    return {
        "experts_per_gpu": output(held, experts),
        "memory": output(used / 1e9, t["memory.text"].format(used=fmt_bytes(used), memory=fmt_bytes(hw.memory_bytes))),
        "fits": output(fits, fits_text),
        "touched": output(step.touched, t["touched.text"].format(touched=fmt_sig(step.touched, 4), held=held)),
        "weights": output(read / 1e9, fmt_bytes(read)),
        "remote": output(remote, fmt_sig(remote, 4) if n > 1 else t["remote.none"]),
        "reached": output(remote / (n - 1) if n > 1 else 0,
                          t["reached"].format(share=fmt_pct(remote / (n - 1), 1), others=n - 1) if n > 1
                          else t["none"]),
        "message": output(step.message_bytes, binary(step.message_bytes)),
        "all_to_all": output(step.all_to_all_s * 1e6,
                             t["all_to_all.text"].format(one=_us(step.all_to_all_s), count=step.all_to_alls) if n > 1
                             else t["none"]),
        "compute": output(step.compute_time_s * 1e3, fmt_ms(step.compute_time_s)),
        "communication": output(step.communication_time_s * 1e3, fmt_ms(step.communication_time_s)),
        "step": output(step.time_s * 1e3, fmt_ms(step.time_s)),
        "comm_share": output(step.communication_share, fmt_share(step.communication_share)),
        "per_gpu": output(step.tokens_per_s_per_gpu, rate.format(rate=fmt_sig(step.tokens_per_s_per_gpu))),
        "total": output(step.tokens_per_s, rate.format(rate=fmt_sig(step.tokens_per_s))),
    }


def explain(m, hw, shard, n: int, step: moe.Step, fits: int, weights: int, need: int | None, remote: float,
            ic: parallel.Interconnect, s: dict, t: dict) -> dict:
    """Each readout's derivation, with its numbers."""
    e, batch, context = m.experts, s["batch"], s["context"]
    held, bpp = e.routed // n, m.weight_bytes_per_param
    expert = model_size.expert_params(m) * bpp  # one routed expert of one MoE layer
    routed = held * m.moe_layers * expert
    used = moe.memory_per_gpu(shard, batch, context)
    kv = moe.memory_per_gpu(shard, 1, context) - weights
    memory = fmt_bytes(hw.memory_bytes)
    read = step.per_gpu.op("matmuls").bytes
    whole_read = model_size.matmul_weight_bytes(shard) - routed
    ms, rate = fmt_ms, t["unit.per_s"]
    out = {
        "experts_per_gpu": t["how.experts"].format(
            routed=e.routed, n=n, held=held,
            shared=t["how.experts.shared"].format(shared=e.shared) if e.shared else ""),
        "memory": t["how.memory"].format(weights=fmt_bytes(weights), whole=fmt_bytes(weights - routed), held=held,
                                         layers=m.moe_layers, expert=fmt_bytes(expert), routed=fmt_bytes(routed),
                                         batch=fmt_grouped(batch), kv=fmt_bytes(kv), used=fmt_bytes(used),
                                         memory=memory),
        "touched": t["how.touched" if n > 1 else "how.touched.one"].format(
            held=held, k=e.per_token, routed=e.routed, n=n, batch=fmt_grouped(batch), seen=fmt_grouped(n * batch),
            touched=fmt_sig(step.touched, 4)),
        "weights": t["how.weights"].format(whole=fmt_bytes(whole_read), touched=fmt_sig(step.touched, 4),
                                           layers=m.moe_layers, expert=fmt_bytes(expert), total=fmt_bytes(read)),
        "compute": t["how.compute"].format(held=held, n=n, batch=fmt_grouped(batch),
                                           bound=step_time_derivation(step.per_gpu, hw)),
        "communication": t["how.communication"].format(count=step.all_to_alls, one=_us(step.all_to_all_s),
                                                       total=ms(step.communication_time_s)),
        "step": t["how.step"].format(compute=ms(step.compute_time_s), communication=ms(step.communication_time_s),
                                     step=ms(step.time_s)),
        "comm_share": t["how.comm_share"].format(communication=ms(step.communication_time_s), step=ms(step.time_s),
                                                 share=fmt_share(step.communication_share)),
        "per_gpu": t["how.per_gpu"].format(batch=fmt_grouped(batch), step=ms(step.time_s),
                                           rate=rate.format(rate=fmt_sig(step.tokens_per_s_per_gpu))),
        "total": t["how.total"].format(n=n, per_gpu=rate.format(rate=fmt_sig(step.tokens_per_s_per_gpu)),
                                       rate=rate.format(rate=fmt_sig(step.tokens_per_s))),
    }
    if weights >= hw.memory_bytes:
        out["fits"] = t["how.fits.none"].format(weights=fmt_bytes(weights), memory=memory,
                                                need=t["unit.gpus"].format(n=need) if need else t["need.never"])
    elif kv == 0:
        out["fits"] = t["how.fits.any"].format(weights=fmt_bytes(weights), memory=memory)
    else:
        out["fits"] = t["how.fits"].format(memory=memory, weights=fmt_bytes(weights), kv=fmt_bytes(kv),
                                           fits=fmt_grouped(fits))
    if n == 1:
        out.update(remote=t["how.remote.none"], all_to_all=t["how.all_to_all.none"])
    else:
        out["remote"] = t["how.remote"].format(others=n - 1, avoid=e.routed - held, k=e.per_token, routed=e.routed,
                                               miss=fmt_sig(1 - remote / (n - 1), 4), remote=fmt_sig(remote, 4))
        out["all_to_all"] = t["how.all_to_all"].format(
            floor=_us(parallel.floor_for(ic, n)), message=binary(step.message_bytes),
            bandwidth=f"{fmt_sig(ic.bandwidth_bytes_per_s / 1e9)} GB/s", one=_us(step.all_to_all_s),
            layers=m.moe_layers, count=step.all_to_alls)
    out["message"] = t["how.message"].format(batch=fmt_grouped(batch), hidden=fmt_grouped(m.hidden),
                                             remote=fmt_sig(remote, 4), bytes=fmt_grouped(step.message_bytes),
                                             binary=binary(step.message_bytes))
    return out


# --- the step at every degree --------------------------------------------------------------------------------------

PARTS = (("compute", "compute"), ("all_to_all", "shared"))  # (part, palette colour)


def _parts_s(step: moe.Step) -> dict[str, float]:
    return {"compute": step.compute_time_s, "all_to_all": step.communication_time_s}


def figure(m, hw, steps: dict[int, moe.Step], fits_at: dict[int, int], chosen: int, s: dict) -> dict:
    """Stacked bars of the step at each degree the model takes: compute, all-to-alls; the chosen degree opaque, the
    others faded; a degree whose batch does not fit hatched (timed as if it fit). The layout is the same for every
    state of a language (only the data moves), so that a move redraws no axis."""
    t = TEXT[s["lang"]]
    degrees = list(steps)
    names = [str(d) for d in degrees]
    fit = [fits_at[d] >= s["batch"] for d in degrees]
    as_if = ["" if f else t["bar.as_if"] for f in fit]
    marker = {"opacity": [1.0 if d == chosen else 0.45 for d in degrees],
              "pattern": {"shape": ["" if f else "/" for f in fit], "solidity": 0.25},
              "line": {"color": palette.colour("surface"), "width": 1}}
    data = []
    for part, colour in PARTS:
        data.append({
            "type": "bar", "name": t[f"trace.{part}"], "x": names,
            "y": [round(_parts_s(steps[d])[part] * 1e3, 4) for d in degrees], "customdata": as_if,
            "marker": {"color": palette.colour(colour), **marker},
            "hovertemplate": f"{t[f'trace.{part}']}<br>n = %{{x}}: %{{y:.2f}} ms%{{customdata}}<extra></extra>",
        })
    data.append({"type": "scatter", "mode": "text", "x": names, "y": [round(steps[d].time_s * 1e3, 4) for d in degrees],
                 "text": [fmt_sig(steps[d].time_s * 1e3) for d in degrees], "textposition": "top center",
                 "textfont": {"color": palette.colour("ink"), "size": 11}, "showlegend": False, "hoverinfo": "skip",
                 "cliponaxis": False})
    layout = palette.plot_layout({
        "barmode": "stack",
        "xaxis": {"title": {"text": t["axis.x"]}, "type": "category", "fixedrange": True},
        "yaxis": {"title": {"text": t["axis.y"]}, "rangemode": "tozero", "fixedrange": True},
        "margin": {"l": 56, "r": 16, "t": 24, "b": 48},
        "height": 320,
        "legend": palette.legend_above(),
        "uirevision": "ep-layout",
    })
    spoken = [t["alt.bar"].format(n=d, step=fmt_ms(steps[d].time_s), compute=fmt_ms(steps[d].compute_time_s),
                                  all_to_all=fmt_ms(steps[d].communication_time_s), as_if=as_if[i])
              for i, d in enumerate(degrees)]
    head = t["alt.head"].format(model=m.name, gpu=hw.short_name, batch=fmt_grouped(s["batch"]),
                                context=fmt_grouped(s["context"]))
    return {"data": data, "layout": layout, "alt": alt.sentence(s["lang"], head, spoken)}


# --- the layout diagram --------------------------------------------------------------------------------------------

WIDE, NARROW = 560, 300
MARGIN, LABEL_PX, MUTED_PX = 8, 13, 11
CELL_MAX, CELL_MIN = 16, 6
MAX_HEIGHT = {WIDE: 380, NARROW: 440}  # of the grid of GPUs; past it the columns narrow


@functools.cache
def expert_order(routed: int) -> tuple[int, ...]:
    """A fixed shuffle of the experts (seeded by a string, random() alone, as routing.route does): its first k are
    the outlined token's experts, and each GPU lights its experts in this order."""
    rng = random.Random(f"ep-layout {routed}")
    order = list(range(routed))
    for i in range(routed - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        order[i], order[j] = order[j], order[i]
    return tuple(order)


def lit_experts(m, n: int, touched: float) -> frozenset[int]:
    """The experts drawn read: each GPU's expected count, rounded, in expert_order (the outlined token's first)."""
    e = m.experts
    held = e.routed // n
    order = expert_order(e.routed)
    want = round(touched)
    counts = [0] * n
    lit = set()
    for i, x in enumerate(order):
        g = x // held
        if i < e.per_token or counts[g] < want:
            lit.add(x)
            counts[g] += 1
    return frozenset(lit)


def layout_diagram(m, n: int, step: moe.Step, s: dict) -> str:
    """The diagram, wide and narrow: each drawing's frame (captions, boxes, arrows) cached by model and degree, its
    experts filled by what this step reads."""
    lit = lit_experts(m, n, step.touched)
    t = TEXT[s["lang"]]
    held = m.experts.routed // n
    read = t["alt.read"].format(touched=fmt_sig(step.touched, 4), held=held, tokens=fmt_grouped(n * s["batch"]))
    drawings = []
    for width in (WIDE, NARROW):
        f = frame(m.key, n, s["lang"], width)
        read_d = "".join([d for x, d in enumerate(f.cells) if x in lit])
        pale_d = "".join([d for x, d in enumerate(f.cells) if x not in lit])
        cells = "".join(element("path", {"d": d, "fill": palette.colour(colour)})
                        for d, colour in ((read_d, "weight"), (pale_d, "weight-fill")) if d)
        drawings.append(document(width, f.height, f"{f.label} {read}", f.before, f.group_open, cells, f.after,
                                 css_class="svg-figure"))
    return responsive(*drawings)


def _cells_shape(held: int) -> tuple[int, int]:
    """Columns and rows of a GPU's routed experts: a power of two of them (held is one), as square as it goes."""
    bits = held.bit_length() - 1
    columns = 1 << ((bits + 1) // 2)
    return columns, held // columns


def _grid(n: int, held: int, shared: int, span: float, width: int) -> tuple[int, float, float, float, bool, float]:
    """How the n GPUs sit: (columns, gap, box width, cell, labelled, padding), the columns a power of two chosen for
    the largest cells that keep the grid within MAX_HEIGHT (else the lowest grid with cells of CELL_MIN or more)."""
    columns_in_box, rows_in_box = _cells_shape(held)
    best = None
    c = 1
    while c <= n:
        gap = 6 if c <= 8 else 3 if c <= 16 else 2
        pad = 3 if c <= 16 else 1.5
        box = (span - (c - 1) * gap) / c
        cell = min(CELL_MAX, (box - 2 * pad) / max(columns_in_box, shared, 1))
        labelled = box >= 48
        box_h = (MUTED_PX + 4 if labelled else 0) + 2 * pad + rows_in_box * cell + (cell + 2 if shared else 0)
        height = (n // c) * box_h + (n // c - 1) * gap
        fits_height = height <= MAX_HEIGHT[width]
        key = (cell >= CELL_MIN, fits_height, cell if fits_height else -height, -height)
        if best is None or key > best[0]:
            best = (key, (c, gap, box, cell, labelled, pad))
        c *= 2
    return best[1]


_WIDE_CHAR = re.compile(r"[^\u0000-\u2e7f]")  # svg.text_width: wider than U+2E7F is square


def _label_width(line: str) -> float:
    """svg.text_width at the label's size, counted in C: wrap measures every candidate line of every caption."""
    return LABEL_PX * (0.6 * len(line) + 0.4 * len(_WIDE_CHAR.findall(line)))


@dataclass(frozen=True)
class Frame:
    """What a drawing keeps for every state of a model and degree: the markup before and after the routed experts,
    each expert's square as path data (by expert id: the step decides which path, read or pale, it joins), the
    drawing's height and its sentences."""

    before: str
    group_open: str
    cells: tuple[str, ...]
    after: str
    height: float
    label: str


@functools.cache
def frame(model: str, n: int, lang: str, width: int) -> Frame:
    """Captions, then the n GPUs in a grid, each its routed experts (filled by the step: read, or pale: held, not
    read; bold: the outlined token's), its shared experts, and arrows from GPU 1 to each other GPU holding one of
    the token's experts."""
    t = TEXT[lang]
    m = presets.model(model)
    e = m.experts
    held = e.routed // n
    token = expert_order(e.routed)[:e.per_token]
    span = width - 2 * MARGIN
    parts, y = [], 4.0
    shared = t["row.shared"].format(shared=e.shared) if e.shared else ""
    if n == 1:
        sentences = (t["row.one"].format(routed=e.routed, shared=shared), t["row.token.one"].format(k=e.per_token))
    else:
        sentences = (t["row.many"].format(n=n, held=held, shared=shared),
                     t["row.token"].format(k=e.per_token, sent=len({x // held for x in token} - {0}),
                                           remote=fmt_sig(moe.remote_gpus(m, n), 3)))
    for sentence in sentences:
        for line in wrap(sentence, span, _label_width):
            y += LABEL_PX + 3
            parts.append(text(line, {"x": MARGIN, "y": y, "class": "svg-label"}))
        y += 4
    y += 4
    columns, gap, box, cell, labelled, pad = _grid(n, held, e.shared, span, width)
    cols_in_box, rows_in_box = _cells_shape(held)
    head = MUTED_PX + 4 if labelled else 0
    box_h = head + 2 * pad + rows_in_box * cell + (cell + 2 if e.shared else 0)
    left = MARGIN + (span - columns * box - (columns - 1) * gap) / 2
    surface, outline, copy = palette.colour("surface"), palette.colour("outline"), palette.colour("copied")
    centres, boxes, labels, cells, copies, bold = [], [], [], [], [], []
    # Squares as path data, one path per kind: hundreds of them a drawing, and a move sends and draws each again.

    def square(x: float, y: float, w: float, h: float) -> str:
        return f"M{x:.1f} {y:.1f}h{w:.1f}v{h:.1f}h{-w:.1f}z"

    for g in range(n):
        bx, by = left + (g % columns) * (box + gap), y + (g // columns) * (box_h + gap)
        centres.append((bx + box / 2, by + box_h / 2))
        boxes.append(square(bx, by, box, box_h))
        if labelled:
            labels.append(text(t["gpu_label"].format(i=g + 1), {"x": bx + pad + 1, "y": by + MUTED_PX + 1,
                                                                 "class": "svg-muted"}))
        cx0, cy0 = bx + (box - cols_in_box * cell) / 2, by + head + pad
        for i in range(held):
            cells.append(square(cx0 + (i % cols_in_box) * cell, cy0 + (i // cols_in_box) * cell, cell, cell))
            if g * held + i in token:
                bold.append(cells[-1])
        sx0 = bx + (box - e.shared * cell) / 2
        copies.extend(square(sx0 + j * cell, cy0 + rows_in_box * cell + 2, cell, cell) for j in range(e.shared))
    half = (box / 2, box_h / 2)
    arrows = [_arrow(centres[0], centres[g], half, palette.colour("shared"))
              for g in sorted({x // held for x in token} - {0})]
    stroke = f'<g stroke="{surface}" stroke-width="{1 if cell >= 8 else 0.5}">'
    parts.append(element("path", {"d": "".join(boxes), "fill": surface, "stroke": outline, "stroke-width": 1}))
    parts.extend(labels)
    after = [element("path", {"d": "".join(copies), "fill": copy}) if copies else "", "</g>",
             element("path", {"d": "".join(bold), "fill": "none", "stroke": palette.colour("ink"),
                              "stroke-width": 2}), *arrows]
    return Frame("".join(parts), stroke, tuple(cells), "".join(after),
                 y + (n // columns) * (box_h + gap) - gap + MARGIN, f"{t['diagram']}: {' '.join(sentences)}")


def _arrow(start: tuple[float, float], end: tuple[float, float], half: tuple[float, float], colour: str) -> str:
    """A line from one box's edge to another's, its head a small triangle at the second box's edge."""
    dx, dy = end[0] - start[0], end[1] - start[1]
    # The share of the way between the centres that lies inside a box (|dx| and |dy| scaled to its half sides).
    inside = min(half[0] / abs(dx) if dx else math.inf, half[1] / abs(dy) if dy else math.inf)
    x0, y0 = start[0] + dx * inside, start[1] + dy * inside
    x1, y1 = end[0] - dx * inside, end[1] - dy * inside
    length = math.hypot(x1 - x0, y1 - y0) or 1.0
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    head, wing = 7.0, 3.5
    bx, by = x1 - ux * head, y1 - uy * head
    points = f"{x1:.2f},{y1:.2f} {bx - uy * wing:.2f},{by + ux * wing:.2f} {bx + uy * wing:.2f},{by - ux * wing:.2f}"
    return element("g", {"stroke": colour, "fill": colour},
                   element("line", {"x1": x0, "y1": y0, "x2": bx, "y2": by, "stroke-width": 2}),
                   element("polygon", {"points": points, "stroke-width": 0.5}))
