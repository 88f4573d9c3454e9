"""The reference lessons' figures, reproduced under the conventions in the simulator's docstrings."""

import math

import pytest

from sim.physics import cache, model_size, presets, roofline

ANCHOR = presets.model("qwen3.8-27b")
H100 = presets.hardware("h100-sxm")
A100 = presets.hardware("a100-sxm-80gb")
H200 = presets.hardware("h200-sxm")


def test_ridge_point_h100():
    assert roofline.ridge_point(H100) == pytest.approx(295.37, abs=0.01)


def test_compute_only_estimate_and_weights_only_decode():
    flops_per_token = 2 * model_size.matmul_params(ANCHOR)
    assert H100.peak_flops_per_s / flops_per_token == pytest.approx(19_308, abs=1)
    weights = model_size.matmul_weight_bytes(ANCHOR)
    assert H100.bandwidth_bytes_per_s / weights == pytest.approx(65.37, abs=0.01)
    assert weights / A100.bandwidth_bytes_per_s * 1e3 == pytest.approx(25.13, abs=0.01)
    assert weights / H100.bandwidth_bytes_per_s * 1e3 == pytest.approx(15.30, abs=0.01)


def test_running_example_prefill_and_decode():
    assert roofline.prefill(ANCHOR, H100, tokens=4).time_s * 1e3 == pytest.approx(15.34, abs=0.005)
    step = roofline.decode(ANCHOR, H100, batch=1, context=4)
    assert step.time_s * 1e3 == pytest.approx(15.388, abs=0.0005)
    assert step.bound == "memory"


def test_long_prompt_prefill_is_compute_bound():
    # The LM head only at the last position, as engines do: 101.69 ms (charging it at all 2,048 gave 106.95 ms).
    e = roofline.prefill(ANCHOR, H100, tokens=2048)
    assert e.time_s * 1e3 == pytest.approx(101.69, abs=0.005)
    assert e.bound == "compute"
    assert e.time_s / 2048 * 1e3 == pytest.approx(0.0497, abs=0.00005)
    assert roofline.prefill(ANCHOR, H100, tokens=2048, sampled=2048).time_s * 1e3 == pytest.approx(106.95, abs=0.005)
    with pytest.raises(ValueError, match="sampled"):
        roofline.prefill(ANCHOR, H100, tokens=4, sampled=5)


def test_decode_bytes_per_request_at_4096_context():
    one = roofline.decode(ANCHOR, H100, batch=1, context=4096)
    two = roofline.decode(ANCHOR, H100, batch=2, context=4096)
    assert two.bytes - one.bytes == 570_490_880  # 4,096 KV rows read + 1 written + state read and written


def test_decode_intensity_saturates_near_93():
    big = roofline.decode(ANCHOR, H100, batch=roofline.MAX_BATCH, context=4096)
    assert big.intensity == pytest.approx(92.65, abs=0.05)
    assert roofline.decode(ANCHOR, H100, batch=64, context=4096).intensity < big.intensity


def test_batch_58_throughput_counts_kv_and_state():
    e = roofline.decode(ANCHOR, H100, batch=58, context=4096)
    assert e.tokens_per_s == pytest.approx(2_304, abs=1)
    weights_only = 58 * H100.bandwidth_bytes_per_s / e.bytes_by_kind["weights"]
    assert weights_only == pytest.approx(3_791, abs=1)


def test_state_traffic_equals_kv_reads_at_4608_tokens():
    state_traffic = 2 * cache.state_bytes_per_request(ANCHOR, "fp32")
    assert state_traffic / cache.kv_bytes_per_token(ANCHOR) == 4608
    assert 2 * cache.state_bytes_per_request(ANCHOR, "bf16") / cache.kv_bytes_per_token(ANCHOR) == 2304
    assert cache.state_bytes_per_request(ANCHOR, "fp32") == 144 * 2**20


def test_decode_attention_intensity_is_gqa_group_size():
    assert roofline.decode_attention_intensity(ANCHOR) == 6
    assert roofline.decode_attention_intensity(presets.model("qwen3-32b")) == 8
    assert roofline.decode_attention_intensity(presets.model("llama-2-7b")) == 1


def test_kv_bytes_per_token():
    assert cache.kv_bytes_per_token(ANCHOR) == 65_536
    assert cache.kv_bytes_per_token(presets.model("qwen3-32b")) == 262_144
    llama = presets.model("llama-2-7b")
    assert cache.kv_bytes_per_token(llama) * 2048 * 32 / 1e9 == pytest.approx(34.36, abs=0.01)
    assert cache.state_bytes_per_request(llama) == 0


def test_gpu_swaps_scale_by_compute_or_bandwidth():
    naive = lambda hw: 2 * model_size.matmul_params(ANCHOR) / hw.peak_flops_per_s  # noqa: E731
    assert naive(A100) / naive(H100) == pytest.approx(3.17, abs=0.01)
    weights = lambda hw: roofline.decode(ANCHOR, hw, batch=1, context=4).time_s  # noqa: E731
    assert weights(A100) / weights(H100) == pytest.approx(1.64, abs=0.01)
    assert weights(H100) / weights(H200) == pytest.approx(4.8 / 3.35, rel=1e-9)


def test_estimate_fields_are_consistent():
    e = roofline.decode(ANCHOR, H100, batch=8, context=1000, state_dtype="bf16")
    assert e.bytes == sum(e.bytes_by_kind.values())
    assert set(e.bytes_by_kind) == {"weights", "kv", "state"}
    assert e.time_s == max(e.compute_time_s, e.memory_time_s)
    assert e.intensity == e.flops / e.bytes
    assert e.tokens_per_s == 8 / e.time_s


@pytest.mark.parametrize("kwargs, name", [
    ({"tokens": 0}, "tokens"), ({"tokens": 1.5}, "tokens"), ({"tokens": math.nan}, "tokens"),
    ({"tokens": "4"}, "tokens"), ({"tokens": True}, "tokens"),
])
def test_prefill_rejects_bad_tokens(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} must be a whole number from 1 to"):
        roofline.prefill(ANCHOR, H100, **kwargs)


@pytest.mark.parametrize("kwargs, name", [
    ({"batch": 0, "context": 4}, "batch"), ({"batch": 1, "context": -1}, "context"),
    ({"batch": math.inf, "context": 4}, "batch"), ({"batch": 2, "context": 4, "state_dtype": "fp8"}, "state_dtype"),
])
def test_decode_rejects_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        roofline.decode(ANCHOR, H100, **kwargs)


def test_whole_floats_are_accepted():
    assert roofline.prefill(ANCHOR, H100, tokens=4.0).time_s == roofline.prefill(ANCHOR, H100, tokens=4).time_s
