"""Hardware and model presets, loaded from presets/*.json into frozen records.

Each JSON entry cites its public source. Numbers are kept in the units the sources print
(TFLOPS, TB/s, GB, MiB) and converted to SI here, exactly: JSON decimals are parsed as Decimal so
that 2.039 TB/s becomes 2_039_000_000_000 B/s, not 2038999999999.9998.

Memory is what the device reports, not the datasheet's round figure: an "80 GB" H100 shows 81,559 MiB in
nvidia-smi, 81,559 x 2^20 = 85,520,809,984 bytes, where 80 GB read as 80 x 10^9 bytes would be 6.5 % short.
(CUDA's own total, which an engine budgets against, is about 0.5 % smaller again: vLLM logs 79.22 GiB on an
H100, PR #10511. The simulator takes nvidia-smi's figure, which every GPU preset has a source for.)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import cache

from sim.physics.validate import check_choice, check_fraction, check_int

# os.path, not pathlib: importing pathlib costs more than this whole module in Pyodide's boot.
PRESETS_DIR = os.path.join(os.path.dirname(__file__), "presets")

# Bytes per element of the dtypes the simulator knows.
DTYPE_BYTES = {"fp32": 4, "bf16": 2}


@dataclass(frozen=True)
class Hardware:
    key: str
    name: str
    short_name: str
    peak_flops_per_s: float  # dense BF16 tensor-core peak
    bandwidth_bytes_per_s: float  # HBM bandwidth
    memory_bytes: float  # HBM capacity as the device reports it (nvidia-smi's total)
    source: str
    datasheet_memory_bytes: float = 0.0  # the datasheet's "80 GB", as 80 x 10^9 bytes
    memory_source: str = ""
    host_link_bytes_per_s: float | None = None  # PCIe to the host, each way; None without a checked source
    host_link_source: str = ""
    nvlink_bytes_per_s: float | None = None  # NVLink to another GPU, each way; None without a checked source
    nvlink_source: str = ""
    fp8_peak_flops_per_s: float | None = None  # dense FP8 tensor-core peak; None on a GPU without FP8 tensor cores
    fp8_source: str = ""
    menus: bool = True  # offered in the widgets' GPU menus; False for a GPU only measured data uses


@dataclass(frozen=True)
class Attention:
    q_heads: int
    kv_heads: int
    head_dim: int
    output_gate: bool  # q_proj also emits a per-channel sigmoid gate for the attention output
    qk_norm: bool  # RMSNorm over each query and key head
    # Multi-head latent attention (DeepSeek-V2/V3) when kv_latent > 0: each token caches one latent of kv_latent
    # plus a shared RoPE key of rope_dim; head_dim is then each head's non-RoPE query/key width, v_head_dim its value
    # width, and q_latent the rank of the query's own low-rank projection (0: a full-rank query projection).
    kv_latent: int = 0
    rope_dim: int = 0
    q_latent: int = 0
    v_head_dim: int = 0

    @property
    def group_size(self) -> int:
        """Query heads that share one K/V head (GQA)."""
        return self.q_heads // self.kv_heads

    @property
    def is_latent(self) -> bool:
        """Multi-head latent attention (MLA)."""
        return self.kv_latent > 0


@dataclass(frozen=True)
class Experts:
    """The mixture-of-experts feed-forward of an MoE model (sim/physics/moe.py): each MoE layer holds `routed`
    SwiGLU experts of width `width`, of which a router picks `per_token` for each token, plus `shared` experts every
    token passes through (their widths summed: `shared_width`). The first `dense_layers` layers keep a dense MLP of
    the model's `intermediate` width instead (DeepSeek-V3's first three).

    `expert_parallel` n > 1 makes the record one GPU's share under expert parallelism (moe.ep_shard): it holds
    routed / n of the routed experts, and its MoE layers see the tokens of all n GPUs, which serve the same load."""

    routed: int
    per_token: int
    width: int
    shared: int = 0
    shared_width: int = 0
    dense_layers: int = 0
    router_bias: bool = False  # a per-expert bias on the router's scores (DeepSeek-V3's load balancing)
    expert_parallel: int = 1

    @property
    def held(self) -> int:
        """Routed experts this record's GPU holds in each MoE layer."""
        return self.routed // self.expert_parallel


@dataclass(frozen=True)
class GatedDeltaNet:
    key_heads: int
    value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int


@dataclass(frozen=True)
class Vision:
    depth: int
    hidden: int
    intermediate: int
    patch_size: int
    temporal_patch_size: int
    in_channels: int
    spatial_merge_size: int
    position_embeddings: int
    out_hidden: int


@dataclass(frozen=True)
class Model:
    key: str
    name: str
    source: str
    hidden: int
    intermediate: int
    vocab: int
    tied_embeddings: bool
    layers: int
    full_attention_interval: int  # every Nth layer is full attention, the rest Gated DeltaNet
    attention: Attention
    gated_deltanet: GatedDeltaNet | None = None
    mtp_layers: int = 0
    vision: Vision | None = None
    weight_bytes_per_param: int = 2  # BF16 checkpoints
    menus: bool = True  # offered in the widgets' model menus; False for a model only measured data uses
    experts: Experts | None = None  # a mixture-of-experts model's routed and shared experts

    @property
    def moe_layers(self) -> int:
        """Layers whose feed-forward is a mixture of experts (0 for a dense model)."""
        return 0 if self.experts is None else self.layers - self.experts.dense_layers

    @property
    def dense_mlp_layers(self) -> int:
        """Layers with a dense MLP of `intermediate` width."""
        return self.layers - self.moe_layers

    @property
    def full_attention_layers(self) -> int:
        return self.layers // self.full_attention_interval

    @property
    def linear_attention_layers(self) -> int:
        return self.layers - self.full_attention_layers

    @property
    def is_hybrid(self) -> bool:
        return self.linear_attention_layers > 0


def load_json(name: str) -> dict:
    """A presets file by name (e.g. "attention.json"), decimals as Decimal."""
    return _load(name)


def _load(name: str) -> dict:
    with open(os.path.join(PRESETS_DIR, name), encoding="utf-8") as f:
        return json.load(f, parse_float=Decimal)


def _si(value, scale: int) -> float:
    return float(Decimal(value) * scale)


@cache
def _hardware_table() -> dict[str, Hardware]:
    table = {}
    for key, e in _load("hardware.json").items():
        table[key] = Hardware(
            key=key,
            name=e["name"],
            short_name=e["short_name"],
            peak_flops_per_s=_si(e["bf16_dense_tflops"], 10**12),
            bandwidth_bytes_per_s=_si(e["hbm_tb_per_s"], 10**12),
            memory_bytes=(_si(e["reported_memory_mib"], 2**20) if "reported_memory_mib" in e
                          else float(e["reported_memory_bytes"])),
            source=e["source"],
            datasheet_memory_bytes=_si(e["hbm_gb"], 10**9),
            memory_source=e["memory_source"],
            host_link_bytes_per_s=_si(e["host_link_gb_per_s"], 10**9) if "host_link_gb_per_s" in e else None,
            host_link_source=e.get("host_link_source", ""),
            nvlink_bytes_per_s=_si(e["nvlink_gb_per_s"], 10**9) if "nvlink_gb_per_s" in e else None,
            nvlink_source=e.get("nvlink_source", ""),
            fp8_peak_flops_per_s=_si(e["fp8_dense_tflops"], 10**12) if "fp8_dense_tflops" in e else None,
            fp8_source=e["fp8_source"],
            menus=e.get("menus", True),
        )
    return table


@cache
def _model_table() -> dict[str, Model]:
    table = {}
    for key, e in _load("models.json").items():
        e = dict(e)
        e["attention"] = Attention(**e["attention"])
        if "gated_deltanet" in e:
            e["gated_deltanet"] = GatedDeltaNet(**e["gated_deltanet"])
        if "vision" in e:
            e["vision"] = Vision(**e["vision"])
        if "experts" in e:
            e["experts"] = Experts(**e["experts"])
        model = Model(key=key, **e)
        if model.is_hybrid != (model.gated_deltanet is not None):
            raise ValueError(f"models.json: {key}: linear-attention layers need a gated_deltanet block and vice versa")
        table[key] = model
    return table


@dataclass(frozen=True)
class Measurement:
    """A published decode speed, with its set-up and source, to set beside the roofline's bound."""

    key: str
    system: str
    model: str  # model preset key
    hardware: str  # hardware preset key of the closest datasheet GPU
    weight_dtype: str  # "bf16" | "fp8" (any 1-byte format) | "int4"
    tensor_parallel: int
    batch: int
    tokens_per_s: float  # per user
    set_up: str
    source: str


@cache
def _measurement_table() -> dict[str, Measurement]:
    return {key: Measurement(key=key, **{k: float(v) if isinstance(v, Decimal) else v for k, v in e.items()})
            for key, e in _load("measurements.json").items()}


def measurement(key: str) -> Measurement:
    """A published measurement (presets/measurements.json), e.g. "gpt-fast-llama2-7b-bf16"."""
    return _measurement_table()[check_choice("measurement", key, _measurement_table())]


def hardware_keys(every: bool = False) -> list[str]:
    """The GPUs the widgets' menus offer; with `every`, also those only measured data uses (the RTX 4090 of a
    replayed vLLM run), which the menus leave out (a 24 GB card holds few of the course's models)."""
    return [k for k, hw in _hardware_table().items() if every or hw.menus]


def model_keys(every: bool = False) -> list[str]:
    """The models the widgets' menus offer; with `every`, also those only measured data uses."""
    return [k for k, m in _model_table().items() if every or m.menus]


def moe_model_keys() -> list[str]:
    """The mixture-of-experts models, which the MoE lesson's menus offer (the other menus leave them out)."""
    return [k for k, m in _model_table().items() if m.experts is not None]


def hardware(key: str) -> Hardware:
    """Return the hardware preset named key (e.g. "h100-sxm")."""
    return _hardware_table()[check_choice("hardware", key, _hardware_table())]


def model(key: str) -> Model:
    """Return the model preset named key (e.g. "qwen3.8-27b")."""
    return _model_table()[check_choice("model", key, _model_table())]


# vLLM's share of the device's memory for one instance: the default of gpu_memory_utilization,
# `Field(default=0.92, gt=0, le=1)` in vllm/config/cache.py (vllm-project/vllm @002f10e; 0.9 in older releases).
VLLM_MEMORY_FRACTION = 0.92

# What an engine holds besides weights and KV inside its share, which vLLM measures at start-up rather than
# fixes: memory outside PyTorch (CUDA context, NCCL, cuBLAS workspaces) and the peak of the activations. Its log
# for Llama-3-8B on one H100 (vllm-project/vllm PR #10511): "non_torch_memory 1.79GiB", "PyTorch activation peak
# memory 1.26GiB". OUR CHOICE: that 3.05 GiB as the default reserve; it grows with the batch and the model.
RUNTIME_RESERVE_BYTES = round(Decimal("3.05") * 2**30)


def achieved(hw: Hardware, compute_efficiency: float = 1.0, bandwidth_efficiency: float = 1.0,
             memory_fraction: float = 1.0, reserve_bytes: float = 0) -> Hardware:
    """The GPU as an engine gets it: compute and bandwidth at the share of peak its kernels reach
    (achieved / peak), and the memory it may give to weights and KV: the share of the device's memory it may
    use (VLLM_MEMORY_FRACTION is vLLM's default) less a runtime reserve (RUNTIME_RESERVE_BYTES is a measured one).

    With every share at 1.0 and no reserve this is the GPU as the device reports it, the bound the lessons
    compute by default.
    """
    compute = check_fraction("compute_efficiency", compute_efficiency)
    bandwidth = check_fraction("bandwidth_efficiency", bandwidth_efficiency)
    memory = check_fraction("memory_fraction", memory_fraction)
    reserve = check_int("reserve_bytes", reserve_bytes, 0, int(hw.memory_bytes * memory))
    if compute == bandwidth == memory == 1 and reserve == 0:
        return hw
    return replace(hw, peak_flops_per_s=hw.peak_flops_per_s * compute,
                   bandwidth_bytes_per_s=hw.bandwidth_bytes_per_s * bandwidth,
                   memory_bytes=hw.memory_bytes * memory - reserve)


def dtype_bytes(name: str, dtype: str) -> int:
    """Return the bytes per element of dtype, raising ValueError naming the parameter if unknown."""
    return DTYPE_BYTES[check_choice(name, dtype, DTYPE_BYTES)]
