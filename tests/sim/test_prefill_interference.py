import re
import xml.etree.ElementTree as ET

import pytest

from sim.page import svg
from sim.physics import presets
from sim.serving import interference
from sim.widgets import prefill_interference as widget
from tests.sim.test_widgets import SVG, check_responsive, check_view

ANCHOR = presets.model("qwen3.8-27b")
H100 = presets.hardware("h100-sxm")
STATES = [{}, {"chunk_tokens": "256"}, {"chunk_tokens": "16", "prompt_tokens": 32_768, "lang": "en"},
          {"batch": 1, "context": 1, "prompt_tokens": 16, "chunk_tokens": "8192"},
          {"batch": 256, "chunk_tokens": "512", "model": "llama-2-7b", "hardware": "a100-sxm-80gb"},
          {"state_dtype": "bf16", "chunk_tokens": "64", "lang": "en"}]


def test_text_blocks_have_the_same_keys_and_placeholders():
    zh, en = widget.TEXT["zh"], widget.TEXT["en"]
    assert set(zh) == set(en)
    for key in zh:
        assert set(re.findall(r"{(\w+)}", zh[key])) == set(re.findall(r"{(\w+)}", en[key])), key


@pytest.mark.parametrize("state", STATES)
def test_every_view_keeps_the_protocol_and_draws_both_layouts(state):
    v = widget.render(state)
    check_view(v)
    found = check_responsive(v["svg"]["timeline"])
    for root in found.values():
        assert root.tag == SVG and root.get("aria-label")


def test_default_view_is_the_anchor_whole_prompt_stalling_the_batch():
    v = widget.render({})
    r = interference.interfere(ANCHOR, H100, batch=32, context=2048, prompt_tokens=2048)
    out = v["outputs"]
    assert v["state"]["chunk_tokens"] == "0" and v["state"]["batch"] == 32
    assert out["decode_ms"]["value"] == pytest.approx(r.decode_s * 1e3, rel=1e-5)
    assert out["stall_ms"]["value"] == pytest.approx(r.stall_s * 1e3, rel=1e-5)
    assert out["ttft_ms"]["value"] == out["step_ms"]["value"] == out["stall_ms"]["value"]
    assert out["overhead_ms"] == {"value": 0, "text": "0 ms"}
    assert out["steps"]["value"] == 1
    assert v["flags"] == {"capacity": False, "no_state": False, "nearly_free": False, "past_ridge": True}
    assert out["stall_ratio"]["value"] > 5


def test_a_small_chunk_is_flagged_nearly_free_and_costs_the_joiner():
    v = widget.render({"chunk_tokens": "128"})
    out = v["outputs"]
    assert v["flags"]["nearly_free"] and not v["flags"]["past_ridge"]
    assert out["stall_ratio"]["value"] < 1.02
    assert out["steps"]["value"] == 16
    assert out["ttft_ms"]["value"] > out["prefill_alone_ms"]["value"]
    assert out["overhead_ms"]["value"] > 0


@pytest.mark.parametrize("state", STATES)
def test_derivations_show_the_numbers_of_the_outputs(state):
    v = widget.render(state)
    out, how = v["outputs"], v["derivations"]
    for name in ("decode_ms", "step_ms", "stall_ms", "ttft_ms", "prefill_alone_ms", "overhead_ms", "steps",
                 "free_chunk"):
        number = out[name]["text"].split()[0]
        assert how[name].endswith(number) or f"= {number}" in how[name], (name, number, how[name])


def test_the_timeline_draws_a_bar_per_step_and_elides_long_runs():
    for chunk, steps in (("0", 1), ("256", 8)):
        narrow = check_responsive(widget.render({"chunk_tokens": chunk})["svg"]["timeline"])["narrow"]
        titles = {e.find(f"{SVG[:-3]}title").text for e in narrow.iter(f"{SVG[:-3]}rect")
                  if e.get("data-kind") in ("decode", "chunk")}
        assert len(titles) == steps
    many = widget.render({"chunk_tokens": "16", "prompt_tokens": 32_768})
    wide = check_responsive(many["svg"]["timeline"])["wide"]
    kinds = [e.get("data-kind") for e in wide.iter(f"{SVG[:-3]}rect") if e.get("data-kind")]
    assert kinds.count("decode") == widget.MAX_BARS - 1  # the first and last steps, the gap in between
    text = " ".join(e.text or "" for e in wide.iter(f"{SVG[:-3]}text"))
    assert "2,048" in text and "…" in text


def test_the_timeline_is_escaped_and_its_narrow_drawing_fits_a_phone():
    markup = widget.render({"lang": "en"})["svg"]["timeline"]
    assert "<script" not in markup
    found = check_responsive(markup)
    assert float(found["narrow"].get("viewBox").split()[2]) <= 320
    ET.fromstring(f"<root>{markup}</root>")  # well-formed


def test_bad_states_are_clamped_or_replaced():
    v = widget.render({"batch": 10_000, "chunk_tokens": "3", "prompt_tokens": "x", "context": -5})
    assert v["state"]["batch"] == 256 and v["state"]["chunk_tokens"] == "0"
    assert v["state"]["prompt_tokens"] == 2048 and v["state"]["context"] == 1
    check_view(v)


@pytest.mark.parametrize("state", STATES + [{"lang": "en"}, {"lang": "en", "chunk_tokens": "16", "batch": 1}])
def test_every_word_of_the_narrow_drawing_stays_inside_it(state):
    narrow = check_responsive(widget.render(state)["svg"]["timeline"])["narrow"]
    width = float(narrow.get("viewBox").split()[2])
    for node in narrow.iter(f"{SVG[:-3]}text"):
        x, w = float(node.get("x")), svg.text_width(node.text, 13)
        start = {"start": x, "middle": x - w / 2, "end": x - w}[node.get("text-anchor") or "start"]
        assert 0 <= start and start + w <= width, (node.text, start, w)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_flags_words_name_a_unit_once(lang):
    # The readouts' texts fill the flags' slots; "277 token tokens" read the unit twice.
    v = widget.render({"lang": lang, "batch": 128, "chunk_tokens": "512"})
    texts = {k: o["text"] for k, o in v["outputs"].items()}
    for key in ("past_ridge", "nearly_free"):
        words = widget.TEXT[lang][key].format(**texts)
        assert "token token" not in words and "token tokens" not in words, words
