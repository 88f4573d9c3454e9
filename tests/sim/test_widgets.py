import json
import xml.etree.ElementTree as ET

import plotly.graph_objects as go
import pytest

from sim import widgets
from sim.kit import config_problems
from sim.kit.controls import Range, Select, coerce_state
from sim.widgets import roofline as roofline_widget

VIEW_KEYS = {"schema", "state", "outputs", "figures", "svg", "flags", "derivations"}


def check_view(view: dict) -> None:
    """A view honours the widget protocol: JSON-able, every part in its shape, figures valid for Plotly."""
    assert set(view) == VIEW_KEYS and view["schema"] == 1
    assert json.loads(json.dumps(view)) == view
    for name, out in view["outputs"].items():
        assert set(out) == {"value", "text"}, name
        assert isinstance(out["value"], (int, float)) and isinstance(out["text"], str)
    assert all(isinstance(v, bool) for v in view["flags"].values())
    assert all(isinstance(v, str) for v in view["svg"].values())
    assert all(isinstance(v, str) for v in view["derivations"].values())
    for figure in view["figures"].values():
        go.Figure(figure)  # raises on any property plotly.js would not accept


SVG = "{http://www.w3.org/2000/svg}svg"
NARROW_MAX_WIDTH = 320  # a 375 px phone's frame is about 291-317 px: a wider drawing would shrink its text


def drawings(markup: str) -> dict:
    """The svg roots of a responsive diagram (sim/page/svg.py responsive), by layout: {"wide": …, "narrow": …}."""
    root = ET.fromstring(f"<root>{markup}</root>")
    assert [child.tag for child in root] == ["div", "div"], markup[:200]
    found = {child.get("class").removeprefix("layout-"): child for child in root}
    assert set(found) == {"wide", "narrow"}
    for child in found.values():
        assert [svg.tag for svg in child] == [SVG]
    return {layout: child[0] for layout, child in found.items()}


def check_responsive(markup: str) -> dict:
    """A diagram holds a wide and a narrow drawing: the narrow one fits a phone, both have the same name."""
    found = drawings(markup)
    widths = {layout: float(root.get("viewBox").split()[2]) for layout, root in found.items()}
    assert widths["narrow"] <= NARROW_MAX_WIDTH < widths["wide"], widths
    assert found["wide"].get("aria-label") == found["narrow"].get("aria-label")
    assert found["wide"].get("role") == found["narrow"].get("role") == "img"
    return found


def test_roofline_default_view_matches_the_running_example():
    view = widgets.render("roofline", {})
    check_view(view)
    assert view["outputs"]["decode_ms"] == {"value": 15.3881, "text": "15.39 ms"}
    assert view["outputs"]["prefill_ms"]["text"] == "15.34 ms"
    assert view["flags"] == {"capacity": False, "overflow": False, "no_state": False}


def test_roofline_overflow_flag_turns_on_past_max_batch():
    # On the H100's 81,559 MiB = 85,520,809,984 B: (85,520,809,984 - 55,562,855,904) // 419,430,400 = 71 fit
    # (the reference's 58 is the datasheet's 80e9 B); 71 / 27.389 ms = 2,592 tok/s.
    at = widgets.render("roofline", {"B": 71, "context": 4096})
    past = widgets.render("roofline", {"B": 72, "context": 4096})
    assert at["outputs"]["max_batch"]["value"] == 71 and not at["flags"]["overflow"]
    assert past["flags"] == {"capacity": False, "overflow": True, "no_state": False}
    assert at["outputs"]["tokens_per_s"]["text"] == "2,592 tok/s"


# The anchor (Qwen3.8-27B) by hand: 2N = 51,247,879,168 FLOPs per token over 51,247,879,168 B of BF16 weights;
# per cached token 65,536 B of KV (16 layers x K,V x 4 heads x 256 x 2 B) and 16 x 24 x 256 x 4 = 393,216
# attention FLOPs; 150,994,944 B of FP32 state per request, read and written back. H100: 989.5 TFLOP/s, 3.35 TB/s.
TWO_N = W = 51_247_879_168
KV, ATT, STATE = 65_536, 393_216, 150_994_944
PI, BETA = 989.5e12, 3.35e12


def ops_of(view: dict, step: int, layout: str = "wide") -> list[tuple[str, str, float]]:
    """(operation, bound, width) of each segment of one step's bar in the ops diagram (0 prefill, 1 decode)."""
    root = drawings(view["svg"]["ops"])[layout]
    rects = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("data-op")]
    starts = [i for i, r in enumerate(rects) if r.get("data-op") == "matmuls"] + [len(rects)]
    return [(r.get("data-op"), r.get("data-bound"), float(r.get("width"))) for r in rects[starts[step]:starts[step + 1]]]


def test_roofline_decode_at_512_sums_its_operations_and_shows_the_overlapped_bound():
    view = widgets.render("roofline", {"B": 512, "context": 4096, "lang": "en"})
    check_view(view)
    matmuls = max(512 * TWO_N / PI, W / BETA)  # 26.517 ms, compute-bound (15.298 ms of weight reads)
    attention = max(512 * 4096 * ATT / PI, 512 * 4097 * KV / BETA)  # 41.037 ms, memory-bound
    state = 512 * 2 * STATE / BETA  # 46.155 ms
    overlapped = max((512 * TWO_N + 512 * 4096 * ATT) / PI, (W + 512 * 4097 * KV + 512 * 2 * STATE) / BETA)
    assert (matmuls + attention + state) * 1e3 == pytest.approx(113.709, abs=5e-4)
    assert overlapped * 1e3 == pytest.approx(102.489, abs=5e-4)
    out = view["outputs"]
    assert out["decode_ms"] == {"value": 113.709, "text": "113.71 ms"}
    assert out["decode_overlapped_ms"] == {"value": 102.489, "text": "102.49 ms"}
    assert out["step_time"]["value"] == 113.709  # the formula's term panel shows the per-operation time
    assert out["decode_bound"]["text"] == "weight matmuls compute-bound, the rest memory-bound"
    decode = ops_of(view, 1)
    assert [(name, bound) for name, bound, _ in decode] == [
        ("matmuls", "compute"), ("attention", "memory"), ("state", "memory")]
    # One time scale: segment widths in proportion to the operations' times, on a phone too.
    assert decode[2][2] / decode[0][2] == pytest.approx(state / matmuls, rel=1e-3)
    narrow = ops_of(view, 1, "narrow")
    assert [op[:2] for op in narrow] == [op[:2] for op in decode]
    assert narrow[2][2] / narrow[0][2] == pytest.approx(state / matmuls, rel=1e-3)
    assert "decode B=512: 113.71 ms = weight matmuls 26.52 ms (compute-bound)" in view["svg"]["ops"]
    assert "overlapped 102.49 ms" in view["svg"]["ops"]
    derivation = view["derivations"]["decode_ms"]
    assert "26.52 ms (compute-bound)" in derivation and "41.04 ms (memory-bound)" in derivation
    assert "= 113.71 ms" in derivation and derivation.endswith("= 102.49 ms")
    zh = widgets.render("roofline", {"B": 512, "context": 4096})
    assert zh["outputs"]["decode_bound"]["text"] == "权重矩阵乘算力受限，其余带宽受限"


def test_roofline_small_batches_are_unchanged_every_operation_memory_bound():
    one = widgets.render("roofline", {"B": 1, "context": 4})
    assert one["outputs"]["decode_ms"]["value"] == 15.3881
    assert (W + 5 * KV + 2 * STATE) / BETA * 1e3 == pytest.approx(15.3881, abs=5e-5)
    assert one["outputs"]["decode_overlapped_ms"]["value"] == 15.3881
    assert one["outputs"]["decode_bound"]["text"] == "带宽受限"
    assert {bound for step in (0, 1) for _, bound, _ in ops_of(one, step)} == {"memory"}
    at_58 = widgets.render("roofline", {"B": 58, "context": 4096})
    assert at_58["outputs"]["tokens_per_s"]["text"] == "2,304 tok/s"
    for b in (1, 8, 58, 128):
        out = widgets.render("roofline", {"B": b, "context": 4096})["outputs"]
        by_hand = (W + b * 4097 * KV + b * 2 * STATE) / BETA * 1e3
        assert out["decode_ms"]["value"] == pytest.approx(by_hand, rel=1e-5)
        assert out["decode_ms"]["value"] == out["decode_overlapped_ms"]["value"]
        assert out["decode_bound"]["text"] == "带宽受限"


def test_roofline_prefill_note_names_its_compute_bound_operations():
    # T = 2,048: matmuls and causal attention are compute-bound; writing the state is not. With the LM head
    # (1,271,398,400 of the 25,623,939,584 weights) only at the last position, the matmuls' intensity is
    # (2 x 24,352,541,184 x 2,048 + 2 x 1,271,398,400) / 51,247,879,168 = 1,946.4, not 2,048; the whole step's
    # (99,750,551,486,464 + 393,216 x 2,048 x 2,049 / 2) FLOP / (51,247,879,168 + 2,048 x 65,536 + 150,994,944) B
    # = 100,575,587,860,480 / 51,533,091,840 = 1,951.7 FLOP/B (2,053 with the LM head at every position).
    out = widgets.render("roofline", {"T": 2048, "lang": "en"})["outputs"]
    assert out["prefill_bound"]["text"] == "weight matmuls and attention compute-bound, the rest memory-bound"
    assert out["prefill_intensity"]["text"] == "1,952 FLOP/B"
    assert out["prefill_intensity"]["value"] == pytest.approx(100_575_587_860_480 / 51_533_091_840, rel=1e-5)
    # T = 150: attention (intensity 6 x 151 / 2 = 453) is past the ridge, the matmuls (about 142.6) are not.
    mid = widgets.render("roofline", {"T": 150, "lang": "en"})["outputs"]
    assert mid["prefill_bound"]["text"] == "attention compute-bound, the rest memory-bound"


def test_roofline_critical_batch_is_the_first_batch_past_the_ridge():
    # Weight matmuls: intensity B x 2N / W = B in BF16, compute-bound once B > pi / beta.
    for gpu, ridge, want in (("h100-sxm", 989.5 / 3.35, 296), ("h200-sxm", 989.5 / 4.8, 207)):
        assert int(ridge) + 1 == want
        view = widgets.render("roofline", {"hardware": gpu, "lang": "en"})
        assert view["outputs"]["critical_batch"] == {"value": want, "text": str(want)}
        assert view["derivations"]["critical_batch"].endswith(f"> {ridge:.1f} → B = {want}")
    below = widgets.render("roofline", {"B": 295, "context": 4096})
    at = widgets.render("roofline", {"B": 296, "context": 4096})
    assert [b for _, b, _ in ops_of(below, 1)][0] == "memory" and [b for _, b, _ in ops_of(at, 1)][0] == "compute"


def test_roofline_weights_only_point_is_the_weight_matmuls():
    view = widgets.render("roofline", {"B": 58, "context": 4096, "lang": "en"})
    out = view["outputs"]
    assert out["weights_only_intensity"]["value"] == 58  # 58 x 2N FLOPs over W bytes, 2N = W in BF16
    assert out["attention_intensity"]["value"] == pytest.approx(4096 * ATT / (4097 * KV), rel=1e-5)  # 5.9985
    points = {trace["name"]: trace["x"][0] for trace in view["figures"]["roofline"]["data"][2:]}
    assert points["decode · weight matmuls"] == 58
    assert points["decode · attention"] == pytest.approx(5.9985, abs=1e-4)
    assert points["prefill"] == pytest.approx(view["outputs"]["prefill_intensity"]["value"], rel=1e-5)


def test_roofline_memory_fraction_and_efficiencies():
    # vLLM's 0.9 (its default up to v0.20; 0.92 now) of the H100's 85,520,809,984 B:
    # (76,968,728,985.6 - 55,562,855,904 B) / (4,096 x 65,536 + 150,994,944 B) = 51.04 requests.
    assert int((0.9 * 81_559 * 2**20 - 55_562_855_904) // (4096 * KV + STATE)) == 51
    view = widgets.render("roofline", {"memory_fraction": 0.9, "context": 4096})
    assert view["outputs"]["max_batch"]["value"] == 51
    assert view["derivations"]["max_batch"] == "⌊(0.9 × 85.52 GB − 55.56 GB) ÷ 419.4 MB⌋ = 51"
    assert not widgets.render("roofline", {"memory_fraction": 0.9, "context": 4096, "B": 51})["flags"]["overflow"]
    assert widgets.render("roofline", {"memory_fraction": 0.9, "context": 4096, "B": 52})["flags"]["overflow"]
    # Half the bandwidth doubles a memory-bound step; half the compute lowers the ridge, and the critical batch.
    half = widgets.render("roofline", {"bandwidth_efficiency": 0.5})["outputs"]
    assert half["decode_ms"]["value"] == pytest.approx(2 * 15.3881, abs=1e-3)
    slow = widgets.render("roofline", {"compute_efficiency": 0.5})["outputs"]
    assert slow["critical_batch"]["value"] == int(0.5 * 989.5 / 3.35) + 1 == 148
    assert slow["peak"]["text"] == "494.75 TFLOP/s（H100）"


def test_roofline_capacity_flag_when_the_weights_alone_do_not_fit():
    for gpu in ("a100-sxm-80gb", "h100-sxm", "h200-sxm", "b200"):
        for model in ("qwen3.8-27b", "qwen3-32b", "llama-2-7b"):
            assert not widgets.render("roofline", {"hardware": gpu, "model": model})["flags"]["capacity"]
    # A100 at half its memory: 0.5 x 85,899,345,920 B = 42.95 GB < 55.56 GB of checkpoint, 2 such GPUs to hold it.
    view = widgets.render("roofline", {"hardware": "a100-sxm-80gb", "memory_fraction": 0.5})
    assert view["flags"] == {"capacity": True, "overflow": False, "no_state": False}
    assert view["outputs"]["gpus_needed"]["value"] == 2
    assert view["outputs"]["usable_memory"]["text"] == "42.95 GB"
    assert view["outputs"]["max_batch"]["value"] == 0


def test_roofline_english_view_has_no_chinese():
    import re

    for state in ({}, {"B": 512, "context": 4096, "T": 2048}, {"hardware": "a100-sxm-80gb", "memory_fraction": 0.5}):
        view = widgets.render("roofline", {**state, "lang": "en"})
        text = json.dumps(view, ensure_ascii=False)
        assert not re.search(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", text), state


@pytest.mark.parametrize("state, expected", [
    ({"T": "2048"}, {"T": 2048}),
    ({"T": 10**12}, {"T": 32_768}),
    ({"T": -3}, {"T": 1}),
    ({"T": "nan"}, {"T": 4}),
    ({"T": "<script>alert(1)</script>"}, {"T": 4}),
    ({"hardware": "tpu"}, {"hardware": "h100-sxm"}),
    ({"B": 7.6}, {"B": 8}),
    ({"nonsense": 1}, {}),
])
def test_bad_state_is_clamped_or_replaced(state, expected):
    clean = coerce_state(roofline_widget.WIDGET.controls, state)
    for key, value in expected.items():
        assert clean[key] == value
    assert "nonsense" not in clean
    check_view(widgets.render("roofline", state))


def test_render_json_round_trip_and_garbage():
    assert json.loads(widgets.render_json("roofline", '{"T": 2048}'))["state"]["T"] == 2048
    assert json.loads(widgets.render_json("roofline", "not json"))["state"]["T"] == 4
    assert json.loads(widgets.render_json("roofline", "[1, 2]"))["state"]["T"] == 4


def test_unknown_widget_is_a_value_error():
    with pytest.raises(ValueError, match="unknown widget 'nope'"):
        widgets.load("nope")
    with pytest.raises(ValueError, match="unknown widget"):
        widgets.load("decode_ceiling")  # a module name, not a widget name
    assert "kit" not in widgets.names() and "roofline" in widgets.names()


def test_config_problems_name_the_parameter():
    assert config_problems(roofline_widget.WIDGET.controls, {"T": 4, "B": 2}) == []
    assert config_problems(roofline_widget.WIDGET.controls, {"X": 1})[0].control == "X"
    assert "from 1 to 32,768" in config_problems(roofline_widget.WIDGET.controls, {"T": 0})[0].message
    assert config_problems(roofline_widget.WIDGET.controls, [1])[0].control is None
    assert "one of" in config_problems(roofline_widget.WIDGET.controls, {"model": "gpt"})[0].message
    # a word the widget does not know comes with those it knows, for the builder to name the nearest
    [unknown] = config_problems(roofline_widget.WIDGET.controls, {"contxt": 4})
    assert (unknown.unknown, unknown.known[:3]) == ("contxt", ("T", "B", "context"))
    [option] = config_problems(roofline_widget.WIDGET.controls, {"model": "gpt"})
    assert (option.unknown, "llama-2-7b" in option.known) == ("gpt", True)
    assert config_problems(roofline_widget.WIDGET.controls, {"T": 0})[0].unknown is None  # a number is no word


def test_a_select_of_numbers_takes_the_number_a_lesson_or_a_link_writes():
    # `chunk_tokens: 256` in a widget's YAML, or ?prefill-interference.chunk_tokens=256 read as YAML, is the int 256:
    # it names the option "256" (it was refused, and coerced to the default)
    from sim.widgets import prefill_interference
    controls = prefill_interference.WIDGET.controls
    assert config_problems(controls, {"chunk_tokens": 256}) == []
    assert coerce_state(controls, {"chunk_tokens": 256})["chunk_tokens"] == "256"
    assert widgets.render("prefill-interference", {"chunk_tokens": 256})["state"]["chunk_tokens"] == "256"
    assert "one of" in config_problems(controls, {"chunk_tokens": 300})[0].message
    assert "one of" in config_problems(controls, {"chunk_tokens": True})[0].message  # not the option "1" or "True"
    assert coerce_state(controls, {"chunk_tokens": 256.5})["chunk_tokens"] == "0"


@pytest.mark.parametrize("layout", ["wide", "narrow"])
def test_roofline_byte_bars_share_one_scale_and_split_by_kind(layout):
    view = widgets.render("roofline", {"B": 58, "context": 4096})
    root = drawings(view["svg"]["bytes"])[layout]
    rects = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("data-kind")]
    widths = {(i // 3, r.get("data-kind")): float(r.get("width")) for i, r in enumerate(rects)}
    # decode at B=58, context 4,096: weights 51.25 GB, state 58 x 302 MB, KV 58 x 268.5 MB, one scale for both bars.
    assert widths[(0, "weights")] == pytest.approx(widths[(1, "weights")], abs=0.01)
    assert widths[(1, "state")] / widths[(1, "weights")] == pytest.approx(58 * 2 * 150_994_944 / 51_247_879_168, rel=1e-3)
    assert widths[(1, "kv")] / widths[(1, "weights")] == pytest.approx(58 * 4097 * 65_536 / 51_247_879_168, rel=1e-3)
    assert "<script" not in view["svg"]["bytes"]


def test_roofline_ops_diagram_is_small_and_escaped():
    view = widgets.render("roofline", {"B": 1024, "context": 131072, "T": 32768})
    for root in drawings(view["svg"]["ops"]).values():
        markup = ET.tostring(root, encoding="unicode")
        assert markup.count("<ns0:rect") <= 3 * 2 + 2 + 3 and "script" not in markup
        assert all(cls in markup for cls in ('class="svg-label"', 'class="svg-value"', 'class="svg-muted"'))


@pytest.mark.parametrize("state", [{}, {"B": 512, "context": 4096, "lang": "en"}, {"T": 32768, "B": 1024},
                                   {"model": "qwen3.8-27b", "B": 64, "context": 131072, "lang": "en"}])
@pytest.mark.parametrize("name", ["ops", "bytes"])
def test_roofline_diagrams_are_drawn_for_a_phone_too_with_every_label(state, name):
    found = check_responsive(widgets.render("roofline", state)["svg"][name])
    words = {layout: sorted("".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text"))
             for layout, root in found.items()}
    # The same words: step names, totals, bounds and the legend (an operation's own name or time is written in
    # its segment where it fits, so a narrower bar may carry fewer of those; its tooltip and the label name them).
    segment = {"".join(t.itertext()) for root in found.values() for t in root.iter("{http://www.w3.org/2000/svg}text")
               if t.get("class") == "svg-value"}
    assert [w for w in words["wide"] if w not in segment] == [w for w in words["narrow"] if w not in segment]
    titles = {layout: [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")] for layout, root in found.items()}
    assert titles["wide"] == titles["narrow"] and titles["wide"]


def test_log_slider_stops_cover_the_range_and_place_every_value():
    r = Range("T", default=4, min=1, max=32_768, log=True)
    stops = r.stops()
    assert stops[0] == 1 and stops[-1] == 32_768 and list(stops) == sorted(set(stops))
    assert stops[:10] == tuple(range(1, 11))  # one unit at a time where values are small
    assert max(b / a for a, b in zip(stops, stops[1:]) if a >= 100) < 1.04  # 2.6% per stop, a little more where rounding bites
    assert r.slider_position(1) == 0 and r.slider_position(32_768) == len(stops) - 1
    for value in (2, 2048, 3000, 32_767):
        assert stops[r.slider_position(value)] <= value < (stops + (10**9,))[r.slider_position(value) + 1]


def test_linear_slider_has_no_stops_its_position_is_its_value():
    r = Range("layers", default=32, min=1, max=256)
    assert r.stops() is None and r.slider_position(77) == 77


def test_a_step_snaps_log_stops_too():
    r = Range("x", default=16, min=16, max=1_024, step=16, log=True)
    assert all(v % 16 == 0 for v in r.stops())


# --- a control that changes nothing says so (sim/kit/layout.py Flag.controls) ------------------------------------

# Controls that change nothing in some state here and no note marks yet, each with the reason it is left: the test
# fails when one of them is marked or starts to count (take it off the list) and when a new one appears.
UNMARKED = {
    ("batching-timeline", "kv_policy"): "at the widget's batches every layout holds every request; a note should "
                                        "say when memory does not bind, computed, not that the layout never applies",
}


def _annotations(widget) -> set[str]:
    from builder.widgets import flags_of
    return {f.name for f in flags_of(widget.layout) if f.controls}


def _shown(view: dict, annotations: set[str]) -> dict:
    """What a student sees change: every output, figure, diagram and derivation, and the flags but the notes that
    mark controls (which a move of such a control may turn on)."""
    return {"outputs": view["outputs"], "figures": view["figures"], "svg": view["svg"],
            "derivations": view["derivations"],
            "flags": {k: v for k, v in view["flags"].items() if k not in annotations}}


def _states(widget) -> list[dict]:
    """The default state, and each menu or row of buttons of up to six options at each other option (a slow
    widget: its first control's only)."""
    selects = [c for c in widget.controls if isinstance(c, Select) and len(c.options) <= 6]
    if widget.slow:
        selects = [c for c in selects if c is widget.controls[0]]
    return [{}] + [{c.name: o} for c in selects for o in c.options if o != c.default]


@pytest.mark.parametrize("name", widgets.names())
def test_a_control_that_changes_nothing_is_marked_by_a_note_that_says_why(name):
    module = widgets.load(name)
    annotations = _annotations(module.WIDGET)
    unmarked = set()
    for start in _states(module.WIDGET):
        base = widgets.render(name, start)
        state = base["state"]
        marked = {c for f in flags_of_on(module.WIDGET, base) for c in f.controls}
        for c in module.WIDGET.controls:
            others = ([o for o in c.options if o != state[c.name]] if isinstance(c, Select)
                      else [v for v in (c.min, c.max) if v != state[c.name]] if isinstance(c, Range) else [])
            if not others or c.name in marked:
                continue
            if all(_shown(widgets.render(name, {**state, c.name: v, "changed": c.name}), annotations)
                   == _shown(base, annotations) for v in others):
                unmarked.add(c.name)
    assert unmarked == {c for (w, c) in UNMARKED if w == name}, (
        f"{name}: these controls change nothing in some state and no note says so; give the widget a "
        "Flag(..., tone='note', controls=(...)) that is on in those states")


def flags_of_on(widget, view: dict):
    from builder.widgets import flags_of
    return [f for f in flags_of(widget.layout) if f.controls and view["flags"].get(f.name)]


def test_a_note_marks_only_controls_the_widget_has_and_only_while_it_is_on():
    from builder.widgets import DeclarationError, inert_controls
    from sim.kit import Widget
    from sim.kit.layout import Flag
    controls = (Select("a", "x", ("x", "y")), Range("b", 1, 1, 9))
    widget = Widget(controls, (Flag("note", tone="note", controls=("b",)),))
    assert inert_controls(widget, {"flags": {"note": True}}) == {"b": "note"}
    assert inert_controls(widget, {"flags": {"note": False}}) == {}
    with pytest.raises(DeclarationError, match="names control 'c', which the widget does not have"):
        inert_controls(Widget(controls, (Flag("note", tone="note", controls=("c",)),)), {"flags": {"note": True}})
    with pytest.raises(DeclarationError, match="make it tone='note'"):
        inert_controls(Widget(controls, (Flag("warn", controls=("b",)),)), {"flags": {"warn": True}})


@pytest.mark.parametrize("name", widgets.names())
def test_every_plot_legend_sits_above_its_plot(name):
    # Anchored by its bottom above the plot area, a legend that wraps on a phone widens the top margin instead of
    # growing over the curves (anchored by its top) or the x-axis title (below the plot).
    for lang in ("zh", "en"):
        for figure, spec in widgets.render(name, {"lang": lang})["figures"].items():
            legend = spec["layout"].get("legend")
            shown = [trace for trace in spec["data"] if trace.get("showlegend", True) and trace.get("name")]
            if legend or len(shown) > 1:
                assert legend and legend["yanchor"] == "bottom" and legend["y"] >= 1, \
                    f"{name}/{figure}: legend {legend}; use palette.legend_above()"
