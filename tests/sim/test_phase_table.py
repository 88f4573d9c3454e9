"""The phase-table widget: a 10-token question and a 500-token answer, phase by phase."""

import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import widgets
from sim.physics import presets, roofline
from sim.widgets import phase_table
from tests.sim.test_widgets import check_view

# Hand arithmetic for the anchor on an H100 (see tests/sim/test_serving.py for the pieces).
WEIGHTS = 25_623_939_584 * 2
# A prefill runs the LM head (248,320 vocab x 5,120 hidden) only at the prompt's last position, the decoder
# layers' 25,623,939,584 - 1,271,398,400 = 24,352,541,184 matmul weights at every prompt token.
LM_HEAD = 248_320 * 5_120  # 1,271,398,400
LAYER_WEIGHTS = 25_623_939_584 - LM_HEAD  # 24,352,541,184
KV_ROW = 16 * 2 * 4 * 256 * 2
STATE = 48 * 48 * 128 * 128 * 4
PREFILL_S = (WEIGHTS + 10 * KV_ROW + STATE) / 3.35e12  # memory-bound: 10 tokens are far below the ridge
DECODE_S = (500 * WEIGHTS + KV_ROW * sum(range(11, 511)) + 500 * 2 * STATE) / 3.35e12
ATTENTION_FLOPS_PER_PAIR = 16 * 24 * 256 * 4  # 16 full-attention layers x 24 query heads x 256 dims x (QK + PV)
# A 2,048-token prompt, operation by operation: the matmuls (intensity 2,048 > 295) and the causal attention
# are compute-bound, the state write memory-bound; the step is their sum.
MATMUL_2048_FLOPS = 2 * LAYER_WEIGHTS * 2048 + 2 * LM_HEAD  # 99,750,551,486,464
MATMULS_2048_S = MATMUL_2048_FLOPS / 989.5e12  # 100.8090 ms (106.0694 with the LM head at all 2,048)
ATTENTION_2048_S = ATTENTION_FLOPS_PER_PAIR * (2048 * 2049 // 2) / 989.5e12  # 0.8338 ms
STATE_WRITE_S = STATE / 3.35e12  # 0.0451 ms
PREFILL_2048_S = MATMULS_2048_S + ATTENTION_2048_S + STATE_WRITE_S  # 101.688 ms (was 106.948)


def values(view: dict) -> dict:
    return {name: out["value"] for name, out in view["outputs"].items()}


def test_default_request_phase_by_phase():
    view = widgets.render("phase-table", {})
    check_view(view)
    v = values(view)
    assert view["state"]["prompt_tokens"] == 10 and view["state"]["output_tokens"] == 500
    assert v["prefill_ms"] == pytest.approx(PREFILL_S * 1e3, rel=1e-5)
    assert v["ttft_ms"] == v["prefill_ms"]
    assert v["decode_total_ms"] == pytest.approx(DECODE_S * 1e3, rel=1e-5)
    assert v["decode_ms_per_token"] == pytest.approx(DECODE_S / 500 * 1e3, rel=1e-5)
    assert v["tpot_ms"] == v["decode_ms_per_token"]
    assert v["prefill_share"] == pytest.approx(100 * PREFILL_S / (PREFILL_S + DECODE_S), rel=1e-5)
    assert v["decode_share"] == pytest.approx(100 * DECODE_S / (PREFILL_S + DECODE_S), rel=1e-5)
    assert v["request_ms"] == pytest.approx((PREFILL_S + DECODE_S) * 1e3, rel=1e-5)
    assert view["outputs"]["decode_total_ms"]["text"] == "7.70 s"
    assert view["outputs"]["tpot_ms"]["text"] == "TPOT = 15.39 ms"
    assert view["outputs"]["prefill_share"]["text"] == "0.199%"  # not the reference's illustrative 10%
    assert view["outputs"]["ttft_ms"]["text"] == "TTFT = 15.34 ms"
    assert view["flags"] == {"capacity": False}


def test_decode_total_equals_500_single_steps():
    view = widgets.render("phase-table", {"model": "llama-2-7b", "hardware": "a100-sxm-80gb"})
    m, hw = presets.model("llama-2-7b"), presets.hardware("a100-sxm-80gb")
    total = sum(roofline.decode(m, hw, batch=1, context=10 + i).time_s for i in range(500))
    assert view["outputs"]["decode_total_ms"]["value"] == pytest.approx(total * 1e3, rel=1e-5)


def test_intensity_is_about_the_token_count_for_prefill_and_one_for_decode():
    v = values(widgets.render("phase-table", {}))
    # A little under 10 for 10 tokens, as the LM head (5% of the matmul weights) runs at the last one only:
    # (2 x 24,352,541,184 x 10 + 2 x 1,271,398,400 + 393,216 x 55) FLOP
    # / (51,247,879,168 + 10 x 65,536 + 150,994,944) B = 489,615,247,360 / 51,399,529,472 = 9.5257 FLOP/B
    flops = 2 * LAYER_WEIGHTS * 10 + 2 * LM_HEAD + ATTENTION_FLOPS_PER_PAIR * (10 * 11 // 2)
    assert v["prefill_intensity"] == pytest.approx(flops / (WEIGHTS + 10 * KV_ROW + STATE), rel=1e-5)
    assert v["prefill_intensity"] == pytest.approx(9.5257, abs=0.0001)
    assert v["decode_intensity"] == pytest.approx(1, abs=0.01)
    assert v["prefill_shape"] == 10 and v["decode_shape"] == 1
    assert v["ridge"] == pytest.approx(989.5 / 3.35, rel=1e-5)


def test_short_prompt_prefill_is_memory_bound_long_one_compute_bound():
    short = widgets.render("phase-table", {})
    assert short["outputs"]["prefill_bound"] == {"value": 0, "text": "带宽受限"}
    assert short["outputs"]["decode_bound"] == {"value": 0, "text": "带宽受限"}
    assert short["outputs"]["prefill_ops"]["text"] == "矩阵乘、注意力和递归状态都带宽受限"
    assert short["outputs"]["decode_ops"]["text"] == "矩阵乘、注意力和递归状态都带宽受限"
    long = widgets.render("phase-table", {"prompt_tokens": 2048, "lang": "en"})
    assert long["outputs"]["prefill_bound"] == {"value": 1, "text": "mostly compute-bound (mixed)"}
    assert long["outputs"]["prefill_ops"] == {
        "value": 1, "text": "matmuls and attention compute-bound, recurrent state memory-bound"}
    assert long["outputs"]["decode_bound"] == {"value": 0, "text": "memory-bound"}
    assert long["outputs"]["decode_ops"]["text"] == "matmuls, attention and recurrent state: all memory-bound"


def test_long_prompt_prefill_is_the_sum_of_its_operations():
    view = widgets.render("phase-table", {"prompt_tokens": 2048})
    v = values(view)
    assert v["prefill_ms"] == pytest.approx(PREFILL_2048_S * 1e3, rel=1e-5)
    assert view["outputs"]["prefill_ms"]["text"] == "101.69 ms"  # 101.643 ms as one aggregate max
    assert view["outputs"]["ttft_ms"]["text"] == "TTFT = 101.69 ms"
    assert view["derivations"]["prefill_ms"] == (
        "矩阵乘 max(99.75 TFLOP ÷ 989.5 TFLOP/s, 51.25 GB ÷ 3.35 TB/s) "
        "+ 注意力 max(825.0 GFLOP ÷ 989.5 TFLOP/s, 134.2 MB ÷ 3.35 TB/s) + 递归状态 151.0 MB ÷ 3.35 TB/s "
        "= 100.81 ms + 0.834 ms + 0.0451 ms = 101.69 ms（若各算子完全重叠：max(101.64 ms, 15.38 ms) = 101.64 ms）")
    compute_share = (MATMULS_2048_S + ATTENTION_2048_S) / PREFILL_2048_S  # 99.956%
    assert f"{compute_share * 100:.2f}" == "99.96"
    assert view["derivations"]["prefill_bound"] == (
        "矩阵乘 100.81 ms（算力受限） + 注意力 0.834 ms（算力受限） + 递归状态 0.0451 ms（带宽受限）；"
        "算力受限的时间 101.64 ms ÷ 101.69 ms = 99.96% → 算力受限为主（混合）")
    assert view["outputs"]["prefill_bound"]["text"] == "算力受限为主（混合）"
    assert view["outputs"]["prefill_mfu"]["text"] == "99.96%"  # not rounded up to 100%
    # Batch-1 decode stays memory-bound throughout, so the answer's per-token time is the old sum of bytes.
    decode_s = (500 * WEIGHTS + KV_ROW * sum(range(2049, 2549)) + 500 * 2 * STATE) / 3.35e12
    assert v["decode_total_ms"] == pytest.approx(decode_s * 1e3, rel=1e-5)
    assert view["derivations"]["decode_bound"].endswith("算力受限的时间 0 ms ÷ 7.72 s = 0% → 带宽受限")


def test_efficiencies_slow_the_bound_they_limit():
    # Half the bandwidth: the all-memory-bound default request takes twice as long, 2 x 15.3431 ms TTFT.
    slow_memory = values(widgets.render("phase-table", {"bandwidth_efficiency": 0.5}))
    assert slow_memory["ttft_ms"] == pytest.approx(2 * PREFILL_S * 1e3, rel=1e-5)
    assert slow_memory["tpot_ms"] == pytest.approx(2 * DECODE_S / 500 * 1e3, rel=1e-5)
    assert slow_memory["ridge"] == pytest.approx(989.5 / 1.675, rel=1e-5)
    # Half the compute: the 2,048-token prefill's compute-bound ops take twice as long, the state write not;
    # utilisation is against the datasheet's 989.5 TFLOP/s, so it falls to about half.
    view = widgets.render("phase-table", {"compute_efficiency": 0.5, "prompt_tokens": 2048})
    slow_compute = 2 * (MATMULS_2048_S + ATTENTION_2048_S) + STATE_WRITE_S  # 203.331 ms
    assert values(view)["prefill_ms"] == pytest.approx(slow_compute * 1e3, rel=1e-5)
    flops = MATMUL_2048_FLOPS + ATTENTION_FLOPS_PER_PAIR * (2048 * 2049 // 2)
    assert values(view)["prefill_mfu"] == pytest.approx(100 * flops / slow_compute / 989.5e12, rel=1e-5)
    assert view["outputs"]["prefill_mfu"]["text"] == "50.0%"  # 49.99%, to three digits
    assert values(view)["decode_ms_per_token"] == pytest.approx(
        values(widgets.render("phase-table", {"prompt_tokens": 2048}))["decode_ms_per_token"], rel=1e-9)
    assert "494.75 TFLOP/s" in view["derivations"]["prefill_ms"]
    assert view["derivations"]["prefill_mfu"].endswith("÷ 989.5 TFLOP/s = 50.0%")


def test_capacity_flag_when_the_weights_alone_do_not_fit(monkeypatch):
    # Every preset model fits on every preset GPU, so shrink the H100 to 40 GB: 55.56 GB of checkpoint needs two.
    real = presets.hardware
    monkeypatch.setattr(presets, "hardware", lambda key: replace(real(key), memory_bytes=40e9))
    view = widgets.render("phase-table", {})
    check_view(view)
    assert view["flags"] == {"capacity": True}
    assert view["outputs"]["gpus_needed"] == {"value": 2, "text": "2"}
    assert view["outputs"]["weights_total"]["text"] == "55.56 GB"
    assert view["outputs"]["usable_memory"]["text"] == "40.00 GB"
    assert not widgets.render("phase-table", {"model": "llama-2-7b"})["flags"]["capacity"]


def test_shapes_name_the_model_dimensions():
    view = widgets.render("phase-table", {"model": "llama-2-7b", "prompt_tokens": 2048})
    assert view["outputs"]["prefill_shape"]["text"] == "GEMM (2,048 × 4,096) · (4,096 × 11,008)"
    assert view["outputs"]["decode_shape"]["text"] == "GEMV (1 × 4,096) · (4,096 × 11,008)"


def test_utilisation_is_attained_over_peak():
    v = values(widgets.render("phase-table", {}))
    decode_flops = 500 * 2 * 25_623_939_584 + 16 * 24 * 256 * 4 * sum(range(10, 510))
    assert v["decode_mfu"] == pytest.approx(100 * decode_flops / DECODE_S / 989.5e12, rel=1e-5)
    assert v["decode_mfu"] < 1  # batch-1 decode leaves the tensor cores idle


@pytest.mark.parametrize("state", [
    {"prompt_tokens": 1, "output_tokens": 1},
    {"prompt_tokens": 32_768, "output_tokens": 8_192, "model": "qwen3-32b", "hardware": "b200"},
    {"prompt_tokens": "300", "output_tokens": 1e9, "lang": "en"},
    {"prompt_tokens": None, "model": "gpt", "changed": "model"},
])
def test_any_state_gives_a_valid_view(state):
    view = widgets.render("phase-table", state)
    check_view(view)
    v = values(view)
    assert v["prefill_share"] + v["decode_share"] == pytest.approx(100)
    assert v["request_ms"] == pytest.approx(v["ttft_ms"] + view["state"]["output_tokens"] * v["tpot_ms"], rel=1e-5)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def test_both_languages_render_and_english_has_no_chinese():
    zh = widgets.render("phase-table", {"lang": "zh"})
    en = widgets.render("phase-table", {"lang": "en", "prompt_tokens": 2048})
    check_view(zh)
    check_view(en)
    assert zh["state"]["lang"] == "zh" and en["state"]["lang"] == "en"
    assert zh["outputs"]["prefill_tokens"]["text"] == "一次送进 10 个 token"
    assert en["outputs"]["prefill_tokens"]["text"] == "2,048 tokens at once"
    texts = [out["text"] for out in en["outputs"].values()] + list(en["derivations"].values())
    texts += list(phase_table.TEXT["en"].values())
    assert not [text for text in texts if CHINESE.search(text)]


def test_every_table_word_is_in_both_languages():
    assert set(phase_table.TEXT["zh"]) == set(phase_table.TEXT["en"])
    assert all(phase_table.TEXT["en"][key] for key in ("col.measure", "caption", "ridge_note", "cell.per_token"))


NAMES = [c.name for c in phase_table.WIDGET.controls]
MEANINGFUL = st.sampled_from(NAMES + ["custom", "qwen3.8-27b", "bf16", "fp8", "int4", "en"]) | st.integers(-10, 10**7)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(NAMES + ["changed", "lang"]), json_values | MEANINGFUL, max_size=10))
def test_random_states_render(state):
    view = widgets.render("phase-table", state)
    check_view(view)
    assert set(view["state"]) == set(NAMES) | {"lang"}
    # The state a view reports is settled: sent back as a link would send it, it comes back unchanged.
    assert widgets.render("phase-table", view["state"])["state"] == view["state"]
