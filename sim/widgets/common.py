"""Controls that several widgets share, so that every lesson offers the same choices the same way."""

from __future__ import annotations

from sim import presets
from sim.widgets.controls import Select


def hardware_select(default: str = "h100-sxm") -> Select:
    return Select("hardware", {"zh": "GPU", "en": "GPU"}, default=default,
                  options=tuple((k, {"zh": presets.hardware(k).name, "en": presets.hardware(k).name})
                                for k in presets.hardware_keys()))


def model_select(default: str = "qwen3.8-27b") -> Select:
    return Select("model", {"zh": "模型", "en": "Model"}, default=default,
                  options=tuple((k, {"zh": presets.model(k).name, "en": presets.model(k).name})
                                for k in presets.model_keys()))


def state_dtype_select(default: str = "fp32") -> Select:
    return Select("state_dtype", {"zh": "递归状态精度", "en": "Recurrent state dtype"}, default=default,
                  options=(("fp32", {"zh": "FP32", "en": "FP32"}), ("bf16", {"zh": "BF16", "en": "BF16"})))
