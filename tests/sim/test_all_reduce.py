"""The all-reduce widget: one all-reduce's time against its size, the formula beside Vidur's medians, held to the
shipped CSV and to hand computations."""

import json
import math
import re
import string
from pathlib import Path

import pytest

from sim import widgets
from sim.kit.controls import coerce_state
from sim.kit.view import round_sig
from sim.physics import parallel
from sim.widgets import all_reduce
from tests.sim.test_widgets import check_view

CSV = Path(__file__).resolve().parents[2] / "sim" / "physics" / "data" / "vidur-all-reduce.csv"
MIB = 1_048_576


def shipped() -> dict[tuple[str, int], dict[int, float]]:
    """The CSV read by hand: (setup, GPUs) -> {bytes: median seconds}."""
    table: dict[tuple[str, int], dict[int, float]] = {}
    for line in CSV.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#") or line.startswith("setup,"):
            continue
        setup, gpus, size, ms = line.split(",")
        table.setdefault((setup, int(gpus)), {})[int(size)] = float(ms) / 1000
    return table


def values(view: dict) -> dict:
    return {name: out["value"] for name, out in view["outputs"].items()}


def test_the_default_is_one_mib_among_eight_h100s():
    view = widgets.render("all-reduce", {"lang": "en"})
    check_view(view)
    assert view["state"] == {"link": "nvlink-h100", "gpus": "8", "size": MIB, "lang": "en"}
    v = values(view)
    floor = 34e-6  # the median of the 9 medians up to 1 MiB: 19, 23, 29, 31, 34, 35, 36, 37, 39 µs
    points = shipped()[("h100_dgx", 8)]
    assert sorted(t for b, t in points.items() if b <= MIB)[4] == pytest.approx(floor)
    assert v["floor"] == pytest.approx(floor * 1e6)
    ring = 2 * 7 / 8 * MIB / 450e9
    assert v["ring"] == pytest.approx(ring * 1e6, rel=1e-5)  # 4.08 µs
    assert v["formula"] == pytest.approx((floor + ring) * 1e6, rel=1e-5)  # 38.1 µs
    assert v["measured"] == round_sig(points[MIB] * 1e6, 6) == 34  # a size Vidur measured: its median exactly
    assert view["outputs"]["regime"]["text"] == "latency-bound"
    assert view["derivations"]["formula"] == "34.0 µs + 2·7/8 × 1 MiB ÷ 450 GB/s = 34.0 µs + 4.08 µs = 38.1 µs"
    assert view["derivations"]["busbw"] == "1,048,576 bytes ÷ 34.0 µs × 2·7/8 = 54.0 GB/s"
    assert not any(view["flags"].values())


@pytest.mark.parametrize("link, setup", [("nvlink-h100", "h100_dgx"), ("nvlink-a100", "a100_dgx")])
@pytest.mark.parametrize("gpus", ["2", "4", "8"])
def test_at_every_measured_power_of_two_the_measured_readout_is_the_csv_median(link, setup, gpus):
    points = shipped()[(setup, int(gpus))]
    for size in all_reduce.SIZES:
        if size in points:
            v = values(widgets.render("all-reduce", {"link": link, "gpus": gpus, "size": size}))
            assert v["measured"] == round_sig(points[size] * 1e6, 6), size


def test_between_two_measured_sizes_log_time_is_interpolated_in_log_size():
    # A100 DGX, 8 GPUs: 2,048 B in 0.062 ms and 10,240 B in 0.025 ms; 4,096 B lies log(2)/log(5) of the way.
    w = math.log(2) / math.log(5)
    by_hand = math.exp(math.log(62) + w * math.log(25 / 62))  # µs
    view = widgets.render("all-reduce", {"link": "nvlink-a100", "size": 4096, "lang": "en"})
    assert values(view)["measured"] == pytest.approx(by_hand, rel=1e-5)
    assert view["derivations"]["measured"].startswith("between 2 KiB (62.0 µs) and 10 KiB (25.0 µs)")


def test_below_the_smallest_size_measured_the_smallest_ones_median_stands_in():
    view = widgets.render("all-reduce", {"size": 1024, "lang": "en"})
    assert view["flags"]["below"]
    assert values(view)["measured"] == round_sig(shipped()[("h100_dgx", 8)][2048] * 1e6, 6)  # 37 µs
    assert view["outputs"]["smallest"]["text"] == "2 KiB"


@pytest.mark.parametrize("link", ["nvlink-b200", "pcie-gen5-x16", "pcie-gen4-x16"])
def test_a_link_with_no_curve_says_not_measured_and_its_bus_bandwidth_is_the_formulas(link):
    view = widgets.render("all-reduce", {"link": link, "size": 64 * MIB, "lang": "en"})
    check_view(view)
    assert view["flags"]["no_curve"] and view["outputs"]["measured"]["text"] == "not measured"
    assert view["outputs"]["busbw_of"]["text"] == "of the formula's time"
    v = values(view)
    ic = parallel.interconnect(link)
    assert v["busbw"] == pytest.approx(64 * MIB / (v["formula"] / 1e6) * 1.75 / 1e9, rel=1e-4)
    assert [t["name"] for t in view["figures"]["figure"]["data"]] == [
        "latency floor", "ring term", "formula", "size chosen", "size chosen"]  # no measured markers
    assert ic.curve is None


def test_the_pcie_links_take_their_floor_at_four_gpus_and_their_bandwidth_from_the_lane_rate():
    for link, setup, gt in (("pcie-gen5-x16", "h100_pairwise_nvlink", 32e9), ("pcie-gen4-x16", "a100_pairwise_nvlink",
                                                                              16e9)):
        bandwidth = 16 * gt * 128 / 130 / 8  # 16 lanes, 128b/130b, bits to bytes
        for gpus in all_reduce.GPUS:
            v = values(widgets.render("all-reduce", {"link": link, "gpus": gpus}))
            assert v["floor"] == pytest.approx(parallel.latency_floor(setup, 4) * 1e6)
            n = int(gpus)
            assert v["ring"] == pytest.approx(2 * (n - 1) / n * MIB / bandwidth * 1e6, rel=1e-5)


def test_bus_bandwidth_at_64_mib_on_eight_h100s_is_the_csvs():
    view = widgets.render("all-reduce", {"size": 64 * MIB, "lang": "en"})
    seconds = shipped()[("h100_dgx", 8)][64 * MIB]
    by_hand = 64 * MIB / seconds * 2 * 7 / 8 / 1e9  # nccl-tests' busBw: S / t x 2(n-1)/n
    assert values(view)["busbw"] == pytest.approx(by_hand, rel=1e-5)
    assert 360 < by_hand < 370  # about 365 GB/s of NVLink 4's 450
    assert view["outputs"]["busbw_of"]["text"] == "of the measured time"


def test_the_regime_flips_at_the_crossover():
    # H100 DGX, 8 GPUs: 34 µs x 450 GB/s ÷ 2·7/8 = 8,742,857 B = 8.34 MiB.
    crossover = 34e-6 * 450e9 / 1.75
    below = widgets.render("all-reduce", {"size": 8 * MIB, "lang": "en"})
    above = widgets.render("all-reduce", {"size": 16 * MIB, "lang": "en"})
    assert 8 * MIB < crossover < 16 * MIB
    assert values(below)["crossover"] == pytest.approx(crossover, rel=1e-5)
    assert below["outputs"]["crossover"]["text"] == "crossover at 8.34 MiB"
    assert below["outputs"]["regime"]["text"] == "latency-bound" and values(below)["regime"] < 1
    assert above["outputs"]["regime"]["text"] == "bandwidth-bound" and values(above)["regime"] > 1
    assert below["derivations"]["regime"] == ("ring term 32.6 µs < floor 34.0 µs: latency-bound; crossover = "
                                              "34.0 µs × 450 GB/s ÷ 2·7/8 = 8.34 MiB")
    # the figure shades the bandwidth-bound side from the crossover on
    shapes = below["figures"]["figure"]["layout"]["shapes"]
    region = next(s for s in shapes if s["type"] == "rect")
    lo, hi = all_reduce.X_RANGE
    assert region["x0"] == pytest.approx((math.log10(crossover) - lo) / (hi - lo), abs=1e-4)
    # Two GPUs send 2·1/2 of the message each: on an A100 DGX (floor 47 µs, 300 GB/s) the crossover is 13.4 MiB.
    two = widgets.render("all-reduce", {"link": "nvlink-a100", "gpus": "2", "lang": "en"})
    floor = parallel.latency_floor("a100_dgx", 2)
    assert values(two)["crossover"] == pytest.approx(floor * 300e9 / 1, rel=1e-5)


def test_the_floor_is_read_where_parallel_reads_it_and_its_derivation_lists_the_points():
    for link in all_reduce.LINKS:
        ic = parallel.interconnect(link)
        for gpus in all_reduce.GPUS:
            k = parallel.floor_gpus(ic, int(gpus))
            assert parallel.latency_floor(ic.floor, k) == parallel.floor_for(ic, int(gpus))
    view = widgets.render("all-reduce", {"lang": "en"})
    assert view["derivations"]["floor"] == ("median of the medians up to 1 MiB on h100_dgx among 8 GPUs (19.0, 23.0, "
                                            "29.0, 31.0, 34.0, 35.0, 36.0, 37.0, 39.0 µs) = 34.0 µs")


def test_each_links_floor_provenance_names_the_setup_it_is_read_on():
    for link in all_reduce.LINKS:
        ic = parallel.interconnect(link)
        for lang in ("zh", "en"):
            text = all_reduce.TEXT[lang][f"floor.{link}"]
            assert ic.floor in text, (link, lang)
            assert fmt_bandwidth(ic) in text, (link, lang)
            assert ("OUR CHOICE" in text) == ("OUR CHOICE" in ic.floor_note) or lang == "zh"
        view = widgets.render("all-reduce", {"link": link, "lang": "en"})
        assert view["outputs"]["provenance"]["text"] == all_reduce.TEXT["en"][f"floor.{link}"]


def fmt_bandwidth(ic) -> str:
    gb = ic.bandwidth_bytes_per_s / 1e9
    return f"{gb:.1f} GB/s" if gb < 100 else f"{gb:.0f} GB/s"


def test_the_figure_shows_the_measured_points_the_formula_and_the_size_chosen():
    view = widgets.render("all-reduce", {"gpus": "4", "size": 4 * MIB, "lang": "en"})
    data = {trace["name"]: trace for trace in view["figures"]["figure"]["data"]}
    points = shipped()[("h100_dgx", 4)]
    assert data["measured (Vidur, median)"]["x"] == sorted(points)
    assert data["measured (Vidur, median)"]["y"] == [pytest.approx(points[b] * 1e6) for b in sorted(points)]
    assert data["formula"]["x"] == list(all_reduce.SIZES) and len(all_reduce.SIZES) == 17
    assert data["size chosen"]["x"] == [4 * MIB]
    assert data["size chosen"]["y"][0] == pytest.approx(values(view)["formula"], rel=1e-4)
    line = view["figures"]["figure"]["data"][-2]
    assert line["x"] == [4 * MIB, 4 * MIB] and line["name"] == "size chosen" and line["showlegend"] is False
    alt = view["figures"]["figure"]["alt"]
    assert alt.startswith("One all-reduce among 4 GPUs on NVLink (H100), time against size: 1 KiB: formula")
    assert "64 MiB: formula" in alt and alt.endswith("bandwidth-bound above.")


def test_a_size_move_only_moves_points_so_the_page_animates_them():
    """The page draws a move whose layout and traces are the same but for x and y with Plotly.animate (widget.js
    pointsMoved), about half the time of a whole redraw: a size move must change nothing else."""
    def drawn(size):
        figure = widgets.render("all-reduce", {"size": size, "lang": "en"})["figures"]["figure"]
        return figure["layout"], [{k: v for k, v in trace.items() if k not in ("x", "y")} for trace in figure["data"]]

    assert drawn(MIB) == drawn(4 * MIB) == drawn(2**26)


def test_every_state_renders_and_bad_values_are_replaced():
    for link in all_reduce.LINKS:
        for gpus in all_reduce.GPUS:
            for size in all_reduce.SIZES:
                view = widgets.render("all-reduce", {"link": link, "gpus": gpus, "size": size})
                assert view["outputs"]["formula"]["value"] > 0
    check_view(widgets.render("all-reduce", {"link": "pcie-gen4-x16", "gpus": "2", "size": 1024, "lang": "en"}))
    for state, expected in (({"gpus": 4}, {"gpus": "4"}), ({"gpus": "3"}, {"gpus": "8"}),
                            ({"link": "nvlink-h200"}, {"link": "nvlink-h100"}), ({"size": 3000}, {"size": 2048}),
                            ({"size": 10**12}, {"size": 64 * MIB}), ({"size": "x"}, {"size": MIB})):
        clean = coerce_state(all_reduce.WIDGET.controls, state)
        assert {k: clean[k] for k in expected} == expected
        check_view(widgets.render("all-reduce", state))


def test_both_languages_have_the_same_keys_and_placeholders():
    zh, en = all_reduce.TEXT["zh"], all_reduce.TEXT["en"]
    assert zh.keys() == en.keys()
    for key in zh:
        slots = [{f for _, f, _, _ in string.Formatter().parse(t[key]) if f} for t in (zh, en)]
        assert slots[0] == slots[1], key


def test_the_english_view_has_no_chinese():
    for state in ({}, {"link": "nvlink-b200"}, {"size": 1024}, {"link": "pcie-gen4-x16", "gpus": "2"}):
        text = json.dumps(widgets.render("all-reduce", {**state, "lang": "en"}), ensure_ascii=False)
        assert not re.search(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", text), state
