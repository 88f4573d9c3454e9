"""The questions of the lesson quantization, which its predict boxes name by key (lessons/<lang>/quantization.md): how
each answer and its common mistakes are computed, the tolerance it is graded with, and the words of its derivation
and of each mistake in every language (TEXT)."""

from __future__ import annotations

from sim.physics import model_size, presets
from sim.questions.question import Mistake, Question, ask
from sim.techniques import quantization

TEXT = {
    "zh": {
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
    },
    "en": {
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
    },
}


# The anchor on one H100 at 1,024 tokens of context (the quant-roofline widget's defaults).
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


QUESTIONS = ask(
    TEXT,
    # 8%: 16 bits ÷ 4 (4×) lies 20% above the answer (3.32×).
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
)
