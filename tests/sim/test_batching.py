"""Batching figures for the anchor model, worked out by hand from the config numbers."""

import dataclasses
import math

import pytest

from sim.physics import presets, roofline
from sim.serving import batching

ANCHOR = presets.model("qwen3.8-27b")
LLAMA = presets.model("llama-2-7b")
H100 = presets.hardware("h100-sxm")  # 80 GB as the device reports it: 81,559 MiB = 85,520,809,984 B
H100_DATASHEET = dataclasses.replace(H100, memory_bytes=H100.datasheet_memory_bytes)  # the reference's 80 x 10^9 B
A100 = presets.hardware("a100-sxm-80gb")

# Anchor config: 25,623,939,584 matmul parameters in BF16 (the reference's count, see sim/params.py).
WEIGHT_BYTES = 25_623_939_584 * 2
KV_BYTES_PER_TOKEN = 16 * 2 * 4 * 256 * 2  # full-attention layers x (K, V) x KV heads x head_dim x BF16
STATE_BYTES = 48 * 48 * 128 * 128 * 4  # GDN layers x value heads x key_dim x value_dim x FP32
H100_BYTES_PER_S = 3.35e12
RESIDENT_BYTES = 55_562_855_904  # the whole checkpoint (the matmul weights plus embedding and norms)


def anchor_step_s(batch: int, context: int) -> float:
    """Memory-bound step: weights once, per request L KV rows read + 1 written + state read and written."""
    per_request = (context + 1) * KV_BYTES_PER_TOKEN + 2 * STATE_BYTES
    return (WEIGHT_BYTES + batch * per_request) / H100_BYTES_PER_S


def test_one_request_at_4096_tokens():
    p = batching.batch_point(ANCHOR, H100, batch=1, context=4096)
    # (51,247,879,168 + 570,490,880) B / 3.35 TB/s = 15.468 ms
    assert p.step_s == pytest.approx(anchor_step_s(1, 4096), rel=1e-12)
    assert p.step_s * 1e3 == pytest.approx(15.468, abs=0.0005)
    assert p.total_tokens_per_s == pytest.approx(64.65, abs=0.005)
    assert p.per_request_tokens_per_s == p.total_tokens_per_s
    assert p.fits and p.step.bound == "memory"


def test_58_requests_at_4096_tokens_give_about_2304_tokens_per_s():
    # The reference's batch: 58 is what fits on the datasheet's 80 x 10^9 B,
    # (80e9 - 55,562,855,904) // (4,096 x 65,536 + 150,994,944) = 24,437,144,096 // 419,430,400 = 58.
    assert (80e9 - RESIDENT_BYTES) // (4096 * KV_BYTES_PER_TOKEN + STATE_BYTES) == 58
    p = batching.batch_point(ANCHOR, H100, batch=58, context=4096)
    assert p.total_tokens_per_s == pytest.approx(58 / anchor_step_s(58, 4096), rel=1e-12)
    assert p.total_tokens_per_s == pytest.approx(2_303.87, abs=0.01)
    assert p.per_request_tokens_per_s == pytest.approx(39.72, abs=0.005)
    assert p.fits
    assert batching.batch_point(ANCHOR, H100_DATASHEET, batch=58, context=4096).fits
    assert not batching.batch_point(ANCHOR, H100_DATASHEET, batch=59, context=4096).fits


def test_71_requests_at_4096_tokens_fill_the_h100_and_give_about_2592_tokens_per_s():
    # On the 85,520,809,984 B the device reports: 29,957,954,080 // 419,430,400 = 71 fit, 72 do not.
    assert (H100.memory_bytes - RESIDENT_BYTES) // (4096 * KV_BYTES_PER_TOKEN + STATE_BYTES) == 71
    p = batching.batch_point(ANCHOR, H100, batch=71, context=4096)
    # (51,247,879,168 + 71 x 570,490,880) B / 3.35 TB/s = 27.389 ms a step; 71 / 27.389 ms = 2,592.29 tok/s
    assert p.total_tokens_per_s == pytest.approx(71 / anchor_step_s(71, 4096), rel=1e-12)
    assert p.total_tokens_per_s == pytest.approx(2_592.29, abs=0.01)
    assert p.per_request_tokens_per_s == pytest.approx(36.51, abs=0.005)
    assert p.fits
    assert not batching.batch_point(ANCHOR, H100, batch=72, context=4096).fits


def test_weights_share_of_the_step_bytes():
    p = batching.batch_point(ANCHOR, H100, batch=32, context=4096)
    per_request = 4097 * KV_BYTES_PER_TOKEN + 2 * STATE_BYTES  # 570,490,880
    assert p.weights_share == pytest.approx(WEIGHT_BYTES / (WEIGHT_BYTES + 32 * per_request), rel=1e-12)
    assert p.weights_share == pytest.approx(0.7373, abs=0.0001)


def test_sweep_keeps_order_and_marks_what_fits():
    # 71 requests of 4,096 tokens fit on the H100 as the device reports it, 72 do not.
    points = batching.sweep_batches(ANCHOR, H100, (256, 1, 71, 72), context=4096)
    assert [p.batch for p in points] == [256, 1, 71, 72]
    assert [p.fits for p in points] == [False, True, True, False]


def test_more_requests_raise_total_and_lower_each_requests_speed():
    points = batching.sweep_batches(ANCHOR, H100, range(1, 257), context=4096)
    totals = [p.total_tokens_per_s for p in points]
    each = [p.per_request_tokens_per_s for p in points]
    assert totals == sorted(totals) and len(set(totals)) == 256
    assert each == sorted(each, reverse=True)


def test_llama_weight_matmuls_on_a100_turn_compute_bound_at_154_requests():
    # Llama-2-7B: 32 layers of SwiGLU (3 x 4096 x 11008) and attention (4 x 4096^2), plus the LM head.
    n = 32 * (3 * 4096 * 11008 + 4 * 4096**2) + 32_000 * 4096
    flops, weights = 2 * n, 2 * n  # per request; BF16 weights
    # B * flops / peak > weights / bandwidth: B > ridge = 312 / 2.039 = 153.02
    assert math.floor((weights / 2.039e12) / (flops / 312e12)) + 1 == 154
    assert roofline.critical_batch(LLAMA, A100) == 154
    assert batching.batch_point(LLAMA, A100, batch=153, context=0).step.op("matmuls").bound == "memory"
    at = batching.batch_point(LLAMA, A100, batch=154, context=0).step
    assert at.op("matmuls").bound == "compute" and at.op("attention").bound == "memory"
    assert at.bound == "compute"  # at context 0 the matmuls are nearly all of the step


def test_anchor_at_4096_tokens_turns_mixed_but_mostly_memory_bound():
    # The weight matmuls turn compute-bound past the ridge (295.4 on H100); each request's attention and
    # state add 570,490,880 B / 3.35 TB/s = 170 us of memory time, so they stay memory-bound at any B.
    assert roofline.critical_batch(ANCHOR, H100) == 296
    f = 2 * 25_623_939_584 + 16 * 24 * 256 * 4 * 4096
    assert f / 989.5e12 < (4097 * KV_BYTES_PER_TOKEN + 2 * STATE_BYTES) / H100_BYTES_PER_S
    step = batching.batch_point(ANCHOR, H100, batch=512, context=4096).step
    assert [op.bound for op in step.ops] == ["compute", "memory", "memory"] and step.mixed
    assert step.bound == "memory"  # the memory-bound operations take most of the step


def test_bad_arguments_name_the_parameter():
    with pytest.raises(ValueError, match="^batch must"):
        batching.batch_point(ANCHOR, H100, batch=0, context=4096)
    with pytest.raises(ValueError, match="^context must"):
        batching.batch_point(ANCHOR, H100, batch=1, context=-1)
