"""A served request summed step by step, the decode ceiling and the KV cache, checked against hand arithmetic."""

import pytest

from sim.physics import cache, memory, model_size, presets, roofline
from sim.serving import serving

ANCHOR = presets.model("qwen3.8-27b")
LLAMA = presets.model("llama-2-7b")
QWEN32 = presets.model("qwen3-32b")
H100 = presets.hardware("h100-sxm")
A100 = presets.hardware("a100-sxm-80gb")


def toy_gpu(peak_flops_per_s: float, bandwidth_bytes_per_s: float) -> presets.Hardware:
    return presets.Hardware("toy", "toy", "toy", peak_flops_per_s, bandwidth_bytes_per_s, 80e9, "test")


def step_by_step(m, hw, prompt: int, answer: int) -> list[roofline.Estimate]:
    return [roofline.decode(m, hw, batch=1, context=prompt + i) for i in range(answer)]


def test_answer_of_500_tokens_sums_by_hand():
    run = serving.decode_run(ANCHOR, H100, prompt_tokens=10, output_tokens=500)
    # FLOPs: 500 x 2N, plus 16 full layers x 24 heads x 256 x 4 FLOPs per cached token over contexts 10..509.
    attention_per_token = 16 * 24 * 256 * 4
    assert run.flops == 500 * 2 * 25_623_939_584 + attention_per_token * sum(range(10, 510))
    # Bytes: 500 reads of the weights, KV rows 11..510 (cached + the new one), state read and written.
    kv_row = 16 * 2 * 4 * 256 * 2
    state = 48 * 48 * 128 * 128 * 4
    assert run.bytes == 500 * 25_623_939_584 * 2 + kv_row * sum(range(11, 511)) + 500 * 2 * state
    assert run.compute_bound_time_s == 0 and run.bound == "memory"
    assert run.time_s == pytest.approx(run.bytes / 3.35e12, rel=1e-15)
    assert run.time_per_token_s * 1e3 == pytest.approx(15.3931, abs=1e-4)


def test_answer_equals_the_sum_of_its_single_steps():
    steps = step_by_step(ANCHOR, H100, 10, 500)
    run = serving.decode_run(ANCHOR, H100, prompt_tokens=10, output_tokens=500)
    assert run.time_s == pytest.approx(sum(e.time_s for e in steps), rel=1e-12)
    assert run.flops == sum(e.flops for e in steps)
    assert run.bytes == sum(e.bytes for e in steps)


def test_run_that_turns_compute_bound_midway_is_split_exactly():
    # Ridge 7.99 FLOP/B: Qwen3-32B's attention does 8 L FLOP per (L + 1) KV rows' worth of bytes (its GQA
    # group is 8), so its intensity 8 L / (L + 1) climbs past the ridge once L > 799; the matmuls stay at 1.
    gpu = toy_gpu(7.99e12, 1e12)
    steps = step_by_step(QWEN32, gpu, 0, 2_000)
    run = serving.decode_run(QWEN32, gpu, prompt_tokens=0, output_tokens=2_000)
    compute_steps = sum(e.op("attention").bound == "compute" for e in steps)
    assert compute_steps == 2_000 - 800  # contexts 800..1999
    assert all(e.op("matmuls").bound == "memory" for e in steps)
    assert run.compute_bound_time_s == pytest.approx(sum(e.compute_bound_time_s for e in steps), rel=1e-12)
    assert run.time_s == pytest.approx(sum(e.time_s for e in steps), rel=1e-12)


def test_run_that_is_compute_bound_throughout():
    gpu = toy_gpu(1e12, 10e12)  # ridge 0.1 FLOP/B: every step is compute-bound
    steps = step_by_step(LLAMA, gpu, 0, 37)
    run = serving.decode_run(LLAMA, gpu, prompt_tokens=0, output_tokens=37)
    assert run.compute_bound_time_s == pytest.approx(run.time_s) and run.bound == "compute"
    assert run.time_s == pytest.approx(sum(e.time_s for e in steps), rel=1e-12)
    assert run.time_s == pytest.approx(sum(e.time_s for e in steps), rel=1e-12)


def test_one_token_answer_is_one_step():
    run = serving.decode_run(LLAMA, A100, prompt_tokens=7, output_tokens=1)
    assert run.time_s == roofline.decode(LLAMA, A100, batch=1, context=7).time_s


@pytest.mark.parametrize("prompt, answer", [(10, 0), (-1, 5), (10, 1.5), (10, "500")])
def test_bad_request_is_a_value_error(prompt, answer):
    with pytest.raises(ValueError):
        serving.decode_run(LLAMA, A100, prompt_tokens=prompt, output_tokens=answer)


def test_decode_ceiling_of_7b_on_a100():
    weights = serving.weight_bytes(6_607_077_376, "bf16")
    assert weights == 13_214_154_752
    assert serving.decode_ceiling_tokens_per_s(A100, weights) == pytest.approx(2_039e9 / 13_214_154_752)
    assert serving.decode_ceiling_tokens_per_s(A100, weights) == pytest.approx(154.30, abs=0.01)
    # The reference's round numbers: 7 B x 2 bytes = 14 GB at ~2 TB/s, about 143 tok/s.
    assert serving.decode_ceiling_tokens_per_s(A100, serving.weight_bytes(7 * 10**9, "bf16")) == pytest.approx(
        145.64, abs=0.01)


def test_weights_only_decode_intensity_is_one_flop_per_byte_in_bf16():
    assert serving.weights_only_decode_intensity("bf16") == 1
    assert serving.weights_only_decode_intensity("fp8") == 2
    assert serving.weights_only_decode_intensity("int4") == 4
    # The full simulator agrees at batch 1 with a tiny context: Llama-2-7B has no recurrent state.
    assert roofline.decode(LLAMA, A100, batch=1, context=1).intensity == pytest.approx(1, abs=0.001)


def test_gap_to_the_a100_ridge_is_about_153_not_78():
    assert roofline.ridge_point(A100) == pytest.approx(312 / 2.039)
    assert round(roofline.ridge_point(A100), 1) == 153.0
    assert roofline.ridge_point(A100) / serving.weights_only_decode_intensity("bf16") == pytest.approx(153.0, abs=0.05)


def test_h100_buys_3_17x_compute_but_only_1_64x_decode():
    assert serving.compute_ratio(H100, A100) == pytest.approx(989.5 / 312)
    assert round(serving.compute_ratio(H100, A100), 2) == 3.17
    assert round(serving.bandwidth_ratio(H100, A100), 2) == 1.64
    weights = model_size.matmul_weight_bytes(LLAMA)
    speedup = serving.decode_ceiling_tokens_per_s(H100, weights) / serving.decode_ceiling_tokens_per_s(A100, weights)
    assert speedup == pytest.approx(3.35 / 2.039)


@pytest.mark.parametrize("dtype, expected", [("bf16", 14e9), ("fp8", 7e9), ("int4", 3.5e9)])
def test_weight_bytes_by_format(dtype, expected):
    assert serving.weight_bytes(7 * 10**9, dtype) == expected


def test_llama_2_7b_kv_per_token_and_batch_of_32():
    per_token = serving.kv_bytes_per_token(32, 32, 128, "bf16")
    assert per_token == 2 * 32 * 32 * 128 * 2 == 524_288
    assert per_token * 2_048 * 32 == 34_359_738_368  # the reference's "about 34 GB"
    assert serving.kv_bytes_per_token(32, 32, 128, "fp8") == 262_144


@pytest.mark.parametrize("key", presets.model_keys())
def test_kv_per_token_matches_the_cache_module_in_bf16(key):
    m = presets.model(key)
    a = m.attention
    assert serving.kv_bytes_per_token(m.full_attention_layers, a.kv_heads, a.head_dim, "bf16") == \
        cache.kv_bytes_per_token(m)


def test_fitting_batch_matches_the_memory_module():
    per_request = memory.bytes_per_request(ANCHOR, 4096)
    # On the 85,520,809,984 B an H100 reports: (85,520,809,984 - 55,562,855,904) // 419,430,400 = 71,
    # as memory.max_batch says; on the datasheet's 80e9 B, the reference's 58.
    fits = serving.fitting_batch(H100.memory_bytes, model_size.resident_weight_bytes(ANCHOR), per_request)
    assert fits == memory.max_batch(ANCHOR, H100, context=4096) == 71
    assert serving.fitting_batch(H100.datasheet_memory_bytes, model_size.resident_weight_bytes(ANCHOR),
                                 per_request) == 58
    # Llama-2-7B, 2,048 tokens, A100: on the datasheet's 80 GB, (80e9 - 13,476,831,232) // 1,073,741,824 = 61;
    # on the 85,899,345,920 B the device reports, 72,422,514,688 // 1,073,741,824 = 67.
    assert serving.fitting_batch(80e9, 13_476_831_232, 2_048 * 524_288) == 61
    assert serving.fitting_batch(A100.memory_bytes, 13_476_831_232, 2_048 * 524_288) == 67


def test_fitting_batch_is_zero_when_the_weights_alone_overflow():
    assert serving.fitting_batch(80e9, 81e9, 1) == 0
    with pytest.raises(ValueError):
        serving.fitting_batch(80e9, 1e9, 0)


@pytest.mark.parametrize("call", [
    lambda: serving.weight_bytes(1, "fp4"),
    lambda: serving.weights_only_decode_intensity("int8"),
    lambda: serving.kv_bytes_per_token(1, 1, 1, "int4"),
])
def test_unknown_format_is_a_value_error(call):
    with pytest.raises(ValueError, match="must be one of"):
        call()
