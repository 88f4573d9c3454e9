"""Roofline estimates of one prefill and one decode step, operation by operation.

An operation can finish no sooner than its FLOPs at peak compute, nor sooner than its bytes at full
bandwidth: time = max(FLOPs / peak, bytes / bandwidth) (Williams, Waterman & Patterson, 2009). A step's
operations run one after another (one kernel, then the next), so the step takes the sum of their times.
The aggregate max(sum of FLOPs / peak, sum of bytes / bandwidth) is the bound for kernels that overlapped
perfectly: the two agree while every operation is bound the same way, and part once some are compute-bound
and others memory-bound (the weight matmuls of a large decode batch). These are lower bounds on time
(upper bounds on speed), not measurements.

Operations of a step (a model without recurrent layers has no "state" operation):
- "matmuls": every weight matmul (projections, MLPs, LM head), 2 FLOPs per weight per token, weights
  read once; activation bytes are not counted (that convention reproduces the reference lessons). The LM head
  runs only where a next token is sampled: at every decode token, but in a prefill only at the prompt's last
  position, as engines do (vLLM V1's GPU model runner, vllm/v1/worker/gpu_model_runner.py, applies it to
  `hidden_states[logits_indices]`, each request's last scheduled token; the other positions' logits would be
  thrown away). An earlier version of this course charged it for every prompt token: 106.95 ms for the anchor's
  2,048-token prefill on an H100, against 101.69 ms;
- "attention": attention over cached K and V, with the KV rows it reads and writes;
- "state": the Gated DeltaNet recurrent state read and written back (its FLOPs, about 0.5% of a step's,
  are not counted).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

from sim.physics import cache, feasibility, model_size, routing
from sim.physics.presets import Hardware, Model
from sim.physics.validate import check_int

MAX_TOKENS = 10_000_000
MAX_BATCH = 1_000_000
MAX_CONTEXT = 10_000_000

# What each operation moves: the keys of Estimate.bytes_by_kind.
BYTES_OF = {"matmuls": "weights", "attention": "kv", "state": "state"}


@dataclass(frozen=True)
class Op:
    """One operation of a step on one GPU, bounded on its own."""

    name: str  # "matmuls" | "attention" | "state"
    flops: float
    bytes: float
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float

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
    def bound(self) -> str:
        return "compute" if self.compute_time_s > self.memory_time_s else "memory"

    @property
    def intensity(self) -> float:
        """FLOPs per byte this operation moves (0 for an operation that only moves bytes)."""
        return self.flops / self.bytes


@dataclass(frozen=True)
class Estimate:
    """Cost of one forward step on one GPU under the roofline model, and of each of its operations."""

    ops: tuple[Op, ...]
    tokens: int  # tokens this step produces (decode) or ingests (prefill)
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float

    # Sums of floats go through math.fsum: it rounds exactly once, so CPython 3.11 (the build) and Pyodide's
    # 3.14 (whose sum() compensates since 3.12) give the same last bit, and the browser's view equals the build's.
    @property
    def flops(self) -> float:
        return sum(op.flops for op in self.ops)

    @property
    def bytes_by_kind(self) -> Mapping[str, float]:
        """Bytes moved, by what they are: "weights", "kv", "state"."""
        moved = {kind: 0 for kind in BYTES_OF.values()}
        for op in self.ops:
            moved[BYTES_OF[op.name]] += op.bytes
        return MappingProxyType(moved)

    @property
    def bytes(self) -> float:
        return sum(op.bytes for op in self.ops)

    def op(self, name: str) -> Op | None:
        return next((op for op in self.ops if op.name == name), None)

    @property
    def compute_time_s(self) -> float:
        """All the step's FLOPs at peak compute."""
        return self.flops / self.peak_flops_per_s

    @property
    def memory_time_s(self) -> float:
        """All the step's bytes at full bandwidth."""
        return self.bytes / self.bandwidth_bytes_per_s

    @property
    def overlapped_time_s(self) -> float:
        """The bound if every kernel overlapped with every other: max(sum FLOPs / peak, sum bytes / bandwidth)."""
        return max(self.compute_time_s, self.memory_time_s)

    @cached_property  # read many times per view: a widget quotes it in outputs, derivations and figures
    def time_s(self) -> float:
        """The step's lower bound: its operations, one after another, each bounded on its own."""
        return math.fsum(op.time_s for op in self.ops)

    @cached_property
    def compute_bound_time_s(self) -> float:
        """The part of time_s spent in compute-bound operations."""
        return math.fsum(op.time_s for op in self.ops if op.bound == "compute")

    @property
    def bound(self) -> str:
        """What limits most of the step's time: "compute" or "memory" (each operation has its own bound)."""
        return "compute" if 2 * self.compute_bound_time_s > self.time_s else "memory"

    @property
    def mixed(self) -> bool:
        """Some operations are compute-bound and others memory-bound."""
        return len({op.bound for op in self.ops}) > 1

    @property
    def intensity(self) -> float:
        """Arithmetic intensity of the whole step, FLOPs per byte moved."""
        return self.flops / self.bytes

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.time_s

    @property
    def attained_flops_per_s(self) -> float:
        """Where the step sits on the roofline plot's vertical axis."""
        return self.flops / self.time_s


def _estimate(hw: Hardware, tokens: int, **ops: tuple[float, float]) -> Estimate:
    """An Estimate from (flops, bytes) per operation name; operations with neither are left out."""
    return Estimate(
        ops=tuple(Op(name, flops, moved, hw.peak_flops_per_s, hw.bandwidth_bytes_per_s)
                  for name, (flops, moved) in ops.items() if flops or moved),
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


def critical_batch(m: Model, hw: Hardware) -> int:
    """The smallest decode batch whose weight matmuls are compute-bound.

    They do 2 FLOPs per weight per request and read each weight once, so their intensity is
    B x 2N / W (= B in BF16) and they turn compute-bound once that passes the ridge. Attention over
    cached KV and the recurrent state never do: their intensity is fixed per request, whatever B.
    An MoE model's weights read grow with B (sim/physics/routing.py) towards all its experts, so its critical batch
    is searched for: the matmuls' compute time grows linearly in B and their bytes ever more slowly, so they cross once.
    """
    if m.experts is not None:
        with feasibility.unquoted():
            def bound(b: int) -> str:
                return decode(m, hw, batch=b, context=0).op("matmuls").bound
            low, high = 1, 1
            while bound(high) != "compute":
                low, high = high, high * 2
            while low < high:
                mid = (low + high) // 2
                low, high = (mid + 1, high) if bound(mid) != "compute" else (low, mid)
            return high
    flops_per_request = 2 * model_size.matmul_params(m)
    weights = model_size.matmul_weight_bytes(m)
    b = max(1, int(weights * hw.peak_flops_per_s // (flops_per_request * hw.bandwidth_bytes_per_s)))
    # The closed form is exact in reals; settle float rounding at the boundary against the op itself.
    with feasibility.unquoted():
        while b > 1 and decode(m, hw, batch=b - 1, context=0).op("matmuls").bound == "compute":
            b -= 1
        while decode(m, hw, batch=b, context=0).op("matmuls").bound != "compute":
            b += 1
    return b


def matmul_flops(m: Model, tokens: int, sampled: int) -> int:
    """FLOPs of the weight matmuls for `tokens` tokens of which `sampled` produce logits: 2 per weight per token
    through the decoder layers (of an MoE model, the weights a token is multiplied by: model_size.active_params),
    and 2 per LM-head weight only for the sampled ones."""
    head = model_size.lm_head_params(m)
    return 2 * (model_size.active_params(m) - head) * tokens + 2 * head * sampled


def prefill(m: Model, hw: Hardware, tokens: int, state_dtype: str = "fp32", sampled: int = 1) -> Estimate:
    """One request's prompt of `tokens` tokens processed in one step.

    matmuls: 2 FLOPs per weight per token through the layers, the LM head at the last `sampled` positions only
    (by default 1: its logits give the first output token; `sampled=tokens` is the every-position count of an
    earlier version of this course), weights read once. attention: causal (token i attends to
    i tokens), T KV rows written. state: the recurrent state written once.
    """
    t = check_int("tokens", tokens, 1, MAX_TOKENS)
    k = check_int("sampled", sampled, 1, t)
    causal_pairs = t * (t + 1) // 2
    return _estimate(
        hw,
        tokens=t,
        matmuls=(matmul_flops(m, t, sampled=k), routing.weights_read_bytes(m, t)),
        attention=(cache.attention_flops_per_cached_token(m) * causal_pairs, t * cache.kv_bytes_per_token(m)),
        state=(0, cache.state_bytes_per_request(m, state_dtype)),
    )


def decode(m: Model, hw: Hardware, batch: int, context: int, state_dtype: str = "fp32") -> Estimate:
    """One decode step for `batch` requests, each with `context` tokens cached, each emitting 1 token.

    matmuls: 2 FLOPs per weight per request, weights read once for the whole batch (of an MoE model, the experts the
    batch touches, sim/physics/routing.py). attention: per
    request, the new token against its L cached tokens; L KV rows read and 1 written. state: per request,
    the recurrent state read and written back.
    """
    b = check_int("batch", batch, 1, MAX_BATCH)
    ctx = check_int("context", context, 0, MAX_CONTEXT)
    note_decode(m, hw, b, ctx, state_dtype)
    return _estimate(
        hw,
        tokens=b,
        matmuls=(matmul_flops(m, b, sampled=b), routing.weights_read_bytes(m, b)),
        attention=(b * cache.attention_flops_per_cached_token(m) * ctx, b * (ctx + 1) * cache.kv_bytes_per_token(m)),
        state=(0, b * 2 * cache.state_bytes_per_request(m, state_dtype)),
    )


def note_decode(m: Model, hw: Hardware, batch: int, context: int, state_dtype: str = "fp32") -> None:
    """Tell sim/physics/feasibility.py what a decode step of `batch` requests at `context` tokens needs: the whole
    checkpoint and each request's KV and state (memory.py's count)."""
    feasibility.note(lambda: f"{m.name} on the {hw.name}, batch {batch:,} at {context:,} tokens of context",
                     model_size.resident_weight_bytes(m) + batch * cache.request_bytes(m, context, state_dtype),
                     hw.memory_bytes)


def decode_attention_intensity(m: Model) -> float:
    """Intensity of decode attention alone: FLOPs on cached K/V over the bytes of K/V read (= GQA group size)."""
    return cache.attention_flops_per_cached_token(m) / cache.kv_bytes_per_token(m)
