"""Batching: what one decode step gives B requests at once, and where memory and compute stop it.

Every request in a batch waits for the same step, so with a step of t seconds:
- total throughput = B / t tokens per second (one token per request per step),
- each request's own speed = 1 / t tokens per second.
The weights are read once per step whatever B is, while KV and state traffic grow with B; so total
throughput rises with B and each request slows down. Step times are roofline.decode's lower bounds;
capacity is memory.max_batch (the whole checkpoint resident). Where the weight matmuls turn
compute-bound is roofline.critical_batch.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.physics import memory, roofline
from sim.physics.presets import Hardware, Model


@dataclass(frozen=True)
class BatchPoint:
    """One decode step of `batch` requests with `context` cached tokens each."""

    batch: int
    step: roofline.Estimate
    fits: bool  # the checkpoint and every request's KV and state fit in the GPU's memory

    @property
    def step_s(self) -> float:
        return self.step.time_s

    @property
    def total_tokens_per_s(self) -> float:
        return self.batch / self.step.time_s

    @property
    def per_request_tokens_per_s(self) -> float:
        return 1 / self.step.time_s

    @property
    def weights_share(self) -> float:
        """Fraction of the step's bytes that are weights (the part shared by the whole batch)."""
        return self.step.bytes_by_kind["weights"] / self.step.bytes


def batch_point(m: Model, hw: Hardware, batch: int, context: int, state_dtype: str = "fp32") -> BatchPoint:
    """Throughput, step time and fit of one batch size."""
    return sweep_batches(m, hw, (batch,), context, state_dtype)[0]


def sweep_batches(m: Model, hw: Hardware, batches, context: int, state_dtype: str = "fp32") -> tuple[BatchPoint, ...]:
    """batch_point for each batch size in `batches`, in the given order."""
    limit = memory.max_batch(m, hw, context=context, state_dtype=state_dtype)
    points = []
    for b in batches:
        step = roofline.decode(m, hw, batch=b, context=context, state_dtype=state_dtype)
        points.append(BatchPoint(batch=step.tokens, step=step, fits=step.tokens <= limit))
    return tuple(points)
