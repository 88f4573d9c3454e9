"""The batching-timeline widget: static vs continuous batching of one trace, its readouts and its timeline."""

import json
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import kit, widgets
from sim.page import svg
from sim.page.display import fmt_duration
from sim.physics import presets
from sim.serving import scheduler
from sim.widgets import batching_timeline
from tests.sim.test_properties import json_values
from tests.sim.test_widgets import check_view

ANCHOR, H100 = presets.model("qwen3.8-27b"), presets.hardware("h100-sxm")
CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
SVG = "{http://www.w3.org/2000/svg}"


def render(state: dict) -> dict:
    view = widgets.render("batching-timeline", state)
    check_view(view)
    return view


def drawings(markup: str) -> list[ET.Element]:
    """The wide and the narrow <svg> of a sim/page/svg.py responsive() diagram."""
    layouts = list(ET.fromstring(f"<figure>{markup}</figure>"))
    assert [d.get("class") for d in layouts] == ["layout-wide", "layout-narrow"]
    assert all(len(d) == 1 and d[0].tag == f"{SVG}svg" for d in layouts)
    return [d[0] for d in layouts]


def bars(view: dict, drawing: int = 0) -> list[tuple[int, str, float, float]]:
    """(request, kind, x, width) of every bar of the timeline (its wide drawing, or 1: its phone drawing)."""
    root = drawings(view["svg"]["timeline"])[drawing]
    return [(int(r.get("data-request")), r.get("data-kind"), float(r.get("x")), float(r.get("width")))
            for r in root.iter(f"{SVG}rect") if r.get("data-request") is not None]


def ticks(view: dict, drawing: int = 0) -> list[str]:
    root = drawings(view["svg"]["timeline"])[drawing]
    return [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "svg-muted" and re.fullmatch(r"[\d.]+", t.text)]


def test_default_is_static_batching_of_the_orca_trace_on_the_anchor_and_an_h100():
    view = render({})
    s = view["state"]
    assert s == {"policy": "static", "rate": 5, "trace": "orca", "max_batch": 16, "kv_policy": "contiguous-max",
                 "hardware": "h100-sxm", "model": "qwen3.8-27b", "lang": "zh"}
    out = view["outputs"]
    run = scheduler.serve(ANCHOR, H100, "static")
    # At 5 req/s both policies keep up: static batching returns what arrives, at 67 % of its capacity.
    assert out["capacity_per_s"]["text"] == "合 7.50 个请求/秒" and out["load"]["text"] == "66.7%"
    assert out["requests_per_s"]["text"] == "合 4.99 个请求/秒"
    assert out["ttft_p50_ms"]["text"] == "1.11 s" and out["ttft_p90_ms"]["text"] == "1.95 s"
    assert out["tpot_p50_ms"]["text"] == "16.07 ms"
    assert out["ttft_p50_ms"]["value"] == pytest.approx(run.ttft_p50_s * 1e3, rel=1e-5)
    assert out["latency_p90_s"]["value"] == pytest.approx(run.latency_p90_s, rel=1e-5)
    assert out["goodput_per_s"]["value"] == pytest.approx(run.goodput_per_s(), rel=1e-5)
    assert out["capacity_gain"]["text"] == "1.89×"
    assert out["preemptions"] == {"value": 0, "text": "0"}
    # (85,520,809,984 - 55,562,855,904 B) / (2,048 x 65,536 + 150,994,944) B = 105.6 requests at 2,048-token
    # reservations
    assert out["memory_limit"] == {"value": 105, "text": "105"}
    assert view["flags"] == {"capacity": False, "overloaded": False, "unsettled": False, "memory_bound": False}


def test_continuous_batching_keeps_up_with_the_same_throughput_and_a_short_wait():
    static, continuous = render({}), render({"policy": "continuous"})
    assert continuous["outputs"]["ttft_p50_ms"]["text"] == "26.20 ms"
    assert continuous["outputs"]["goodput_per_s"]["text"] == continuous["outputs"]["requests_per_s"]["text"]
    # The capacity gain is a property of the scenario, the same whichever policy is shown.
    assert continuous["outputs"]["capacity_gain"] == static["outputs"]["capacity_gain"]
    assert continuous["derivations"]["capacity_gain"] == "连续 14.2 ÷ 静态 7.50 = 1.89×"
    # One time axis for both, so that toggling the policy shows the same trace on the same scale.
    assert ticks(static) == ticks(continuous)


def test_overloaded_shows_no_percentile_and_says_why():
    view = render({"rate": scheduler.OVERLOADED_RATE_PER_S, "lang": "en"})
    assert view["flags"]["overloaded"] and not view["flags"]["unsettled"]
    for name in batching_timeline.PERCENTILE_READOUTS:
        assert view["outputs"][name]["text"] == "overloaded"
        assert view["derivations"][name].startswith("arrivals 12.0 > capacity 7.50")
    assert view["outputs"]["goodput_per_s"]["value"] == 0
    # Continuous batching at the same rate keeps up, but so close to capacity that its percentiles still move.
    continuous = render({"rate": scheduler.OVERLOADED_RATE_PER_S, "policy": "continuous", "lang": "en"})
    assert not continuous["flags"]["overloaded"] and continuous["flags"]["unsettled"]
    assert continuous["outputs"]["ttft_p90_ms"]["text"].endswith("ms")


def test_the_readouts_match_the_scheduler():
    m, hw = presets.model("llama-2-7b"), presets.hardware("a100-sxm-80gb")
    state = {"policy": "continuous", "rate": 4, "trace": "chat", "max_batch": 32, "kv_policy": "paged",
             "hardware": hw.key, "model": m.key}
    view = render(state)
    s = scheduler.serve(m, hw, "continuous", trace="chat", rate_per_s=4, max_batch=32, kv_policy="paged")
    out = view["outputs"]
    assert out["throughput_tokens_per_s"]["value"] == pytest.approx(s.throughput_tokens_per_s, rel=1e-5)
    for name, (attribute, _, _, unit) in batching_timeline.PERCENTILE_READOUTS.items():
        assert out[name]["value"] == pytest.approx(getattr(s, attribute) * (1e3 if unit == "ms" else 1), rel=1e-5)
    assert out["capacity_per_s"]["value"] == pytest.approx(s.capacity_per_s, rel=1e-5)
    assert out["preemptions"]["value"] == s.preemptions
    assert out["capacity_gain"]["value"] == pytest.approx(scheduler.capacity_gain(
        m, hw, trace="chat", max_batch=32, kv_policy="paged"), rel=1e-5)


def test_the_mean_wait_is_a_readout(lang="en"):
    # issue #23: the lesson quotes the mean wait of each policy, which no readout showed
    for policy in scheduler.POLICIES:
        view = render({"policy": policy, "lang": lang})
        run = scheduler.serve(ANCHOR, H100, policy)
        assert view["outputs"]["mean_wait_ms"]["value"] == pytest.approx(run.mean_wait_s * 1e3, rel=1e-5)
        assert view["outputs"]["mean_wait_ms"]["text"] == fmt_duration(run.mean_wait_s)
        assert view["derivations"]["mean_wait_ms"] == (f"Σ (prefill starts − arrival) ÷ {len(run.measured):,} "
                                                       f"steady-state requests = {fmt_duration(run.mean_wait_s)}")
    shown = [r.name for item in batching_timeline.WIDGET.layout if isinstance(item, kit.Readouts) for r in item.items]
    assert "mean_wait_ms" in shown
    overloaded = render({"rate": scheduler.OVERLOADED_RATE_PER_S, "lang": lang})
    assert overloaded["outputs"]["mean_wait_ms"]["text"] == "overloaded"
    assert overloaded["derivations"]["mean_wait_ms"].startswith("arrivals 12.0 > capacity 7.50")


def test_derivations_show_the_numbers():
    d = render({"lang": "en"})["derivations"]
    assert d["capacity_per_s"] == "4,000 requests all queued at t = 0, returns per second after the warm-up = 7.50 requests/s"
    assert d["load"] == "5.00 ÷ 7.50 = 66.7%"
    assert d["mean_batch"].startswith("Σ (step time × requests in the step) ÷ ")
    assert d["memory_limit"] == ("⌊(85.52 GB − weights 55.56 GB) ÷ (2,048 × 65.54 KB + recurrent state 151.0 MB)⌋ "
                                 "= 105")
    assert d["ttft_p50_ms"] == ("(first token − arrival) of each of 3,600 steady-state requests, sorted, median "
                                "(interpolated) = 1.11 s")
    assert d["goodput_per_s"].endswith("= 2.18 requests/s")


def test_timeline_has_a_row_per_request_and_shows_the_held_time_only_for_static():
    static, continuous = bars(render({})), bars(render({"policy": "continuous"}))
    assert {r for r, *_ in static} == {r for r, *_ in continuous} == set(range(48))
    assert {k for _, k, *_ in static} == {"wait", "prefill", "decode", "held"}
    assert {k for _, k, *_ in continuous} <= {"wait", "prefill", "decode"}
    # Every request has one prefill bar (a request of one output token has no decode bar); none is too thin to see.
    for rows in (static, continuous):
        assert all(sum(1 for r, k, *_ in rows if r == i and k == "prefill") == 1 for i in range(48))
        assert all(w >= 0.75 for *_, w in rows)
        assert all(12 <= x and x + w <= 600 - 12 + 0.1 for _, _, x, w in rows)
    legend_static = render({})["svg"]["timeline"]
    assert "已写完，等整批结束才返回" in legend_static
    assert "已写完" not in render({"policy": "continuous"})["svg"]["timeline"]


def test_batch_chart_never_passes_max_batch_or_memory():
    # Qwen3-32B on an H100 holds 37 requests at 2,048-token reservations: max_batch 48 cannot be reached.
    view = render({"policy": "continuous", "model": "qwen3-32b", "max_batch": 48, "rate": 40})
    assert view["outputs"]["memory_limit"]["value"] == 37
    assert view["flags"]["memory_bound"] and not view["flags"]["capacity"]
    assert view["outputs"]["mean_batch"]["value"] <= 37
    assert "显存上限 37" in view["svg"]["timeline"] and "max_batch = 48" in view["svg"]["timeline"]
    assert not render({"model": "qwen3-32b", "max_batch": 37})["flags"]["memory_bound"]
    assert "显存上限" not in render({})["svg"]["timeline"]
    # Paged, the 2,048-token limit does not apply: no memory line, no note.
    paged = render({"policy": "continuous", "model": "qwen3-32b", "max_batch": 48, "rate": 40, "kv_policy": "paged"})
    assert not paged["flags"]["memory_bound"] and "显存上限" not in paged["svg"]["timeline"]


def test_timeline_text_is_at_least_11_px_and_its_alt_states_the_numbers():
    markup = render({"lang": "en"})["svg"]["timeline"]
    root = drawings(markup)[0]
    assert {t.get("class") for t in root.iter(f"{SVG}text")} <= {"svg-label", "svg-muted"}  # 13 px and 11 px
    label = root.get("aria-label")
    drawn = scheduler.serve(ANCHOR, H100, "static", n=scheduler.DRAWN_REQUESTS)
    other = scheduler.serve(ANCHOR, H100, "continuous", n=scheduler.DRAWN_REQUESTS)
    assert label.startswith("Timeline of the first 48 requests under static batching: ")
    assert f"the last returned at {drawn.end_s:.3g} s" in label
    assert f"the same requests under continuous batching: the last returned at {other.end_s:.3g} s" in label
    assert "<script" not in markup and not re.search(r"#[0-9a-fA-F]{3,8}\b", markup)


@pytest.mark.parametrize("state", [
    {},
    {"policy": "continuous", "trace": "chat", "rate": 2},
    {"model": "qwen3-32b", "max_batch": 64, "hardware": "a100-sxm-80gb"},
    {"max_batch": 1, "rate": 0.5, "hardware": "b200"},
    {"rate": 12},
    {"kv_policy": "paged", "model": "qwen3-32b", "trace": "chat", "rate": 4, "max_batch": 256},
])
def test_both_languages_render_the_same_numbers_and_english_has_no_chinese(state):
    zh, en = render({**state, "lang": "zh"}), render({**state, "lang": "en"})
    assert {k: v["value"] for k, v in zh["outputs"].items()} == {k: v["value"] for k, v in en["outputs"].items()}
    assert zh["flags"] == en["flags"]
    english = json.dumps([en["outputs"], en["derivations"], en["svg"]], ensure_ascii=False)
    assert not CHINESE.search(english), CHINESE.findall(english)


def test_text_blocks_have_the_same_keys_and_every_control_is_labelled():
    assert set(batching_timeline.TEXT["zh"]) == set(batching_timeline.TEXT["en"])
    assert not CHINESE.search(" ".join(batching_timeline.TEXT["en"].values()))
    for lang in ("zh", "en"):
        words = kit.words(batching_timeline, lang)
        for c in batching_timeline.WIDGET.controls:
            assert (c.label or c.name) in words
            if c.kind == "select" and c.names is None:
                assert all(f"{c.name}={o}" in words for o in c.options)


def test_controls():
    controls = {c.name: c for c in batching_timeline.WIDGET.controls}
    assert list(controls) == ["policy", "rate", "trace", "max_batch", "kv_policy", "hardware", "model"]
    assert controls["policy"].options == ("static", "continuous")
    assert controls["trace"].options == ("orca", "chat")
    assert controls["kv_policy"].options == ("contiguous-max", "contiguous-pow2", "contiguous-oracle", "paged")
    assert (controls["rate"].min, controls["rate"].max, controls["rate"].step) == (0.5, 50, 0.5)
    assert (controls["max_batch"].min, controls["max_batch"].max) == (1, 256)


@pytest.mark.parametrize("state, kept", [
    ({"policy": "dynamic"}, {"policy": "static"}),
    ({"rate": 1000}, {"rate": 50}),
    ({"rate": "nan"}, {"rate": 5}),
    ({"kv_policy": "buddy"}, {"kv_policy": "contiguous-max"}),
    ({"rate": 0.74}, {"rate": 0.5}),
    ({"max_batch": 0}, {"max_batch": 1}),
    ({"max_batch": "<b>4</b>"}, {"max_batch": 16}),
    ({"trace": "sharegpt"}, {"trace": "orca"}),
    ({"hardware": "tpu", "model": "gpt"}, {"hardware": "h100-sxm", "model": "qwen3.8-27b"}),
])
def test_bad_values_are_replaced_never_raised(state, kept):
    view = render(state)
    for key, value in kept.items():
        assert view["state"][key] == value


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(st.sampled_from([c.name for c in batching_timeline.WIDGET.controls] + ["lang", "changed"]),
                       json_values | st.sampled_from(["static", "continuous", "chat", "b200", "llama-2-7b", "en"])
                       | st.floats(0, 100), max_size=8))
def test_random_states_render(state):
    view = render(state)
    assert widgets.render("batching-timeline", view["state"])["state"] == view["state"]


def test_readout_labels_have_no_slots_and_flags_fill_theirs_with_plain_numbers():
    # Readout labels are plain words (only texts and flags fill {OUTPUT} slots); a flag's slots get bare numbers.
    for lang in ("zh", "en"):
        t = batching_timeline.TEXT[lang]
        readouts = next(part for part in batching_timeline.WIDGET.layout if hasattr(part, "items"))
        for item in readouts.items:
            assert "{" not in t[item.label or item.name], item.name
    view = render({"rate": scheduler.OVERLOADED_RATE_PER_S, "lang": "en"})
    assert view["outputs"]["rate"]["text"] == "12.0" and view["outputs"]["capacity"]["text"] == "7.50"


@pytest.mark.parametrize("state", [
    {"lang": "en"},
    {"policy": "continuous"},
    {"policy": "continuous", "model": "qwen3-32b", "max_batch": 48, "rate": 40},
    {"lang": "en", "kv_policy": "paged", "model": "qwen3-32b", "trace": "chat", "rate": 4, "max_batch": 256},
])
def test_timeline_has_a_phone_drawing_of_every_bar_and_every_word(state):
    view = render(state)
    wide, narrow = drawings(view["svg"]["timeline"])
    _, _, width, _ = (float(v) for v in narrow.get("viewBox").split())
    assert width <= 300  # about a 375 px phone's frame, so that its 11 px text is drawn at 11 px or more
    assert narrow.get("aria-label") == wide.get("aria-label")
    # every request's every bar, in the frame
    assert [(r, k) for r, k, *_ in bars(view, 1)] == [(r, k) for r, k, *_ in bars(view)]
    assert all(12 <= x and x + w <= width - 12 + 0.1 and w >= 0.75 for _, _, x, w in bars(view, 1))
    # every word: the rows' caption wrapped onto lines that fit, the rest as drawn wide; fewer ticks
    texts = [[t.text for t in svg.iter(f"{SVG}text")] for svg in (wide, narrow)]
    caption = batching_timeline.TEXT[view["state"]["lang"]]["rows"].format(n=48)
    words = {t for t in texts[0] if not re.fullmatch(r"[\d.]+", t)} - {caption}
    lines = [t for t in texts[1] if t not in words and not re.fullmatch(r"[\d.]+", t)]
    assert " ".join(lines) == caption
    assert all(svg.text_width(line, 11) <= width - 24 for line in lines)
    assert words <= set(texts[1])
    assert 3 <= len(ticks(view, 1)) <= batching_timeline.NARROW_MAX_TICKS + 1
