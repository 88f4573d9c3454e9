"""sim/techniques/attention.py: KV per token is DeepSeek-V2's Table 1 for every mechanism, the published designs' figures come
out (OPT-13B's 800 KB, DeepSeek-V3's 576 elements per layer, Qwen3-Next's 24 KiB), GQA spans MQA to MHA, and the
step's attention and state operations are the roofline's."""

from __future__ import annotations

import pytest

from sim import widgets
from sim.physics import cache, presets, roofline
from sim.techniques import attention as at

H100 = presets.hardware("h100-sxm")
KIB = 1024


def test_deepseek_v2_table_1_for_every_mechanism():
    d = at.design("deepseek-v3")  # 61 layers, 128 heads of 128, d_c 512, d_h^R 64
    n_h, d_h, n_l = 128, 128, 61
    assert at.kv_elements_per_token(at.with_mechanism(d, "mha")) == 2 * n_h * d_h * n_l
    assert at.kv_elements_per_token(at.with_mechanism(d, "gqa", kv_heads=8)) == 2 * 8 * d_h * n_l
    assert at.kv_elements_per_token(at.with_mechanism(d, "mqa")) == 2 * d_h * n_l
    assert at.kv_elements_per_token(d) == (512 + 64) * n_l


def test_deepseek_v3_mla_is_576_elements_per_layer_and_68_6_kib_per_token():
    d = at.design("deepseek-v3")
    assert at.kv_elements_per_token_per_layer(d) == 576
    assert at.kv_bytes_per_token(d) / KIB == pytest.approx(68.6, abs=0.05)
    assert at.kv_bytes_per_token(d) / at.mha_bytes_per_token(d) == pytest.approx(576 / 32_768)  # 1.76%


def test_published_designs():
    assert at.kv_bytes_per_token(at.design("opt-13b")) == 800 * KIB  # vLLM §3's "800 KB"
    next_ = at.design("qwen3-next-80b")
    assert next_.kv_layers == 12
    assert at.kv_bytes_per_token(next_) == 24 * KIB
    # the same model with attention in all 48 layers: 96 KiB, four times as much
    assert at.kv_bytes_per_token(at.with_mechanism(next_, "gqa")) == 96 * KIB
    assert at.design("qwen3-32b").mechanism == "gqa" and at.design("qwen3-32b").kv_heads_per_layer == 8


@pytest.mark.parametrize("key", ["opt-13b", "qwen3-32b", "deepseek-v3", "qwen3-next-80b", "qwen3.8-27b"])
def test_gqa_spans_mqa_to_mha(key):
    d = at.design(key)
    assert at.kv_bytes_per_token(at.with_mechanism(d, "gqa", kv_heads=d.q_heads)) == \
        at.kv_bytes_per_token(at.with_mechanism(d, "mha"))
    assert at.kv_bytes_per_token(at.with_mechanism(d, "gqa", kv_heads=1)) == \
        at.kv_bytes_per_token(at.with_mechanism(d, "mqa"))


def test_the_anchor_is_a_hybrid_whose_accounts_match_the_cache_module():
    m = presets.model("qwen3.8-27b")
    d = at.design("qwen3.8-27b")
    assert d.kv_layers == m.full_attention_layers == 16
    assert at.kv_bytes_per_token(d) == cache.kv_bytes_per_token(m)
    assert at.state_bytes_per_request(d) == cache.state_bytes_per_request(m, "fp32")
    assert at.break_even_tokens(d) == 150_994_944 // 65_536 == 2_304
    assert at.bytes_per_request(d, 4096) == 4096 * 65_536 + 150_994_944


@pytest.mark.parametrize("batch, context", [(1, 0), (8, 4096), (256, 32_768)])
def test_the_anchors_attention_and_state_are_the_roofline_decode_operations(batch, context):
    m, d = presets.model("qwen3.8-27b"), at.design("qwen3.8-27b")
    step = roofline.decode(m, H100, batch, context)
    mine = {op.name: op for op in at.decode_ops(d, H100, batch, context)}
    for name in ("attention", "state"):
        assert (mine[name].flops, mine[name].bytes) == (step.op(name).flops, step.op(name).bytes)
    assert at.attention_time_s(d, H100, batch, context) == pytest.approx(
        step.op("attention").time_s + step.op("state").time_s, rel=1e-12)


def test_mla_attention_does_more_arithmetic_per_byte_than_gqa():
    # absorbed MLA: 2 x 128 x (2 x 512 + 64) FLOPs per 1,152 bytes in each layer, near the H100's ridge
    mla = at.decode_ops(at.design("deepseek-v3"), H100, 1, 4096)[0]
    gqa = at.decode_ops(at.design("qwen3-32b"), H100, 1, 4096)[0]
    assert mla.intensity == pytest.approx(2 * 128 * (2 * 512 + 64) / 1152, rel=1e-3)
    assert gqa.intensity == pytest.approx(8, rel=1e-3)  # GQA-8: each K/V byte serves 8 query heads
    assert mla.bound == gqa.bound == "memory"


def test_a_hybrid_keeps_kv_and_a_state_and_more_requests_fit():
    anchor = at.design("qwen3.8-27b")
    all_attention = at.with_mechanism(anchor, "gqa")  # the same 4 K/V heads in every one of its 64 layers
    assert at.kv_bytes_per_token(all_attention) == 4 * at.kv_bytes_per_token(anchor)
    assert at.state_bytes_per_request(all_attention) == 0
    for context in (1024, 32_768, 262_144):
        n = at.max_requests(anchor, 30e9, context)
        assert n * at.bytes_per_request(anchor, context) <= 30e9 < (n + 1) * at.bytes_per_request(anchor, context)
    # short requests: the state dominates and the all-attention model fits more; long ones: the hybrid does
    assert at.max_requests(all_attention, 30e9, 256) > at.max_requests(anchor, 30e9, 256)
    assert at.max_requests(anchor, 30e9, 32_768) > at.max_requests(all_attention, 30e9, 32_768)


def test_a_design_without_a_state_made_hybrid_gets_one_per_query_head():
    opt = at.with_mechanism(at.design("opt-13b"), "hybrid", attention_every=4)
    assert opt.kv_layers == 10 and opt.linear_layers == 30
    assert at.state_bytes_per_request(opt) == 30 * 40 * 128 * 128 * 4


def test_bad_arguments_name_the_parameter():
    d = at.design("qwen3-32b")
    with pytest.raises(ValueError, match="kv_heads"):
        at.with_mechanism(d, "gqa", kv_heads=65)
    with pytest.raises(ValueError, match="mechanism"):
        at.with_mechanism(d, "sparse")
    with pytest.raises(ValueError, match="design"):
        at.design("gpt-5")


# -- the widgets ---------------------------------------------------------------------------------------------------

def test_picking_a_design_fills_in_its_mechanism_and_sizes():
    view = widgets.render("kv-heads", {"lang": "en", "design": "deepseek-v3", "changed": "design"})
    s = view["state"]
    assert (s["mechanism"], s["latent_dim"], s["rope_dim"]) == ("mla", 512, 64)
    assert view["outputs"]["kv_per_layer"]["text"] == "576"
    assert view["outputs"]["kv_bytes_per_token"]["text"] == "70,272 B"
    qwen = widgets.render("kv-heads", {"lang": "en", "design": "qwen3-32b", "changed": "design"})["state"]
    assert (qwen["mechanism"], qwen["kv_heads"]) == ("gqa", 8)


def test_the_heads_diagram_draws_every_head_and_layer():
    view = widgets.render("kv-heads", {"lang": "en"})  # the anchor: 24 query heads, 4 K/V heads, 64 layers
    wide = view["svg"]["heads"].split('<div class="layout-narrow"')[0]
    assert wide.count("<rect") == 24 + 4 + 64
    assert wide.count("keeps KV</title>") == 16 and wide.count("recurrent state</title>") == 48


def test_the_curves_crossing_is_where_a_hybrid_request_gets_smaller():
    view = widgets.render("kv-capacity-curves", {"lang": "en"})
    anchor = at.design("qwen3.8-27b")
    cross = view["outputs"]["crossing"]["value"]
    gqa = at.with_mechanism(anchor, "gqa")
    assert at.bytes_per_request(anchor, cross) < at.bytes_per_request(gqa, cross)
    assert at.bytes_per_request(anchor, cross - 1) >= at.bytes_per_request(gqa, cross - 1)
    mqa = widgets.render("kv-capacity-curves", {"lang": "en", "design": "qwen3-next-80b"})["outputs"]
    assert mqa["fit.hybrid"]["value"] == at.max_requests(at.design("qwen3-next-80b"), 30e9, 32768)
