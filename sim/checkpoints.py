"""Numeric checkpoint questions: the simulator computes each answer and how it is derived, so a lesson's
"predict, then check" questions are graded by the same maths as its widgets.

A lesson asks the question in its own words and names the check by key (`::: widget predict` with
`question: KEY`); the student's number is graded against `Answer.value` with a relative tolerance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sim import cache, params, presets, roofline


@dataclass(frozen=True)
class Answer:
    value: float
    derivation: str  # the formula with the numbers filled in


@dataclass(frozen=True)
class Check:
    key: str
    unit: str  # shown beside the student's input, so the question's unit is never a trap
    tolerance: float  # accepted relative error, e.g. 0.1 = within 10%
    compute: Callable[[], Answer]

    def grade(self, guess: float) -> tuple[Answer, float, bool]:
        """The answer, the guess's relative error and whether it is within tolerance."""
        answer = self.compute()
        error = (guess - answer.value) / answer.value
        return answer, error, abs(error) <= self.tolerance


def _decode_intensity() -> Answer:
    m, hw = presets.model("llama-2-7b"), presets.hardware("a100-sxm-80gb")
    e = roofline.decode(m, hw, batch=1, context=1)
    return Answer(e.intensity,
                  f"2N ÷ 2N 字节：{e.flops / 1e9:,.2f} GFLOP ÷ {e.bytes / 1e9:,.2f} GB ≈ {e.intensity:.2f} FLOP/B")


def _ridge_gap() -> Answer:
    m, hw = presets.model("llama-2-7b"), presets.hardware("a100-sxm-80gb")
    intensity = roofline.decode(m, hw, batch=1, context=1).intensity
    ridge = roofline.ridge_point(hw)
    return Answer(ridge / intensity,
                  f"A100 拐点 {hw.peak_flops_per_s / 1e12:g} TFLOP/s ÷ {hw.bandwidth_bytes_per_s / 1e12:g} TB/s "
                  f"= {ridge:.1f} FLOP/B；÷ decode 强度 {intensity:.2f} = {ridge / intensity:.0f}×")


def _ceiling_7b_a100() -> Answer:
    m, hw = presets.model("llama-2-7b"), presets.hardware("a100-sxm-80gb")
    weights = params.matmul_weight_bytes(m)
    value = hw.bandwidth_bytes_per_s / weights
    return Answer(value,
                  f"带宽 ÷ 每步读的权重 = {hw.bandwidth_bytes_per_s / 1e12:g} TB/s ÷ {weights / 1e9:.2f} GB "
                  f"= {value:.0f} tok/s")


def _h100_vs_a100_decode() -> Answer:
    a100, h100 = presets.hardware("a100-sxm-80gb"), presets.hardware("h100-sxm")
    value = h100.bandwidth_bytes_per_s / a100.bandwidth_bytes_per_s
    compute = h100.peak_flops_per_s / a100.peak_flops_per_s
    return Answer(value,
                  f"decode 看带宽：{h100.bandwidth_bytes_per_s / 1e12:g} ÷ {a100.bandwidth_bytes_per_s / 1e12:g} "
                  f"= {value:.2f}×（算力是 {compute:.2f}×，用不上）")


def _kv_7b() -> Answer:
    m = presets.model("llama-2-7b")
    per_token = cache.kv_bytes_per_token(m)
    value = per_token * 2048 * 32
    a = m.attention
    return Answer(value / 1e9,
                  f"2 × {m.full_attention_layers} 层 × {a.kv_heads} 个 KV 头 × {a.head_dim} × 2 字节 "
                  f"= {per_token:,} B/token；× 2,048 token × 32 个请求 = {value / 1e9:.1f} GB")


def _e2e_latency() -> Answer:
    ttft_s, tpot_s, tokens = 0.2, 0.025, 500
    value = ttft_s + tpot_s * tokens
    return Answer(value, f"TTFT + TPOT × 输出长度 = 0.2 s + 0.025 s × {tokens} = {value:.1f} s")


def _tpot_share() -> Answer:
    ttft_s, tpot_s, tokens = 0.2, 0.025, 500
    share = tpot_s * tokens / (ttft_s + tpot_s * tokens) * 100
    return Answer(share, f"25 ms × {tokens} ÷ (200 ms + 25 ms × {tokens}) = 12.5 s ÷ 12.7 s = {share:.1f}%")


def _decode_mfu() -> Answer:
    m, hw = presets.model("llama-2-7b"), presets.hardware("a100-sxm-80gb")
    e = roofline.decode(m, hw, batch=1, context=512)
    value = e.attained_flops_per_s / hw.peak_flops_per_s * 100
    return Answer(value,
                  f"batch 1：每秒 {e.attained_flops_per_s / 1e12:.2f} TFLOP（= FLOPs ÷ 一步耗时）÷ 峰值 "
                  f"{hw.peak_flops_per_s / 1e12:g} TFLOP/s = {value:.2f}%")


CHECKS = {c.key: c for c in (
    Check("decode-intensity", "FLOP/B", 0.25, _decode_intensity),
    Check("ridge-gap-a100", "×", 0.10, _ridge_gap),
    Check("ceiling-7b-a100", "tok/s", 0.10, _ceiling_7b_a100),
    Check("h100-vs-a100-decode", "×", 0.05, _h100_vs_a100_decode),
    Check("kv-7b-2048-32", "GB", 0.05, _kv_7b),
    Check("e2e-latency", "s", 0.02, _e2e_latency),
    Check("tpot-share", "%", 0.02, _tpot_share),
    Check("decode-mfu-7b-a100", "%", 0.5, _decode_mfu),
)}
