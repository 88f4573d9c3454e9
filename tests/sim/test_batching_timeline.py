"""The batching-timeline widget: static vs continuous batching of one trace, its readouts and its timeline."""

import json
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import kit, presets, scheduler, widgets
from sim.widgets import batching_timeline
from tests.sim.test_properties import json_values
from tests.sim.test_widgets import check_view

CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
SVG = "{http://www.w3.org/2000/svg}"


def render(state: dict) -> dict:
    view = widgets.render("batching-timeline", state)
    check_view(view)
    return view


def bars(view: dict) -> list[tuple[int, str, float, float]]:
    """(request, kind, x, width) of every bar of the timeline."""
    root = ET.fromstring(view["svg"]["timeline"])
    return [(int(r.get("data-request")), r.get("data-kind"), float(r.get("x")), float(r.get("width")))
            for r in root.iter(f"{SVG}rect") if r.get("data-request") is not None]


def ticks(view: dict) -> list[str]:
    root = ET.fromstring(view["svg"]["timeline"])
    return [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "svg-muted" and re.fullmatch(r"[\d.]+", t.text)]


def test_default_is_static_batching_of_the_orca_trace_on_the_anchor_and_an_h100():
    view = render({})
    s = view["state"]
    assert s == {"policy": "static", "rate": 12, "trace": "orca", "max_batch": 16, "hardware": "h100-sxm",
                 "model": "qwen3.8-27b", "lang": "zh"}
    out = view["outputs"]
    assert out["throughput_tokens_per_s"] == {"value": 352.409, "text": "352 tok/s"}
    assert out["requests_per_s"]["text"] == "合 5.83 个请求/秒"
    assert out["latency_per_token_p50_ms"] == {"value": 56.1827, "text": "56.18 ms"}
    assert out["latency_per_token_p90_ms"] == {"value": 187.201, "text": "187.20 ms"}
    assert out["mean_batch"] == {"value": 6.88365, "text": "6.88"}
    assert out["makespan_s"] == {"value": 8.22909, "text": "8.23 秒"}
    assert out["continuous_gain"] == {"value": 1.56052, "text": "1.56×"}
    # (80 GB - 55,562,855,904 B) / (2,048 x 65,536 + 150,994,944) B = 85.7 requests at 2,048-token reservations
    assert out["memory_limit"] == {"value": 85, "text": "85"}
    assert view["flags"] == {"capacity": False, "memory_bound": False}


def test_continuous_batching_serves_the_same_trace_faster():
    static, continuous = render({}), render({"policy": "continuous"})
    assert continuous["outputs"]["throughput_tokens_per_s"]["text"] == "550 tok/s"
    assert continuous["outputs"]["latency_per_token_p50_ms"]["text"] == "17.59 ms"
    assert continuous["outputs"]["latency_per_token_p90_ms"]["text"] == "18.91 ms"
    assert continuous["outputs"]["mean_batch"]["text"] == "9.80"
    # The gain is a property of the scenario, the same whichever policy is shown.
    assert continuous["outputs"]["continuous_gain"] == static["outputs"]["continuous_gain"]
    assert continuous["derivations"]["continuous_gain"] == "连续 550 tok/s ÷ 静态 352 tok/s = 1.56×"
    # One time axis for both, so that toggling the policy shows the same trace on the same scale.
    assert ticks(static) == ticks(continuous) == ["0", "2", "4", "6", "8", "10"]


def test_the_readouts_match_the_scheduler():
    m, hw = presets.model("llama-2-7b"), presets.hardware("a100-sxm-80gb")
    state = {"policy": "continuous", "rate": 20, "trace": "chat", "max_batch": 32, "hardware": hw.key, "model": m.key}
    view = render(state)
    s = scheduler.serve(m, hw, "continuous", trace="chat", rate_per_s=20, max_batch=32)
    out = view["outputs"]
    assert out["throughput_tokens_per_s"]["value"] == pytest.approx(s.throughput_tokens_per_s, rel=1e-5)
    assert out["latency_per_token_p50_ms"]["value"] == pytest.approx(s.latency_per_token_p50_s * 1e3, rel=1e-5)
    assert out["latency_per_token_p90_ms"]["value"] == pytest.approx(s.latency_per_token_p90_s * 1e3, rel=1e-5)
    assert out["makespan_s"]["value"] == pytest.approx(s.makespan_s, rel=1e-5)
    assert out["continuous_gain"]["value"] == pytest.approx(scheduler.throughput_gain(
        m, hw, trace="chat", rate_per_s=20, max_batch=32), rel=1e-5)


def test_derivations_show_the_numbers():
    d = render({"lang": "en"})["derivations"]
    assert d["throughput_tokens_per_s"] == ("2,900 output tokens ÷ 8.23 s (first arrival at 0.278 s, last response "
                                            "at 8.51 s) = 352 tok/s")
    assert d["makespan_s"] == "8.51 s − 0.278 s = 8.23 s"
    assert d["mean_batch"] == "Σ (step time × requests in the step) ÷ 8.01 s the GPU is busy (469 steps) = 6.88"
    assert d["memory_limit"] == ("⌊(80.00 GB − weights 55.56 GB) ÷ (2,048 × 65.54 KB + recurrent state 151.0 MB)⌋ "
                                 "= 85")
    assert d["latency_per_token_p50_ms"].endswith("median = 56.18 ms")


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
    # Qwen3-32B on an H100 holds 26 requests at 2,048-token reservations: max_batch 48 cannot be reached.
    view = render({"policy": "continuous", "model": "qwen3-32b", "max_batch": 48, "rate": 40})
    assert view["outputs"]["memory_limit"]["value"] == 26
    assert view["flags"]["memory_bound"] and not view["flags"]["capacity"]
    assert view["outputs"]["mean_batch"]["value"] <= 26
    assert "显存上限 26" in view["svg"]["timeline"] and "max_batch = 48" in view["svg"]["timeline"]
    assert not render({"model": "qwen3-32b", "max_batch": 26})["flags"]["memory_bound"]
    assert "显存上限" not in render({})["svg"]["timeline"]


def test_timeline_text_is_at_least_11_px_and_its_alt_states_the_numbers():
    markup = render({"lang": "en"})["svg"]["timeline"]
    root = ET.fromstring(markup)
    assert {t.get("class") for t in root.iter(f"{SVG}text")} <= {"svg-label", "svg-muted"}  # 13 px and 11 px
    label = root.get("aria-label")
    assert label.startswith("Timeline of 48 requests under static batching: throughput 352 tok/s; ")
    assert "latency per output token median 56.18 ms, p90 187.20 ms" in label
    assert "the same requests under continuous batching: 550 tok/s" in label
    assert "<script" not in markup and not re.search(r"#[0-9a-fA-F]{3,8}\b", markup)


@pytest.mark.parametrize("state", [
    {},
    {"policy": "continuous", "trace": "chat", "rate": 2},
    {"model": "qwen3-32b", "max_batch": 64, "hardware": "a100-sxm-80gb"},
    {"max_batch": 1, "rate": 0.5, "hardware": "b200"},
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
    assert list(controls) == ["policy", "rate", "trace", "max_batch", "hardware", "model"]
    assert controls["policy"].options == ("static", "continuous")
    assert controls["trace"].options == ("orca", "chat")
    assert (controls["rate"].min, controls["rate"].max, controls["rate"].step) == (0.5, 50, 0.5)
    assert (controls["max_batch"].min, controls["max_batch"].max) == (1, 64)


@pytest.mark.parametrize("state, kept", [
    ({"policy": "dynamic"}, {"policy": "static"}),
    ({"rate": 1000}, {"rate": 50}),
    ({"rate": "nan"}, {"rate": 12}),
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


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from([c.name for c in batching_timeline.WIDGET.controls] + ["lang", "changed"]),
                       json_values | st.sampled_from(["static", "continuous", "chat", "b200", "llama-2-7b", "en"])
                       | st.floats(0, 100), max_size=8))
def test_random_states_render(state):
    view = render(state)
    assert widgets.render("batching-timeline", view["state"])["state"] == view["state"]
