"""Controls that several widgets share, so that every lesson offers the same choices in the same words:
the GPU, the model, the recurrent state's dtype, and how much of the GPU a real engine gets."""

from __future__ import annotations

from sim.kit.controls import Range, Select
from sim.kit.layout import Flag
from sim.physics import cache, presets

CUSTOM = "custom"  # the model option of widgets whose model fields can be edited by hand

TEXT = {
    "zh": {
        "hardware": "GPU",
        "model": "模型",
        "model=custom": "自定义",
        "state_dtype": "递归状态精度",
        "no_state": "这个模型没有递归状态：递归状态精度对它不起作用。",
        "memory_fraction": "引擎可用的显存比例（1 = 数据手册的全部；vLLM 0.20 及以前默认 0.9）",
        "compute_efficiency": "实际算力 ÷ 峰值（1 = 屋顶线的理想值）",
        "bandwidth_efficiency": "实际带宽 ÷ 峰值（1 = 屋顶线的理想值）",
    },
    "en": {
        "hardware": "GPU",
        "model": "Model",
        "model=custom": "Custom",
        "state_dtype": "Recurrent state dtype",
        "no_state": "This model keeps no recurrent state: the state dtype does not apply to it.",
        "memory_fraction": "Share of memory the engine may use (1 = the datasheet's all; vLLM ≤ 0.20 defaults to 0.9)",
        "compute_efficiency": "Achieved compute ÷ peak (1 = the roofline's ideal)",
        "bandwidth_efficiency": "Achieved bandwidth ÷ peak (1 = the roofline's ideal)",
    },
}


def hardware(default: str = "h100-sxm") -> Select:
    """The GPU (state key "hardware"): a menu of every GPU preset by its name, starting at the preset key
    `default`. presets.hardware(s["hardware"]) is the GPU at its datasheet figures; gpu(s) the GPU as the engine
    gets it."""
    keys = tuple(presets.hardware_keys())
    return Select("hardware", default, keys, names={k: presets.hardware(k).name for k in keys})


def model(default: str = "qwen3.8-27b", custom: bool = False) -> Select:
    """The model (state key "model"): a menu of every model preset by its name, starting at the preset key
    `default`; with `custom`, a last option, CUSTOM, for a model whose fields the student sets (the widget then
    reads its own controls instead of presets.model(s["model"]))."""
    keys = tuple(presets.model_keys())
    return Select("model", default, keys + ((CUSTOM,) if custom else ()),
                  names={k: presets.model(k).name for k in keys})


def state_dtype(default: str = "fp32") -> Select:
    """The recurrent state's dtype (state key "state_dtype"), FP32 or BF16 buttons starting at `default`: what a
    hybrid model's state costs per request. Pair it with no_state_note() for the models that keep none."""
    return Select("state_dtype", default, ("fp32", "bf16"), names={"fp32": "FP32", "bf16": "BF16"})


def no_state_note() -> Flag:
    """The layout's note beside state_dtype() for a model without a recurrent state: shown while the view's flag
    "no_state" is on (set it to no_state(m)), and marking state_dtype inert meanwhile."""
    return Flag("no_state", tone="note", controls=("state_dtype",))


def no_state(m: presets.Model) -> bool:
    """Whether the model `m` keeps no recurrent state, so that its dtype changes nothing: the value of the view's
    flag "no_state"."""
    return cache.state_bytes_per_request(m, "fp32") == 0


def memory_fraction() -> Range:
    """The share of GPU memory the engine may use (state key "memory_fraction", 0.5 to 1 in steps of 0.01): 1.0 is
    all the device reports (the lessons' default); vLLM's gpu_memory_utilization defaults to
    presets.VLLM_MEMORY_FRACTION (vllm/config/cache.py). gpu(s) applies it."""
    return Range("memory_fraction", default=1.0, min=0.5, max=1.0, step=0.01)


def compute_efficiency() -> Range:
    """Achieved compute over peak (state key "compute_efficiency", 0.1 to 1): 1.0 is the roofline's ideal. gpu(s)
    applies it."""
    return Range("compute_efficiency", default=1.0, min=0.1, max=1.0, step=0.01)


def bandwidth_efficiency() -> Range:
    """Achieved bandwidth over peak (state key "bandwidth_efficiency", 0.1 to 1): 1.0 is the roofline's ideal.
    gpu(s) applies it."""
    return Range("bandwidth_efficiency", default=1.0, min=0.1, max=1.0, step=0.01)


def gpu(s: dict) -> presets.Hardware:
    """The chosen GPU of the state `s` as the engine gets it: its datasheet figures scaled by the state's
    efficiencies and memory share, where the widget has those controls (1.0 where it has not)."""
    return presets.achieved(presets.hardware(s["hardware"]), compute_efficiency=s.get("compute_efficiency", 1.0),
                            bandwidth_efficiency=s.get("bandwidth_efficiency", 1.0),
                            memory_fraction=s.get("memory_fraction", 1.0))
