"""Mixture-of-experts decode on one GPU and under expert parallelism (EP) over n.

One GPU: a decode step of B requests multiplies each token by its active weights (model_size.active_params) and
reads the weights its batch touches once (routing.weights_read_bytes): at B = 1 the active parameters, towards all
of them as B grows. `decode` is roofline.decode (which counts that) and `as_dense` the same step of a dense model
reading a fixed set of weights, the active ones or all, for comparison. `advantage_batch` is the batch at which the
MoE's saving over a dense model of its total size falls below a factor.

Expert parallelism (`ep_shard`, `decode_ep`): the routed experts are spread over n GPUs, E / n on each (n must
divide E, as vLLM places them); attention, dense layers, shared experts, embedding and LM head are whole on every
GPU, each of which serves its own requests (data-parallel attention, as vLLM runs EP with DP and DeepSeek-V3's
deployment does, arXiv 2412.19437 §3.4). Each MoE layer moves tokens instead of weights with two all-to-alls: a
dispatch sends each token's hidden state (hidden x 2 bytes, BF16) to every other GPU holding one of its k experts,
and a combine brings the weighted outputs back, the same bytes. A token reaches another given GPU unless all its k
experts avoid that GPU's E / n: the chance C(E - E/n, k) / C(E, k) (`remote_gpus`). OUR CHOICES: the n GPUs carry
the same load (each sees n x B tokens in its MoE layers, routing.touched); an all-to-all takes the link's
small-message floor (its all-reduce floor, parallel.floor_for: no checked source measures the all-to-all's own on
these links) plus the bytes one GPU sends over the link's bandwidth each way; no overlap with compute. vLLM's default
EP backend on one node (allgather_reducescatter, its expert-parallel deployment guide) sends every token to every GPU,
which the count equals where each token reaches nearly every GPU (n = 2 with top-8 of 128: 99.7 %).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from functools import cache

from sim.physics import feasibility, memory, model_size, parallel, roofline, routing, step
from sim.physics.presets import Hardware, Model
from sim.physics.validate import check_int

MAX_EXPERT_PARALLEL = 1024
ALL_TO_ALLS_PER_LAYER = 2  # dispatch and combine
ACTIVATION_BYTES = parallel.ACTIVATION_BYTES  # BF16 hidden states
SIZES = ("active", "total")


def _moe(m: Model) -> Model:
    if m.experts is None:
        raise ValueError(f"{m.name} is not a mixture-of-experts model")
    return m


# --- one GPU -------------------------------------------------------------------------------------------------------

def touched_share(m: Model, batch: int) -> float:
    """The share of its routed experts a decode step of `batch` tokens reads, in expectation."""
    return routing.touched(_moe(m), batch) / m.experts.held


def decode(m: Model, hw: Hardware, batch: int, context: int, state_dtype: str = "fp32") -> roofline.Estimate:
    """One decode step of an MoE model on one GPU: roofline.decode, whose matmuls read the touched experts."""
    return roofline.decode(_moe(m), hw, batch, context, state_dtype)


def as_dense(m: Model, hw: Hardware, batch: int, context: int, size: str = "active",
             state_dtype: str = "fp32") -> roofline.Estimate:
    """The same step as `decode` for a dense model of m's `size` ("active": the weights one token uses, "total": all
    of them): the same FLOPs (those of the active weights for "active", of all for "total"), attention and state,
    its matmuls reading that many weights whatever the batch."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}")
    _moe(m)
    e = roofline.decode(m, hw, batch, context, state_dtype)
    if size == "active":
        params, flops = model_size.active_params(m), e.op("matmuls").flops
    else:
        params = model_size.matmul_params(m)
        head = model_size.lm_head_params(m)
        flops = 2 * (params - head) * batch + 2 * head * batch
    ops = tuple(replace(op, flops=flops, bytes=params * m.weight_bytes_per_param) if op.name == "matmuls" else op
                for op in e.ops)
    return replace(e, ops=ops)


def block(m: Model, hw: Hardware, tokens: int, activated: float) -> roofline.Op:
    """The roofline of one MoE layer's block (router and routed experts) for `tokens` tokens that activate
    `activated` distinct experts: each token through the router and its k experts (2 FLOPs a weight), the router and
    every activated expert read once. The bound a profiled MoE block (measured.moe_block) sits beside."""
    e = _moe(m).experts
    t = check_int("tokens", tokens, 1, routing.MAX_TOKENS)
    if not e.per_token <= activated <= min(e.routed, t * e.per_token):
        raise ValueError(f"activated must be between {e.per_token} and {min(e.routed, t * e.per_token)}, "
                         f"got {activated!r}")
    expert, router = model_size.expert_params(m), model_size.router_params(m.hidden, e)
    flops = 2 * t * (e.per_token * expert + router)
    moved = (activated * expert + router) * m.weight_bytes_per_param
    return roofline.Op("moe", flops, moved, hw.peak_flops_per_s, hw.bandwidth_bytes_per_s)


def advantage(m: Model, hw: Hardware, batch: int, context: int) -> float:
    """How many times faster the MoE's decode step is than a dense model of its total size: as_dense "total" over
    `decode`."""
    with feasibility.unquoted():
        return as_dense(m, hw, batch, context, "total").time_s / decode(m, hw, batch, context).time_s


def advantage_batch(m: Model, hw: Hardware, context: int, factor: float, limit: int = 4096) -> int | None:
    """The smallest decode batch at which the MoE step is less than `factor` times faster than a dense model of its
    total size (`advantage`), searched up to `limit`; None if it never is that close."""
    for b in range(1, check_int("limit", limit, 1, 1 << 20) + 1):
        if advantage(m, hw, b, context) < factor:
            return b
    return None


def memory_per_gpu(m: Model, batch: int, context: int, state_dtype: str = "fp32") -> int:
    """Bytes a GPU holds serving `batch` requests at `context` tokens: memory.resident_bytes (every expert m's record
    holds: all of them, or one GPU's share under `ep_shard`)."""
    return memory.resident_bytes(m, batch, context, state_dtype)


# --- expert parallelism --------------------------------------------------------------------------------------------

@cache
def ep_shard(m: Model, expert_parallel: int) -> Model:
    """What one GPU holds under expert parallelism over n GPUs (see the module docstring), as a Model the one-GPU
    functions accept: its E / n routed experts, whose MoE layers see n GPUs' tokens; n = 1 gives m itself."""
    e = _moe(m).experts
    n = check_int("expert_parallel", expert_parallel, 1, MAX_EXPERT_PARALLEL)
    if e.expert_parallel != 1:
        raise ValueError(f"{m.name} is already one GPU's share")
    if n == 1:
        return m
    if e.routed % n:
        raise ValueError(f"expert parallel {n} does not divide the model's {e.routed} routed experts")
    return replace(m, name=f"{m.name} (1/{n} of the experts, expert parallel {n})",
                   experts=replace(e, expert_parallel=n))


def remote_gpus(m: Model, expert_parallel: int) -> float:
    """The other GPUs a token's hidden state goes to in a dispatch, in expectation: each of the n - 1 unless all of
    its k experts avoid that GPU's E / n, which happens with probability C(E - E/n, k) / C(E, k)."""
    e = _moe(m).experts
    n = check_int("expert_parallel", expert_parallel, 1, MAX_EXPERT_PARALLEL)
    if n == 1:
        return 0.0
    avoid = 1.0
    for i in range(e.per_token):
        avoid *= (e.routed - e.routed // n - i) / (e.routed - i)
    return (n - 1) * (1 - avoid)


def all_to_all_bytes(m: Model, expert_parallel: int, tokens: int) -> float:
    """Bytes one GPU sends in one all-to-all (a dispatch, or the combine that returns as much) for `tokens` tokens of
    its own: each token's hidden state to each other GPU that holds one of its experts."""
    return tokens * m.hidden * ACTIVATION_BYTES * remote_gpus(m, expert_parallel)


def all_to_all_s(link: parallel.Interconnect, message_bytes: float, expert_parallel: int) -> float:
    """One all-to-all among n GPUs on `link`: its small-message floor plus the bytes one GPU sends over the link's
    bandwidth (0 on one GPU)."""
    if expert_parallel == 1:
        return 0.0
    return parallel.floor_for(link, expert_parallel) + message_bytes / link.bandwidth_bytes_per_s


@dataclass(frozen=True)
class Step:
    """One decode step on each of n GPUs under expert parallelism: one GPU's roofline over its share, and the
    all-to-alls between them."""

    expert_parallel: int
    requests: int  # each GPU's own decode batch
    per_gpu: roofline.Estimate  # roofline of one GPU's share; per_gpu.tokens = its own tokens
    touched: float  # routed experts of each MoE layer this GPU reads, in expectation
    held: int  # routed experts of each MoE layer this GPU holds
    all_to_alls: int
    message_bytes: float  # one GPU sends in each all-to-all
    all_to_all_s: float  # one all-to-all
    interconnect: str

    @property
    def compute_time_s(self) -> float:
        return self.per_gpu.time_s

    @property
    def communication_time_s(self) -> float:
        return self.all_to_alls * self.all_to_all_s

    @property
    def time_s(self) -> float:
        return self.compute_time_s + self.communication_time_s

    @property
    def communication_share(self) -> float:
        return self.communication_time_s / self.time_s

    @property
    def tokens_per_s(self) -> float:
        """All n GPUs together."""
        return self.per_gpu.tokens * self.expert_parallel / self.time_s

    @property
    def tokens_per_s_per_gpu(self) -> float:
        return self.per_gpu.tokens / self.time_s


def decode_ep(m: Model, hw: Hardware, expert_parallel: int, batch: int, context: int,
              link: str | parallel.Interconnect | None = None, state_dtype: str = "fp32") -> Step:
    """One decode step under expert parallelism over n GPUs of hw, each serving `batch` requests at `context` tokens:
    roofline.decode on one GPU's share (ep_shard), plus 2 all-to-alls per MoE layer on `link` (default: the GPU's
    own, parallel.default_interconnect). At n = 1, `decode` with no all-to-all."""
    n = check_int("expert_parallel", expert_parallel, 1, MAX_EXPERT_PARALLEL)
    one = ep_shard(m, n)
    estimate = roofline.decode(one, hw, batch, context, state_dtype)
    ic = parallel.link_for(hw, link)
    message = all_to_all_bytes(m, n, batch)
    count = ALL_TO_ALLS_PER_LAYER * m.moe_layers if n > 1 else 0
    return Step(n, batch, estimate, routing.touched(one, batch), one.experts.held, count, message,
                all_to_all_s(ic, message, n), ic.key)


def max_batch(m: Model, hw: Hardware, expert_parallel: int, context: int, state_dtype: str = "fp32") -> int:
    """Requests at `context` tokens each GPU holds under expert parallelism (memory.max_batch on its share)."""
    return memory.max_batch(ep_shard(m, expert_parallel), hw, context, state_dtype)


# --- a serving step under expert parallelism -----------------------------------------------------------------------

@dataclass(frozen=True)
class ExpertParallelStepCost(step.ExchangingStepCost):
    """step.StepCost of one GPU's share under expert parallelism, plus each step's all-to-alls: the scheduler's
    step-cost interface for one of n data-parallel GPUs. A step of T tokens sends 2 x (MoE layers) all-to-alls of
    all_to_all_bytes(T) after the GPU's own work (no overlap, as `decode_ep`)."""

    expert_parallel: int = 1
    all_to_alls: int = 0
    token_bytes: float = 0.0  # one token's hidden state times the other GPUs it reaches
    link: parallel.Interconnect | None = None

    def exchange_s(self, tokens: int) -> float:
        """The all-to-alls of a step over `tokens` tokens (0 for an empty step)."""
        if not tokens:
            return 0.0
        return self.all_to_alls * all_to_all_s(self.link, tokens * self.token_bytes, self.expert_parallel)


@cache
def step_cost(m: Model, hw: Hardware, expert_parallel: int = 1, link: str | parallel.Interconnect | None = None,
              state_dtype: str = "fp32") -> step.StepCost:
    """The scheduler's step cost of one of n GPUs serving m under expert parallelism: step.step_cost of its share
    with the all-to-alls added (ExpertParallelStepCost); at 1 GPU step.step_cost(m, hw) itself."""
    n = check_int("expert_parallel", expert_parallel, 1, MAX_EXPERT_PARALLEL)
    if n == 1:
        return step.step_cost(_moe(m), hw, state_dtype)
    base = step.step_cost(ep_shard(m, n), hw, state_dtype)
    given = {f.name: getattr(base, f.name) for f in fields(step.StepCost) if f.init}
    return ExpertParallelStepCost(**given, expert_parallel=n, all_to_alls=ALL_TO_ALLS_PER_LAYER * m.moe_layers,
                                  token_bytes=m.hidden * ACTIVATION_BYTES * remote_gpus(m, n),
                                  link=parallel.link_for(hw, link))
