"""The capacity flag of every widget that takes a model and a GPU: raised when the weights alone do not fit
in the memory the engine may use, with how many such GPUs it would take (ARCHITECTURE.md, "The widget module").

A widget adds `outputs(weights, hw)` to its view's outputs, `{"capacity": fits(...) is False}` to its flags,
and Flag("capacity") to its layout; the flag's words are below, shared by every widget.
"""

from __future__ import annotations

from sim.kit.view import output
from sim.page.display import fmt_bytes
from sim.physics import memory
from sim.physics.presets import Hardware

TEXT = {
    "zh": {
        "capacity": "放不下：权重 {weights_total} 超过了这张卡可用的 {usable_memory}，连一个请求都跑不了。"
                    "至少要 {gpus_needed} 张这样的卡，按张量并行把权重平分（还没算 KV cache）。",
    },
    "en": {
        "capacity": "It does not fit: {weights_total} of weights exceed the {usable_memory} this GPU can use, so not "
                    "even one request runs. It takes at least {gpus_needed} such GPUs, the weights split evenly "
                    "by tensor parallelism (before any KV cache).",
    },
}


def fits(weights_bytes: float, hw: Hardware) -> bool:
    """Whether `weights_bytes` of weights alone fit in the usable memory of the GPU `hw` (choices.gpu(s)): the
    flag "capacity" is its negation."""
    return weights_bytes <= hw.memory_bytes


def outputs(weights_bytes: float, hw: Hardware) -> dict:
    """The outputs the capacity flag's words show, for `weights_bytes` of weights on the GPU `hw`: the GPUs needed,
    the weights, the usable memory."""
    gpus = memory.gpus_for_weights(weights_bytes, hw)
    return {
        "gpus_needed": output(gpus, f"{gpus}"),
        "weights_total": output(weights_bytes / 1e9, fmt_bytes(weights_bytes)),
        "usable_memory": output(hw.memory_bytes / 1e9, fmt_bytes(hw.memory_bytes)),
    }
