"""sim/techniques/quantization.py: the FP8 grids are the formats', rounding errors match their closed forms, finer scales and
AWQ's search cut the error, and decode's step times are the per-operation roofline with the formats' bytes and peaks:
BF16 is roofline.decode exactly, W4A16 gains nothing past the ridge, and GPTQ's OPT-175B memory arithmetic holds."""

from __future__ import annotations

import math
import random

import pytest

from sim import widgets
from sim.physics import memory, model_size, presets, roofline
from sim.techniques import quantization as q

ANCHOR, H100, A100 = presets.model("qwen3.8-27b"), presets.hardware("h100-sxm"), presets.hardware("a100-sxm-80gb")
MODELS = [presets.model(k) for k in presets.model_keys()]
GPUS = [presets.hardware(k) for k in presets.hardware_keys()]
GIB = 2**30


# -- the formats ---------------------------------------------------------------------------------------------------

def test_e4m3_is_ocp_e4m3fn_and_e5m2_keeps_ieee_specials():
    e4m3, e5m2 = q.float_values("fp8-e4m3"), q.float_values("fp8-e5m2")
    # E4M3FN: bit patterns 0x00..0x7E are finite (0x7F is its one NaN); E5M2: exponent 31 is inf/NaN
    assert len(e4m3) == 127 and e4m3[-1] == 448 and e4m3[1] == 2**-9
    assert len(e5m2) == 124 and e5m2[-1] == 57344 and e5m2[1] == 2**-16
    assert list(e4m3) == sorted(e4m3) and len(set(e4m3)) == 127


@pytest.mark.parametrize("x, expected", [
    (1.0625, 1.0),  # halfway between 1 and 1.125: to the even mantissa, 1.0
    (1.1875, 1.25),  # halfway between 1.125 and 1.25: to 1.25
    (1.07, 1.125), (-1.07, -1.125),
    (1000.0, 448.0), (-1e9, -448.0),  # saturates
    (0.0, 0.0), (2**-10, 0.0),  # half the smallest subnormal rounds to even, 0
])
def test_e4m3_rounds_to_nearest_ties_to_even(x, expected):
    assert q.round_to_float(x, "fp8-e4m3") == expected


def test_uniform_grid_error_is_a_step_over_root_12():
    rng = random.Random(1)
    values = [rng.random() for _ in range(100_000)]
    for fmt, bits in (("int4", 4), ("int8", 8)):
        step = (max(values) - min(values)) / (2**bits - 1)
        err = [a - b for a, b in zip(q.quantize_group(values, fmt), values)]
        rms = math.sqrt(sum(e * e for e in err) / len(err))
        assert rms == pytest.approx(step / math.sqrt(12), rel=0.02)
        assert max(abs(e) for e in err) <= step / 2 * (1 + 1e-9)


def test_gptq_counts_the_group_overhead_in_bits():
    # GPTQ §5: group 128 is about 0.15 extra bits per weight, group 1024 about 0.02 (an FP16 scale and a 3-bit zero)
    assert round(q.scale_overhead_bits(3, 128), 2) == 0.15
    assert round(q.scale_overhead_bits(3, 1024), 2) == 0.02
    assert q.weight_bits("int4", 128) == 4 + 20 / 128
    assert q.tensor_bits_per_weight("int4", "group", 64) == 4 + 20 / 64
    assert q.tensor_bits_per_weight("fp8-e4m3", "channel", 128) == 8 + 16 / q.COLS
    assert q.tensor_bits_per_weight("int8", "tensor", 128) == 8 + 24 / (q.ROWS * q.COLS)


# -- the tensor ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["int4", "int8"])
def test_finer_scales_leave_less_error(fmt):
    tensor = q.quantize_tensor(fmt, "tensor")
    channel = q.quantize_tensor(fmt, "channel")
    groups = [q.quantize_tensor(fmt, "group", g) for g in (128, 64, 32)]
    errors = [r.rms_error for r in (tensor, channel, *groups)]
    assert errors == sorted(errors, reverse=True)
    bits = [r.bits_per_weight for r in (tensor, channel, *groups)]
    assert bits == sorted(bits)  # and each costs more bits


@pytest.mark.parametrize("granularity", q.GRANULARITIES)
def test_awq_scaling_protects_the_salient_channels(granularity):
    plain, awq = q.quantize_tensor("int4", granularity), q.quantize_tensor("int4", granularity, awq=True)
    assert awq.alpha > 0
    assert awq.output_error < 0.7 * plain.output_error
    assert awq.salient_rms_error < 0.5 * plain.salient_rms_error
    assert awq.bits_per_weight == plain.bits_per_weight  # the scales fold into the previous operation


def test_awq_never_does_worse_than_plain_rounding_on_the_output():
    for fmt in q.TENSOR_FORMATS:
        for g in q.GRANULARITIES:
            assert q.quantize_tensor(fmt, g, awq=True).output_error <= q.quantize_tensor(fmt, g).output_error


def test_per_tensor_int4_uses_at_most_sixteen_values():
    r = q.quantize_tensor("int4", "tensor")
    assert len({w for row in r.dequantized for w in row}) <= 16
    assert r.max_error <= (max(map(max, r.original)) - min(map(min, r.original))) / 15 / 2 * (1 + 1e-9)


# -- decode ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("m", MODELS, ids=lambda m: m.key)
@pytest.mark.parametrize("hw", GPUS, ids=lambda h: h.key)
def test_bf16_is_the_roofline_exactly(m, hw):
    for batch, context in ((1, 0), (1, 1024), (64, 4096), (512, 1024)):
        assert q.decode(m, hw, batch, context) == roofline.decode(m, hw, batch, context)
    assert q.ridge_batch(m, hw) == roofline.critical_batch(m, hw)
    assert q.max_requests(m, hw, 2048) == memory.max_batch(m, hw, 2048)
    assert q.resident_weight_bytes(m) == model_size.resident_weight_bytes(m)


@pytest.mark.parametrize("m", MODELS, ids=lambda m: m.key)
@pytest.mark.parametrize("hw", GPUS, ids=lambda h: h.key)
def test_w4a16_past_the_ridge_is_within_two_percent_of_bf16(m, hw):
    for batch in (q.ridge_batch(m, hw), 2 * q.ridge_batch(m, hw)):
        bf16, int4 = q.decode(m, hw, batch, 1024), q.decode(m, hw, batch, 1024, "int4")
        assert int4.time_s == pytest.approx(bf16.time_s, rel=0.02)


def test_w4a16_at_batch_1_reads_its_bytes():
    step = q.decode(ANCHOR, H100, 1, 1024, "int4")
    assert all(op.bound == "memory" for op in step.ops)
    head = model_size.lm_head_params(ANCHOR)
    layers = model_size.matmul_params(ANCHOR) - head
    assert step.op("matmuls").bytes == layers * (4 + 20 / 128) / 8 + 2 * head
    speedup = roofline.decode(ANCHOR, H100, 1, 1024).time_s / step.time_s
    assert 3.2 < speedup < 3.4  # not 4: the LM head, the scales, the KV and the state


def test_fp8_multiplies_at_the_fp8_peak_only_where_there_is_one():
    big = 1024
    h100_fp8, h100_int8 = q.decode(ANCHOR, H100, big, 1024, "fp8"), q.decode(ANCHOR, H100, big, 1024, "int8")
    assert H100.fp8_peak_flops_per_s == 2 * H100.peak_flops_per_s
    # issue #46: the decoder layers at the FP8 peak, the LM head (kept in BF16) at the BF16 peak
    head = roofline.matmul_flops(ANCHOR, 0, sampled=big)
    layers = roofline.matmul_flops(ANCHOR, big, sampled=0)
    matmuls = h100_fp8.op("matmuls")
    assert matmuls.compute_time_s == pytest.approx(layers / H100.fp8_peak_flops_per_s + head / H100.peak_flops_per_s,
                                                   rel=1e-12)
    assert H100.peak_flops_per_s < matmuls.peak_flops_per_s < H100.fp8_peak_flops_per_s
    assert matmuls.time_s < 0.6 * h100_int8.op("matmuls").time_s
    # the ridge the widget shows: 296 requests for the anchor on an H100 (311 with the head at the FP8 peak),
    # 207 on an H200 (was 217), 282 on a B200 (was 296)
    assert [q.ridge_batch(ANCHOR, presets.hardware(k), "fp8") for k in ("h100-sxm", "h200-sxm", "b200")] == [
        296, 207, 282]
    # the A100 has no FP8 tensor cores: FP8 weights are weight-only there, as INT8 is
    assert q.decode(ANCHOR, A100, big, 1024, "fp8") == q.decode(ANCHOR, A100, big, 1024, "int8")
    assert A100.fp8_peak_flops_per_s is None


def test_dequantisation_is_charged_only_to_weight_only_formats():
    layers = model_size.matmul_params(ANCHOR) - model_size.lm_head_params(ANCHOR)
    bf16 = q.decode(ANCHOR, H100, 8, 0).op("matmuls").flops
    assert q.decode(ANCHOR, H100, 8, 0, "int4").op("matmuls").flops == bf16 + q.DEQUANT_FLOPS_PER_WEIGHT * layers
    assert q.decode(ANCHOR, H100, 8, 0, "fp8").op("matmuls").flops == bf16


def test_kivi_keeps_the_newest_tokens_in_bf16_and_three_bits_for_the_rest():
    per_token = 65_536 // 2  # the anchor's KV elements per token: 65,536 bytes in BF16
    assert q.kv_elements_per_token(ANCHOR) == per_token
    assert q.kv_bytes(ANCHOR, "int2", 32) == q.kv_bytes(ANCHOR, "bf16", 32)
    assert q.kv_bytes(ANCHOR, "int2", 1032) == per_token * (32 * 2 + 1000 * 3 / 8)
    assert q.kv_bytes(ANCHOR, "fp8", 1000) == q.kv_bytes(ANCHOR, "bf16", 1000) / 2


def test_unfused_kv_dequantisation_is_no_faster_but_fits_more():
    llama = presets.model("llama-2-7b")
    bf16 = q.decode(llama, H100, 16, 8192)
    assert q.decode(llama, H100, 16, 8192, kv="fp8", kv_fused=False).time_s == bf16.time_s
    fused = q.decode(llama, H100, 16, 8192, kv="fp8")
    assert fused.op("attention").bytes == bf16.op("attention").bytes / 2
    assert fused.op("attention").bound == "memory" and fused.time_s < bf16.time_s
    assert q.max_requests(llama, H100, 8192, kv="fp8") == 2 * q.max_requests(llama, H100, 8192) + 1


@pytest.mark.parametrize("weights", q.WEIGHT_FORMATS)
@pytest.mark.parametrize("kv", q.KV_FORMATS)
def test_max_requests_fit_and_one_more_does_not(weights, kv):
    for m in MODELS:
        n = q.max_requests(m, H100, 4096, weights, 128, kv)
        used = q.resident_weight_bytes(m, weights) + n * q.bytes_per_request(m, 4096, kv)
        assert used <= H100.memory_bytes < used + q.bytes_per_request(m, 4096, kv)


def test_a_request_that_holds_nothing_is_not_bounded_by_memory():
    # issue #46: no context and no recurrent state used to divide by zero
    plain = next(m for m in MODELS if q.bytes_per_request(m, 0) == 0)
    assert q.max_requests(plain, H100, 0) == roofline.MAX_BATCH
    hybrid = next(m for m in MODELS if q.bytes_per_request(m, 0) > 0)  # its recurrent state still counts
    assert q.max_requests(hybrid, H100, 0) < roofline.MAX_BATCH


def test_fewer_bits_never_slow_a_memory_bound_step():
    for m in MODELS:
        times = [q.decode(m, H100, 1, 4096, w).time_s for w in ("bf16", "int8", "int4")]
        assert times == sorted(times, reverse=True)


# -- GPTQ's OPT-175B (Table 6 and §5) --------------------------------------------------------------------------------

def test_opt_175b_has_175_billion_parameters():
    assert q.opt_weight_bytes(16) / 2 == pytest.approx(175e9, rel=0.005)


def test_gptq_opt_175b_memory_arithmetic():
    # FP16 needs five 80 GB A100s; 3-bit weights (about 63 GB, the embeddings and output layer in FP16) plus 9 GB of
    # KV for 2,048 tokens fit on one; 4-bit would not
    assert memory.gpus_for_weights(q.opt_weight_bytes(16), A100) == 5
    assert q.opt_weight_bytes(3) / GIB == pytest.approx(63, rel=0.02)
    assert q.opt_kv_bytes(2048) == 9 * GIB
    assert q.opt_weight_bytes(3) + q.opt_kv_bytes(2048) < A100.memory_bytes
    assert q.opt_weight_bytes(4) > A100.memory_bytes


def test_gptq_table_3_small_models_lose_more():
    growth = {size: three / fp16 for size, (fp16, _, three) in q.GPTQ_OPT_PERPLEXITY.items()}
    assert growth["125M"] > 1.9 and growth["175B"] < 1.05
    assert all(fp16 <= four <= three for fp16, four, three in q.GPTQ_OPT_PERPLEXITY.values())


# -- the widgets ---------------------------------------------------------------------------------------------------

def test_the_roofline_widget_curve_meets_its_readout():
    view = widgets.render("quant-roofline", {"lang": "en", "batch": 64})
    curve = view["figures"]["curve"]["data"]
    int4 = next(trace for trace in curve if trace["name"] == "INT4")
    assert int4["y"][int4["x"].index(64)] == pytest.approx(view["outputs"]["speedup_vs_bf16"]["value"], rel=1e-4)
    assert view["flags"]["past_ridge"] is False and q.ridge_batch(ANCHOR, H100, "int4") == 86


def test_the_roofline_widget_flags_what_the_lesson_points_at():
    flags = widgets.render("quant-roofline", {"weights": "fp8", "hardware": "a100-sxm-80gb", "batch": 512})["flags"]
    assert flags["no_fp8"] and flags["past_ridge"] and flags["memory"]
    outputs = widgets.render("quant-roofline", {"lang": "en", "hardware": "a100-sxm-80gb", "batch": 512})["outputs"]
    assert outputs["fits"]["text"] == "no" and outputs["max_requests"]["value"] < 512
    flags = widgets.render("quant-roofline", {"kv": "fp8", "kv_dequant": "unfused"})["flags"]
    assert flags["unfused"] and not flags["memory"]


def test_the_tensor_widget_shows_the_quantiser():
    view = widgets.render("quantize-tensor", {"lang": "en", "format": "int4", "granularity": "group",
                                              "group_size": 32, "scaling": "awq"})
    r = q.quantize_tensor("int4", "group", 32, awq=True)
    out = view["outputs"]
    assert out["bits_per_weight"]["text"] == "4.625" and out["alpha"]["value"] == r.alpha
    assert out["output_error"]["value"] == pytest.approx(r.output_error, rel=1e-5)
    bars = view["figures"]["figure"]["data"]
    assert sum(bars[0]["y"]) == sum(bars[1]["y"]) == q.ROWS * q.COLS
