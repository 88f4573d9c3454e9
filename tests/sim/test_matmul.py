"""matmul_cost: FLOPs, bytes and intensity of one matrix product, checked against hand-computed numbers."""

import dataclasses

import pytest

from sim.physics.matmul import matmul_cost

# Qwen3.8-27B's FFN up-projection: hidden d = 5,120, intermediate f = 17,408.
D, F = 5_120, 17_408


def test_gemm_of_four_prompt_tokens():
    cost = matmul_cost(4, D, F)
    assert cost.flops == 713_031_680  # 2 · 4 · 5,120 · 17,408
    assert (cost.input_bytes, cost.weight_bytes, cost.output_bytes) == (2 * 20_480, 2 * 89_128_960, 2 * 69_632)
    assert cost.bytes == 178_438_144  # 2 · (20,480 + 89,128,960 + 69,632)
    assert cost.intensity == pytest.approx(3.995960, abs=1e-6)  # 1 / (1/4 + 1/5,120 + 1/17,408)


def test_gemv_of_one_decode_token():
    cost = matmul_cost(1, D, F)
    assert cost.flops == 178_257_920  # 2 · 5,120 · 17,408
    assert cost.bytes == 178_302_976  # 2 · (5,120 + 89,128,960 + 17,408)
    assert cost.intensity == pytest.approx(0.999747, abs=1e-6)  # 1 / (1 + 1/5,120 + 1/17,408)


def test_weights_are_read_once_whatever_the_row_count():
    one, many = matmul_cost(1, D, F), matmul_cost(2_048, D, F)
    assert one.weight_bytes == many.weight_bytes == 2 * D * F
    assert many.flops == 2_048 * one.flops


@pytest.mark.parametrize("rows", [1, 4, 300, 2_048, 32_768])
def test_bf16_intensity_is_the_harmonic_form(rows):
    # 2 FLOPs per multiply-add over 2 bytes per element: I = 1 / (1/rows + 1/inner + 1/cols), below each of them.
    cost = matmul_cost(rows, D, F)
    assert cost.intensity == pytest.approx(1 / (1 / rows + 1 / D + 1 / F), rel=1e-12)
    assert cost.intensity < min(rows, D, F)


def test_bytes_per_element_scales_bytes_not_flops():
    bf16, fp32 = matmul_cost(4, D, F), matmul_cost(4, D, F, bytes_per_element=4)
    assert fp32.flops == bf16.flops and fp32.bytes == 2 * bf16.bytes
    assert fp32.intensity == pytest.approx(bf16.intensity / 2)


def test_record_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        matmul_cost(4, D, F).flops = 0


@pytest.mark.parametrize("args, name", [
    ((0, D, F), "rows"),
    ((4, -1, F), "inner"),
    ((4, D, 2.5), "cols"),
    ((4, D, float("nan")), "cols"),
    ((True, D, F), "rows"),
    ((4, D, F, 0), "bytes_per_element"),
    ((10**12, D, F), "rows"),
])
def test_bad_arguments_name_the_parameter(args, name):
    with pytest.raises(ValueError, match=f"^{name} must be a whole number"):
        matmul_cost(*args)
