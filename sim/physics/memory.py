"""Memory capacity: how many requests fit beside the resident checkpoint."""

from __future__ import annotations

import math

from sim.physics import cache, model_size
from sim.physics.presets import Hardware, Model
from sim.physics.roofline import MAX_BATCH, MAX_CONTEXT
from sim.physics.validate import check_int


def bytes_per_request(m: Model, context: int, state_dtype: str = "fp32") -> int:
    """Memory one request holds: KV of its `context` cached tokens plus its recurrent state."""
    return cache.request_bytes(m, check_int("context", context, 0, MAX_CONTEXT), state_dtype)


def resident_bytes(m: Model, batch: int, context: int, state_dtype: str = "fp32") -> int:
    """Memory in use while serving `batch` requests: the whole checkpoint plus each request's cache."""
    b = check_int("batch", batch, 0, MAX_BATCH)
    return model_size.resident_weight_bytes(m) + b * bytes_per_request(m, context, state_dtype)


def max_batch(m: Model, hw: Hardware, context: int, state_dtype: str = "fp32") -> int:
    """Requests with `context` cached tokens that fit in hw memory beside the whole checkpoint (0 if none)."""
    free = hw.memory_bytes - model_size.resident_weight_bytes(m)
    if free <= 0:
        return 0
    per_request = bytes_per_request(m, context, state_dtype)
    if per_request == 0:
        return MAX_BATCH
    return int(free // per_request)


def gpus_for_weights(weights_bytes: float, hw: Hardware) -> int:
    """How many of these GPUs it takes just to hold `weights_bytes` of weights, split evenly (tensor parallel),
    before any KV cache: 1 when they fit on one."""
    if not weights_bytes > 0:
        raise ValueError(f"weights_bytes must be positive, got {weights_bytes!r}")
    return max(1, math.ceil(weights_bytes / hw.memory_bytes))
