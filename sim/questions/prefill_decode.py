"""The questions of the lesson prefill-decode, which its predict boxes name by key (lessons/<lang>/prefill-decode.md):
how each answer and its common mistakes are computed, the tolerance it is graded with, and the words of its
derivation and of each mistake in every language (TEXT)."""

from __future__ import annotations

from sim.physics import measured, model_size, presets, roofline
from sim.questions.question import Mistake, Question, ask
from sim.serving import request, serving

TEXT = {
    "zh": {
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
    },
    "en": {
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
    },
}


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


QUESTIONS = ask(
    TEXT,
    Question("measured-knee-a100", "tokens", 0.25, _measured_knee_a100, (
        Mistake("every_token", lambda n: 1),
        Mistake("one_byte", lambda n: n["ridge"] / 2),
        Mistake("fp32", lambda n: n["ridge"] * 2),
    )),
    Question("decode-speed-anchor-h100", "tok/s", 0.10, _decode_speed_anchor, (
        Mistake("compute", lambda n: 1 / n["compute_only_s"]),
        Mistake("per_parameter", lambda n: n["bandwidth_bytes"] / n["params"]),
    )),
)
