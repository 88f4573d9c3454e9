"""A real vLLM run replayed through the course's scheduler: the same requests at the times the engine queued them,
with the engine's settings, costed by the roofline (with or without efficiencies) or by a per-operation profile.

How a run is replayed (`predicted`):
- requests: each measured request (sim/physics/measured.py) becomes a trace request arriving when the engine queued it,
  with its prompt and output tokens;
- scheduler: continuous batching with paged KV and chunked prefill (scheduler.schedule with `token_budget`), as
  vLLM V1 schedules: the token budget is the run's max_num_batched_tokens, the batch cap its max_num_seqs, and the
  KV pool the num_gpu_blocks its engine reported (`kv_blocks`, no watermark). What the replay leaves out: prefix
  caching (on in the shipped run; its ShareGPT prompts share little), CUDA graphs and the CPU's work between
  steps, and the sampler's own time beyond the LM head;
- cost "roofline": sim/physics/step.py's step_cost on the GPU as presets.achieved gives it at the chosen efficiencies
  (bandwidth and compute), 1.0 being the bound;
- cost "profiled" (`ProfiledCost`): each step's time read from the shipped vLLM profile of that GPU and model,
  nothing fitted: every decoder layer's operations at the step's token count (interpolated linearly between the
  profiled counts), the layer's attention at the step's prefill chunk, its earlier tokens, its decoders and their
  mean context (interpolated linearly on each axis of the profile's grid, which was measured with prefill and
  decode in one kernel launch, as vLLM runs them), times the layers; plus the embedding and final norm once, and the
  LM head and sampler for the sampled tokens. A step with several prompt chunks is costed as one chunk of their
  tokens after their token-weighted mean of earlier tokens.

A run on n > 1 GPUs (its meta.json's tensor_parallel_size) is one engine of n GPUs: the scheduler serves it with
tensor_parallel = n (each GPU's share of memory, KV and work, and each step's 2 all-reduces per layer on a link,
sim/physics/parallel.py), in both costs; the profiled cost adds the same all-reduces to the shard's profile. Its KV
pool, where meta.json records none, is sized as LLMServingSim sizes it (`pool_blocks`). The link is the GPU's own
unless named; a shipped run on several GPUs takes LINKS' link, the one the simulator that matched it set.

A data-parallel run with expert parallelism (data_parallel_size n > 1, enable_expert_parallel, an MoE model) is n
engines, one a GPU, each with its own requests, batch cap, token budget and KV pool (`data_parallel`: the requests
dealt to them in turn as they arrive), each served by the scheduler with expert_parallel = n (sim/physics/moe.py:
the GPU's E / n experts, its MoE layers seeing n times its tokens, 2 all-to-alls per MoE layer on the link). OUR
CHOICES: the other engines carry the same load, and no engine waits for another's step (vLLM steps them together
in each MoE layer). The profiled cost reads the profile's MoE block (`ProfiledCost.moe_s`) in place of a dense MLP.

Metrics (`summary`) are those of sim/physics/measured.py for both sides: p50 and p90 of TTFT and TPOT, p50 and mean of
the latency, over every request, percentiles interpolated as numpy's default (scheduler.percentile).

The efficiencies that make the roofline match the shipped run (`FITTED`) are fitted on that run only (`fit`): the
pair on a 0.01 grid with the least sum of squared relative errors over the six metrics, found coarse to fine. They
are committed, and a test fits them again; the browser never fits.

The command line (`python -m sim.serving.replay REQUESTS.jsonl META.json --gpu KEY ...`) is `main`;
`python -m sim.serving.replay --help` says how to use it.
"""

from __future__ import annotations

import bisect
import functools
import json
import math
import sys
from dataclasses import dataclass, field, replace

from sim.physics import cache, measured, model_size, moe, parallel, presets, routing, step
from sim.serving import scheduler
from sim.serving.traces import Request

METRICS = ("ttft_p50_s", "ttft_p90_s", "tpot_p50_s", "tpot_p90_s", "latency_p50_s", "latency_mean_s")
COSTS = ("roofline", "profiled")
# (bandwidth, compute) efficiencies fitted on each shipped run (fit(); tests/sim/test_replay.py fits them again).
# Only the one-GPU run's: a fit searches some 300 replays, and the TP 2 run's roofline is read at the bound.
FITTED = {"rtx-4090": (0.97, 0.62)}
# The link a shipped run on several GPUs replays over unless told another: the one the simulator that matched it set
# (sim/physics/presets/interconnects.json "pcie-servingsim"); link="pcie-gen5-x16" is the datasheet's PCIe Gen5 x16.
LINKS = {"rtx-pro-6000-tp2": "pcie-servingsim", "rtx-pro-6000-dp2-ep2": "pcie-servingsim"}
FIT_COARSE = 0.05  # fit(): the first grid's step; then 0.01 around its best
FIT_RANGE = (0.3, 1.0)


def summary(ttfts, tpots, latencies) -> dict:
    """The six metrics of METRICS from per-request values, in seconds."""
    t, p, lat = sorted(ttfts), sorted(x for x in tpots if x is not None), sorted(latencies)
    return {"ttft_p50_s": scheduler.percentile(t, 50), "ttft_p90_s": scheduler.percentile(t, 90),
            "tpot_p50_s": scheduler.percentile(p, 50), "tpot_p90_s": scheduler.percentile(p, 90),
            "latency_p50_s": scheduler.percentile(lat, 50), "latency_mean_s": math.fsum(lat) / len(lat)}


def measured_summary(run: measured.Run) -> dict:
    rs = run.requests
    return summary([r.ttft_s for r in rs], [r.tpot_s for r in rs], [r.latency_s for r in rs])


def check_run(run: measured.Run) -> None:
    """Refuse a run whose settings the scheduler cannot model yet, naming the setting."""
    s = run.settings
    if not 1 <= s.tensor_parallel_size <= parallel.MAX_TENSOR_PARALLEL:
        raise ValueError(f"tensor_parallel_size is {s.tensor_parallel_size}: the replay models 1 to "
                         f"{parallel.MAX_TENSOR_PARALLEL} GPUs")
    if s.data_parallel_size != 1 and not (s.enable_expert_parallel and s.tensor_parallel_size == 1):
        raise ValueError(f"data_parallel_size is {s.data_parallel_size}: the replay models one engine, or data "
                         "parallelism with expert parallelism (enable_expert_parallel) and tensor_parallel_size 1")
    if not 1 <= s.data_parallel_size <= moe.MAX_EXPERT_PARALLEL:
        raise ValueError(f"data_parallel_size is {s.data_parallel_size}: the replay models 1 to "
                         f"{moe.MAX_EXPERT_PARALLEL} GPUs")
    if s.block_size != scheduler.BLOCK_SIZE:
        raise ValueError(f"kv_cache.block_size is {s.block_size}: the scheduler pages KV in blocks of "
                         f"{scheduler.BLOCK_SIZE} tokens")
    if s.max_num_batched_tokens < s.max_num_seqs:
        raise ValueError("max_num_batched_tokens is below max_num_seqs: every decoder needs a token of the budget")


def trace(run: measured.Run) -> tuple[Request, ...]:
    return tuple(Request(i, r.queued_s, r.prompt_tokens, r.output_tokens) for i, r in enumerate(run.requests))


def pool_blocks(run: measured.Run, hw: presets.Hardware, m: presets.Model) -> int:
    """The KV pool of one GPU, in blocks: the engine's own count (num_gpu_blocks) where meta.json gives it; else
    OUR CHOICE, as LLMServingSim sizes it (AGENTS.md: "KV capacity is npu_mem.mem_size * npu_mem.mem_util -
    weight"): the device's memory x gpu_memory_utilization less the weights each GPU holds, which leaves out
    vLLM's activation peak and CUDA context and so is a little large; it binds only in a run that fills its pool."""
    s = run.settings
    if s.num_gpu_blocks is not None:
        return s.num_gpu_blocks
    one = one_gpu(run, m)
    free = hw.memory_bytes * s.gpu_memory_utilization - model_size.resident_weight_bytes(one)
    block = s.block_size * cache.kv_bytes_per_token(one)
    if free < block:
        raise ValueError(f"{m.name} on {gpus(run)} x {hw.name} leaves no room for KV")
    return int(free // block)


def gpus(run: measured.Run) -> int:
    """The GPUs a run used: its tensor-parallel degree, or its data-parallel one under expert parallelism."""
    s = run.settings
    return s.data_parallel_size if s.enable_expert_parallel else s.tensor_parallel_size


def expert_parallel(run: measured.Run) -> int:
    s = run.settings
    return s.data_parallel_size if s.enable_expert_parallel else 1


def one_gpu(run: measured.Run, m: presets.Model) -> presets.Model:
    """What one GPU of the run holds: its tensor-parallel shard, or its share of the experts (moe.ep_shard)."""
    n = expert_parallel(run)
    return moe.ep_shard(m, n) if n > 1 else parallel.shard(m, run.settings.tensor_parallel_size)


def predicted(run: measured.Run, hw: presets.Hardware, m: presets.Model, cost: str = "roofline",
              bandwidth_efficiency: float = 1.0, compute_efficiency: float = 1.0,
              profile: measured.Profile | None = None, link: str | None = None,
              timing: str = "formula") -> tuple[scheduler.Served, ...]:
    """Every request of the run as the scheduler serves it (see the module docstring). A run on n > 1 GPUs is
    served as one engine of n GPUs of hw (scheduler.schedule's tensor_parallel), its all-reduces on `link` (default:
    the GPU's own) timed by `timing`, in both costs: the profile times one GPU's shard and no all-reduce. A
    data-parallel run with expert parallelism over n GPUs is n engines (`data_parallel`)."""
    check_run(run)
    if cost not in COSTS:
        raise ValueError(f"cost must be one of {COSTS}")
    gpu = presets.achieved(hw, compute_efficiency=compute_efficiency, bandwidth_efficiency=bandwidth_efficiency)
    s = run.settings
    n, ep = s.tensor_parallel_size, expert_parallel(run)
    if cost == "profiled" and profile is None:
        raise ValueError("the profiled cost needs a profile")
    if ep > 1:
        exchange = moe.step_cost(m, hw, ep, link)
        per_step = (moe.step_cost(m, gpu, ep, link) if cost == "roofline"
                else ProfiledCost(profile, m.layers, exchange, experts=moe.ep_shard(m, ep)))
        return data_parallel(trace(run), ep, lambda reqs: scheduler.served(
            reqs, m, gpu, "continuous", s.max_num_seqs, "paged", cost=per_step, token_budget=s.max_num_batched_tokens,
            kv_blocks=pool_blocks(run, hw, m), expert_parallel=ep))
    if cost == "roofline":
        per_step = parallel.step_cost(m, gpu, n, link, timing)
    else:
        per_step = ProfiledCost(profile, m.layers, parallel.step_cost(m, hw, n, link, timing) if n > 1 else None,
                            experts=m if m.experts else None)
    return scheduler.served(trace(run), m, gpu, "continuous", s.max_num_seqs, "paged", cost=per_step,
                            token_budget=s.max_num_batched_tokens, kv_blocks=pool_blocks(run, hw, m),
                            tensor_parallel=n)


def data_parallel(reqs: tuple[Request, ...], n: int, serve) -> tuple[scheduler.Served, ...]:
    """Requests dealt to n engines in turn, in the order they arrive (OUR CHOICE: vLLM's front end sends each to
    the engine it finds least loaded), each engine's served with `serve` (its requests numbered from 0), and the
    results put back in the run's order."""
    served: list = [None] * len(reqs)
    for rank in range(n):
        mine = reqs[rank::n]
        if not mine:
            continue
        local = tuple(replace(r, id=i) for i, r in enumerate(mine))
        for r, x in zip(mine, serve(local)):
            served[r.id] = x._replace(request=r)
    return tuple(served)


def predicted_summary(served) -> dict:
    return summary([x.ttft_s for x in served], [x.tpot_s for x in served], [x.latency_s for x in served])


def errors(predicted_metrics: dict, measured_metrics: dict) -> dict:
    """Each metric's relative error, predicted / measured - 1."""
    return {k: predicted_metrics[k] / measured_metrics[k] - 1 for k in METRICS}


def fit(run: measured.Run, hw: presets.Hardware, m: presets.Model) -> tuple[float, float]:
    """The (bandwidth, compute) efficiencies on a 0.01 grid that make the roofline replay closest to the run: the
    least sum of squared relative errors over METRICS, searched on a FIT_COARSE grid over FIT_RANGE, then on the
    0.01 grid within one coarse step of the best (ties to the higher efficiencies)."""
    target = measured_summary(run)
    seen = {}

    def loss(bw: int, fl: int) -> float:
        if (bw, fl) not in seen:
            got = predicted_summary(predicted(run, hw, m, bandwidth_efficiency=bw / 100, compute_efficiency=fl / 100))
            seen[(bw, fl)] = math.fsum(e * e for e in errors(got, target).values())
        return seen[(bw, fl)]

    low, high, coarse = round(FIT_RANGE[0] * 100), round(FIT_RANGE[1] * 100), round(FIT_COARSE * 100)
    grid = range(high, low - 1, -coarse)
    best = min(((bw, fl) for bw in grid for fl in grid), key=lambda p: loss(*p))
    fine = [(bw, fl) for bw in range(min(high, best[0] + coarse), max(low, best[0] - coarse) - 1, -1)
            for fl in range(min(high, best[1] + coarse), max(low, best[1] - coarse) - 1, -1)]
    bw, fl = min(fine, key=lambda p: loss(*p))
    return bw / 100, fl / 100


def _between(points, x: float) -> float:
    """Linear interpolation of sorted (x, y) points at x; beyond either end, the nearest two points' line."""
    xs = [p[0] for p in points]
    i = min(max(bisect.bisect_left(xs, x), 1), len(points) - 1)
    (x0, y0), (x1, y1) = points[i - 1], points[i]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def _bracket(axis: tuple, x: float) -> tuple[tuple[int, float], ...]:
    """The grid values around x on one axis with their weights (linear; beyond the ends, extrapolated)."""
    if len(axis) == 1:
        return ((axis[0], 1.0),)
    i = min(max(bisect.bisect_left(axis, x), 1), len(axis) - 1)
    a, b = axis[i - 1], axis[i]
    w = (x - a) / (b - a)
    return ((a, 1 - w), (b, w))


@dataclass
class ProfiledCost:
    """scheduler's step-cost interface answered from a vLLM profile (see the module docstring). Not linear in the
    context (pair_s > kv_row_s), so the scheduler runs it step by step."""

    profile: measured.Profile
    layers: int
    communication: step.ExchangingStepCost | None = None  # its exchange_s: a step's all-reduces (tensor parallel)
    # or all-to-alls (expert parallel)
    experts: presets.Model | None = None  # an MoE model (one GPU's share under EP), whose MoE block the profile times
    state_s: float = 0.0
    pair_s: float = 1.0
    kv_row_s: float = 0.0
    _axes: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        keys = self.profile.attention
        mixed = [k for k in keys if k[0] and k[2]]
        self._axes = {
            "mixed": tuple(sorted({k[i] for k in mixed}) for i in range(4)),
            "decode": tuple(sorted({k[i] for k in keys if not k[0] and k[2]}) for i in (2, 3)),
            "prefill": tuple(sorted({k[i] for k in keys if k[0] and not k[2]}) for i in (0, 1)),
        }

    def _layer_s(self, tokens: int) -> float:
        d = self.profile.dense
        ops = ("qkv_proj", "rotary_emb", "o_proj")
        ops += tuple(op for op in measured.OPTIONAL_DENSE_OPS if op in d)
        if self.experts is None:
            ops += measured.MLP_OPS
        else:
            ops += ("moe",)
        return math.fsum(self._op_s(op, tokens) for op in ops) + 2 * _between(d["layernorm"], tokens)

    def _op_s(self, op: str, tokens: int) -> float:
        return self.moe_s(tokens) if op == "moe" else _between(self.profile.dense[op], tokens)

    def moe_s(self, tokens: int) -> float:
        """One MoE block for a step of `tokens` tokens on this GPU: the profile at the tokens entering it (under
        expert parallelism over n GPUs, all n GPUs' tokens, n x tokens, as vLLM's default backend gathers them) and
        the experts they touch on this GPU (routing.touched, in expectation), interpolated linearly between profiled
        token counts and, at each, between profiled expert counts."""
        table = self.profile.moe
        if table is None:
            raise ValueError("the profile has no MoE block (moe.csv)")
        seen = tokens * self.experts.experts.expert_parallel
        touched = routing.touched(self.experts, tokens)
        total = 0.0
        for t, w in _bracket(tuple(sorted(table)), seen):
            row = table[t]
            total += w * (row[0][1] if len(row) == 1 else _between(row, touched))
        return total

    def matmuls_s(self, tokens: int, sampled: int) -> float:
        d, ps = self.profile.dense, self.profile.per_sequence
        once = _between(d["embedding"], tokens) + _between(d["final_layernorm"], tokens)
        head = _between(ps["lm_head"], sampled) + _between(ps["sampler"], sampled) if sampled else 0.0
        return self.layers * self._layer_s(tokens) + once + head

    def attention_s(self, chunk: int, before: float, decoders: int, context: float) -> float:
        """One step's attention, all layers: a prompt chunk after `before` tokens, and `decoders` requests of mean
        context `context`."""
        table = self.profile.attention
        if chunk and decoders:
            pcs, kvps, nds, kvds = self._axes["mixed"]
            total = 0.0
            for pc, a in _bracket(pcs, chunk):
                for kvp, b in _bracket(kvps, before):
                    for nd, c in _bracket(nds, decoders):
                        for kvd, d in _bracket(kvds, context):
                            total += a * b * c * d * table[(pc, kvp, nd, kvd)]
        elif decoders:
            nds, kvds = self._axes["decode"]
            total = math.fsum(c * d * table[(0, 0, nd, kvd)]
                              for nd, c in _bracket(nds, decoders) for kvd, d in _bracket(kvds, context))
        elif chunk:
            pcs, kvps = self._axes["prefill"]
            total = math.fsum(a * b * table[(pc, kvp, 0, 0)]
                              for pc, a in _bracket(pcs, chunk) for kvp, b in _bracket(kvps, before))
        else:
            return 0.0
        return self.layers * max(total, 0.0)

    def chunk_step_s(self, chunks, sampled: int, decoders: int, context_sum: int, states: int) -> float:
        tokens = sum(c for _, c in chunks)
        before = sum(b * c for b, c in chunks) / tokens if tokens else 0.0
        context = context_sum / decoders if decoders else 0.0
        exchange = self.communication.exchange_s(tokens + decoders) if self.communication else 0.0
        return (self.matmuls_s(tokens + decoders, sampled) + self.attention_s(tokens, before, decoders, context)
                + exchange)

    def time_s(self, prompt_tokens: int, prefill_attention_s: float, decoders: int, context_sum: int,
               joiners: int) -> float:
        if prompt_tokens:
            raise ValueError("the profiled cost runs chunked prefill only (a token budget)")
        return self.chunk_step_s([], decoders, decoders, context_sum, 0)

    def decode_attention_s(self, decoders: int, context_sum: int) -> float:
        return self.attention_s(0, 0, decoders, context_sum / decoders) if decoders else 0.0

    def chunk_attention_s(self, chunk: int, before: int) -> float:
        return self.attention_s(chunk, before, 0, 0)

    def prefill_attention_s(self, prompt_tokens: int) -> float:
        return self.chunk_attention_s(prompt_tokens, 0)


def compare(run: measured.Run, hw: presets.Hardware, m: presets.Model, cost: str = "roofline",
            efficiencies: tuple[float, float] = (1.0, 1.0), profile: measured.Profile | None = None,
            link: str | None = None, timing: str = "formula") -> dict:
    """{"measured": METRICS, "predicted": METRICS, "error": relative errors} of one replay."""
    got = predicted_summary(predicted(run, hw, m, cost, *efficiencies, profile=profile, link=link, timing=timing))
    want = measured_summary(run)
    return {"measured": want, "predicted": got, "error": errors(got, want)}


PROFILED_SUFFIX = "profiled.json"


def profiled_requests(key: str) -> list:
    """Each request of the shipped run `key` as the profiled replay serves it (over LINKS' link, for a run on
    several GPUs): [TTFT, TPOT or None, latency], in seconds rounded to the microsecond (the browser reads them
    from the committed file, shipped_profiled)."""
    gpu, model, _ = measured.RUNS[key]
    served = predicted(measured.run(key), presets.hardware(gpu), presets.model(model), "profiled",
                       profile=measured.profile(key), link=LINKS.get(key))
    return [[round(x.ttft_s, 6), None if x.tpot_s is None else round(x.tpot_s, 6), round(x.latency_s, 6)]
            for x in served]


def _profiled_path(key: str) -> str:
    return f"{measured.DATA_DIR}/{measured.RUNS[key][2]}-{PROFILED_SUFFIX}"


def write_profiled(key: str = "rtx-4090") -> None:
    """Renew the committed profiled replay of a shipped run (after a change to the scheduler or the profile):
    python -c 'from sim.serving import replay; [replay.write_profiled(k) for k in replay.measured.RUNS]'."""
    with open(_profiled_path(key), "w", encoding="utf-8") as f:
        json.dump({"about": f"The profiled replay of the shipped run {key} (sim/serving/replay.py profiled_requests): "
                            "each request's [TTFT, TPOT, latency] in seconds, in the order the engine queued them. "
                            f"Renewed by python -c 'from sim.serving import replay; replay.write_profiled(\"{key}\")'.",
                   "requests": profiled_requests(key)}, f, separators=(",", ":"))
        f.write("\n")


@functools.cache
def shipped_profiled(key: str) -> tuple:
    """The committed profiled replay of a shipped run, as profiled_requests gives it (tests hold the two equal)."""
    with open(_profiled_path(key), encoding="utf-8") as f:
        return tuple(tuple(r) for r in json.load(f)["requests"])


def shipped(key: str = "rtx-4090", cost: str = "roofline", bandwidth_efficiency: float = 1.0,
            compute_efficiency: float = 1.0, link: str | None = None, timing: str = "formula") -> dict:
    """compare() on a shipped run, its GPU and model, (cost "profiled") its shipped profile, and (on several GPUs)
    `link`, by default LINKS' link for the run."""
    gpu, model, _ = measured.RUNS[key]
    profile = measured.profile(key) if cost == "profiled" else None
    return compare(measured.run(key), presets.hardware(gpu), presets.model(model), cost,
                   (bandwidth_efficiency, compute_efficiency), profile, link or LINKS.get(key), timing)


def waiting_share(run: measured.Run) -> float:
    """The share of the run's summed TTFT spent queued before a request was first scheduled."""
    return math.fsum(r.wait_s for r in run.requests) / math.fsum(r.ttft_s for r in run.requests)


def pool_requests(run: measured.Run) -> float:
    """Requests of the run's mean length (prompt + output) that its KV pool holds at once."""
    s = run.settings
    mean = math.fsum(r.prompt_tokens + r.output_tokens for r in run.requests) / len(run.requests)
    return s.num_gpu_blocks * s.block_size / mean


def served_model(run: measured.Run) -> str | None:
    """The model preset whose Hugging Face name the run's engine served, if the course has one: the same name, or
    the name of a variant with the same weights' shape (Qwen3-30B-A3B-Instruct-2507 is Qwen3-30B-A3B)."""
    name = run.settings.model.rsplit("/", 1)[-1].lower()
    keys = presets.model_keys(every=True)
    exact = next((k for k in keys if presets.model(k).name.lower() == name), None)
    variants = [k for k in keys if name.startswith(presets.model(k).name.lower() + "-")]
    return exact or max(variants, key=lambda k: len(presets.model(k).name), default=None)


USAGE = """usage: python -m sim.serving.replay REQUESTS.jsonl META.json --gpu KEY [--model KEY]
                                  [--cost roofline|profiled] [--efficiencies BANDWIDTH,COMPUTE]
                                  [--link KEY] [--timing formula|measured] [--json]

Replays a vLLM run (LLMServingSim's requests.jsonl and meta.json) through the course's scheduler and prints the
measured and predicted TTFT, TPOT and latency (p50, p90, mean) with the error of each.

  --gpu KEY           the GPU preset ({gpus})
  --model KEY         the model preset (default: the one meta.json names, if the course has it: {models})
  --cost roofline     the roofline bound at the efficiencies fitted on the shipped run of that GPU, else 1.0
  --cost profiled     each step read from the shipped vLLM profile of that GPU and model ({profiles})
  --efficiencies B,C  the roofline's bandwidth and compute efficiencies, each in (0, 1] (1,1 is the bound)
  --link KEY          a run on several GPUs (tensor_parallel_size > 1, or data_parallel_size > 1 with expert
                      parallelism): the link its all-reduces or all-to-alls take ({links});
                      default the GPU's own (NVLink, or PCIe without it), or the shipped run's
  --timing formula    an all-reduce = the link's measured latency floor + 2(n-1)/n x bytes / its bandwidth
  --timing measured   an all-reduce = Vidur's measured median at its size (NVLink links of A100 and H100 nodes)
  --json              print {{"measured": {{...}}, "predicted": {{...}}}} with keys {keys}
"""


def _usage() -> str:
    return USAGE.format(gpus=", ".join(presets.hardware_keys(every=True)),
                        links=", ".join(parallel.interconnect_keys()),
                        models=", ".join(presets.model_keys(every=True)), profiles=", ".join(measured.RUNS),
                        keys=", ".join(METRICS))


class UsageError(ValueError):
    pass


VALUED = ("--gpu", "--model", "--cost", "--efficiencies", "--link", "--timing")


def _options(argv: list[str]) -> dict:
    """The command line's arguments (no argparse: the simulator imports nothing the browser would not need)."""
    args, opts = [], {"--json": False}
    items = iter(argv)
    for a in items:
        if a in ("-h", "--help"):
            opts["help"] = True
        elif a == "--json":
            opts["--json"] = True
        elif a in VALUED:
            value = next(items, None)
            if value is None:
                raise UsageError(f"{a} needs a value")
            opts[a] = value
        elif a.startswith("--") and "=" in a and a.split("=", 1)[0] in VALUED:
            name, value = a.split("=", 1)
            opts[name] = value
        elif a.startswith("-"):
            raise UsageError(f"unknown option {a}")
        else:
            args.append(a)
    opts["args"] = args
    return opts


def _configure(opts: dict):
    if len(opts["args"]) != 2:
        raise UsageError("give REQUESTS.jsonl and META.json")
    if "--gpu" not in opts:
        raise UsageError("--gpu is required")
    gpu_key = opts["--gpu"]
    if gpu_key not in presets.hardware_keys(every=True):
        raise UsageError(f"--gpu {gpu_key}: no such GPU preset (one of {', '.join(presets.hardware_keys(every=True))})")
    cost = opts.get("--cost", "roofline")
    if cost not in COSTS:
        raise UsageError(f"--cost {cost}: must be roofline or profiled")
    run = measured.load_run(*opts["args"])
    check_run(run)
    model_key = opts.get("--model") or served_model(run)
    if model_key is None:
        raise UsageError(f"meta.json serves {run.settings.model!r}, which the course has no preset for: name one with "
                         f"--model ({', '.join(presets.model_keys(every=True))})")
    if model_key not in presets.model_keys(every=True):
        raise UsageError(f"--model {model_key}: no such model preset")
    profile = None
    shipped = next((k for k, (g, mk, _) in measured.RUNS.items() if g == gpu_key and mk == model_key), None)
    if cost == "profiled":
        if shipped is None:
            raise UsageError(f"--cost profiled: no profile is shipped for {gpu_key} and {model_key} (profiles: "
                             f"{', '.join(f'{g} with {mk}' for g, mk, _ in measured.RUNS.values())})")
        profile = measured.profile(shipped)
    if "--efficiencies" in opts:
        try:
            efficiencies = tuple(float(x) for x in opts["--efficiencies"].split(","))
        except ValueError:
            efficiencies = ()
        if len(efficiencies) != 2 or not all(0 < e <= 1 for e in efficiencies):
            raise UsageError("--efficiencies: two numbers in (0, 1], bandwidth then compute, e.g. 0.9,0.8")
    else:
        efficiencies = FITTED.get(shipped, (1.0, 1.0)) if cost == "roofline" else (1.0, 1.0)
    link = opts.get("--link") or LINKS.get(shipped)
    if link is not None and link not in parallel.interconnect_keys():
        raise UsageError(f"--link {link}: no such link (one of {', '.join(parallel.interconnect_keys())})")
    timing = opts.get("--timing", "formula")
    if timing not in parallel.TIMINGS:
        raise UsageError(f"--timing {timing}: must be formula or measured")
    return run, presets.hardware(gpu_key), presets.model(model_key), cost, efficiencies, profile, link, timing


def _table(result: dict, cost: str, efficiencies, gpus: int = 1, link: str | None = None,
           experts: bool = False) -> str:
    label = (f"roofline at bandwidth {efficiencies[0]:g}, compute {efficiencies[1]:g}" if cost == "roofline"
             else "profiled")
    if gpus > 1 and experts:
        label += f"; {gpus} GPUs, data parallel with expert parallelism, all-to-alls over {link}"
    elif gpus > 1:
        label += f"; {gpus} GPUs, all-reduces over {link}"
    lines = [f"{'metric':<16}{'measured':>12}{'predicted':>12}{'error':>9}   ({label})"]
    for k in METRICS:
        name = k[:-2].replace("_", " ")
        m, p, e = result["measured"][k], result["predicted"][k], result["error"][k]
        lines.append(f"{name:<16}{m * 1000:>10.1f}ms{p * 1000:>10.1f}ms{e * 100:>+8.1f}%")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        opts = _options(argv)
        if opts.get("help"):
            print(_usage())
            return 0
        run, hw, m, cost, efficiencies, profile, link, timing = _configure(opts)
        result = compare(run, hw, m, cost, efficiencies, profile, link, timing)
        n = gpus(run)
        link = link or (parallel.default_interconnect(hw).key if n > 1 else None)
    except (UsageError, measured.MeasuredDataError, ValueError, OSError) as e:
        message = str(e) if not isinstance(e, OSError) else f"{e.filename}: {e.strerror}"
        print(f"sim.serving.replay: {message}", file=sys.stderr)
        return 2
    if opts["--json"]:
        print(json.dumps({"measured": result["measured"], "predicted": result["predicted"]}, indent=1))
    else:
        print(_table(result, cost, efficiencies, n, link, expert_parallel(run) > 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
