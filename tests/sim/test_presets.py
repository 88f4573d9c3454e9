import json
import os

import pytest

from sim.physics import model_size, presets


def test_hardware_figures_are_converted_to_si_exactly():
    # Memory is what the device reports, in MiB: 81,559 x 2^20 = 85,520,809,984 B for the "80 GB" H100;
    # the datasheet's round figure is kept apart, as 80 x 10^9 B.
    h100 = presets.hardware("h100-sxm")
    assert h100.peak_flops_per_s == 989.5e12
    assert h100.bandwidth_bytes_per_s == 3.35e12
    assert h100.memory_bytes == 85_520_809_984
    assert h100.datasheet_memory_bytes == 80e9
    assert h100.host_link_bytes_per_s == 64e9
    a100 = presets.hardware("a100-sxm-80gb")
    assert (a100.peak_flops_per_s, a100.bandwidth_bytes_per_s) == (312e12, 2_039_000_000_000)
    assert (a100.memory_bytes, a100.datasheet_memory_bytes) == (85_899_345_920, 80e9)  # 81,920 MiB
    h200 = presets.hardware("h200-sxm")
    assert (h200.peak_flops_per_s, h200.bandwidth_bytes_per_s) == (989.5e12, 4.8e12)
    assert (h200.memory_bytes, h200.datasheet_memory_bytes) == (150_754_820_096, 141e9)  # 143,771 MiB
    b200 = presets.hardware("b200")
    assert (b200.peak_flops_per_s, b200.bandwidth_bytes_per_s) == (2250e12, 8e12)
    assert (b200.memory_bytes, b200.datasheet_memory_bytes) == (192_265_846_784, 180e9)  # 183,359 MiB
    assert b200.host_link_bytes_per_s is None


def test_every_gpu_preset_has_the_memory_its_device_reports_and_a_source_for_it():
    with open(os.path.join(presets.PRESETS_DIR, "hardware.json"), encoding="utf-8") as f:
        raw = json.load(f)
    assert set(raw) == set(presets.hardware_keys(every=True))
    for key in presets.hardware_keys(every=True):
        hw = presets.hardware(key)
        # nvidia-smi's MiB, or the bytes torch reports where that is the source (the replayed RTX 4090)
        reported = raw[key].get("reported_memory_mib", raw[key].get("reported_memory_bytes"))
        assert isinstance(reported, int)
        assert hw.memory_bytes == (reported * 2**20 if "reported_memory_mib" in raw[key] else reported), key
        # A binary MiB figure of an "80 GB" part is more than the datasheet's decimal 80 x 10^9 B.
        assert hw.memory_bytes > hw.datasheet_memory_bytes > 0, key
        assert hw.memory_source.strip() and hw.source.strip(), key
        if hw.host_link_bytes_per_s is None:
            continue
        assert isinstance(hw.host_link_bytes_per_s, (int, float)) and not isinstance(hw.host_link_bytes_per_s, bool)
        assert hw.host_link_bytes_per_s > 0, key
        assert hw.host_link_source.strip(), key


def test_required_presets_exist_and_cite_a_source():
    assert {"a100-sxm-80gb", "h100-sxm", "h200-sxm", "b200"} <= set(presets.hardware_keys())
    assert {"qwen3.8-27b", "qwen3-32b", "llama-2-7b"} <= set(presets.model_keys())
    for key in presets.hardware_keys(every=True):
        assert presets.hardware(key).source
    for key in presets.model_keys(every=True):
        assert presets.model(key).source


@pytest.mark.parametrize("getter, key", [(presets.hardware, "h100"), (presets.model, "qwen"), (presets.model, None)])
def test_unknown_key_raises_value_error_naming_the_parameter(getter, key):
    with pytest.raises(ValueError, match=r"(hardware|model) must be one of"):
        getter(key)


def test_anchor_layer_layout():
    m = presets.model("qwen3.8-27b")
    assert (m.full_attention_layers, m.linear_attention_layers) == (16, 48)
    assert m.attention.group_size == 6


def test_parameter_counts_match_public_totals():
    anchor = presets.model("qwen3.8-27b")
    assert model_size.matmul_params(anchor) == 25_623_939_584
    assert model_size.matmul_weight_bytes(anchor) == 51_247_879_168
    # The text backbone incl. the embedding is 26,895,998,464 in the reference lessons.
    text = model_size.matmul_params(anchor) + model_size.embedding_params(anchor) + model_size.residual_norm_params(anchor)
    assert text == 26_895_998_464
    assert round(model_size.resident_params(anchor) / 1e9, 2) == 27.78
    assert round(model_size.resident_weight_bytes(anchor) / 1e9, 2) == 55.56
    # Published sizes: Llama-2-7B 6,738,415,616; Qwen3-32B 32.8 B.
    assert model_size.resident_params(presets.model("llama-2-7b")) == 6_738_415_616
    assert round(model_size.resident_params(presets.model("qwen3-32b")) / 1e9, 1) == 32.8


def test_nvlink_is_each_way_half_the_datasheets_both_ways_figure_with_its_source():
    # Datasheets give NVLink both directions together: A100 600 GB/s, H100 and H200 900 GB/s, B200 1.8 TB/s.
    each_way = {"a100-sxm-80gb": 300e9, "h100-sxm": 450e9, "h200-sxm": 450e9, "b200": 900e9}
    for key, value in each_way.items():
        hw = presets.hardware(key)
        assert hw.nvlink_bytes_per_s == value, key
        assert "NVLink" in hw.nvlink_source and "each way" in hw.nvlink_source, key


def test_llama_2_13b_has_the_parameter_count_of_its_checkpoint():
    # meta-llama/Llama-2-13b-hf: 13,015,864,320 parameters (BF16 safetensors, 26.03 GB).
    from sim.physics import model_size
    assert model_size.resident_params(presets.model("llama-2-13b")) == 13_015_864_320


def test_the_menus_leave_out_what_only_measured_data_uses_and_every_getter_finds_it():
    assert "rtx-4090" not in presets.hardware_keys() and "rtx-4090" in presets.hardware_keys(every=True)
    assert "llama-3.1-8b" not in presets.model_keys() and "llama-3.1-8b" in presets.model_keys(every=True)
    rtx = presets.hardware("rtx-4090")
    # GeForce: the FP32-accumulate tensor rate (165.2 TFLOPS dense), not the FP16-accumulate one (330.3)
    assert (rtx.peak_flops_per_s, rtx.bandwidth_bytes_per_s) == (165.2e12, 1.008e12)
    assert rtx.memory_bytes == 25_250_627_584 and not rtx.menus
    llama = presets.model("llama-3.1-8b")
    assert (llama.hidden, llama.intermediate, llama.layers, llama.vocab) == (4096, 14336, 32, 128256)
    assert (llama.attention.q_heads, llama.attention.kv_heads, llama.attention.head_dim) == (32, 8, 128)
    # about 8.03 B parameters with its untied LM head
    assert model_size.resident_params(llama) == pytest.approx(8.03e9, rel=0.002)
