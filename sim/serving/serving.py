"""A served request end to end, and the two ceilings of serving: decode speed and KV capacity.

Conventions (the simulator's, see roofline.py and memory.py):
- A request of P prompt tokens and N answer tokens is one prefill of P tokens (its time is the TTFT),
  then N decode steps at batch 1, step i (0-based) attending to P + i cached tokens. So the request
  takes TTFT + N x TPOT, where TPOT is the mean decode step, the way the reference states it.
- The decode ceiling counts weights only, at batch 1: one token costs one read of every matmul
  weight, so tokens/s <= bandwidth / weight bytes, whatever the GPU's compute.
- KV bytes count K and V in the layers that keep them (the full-attention layers of a hybrid);
  a hybrid's recurrent state is a separate, fixed amount per request.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.physics import roofline
from sim.physics.presets import Hardware, Model
from sim.physics.validate import check_choice, check_int

# Bytes per weight and per KV element of the storage formats the serving widgets offer.
WEIGHT_DTYPE_BYTES = {"bf16": 2, "fp8": 1, "int4": 0.5}
KV_DTYPE_BYTES = {"bf16": 2, "fp8": 1}

# A multiply-add per weight per token.
FLOPS_PER_PARAM_PER_TOKEN = 2

MAX_ANSWER_TOKENS = 1_000_000


@dataclass(frozen=True)
class DecodeRun:
    """The N decode steps that write one answer, at batch 1, summed exactly."""

    steps: int
    flops: int
    bytes: int
    time_s: float
    compute_bound_time_s: float  # the part of time_s spent in compute-bound operations

    @property
    def time_per_token_s(self) -> float:
        """The mean step time (TPOT)."""
        return self.time_s / self.steps

    @property
    def intensity(self) -> float:
        """FLOPs per byte over the whole answer."""
        return self.flops / self.bytes

    @property
    def bound(self) -> str:
        """What limits most of the answer's time: "compute" or "memory"."""
        return "compute" if 2 * self.compute_bound_time_s > self.time_s else "memory"


def decode_run(m: Model, hw: Hardware, prompt_tokens: int, output_tokens: int,
               state_dtype: str = "fp32") -> DecodeRun:
    """The decode steps of a prompt_tokens-long prompt's output_tokens-long answer (see module docstring).

    Each operation's FLOPs and bytes are linear in the step's context, so its compute-bound steps form
    one run at the start or the end; each run's time is an arithmetic series, summed in closed form.
    """
    prompt = check_int("prompt_tokens", prompt_tokens, 0, roofline.MAX_CONTEXT - MAX_ANSWER_TOKENS)
    n = check_int("output_tokens", output_tokens, 1, MAX_ANSWER_TOKENS)

    def step(i: int) -> roofline.Estimate:
        return roofline.decode(m, hw, batch=1, context=prompt + i, state_dtype=state_dtype)

    first, second = step(0), step(1)
    time_s = compute_bound_s = 0.0
    for k, (op, next_op) in enumerate(zip(first.ops, second.ops)):
        flops = _Series(op.flops, next_op.flops - op.flops)
        bytes_ = _Series(op.bytes, next_op.bytes - op.bytes)
        switch = _first_change(lambda i, k=k: step(i).ops[k].bound == "compute", n)
        compute_steps = range(0, switch) if op.bound == "compute" else range(switch, n)
        memory_steps = range(switch, n) if op.bound == "compute" else range(0, switch)
        compute_s = flops.sum(compute_steps) / hw.peak_flops_per_s
        time_s += compute_s + bytes_.sum(memory_steps) / hw.bandwidth_bytes_per_s
        compute_bound_s += compute_s
    return DecodeRun(
        steps=n,
        flops=_Series(first.flops, second.flops - first.flops).sum(range(n)),
        bytes=_Series(first.bytes, second.bytes - first.bytes).sum(range(n)),
        time_s=time_s,
        compute_bound_time_s=compute_bound_s,
    )


@dataclass(frozen=True)
class _Series:
    """first + slope x i over step indices i."""

    first: int
    slope: int

    def sum(self, steps: range) -> int:
        n = len(steps)
        if n == 0:
            return 0
        index_sum = n * (steps.start + steps.stop - 1) // 2  # n and (start + stop - 1) are never both odd
        return n * self.first + self.slope * index_sum


def _first_change(predicate, n: int) -> int:
    """The first index in [0, n) where a monotone predicate differs from predicate(0); n if it never does."""
    start = predicate(0)
    if predicate(n - 1) == start:
        return n
    low, high = 0, n - 1  # predicate(low) == start, predicate(high) != start
    while high - low > 1:
        mid = (low + high) // 2
        if predicate(mid) == start:
            low = mid
        else:
            high = mid
    return high


def weight_bytes(params: int, weight_dtype: str) -> float:
    """Bytes of `params` weights stored as weight_dtype (int4 packs two weights per byte)."""
    return params * WEIGHT_DTYPE_BYTES[check_choice("weight_dtype", weight_dtype, WEIGHT_DTYPE_BYTES)]


def decode_ceiling_tokens_per_s(hw: Hardware, weights_bytes: float) -> float:
    """Tokens/s of one request when every step reads all weights once and nothing else (batch 1)."""
    return hw.bandwidth_bytes_per_s / weights_bytes


def bandwidth_utilisation(tokens_per_s: float, weights_bytes: float, hw: Hardware) -> float:
    """MBU, model bandwidth utilisation: the weight bytes a measured tokens/s implies reading per second,
    over the GPU's peak bandwidth (the definition of PyTorch's gpt-fast blog: model size x inferences
    per second / peak bandwidth). The roofline's batch-1 ceiling is MBU = 1."""
    return tokens_per_s * weights_bytes / hw.bandwidth_bytes_per_s


def weights_only_decode_intensity(weight_dtype: str) -> float:
    """FLOP per byte of a batch-1 decode step counting weights only: 2 FLOPs per weight over its bytes."""
    return FLOPS_PER_PARAM_PER_TOKEN / WEIGHT_DTYPE_BYTES[check_choice("weight_dtype", weight_dtype,
                                                                       WEIGHT_DTYPE_BYTES)]


def compute_ratio(hw: Hardware, base: Hardware) -> float:
    """How many times base's peak compute hw has (what a faster GPU buys a compute-bound step)."""
    return hw.peak_flops_per_s / base.peak_flops_per_s


def bandwidth_ratio(hw: Hardware, base: Hardware) -> float:
    """How many times base's bandwidth hw has (what a faster GPU buys a bandwidth-bound decode)."""
    return hw.bandwidth_bytes_per_s / base.bandwidth_bytes_per_s


def kv_bytes_per_token(kv_layers: int, kv_heads: int, head_dim: int, kv_dtype: str) -> int:
    """K and V of one token in every layer that keeps KV: 2 x layers x KV heads x head_dim x bytes."""
    element = KV_DTYPE_BYTES[check_choice("kv_dtype", kv_dtype, KV_DTYPE_BYTES)]
    return 2 * kv_layers * kv_heads * head_dim * element


def fitting_batch(memory_bytes: float, weights_bytes: float, bytes_per_request: float) -> int:
    """The most requests of bytes_per_request each that fit beside the weights (0 if none)."""
    if not bytes_per_request > 0:
        raise ValueError(f"bytes_per_request must be positive, got {bytes_per_request!r}")
    free = memory_bytes - weights_bytes
    if free <= 0:
        return 0
    return int(free // bytes_per_request)
