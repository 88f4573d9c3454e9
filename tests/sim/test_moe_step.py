"""The moe-step widget: one decode step of an MoE model on one GPU against the batch, beside dense models of its active
and total sizes, and the measured MoE block of Qwen3-30B-A3B, held to hand computations and to the shipped profile
(sim/physics/moe.py is what it shows)."""

import json
import math
import re
import string
from pathlib import Path

import pytest

from sim import widgets
from sim.kit.controls import coerce_state
from sim.physics import measured, moe, presets
from sim.widgets import moe_step
from tests.sim.test_widgets import check_view

H100_BW, H100_PEAK, H100_MEMORY = 3.35e12, 989.5e12, 85_520_809_984
RTX_PRO_BW = 1.597e12

# Qwen3-30B-A3B by hand: hidden 2,048, 48 layers, 32 query and 4 K/V heads of 128 (with q/k norms of 128 each),
# 128 routed experts of width 768, 8 a token, vocab 151,936, untied. BF16.
QWEN_ATTENTION = 2_048 * (4_096 + 2 * 512) + 4_096 * 2_048 + 2 * 128  # q, k, v, o and the q/k norms
QWEN_EXPERT = 3 * 2_048 * 768  # 4,718,592
QWEN_ROUTER = 2_048 * 128
QWEN_HEAD = 151_936 * 2_048
QWEN_MATMUL = 48 * (QWEN_ATTENTION + 128 * QWEN_EXPERT + QWEN_ROUTER) + QWEN_HEAD
QWEN_ACTIVE = 48 * (QWEN_ATTENTION + 8 * QWEN_EXPERT + QWEN_ROUTER) + QWEN_HEAD
QWEN_RESIDENT = 2 * (QWEN_MATMUL + QWEN_HEAD + 48 * 2 * 2_048 + 2_048)  # + the embedding, 2 norms a layer, the last
QWEN_KV_PER_TOKEN = 48 * 2 * 4 * 128 * 2  # layers x K,V x heads x 128 x 2 bytes = 98,304
assert QWEN_MATMUL == 30_220_759_040 and QWEN_ACTIVE == 3_041_669_120 and QWEN_RESIDENT == 61_064_245_248

CSV = Path(__file__).resolve().parents[2] / "sim" / "physics" / "data" / "profiles" / \
    "vllm-rtx-pro-6000-qwen3-30b-a3b-dp2-ep2-moe.csv"


def values(view: dict) -> dict:
    return {name: out["value"] for name, out in view["outputs"].items()}


def shipped() -> dict[int, dict[int, float]]:
    """The MoE block's CSV read by hand: tokens -> {activated experts: seconds}."""
    table: dict[int, dict[int, float]] = {}
    for line in CSV.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#") or line.startswith("tokens,"):
            continue
        tokens, experts, us = line.split(",")
        table.setdefault(int(tokens), {})[int(experts)] = float(us) / 1e6
    return table


def test_the_default_is_qwen3_30b_a3b_on_an_h100_at_64_requests():
    view = widgets.render("moe-step", {"lang": "en"})
    check_view(view)
    assert view["state"] == {"model": "qwen3-30b-a3b", "gpu": "h100-sxm", "batch": 64, "context": 1024, "lang": "en"}
    v = values(view)
    share = 1 - (120 / 128) ** 64  # all 64 tokens miss an expert with probability (1 - 8/128)^64
    assert v["touched"] == pytest.approx(share, rel=1e-5) and view["outputs"]["touched"]["text"] == "98.4%"
    assert v["touched_of"] == pytest.approx(128 * share, rel=1e-5)
    # The weights read: every matmul weight but the experts no token touched, 48 layers of each, 2 bytes.
    read = 2 * (QWEN_MATMUL - 48 * 128 * (1 - share) * QWEN_EXPERT)
    assert v["weights"] == pytest.approx(read / 1e9, rel=1e-5)  # 59.51 GB
    # Memory-bound: those weights and 64 requests' 1,025 KV rows over 3.35 TB/s.
    kv = 64 * 1_025 * QWEN_KV_PER_TOKEN
    step = (read + kv) / H100_BW
    assert 2 * 64 * QWEN_ACTIVE / H100_PEAK < read / H100_BW
    assert v["step"] == pytest.approx(step * 1e3, rel=1e-5) and view["outputs"]["step"]["text"] == "19.69 ms"
    assert v["dense_active"] == pytest.approx((2 * QWEN_ACTIVE + kv) / H100_BW * 1e3, rel=1e-5)
    assert v["dense_total"] == pytest.approx((2 * QWEN_MATMUL + kv) / H100_BW * 1e3, rel=1e-5)
    assert v["advantage"] == pytest.approx((2 * QWEN_MATMUL + kv) / (read + kv), rel=1e-5)
    assert view["outputs"]["advantage"]["text"] == "1.01×"
    assert v["per_request"] == pytest.approx(1 / step, rel=1e-5)
    assert view["derivations"]["touched"] == ("1 − (1 − 8/128)^64 = 1 − 0.0161 = 98.4% (125.9 of 128 expected in each "
                                              "MoE layer)")
    assert not any(view["flags"].values())


def test_at_batch_1_the_moe_reads_its_active_weights_and_is_the_active_dense_model():
    for model in moe_step.MODELS:
        v = values(widgets.render("moe-step", {"model": model, "batch": 1}))
        assert v["step"] == v["dense_active"] and v["touched_of"] == presets.model(model).experts.per_token
    mixtral = values(widgets.render("moe-step", {"model": "mixtral-8x7b", "batch": 1}))
    # Mixtral 8x7B, one token: per layer Q and O 4,096², K and V 4,096 x 1,024, 2 of 8 experts of 3 x 4,096 x 14,336,
    # a router of 4,096 x 8; 32 layers and an LM head of 32,000 x 4,096; BF16.
    active = 2 * (32 * (4_096 * (2 * 4_096 + 2 * 1_024) + 2 * 3 * 4_096 * 14_336 + 4_096 * 8) + 32_000 * 4_096)
    assert mixtral["weights"] == pytest.approx(active / 1e9, rel=1e-5)  # 25.50 GB
    qwen = values(widgets.render("moe-step", {"batch": 1}))
    kv = 1_025 * QWEN_KV_PER_TOKEN
    assert qwen["advantage"] == pytest.approx((2 * QWEN_MATMUL + kv) / (2 * QWEN_ACTIVE + kv), rel=1e-5)  # 9.79x


def test_the_advantage_batch_is_the_first_batch_below_2x():
    for state in ({}, {"model": "deepseek-v3"}, {"model": "mixtral-8x7b", "gpu": "b200", "context": 32768},
                  {"model": "qwen3-30b-a3b", "gpu": "rtx-pro-6000", "context": 0}):
        s = moe_step.WIDGET.coerce(state)
        m, hw = presets.model(s["model"]), presets.hardware(s["gpu"])
        view = widgets.render("moe-step", {**state, "lang": "en"})
        first = values(view)["advantage_batch"]

        ratios = [moe.as_dense(m, hw, b, s["context"], "total").time_s / moe.decode(m, hw, b, s["context"]).time_s
                  for b in range(1, first + 1)]
        assert ratios[-1] < 2 and all(r >= 2 for r in ratios[:-1])
        assert view["outputs"]["advantage_batch"]["text"] == f"below 2× first at batch {first}"
    qwen = widgets.render("moe-step", {"lang": "en"})
    assert values(qwen)["advantage_batch"] == 10
    assert qwen["derivations"]["advantage_batch"] == "batch 9: 2.12× ≥ 2×; batch 10: 1.98× < 2×"
    # Beside 2x, the digits that tell the two apart: DeepSeek-V3 is 1.999x at batch 21.
    assert widgets.render("moe-step", {"model": "deepseek-v3", "lang": "en"})["derivations"]["advantage_batch"] \
        .endswith("batch 21: 1.999× < 2×")


def test_fits_counts_the_weights_and_this_batchs_kv():
    # Qwen3-30B-A3B on an H100 at 1,024 tokens: 242 requests fit beside the 61.06 GB of weights.
    assert (H100_MEMORY - QWEN_RESIDENT) // (1_024 * QWEN_KV_PER_TOKEN) == 242
    view = widgets.render("moe-step", {"lang": "en"})
    spare = H100_MEMORY - QWEN_RESIDENT - 64 * 1_024 * QWEN_KV_PER_TOKEN
    assert values(view)["fits"] == pytest.approx(spare / 1e9, rel=1e-5)
    assert view["outputs"]["fits"]["text"] == "fits, 18.01 GB to spare"
    assert view["outputs"]["fits_note"]["text"] == "needs 67.51 GB of 85.52 GB"
    assert values(view)["max_batch"] == 242
    assert view["derivations"]["fits"].endswith("at most 242 requests of this context fit")
    at = widgets.render("moe-step", {"batch": 192})
    past = widgets.render("moe-step", {"batch": 256, "lang": "en"})
    assert not at["flags"]["over_batch"] and past["flags"]["over_batch"] and not past["flags"]["no_weights"]
    assert past["outputs"]["fits"]["text"].startswith("does not fit, ")
    assert "as if it fit" in moe_step.TEXT["en"]["over_batch"] and "假设放得下" in moe_step.TEXT["zh"]["over_batch"]


def test_deepseek_v3_fits_no_single_gpu_and_is_timed_as_if_it_fit():
    # 671 billion parameters in FP8, one byte each, and 64 requests of 1,024 tokens of MLA latent (512 + 64 BF16
    # values a layer, 61 layers).
    kv = 64 * 1_024 * 61 * (512 + 64) * 2
    for gpu in moe_step.GPUS:
        hw = presets.hardware(gpu)
        view = widgets.render("moe-step", {"model": "deepseek-v3", "gpu": gpu, "lang": "en"})
        check_view(view)
        assert view["flags"]["no_weights"] and not view["flags"]["over_batch"]
        resident = values(view)["resident"] * 1e9
        assert resident == pytest.approx(671.03e9, rel=1e-4) and resident > hw.memory_bytes
        assert values(view)["fits"] == pytest.approx((hw.memory_bytes - resident - kv) / 1e9, rel=1e-4)
        assert view["outputs"]["fits"]["text"].startswith("does not fit, ")
        assert values(view)["max_batch"] == 0
    assert "as if it fit" in moe_step.TEXT["en"]["no_weights"] and "假设放得下" in moe_step.TEXT["zh"]["no_weights"]
    view = widgets.render("moe-step", {"model": "deepseek-v3", "lang": "en"})
    assert view["outputs"]["fits"]["text"] == "does not fit, 590.1 GB short"
    # The whole step figure is shaded as if it fit.
    shapes = view["figures"]["steps"]["layout"]["shapes"]
    assert len(shapes) == 1 and shapes[0]["x0"] == 0 and shapes[0]["x1"] == 1


def test_the_step_figure_has_three_curves_the_chosen_batch_and_the_batches_that_do_not_fit():
    view = widgets.render("moe-step", {"batch": 96, "lang": "en"})
    figure = view["figures"]["steps"]
    data = {trace["name"]: trace for trace in figure["data"]}
    assert list(data) == ["MoE", "dense, active size", "dense, total size", "batch chosen"]
    v = values(view)
    assert data["batch chosen"]["x"] == [96] * 3
    assert data["batch chosen"]["y"] == [pytest.approx(v[k], rel=1e-5) for k in ("step", "dense_active",
                                                                                  "dense_total")]
    for name, key in (("MoE", "step"), ("dense, active size", "dense_active"), ("dense, total size", "dense_total")):
        trace = data[name]
        assert trace["x"][0] == 1 and trace["x"][-1] == 1_024
        at_64 = values(widgets.render("moe-step", {"batch": 64}))[key]
        assert trace["y"][trace["x"].index(64)] == pytest.approx(at_64, rel=1e-5)
    layout = figure["layout"]
    assert layout["xaxis"]["type"] == layout["yaxis"]["type"] == "log"
    assert layout["xaxis"]["dtick"] == layout["yaxis"]["dtick"] == 1
    # Past 242 requests of 1,024 tokens Qwen3-30B-A3B does not fit an H100: shaded from 242.5 on.
    (shape,) = layout["shapes"]
    lo, hi = moe_step.X_RANGE
    assert shape["x0"] == pytest.approx((math.log10(242.5) - lo) / (hi - lo), abs=1e-4) and shape["x1"] == 1
    assert figure["alt"].endswith("past batch 242 it does not fit.")
    # Where every batch fits, nothing is shaded.
    assert widgets.render("moe-step", {"gpu": "b200", "context": 0})["figures"]["steps"]["layout"]["shapes"] == []


def test_the_measured_panel_is_the_shipped_profile_beside_its_bound():
    rows = measured.moe_block("rtx-pro-6000-dp2-ep2")
    by_hand = shipped()
    assert by_hand[16][8] == pytest.approx(57.129e-6) and by_hand[16][128] == pytest.approx(817.61e-6)
    for state in ({}, {"model": "deepseek-v3", "gpu": "b200", "batch": 3, "context": 0}):
        view = widgets.render("moe-step", {**state, "lang": "en"})
        data = {trace["name"]: trace for trace in view["figures"]["measured"]["data"]}
        for tokens in moe_step.MEASURED_TOKENS:
            trace = data[f"{tokens:,} tokens"]
            assert trace["x"] == [a for a, _ in rows[tokens]] == sorted(by_hand[tokens])
            assert trace["y"] == [pytest.approx(sec * 1e6) for _, sec in rows[tokens]]
            assert trace["y"] == [pytest.approx(by_hand[tokens][a] * 1e6) for a in trace["x"]]
    # The bound at 16 tokens and 8 experts: the router and 8 experts read once, memory-bound on the RTX PRO 6000.
    view = widgets.render("moe-step", {"lang": "en"})
    bounds = [t for t in view["figures"]["measured"]["data"] if t["name"] == "roofline bound (moe.block)"]
    assert len(bounds) == 4 and [t["showlegend"] for t in bounds] == [True, False, False, False]
    assert bounds[0]["x"][0] == 8 and bounds[0]["x"][-1] == 128
    assert bounds[0]["y"][0] == pytest.approx((8 * QWEN_EXPERT + QWEN_ROUTER) * 2 / RTX_PRO_BW * 1e6, rel=1e-5)
    # The marker: the experts 64 tokens touch in expectation, 128 x (1 - (120/128)^64), on the bound at 64 tokens.
    mark = view["figures"]["measured"]["data"][-1]
    experts = 128 * (1 - (120 / 128) ** 64)
    assert mark["x"] == [pytest.approx(experts, abs=1e-4)]
    tokens_64 = 2 * 64 * (8 * QWEN_EXPERT + QWEN_ROUTER) / 503.8e12
    assert tokens_64 < (experts * QWEN_EXPERT + QWEN_ROUTER) * 2 / RTX_PRO_BW  # memory-bound
    assert mark["y"] == [pytest.approx((experts * QWEN_EXPERT + QWEN_ROUTER) * 2 / RTX_PRO_BW * 1e6, rel=1e-5)]
    assert "64 tokens touch 125.9 experts in expectation" in view["figures"]["measured"]["alt"]
    assert "Qwen3-30B-A3B" in moe_step.TEXT["en"]["measured.caption"]
    assert "LLMServingSim" in moe_step.TEXT["en"]["measured.caption"]
    assert "5daddb2" in moe_step.TEXT["zh"]["measured.caption"]


def test_the_measured_time_follows_the_experts_not_the_tokens():
    rows = shipped()
    # at 8 experts the block takes about the same from 1 to 128 tokens; at 16 tokens, 16 times the experts cost ~14x
    assert max(rows[t][8] for t in (1, 2, 4, 8, 16, 32, 64, 128)) < 1.6 * min(rows[t][8] for t in (1, 2, 4, 8, 16))
    assert rows[16][128] / rows[16][8] > 10


def test_every_control_value_renders():
    for model in moe_step.MODELS:
        for gpu in moe_step.GPUS:
            for batch in (1, 64, 512):
                for context in (0, 1_024, 32_768):
                    view = widgets.render("moe-step", {"model": model, "gpu": gpu, "batch": batch,
                                                       "context": context})
                    assert view["outputs"]["step"]["value"] > 0
    for batch in moe_step.BATCHES:
        for context in moe_step.CONTEXTS:
            assert values(widgets.render("moe-step", {"batch": batch, "context": context}))["step"] > 0
    for lang in ("zh", "en"):
        check_view(widgets.render("moe-step", {"model": "deepseek-v3", "gpu": "rtx-pro-6000", "lang": lang}))


def test_the_gpus_are_the_menus_and_the_measured_one():
    assert moe_step.GPUS == (*presets.hardware_keys(), "rtx-pro-6000")
    assert moe_step.MODELS == tuple(presets.moe_model_keys())
    for b in (1, 8, 64, 256):
        assert b in moe_step.WIDGET.control("batch").stops()


@pytest.mark.parametrize("state, expected", [
    ({"model": "llama-2-70b"}, {"model": "qwen3-30b-a3b"}),
    ({"gpu": "rtx-4090"}, {"gpu": "h100-sxm"}),
    ({"batch": 10**6}, {"batch": 512}),
    ({"batch": 0}, {"batch": 1}),
    ({"context": 1_000}, {"context": 1_024}),
    ({"context": -5}, {"context": 0}),
    ({"context": 10**9}, {"context": 32_768}),
])
def test_bad_state_is_clamped_or_replaced(state, expected):
    clean = coerce_state(moe_step.WIDGET.controls, state)
    for key, value in expected.items():
        assert clean[key] == value
    check_view(widgets.render("moe-step", state))


def test_both_languages_have_the_same_keys_and_placeholders():
    zh, en = moe_step.TEXT["zh"], moe_step.TEXT["en"]
    assert zh.keys() == en.keys()
    for key in zh:
        slots = [{f for _, f, _, _ in string.Formatter().parse(t[key]) if f} for t in (zh, en)]
        assert slots[0] == slots[1], key


def test_the_english_view_has_no_chinese():
    for state in ({}, {"model": "deepseek-v3"}, {"model": "mixtral-8x7b", "gpu": "a100-sxm-80gb", "batch": 512},
                  {"gpu": "rtx-pro-6000", "context": 0}):
        text = json.dumps(widgets.render("moe-step", {**state, "lang": "en"}), ensure_ascii=False)
        assert not re.search(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", text), state
