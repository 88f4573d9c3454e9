"""The latency-budget widget: the four metrics, scenarios that fill fields, and edits that make it custom."""

import re

import pytest

from sim import widgets
from sim.widgets import latency_budget
from tests.sim.test_widgets import check_view


def render(state) -> dict:
    view = widgets.render("latency-budget", state)
    check_view(view)
    return view


def test_default_is_the_reference_chat_example():
    view = render({})
    out = view["outputs"]
    # 200 ms + 25 ms x 500 = 12.7 s, of which 12.5 s (98.4%) is TPOT x N
    assert out["e2e_s"] == {"value": 12.7, "text": "12.7 s"}
    assert out["tpot_share"] == {"value": 98.4252, "text": "98.4%"}
    assert out["ttft_share"] == {"value": 1.5748, "text": "1.57%"}
    # 32 requests / 25 ms = 1,280 tok/s; $2/h / (1,280 x 3,600) x 1e6 = $0.434 per million
    assert out["throughput_tokens_per_s"] == {"value": 1280, "text": "1,280 tok/s"}
    assert out["cost_per_million_tokens"] == {"value": 0.434028, "text": "$0.434"}
    assert out["stream_tokens_per_s"]["text"] == "40 tok/s"
    assert out["priority"]["text"].startswith("聊天")
    assert view["derivations"]["e2e_s"] == "TTFT + TPOT × N = 200 ms + 25 ms × 500 = 200 ms + 12.5 s = 12.7 s"


def test_picking_a_scenario_fills_its_fields():
    view = render({"scenario": "agent", "changed": "scenario", "ttft_ms": 3, "gpu_dollars_per_hour": 7})
    s = view["state"]
    assert (s["ttft_ms"], s["tpot_ms"], s["output_tokens"], s["batch"], s["calls"]) == (800, 25, 800, 16, 10)
    assert s["gpu_dollars_per_hour"] == 7  # the price is the student's assumption, not the scenario's
    # 0.8 s + 25 ms x 800 = 20.8 s per call, 10 calls in a row = 208 s
    assert view["outputs"]["e2e_s"]["value"] == pytest.approx(20.8)
    assert view["outputs"]["chain_s"]["text"] == "208 s（3.47 分钟）"
    assert view["outputs"]["priority"]["text"].startswith("智能体")


def test_editing_a_filled_field_switches_to_custom():
    view = render({"scenario": "chat", "tpot_ms": 50, "changed": "tpot_ms"})
    assert view["state"]["scenario"] == "custom"
    assert view["state"]["tpot_ms"] == 50
    assert view["outputs"]["e2e_s"]["value"] == pytest.approx(25.2)  # 0.2 s + 50 ms x 500
    assert view["outputs"]["priority"]["text"].startswith("自定义")


def test_edits_that_keep_the_scenario_values_or_touch_only_the_price_keep_it():
    assert render({"scenario": "chat", "tpot_ms": 25, "changed": "tpot_ms"})["state"]["scenario"] == "chat"
    priced = render({"scenario": "offline", "ttft_ms": 5000, "tpot_ms": 60, "output_tokens": 1000, "batch": 256,
                     "gpu_dollars_per_hour": 4, "changed": "gpu_dollars_per_hour"})
    assert priced["state"]["scenario"] == "offline"
    # 256 / 60 ms = 4,267 tok/s; $4/h / (4,267 x 3,600) x 1e6 = $0.260
    assert priced["outputs"]["cost_per_million_tokens"]["text"] == "$0.260"


def test_without_changed_the_state_is_taken_as_given():
    view = render({"scenario": "completion", "tpot_ms": 40})
    assert view["state"]["scenario"] == "completion" and view["state"]["tpot_ms"] == 40
    assert view["state"]["ttft_ms"] == 200  # not filled in from the scenario either


def test_every_scenario_fits_the_controls():
    params = {c.name: c for c in latency_budget.WIDGET.controls}
    for name, scenario in latency_budget.SCENARIOS.items():
        for field, value in scenario.fields().items():
            assert params[field].coerce(value) == value, (name, field)
        assert render({"scenario": name, "changed": "scenario"})["state"]["scenario"] == name


def test_completion_spends_a_larger_share_on_ttft_than_chat():
    completion = render({"scenario": "completion", "changed": "scenario"})["outputs"]
    # Continue's 150 ms, Tabby's 64 tokens, 5 ms each: 150 ms + 5 ms x 64 = 0.47 s (within Continue's 500 ms),
    # of which TTFT is 31.9%, against 1.57% for chat
    assert completion["e2e_s"]["text"] == "470 ms"
    assert completion["ttft_share"]["value"] == pytest.approx(150 / 470 * 100, abs=1e-4)


def test_timeline_segments_are_proportional():
    wide, narrow = drawings(render({})["svg"]["timeline"])
    bars = re.compile(r'<rect class="(ttft|tpot)" x="[\d.]+" y="\d+" width="([\d.]+)"')
    # 640 px x 0.2 / 12.7 = 10.1 px of TTFT, the rest TPOT x 500 (too dense for token ticks); on a phone 272 px
    assert dict(bars.findall(wide)) == {"ttft": "10.1", "tpot": "629.9"}
    assert dict(bars.findall(narrow)) == {"ttft": "4.3", "tpot": "267.7"}
    assert "<line" not in wide + narrow
    short, short_narrow = drawings(render({"scenario": "completion", "changed": "scenario"})["svg"]["timeline"])
    assert short.count("<line") == 63  # boundaries between 64 tokens
    # on a phone 185 px for 64 tokens, 2.9 px apart: closer than MIN_TICK_SPACING_PX, drawn thinner
    assert short_narrow.count('stroke-width="0.75"/>') == 63


def test_timeline_text_uses_the_kit_classes():
    svg = render({})["svg"]["timeline"]
    assert '<text class="svg-label" x="0" y="15">TTFT 200 ms</text>' in svg
    assert '<text class="svg-muted" x="640" y="64" text-anchor="end">12.7 s</text>' in svg
    assert 'aria-label="一次请求的时间线：TTFT 200 ms，TPOT × 500 个 token = 12.5 s，共 12.7 s"' in svg
    assert "font-size" not in svg


def test_every_scenario_has_its_words_in_both_languages():
    for lang in ("zh", "en"):
        for name in latency_budget.WIDGET.control("scenario").options:
            assert latency_budget.TEXT[lang][f"scenario={name}"] and latency_budget.TEXT[lang][f"priority={name}"]


def test_english_view():
    view = render({"lang": "en", "scenario": "agent", "changed": "scenario"})
    out = view["outputs"]
    assert out["chain_s"]["text"] == "208 s (3.47 min)"
    assert out["priority"]["text"].startswith("Agent: one task calls the model again and again")
    assert out["priority"]["value"] == 3
    assert ('aria-label="One request&#x27;s timeline: TTFT 800 ms, TPOT × 800 tokens = 20 s, 20.8 s in all"'
            in view["svg"]["timeline"])
    assert "TPOT × 800 = 20 s</text>" in view["svg"]["timeline"]
    assert render({"lang": "en", "tpot_ms": 50, "changed": "tpot_ms"})["outputs"]["priority"]["text"].startswith(
        "Custom: you set the numbers.")


CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


@pytest.mark.parametrize("scenario", ["chat", "offline", "completion", "agent", "custom"])
def test_both_languages_render_and_english_has_no_chinese(scenario):
    zh = render({"scenario": scenario, "changed": "scenario", "lang": "zh"})
    en = render({"scenario": scenario, "changed": "scenario", "lang": "en"})
    assert zh["state"]["lang"] == "zh" and en["state"]["lang"] == "en"
    assert {k: v["value"] for k, v in zh["outputs"].items()} == {k: v["value"] for k, v in en["outputs"].items()}
    texts = [out["text"] for out in en["outputs"].values()] + list(en["derivations"].values())
    texts += list(en["svg"].values()) + list(latency_budget.TEXT["en"].values())
    assert not [text for text in texts if CHINESE.search(text)]


@pytest.mark.parametrize("state", [
    {"scenario": "nope", "changed": "scenario"},
    {"ttft_ms": "nan", "tpot_ms": 0, "output_tokens": -1, "batch": 10**9, "calls": "x", "changed": "batch"},
    {"gpu_dollars_per_hour": 1e300, "lang": "en", "changed": "lang"},
    {"scenario": "custom", "changed": "scenario"},
    None,
])
def test_any_state_renders(state):
    view = render(state)
    assert view["state"]["scenario"] in latency_budget.WIDGET.control("scenario").options


def drawings(markup: str) -> tuple[str, str]:
    """The wide and the narrow drawing of a sim/page/svg.py responsive() diagram."""
    found = re.fullmatch(r'<div class="layout-wide">(<svg.*</svg>)</div><div class="layout-narrow" data-pagefind-ignore="">(<svg.*</svg>)</div>',
                         markup)
    assert found, markup[:200]
    return found.group(1), found.group(2)


@pytest.mark.parametrize("state", [{}, {"lang": "en", "scenario": "completion", "changed": "scenario"},
                                   {"ttft_ms": 60_000, "tpot_ms": 1_000, "output_tokens": 32_768}])
def test_timeline_has_a_phone_drawing_with_every_label(state):
    wide, narrow = drawings(render(state)["svg"]["timeline"])
    width = float(re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+)', narrow).group(1))
    assert width <= 300  # about a 375 px phone's frame, so that its 11 px text is drawn at 11 px or more
    texts = re.compile(r"<text[^>]*>([^<]*)</text>")
    assert texts.findall(wide) == texts.findall(narrow)
    assert re.search(r'aria-label="[^"]*"', wide).group() == re.search(r'aria-label="[^"]*"', narrow).group()
    # the phone drawing's two labels sit on lines of their own, so that a long one cannot run into the other
    label_ys = re.findall(r'<text class="svg-label" x="[\d.]+" y="([\d.]+)"', narrow)
    assert len(set(label_ys)) == 2
