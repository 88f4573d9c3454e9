"""The estimate-stepper widget: naive (compute) and bytes estimates, by hand from the config and datasheets."""

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import widgets
from sim.kit import Flag
from sim.physics import presets
from sim.widgets import estimate_stepper
from sim.widgets.estimate_stepper import describe_ratio
from tests.sim.test_widgets import check_view

N_MATMUL = 25_623_939_584  # the anchor's matmul parameters (reference lessons' count)
WEIGHT_BYTES = 2 * N_MATMUL  # BF16
H100_PEAK, H100_BW = 989.5e12, 3.35e12
A100_PEAK, A100_BW = 312e12, 2.039e12
H200_PEAK, H200_BW = 989.5e12, 4.8e12


def outputs(**state) -> dict:
    return widgets.render("estimate-stepper", state)["outputs"]


def test_naive_estimate_on_h100():
    out = outputs()
    assert H100_PEAK / (2 * N_MATMUL) == pytest.approx(19_308.1, abs=0.05)
    assert out["naive_tokens_per_s"] == {"value": 19_308.1, "text": "19,308 tok/s"}
    assert out["naive_ms"]["value"] == pytest.approx(2 * N_MATMUL / H100_PEAK * 1e3, rel=1e-5)
    assert out["naive_ms"]["text"] == "0.0518 ms"


def test_bytes_estimate_on_h100():
    out = outputs()
    assert out["bytes_ms"]["value"] == pytest.approx(WEIGHT_BYTES / H100_BW * 1e3, rel=1e-5)
    assert out["bytes_ms"]["text"] == "15.30 ms"
    assert out["bytes_tokens_per_s"]["value"] == pytest.approx(H100_BW / WEIGHT_BYTES, rel=1e-5)
    assert out["bytes_tokens_per_s"]["text"] == "65.4 tok/s"


def test_failure_is_about_300_times_and_a_third_of_a_percent():
    out = outputs(step="fails")
    # naive / bytes = (peak / 2N) / (bandwidth / 2N bytes) = peak / bandwidth for BF16 weights.
    assert out["overestimate"]["value"] == pytest.approx(H100_PEAK / H100_BW, rel=1e-5)
    assert out["overestimate"]["text"] == "约 295×"
    assert out["utilisation"]["value"] == pytest.approx(100 * H100_BW / H100_PEAK, rel=1e-5)
    assert out["utilisation"]["text"] == "0.34%"
    assert "约 65 个 token" in out["fails_note"]["text"] and "19,308" in out["fails_note"]["text"]


def test_a100_is_a_third_by_compute_and_three_fifths_by_bandwidth():
    out = outputs(hardware="a100-sxm-80gb")
    assert out["naive_vs_h100"]["value"] == pytest.approx(A100_PEAK / H100_PEAK, rel=1e-5)
    assert round(A100_PEAK / H100_PEAK, 3) == 0.315
    assert out["naive_vs_h100"]["text"] == "约 0.32×（约三分之一）"
    assert out["bytes_vs_h100"]["value"] == pytest.approx(A100_BW / H100_BW, rel=1e-5)
    assert round(A100_BW / H100_BW, 3) == 0.609
    assert out["bytes_vs_h100"]["text"] == "约 0.61×（约五分之三）"


def test_h200_has_h100_compute_and_43_percent_more_bandwidth():
    out = outputs(hardware="h200-sxm")
    assert out["naive_vs_h100"] == {"value": 1, "text": "1×（与 H100 相同）"}
    assert out["bytes_vs_h100"]["value"] == pytest.approx(H200_BW / H100_BW, rel=1e-5)
    assert round(H200_BW / H100_BW, 3) == 1.433
    assert out["bytes_vs_h100"]["text"] == "约 1.43×"  # 1.43 is no simple fraction: no name
    assert out["naive_tokens_per_s"]["value"] == pytest.approx(H200_PEAK / (2 * N_MATMUL), rel=1e-5)


def test_english_ratio_text():
    out = outputs(hardware="a100-sxm-80gb", lang="en")
    assert out["naive_vs_h100"]["text"] == "about 0.32× (about a third)"
    assert out["bytes_vs_h100"]["text"] == "about 0.61× (about three-fifths)"


@pytest.mark.parametrize("ratio, text", [
    (0.5, "约 0.50×（约一半）"),
    (0.26, "约 0.26×（约四分之一）"),
    (0.45, "约 0.45×"),  # halfway between two-fifths and a half: too far from both to name
    (0.7, "约 0.70×"),
    (2.02, "约 2.02×（约两倍）"),
    (2.27, "约 2.27×"),
    (0.98, "约 0.98×（与 H100 相差无几）"),
    (1, "1×（与 H100 相同）"),
])
def test_describe_ratio_names_only_near_simple_fractions(ratio, text):
    assert describe_ratio(ratio) == text


def test_english_describe_ratio():
    assert describe_ratio(0.98, "en") == "about 0.98× (close to H100)"
    assert describe_ratio(2.02, "en") == "about 2.02× (about twice)"
    assert describe_ratio(1, "en") == "1× (same as H100)"
    assert describe_ratio(1.43, "en") == "about 1.43×"


def test_every_named_ratio_has_words_in_both_languages():
    for _, key in estimate_stepper.NAMED_RATIOS:
        assert estimate_stepper.TEXT["zh"][key] and estimate_stepper.TEXT["en"][key]
    for step in estimate_stepper.STEPS:
        assert f"step={step}" in estimate_stepper.TEXT["zh"] and f"step={step}" in estimate_stepper.TEXT["en"]


CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


@pytest.mark.parametrize("hardware", ["h100-sxm", "a100-sxm-80gb", "h200-sxm"])
def test_both_languages_render_and_english_has_no_chinese(hardware):
    zh = widgets.render("estimate-stepper", {"hardware": hardware, "lang": "zh"})
    en = widgets.render("estimate-stepper", {"hardware": hardware, "lang": "en"})
    check_view(zh)
    check_view(en)
    assert en["state"]["lang"] == "en"
    assert en["outputs"]["fails_note"]["text"].startswith("A single user receives about ")
    assert {k: o["value"] for k, o in en["outputs"].items()} == {k: o["value"] for k, o in zh["outputs"].items()}
    texts = [out["text"] for out in en["outputs"].values()] + list(en["derivations"].values())
    texts += list(estimate_stepper.TEXT["en"].values())
    assert not [text for text in texts if CHINESE.search(text)]


def test_exactly_one_panel_flag_is_on():
    for step in ("naive", "fails", "improved"):
        flags = widgets.render("estimate-stepper", {"step": step})["flags"]
        assert flags == {"step_naive": step == "naive", "step_fails": step == "fails",
                         "step_improved": step == "improved", "capacity": False}
    assert widgets.render("estimate-stepper", {"step": "x"})["flags"]["step_naive"]


def test_derivations_fill_in_the_numbers():
    view = widgets.render("estimate-stepper", {"hardware": "a100-sxm-80gb"})
    d = view["derivations"]
    assert d["naive_tokens_per_s"] == "312 TFLOP/s ÷ (2 × 25,623,939,584 FLOP) = 6,088 tok/s"
    assert d["bytes_vs_h100"] == "2.039 ÷ 3.35 TB/s = 0.609"
    assert d["naive_vs_h100"] == "312 ÷ 989.5 TFLOP/s = 0.315"
    numeric = {name for name, out in view["outputs"].items() if name != "fails_note"} - set(CAPACITY_OUTPUTS)
    assert numeric <= set(d)


CAPACITY_OUTPUTS = ("gpus_needed", "weights_total", "usable_memory")  # the shared flag's words (sim/kit/capacity.py)


def test_capacity_flag_is_in_the_view_and_off_for_every_preset():
    view = widgets.render("estimate-stepper", {})
    assert view["flags"]["capacity"] is False
    out = view["outputs"]
    # The whole checkpoint is held in memory (embedding and MTP head included), not only the matmul weights.
    assert out["weights_total"] == {"value": 55.5629, "text": "55.56 GB"}  # 55,562,855,904 B
    assert out["usable_memory"] == {"value": 85.5208, "text": "85.52 GB"}  # the H100's 81,559 MiB = 85,520,809,984 B
    assert out["gpus_needed"] == {"value": 1, "text": "1"}
    for hw, model in itertools.product(presets.hardware_keys(), presets.model_keys()):
        assert not widgets.render("estimate-stepper", {"hardware": hw, "model": model})["flags"]["capacity"]


def test_capacity_flag_is_in_the_layout():
    assert Flag("capacity") in estimate_stepper.WIDGET.layout


def test_every_step_on_every_gpu_is_a_valid_view():
    for step, hw, model, lang in itertools.product(("naive", "fails", "improved"), presets.hardware_keys(),
                                                   presets.model_keys(), ("zh", "en")):
        check_view(widgets.render("estimate-stepper", {"step": step, "hardware": hw, "model": model, "lang": lang}))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["step", "hardware", "model", "lang"]) | st.text(max_size=6), json_values,
                       max_size=6))
def test_any_state_renders_a_valid_view(state):
    check_view(widgets.render("estimate-stepper", state))
