"""One step of a serving GPU on the roofline, reduced to a few coefficients per model and GPU.

A step holds joining requests, whose prompts (or chunks of them) are processed in it, and decoding requests, each
with its cached context. Its time is the sum of its operations, each bounded on its own by FLOPs at peak compute or
bytes at full bandwidth (sim/physics/roofline.py's conventions): the weight matmuls over every token, the joiners'
attention, the decoders' attention over their cached KV, and the recurrent states. How the scheduler fills a step is
in sim/serving/scheduler.py's docstring.

Why a module of its own: the scheduler costs every step with it, and the KV layout prices a recompute merged into a
decode step with it (kv_layout.preemption); kept in the physics layer, below both, neither serving module has to
import the other for it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

from sim.physics import cache, model_size, roofline, routing
from sim.physics.presets import Hardware, Model


@dataclass(frozen=True)
class StepCost:
    """A model on a GPU reduced to the coefficients of one step's roofline time."""

    flops_per_token: float  # matmul FLOPs per token through the decoder layers: 2 x (N - LM head)
    logit_flops: float  # LM-head FLOPs per token that is sampled (each decoder, and each joiner's last position)
    weight_bytes: float  # matmul weights read once per step (of an MoE model, all but the routed experts it holds)
    attention_flops_per_pair: float  # one query token against one cached token
    kv_bytes_per_token: float
    state_bytes: float  # recurrent state of one request (0 without recurrent layers)
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float
    # An MoE model's routed experts (sim/physics/routing.py): one expert of every MoE layer, the experts held, the
    # chance one token misses a given expert (1 - k/E) and the GPUs whose tokens its MoE layers see.
    expert_bytes: float = 0.0
    experts_held: int = 0
    miss: float = 1.0
    fanout: int = 1
    # Per-unit times, derived from the above, so that a step costs a few multiplications (hundreds per view).
    token_s: float = field(init=False)  # matmul time of one token through the layers at peak compute
    logit_s: float = field(init=False)  # LM-head time of one sampled token at peak compute
    weights_s: float = field(init=False)  # one read of the weights at full bandwidth
    pair_s: float = field(init=False)  # one query token against one cached token, at peak compute
    kv_row_s: float = field(init=False)  # one token's KV at full bandwidth
    state_s: float = field(init=False)  # one request's recurrent state at full bandwidth
    expert_s: float = field(init=False)  # one routed expert of every MoE layer at full bandwidth

    def __post_init__(self):
        peak, bandwidth = self.peak_flops_per_s, self.bandwidth_bytes_per_s
        for name, value in (("token_s", self.flops_per_token / peak), ("logit_s", self.logit_flops / peak),
                            ("weights_s", self.weight_bytes / bandwidth), ("expert_s", self.expert_bytes / bandwidth),
                            ("pair_s", self.attention_flops_per_pair / peak),
                            ("kv_row_s", self.kv_bytes_per_token / bandwidth),
                            ("state_s", self.state_bytes / bandwidth)):
            object.__setattr__(self, name, value)

    def prefill_attention_s(self, prompt_tokens: int) -> float:
        """A joiner's causal attention over its own prompt, bounded on its own (as roofline.prefill)."""
        return self.chunk_attention_s(prompt_tokens, 0)

    def chunk_attention_s(self, chunk: int, before: int) -> float:
        """Attention of a prompt chunk of `chunk` tokens after `before` tokens of the same prompt computed in earlier
        steps (chunked prefill; before = 0 is a whole prompt): each of its tokens attends to the earlier chunks and,
        causally, to its own, c x p + c(c + 1) / 2 pairs; the earlier chunks' KV rows read and its own written."""
        return max(self.pair_s * (chunk * before + chunk * (chunk + 1) // 2), self.kv_row_s * (before + chunk))

    def weights_read_s(self, tokens: int) -> float:
        """One read of the weights a step of `tokens` tokens multiplies by: all of a dense model's; of an MoE model's,
        the routed experts its tokens touch (routing.touched) beside the rest."""
        if not self.experts_held:
            return self.weights_s
        touched = self.experts_held * (1 - routing.power(self.miss, tokens * self.fanout))
        return self.weights_s + self.expert_s * touched

    def matmuls_s(self, tokens: int, sampled: int) -> float:
        """The weight matmuls of a step over `tokens` tokens, `sampled` of them producing logits, weights read once."""
        return max(self.token_s * tokens + self.logit_s * sampled, self.weights_read_s(tokens))

    def decode_attention_s(self, decoders: int, context_sum: int) -> float:
        """`decoders` requests' new tokens against their cached contexts, which sum to `context_sum` tokens: those
        KV rows read and one row written per decoder."""
        return max(self.pair_s * context_sum, self.kv_row_s * (context_sum + decoders)) if decoders else 0.0

    def chunk_step_s(self, chunks, sampled: int, decoders: int, context_sum: int, states: int) -> float:
        """One step of chunked prefill: `chunks` (tokens before, chunk) of prompts, `decoders` requests' next tokens
        against contexts summing to `context_sum`, `sampled` tokens producing logits, `states` recurrent states
        read or written. The operations in time_s's order: a whole prompt's step equals time_s's to the last bit."""
        tokens = sum(chunk for _, chunk in chunks)
        return (self.matmuls_s(tokens + decoders, sampled)
                + math.fsum(self.chunk_attention_s(chunk, before) for before, chunk in chunks)
                + self.decode_attention_s(decoders, context_sum) + self.state_s * states)

    def time_s(self, prompt_tokens: int, prefill_attention_s: float, decoders: int, context_sum: int,
               joiners: int) -> float:
        """One step: joiners' prompts (their attention precomputed) plus `decoders` requests whose cached
        contexts sum to `context_sum` tokens. Logits come from each decoder's token and each joiner's last one."""
        matmuls = self.matmuls_s(prompt_tokens + decoders, joiners + decoders)
        attention = self.decode_attention_s(decoders, context_sum)
        return matmuls + prefill_attention_s + attention + self.state_s * (joiners + 2 * decoders)


@dataclass(frozen=True)
class ExchangingStepCost(StepCost):
    """A StepCost of one GPU of several, whose steps end with collectives between them: `exchange_s(tokens)`, the
    collectives of a step over `tokens` tokens (prompt chunks and decoders together), added after the GPU's own work
    (no overlap). Within a run of decode steps the tokens do not change, so the scheduler's closed form still holds.
    Subclasses: parallel.ParallelStepCost (all-reduces), moe.ExpertParallelStepCost (all-to-alls)."""

    def exchange_s(self, tokens: int) -> float:
        raise NotImplementedError

    def time_s(self, prompt_tokens: int, prefill_attention_s: float, decoders: int, context_sum: int,
               joiners: int) -> float:
        return (super().time_s(prompt_tokens, prefill_attention_s, decoders, context_sum, joiners)
                + self.exchange_s(prompt_tokens + decoders))

    def chunk_step_s(self, chunks, sampled: int, decoders: int, context_sum: int, states: int) -> float:
        return (super().chunk_step_s(chunks, sampled, decoders, context_sum, states)
                + self.exchange_s(sum(chunk for _, chunk in chunks) + decoders))


@functools.lru_cache(maxsize=32)
def step_cost(m: Model, hw: Hardware, state_dtype: str = "fp32") -> StepCost:
    """The step-time coefficients of model m on GPU hw."""
    e = m.experts
    expert = m.moe_layers * model_size.expert_params(m) * m.weight_bytes_per_param if e else 0
    return StepCost(
        flops_per_token=roofline.matmul_flops(m, 1, sampled=0),
        logit_flops=roofline.matmul_flops(m, 0, sampled=1),
        weight_bytes=model_size.matmul_weight_bytes(m) - (e.held * expert if e else 0),
        attention_flops_per_pair=cache.attention_flops_per_cached_token(m),
        kv_bytes_per_token=cache.kv_bytes_per_token(m),
        state_bytes=cache.state_bytes_per_request(m, state_dtype),
        peak_flops_per_s=hw.peak_flops_per_s,
        bandwidth_bytes_per_s=hw.bandwidth_bytes_per_s,
        expert_bytes=expert,
        experts_held=e.held if e else 0,
        miss=1 - e.per_token / e.routed if e else 1.0,
        fanout=e.expert_parallel if e else 1,
    )
