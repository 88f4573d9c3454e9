"""Measured data beside the bound: public GPU timings and real vLLM runs, loaded from sim/physics/data/ and checked.

The files are slices of public data sets, each with its source, commit, licence and what was measured in its
first lines (`#` comments) or in its meta file; bench/data/trim.py makes them from the upstream repositories.

- `matmul_times(gpu, op)`: microsoft/vidur's median time of one Llama-2-7B weight matmul on an A100 or an H100 by the
  number of tokens it multiplies (`vidur-llama-2-7b-matmuls.csv`, one row per GPU and token count, one column per
  matmul, milliseconds in the file, seconds here).
- `run(key)` / `load_run(requests, meta)`: a vLLM run, request by request (casys-kaist/LLMServingSim's
  `requests.jsonl` and `meta.json` format): each request's prompt and output tokens and the engine's monotonic
  timestamps when it was queued, scheduled, and produced its first and last token; and the engine's settings.
- `profile(key)`: the same project's per-operation vLLM profile of that GPU and model (one decoder layer, µs); for a
  run on several GPUs (tensor parallel 2: Qwen3-32B on two RTX PRO 6000s) the profile of one GPU's shard, timed
  alone, with no all-reduce in it.

A file that lacks a column, or holds a value that is not a number where one is needed, raises MeasuredDataError
naming the file, the line and the field: a loader never guesses.

Metrics of a measured run are those of LLMServingSim's validation (bench/core/validate.py): TTFT = first token -
queued, TPOT = (last token - first token) / (output - 1), latency = last token - queued, every request counted
(the engine's `arrival_time` is on the wall clock and the others on a monotonic one, so `queued_ts` is the arrival).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache

from sim.physics import presets
from sim.physics.matmul import matmul_cost

DATA_DIR = os.path.join(os.path.dirname(__file__), "data")

VIDUR_FILE = "vidur-llama-2-7b-matmuls.csv"
# Vidur's GPU folders and the presets they are set against. Neither says SXM or PCIe (docs/profiling.md uses the a100
# data for an A100 80GB PCIe node and an A100 DGX alike): the SXM datasheets are the bound, and the view says so.
VIDUR_GPUS = {"a100": "a100-sxm-80gb", "h100": "h100-sxm"}
# Vidur's operation names -> (rows, columns) of the Llama-2-7B weight each multiplies by (hidden 4,096, MLP 11,008).
VIDUR_OPS = {
    "attn_pre_proj": (4096, 3 * 4096),  # Q, K and V together (no GQA in Llama-2-7B)
    "attn_post_proj": (4096, 4096),  # O
    "mlp_up_proj": (4096, 2 * 11008),  # gate and up together
    "mlp_down_proj": (11008, 4096),
}

# The shipped runs: key -> (GPU preset, model preset, file stem).
RUNS = {"rtx-4090": ("rtx-4090", "llama-3.1-8b", "vllm-rtx-4090-llama-3.1-8b"),
        "rtx-pro-6000-tp2": ("rtx-pro-6000", "qwen3-32b", "vllm-rtx-pro-6000-qwen3-32b-tp2"),
        "rtx-pro-6000-dp2-ep2": ("rtx-pro-6000", "qwen3-30b-a3b", "vllm-rtx-pro-6000-qwen3-30b-a3b-dp2-ep2")}
# What vLLM takes when a run's meta.json does not say (the TP 2 run's has no kv_cache block): its CacheConfig
# defaults on CUDA, block_size 16 and gpu_memory_utilization 0.9 (LLMServingSim's bench/README.md: "All runs use
# ... block_size=16"; its profiler's meta.yaml engine_effective: gpu_memory_utilization 0.9).
DEFAULT_BLOCK_SIZE = 16
DEFAULT_MEMORY_UTILIZATION = 0.9
# The per-operation profiles (hundreds of KB) are read in CPython only, by the replay tool and the build; the browser's
# zip leaves this folder out (builder/assets.py) and gets their result as a committed replay (sim/serving/replay.py).
PROFILES = "profiles"
REQUEST_FIELDS = ("input_toks", "output_toks", "queued_ts", "first_token_ts", "last_token_ts")


class MeasuredDataError(ValueError):
    """A measured-data file that cannot be read as the course reads it; the message names file, line and field."""


@dataclass(frozen=True)
class MeasuredRequest:
    prompt_tokens: int
    output_tokens: int
    queued_s: float  # seconds after the run's first request was queued
    first_token_s: float
    last_token_s: float
    scheduled_s: float | None = None  # first scheduled (its first prefill step began), if the file records it

    @property
    def wait_s(self) -> float | None:
        """Queued until first scheduled: the part of TTFT spent waiting for room."""
        return None if self.scheduled_s is None else self.scheduled_s - self.queued_s

    @property
    def ttft_s(self) -> float:
        return self.first_token_s - self.queued_s

    @property
    def tpot_s(self) -> float | None:
        return (self.last_token_s - self.first_token_s) / (self.output_tokens - 1) if self.output_tokens > 1 else None

    @property
    def latency_s(self) -> float:
        return self.last_token_s - self.queued_s


@dataclass(frozen=True)
class EngineSettings:
    """What a vLLM run's meta.json says the scheduler worked with (its `engine_kwargs` and `kv_cache`)."""

    vllm_version: str
    model: str  # the Hugging Face name the engine served
    max_num_seqs: int
    max_num_batched_tokens: int
    block_size: int
    num_gpu_blocks: int | None  # the KV pool per GPU the engine reported; None where meta.json has no kv_cache
    tensor_parallel_size: int
    data_parallel_size: int
    enable_prefix_caching: bool
    device_name: str
    gpu_memory_utilization: float = DEFAULT_MEMORY_UTILIZATION
    enable_expert_parallel: bool = False  # an MoE model's experts split over the data-parallel GPUs


@dataclass(frozen=True)
class Run:
    key: str  # "rtx-4090" for a shipped run; the file name for another
    requests: tuple[MeasuredRequest, ...]  # in the order they were queued
    settings: EngineSettings
    source: str


def _data_lines(path: str):
    """(line number, text) of a CSV's header and rows, `#` comment lines skipped."""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if line and not line.startswith("#"):
                yield n, line


def _number(path: str, n: int, field: str, text: str, kind=float):
    try:
        value = kind(text)
    except ValueError:
        raise MeasuredDataError(f"{os.path.basename(path)}:{n}: {field} is {text!r}, not a number") from None
    if value != value or value < 0:
        raise MeasuredDataError(f"{os.path.basename(path)}:{n}: {field} is {text!r}, not a time or a count")
    return value


def _read(path: str, columns: tuple[str, ...], text: tuple[str, ...], floats: tuple[str, ...] = ()) -> list[dict]:
    """A CSV's rows as dicts of the named columns: those in `text` as they are, those in `floats` and the last
    column as floats, the others as whole numbers."""
    lines = _data_lines(path)
    try:
        n, head = next(lines)
    except StopIteration:
        raise MeasuredDataError(f"{os.path.basename(path)}: no header line") from None
    names = head.split(",")
    missing = [c for c in columns if c not in names]
    if missing:
        raise MeasuredDataError(f"{os.path.basename(path)}:{n}: no column {missing[0]!r} (the header has {head!r})")
    index = [names.index(c) for c in columns]
    rows = []
    for n, line in lines:
        cells = line.split(",")
        if len(cells) != len(names):
            raise MeasuredDataError(f"{os.path.basename(path)}:{n}: {len(cells)} cells, the header names {len(names)}")
        row = {}
        for c, k in zip(columns, index):
            real = c == columns[-1] or c in floats
            row[c] = cells[k] if c in text else _number(path, n, c, cells[k], float if real else int)
        rows.append(row)
    return rows


@cache
def _vidur() -> dict:
    path = os.path.join(DATA_DIR, VIDUR_FILE)
    table = {}
    columns = tuple(f"{op}_ms" for op in VIDUR_OPS)
    for row in _read(path, ("gpu", "tokens", *columns), ("gpu",), columns):
        if row["gpu"] not in VIDUR_GPUS:
            raise MeasuredDataError(f"{VIDUR_FILE}: unknown gpu {row['gpu']!r}")
        for op in VIDUR_OPS:
            table.setdefault((row["gpu"], op), []).append((row["tokens"], row[f"{op}_ms"] / 1000))
    for (gpu, op), points in table.items():
        counts = [n for n, _ in points]
        if len(set(counts)) != len(counts):
            raise MeasuredDataError(f"{VIDUR_FILE}: {gpu} {op} has a token count twice")
    return {k: tuple(sorted(v)) for k, v in table.items()}


def matmul_times(gpu: str, op: str) -> tuple[tuple[int, float], ...]:
    """(tokens, median seconds) of one of Llama-2-7B's weight matmuls measured by Vidur on `gpu` ("a100"/"h100")."""
    table = _vidur()
    if (gpu, op) not in table:
        raise ValueError(f"no measured matmul for gpu {gpu!r} and op {op!r}: gpu is one of {sorted(VIDUR_GPUS)}, "
                         f"op one of {sorted(VIDUR_OPS)}")
    return table[(gpu, op)]


def _field(meta: dict, where: str, name: str, path: str, kind=int):
    block = meta.get(where)
    if not isinstance(block, dict) or name not in block or block[name] is None:
        raise MeasuredDataError(f"{os.path.basename(path)}: no {where}.{name}")
    value = block[name]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise MeasuredDataError(f"{os.path.basename(path)}: {where}.{name} is {value!r}, not a positive whole number")
    return value


def load_run(requests_path: str, meta_path: str, key: str | None = None) -> Run:
    """A vLLM run from LLMServingSim's requests.jsonl and meta.json (see the module docstring)."""
    try:
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
    except json.JSONDecodeError as e:
        raise MeasuredDataError(f"{os.path.basename(meta_path)}:{e.lineno}: not JSON ({e.msg})") from None
    if not isinstance(meta, dict):
        raise MeasuredDataError(f"{os.path.basename(meta_path)}: not a JSON object")
    engine = meta.get("engine_kwargs") or {}
    settings = EngineSettings(
        vllm_version=str(meta.get("vllm_version", "")),
        model=str(engine.get("model") or meta.get("model") or ""),
        max_num_seqs=_field(meta, "engine_kwargs", "max_num_seqs", meta_path),
        max_num_batched_tokens=_field(meta, "engine_kwargs", "max_num_batched_tokens", meta_path),
        block_size=_field(meta, "kv_cache", "block_size", meta_path) if "kv_cache" in meta else DEFAULT_BLOCK_SIZE,
        num_gpu_blocks=_field(meta, "kv_cache", "num_gpu_blocks", meta_path) if "kv_cache" in meta else None,
        tensor_parallel_size=int(engine.get("tensor_parallel_size") or 1),
        data_parallel_size=int(engine.get("data_parallel_size") or 1),
        enable_prefix_caching=bool((meta.get("kv_cache") or {}).get("enable_prefix_caching", False)),
        device_name=str((meta.get("hardware") or {}).get("device_name", "")),
        gpu_memory_utilization=float((meta.get("kv_cache") or {}).get("gpu_memory_utilization")
                                     or DEFAULT_MEMORY_UTILIZATION),
        enable_expert_parallel=bool(engine.get("enable_expert_parallel", False)),
    )
    raw = []
    with open(requests_path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                raise MeasuredDataError(f"{os.path.basename(requests_path)}:{n}: not JSON ({e.msg})") from None
            for name in REQUEST_FIELDS:
                value = r.get(name) if isinstance(r, dict) else None
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise MeasuredDataError(f"{os.path.basename(requests_path)}:{n}: no number {name!r}")
            if r["input_toks"] < 1 or r["output_toks"] < 1 or int(r["input_toks"]) != r["input_toks"] \
                    or int(r["output_toks"]) != r["output_toks"]:
                raise MeasuredDataError(f"{os.path.basename(requests_path)}:{n}: input_toks and output_toks must be "
                                        f"positive whole numbers")
            scheduled = r.get("scheduled_ts")
            if scheduled is not None and (isinstance(scheduled, bool) or not isinstance(scheduled, (int, float))
                                          or not r["queued_ts"] <= scheduled <= r["first_token_ts"]):
                raise MeasuredDataError(f"{os.path.basename(requests_path)}:{n}: scheduled_ts is not a time between "
                                        f"queued_ts and first_token_ts")
            if not r["queued_ts"] <= r["first_token_ts"] <= r["last_token_ts"]:
                raise MeasuredDataError(f"{os.path.basename(requests_path)}:{n}: queued_ts <= first_token_ts <= "
                                        f"last_token_ts does not hold")
            raw.append(r)
    if not raw:
        raise MeasuredDataError(f"{os.path.basename(requests_path)}: no requests")
    raw.sort(key=lambda r: r["queued_ts"])
    t0 = raw[0]["queued_ts"]
    requests = tuple(MeasuredRequest(int(r["input_toks"]), int(r["output_toks"]), r["queued_ts"] - t0,
                                     r["first_token_ts"] - t0, r["last_token_ts"] - t0,
                                     None if r.get("scheduled_ts") is None else r["scheduled_ts"] - t0) for r in raw)
    return Run(key or os.path.basename(requests_path), requests, settings, str(meta.get("source", "")))


def _path(stem: str, suffix: str, folder: str = "") -> str:
    return os.path.join(DATA_DIR, folder, f"{stem}-{suffix}")


@cache
def run(key: str) -> Run:
    """A shipped run by key (RUNS)."""
    if key not in RUNS:
        raise ValueError(f"run must be one of {sorted(RUNS)}")
    stem = RUNS[key][2]
    return load_run(_path(stem, "requests.jsonl"), _path(stem, "meta.json"), key)


@dataclass(frozen=True)
class Profile:
    """A vLLM per-operation profile of one decoder layer (plus the model's once-per-step and per-sequence parts)."""

    dense: dict  # operation -> ((tokens, seconds), ...) ascending
    per_sequence: dict  # "lm_head" / "sampler" -> ((sequences, seconds), ...)
    attention: dict  # (prefill_chunk, kv_prefill, n_decode, kv_decode) -> seconds
    moe: dict | None = None  # an MoE model's MoE block: tokens -> ((activated experts, seconds), ...) ascending


DENSE_OPS = ("embedding", "layernorm", "qkv_proj", "rotary_emb", "o_proj", "gate_up_proj", "act_fn", "down_proj",
             "final_layernorm")
MLP_OPS = ("gate_up_proj", "act_fn", "down_proj")  # a dense MLP's; an MoE model's profile has its MoE block instead
OPTIONAL_DENSE_OPS = ("qk_norm",)  # in a profile of a model that has it (Qwen3's RMSNorm over each q and k head)


def _series(rows, key_column: str, x_column: str) -> dict:
    table = {}
    for r in rows:
        table.setdefault(r[key_column], []).append((r[x_column], r["time_us"] / 1e6))
    return {k: tuple(sorted(v)) for k, v in table.items()}


@cache
def profile(key: str) -> Profile:
    """The shipped per-operation profile of a run's GPU and model (RUNS)."""
    if key not in RUNS:
        raise ValueError(f"no profile for {key!r}: profiles are shipped for {sorted(RUNS)}")
    stem = RUNS[key][2]
    dense = _series(_read(_path(stem, "dense.csv", PROFILES), ("layer", "tokens", "time_us"), ("layer",)),
                    "layer", "tokens")
    moe = moe_block(key) if os.path.exists(_path(stem, "moe.csv", PROFILES)) else None
    missing = [op for op in DENSE_OPS if op not in dense and not (moe and op in MLP_OPS)]
    if missing:
        raise MeasuredDataError(f"{stem}-dense.csv: no rows for {missing[0]!r}")
    per_sequence = _series(_read(_path(stem, "per-sequence.csv", PROFILES), ("layer", "sequences", "time_us"),
                                 ("layer",)), "layer", "sequences")
    for op in ("lm_head", "sampler"):
        if op not in per_sequence:
            raise MeasuredDataError(f"{stem}-per-sequence.csv: no rows for {op!r}")
    columns = ("prefill_chunk", "kv_prefill", "n_decode", "kv_decode", "time_us")
    attention = {(r["prefill_chunk"], r["kv_prefill"], r["n_decode"], r["kv_decode"]): r["time_us"] / 1e6
                 for r in _read(_path(stem, "attention.csv", PROFILES), columns, ())}
    return Profile(dense, per_sequence, attention, moe)


@cache
def moe_block(key: str) -> dict:
    """The profiled MoE block of a shipped run's model (one layer's router and experts, its moe.csv): tokens ->
    ((activated experts, seconds), ...) ascending. The one profile file the browser gets too (builder/assets.py)."""
    if key not in RUNS:
        raise ValueError(f"run must be one of {sorted(RUNS)}")
    path = _path(RUNS[key][2], "moe.csv", PROFILES)
    if not os.path.exists(path):
        raise ValueError(f"the run {key!r} has no MoE block profile: its model is dense")
    return _series(_read(path, ("tokens", "activated_experts", "time_us"), ()), "tokens", "activated_experts")


# --- a measured matmul beside its bound ----------------------------------------------------------------------------

FLAT_TOKENS = 1  # the achieved bandwidth is read at one token (a GEMV: every weight read once, used once)
FULL_TOKENS = 4096  # the achieved FLOP rate at the most tokens measured (a GEMM well past every ridge)


def matmul_shape(op: str) -> tuple[int, int]:
    """(inner, cols) of the Llama-2-7B weight a Vidur op multiplies by."""
    if op not in VIDUR_OPS:
        raise ValueError(f"op must be one of {sorted(VIDUR_OPS)}")
    return VIDUR_OPS[op]


def matmul_bound_s(hw, op: str, tokens: int, bandwidth_fraction: float = 1.0, compute_fraction: float = 1.0) -> float:
    """The roofline's least time for (tokens x inner) x (inner x cols) in FP16 on hw: the larger of its FLOPs over
    the peak and its bytes (each operand read once, the result written once) over the bandwidth, each at the given
    fraction of the datasheet's."""
    inner, cols = matmul_shape(op)
    c = matmul_cost(tokens, inner, cols)
    return max(c.flops / (hw.peak_flops_per_s * compute_fraction),
               c.bytes / (hw.bandwidth_bytes_per_s * bandwidth_fraction))


def measured_s(gpu: str, op: str, tokens: int) -> float:
    """The measured median at exactly `tokens` (ValueError if Vidur did not measure that count)."""
    for t, s in matmul_times(gpu, op):
        if t == tokens:
            return s
    raise ValueError(f"Vidur measured no {op} on {gpu} at {tokens} tokens")


def achieved_fractions(gpu: str, op: str) -> tuple[float, float]:
    """(bandwidth, compute) the measured matmul reaches, as fractions of the datasheet: its bytes at FLAT_TOKENS over
    its time there over the bandwidth, and its FLOPs at FULL_TOKENS over its time there over the peak."""
    hw = presets.hardware(VIDUR_GPUS[gpu])
    inner, cols = matmul_shape(op)
    flat, full = matmul_cost(FLAT_TOKENS, inner, cols), matmul_cost(FULL_TOKENS, inner, cols)
    return (flat.bytes / measured_s(gpu, op, FLAT_TOKENS) / hw.bandwidth_bytes_per_s,
            full.flops / measured_s(gpu, op, FULL_TOKENS) / hw.peak_flops_per_s)


def knee_tokens(hw, op: str, bandwidth_fraction: float = 1.0, compute_fraction: float = 1.0) -> float:
    """Tokens where the matmul's FLOP time overtakes its byte time at those fractions of the datasheet: with FLOPs
    2TKN and bytes 2(TK + KN + TN), T = (KN / B) / (KN / P - (K + N) / B), B and P the achieved rates."""
    inner, cols = matmul_shape(op)
    bandwidth = hw.bandwidth_bytes_per_s * bandwidth_fraction
    peak = hw.peak_flops_per_s * compute_fraction
    kn = inner * cols
    return (kn / bandwidth) / (kn / peak - (inner + cols) / bandwidth)
