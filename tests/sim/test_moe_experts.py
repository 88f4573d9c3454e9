"""The moe-experts widget: which experts one decode step's tokens touch in one MoE layer, a seeded sample beside the
expectation under uniform routing and the naive batch x k, held to hand computations (sim/physics/routing.py is what
it shows)."""

import json
import re
import string

import pytest

from sim import widgets
from sim.kit.controls import coerce_state
from sim.physics import presets, routing
from sim.widgets import moe_experts
from tests.sim.test_widgets import check_responsive, check_view

SVG = "{http://www.w3.org/2000/svg}"

# One routed expert of one layer is a SwiGLU MLP, 3 x hidden x width parameters.
DEEPSEEK_EXPERT_BYTES = 58 * 3 * 7_168 * 2_048 * 1  # 58 MoE layers, FP8: 2,554,331,136 B
# Mixtral 8x7B, one token: per layer Q and O 4,096², K and V 4,096 x 1,024, 2 of 8 experts of 3 x 4,096 x 14,336 and
# a router of 4,096 x 8; 32 layers and an LM head of 32,000 x 4,096; BF16.
MIXTRAL_ACTIVE_BYTES = 2 * (32 * (4_096 * (2 * 4_096 + 2 * 1_024) + 2 * 3 * 4_096 * 14_336 + 4_096 * 8)
                            + 32_000 * 4_096)


def values(view: dict) -> dict:
    return {name: out["value"] for name, out in view["outputs"].items()}


def loads_drawn(markup: str, layout: str = "wide") -> dict[int, int]:
    """Cells per level of the colour scale in one drawing of the grid: each level one path of square subpaths."""
    root = check_responsive(markup)[layout]
    return {int(p.get("data-level")): p.get("d").count("M") for p in root.iter(f"{SVG}path") if p.get("data-level")}


def test_the_default_is_deepseek_v3_at_64_tokens_uniform_seed_1():
    view = widgets.render("moe-experts", {"lang": "en"})
    check_view(view)
    assert view["state"] == {"model": "deepseek-v3", "batch": 64, "skew": "0", "seed": 1, "lang": "en"}
    v = values(view)
    # 256 routed experts, 8 a token: all 64 tokens miss a given expert with probability (248/256)^64.
    expected = 256 * (1 - (248 / 256) ** 64)
    assert expected == pytest.approx(222.44, abs=0.005)
    assert v["expected"] == pytest.approx(expected, rel=1e-5)
    assert view["outputs"]["expected"]["text"] == "222.4"
    assert view["outputs"]["expected_of"]["text"] == "86.9% of 256"
    assert view["derivations"]["expected"] == "256 × (1 − (1 − 8/256)^64) = 256 × (1 − 0.131) = 222.4 (86.9%)"
    # The naive count: every one of the 64 x 8 picks taken for a new expert, twice the experts there are.
    assert v["picks"] == 512 and view["outputs"]["picks"]["text"] == "512 (64 × 8)"
    assert v["repeats"] == 512 - v["touched"]
    assert not view["flags"]["skewed"]


def test_the_readouts_are_the_samples_counted_by_hand():
    for state in ({}, {"model": "qwen3-30b-a3b", "batch": 16, "skew": "1", "seed": 7},
                  {"model": "mixtral-8x7b", "batch": 3, "skew": "0.5", "seed": 20}):
        s = moe_experts.WIDGET.coerce(state)
        e = presets.model(s["model"]).experts
        loads = routing.route(e.routed, e.per_token, s["batch"], s["seed"], float(s["skew"])).loads
        assert len(loads) == e.routed and sum(loads) == s["batch"] * e.per_token  # k distinct experts a token
        touched = sum(1 for x in loads if x)
        view = widgets.render("moe-experts", {**state, "lang": "en"})
        v = values(view)
        assert v["touched"] == touched and v["busiest"] == max(loads)
        assert view["outputs"]["touched"]["text"] == f"{touched} of {e.routed}"
        assert v["mean_load"] == pytest.approx(s["batch"] * e.per_token / touched, rel=1e-5)
        # The grid lights as many cells as the sample touched, and leaves the others dark, in both drawings.
        for layout in ("wide", "narrow"):
            drawn = loads_drawn(view["svg"]["grid"], layout)
            assert sum(drawn.values()) == e.routed and drawn.get(0, 0) == e.routed - touched
            assert drawn == {n: sum(1 for x in loads if x.bit_length() == n) for n in drawn}


def test_the_sample_is_reproducible_for_a_seed_and_changes_with_it():
    one = widgets.render("moe-experts", {"seed": 5})
    again = widgets.render("moe-experts", {"seed": 5})
    other = widgets.render("moe-experts", {"seed": 6})
    assert one == again
    assert one["svg"]["grid"] != other["svg"]["grid"]
    # the expectation does not depend on the sample
    assert values(one)["expected"] == values(other)["expected"]
    assert values(one)["weights"] == values(other)["weights"]


def test_at_one_token_the_step_reads_the_active_weights():
    view = widgets.render("moe-experts", {"model": "mixtral-8x7b", "batch": 1, "lang": "en"})
    v = values(view)
    assert MIXTRAL_ACTIVE_BYTES == 25_497_174_016
    assert v["weights"] == pytest.approx(MIXTRAL_ACTIVE_BYTES / 1e9, rel=1e-5)
    assert v["touched"] == 2 and v["expected"] == 2 and v["picks"] == 2 and v["repeats"] == 0
    assert view["outputs"]["weights_scale"]["text"].startswith("batch 1 (the active parameters) 25.50 GB")


def test_the_weights_climb_by_one_expert_for_each_expert_touched():
    # DeepSeek-V3: from the 8 experts of one token to the 222.44 of 64 tokens, each in all 58 MoE layers.
    one, sixty_four = (values(widgets.render("moe-experts", {"batch": b})) for b in (1, 64))
    expected = 256 * (1 - (248 / 256) ** 64)
    assert (sixty_four["weights"] - one["weights"]) * 1e9 == pytest.approx((expected - 8) * DEEPSEEK_EXPERT_BYTES,
                                                                           rel=1e-5)
    # and all of them, the total the note gives for scale, lie the 33.56 experts not touched further on
    assert (sixty_four["weights_scale"] - sixty_four["weights"]) * 1e9 == pytest.approx(
        (256 - expected) * DEEPSEEK_EXPERT_BYTES, rel=1e-4)
    view = widgets.render("moe-experts", {"lang": "en"})
    assert "2,554,331,136 parameters × 1 byte (FP8) = 2.554 GB" in view["derivations"]["weights"]


def test_the_curve_shows_the_expectation_the_naive_line_and_the_sample():
    view = widgets.render("moe-experts", {"lang": "en"})
    figure = view["figures"]["curve"]
    data = {trace["name"]: trace for trace in figure["data"]}
    assert list(data) == ["naive: min(1, B·k/E)", "expected, uniform routing", "this sample"]
    expected = data["expected, uniform routing"]
    assert expected["x"][0] == 1 and expected["x"][-1] == 1_024 and 64 in expected["x"]
    assert expected["y"][expected["x"].index(64)] == pytest.approx(1 - (248 / 256) ** 64, abs=1e-5)
    naive = data["naive: min(1, B·k/E)"]
    assert naive["line"]["dash"] == "dash"
    assert 32 in naive["x"] and naive["y"][naive["x"].index(32)] == 1  # 32 x 8 = 256: every expert, naively
    assert naive["y"][naive["x"].index(16)] == 0.5
    assert data["this sample"]["x"] == [64] and data["this sample"]["y"] == [round(values(view)["touched"] / 256, 5)]
    layout = figure["layout"]
    assert layout["xaxis"]["type"] == "log" and layout["xaxis"]["dtick"] == 1
    assert figure["alt"].startswith("Share of the experts of one MoE layer of DeepSeek-V3 touched")
    assert "64 tokens: expected 86.9%, naive 100%" in figure["alt"]


def test_skew_changes_the_sample_only_and_a_note_says_so():
    uniform = widgets.render("moe-experts", {"batch": 256, "lang": "en"})
    zipf = widgets.render("moe-experts", {"batch": 256, "skew": "1", "lang": "en"})
    assert zipf["flags"]["skewed"] and widgets.render("moe-experts", {"skew": "0.5"})["flags"]["skewed"]
    for name in ("expected", "picks", "weights"):
        assert values(zipf)[name] == values(uniform)[name]
    # Popular experts draw more picks: fewer touched, a busier busiest (this seed; any seed, in expectation).
    assert values(zipf)["touched"] < values(uniform)["touched"]
    assert values(zipf)["busiest"] > values(uniform)["busiest"]
    assert "uniform routing" in moe_experts.TEXT["en"]["note"] and "OUR CHOICE" in moe_experts.TEXT["en"]["note"]


def test_the_batch_slider_stops_at_the_lessons_batches():
    control = moe_experts.WIDGET.control("batch")
    assert control.min == 1 and control.max == 512
    for b in (1, 8, 64, 256):
        assert b in control.stops()


def test_a_small_layer_writes_each_experts_load():
    view = widgets.render("moe-experts", {"model": "mixtral-8x7b", "batch": 8})
    root = check_responsive(view["svg"]["grid"])["wide"]
    written = [int(t.text) for t in root.iter(f"{SVG}text") if (t.text or "").isdigit()
               and t.get("text-anchor") == "middle"]
    loads = routing.route(8, 2, 8, 1, 0.0).loads
    assert written == list(loads)


def test_every_control_value_renders():
    for model in moe_experts.MODELS:
        for skew in moe_experts.SKEWS:
            for batch in moe_experts.BATCHES:
                for seed in (1, 20):
                    view = widgets.render("moe-experts", {"model": model, "skew": skew, "batch": batch,
                                                          "seed": seed})
                    assert 0 < view["outputs"]["touched"]["value"] <= presets.model(model).experts.routed
    for lang in ("zh", "en"):
        check_view(widgets.render("moe-experts", {"model": "mixtral-8x7b", "batch": 512, "skew": "1", "lang": lang}))


@pytest.mark.parametrize("state, expected", [
    ({"skew": 1}, {"skew": "1"}),  # a lesson's YAML writes the number
    ({"skew": "2"}, {"skew": "0"}),
    ({"model": "llama-2-70b"}, {"model": "deepseek-v3"}),  # a dense model is no option
    ({"batch": 10**6}, {"batch": 512}),
    ({"batch": 100}, {"batch": 96}),
    ({"batch": "x"}, {"batch": 64}),
    ({"seed": 0}, {"seed": 1}),
    ({"seed": 99}, {"seed": 20}),
])
def test_bad_state_is_clamped_or_replaced(state, expected):
    clean = coerce_state(moe_experts.WIDGET.controls, state)
    for key, value in expected.items():
        assert clean[key] == value
    check_view(widgets.render("moe-experts", state))


def test_both_languages_have_the_same_keys_and_placeholders():
    zh, en = moe_experts.TEXT["zh"], moe_experts.TEXT["en"]
    assert zh.keys() == en.keys()
    for key in zh:
        slots = [{f for _, f, _, _ in string.Formatter().parse(t[key]) if f} for t in (zh, en)]
        assert slots[0] == slots[1], key


def test_the_english_view_has_no_chinese():
    for state in ({}, {"skew": "1"}, {"model": "mixtral-8x7b", "batch": 1}, {"model": "qwen3-30b-a3b", "batch": 512}):
        text = json.dumps(widgets.render("moe-experts", {**state, "lang": "en"}), ensure_ascii=False)
        assert not re.search(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", text), state
