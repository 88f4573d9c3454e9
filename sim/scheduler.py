"""One GPU serving a trace of requests: static (request-level) or continuous (iteration-level) batching.

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

How a step is costed (the roofline of sim/roofline.py, with coefficients precomputed per model and GPU by
step_cost, so that no Estimate is built per step). A step holds J joining requests, whose whole prompts are
processed in it (their prefill, which also emits their first token), and D decoding requests, with
contexts L_1..L_D. Both policies batch them the same way, Orca's selective batching (Orca §4): the
non-attention operations run on all tokens flattened together, attention runs per request. The operations
run one after another, each bounded on its own:
- matmuls: (D + sum of joining prompts) tokens x 2N FLOPs, the weights read once per step;
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

Memory: a request is admitted only if its reservation fits beside what is reserved already, in the memory
left after the whole checkpoint (memory.py's convention): KV for `reserve` tokens plus its recurrent state.
`reserve` = "max" reserves MAX_TOKENS (2048) per request, what FasterTransformer pre-allocates (Orca §6.1)
and vLLM's Orca(Max) reserves (vLLM §6.1); "exact" reserves prompt + output tokens, its own max_tokens in
Orca's Algorithm 1 (the trace never stops early), vLLM's Orca(Oracle). The memory used never exceeds the
reservations, so memory is never over capacity. A request whose reservation exceeds the whole free memory
can never run: it is rejected, listed in `rejected`, and left out of every metric. Admission stops at the
first request that does not fit (first come first served, no skipping).

Metrics (Orca §6 and vLLM §6 use the normalized latency):
- a request's start is when its prefill step starts; its first token when that step ends; done when the step
  with its last token ends; finish when it is returned (static: its batch's end; continuous: done);
- latency per output token = (finish - arrival) / output tokens, the normalized latency; p50 is the median
  and p90 the 90th percentile, both interpolated linearly between order statistics (numpy's default);
- makespan = last finish - first arrival (the span during which the server had work);
  throughput_tokens_per_s = output tokens of all served requests / makespan;
- mean_batch = requests computed per step, weighted by step time (sum of step x batch / busy time).

Results: a Schedule holds every request (Served: its arrival, start, first-token, done and finish times) and
every step, stored as Segments, runs of steps with the same requests in them: a step with joiners alone, or
the decode steps between two events (a request leaves, or one arrives while there is room for it). Within a
run each step reads one more KV row per request than the one before, so step k takes first + k x growth
and the run has a closed form; Schedule.steps() expands the runs into single steps. (This needs decode
attention memory-bound at every context, which holds for every preset: its intensity is the GQA group size,
far below any ridge; otherwise the simulation takes one step per run.) The widget redraws on every slider
move, so this is what keeps it fast.

Determinism: no set iteration, no clock, no global random; float sums over many terms use math.fsum, which
rounds once, so CPython 3.11 and Pyodide's 3.14 give the same last bit.
"""

from __future__ import annotations

import functools
import heapq
import math
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from sim import cache, model_size, traces
from sim.presets import Hardware, Model
from sim.traces import MAX_TOKENS, Request
from sim.validate import check_choice, check_int, check_positive

POLICIES = ("static", "continuous")
RESERVES = ("max", "exact")
MAX_BATCH = 4_096

# The scenario serve() runs by default, which the batching-timeline widget starts from. All OUR CHOICE: a
# trace short enough to draw one row per request and to simulate on every slider move (48 requests), an
# arrival rate past what static batching sustains on the anchor model and an H100 at max_batch 16 but within
# what continuous batching does, and a max batch between FasterTransformer's best setting in Orca §6.2 (8)
# and the memory limit at 2,048-token reservations (85 requests).
DEFAULT_TRACE = "orca"
DEFAULT_REQUESTS = 48
DEFAULT_RATE_PER_S = 12
DEFAULT_MAX_BATCH = 16
DEFAULT_SEED = 0


@dataclass(frozen=True)
class StepCost:
    """A model on a GPU reduced to the coefficients of one step's roofline time."""

    flops_per_token: float  # 2N: matmul FLOPs per token processed
    weight_bytes: float  # matmul weights, read once per step
    attention_flops_per_pair: float  # one query token against one cached token
    kv_bytes_per_token: float
    state_bytes: float  # recurrent state of one request (0 without recurrent layers)
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float
    # Per-unit times, derived from the above, so that a step costs a few multiplications (hundreds per view).
    token_s: float = field(init=False)  # matmul time of one token at peak compute
    weights_s: float = field(init=False)  # one read of the weights at full bandwidth
    pair_s: float = field(init=False)  # one query token against one cached token, at peak compute
    kv_row_s: float = field(init=False)  # one token's KV at full bandwidth
    state_s: float = field(init=False)  # one request's recurrent state at full bandwidth

    def __post_init__(self):
        peak, bandwidth = self.peak_flops_per_s, self.bandwidth_bytes_per_s
        for name, value in (("token_s", self.flops_per_token / peak), ("weights_s", self.weight_bytes / bandwidth),
                            ("pair_s", self.attention_flops_per_pair / peak),
                            ("kv_row_s", self.kv_bytes_per_token / bandwidth),
                            ("state_s", self.state_bytes / bandwidth)):
            object.__setattr__(self, name, value)

    def prefill_attention_s(self, prompt_tokens: int) -> float:
        """A joiner's causal attention over its own prompt, bounded on its own (as roofline.prefill)."""
        return max(self.pair_s * (prompt_tokens * (prompt_tokens + 1) // 2), self.kv_row_s * prompt_tokens)

    def time_s(self, prompt_tokens: int, prefill_attention_s: float, decoders: int, context_sum: int,
               joiners: int) -> float:
        """One step: joiners' prompts (their attention precomputed) plus `decoders` requests whose cached
        contexts sum to `context_sum` tokens."""
        matmuls = max(self.token_s * (prompt_tokens + decoders), self.weights_s)
        attention = max(self.pair_s * context_sum, self.kv_row_s * (context_sum + decoders)) if decoders else 0.0
        return matmuls + prefill_attention_s + attention + self.state_s * (joiners + 2 * decoders)


@functools.lru_cache(maxsize=32)
def step_cost(m: Model, hw: Hardware, state_dtype: str = "fp32") -> StepCost:
    """The step-time coefficients of model m on GPU hw."""
    return StepCost(
        flops_per_token=2 * model_size.matmul_params(m),
        weight_bytes=model_size.matmul_weight_bytes(m),
        attention_flops_per_pair=cache.attention_flops_per_cached_token(m),
        kv_bytes_per_token=cache.kv_bytes_per_token(m),
        state_bytes=cache.state_bytes_per_request(m, state_dtype),
        peak_flops_per_s=hw.peak_flops_per_s,
        bandwidth_bytes_per_s=hw.bandwidth_bytes_per_s,
    )


def reservation_bytes(m: Model, r: Request, reserve: str, state_dtype: str = "fp32") -> int:
    """Memory a request holds from admission to its return: KV for its reserved tokens plus its state."""
    tokens = MAX_TOKENS if reserve == "max" else r.prompt_tokens + r.output_tokens
    return tokens * cache.kv_bytes_per_token(m) + cache.state_bytes_per_request(m, state_dtype)


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
    start_s: float | None  # its prefill step starts
    first_token_s: float | None  # its prefill step ends, with its first token
    done_s: float | None  # the step with its last token ends
    finish_s: float | None  # it is returned: its static batch's end, or done_s
    batch: int | None  # index of its static batch (static only)

    @property
    def served(self) -> bool:
        return self.finish_s is not None

    @property
    def wait_s(self) -> float:
        return self.start_s - self.request.arrival_s

    @property
    def latency_s(self) -> float:
        """End-to-end latency: arrival to return."""
        return self.finish_s - self.request.arrival_s

    @property
    def latency_per_token_s(self) -> float:
        """Normalized latency: end-to-end latency / output tokens (Orca §6, vLLM §6)."""
        return self.latency_s / self.request.output_tokens


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
    reserve: str
    capacity_bytes: float  # memory for requests, beside the checkpoint
    requests: tuple[Served, ...]  # by id
    segments: tuple[Segment, ...]
    peak_reserved_bytes: float  # the most memory reserved at once

    @cached_property
    def served(self) -> tuple[Served, ...]:
        return tuple(s for s in self.requests if s.served)

    @property
    def rejected(self) -> tuple[int, ...]:
        """Ids of requests whose reservation alone exceeds the free memory."""
        return tuple(s.request.id for s in self.requests if not s.served)

    @cached_property
    def output_tokens(self) -> int:
        return sum(s.request.output_tokens for s in self.served)

    @cached_property
    def makespan_s(self) -> float:
        """First arrival to last return, over the served requests (0 if none)."""
        if not self.served:
            return 0.0
        return max(s.finish_s for s in self.served) - min(s.request.arrival_s for s in self.served)

    @cached_property
    def throughput_tokens_per_s(self) -> float:
        """Output tokens of all served requests / makespan."""
        return self.output_tokens / self.makespan_s if self.makespan_s > 0 else 0.0

    @property
    def requests_per_s(self) -> float:
        return len(self.served) / self.makespan_s if self.makespan_s > 0 else 0.0

    @cached_property
    def latencies_per_token_s(self) -> tuple[float, ...]:
        """Every served request's normalized latency, sorted."""
        return tuple(sorted(s.latency_per_token_s for s in self.served))

    @cached_property
    def latency_per_token_p50_s(self) -> float:
        return percentile(self.latencies_per_token_s, 50)

    @cached_property
    def latency_per_token_p90_s(self) -> float:
        return percentile(self.latencies_per_token_s, 90)

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
        return math.fsum(s.wait_s for s in self.served) / len(self.served) if self.served else 0.0

    @cached_property
    def end_s(self) -> float:
        """When the last request is returned (0 if none is)."""
        return max((s.finish_s for s in self.served), default=0.0)

    def steps(self) -> tuple[Step, ...]:
        """Every step, one by one (the segments expanded)."""
        return tuple(Step(g.start_s + g.elapsed_s(k), g.first_step_s + k * g.growth_s, g.batch, g.joiners)
                     for g in self.segments for k in range(g.steps))


@functools.lru_cache(maxsize=32)
def serve(m: Model, hw: Hardware, policy: str, trace: str = DEFAULT_TRACE, rate_per_s: float = DEFAULT_RATE_PER_S,
          max_batch: int = DEFAULT_MAX_BATCH, n: int = DEFAULT_REQUESTS, seed: int = DEFAULT_SEED,
          reserve: str = "max", state_dtype: str = "fp32") -> Schedule:
    """A trace preset (sim/traces.py) served by model m on GPU hw: the widget's scenario, by default its default.
    Cached: a Schedule is immutable, and the widget asks for both policies' on every move."""
    reqs = _requests(trace, n, rate_per_s, seed)
    return schedule(reqs, m, hw, policy, max_batch, reserve=reserve, state_dtype=state_dtype,
                    cost=step_cost(m, hw, state_dtype))


@functools.lru_cache(maxsize=8)
def _requests(trace: str, n: int, rate_per_s: float, seed: int) -> tuple[Request, ...]:
    """traces.requests, kept: both policies of a scenario serve the same trace."""
    return tuple(traces.requests(trace, n, rate_per_s, seed))


def throughput_gain(m: Model, hw: Hardware, **scenario) -> float:
    """Continuous over static batching's throughput in the same scenario (serve()'s arguments)."""
    static = serve(m, hw, "static", **scenario).throughput_tokens_per_s
    return serve(m, hw, "continuous", **scenario).throughput_tokens_per_s / static if static else 0.0


# Arrival rates sustained() tries, in req/s (OUR CHOICE): steps of 0.1 up to 5, where static batching sustains its
# tight latency targets, then the widget slider's steps of 0.5 up to its 50.
RATE_GRID_PER_S = tuple(k / 10 for k in range(1, 50)) + tuple(k / 2 for k in range(10, 101))


@functools.lru_cache(maxsize=32)
def sustained(m: Model, hw: Hardware, policy: str, latency_per_token_s: float, trace: str = DEFAULT_TRACE,
              max_batch: int = DEFAULT_MAX_BATCH, n: int = DEFAULT_REQUESTS, seed: int = DEFAULT_SEED,
              reserve: str = "max", state_dtype: str = "fp32") -> Schedule | None:
    """The run at the highest arrival rate of RATE_GRID_PER_S up to which every rate keeps the median latency per
    output token within latency_per_token_s; None if the lowest rate does not.

    Throughput at a latency target is how Orca (§6.2) and vLLM (§6) compare systems; the run's requests_per_s is the
    rate served. Every rate up to it must meet the target, since with one trace the median is not monotonic in the
    rate. The top of the grid caps it: a run at its last rate may sustain more."""
    check_positive("latency_per_token_s", latency_per_token_s)
    best = None
    for rate in RATE_GRID_PER_S:
        run = serve(m, hw, policy, trace, rate, max_batch, n, seed, reserve, state_dtype)
        if run.latency_per_token_p50_s > latency_per_token_s:
            break
        best = run
    return best


def percentile(ordered, p: float) -> float:
    """The p-th percentile of sorted values, interpolated linearly between order statistics (0 if empty)."""
    if not ordered:
        return 0.0
    k = (len(ordered) - 1) * p / 100
    i = math.floor(k)
    if i + 1 >= len(ordered):
        return ordered[-1]
    return ordered[i] + (ordered[i + 1] - ordered[i]) * (k - i)


def schedule(reqs, m: Model, hw: Hardware, policy: str, max_batch: int, reserve: str = "max",
             state_dtype: str = "fp32", cost: StepCost | None = None) -> Schedule:
    """Serve `reqs` (ids 0..n-1 in arrival order) on one GPU under `policy`; see the module docstring."""
    check_choice("policy", policy, POLICIES)
    check_choice("reserve", reserve, RESERVES)
    max_batch = check_int("max_batch", max_batch, 1, MAX_BATCH)
    reqs = tuple(reqs)
    if [r.id for r in reqs] != list(range(len(reqs))):
        raise ValueError("requests must have ids 0..n-1")
    if any(b.arrival_s < a.arrival_s for a, b in zip(reqs, reqs[1:])):
        raise ValueError("requests must be in arrival order")
    cost = cost or step_cost(m, hw, state_dtype)
    kv, state = cache.kv_bytes_per_token(m), cache.state_bytes_per_request(m, state_dtype)
    need = [(MAX_TOKENS if reserve == "max" else r.prompt_tokens + r.output_tokens) * kv + state for r in reqs]
    sim = _Simulation(reqs, cost, max_batch, need, free_bytes(m, hw))
    sim.run_static() if policy == "static" else sim.run_continuous()
    served = tuple(Served(r, sim.start[i], sim.first[i], sim.done[i], sim.finish[i], sim.batch[i])
                   for i, r in enumerate(reqs))
    return Schedule(policy=policy, max_batch=max_batch, reserve=reserve, capacity_bytes=sim.capacity,
                    requests=served, segments=tuple(sim.segments), peak_reserved_bytes=sim.peak)


class _Simulation:
    """The state of one run as it goes: the clock, who waits and who decodes, and what has been recorded.

    Steps are taken a segment at a time: between two events (a request joins, one leaves, one arrives while
    there is room for it) the batch does not change, so a whole stretch of decode steps has a closed form."""

    def __init__(self, reqs, cost: StepCost, max_batch: int, need: list, capacity: float):
        n = len(reqs)
        self.reqs, self.cost, self.max_batch, self.need, self.capacity = reqs, cost, max_batch, need, capacity
        self.arrival = [r.arrival_s for r in reqs]
        self.start, self.first, self.done, self.finish = [None] * n, [None] * n, [None] * n, [None] * n
        self.batch = [None] * n
        self.segments = []
        self.peak = 0
        self.t, self.next_arrival, self.step = 0.0, 0, 0
        self.waiting = deque()
        self.decoders, self.context_sum, self.reserved = 0, 0, 0
        self.leaving = {}  # step index -> requests whose last token that step produces
        self.leave_steps = []  # heap of the keys of `leaving`
        # Decode attention is memory-bound at every context when its FLOPs per cached token over the peak
        # take less time than that token's KV bytes over the bandwidth (the intensity is the GQA group size,
        # far below any GPU's ridge): then each step is a constant plus one more KV row per request, and a
        # stretch of steps has a closed form. Otherwise the simulation goes step by step.
        self.linear = cost.pair_s <= cost.kv_row_s

    def arrive(self) -> None:
        """Every request arrived by now joins the queue."""
        while self.next_arrival < len(self.reqs) and self.arrival[self.next_arrival] <= self.t:
            self.waiting.append(self.next_arrival)
            self.next_arrival += 1

    def admit(self, room: int) -> list:
        """First come first served: waiting requests that fit in memory, up to `room` of them. One that could
        never fit, even alone, is rejected (left without times)."""
        admitted = []
        while self.waiting and len(admitted) < room:
            i = self.waiting[0]
            if self.need[i] > self.capacity:
                self.waiting.popleft()
                continue
            if self.reserved + self.need[i] > self.capacity:
                break
            self.waiting.popleft()
            admitted.append(i)
            self.reserved += self.need[i]
        self.peak = max(self.peak, self.reserved)
        return admitted

    def idle(self) -> bool:
        """Nothing to run now: move the clock to the next arrival; False once the trace is over."""
        if self.waiting:  # only rejections happened: look again
            return True
        if self.next_arrival == len(self.reqs):
            return False
        self.t = max(self.t, self.arrival[self.next_arrival])
        return True

    def prefill_step(self, joiners: list) -> None:
        """One step with the joiners' prompts and the decoders' next tokens; the joiners' first tokens."""
        cost, reqs = self.cost, self.reqs
        prompt, attention = 0, 0.0
        for i in joiners:
            prompt += reqs[i].prompt_tokens
            attention += cost.prefill_attention_s(reqs[i].prompt_tokens)
            self.start[i] = self.t
        dt = cost.time_s(prompt, attention, self.decoders, self.context_sum, len(joiners))
        self.segments.append(Segment(self.t, 1, dt, 0.0, self.decoders + len(joiners), len(joiners)))
        self.t += dt
        self.context_sum += self.decoders
        self.end_steps(1)
        for i in joiners:
            r = reqs[i]
            self.first[i] = self.t
            if r.output_tokens == 1:
                self.leave(i)
            else:
                self.decoders += 1
                self.context_sum += r.prompt_tokens
                self.expect(self.step - 1 + r.output_tokens - 1, i)

    def decode_steps(self, until_s: float | None) -> None:
        """Decode steps until the next request leaves, or until the clock reaches `until_s` (an arrival that
        there is room for)."""
        c = self.cost
        first = c.time_s(0, 0.0, self.decoders, self.context_sum, 0)
        growth = self.decoders * c.kv_row_s if self.linear else 0.0
        steps = self.leave_steps[0] - self.step + 1 if self.linear else 1
        if until_s is not None and self.t + _elapsed(first, growth, steps) > until_s:
            steps = _steps_until(self.t, until_s, first, growth)
        self.segments.append(Segment(self.t, steps, first, growth, self.decoders, 0))
        self.t += _elapsed(first, growth, steps)
        self.context_sum += self.decoders * steps
        self.end_steps(steps)

    def end_steps(self, steps: int) -> None:
        """Advance the step count; the requests whose last token came in the last of these steps leave."""
        self.step += steps
        for i in self.leaving.pop(self.step - 1, ()):
            r = self.reqs[i]
            self.decoders -= 1
            self.context_sum -= r.prompt_tokens + r.output_tokens - 1
            self.leave(i)
        while self.leave_steps and self.leave_steps[0] < self.step:
            heapq.heappop(self.leave_steps)

    def expect(self, step: int, i: int) -> None:
        """Request i's last token comes in step `step`."""
        if step not in self.leaving:
            self.leaving[step] = []
            heapq.heappush(self.leave_steps, step)
        self.leaving[step].append(i)

    def leave(self, i: int) -> None:
        """Request i has its last token; continuous batching returns it and frees its memory at once."""
        self.done[i] = self.t
        if self.returns_at_once:
            self.finish[i] = self.t
            self.reserved -= self.need[i]

    def run_continuous(self) -> None:
        self.returns_at_once = True
        while True:
            self.arrive()
            joiners = self.admit(self.max_batch - self.decoders)
            if joiners:
                self.prefill_step(joiners)
            elif self.decoders:
                room = not self.waiting and self.decoders < self.max_batch
                upcoming = room and self.next_arrival < len(self.reqs)
                self.decode_steps(self.arrival[self.next_arrival] if upcoming else None)
            elif not self.idle():
                return

    def run_static(self) -> None:
        self.returns_at_once = False
        index = 0
        while True:
            self.arrive()
            members = self.admit(self.max_batch)
            if not members:
                if not self.idle():
                    return
                continue
            for i in members:
                self.batch[i] = index
            self.prefill_step(members)
            while self.decoders:  # arrivals wait: the batch runs until its last member has its last token
                self.decode_steps(None)
            for i in members:
                self.finish[i] = self.t
                self.reserved -= self.need[i]
            index += 1
