"""Prefill interference: one prompt joining a decode batch, computed whole or cut into chunks (chunked prefill).

A decode batch of `batch` requests, each with `context` tokens cached, is running when one request of
`prompt_tokens` joins. Its prompt is computed whole in the step it joins (chunk_tokens = 0, what
sim/serving/scheduler.py does), or in ceil(prompt / chunk) steps of `chunk_tokens` tokens each, the last one shorter if
the chunk does not divide the prompt (Sarathi's chunked prefill; vLLM V1 puts a chunk beside every decode in the
step). Every decoder gets one token from every step, so the time of a step is the gap between two of its tokens:
the TPOT it sees then.

Each step is costed by the per-operation roofline through StepCost (the same coefficients and the same
operations as the scheduler, one after another, each bounded on its own):
- matmuls: chunk + batch tokens through the layers, the LM head for each decoder and, in the prompt's last chunk
  only, for the joiner (ARCHITECTURE.md: logits only where a token is sampled), the weights read once per step.
  So a prompt in n chunks reads the weights n times, and while chunk + batch tokens stay below the ridge
  (critical batch) the weight read, not the chunk, sets the matmuls' time: a chunk there is nearly free;
- the chunk's attention (StepCost.chunk_attention_s): a chunk of c tokens after p computed attends to them and,
  causally, to itself: c x p + c(c + 1) / 2 pairs, p + c KV rows (the earlier chunks' read, its own written).
  Over all chunks the pairs add up to the whole prompt's P(P + 1) / 2: chunking re-reads the earlier chunks' KV
  but does no extra attention arithmetic;
- decode attention: batch x context cached tokens, read, and one row written per decoder;
- recurrent state (hybrid models): written by the joiner's first chunk, read and written back by each later one
  (the chunk continues from it), read and written back by every decoder.

OUR CHOICES, to keep each step's difference its chunk alone: the decoders' contexts stay at `context` for the
whole stretch (each step really adds one cached row per decoder, a fraction of a percent of its attention per
step at the default setting); no request leaves or joins meanwhile; the joiner waits for no queue.

Readouts (all seconds):
- decode_s: a decode-only step of the batch (what every step would take without the joiner);
- first_step_s: the step the joiner's first chunk (or whole prompt) runs in;
- stall_s: the longest step while the prompt is computed, the longest ITL (inter-token latency: the gap
  between two of its tokens) a decoder sees, where TPOT averages its gaps;
- ttft_s: the sum of the prompt's steps, from its arrival to its first token (its last chunk samples it);
- whole_s: the same prompt whole, in one step with the batch (the TTFT with chunk_tokens = 0);
- alone_s: the same prompt whole with no decode batch (roofline.prefill's time);
- overhead_s = ttft_s - whole_s: what chunking adds to the joiner's wait.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from sim.physics import cache, feasibility, model_size
from sim.physics.presets import Hardware, Model
from sim.physics.step import StepCost, step_cost
from sim.physics.validate import check_int
from sim.serving import scheduler

MAX_BATCH = scheduler.MAX_BATCH
MAX_CONTEXT = 1_000_000
MAX_PROMPT = 1_000_000
MAX_STEPS = 100_000  # a prompt of MAX_PROMPT tokens in chunks of 10 or more


class Step(NamedTuple):
    """One step while the prompt is computed: its chunk beside the decode batch, and the time of each operation.
    (A named tuple: a 32,768-token prompt in chunks of 16 is 2,048 of them per slider move.)"""

    before: int  # prompt tokens computed in earlier steps
    chunk: int  # prompt tokens in this step
    sampled: int  # 1 in the prompt's last chunk (its first token), else 0
    matmuls_s: float
    chunk_attention_s: float
    decode_attention_s: float
    state_s: float

    @property
    def time_s(self) -> float:
        # The operations in StepCost.time_s's order, so that a whole prompt's step equals it to the last bit.
        return self.matmuls_s + self.chunk_attention_s + self.decode_attention_s + self.state_s


def step(cost: StepCost, batch: int, context: int, before: int, chunk: int, last: bool) -> Step:
    """The step that computes `chunk` prompt tokens after `before` of them, beside `batch` decoders of `context`."""
    sampled = 1 if last else 0
    joiner_state = 1 if before == 0 else 2  # written once, or read and written back
    return Step(before=before, chunk=chunk, sampled=sampled,
                matmuls_s=cost.matmuls_s(chunk + batch, sampled + batch),
                chunk_attention_s=cost.chunk_attention_s(chunk, before),
                decode_attention_s=cost.decode_attention_s(batch, batch * context),
                state_s=cost.state_s * (joiner_state + 2 * batch))


def decode_step(cost: StepCost, batch: int, context: int) -> Step:
    """A decode-only step of `batch` decoders of `context` (StepCost.time_s with no joiner); no step
    at all (0 s) without decoders."""
    return Step(before=0, chunk=0, sampled=0, matmuls_s=cost.matmuls_s(batch, batch) if batch else 0.0,
                chunk_attention_s=0.0,
                decode_attention_s=cost.decode_attention_s(batch, batch * context), state_s=cost.state_s * 2 * batch)


def chunks(prompt_tokens: int, chunk_tokens: int) -> tuple[int, ...]:
    """The prompt's chunk sizes in order: the whole prompt (chunk 0 or a chunk at least as long), or full chunks
    and a shorter last one."""
    if chunk_tokens == 0 or chunk_tokens >= prompt_tokens:
        return (prompt_tokens,)
    full, rest = divmod(prompt_tokens, chunk_tokens)
    return (chunk_tokens,) * full + ((rest,) if rest else ())


@dataclass(frozen=True)
class Interference:
    """A prompt computed beside a decode batch, step by step."""

    batch: int
    context: int
    prompt_tokens: int
    chunk_tokens: int
    steps: tuple[Step, ...]
    decode_s: float  # a decode-only step of the batch (0 without a batch)
    whole_s: float  # the prompt whole, in one step with the batch
    alone_s: float  # the prompt whole, with no batch
    cost: StepCost

    @cached_property
    def ttft_s(self) -> float:
        """From the joiner's arrival to its first token: the sum of its steps."""
        return math.fsum(s.time_s for s in self.steps)

    @property
    def first_step_s(self) -> float:
        return self.steps[0].time_s

    @cached_property
    def longest_index(self) -> int:
        """Where the longest step is (the first of equals), from 0."""
        times = [s.time_s for s in self.steps]
        return times.index(max(times))

    @property
    def longest(self) -> Step:
        """The longest step."""
        return self.steps[self.longest_index]

    @property
    def stall_s(self) -> float:
        """The longest ITL a decoder sees while the prompt is computed: the longest step (0 without a batch)."""
        return self.longest.time_s if self.batch else 0.0

    @property
    def overhead_s(self) -> float:
        """What chunking adds to the joiner's TTFT, against the whole prompt in one step with the same batch."""
        return self.ttft_s - self.whole_s

    @property
    def weight_reads(self) -> int:
        """Reads of the weights while the prompt is computed: one per step."""
        return len(self.steps)

    @property
    def free_chunk(self) -> int:
        """The longest chunk whose step keeps its matmuls memory-bound, the ridge of this batch: chunk + batch
        tokens whose matmul FLOPs take no longer than one read of the weights (a last chunk, which samples a
        token; 0 when the batch alone is past the ridge)."""
        return free_chunk(self.cost, self.batch)


def free_chunk(cost: StepCost, batch: int) -> int:
    """The longest chunk that keeps a step's weight matmuls memory-bound beside `batch` decoders, the chunk and
    every decoder sampling a token: the largest c with (c + batch) x token_s + (batch + 1) x logit_s <= weights_s."""
    c = max(0, math.floor((cost.weights_s - cost.logit_s * (batch + 1)) / cost.token_s) - batch)
    # The closed form is exact in reals; settle float rounding at the boundary against the operation itself.
    while c > 0 and cost.token_s * (c + batch) + cost.logit_s * (batch + 1) > cost.weights_s:
        c -= 1
    while cost.token_s * (c + 1 + batch) + cost.logit_s * (batch + 1) <= cost.weights_s:
        c += 1
    return c


def interfere(m: Model, hw: Hardware, batch: int, context: int, prompt_tokens: int, chunk_tokens: int = 0,
              state_dtype: str = "fp32") -> Interference:
    """One prompt of `prompt_tokens` joining a decode batch of `batch` requests of `context` cached tokens each,
    whole (chunk_tokens = 0) or in chunks of `chunk_tokens`. batch = 0 is the prompt with no batch."""
    b = check_int("batch", batch, 0, MAX_BATCH)
    ctx = check_int("context", context, 0, MAX_CONTEXT)
    p = check_int("prompt_tokens", prompt_tokens, 1, MAX_PROMPT)
    c = check_int("chunk_tokens", chunk_tokens, 0, MAX_PROMPT)
    if c and -(-p // c) > MAX_STEPS:
        raise ValueError(f"chunk_tokens must cut prompt_tokens into at most {MAX_STEPS:,} chunks, got "
                         f"{p:,} ÷ {c:,}")
    feasibility.note(lambda: f"{m.name} on the {hw.name}, a {p:,}-token prompt beside a batch of {b:,} at {ctx:,} "
                             "tokens of context",
                     model_size.resident_weight_bytes(m) + b * cache.request_bytes(m, ctx, state_dtype)
                     + cache.request_bytes(m, p, state_dtype), hw.memory_bytes)
    cost = step_cost(m, hw, state_dtype)
    steps, before = [], 0
    sizes = chunks(p, c)
    for k, size in enumerate(sizes):
        steps.append(step(cost, b, ctx, before, size, last=k == len(sizes) - 1))
        before += size
    return Interference(
        batch=b, context=ctx, prompt_tokens=p, chunk_tokens=c, steps=tuple(steps),
        decode_s=decode_step(cost, b, ctx).time_s,
        whole_s=step(cost, b, ctx, 0, p, last=True).time_s,
        alone_s=step(cost, 0, 0, 0, p, last=True).time_s,
        cost=cost,
    )
