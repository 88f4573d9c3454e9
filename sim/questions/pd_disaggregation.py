"""The questions of the lesson pd-disaggregation, which its predict boxes name by key
(lessons/<lang>/pd-disaggregation.md): how each answer and its common mistakes are computed, the tolerance it is
graded with, and the words of its derivation and of each mistake in every language (TEXT)."""

from __future__ import annotations

from sim.physics import cache, presets
from sim.questions.question import Mistake, Question, anchor_h100, ask
from sim.serving import interference, slo

TEXT = {
    "zh": {
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
    },
    "en": {
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
    },
}


BITS_PER_BYTE = 8


LINK_25GBPS_BYTES_PER_S = slo.LINK_25GBPS_BYTES_PER_S  # DistServe §6's cross-node network, the slo-serving link


# The anchor on an H100, a 2,048-token prompt joining 32 decoders of 2,048 cached tokens each
# (the prefill-interference widget's defaults), whole or in chunks of 256.
JOIN_BATCH, JOIN_CONTEXT, JOIN_PROMPT, JOIN_CHUNK = 32, 2048, 2048, 256


def _join(chunk_tokens: int) -> interference.Interference:
    m, hw = anchor_h100()
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
    m, hw = anchor_h100()
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


QUESTIONS = ask(
    TEXT,
    # 5%: the sum of prefill and decode (121.2 ms) is 12.7% above the answer (107.5 ms).
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
)
