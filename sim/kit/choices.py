"""Controls that several widgets share, so that every lesson offers the same choices in the same words:
the GPU, the model, the recurrent state's dtype, and how much of the GPU a real engine gets."""

from __future__ import annotations

from sim import cache, presets
from sim.kit.controls import Range, Select
from sim.kit.layout import Flag

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
    keys = tuple(presets.hardware_keys())
    return Select("hardware", default, keys, names={k: presets.hardware(k).name for k in keys})


def model(default: str = "qwen3.8-27b", custom: bool = False) -> Select:
    """The model presets; with `custom`, a last option for a model whose fields the student sets."""
    keys = tuple(presets.model_keys())
    return Select("model", default, keys + ((CUSTOM,) if custom else ()),
                  names={k: presets.model(k).name for k in keys})


def state_dtype(default: str = "fp32") -> Select:
    return Select("state_dtype", default, ("fp32", "bf16"), names={"fp32": "FP32", "bf16": "BF16"})


def no_state_note() -> Flag:
    """The note beside state_dtype() for a model without a recurrent state (flag no_state(m)), which it makes inert."""
    return Flag("no_state", tone="note", controls=("state_dtype",))


def no_state(m: presets.Model) -> bool:
    """Whether the model keeps no recurrent state, so that its dtype changes nothing."""
    return cache.state_bytes_per_request(m, "fp32") == 0


def memory_fraction() -> Range:
    """The share of GPU memory the engine may use: 1.0 is all the device reports (the lessons' default); vLLM's
    gpu_memory_utilization defaults to presets.VLLM_MEMORY_FRACTION (vllm/config/cache.py)."""
    return Range("memory_fraction", default=1.0, min=0.5, max=1.0, step=0.01)


def compute_efficiency() -> Range:
    """Achieved compute over peak: 1.0 is the roofline's ideal."""
    return Range("compute_efficiency", default=1.0, min=0.1, max=1.0, step=0.01)


def bandwidth_efficiency() -> Range:
    """Achieved bandwidth over peak: 1.0 is the roofline's ideal."""
    return Range("bandwidth_efficiency", default=1.0, min=0.1, max=1.0, step=0.01)


def gpu(s: dict) -> presets.Hardware:
    """The chosen GPU as the engine gets it: the state's efficiencies and memory share, where it has them."""
    return presets.achieved(presets.hardware(s["hardware"]), compute_efficiency=s.get("compute_efficiency", 1.0),
                            bandwidth_efficiency=s.get("bandwidth_efficiency", 1.0),
                            memory_fraction=s.get("memory_fraction", 1.0))
