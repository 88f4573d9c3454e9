import json

import plotly.graph_objects as go
import pytest

from sim import widgets
from sim.kit import config_problems
from sim.kit.controls import Range, coerce_state
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


def test_roofline_default_view_matches_the_running_example():
    view = widgets.render("roofline", {})
    check_view(view)
    assert view["outputs"]["decode_ms"] == {"value": 15.3881, "text": "15.39 ms"}
    assert view["outputs"]["prefill_ms"]["text"] == "15.34 ms"
    assert view["flags"] == {"capacity": False}


def test_roofline_capacity_flag_turns_on_past_max_batch():
    at = widgets.render("roofline", {"B": 58, "context": 4096})
    past = widgets.render("roofline", {"B": 59, "context": 4096})
    assert at["outputs"]["max_batch"]["value"] == 58 and not at["flags"]["capacity"]
    assert past["flags"]["capacity"]
    assert at["outputs"]["tokens_per_s"]["text"] == "2,304 tok/s"


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
    assert config_problems(roofline_widget.WIDGET.controls, {"X": 1})[0][0] == "X"
    assert "from 1 to 32,768" in config_problems(roofline_widget.WIDGET.controls, {"T": 0})[0][1]
    assert config_problems(roofline_widget.WIDGET.controls, [1])[0][0] is None
    assert "one of" in config_problems(roofline_widget.WIDGET.controls, {"model": "gpt"})[0][1]


def test_roofline_byte_bars_share_one_scale_and_split_by_kind():
    import xml.etree.ElementTree as ET

    view = widgets.render("roofline", {"B": 58, "context": 4096})
    root = ET.fromstring(view["svg"]["bytes"])
    rects = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("data-kind")]
    widths = {(i // 3, r.get("data-kind")): float(r.get("width")) for i, r in enumerate(rects)}
    # decode at B=58, context 4,096: weights 51.25 GB, state 58 x 302 MB, KV 58 x 268.5 MB, one scale for both bars.
    assert widths[(0, "weights")] == pytest.approx(widths[(1, "weights")], abs=0.01)
    assert widths[(1, "state")] / widths[(1, "weights")] == pytest.approx(58 * 2 * 150_994_944 / 51_247_879_168, rel=1e-3)
    assert widths[(1, "kv")] / widths[(1, "weights")] == pytest.approx(58 * 4097 * 65_536 / 51_247_879_168, rel=1e-3)
    assert "<script" not in view["svg"]["bytes"]


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
