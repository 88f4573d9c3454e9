"""Roofline estimates of one prefill and one decode step.

A step can finish no sooner than its FLOPs at peak compute, nor sooner than its bytes at full
bandwidth: time = max(FLOPs / peak, bytes / bandwidth) (Williams, Waterman & Patterson, 2009).
These are lower bounds on time (upper bounds on speed), not measurements.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from sim import cache, model_size
from sim.presets import Hardware, Model
from sim.validate import check_int

MAX_TOKENS = 10_000_000
MAX_BATCH = 1_000_000
MAX_CONTEXT = 10_000_000


@dataclass(frozen=True)
class Estimate:
    """Cost of one forward step on one GPU under the roofline model."""

    flops: float
    bytes_by_kind: Mapping[str, float]  # "weights", "kv", "state"
    tokens: int  # tokens this step produces (decode) or ingests (prefill)
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float

    @property
    def bytes(self) -> float:
        return sum(self.bytes_by_kind.values())

    @property
    def compute_time_s(self) -> float:
        return self.flops / self.peak_flops_per_s

    @property
    def memory_time_s(self) -> float:
        return self.bytes / self.bandwidth_bytes_per_s

    @property
    def time_s(self) -> float:
        return max(self.compute_time_s, self.memory_time_s)

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, FLOPs per byte moved."""
        return self.flops / self.bytes

    @property
    def bound(self) -> str:
        return "compute" if self.compute_time_s > self.memory_time_s else "memory"

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.time_s

    @property
    def attained_flops_per_s(self) -> float:
        """Where the step sits on the roofline plot's vertical axis."""
        return self.flops / self.time_s


def _estimate(hw: Hardware, flops: float, tokens: int, **bytes_by_kind: float) -> Estimate:
    return Estimate(
        flops=flops,
        bytes_by_kind=MappingProxyType(bytes_by_kind),
        tokens=tokens,
        peak_flops_per_s=hw.peak_flops_per_s,
        bandwidth_bytes_per_s=hw.bandwidth_bytes_per_s,
    )


def attainable_flops_per_s(hw: Hardware, intensity: float) -> float:
    """The roof at a given intensity: bandwidth x intensity up to the ridge, peak compute beyond it."""
    return min(hw.peak_flops_per_s, hw.bandwidth_bytes_per_s * intensity)


def ridge_point(hw: Hardware) -> float:
    """Intensity (FLOP/byte) above which a step is compute-bound: peak / bandwidth."""
    return hw.peak_flops_per_s / hw.bandwidth_bytes_per_s


def prefill(m: Model, hw: Hardware, tokens: int, state_dtype: str = "fp32") -> Estimate:
    """One request's prompt of `tokens` tokens processed in one step.

    Bytes: weights once, T KV rows written, the recurrent state written once.
    FLOPs: 2 per matmul weight per token, plus causal attention (token i attends to i tokens).
    """
    t = check_int("tokens", tokens, 1, MAX_TOKENS)
    causal_pairs = t * (t + 1) // 2
    flops = 2 * model_size.matmul_params(m) * t + cache.attention_flops_per_cached_token(m) * causal_pairs
    return _estimate(
        hw,
        flops,
        tokens=t,
        weights=model_size.matmul_weight_bytes(m),
        kv=t * cache.kv_bytes_per_token(m),
        state=cache.state_bytes_per_request(m, state_dtype),
    )


def decode(m: Model, hw: Hardware, batch: int, context: int, state_dtype: str = "fp32") -> Estimate:
    """One decode step for `batch` requests, each with `context` tokens cached, each emitting 1 token.

    Bytes: weights once for the whole batch; per request, its L cached KV rows read, 1 new row
    written, and its recurrent state read and written back.
    FLOPs: per request, 2 per matmul weight plus attention of the new token over L cached tokens.
    """
    b = check_int("batch", batch, 1, MAX_BATCH)
    ctx = check_int("context", context, 0, MAX_CONTEXT)
    flops_per_request = 2 * model_size.matmul_params(m) + cache.attention_flops_per_cached_token(m) * ctx
    return _estimate(
        hw,
        b * flops_per_request,
        tokens=b,
        weights=model_size.matmul_weight_bytes(m),
        kv=b * (ctx + 1) * cache.kv_bytes_per_token(m),
        state=b * 2 * cache.state_bytes_per_request(m, state_dtype),
    )


def decode_attention_intensity(m: Model) -> float:
    """Intensity of decode attention alone: FLOPs on cached K/V over the bytes of K/V read (= GQA group size)."""
    return cache.attention_flops_per_cached_token(m) / cache.kv_bytes_per_token(m)
