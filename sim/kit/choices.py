"""Controls that several widgets share, so that every lesson offers the same choices in the same words."""

from __future__ import annotations

from sim import presets
from sim.kit.controls import Select

CUSTOM = "custom"  # the model option of widgets whose model fields can be edited by hand

TEXT = {
    "zh": {
        "hardware": "GPU",
        "model": "模型",
        "model=custom": "自定义",
        "state_dtype": "递归状态精度",
    },
    "en": {
        "hardware": "GPU",
        "model": "Model",
        "model=custom": "Custom",
        "state_dtype": "Recurrent state dtype",
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
