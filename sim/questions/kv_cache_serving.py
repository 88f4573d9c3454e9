"""The questions of the lesson kv-cache-serving, which its predict boxes name by key
(lessons/<lang>/kv-cache-serving.md): how each answer and its common mistakes are computed, the tolerance it is
graded with, and the words of its derivation and of each mistake in every language (TEXT)."""

from __future__ import annotations

from sim.physics import cache, model_size
from sim.questions.question import Mistake, Question, anchor_h100, ask
from sim.serving import kv_layout, scheduler, traces

TEXT = {
    "zh": {
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
    },
    "en": {
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
    },
}


SWAP_NEIGHBOUR_TOLERANCE = 0.03  # half the 6.2% gap between two of swap-bytes-anchor-2048's mistakes (see there)


def _kv_reserve_max() -> tuple[float, dict]:
    m, hw = anchor_h100()
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
    m, hw = anchor_h100()
    reqs = (traces.Request(0, 0.0, HELD_PROMPT_TOKENS, HELD_SHORT),
            traces.Request(1, 0.0, HELD_PROMPT_TOKENS, HELD_LONG))
    short = scheduler.schedule(reqs, m, hw, "static", max_batch=2).requests[0]
    value = short.latency_per_token_s * 1e3
    return value, dict(short=HELD_SHORT, long=HELD_LONG, end=short.finish_s, done=short.done_s, value=value,
                       when_done=short.done_s / HELD_SHORT * 1e3)


def _paged_empty_slots() -> tuple[float, dict]:
    m, hw = anchor_h100()
    block = kv_layout.DEFAULT_BLOCK_SIZE
    u = kv_layout.fit(m, hw, "orca", "paged", block).usage
    value = u.empty_slots_per_sequence
    return value, dict(block=block, requests=u.requests, value=value, none=0)


def _swap_bytes() -> tuple[float, dict]:
    m, hw = anchor_h100()
    tokens = traces.MAX_TOKENS
    p = kv_layout.preemption(m, hw, tokens)
    kv = cache.kv_bytes_per_token(m)
    value = p.swap_bytes / 1e6
    return value, dict(tokens=tokens, kv=kv, kv_mb=p.kv_bytes / 1e6, state_mb=p.state_bytes / 1e6, value=value,
                       full=m.full_attention_layers, linear=m.linear_attention_layers, layers=m.layers,
                       all_layers=p.kv_bytes * m.layers / m.full_attention_layers / 1e6, round_trip=2 * value)


QUESTIONS = ask(
    TEXT,
    # 5%: a count of requests, four either side of 85.
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
)
