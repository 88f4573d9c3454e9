"""Tensor parallelism: one model's weights split over n GPUs, and the all-reduces that join their halves of the work.

Megatron-LM (Shoeybi et al. 2019, arXiv 1909.08053) splits each block's first matmul by columns and its last by rows,
so every GPU holds 1/n of the attention heads and of the MLP, and the partial outputs are summed by one all-reduce
after attention's output projection and one after the MLP's down projection: 2 per layer in the forward pass (its §3:
"only two all-reduces in the forward path", the g operator of its Figure 3), each of
tokens x hidden activations (BF16 here, 2 bytes). A decode step of a batch of B requests therefore sends 2L
all-reduces of B x hidden x 2 bytes.

What one GPU holds (`shard`, a Model the single-GPU functions accept, so roofline and memory count it unchanged):
- query heads, MLP columns and Gated DeltaNet heads: 1/n each (n must divide them, as in vLLM's `divide`);
- K/V heads: 1/n while the model has at least n of them; with fewer, each GPU keeps one K/V head and the heads are
  replicated n / n_kv times (vLLM's QKVParallelLinear: `num_kv_heads = 1`, `num_kv_head_replicas = tp_size //
  total_num_kv_heads`), so each GPU's K/V weights and K/V cache per token stop shrinking at n = n_kv;
- embedding and LM head: split by vocabulary rows, ceil(vocab / n) each (vLLM's VocabParallelEmbedding and
  ParallelLMHead); vLLM's padding of the vocabulary is left out;
- multi-token-prediction layers: split as the decoder layers are (their fc and norms whole);
- residual norms, q/k norms and the vision tower: whole on every GPU (OUR CHOICE for the vision tower: vLLM can also
  split it; it is read only at prefill of an image).

Collectives counted: the 2 per layer only. OUR CHOICE: the embedding's all-reduce (one per step, as
VocabParallelEmbedding sums its rows) and the gather of the logits are left out, 1 of 2L + 1 all-reduces.

An all-reduce of S bytes over n GPUs moves 2(n-1)/n x S through each GPU's link at best (ring or tree, NVIDIA/nccl-tests
doc/PERFORMANCE.md), so its time is at least that over the link's bandwidth B, and the bus bandwidth of a measured
time t is S / t x 2(n-1)/n. The same page says the time is "roughly equal to overhead + size / bw": `all_reduce_s`
in "formula" timing is the measured small-message floor (`latency_floor`) plus the ring term at the interconnect's
per-direction bandwidth. In "measured" timing it is Vidur's median at that size, interpolated (`all_reduce_time`).
At decode sizes (kilobytes to a few MiB) the floor dominates: on an 8-GPU H100 node the median of the measured
points up to 1 MiB is 34 µs.

A step's time is its per-GPU roofline time plus its all-reduces, one after the other (OUR CHOICE: no overlap; each
all-reduce's result is the next matmul's input). These are bounds and medians, not an engine: Vidur timed eager NCCL
calls, and engines' own all-reduce kernels, in-switch reduction (NVLS) and CUDA graphs are not in its data.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields, replace
from decimal import Decimal
from functools import cache

from sim.physics import memory, roofline, step
from sim.physics.measured import DATA_DIR, MeasuredDataError
from sim.physics.presets import Hardware, Model, load_json
from sim.physics.validate import check_choice, check_int, check_positive

MAX_TENSOR_PARALLEL = 64
ALL_REDUCES_PER_LAYER = 2  # after attention's output projection and after the MLP's down projection (Megatron-LM)
ACTIVATION_BYTES = 2  # BF16 activations: the all-reduced tensor is tokens x hidden of them
TIMINGS = ("formula", "measured")

ALL_REDUCE_FILE = "vidur-all-reduce.csv"
# Vidur's network folders the file holds: what each machine is (Vidur's docs/profiling.md).
SETUPS = {
    "h100_dgx": "H100 DGX, 8 H100s",
    "a100_dgx": "A100 DGX, 8 80GB A100s, all connected by NVLink",
    "h100_pairwise_nvlink": "4 H100 NVL GPUs, NVLink between pairs, a slower link between the pairs",
    "a100_pairwise_nvlink": "4 A100 PCIe GPUs (Azure NC96ads A100 v4), NVLink between pairs, a slower link between",
}
# The latency floor is the median of a curve's points up to this size. At 1 MiB the ring term is at most
# 2 x 7/8 x 1 MiB / 300 GB/s = 6 µs on NVLink, so those points are latency-bound; single points scatter (eager NCCL,
# 3 samples each: 7 to 44 µs on the H100 DGX), which the median rides over.
FLOOR_BYTES = 2**20


# --- the ring formula ----------------------------------------------------------------------------------------------

def ring_factor(n: int) -> float:
    """Bytes through each GPU's link per byte all-reduced, at best: 2(n-1)/n (nccl-tests' bus-bandwidth factor)."""
    k = check_int("n", n, 1, MAX_TENSOR_PARALLEL)
    return 2 * (k - 1) / k


def ring_all_reduce_time(message_bytes: float, n: int, bandwidth: float, latency_s: float = 0.0) -> float:
    """Seconds to all-reduce `message_bytes` over n GPUs whose links carry `bandwidth` bytes/s each way:
    latency_s + 2(n-1)/n x S / B (0 for one GPU: nothing to reduce)."""
    if not isinstance(message_bytes, (int, float)) or isinstance(message_bytes, bool) or not message_bytes >= 0:
        raise ValueError(f"message_bytes must be a number of bytes >= 0, got {message_bytes!r}")
    b = check_positive("bandwidth", bandwidth)
    if latency_s != 0:
        check_positive("latency_s", latency_s)
    if n == 1:
        return 0.0
    return latency_s + ring_factor(n) * message_bytes / b


def bus_bandwidth(message_bytes: float, seconds: float, n: int) -> float:
    """nccl-tests' bus bandwidth of an all-reduce: S / t x 2(n-1)/n, bytes/s, comparable with one link's speed."""
    return check_positive("message_bytes", message_bytes) / check_positive("seconds", seconds) * ring_factor(n)


# --- the measured curve --------------------------------------------------------------------------------------------

def _bad(path: str, n: int, what: str) -> MeasuredDataError:
    return MeasuredDataError(f"{os.path.basename(path)}:{n}: {what}")


def load_all_reduce(path: str) -> dict[tuple[str, int], tuple[tuple[int, float], ...]]:
    """A file in vidur-all-reduce.csv's format: (setup, GPUs) -> ((bytes, median seconds), ...) by size. A row that
    cannot be read (a cell missing, a setup Vidur did not measure, a count or size that is not a whole number, a time
    that is not a positive number, a point given twice) raises MeasuredDataError naming file, line and field."""
    table: dict[tuple[str, int], dict[int, float]] = {}
    header = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            cells = line.split(",")
            if header is None:
                if cells != ["setup", "gpus", "bytes", "median_ms"]:
                    raise _bad(path, n, f"the header is {line!r}, not 'setup,gpus,bytes,median_ms'")
                header = cells
                continue
            if len(cells) != 4:
                raise _bad(path, n, f"{len(cells)} cells, the header names 4")
            setup, gpus, size, ms = cells
            if setup not in SETUPS:
                raise _bad(path, n, f"setup is {setup!r}, not one of {', '.join(SETUPS)}")
            for field, text in (("gpus", gpus), ("bytes", size)):
                if not text.isdigit() or int(text) < (2 if field == "gpus" else 1):
                    raise _bad(path, n, f"{field} is {text!r}, not a whole number" +
                               (" of 2 or more" if field == "gpus" else " above 0"))
            try:
                seconds = float(ms) / 1000
            except ValueError:
                raise _bad(path, n, f"median_ms is {ms!r}, not a number") from None
            if not (math.isfinite(seconds) and seconds > 0):
                raise _bad(path, n, f"median_ms is {ms!r}, not a time above 0")
            points = table.setdefault((setup, int(gpus)), {})
            if int(size) in points:
                raise _bad(path, n, f"bytes {size} for {setup} on {gpus} GPUs is given twice")
            points[int(size)] = seconds
    if header is None:
        raise MeasuredDataError(f"{os.path.basename(path)}: no header line")
    return {key: tuple(sorted(points.items())) for key, points in table.items()}


@cache
def _shipped() -> dict[tuple[str, int], tuple[tuple[int, float], ...]]:
    return load_all_reduce(os.path.join(DATA_DIR, ALL_REDUCE_FILE))


def measured_gpus(setup: str) -> tuple[int, ...]:
    """The GPU counts measured on a setup, ascending."""
    check_choice("setup", setup, SETUPS)
    return tuple(sorted(n for s, n in _shipped() if s == setup))


def measured_all_reduce(setup: str, n: int) -> tuple[tuple[int, float], ...]:
    """(bytes, median seconds) of Vidur's all-reduce among n GPUs of one node of `setup`, by size."""
    check_choice("setup", setup, SETUPS)
    if (setup, n) not in _shipped():
        raise ValueError(f"no measured all-reduce on {setup} among {n!r} GPUs: measured for "
                         f"{', '.join(map(str, measured_gpus(setup)))}")
    return _shipped()[(setup, n)]


def all_reduce_time(message_bytes: float, n: int, setup: str) -> float:
    """Seconds of one all-reduce of `message_bytes` among n GPUs of `setup`, from the measured medians: a shipped
    size gives its median exactly; between two, log-time is interpolated linearly in log-size (exact for time
    proportional to size, the bandwidth-bound end). Below the smallest size measured the smallest size's time is
    returned (clamped: the curve is flat there, latency-bound); above the largest, ValueError. One GPU takes 0."""
    if n == 1:
        return 0.0
    points = measured_all_reduce(setup, n)
    if not isinstance(message_bytes, (int, float)) or isinstance(message_bytes, bool) or not message_bytes >= 0:
        raise ValueError(f"message_bytes must be a number of bytes >= 0, got {message_bytes!r}")
    if message_bytes <= points[0][0]:
        return points[0][1]
    if message_bytes > points[-1][0]:
        raise ValueError(f"message_bytes {message_bytes:,.0f} is past the largest all-reduce measured on {setup} "
                         f"({points[-1][0]:,} bytes); use the formula timing beyond it")
    for (s0, t0), (s1, t1) in zip(points, points[1:]):
        if message_bytes == s1:
            return t1
        if message_bytes < s1:
            w = math.log(message_bytes / s0) / math.log(s1 / s0)
            return math.exp(math.log(t0) + w * math.log(t1 / t0))
    raise AssertionError("unreachable: the size lies within the measured range")


def latency_floor(setup: str, n: int) -> float:
    """The small-message time of `setup` among n GPUs: the median of its measured medians up to FLOOR_BYTES."""
    times = sorted(t for s, t in measured_all_reduce(setup, n) if s <= FLOOR_BYTES)
    mid = len(times) // 2  # the median as statistics.median takes it, without that module in the pages' Python
    return times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2


# --- interconnects -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Interconnect:
    key: str
    name: str
    short_name: str
    bandwidth_bytes_per_s: float  # per GPU, each way
    source: str
    gpus: tuple[str, ...]  # hardware presets this link is the default for
    curve: str | None  # the Vidur setup whose measured curve "measured" timing reads; None where none was measured
    floor: str | None  # the Vidur setup whose small-message floor "formula" timing adds; None: floor_s is given
    floor_gpus: int | None  # the GPU count the floor is read at; None: the TP degree's, or the nearest measured
    floor_note: str
    floor_s: float | None = None  # a floor given in seconds (from a source's own model), in place of `floor`


def _bandwidth(e: dict) -> float:
    if "gb_per_s" in e:
        return float(Decimal(e["gb_per_s"]) * 10**9)
    # PCIe: GT/s per lane x lanes x 128/130 (the 128b/130b encoding of Gen3 onwards), bits to bytes
    return float(Decimal(e["pcie_gt_per_s"]) * 10**9 * e["lanes"] * 128 / 130 / 8)


@cache
def _interconnect_table() -> dict[str, Interconnect]:
    table = {}
    for key, e in load_json("interconnects.json").items():
        for setup in (e.get("curve"), e.get("floor")):
            if setup is not None and setup not in SETUPS:
                raise ValueError(f"interconnects.json: {key}: no measured setup {setup!r}")
        if ("floor" in e) == ("floor_us" in e):
            raise ValueError(f"interconnects.json: {key}: give a floor setup or floor_us, one of them")
        table[key] = Interconnect(key=key, name=e["name"], short_name=e["short_name"],
                                  bandwidth_bytes_per_s=_bandwidth(e), source=e["source"], gpus=tuple(e["gpus"]),
                                  curve=e.get("curve"), floor=e.get("floor"), floor_gpus=e.get("floor_gpus"),
                                  floor_note=e["floor_note"],
                                  floor_s=float(Decimal(e["floor_us"]) / 10**6) if "floor_us" in e else None)
    return table


def interconnect_keys() -> list[str]:
    return list(_interconnect_table())


def interconnect(key: str) -> Interconnect:
    """An interconnect preset (presets/interconnects.json), e.g. "nvlink-h100"."""
    return _interconnect_table()[check_choice("interconnect", key, _interconnect_table())]


def default_interconnect(hw: Hardware) -> Interconnect:
    """The link a GPU's nodes use: NVLink through NVSwitch for the SXM GPUs, PCIe Gen4 for the RTX 4090."""
    for ic in _interconnect_table().values():
        if hw.key in ic.gpus:
            return ic
    raise ValueError(f"no interconnect preset lists the {hw.name}; name one of {', '.join(interconnect_keys())}")


# The PCIe a GPU generation's boards sit on where no NVLink joins them: Gen4 for the A100, Gen5 for the later ones.
PCIE = {"a100-sxm-80gb": "pcie-gen4-x16"}
DEFAULT_PCIE = "pcie-gen5-x16"


def pcie_for(hw: Hardware) -> Interconnect:
    """The PCIe link between two of hw's GPUs without NVLink: its own where its default link is PCIe (the RTX PRO
    6000), else its generation's (PCIE)."""
    own = default_interconnect(hw)
    if own.key.startswith("pcie"):
        return own
    return interconnect(PCIE.get(hw.key, DEFAULT_PCIE))


LINK_KINDS = ("nvlink", "pcie")


def link_of_kind(hw: Hardware, kind: str) -> Interconnect:
    """The link between hw's GPUs a widget's "nvlink" / "pcie" choice means: its own (NVLink through NVSwitch, or its
    PCIe where it has no NVLink), or PCIe (`pcie_for`)."""
    check_choice("link", kind, LINK_KINDS)
    return default_interconnect(hw) if kind == "nvlink" else pcie_for(hw)


def floor_for(ic: Interconnect, n: int) -> float:
    """The latency floor "formula" timing adds for n GPUs on `ic`: its floor setup's, at floor_gpus if set, else at n
    if measured, else at the nearest measured count (the larger of two equally near); or its floor_s where given."""
    if ic.floor_s is not None:
        return ic.floor_s
    return latency_floor(ic.floor, floor_gpus(ic, n))


def floor_gpus(ic: Interconnect, n: int) -> int | None:
    """The GPU count of `ic`'s floor setup whose curve floor_for reads for n GPUs (None where the floor is given)."""
    if ic.floor_s is not None:
        return None
    return ic.floor_gpus or min(measured_gpus(ic.floor), key=lambda c: (abs(c - n), -c))


def all_reduce_s(ic: Interconnect, message_bytes: float, n: int, timing: str = "formula") -> float:
    """One all-reduce on `ic` among n GPUs: "formula" = latency floor + ring term at the link's bandwidth;
    "measured" = the interconnect's measured curve (ValueError where it has none, or none at n)."""
    check_choice("timing", timing, TIMINGS)
    check_int("n", n, 1, MAX_TENSOR_PARALLEL)
    if n == 1:
        return 0.0
    if timing == "measured":
        if ic.curve is None:
            raise ValueError(f"no measured all-reduce for {ic.name}; use timing='formula'")
        return all_reduce_time(message_bytes, n, ic.curve)
    return ring_all_reduce_time(message_bytes, n, ic.bandwidth_bytes_per_s, floor_for(ic, n))


# --- one GPU's share of the model ----------------------------------------------------------------------------------

def _split(name: str, total: int, n: int) -> int:
    if total % n:
        raise ValueError(f"tensor parallel {n} does not divide the model's {name} ({total:,})")
    return total // n


def kv_heads_per_gpu(m: Model, n: int) -> int:
    """K/V heads each GPU holds: n_kv / n, or 1 (replicated) once n >= n_kv."""
    kv = m.attention.kv_heads
    if n >= kv:
        if n % kv:
            raise ValueError(f"tensor parallel {n} is not a multiple of the model's {kv} K/V heads: each head is "
                             "copied whole to the same number of GPUs")
        return 1
    return _split("K/V heads", kv, n)


def shard(m: Model, tensor_parallel: int) -> Model:
    """What one GPU holds under tensor parallelism n, as a Model (see the module docstring); n = 1 gives m itself."""
    n = check_int("tensor_parallel", tensor_parallel, 1, MAX_TENSOR_PARALLEL)
    if n == 1:
        return m
    a = m.attention
    attention = replace(a, q_heads=_split("query heads", a.q_heads, n), kv_heads=kv_heads_per_gpu(m, n))
    gdn = m.gated_deltanet
    if gdn is not None:
        gdn = replace(gdn, key_heads=_split("linear-attention key heads", gdn.key_heads, n),
                      value_heads=_split("linear-attention value heads", gdn.value_heads, n))
    return replace(m, name=f"{m.name} (1/{n}, tensor parallel {n})",
                   intermediate=_split("MLP width", m.intermediate, n), vocab=-(-m.vocab // n), attention=attention,
                   gated_deltanet=gdn)


# --- a step under tensor parallelism -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """One step on n GPUs: each GPU's roofline estimate of its shard, and the all-reduces between them."""

    tensor_parallel: int
    requests: int  # requests in the step (decode's batch; 1 for a prefill)
    per_gpu: roofline.Estimate  # the roofline of one GPU's shard; per_gpu.tokens = the step's tokens
    all_reduces: int
    message_bytes: int  # of each all-reduce
    all_reduce_s: float  # one all-reduce
    interconnect: str
    timing: str

    @property
    def weights_time_s(self) -> float:
        """The weight matmuls on one GPU (its shard read once, or its FLOPs once compute-bound)."""
        op = self.per_gpu.op("matmuls")
        return op.time_s if op else 0.0

    @property
    def compute_time_s(self) -> float:
        """Every operation on one GPU: matmuls, attention, recurrent state."""
        return self.per_gpu.time_s

    @property
    def communication_time_s(self) -> float:
        return self.all_reduces * self.all_reduce_s

    @property
    def time_s(self) -> float:
        return self.compute_time_s + self.communication_time_s

    @property
    def communication_share(self) -> float:
        return self.communication_time_s / self.time_s

    @property
    def tokens_per_s(self) -> float:
        """All n GPUs together."""
        return self.per_gpu.tokens / self.time_s

    @property
    def tokens_per_s_per_gpu(self) -> float:
        return self.tokens_per_s / self.tensor_parallel

    @property
    def tokens_per_s_per_request(self) -> float:
        """What one request sees: 1 token per decode step."""
        return self.tokens_per_s / self.requests


def link_for(hw: Hardware, link: str | Interconnect | None) -> Interconnect:
    """The interconnect named by `link` (a key or an Interconnect), or hw's own where None (default_interconnect)."""
    if link is None:
        return default_interconnect(hw)
    return link if isinstance(link, Interconnect) else interconnect(link)


def _step(m: Model, n: int, estimate: roofline.Estimate, requests: int, tokens: int, link: Interconnect,
          timing: str) -> Step:
    message = tokens * m.hidden * ACTIVATION_BYTES
    count = ALL_REDUCES_PER_LAYER * m.layers if n > 1 else 0
    return Step(n, requests, estimate, count, message, all_reduce_s(link, message, n, timing), link.key, timing)


def decode(m: Model, hw: Hardware, tensor_parallel: int, batch: int, context: int,
           link: str | Interconnect | None = None, timing: str = "formula", state_dtype: str = "fp32") -> Step:
    """One decode step of `batch` requests at `context` cached tokens on `tensor_parallel` GPUs: each GPU's roofline
    over its shard (roofline.decode on `shard`), plus 2 all-reduces per layer of batch x hidden x 2 bytes on `link`
    (default: the GPU's own, `default_interconnect`). At 1 GPU this is roofline.decode exactly, with no all-reduce."""
    n = check_int("tensor_parallel", tensor_parallel, 1, MAX_TENSOR_PARALLEL)
    estimate = roofline.decode(shard(m, n), hw, batch, context, state_dtype)
    return _step(m, n, estimate, estimate.tokens, estimate.tokens, link_for(hw, link), timing)


def prefill(m: Model, hw: Hardware, tensor_parallel: int, tokens: int, link: str | Interconnect | None = None,
            timing: str = "formula", state_dtype: str = "fp32") -> Step:
    """One request's prompt of `tokens` tokens on `tensor_parallel` GPUs: roofline.prefill on each GPU's shard, plus
    2 all-reduces per layer of tokens x hidden x 2 bytes."""
    n = check_int("tensor_parallel", tensor_parallel, 1, MAX_TENSOR_PARALLEL)
    estimate = roofline.prefill(shard(m, n), hw, tokens, state_dtype)
    return _step(m, n, estimate, 1, estimate.tokens, link_for(hw, link), timing)


# --- memory per GPU ------------------------------------------------------------------------------------------------

def memory_per_gpu(m: Model, tensor_parallel: int, batch: int, context: int, state_dtype: str = "fp32") -> int:
    """Bytes each GPU holds serving `batch` requests at `context` tokens: its weight shard and its share of every
    request's KV and state (memory.py's count, on the shard)."""
    return memory.resident_bytes(shard(m, tensor_parallel), batch, context, state_dtype)


def max_batch(m: Model, hw: Hardware, tensor_parallel: int, context: int, state_dtype: str = "fp32") -> int:
    """Requests at `context` cached tokens that fit on n GPUs of `hw` under tensor parallelism (memory.max_batch on
    the shard: each GPU holds every request's share)."""
    return memory.max_batch(shard(m, tensor_parallel), hw, context, state_dtype)


# --- a serving step under tensor parallelism -----------------------------------------------------------------------

@dataclass(frozen=True)
class ParallelStepCost(step.ExchangingStepCost):
    """step.StepCost of one GPU's shard, plus each step's all-reduces: the scheduler's step-cost interface on n GPUs.
    A step of T tokens (prompt chunks and decoders together) sends 2L all-reduces of T x hidden x 2 bytes on `link`,
    after the GPU's own work (no overlap, as `decode`). Within a run of decode steps the tokens do not change, so
    the all-reduces add a constant and the scheduler's closed form still holds."""

    tensor_parallel: int = 1
    all_reduces: int = 0  # per step: ALL_REDUCES_PER_LAYER x layers
    hidden: int = 0
    link: Interconnect | None = None
    timing: str = "formula"

    def exchange_s(self, tokens: int) -> float:
        """The all-reduces of a step over `tokens` tokens (0 for an empty step)."""
        if not tokens:
            return 0.0
        return self.all_reduces * all_reduce_s(self.link, tokens * self.hidden * ACTIVATION_BYTES,
                                               self.tensor_parallel, self.timing)


@cache
def step_cost(m: Model, hw: Hardware, tensor_parallel: int = 1, link: str | Interconnect | None = None,
              timing: str = "formula", state_dtype: str = "fp32") -> step.StepCost:
    """The scheduler's step cost of m on `tensor_parallel` GPUs of hw: step.step_cost of one GPU's shard with the
    all-reduces added (ParallelStepCost); at 1 GPU step.step_cost(m, hw) itself."""
    n = check_int("tensor_parallel", tensor_parallel, 1, MAX_TENSOR_PARALLEL)
    check_choice("timing", timing, TIMINGS)
    if n == 1:
        return step.step_cost(m, hw, state_dtype)
    base = step.step_cost(shard(m, n), hw, state_dtype)
    given = {f.name: getattr(base, f.name) for f in fields(step.StepCost) if f.init}
    return ParallelStepCost(**given, tensor_parallel=n, all_reduces=ALL_REDUCES_PER_LAYER * m.layers,
                            hidden=m.hidden, link=link_for(hw, link), timing=timing)

