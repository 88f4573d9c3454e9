"""The numeric questions lessons ask in "predict, then check" boxes: the simulator computes each answer,
how it is derived, and the wrong answers students commonly give, so that a lesson's questions are graded
by the same maths as its widgets.

A lesson asks the question in its own words and names it by key (`::: widget predict` with
`question: KEY`); the student's number is graded against `Answer.value` with a relative tolerance. Each
question's derivation is its TEXT entry (same key) in the page's language, filled with the numbers its
compute function gives.

A question also lists its common mistakes: each computes its wrong value from the same numbers (never a
typed figure) and has its words in TEXT under "QUESTION.mistake.KEY", a sentence that names the mistake
and gives the right reasoning. A guess within tolerance of the answer is right; otherwise one within the
same relative tolerance of a mistake's value names that mistake (the nearest, if several; two mistakes closer
together than that tolerance each get a narrower window of their own, so neither swallows the other); otherwise
it is too high or too low. Tolerances are tighter than the gap to every mistake, so a mistake is never right.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from sim import (
    attention,
    cache,
    interference,
    kv_layout,
    latency,
    measured,
    model_size,
    presets,
    quantization,
    request,
    roofline,
    sampling,
    scheduler,
    serving,
    slo,
    speculative,
    traces,
)

TEXT = {
    "zh": {
        "decode-intensity": "2N ÷ 2N 字节：{gflop:,.2f} GFLOP ÷ {gb:,.2f} GB ≈ {intensity:.2f} FLOP/B",
        "decode-intensity.mistake.per_parameter":
            "约 {mistake:.0f} 是拿 FLOPs 除以参数个数（2N ÷ N）得到的。decode 每步从显存读的是字节：BF16 下每个参数占 "
            "{param_bytes:g} 字节，{gflop:,.2f} GFLOP ÷ {gb:,.2f} GB ≈ {intensity:.2f} FLOP/B。",
        "decode-intensity.mistake.no_multiply_add":
            "约 {mistake:.1f} 是把一次乘加算成了 1 次浮点运算。一次乘加是 {flops_per_mac} 次（一乘一加），"
            "每个参数每个 token {flops_per_mac} FLOP：{gflop:,.2f} GFLOP ÷ {gb:,.2f} GB ≈ {intensity:.2f} FLOP/B。",
        "ridge-gap-a100": "A100 拐点 {peak:g} TFLOP/s ÷ {bandwidth:g} TB/s = {ridge:.1f} FLOP/B；"
                          "÷ decode 强度 {intensity:.2f} = {gap:.0f}×",
        "ridge-gap-a100.mistake.per_parameter":
            "约 {mistake:.0f}× 是拿拐点除以了约 {pp_intensity:.0f} 的强度，那是按参数、而不是按字节算的。"
            "decode 每字节约 {intensity:.2f} FLOP，差距是 {ridge:.1f} ÷ {intensity:.2f} ≈ {gap:.0f}×。",
        "ceiling-7b-a100": "带宽 ÷ 每步读的权重 = {bandwidth:g} TB/s ÷ {gb:.2f} GB = {value:.0f} tok/s",
        "ceiling-7b-a100.mistake.per_parameter":
            "{mistake:.0f} tok/s 是拿带宽除以参数个数，把参数当成了字节。BF16 每个参数占 {param_bytes:g} 字节，每步读 "
            "{gb:.2f} GB：{bandwidth:g} TB/s ÷ {gb:.2f} GB ≈ {value:.0f} tok/s。",
        "ceiling-7b-a100.mistake.compute":
            "{mistake:,.0f} tok/s 是按算力算的（峰值 {peak:g} TFLOP/s ÷ 每个 token {gflop:.2f} GFLOP）。"
            "batch 1 的 decode 带宽受限，上限由读权重决定：{bandwidth:g} TB/s ÷ {gb:.2f} GB ≈ {value:.0f} tok/s。",
        "h100-vs-a100-decode": "decode 看带宽：{h100:g} ÷ {a100:g} = {value:.2f}×（算力是 {compute:.2f}×，用不上）",
        "h100-vs-a100-decode.mistake.compute":
            "{mistake:.2f}× 是算力之比。decode 带宽受限，多出来的算力用不上，要看带宽之比：{h100:g} ÷ {a100:g} ≈ "
            "{value:.2f}×。",
        "kv-7b-2048-32": "2 × {layers} 层 × {kv_heads} 个 KV 头 × {head_dim} × {element} 字节 = {per_token:,} B/token；"
                         "× {tokens:,} token × {requests} 个请求 = {gb:.1f} GB",
        "kv-7b-2048-32.mistake.no_k_and_v":
            "{mistake:.1f} GB 少乘了开头那个 2：每层既存 K 也存 V。{per_token:,} B/token × {tokens:,} × {requests} = "
            "{gb:.1f} GB。",
        "kv-7b-2048-32.mistake.fp32":
            "{mistake:.1f} GB 是按每个元素 {fp32_element} 字节（FP32）算的。KV cache 用 BF16，每个元素 {element} 字节，"
            "一共 {gb:.1f} GB。",
        "kv-7b-2048-32.mistake.gib":
            "{mistake:.1f} 是以 GiB（2³⁰ 字节）为单位的数。本课程的 GB 是 10⁹ 字节：{bytes:,} B = {gb:.1f} GB。",
        "measured-knee-a100":
            "实测 1 个 token {t1:.3f} ms；64 个 {t64:.3f} ms；128 个 {t128:.3f} ms；256 个 {t256:.3f} ms。"
            "按数据手册的速率，拐点在 {bound:.0f} 个 token，接近拐点强度 {peak:g} TFLOP/s ÷ {bandwidth:g} TB/s = "
            "{ridge:.0f} FLOP/B（token 数远小于矩阵边长时，强度约等于 token 数）。实测达到带宽的 {bw:.0%}"
            "（1 个 token 时）和峰值算力的 {fl:.0%}（4,096 个时）；按这两个速率，拐点在 {value:.0f} 个 token",
        "measured-knee-a100.mistake.every_token":
            "{mistake:.0f} 个 token 是以为每多一个 token 时间就跟着涨。"
            "可 1 个和 64 个 token 的实测时间一样（{t1:.3f} ms 对 {t64:.3f} ms）："
            "拐点以下，时间是把 {mb:.0f} MB 权重读一遍，多出来的算术藏在读数据的时间里。"
            "拐点在 {value:.0f} 个 token 左右。",
        "measured-knee-a100.mistake.one_byte":
            "约 {mistake:.0f} 是按每个元素 1 字节算的强度（每个 token 每字节 2 FLOP）。"
            "FP16 每个元素 2 字节，乘加的 2 和字节数的 2 正好约掉，强度约等于 token 数，"
            "拐点约等于 {peak:g} ÷ {bandwidth:g} ≈ {ridge:.0f}；按实测比例是 {value:.0f} 个 token。",
        "measured-knee-a100.mistake.fp32":
            "约 {mistake:.0f} 是按每个元素 4 字节（FP32）算的强度。Vidur 测的是 FP16，每个元素 2 字节，"
            "强度约等于 token 数，拐点约 {ridge:.0f}；按实测比例是 {value:.0f} 个 token。",
        "e2e-latency": "TTFT + TPOT × 输出长度 = {ttft:g} s + {tpot:g} s × {tokens} = {value:.1f} s",
        "e2e-latency.mistake.no_ttft":
            "{mistake:g} s 只算了 TPOT × 输出长度，漏了 TTFT：第一个 token 出来之前还要等 {ttft:g} s。"
            "{ttft:g} s + {tpot:g} s × {tokens} = {value:.1f} s。",
        "tpot-share": "{tpot:g} ms × {tokens} ÷ ({ttft:g} ms + {tpot:g} ms × {tokens}) = {decode:g} s ÷ {total:g} s "
                      "= {share:.1f}%",
        "tpot-share.mistake.no_ttft":
            "{mistake:.0f}% 把 TTFT 漏掉了：总时间里还有 {ttft:g} ms 的 TTFT，TPOT × 输出长度占 {decode:g} s ÷ "
            "{total:g} s = {share:.1f}%。",
        "tpot-share.mistake.ttft_share":
            "{mistake:.2f}% 是 TTFT 占的份额（{ttft:g} ms ÷ {total:g} s）。问的是 TPOT × 输出长度：{decode:g} s ÷ "
            "{total:g} s = {share:.1f}%。",
        "decode-mfu-7b-a100": "batch {batch}：每秒 {attained:.2f} TFLOP（= FLOPs ÷ 一步耗时）÷ 峰值 {peak:g} TFLOP/s "
                              "= {value:.2f}%",
        "decode-mfu-7b-a100.mistake.per_parameter":
            "{mistake:.2f}% 是把强度当成了约 {pp_intensity:.0f}（按参数、而不是按字节算）。decode 每字节约 "
            "{intensity:.2f} FLOP，带宽受限，每秒只做 {attained:.2f} TFLOP，÷ 峰值 {peak:g} TFLOP/s = {value:.2f}%。",
        "decode-mfu-7b-a100.mistake.full":
            "{mistake:.0f}% 是以为 decode 用满了算力。它带宽受限：每秒只做 {attained:.2f} TFLOP，是峰值 "
            "{peak:g} TFLOP/s 的 {value:.2f}%。",
        "decode-speed-anchor-h100":
            "batch {batch} 每步读 {gb:.2f} GB（其中权重 {weights_gb:.2f} GB），各个操作都带宽受限：{gb:.2f} GB ÷ "
            "{bandwidth:g} TB/s = {ms:.2f} ms/token ≈ {value:.0f} tok/s",
        "decode-speed-anchor-h100.mistake.compute":
            "{mistake:,.0f} tok/s 只算了 FLOPs（峰值 {peak:g} TFLOP/s ÷ 每个 token {gflop:.2f} GFLOP）。"
            "batch {batch} 的 decode 带宽受限，要看每步读多少字节：{bandwidth:g} TB/s ÷ {gb:.2f} GB ≈ "
            "{value:.0f} tok/s。",
        "decode-speed-anchor-h100.mistake.per_parameter":
            "{mistake:.0f} tok/s 是拿带宽除以参数个数，把参数当成了字节。BF16 每个参数占 {param_bytes:g} 字节，"
            "权重就有 {weights_gb:.2f} GB，每步共读 {gb:.2f} GB：{bandwidth:g} TB/s ÷ {gb:.2f} GB ≈ "
            "{value:.0f} tok/s。",
        "kv-reserve-max-anchor-h100":
            "⌊({memory:.2f} GB − 整个 checkpoint {weights:.2f} GB) ÷ ({tokens:,} × {kv:,} B = {kv_mb:.1f} MB 的 KV + "
            "{state_mb:.1f} MB 的递归状态)⌋ = ⌊{free:.2f} GB ÷ {per_mb:.1f} MB⌋ = {value:.0f} 个请求",
        "kv-reserve-max-anchor-h100.mistake.no_state":
            "{mistake:.0f} 个是只给 KV 留了地方：锚点的 GDN 层每个请求还有一份 {state_mb:.1f} MB 的递归状态，"
            "不随长度变，比预留的 {kv_mb:.1f} MB KV 还大。⌊{free:.2f} GB ÷ {per_mb:.1f} MB⌋ = {value:.0f} 个。",
        "kv-reserve-max-anchor-h100.mistake.matmul_weights":
            "{mistake:.0f} 个是只扣了参与矩阵乘的 {matmul:.2f} GB 权重。显存里常驻的是整个 checkpoint {weights:.2f} GB"
            "（含 embedding 表、视觉塔和 MTP 头）：⌊{free:.2f} GB ÷ {per_mb:.1f} MB⌋ = {value:.0f} 个。",
        "static-held-short-request":
            "静态批要等最长的那个写完：第 {long} 个 token 那一步在 {end:.3f} s 结束，短请求这时才返回；"
            "{end:.3f} s ÷ {short} 个 token = {value:.0f} ms/token",
        "static-held-short-request.mistake.returned_when_done":
            "{mistake:.1f} ms 是它写完就返回时的数：{done:.3f} s ÷ {short} 个 token。那是连续批处理。静态批里写完的请求"
            "不能先走，要陪着另一个写完第 {long} 个 token：{end:.3f} s ÷ {short} = {value:.0f} ms/token。",
        "paged-empty-slots-b16":
            "只有最后一块可能没写满；它里面写了 1 到 {block} 个 token 的机会差不多，空槽平均约 ({block} − 1) ÷ 2。"
            "{requests:,} 个请求每一步平均下来：{value:.1f} 个空槽",
        "paged-empty-slots-b16.mistake.no_waste":
            "分页也会浪费一点：块是整块分的，最后一块通常没写满。平均空着约 ({block} − 1) ÷ 2 = {value:.1f} 个槽。",
        "paged-empty-slots-b16.mistake.whole_block":
            "{mistake:.0f} 是一整块，那是上限而且到不了：最后一块至少写了 1 个 token。写了几个的机会差不多，"
            "平均空着约 ({block} − 1) ÷ 2 = {value:.1f} 个槽。",
        "paged-empty-slots-b16.mistake.bound":
            "{mistake:.0f} 是最坏的情况（最后一块只写了 1 个 token）。问的是平均：写了 1 到 {block} 个的机会差不多，"
            "平均空着约 ({block} − 1) ÷ 2 = {value:.1f} 个槽。",
        "swap-bytes-anchor-2048":
            "{tokens:,} 个 token × {kv:,} B = {kv_mb:.1f} MB 的 KV（{full} 层全注意力）+ {state_mb:.1f} MB 的 GDN "
            "状态（FP32）= {value:.1f} MB",
        "swap-bytes-anchor-2048.mistake.no_state":
            "{mistake:.1f} MB 只搬了 KV。锚点的 {linear} 层 GDN 每个序列还有 {state_mb:.1f} MB 的递归状态，被换出的序列"
            "回来时要接着用它：{kv_mb:.1f} MB + {state_mb:.1f} MB = {value:.1f} MB。",
        "swap-bytes-anchor-2048.mistake.all_layers":
            "{mistake:.1f} MB 是当成 {layers} 层都存 KV。锚点只有 {full} 层全注意力存 KV，每个 token {kv:,} B；"
            "其余 {linear} 层只有固定大小的状态：{kv_mb:.1f} MB + {state_mb:.1f} MB = {value:.1f} MB。",
        "swap-bytes-anchor-2048.mistake.round_trip":
            "{mistake:.1f} MB 是拷出去再拷回来，算了两趟。问的是换出时要拷走多少，只算出去这一趟："
            "{kv_mb:.1f} MB 的 KV + {state_mb:.1f} MB 的状态 = {value:.1f} MB。",
        "stall-2048-batch32":
            "单独一步 decode {decode:.2f} ms；{prompt:,} token 的提示整个塞进同一步：{prompt:,} + {batch} 个 token "
            "的矩阵乘 {matmuls:.2f} ms（算力受限）+ 提示的注意力 {prompt_attention:.2f} ms + decode 请求的注意力 "
            "{decode_attention:.2f} ms + 递归状态 {state:.2f} ms = {value:.2f} ms",
        "stall-2048-batch32.mistake.decode_unchanged":
            "{mistake:.2f} ms 是没有新请求加入时的一步 decode。一步要等它的活全干完才结束，整个 {prompt:,} token 的 "
            "提示和 {batch} 个 decode 请求的 token 在同一步里算，每个请求的下一个 token 都得等提示的矩阵乘（"
            "{matmuls:.2f} ms，算力受限）：这一步要 {value:.2f} ms。",
        "stall-2048-batch32.mistake.prefill_plus_decode":
            "{mistake:.2f} ms 是把单独的 prefill（{alone:.2f} ms）和一整步 decode（{decode:.2f} ms）加在一起。同一步里"
            "权重只读一次，{tokens:,} 个 token 一起过矩阵乘：prefill 本来就算力受限，{batch} 个 decode 请求只添上自己那"
            "点 FLOPs、注意力和状态，不会再读一遍权重（{weights:.2f} ms）：{value:.2f} ms。",
        "chunk-256-stall":
            "切成 {chunks} 块，每块 {chunk} 个 token；批里有 {batch} 个 decode 请求时，不越过拐点的最大分块是 {free}，"
            "每步的矩阵乘仍是读一遍权重的时间 {weights:.2f} ms。最长的一步是前面已算完 {before:,} 个 token 的那一块（它"
            "要注意前面所有的 token）：{weights:.2f} ms + 这一块的注意力 {chunk_attention:.2f} ms + decode 请求的注意力"
            " {decode_attention:.2f} ms + 状态 {state:.2f} ms = {value:.2f} ms",
        "chunk-256-stall.mistake.proportional":
            "{mistake:.2f} ms 是在一步 decode（{decode:.2f} ms）上按块数平摊加了一份 prefill（{alone:.2f} ms ÷ "
            "{chunks} 块）。可 prefill 的时间几乎都花在对着权重的计算上，而 {chunk} 个 token 的块加上 {batch} 个 "
            "decode 请求仍在拐点以下（不超过 {free} 个 token 的块都不越过拐点）：这一步还是带宽受限，读一遍权重的 "
            "{weights:.2f} ms 就盖住了块的 FLOPs，多出来的只有它的注意力和状态：{value:.2f} ms。",
        "chunk-256-stall.mistake.no_change":
            "{mistake:.2f} ms 是整个提示在一步里算完的时间。切成 {chunk} 个 token 的块后，每步只在 {batch} 个 "
            "decode 请求旁边算 {chunk} 个提示 token，比不越过拐点的最大分块 {free} 还小，一步大约是读一遍权重（"
            "{weights:.2f} ms）加上 decode 请求的注意力和状态：最长的一步 {value:.2f} ms。",
        "chunk-256-ttft":
            "整个提示一步算完要 {whole:.2f} ms；切成 {chunks} 块，每块 {chunk} 个 token，每一步都要重读一遍权重（"
            "{weights:.2f} ms），各步从 {first:.2f} ms 到 {longest:.2f} ms 不等，合起来 {value:.2f} ms",
        "chunk-256-ttft.mistake.free_for_prompt":
            "{mistake:.2f} ms 是整个提示一步算完的时间，好像分块 prefill 消除了干扰、谁也不用付代价。"
            "切块之后，新请求要等完全部 {chunks} 步，每一步都重读一遍权"
            "重（{weights:.2f} ms），还要顺带算 {batch} 个 decode 请求：多出 {overhead:.2f} ms，一共 {value:.2f} ms。",
        "kv-transfer-13b-25gbps":
            "2 × {layers} 层 × {kv_heads} 个 KV 头 × {head_dim} × {element} 字节 = {per_token:,} B/token；× {tokens} 个"
            " token = {mb:.1f} MB ÷（{gbit:g} Gbit/s ÷ {bits} = {gbyte:g} GB/s）= {value:.1f} ms",
        "kv-transfer-13b-25gbps.mistake.gbit_as_gbyte":
            "{mistake:.1f} ms 是把 {gbit:g} Gbit/s 当成了 {gbit:g} GB/s。每个字节 {bits} 位，这条链路每秒只传 "
            "{gbyte:g} GB：{mb:.1f} MB ÷ {gbyte:g} GB/s = {value:.1f} ms。",
        "kv-transfer-13b-25gbps.mistake.k_only":
            "{mistake:.1f} ms 只传了 K。每层既存 K 也存 V，两样加起来每个 token {per_token:,} B：{mb:.1f} MB ÷ "
            "{gbyte:g} GB/s = {value:.1f} ms。",
        "tpot-first-token":
            "TPOT 只算第一个 token 之后的间隔：第一个 token 在 {first:.2f} ms 时出来，之后 {later} 个 token 各隔一步 "
            "decode，({done:.2f} − {first:.2f}) ms ÷ {later} = {value:.2f} ms",
        "tpot-first-token.mistake.counts_first_token":
            "{mistake:.2f} ms 是从到达算起、把 {tokens} 个 token 平均：{done:.2f} ms ÷ {tokens}。"
            "那是上一课的归一化延迟，把等第一个 token 的 {first:.2f} ms 也摊了进去。"
            "DistServe 的 TPOT 不算第一个 token，它归 TTFT："
            "({done:.2f} − {first:.2f}) ms ÷ {later} = {value:.2f} ms。",
        "split-throughput-chat":
            "1 张 prefill 加 1 张 decode，所有请求在 t = 0 排好队时每秒送走的请求：{value:.1f}（1 张混跑的卡是 "
            "{colocated:.2f}）",
        "split-throughput-chat.mistake.doubles":
            "{mistake:.1f} 是 1 张混跑的卡（{colocated:.2f}）乘 2，以为拆成两张卡吞吐就翻倍、甚至更多。"
            "vLLM 的文档说得很直白：P/D 分离不提高吞吐。聊天的提示短，那张 prefill 卡大半时间闲着；"
            "所有请求的 decode 都压在一张卡上，"
            "它的批大了一倍，每一步也慢了；混跑时一步里的提示还能和 decode 共用一遍读权重，分开就没有了。两张卡合起来"
            "每秒只有 {value:.1f} 个。",
        "verify-5-tokens-h100":
            "batch {batch}，γ = {gamma}：每个请求 {tokens} 个 token 一步过权重，远低于拐点 {critical} 个 token，矩阵"
            "乘仍是读一遍权重的时间 {matmuls:.2f} ms；+ 对 {context:,} 个已缓存 token 的注意力 {attention:.2f} ms + "
            "递归状态读一次、写 {tokens} 份 {state:.2f} ms = {value:.2f} ms（一步 decode 是 {decode:.2f} ms）",
        "verify-5-tokens-h100.mistake.five_steps":
            "{mistake:.2f} ms 是 {tokens} 步 decode（{tokens} × {decode:.2f} ms），好像目标要一个一个地检查。它在一步"
            "里同时检查 {tokens} 个 token：它们共用一遍读权重（{matmuls:.2f} ms），在拐点 "
            "{critical} 以下，多出来的 FLOPs 被读权重的时间盖住，只添了一点注意力和状态：{value:.2f} ms，和一步 "
            "decode 差不多。",
        "tokens-per-call-08-4":
            "目标自己的 1 个 token（拒绝处的修正或全部保留后的奖励）+ 第 k 个猜测只有前面全被保留才算，概率 α^k：1 + "
            "{terms} = (1 − {alpha:g}^{power}) ÷ (1 − {alpha:g}) = {value:.2f}",
        "tokens-per-call-08-4.mistake.gamma_times_alpha":
            "{mistake:.2f} 是 γ × α = {gamma} × {alpha:g}，把每个猜测当成各自独立地以 α 被保留。可第一次拒绝之后的猜"
            "测全被扔掉，第 k 个只有前面都被保留才算：平均保留 {terms} = {kept:.2f} 个；每次调用目标还自己出 1 个 "
            "token（修正或奖励）：1 + {kept:.2f} = {value:.2f}。",
        "tokens-per-call-08-4.mistake.all_kept":
            "{mistake:.0f} 是 γ + 1，每个猜测都被保留的最好情况。每个猜测只以 α = {alpha:g} 被保留，第一次拒绝就结束"
            "这次调用：(1 − {alpha:g}^{power}) ÷ (1 − {alpha:g}) = {value:.2f}。",
        "drafted-share-08-4":
            "每次调用保留的草稿 token：E − 1 = {expected:.2f} − 1 = {kept:.2f}（目标自己的那个不是草稿猜的）；÷ 猜的 "
            "{gamma} 个 = {value:.1f}%",
        "drafted-share-08-4.mistake.alpha_is_share":
            "{mistake:.0f}% 是 α，一个猜测在被检查时保留下来的概率。可第一次拒绝之后的猜测根本不检查、直接扔掉：第 k "
            "个留下来的概率是 α^k，平均 {gamma} 个里留下 {kept:.2f} 个，{value:.1f}%。",
        "exact-output-mat":
            "草稿以 q = {q_mat:.0f}% 猜「垫子」，每次以 p ÷ q = {p_mat:.0f} ÷ {q_mat:.0f} 被保留：{q_mat:.0f}% × "
            "{p_mat:.0f} ÷ {q_mat:.0f} = {p_mat:.0f}%；被拒的猜测从 max(0, p − q) 里重抽，那里「垫子」占 "
            "{residual_mat:.0f}%：输出里「垫子」占 {value:.1f}%，正是 p",
        "exact-output-mat.mistake.follows_draft":
            "{mistake:.0f}% 是草稿猜「垫子」的频率 q，好像输出跟着草稿走。这条规则改变的是哪些猜测被保留，不改变输出"
            "的分布：「垫子」只以 {p_mat:.0f} ÷ {q_mat:.0f} 被保留，被拒的从 max(0, p − q) 里重抽，那里「垫子」占 "
            "{residual_mat:.0f}%：输出里「垫子」占 {value:.1f}%，正是 p。",
        "speedup-batch96-h200":
            "batch {batch} × (γ + 1) = {verify_tokens} 个 token 过权重，超过 {gpu} 的拐点 {critical}：验证一步 "
            "{verify:.2f} ms，而 decode 一步 {decode:.2f} ms；{expected:.2f} × {decode:.2f} ÷ ({gamma} × {draft:.2f} "
            "+ {verify:.2f}) = {value:.2f}×",
        "speedup-batch96-h200.mistake.always_helps":
            "{mistake:.2f}× 是 batch {batch1} 时的加速比：那时每步只有 {tokens} 个 token，远在拐点以下，验证一步（"
            "{verify1:.2f} ms）和 decode 一步（{decode1:.2f} ms）差不多。batch {batch} 时 {verify_tokens} 个 token 超"
            "过拐点 {critical}，矩阵乘变成算力受限，验证一步要 {verify:.2f} ms，约 {steps:.1f} 步 decode，每次调用多"
            "出的 token 补不回来：{value:.2f}×，比不投机还慢。",
        "int4-speedup-anchor-h100":
            "一步读的权重：BF16 {bf16_gb:.2f} GB，INT4 {int4_gb:.2f} GB（LM head 的 {head_gb:.2f} GB 留在 BF16，"
            "每 128 个权重还带一个 scale 和零点）；KV 和状态不变：{bf16_ms:.2f} ms ÷ {int4_ms:.2f} ms = {value:.2f}×",
        "int4-speedup-anchor-h100.mistake.four_times":
            "{mistake:.0f}× 是 16 bit ÷ 4 bit，好像这一步读的每个字节都少了四分之三。可 LM head（{head_gb:.2f} GB）"
            "留在 BF16，每组 128 个权重还要带 scale 和零点，KV 和递归状态也一个字节没少：一步从 {bf16_gb:.2f} GB "
            "变成 {int4_gb:.2f} GB，{value:.2f}×。",
        "int4-bits-g128":
            "4 bit 的权重 + 每组一个 16 bit 的 FP16 scale 和一个 4 bit 零点，摊到 {group} 个权重上："
            "4 + (16 + 4) ÷ {group} = {value:.3f} bit",
        "int4-bits-g128.mistake.no_scales":
            "{mistake:.0f} 只算了权重本身。每组 {group} 个权重还要存一个 FP16 scale 和一个 4 bit 零点，"
            "读权重时它们也要读：4 + (16 + 4) ÷ {group} = {value:.3f} bit。",
        "int4-bits-g128.mistake.scale_only":
            "{mistake:.3f} 算了 scale，漏了零点。非对称的 INT4（GPTQ、AWQ 的做法）每组还要一个 4 bit 零点："
            "4 + (16 + 4) ÷ {group} = {value:.3f} bit。",
        "int4-speedup-b128-h100":
            "batch {batch} 已过 INT4 的拐点 {ridge}，还没到 BF16 的 {bf16_ridge}：INT4 的矩阵乘受算力限制，"
            "权重先还原成 BF16，按 BF16 峰值乘；BF16 仍受读权重限制："
            "{bf16_ms:.1f} ms ÷ {int4_ms:.1f} ms = {value:.2f}×",
        "int4-speedup-b128-h100.mistake.memory_bound":
            "{mistake:.2f}× 是 batch 1 的加速比，那时两种格式都受读权重限制。batch {batch} 过了 INT4 的拐点 {ridge}："
            "INT4 的时间由计算决定，而 W4A16 还原成 BF16 再乘，省下的只剩 BF16 多读的那些字节："
            "{value:.2f}×。",
        "int4-speedup-b128-h100.mistake.four_times":
            "{mistake:.0f}× 是 16 bit ÷ 4 bit，只有读字节决定时间才可能接近。batch {batch} 过了 INT4 的拐点 {ridge}，"
            "INT4 的时间由 BF16 的计算决定：{value:.2f}×。",
        "fp8-kv-unfused-llama":
            "反量化没融合进注意力，注意力读的是 BF16 副本：变的只是容量，放得下的请求从 {bf16_fit} 个变成 "
            "{fp8_fit} 个；一步读的字节和 BF16 KV 一样：{bf16_ms:.2f} ms ÷ {unfused_ms:.2f} ms = {value:.2f}×",
        "fp8-kv-unfused-llama.mistake.fused":
            "{mistake:.2f}× 是反量化融合进注意力内核时的加速比：那时注意力直接读 FP8，KV 的字节减半。"
            "没融合时它读的是还原后的 BF16 副本，这一步一点不快：{value:.2f}×（vLLM 文档说 FP8 KV "
            "当时「没有延迟上的改进」，主要是多放请求）。",
        "fp8-kv-unfused-llama.mistake.halves":
            "{mistake:.0f}× 假设这一步的时间随 KV 字节减半。即便融合，权重的 {weights_gb:.2f} GB 也没变，只能到 "
            "{fused:.2f}×；没融合时注意力读的是 BF16 副本，{value:.2f}×。",
        "gptq-opt125m-3bit":
            "GPTQ 表 3（WikiText2 困惑度）：OPT-125M 从 {fp16:.2f}（FP16）涨到 {value:.2f}（3 bit），"
            "高了 {growth:.0%}；同样 3 bit，OPT-175B 只从 {big_fp16:.2f} 到 {big_3bit:.2f}",
        "gptq-opt125m-3bit.mistake.uniform":
            "{mistake:.2f} 是把 175B 的损失（{big_fp16:.2f} → {big_3bit:.2f}，涨 {big_growth:.0%}）照搬到 125M。"
            "GPTQ 发现模型越大越经得起量化（§5），小模型的损失大得多：它测得 {value:.2f}。",
        "kv-per-token-qwen3-32b":
            "2（K 和 V）× {layers} 层 × {kv_heads} 个 K/V 头 × {head_dim} × {element} 字节 = {value:.1f} KB",
        "kv-per-token-qwen3-32b.mistake.per_query_head":
            "{mistake:.0f} KB 是按 {q_heads} 个查询头数的，好像每个查询头都有自己的 K 和 V。GQA 里 {group} 个查询头共用"
            "一个 K/V 头，缓存里只有 {kv_heads} 个：2 × {layers} × {kv_heads} × {head_dim} × {element} 字节 = "
            "{value:.1f} KB。",
        "kv-per-token-qwen3-32b.mistake.no_k_and_v":
            "{mistake:.1f} KB 漏了开头的 2：每层既存 K 也存 V。2 × {layers} × {kv_heads} × {head_dim} × {element} "
            "字节 = {value:.1f} KB。",
        "mla-bytes-deepseek-v3":
            "({latent} + {rope}) 个元素 × {layers} 层 × {element} 字节（BF16）= {value:.1f} KB",
        "mla-bytes-deepseek-v3.mistake.elements_as_bytes":
            "{mistake:.1f} KB 把 {per_layer} 个元素当成了 {per_layer} 字节。每个元素按 BF16 存，占 {element} 字节："
            "{per_layer} × {layers} × {element} = {value:.1f} KB。",
        "mla-bytes-deepseek-v3.mistake.mha_same_heads":
            "{mistake:,.0f} KB 是同样 {q_heads} 个头用 MHA 时的 KV：每层 2 × {q_heads} × {head_dim} 个元素。"
            "MLA 只缓存一个"
            " {latent} 维的潜向量和一个 {rope} 维的 RoPE 键，所有头共用：{value:.1f} KB。",
        "hybrid-fit-anchor-32k":
            "一个请求：{context:,} 个 token × {kv_per_token:,} 字节（{kv_layers} 个全注意力层的 KV）= {kv_gb:.2f} GB，"
            "加上递归状态 {state_mb:.0f} MB；{memory_gb:.0f} GB ÷ {request_gb:.2f} GB = {value:.0f} 个",
        "hybrid-fit-anchor-32k.mistake.no_kv":
            "{mistake:.0f} 个只算了递归状态，好像混合模型没有 KV。它的 {kv_layers} 个全注意力层照样每个 token 存 "
            "{kv_per_token:,} 字节的 KV，{context:,} 个 token 就是 {kv_gb:.2f} GB：{value:.0f} 个。",
        "hybrid-fit-anchor-32k.mistake.all_attention":
            "{mistake:.0f} 个是所有 {layers} 层都存 KV 的结果。锚点只有每 {every} 层一层全注意力，"
            "其余层存固定大小的状态：{value:.0f} 个。",
        "break-even-anchor":
            "递归状态 {state:,} 字节 ÷ 每个 token 的 KV {kv_per_token:,} 字节 = {value:,.0f} 个 token",
        "break-even-anchor.mistake.bf16_state":
            "{mistake:,.0f} 是把状态按 BF16（每个元素 2 字节）算的。锚点的递归状态按 FP32 存，每个元素 4 字节："
            "{state:,} ÷ {kv_per_token:,} = {value:,.0f} 个 token。",
        "entropy-uniform-anchor":
            "{vocab:,} 个 token 等概率，每个 p = 1/V：H = −Σ p log₂ p = log₂ V = log₂ {vocab:,} = {value:.2f} 比特",
        "entropy-uniform-anchor.mistake.nats":
            "{mistake:.2f} 是用自然对数算的，单位是奈特：ln {vocab:,} = {mistake:.2f}。比特要以 2 为底："
            "log₂ {vocab:,} = {value:.2f} 比特。",
        "entropy-uniform-anchor.mistake.log10":
            "{mistake:.2f} 是以 10 为底的对数。比特要以 2 为底：log₂ {vocab:,} = {value:.2f} 比特。",
        "temperature-half-example":
            "温度除在 logit 上，logit = ln p + 常数，所以除以 t = {t:g} 等于每个概率取 {power:g} 次方再归一化："
            "{top:g}^{power:g} ÷ Σ p^{power:g} = {top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%",
        "temperature-half-example.mistake.on_probabilities":
            "{mistake:.0f}% 是把概率除以 t 再归一化：每个概率除以同一个数，归一化以后原样不动。温度要除在 logit 上，"
            "相当于概率取 {power:g} 次方：{top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%。",
        "temperature-half-example.mistake.no_renormalise":
            "{mistake:.2f}% 是 {top:g}^{power:g}，少了归一化：取完次方，各个概率加起来只剩 {sum_pow:.4f}，还要除以它："
            "{top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%。",
        "temperature-half-example.mistake.multiplied":
            "{mistake:.1f}% 是把 logit 乘以 t，等于温度 {inverse:g}，分布反倒更平了。温度 {t:g} 是除以 t，"
            "概率取 {power:g} 次方：{top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%。",
        "top-p-09-example":
            "从最可能的往下加，直到累计达到 p = {p:g}：前 {before_n} 个是 {before:.2f}，还不够；"
            "{terms} = {total:.2f} ≥ {p:g}，共 {value} 个",
        "top-p-09-example.mistake.below_p":
            "{mistake:.0f} 个是加到「和还低于 p」就停了：前 {before_n} 个合计 {before:.2f}，没到 {p:g}。"
            "top-p 要的是累计达到 p 的最小集合，还得加上下一个：{total:.2f} ≥ {p:g}，共 {value} 个。",
        "min-p-02-example":
            "阈值 = min-p × 最高概率 = {base:g} × {top:.2f} = {threshold:.2f}；"
            "不低于它的是 {kept_terms}，共 {value} 个",
        "min-p-02-example.mistake.absolute":
            "{mistake:.0f} 个是把 min-p 当成了绝对阈值（概率 ≥ {base:g}）。min-p 的阈值随最高的那个 token 变："
            "{base:g} × {top:.2f} = {threshold:.2f}，不低于它的共 {value} 个。",
        "top-p-sort-b128-h100":
            "top-p 全排序每个 logit 读写 {per_logit} 字节（温度 {temperature} + softmax {softmax} + "
            "排序 {sort} + 扫描 {scan}）：{batch} × {vocab:,} × {per_logit} B = {gb:.2f} GB ÷ {bandwidth:g} TB/s = "
            "{value:.2f} ms",
        "top-p-sort-b128-h100.mistake.one_read":
            "{mistake:.3f} ms 只算了把 logits 读一遍（{batch} × {vocab:,} × {logit} B），那是贪心的账。"
            "top-p 全排序还要 softmax，再把「概率 + token id」排 {passes} 遍，每个 logit 一共读写 {per_logit} 字节："
            "{value:.2f} ms。",
        "top-p-sort-b128-h100.mistake.one_row":
            "{mistake:.4f} ms 只是一个请求的那一行。批里 {batch} 个请求各有一行 logits，每行都要排序："
            "{batch} × {vocab:,} × {per_logit} B ÷ {bandwidth:g} TB/s = {value:.2f} ms。",
    },
    "en": {
        "decode-intensity": "2N FLOP ÷ 2N bytes: {gflop:,.2f} GFLOP ÷ {gb:,.2f} GB ≈ {intensity:.2f} FLOP/B",
        "decode-intensity.mistake.per_parameter":
            "About {mistake:.0f} divides the FLOPs by the number of parameters (2N ÷ N). What decode reads from memory "
            "is bytes: in BF16 each parameter takes {param_bytes:g} bytes, so {gflop:,.2f} GFLOP ÷ {gb:,.2f} GB ≈ "
            "{intensity:.2f} FLOP/B.",
        "decode-intensity.mistake.no_multiply_add":
            "About {mistake:.1f} counts a multiply-add as 1 FLOP. A multiply-add is {flops_per_mac} (a multiply and an "
            "add), so each parameter costs {flops_per_mac} FLOPs per token: {gflop:,.2f} GFLOP ÷ {gb:,.2f} GB ≈ "
            "{intensity:.2f} FLOP/B.",
        "ridge-gap-a100": "A100 ridge point {peak:g} TFLOP/s ÷ {bandwidth:g} TB/s = {ridge:.1f} FLOP/B; "
                          "÷ decode intensity {intensity:.2f} = {gap:.0f}×",
        "ridge-gap-a100.mistake.per_parameter":
            "About {mistake:.0f}× divides the ridge point by an intensity of about {pp_intensity:.0f}, which counts "
            "per parameter, not per byte. Decode does about {intensity:.2f} FLOP per byte, so the gap is {ridge:.1f} ÷ "
            "{intensity:.2f} ≈ {gap:.0f}×.",
        "ceiling-7b-a100": "bandwidth ÷ weights read per step = {bandwidth:g} TB/s ÷ {gb:.2f} GB = {value:.0f} tok/s",
        "ceiling-7b-a100.mistake.per_parameter":
            "{mistake:.0f} tok/s divides the bandwidth by the number of parameters, as if each were a byte. In BF16 "
            "each parameter takes {param_bytes:g} bytes, so a step reads {gb:.2f} GB: {bandwidth:g} TB/s ÷ {gb:.2f} GB "
            "≈ {value:.0f} tok/s.",
        "ceiling-7b-a100.mistake.compute":
            "{mistake:,.0f} tok/s counts compute (peak {peak:g} TFLOP/s ÷ {gflop:.2f} GFLOP per token). Decode at "
            "batch 1 is memory-bound, so reading the weights sets the ceiling: {bandwidth:g} TB/s ÷ {gb:.2f} GB ≈ "
            "{value:.0f} tok/s.",
        "h100-vs-a100-decode": "decode follows bandwidth: {h100:g} ÷ {a100:g} = {value:.2f}× "
                               "(compute is {compute:.2f}×, which decode cannot use)",
        "h100-vs-a100-decode.mistake.compute":
            "{mistake:.2f}× is the ratio of compute. Decode is memory-bound and cannot use the extra compute, so what "
            "counts is the ratio of bandwidth: {h100:g} ÷ {a100:g} ≈ {value:.2f}×.",
        "kv-7b-2048-32": "2 × {layers} layers × {kv_heads} KV heads × {head_dim} × {element} bytes = "
                         "{per_token:,} B/token; × {tokens:,} tokens × {requests} requests = {gb:.1f} GB",
        "kv-7b-2048-32.mistake.no_k_and_v":
            "{mistake:.1f} GB leaves out the leading 2: every layer keeps both K and V. {per_token:,} B/token × "
            "{tokens:,} × {requests} = {gb:.1f} GB.",
        "kv-7b-2048-32.mistake.fp32":
            "{mistake:.1f} GB takes {fp32_element} bytes per element (FP32). The KV cache is kept in BF16, "
            "{element} bytes per element, {gb:.1f} GB in all.",
        "kv-7b-2048-32.mistake.gib":
            "{mistake:.1f} is the figure in GiB (2³⁰ bytes). This course's GB is 10⁹ bytes: {bytes:,} B = {gb:.1f} GB.",
        "measured-knee-a100":
            "Measured at 1 token: {t1:.3f} ms; at 64: {t64:.3f} ms; at 128: {t128:.3f} ms; at 256: {t256:.3f} ms. "
            "At the datasheet's rates the knee is at {bound:.0f} tokens, near the ridge {peak:g} TFLOP/s ÷ "
            "{bandwidth:g} TB/s = {ridge:.0f} FLOP/B (with far fewer tokens than the matrix's edges, the intensity "
            "is about the token count). The matmul reaches {bw:.0%} of the bandwidth at 1 token and {fl:.0%} of the "
            "peak at 4,096 tokens; at those rates the knee is at {value:.0f} tokens",
        "measured-knee-a100.mistake.every_token":
            "{mistake:.0f} token is the guess that every extra token costs time. Yet 1 and 64 tokens take the same "
            "measured time ({t1:.3f} ms and {t64:.3f} ms): below the knee the time is one read of the {mb:.0f} MB "
            "of weights, and the extra arithmetic hides under it. The knee is near {value:.0f} tokens.",
        "measured-knee-a100.mistake.one_byte":
            "About {mistake:.0f} comes from an intensity counted at 1 byte per element (2 FLOPs per byte per "
            "token). FP16 takes 2 bytes per element, so the multiply-add's 2 and the bytes' 2 cancel: the intensity "
            "is about the token count, and the knee about {peak:g} ÷ {bandwidth:g} ≈ {ridge:.0f}; at the measured "
            "shares, {value:.0f} tokens.",
        "measured-knee-a100.mistake.fp32":
            "About {mistake:.0f} comes from an intensity counted at 4 bytes per element (FP32). Vidur measured "
            "FP16, 2 bytes per element, so the intensity is about the token count and the knee about {ridge:.0f}; "
            "at the measured shares, {value:.0f} tokens.",
        "e2e-latency": "TTFT + TPOT × output length = {ttft:g} s + {tpot:g} s × {tokens} = {value:.1f} s",
        "e2e-latency.mistake.no_ttft":
            "{mistake:g} s counts only TPOT × output length and forgets TTFT: the first token takes {ttft:g} s to "
            "arrive. {ttft:g} s + {tpot:g} s × {tokens} = {value:.1f} s.",
        "tpot-share": "{tpot:g} ms × {tokens} ÷ ({ttft:g} ms + {tpot:g} ms × {tokens}) = {decode:g} s ÷ {total:g} s "
                      "= {share:.1f}%",
        "tpot-share.mistake.no_ttft":
            "{mistake:.0f}% leaves TTFT out: the total also holds {ttft:g} ms of TTFT, so TPOT × output length is "
            "{decode:g} s ÷ {total:g} s = {share:.1f}%.",
        "tpot-share.mistake.ttft_share":
            "{mistake:.2f}% is TTFT's share ({ttft:g} ms ÷ {total:g} s). The question asks for TPOT × output length: "
            "{decode:g} s ÷ {total:g} s = {share:.1f}%.",
        "decode-mfu-7b-a100": "batch {batch}: {attained:.2f} TFLOP per second (= FLOPs ÷ step time) ÷ peak "
                              "{peak:g} TFLOP/s = {value:.2f}%",
        "decode-mfu-7b-a100.mistake.per_parameter":
            "{mistake:.2f}% takes the intensity as about {pp_intensity:.0f} (per parameter, not per byte). Decode does "
            "about {intensity:.2f} FLOP per byte and is memory-bound, so it does only {attained:.2f} TFLOP per second, "
            "÷ peak {peak:g} TFLOP/s = {value:.2f}%.",
        "decode-mfu-7b-a100.mistake.full":
            "{mistake:.0f}% assumes decode uses all the compute. It is memory-bound: it does only {attained:.2f} TFLOP "
            "per second, {value:.2f}% of the {peak:g} TFLOP/s peak.",
        "decode-speed-anchor-h100":
            "batch {batch} reads {gb:.2f} GB per step ({weights_gb:.2f} GB of it weights), every operation "
            "memory-bound: {gb:.2f} GB ÷ {bandwidth:g} TB/s = {ms:.2f} ms/token ≈ {value:.0f} tok/s",
        "decode-speed-anchor-h100.mistake.compute":
            "{mistake:,.0f} tok/s counts FLOPs only (peak {peak:g} TFLOP/s ÷ {gflop:.2f} GFLOP per token). Decode at "
            "batch {batch} is memory-bound, so what counts is the bytes each step reads: {bandwidth:g} TB/s ÷ "
            "{gb:.2f} GB ≈ {value:.0f} tok/s.",
        "decode-speed-anchor-h100.mistake.per_parameter":
            "{mistake:.0f} tok/s divides the bandwidth by the number of parameters, as if each were a byte. In BF16 "
            "each parameter takes {param_bytes:g} bytes, so the weights alone are {weights_gb:.2f} GB and a step reads "
            "{gb:.2f} GB in all: {bandwidth:g} TB/s ÷ {gb:.2f} GB ≈ {value:.0f} tok/s.",
        "kv-reserve-max-anchor-h100":
            "⌊({memory:.2f} GB − the whole checkpoint {weights:.2f} GB) ÷ ({tokens:,} × {kv:,} B = {kv_mb:.1f} MB of "
            "KV + {state_mb:.1f} MB of recurrent state)⌋ = ⌊{free:.2f} GB ÷ {per_mb:.1f} MB⌋ = {value:.0f} requests",
        "kv-reserve-max-anchor-h100.mistake.no_state":
            "{mistake:.0f} leaves room for the KV only: in the anchor's GDN layers every request also keeps "
            "{state_mb:.1f} MB of recurrent state, whatever its length, more than the {kv_mb:.1f} MB of KV reserved. "
            "⌊{free:.2f} GB ÷ {per_mb:.1f} MB⌋ = {value:.0f}.",
        "kv-reserve-max-anchor-h100.mistake.matmul_weights":
            "{mistake:.0f} subtracts only the {matmul:.2f} GB of weights that take part in matrix multiplies. What "
            "stays in memory is the whole checkpoint, {weights:.2f} GB (embedding table, vision tower and MTP head "
            "included): ⌊{free:.2f} GB ÷ {per_mb:.1f} MB⌋ = {value:.0f}.",
        "static-held-short-request":
            "a static batch waits for its longest member: the step with token {long} ends at {end:.3f} s, and only "
            "then is the short request returned; {end:.3f} s ÷ {short} tokens = {value:.0f} ms/token",
        "static-held-short-request.mistake.returned_when_done":
            "{mistake:.1f} ms is what it would be if it were returned when done, {done:.3f} s ÷ {short} tokens: that "
            "is continuous batching. In a static batch a finished request cannot leave early; it waits for the other "
            "to write token {long}: {end:.3f} s ÷ {short} = {value:.0f} ms/token.",
        "paged-empty-slots-b16":
            "only the last block can be partly empty; it is about as likely to hold any of 1 to {block} tokens, so on "
            "average about ({block} − 1) ÷ 2 slots are empty. Averaged over every step of {requests:,} requests: "
            "{value:.1f} empty slots",
        "paged-empty-slots-b16.mistake.no_waste":
            "Paging wastes a little too: blocks are handed out whole, and the last one is usually not full. On "
            "average about ({block} − 1) ÷ 2 = {value:.1f} slots are empty.",
        "paged-empty-slots-b16.mistake.whole_block":
            "{mistake:.0f} is a whole block, a bound that is never reached: the last block holds at least 1 token. "
            "Any count is about as likely, so on average about ({block} − 1) ÷ 2 = {value:.1f} slots are empty.",
        "paged-empty-slots-b16.mistake.bound":
            "{mistake:.0f} is the worst case (a last block holding just 1 token). The question asks for the average: "
            "1 to {block} tokens are about as likely, so about ({block} − 1) ÷ 2 = {value:.1f} slots are empty.",
        "swap-bytes-anchor-2048":
            "{tokens:,} tokens × {kv:,} B = {kv_mb:.1f} MB of KV ({full} full-attention layers) + {state_mb:.1f} MB of "
            "GDN state (FP32) = {value:.1f} MB",
        "swap-bytes-anchor-2048.mistake.no_state":
            "{mistake:.1f} MB moves only the KV. In the anchor's {linear} GDN layers each sequence also has "
            "{state_mb:.1f} MB of recurrent state, which the evicted sequence needs to carry on: {kv_mb:.1f} MB + "
            "{state_mb:.1f} MB = {value:.1f} MB.",
        "swap-bytes-anchor-2048.mistake.all_layers":
            "{mistake:.1f} MB counts KV in all {layers} layers. Only the anchor's {full} full-attention layers keep "
            "KV, {kv:,} B per token; the other {linear} layers keep only a fixed-size state: {kv_mb:.1f} MB + "
            "{state_mb:.1f} MB = {value:.1f} MB.",
        "swap-bytes-anchor-2048.mistake.round_trip":
            "{mistake:.1f} MB counts the copy out and the copy back. The question asks what is copied when the "
            "sequence is swapped out, one way only: {kv_mb:.1f} MB of KV + {state_mb:.1f} MB of state = "
            "{value:.1f} MB.",
        "stall-2048-batch32":
            "a decode step alone takes {decode:.2f} ms; with the {prompt:,}-token prompt whole in the same step: "
            "matmuls of {prompt:,} + {batch} tokens {matmuls:.2f} ms (compute-bound) + the prompt's attention "
            "{prompt_attention:.2f} ms + the decoders' attention {decode_attention:.2f} ms + recurrent state "
            "{state:.2f} ms = {value:.2f} ms",
        "stall-2048-batch32.mistake.decode_unchanged":
            "{mistake:.2f} ms is a decode step with no one joining. A step ends only when all its work is done, and "
            "the whole {prompt:,}-token prompt runs in the same step as the {batch} decoders' tokens, so every "
            "decoder's next token waits for the prompt's matmuls ({matmuls:.2f} ms, compute-bound): the step takes "
            "{value:.2f} ms.",
        "stall-2048-batch32.mistake.prefill_plus_decode":
            "{mistake:.2f} ms adds a whole decode step ({decode:.2f} ms) to the prefill alone ({alone:.2f} ms). In one "
            "step the weights are read once for all {tokens:,} tokens: the prefill is compute-bound, so the {batch} "
            "decoders add only their FLOPs, attention and state, and no second read of the weights ({weights:.2f} ms): "
            "{value:.2f} ms.",
        "chunk-256-stall":
            "{chunks} chunks of {chunk} tokens; beside {batch} decoders the largest chunk below the ridge is {free}, "
            "so each step's matmuls still take one read of the weights, {weights:.2f} ms. The longest step is the "
            "chunk after the first {before:,} prompt tokens (it attends to them all): {weights:.2f} ms + the chunk's "
            "attention {chunk_attention:.2f} ms + the decoders' attention {decode_attention:.2f} ms + state "
            "{state:.2f} ms = {value:.2f} ms",
        "chunk-256-stall.mistake.proportional":
            "{mistake:.2f} ms adds the prefill's share per chunk ({alone:.2f} ms ÷ {chunks} chunks) to a decode step "
            "({decode:.2f} ms). But the prefill's time is compute on the weights, and a chunk of {chunk} beside "
            "{batch} decoders stays below the ridge (up to {free} tokens do): the step is still memory-bound, its one "
            "read of the weights ({weights:.2f} ms) covers the chunk's FLOPs, and only the chunk's attention and state "
            "add: {value:.2f} ms.",
        "chunk-256-stall.mistake.no_change":
            "{mistake:.2f} ms is the whole prompt in one step. In chunks of {chunk}, each step computes only {chunk} "
            "prompt tokens beside the {batch} decoders, fewer than the {free} that stay below the ridge, so a step "
            "costs about one read of the weights ({weights:.2f} ms) plus the decoders' attention and state: the "
            "longest is {value:.2f} ms.",
        "chunk-256-ttft":
            "the prompt whole takes {whole:.2f} ms in one step; in {chunks} chunks of {chunk} tokens every step reads "
            "the weights again ({weights:.2f} ms), and the steps take {first:.2f} ms to {longest:.2f} ms each: "
            "{value:.2f} ms in all",
        "chunk-256-ttft.mistake.free_for_prompt":
            "{mistake:.2f} ms is the prompt whole, in one step, as if chunked prefill removed the interference at no "
            "cost to anyone. In chunks the joiner waits for all {chunks} steps, and "
            "each one reads the weights again ({weights:.2f} ms) and serves the {batch} decoders too: {overhead:.2f} "
            "ms more, {value:.2f} ms in all.",
        "kv-transfer-13b-25gbps":
            "2 × {layers} layers × {kv_heads} KV heads × {head_dim} × {element} bytes = {per_token:,} B/token; × "
            "{tokens} tokens = {mb:.1f} MB ÷ ({gbit:g} Gbit/s ÷ {bits} = {gbyte:g} GB/s) = {value:.1f} ms",
        "kv-transfer-13b-25gbps.mistake.gbit_as_gbyte":
            "{mistake:.1f} ms reads {gbit:g} Gbit/s as {gbit:g} GB/s. A byte is {bits} bits, so the link carries "
            "{gbyte:g} GB/s: {mb:.1f} MB ÷ {gbyte:g} GB/s = {value:.1f} ms.",
        "kv-transfer-13b-25gbps.mistake.k_only":
            "{mistake:.1f} ms sends only K. Every layer keeps both K and V, {per_token:,} B per token for the two: "
            "{mb:.1f} MB ÷ {gbyte:g} GB/s = {value:.1f} ms.",
        "tpot-first-token":
            "TPOT counts only the gaps after the first token: the first comes at {first:.2f} ms, the {later} later "
            "tokens one decode step apart each, ({done:.2f} − {first:.2f}) ms ÷ {later} = {value:.2f} ms",
        "tpot-first-token.mistake.counts_first_token":
            "{mistake:.2f} ms averages all {tokens} tokens from the arrival: {done:.2f} ms ÷ {tokens}. That is the "
            "previous lesson's normalized latency, with the {first:.2f} ms wait for the first token spread over every "
            "token. DistServe's TPOT leaves the first token out, it belongs to TTFT: ({done:.2f} − {first:.2f}) ms ÷ "
            "{later} = {value:.2f} ms.",
        "split-throughput-chat":
            "1 prefill GPU and 1 decode GPU, every request queued at t = 0, requests returned per second: "
            "{value:.1f} (1 colocated GPU: {colocated:.2f})",
        "split-throughput-chat.mistake.doubles":
            "{mistake:.1f} is 1 colocated GPU ({colocated:.2f}) times 2: the belief that splitting prefill and "
            "decode over two GPUs doubles the throughput, or more. vLLM's documentation says plainly that "
            "disaggregated prefill does not improve throughput. Chat prompts are short, so the prefill GPU idles most "
            "of the time; every request's decode lands on the one decode GPU, whose batch doubles and whose steps "
            "slow down; and a colocated step lets a prompt share one read of the weights with the decodes, which a "
            "split cannot. The two GPUs return {value:.1f} requests per second.",
        "verify-5-tokens-h100":
            "batch {batch}, γ = {gamma}: {tokens} tokens per request through the weights in one step, far below the "
            "ridge of {critical} tokens, so the matmuls still take one read of the weights, {matmuls:.2f} ms; + "
            "attention over {context:,} cached tokens {attention:.2f} ms + the recurrent state read once and written "
            "{tokens} times {state:.2f} ms = {value:.2f} ms (one decode step: {decode:.2f} ms)",
        "verify-5-tokens-h100.mistake.five_steps":
            "{mistake:.2f} ms is {tokens} decode steps ({tokens} × {decode:.2f} ms), as if the target checked the "
            "tokens one at a time. It checks all {tokens} in one step: they share one read of the weights "
            "({matmuls:.2f} ms), below the ridge of {critical} their extra FLOPs hide under that read, and only a "
            "little attention and state is added: {value:.2f} ms, about one decode step.",
        "tokens-per-call-08-4":
            "the target's own 1 token (the correction at a rejection, or the bonus after all are kept) + guess k, "
            "which counts only if every guess before it was kept, with probability α^k: 1 + {terms} = "
            "(1 − {alpha:g}^{power}) ÷ (1 − {alpha:g}) = {value:.2f}",
        "tokens-per-call-08-4.mistake.gamma_times_alpha":
            "{mistake:.2f} is γ × α = {gamma} × {alpha:g}: every guess kept with probability α on its own. But the "
            "first rejection throws the later guesses away, so guess k counts only if all before it were kept: "
            "{terms} = {kept:.2f} kept on average; and every call also yields 1 token from the target itself (the "
            "correction or the bonus): 1 + {kept:.2f} = {value:.2f}.",
        "tokens-per-call-08-4.mistake.all_kept":
            "{mistake:.0f} is γ + 1, the best case with every guess kept. Each guess is kept only with probability "
            "α = {alpha:g}, and the first rejection ends the call: (1 − {alpha:g}^{power}) ÷ (1 − {alpha:g}) = "
            "{value:.2f}.",
        "drafted-share-08-4":
            "drafted tokens kept per call: E − 1 = {expected:.2f} − 1 = {kept:.2f} (the target's own token is no "
            "draft's guess); ÷ the {gamma} drafted = {value:.1f}%",
        "drafted-share-08-4.mistake.alpha_is_share":
            "{mistake:.0f}% is α, the chance that one guess survives its check. But the guesses after a rejection are "
            "never checked, they are thrown away: guess k survives with probability α^k, so on average {kept:.2f} of "
            "the {gamma} are kept, {value:.1f}%.",
        "exact-output-mat":
            "the draft guesses \"mat\" with q = {q_mat:.0f}%, each kept with probability p ÷ q = {p_mat:.0f} ÷ "
            "{q_mat:.0f}: {q_mat:.0f}% × {p_mat:.0f} ÷ {q_mat:.0f} = {p_mat:.0f}%; a rejected guess is redrawn from "
            "max(0, p − q), which gives \"mat\" {residual_mat:.0f}%: \"mat\" is {value:.1f}% of the output, exactly p",
        "exact-output-mat.mistake.follows_draft":
            "{mistake:.0f}% is how often the draft guesses \"mat\" (q), as if the output followed the draft. The rule "
            "changes which guesses are kept, not how the output is distributed: \"mat\" is kept only with "
            "probability {p_mat:.0f} ÷ {q_mat:.0f}, and a rejected guess is redrawn from max(0, p − q), which gives "
            "\"mat\" {residual_mat:.0f}%: \"mat\" is {value:.1f}% of the output, exactly p.",
        "speedup-batch96-h200":
            "batch {batch} × (γ + 1) = {verify_tokens} tokens through the weights, past the {gpu}'s ridge of "
            "{critical}: a verify step takes {verify:.2f} ms against {decode:.2f} ms for a decode step; "
            "{expected:.2f} × {decode:.2f} ÷ ({gamma} × {draft:.2f} + {verify:.2f}) = {value:.2f}×",
        "speedup-batch96-h200.mistake.always_helps":
            "{mistake:.2f}× is the speed-up at batch {batch1}, where a step carries only {tokens} tokens, far below "
            "the ridge, and a verify step ({verify1:.2f} ms) costs about a decode step ({decode1:.2f} ms). At batch "
            "{batch}, {verify_tokens} tokens pass the ridge of {critical}: the matmuls turn compute-bound, a verify "
            "step takes {verify:.2f} ms, about {steps:.1f} decode steps, and the extra tokens per call no longer pay "
            "for it: {value:.2f}×, slower than not speculating.",
        "int4-speedup-anchor-h100":
            "weights read per step: BF16 {bf16_gb:.2f} GB, INT4 {int4_gb:.2f} GB (the LM head's {head_gb:.2f} GB "
            "stays BF16, and every 128 weights carry a scale and a zero point); KV and state unchanged: "
            "{bf16_ms:.2f} ms ÷ {int4_ms:.2f} ms = {value:.2f}×",
        "int4-speedup-anchor-h100.mistake.four_times":
            "{mistake:.0f}× is 16 bits ÷ 4 bits, as if every byte of the step shrank to a quarter. But the LM head "
            "({head_gb:.2f} GB) stays in BF16, every group of 128 weights carries a scale and a zero point, and the KV "
            "and the recurrent state lose no byte: the step goes from {bf16_gb:.2f} GB of weights to {int4_gb:.2f} GB, "
            "{value:.2f}×.",
        "int4-bits-g128":
            "4-bit weights + per group an FP16 scale (16 bits) and a 4-bit zero point, spread over {group} weights: "
            "4 + (16 + 4) ÷ {group} = {value:.3f} bits",
        "int4-bits-g128.mistake.no_scales":
            "{mistake:.0f} counts the weights alone. Every group of {group} also stores an FP16 scale and a 4-bit zero "
            "point, read with the weights: 4 + (16 + 4) ÷ {group} = {value:.3f} bits.",
        "int4-bits-g128.mistake.scale_only":
            "{mistake:.3f} counts the scale but not the zero point. Asymmetric INT4 (as GPTQ and AWQ store it) keeps "
            "a 4-bit zero point per group too: 4 + (16 + 4) ÷ {group} = {value:.3f} bits.",
        "int4-speedup-b128-h100":
            "batch {batch} is past INT4's ridge at {ridge} and short of BF16's at {bf16_ridge}: INT4's matmuls are "
            "compute-bound, its weights widened to BF16 and multiplied at the BF16 peak, while BF16 still waits on "
            "reading its weights: {bf16_ms:.1f} ms ÷ {int4_ms:.1f} ms = {value:.2f}×",
        "int4-speedup-b128-h100.mistake.memory_bound":
            "{mistake:.2f}× is the speed-up at batch 1, where reading the weights sets both formats' time. Batch "
            "{batch} is past INT4's ridge at {ridge}: arithmetic sets INT4's time, and W4A16 widens to BF16 before it "
            "multiplies, so all it saves is what BF16 spends reading more bytes: {value:.2f}×.",
        "int4-speedup-b128-h100.mistake.four_times":
            "{mistake:.0f}× is 16 bits ÷ 4 bits, which only a step bound by its bytes could come near. Batch {batch} "
            "is past INT4's ridge at {ridge}, and BF16 arithmetic sets INT4's time: {value:.2f}×.",
        "fp8-kv-unfused-llama":
            "dequantization is not fused into attention, so attention reads a BF16 copy: only capacity changes, from "
            "{bf16_fit} requests that fit to {fp8_fit}; the step reads as many bytes as with BF16 KV: "
            "{bf16_ms:.2f} ms ÷ {unfused_ms:.2f} ms = {value:.2f}×",
        "fp8-kv-unfused-llama.mistake.fused":
            "{mistake:.2f}× is the speed-up with dequantization fused into the attention kernel, which then reads FP8 "
            "and half the KV bytes. Unfused, it reads the widened BF16 copy, and the step is no faster: {value:.2f}× "
            "(vLLM's docs said FP8 KV brought \"no latency improvements\" then, mainly room for more requests).",
        "fp8-kv-unfused-llama.mistake.halves":
            "{mistake:.0f}× assumes the step's time halves with the KV's bytes. Even fused, the weights' "
            "{weights_gb:.2f} GB do not shrink, which caps it at {fused:.2f}×; unfused, attention reads a BF16 copy: "
            "{value:.2f}×.",
        "gptq-opt125m-3bit":
            "GPTQ's Table 3 (WikiText2 perplexity): OPT-125M goes from {fp16:.2f} (FP16) to {value:.2f} (3 bits), "
            "{growth:.0%} higher; at the same 3 bits OPT-175B goes only from {big_fp16:.2f} to {big_3bit:.2f}",
        "gptq-opt125m-3bit.mistake.uniform":
            "{mistake:.2f} carries 175B's loss ({big_fp16:.2f} → {big_3bit:.2f}, {big_growth:.0%} higher) over to "
            "125M. GPTQ found larger models generally easier to quantize (§5), and the small one loses far more: it "
            "measured {value:.2f}.",
        "kv-per-token-qwen3-32b":
            "2 (K and V) × {layers} layers × {kv_heads} K/V heads × {head_dim} × {element} bytes = {value:.1f} KB",
        "kv-per-token-qwen3-32b.mistake.per_query_head":
            "{mistake:.0f} KB counts the {q_heads} query heads, as if each had a K and a V of its own. In GQA, {group} "
            "query heads share one K/V head, and the cache holds only {kv_heads}: 2 × {layers} × {kv_heads} × "
            "{head_dim} × {element} bytes = {value:.1f} KB.",
        "kv-per-token-qwen3-32b.mistake.no_k_and_v":
            "{mistake:.1f} KB leaves out the leading 2: every layer keeps both K and V. 2 × {layers} × {kv_heads} × "
            "{head_dim} × {element} bytes = {value:.1f} KB.",
        "mla-bytes-deepseek-v3":
            "({latent} + {rope}) elements × {layers} layers × {element} bytes (BF16) = {value:.1f} KB",
        "mla-bytes-deepseek-v3.mistake.elements_as_bytes":
            "{mistake:.1f} KB takes the {per_layer} elements for {per_layer} bytes. Each element is kept in BF16, "
            "{element} bytes: {per_layer} × {layers} × {element} = {value:.1f} KB.",
        "mla-bytes-deepseek-v3.mistake.mha_same_heads":
            "{mistake:,.0f} KB is the KV of the same {q_heads} heads under MHA: 2 × {q_heads} × {head_dim} elements "
            "per layer. MLA caches one latent of {latent} and one RoPE key of {rope}, shared by every head: "
            "{value:.1f} KB.",
        "hybrid-fit-anchor-32k":
            "one request: {context:,} tokens × {kv_per_token:,} bytes (the KV of {kv_layers} full-attention layers) "
            "= {kv_gb:.2f} GB, plus its recurrent state of {state_mb:.0f} MB; {memory_gb:.0f} GB ÷ "
            "{request_gb:.2f} GB = {value:.0f}",
        "hybrid-fit-anchor-32k.mistake.no_kv":
            "{mistake:.0f} counts only the recurrent state, as if a hybrid kept no KV. Its {kv_layers} "
            "full-attention layers still keep {kv_per_token:,} bytes per token, {kv_gb:.2f} GB at {context:,} "
            "tokens: {value:.0f}.",
        "hybrid-fit-anchor-32k.mistake.all_attention":
            "{mistake:.0f} is what fits if all {layers} layers kept KV. The anchor has one full-attention layer in "
            "every {every}, and the others keep a fixed-size state: {value:.0f}.",
        "break-even-anchor":
            "recurrent state {state:,} bytes ÷ KV per token {kv_per_token:,} bytes = {value:,.0f} tokens",
        "break-even-anchor.mistake.bf16_state":
            "{mistake:,.0f} counts the state in BF16 (2 bytes per element). The anchor keeps its recurrent state in "
            "FP32, 4 bytes per element: {state:,} ÷ {kv_per_token:,} = {value:,.0f} tokens.",
        "entropy-uniform-anchor":
            "{vocab:,} tokens equally likely, each p = 1/V: H = −Σ p log₂ p = log₂ V = log₂ {vocab:,} = {value:.2f} b"
            "its",
        "entropy-uniform-anchor.mistake.nats":
            "{mistake:.2f} is the natural logarithm, in nats: ln {vocab:,} = {mistake:.2f}. Bits take base 2: "
            "log₂ {vocab:,} = {value:.2f} bits.",
        "entropy-uniform-anchor.mistake.log10":
            "{mistake:.2f} is the logarithm to base 10. Bits take base 2: log₂ {vocab:,} = {value:.2f} bits.",
        "temperature-half-example":
            "temperature divides the logits, and a logit is ln p + a constant, so dividing by t = {t:g} raises every "
            "probability to the power {power:g} before renormalising: {top:g}^{power:g} ÷ Σ p^{power:g} = "
            "{top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%",
        "temperature-half-example.mistake.on_probabilities":
            "{mistake:.0f}% divides the probabilities by t and renormalises: every probability divided by the same "
            "number is unchanged once renormalised. Temperature divides the logits, which raises the probabilities "
            "to the power {power:g}: {top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%.",
        "temperature-half-example.mistake.no_renormalise":
            "{mistake:.2f}% is {top:g}^{power:g} without renormalising: after the power the probabilities add up to "
            "only {sum_pow:.4f}, which they must be divided by: {top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%.",
        "temperature-half-example.mistake.multiplied":
            "{mistake:.1f}% multiplies the logits by t, which is temperature {inverse:g} and makes the distribution "
            "flatter. Temperature {t:g} divides by t, raising the probabilities to the power {power:g}: "
            "{top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%.",
        "top-p-09-example":
            "add from the most probable down until the sum reaches p = {p:g}: the first {before_n} make {before:.2f}, "
            "not enough; {terms} = {total:.2f} ≥ {p:g}, {value} tokens",
        "top-p-09-example.mistake.below_p":
            "{mistake:.0f} tokens stop while the sum is still below p: the first {before_n} make {before:.2f}, "
            "short of {p:g}. Top-p keeps the smallest set whose sum reaches p, so it takes the next one too: "
            "{total:.2f} ≥ {p:g}, {value} tokens.",
        "min-p-02-example":
            "threshold = min-p × the top probability = {base:g} × {top:.2f} = {threshold:.2f}; at or above it: "
            "{kept_terms}, {value} tokens",
        "min-p-02-example.mistake.absolute":
            "{mistake:.0f} tokens is what min-p gives taken as an absolute threshold (probability ≥ {base:g}). "
            "Min-p's threshold moves with the top token: {base:g} × {top:.2f} = {threshold:.2f}, and {value} tokens "
            "are at or above it.",
        "top-p-sort-b128-h100":
            "top-p by a full sort reads and writes {per_logit} bytes per logit (temperature {temperature} + softmax "
            "{softmax} + sort {sort} + scan {scan}): {batch} × {vocab:,} × {per_logit} B = {gb:.2f} GB ÷ "
            "{bandwidth:g} TB/s = {value:.2f} ms",
        "top-p-sort-b128-h100.mistake.one_read":
            "{mistake:.3f} ms counts one read of the logits ({batch} × {vocab:,} × {logit} B), greedy's bill. Top-p by "
            "a full sort also takes a softmax and sorts (probability, token id) pairs in {passes} passes, {per_logit} "
            "bytes read and written per logit in all: {value:.2f} ms.",
        "top-p-sort-b128-h100.mistake.one_row":
            "{mistake:.4f} ms is one request's row. Each of the batch's {batch} requests has a row of logits, and "
            "every row is sorted: {batch} × {vocab:,} × {per_logit} B ÷ {bandwidth:g} TB/s = {value:.2f} ms.",
    },
}

PERCENT = 100  # a fraction as a percentage
SWAP_NEIGHBOUR_TOLERANCE = 0.03  # half the 6.2% gap between two of swap-bytes-anchor-2048's mistakes (see there)
GIB = 2**30  # bytes in a GiB; the course's GB is 1e9 bytes
BITS_PER_BYTE = 8
LINK_25GBPS_BYTES_PER_S = slo.LINK_25GBPS_BYTES_PER_S  # DistServe §6's cross-node network, the slo-serving link


@dataclass(frozen=True)
class Answer:
    value: float
    derivation: str  # the formula with the numbers filled in


@dataclass(frozen=True)
class Mistake:
    """A common wrong answer: its words are TEXT["QUESTION.mistake.KEY"]."""

    key: str
    value: Callable[[dict], float]  # the wrong value, from the same numbers as the question's derivation
    # Its own window, narrower than the question's tolerance, when two mistakes lie closer together than that
    # tolerance: otherwise one window swallows the other's value and its neighbourhood (None: the question's).
    tolerance: float | None = None


@dataclass(frozen=True)
class Grade:
    """How a guess is graded."""

    answer: Answer
    error: float  # relative error of the guess against the answer
    correct: bool
    mistake: int | None  # index in Question.mistakes of the mistake the guess matches, if it is not right
    feedback: str  # that mistake's sentence, filled with the question's numbers ("" if none)
    # A unit slip, when the guess is neither right nor a named mistake but is right once multiplied or divided by one
    # of SLIPS: the factor by which the guess is off (1,000: a thousand times too high; 1 / 1,000: too low).
    slip: float | None = None


# The factors of a slipped unit: a percentage written as a fraction (or the reverse), a thousand (ms for s, KB for MB),
# a binary thousand (KiB for KB).
SLIPS = (100, 1_000, 1_024)


@dataclass(frozen=True)
class Question:
    key: str  # also the key of its derivation in TEXT
    unit: str  # shown beside the student's input, so the question's unit is never a trap
    tolerance: float  # accepted relative error, e.g. 0.1 = within 10%
    compute: Callable[[], tuple[float, dict]]  # the answer, and the numbers its derivation shows
    mistakes: tuple[Mistake, ...] = ()

    def answer(self, lang: str) -> Answer:
        """The answer, derived in `lang`'s words."""
        value, numbers = self.compute()
        return Answer(value, TEXT[lang][self.key].format(**numbers))

    def mistake_values(self) -> tuple[float, ...]:
        """Each mistake's wrong value, in the order of `mistakes`."""
        _, numbers = self.compute()
        return tuple(m.value(numbers) for m in self.mistakes)

    def mistake_text(self, index: int, lang: str) -> str:
        """Mistake `index`'s sentence in `lang`, filled with the question's numbers and the wrong value."""
        _, numbers = self.compute()
        return self._words(index, numbers, lang)

    def _words(self, index: int, numbers: dict, lang: str) -> str:
        m = self.mistakes[index]
        return TEXT[lang][f"{self.key}.mistake.{m.key}"].format(**numbers, mistake=m.value(numbers))

    def grade(self, guess: float, lang: str) -> Grade:
        """Right within tolerance; otherwise the nearest mistake within the same relative tolerance of its
        value (or the mistake's own, narrower one), if any; otherwise just wrong (the sign of `error` says too
        high or too low)."""
        value, numbers = self.compute()
        answer = Answer(value, TEXT[lang][self.key].format(**numbers))
        error = (guess - value) / value
        if abs(error) <= self.tolerance:
            return Grade(answer, error, True, None, "")
        # a mistake whose value is 0 ("paging wastes nothing") matches only 0 itself
        near = [(abs(guess - wrong) / abs(wrong) if wrong else 0.0, i) for i, m in enumerate(self.mistakes)
                for wrong in (m.value(numbers),)
                if abs(guess - wrong) <= (self.tolerance if m.tolerance is None else m.tolerance) * abs(wrong)]
        if not near:
            return Grade(answer, error, False, None, "", self._slip(guess, value))
        index = min(near)[1]
        return Grade(answer, error, False, index, self._words(index, numbers, lang))


    def _slip(self, guess: float, value: float) -> float | None:
        """The factor of SLIPS (or its inverse) that brings the guess within tolerance of the answer, the closest if
        two do (1,000 and 1,024 are 2.4% apart); None if none does."""
        found = [(abs(guess / factor - value), factor) for f in SLIPS for factor in (f, 1 / f)
                 if abs(guess / factor - value) <= self.tolerance * abs(value)]
        return min(found)[1] if found and value else None


def _llama_a100():
    return presets.model("llama-2-7b"), presets.hardware("a100-sxm-80gb")


def _bytes_per_param(m) -> float:
    """Bytes per matmul weight: what counting per parameter instead of per byte leaves out."""
    return model_size.matmul_weight_bytes(m) / model_size.matmul_params(m)


def _decode_intensity() -> tuple[float, dict]:
    m, hw = _llama_a100()
    e = roofline.decode(m, hw, batch=1, context=1)
    params = model_size.matmul_params(m)
    return e.intensity, dict(gflop=e.flops / 1e9, gb=e.bytes / 1e9, intensity=e.intensity, flops=e.flops,
                             bytes=e.bytes, params=params, param_bytes=model_size.matmul_weight_bytes(m) / params,
                             flops_per_mac=serving.FLOPS_PER_PARAM_PER_TOKEN)


def _ridge_gap() -> tuple[float, dict]:
    m, hw = _llama_a100()
    e = roofline.decode(m, hw, batch=1, context=1)
    ridge = roofline.ridge_point(hw)
    return ridge / e.intensity, dict(peak=hw.peak_flops_per_s / 1e12, bandwidth=hw.bandwidth_bytes_per_s / 1e12,
                                     ridge=ridge, intensity=e.intensity, gap=ridge / e.intensity,
                                     pp_intensity=e.intensity * _bytes_per_param(m))


def _ceiling_7b_a100() -> tuple[float, dict]:
    m, hw = _llama_a100()
    weights, params = model_size.matmul_weight_bytes(m), model_size.matmul_params(m)
    value = serving.decode_ceiling_tokens_per_s(hw, weights)
    return value, dict(bandwidth=hw.bandwidth_bytes_per_s / 1e12, gb=weights / 1e9, value=value,
                       bandwidth_bytes=hw.bandwidth_bytes_per_s, params=params, param_bytes=weights / params,
                       peak=hw.peak_flops_per_s / 1e12, compute_only_s=request.compute_only_time_s(m, hw),
                       gflop=serving.FLOPS_PER_PARAM_PER_TOKEN * params / 1e9)


def _h100_vs_a100_decode() -> tuple[float, dict]:
    a100, h100 = presets.hardware("a100-sxm-80gb"), presets.hardware("h100-sxm")
    value = serving.bandwidth_ratio(h100, a100)
    return value, dict(h100=h100.bandwidth_bytes_per_s / 1e12, a100=a100.bandwidth_bytes_per_s / 1e12,
                       value=value, compute=serving.compute_ratio(h100, a100))


def _measured_knee_a100() -> tuple[float, dict]:
    gpu, op = "a100", "mlp_up_proj"
    hw = presets.hardware(measured.VIDUR_GPUS[gpu])
    bw, fl = measured.achieved_fractions(gpu, op)
    knee = measured.knee_tokens(hw, op, bw, fl)
    inner, cols = measured.matmul_shape(op)
    return knee, dict(value=knee, bound=measured.knee_tokens(hw, op), bw=bw, fl=fl, ridge=roofline.ridge_point(hw),
                      peak=hw.peak_flops_per_s / 1e12, bandwidth=hw.bandwidth_bytes_per_s / 1e12,
                      mb=2 * inner * cols / 1e6, **{f"t{n}": measured.measured_s(gpu, op, n) * 1e3
                                                    for n in (1, 64, 128, 256)})


def _kv_7b() -> tuple[float, dict]:
    m = presets.model("llama-2-7b")
    tokens, requests = 2048, 32
    per_token = cache.kv_bytes_per_token(m)
    total = per_token * tokens * requests
    a = m.attention
    # one of K or V alone: the same product without the factor that counts both
    k_only = m.full_attention_layers * a.kv_heads * a.head_dim * cache.KV_DTYPE_BYTES * tokens * requests
    return total / 1e9, dict(layers=m.full_attention_layers, kv_heads=a.kv_heads, head_dim=a.head_dim,
                             element=cache.KV_DTYPE_BYTES, fp32_element=presets.dtype_bytes("kv_dtype", "fp32"),
                             per_token=per_token, tokens=tokens, requests=requests, bytes=total, gb=total / 1e9,
                             k_only=k_only)


def _request() -> latency.Request:
    return latency.request(0.2, 0.025, 500)


def _e2e_latency() -> tuple[float, dict]:
    r = _request()
    return r.e2e_s, dict(ttft=r.ttft_s, tpot=r.tpot_s, tokens=r.output_tokens, value=r.e2e_s, decode=r.decode_s)


def _tpot_share() -> tuple[float, dict]:
    r = _request()
    share = r.tpot_share * PERCENT
    return share, dict(tpot=r.tpot_s * 1e3, ttft=r.ttft_s * 1e3, tokens=r.output_tokens, decode=r.decode_s,
                       total=r.e2e_s, share=share, ttft_share=r.ttft_share * PERCENT,
                       without_ttft=r.decode_s / (r.e2e_s - r.ttft_s) * PERCENT)


def _decode_mfu() -> tuple[float, dict]:
    m, hw = _llama_a100()
    batch = 1
    e = roofline.decode(m, hw, batch=batch, context=512)
    value = e.attained_flops_per_s / hw.peak_flops_per_s * PERCENT
    return value, dict(batch=batch, attained=e.attained_flops_per_s / 1e12, peak=hw.peak_flops_per_s / 1e12,
                       value=value, intensity=e.intensity, pp_intensity=e.intensity * _bytes_per_param(m),
                       full=PERCENT)  # all of the peak


def _decode_speed_anchor() -> tuple[float, dict]:
    m, hw = presets.model("qwen3.8-27b"), presets.hardware("h100-sxm")
    batch = 1
    e = roofline.decode(m, hw, batch=batch, context=4)
    weights, params = model_size.matmul_weight_bytes(m), model_size.matmul_params(m)
    return e.tokens_per_s, dict(batch=batch, gb=e.bytes / 1e9, weights_gb=e.bytes_by_kind["weights"] / 1e9,
                                bandwidth=hw.bandwidth_bytes_per_s / 1e12, ms=e.time_s * 1e3, value=e.tokens_per_s,
                                peak=hw.peak_flops_per_s / 1e12,
                                gflop=serving.FLOPS_PER_PARAM_PER_TOKEN * params / 1e9,
                                compute_only_s=request.compute_only_time_s(m, hw),
                                bandwidth_bytes=hw.bandwidth_bytes_per_s,
                                params=params, param_bytes=weights / params)


def _anchor_h100():
    return presets.model("qwen3.8-27b"), presets.hardware("h100-sxm")


def _kv_reserve_max() -> tuple[float, dict]:
    m, hw = _anchor_h100()
    kv, state = cache.kv_bytes_per_token(m), cache.state_bytes_per_request(m)
    tokens, weights = traces.MAX_TOKENS, model_size.resident_weight_bytes(m)
    per = tokens * kv + state
    value = scheduler.fit_at_max(m, hw)
    matmul = model_size.matmul_weight_bytes(m)
    return value, dict(memory=hw.memory_bytes / 1e9, weights=weights / 1e9, tokens=tokens, kv=kv,
                       kv_mb=tokens * kv / 1e6, state_mb=state / 1e6, free=scheduler.free_bytes(m, hw) / 1e9,
                       per_mb=per / 1e6, value=value, matmul=matmul / 1e9,
                       no_state=scheduler.free_bytes(m, hw) // (tokens * kv),
                       matmul_only=(hw.memory_bytes - matmul) // per)


# Two requests arriving together with 100-token prompts, one writing 10 tokens and the other 100: the short one's
# latency per output token in a static batch, which returns both when the long one is done.
HELD_PROMPT_TOKENS, HELD_SHORT, HELD_LONG = 100, 10, 100


def _static_held() -> tuple[float, dict]:
    m, hw = _anchor_h100()
    reqs = (traces.Request(0, 0.0, HELD_PROMPT_TOKENS, HELD_SHORT),
            traces.Request(1, 0.0, HELD_PROMPT_TOKENS, HELD_LONG))
    short = scheduler.schedule(reqs, m, hw, "static", max_batch=2).requests[0]
    value = short.latency_per_token_s * 1e3
    return value, dict(short=HELD_SHORT, long=HELD_LONG, end=short.finish_s, done=short.done_s, value=value,
                       when_done=short.done_s / HELD_SHORT * 1e3)


def _paged_empty_slots() -> tuple[float, dict]:
    m, hw = _anchor_h100()
    block = kv_layout.DEFAULT_BLOCK_SIZE
    u = kv_layout.fit(m, hw, "orca", "paged", block).usage
    value = u.empty_slots_per_sequence
    return value, dict(block=block, requests=u.requests, value=value, none=0)


def _swap_bytes() -> tuple[float, dict]:
    m, hw = _anchor_h100()
    tokens = traces.MAX_TOKENS
    p = kv_layout.preemption(m, hw, tokens)
    kv = cache.kv_bytes_per_token(m)
    value = p.swap_bytes / 1e6
    return value, dict(tokens=tokens, kv=kv, kv_mb=p.kv_bytes / 1e6, state_mb=p.state_bytes / 1e6, value=value,
                       full=m.full_attention_layers, linear=m.linear_attention_layers, layers=m.layers,
                       all_layers=p.kv_bytes * m.layers / m.full_attention_layers / 1e6, round_trip=2 * value)


# pd-disaggregation: the anchor on an H100, a 2,048-token prompt joining 32 decoders of 2,048 cached tokens each
# (the prefill-interference widget's defaults), whole or in chunks of 256.
JOIN_BATCH, JOIN_CONTEXT, JOIN_PROMPT, JOIN_CHUNK = 32, 2048, 2048, 256


def _join(chunk_tokens: int) -> interference.Interference:
    m, hw = _anchor_h100()
    return interference.interfere(m, hw, batch=JOIN_BATCH, context=JOIN_CONTEXT, prompt_tokens=JOIN_PROMPT,
                                  chunk_tokens=chunk_tokens)


def _join_numbers(r: interference.Interference) -> dict:
    """What the three joining questions share: the step's parts in ms, the decode step alone, the prefill alone."""
    s = r.longest
    return dict(batch=r.batch, prompt=r.prompt_tokens, chunk=r.chunk_tokens, chunks=len(r.steps),
                tokens=s.chunk + r.batch, before=s.before, free=r.free_chunk, matmuls=s.matmuls_s * 1e3,
                prompt_attention=s.chunk_attention_s * 1e3, chunk_attention=s.chunk_attention_s * 1e3,
                decode_attention=s.decode_attention_s * 1e3, state=s.state_s * 1e3, decode=r.decode_s * 1e3,
                alone=r.alone_s * 1e3, whole=r.whole_s * 1e3, weights=r.cost.weights_s * 1e3,
                first=r.first_step_s * 1e3, longest=r.stall_s * 1e3, overhead=r.overhead_s * 1e3)


def _stall_whole() -> tuple[float, dict]:
    r = _join(0)
    value = r.stall_s * 1e3
    return value, {**_join_numbers(r), "value": value}


def _stall_chunked() -> tuple[float, dict]:
    r = _join(JOIN_CHUNK)
    value = r.stall_s * 1e3
    return value, {**_join_numbers(r), "value": value}


def _ttft_chunked() -> tuple[float, dict]:
    r = _join(JOIN_CHUNK)
    value = r.ttft_s * 1e3
    return value, {**_join_numbers(r), "value": value}


# The joiner of the stall above writes TPOT_TOKENS tokens: its first at the end of the joined step, every later one a
# decode-only step of the batch after it (the batch unchanged, as in the interference widget).
TPOT_TOKENS = 16


def _tpot_first_token() -> tuple[float, dict]:
    r = _join(0)
    first, later = r.whole_s * 1e3, TPOT_TOKENS - 1
    done = first + later * r.decode_s * 1e3
    value = (done - first) / later
    return value, dict(first=first, later=later, done=done, tokens=TPOT_TOKENS, value=value,
                       normalized=done / TPOT_TOKENS)


def _split_throughput() -> tuple[float, dict]:
    """Chat on the anchor and H100s: what one prefill GPU and one decode GPU return per second with a queue that never
    empties, against one colocated GPU (vLLM V1's chunked schedule)."""
    m, hw = _anchor_h100()
    value = slo.capacity(m, hw, "disaggregated", "chat")
    colocated = slo.capacity(m, hw, "chunked", "chat")
    return value, dict(value=value, colocated=colocated, doubled=2 * colocated)


# A 512-token Llama-2-13B prompt (DistServe's OPT-13B class, Fig. 1's input length) over 25 Gbit/s.
TRANSFER_TOKENS = 512


def _kv_transfer() -> tuple[float, dict]:
    m = presets.model("llama-2-13b")
    per_token = cache.kv_bytes_per_token(m)
    total = per_token * TRANSFER_TOKENS
    value = total / LINK_25GBPS_BYTES_PER_S * 1e3
    a = m.attention
    return value, dict(layers=m.full_attention_layers, kv_heads=a.kv_heads, head_dim=a.head_dim,
                       element=cache.KV_DTYPE_BYTES, per_token=per_token, tokens=TRANSFER_TOKENS, mb=total / 1e6,
                       gbit=LINK_25GBPS_BYTES_PER_S * BITS_PER_BYTE / 1e9, bits=BITS_PER_BYTE,
                       gbyte=LINK_25GBPS_BYTES_PER_S / 1e9, value=value, bytes=total)


# speculative-decoding: the anchor as the target, 1,024 cached tokens per request, its own MTP layers as the draft
# (the spec-decode widget's defaults), α 0.8 and γ 4.
SPEC_CONTEXT, SPEC_ALPHA, SPEC_GAMMA, SPEC_DRAFT = 1024, 0.8, 4, "mtp"
SPEC_TOKEN = 0  # "mat", the first of the spec-sampling widget's five candidates


def _speculation(hw_key: str, batch: int) -> speculative.Speculation:
    return speculative.Speculation(presets.model("qwen3.8-27b"), presets.hardware(hw_key), alpha=SPEC_ALPHA,
                                   gamma=SPEC_GAMMA, draft=SPEC_DRAFT, batch=batch, context=SPEC_CONTEXT)


def _verify_step() -> tuple[float, dict]:
    r = _speculation("h100-sxm", 1)
    tokens = r.gamma + 1
    value = r.verify_s * 1e3
    return value, dict(batch=r.batch, gamma=r.gamma, tokens=tokens, critical=roofline.critical_batch(r.m, r.hw),
                       context=r.context, matmuls=r.cost.matmuls_s(r.batch * tokens, r.batch * tokens) * 1e3,
                       attention=r.batch * r.cost.chunk_attention_s(tokens, r.context) * 1e3,
                       state=r.cost.state_s * (1 + tokens) * r.batch * 1e3, value=value, decode=r.decode_s * 1e3)


def _kept_terms(alpha: float, gamma: int) -> str:
    """α + α² + … + α^γ, each term written out: the guesses a call keeps on average."""
    return " + ".join(f"{alpha ** k:g}" for k in range(1, gamma + 1))


def _tokens_per_call() -> tuple[float, dict]:
    value = speculative.expected_tokens(SPEC_ALPHA, SPEC_GAMMA)
    return value, dict(alpha=SPEC_ALPHA, gamma=SPEC_GAMMA, power=SPEC_GAMMA + 1, value=value, kept=value - 1,
                       terms=_kept_terms(SPEC_ALPHA, SPEC_GAMMA))


def _drafted_share() -> tuple[float, dict]:
    expected = speculative.expected_tokens(SPEC_ALPHA, SPEC_GAMMA)
    value = (expected - 1) / SPEC_GAMMA * PERCENT
    return value, dict(expected=expected, kept=expected - 1, gamma=SPEC_GAMMA, value=value,
                       alpha=SPEC_ALPHA * PERCENT)


def _exact_output() -> tuple[float, dict]:
    p = speculative.normalise(speculative.EXAMPLE_TARGET)
    q = speculative.normalise(speculative.EXAMPLE_DRAFTS["overconfident"])
    r = speculative.residual(p, q)
    value = p[SPEC_TOKEN] * PERCENT
    return value, dict(p_mat=p[SPEC_TOKEN] * PERCENT, q_mat=q[SPEC_TOKEN] * PERCENT,
                       residual_mat=r[SPEC_TOKEN] * PERCENT, value=value)


# Where speculation really loses: a weaker draft (α 0.6) on an H200, at a batch past its ridge (207 < 96 x 5 = 480
# tokens per verify step) that fits with γ + 1 recurrent states per request (115 do). At α 0.8 no preset loses within
# its memory (an H100 fits 36 such requests, and breaks even only at 258).
SPEC_BATCH, SPEC_BATCH_ALPHA, SPEC_BATCH_GPU = 96, 0.6, "h200-sxm"


def _speedup_batch() -> tuple[float, dict]:
    r, alone = (_speculation(SPEC_BATCH_GPU, b).at(alpha=SPEC_BATCH_ALPHA) for b in (SPEC_BATCH, 1))
    return r.speedup, dict(batch=r.batch, verify_tokens=r.batch * (r.gamma + 1), gpu=r.hw.short_name,
                           critical=roofline.critical_batch(r.m, r.hw), verify=r.verify_s * 1e3,
                           decode=r.decode_s * 1e3, expected=r.tokens_per_call, gamma=r.gamma,
                           draft=r.draft_step.step_s * 1e3, value=r.speedup, batch1=alone.batch,
                           tokens=alone.gamma + 1, verify1=alone.verify_s * 1e3, decode1=alone.decode_s * 1e3,
                           steps=r.verify_s / r.decode_s, alone=alone.speedup)


# quantization: the anchor on one H100 at 1,024 tokens of context (the quant-roofline widget's defaults).
QUANT_CONTEXT, QUANT_GROUP = 1024, 128
QUANT_BIG_BATCH = 128  # past INT4's ridge (86), below BF16's (296); 137 requests fit in BF16 at this context
KV_MODEL, KV_BATCH, KV_CONTEXT = "llama-2-7b", 16, 8192  # a model whose KV outweighs its weights at this context


def _int4_speedup(batch: int) -> tuple[float, dict]:
    m, hw = presets.model("qwen3.8-27b"), presets.hardware("h100-sxm")
    bf16 = quantization.decode(m, hw, batch, QUANT_CONTEXT)
    int4 = quantization.decode(m, hw, batch, QUANT_CONTEXT, "int4", QUANT_GROUP)
    alone = quantization.decode(m, hw, 1, QUANT_CONTEXT).time_s / quantization.decode(
        m, hw, 1, QUANT_CONTEXT, "int4", QUANT_GROUP).time_s
    value = bf16.time_s / int4.time_s
    return value, dict(batch=batch, bf16_ms=bf16.time_s * 1e3, int4_ms=int4.time_s * 1e3, value=value,
                       bf16_gb=quantization.matmul_weight_bytes(m) / 1e9,
                       int4_gb=quantization.matmul_weight_bytes(m, "int4", QUANT_GROUP) / 1e9,
                       head_gb=model_size.lm_head_params(m) * quantization.HEAD_BYTES_PER_PARAM / 1e9,
                       ridge=quantization.ridge_batch(m, hw, "int4", QUANT_GROUP),
                       bf16_ridge=quantization.ridge_batch(m, hw), alone=alone,
                       bits_ratio=quantization.weight_bits("bf16") / quantization.WEIGHT_BITS["int4"])


def _int4_bits() -> tuple[float, dict]:
    value = quantization.weight_bits("int4", QUANT_GROUP)
    return value, dict(group=QUANT_GROUP, value=value, bits=quantization.WEIGHT_BITS["int4"],
                       scale_only=quantization.WEIGHT_BITS["int4"] + quantization.SCALE_BITS / QUANT_GROUP)


def _fp8_kv_unfused() -> tuple[float, dict]:
    m, hw = presets.model(KV_MODEL), presets.hardware("h100-sxm")
    bf16 = quantization.decode(m, hw, KV_BATCH, KV_CONTEXT)
    unfused = quantization.decode(m, hw, KV_BATCH, KV_CONTEXT, kv="fp8", kv_fused=False)
    fused = quantization.decode(m, hw, KV_BATCH, KV_CONTEXT, kv="fp8")
    value = bf16.time_s / unfused.time_s
    return value, dict(bf16_ms=bf16.time_s * 1e3, unfused_ms=unfused.time_s * 1e3, value=value,
                       fused=bf16.time_s / fused.time_s, weights_gb=quantization.matmul_weight_bytes(m) / 1e9,
                       bf16_fit=quantization.max_requests(m, hw, KV_CONTEXT),
                       fp8_fit=quantization.max_requests(m, hw, KV_CONTEXT, kv="fp8"),
                       halves=quantization.kv_bits("bf16") / quantization.kv_bits("fp8"))


def _gptq_small_model() -> tuple[float, dict]:
    fp16, _, value = quantization.GPTQ_OPT_PERPLEXITY["125M"]
    big_fp16, _, big_3bit = quantization.GPTQ_OPT_PERPLEXITY["175B"]
    return value, dict(fp16=fp16, value=value, growth=value / fp16 - 1, big_fp16=big_fp16, big_3bit=big_3bit,
                       big_growth=big_3bit / big_fp16 - 1, uniform=fp16 * big_3bit / big_fp16)


# attention-variants: the designs of sim/attention.py; memory for KV and state as the kv-heads widget's default.
KV_BUDGET_GB, LONG_CONTEXT = 30, 32_768
KB = 1000  # the course's KB, as its GB is 10^9 bytes


def _qwen32b_kv() -> tuple[float, dict]:
    d = attention.design("qwen3-32b")
    value = attention.kv_bytes_per_token(d) / KB
    return value, dict(layers=d.layers, kv_heads=d.kv_heads_per_layer, q_heads=d.q_heads, head_dim=d.head_dim,
                       element=attention.KV_ELEMENT_BYTES, group=d.q_heads // d.kv_heads_per_layer, value=value,
                       per_query=attention.kv_bytes_per_token(attention.with_mechanism(d, "mha")) / KB)


def _mla_bytes() -> tuple[float, dict]:
    d = attention.design("deepseek-v3")
    value = attention.kv_bytes_per_token(d) / KB
    return value, dict(latent=d.latent_dim, rope=d.rope_dim, layers=d.layers, element=attention.KV_ELEMENT_BYTES,
                       per_layer=attention.kv_elements_per_token_per_layer(d), q_heads=d.q_heads,
                       head_dim=d.head_dim, value=value, elements=attention.kv_elements_per_token(d) / KB,
                       mha=attention.mha_bytes_per_token(d) / KB)


def _hybrid_fit() -> tuple[float, dict]:
    d = attention.design("qwen3.8-27b")
    memory = KV_BUDGET_GB * 1e9
    value = attention.max_requests(d, memory, LONG_CONTEXT)
    kv = LONG_CONTEXT * attention.kv_bytes_per_token(d)
    state = attention.state_bytes_per_request(d)
    return value, dict(context=LONG_CONTEXT, kv_per_token=attention.kv_bytes_per_token(d), kv_layers=d.kv_layers,
                       kv_gb=kv / 1e9, state_mb=state / 1e6, memory_gb=KV_BUDGET_GB, request_gb=(kv + state) / 1e9,
                       value=value, layers=d.layers, every=d.attention_every, no_kv=memory // state,
                       all_attention=attention.max_requests(attention.with_mechanism(d, "gqa"), memory, LONG_CONTEXT))


def _break_even() -> tuple[float, dict]:
    d = attention.design("qwen3.8-27b")
    state, per_token = attention.state_bytes_per_request(d), attention.kv_bytes_per_token(d)
    return state / per_token, dict(state=state, kv_per_token=per_token, value=state / per_token,
                                   bf16=state / 2 / per_token)


# sampling: the anchor's vocabulary; sampling.EXAMPLE's eight probabilities for temperature, top-p and min-p; top-p by a
# full sort at batch 128 on an H100, where 137 requests fit at 1,024 tokens (the sampling-cost widget starts at 64).
TEMPERATURE_T, TOP_P, MIN_P_BASE = 0.5, 0.9, 0.2
COST_BATCH, COST_METHOD = 128, "top-p-sort"


def _entropy_uniform() -> tuple[float, dict]:
    vocab = presets.model("qwen3.8-27b").vocab
    value = sampling.uniform_entropy_bits(vocab)
    return value, dict(vocab=vocab, value=value, nats=math.log(vocab), log10=math.log10(vocab))


def _temperature_half() -> tuple[float, dict]:
    p = sampling.example()
    power = 1 / TEMPERATURE_T
    value = sampling.heat(p, TEMPERATURE_T)[0] * PERCENT
    return value, dict(t=TEMPERATURE_T, power=power, top=p[0], top_pow=p[0] ** power,
                       sum_pow=math.fsum(q ** power for q in p), value=value, unchanged=p[0] * PERCENT,
                       multiplied=sampling.heat(p, 1 / TEMPERATURE_T)[0] * PERCENT, inverse=1 / TEMPERATURE_T)


def _top_p_example() -> tuple[float, dict]:
    p = sampling.example()
    n = sampling.nucleus_size(p, TOP_P)
    return n, dict(p=TOP_P, value=n, before_n=n - 1, before=math.fsum(p[:n - 1]), total=math.fsum(p[:n]),
                   terms=" + ".join(f"{q:.2f}" for q in p[:n]))


def _min_p_example() -> tuple[float, dict]:
    p = sampling.example()
    n = sampling.min_p_size(p, MIN_P_BASE)
    threshold = MIN_P_BASE * max(p)
    return n, dict(base=MIN_P_BASE, top=max(p), threshold=threshold, value=n,
                   kept_terms=", ".join(f"{q:.2f}" for q in p if q >= threshold),
                   absolute=sum(1 for q in p if q >= MIN_P_BASE))


def _sort_cost() -> tuple[float, dict]:
    st = sampling.step("qwen3.8-27b", "h100-sxm", COST_BATCH, COST_METHOD)
    value = st.time_s * 1e3
    kernels = {k: sampling.KERNELS[k].bytes for k in sampling.METHODS[COST_METHOD]}
    return value, dict(per_logit=sampling.bytes_per_logit(COST_METHOD), batch=st.batch, vocab=st.vocab,
                       gb=st.bytes / 1e9, bandwidth=st.hw.bandwidth_bytes_per_s / 1e12, value=value,
                       logit=sampling.LOGIT_BYTES, passes=sampling.RADIX_PASSES,
                       one_read=st.logits_bytes / st.hw.bandwidth_bytes_per_s * 1e3, **kernels)


QUESTIONS = {q.key: q for q in (
    Question("decode-intensity", "FLOP/B", 0.25, _decode_intensity, (
        Mistake("per_parameter", lambda n: n["flops"] / n["params"]),
        Mistake("no_multiply_add", lambda n: n["flops"] / n["flops_per_mac"] / n["bytes"]),
    )),
    Question("ridge-gap-a100", "×", 0.10, _ridge_gap, (
        Mistake("per_parameter", lambda n: n["ridge"] / n["pp_intensity"]),
    )),
    Question("ceiling-7b-a100", "tok/s", 0.10, _ceiling_7b_a100, (
        Mistake("per_parameter", lambda n: n["bandwidth_bytes"] / n["params"]),
        Mistake("compute", lambda n: 1 / n["compute_only_s"]),
    )),
    Question("h100-vs-a100-decode", "×", 0.05, _h100_vs_a100_decode, (
        Mistake("compute", lambda n: n["compute"]),
    )),
    Question("measured-knee-a100", "tokens", 0.25, _measured_knee_a100, (
        Mistake("every_token", lambda n: 1),
        Mistake("one_byte", lambda n: n["ridge"] / 2),
        Mistake("fp32", lambda n: n["ridge"] * 2),
    )),
    Question("kv-7b-2048-32", "GB", 0.05, _kv_7b, (
        Mistake("no_k_and_v", lambda n: n["k_only"] / 1e9),
        Mistake("fp32", lambda n: n["bytes"] * n["fp32_element"] / n["element"] / 1e9),
        Mistake("gib", lambda n: n["bytes"] / GIB),
    )),
    # 1%: tighter than the 1.6% gap to forgetting TTFT, wide enough for the strict N - 1 count (0.2%)
    Question("e2e-latency", "s", 0.01, _e2e_latency, (
        Mistake("no_ttft", lambda n: n["decode"]),
    )),
    Question("tpot-share", "%", 0.01, _tpot_share, (
        Mistake("no_ttft", lambda n: n["without_ttft"]),
        Mistake("ttft_share", lambda n: n["ttft_share"]),
    )),
    # 30%: a rough figure passes, twice the answer (intensity taken per parameter) does not
    Question("decode-mfu-7b-a100", "%", 0.30, _decode_mfu, (
        # memory-bound, so MFU scales with intensity
        Mistake("per_parameter", lambda n: n["value"] * n["pp_intensity"] / n["intensity"]),
        Mistake("full", lambda n: n["full"]),
    )),
    Question("decode-speed-anchor-h100", "tok/s", 0.10, _decode_speed_anchor, (
        Mistake("compute", lambda n: 1 / n["compute_only_s"]),
        Mistake("per_parameter", lambda n: n["bandwidth_bytes"] / n["params"]),
    )),
    # kv-cache-serving. 5%: a count of requests, four either side of 85.
    Question("kv-reserve-max-anchor-h100", "", 0.05, _kv_reserve_max, (
        Mistake("no_state", lambda n: n["no_state"]),
        Mistake("matmul_weights", lambda n: n["matmul_only"]),
    )),
    # 15%: 100 steps of about 15.4 ms over 10 tokens (154 ms) is right.
    Question("static-held-short-request", "ms", 0.15, _static_held, (
        Mistake("returned_when_done", lambda n: n["when_done"]),
    )),
    # 15%: half a block, 8, is right.
    Question("paged-empty-slots-b16", "", 0.15, _paged_empty_slots, (
        Mistake("no_waste", lambda n: n["none"]),
        Mistake("whole_block", lambda n: n["block"]),
        Mistake("bound", lambda n: n["block"] - 1),
    )),
    Question("swap-bytes-anchor-2048", "MB", 0.10, _swap_bytes, (
        Mistake("no_state", lambda n: n["kv_mb"]),
        # KV in all 64 layers (536.9 MB) and out and back (570.4 MB) lie 6.2% apart, closer than the question's
        # 10%: each keeps a window of about half that gap, 3%, so neither swallows the other's value and a guess
        # in between names the nearer one (536.9 × 1.03 ≈ 553.0 MB, 570.4 × 0.97 ≈ 553.3 MB).
        Mistake("all_layers", lambda n: n["all_layers"], SWAP_NEIGHBOUR_TOLERANCE),
        Mistake("round_trip", lambda n: n["round_trip"], SWAP_NEIGHBOUR_TOLERANCE),
    )),
    # pd-disaggregation. 5%: the sum of prefill and decode (121.2 ms) is 12.7% above the answer (107.5 ms).
    Question("stall-2048-batch32", "ms", 0.05, _stall_whole, (
        Mistake("decode_unchanged", lambda n: n["decode"]),
        Mistake("prefill_plus_decode", lambda n: n["alone"] + n["decode"]),
    )),
    # 10%: the decode step alone (19.47 ms, 1.4% below) is right, the point of a chunk below the ridge.
    Question("chunk-256-stall", "ms", 0.10, _stall_chunked, (
        Mistake("proportional", lambda n: n["decode"] + n["alone"] / n["chunks"]),
        Mistake("no_change", lambda n: n["whole"]),
    )),
    Question("chunk-256-ttft", "ms", 0.10, _ttft_chunked, (
        Mistake("free_for_prompt", lambda n: n["whole"]),
    )),
    Question("kv-transfer-13b-25gbps", "ms", 0.10, _kv_transfer, (
        Mistake("gbit_as_gbyte", lambda n: n["bytes"] / (n["gbit"] * 1e9) * 1e3),
        Mistake("k_only", lambda n: n["value"] / 2),  # one of K and V: half the bytes
    )),
    # 10%: the normalized latency lies 28% above the answer.
    Question("tpot-first-token", "ms", 0.10, _tpot_first_token, (
        Mistake("counts_first_token", lambda n: n["normalized"]),
    )),
    # 10%: twice the colocated GPU lies 72% above the answer.
    Question("split-throughput-chat", "req/s", 0.10, _split_throughput, (
        Mistake("doubles", lambda n: n["doubled"]),
    )),
    # speculative-decoding. 10%: the decode step (15.41 ms, 1.2% below) is right, the point of a verify step.
    Question("verify-5-tokens-h100", "ms", 0.10, _verify_step, (
        Mistake("five_steps", lambda n: n["tokens"] * n["decode"]),
    )),
    # 2%: γα (3.2) lies 4.8% below the answer (3.36), outside its window (3.36 × 0.98 ≈ 3.29).
    Question("tokens-per-call-08-4", "", 0.02, _tokens_per_call, (
        Mistake("gamma_times_alpha", lambda n: n["gamma"] * n["alpha"]),
        Mistake("all_kept", lambda n: n["gamma"] + 1),
    )),
    Question("drafted-share-08-4", "%", 0.05, _drafted_share, (
        Mistake("alpha_is_share", lambda n: n["alpha"]),
    )),
    Question("exact-output-mat", "%", 0.05, _exact_output, (
        Mistake("follows_draft", lambda n: n["q_mat"]),
    )),
    # 5%: "no change" (1×) lies 7.1% above the answer (0.93×) and is just too high.
    Question("speedup-batch96-h200", "×", 0.05, _speedup_batch, (
        Mistake("always_helps", lambda n: n["alone"]),
    )),
    # quantization. 8%: 16 bits ÷ 4 (4×) lies 20% above the answer (3.32×).
    Question("int4-speedup-anchor-h100", "×", 0.08, lambda: _int4_speedup(1), (
        Mistake("four_times", lambda n: n["bits_ratio"]),
    )),
    # 0.5%: the scale without its zero point (4.125) lies 0.75% below the answer (4.156); its own window, 0.2%,
    # stops short of the answer's (4.125 x 1.002 = 4.133 < 4.156 x 0.995 = 4.135).
    Question("int4-bits-g128", "bit", 0.005, _int4_bits, (
        Mistake("no_scales", lambda n: n["bits"]),
        Mistake("scale_only", lambda n: n["scale_only"], 0.002),
    )),
    Question("int4-speedup-b128-h100", "×", 0.05, lambda: _int4_speedup(QUANT_BIG_BATCH), (
        Mistake("memory_bound", lambda n: n["alone"]),
        Mistake("four_times", lambda n: n["bits_ratio"]),
    )),
    Question("fp8-kv-unfused-llama", "×", 0.05, _fp8_kv_unfused, (
        Mistake("fused", lambda n: n["fused"]),
        Mistake("halves", lambda n: n["halves"]),
    )),
    # 15%: a published perplexity; the 175B model's 4% loss carried over (28.8) is far outside.
    Question("gptq-opt125m-3bit", "", 0.15, _gptq_small_model, (
        Mistake("uniform", lambda n: n["uniform"]),
    )),
    # attention-variants. 5%: leaving out K or V (half) and counting query heads (8x) are far outside.
    Question("kv-per-token-qwen3-32b", "KB", 0.05, _qwen32b_kv, (
        Mistake("per_query_head", lambda n: n["per_query"]),
        Mistake("no_k_and_v", lambda n: n["value"] / 2),
    )),
    Question("mla-bytes-deepseek-v3", "KB", 0.05, _mla_bytes, (
        Mistake("elements_as_bytes", lambda n: n["elements"]),
        Mistake("mha_same_heads", lambda n: n["mha"]),
    )),
    # 10%: a count of 13 requests; 12 and 14 are right, the 3 of all-attention and the 198 of no KV are not.
    Question("hybrid-fit-anchor-32k", "", 0.10, _hybrid_fit, (
        Mistake("no_kv", lambda n: n["no_kv"]),
        Mistake("all_attention", lambda n: n["all_attention"]),
    )),
    Question("break-even-anchor", "tokens", 0.05, _break_even, (
        Mistake("bf16_state", lambda n: n["bf16"]),
    )),    # sampling. 3%: the natural logarithm (12.42) and base 10 (5.39) are far outside.
    Question("entropy-uniform-anchor", "bit", 0.03, _entropy_uniform, (
        Mistake("nats", lambda n: n["nats"]),
        Mistake("log10", lambda n: n["log10"]),
    )),
    # 5%: the unchanged 35% and the flattened 23.2% are far outside 54.7% ± 2.7.
    Question("temperature-half-example", "%", 0.05, _temperature_half, (
        Mistake("on_probabilities", lambda n: n["unchanged"]),
        Mistake("no_renormalise", lambda n: n["top_pow"] * PERCENT),
        Mistake("multiplied", lambda n: n["multiplied"]),
    )),
    # 10%: a count of 5 tokens; 4 (the sum still below p) is the named mistake.
    Question("top-p-09-example", "", 0.10, _top_p_example, (
        Mistake("below_p", lambda n: n["before_n"]),
    )),
    Question("min-p-02-example", "", 0.10, _min_p_example, (
        Mistake("absolute", lambda n: n["absolute"]),
    )),
    Question("top-p-sort-b128-h100", "ms", 0.10, _sort_cost, (
        Mistake("one_read", lambda n: n["one_read"]),
        Mistake("one_row", lambda n: n["value"] / n["batch"]),
    )),
)}
