"""The decode-ceiling widget: bandwidth ÷ weight bytes, and what a faster GPU does (not) buy."""

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import widgets
from sim.widgets import decode_ceiling
from tests.sim.test_properties import json_values
from tests.sim.test_widgets import check_view

LLAMA_MATMUL_PARAMS = 6_607_077_376  # 32 x (3 x 4096 x 11008 + 4 x 4096^2) + 32000 x 4096
LLAMA_RESIDENT_PARAMS = 6_738_415_616  # matmul + embedding 131,072,000 + norms 266,240
A100_BW = 2.039e12
ANCHOR_MATMUL_PARAMS = 25_623_939_584
# GPU memory as the device reports it: 81,920 MiB for the A100 80GB = 85,899,345,920 B, 85.8993 GB in a readout
# (6 significant digits); the datasheet's "80 GB" would be 80e9 B.
A100_GB = 81_920 * 2**20 / 1e9


CHINESE = re.compile(r"[\u2e80-\u9fff\uff00-\uffef]")


def values(view: dict) -> dict:
    return {name: out["value"] for name, out in view["outputs"].items()}


def test_default_is_llama_2_7b_in_bf16_on_an_a100():
    view = widgets.render("decode-ceiling", {})
    check_view(view)
    assert view["state"] == {"model": "llama-2-7b", "params_b": 7, "weight_dtype": "bf16",
                             "hardware": "a100-sxm-80gb", "bandwidth_efficiency": 1, "lang": "zh"}
    v = values(view)
    weights = LLAMA_MATMUL_PARAMS * 2
    assert v["weights_gb"] == pytest.approx(weights / 1e9, rel=1e-5)
    assert v["ceiling_tokens_per_s"] == pytest.approx(2.039e12 / weights, rel=1e-5)
    assert v["step_ms"] == pytest.approx(weights / 2.039e12 * 1e3, rel=1e-5)
    assert v["intensity"] == 1
    assert v["ridge"] == pytest.approx(312 / 2.039, rel=1e-5)
    assert v["gap"] == pytest.approx(153.0, abs=0.05)  # the reference's "78x" halves it by taking intensity 2
    assert v["compute_vs_a100"] == 1 and v["decode_vs_a100"] == 1
    assert view["outputs"]["gap"]["text"] == "153×"
    assert view["flags"] == {"capacity": False, "tensor_parallel": False}
    # The flag weighs the whole checkpoint held in memory, not only the matmul weights read per token.
    assert v["weights_total"] == pytest.approx(LLAMA_RESIDENT_PARAMS * 2 / 1e9, rel=1e-5)
    assert v["gpus_needed"] == 1 and v["usable_memory"] == round(A100_GB, 4) == 85.8993
    assert view["outputs"]["gpus"] == {"value": 1, "text": "单张 A100"}


def test_h100_has_3_17x_the_compute_but_1_64x_the_decode_ceiling():
    a100 = values(widgets.render("decode-ceiling", {}))
    h100 = values(widgets.render("decode-ceiling", {"hardware": "h100-sxm"}))
    assert h100["compute_vs_a100"] == pytest.approx(989.5 / 312, rel=1e-5)
    assert h100["decode_vs_a100"] == pytest.approx(3.35 / 2.039, rel=1e-5)
    assert h100["ceiling_tokens_per_s"] / a100["ceiling_tokens_per_s"] == pytest.approx(3.35 / 2.039, rel=1e-5)
    view = widgets.render("decode-ceiling", {"hardware": "h100-sxm"})
    assert view["outputs"]["compute_vs_a100"]["text"] == "×3.17"
    assert view["outputs"]["decode_vs_a100"]["text"] == "×1.64"


def test_anchor_weights_only_step_is_the_lesson_one_15_3_ms():
    v = values(widgets.render("decode-ceiling", {"model": "qwen3.8-27b", "hardware": "h100-sxm"}))
    assert v["step_ms"] == pytest.approx(ANCHOR_MATMUL_PARAMS * 2 / 3.35e12 * 1e3, rel=1e-5)
    assert round(v["step_ms"], 2) == 15.30


@pytest.mark.parametrize("dtype, intensity, gap", [("bf16", 1, 153.016), ("fp8", 2, 76.508), ("int4", 4, 38.254)])
def test_smaller_weights_raise_the_ceiling_and_the_intensity(dtype, intensity, gap):
    v = values(widgets.render("decode-ceiling", {"weight_dtype": dtype}))
    assert v["intensity"] == intensity
    assert v["gap"] == pytest.approx(gap, abs=0.001)
    bytes_per_param = 2 / intensity
    assert v["ceiling_tokens_per_s"] == pytest.approx(2.039e12 / (LLAMA_MATMUL_PARAMS * bytes_per_param), rel=1e-5)


def test_picking_a_preset_fills_params_b():
    view = widgets.render("decode-ceiling", {"model": "qwen3.8-27b", "params_b": 3, "changed": "model"})
    assert view["state"]["params_b"] == 26  # 25.62 B matmul parameters, shown in whole billions
    assert view["state"]["model"] == "qwen3.8-27b"
    # A shared link without "changed" also takes a preset's own size, whatever params_b says.
    assert widgets.render("decode-ceiling", {"model": "qwen3-32b", "params_b": 3})["state"]["params_b"] == 32


def test_editing_params_b_switches_to_a_custom_model_of_exactly_that_size():
    view = widgets.render("decode-ceiling", {"model": "llama-2-7b", "params_b": 70, "changed": "params_b"})
    assert view["state"]["model"] == "custom" and view["state"]["params_b"] == 70
    assert view["outputs"]["weights_gb"]["value"] == 140
    # 140 GB cannot sit on one A100 of 85.90 GB: the ceiling is that of two in tensor parallel, 70 GB each.
    assert view["flags"]["capacity"]
    assert view["outputs"]["ceiling_tokens_per_s"]["value"] == pytest.approx(2.039e12 / 70e9, rel=1e-5)


def test_a_custom_70b_in_bf16_does_not_fit_one_a100_and_the_ceiling_is_that_of_two():
    view = widgets.render("decode-ceiling", {"model": "custom", "params_b": 70, "hardware": "a100-sxm-80gb"})
    check_view(view)
    assert view["flags"] == {"capacity": True, "tensor_parallel": True}
    v = values(view)
    assert v["weights_total"] == 140 and v["usable_memory"] == 85.8993
    assert v["gpus_needed"] == 2 == v["gpus"]  # ceil(140 / 85.90)
    # Two GPUs in tensor parallel each read 70 GB at the same time: 2.039e12 / 70e9 = 29.13 tok/s, not 14.56.
    assert v["ceiling_tokens_per_s"] == pytest.approx(A100_BW / 70e9, rel=1e-5)
    assert round(v["ceiling_tokens_per_s"], 2) == 29.13
    assert v["step_ms"] == pytest.approx(70e9 / A100_BW * 1e3, rel=1e-5)
    assert view["derivations"]["ceiling_tokens_per_s"] == "2.039 TB/s ÷ (140.0 GB ÷ 2) = 29.13 tok/s"
    assert view["outputs"]["gpus"]["text"] == "2 张 A100 张量并行（理想值）"
    assert v["weights_gb"] == 140 and v["gap"] == pytest.approx(153.0, abs=0.05)  # per-GPU facts unchanged


def test_a_custom_7b_fits_and_keeps_the_one_gpu_ceiling():
    view = widgets.render("decode-ceiling", {"model": "custom", "params_b": 7})
    assert view["flags"] == {"capacity": False, "tensor_parallel": False}
    assert values(view)["gpus_needed"] == 1
    assert values(view)["ceiling_tokens_per_s"] == pytest.approx(A100_BW / 14e9, rel=1e-5)
    assert view["derivations"]["ceiling_tokens_per_s"] == "2.039 TB/s ÷ 14.00 GB = 145.6 tok/s"


@pytest.mark.parametrize("state, gpus", [
    # A100 85,899,345,920 B, H200 143,771 MiB = 150,754,820,096 B, B200 183,359 MiB = 192,265,846,784 B
    ({"model": "custom", "params_b": 70, "weight_dtype": "fp8"}, 1),  # 70 GB fits in 85.90
    ({"model": "custom", "params_b": 80, "weight_dtype": "bf16"}, 2),  # 160 GB / 85.90 = 1.86
    ({"model": "custom", "params_b": 85, "weight_dtype": "bf16"}, 2),  # 170 GB, within two: 171.80 GB
    ({"model": "custom", "params_b": 86, "weight_dtype": "bf16"}, 3),  # 172 GB / 85.90 = 2.002
    ({"model": "custom", "params_b": 405, "weight_dtype": "int4"}, 3),  # 202.5 GB / 85.90 = 2.36 on A100
    ({"model": "custom", "params_b": 405, "weight_dtype": "fp8", "hardware": "b200"}, 3),  # 405 / 192.27 = 2.11
    ({"model": "custom", "params_b": 70, "hardware": "h200-sxm"}, 1),  # 140 GB on 150.75 GB
])
def test_gpus_needed_is_the_weights_over_the_memory_rounded_up(state, gpus):
    view = widgets.render("decode-ceiling", state)
    v = values(view)
    assert v["gpus_needed"] == gpus and view["flags"]["capacity"] == (gpus > 1)
    bandwidth = {"b200": 8e12, "h200-sxm": 4.8e12}.get(state.get("hardware"), A100_BW)
    assert v["ceiling_tokens_per_s"] == pytest.approx(bandwidth * gpus / (v["weights_gb"] * 1e9), rel=1e-5)


def test_no_preset_raises_the_capacity_flag():
    for model in ("llama-2-7b", "qwen3.8-27b", "qwen3-32b"):
        for hardware in ("a100-sxm-80gb", "h100-sxm", "h200-sxm", "b200"):
            for dtype in ("bf16", "fp8", "int4"):
                view = widgets.render("decode-ceiling", {"model": model, "hardware": hardware, "weight_dtype": dtype})
                assert view["flags"] == {"capacity": False, "tensor_parallel": False}, (model, hardware, dtype)


def test_bandwidth_efficiency_scales_the_ceiling_and_leaves_the_datasheet_facts():
    full = values(widgets.render("decode-ceiling", {}))
    view = widgets.render("decode-ceiling", {"bandwidth_efficiency": 0.8})
    assert view["state"]["bandwidth_efficiency"] == 0.8
    v = values(view)
    assert v["ceiling_tokens_per_s"] == pytest.approx(0.8 * A100_BW / (LLAMA_MATMUL_PARAMS * 2), rel=1e-5)
    assert v["ceiling_tokens_per_s"] == pytest.approx(0.8 * full["ceiling_tokens_per_s"], rel=1e-5)
    assert v["step_ms"] == pytest.approx(full["step_ms"] / 0.8, rel=1e-5)
    for name in ("weights_gb", "intensity", "ridge", "gap", "compute_vs_a100", "decode_vs_a100"):
        assert v[name] == full[name], name
    assert view["derivations"]["ceiling_tokens_per_s"] == "0.8 × 2.039 TB/s ÷ 13.21 GB = 123.4 tok/s"
    assert view["derivations"]["step_ms"] == "13.21 GB ÷ (0.8 × 2.039 TB/s) = 8.10 ms"


def test_bandwidth_efficiency_scales_the_two_gpu_ceiling_too():
    view = widgets.render("decode-ceiling", {"model": "custom", "params_b": 70, "bandwidth_efficiency": 0.8})
    assert view["flags"]["capacity"]
    assert values(view)["ceiling_tokens_per_s"] == pytest.approx(0.8 * A100_BW / 70e9, rel=1e-5)
    assert view["derivations"]["ceiling_tokens_per_s"] == "0.8 × 2.039 TB/s ÷ (140.0 GB ÷ 2) = 23.30 tok/s"


@pytest.mark.parametrize("sent, kept", [("0.8", 0.8), (0.805, 0.8), (0.01, 0.1), (2, 1), ("x", 1), (None, 1)])
def test_bandwidth_efficiency_is_a_share_in_hundredths(sent, kept):
    assert widgets.render("decode-ceiling", {"bandwidth_efficiency": sent})["state"]["bandwidth_efficiency"] == kept


def test_switching_to_custom_keeps_the_fields():
    view = widgets.render("decode-ceiling", {"model": "custom", "params_b": 7, "changed": "model"})
    assert view["state"]["params_b"] == 7
    assert view["outputs"]["weights_gb"]["value"] == 14


def test_other_controls_leave_a_preset_alone():
    view = widgets.render("decode-ceiling", {"model": "llama-2-7b", "weight_dtype": "fp8", "changed": "weight_dtype"})
    assert view["state"]["model"] == "llama-2-7b"
    assert view["outputs"]["weights_gb"]["value"] == pytest.approx(LLAMA_MATMUL_PARAMS / 1e9, rel=1e-5)


def test_ratio_chart_highlights_the_chosen_gpu():
    figure = widgets.render("decode-ceiling", {"hardware": "h100-sxm"})["figures"]["ratios"]
    compute, decode = figure["data"]
    assert compute["x"] == ["A100", "H100", "H200", "B200"]
    assert compute["y"] == pytest.approx([1, 989.5 / 312, 989.5 / 312, 2250 / 312], abs=1e-4)
    assert decode["y"] == pytest.approx([1, 3.35 / 2.039, 4.8 / 2.039, 8 / 2.039], abs=1e-4)
    assert decode["marker"]["opacity"] == [0.45, 1.0, 0.45, 0.45]


@pytest.mark.parametrize("state", [
    {},
    {"hardware": "h100-sxm", "weight_dtype": "int4"},
    {"model": "custom", "params_b": 405, "weight_dtype": "fp8", "hardware": "b200"},
    {"model": "custom", "params_b": 70, "bandwidth_efficiency": 0.8},
])
def test_both_languages_render_the_same_numbers_and_english_has_no_chinese(state):
    zh = widgets.render("decode-ceiling", {**state, "lang": "zh"})
    en = widgets.render("decode-ceiling", {**state, "lang": "en"})
    check_view(en)
    assert en["state"] == {**zh["state"], "lang": "en"}
    assert {k: o["value"] for k, o in en["outputs"].items()} == {k: o["value"] for k, o in zh["outputs"].items()}
    assert en["flags"] == zh["flags"]
    assert [(t["x"], t["y"]) for t in en["figures"]["ratios"]["data"]] == \
        [(t["x"], t["y"]) for t in zh["figures"]["ratios"]["data"]]
    english = json.dumps([en["outputs"], en["derivations"], en["figures"], en["svg"]], ensure_ascii=False)
    assert not CHINESE.search(english), CHINESE.findall(english)
    assert [t["name"] for t in en["figures"]["ratios"]["data"]] == ["Peak compute", "Decode ceiling (bandwidth)"]
    assert CHINESE.search(zh["derivations"]["weights_gb"])
    assert CHINESE.search(zh["figures"]["ratios"]["layout"]["yaxis"]["title"]["text"])


def test_english_words_of_the_flags_have_no_chinese():
    en = widgets.render("decode-ceiling", {"model": "custom", "params_b": 70, "lang": "en"})
    assert en["outputs"]["gpus"]["text"] == "2 × A100 in tensor parallel (ideal)"
    assert not CHINESE.search(" ".join(decode_ceiling.TEXT["en"].values()))


def test_text_blocks_have_the_same_keys_and_slots():
    assert set(decode_ceiling.TEXT["zh"]) == set(decode_ceiling.TEXT["en"])
    for key, zh in decode_ceiling.TEXT["zh"].items():
        en = decode_ceiling.TEXT["en"][key]
        assert sorted(re.findall(r"{(\w+)}", zh)) == sorted(re.findall(r"{(\w+)}", en)), key


@pytest.mark.parametrize("state", [
    {"params_b": 1, "model": "custom", "weight_dtype": "int4", "hardware": "b200", "lang": "en"},
    {"params_b": 10**6, "model": "custom"},
    {"params_b": "abc", "changed": "params_b"},
    {"model": "gpt-5", "changed": "nonsense", "weight_dtype": 3},
])
def test_any_state_gives_a_valid_view(state):
    check_view(widgets.render("decode-ceiling", state))


NAMES = [c.name for c in decode_ceiling.WIDGET.controls]
MEANINGFUL = st.sampled_from(NAMES + ["custom", "qwen3.8-27b", "bf16", "fp8", "int4", "en"]) | st.integers(-10, 10**7)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(NAMES + ["changed", "lang"]), json_values | MEANINGFUL, max_size=10))
def test_random_states_render(state):
    view = widgets.render("decode-ceiling", state)
    check_view(view)
    assert set(view["state"]) == set(NAMES) | {"lang"}
    # The state a view reports is settled: sent back as a link would send it, it comes back unchanged.
    assert widgets.render("decode-ceiling", view["state"])["state"] == view["state"]
