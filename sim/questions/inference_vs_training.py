"""The questions of the lesson inference-vs-training, which its predict boxes name by key
(lessons/<lang>/inference-vs-training.md): how each answer and its common mistakes are computed, the tolerance it is
graded with, and the words of its derivation and of each mistake in every language (TEXT)."""

from __future__ import annotations

from sim.physics import cache, model_size, presets, roofline
from sim.questions.question import PERCENT, Mistake, Question, ask
from sim.serving import latency, request, serving

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
    },
}


GIB = 2**30  # bytes in a GiB; the course's GB is 1e9 bytes


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


QUESTIONS = ask(
    TEXT,
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
)
