"""The questions of the lesson tensor-parallel, which its predict boxes name by key
(lessons/<lang>/tensor-parallel.md): how each answer and its common mistakes are computed, the tolerance it is
graded with, and the words of its derivation and of each mistake in every language (TEXT)."""

from __future__ import annotations

from sim.physics import cache, model_size, parallel, presets
from sim.questions.question import Mistake, Question, ask

TEXT = {
    "zh": {
        "tp8-step-llama-2-70b":
            "每张 GPU 读自己那 1/{n} 的权重：{shard_gb:.2f} GB ÷ {bandwidth:.2f} TB/s = {matmuls_ms:.2f} ms，"
            "再读它那份 KV {attention_ms:.2f} ms，合计 {compute_ms:.2f} ms；"
            "然后是 2 × {layers} 层 = {count} 次 all-reduce，"
            "每次 {ar_us:.1f} µs，共 {comm_ms:.2f} ms。一步 {value:.2f} ms",
        "tp8-step-llama-2-70b.mistake.eight_times_faster":
            "{mistake:.2f} ms 是把一张卡（假设放得下）的 {tp1_ms:.2f} ms 直接除以 {n}。每张卡自己的活确实只剩八分之一，"
            "可每层还有两次 all-reduce 要等：{count} 次 × {ar_us:.1f} µs = {comm_ms:.2f} ms，"
            "和算的部分差不多一样长。一步 {value:.2f} ms。",
        "tp8-step-llama-2-70b.mistake.one_per_layer":
            "{mistake:.2f} ms 每层只算了一次 all-reduce。Megatron-LM 的切法每层有两次：注意力的输出投影之后一次，"
            "MLP 的下投影之后一次，{layers} 层就是 {count} 次：{compute_ms:.2f} ms + {count} × {ar_us:.1f} µs = "
            "{value:.2f} ms。",
        "tp8-all-reduce-4mib":
            "小消息的底线 {floor:.0f} µs（Vidur 在 H100 DGX 上 1 MiB 以内各点中位数的中位数）+ 环形算法的传输 "
            "2 × {less} ÷ {n} × {size:,} B ÷ {bandwidth:.0f} GB/s = {ring:.2f} µs，合计 {value:.1f} µs",
        "tp8-all-reduce-4mib.mistake.bytes_over_bandwidth":
            "{mistake:.2f} µs 是 {size:,} B ÷ {bandwidth:.0f} GB/s，把 all-reduce 当成了一次按带宽算的搬运。"
            "即使是这样大小的消息，时间大半还花在启动、同步这些固定开销上：实测大约 {floor:.0f} µs 起步，"
            "传输本身（按环形算法每字节要过链路 2 × {less} ÷ {n} 次）是 {ring:.2f} µs。合计 {value:.1f} µs。",
        "tp8-all-reduce-4mib.mistake.ring_without_floor":
            "{mistake:.2f} µs 是环形算法的传输时间，2 × {less} ÷ {n} × {size:,} B ÷ {bandwidth:.0f} GB/s，公式没错，"
            "但漏了每次调用的固定开销：1 MiB 以内，Vidur 测到的时间在 {floor:.0f} µs 上下，几乎不随大小变。"
            "{floor:.0f} + {ring:.2f} = {value:.1f} µs。",
        "tp8-all-reduce-4mib.mistake.proportional":
            "{mistake:.1f} µs 是把 1 MiB 时的 {base:.1f} µs 乘了 {ratio}。消息大了 {ratio} 倍，涨的只有传输那一项"
            "（{base_ring:.2f} µs 变成 {ring:.2f} µs），{floor:.0f} µs 的固定开销一次调用只付一次：{value:.1f} µs。",
        "tp4-requests-llama-2-70b":
            "每张卡：{memory_gb:.2f} GB − 自己那份权重 {shard_gb:.2f} GB = {free_gb:.2f} GB；每个请求在这张卡上只存 "
            "{kv_heads} 个 K/V 头（共 {kv_total} 个）：{context:,} × {kv_gpu:,} B = {request_mb:.1f} MB；"
            "{free_gb:.2f} GB ÷ {request_mb:.1f} MB = {value:.0f} 个",
        "tp4-requests-llama-2-70b.mistake.unchanged":
            "{mistake:.0f} 个是 TP 2 时的数，好像张量并行不改变放得下多少请求。TP 4 时每张卡的权重从 "
            "{shard2_gb:.2f} GB 减到 {shard_gb:.2f} GB，每个请求在每张卡上的 KV 也减半（{kv_heads} 个 K/V 头）："
            "{free_gb:.2f} GB ÷ {request_mb:.1f} MB = {value:.0f} 个。",
        "tp4-requests-llama-2-70b.mistake.proportional":
            "{mistake:.0f} 个是按卡数翻倍。可翻倍的不只是卡：每张卡上的权重减半，腾出来的地方从 {free2_gb:.2f} GB "
            "涨到 {free_gb:.2f} GB，而每个请求在每张卡上的 KV 又减半成 {request_mb:.1f} MB：{value:.0f} 个。",
    },
    "en": {
        "tp8-step-llama-2-70b":
            "each GPU reads its 1/{n} of the weights: {shard_gb:.2f} GB ÷ {bandwidth:.2f} TB/s = {matmuls_ms:.2f} ms, "
            "and its share of the KV in {attention_ms:.2f} ms, {compute_ms:.2f} ms in all; then 2 × {layers} layers "
            "= {count} all-reduces of {ar_us:.1f} µs, {comm_ms:.2f} ms. A step: {value:.2f} ms",
        "tp8-step-llama-2-70b.mistake.eight_times_faster":
            "{mistake:.2f} ms divides one GPU's {tp1_ms:.2f} ms (as if it fit) by {n}. Each GPU's own work is an "
            "eighth, but every layer still waits for two all-reduces: {count} × {ar_us:.1f} µs = {comm_ms:.2f} ms, "
            "about as long as the work. A step: {value:.2f} ms.",
        "tp8-step-llama-2-70b.mistake.one_per_layer":
            "{mistake:.2f} ms counts one all-reduce per layer. Megatron-LM's split needs two, one after attention's "
            "output projection and one after the MLP's down projection, so {layers} layers make {count}: "
            "{compute_ms:.2f} ms + {count} × {ar_us:.1f} µs = {value:.2f} ms.",
        "tp8-all-reduce-4mib":
            "a small-message floor of {floor:.0f} µs (the median of Vidur's medians on an H100 DGX, up to 1 MiB) + "
            "the ring's transfer, 2 × {less} ÷ {n} × {size:,} B ÷ {bandwidth:.0f} GB/s = {ring:.2f} µs: {value:.1f} µs",
        "tp8-all-reduce-4mib.mistake.bytes_over_bandwidth":
            "{mistake:.2f} µs is {size:,} B ÷ {bandwidth:.0f} GB/s, the all-reduce priced as a copy at the link's "
            "speed. Even at this size most of the time goes to fixed costs, launching and synchronising: measured, "
            "it starts at about {floor:.0f} µs, and the transfer itself (each byte crossing the link 2 × {less} ÷ {n} "
            "times in a ring) takes {ring:.2f} µs. Together: {value:.1f} µs.",
        "tp8-all-reduce-4mib.mistake.ring_without_floor":
            "{mistake:.2f} µs is the ring's transfer time, 2 × {less} ÷ {n} × {size:,} B ÷ {bandwidth:.0f} GB/s: the "
            "formula is right, but it leaves out the fixed cost of each call, which Vidur measured at about "
            "{floor:.0f} µs for any size up to 1 MiB. {floor:.0f} + {ring:.2f} = {value:.1f} µs.",
        "tp8-all-reduce-4mib.mistake.proportional":
            "{mistake:.1f} µs multiplies the {base:.1f} µs of 1 MiB by {ratio}. A message {ratio} times larger "
            "only makes the transfer longer ({base_ring:.2f} µs becomes {ring:.2f} µs); the {floor:.0f} µs of fixed "
            "cost is paid once a call: {value:.1f} µs.",
        "tp4-requests-llama-2-70b":
            "per GPU: {memory_gb:.2f} GB − its {shard_gb:.2f} GB of weights = {free_gb:.2f} GB; each request keeps "
            "only {kv_heads} of its {kv_total} K/V heads there: {context:,} × {kv_gpu:,} B = {request_mb:.1f} MB; "
            "{free_gb:.2f} GB ÷ {request_mb:.1f} MB = {value:.0f}",
        "tp4-requests-llama-2-70b.mistake.unchanged":
            "{mistake:.0f} is the count at TP 2, as if tensor parallelism did not change how many requests fit. At "
            "TP 4 each GPU's weights drop from {shard2_gb:.2f} GB to {shard_gb:.2f} GB, and each request's KV on each "
            "GPU halves too ({kv_heads} K/V heads): {free_gb:.2f} GB ÷ {request_mb:.1f} MB = {value:.0f}.",
        "tp4-requests-llama-2-70b.mistake.proportional":
            "{mistake:.0f} doubles with the GPUs. More than the GPUs doubles: each GPU's weights halve, so the room "
            "left grows from {free2_gb:.2f} GB to {free_gb:.2f} GB, while each request's KV on each GPU halves to "
            "{request_mb:.1f} MB: {value:.0f}.",
    },
}

# The lesson's worked case: Llama-2-70B decoding 64 requests at 1,024 tokens of context on H100s joined by NVLink
# through NVSwitch (the tp-step widget's defaults), every all-reduce timed by the formula (floor + ring term).
MODEL, GPU, BATCH, CONTEXT = "llama-2-70b", "h100-sxm", 64, 1024
MIB = 2**20


def _case():
    return presets.model(MODEL), presets.hardware(GPU)


def _step_tp8() -> tuple[float, dict]:
    m, hw = _case()
    n = 8
    step = parallel.decode(m, hw, n, BATCH, CONTEXT)
    # One GPU holding everything: what dividing by n starts from (the lesson says "as if it fit").
    tp1 = parallel.decode(m, hw, 1, BATCH, CONTEXT)
    matmuls, attention = step.per_gpu.op("matmuls"), step.per_gpu.op("attention")
    value = step.time_s * 1e3
    return value, dict(n=n, shard_gb=matmuls.bytes / 1e9, bandwidth=hw.bandwidth_bytes_per_s / 1e12,
                       matmuls_ms=matmuls.time_s * 1e3, attention_ms=attention.time_s * 1e3,
                       compute_ms=step.compute_time_s * 1e3, layers=m.layers, count=step.all_reduces,
                       ar_us=step.all_reduce_s * 1e6, comm_ms=step.communication_time_s * 1e3, value=value,
                       tp1_ms=tp1.time_s * 1e3)


def _all_reduce_4mib() -> tuple[float, dict]:
    m, hw = _case()
    n, link, batch = 8, parallel.default_interconnect(hw), 4 * BATCH
    base = BATCH * m.hidden * parallel.ACTIVATION_BYTES  # 1 MiB: one all-reduce of the worked step
    size = batch * m.hidden * parallel.ACTIVATION_BYTES  # 4 MiB: the same at batch 256
    floor = parallel.floor_for(link, n)
    value = parallel.all_reduce_s(link, size, n) * 1e6
    return value, dict(n=n, less=n - 1, size=size, bandwidth=link.bandwidth_bytes_per_s / 1e9, floor=floor * 1e6,
                       ring=parallel.ring_all_reduce_time(size, n, link.bandwidth_bytes_per_s) * 1e6, value=value,
                       copy=size / link.bandwidth_bytes_per_s * 1e6, ratio=size // base,
                       base=parallel.all_reduce_s(link, base, n) * 1e6,
                       base_ring=parallel.ring_all_reduce_time(base, n, link.bandwidth_bytes_per_s) * 1e6)


def _requests_tp4() -> tuple[float, dict]:
    m, hw = _case()

    def per_gpu(n):
        s = parallel.shard(m, n)
        weights = model_size.resident_weight_bytes(s)
        return s, weights, hw.memory_bytes - weights

    s4, shard4, free4 = per_gpu(4)
    _, shard2, free2 = per_gpu(2)
    kv_gpu = cache.kv_bytes_per_token(s4)
    value = parallel.max_batch(m, hw, 4, CONTEXT)
    return value, dict(memory_gb=hw.memory_bytes / 1e9, shard_gb=shard4 / 1e9, free_gb=free4 / 1e9,
                       kv_heads=parallel.kv_heads_per_gpu(m, 4), kv_total=m.attention.kv_heads, context=CONTEXT,
                       kv_gpu=kv_gpu, request_mb=CONTEXT * kv_gpu / 1e6, value=value,
                       tp2=parallel.max_batch(m, hw, 2, CONTEXT), shard2_gb=shard2 / 1e9, free2_gb=free2 / 1e9)


QUESTIONS = ask(
    TEXT,
    # 10%: dividing by 8 (the all-reduces forgotten) is half the answer, one all-reduce a layer a quarter short.
    Question("tp8-step-llama-2-70b", "ms", 0.10, _step_tp8, (
        Mistake("eight_times_faster", lambda n: n["tp1_ms"] / n["n"]),
        Mistake("one_per_layer", lambda n: n["compute_ms"] + n["layers"] * n["ar_us"] / 1e3),
    )),
    # 15%: the formula's floor + ring and Vidur's median at 4 MiB (51 µs) are both right; pricing the message at the
    # link's bandwidth is a fifth of it or less, and scaling the 1 MiB all-reduce by 4 three times too much.
    Question("tp8-all-reduce-4mib", "µs", 0.15, _all_reduce_4mib, (
        Mistake("bytes_over_bandwidth", lambda n: n["copy"]),
        Mistake("ring_without_floor", lambda n: n["ring"]),
        Mistake("proportional", lambda n: n["ratio"] * n["base"]),
    )),
    # 10%: a count of about 600; the TP 2 count and its double are far below.
    Question("tp4-requests-llama-2-70b", "", 0.10, _requests_tp4, (
        Mistake("unchanged", lambda n: n["tp2"]),
        Mistake("proportional", lambda n: 2 * n["tp2"]),
    )),
)
