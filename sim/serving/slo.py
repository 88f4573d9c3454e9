"""Serving under latency targets: prefill and decode on the same GPUs or on separate ones, and the goodput per GPU.

A trace of requests (Poisson arrivals at `rate_per_s`, lengths from a workload preset) is served under one of three
policies, each GPU simulated by sim/serving/scheduler.py (continuous batching, paged KV in blocks of 16, every step
costed by the per-operation roofline of StepCost):

- "prefill-first": colocated; a joiner's whole prompt is computed in the step it joins, beside every decoder's next
  token, so each decoder waits for it (kv-cache-serving's continuous batching; vLLM before V1 ran new prompts first);
- "chunked": colocated; vLLM V1's schedule (docs/configuration/optimization.md: chunked prefill always on, decodes
  first, then prefill chunks up to `max_num_batched_tokens`): each step first gives every running request its next
  token, then fills the rest of `token_budget` tokens with prompt chunks, first come first served;
- "disaggregated": `prefill_gpus` GPUs compute only prompts (in chunks within the same token budget); the request's
  KV (and a hybrid's recurrent state) then crosses `link` to one of `decode_gpus` GPUs that only decode (DistServe,
  Splitwise) and send the client every token, the first included, as vLLM's P/D does (its proxy,
  benchmarks/disagg_benchmarks/disagg_prefill_proxy_server.py: the prefill instance runs the request with
  max_tokens = 1 and its token is dropped; the client reads the decode instance's stream). The decode GPU's first
  step with a request recomputes the prompt's last token and samples the first token (scheduler.schedule, role
  "decode").

Colocated policies run on `gpus` GPUs (1 by default). Each request goes to a colocated or prefill GPU when it
arrives and to a decode GPU when its KV lands, picked by `dispatch`:
- "least-loaded" (the default): DistServe §4.3's controller, which sends a request to the prefill instance with the
  shortest queue and then to the least-loaded decode instance. As DistServe's own simulator counts them
  (simdistserve/base/scheduler.py, `_find_best_worker_and_queue`), a prefill GPU's queue is its prompts waiting or
  running, and (OUR CHOICE) a decode GPU's load is the requests it holds, waiting or decoding, and a colocated
  GPU's its prompts waiting or running, then the requests it holds; ties go to the lowest-numbered GPU. The
  controller sees each GPU as it stands when the request comes (an ideal one: no stale statistics);
- "round-robin": each GPU in turn, in the order requests reach the stage;
- "random": a GPU drawn at random (seeded), so that every GPU sees a Poisson stream of its share of the rate and N
  colocated GPUs serve N times what one does (DistServe §2.2's replicas scale the rate linearly).
A dispatcher that looks at the queues smooths each GPU's arrivals, so N GPUs serve more than N times one under
the first two, most where queueing dominates a target. OUR CHOICES, to keep the model small: each prefill GPU has
its own link, which carries one request's KV at a time, first come first served, at the link's full bandwidth; a
request's KV leaves its prefill GPU's memory when its prompt is done; every request goes on to a decode GPU, one
of a single output token too.

Metrics (DistServe §1's definitions, in seconds, as the client sees them): TTFT = first token - arrival, so a
disaggregated request's prefill, the transfer of its KV, its wait for a decode GPU and that GPU's first step with it
all count in its TTFT; TPOT = (last token - first token) / (output - 1), every gap on its decode GPU;
attainment = share of measured requests meeting both targets; goodput = the highest rate of RATE_GRID_PER_S at
which attainment reaches `goal` and the GPUs keep up, and per GPU that rate over the GPUs used (DistServe §1's
per-GPU goodput). The GPUs keep up when the rate is within their capacity (capacity(), as
scheduler.capacity: the returns per second of the same requests all queued at t = 0); above it the queue grows without
bound, and a finite run's percentiles only say how long it is.
Every run is REQUESTS requests (OUR CHOICE, what a control's move can afford); the first WARMUP_SHARE of them,
served by GPUs that started empty, are left out of every metric, as in scheduler.Schedule.
"""

from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from sim.physics import cache
from sim.physics.presets import Hardware, Model
from sim.physics.step import step_cost
from sim.physics.validate import check_choice, check_int, check_positive
from sim.serving import scheduler, traces
from sim.serving.traces import Request

POLICIES = ("prefill-first", "chunked", "disaggregated")
DISPATCHES = ("least-loaded", "round-robin", "random")  # how a request picks a GPU of several (_Stage)
DEFAULT_DISPATCH = "least-loaded"
TOKEN_BUDGETS = (512, 2_048, 8_192)  # vLLM's docs: 2,048 favours ITL, more than 8,192 throughput
DEFAULT_TOKEN_BUDGET = 2_048
LINKS = ("nvlink", "25gbps")
LINK_25GBPS_BYTES_PER_S = 25e9 / 8  # DistServe §6's testbed: 25 Gbps between nodes
# Requests in a step at most, in every policy: vLLM's default max_num_seqs for its OpenAI server on an A100
# (EngineArgs: 256, with max_num_batched_tokens 2,048; on GPUs of 70 GiB or more other than the A100, 1,024 and
# 8,192). OUR CHOICE: 256 on every GPU; the serving batches here stay far below it.
MAX_BATCH = 256
MAX_GPUS = 16

# Lengths, inclusive uniform integer bounds (prompt_low, prompt_high, output_low, output_high).
# "distserve" is DistServe's Figure 1 (input 512, output 64). The other three are OUR CHOICE, shaped after the three
# applications DistServe evaluates (§6: a chatbot on ShareGPT, code completion on HumanEval, summarisation on
# LongBench) but not measured from those datasets: chat as traces.py's chat preset (vLLM §6.5's bounds), code with
# short prompts and answers, summarisation with long documents and short summaries.
BOUNDS = {
    "distserve": (512, 512, 64, 64),
    "chat": traces.BOUNDS["chat"],
    "code": (64, 512, 16, 256),
    "summarisation": (1_024, 4_096, 16, 256),
}
WORKLOADS = tuple(BOUNDS)
DEFAULT_WORKLOAD = "chat"

DEFAULT_TTFT_SLO_S = 0.25  # DistServe §6.2, OPT-13B chatbot
DEFAULT_TPOT_SLO_S = 0.1
DEFAULT_GOAL = 0.9  # DistServe §1: 90% of requests within both targets

REQUESTS = 1_000
WARMUP_SHARE = scheduler.WARMUP_SHARE
# The rates goodput tries (OUR CHOICE): 0.1 to 100 requests per second, in steps of 0.1.
RATE_STEP_PER_S = 0.1
RATE_GRID_PER_S = tuple(round((k + 1) * RATE_STEP_PER_S, 1) for k in range(1_000))
DEFAULT_RATE_PER_S = 2.0
DEFAULT_SEED = 0


def link_bytes_per_s(hw: Hardware, link: str) -> float:
    """Bytes per second one way: the GPU's NVLink, or a 25 Gbps network."""
    check_choice("link", link, LINKS)
    if link == "25gbps":
        return LINK_25GBPS_BYTES_PER_S
    if hw.nvlink_bytes_per_s is None:
        raise ValueError(f"{hw.name} has no NVLink figure with a source")
    return hw.nvlink_bytes_per_s


def kv_transfer_bytes(m: Model, prompt_tokens: int, state_dtype: str = "fp32") -> int:
    """What a decode GPU needs from the prefill GPU: the prompt's KV and the request's recurrent state."""
    return prompt_tokens * cache.kv_bytes_per_token(m) + cache.state_bytes_per_request(m, state_dtype)


def kv_transfer_s(m: Model, hw: Hardware, link: str, prompt_tokens: int, state_dtype: str = "fp32") -> float:
    """One request's KV over the link at full bandwidth."""
    return kv_transfer_bytes(m, prompt_tokens, state_dtype) / link_bytes_per_s(hw, link)


@functools.lru_cache(maxsize=16)
def lengths(workload: str, n: int, seed: int = DEFAULT_SEED) -> tuple[tuple[int, int], ...]:
    """n (prompt_tokens, output_tokens) pairs of the workload, from a generator of its own (see traces.py)."""
    check_choice("workload", workload, BOUNDS)
    p_lo, p_hi, o_lo, o_hi = BOUNDS[workload]
    rng = random.Random(f"slo.lengths:{workload}:{seed}")
    return tuple((rng.randint(p_lo, p_hi), rng.randint(o_lo, o_hi)) for _ in range(n))


class Record(NamedTuple):
    """One request as its client sees it, in seconds from t = 0."""

    arrival_s: float
    prompt_tokens: int
    output_tokens: int
    first_token_s: float
    done_s: float
    transfer_s: float  # its prompt done to its KV on a decode GPU, the wait for the link included (0 colocated)

    @property
    def ttft_s(self) -> float:
        return self.first_token_s - self.arrival_s

    @property
    def tpot_s(self) -> float | None:
        o = self.output_tokens
        return (self.done_s - self.first_token_s) / (o - 1) if o > 1 else None

    def meets(self, ttft_slo_s: float, tpot_slo_s: float) -> bool:
        tpot = self.tpot_s
        return self.ttft_s <= ttft_slo_s and (tpot is None or tpot <= tpot_slo_s)


@dataclass(frozen=True)
class Run:
    """A trace served under one policy: every request's record, in arrival order."""

    policy: str
    gpus: int
    rate_per_s: float
    records: tuple[Record, ...]
    rejected: int  # requests that could never fit in a GPU's memory, left out of every metric
    capacity_per_s: float | None = None  # the policy's capacity on this workload (serve()), requests per second

    @cached_property
    def measured(self) -> tuple[Record, ...]:
        return self.records[math.ceil(WARMUP_SHARE * len(self.records)):]

    @cached_property
    def ttfts_s(self) -> tuple[float, ...]:
        return tuple(sorted(r.ttft_s for r in self.measured))

    @cached_property
    def tpots_s(self) -> tuple[float, ...]:
        return tuple(sorted(t for r in self.measured if (t := r.tpot_s) is not None))

    @property
    def ttft_p50_s(self) -> float:
        return scheduler.percentile(self.ttfts_s, 50)

    @property
    def ttft_p90_s(self) -> float:
        return scheduler.percentile(self.ttfts_s, 90)

    @property
    def tpot_p50_s(self) -> float:
        return scheduler.percentile(self.tpots_s, 50)

    @property
    def tpot_p90_s(self) -> float:
        return scheduler.percentile(self.tpots_s, 90)

    @cached_property
    def _window(self) -> tuple[float, int, int]:
        """(seconds, requests, output tokens) of the middle half of the measured returns: those after the one a
        quarter of the way through, up to the one three quarters through, and the time between those two. Not
        the whole stream: after its last arrival the GPUs drain, and the last returns are the long requests
        finishing alone (a chat trace's last return comes seconds after the others), which would make a server
        far below its capacity look as if it fell behind."""
        done = sorted((r.done_s, r.output_tokens) for r in self.measured)
        first, last = len(done) // 4, (3 * len(done)) // 4
        if last <= first:
            return 0.0, 0, 0
        middle = done[first + 1:last + 1]
        return done[last][0] - done[first][0], len(middle), sum(o for _, o in middle)

    @property
    def requests_per_s(self) -> float:
        seconds, requests, _ = self._window
        return requests / seconds if seconds > 0 else 0.0

    @property
    def throughput_tokens_per_s(self) -> float:
        """Output tokens per second over the window, all GPUs together."""
        seconds, _, tokens = self._window
        return tokens / seconds if seconds > 0 else 0.0

    @property
    def keeps_up(self) -> bool:
        """The rate is within the capacity: the queue does not grow without bound."""
        return self.capacity_per_s is None or self.rate_per_s <= self.capacity_per_s

    @property
    def transfer_mean_s(self) -> float:
        """Mean time from a prompt done to its KV on a decode GPU (0 colocated)."""
        return math.fsum(r.transfer_s for r in self.measured) / len(self.measured) if self.measured else 0.0

    def attainment(self, ttft_slo_s: float = DEFAULT_TTFT_SLO_S, tpot_slo_s: float = DEFAULT_TPOT_SLO_S) -> float:
        """Share of the measured requests meeting both targets (0 if none is measured)."""
        if not self.measured:
            return 0.0
        return sum(r.meets(ttft_slo_s, tpot_slo_s) for r in self.measured) / len(self.measured)


def _trace(workload: str, rate_per_s: float, n: int, seed: int) -> tuple[Request, ...]:
    """n requests of the workload whose arrivals are a Poisson process at rate_per_s given that the n-th comes at
    n / rate_per_s: traces.arrivals' gaps scaled to that sum, so that every run delivers the rate it is asked for
    (the scaled gaps are distributed as n uniform points' spacings, the Poisson process given its count). Unscaled,
    the default seed's 1,000 gaps come out 1.4% long, and every rate would be that much less than it says."""
    pairs = lengths(workload, n, seed)
    times = traces.arrivals(n, 1.0, seed)
    scale = n / rate_per_s / times[-1]
    return tuple(Request(i, t * scale, p, o) for i, (t, (p, o)) in enumerate(zip(times, pairs)))


def _stage(reqs, order: list[int], gpus: int, dispatch: str, load, stage: str, seed: int, serve, start) -> list:
    """Requests reaching GPUs that do the same job, the i-th of `reqs` at start(i), in `order`: each one's Served
    and GPU (lists indexed as reqs), given the rule (`dispatch`) that picks its GPU. "least-loaded": the GPU whose
    `load` is least at that moment (the lowest number on a tie), every GPU run up to that moment first;
    "round-robin": each in turn; "random": one drawn at random (seeded by the stage, the GPU count and the seed, so
    a trace at another rate, its arrivals scaled, is dealt the same way). serve(requests) serves one GPU's
    requests known in advance; serve(None) makes a scheduler.Instance, which takes them one at a time."""
    arriving = [Request(k, start(i), reqs[i].prompt_tokens, reqs[i].output_tokens) for k, i in enumerate(order)]
    served, where = [None] * len(reqs), [None] * len(reqs)
    if gpus > 1 and dispatch == "least-loaded":
        instances = [serve(None) for _ in range(gpus)]
        placed = []
        for r in arriving:
            for gpu in instances:
                gpu.advance(r.arrival_s)
            g = min(range(gpus), key=lambda g: (load(instances[g], r.arrival_s), g))
            placed.append((g, instances[g].take(r)))
        done = [gpu.finish() for gpu in instances]
        for i, (g, k) in zip(order, placed):
            served[i], where[i] = done[g][k], g
        return served, where
    dealt = [[] for _ in range(gpus)]
    rng = random.Random(f"slo.deal:{stage}:{gpus}:{seed}")
    for k in range(len(arriving)):
        dealt[0 if gpus == 1 else k % gpus if dispatch == "round-robin" else rng.randrange(gpus)].append(k)
    for g, mine in enumerate(dealt):
        own = tuple(Request(j, arriving[k].arrival_s, arriving[k].prompt_tokens, arriving[k].output_tokens)
                    for j, k in enumerate(mine))
        for k, s in zip(mine, serve(own)):
            served[order[k]], where[order[k]] = s, g
    return served, where


def _prompts_then_requests(gpu: scheduler.Instance, t: float) -> tuple[int, int]:
    """A colocated GPU's load: the prompts it has waiting or running, then the requests it holds."""
    return gpu.queued(t), gpu.holding(t)


def _prompts(gpu: scheduler.Instance, t: float) -> int:
    """A prefill GPU's load: its queue, the prompts waiting or running (DistServe's shortest queue)."""
    return gpu.queued(t)


def _requests(gpu: scheduler.Instance, t: float) -> int:
    """A decode GPU's load: the requests it holds, waiting or decoding (DistServe's least-loaded instance)."""
    return gpu.holding(t)


def serve(m: Model, hw: Hardware, policy: str, workload: str = DEFAULT_WORKLOAD,
          rate_per_s: float = DEFAULT_RATE_PER_S, token_budget: int = DEFAULT_TOKEN_BUDGET, prefill_gpus: int = 1,
          decode_gpus: int = 1, link: str = "nvlink", gpus: int = 1, n: int = REQUESTS,
          seed: int = DEFAULT_SEED, dispatch: str = DEFAULT_DISPATCH) -> Run:
    """The workload at a Poisson rate (all GPUs together) served under `policy`, knowing its capacity; see the
    module docstring. `gpus` is the colocated policies' GPU count; prefill_gpus, decode_gpus and link are the
    disaggregated one's. Cached by the setting the policy uses (_setting): a change of an argument the policy does
    not use is the same run."""
    check_positive("rate_per_s", rate_per_s)
    n = check_int("n", n, 2, traces.MAX_REQUESTS)
    return _serve(m, hw, workload, rate_per_s, n, seed, _setting(policy, token_budget, prefill_gpus, decode_gpus,
                                                                 link, gpus, dispatch))


@functools.lru_cache(maxsize=64)
def _serve(m: Model, hw: Hardware, workload: str, rate_per_s: float, n: int, seed: int, setting: tuple) -> Run:
    return _simulate(m, hw, _trace(workload, rate_per_s, n, seed), setting, seed, rate_per_s,
                     _capacity(m, hw, workload, seed, setting))


def capacity(m: Model, hw: Hardware, policy: str, workload: str = DEFAULT_WORKLOAD,
             token_budget: int = DEFAULT_TOKEN_BUDGET, prefill_gpus: int = 1, decode_gpus: int = 1,
             link: str = "nvlink", gpus: int = 1, seed: int = DEFAULT_SEED, dispatch: str = DEFAULT_DISPATCH) -> float:
    """Requests per second the policy returns with a queue that never empties: REQUESTS requests of the workload
    all waiting at t = 0, counted as a run's returns are (scheduler.capacity's convention)."""
    return _capacity(m, hw, workload, seed, _setting(policy, token_budget, prefill_gpus, decode_gpus, link, gpus,
                                                     dispatch))


@functools.lru_cache(maxsize=64)
def _capacity(m: Model, hw: Hardware, workload: str, seed: int, setting: tuple) -> float:
    waiting = tuple(Request(i, 0.0, p, o) for i, (p, o) in enumerate(lengths(workload, REQUESTS, seed)))
    return _simulate(m, hw, waiting, setting, seed, 0.0, None).requests_per_s


def _setting(policy, token_budget, prefill_gpus, decode_gpus, link, gpus, dispatch) -> tuple:
    """The arguments that shape the GPUs, checked, with those the policy does not use at their defaults: the token
    budget under prefill-first, the prefill and decode GPUs and the link when colocated, `gpus` when disaggregated.
    A run is cached by this tuple, so a control that does not apply costs nothing."""
    policy = check_choice("policy", policy, POLICIES)
    token_budget = check_int("token_budget", token_budget, MAX_BATCH, scheduler.MAX_TOKEN_BUDGET)
    prefill_gpus, decode_gpus = check_int("prefill_gpus", prefill_gpus, 1, MAX_GPUS), check_int(
        "decode_gpus", decode_gpus, 1, MAX_GPUS)
    link, gpus = check_choice("link", link, LINKS), check_int("gpus", gpus, 1, MAX_GPUS)
    dispatch = check_choice("dispatch", dispatch, DISPATCHES)
    if policy == "prefill-first":
        token_budget = DEFAULT_TOKEN_BUDGET
    if policy == "disaggregated":
        gpus = 1
    else:
        prefill_gpus, decode_gpus, link = 1, 1, "nvlink"
    if gpus == prefill_gpus == decode_gpus == 1:
        dispatch = DEFAULT_DISPATCH
    return policy, token_budget, prefill_gpus, decode_gpus, link, gpus, dispatch


def _simulate(m, hw, reqs, setting: tuple, seed: int, rate_per_s: float, limit: float | None) -> Run:
    policy, token_budget, prefill_gpus, decode_gpus, link, gpus, dispatch = setting
    cost = step_cost(m, hw)
    n = len(reqs)
    if policy == "disaggregated":
        gpus = prefill_gpus + decode_gpus
        records = _disaggregated(reqs, m, hw, token_budget, prefill_gpus, decode_gpus, link, cost, seed, dispatch)
    else:
        how = {"token_budget": token_budget} if policy == "chunked" else {}
        served, _ = _stage(reqs, list(range(n)), gpus, dispatch, _prompts_then_requests, "colocated", seed,
                        _server(m, hw, cost, **how), lambda i: reqs[i].arrival_s)
        records = [Record(r.arrival_s, r.prompt_tokens, r.output_tokens, s.first_token_s, s.done_s, 0.0)
                   if s.served else None for r, s in zip(reqs, served)]
    kept = tuple(r for r in records if r is not None)
    return Run(policy, gpus, rate_per_s, kept, len(records) - len(kept), limit)


def _server(m, hw, cost, **how):
    """serve() for _stage: one GPU's requests served, or (None) an Instance to hand them to one at a time."""
    def serve(own):
        if own is None:
            return scheduler.Instance(m, hw, MAX_BATCH, cost, **how)
        return scheduler.served(own, m, hw, "continuous", MAX_BATCH, kv_policy="paged", cost=cost, **how)
    return serve


def _disaggregated(reqs, m, hw, token_budget, prefill_gpus, decode_gpus, link, cost, seed, dispatch) -> list:
    """Prefill GPUs, then each request's KV over its prefill GPU's link, then decode GPUs, which send every token
    the client gets, its first included: every request's record (None if it could never fit). A prefill GPU's
    load is its queue, the prompts waiting or running (DistServe's shortest queue); a decode GPU's, the requests it
    holds (DistServe's least-loaded instance)."""
    n = len(reqs)
    prefill, prefill_gpu = _stage(reqs, list(range(n)), prefill_gpus, dispatch, _prompts, "prefill", seed,
                     _server(m, hw, cost, role="prefill", token_budget=token_budget), lambda i: reqs[i].arrival_s)
    bandwidth = link_bytes_per_s(hw, link)
    landed = [None] * n
    link_free_s = {}  # each prefill GPU's link sends one request's KV at a time, in the order the prompts finish
    for t, i in sorted((s.first_token_s, i) for i, s in enumerate(prefill) if s.served):
        g = prefill_gpu[i]
        link_free_s[g] = max(t, link_free_s.get(g, 0.0)) + kv_transfer_bytes(m, reqs[i].prompt_tokens) / bandwidth
        landed[i] = link_free_s[g]
    order = [i for _, i in sorted((landed[i], i) for i in range(n) if landed[i] is not None)]
    decode, _ = _stage(reqs, order, decode_gpus, dispatch, _requests, "decode", seed,
                       _server(m, hw, cost, role="decode"), landed.__getitem__)
    records = [None] * n
    for i in order:
        s, r = decode[i], reqs[i]
        if s.served:
            records[i] = Record(r.arrival_s, r.prompt_tokens, r.output_tokens, s.first_token_s, s.done_s,
                                landed[i] - prefill[i].first_token_s)
    return records


class Goodput(NamedTuple):
    rate_per_s: float  # the highest rate of the grid that meets the goal (0 if none does), all GPUs together
    gpus: int
    run: Run | None  # the run at that rate

    @property
    def per_gpu(self) -> float:
        return self.rate_per_s / self.gpus


def goodput(m: Model, hw: Hardware, policy: str, workload: str = DEFAULT_WORKLOAD,
            ttft_slo_s: float = DEFAULT_TTFT_SLO_S, tpot_slo_s: float = DEFAULT_TPOT_SLO_S, goal: float = DEFAULT_GOAL,
            token_budget: int = DEFAULT_TOKEN_BUDGET, prefill_gpus: int = 1, decode_gpus: int = 1,
            link: str = "nvlink", gpus: int = 1, seed: int = DEFAULT_SEED,
            dispatch: str = DEFAULT_DISPATCH) -> Goodput:
    """The highest rate of RATE_GRID_PER_S whose run keeps up and has at least `goal` of its requests within both
    targets. Attainment only falls as the load grows (a trace at a higher rate is the same trace, its arrivals
    closer together), so the grid is searched by scheduler.highest_meeting; a rate above the capacity fails without
    a run. The tests check the
    rates around the answer."""
    check_positive("ttft_slo_s", ttft_slo_s)
    check_positive("tpot_slo_s", tpot_slo_s)
    check_positive("goal", goal)
    if goal > 1:
        raise ValueError(f"goal must be a share of requests, at most 1, got {goal}")
    return _goodput(m, hw, workload, ttft_slo_s, tpot_slo_s, goal, seed,
                    _setting(policy, token_budget, prefill_gpus, decode_gpus, link, gpus, dispatch))


@functools.lru_cache(maxsize=64)
def _goodput(m: Model, hw: Hardware, workload: str, ttft_slo_s: float, tpot_slo_s: float, goal: float, seed: int,
             setting: tuple) -> Goodput:
    limit = _capacity(m, hw, workload, seed, setting)

    def run(k: int) -> Run:
        return _serve(m, hw, workload, RATE_GRID_PER_S[k], REQUESTS, seed, setting)

    policy, _, prefill_gpus, decode_gpus, _, gpus, _ = setting
    used = prefill_gpus + decode_gpus if policy == "disaggregated" else gpus
    # The rates above the capacity miss without a run (the GPUs fall behind); below it, the share met less the goal.
    top = scheduler.highest_within(RATE_GRID_PER_S, limit)
    k = scheduler.highest_meeting(top, lambda k: run(k).attainment(ttft_slo_s, tpot_slo_s) - goal)
    return Goodput(0.0, used, None) if k is None else Goodput(RATE_GRID_PER_S[k], used, run(k))
