"""The questions of the lesson attention-variants, which its predict boxes name by key
(lessons/<lang>/attention-variants.md): how each answer and its common mistakes are computed, the tolerance it is
graded with, and the words of its derivation and of each mistake in every language (TEXT)."""

from __future__ import annotations

from sim.questions.question import Mistake, Question, ask
from sim.techniques import attention

TEXT = {
    "zh": {
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
    },
    "en": {
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
    },
}


# The designs of sim/techniques/attention.py; memory for KV and state as the kv-heads widget's default.
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


QUESTIONS = ask(
    TEXT,
    # 5%: leaving out K or V (half) and counting query heads (8x) are far outside.
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
    )),
)
