"""One GPU serving a trace of requests: static (request-level) or continuous (iteration-level) batching, with the
KV cache reserved per request or paged, and what a client sees under load.

A deterministic discrete-event simulation. The GPU runs one iteration (step) at a time; every request in
the step advances by one token. Between steps the scheduler decides who is in the next one:

- "static" (request-level, as Triton + FasterTransformer in Orca §1): when the GPU is idle, a batch forms
  at once from the requests waiting, first come first served, up to `max_batch` and what fits in memory.
  It runs until every member has its last token; arrivals meanwhile wait, and a member that finishes early
  cannot be returned (Orca §1), so every member's response leaves when the batch ends. Then the next
  batch forms. Not waiting for a batch to fill up is our choice.
- "continuous" (iteration-level, Orca §4): after every step, requests that have their last token leave
  (and are returned at once) and waiting requests join, first come first served, up to `max_batch` and
  what fits in memory, the admission loop of Orca's Algorithm 1.

How a step is costed (the roofline of sim/physics/roofline.py, with coefficients precomputed per model and GPU by
step_cost, sim/physics/step.py, so that no Estimate is built per step). A step holds J joining requests, whose whole
prompts are processed in it (their prefill, which also emits their first token), and D decoding requests, with
contexts L_1..L_D. Both policies batch them the same way, Orca's selective batching (Orca §4): the
non-attention operations run on all tokens flattened together, attention runs per request. The operations
run one after another, each bounded on its own:
- matmuls: (D + sum of joining prompts) tokens x 2 FLOPs per weight of the decoder layers, plus the LM head for
  the D + J tokens that are sampled (a joiner's logits only at its prompt's last position, as roofline.prefill),
  the weights read once per step;
- prefill attention: each joiner's causal attention over its own prompt, as roofline.prefill, one bound each;
- decode attention: FLOPs over sum(L_i) cached tokens, KV bytes of sum(L_i) rows read and D written. Mixed
  contexts cost their sum: a step of D requests with contexts summing to D x L costs exactly
  roofline.decode(batch=D, context=L);
- recurrent state: written once per joiner, read and written back per decoder.
So a step with joiners also pays their prefill, and the decoders in it wait for that prefill (our choice: no
chunked prefill). A member of a static batch that has finished costs nothing further (our
choice: a generous static baseline, no padding), though it keeps its slot and its memory until the batch
ends. A request of p prompt tokens and o output tokens takes 1 prefill step and o - 1 decode steps; its
context in its k-th decode step is p + k - 1 tokens (roofline.decode's convention: L cached rows read, 1
written).

Memory (`kv_policy`, the names of sim/serving/kv_layout.py) in the memory left beside the whole checkpoint
(memory.py's convention); every request also holds its recurrent state from admission to its return:
- a contiguous policy reserves KV for kv_layout.reservation() tokens at admission and keeps it to the return:
  "contiguous-max" MAX_TOKENS (2,048; FasterTransformer's pre-allocation, Orca §6.1; vLLM's Orca(Max)),
  "contiguous-pow2" the prompt plus the output rounded up to a power of two (vLLM §6.1's Orca(Pow2)),
  "contiguous-oracle" prompt + output (vLLM's Orca(Oracle); Orca's max_tokens in its Algorithm 1 if the trace
  is known). A reservation covers the whole request, so it never runs out.
- "paged" (vLLM §4): KV in blocks of BLOCK_SIZE = 16 tokens (vLLM §7.2), allocated as they are written: a
  joiner takes the blocks of the prompt its prefill writes, and a decoder a new block when its next KV row
  starts one (during decode step k a request holds ceil((p + k) / 16) blocks). The scheduler admits a joiner
  only if its state and its prompt's blocks fit beside what the decoders need for the same step and still leave
  WATERMARK = 1 % of the memory free (vLLM's block manager: `watermark: float = 0.01`, "watermark_blocks =
  int(watermark * num_gpu_blocks)", vllm/core/block_manager.py before V1; without it a paged server thrashes,
  admitting requests it soon preempts, and can fall behind an oracle reservation). When the decoders' next step needs
  more blocks than are free, the request admitted last is preempted (vLLM V1's scheduler pops the end of its
  running queue), as many as it takes: its blocks and its state are freed, it goes back to the front of the
  queue keeping the tokens it has generated, and when it is admitted again it recomputes them, one prefill
  over prompt + generated tokens that also samples its next token (vLLM V1 preempts by recompute only).
A request whose whole need (its reservation; paged: the blocks of its whole length) exceeds the free memory
alone (paged: less the watermark, as vLLM's block manager answers NEVER) can never run: it is rejected, listed
in `rejected`, and left out of every metric. Admission stops at the first request that does not fit (first come
first served, no skipping).

Metrics, as a streaming client sees them (DistServe §2's definitions), each in seconds:
- TTFT = first token - arrival (the first token of its first prefill; a recompute does not move it);
- TPOT = (last token - first token) / (output - 1), the mean gap between its later tokens (none for o = 1);
- end-to-end latency = return - arrival; the normalized latency = end-to-end / output tokens (Orca §6, vLLM §6);
- percentiles are interpolated linearly between order statistics (numpy's default), over the requests after
  the warm-up: the first WARMUP_SHARE of the trace, which met a server that started empty, is left out;
- throughput = output tokens of the measured requests / (their last return - the first one's arrival);
- capacity (capacity()): the rate the policy sustains with a queue that never empties, every request of the
  trace waiting at t = 0: completions per second between the first and the last tenth of them. Above it the
  queue grows without bound, every latency grows with the trace, and a percentile measures only how long the
  trace is; a Schedule at a rate above its capacity says `overloaded` and its latency figures say so too;
- goodput = requests per second that meet both a TTFT and a TPOT target: the throughput in requests times
  the share of measured requests that meet both; 0 when overloaded (in the long run no request meets a TTFT
  target behind a queue that keeps growing);
- mean_batch = requests computed per step, weighted by step time (sum of step x batch / busy time).

Steady state: serve() doubles the trace from STEADY_START = 2,000 requests until every percentile above moves
by less than STEADY_TOLERANCE = 2 % when the trace doubles, or the trace reaches STEADY_CAP = 8,000 (OUR CHOICE,
what a slider move can afford); each doubling goes on from the moment the shorter trace's last request arrived
(_prefix_schedules), so the whole costs about one run of the longest; the Schedule keeps the last doubling's
largest move (`settle_change`), and says it has not settled when that is 2 % or more, as happens close to
capacity, where queues come and go slowly.
capacity() runs CAPACITY_REQUESTS = 4,000 requests; sustained() takes serve()'s steady state at each rate it tries,
the run the widget shows at that rate. The timeline the widget draws is the first DRAWN_REQUESTS = 48 of the trace.

Results: a Schedule holds every request (Served: its arrival, start, first-token, done and finish times) and
every step, stored as Segments, runs of steps with the same requests in them: a step with joiners alone, or
the decode steps between two events (a request leaves, one arrives while there is room for it, or paged memory
runs out). Within a run each step reads one more KV row per request than the one before, so step k takes
first + k x growth and the run has a closed form; Schedule.steps() expands the runs into single steps. (This
needs decode attention memory-bound at every context, which holds for every preset: its intensity is the GQA
group size, far below any ridge; otherwise the simulation takes one step per run.) The widget redraws on every
slider move, so this is what keeps it fast.

Determinism: no set iteration, no clock, no global random; float sums over many terms use math.fsum, which
rounds once, so CPython 3.11 and Pyodide's 3.14 give the same last bit.
"""

from __future__ import annotations

import bisect
import copy
import functools
import heapq
import math
from collections import deque
from dataclasses import dataclass, replace
from functools import cached_property
from typing import NamedTuple

from sim.physics import cache, model_size, moe, parallel
from sim.physics.presets import Hardware, Model
from sim.physics.step import StepCost, step_cost  # also as scheduler.step_cost: the lessons' expressions write it so
from sim.physics.validate import check_choice, check_int, check_positive
from sim.serving import kv_layout, traces
from sim.serving.traces import MAX_TOKENS, Request

POLICIES = ("static", "continuous")
KV_POLICIES = kv_layout.POLICIES  # contiguous-max, contiguous-pow2, contiguous-oracle, paged
BLOCK_SIZE = kv_layout.DEFAULT_BLOCK_SIZE
MAX_BATCH = 4_096
MAX_TOKEN_BUDGET = 1_000_000  # tokens per chunked step, a guard against a typo

# The scenario serve() runs by default, which the batching-timeline widget starts from. All OUR CHOICE: an
# arrival rate both policies sustain on the anchor model and an H100 at max_batch 16 (static's capacity is
# about 7.4 req/s there), so that their latencies are a steady state; a max batch between FasterTransformer's
# best setting in Orca §6.2 (8) and the memory limit at 2,048-token reservations. OVERLOADED_RATE_PER_S is the
# named overloaded scenario: past static batching's capacity, within continuous batching's.
DEFAULT_TRACE = "orca"
DEFAULT_RATE_PER_S = 5
OVERLOADED_RATE_PER_S = 12
DEFAULT_MAX_BATCH = 16
DEFAULT_KV_POLICY = "contiguous-max"
DEFAULT_SEED = 0
WATERMARK = 0.01  # paged admission leaves this share of the memory for requests free (vLLM's block manager)
STEADY_START = 2_000
STEADY_CAP = 8_000
STEADY_TOLERANCE = 0.02
# A saturated server's rate of returns settles long before its percentiles would: 4,000 requests put it within
# 1 % of the rate over 8,000 on every scenario the tests check (OUR CHOICE, half the work of STEADY_CAP).
CAPACITY_REQUESTS = 4_000
DRAWN_REQUESTS = 48
WARMUP_SHARE = 0.1
# Latency targets of the goodput readout (OUR CHOICE, in the range DistServe §6 uses for chatbots): the first
# token within a second, later tokens at 50 ms or better (20 tokens/s, faster than people read).
DEFAULT_TTFT_TARGET_S = 1.0
DEFAULT_TPOT_TARGET_S = 0.05


def reservation_bytes(m: Model, r: Request, kv_policy: str, state_dtype: str = "fp32") -> int:
    """Memory a request holds at most, from admission to its return: its contiguous reservation, or (paged) the
    blocks of its whole length; plus its recurrent state."""
    check_choice("kv_policy", kv_policy, KV_POLICIES)
    return _needs((r,), m, kv_policy, state_dtype)[0]


def _needs(reqs, m: Model, kv_policy: str, state_dtype: str) -> list[int]:
    """reservation_bytes of every request (kv_policy already checked), the sizes per token and per request looked
    up once."""
    kv, state = cache.kv_bytes_per_token(m), cache.state_bytes_per_request(m, state_dtype)
    if kv_policy == "paged":
        return [_paged_blocks(r.prompt_tokens + r.output_tokens - 1) * BLOCK_SIZE * kv + state for r in reqs]
    if kv_policy == "contiguous-max":
        return [kv_layout.MAX_TOKENS * kv + state] * len(reqs)
    return [kv_layout.reservation(kv_policy, r.prompt_tokens, r.output_tokens) * kv + state for r in reqs]


def _paged_blocks(tokens: int) -> int:
    """Blocks that hold `tokens` KV rows."""
    return -(-tokens // BLOCK_SIZE)


def free_bytes(m: Model, hw: Hardware) -> float:
    """Memory left for requests beside the whole checkpoint (0 if it does not fit)."""
    return max(0.0, hw.memory_bytes - model_size.resident_weight_bytes(m))


def fit_at_max(m: Model, hw: Hardware, state_dtype: str = "fp32") -> int:
    """Requests that fit at once when each reserves MAX_TOKENS tokens of KV (plus its state)."""
    per_request = MAX_TOKENS * cache.kv_bytes_per_token(m) + cache.state_bytes_per_request(m, state_dtype)
    return int(free_bytes(m, hw) // per_request)


class Served(NamedTuple):
    """What happened to one request. Times in seconds from the trace's t = 0; None if it was rejected."""

    request: Request
    start_s: float | None  # its (first) prefill step starts
    first_token_s: float | None  # its first prefill step ends, with its first token
    done_s: float | None  # the step with its last token ends
    finish_s: float | None  # it is returned: its static batch's end, or done_s
    batch: int | None  # index of the static batch it finished in (static only)
    preemptions: int = 0  # times its KV was freed and later recomputed (paged only)

    @property
    def served(self) -> bool:
        return self.finish_s is not None

    @property
    def wait_s(self) -> float:
        return self.start_s - self.request.arrival_s

    @property
    def ttft_s(self) -> float:
        """Time to first token: arrival to the end of its prefill."""
        return self.first_token_s - self.request.arrival_s

    @property
    def tpot_s(self) -> float | None:
        """Time per output token after the first: (last token - first token) / (output - 1); None for one token."""
        o = self.request.output_tokens
        return (self.done_s - self.first_token_s) / (o - 1) if o > 1 else None

    @property
    def latency_s(self) -> float:
        """End-to-end latency: arrival to return."""
        return self.finish_s - self.request.arrival_s

    @property
    def latency_per_token_s(self) -> float:
        """Normalized latency: end-to-end latency / output tokens (Orca §6, vLLM §6)."""
        return self.latency_s / self.request.output_tokens

    def meets(self, ttft_target_s: float, tpot_target_s: float) -> bool:
        """Its first token within ttft_target_s and its later tokens at tpot_target_s or better."""
        tpot = self.tpot_s
        return self.ttft_s <= ttft_target_s and (tpot is None or tpot <= tpot_target_s)


class Segment(NamedTuple):
    """A run of consecutive steps with the same requests in them: one step that holds joiners, or a stretch of
    decode steps between two events. Step k of the run (k = 0, 1, ...) takes first_step_s + k x growth_s: the
    batch stays the same and each step reads one more KV row per request than the one before."""

    start_s: float
    steps: int
    first_step_s: float
    growth_s: float
    batch: int  # requests computed in each step (joiners included)
    joiners: int  # requests whose prefill is in the step (a one-step segment), else 0

    @property
    def duration_s(self) -> float:
        return self.elapsed_s(self.steps)

    @property
    def end_s(self) -> float:
        return self.start_s + self.duration_s

    def elapsed_s(self, k: int) -> float:
        """Time from the segment's start to the end of its first k steps."""
        return _elapsed(self.first_step_s, self.growth_s, k)


def _elapsed(first: float, growth: float, k: int) -> float:
    """k steps of first, first + growth, first + 2 growth, ..."""
    return k * first + growth * (k * (k - 1) // 2)


def _steps_until(t: float, until_s: float, first: float, growth: float) -> int:
    """The fewest steps (at least 1) of first, first + growth, ... from t that reach until_s."""
    gap_s = until_s - t
    if growth > 0:  # solve growth/2 k^2 + (first - growth/2) k = gap, then settle the rounding
        b = first - growth / 2
        k = (-b + math.sqrt(b * b + 2 * growth * gap_s)) / growth
    else:
        k = gap_s / first
    k = max(1, math.ceil(k))
    while k > 1 and t + _elapsed(first, growth, k - 1) >= until_s:
        k -= 1
    while t + _elapsed(first, growth, k) < until_s:
        k += 1
    return k


class Step(NamedTuple):
    start_s: float
    time_s: float
    batch: int
    joiners: int


@dataclass(frozen=True)
class Schedule:
    """A trace served by one GPU under one policy: every request, and every step (in segments)."""

    policy: str
    max_batch: int
    kv_policy: str
    capacity_bytes: float  # memory for requests, beside the checkpoint
    requests: tuple[Served, ...]  # by id
    segments: tuple[Segment, ...]
    peak_reserved_bytes: float  # the most memory held at once (paged: blocks and states)
    rate_per_s: float | None = None  # the offered load, when the trace is a Poisson one (serve())
    capacity_per_s: float | None = None  # the policy's capacity on this trace (serve()), requests/s
    settle_change: float | None = None  # serve(): the largest move of a percentile when the trace last doubled

    @cached_property
    def served(self) -> tuple[Served, ...]:
        return tuple(s for s in self.requests if s.served)

    @property
    def rejected(self) -> tuple[int, ...]:
        """Ids of requests whose need alone exceeds the free memory."""
        return tuple(s.request.id for s in self.requests if not s.served)

    @cached_property
    def measured(self) -> tuple[Served, ...]:
        """The served requests after the warm-up (the first WARMUP_SHARE of the trace), which the metrics use."""
        skip = math.ceil(WARMUP_SHARE * len(self.requests))
        return tuple(s for s in self.requests[skip:] if s.served)

    @cached_property
    def output_tokens(self) -> int:
        return sum(s.request.output_tokens for s in self.served)

    @cached_property
    def preemptions(self) -> int:
        return sum(s.preemptions for s in self.requests)

    @property
    def settled(self) -> bool:
        """Every percentile moved by less than STEADY_TOLERANCE when the trace last doubled (serve())."""
        return self.settle_change is not None and self.settle_change < STEADY_TOLERANCE

    @property
    def overloaded(self) -> bool:
        """The offered load exceeds the policy's capacity: the queue grows without bound."""
        return self.rate_per_s is not None and self.capacity_per_s is not None and self.rate_per_s > self.capacity_per_s

    @cached_property
    def makespan_s(self) -> float:
        """First arrival to last return, over the served requests (0 if none)."""
        if not self.served:
            return 0.0
        return max(s.finish_s for s in self.served) - min(s.request.arrival_s for s in self.served)

    @cached_property
    def _completions(self) -> tuple[float, float, int, int]:
        """(first, last, requests, output tokens) of the measured requests' returns after the first."""
        finishes = sorted((s.finish_s, s.request.output_tokens) for s in self.measured)
        if len(finishes) < 2:
            return 0.0, 0.0, 0, 0
        first = finishes[0][0]
        later = [(f, o) for f, o in finishes if f > first]
        return first, finishes[-1][0], len(later), sum(o for _, o in later)

    @property
    def window_s(self) -> float:
        """From the first measured request's return to the last's (0 if fewer than two)."""
        first, last, _, _ = self._completions
        return last - first

    @property
    def requests_per_s(self) -> float:
        """Returns per second over the window: the offered rate below capacity, the capacity above it."""
        _, _, requests, _ = self._completions
        return requests / self.window_s if self.window_s > 0 else 0.0

    @property
    def throughput_tokens_per_s(self) -> float:
        """Output tokens of the requests returned in the window, per second."""
        _, _, _, tokens = self._completions
        return tokens / self.window_s if self.window_s > 0 else 0.0

    @cached_property
    def ttfts_s(self) -> tuple[float, ...]:
        return tuple(sorted(s.ttft_s for s in self.measured))

    @cached_property
    def tpots_s(self) -> tuple[float, ...]:
        return tuple(sorted(s.tpot_s for s in self.measured if s.tpot_s is not None))

    @cached_property
    def latencies_s(self) -> tuple[float, ...]:
        return tuple(sorted(s.latency_s for s in self.measured))

    @cached_property
    def latencies_per_token_s(self) -> tuple[float, ...]:
        """Every measured request's normalized latency, sorted."""
        return tuple(sorted(s.latency_per_token_s for s in self.measured))

    @property
    def ttft_p50_s(self) -> float:
        return percentile(self.ttfts_s, 50)

    @property
    def ttft_p90_s(self) -> float:
        return percentile(self.ttfts_s, 90)

    @property
    def tpot_p50_s(self) -> float:
        return percentile(self.tpots_s, 50)

    @property
    def tpot_p90_s(self) -> float:
        return percentile(self.tpots_s, 90)

    @property
    def latency_p50_s(self) -> float:
        return percentile(self.latencies_s, 50)

    @property
    def latency_p90_s(self) -> float:
        return percentile(self.latencies_s, 90)

    @property
    def latency_per_token_p50_s(self) -> float:
        return percentile(self.latencies_per_token_s, 50)

    @property
    def latency_per_token_p90_s(self) -> float:
        return percentile(self.latencies_per_token_s, 90)

    def attainment(self, ttft_target_s: float = DEFAULT_TTFT_TARGET_S,
                   tpot_target_s: float = DEFAULT_TPOT_TARGET_S) -> float:
        """Share of the measured requests that meet both targets (0 if none is measured)."""
        if not self.measured:
            return 0.0
        return sum(s.meets(ttft_target_s, tpot_target_s) for s in self.measured) / len(self.measured)

    def goodput_per_s(self, ttft_target_s: float = DEFAULT_TTFT_TARGET_S,
                      tpot_target_s: float = DEFAULT_TPOT_TARGET_S) -> float:
        """Requests per second that meet both targets; 0 when overloaded (see the module docstring)."""
        if self.overloaded:
            return 0.0
        return self.requests_per_s * self.attainment(ttft_target_s, tpot_target_s)

    @cached_property
    def busy_s(self) -> float:
        """Time the GPU spends in steps."""
        return math.fsum(g.duration_s for g in self.segments)

    @cached_property
    def mean_batch(self) -> float:
        """Requests computed per step, weighted by step time."""
        if not self.segments:
            return 0.0
        return math.fsum(g.duration_s * g.batch for g in self.segments) / self.busy_s

    @property
    def step_count(self) -> int:
        return sum(g.steps for g in self.segments)

    @property
    def max_step_batch(self) -> int:
        return max((g.batch for g in self.segments), default=0)

    @property
    def mean_wait_s(self) -> float:
        """Mean time from arrival to the start of the first prefill, over the measured requests."""
        return math.fsum(s.wait_s for s in self.measured) / len(self.measured) if self.measured else 0.0

    @cached_property
    def end_s(self) -> float:
        """When the last request is returned (0 if none is)."""
        return max((s.finish_s for s in self.served), default=0.0)

    def steps(self) -> tuple[Step, ...]:
        """Every step, one by one (the segments expanded)."""
        return tuple(Step(g.start_s + g.elapsed_s(k), g.first_step_s + k * g.growth_s, g.batch, g.joiners)
                     for g in self.segments for k in range(g.steps))


# The percentiles whose settling serve() waits for.
PERCENTILES = ("ttft_p50_s", "ttft_p90_s", "tpot_p50_s", "tpot_p90_s", "latency_p50_s", "latency_p90_s",
               "latency_per_token_p50_s", "latency_per_token_p90_s")


@functools.lru_cache(maxsize=64)  # a lesson asks for a few dozen scenarios; a steady Schedule holds a few MB
def serve(m: Model, hw: Hardware, policy: str, trace: str = DEFAULT_TRACE, rate_per_s: float = DEFAULT_RATE_PER_S,
          max_batch: int = DEFAULT_MAX_BATCH, n: int | None = None, seed: int = DEFAULT_SEED,
          kv_policy: str = DEFAULT_KV_POLICY, state_dtype: str = "fp32") -> Schedule:
    """A trace preset (sim/serving/traces.py) at a Poisson rate served by model m on GPU hw, knowing its capacity: the
    widget's scenario, by default its default. n=None runs to a steady state (see the module docstring); a given
    n runs that many requests once. Cached: a Schedule is immutable, and the widget asks for both policies' on
    every move."""
    limit = capacity(m, hw, policy, trace, max_batch, seed, kv_policy, state_dtype)
    cost = step_cost(m, hw, state_dtype)

    def run(k: int) -> Schedule:
        reqs = _requests(trace, k, rate_per_s, seed)
        plain = schedule(reqs, m, hw, policy, max_batch, kv_policy=kv_policy, state_dtype=state_dtype, cost=cost)
        return _with_load(plain, rate_per_s, limit)

    if n is not None:
        return run(check_int("n", n, 1, traces.MAX_REQUESTS))
    if rate_per_s > limit:  # overloaded: its percentiles grow with the trace, no steady state to wait for; its
        return run(CAPACITY_REQUESTS)  # throughput is the capacity's, measured on the same requests as capacity()'s
    lengths = [STEADY_START]  # the trace doubles until it settles or reaches STEADY_CAP
    while lengths[-1] < STEADY_CAP:
        lengths.append(2 * lengths[-1])
    # Each doubling is a run of its own (its last requests drain with no more coming), computed by going on from
    # where the run before it had its last arrival: one pass over the longest trace, not a pass per length.
    runs = _prefix_schedules(_requests(trace, lengths[-1], rate_per_s, seed), lengths, m, hw, policy, max_batch,
                             kv_policy, state_dtype, cost)
    last = _with_load(next(runs), rate_per_s, limit)
    for longer in runs:
        change = max((abs(getattr(longer, name) / getattr(last, name) - 1) for name in PERCENTILES
                      if getattr(last, name) > 0), default=0.0)
        last = _with_load(longer, rate_per_s, limit, change)
        if change < STEADY_TOLERANCE:
            break
    return last


def _with_load(run: Schedule, rate_per_s: float, capacity_per_s: float, settle_change: float | None = None):
    return replace(run, rate_per_s=rate_per_s, capacity_per_s=capacity_per_s, settle_change=settle_change)


@functools.lru_cache(maxsize=16)
def _requests(trace: str, n: int, rate_per_s: float, seed: int) -> tuple[Request, ...]:
    """traces.requests, kept: both policies of a scenario serve the same trace."""
    return tuple(traces.requests(trace, n, rate_per_s, seed))


@functools.lru_cache(maxsize=128)
def capacity(m: Model, hw: Hardware, policy: str, trace: str = DEFAULT_TRACE, max_batch: int = DEFAULT_MAX_BATCH,
             seed: int = DEFAULT_SEED, kv_policy: str = DEFAULT_KV_POLICY, state_dtype: str = "fp32") -> float:
    """Requests per second the policy sustains on the trace with a queue that never empties: CAPACITY_REQUESTS
    all waiting at t = 0, returns per second after the warm-up, as Schedule.requests_per_s (0 if none runs)."""
    lengths = traces.lengths(trace, CAPACITY_REQUESTS, seed)
    reqs = tuple(Request(i, 0.0, p, o) for i, (p, o) in enumerate(lengths))
    run = schedule(reqs, m, hw, policy, max_batch, kv_policy=kv_policy, state_dtype=state_dtype,
                   cost=step_cost(m, hw, state_dtype))
    return run.requests_per_s


def capacity_gain(m: Model, hw: Hardware, seed: int = DEFAULT_SEED, **scenario) -> float:
    """Continuous over static batching's capacity on the same trace (capacity()'s arguments but the policy)."""
    static = capacity(m, hw, "static", seed=seed, **scenario)
    return capacity(m, hw, "continuous", seed=seed, **scenario) / static if static else 0.0


# sustained() runs one trace of this many requests at each rate it tries (OUR CHOICE: the length at which the default
# scenario's percentiles have settled), rather than serve()'s doubling, which would double its work.
# The arrival rates a student can set (OUR CHOICE, the batching-timeline widget's control): 0.5 to 50 req/s in steps
# of 0.5. sustained() tries every one of them, so that the rate it finds is one the widget can be set to.
MIN_RATE_PER_S, MAX_RATE_PER_S, RATE_STEP_PER_S = 0.5, 50, 0.5
RATE_GRID_PER_S = tuple(MIN_RATE_PER_S + k * RATE_STEP_PER_S
                        for k in range(round((MAX_RATE_PER_S - MIN_RATE_PER_S) / RATE_STEP_PER_S) + 1))


@functools.lru_cache(maxsize=32)
def sustained(m: Model, hw: Hardware, policy: str, latency_per_token_s: float, trace: str = DEFAULT_TRACE,
              max_batch: int = DEFAULT_MAX_BATCH, seed: int = DEFAULT_SEED, kv_policy: str = DEFAULT_KV_POLICY,
              state_dtype: str = "fp32") -> Schedule | None:
    """The steady-state run at the highest arrival rate of RATE_GRID_PER_S that is within the policy's capacity and
    keeps the median latency per output token within latency_per_token_s; None if the lowest rate does not.

    Throughput at a latency target is how Orca (§6.2) and vLLM (§6) compare systems; the run's rate_per_s is the
    rate served. In steady state the median only grows with the load, so the grid is searched by highest_meeting
    (the tests check the rates around the answer). The top of the grid caps it: a run at its last rate may sustain
    more."""
    check_positive("latency_per_token_s", latency_per_token_s)

    runs = {}  # rate index -> its run; serve's own cache is kept for the scenarios asked for directly
    limit = capacity(m, hw, policy, trace, max_batch, seed, kv_policy, state_dtype)

    def margin(k: int) -> float:
        """How far the run at rate k is within the target (the rates above the capacity left out by `top`)."""
        if k not in runs:
            runs[k] = serve.__wrapped__(m, hw, policy, trace, RATE_GRID_PER_S[k], max_batch, None, seed, kv_policy,
                                        state_dtype)
        return latency_per_token_s - runs[k].latency_per_token_p50_s

    # A run close to the capacity is the dearest (its queues take the longest trace to settle): start half way.
    top = highest_within(RATE_GRID_PER_S, limit)
    k = highest_meeting(top, margin, first=top // 2)
    return None if k is None else runs[k]


def highest_within(grid, limit: float) -> int:
    """The index of the highest rate of an increasing grid that is within `limit` (-1 if none is)."""
    return bisect.bisect_right(grid, limit) - 1


def highest_meeting(top: int, margin, first: int | None = None) -> int | None:
    """The highest index of 0..top whose margin(k) is at least 0, for a margin that only falls as k grows (indices
    above `top` are known to fail); None if margin(0) is below 0. margin(k) is a measured distance from the test
    (the goal's share met less the goal, say).

    Each probe lies strictly between the highest index known to meet and the lowest known to fail, so the search
    ends. It starts at `first` (by default `top`, where a probe that meets settles the search at once) and halves
    the bracket until both its ends have a margin. Then it interpolates the margin linearly between them (false
    position: a serving metric crosses its target smoothly, so a probe lands near the answer). When the same end
    moves twice in a row, the other end's margin is halved (the Illinois method), and a probe that left more than
    half of the bracket is followed by a halving."""
    if top < 0:
        return None
    lo, lo_margin, hi, hi_margin = -1, None, top + 1, None  # lo meets (-1: none known yet), hi fails
    k, last_side, width = top if first is None else min(max(first, 0), top), 0, hi - lo
    while True:
        m = margin(k)
        if m >= 0:
            lo, lo_margin = k, m
            if last_side == 1 and hi_margin is not None:
                hi_margin /= 2
            last_side = 1
        else:
            hi, hi_margin = k, m
            if last_side == -1 and lo_margin is not None:
                lo_margin /= 2
            last_side = -1
        if hi - lo <= 1:
            return lo if lo >= 0 else None
        if lo_margin is None or hi_margin is None or 2 * (hi - lo) > width:
            k = (lo + hi) // 2 if lo >= 0 else hi // 2
        else:
            k = lo + round((hi - lo) * lo_margin / (lo_margin - hi_margin))
        width = hi - lo
        k = min(max(k, lo + 1), hi - 1)


def percentile(ordered, p: float) -> float:
    """The p-th percentile of sorted values, interpolated linearly between order statistics (0 if empty)."""
    if not ordered:
        return 0.0
    k = (len(ordered) - 1) * p / 100
    i = math.floor(k)
    if i + 1 >= len(ordered):
        return ordered[-1]
    return ordered[i] + (ordered[i + 1] - ordered[i]) * (k - i)


# What one GPU runs: both phases, or one of them (sim/serving/slo.py's disaggregation).
ROLES = ("both", "prefill", "decode")


def schedule(reqs, m: Model, hw: Hardware, policy: str, max_batch: int, kv_policy: str = DEFAULT_KV_POLICY,
             state_dtype: str = "fp32", cost: StepCost | None = None, token_budget: int | None = None,
             role: str = "both", kv_blocks: int | None = None, tensor_parallel: int = 1,
             link: str | None = None, timing: str = "formula", expert_parallel: int = 1) -> Schedule:
    """Serve `reqs` (ids 0..n-1 in arrival order) on one GPU under `policy`; see the module docstring.

    Continuous batching only, with paged KV: `token_budget` chunks prompts as vLLM V1 does (_Simulation.run_chunked);
    role "prefill" computes only prompts, in chunks (a request is done with its first token), and role "decode"
    takes requests whose prompt's KV arrives with them (each request's arrival is its KV's) and generates all their
    tokens: as an engine must, its first step with a request recomputes the prompt's last token (the one whose
    logits give the first token; the request brings the KV of the others) and samples the first token there.

    Paged only: `kv_blocks` replaces the memory beside the checkpoint with the KV pool an engine reported, that many
    blocks of BLOCK_SIZE tokens (vLLM's num_gpu_blocks), admitted without a watermark as vLLM V1's KV cache manager
    admits (it allocates while the free blocks suffice); sim/serving/replay.py replays a real run so.

    `tensor_parallel` n > 1 serves on n GPUs of hw as one engine (Megatron-LM tensor parallelism,
    sim/physics/parallel.py): memory, KV and state are each GPU's share (parallel.shard; `kv_blocks` then counts
    one GPU's blocks, as vLLM reports them), and a step costs its shard's roofline plus its 2 all-reduces per layer
    on `link` (default: the GPU's own, parallel.default_interconnect) timed by `timing` (parallel.step_cost). A
    `cost` given replaces that cost and must include the all-reduces itself.

    `expert_parallel` n > 1 serves an MoE model's requests on one of n GPUs that split its routed experts and each
    serve their own requests (sim/physics/moe.py): memory and KV are that GPU's (moe.ep_shard: its E / n experts
    and everything else whole), and a step costs its roofline, whose MoE layers see n times its tokens, plus 2
    all-to-alls per MoE layer on `link` (moe.step_cost). The other n - 1 GPUs are taken to carry the same load; a
    caller serving all n splits the requests among them (sim/serving/replay.py)."""
    sim = _checked(reqs, m, hw, policy, max_batch, kv_policy, state_dtype, cost, token_budget, role, kv_blocks,
                   tensor_parallel, link, timing, expert_parallel)
    sim.run()
    return sim.result(len(sim.reqs), policy, max_batch, kv_policy)


def served(reqs, m: Model, hw: Hardware, policy: str, max_batch: int, kv_policy: str = DEFAULT_KV_POLICY,
           state_dtype: str = "fp32", cost: StepCost | None = None, token_budget: int | None = None,
           role: str = "both", kv_blocks: int | None = None, tensor_parallel: int = 1, link: str | None = None,
           timing: str = "formula", expert_parallel: int = 1) -> tuple[Served, ...]:
    """schedule(...).requests, for a caller that reads nothing else: the steps are not recorded."""
    sim = _checked(reqs, m, hw, policy, max_batch, kv_policy, state_dtype, cost, token_budget, role, kv_blocks,
                   tensor_parallel, link, timing, expert_parallel)
    sim.segments = None
    sim.run()
    return sim.result(len(sim.reqs), policy, max_batch, kv_policy, requests_only=True)


def _checked(reqs, m: Model, hw: Hardware, policy: str, max_batch: int, kv_policy: str, state_dtype: str,
             cost: StepCost | None, token_budget: int | None, role: str,
             kv_blocks: int | None = None, tensor_parallel: int = 1, link: str | None = None,
             timing: str = "formula", expert_parallel: int = 1) -> _Simulation:
    """schedule()'s arguments checked, and its run set up."""
    check_choice("policy", policy, POLICIES)
    check_choice("kv_policy", kv_policy, KV_POLICIES)
    check_choice("role", role, ROLES)
    max_batch = check_int("max_batch", max_batch, 1, MAX_BATCH)
    if token_budget is not None:
        token_budget = check_int("token_budget", token_budget, max_batch, MAX_TOKEN_BUDGET)
    if (token_budget is not None or role != "both") and (policy != "continuous" or kv_policy != "paged"):
        raise ValueError("a token budget or a single role needs continuous batching with paged KV")
    if (role == "prefill" and token_budget is None) or (role == "decode" and token_budget is not None):
        raise ValueError("a prefill instance needs a token budget, a decode instance none")
    if kv_blocks is not None:
        kv_blocks = check_int("kv_blocks", kv_blocks, 1, 10**9)
        if kv_policy != "paged":
            raise ValueError("kv_blocks needs paged KV")
    n = check_int("tensor_parallel", tensor_parallel, 1, parallel.MAX_TENSOR_PARALLEL)
    ep = check_int("expert_parallel", expert_parallel, 1, moe.MAX_EXPERT_PARALLEL)
    if n > 1 and ep > 1:
        raise ValueError("tensor and expert parallelism together are not modelled: choose one")
    if n > 1:
        cost = cost or parallel.step_cost(m, hw, n, link, timing, state_dtype)
        m = parallel.shard(m, n)
    if ep > 1:
        cost = cost or moe.step_cost(m, hw, ep, link, state_dtype)
        m = moe.ep_shard(m, ep)
    sim = _simulation(reqs, m, hw, policy, max_batch, kv_policy, state_dtype, cost, token_budget, role)
    if kv_blocks is not None:
        sim.capacity = kv_blocks * sim.block_bytes
        sim.watermark = 0
    return sim


def _simulation(reqs, m: Model, hw: Hardware, policy: str, max_batch: int, kv_policy: str, state_dtype: str,
                cost: StepCost | None, token_budget: int | None, role: str) -> _Simulation:
    """A run of `reqs` set up and not yet started (the arguments checked by schedule())."""
    reqs = tuple(reqs)
    if [r.id for r in reqs] != list(range(len(reqs))):
        raise ValueError("requests must have ids 0..n-1")
    if any(b.arrival_s < a.arrival_s for a, b in zip(reqs, reqs[1:])):
        raise ValueError("requests must be in arrival order")
    cost = cost or step_cost(m, hw, state_dtype)
    sim = _Simulation(reqs, cost, max_batch, _needs(reqs, m, kv_policy, state_dtype), free_bytes(m, hw),
                      kv_policy == "paged", cache.state_bytes_per_request(m, state_dtype),
                      BLOCK_SIZE * cache.kv_bytes_per_token(m))
    sim.static = policy == "static"
    sim.token_budget = token_budget
    sim.prefill_only = token_budget is not None and role == "prefill"
    sim.prefilled = token_budget is None and role == "decode"
    return sim


class Instance:
    """One GPU of several, whose requests are handed to it one at a time as they reach it (sim/serving/slo.py's
    dispatch): served as schedule() serves a trace known in advance (continuous batching, paged KV, `token_budget` and
    `role` as there), to the last bit when it is handed the same requests, except that no stretch of decode steps
    with room for another request runs past the time the next one could come (`advance`), which splits a closed
    form in two and can move a time by a rounding. What a dispatcher sees of it at time t (`queued`, `holding`)
    is what has happened by t: a step that ends after t has not yet returned its tokens."""

    def __init__(self, m: Model, hw: Hardware, max_batch: int, cost: StepCost, token_budget: int | None = None,
                 role: str = "both"):
        self.sim = sim = _checked((), m, hw, "continuous", max_batch, "paged", "fp32", cost, token_budget, role)
        sim.reqs, sim.segments, sim.open = [], None, True
        self.m = m
        self.waiting_first, self.on_board = [], []  # requests without their first token / their last, by t so far

    def advance(self, t: float) -> None:
        """Run every step that starts before t; a request handed over at t is seen by the next step."""
        self.sim.horizon = t
        self.sim.run()

    def take(self, request: Request) -> int:
        """Hand over a request arriving now (after advance(request.arrival_s)); its number on this GPU."""
        sim, k = self.sim, self.sim.end
        sim.reqs.append(Request(k, request.arrival_s, request.prompt_tokens, request.output_tokens))
        sim.need.append(_needs((request,), self.m, "paged", "fp32")[0])
        sim.arrival.append(request.arrival_s)
        sim.start.append(None)
        sim.first.append(None)
        sim.done.append(None)
        sim.finish.append(None)
        sim.batch.append(None)
        sim.preempted.append(0)
        sim.generated.append(0)
        sim.end += 1
        if sim.need[k] <= sim.capacity - sim.watermark:  # one that can never run is rejected and never waits
            self.waiting_first.append(k)
            self.on_board.append(k)
        return k

    def queued(self, t: float) -> int:
        """Requests handed over whose first token has not come by t: waiting, or their prompt being computed."""
        first = self.sim.first
        self.waiting_first = [k for k in self.waiting_first if first[k] is None or first[k] > t]
        return len(self.waiting_first)

    def holding(self, t: float) -> int:
        """Requests handed over whose last token has not come by t."""
        done = self.sim.done
        self.on_board = [k for k in self.on_board if done[k] is None or done[k] > t]
        return len(self.on_board)

    def finish(self) -> tuple[Served, ...]:
        """Serve what it was handed to the end: every request's Served, in the order taken."""
        sim = self.sim
        sim.open, sim.horizon = False, math.inf
        sim.run()
        return sim.result(sim.end, "continuous", sim.max_batch, "paged", requests_only=True)


def _prefix_schedules(reqs, lengths, m: Model, hw: Hardware, policy: str, max_batch: int, kv_policy: str,
                      state_dtype: str, cost: StepCost):
    """schedule(reqs[:n], ...) for each n of `lengths` (increasing) in turn, each equal to its own run to the last
    bit, for the price of one run of the longest and the others' drains. A trace and its first n requests are
    served alike until the n-th has arrived (only then does the run see whether another is coming), so each run
    is forked there: the fork goes on with the longer trace, the run itself drains as the shorter one."""
    sim = _simulation(reqs, m, hw, policy, max_batch, kv_policy, state_dtype, cost, None, "both")
    for k, n in enumerate(lengths):
        sim.end = n
        sim.fork_when_all_arrived = k + 1 < len(lengths)
        sim.run()
        yield sim.result(n, policy, max_batch, kv_policy)
        sim = sim.fork


class _Simulation:
    """The state of one run as it goes: the clock, who waits and who decodes, and what has been recorded.

    Steps are taken a segment at a time: between two events (a request joins, one leaves, one arrives while
    there is room for it, paged memory runs out) the batch does not change, so a whole stretch of decode steps
    has a closed form.

    Step indices count every step from 0. A decoder i holds `self.step - origin[i]` cached tokens when step
    `self.step` begins (it reads those rows and writes one more), and produces its last token in step
    leave_at[i]. `generated[i]` is the tokens it had generated before its latest prefill (0, or what it had when
    it was preempted)."""

    def __init__(self, reqs, cost: StepCost, max_batch: int, need: list, capacity: float, paged: bool,
                 state_bytes: int, block_bytes: int):
        n = len(reqs)
        self.end = n  # the requests this run serves: the first `end` of reqs (see _prefix_schedules)
        self.fork_when_all_arrived = False
        self.fork = None  # a copy of the run as it stood when its `end`-th request arrived, if asked for
        self.static, self.token_budget = False, None  # how it runs (schedule(): the policy, chunked prefill)
        self.batches = 0  # static: batches run so far
        self.held = {}  # static, paged: the blocks of members done but still held by their batch
        self.reqs, self.cost, self.max_batch, self.need, self.capacity = reqs, cost, max_batch, need, capacity
        self.paged, self.state_bytes, self.block_bytes = paged, state_bytes, block_bytes
        self.watermark = WATERMARK * capacity if paged else 0  # memory paged admission leaves free
        self.arrival = [r.arrival_s for r in reqs]
        self.start, self.first, self.done, self.finish = [None] * n, [None] * n, [None] * n, [None] * n
        self.batch = [None] * n
        self.preempted = [0] * n
        self.generated = [0] * n
        self.origin = {}  # decoders in order of admission -> origin (see the class docstring)
        # Paged: the decoders' origins summed and counted by residue mod BLOCK_SIZE, so that their blocks at any step
        # take BLOCK_SIZE operations to count, not one per decoder (blocks_during runs every step).
        self.origin_sum, self.residues, self.residue_sum = 0, [0] * BLOCK_SIZE, 0  # the last: sum of r x residues[r]
        self.version, self.blocks_key, self.blocks_value = 0, None, 0  # blocks_during's last answer (see there)
        self.leave_at = {}
        self.segments = []  # None: not recorded (served())
        self.peak = 0
        self.t, self.next_arrival, self.step = 0.0, 0, 0
        self.waiting = deque()
        self.decoders, self.context_sum = 0, 0
        self.partial = {}  # chunked: requests whose prompt is being computed, in admission order -> tokens done
        self.prefill_only = False  # chunked: a prefill instance, whose requests leave with their first token
        self.prefilled = False  # continuous: a decode instance, whose requests arrive with their prompt's KV
        # An open run (Instance): requests are added as they reach the GPU, so no step may start after the clock a
        # request could still arrive at: the run stops at `horizon` and a decode run with room ends there.
        self.open, self.horizon = False, math.inf
        self.fresh = []  # a decode instance: requests taken since the last step, whose first token it samples
        # Memory held apart from the decoders' paged blocks: contiguous reservations, or (paged) every admitted
        # request's state plus the blocks of finished members a static batch still holds.
        self.reserved = 0
        self.leaving = {}  # step index -> requests whose last token that step produces
        self.leave_steps = []  # heap of the keys of `leaving`
        # Decode attention is memory-bound at every context when its FLOPs per cached token over the peak
        # take less time than that token's KV bytes over the bandwidth (the intensity is the GQA group size,
        # far below any GPU's ridge): then each step is a constant plus one more KV row per request, and a
        # stretch of steps has a closed form. Otherwise the simulation goes step by step.
        self.linear = cost.pair_s <= cost.kv_row_s

    # --- memory ---------------------------------------------------------------------------------------------

    def blocks_during(self, step: int) -> int:
        """Paged: blocks the decoders hold during `step` (cached rows plus the one it writes)."""
        # Each decoder holds (step - o) // b + 1 blocks (ceil((step - o + 1) / b)); summed over them,
        # sum((step - o) // b) = (D step - sum(o) - sum((step - o) mod b)) / b, and (step - o) mod b depends on o mod b:
        # with s = step mod b and r = o mod b it is s - r, plus b where r > s, so the remainders sum to
        # D s - sum(r) + b x (decoders whose r > s).
        # The same step is asked about several times between two changes of the decoders (admission, preemption,
        # a run's length): the last answer is kept, keyed by the step and the decoders' version.
        if self.blocks_key == (step, self.version):
            return self.blocks_value
        b, d = BLOCK_SIZE, len(self.origin)
        s = step % b
        remainders = d * s - self.residue_sum + b * sum(self.residues[s + 1:])
        self.blocks_key, self.blocks_value = (step, self.version), (d * step - self.origin_sum - remainders) // b + d
        return self.blocks_value

    def add_decoder(self, i: int, origin: int) -> None:
        self.version += 1
        self.origin[i] = origin
        self.origin_sum += origin
        self.residues[origin % BLOCK_SIZE] += 1
        self.residue_sum += origin % BLOCK_SIZE

    def remove_decoder(self, i: int) -> int:
        self.version += 1
        origin = self.origin.pop(i)
        self.origin_sum -= origin
        self.residues[origin % BLOCK_SIZE] -= 1
        self.residue_sum -= origin % BLOCK_SIZE
        return origin

    def used_during(self, step: int) -> int:
        """Memory held during `step` by the requests admitted so far."""
        return self.reserved + (self.blocks_during(step) * self.block_bytes if self.paged else 0)

    def used_at_most(self, step: int) -> int:
        """An upper bound on used_during(step) in a few operations: a decoder of r rows holds ceil(r / b) blocks,
        at most (r + b - 1) / b, so all of them together hold at most floor((sum of rows + D (b - 1)) / b)."""
        if not self.paged:
            return self.reserved
        b, d = BLOCK_SIZE, len(self.origin)
        rows = d * (step + 1) - self.origin_sum  # each decoder's cached rows during `step`, and the one it writes
        return self.reserved + (rows + d * (b - 1)) // b * self.block_bytes

    def fits_during(self, step: int) -> bool:
        """used_during(step) <= capacity, settled by the upper bound when it can be."""
        return self.used_at_most(step) <= self.capacity or self.used_during(step) <= self.capacity

    def note_peak(self, step: int) -> None:
        """Raise the peak to used_during(step), computed only when the upper bound could raise it."""
        if self.used_at_most(step) > self.peak:
            self.peak = max(self.peak, self.used_during(step))

    def cost_of_joining(self, i: int) -> int:
        """Memory request i takes when it is admitted: its reservation, or its state and its prompt's blocks."""
        if not self.paged:
            return self.need[i]
        return self.state_bytes + _paged_blocks(self.reqs[i].prompt_tokens + self.generated[i]) * self.block_bytes

    def make_room(self) -> bool:
        """Paged: preempt the decoders admitted last until the next step's blocks fit; True if any was."""
        if not self.paged:
            return False
        bound = self.used_at_most(self.step)
        if bound <= self.capacity:  # the common case, settled by the bound alone: nothing to preempt
            if bound > self.peak:
                self.peak = max(self.peak, self.used_during(self.step))
            return False
        preempted = False
        while self.origin and not self.fits_during(self.step):
            self.preempt(next(reversed(self.origin)))
            preempted = True
        self.note_peak(self.step)
        return preempted

    def preempt(self, i: int) -> None:
        """Free decoder i's blocks and state; it waits at the front of the queue with what it has generated."""
        origin = self.remove_decoder(i)
        step = self.leave_at.pop(i)
        self.leaving[step].remove(i)
        self.decoders -= 1
        self.context_sum -= self.step - origin
        # Its last token was due in step `step`: the steps from self.step to it are the tokens it has still to make.
        self.generated[i] = self.reqs[i].output_tokens - (step - self.step + 1)
        self.reserved -= self.state_bytes
        self.preempted[i] += 1
        self.waiting.appendleft(i)

    # --- the whole run --------------------------------------------------------------------------------------

    def run(self) -> None:
        """Serve the first `end` requests to the last (or go on from where a fork was made)."""
        if self.static:
            self.run_static()
        elif self.token_budget is not None:
            self.run_chunked(self.token_budget)
        else:
            self.run_continuous()

    def result(self, n: int, policy: str, max_batch: int, kv_policy: str, requests_only: bool = False):
        """The Schedule of the first n requests (or only their Served, the steps not recorded)."""
        reqs = self.reqs
        served = tuple(map(Served, reqs[:n], self.start[:n], self.first[:n], self.done[:n], self.finish[:n],
                           self.batch[:n], self.preempted[:n]))
        if requests_only:
            return served
        return Schedule(policy=policy, max_batch=max_batch, kv_policy=kv_policy, capacity_bytes=self.capacity,
                        requests=served, segments=tuple(self.segments), peak_reserved_bytes=self.peak)

    def copy(self) -> _Simulation:
        """An independent copy of the run as it stands: every list, dict and deque of its state copied (and the
        lists a dict holds), everything else (numbers, the trace, the costs) shared."""
        twin = copy.copy(self)
        for name, value in vars(self).items():
            if isinstance(value, list):
                setattr(twin, name, list(value))
            elif isinstance(value, deque):
                setattr(twin, name, deque(value))
            elif isinstance(value, dict):
                setattr(twin, name, {k: list(v) if isinstance(v, list) else v for k, v in value.items()})
        return twin

    # --- the queue ------------------------------------------------------------------------------------------

    def arrive(self) -> None:
        """Every request arrived by now joins the queue. When the last one comes, a fork asked for is made: the
        same run seeing that more are coming. Every loop calls this first, so the fork starts its loop again."""
        while self.next_arrival < self.end and self.arrival[self.next_arrival] <= self.t:
            self.waiting.append(self.next_arrival)
            self.next_arrival += 1
        if self.fork_when_all_arrived and self.next_arrival == self.end:
            self.fork_when_all_arrived = False
            self.fork = self.copy()

    def admit(self, room: int) -> list:
        """First come first served: waiting requests that fit in memory, up to `room` of them. One that could
        never fit, even alone, is rejected (left without times)."""
        admitted = []
        if not self.waiting:  # nothing changes: every caller has noted this step's peak already
            return admitted
        # The memory in use, `held` (what this step's decoders and reservations hold) plus `joined` (the admitted so
        # far), all integers: `held` is taken from its upper bound (used_at_most) and computed exactly only when the
        # bound cannot settle a question (as fits_during and note_peak do).
        held, exact, joined, reserved_before = self.used_at_most(self.step), False, 0, self.reserved
        room_bytes = self.capacity - self.watermark
        while self.waiting and len(admitted) < room:
            i = self.waiting[0]
            if self.need[i] > room_bytes:
                self.waiting.popleft()
                continue
            joining = self.cost_of_joining(i)
            if held + joined + joining > room_bytes:
                if exact:
                    break
                held, exact = self.used_during(self.step) - (self.reserved - reserved_before), True
                if held + joined + joining > room_bytes:
                    break
            self.waiting.popleft()
            admitted.append(i)
            joined += joining
            self.reserved += self.need[i] if not self.paged else self.state_bytes
        if held + joined > self.peak:
            if not exact:
                held = self.used_during(self.step) - (self.reserved - reserved_before)
            self.peak = max(self.peak, held + joined)
        return admitted

    def idle(self) -> bool:
        """Nothing to run now: move the clock to the next arrival; False once the trace is over."""
        if self.waiting:  # only rejections happened: look again
            return True
        if self.next_arrival == self.end:
            return False
        self.t = max(self.t, self.arrival[self.next_arrival])
        return True

    # --- steps ----------------------------------------------------------------------------------------------

    def prefill_step(self, joiners: list) -> None:
        """One step with the joiners' prompts (and any tokens they recompute) and the decoders' next tokens; the
        joiners' next tokens (a first token, unless recomputing)."""
        cost, reqs = self.cost, self.reqs
        prompt, attention = 0, 0.0
        for i in joiners:
            q = reqs[i].prompt_tokens + self.generated[i]
            prompt += q
            attention += cost.prefill_attention_s(q)
            if self.start[i] is None:
                self.start[i] = self.t
        if self.paged:  # the joiners' prompt blocks, held during this step
            self.peak = max(self.peak, self.used_during(self.step) + sum(
                _paged_blocks(reqs[i].prompt_tokens + self.generated[i]) for i in joiners) * self.block_bytes)
        dt = cost.time_s(prompt, attention, self.decoders, self.context_sum, len(joiners))
        if self.segments is not None:
            self.segments.append(Segment(self.t, 1, dt, 0.0, self.decoders + len(joiners), len(joiners)))
        self.t += dt
        if self.fresh:
            self.first_tokens(self.t)
        self.context_sum += self.decoders
        s0 = self.step
        self.end_steps(1)
        for i in joiners:
            r = reqs[i]
            if self.first[i] is None:
                self.first[i] = self.t
            left = r.output_tokens - self.generated[i] - 1  # decode steps still to come
            if left == 0:
                self.leave(i, reqs[i].prompt_tokens + self.generated[i])
            else:
                q = r.prompt_tokens + self.generated[i]
                self.decoders += 1
                self.context_sum += q
                self.add_decoder(i, s0 + 1 - q)
                self.expect(s0 + left, i)

    def decode_steps(self, until_s: float | None) -> None:
        """Decode steps until the next request leaves, until the clock reaches `until_s` (an arrival that there is
        room for), or (paged) until the decoders' blocks would no longer fit."""
        c = self.cost
        first = c.time_s(0, 0.0, self.decoders, self.context_sum, 0)
        growth = self.decoders * c.kv_row_s if self.linear else 0.0
        steps = self.leave_steps[0] - self.step + 1 if self.linear else 1
        if until_s is not None and self.t + _elapsed(first, growth, steps) > until_s:
            steps = _steps_until(self.t, until_s, first, growth)
        if self.paged and steps > 1:
            steps = self.steps_that_fit(steps)
        if self.segments is not None:
            self.segments.append(Segment(self.t, steps, first, growth, self.decoders, 0))
        if self.fresh:
            self.first_tokens(self.t + first)
        self.t += _elapsed(first, growth, steps)
        self.context_sum += self.decoders * steps
        if self.paged:
            self.note_peak(self.step + steps - 1)
        self.end_steps(steps)

    def steps_that_fit(self, steps: int) -> int:
        """The most steps, up to `steps` and at least 1 (make_room saw to the first), whose blocks all fit: the
        blocks only grow from step to step, so the last one that fits is found by bisection."""
        if self.fits_during(self.step + steps - 1):
            return steps
        lo, hi = 1, steps  # step lo - 1 fits, step hi - 1 does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.used_during(self.step + mid - 1) <= self.capacity:
                lo = mid
            else:
                hi = mid
        return lo

    def end_steps(self, steps: int) -> None:
        """Advance the step count; the requests whose last token came in the last of these steps leave."""
        self.step += steps
        for i in self.leaving.pop(self.step - 1, ()):
            r = self.reqs[i]
            self.decoders -= 1
            self.context_sum -= r.prompt_tokens + r.output_tokens - 1
            del self.leave_at[i]
            self.leave(i, self.step - self.remove_decoder(i))
        while self.leave_steps and self.leave_steps[0] < self.step:
            heapq.heappop(self.leave_steps)

    def expect(self, step: int, i: int) -> None:
        """Request i's last token comes in step `step`."""
        if step not in self.leaving:
            self.leaving[step] = []
            heapq.heappush(self.leave_steps, step)
        self.leaving[step].append(i)
        self.leave_at[i] = step

    def leave(self, i: int, rows: int) -> None:
        """Request i has its last token, holding `rows` KV rows in its last step; continuous batching returns it and
        frees its memory at once, static holds it to the batch's end."""
        self.done[i] = self.t
        held = self.need[i]
        if self.paged:
            held = self.state_bytes + _paged_blocks(rows) * self.block_bytes
        if self.returns_at_once:
            self.finish[i] = self.t
            self.reserved -= self.need[i] if not self.paged else self.state_bytes
        elif self.paged:  # its blocks stay with the batch
            self.reserved += held - self.state_bytes
            self.held[i] = held

    def join_prefilled(self, joiners: list) -> None:
        """A decode instance: requests whose prompt was computed elsewhere join the batch with the KV of all but its
        last token. Their first step recomputes that token (a decode step over the p - 1 rows) and samples their
        first token (noted when the step ends, `first_tokens`); output - 1 more steps follow. No step is spent here."""
        for i in joiners:
            r = self.reqs[i]
            self.start[i] = self.t
            rows = r.prompt_tokens - 1
            self.decoders += 1
            self.context_sum += rows
            self.add_decoder(i, self.step - rows)
            self.expect(self.step + r.output_tokens - 1, i)  # `output` steps, from this one
            self.fresh.append(i)

    def first_tokens(self, t: float) -> None:
        """A decode instance: the step that ends at t sampled the first token of the requests taken before it."""
        for i in self.fresh:
            self.first[i] = t
        self.fresh = []

    def chunk_step(self, parts: list) -> None:
        """One step of chunked prefill: every decoder's next token, and each (request, tokens before, chunk) of
        `parts`, a piece of a prompt (plus any tokens it recomputes); a request whose prompt this step completes
        samples its next token (its first, unless recomputing). Costed as interference.step: the chunk's attention
        over the earlier chunks and itself, its state written once or carried on."""
        cost, reqs = self.cost, self.reqs
        state, completing = 2 * self.decoders, []
        for i, before, chunk in parts:
            if self.start[i] is None:
                self.start[i] = self.t
            state += 1 if before == 0 else 2
            if before + chunk == reqs[i].prompt_tokens + self.generated[i]:
                completing.append(i)
        dt = cost.chunk_step_s([(before, chunk) for _, before, chunk in parts], self.decoders + len(completing),
                               self.decoders, self.context_sum, state)
        if self.segments is not None:
            self.segments.append(Segment(self.t, 1, dt, 0.0, self.decoders + len(parts), len(parts)))
        self.t += dt
        self.context_sum += self.decoders
        s0 = self.step
        self.end_steps(1)
        for i, before, chunk in parts:
            self.partial[i] = before + chunk
        for i in completing:
            del self.partial[i]
            q = reqs[i].prompt_tokens + self.generated[i]
            self.reserved -= _paged_blocks(q) * self.block_bytes  # from here on counted as a decoder's blocks
            if self.first[i] is None:
                self.first[i] = self.t
            left = reqs[i].output_tokens - self.generated[i] - 1
            if self.prefill_only:  # it leaves with its first token, its KV sent on (sim/serving/slo.py)
                self.done[i] = self.finish[i] = self.t
                self.reserved -= self.state_bytes
            elif left == 0:
                self.leave(i, q)
            else:
                self.decoders += 1
                self.context_sum += q
                self.add_decoder(i, s0 + 1 - q)
                self.expect(s0 + left, i)

    def run_chunked(self, token_budget: int) -> None:
        """vLLM V1's schedule: each step first gives every decoder its token, then fills the rest of
        `token_budget` tokens with prompt chunks, first the prompts already begun, then waiting requests first come
        first served (as many as memory and max_batch allow); steps with no prompt work are decode runs."""
        self.returns_at_once = True
        while self.t < self.horizon:
            self.arrive()
            preempted = self.make_room()
            left, parts = token_budget - self.decoders, []
            for i, before in self.partial.items():
                if left <= 0:
                    break
                chunk = min(self.reqs[i].prompt_tokens + self.generated[i] - before, left)
                parts.append((i, before, chunk))
                left -= chunk
            # As vLLM V1's scheduler: no waiting request is admitted in a step that had to preempt.
            while not preempted and left > 0 and self.decoders + len(self.partial) < self.max_batch:
                admitted = self.admit(1)
                if not admitted:
                    break
                i = admitted[0]
                q = self.reqs[i].prompt_tokens + self.generated[i]
                self.reserved += _paged_blocks(q) * self.block_bytes  # its prompt's blocks, held across its chunks
                self.partial[i] = 0
                parts.append((i, 0, min(q, left)))
                left -= parts[-1][2]
            if parts:
                self.chunk_step(parts)
            elif self.decoders:
                self.decode_run()
            elif not self.idle():
                return

    def decode_run(self) -> None:
        """Decode steps until a request leaves, or until the next arrival when there is room for it."""
        room = not self.waiting and self.decoders < self.max_batch
        if room and self.next_arrival < self.end:
            self.decode_steps(self.arrival[self.next_arrival])
        else:  # an open run with room stops where a request not yet added could arrive
            self.decode_steps(self.horizon if room and self.open else None)

    def run_continuous(self) -> None:
        self.returns_at_once = True
        while self.t < self.horizon:
            self.arrive()
            # As vLLM V1's scheduler: no waiting request is admitted in a step that had to preempt.
            joiners = [] if self.make_room() else self.admit(self.max_batch - self.decoders)
            if self.prefilled:  # a decode instance: new requests join with their KV; a preempted one recomputes
                self.join_prefilled([i for i in joiners if not self.generated[i]])
                joiners = [i for i in joiners if self.generated[i]]
            if joiners:
                self.prefill_step(joiners)
            elif self.decoders:
                self.decode_run()
            elif not self.idle():
                return

    def run_static(self) -> None:
        self.returns_at_once = False
        while True:
            self.arrive()
            members = self.admit(self.max_batch)
            if not members:
                if not self.idle():
                    return
                continue
            self.prefill_step(members)
            while self.decoders:  # arrivals wait: the batch runs until its last member has its last token
                self.make_room()  # paged: a member preempted here waits for a later batch
                if self.decoders:
                    self.decode_steps(None)
            for i in members:
                if self.done[i] is not None and self.finish[i] is None:
                    self.finish[i] = self.t
                    self.batch[i] = self.batches
                    self.reserved -= self.held.pop(i, self.need[i])
            self.batches += 1
