"""The tp-step widget: one decode step under tensor parallelism, its parts, its all-reduces and its speed-up, held to
hand computations (sim/physics/parallel.py is what it shows)."""

import json
import re
import string

import pytest

from sim import widgets
from sim.kit.controls import coerce_state
from sim.kit.view import round_sig
from sim.physics import parallel, presets, roofline
from sim.widgets import tp_step
from tests.sim.test_widgets import check_view

LLAMA_70B, H100 = presets.model("llama-2-70b"), presets.hardware("h100-sxm")
H100_BW, H100_PEAK, H100_MEMORY = 3.35e12, 989.5e12, 85_520_809_984  # 81,559 MiB as the device reports it

# Llama-2-70B by hand: hidden 8,192, 80 layers, 64 query heads and 8 K/V heads of 128, MLP 28,672, vocab 32,000.
# One layer's matmul weights: Q and O 8,192², K and V 8,192 x 1,024, gate, up and down 3 x 8,192 x 28,672.
LAYER = 8_192 * (2 * 8_192 + 2 * 1_024) + 3 * 8_192 * 28_672  # 855,638,016
assert LAYER == 855_638_016
# At TP 8 each GPU holds 1/8 of every layer (one K/V head each) and 4,000 of the 32,000 LM-head rows.
TP8_MATMUL_BYTES = 2 * (80 * LAYER // 8 + 4_000 * 8_192)  # 17,178,296,320
TP8_RESIDENT_BYTES = TP8_MATMUL_BYTES + 2 * (4_000 * 8_192 + 161 * 8_192)  # + embedding rows + 161 norms, whole
TP8_KV_PER_TOKEN = 80 * 2 * 1 * 128 * 2  # layers x K,V x 1 head x 128 x 2 bytes = 40,960
MESSAGE = 64 * 8_192 * 2  # batch x hidden x BF16


def values(view: dict) -> dict:
    return {name: out["value"] for name, out in view["outputs"].items()}


def test_the_default_is_llama_2_70b_on_eight_h100s_over_nvlink_by_the_formula():
    view = widgets.render("tp-step", {"lang": "en"})
    check_view(view)
    assert view["state"] == {"model": "llama-2-70b", "gpu": "h100-sxm", "tp": "8", "link": "nvlink",
                             "timing": "formula", "batch": 64, "context": 1024, "lang": "en"}
    v = values(view)
    assert MESSAGE == 1_048_576 and view["outputs"]["message"]["text"] == "1 MiB"
    assert "= 1,048,576 bytes = 1 MiB" in view["derivations"]["message"]
    # Each GPU reads its 1/8 of the weights (memory-bound: 2 x 64 FLOPs per weight is far below the ridge) ...
    matmuls_s = TP8_MATMUL_BYTES / H100_BW
    assert TP8_MATMUL_BYTES == 17_178_296_320 and 2 * 64 * TP8_MATMUL_BYTES / 2 / H100_PEAK < matmuls_s
    assert v["matmuls"] == pytest.approx(matmuls_s * 1e3, rel=1e-5)  # 5.128 ms
    # ... and its one K/V head of each of 64 requests, 1,024 cached tokens and the new one.
    attention_s = 64 * 1_025 * TP8_KV_PER_TOKEN / H100_BW
    assert v["attention"] == pytest.approx(attention_s * 1e3, rel=1e-5)  # 0.802 ms
    # 2 x 80 all-reduces of 1 MiB, each the H100 DGX's floor at 8 GPUs plus 2·7/8 x 1 MiB over 450 GB/s.
    floor = parallel.latency_floor("h100_dgx", 8)
    assert floor == pytest.approx(34e-6)  # the median of its 9 points up to 1 MiB: 19, 23, 29, 31, 34, 35, 36, 37, 39
    all_reduce_s = 160 * (floor + 1.75 * 1_048_576 / 450e9)
    assert v["all_reduce"] == pytest.approx(all_reduce_s * 1e3, rel=1e-5)  # 6.092 ms
    step_s = matmuls_s + attention_s + all_reduce_s
    assert v["step"] == pytest.approx(step_s * 1e3, rel=1e-5)
    assert view["outputs"]["step"]["text"] == "12.02 ms"
    assert v["comm_share"] == pytest.approx(all_reduce_s / step_s, rel=1e-5)
    assert v["per_request"] == pytest.approx(1 / step_s, rel=1e-5)
    assert v["per_gpu"] == pytest.approx(64 / step_s / 8, rel=1e-5)
    assert view["derivations"]["all_reduce"] == (
        "2 × 80 layers × (34.0 µs + 2·7/8 × 1 MiB ÷ 450 GB/s) = 160 × 38.1 µs = 6.09 ms")
    assert view["derivations"]["step"] == (
        "matmuls 5.13 ms + attention and the rest 0.802 ms + all-reduces 6.09 ms = 12.02 ms")


def test_the_speed_up_divides_tp_1s_step_which_is_the_single_gpu_roofline():
    for state in ({}, {"tp": "2", "batch": 7, "context": 3000}, {"model": "qwen3-32b", "gpu": "b200", "tp": "4"},
                  {"model": "llama-2-13b", "gpu": "a100-sxm-80gb", "link": "pcie", "timing": "measured"}):
        s = tp_step.WIDGET.coerce(state)
        m, hw = presets.model(s["model"]), presets.hardware(s["gpu"])
        one = roofline.decode(m, hw, s["batch"], s["context"]).time_s
        v = values(widgets.render("tp-step", {**state, "tp": "1"}))
        assert v["step"] == round_sig(one * 1e3, 6)  # exactly the roofline's, no all-reduce
        assert v["all_reduce"] == 0 and v["speedup"] == 1 and v["efficiency"] == 1
        n = int(s["tp"])
        at = values(widgets.render("tp-step", state))
        assert at["speedup"] * at["step"] == pytest.approx(one * 1e3, rel=2e-5), state
        assert at["efficiency"] == pytest.approx(at["speedup"] / n, rel=2e-5)


def test_fits_is_max_batch_on_the_chosen_degree():
    # Each of 8 H100s holds its 17.25 GB of the checkpoint; each request of 1,024 tokens 41.9 MB of K/V on each.
    assert TP8_RESIDENT_BYTES == parallel.memory_per_gpu(LLAMA_70B, 8, 0, 1024)
    assert (H100_MEMORY - TP8_RESIDENT_BYTES) // (1_024 * TP8_KV_PER_TOKEN) == 1_627
    view = widgets.render("tp-step", {"lang": "en"})
    assert values(view)["fits"] == 1_627 == parallel.max_batch(LLAMA_70B, H100, 8, 1024)
    assert view["derivations"]["fits"] == "⌊(85.52 GB − 17.25 GB of weights per GPU) ÷ 41.94 MB of KV per request " \
                                          "per GPU⌋ = 1,627"
    for model in tp_step.MODELS:
        for gpu in presets.hardware_keys():
            for tp in tp_step.DEGREES:
                for context in (128, 4096, 32768):
                    got = values(widgets.render("tp-step", {"model": model, "gpu": gpu, "tp": tp,
                                                            "context": context}))["fits"]
                    assert got == parallel.max_batch(presets.model(model), presets.hardware(gpu), int(tp), context)


def test_as_if_it_fit_is_said_where_the_weights_or_the_batch_do_not_fit():
    # 138 GB of Llama-2-70B weights on one 85.5 GB H100: none fit, and TP 1 (the speed-up's baseline) is as if.
    one = widgets.render("tp-step", {"tp": "1", "lang": "en"})
    assert values(one)["fits"] == 0
    assert one["flags"]["no_weights"] and not one["flags"]["over_batch"] and one["flags"]["tp1"]
    assert not one["flags"]["baseline_no_weights"]  # at TP 1 the warning itself says it
    eight = widgets.render("tp-step", {"lang": "en"})
    assert eight["flags"]["baseline_no_weights"] and not eight["flags"]["no_weights"]
    assert "(TP 1, as if it fit)" in eight["derivations"]["speedup"]
    assert "as if it fit" in tp_step.TEXT["en"]["baseline_no_weights"]
    assert "假设放得下" in tp_step.TEXT["zh"]["baseline_no_weights"]
    # Llama-2-13B on an A100 at 32,768 tokens: 24 requests fit on 8 GPUs, 2 on one; 256 are as if.
    big = widgets.render("tp-step", {"model": "llama-2-13b", "gpu": "a100-sxm-80gb", "batch": 256, "context": 32768,
                                     "lang": "en"})
    assert values(big)["fits"] == 24 and values(big)["fits_one"] == 2
    assert big["flags"]["over_batch"] and big["flags"]["baseline_over_batch"]
    # A batch that fits on both says nothing.
    small = widgets.render("tp-step", {"model": "llama-2-13b", "batch": 8})
    assert not any(small["flags"][f] for f in ("no_weights", "over_batch", "baseline_no_weights",
                                               "baseline_over_batch"))
    assert "as if" not in widgets.render("tp-step", {"model": "llama-2-13b", "batch": 8,
                                                     "lang": "en"})["derivations"]["speedup"]


def test_measured_timing_reads_vidurs_median_and_falls_back_where_none_was_measured():
    # 1 MiB among 8 H100s is a size Vidur measured: 0.034 ms.
    view = widgets.render("tp-step", {"timing": "measured", "lang": "en"})
    assert values(view)["all_reduce"] == pytest.approx(160 * 0.034, rel=1e-9)
    assert not view["flags"]["no_measured"]
    assert view["derivations"]["all_reduce"] == (
        "2 × 80 layers × 34.0 µs (Vidur's median for 1 MiB among 8 GPUs of h100_dgx) = 5.44 ms")
    # A B200 and PCIe have no measured curve: the formula, whichever timing is chosen, and a note says so.
    for state in ({"gpu": "b200"}, {"link": "pcie"}, {"gpu": "a100-sxm-80gb", "link": "pcie"}):
        formula = widgets.render("tp-step", state)
        measured = widgets.render("tp-step", {**state, "timing": "measured"})
        assert formula["flags"]["no_measured"] and measured["flags"]["no_measured"]
        assert formula["outputs"] == measured["outputs"]
    # PCIe: Gen5 on the H100, 63.0 GB/s each way, and the floor of Vidur's 4 H100 NVL GPUs.
    pcie = widgets.render("tp-step", {"link": "pcie", "lang": "en"})
    bandwidth = 16 * 32e9 * 128 / 130 / 8
    ar = 160 * (parallel.latency_floor("h100_pairwise_nvlink", 4) + 1.75 * MESSAGE / bandwidth)
    assert values(pcie)["all_reduce"] == pytest.approx(ar * 1e3, rel=1e-5)
    assert pcie["outputs"]["link_used"]["text"] == "PCIe 5, 63.0 GB/s each way"
    a100 = widgets.render("tp-step", {"link": "pcie", "gpu": "a100-sxm-80gb", "lang": "en"})
    assert a100["outputs"]["link_used"]["text"] == "PCIe 4, 31.5 GB/s each way"


def test_at_tp_1_the_link_and_the_timing_move_only_the_other_degrees_bars():
    view = widgets.render("tp-step", {"tp": "1"})
    assert view["flags"]["tp1"] and not view["flags"]["no_measured"]
    readouts = ("step", "matmuls", "attention", "all_reduce", "message", "comm_share", "speedup", "efficiency",
                "per_request", "per_gpu", "fits")
    views = [widgets.render("tp-step", {"tp": "1", "link": link, "timing": timing})
             for link in tp_step.LINKS for timing in parallel.TIMINGS]
    assert all({k: v["outputs"][k] for k in readouts} == {k: view["outputs"][k] for k in readouts} for v in views)
    bars = [v["figures"]["figure"]["data"][2]["y"] for v in views]  # the all-reduce segments
    assert all(b[0] == 0 for b in bars) and len({tuple(b[1:]) for b in bars}) == 3  # PCIe: the same either timing


def test_the_figure_stacks_every_degree_and_highlights_the_chosen_one():
    view = widgets.render("tp-step", {"tp": "4", "lang": "en"})
    figure = view["figures"]["figure"]
    assert [trace["name"] for trace in figure["data"]] == ["matmuls", "attention and the rest", "all-reduces"]
    assert all(trace["x"] == ["TP 1", "TP 2", "TP 4", "TP 8"] for trace in figure["data"])
    assert figure["data"][0]["marker"]["opacity"] == [0.45, 0.45, 1.0, 0.45]
    for i, tp in enumerate(tp_step.DEGREES):
        at = values(widgets.render("tp-step", {"tp": tp}))
        total = sum(trace["y"][i] for trace in figure["data"])
        assert total == pytest.approx(at["step"], rel=1e-4)
        assert figure["data"][2]["y"][i] == pytest.approx(at["all_reduce"], rel=1e-4)
    # TP 1 of Llama-2-70B does not fit an H100: hatched, and the text alternative says so.
    assert figure["data"][0]["marker"]["pattern"]["shape"] == ["/", "", "", ""]
    assert figure["alt"].startswith("Step time of Llama-2-70B on H100, batch 64, context 1,024 (ms): TP 1 47.44 ms")
    assert "(as if it fit)" in figure["alt"].split(";")[0]
    assert "TP 8 12.02 ms" in figure["alt"]


def test_a_refused_split_is_flagged_not_raised(monkeypatch):
    real = parallel.decode

    def refuse_8(m, hw, n, *args, **kwargs):
        if n == 8:
            raise ValueError("tensor parallel 8 does not divide the model's query heads")
        return real(m, hw, n, *args, **kwargs)

    monkeypatch.setattr(parallel, "decode", refuse_8)
    view = widgets.render("tp-step", {"lang": "en"})
    check_view(view)
    assert view["flags"]["refused"] and view["outputs"]["step"]["text"] == "—"
    assert view["figures"]["figure"]["data"][0]["y"][3] is None
    assert "TP 8 does not split this model" in view["figures"]["figure"]["alt"]
    assert not widgets.render("tp-step", {"tp": "4"})["flags"]["refused"]


def test_every_model_and_degree_splits_and_every_state_renders():
    for model in tp_step.MODELS:
        for tp in tp_step.DEGREES:
            parallel.shard(presets.model(model), int(tp))  # raises if a degree does not divide the model
    for model in tp_step.MODELS:
        for gpu in presets.hardware_keys():
            for tp in tp_step.DEGREES:
                for link in tp_step.LINKS:
                    for timing in parallel.TIMINGS:
                        for batch, context in ((1, 128), (256, 32768)):
                            view = widgets.render("tp-step", {"model": model, "gpu": gpu, "tp": tp, "link": link,
                                                              "timing": timing, "batch": batch, "context": context})
                            assert not view["flags"]["refused"]
                            assert view["outputs"]["step"]["value"] > 0
    check_view(widgets.render("tp-step", {"model": "qwen3-32b", "gpu": "b200", "tp": "2", "lang": "en"}))


@pytest.mark.parametrize("state, expected", [
    ({"tp": 4}, {"tp": "4"}),  # a lesson's YAML writes the number
    ({"tp": "3"}, {"tp": "8"}),
    ({"model": "gpt-5"}, {"model": "llama-2-70b"}),
    ({"gpu": "tpu"}, {"gpu": "h100-sxm"}),
    ({"link": "infiniband"}, {"link": "nvlink"}),
    ({"timing": "guess"}, {"timing": "formula"}),
    ({"batch": 10**6}, {"batch": 256}),
    ({"batch": "nan"}, {"batch": 64}),
    ({"context": 1}, {"context": 128}),
    ({"context": 10**9}, {"context": 32768}),
])
def test_bad_state_is_clamped_or_replaced(state, expected):
    clean = coerce_state(tp_step.WIDGET.controls, state)
    for key, value in expected.items():
        assert clean[key] == value
    check_view(widgets.render("tp-step", state))


def test_both_languages_have_the_same_keys_and_placeholders():
    zh, en = tp_step.TEXT["zh"], tp_step.TEXT["en"]
    assert zh.keys() == en.keys()
    for key in zh:
        slots = [{f for _, f, _, _ in string.Formatter().parse(t[key]) if f} for t in (zh, en)]
        assert slots[0] == slots[1], key


def test_the_english_view_has_no_chinese():
    for state in ({}, {"tp": "1"}, {"link": "pcie", "timing": "measured"},
                  {"model": "llama-2-13b", "gpu": "a100-sxm-80gb", "batch": 256, "context": 32768}):
        text = json.dumps(widgets.render("tp-step", {**state, "lang": "en"}), ensure_ascii=False)
        assert not re.search(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", text), state
