"""The questions of the lesson moe, which its predict boxes name by key (lessons/<lang>/moe.md): how each answer and
its common mistakes are computed, the tolerance it is graded with, and the words of its derivation and of each
mistake in every language (TEXT)."""

from __future__ import annotations

from sim.physics import feasibility, model_size, moe, presets, routing
from sim.questions.question import Mistake, Question, ask

TEXT = {
    "zh": {
        "moe-touched-deepseek-b64":
            "一个 token 错过某个专家的概率是 1 − {k} ÷ {experts}，{batch} 个 token 全都错过它的概率是 "
            "({keep} ÷ {experts})^{batch} = {miss:.3f}；{experts} 个专家里被碰到的，期望是 "
            "{experts} × (1 − {miss:.3f}) = {value:.1f} 个",
        "moe-touched-deepseek-b64.mistake.active_only":
            "{mistake:.0f} 个是一个 token 的 {k} 个专家，好像不管 batch 多大，一步都只读激活参数。{batch} 个 token "
            "各挑各的 {k} 个，合起来 {picks} 次挑选，被挑中至少一次的专家都要读一遍：{value:.1f} 个。",
        "moe-touched-deepseek-b64.mistake.no_overlap":
            "{mistake:.0f} 个把 {batch} × {k} 次挑选当成了 {picks} 个不同的专家。可这一层总共只有 {experts} 个专家，"
            "而且 token 之间会撞车：几个 token 挑中同一个专家，它也只读一遍。不同专家的期望个数是 "
            "{experts} × (1 − ({keep} ÷ {experts})^{batch}) = {value:.1f} 个。",
        "moe-touched-deepseek-b64.mistake.capped":
            "{mistake:.0f} 个是以为 {picks} 次挑选多过 {experts} 个专家，就能把每个专家都挑到。挑选是随机落下的，"
            "有的专家被挑了好几次，有的一次也没有：每个专家都有 {miss:.3f} 的概率谁也没挑中它，所以期望是 "
            "{value:.1f} 个。",
        "moe-advantage-qwen-b16":
            "{batch} 个 token 在每一层碰到 {experts} × (1 − ({keep} ÷ {experts})^{batch}) = {touched:.1f} 个专家"
            "（共 {experts} 个），这一步读 {moe_gb:.2f} GB 权重，{moe_ms:.2f} ms；同样总大小的稠密模型读全部 "
            "{dense_gb:.2f} GB，{dense_ms:.2f} ms。{dense_ms:.2f} ÷ {moe_ms:.2f} = {value:.2f}",
        "moe-advantage-qwen-b16.mistake.parameter_ratio":
            "{mistake:.2f} 倍是总参数除以激活参数，{total_b:.2f}B ÷ {active_b:.2f}B：对一个 token 成立，对一个 batch "
            "不成立。batch {batch} 时每层碰到 {touched:.1f} 个专家（共 {experts} 个），这一步读的是 {moe_gb:.2f} GB，"
            "不是 {active_gb:.2f} GB：{dense_ms:.2f} ÷ {moe_ms:.2f} = {value:.2f} 倍。",
        "moe-advantage-qwen-b16.mistake.active_at_any_batch":
            "{mistake:.2f} 倍是把 MoE 的一步当成不管 batch 多大都只读激活权重（{active_gb:.2f} GB，"
            "{active_ms:.2f} ms）。可 {batch} 个 token 挑中的专家各不相同，每层有 {touched:.1f} 个专家要读，"
            "一步 {moe_ms:.2f} ms：{dense_ms:.2f} ÷ {moe_ms:.2f} = {value:.2f} 倍。",
        "ep8-step-deepseek-v3":
            "每层 {experts} 个专家，每张卡存 {held} 个；它的 MoE 层看到 {n} 张卡的全部 {seen} 个 token，自己的 "
            "{held} 个专家里碰到 {touched:.2f} 个：读 {weights_gb:.1f} GB 权重 {matmuls_ms:.2f} ms，注意力 "
            "{attention_ms:.2f} ms；再加 2 × {moe_layers} 个 MoE 层 = {count} 次 all-to-all，每次 {msg_mib:.2f} MiB、"
            "{a2a_us:.1f} µs，共 {comm_ms:.2f} ms。一步 {value:.2f} ms",
        "ep8-step-deepseek-v3.mistake.no_communication":
            "{mistake:.2f} ms 只算了每张卡自己的活，好像把专家分到几张卡上就不用通信了。每个 MoE 层都要把每个 token "
            "的隐藏状态送到存着它那些专家的卡上，再把结果取回来：{count} 次 all-to-all × {a2a_us:.1f} µs = "
            "{comm_ms:.2f} ms。一步 {value:.2f} ms。",
        "ep8-step-deepseek-v3.mistake.one_gpu_over_n":
            "{mistake:.2f} ms 是把一张卡（假设放得下）在 batch {batch} 的一步 {one_ms:.2f} ms 除以 {n}。可每张卡"
            "仍然自己服务 {batch} 个请求，它们的注意力和 KV 只能自己读；它的专家还要接 {n} 张卡的 {seen} 个 token，"
            "{held} 个几乎全被碰到：自己的活 {compute_ms:.2f} ms，加 all-to-all {comm_ms:.2f} ms，一步 "
            "{value:.2f} ms。",
    },
    "en": {
        "moe-touched-deepseek-b64":
            "one token misses a given expert with probability 1 − {k} ÷ {experts}, and all {batch} tokens miss it "
            "with ({keep} ÷ {experts})^{batch} = {miss:.3f}; of the {experts} experts, "
            "{experts} × (1 − {miss:.3f}) = {value:.1f} are touched in expectation",
        "moe-touched-deepseek-b64.mistake.active_only":
            "{mistake:.0f} is one token's {k} experts, as if a step read only the active parameters whatever the "
            "batch. Each of the {batch} tokens picks its own {k}, {picks} picks in all, and every expert picked at "
            "least once is read: {value:.1f}.",
        "moe-touched-deepseek-b64.mistake.no_overlap":
            "{mistake:.0f} counts {batch} × {k} picks as {picks} different experts. The layer has only {experts}, "
            "and tokens collide: an expert several tokens pick is still read once. The expected count of distinct "
            "ones is {experts} × (1 − ({keep} ÷ {experts})^{batch}) = {value:.1f}.",
        "moe-touched-deepseek-b64.mistake.capped":
            "{mistake:.0f} assumes that {picks} picks, more than the {experts} experts, reach every one of them. "
            "The picks land at random, several on some experts and none on others: each expert is missed by every "
            "token with probability {miss:.3f}, which leaves {value:.1f} in expectation.",
        "moe-advantage-qwen-b16":
            "{batch} tokens touch {experts} × (1 − ({keep} ÷ {experts})^{batch}) = {touched:.1f} of the {experts} "
            "experts in each layer, so the step reads {moe_gb:.2f} GB of weights in {moe_ms:.2f} ms; a dense model of "
            "the same total size reads all {dense_gb:.2f} GB in {dense_ms:.2f} ms. "
            "{dense_ms:.2f} ÷ {moe_ms:.2f} = {value:.2f}",
        "moe-advantage-qwen-b16.mistake.parameter_ratio":
            "{mistake:.2f}× is the total parameters over the active ones, {total_b:.2f}B ÷ {active_b:.2f}B: true of "
            "one token, not of a batch. At batch {batch} the tokens touch {touched:.1f} of the {experts} experts in "
            "each layer, and the step reads {moe_gb:.2f} GB, not {active_gb:.2f} GB: "
            "{dense_ms:.2f} ÷ {moe_ms:.2f} = {value:.2f}×.",
        "moe-advantage-qwen-b16.mistake.active_at_any_batch":
            "{mistake:.2f}× prices the MoE's step as if it read only the active weights ({active_gb:.2f} GB, "
            "{active_ms:.2f} ms) at any batch. The {batch} tokens pick different experts, {touched:.1f} of them in "
            "each layer, and the step takes {moe_ms:.2f} ms: {dense_ms:.2f} ÷ {moe_ms:.2f} = {value:.2f}×.",
        "ep8-step-deepseek-v3":
            "of each layer's {experts} experts each GPU holds {held}; its MoE layers see all {n} GPUs' {seen} "
            "tokens, and of its {held} experts they touch {touched:.2f}: it reads {weights_gb:.1f} GB of weights in "
            "{matmuls_ms:.2f} ms, and attention takes {attention_ms:.2f} ms; then 2 × {moe_layers} MoE layers = "
            "{count} all-to-alls of {msg_mib:.2f} MiB, {a2a_us:.1f} µs each, {comm_ms:.2f} ms. A step: {value:.2f} ms",
        "ep8-step-deepseek-v3.mistake.no_communication":
            "{mistake:.2f} ms is each GPU's own work alone, as if spreading the experts removed the talk between "
            "GPUs. Every MoE layer sends each token's hidden state to the GPUs that hold its experts and brings the "
            "results back: {count} all-to-alls × {a2a_us:.1f} µs = {comm_ms:.2f} ms more. A step: {value:.2f} ms.",
        "ep8-step-deepseek-v3.mistake.one_gpu_over_n":
            "{mistake:.2f} ms divides one GPU's step at batch {batch} ({one_ms:.2f} ms, as if it fit) by {n}. Each "
            "GPU still serves {batch} requests of its own, whose attention and KV only it reads, and its experts "
            "take the {seen} tokens of all {n} GPUs, so nearly all {held} are touched: {compute_ms:.2f} ms of its "
            "own work and {comm_ms:.2f} ms of all-to-alls, {value:.2f} ms.",
    },
}

# The lesson's worked cases: DeepSeek-V3 (top-8 of 256 routed experts) at a decode batch of 64; Qwen3-30B-A3B (top-8
# of 128) on one H100, which holds it, at batch 16 and 1,024 tokens of context; DeepSeek-V3 spread over 8 H200s by
# expert parallelism (NVLink, the ep-layout widget's defaults), 32 requests of 4,096 tokens on each. Routing uniform.
DEEPSEEK, QWEN = "deepseek-v3", "qwen3-30b-a3b"


def _touched_deepseek_b64() -> tuple[float, dict]:
    e, batch = presets.model(DEEPSEEK).experts, 64
    miss = routing.missed(e.routed, e.per_token, batch)
    value = routing.expected_touched(e.routed, e.per_token, batch)
    return value, dict(experts=e.routed, k=e.per_token, keep=e.routed - e.per_token, batch=batch, miss=miss,
                       picks=batch * e.per_token, value=value)


def _advantage_qwen_b16() -> tuple[float, dict]:
    m, hw, batch, context = presets.model(QWEN), presets.hardware("h100-sxm"), 16, 1024
    step = moe.decode(m, hw, batch, context)
    dense = moe.as_dense(m, hw, batch, context, "total")
    active = moe.as_dense(m, hw, batch, context, "active")
    value = moe.advantage(m, hw, batch, context)
    return value, dict(batch=batch, experts=m.experts.routed, keep=m.experts.routed - m.experts.per_token,
                       touched=routing.touched(m, batch), moe_gb=routing.weights_read_bytes(m, batch) / 1e9,
                       moe_ms=step.time_s * 1e3, dense_gb=model_size.matmul_weight_bytes(m) / 1e9,
                       dense_ms=dense.time_s * 1e3, active_gb=active.op("matmuls").bytes / 1e9,
                       active_ms=active.time_s * 1e3, total_b=model_size.matmul_params(m) / 1e9,
                       active_b=model_size.active_params(m) / 1e9, value=value)


def _step_ep8_deepseek() -> tuple[float, dict]:
    m, hw, n, batch, context = presets.model(DEEPSEEK), presets.hardware("h200-sxm"), 8, 32, 4096
    step = moe.decode_ep(m, hw, n, batch, context)
    matmuls, attention = step.per_gpu.op("matmuls"), step.per_gpu.op("attention")
    with feasibility.unquoted():  # one GPU holding all of it: what dividing by n starts from ("as if it fit")
        one = moe.decode(m, hw, batch, context)
    value = step.time_s * 1e3
    return value, dict(n=n, experts=m.experts.routed, held=step.held, seen=n * batch, touched=step.touched,
                       weights_gb=matmuls.bytes / 1e9, matmuls_ms=matmuls.time_s * 1e3,
                       attention_ms=attention.time_s * 1e3, compute_ms=step.compute_time_s * 1e3,
                       moe_layers=m.moe_layers, count=step.all_to_alls, msg_mib=step.message_bytes / 2**20,
                       a2a_us=step.all_to_all_s * 1e6, comm_ms=step.communication_time_s * 1e3, batch=batch,
                       one_ms=one.time_s * 1e3, value=value)


QUESTIONS = ask(
    TEXT,
    # 5%: 256 x (1 - e^-2) = 221.4 (the exponential's shortcut) is right; "all 256" is 15% too many.
    Question("moe-touched-deepseek-b64", "", 0.05, _touched_deepseek_b64, (
        Mistake("active_only", lambda n: n["k"]),
        Mistake("no_overlap", lambda n: n["picks"]),
        Mistake("capped", lambda n: min(n["picks"], n["experts"])),
    )),
    # 10%: 1 / (the share of experts touched) is right within it; the parameter ratio is six times the answer.
    Question("moe-advantage-qwen-b16", "×", 0.10, _advantage_qwen_b16, (
        Mistake("parameter_ratio", lambda n: n["total_b"] / n["active_b"]),
        Mistake("active_at_any_batch", lambda n: n["dense_ms"] / n["active_ms"]),
    )),
    # 10%: leaving out the all-to-alls is 17% short, dividing one GPU's step by 8 less than half.
    Question("ep8-step-deepseek-v3", "ms", 0.10, _step_ep8_deepseek, (
        Mistake("no_communication", lambda n: n["compute_ms"]),
        Mistake("one_gpu_over_n", lambda n: n["one_ms"] / n["n"]),
    )),
)
