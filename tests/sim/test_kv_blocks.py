"""The kv-blocks widget: where many requests' KV lives, under four allocation policies."""

import json
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import widgets
from sim.kit import config_problems
from sim.page import svg
from sim.page.display import fmt_bytes, fmt_grouped, fmt_sig
from sim.physics import presets
from sim.serving import kv_layout
from sim.widgets import kv_blocks
from tests.sim.test_properties import json_values
from tests.sim.test_widgets import check_view

CHINESE = re.compile(r"[\u2e80-\u9fff\uff00-\uffef]")
SVG = "{http://www.w3.org/2000/svg}"
ANCHOR, H100 = presets.model("qwen3.8-27b"), presets.hardware("h100-sxm")
ANCHOR_WEIGHTS, ANCHOR_KV, ANCHOR_STATE = 55_562_855_904, 65_536, 150_994_944
FREE = int(H100.memory_bytes) - ANCHOR_WEIGHTS  # the H100's memory beside the anchor's whole checkpoint
AT_MAX = FREE // (2048 * ANCHOR_KV + ANCHOR_STATE)  # anchor requests that fit reserving 2,048 tokens each


def values(view: dict) -> dict:
    return {name: out["value"] for name, out in view["outputs"].items()}


def test_default_view_reserves_the_max_length_for_the_anchor_on_an_h100():
    view = widgets.render("kv-blocks", {})
    check_view(view)
    assert view["state"] == {"policy": "contiguous-max", "block_size": 16, "trace": "orca", "model": "qwen3.8-27b",
                             "hardware": "h100-sxm", "prefix_tokens": 0, "samples": 1, "memory_fraction": 1.0,
                             "lang": "zh"}
    v = values(view)
    # (memory - 55,562,855,904 B) // (2,048 x 65,536 B + 150,994,944 B of state)
    assert v["max_requests"] == AT_MAX and v["versus_max"] == 1
    assert v["kv_per_request"] == pytest.approx(2048 * 65_536 / 1e6, rel=1e-5)
    assert v["token_share"] == pytest.approx(15.5908, abs=1e-4)
    assert v["token_share"] + v["reserved_share"] + v["fragmentation_share"] == pytest.approx(100)
    assert v["shared_saving_bytes"] == 0
    assert view["flags"] == {"capacity": False, "block_size_unused": True, "sharing_unused": False,
                             "block_table": False, "copy_on_write": False}
    assert view["outputs"]["token_share"]["text"] == "15.6%"
    d = view["derivations"]
    assert d["max_requests"] == f"⌊可用 {fmt_bytes(FREE)} ÷（每个请求的 KV 134.2 MB + 1 × 递归状态 151.0 MB）⌋ = {AT_MAX}"
    assert d["kv_per_request"] == "每步平均占 2,048 个槽 × 每个 token 65,536 B = 134.2 MB"


def test_paged_blocks_of_16_hold_tokens_in_nearly_all_the_kv_memory():
    view = widgets.render("kv-blocks", {"policy": "paged", "lang": "en"})
    v = values(view)
    paged = kv_layout.fit(ANCHOR, H100, "orca", "paged").max_requests
    assert v["max_requests"] == paged and v["versus_max"] == pytest.approx(paged / AT_MAX, abs=1e-5)
    assert v["token_share"] == pytest.approx(97.7, abs=0.05)
    assert v["waste_per_request_tokens"] < 16  # below one block per sequence
    assert view["outputs"]["versus_max"]["text"] == f"{fmt_sig(paged / AT_MAX)}× what reserving the max length fits"
    assert view["flags"]["block_size_unused"] is False
    assert view["derivations"]["waste_per_request_tokens"].endswith("< block size 16")


@pytest.mark.parametrize("state", [
    {},
    {"policy": "paged", "block_size": 64, "trace": "chat"},
    {"policy": "contiguous-pow2", "model": "qwen3-32b", "hardware": "h200-sxm"},
    {"policy": "paged", "prefix_tokens": 341, "samples": 4, "model": "llama-2-7b", "hardware": "a100-sxm-80gb"},
])
def test_every_readout_is_the_simulators(state):
    view = widgets.render("kv-blocks", state)
    s = view["state"]
    f = kv_layout.fit(presets.model(s["model"]), presets.hardware(s["hardware"]), s["trace"], s["policy"],
                      s["block_size"], s["prefix_tokens"], s["samples"])
    v = values(view)
    assert v["max_requests"] == f.max_requests
    assert v["token_share"] == pytest.approx(f.token_share * 100, rel=1e-5)
    assert v["reserved_share"] == pytest.approx(f.reserved_share * 100, rel=1e-5)
    assert v["fragmentation_share"] == pytest.approx(f.never_used_share * 100, rel=1e-5, abs=1e-9)
    assert v["waste_per_request_tokens"] == pytest.approx(f.usage.empty_slots_per_sequence, rel=1e-5)
    assert v["kv_per_request"] == pytest.approx(f.kv_bytes_per_request / 1e6, rel=1e-5)
    assert v["state_per_sequence"] == pytest.approx(f.state_bytes_per_sequence / 1e6, rel=1e-5)
    assert v["shared_saving_bytes"] == pytest.approx(f.sharing_saving_bytes / 1e9, rel=1e-5, abs=1e-9)


def test_sharing_shows_its_saving_under_paging_and_a_note_under_contiguous():
    paged = widgets.render("kv-blocks", {"policy": "paged", "prefix_tokens": 341, "model": "qwen3-32b"})
    dense = kv_layout.fit(presets.model("qwen3-32b"), H100, "orca", "paged", 16, prefix_tokens=341)
    assert values(paged)["shared_saving_bytes"] == pytest.approx(dense.sharing_saving_bytes / 1e9, rel=1e-5)
    assert 5e9 < dense.sharing_saving_bytes < dense.free_bytes
    assert values(paged)["max_requests"] == dense.max_requests
    assert "前缀末尾的递归状态 0 B" in paged["derivations"]["max_requests"]
    hybrid = widgets.render("kv-blocks", {"policy": "paged", "prefix_tokens": 341, "lang": "en"})
    assert "the recurrent state at its end 151.0 MB" in hybrid["derivations"]["max_requests"]
    contiguous = widgets.render("kv-blocks", {"policy": "contiguous-oracle", "samples": 2})
    assert contiguous["flags"]["sharing_unused"] and values(contiguous)["shared_saving_bytes"] == 0


def test_the_memory_share_the_engine_may_use_is_a_control():
    # issue #23: the lesson's FAQ quotes requests that fit in vLLM's share of the memory
    share = presets.VLLM_MEMORY_FRACTION
    gpu = presets.achieved(H100, memory_fraction=share)
    for policy in ("contiguous-max", "paged"):
        view = widgets.render("kv-blocks", {"policy": policy, "memory_fraction": share, "lang": "en"})
        f = kv_layout.fit(ANCHOR, gpu, "orca", policy)
        assert values(view)["max_requests"] == f.max_requests < kv_layout.fit(ANCHOR, H100, "orca", policy).max_requests
        assert f.free_bytes == int(share * H100.memory_bytes) - ANCHOR_WEIGHTS
        assert f"free {fmt_bytes(f.free_bytes)}" in view["derivations"]["max_requests"]
        bar = drawings(view["svg"]["bar"])[0].get("aria-label")
        assert bar.startswith(f"The {fmt_bytes(gpu.memory_bytes)} of H100's {fmt_bytes(H100.memory_bytes)} the engine "
                              f"may use (a share of {share:.2f}) with {f.max_requests} requests running")
    control = kv_blocks.WIDGET.control("memory_fraction")
    assert control.coerce(share) == share and control.default == 1.0
    assert all("引擎可用" in d.get("aria-label")
               for d in drawings(widgets.render("kv-blocks", {"memory_fraction": 0.5})["svg"]["bar"]))


@pytest.mark.parametrize("samples", [1, 4])
def test_the_saving_of_shared_blocks_never_exceeds_the_free_memory(samples):
    # issue #23: Qwen3-32B, paged, a 512-token prefix showed more memory saved than there was beside the weights
    state = {"policy": "paged", "prefix_tokens": 512, "samples": samples, "model": "qwen3-32b", "lang": "en"}
    view = widgets.render("kv-blocks", state)
    f = kv_layout.fit(presets.model("qwen3-32b"), H100, "orca", "paged", 16, 512, samples)
    unshared = kv_layout.fit(presets.model("qwen3-32b"), H100, "orca", "paged", 16, 512, samples, share=False)
    v = values(view)
    assert v["unshared_requests"] == unshared.max_requests < v["max_requests"]
    assert 0 < v["shared_saving_bytes"] * 1e9 < f.free_bytes
    how = view["derivations"]["shared_saving_bytes"]
    assert f"the {fmt_grouped(unshared.max_requests)} requests that fit even without sharing" in how
    assert how.endswith(f"= {fmt_bytes(f.sharing_saving_bytes)} (so at most the free {fmt_bytes(f.free_bytes)})")
    assert fmt_grouped(unshared.max_requests) in view["derivations"]["unshared_requests"]
    zh = widgets.render("kv-blocks", {**state, "lang": "zh"})
    assert f"最多是可用的 {fmt_bytes(f.free_bytes)}" in zh["derivations"]["shared_saving_bytes"]


@pytest.mark.parametrize("sent, kept", [
    (16, 16), ("16", 16), (20, 16), (23, 32), (22, 16), (0, 1), (-5, 1), (1000, 256), (3, 4), (6, 8), (5.5, 4),
    ("nan", 16), ("lots", 16), (True, 16), (None, 16), ([], 16),
])
def test_block_size_snaps_to_a_power_of_two(sent, kept):
    view = widgets.render("kv-blocks", {"block_size": sent, "policy": "paged"})
    assert view["state"]["block_size"] == kept


def test_the_block_size_slider_steps_through_the_powers_of_two():
    control = kv_blocks.WIDGET.control("block_size")
    assert control.stops() == (1, 2, 4, 8, 16, 32, 64, 128, 256) and control.log
    assert [control.slider_position(v) for v in (1, 16, 256)] == [0, 4, 8]
    assert config_problems(kv_blocks.WIDGET.controls, {"block_size": 32, "policy": "paged"}) == []
    problem = config_problems(kv_blocks.WIDGET.controls, {"block_size": 24})
    assert problem[0].control == "block_size" and "power of two from 1 to 256" in problem[0].message
    assert config_problems(kv_blocks.WIDGET.controls, {"policy": "buddy"})[0].control == "policy"


def drawings(markup: str) -> list[ET.Element]:
    """The wide and the narrow <svg> of a sim/page/svg.py responsive() diagram."""
    layouts = list(ET.fromstring(f"<figure>{markup}</figure>"))
    assert [d.get("class") for d in layouts] == ["layout-wide", "layout-narrow"]
    assert all(len(d) == 1 and d[0].tag == f"{SVG}svg" for d in layouts)
    return [d[0] for d in layouts]


def map_of(view: dict, drawing: int = 0) -> ET.Element:
    return drawings(view["svg"]["map"])[drawing]


def test_the_map_draws_each_state_once_and_outlines_one_request():
    for policy in kv_layout.POLICIES:
        view = widgets.render("kv-blocks", {"policy": policy, "lang": "en"})
        root = map_of(view)
        states = [p.get("data-state") for p in root.iter(f"{SVG}path") if p.get("data-state")]
        assert len(states) == len(set(states)) and set(states) <= set(kv_blocks.MAP_STATES)
        # paged: request 1, as in its block table; contiguous: the reservation drawn first, at slot 0
        snap = kv_layout.trace_snapshot("orca", policy, 16, 0, 1, kv_blocks.WINDOW_SLOTS)
        first = snap.sequence(0) if policy == "paged" else next(p for p in snap.sequences if p.start == 0)
        n = first.request + 1
        outline = [p for p in root.iter(f"{SVG}path") if p.get("data-highlight")]
        assert [p.get("data-highlight") for p in outline] == [f"request-{n}"]
        if policy != "paged":
            assert n != 1  # the oldest request is drawn first, and it is not the trace's first
            assert outline[0].get("d").startswith(f"M{kv_blocks.MAP_LEFT} {kv_blocks.MAP_TOP}h")  # cell 0
        label = root.get("aria-label")
        assert label.startswith("One moment: ") and f"request {n} (outlined) has its KV in" in label
        assert f"request {n} (outlined) has its KV in" in "".join(root.itertext())  # written under the map too
        assert all(t.get("class") in ("svg-label", "svg-muted") for t in root.iter(f"{SVG}text"))
        assert "font-size" not in view["svg"]["map"]
    four = map_of(widgets.render("kv-blocks", {"lang": "en"})).get("aria-label")
    assert "4 requests in the first 8,192 slots" in four and "has its KV in one place" in four
    zh = map_of(widgets.render("kv-blocks", {"lang": "zh"})).get("aria-label")
    assert "连成一整块" in zh and "分在 1 处" not in zh
    paged = map_of(widgets.render("kv-blocks", {"policy": "paged", "lang": "en"})).get("aria-label")
    assert "26 requests in the first 8,192 slots" in paged


def test_the_map_is_small_even_at_its_busiest():
    worst = 0
    for trace in ("orca", "chat"):
        for b in (1, 2, 16, 256):
            for prefix, samples in ((0, 1), (341, 8), (17, 3)):
                markup = widgets.render("kv-blocks", {"policy": "paged", "trace": trace, "block_size": b,
                                                      "prefix_tokens": prefix, "samples": samples})["svg"]["map"]
                worst = max(worst, *(len(ET.tostring(d)) for d in drawings(markup)))
    assert worst < 20_000  # each of its two drawings


def test_the_bar_splits_the_whole_gpu():
    view = widgets.render("kv-blocks", {"policy": "paged", "lang": "en"})
    root = drawings(view["svg"]["bar"])[0]
    widths = {r.get("data-kind"): float(r.get("width")) for r in root.iter(f"{SVG}rect") if r.get("data-kind")}
    assert set(widths) == {"weights", "state", "token", "reserved", "never-used", "free"}
    assert sum(widths.values()) <= kv_blocks.ROW_SLOTS + 0.05
    n, memory = kv_layout.fit(ANCHOR, H100, "orca", "paged").max_requests, H100.memory_bytes
    assert widths["weights"] == pytest.approx(ANCHOR_WEIGHTS / memory * kv_blocks.ROW_SLOTS, abs=0.01)
    assert widths["state"] == pytest.approx(n * ANCHOR_STATE / memory * kv_blocks.ROW_SLOTS, abs=0.01)
    assert root.get("aria-label").startswith(
        f"H100's {fmt_bytes(memory)} with {n} requests running: Weights 55.56 GB; Recurrent state")


def test_with_no_room_for_kv_the_map_and_bar_are_empty_but_drawn():
    empty = kv_blocks.memory_map(kv_layout.snapshot([], "paged", 16, 0), "en")
    assert empty.startswith("<svg") and "No memory is left for KV" in empty and "data-state" not in empty
    half = presets.achieved(presets.hardware("a100-sxm-80gb"), memory_fraction=0.5)
    bar = kv_blocks.memory_bar(kv_layout.fit(presets.model("qwen3-32b"), half, "orca", "paged"), half, "en")
    kinds = re.findall(r'data-kind="([a-z-]+)"', bar)
    assert kinds == ["weights"] and "with 0 requests running" in bar


def test_the_table_sets_the_four_policies_side_by_side():
    view = widgets.render("kv-blocks", {"policy": "contiguous-oracle", "lang": "en"})
    table = view["svg"]["table"]
    rows = re.findall(r'<tr( class="current")? data-policy="([a-z0-9-]+)">', table)
    assert [p for _, p in rows] == list(kv_layout.POLICIES)
    assert [p for current, p in rows if current] == ["contiguous-oracle"]
    for policy in kv_layout.POLICIES:
        fit = kv_layout.fit(ANCHOR, H100, "orca", policy).max_requests
        label = kv_blocks.TEXT["en"]["col.max_requests"]
        assert f'<td class="number" data-label="{label}">{fit}</td></tr>' in table


@pytest.mark.parametrize("state", [
    {},
    {"policy": "paged", "trace": "chat", "prefix_tokens": 341, "samples": 4},
    {"policy": "contiguous-pow2", "model": "llama-2-7b", "hardware": "b200", "block_size": 1},
])
def test_both_languages_render_the_same_numbers_and_english_has_no_chinese(state):
    zh = widgets.render("kv-blocks", {**state, "lang": "zh"})
    en = widgets.render("kv-blocks", {**state, "lang": "en"})
    check_view(en)
    assert en["state"] == {**zh["state"], "lang": "en"}
    assert values(en) == values(zh) and en["flags"] == zh["flags"]
    english = json.dumps([en["outputs"], en["derivations"], en["svg"]], ensure_ascii=False)
    assert not CHINESE.search(english), CHINESE.findall(english)
    assert CHINESE.search(zh["svg"]["map"]) and CHINESE.search(zh["svg"]["table"])


def test_text_blocks_have_the_same_keys_and_placeholders():
    assert set(kv_blocks.TEXT["zh"]) == set(kv_blocks.TEXT["en"])
    for key, zh in kv_blocks.TEXT["zh"].items():
        assert set(re.findall(r"{(\w+)}", zh)) == set(re.findall(r"{(\w+)}", kv_blocks.TEXT["en"][key])), key
    assert not CHINESE.search(" ".join(kv_blocks.TEXT["en"].values()))


def test_the_view_depends_on_the_state_alone():
    state = {"policy": "paged", "block_size": 8, "trace": "chat", "prefix_tokens": 80, "samples": 2}
    first = widgets.render_json("kv-blocks", json.dumps(state))
    kv_layout.trace_usage.cache_clear()
    kv_layout.trace_snapshot.cache_clear()
    assert widgets.render_json("kv-blocks", json.dumps(state)) == first


NAMES = [c.name for c in kv_blocks.WIDGET.controls]
MEANINGFUL = (st.sampled_from(NAMES + list(kv_layout.POLICIES) + ["orca", "chat", "en", "qwen3-32b", "b200"])
              | st.integers(-10, 10**4))


@settings(max_examples=120, deadline=None)
@given(st.dictionaries(st.sampled_from(NAMES + ["changed", "lang"]), json_values | MEANINGFUL, max_size=9))
def test_random_states_render(state):
    view = widgets.render("kv-blocks", state)
    check_view(view)
    assert set(view["state"]) == set(NAMES) | {"lang"}
    assert widgets.render("kv-blocks", view["state"])["state"] == view["state"]
    assert view["state"]["block_size"] in kv_layout.BLOCK_SIZES


# --- the block table and copy-on-write pictures ------------------------------------------------------------------

def boxes(markup: str) -> list[ET.Element]:
    """The blocks a picture draws, each with its logical and physical number and its refcount."""
    return [r for r in ET.fromstring(markup).iter(f"{SVG}rect") if r.get("data-logical") is not None]


def snapshot_of(view: dict) -> kv_layout.Snapshot:
    s = view["state"]
    m, hw = presets.model(s["model"]), presets.hardware(s["hardware"])
    return kv_layout.trace_snapshot(s["trace"], s["policy"], s["block_size"], s["prefix_tokens"], s["samples"],
                                    min(kv_blocks.WINDOW_SLOTS, kv_layout.budget_slots(m, hw)))


@pytest.mark.parametrize("state", [
    {"policy": "paged"},
    {"policy": "paged", "block_size": 1},  # hundreds of entries: the first ones, an ellipsis, the last ones
    {"policy": "paged", "block_size": 256, "trace": "chat"},
    {"policy": "paged", "prefix_tokens": 341, "samples": 3},
])
def test_the_block_table_is_request_ones_blocks_in_the_snapshot(state):
    view = widgets.render("kv-blocks", {**state, "lang": "en"})
    assert view["flags"]["block_table"] is True
    snap = snapshot_of(view)
    seq = snap.sequence(0, 0)
    drawn = boxes(view["svg"]["blocks"])
    assert drawn and len(drawn) <= kv_blocks.TABLE_HEAD + kv_blocks.TABLE_TAIL + 1
    for box in drawn:
        logical, physical = int(box.get("data-logical")), int(box.get("data-physical"))
        assert seq.blocks[logical] == physical
        assert int(box.get("data-refcount")) == snap.refcounts[physical]
    label = ET.fromstring(view["svg"]["blocks"]).get("aria-label")
    logicals = [int(b.get("data-logical")) for b in drawn]
    if len(seq.blocks) > len(drawn):  # the first ones and the last ones, the rest counted in the ellipsis
        assert logicals == [*range(kv_blocks.TABLE_HEAD), *range(len(seq.blocks) - kv_blocks.TABLE_TAIL,
                                                                   len(seq.blocks))]
        left_out = len(seq.blocks) - kv_blocks.TABLE_HEAD - kv_blocks.TABLE_TAIL
        assert f">+{fmt_grouped(left_out)}<" in view["svg"]["blocks"]
        assert f"{fmt_grouped(left_out)} blocks in between left out" in label
    else:
        assert logicals == list(range(len(seq.blocks)))
    root = ET.fromstring(view["svg"]["blocks"])
    assert label.startswith(f"Request 1's block table, logical block → physical block, {len(seq.blocks)} logical")
    assert f": 0 → {fmt_grouped(seq.blocks[0])}" in label
    assert f"{len(seq.blocks) - 1} → {fmt_grouped(seq.blocks[-1])}" in label
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert all(fmt_grouped(n) in texts for n in (int(b.get("data-physical")) for b in drawn))


def test_the_copy_on_write_picture_of_parallel_samples():
    view = widgets.render("kv-blocks", {"policy": "paged", "samples": 4, "lang": "en"})
    assert view["flags"]["copy_on_write"] is True
    snap = snapshot_of(view)
    drawn = boxes(view["svg"]["cow"])
    tables = [kv_layout.block_table(snap, 0, k) for k in range(4)]
    part = next(e.logical for e in tables[0] if e.copied)
    by_column = {}
    for box in drawn:
        by_column.setdefault(int(box.get("data-logical")), []).append(box)
    # the first and the last shared block (or every one of up to three), then the block where they part
    assert sorted(by_column) == ([0, part - 1, part] if part > 3 else list(range(part + 1)))
    assert all(len(col) == 4 for col in by_column.values())  # one row per sample
    for logical, column in by_column.items():
        physical = [int(b.get("data-physical")) for b in column]
        assert physical == [t[logical].physical for t in tables]
        assert [int(b.get("data-refcount")) for b in column] == [snap.refcounts[n] for n in physical]
        if logical < part:  # a shared block: the same memory in every row, mapped by the four samples
            assert len(set(physical)) == 1 and snap.refcounts[physical[0]] == 4
            assert {b.get("data-kind") for b in column} == {"shared"}
        else:  # where each parted: a copy of its own
            assert len(set(physical)) == 4 and {b.get("data-kind") for b in column} == {"copied"}
    label = ET.fromstring(view["svg"]["cow"]).get("aria-label")
    r = kv_layout.trace_requests("orca")[0]
    assert label.startswith("Request 1's 4 samples: logical blocks 0–")
    assert f"each mapped by 4 sequences; sample 1 copied {r.prompt % 16} shared tokens into physical block " \
           f"{fmt_grouped(tables[0][part].physical)}" in label


def test_the_copy_on_write_picture_of_a_shared_prefix():
    for lang in ("en", "zh"):
        view = widgets.render("kv-blocks", {"policy": "paged", "prefix_tokens": 341, "model": "qwen3-32b",
                                            "lang": lang})
        snap = snapshot_of(view)
        drawn = boxes(view["svg"]["cow"])
        rows = min(kv_blocks.COW_ROWS, snap.requests)
        columns = {int(b.get("data-logical")) for b in drawn}
        assert columns == {0, 20, 21}  # the first and last of the prefix's 21 full blocks, and the copy
        assert len(drawn) == 3 * rows
        copies = [b for b in drawn if b.get("data-logical") == "21"]
        assert [int(b.get("data-physical")) for b in copies] == [kv_layout.block_table(snap, i)[21].physical
                                                                 for i in range(rows)]
        assert all(b.get("data-kind") == "copied" and b.get("data-refcount") == "1" for b in copies)
        shared = [b for b in drawn if b.get("data-logical") == "0"]
        assert {b.get("data-refcount") for b in shared} == {str(len(snap.sequences))}
    label = ET.fromstring(view["svg"]["cow"]).get("aria-label")
    assert f"逻辑块 0–20 在每一行都是同样的物理块，每块 {len(snap.sequences)} 个序列共用" in label
    assert "请求 1把 5 个共享的 token 复制进物理块" in label


def test_a_prefix_on_a_block_boundary_copies_nothing():
    view = widgets.render("kv-blocks", {"policy": "paged", "prefix_tokens": 64, "lang": "en"})
    assert {b.get("data-kind") for b in boxes(view["svg"]["cow"]) if b.get("data-logical") == "4"} == {"own"}
    assert "the shared part ends on a block boundary, so nothing is copied" in view["svg"]["cow"]


def test_contiguous_reservations_have_neither_picture():
    for policy in kv_layout.CONTIGUOUS:
        view = widgets.render("kv-blocks", {"policy": policy, "samples": 2, "lang": "en"})
        assert view["flags"]["block_table"] is False and view["flags"]["copy_on_write"] is False
        assert boxes(view["svg"]["blocks"]) == [] == boxes(view["svg"]["cow"])
        assert "Contiguous reservations have no block table" in view["svg"]["blocks"]
    lone = widgets.render("kv-blocks", {"policy": "paged", "lang": "en"})  # nothing shared: the panel is hidden
    assert lone["flags"]["copy_on_write"] is False and boxes(lone["svg"]["cow"]) == []


@pytest.mark.parametrize("state", [
    {"policy": "paged", "samples": 8, "prefix_tokens": 17, "trace": "chat"},
    {"policy": "paged", "block_size": 1, "prefix_tokens": 341},
    {"policy": "paged", "block_size": 256, "samples": 2, "model": "llama-2-7b", "hardware": "a100-sxm-80gb"},
])
def test_the_pictures_fit_a_phone_and_say_the_same_in_both_languages(state):
    zh, en = (widgets.render("kv-blocks", {**state, "lang": lang}) for lang in ("zh", "en"))
    for name in ("blocks", "cow"):
        assert [dict(b.attrib) for b in boxes(zh["svg"][name])] == [dict(b.attrib) for b in boxes(en["svg"][name])]
        assert boxes(en["svg"][name])
        for view in (zh, en):
            root = ET.fromstring(view["svg"][name])
            width = float(root.get("viewBox").split()[2])
            assert width <= 290 and root.get("class") == "kv-blocks"  # within a phone's column: never scaled down
            assert {t.get("class") for t in root.iter(f"{SVG}text")} <= {"svg-label", "svg-muted", "svg-value"}
            assert "font-size" not in view["svg"][name] and not re.search(r"#[0-9a-fA-F]{3,8}\b", view["svg"][name])
        assert not CHINESE.search(en["svg"][name]) and CHINESE.search(zh["svg"][name])
    assert len(boxes(en["svg"]["cow"])) <= kv_blocks.COW_ROWS * 4


def slots(root: ET.Element) -> dict[str, int]:
    """Slots the map draws in each state, and in request 1's outline: the widths of its rectangles."""
    out = {}
    for p in root.iter(f"{SVG}path"):
        name = p.get("data-state") or p.get("data-highlight")
        if name:
            out[name] = sum(int(w) for w in re.findall(r"h(\d+)v", p.get("d")))
    return out


@pytest.mark.parametrize("state", [
    {}, {"lang": "en", "policy": "paged"}, {"policy": "contiguous-pow2", "trace": "chat"},
    {"lang": "en", "policy": "paged", "model": "qwen3-32b", "prefix_tokens": 341},
    {"policy": "paged", "block_size": 256, "samples": 4, "hardware": "b200"},
])
def test_the_map_and_the_bar_have_phone_drawings_of_every_slot_and_word(state):
    view = widgets.render("kv-blocks", state)
    lang = view["state"]["lang"]
    for name in ("map", "bar"):
        wide, narrow = drawings(view["svg"][name])
        _, _, width, _ = (float(v) for v in narrow.get("viewBox").split())
        assert width <= 300  # about a 375 px phone's frame, so that its 11 px text is drawn at 11 px or more
        assert narrow.get("aria-label") == wide.get("aria-label")
        texts = [[(t.text, t.get("class")) for t in d.iter(f"{SVG}text")] for d in (wide, narrow)]
        for text, css in texts[1]:  # every line fits, at the kit's 13 px (svg-label) or 11 px (svg-muted)
            assert svg.text_width(text, 13 if css == "svg-label" else 11) <= width - 2 * kv_blocks.MAP_LEFT
        # the same words, some wrapped onto two lines; the map's scale says its rows are shorter
        joiner = " " if lang == "en" else ""
        scale = kv_blocks.TEXT[lang]["map.scale"]
        expected = joiner.join(t for t, _ in texts[0]).replace(
            scale.format(row=kv_blocks.ROW_SLOTS, cell=16), scale.format(row=kv_blocks.NARROW_ROW_SLOTS, cell=16))
        assert joiner.join(t for t, _ in texts[1]) == expected
    wide, narrow = drawings(view["svg"]["map"])
    assert slots(narrow) == slots(wide) and slots(wide)  # every slot in every state, and request 1's outline
    assert len(narrow.findall(f".//{SVG}path[@data-state]")) == len(wide.findall(f".//{SVG}path[@data-state]"))
    wide, narrow = drawings(view["svg"]["bar"])
    bars = [[(r.get("data-kind"), float(r.get("width"))) for r in d.iter(f"{SVG}rect") if r.get("data-kind")]
            for d in (wide, narrow)]
    scale = kv_blocks.NARROW_ROW_SLOTS / kv_blocks.ROW_SLOTS
    assert [(k, pytest.approx(w * scale, abs=0.01)) for k, w in bars[0]] == bars[1]


def test_wrap_breaks_evenly_at_spaces_or_chinese_punctuation():
    def measure(line):
        return len(line)
    assert svg.wrap("a pixel per slot", 40, measure) == ["a pixel per slot"]
    # two lines either way; balanced rather than one word alone on the second
    assert svg.wrap("request 1 (outlined) has its KV in one place", 40, measure) == [
        "request 1 (outlined)", "has its KV in one place"]
    assert svg.wrap("H100 的 85.52 GB 显存：跑 105 个请求时", 20, measure) == ["H100 的 85.52 GB 显存：", "跑 105 个请求时"]
    assert svg.wrap("a verylongwordindeed b", 8, measure) == ["a", "verylongwordindeed", "b"]
