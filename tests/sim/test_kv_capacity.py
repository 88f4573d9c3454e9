"""The kv-capacity widget: KV bytes of a batch beside the weights, and where memory runs out."""

import dataclasses
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import widgets
from sim.page import svg
from sim.physics import memory, presets
from sim.widgets import kv_capacity
from tests.sim.test_properties import json_values
from tests.sim.test_widgets import check_responsive, check_view

LLAMA_RESIDENT_PARAMS = 6_738_415_616  # matmul 6,607,077,376 + embedding 131,072,000 + norms 266,240
ANCHOR_RESIDENT_BYTES = 55_562_855_904
ANCHOR_STATE = 48 * 48 * 128 * 128 * 4  # 48 Gated DeltaNet layers, 48 value heads of 128 x 128, FP32
# Memory as the device reports it: an A100 80GB shows 81,920 MiB = 81,920 x 2^20 = 85,899,345,920 B (80 GiB),
# an H100 81,559 MiB = 85,520,809,984 B. The datasheets' "80 GB" is 80 x 10^9 B.
A100_BYTES = 81_920 * 2**20
H100_BYTES = 81_559 * 2**20


CHINESE = re.compile(r"[\u2e80-\u9fff\uff00-\uffef]")


def values(view: dict) -> dict:
    return {name: out["value"] for name, out in view["outputs"].items()}


def test_llama_2_7b_2048_tokens_batch_32_is_the_reference_34_gb():
    view = widgets.render("kv-capacity", {})
    check_view(view)
    assert view["state"] == {"model": "llama-2-7b", "layers": 32, "kv_heads": 32, "head_dim": 128, "weights_gb": 13,
                             "kv_dtype": "bf16", "tokens": 2048, "batch": 32, "hardware": "a100-sxm-80gb",
                             "memory_fraction": 1, "lang": "zh"}
    v = values(view)
    assert v["kv_per_token"] == 524_288
    assert v["kv_total"] == pytest.approx(34.359738368, rel=1e-5)
    assert view["derivations"]["kv_total"].startswith("524,288 B × 2,048 token × 32 = 34,359,738,368 B")
    assert v["state_total"] == 0
    assert v["weights"] == pytest.approx(LLAMA_RESIDENT_PARAMS * 2 / 1e9, rel=1e-5)
    # 85,899,345,920 - 13,476,831,232 - 34,359,738,368 = 38,062,776,320 B left
    assert v["memory_left"] == pytest.approx((A100_BYTES - LLAMA_RESIDENT_PARAMS * 2 - 34_359_738_368) / 1e9, rel=1e-5)
    # 72,422,514,688 // 1,073,741,824 = 67 requests of 2,048 tokens
    assert v["max_batch"] == (A100_BYTES - LLAMA_RESIDENT_PARAMS * 2) // (2048 * 524_288) == 67
    # On the datasheet's 80 x 10^9 B: 66,523,168,768 // 1,073,741,824 = 61.
    a100 = presets.hardware("a100-sxm-80gb")
    datasheet = dataclasses.replace(a100, memory_bytes=a100.datasheet_memory_bytes)
    assert memory.max_batch(presets.model("llama-2-7b"), datasheet, context=2048) == \
        (80_000_000_000 - LLAMA_RESIDENT_PARAMS * 2) // (2048 * 524_288) == 61
    assert view["flags"] == {"capacity": False, "overflow": False}
    assert v["usable_memory"] == 85.8993 and v["gpus_needed"] == 1  # 85,899,345,920 B to 6 significant digits
    assert v["weights_total"] == v["weights"]


def test_fp8_kv_halves_the_cache():
    v = values(widgets.render("kv-capacity", {"kv_dtype": "fp8"}))
    assert v["kv_per_token"] == 262_144
    assert v["kv_total"] == pytest.approx(34.359738368 / 2, rel=1e-5)
    # 72,422,514,688 // 536,870,912 = 134 (123 on the datasheet's 80 x 10^9 B)
    assert v["max_batch"] == (A100_BYTES - LLAMA_RESIDENT_PARAMS * 2) // (2048 * 262_144) == 134


LLAMA_WEIGHTS = LLAMA_RESIDENT_PARAMS * 2  # 13,476,831,232 B


@pytest.mark.parametrize("kv_dtype, fraction, fits", [
    # floor((usable - 13,476,831,232) / (2,048 tokens x KV per token)), KV per token 524,288 B (BF16), 262,144 (FP8);
    # usable = fraction x 85,899,345,920 B, the A100 as it reports itself
    ("fp8", 1.0, 134),  # 72,422,514,688 / 536,870,912 = 134.9
    ("fp8", 0.9, 118),  # 63,832,580,096 / 536,870,912 = 118.9
    ("bf16", 1.0, 67),  # 72,422,514,688 / 1,073,741,824 = 67.4
    ("bf16", 0.9, 59),  # 63,832,580,096 / 1,073,741,824 = 59.4
])
def test_memory_fraction_keeps_the_engine_share_for_the_cache(kv_dtype, fraction, fits):
    view = widgets.render("kv-capacity", {"kv_dtype": kv_dtype, "memory_fraction": fraction})
    v = values(view)
    usable = fraction * A100_BYTES
    per_request = 2048 * {"bf16": 524_288, "fp8": 262_144}[kv_dtype]
    # The readout's value keeps 6 significant digits: 85.8993 (GB) at 1.0, 77.3094 at 0.9.
    assert v["usable_memory"] == round(usable / 1e9, 4) == {1.0: 85.8993, 0.9: 77.3094}[fraction]
    assert v["max_batch"] == int((usable - LLAMA_WEIGHTS) // per_request) == fits
    assert v["memory_left"] == pytest.approx((usable - LLAMA_WEIGHTS - 32 * per_request) / 1e9, rel=1e-5)


def test_at_vllms_default_share_the_derivations_name_the_usable_memory():
    assert presets.VLLM_MEMORY_FRACTION == 0.92
    view = widgets.render("kv-capacity", {"memory_fraction": presets.VLLM_MEMORY_FRACTION})
    assert view["state"]["memory_fraction"] == 0.92
    d = view["derivations"]
    # 0.92 x 85,899,345,920 B = 79,027,398,246.4 B; (79,027,398,246.4 - 13,476,831,232) // 1,073,741,824 = 61
    assert d["usable_memory"] == "0.92 × 85.90 GB = 79.03 GB"
    assert d["memory_left"].startswith("79.03 GB − 13.48 GB − 34.36 GB")
    assert d["max_batch"] == "⌊(79.03 GB − 13.48 GB) ÷ (2,048 × 524,288 B + 0 B)⌋ = 61"


def test_at_vllms_default_share_the_anchor_fits_55_requests():
    state = {"model": "qwen3.8-27b", "hardware": "h100-sxm", "tokens": 4096,
             "memory_fraction": presets.VLLM_MEMORY_FRACTION}
    v = values(widgets.render("kv-capacity", {**state, "batch": 55}))
    # (0.92 x 85,520,809,984 - 55,562,855,904) / (4,096 x 65,536 + 150,994,944)
    # = 23,116,289,281.28 / 419,430,400 = 55.1
    assert v["max_batch"] == (0.92 * H100_BYTES - ANCHOR_RESIDENT_BYTES) // (4096 * 65_536 + ANCHOR_STATE) == 55
    assert not widgets.render("kv-capacity", {**state, "batch": 55})["flags"]["overflow"]
    assert widgets.render("kv-capacity", {**state, "batch": 56})["flags"]["overflow"]


@pytest.mark.parametrize("sent, kept", [("0.9", 0.9), (0.904, 0.9), (0.1, 0.5), (1.5, 1), ("x", 1)])
def test_memory_fraction_is_a_share_from_a_half_to_one(sent, kept):
    assert widgets.render("kv-capacity", {"memory_fraction": sent})["state"]["memory_fraction"] == kept


def test_weights_that_do_not_fit_raise_the_capacity_flag_not_the_overflow():
    view = widgets.render("kv-capacity", {"model": "custom", "weights_gb": 100, "hardware": "a100-sxm-80gb"})
    check_view(view)
    assert view["flags"] == {"capacity": True, "overflow": False}  # a smaller batch would not help
    v = values(view)
    # 100 GB of weights on the 85,899,345,920 B an A100 reports: ceil(100 / 85.90) = 2 GPUs
    assert v["gpus_needed"] == 2 and v["weights_total"] == 100 and v["usable_memory"] == 85.8993
    assert v["max_batch"] == 0
    assert view["derivations"]["max_batch"] == "85.90 GB − 100.0 GB ≤ 0 → 0"


@pytest.mark.parametrize("weights_gb, fraction, capacity, gpus", [
    # usable: 85,899,345,920 B at 1.0, 0.9 x that = 77,309,411,328 B at 0.9
    (80, 1.0, False, 1),
    (80, 0.9, True, 2),  # 80 GB > 77.31 GB usable
    (72, 0.9, False, 1),
    (154, 0.9, True, 2),  # 154 / 77.31 = 1.99
    (155, 0.9, True, 3),  # 155 / 77.31 = 2.005
    (160, 1.0, True, 2),  # 160 / 85.90 = 1.86
])
def test_capacity_counts_the_usable_memory(weights_gb, fraction, capacity, gpus):
    view = widgets.render("kv-capacity", {"model": "custom", "weights_gb": weights_gb, "memory_fraction": fraction,
                                          "batch": 1, "tokens": 1})
    assert view["flags"]["capacity"] is capacity
    assert view["outputs"]["gpus_needed"]["value"] == gpus


def test_no_preset_raises_the_capacity_flag():
    for model in ("llama-2-7b", "qwen3.8-27b", "qwen3-32b"):
        for hardware in ("a100-sxm-80gb", "h100-sxm", "h200-sxm", "b200"):
            assert not widgets.render("kv-capacity", {"model": model, "hardware": hardware})["flags"]["capacity"]


def test_hybrid_anchor_counts_16_kv_layers_and_its_state_apart():
    view = widgets.render("kv-capacity", {"model": "qwen3.8-27b", "hardware": "h100-sxm", "tokens": 4096,
                                          "batch": 71})
    assert view["state"]["layers"] == 16 and view["state"]["kv_heads"] == 4 and view["state"]["head_dim"] == 256
    assert view["state"]["weights_gb"] == 56
    v = values(view)
    assert v["kv_per_token"] == 2 * 16 * 4 * 256 * 2 == 65_536
    assert v["kv_total"] == pytest.approx(65_536 * 4096 * 71 / 1e9, rel=1e-5)
    assert v["state_total"] == pytest.approx(71 * ANCHOR_STATE / 1e9, rel=1e-5)
    assert v["weights"] == pytest.approx(ANCHOR_RESIDENT_BYTES / 1e9, rel=1e-5)
    # Whole checkpoint resident, on the 85,520,809,984 B an H100 reports:
    # (85,520,809,984 - 55,562,855,904) // 419,430,400 = 71. (The reference's "B > 58 no longer fits" is the
    # datasheet's 80 x 10^9 B: (80e9 - 55,562,855,904) // 419,430,400 = 58.)
    assert v["max_batch"] == (H100_BYTES - ANCHOR_RESIDENT_BYTES) // (4096 * 65_536 + ANCHOR_STATE) == 71
    h100 = presets.hardware("h100-sxm")
    datasheet = dataclasses.replace(h100, memory_bytes=h100.datasheet_memory_bytes)
    assert memory.max_batch(presets.model("qwen3.8-27b"), datasheet, context=4096) == 58
    assert not view["flags"]["overflow"]
    past = widgets.render("kv-capacity", {"model": "qwen3.8-27b", "hardware": "h100-sxm", "tokens": 4096,
                                          "batch": 72})
    assert past["flags"]["overflow"] and past["outputs"]["memory_left"]["value"] < 0
    assert past["outputs"]["memory_left"]["text"].startswith("−")


def test_editing_a_field_switches_to_a_plain_custom_transformer():
    view = widgets.render("kv-capacity", {"model": "qwen3.8-27b", "layers": 16, "kv_heads": 8, "head_dim": 256,
                                          "weights_gb": 56, "changed": "kv_heads"})
    assert view["state"]["model"] == "custom" and view["state"]["kv_heads"] == 8
    v = values(view)
    assert v["kv_per_token"] == 2 * 16 * 8 * 256 * 2
    assert v["state_total"] == 0  # a custom model has no recurrent state
    assert v["weights"] == 56


def test_picking_a_preset_fills_its_fields():
    view = widgets.render("kv-capacity", {"model": "qwen3-32b", "layers": 3, "kv_heads": 3, "head_dim": 30,
                                          "weights_gb": 3, "changed": "model"})
    assert {k: view["state"][k] for k in ("layers", "kv_heads", "head_dim", "weights_gb")} == \
        {"layers": 64, "kv_heads": 8, "head_dim": 128, "weights_gb": 66}
    assert view["outputs"]["kv_per_token"]["value"] == 2 * 64 * 8 * 128 * 2


def test_custom_from_a_link_uses_the_fields_as_given():
    view = widgets.render("kv-capacity", {"model": "custom", "layers": 80, "kv_heads": 8, "head_dim": 128,
                                          "weights_gb": 140, "tokens": 8192, "batch": 4})
    v = values(view)
    assert v["kv_per_token"] == 327_680
    # 85,899,345,920 - 140e9 - 10,737,418,240 = -64,838,072,320 B
    assert v["memory_left"] == pytest.approx((A100_BYTES - 140e9 - 327_680 * 8192 * 4) / 1e9, rel=1e-5)
    assert v["max_batch"] == 0
    assert view["flags"] == {"capacity": True, "overflow": False} and v["gpus_needed"] == 2


def test_memory_bar_shows_each_share_and_the_overflow():
    fits = widgets.render("kv-capacity", {})["svg"]["memory"]
    # free: 85,899,345,920 - 13,476,831,232 - 34,359,738,368 = 38,062,776,320 B
    assert fits.startswith('<div class="layout-wide"><svg') and "34.36 GB" in fits and "13.48 GB" in fits and "38.06 GB" in fits
    assert 'fill-opacity="0.25"' not in fits
    over = widgets.render("kv-capacity", {"batch": 100, "lang": "en"})["svg"]["memory"]
    assert "Over by" in over and 'fill-opacity="0.25"' in over
    assert 'data-kind="reserved"' not in fits + over  # at 1.0 the engine may use it all


def test_memory_bar_shows_the_reserved_share_apart():
    # 0.9 of the 85,899,345,920 B an A100 reports: 77,309,411,328 B usable, 8,589,934,592 B reserved
    bar = widgets.render("kv-capacity", {"memory_fraction": 0.9, "lang": "en"})["svg"]["memory"]
    assert 'data-kind="reserved"' in bar and "Reserved (not for the engine) 8.590 GB" in bar
    assert "A100 usable 77.31 GB of 85.90 GB" in bar  # as the readouts print GB
    assert "Free 29.47 GB" in bar  # 77,309,411,328 - 13,476,831,232 - 34,359,738,368 = 29,472,841,728 B
    # Past the usable line the overflow is drawn over the reserved share; the legend still names all of it.
    # 60 requests: 13,476,831,232 + 60 x 1,073,741,824 - 77,309,411,328 = 591,929,344 B over.
    over = widgets.render("kv-capacity", {"memory_fraction": 0.9, "batch": 60, "lang": "en"})["svg"]["memory"]
    assert 'fill-opacity="0.25"' in over and "Over by 591.9 MB" in over and "Reserved (not for the engine) 8.590 GB" in over
    zh = widgets.render("kv-capacity", {"memory_fraction": 0.9})["svg"]["memory"]
    assert "A100 可用 77.31 GB（共 85.90 GB）" in zh and "预留（引擎不用）" in zh


@pytest.mark.parametrize("state", [
    {}, {"batch": 100, "lang": "en"}, {"memory_fraction": 0.9, "batch": 60, "lang": "en"}, {"memory_fraction": 0.9},
    {"memory_fraction": 0.5, "batch": 1},  # the usable line left of the middle: its label starts there
])
def test_memory_bar_is_drawn_for_a_phone_too_with_every_share_and_label(state):
    found = check_responsive(widgets.render("kv-capacity", state)["svg"]["memory"])
    words = {layout: ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
             for layout, root in found.items()}
    kinds = {layout: [r.get("data-kind") for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("data-kind")]
             for layout, root in found.items()}
    assert kinds["narrow"] == kinds["wide"]
    # Every label and legend entry is there (a share too thin to carry its number is named in the legend).
    legend = [w for w in words["wide"] if not w[0].isdigit()]
    assert set(legend) <= set(words["narrow"]) and legend
    # The usable line's label stays inside the phone's drawing (by the widget's own width estimate; the browser
    # test checks every text as drawn).
    width = float(found["narrow"].get("viewBox").split()[2])
    label = next(t for t in found["narrow"].iter("{http://www.w3.org/2000/svg}text") if t.get("y") == "18")
    x, drawn = float(label.get("x")), svg.text_width(label.text, 13)
    start = {"start": x, "end": x - drawn}[label.get("text-anchor")]
    assert 0 <= start and start + drawn <= width, label.text


@pytest.mark.parametrize("state", [
    {},
    {"batch": 100},
    {"model": "qwen3.8-27b", "hardware": "h100-sxm", "tokens": 4096, "batch": 72},  # one past the 71 that fit
    {"model": "custom", "layers": 80, "kv_heads": 8, "head_dim": 128, "weights_gb": 140, "tokens": 8192},
    {"memory_fraction": 0.9, "batch": 60},
])
def test_both_languages_render_the_same_numbers_and_english_has_no_chinese(state):
    zh = widgets.render("kv-capacity", {**state, "lang": "zh"})
    en = widgets.render("kv-capacity", {**state, "lang": "en"})
    check_view(en)
    assert en["state"] == {**zh["state"], "lang": "en"}
    assert en["outputs"] == zh["outputs"] and en["flags"] == zh["flags"]
    english = json.dumps([en["outputs"], en["derivations"], en["svg"]], ensure_ascii=False)
    assert not CHINESE.search(english), CHINESE.findall(english)
    assert CHINESE.search(zh["svg"]["memory"]) and CHINESE.search(zh["derivations"]["kv_per_token"])


def test_text_blocks_have_the_same_keys():
    assert set(kv_capacity.TEXT["zh"]) == set(kv_capacity.TEXT["en"])
    assert not CHINESE.search(" ".join(kv_capacity.TEXT["en"].values()))


@pytest.mark.parametrize("state", [
    {"tokens": 131_072, "batch": 1_024, "hardware": "b200", "lang": "en"},
    {"tokens": 1, "batch": 1, "model": "custom", "layers": 1, "kv_heads": 1, "head_dim": 16, "weights_gb": 2_000},
    {"layers": "lots", "changed": "layers"},
    {"model": ["x"], "kv_dtype": "int4", "changed": "model"},
])
def test_any_state_gives_a_valid_view(state):
    check_view(widgets.render("kv-capacity", state))


NAMES = [c.name for c in kv_capacity.WIDGET.controls]
MEANINGFUL = st.sampled_from(NAMES + ["custom", "qwen3.8-27b", "bf16", "fp8", "int4", "en"]) | st.integers(-10, 10**7)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(NAMES + ["changed", "lang"]), json_values | MEANINGFUL, max_size=10))
def test_random_states_render(state):
    view = widgets.render("kv-capacity", state)
    check_view(view)
    assert set(view["state"]) == set(NAMES) | {"lang"}
    # The state a view reports is settled: sent back as a link would send it, it comes back unchanged.
    assert widgets.render("kv-capacity", view["state"])["state"] == view["state"]
