"""The ep-layout widget: expert parallelism over n GPUs, its experts per GPU, its all-to-alls and its step, held to
hand computations (sim/physics/moe.py is what it shows)."""

import json
import math
import re
import string
import time

import pytest

from sim import widgets
from sim.kit.controls import coerce_state
from sim.kit.view import round_sig
from sim.physics import moe, parallel, presets
from sim.widgets import ep_layout
from tests.sim.test_widgets import check_responsive, check_view

SVG = "{http://www.w3.org/2000/svg}"

DEEPSEEK, MIXTRAL, QWEN = (presets.model(k) for k in ("deepseek-v3", "mixtral-8x7b", "qwen3-30b-a3b"))
H200 = presets.hardware("h200-sxm")
H200_MEMORY = 150_754_820_096  # 143,771 MiB as the device reports it

# DeepSeek-V3 by hand: hidden 7,168; 61 layers, the first 3 dense, so 58 MoE layers; each of 256 routed experts
# (8 per token) and the 1 shared one a SwiGLU of width 2,048: 3 x 7,168 x 2,048 weights, FP8 (1 byte each).
EXPERT_BYTES = 3 * 7_168 * 2_048  # 44,040,192
CHECKPOINT_BYTES = 671_026_419_200  # every weight of the checkpoint, MTP layer included: "671B"
EP8_WEIGHTS = CHECKPOINT_BYTES - (256 - 32) * 58 * EXPERT_BYTES  # each of 8 GPUs drops 224 experts of each layer
KV_4096 = 61 * (512 + 64) * 2 * 4_096  # MLA: a 512 latent and a 64 RoPE key per layer, BF16, 4,096 tokens
# A token's 8 experts all avoid a given other GPU's 32 with C(224, 8) / C(256, 8); 7 other GPUs.
REMOTE = 7 * (1 - math.comb(224, 8) / math.comb(256, 8))
MESSAGE = 32 * 7_168 * 2 * REMOTE  # batch x hidden x BF16 x the GPUs it goes to


def values(view: dict) -> dict:
    return {name: out["value"] for name, out in view["outputs"].items()}


def test_the_default_is_deepseek_v3_on_eight_h200s_over_nvlink():
    view = widgets.render("ep-layout", {"lang": "en"})
    check_view(view)
    assert view["state"] == {"model": "deepseek-v3", "gpu": "h200-sxm", "gpus": "8", "link": "nvlink", "batch": 32,
                             "context": 4096, "lang": "en"}
    assert view["outputs"]["experts_per_gpu"]["text"] == "32 routed + 1 shared"
    assert view["derivations"]["experts_per_gpu"] == "256 routed experts ÷ 8 GPUs = 32 on each GPU, plus 1 shared " \
                                                     "on every GPU"
    assert not any(view["flags"].values())


def test_the_tokens_go_to_the_other_gpus_holding_their_experts():
    assert REMOTE == pytest.approx(4.633, abs=5e-4)  # 1 - 0.3382 of each of the 7
    view = widgets.render("ep-layout", {"lang": "en"})
    v = values(view)
    assert v["remote"] == round_sig(REMOTE, 6) == round_sig(moe.remote_gpus(DEEPSEEK, 8), 6)
    assert view["outputs"]["reached"]["text"] == "66.2% of the other 7"
    assert view["derivations"]["remote"] == "7 × (1 − C(224, 8) ÷ C(256, 8)) = 7 × (1 − 0.3382) = 4.633"
    # Each all-to-all: 32 tokens' 7,168-wide BF16 hidden states to 4.633 GPUs = 2.03 MiB, twice per MoE layer.
    assert v["message"] == round_sig(MESSAGE, 6)
    assert view["outputs"]["message"]["text"] == "2.03 MiB"
    one = parallel.latency_floor("h100_dgx", 8) + MESSAGE / 450e9  # the H200's NVLink: the H100 DGX's floor
    assert parallel.latency_floor("h100_dgx", 8) == pytest.approx(34e-6)
    assert v["all_to_all"] == pytest.approx(one * 1e6, rel=1e-5)
    assert view["outputs"]["all_to_all"]["text"] == "38.7 µs × 116"  # 2 x 58 MoE layers
    assert view["derivations"]["all_to_all"] == ("34.0 µs (floor) + 2.03 MiB ÷ 450 GB/s = 38.7 µs; 2 per MoE layer "
                                                 "(dispatch and combine) × 58 layers = 116")
    assert v["communication"] == pytest.approx(116 * one * 1e3, rel=1e-5)
    assert view["outputs"]["link_used"]["text"] == "NVLink (H200), 450 GB/s each way"


def test_each_gpu_reads_nearly_all_its_experts_and_the_step_adds_the_all_to_alls():
    view = widgets.render("ep-layout", {"lang": "en"})
    v = values(view)
    # 8 GPUs x 32 tokens = 256 tokens through each MoE layer: 32 x (1 - (1 - 8/256)^256) of the 32 experts.
    touched = 32 * (1 - (1 - 8 / 256) ** 256)
    assert v["touched"] == round_sig(touched, 6) and view["outputs"]["touched"]["text"] == "31.99 of 32"
    step = moe.decode_ep(DEEPSEEK, H200, 8, 32, 4096)
    assert v["weights"] == round_sig(step.per_gpu.op("matmuls").bytes / 1e9, 6)
    # The weights read: everything but the routed experts whole, and of these the touched ones.
    whole = step.per_gpu.op("matmuls").bytes - touched * 58 * EXPERT_BYTES
    assert f"{whole / 1e9:.2f} GB read whole + 31.99 experts read × 58 MoE layers × 44.04 MB each" in \
        view["derivations"]["weights"]
    assert v["compute"] == round_sig(step.compute_time_s * 1e3, 6)
    assert v["step"] == pytest.approx(v["compute"] + v["communication"], rel=1e-5)
    assert v["comm_share"] == pytest.approx(v["communication"] / v["step"], rel=1e-5)
    assert v["per_gpu"] == pytest.approx(32 / (v["step"] / 1e3), rel=1e-5)
    assert v["total"] == pytest.approx(8 * v["per_gpu"], rel=1e-5)


def test_memory_per_gpu_at_one_and_at_eight_gpus():
    assert EXPERT_BYTES == 44_040_192 and EP8_WEIGHTS == 98_856_244_736
    eight = widgets.render("ep-layout", {"lang": "en"})
    assert values(eight)["memory"] == round_sig((EP8_WEIGHTS + 32 * KV_4096) / 1e9, 6)
    assert eight["outputs"]["memory"]["text"] == "108.1 GB of 150.8 GB"
    assert values(eight)["fits"] == (H200_MEMORY - EP8_WEIGHTS) // KV_4096 == 180
    assert eight["derivations"]["fits"] == "⌊(150.8 GB − 98.86 GB of weights per GPU) ÷ 287.8 MB of KV per " \
                                           "request⌋ = 180"
    # One GPU holds the whole 671 GB checkpoint: nothing fits, 8 H200s at least (4 hold 180.6 GB each), as if it
    # fit.
    one = widgets.render("ep-layout", {"gpus": "1", "lang": "en"})
    assert values(one)["weights_per_gpu"] == round_sig(CHECKPOINT_BYTES / 1e9, 6)
    assert values(one)["memory"] == round_sig((CHECKPOINT_BYTES + 32 * KV_4096) / 1e9, 6)
    assert values(one)["fits"] == 0 and one["outputs"]["fits"]["text"] == "0: the weights need at least 8 GPUs"
    assert one["flags"]["no_weights"] and not one["flags"]["over_batch"] and one["flags"]["ep1"]
    assert "as if it fit" in ep_layout.TEXT["en"]["no_weights"] and "假设放得下" in ep_layout.TEXT["zh"]["no_weights"]
    assert values(one)["need_gpus"] == 8
    four = widgets.render("ep-layout", {"gpus": "4"})
    four_weights = CHECKPOINT_BYTES - (256 - 64) * 58 * EXPERT_BYTES
    assert four["flags"]["no_weights"] and values(four)["weights_per_gpu"] == round_sig(four_weights / 1e9, 6)
    assert four_weights > H200_MEMORY
    # A batch past what fits beside the weights is timed as if it fit, and says so.
    big = widgets.render("ep-layout", {"batch": 256, "context": 32768})
    assert big["flags"]["over_batch"] and not big["flags"]["no_weights"]
    assert values(big)["fits"] == (H200_MEMORY - EP8_WEIGHTS) // (8 * KV_4096)  # 22 at 32,768 tokens
    # At context 0 no request holds KV: memory limits no batch.
    empty = widgets.render("ep-layout", {"context": 0, "lang": "en"})
    assert empty["outputs"]["fits"]["text"] == "no KV limit (context 0)" and not empty["flags"]["over_batch"]


def test_one_gpu_is_the_single_gpu_step_with_nothing_sent():
    for state in ({}, {"model": "qwen3-30b-a3b", "gpu": "h100-sxm", "batch": 7, "context": 3000},
                  {"model": "mixtral-8x7b", "gpu": "rtx-pro-6000", "link": "pcie"}):
        s = ep_layout.WIDGET.coerce(state)
        m, hw = presets.model(s["model"]), presets.hardware(s["gpu"])
        view = widgets.render("ep-layout", {**state, "gpus": "1", "lang": "en"})
        v = values(view)
        assert v["step"] == round_sig(moe.decode(m, hw, s["batch"], s["context"]).time_s * 1e3, 6)
        assert v["communication"] == 0 and v["remote"] == 0 and v["message"] == 0
        assert view["derivations"]["all_to_all"] == "One GPU: no all-to-all"
        assert v["total"] == v["per_gpu"]


def test_mixtral_takes_at_most_eight_gpus_and_coerces_more_to_eight():
    with pytest.raises(ValueError, match="does not divide"):
        moe.ep_shard(MIXTRAL, 16)
    assert ep_layout.degrees_for(MIXTRAL) == (1, 2, 4, 8)
    assert ep_layout.degrees_for(QWEN) == (1, 2, 4, 8, 16, 32, 64, 128)
    assert ep_layout.degrees_for(DEEPSEEK) == (1, 2, 4, 8, 16, 32, 64, 128, 256)
    for asked in ("16", "256"):
        view = widgets.render("ep-layout", {"model": "mixtral-8x7b", "gpus": asked, "lang": "en"})
        check_view(view)
        assert view["state"]["gpus"] == "8" and view["flags"]["capped"]
        assert view["outputs"]["experts_per_gpu"]["text"] == "1 routed"
        assert values(view) == values(widgets.render("ep-layout", {"model": "mixtral-8x7b", "gpus": "8"}))
    assert not widgets.render("ep-layout", {"model": "mixtral-8x7b", "gpus": "8"})["flags"]["capped"]
    # Top-2 of 8 over 8 GPUs: each other GPU holds one expert, missed with C(7, 2) / C(8, 2) = 3/4.
    v = values(widgets.render("ep-layout", {"model": "mixtral-8x7b", "gpus": "8"}))
    assert v["remote"] == pytest.approx(7 * (1 - 21 / 28))
    assert v["all_to_all"] == pytest.approx(1e6 * (34e-6 + 32 * 4_096 * 2 * 1.75 / 450e9), rel=1e-5)


def test_the_link_is_the_gpus_nvlink_or_its_pcie_and_the_rtx_pro_6000_has_only_pcie():
    pcie = widgets.render("ep-layout", {"link": "pcie", "lang": "en"})
    assert pcie["outputs"]["link_used"]["text"] == "PCIe 5, 63.0 GB/s each way"
    a100 = widgets.render("ep-layout", {"link": "pcie", "gpu": "a100-sxm-80gb", "lang": "en"})
    assert a100["outputs"]["link_used"]["text"] == "PCIe 4, 31.5 GB/s each way"
    floor = parallel.floor_for(parallel.interconnect("pcie-gen5-x16"), 8)
    assert values(pcie)["all_to_all"] == pytest.approx((floor + MESSAGE / (16 * 32e9 * 128 / 130 / 8)) * 1e6,
                                                       rel=1e-5)
    rtx = [widgets.render("ep-layout", {"gpu": "rtx-pro-6000", "link": link}) for link in ep_layout.LINKS]
    assert rtx[0]["flags"]["no_nvlink"] and rtx[0]["outputs"] == rtx[1]["outputs"]
    assert values(rtx[0])["link_used"] == pytest.approx(63.0, abs=0.05)
    assert not pcie["flags"]["no_nvlink"]


def test_the_figure_stacks_every_degree_the_model_takes_and_highlights_the_chosen_one():
    view = widgets.render("ep-layout", {"gpus": "16", "lang": "en"})
    figure = view["figures"]["figure"]
    bars = [trace for trace in figure["data"] if trace["type"] == "bar"]
    assert [trace["name"] for trace in bars] == ["compute", "all-to-alls"]
    assert all(trace["x"] == ["1", "2", "4", "8", "16", "32", "64", "128", "256"] for trace in figure["data"])
    assert bars[0]["marker"]["opacity"][4] == 1.0 and bars[0]["marker"]["opacity"].count(0.45) == 8
    for i, n in enumerate(ep_layout.degrees_for(DEEPSEEK)):
        at = values(widgets.render("ep-layout", {"gpus": str(n)}))
        assert bars[0]["y"][i] + bars[1]["y"][i] == pytest.approx(at["step"], rel=1e-4)
        assert bars[1]["y"][i] == pytest.approx(at["communication"], rel=1e-4)
    # On 1, 2 and 4 H200s the weights do not fit: hatched, and said in words.
    assert bars[0]["marker"]["pattern"]["shape"] == ["/", "/", "/"] + [""] * 6
    assert figure["alt"].startswith("Step time of DeepSeek-V3 on H200, batch 32 per GPU, context 4,096: n = 1 ")
    assert "(as if it fit)" in figure["alt"].split(";")[0] and "(as if it fit)" not in figure["alt"].split(";")[3]
    mixtral = widgets.render("ep-layout", {"model": "mixtral-8x7b"})["figures"]["figure"]
    assert mixtral["data"][0]["x"] == ["1", "2", "4", "8"]


def test_the_figure_layout_stays_the_same_across_moves():
    # Plotly.react of a bar chart whose layout changes costs tens of ms in the page: only the data moves here.
    for lang in ("zh", "en"):
        layouts = [widgets.render("ep-layout", {**state, "lang": lang})["figures"]["figure"]["layout"]
                   for state in ({}, {"gpus": "1"}, {"model": "mixtral-8x7b", "batch": 256},
                                 {"gpu": "b200", "link": "pcie", "context": 0})]
        assert all(layout == layouts[0] for layout in layouts)
        assert layouts[0]["xaxis"]["type"] == "category"


def test_the_diagram_draws_each_gpus_experts_with_its_expected_reads_lit():
    for state in ({}, {"gpus": "1"}, {"gpus": "256", "batch": 1}, {"model": "mixtral-8x7b", "gpus": "4"},
                  {"model": "qwen3-30b-a3b", "gpus": "64", "lang": "en"}):
        view = widgets.render("ep-layout", state)
        s = view["state"]
        m, n = presets.model(s["model"]), int(s["gpus"])
        held = m.experts.routed // n
        found = check_responsive(view["svg"]["layout"])
        for root in found.values():
            paths = {}  # squares (subpaths) by fill
            for path in root.iter(f"{SVG}path"):
                key = path.get("fill") if path.get("fill") != "none" else path.get("stroke")
                paths[key] = paths.get(key, 0) + path.get("d").count("M")
            read, pale = paths.get("var(--sim-weight)", 0), paths.get("var(--sim-weight-fill)", 0)
            assert read + pale == m.experts.routed  # every routed expert, once
            assert paths.get("var(--sim-copied)", 0) == n * m.experts.shared  # a shared copy on every GPU
            assert paths["var(--sim-surface)"] == n  # a box for each GPU
            expected = round(values(view)["touched"])
            assert expected * n <= read <= expected * n + m.experts.per_token  # the outlined token's always lit
            assert paths["var(--sim-ink)"] == m.experts.per_token  # its experts in bold
            arrows = list(root.iter(f"{SVG}polygon"))
            token = ep_layout.expert_order(m.experts.routed)[:m.experts.per_token]
            assert len(arrows) == len({x // held for x in token} - {0})
        assert found["wide"].get("aria-label").startswith(ep_layout.TEXT[s["lang"]]["diagram"])


def test_a_move_renders_in_a_few_milliseconds():
    # The page answers each move with one render; the diagram's frame is cached per model and degree.
    for state in ({}, {"gpus": "256"}, {"model": "qwen3-30b-a3b", "gpus": "1"}):
        widgets.render("ep-layout", state)
        start = time.perf_counter()
        for batch in range(1, 21):
            widgets.render("ep-layout", {**state, "batch": batch})
        assert (time.perf_counter() - start) / 20 < 0.05, state  # about 2-4 ms on the development machine


def test_every_option_renders():
    for model in ep_layout.MODELS:
        for gpu in ep_layout.GPUS:
            for gpus in ep_layout.DEGREES:
                for link in ep_layout.LINKS:
                    for batch, context in ((1, 0), (256, 32768)):
                        view = widgets.render("ep-layout", {"model": model, "gpu": gpu, "gpus": gpus, "link": link,
                                                            "batch": batch, "context": context})
                        assert view["outputs"]["step"]["value"] > 0
    for lang in ("zh", "en"):
        check_view(widgets.render("ep-layout", {"model": "qwen3-30b-a3b", "gpu": "b200", "gpus": "128",
                                                "lang": lang}))


@pytest.mark.parametrize("state, expected", [
    ({"gpus": 16}, {"gpus": "16"}),  # a lesson's YAML writes the number
    ({"gpus": "3"}, {"gpus": "8"}),
    ({"model": "llama-2-70b"}, {"model": "deepseek-v3"}),  # a dense model is not offered
    ({"gpu": "tpu"}, {"gpu": "h200-sxm"}),
    ({"link": "infiniband"}, {"link": "nvlink"}),
    ({"batch": 10**6}, {"batch": 256}),
    ({"batch": "nan"}, {"batch": 32}),
    ({"context": -5}, {"context": 0}),
    ({"context": 10**9}, {"context": 32768}),
])
def test_bad_state_is_clamped_or_replaced(state, expected):
    clean = coerce_state(ep_layout.WIDGET.controls, state)
    for key, value in expected.items():
        assert clean[key] == value
    check_view(widgets.render("ep-layout", state))


def test_both_languages_have_the_same_keys_and_placeholders():
    zh, en = ep_layout.TEXT["zh"], ep_layout.TEXT["en"]
    assert zh.keys() == en.keys()
    for key in zh:
        slots = [{f for _, f, _, _ in string.Formatter().parse(t[key]) if f} for t in (zh, en)]
        assert slots[0] == slots[1], key


def test_the_english_view_has_no_chinese():
    for state in ({}, {"gpus": "1"}, {"model": "mixtral-8x7b", "gpus": "64"}, {"gpu": "rtx-pro-6000"},
                  {"batch": 256, "context": 32768, "gpus": "256"}):
        text = json.dumps(widgets.render("ep-layout", {**state, "lang": "en"}), ensure_ascii=False)
        assert not re.search(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", text), state
