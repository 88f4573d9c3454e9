"""The numeric questions lessons ask in "predict, then check" boxes: the simulator computes each answer and
how it is derived, so that a lesson's questions are graded by the same maths as its widgets.

A lesson asks the question in its own words and names it by key (`::: widget predict` with
`question: KEY`); the student's number is graded against `Answer.value` with a relative tolerance. Each
question's derivation is its TEXT entry (same key) in the page's language, filled with the numbers its
compute function gives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sim import cache, model_size, presets, roofline

TEXT = {
    "zh": {
        "decode-intensity": "2N ÷ 2N 字节：{gflop:,.2f} GFLOP ÷ {gb:,.2f} GB ≈ {intensity:.2f} FLOP/B",
        "ridge-gap-a100": "A100 拐点 {peak:g} TFLOP/s ÷ {bandwidth:g} TB/s = {ridge:.1f} FLOP/B；"
                          "÷ decode 强度 {intensity:.2f} = {gap:.0f}×",
        "ceiling-7b-a100": "带宽 ÷ 每步读的权重 = {bandwidth:g} TB/s ÷ {gb:.2f} GB = {value:.0f} tok/s",
        "h100-vs-a100-decode": "decode 看带宽：{h100:g} ÷ {a100:g} = {value:.2f}×（算力是 {compute:.2f}×，用不上）",
        "kv-7b-2048-32": "2 × {layers} 层 × {kv_heads} 个 KV 头 × {head_dim} × 2 字节 = {per_token:,} B/token；"
                         "× {tokens:,} token × {requests} 个请求 = {gb:.1f} GB",
        "e2e-latency": "TTFT + TPOT × 输出长度 = {ttft:g} s + {tpot:g} s × {tokens} = {value:.1f} s",
        "tpot-share": "{tpot:g} ms × {tokens} ÷ ({ttft:g} ms + {tpot:g} ms × {tokens}) = {decode:g} s ÷ {total:g} s "
                      "= {share:.1f}%",
        "decode-mfu-7b-a100": "batch {batch}：每秒 {attained:.2f} TFLOP（= FLOPs ÷ 一步耗时）÷ 峰值 {peak:g} TFLOP/s "
                              "= {value:.2f}%",
    },
    "en": {
        "decode-intensity": "2N FLOP ÷ 2N bytes: {gflop:,.2f} GFLOP ÷ {gb:,.2f} GB ≈ {intensity:.2f} FLOP/B",
        "ridge-gap-a100": "A100 ridge point {peak:g} TFLOP/s ÷ {bandwidth:g} TB/s = {ridge:.1f} FLOP/B; "
                          "÷ decode intensity {intensity:.2f} = {gap:.0f}×",
        "ceiling-7b-a100": "bandwidth ÷ weights read per step = {bandwidth:g} TB/s ÷ {gb:.2f} GB = {value:.0f} tok/s",
        "h100-vs-a100-decode": "decode follows bandwidth: {h100:g} ÷ {a100:g} = {value:.2f}× "
                               "(compute is {compute:.2f}×, which decode cannot use)",
        "kv-7b-2048-32": "2 × {layers} layers × {kv_heads} KV heads × {head_dim} × 2 bytes = {per_token:,} B/token; "
                         "× {tokens:,} tokens × {requests} requests = {gb:.1f} GB",
        "e2e-latency": "TTFT + TPOT × output length = {ttft:g} s + {tpot:g} s × {tokens} = {value:.1f} s",
        "tpot-share": "{tpot:g} ms × {tokens} ÷ ({ttft:g} ms + {tpot:g} ms × {tokens}) = {decode:g} s ÷ {total:g} s "
                      "= {share:.1f}%",
        "decode-mfu-7b-a100": "batch {batch}: {attained:.2f} TFLOP per second (= FLOPs ÷ step time) ÷ peak "
                              "{peak:g} TFLOP/s = {value:.2f}%",
    },
}


@dataclass(frozen=True)
class Answer:
    value: float
    derivation: str  # the formula with the numbers filled in


@dataclass(frozen=True)
class Question:
    key: str  # also the key of its derivation in TEXT
    unit: str  # shown beside the student's input, so the question's unit is never a trap
    tolerance: float  # accepted relative error, e.g. 0.1 = within 10%
    compute: Callable[[], tuple[float, dict]]  # the answer, and the numbers its derivation shows

    def answer(self, lang: str) -> Answer:
        """The answer, derived in `lang`'s words."""
        value, numbers = self.compute()
        return Answer(value, TEXT[lang][self.key].format(**numbers))

    def grade(self, guess: float, lang: str) -> tuple[Answer, float, bool]:
        """The answer, the guess's relative error and whether it is within tolerance."""
        answer = self.answer(lang)
        error = (guess - answer.value) / answer.value
        return answer, error, abs(error) <= self.tolerance


def _decode_intensity() -> tuple[float, dict]:
    m, hw = presets.model("llama-2-7b"), presets.hardware("a100-sxm-80gb")
    e = roofline.decode(m, hw, batch=1, context=1)
    return e.intensity, dict(gflop=e.flops / 1e9, gb=e.bytes / 1e9, intensity=e.intensity)


def _ridge_gap() -> tuple[float, dict]:
    m, hw = presets.model("llama-2-7b"), presets.hardware("a100-sxm-80gb")
    intensity = roofline.decode(m, hw, batch=1, context=1).intensity
    ridge = roofline.ridge_point(hw)
    return ridge / intensity, dict(peak=hw.peak_flops_per_s / 1e12, bandwidth=hw.bandwidth_bytes_per_s / 1e12,
                                   ridge=ridge, intensity=intensity, gap=ridge / intensity)


def _ceiling_7b_a100() -> tuple[float, dict]:
    m, hw = presets.model("llama-2-7b"), presets.hardware("a100-sxm-80gb")
    weights = model_size.matmul_weight_bytes(m)
    value = hw.bandwidth_bytes_per_s / weights
    return value, dict(bandwidth=hw.bandwidth_bytes_per_s / 1e12, gb=weights / 1e9, value=value)


def _h100_vs_a100_decode() -> tuple[float, dict]:
    a100, h100 = presets.hardware("a100-sxm-80gb"), presets.hardware("h100-sxm")
    value = h100.bandwidth_bytes_per_s / a100.bandwidth_bytes_per_s
    compute = h100.peak_flops_per_s / a100.peak_flops_per_s
    return value, dict(h100=h100.bandwidth_bytes_per_s / 1e12, a100=a100.bandwidth_bytes_per_s / 1e12,
                       value=value, compute=compute)


def _kv_7b() -> tuple[float, dict]:
    m = presets.model("llama-2-7b")
    tokens, requests = 2048, 32
    per_token = cache.kv_bytes_per_token(m)
    value = per_token * tokens * requests
    a = m.attention
    return value / 1e9, dict(layers=m.full_attention_layers, kv_heads=a.kv_heads, head_dim=a.head_dim,
                             per_token=per_token, tokens=tokens, requests=requests, gb=value / 1e9)


def _e2e_latency() -> tuple[float, dict]:
    ttft_s, tpot_s, tokens = 0.2, 0.025, 500
    value = ttft_s + tpot_s * tokens
    return value, dict(ttft=ttft_s, tpot=tpot_s, tokens=tokens, value=value)


def _tpot_share() -> tuple[float, dict]:
    ttft_s, tpot_s, tokens = 0.2, 0.025, 500
    share = tpot_s * tokens / (ttft_s + tpot_s * tokens) * 100
    return share, dict(tpot=tpot_s * 1e3, ttft=ttft_s * 1e3, tokens=tokens, decode=tpot_s * tokens,
                       total=ttft_s + tpot_s * tokens, share=share)


def _decode_mfu() -> tuple[float, dict]:
    m, hw = presets.model("llama-2-7b"), presets.hardware("a100-sxm-80gb")
    batch = 1
    e = roofline.decode(m, hw, batch=batch, context=512)
    value = e.attained_flops_per_s / hw.peak_flops_per_s * 100
    return value, dict(batch=batch, attained=e.attained_flops_per_s / 1e12, peak=hw.peak_flops_per_s / 1e12,
                       value=value)


QUESTIONS = {q.key: q for q in (
    Question("decode-intensity", "FLOP/B", 0.25, _decode_intensity),
    Question("ridge-gap-a100", "×", 0.10, _ridge_gap),
    Question("ceiling-7b-a100", "tok/s", 0.10, _ceiling_7b_a100),
    Question("h100-vs-a100-decode", "×", 0.05, _h100_vs_a100_decode),
    Question("kv-7b-2048-32", "GB", 0.05, _kv_7b),
    Question("e2e-latency", "s", 0.02, _e2e_latency),
    Question("tpot-share", "%", 0.02, _tpot_share),
    Question("decode-mfu-7b-a100", "%", 0.5, _decode_mfu),
)}
