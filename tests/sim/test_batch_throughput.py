"""The batch-throughput widget's view: readouts, flag, table and figure for hand-checked states."""

import re

import pytest

from sim import kit, widgets
from sim.physics import presets
from sim.widgets import batch_throughput
from tests.sim.test_widgets import check_view

ANCHOR_4096 = {"B": 58, "context": 4096, "hardware": "h100-sxm", "model": "qwen3.8-27b"}


def render(state: dict) -> dict:
    view = widgets.render("batch-throughput", state)
    check_view(view)
    return view


def table_rows(view: dict) -> dict[str, list[str]]:
    """Row header -> cell texts of the computed table (B, total, per request, step, memory, bound)."""
    row = r'<tr(?: class="[^"]*")? data-batch="\d+"><th scope="row"[^>]*>(.*?)</th>(.*?)</tr>'
    rows = re.findall(row, view["svg"]["table"])
    def text(markup: str) -> str:
        return re.sub(r"<[^>]*>", "", markup)
    return {text(head): [text(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", cells)] for head, cells in rows}


def row_classes(view: dict) -> dict[int, str]:
    """Batch -> the class attribute of its table row ("" without one)."""
    rows = re.findall(r'<tr(?: class="([^"]*)")? data-batch="(\d+)">', view["svg"]["table"])
    return {int(batch): classes for classes, batch in rows}


def test_default_is_32_requests_of_4096_tokens_on_an_h100():
    view = render({})
    assert view["state"]["B"] == 32 and view["state"]["context"] == 4096
    # (51,247,879,168 + 32 x 570,490,880) B / 3.35 TB/s = 20.747 ms
    assert view["outputs"]["step_ms"] == {"value": 20.7473, "text": "20.75 ms"}
    assert view["outputs"]["total_tokens_per_s"]["text"] == "1,542 tok/s"
    assert view["outputs"]["per_request_tokens_per_s"]["text"] == "48.2 tok/s"
    assert view["outputs"]["weights_share"]["text"] == "73.7%"
    assert view["outputs"]["bound"] == {"value": 0, "text": "带宽受限"}
    assert view["flags"] == {"capacity": False, "over_capacity": False, "no_state": False}


def test_step_time_is_the_sum_over_operations_with_the_overlapped_bound_beside():
    # matmuls 51,247,879,168 B / 3.35 TB/s = 15.298 ms; attention 32 x 4,097 x 65,536 B / 3.35 TB/s = 2.565 ms;
    # state 32 x 2 x 150,994,944 B / 3.35 TB/s = 2.885 ms: all memory-bound, so the sum equals the aggregate.
    view = render({})
    assert view["derivations"]["step_ms"] == (
        "矩阵乘 max(1.640 TFLOP ÷ 989.5 TFLOP/s, 51.25 GB ÷ 3.35 TB/s) "
        "+ 注意力 max(51.54 GFLOP ÷ 989.5 TFLOP/s, 8.592 GB ÷ 3.35 TB/s) + 递归状态 9.664 GB ÷ 3.35 TB/s "
        "= 15.30 ms + 2.56 ms + 2.88 ms = 20.75 ms（若各算子完全重叠：max(1.71 ms, 20.75 ms) = 20.75 ms）")
    assert view["derivations"]["bound"].endswith("算力受限的时间 0 ms ÷ 20.75 ms = 0% → 带宽受限")
    assert "矩阵乘强度 32.0 FLOP/B ≤ 拐点 295 FLOP/B → 带宽受限（15.30 ms）" in view["derivations"]["bound"]


def test_71_requests_fit_and_72_do_not():
    # The reference's batch of 58 (what fits on the datasheet's 80 x 10^9 B) fits with room to spare.
    at = render(ANCHOR_4096)
    assert at["outputs"]["max_batch"]["value"] == 71
    assert at["outputs"]["total_tokens_per_s"] == {"value": 2303.87, "text": "2,304 tok/s"}
    assert not at["flags"]["over_capacity"]
    # (85,520,809,984 B as the H100 reports it, 81,559 MiB - 55,562,855,904 B resident)
    # / (4,096 x 65,536 + 150,994,944) B per request = 29,957,954,080 / 419,430,400 = 71.4
    assert at["derivations"]["max_batch"] == "⌊(85.52 GB − 55.56 GB) ÷ 419.4 MB⌋ = 71"
    # 71 / ((51,247,879,168 + 71 x 570,490,880) B / 3.35 TB/s) = 71 / 27.389 ms = 2,592.29 tok/s
    full = render({**ANCHOR_4096, "B": 71})
    assert full["outputs"]["total_tokens_per_s"] == {"value": 2592.29, "text": "2,592 tok/s"}
    assert not full["flags"]["over_capacity"]
    assert render({**ANCHOR_4096, "B": 72})["flags"]["over_capacity"]


def test_table_replaces_the_illustrative_one_with_computed_figures():
    rows = table_rows(render({}))
    assert list(rows) == ["1", "8", "32", "64", "71（上限）", "128", "256"]
    # B = 1: 1 / 15.468 ms = 64.6 tok/s; B = 256: 256 / 58.89 ms = 4,347 tok/s, 17.0 each
    assert rows["1"] == ["64.6", "64.6", "15.47 ms", "放得下", "带宽受限"]
    # B = 71: 71 / 27.389 ms = 2,592 tok/s, 36.5 each
    assert rows["71（上限）"][:2] == ["2,592", "36.5"]
    # B = 256 < 296: on an H100 even the weight matmuls are still memory-bound
    assert rows["256"] == ["4,347", "17.0", "58.89 ms", "放不下", "带宽受限"]
    # 64 requests fit below the limit of 71; 128 do not
    assert rows["64"][3] == "放得下"
    assert rows["128"][3] == "放不下"


def test_figure_marks_the_memory_limit_and_cuts_the_curves_there():
    figure = render({})["figures"]["throughput"]
    solid = [trace for trace in figure["data"] if trace.get("line", {}).get("dash") == "solid"]
    dotted = [trace for trace in figure["data"] if trace.get("line", {}).get("dash") == "dot"]
    assert [t["x"][-1] for t in solid] == [71, 71]
    assert [(t["x"][0], t["x"][-1]) for t in dotted] == [(71, 256), (71, 256)]
    assert any("显存放不下" in a["text"] for a in figure["layout"]["annotations"])
    line = [s for s in figure["layout"]["shapes"] if s["type"] == "line"]
    assert len(line) == 1 and 0 < line[0]["x0"] < 1
    current = figure["data"][-1]
    assert current["x"] == [32, 32]
    assert current["y"][0] == pytest.approx(1542.37, abs=0.01)


LLAMA_A100 = {"hardware": "a100-sxm-80gb", "model": "llama-2-7b", "context": 16}


def annotations(view: dict) -> list[str]:
    return [a["text"] for a in view["figures"]["throughput"]["layout"]["annotations"]]


def bands(view: dict) -> dict[str, float]:
    """Fill colour -> left edge (paper x) of each shaded band."""
    return {s["fillcolor"]: s["x0"] for s in view["figures"]["throughput"]["layout"]["shapes"] if s["type"] == "rect"}


COMPUTE_BAND = "var(--sim-region-compute)"


def test_band_marks_where_the_weight_matmuls_turn_compute_bound():
    # A100 ridge 312 / 2.039 = 153.02 FLOP/B; Llama-2-7B's matmuls do B x 13.21 GFLOP on 13.21 GB of BF16
    # weights, intensity B: compute-bound from B = 154, whatever the context.
    view = render({**LLAMA_A100, "B": 154})
    assert view["outputs"]["critical_batch"] == {"value": 154, "text": "154"}
    assert view["outputs"]["critical_where"]["text"] == "图中紫色区域从这里开始"
    assert view["derivations"]["critical_batch"] == (
        "权重矩阵乘强度 = B × 13.21 GFLOP ÷ 13.21 GB = B × 1.00 FLOP/B > 拐点 153.0 FLOP/B → B ≥ 154")
    assert bands(view)[COMPUTE_BAND] == batch_throughput._paper_x(154)
    assert "权重矩阵乘<br>算力受限<br>B ≥ 154" in annotations(view)
    # matmuls max(154 x 13,214,154,752 / 312e12, 13,214,154,752 / 2.039e12) = max(6.5224, 6.4807) ms
    # + attention 154 x 17 x 524,288 B / 2.039e12 = 0.6732 ms = 7.1955 ms, most of it compute-bound;
    # the aggregate max(6.5265, 7.1539) ms = 7.1539 ms would have called the step memory-bound.
    assert view["outputs"]["step_ms"] == {"value": 7.19554, "text": "7.20 ms"}
    assert view["outputs"]["bound"] == {"value": 1, "text": "矩阵乘算力受限，其余带宽受限"}
    assert view["derivations"]["step_ms"].endswith(
        "= 6.52 ms + 0.673 ms = 7.20 ms（若各算子完全重叠：max(6.53 ms, 7.15 ms) = 7.15 ms）")
    assert view["derivations"]["bound"].endswith(
        "算力受限的时间 6.52 ms ÷ 7.20 ms = 90.6% → 矩阵乘算力受限，其余带宽受限")
    # At B = 153 the matmuls take 6.4800 ms of compute beside 6.4807 ms of reads: still memory-bound.
    assert render({**LLAMA_A100, "B": 153})["outputs"]["bound"] == {"value": 0, "text": "带宽受限"}
    rows = table_rows(view)
    assert list(rows) == ["1", "8", "32", "64", "128", "154（临界）", "256"]
    assert rows["128"][4] == "带宽受限"
    assert rows["154（临界）"][2:] == ["7.20 ms", "放得下", "矩阵乘算力受限，其余带宽受限"]
    assert rows["256"][4] == "矩阵乘算力受限，其余带宽受限"
    # In the table the mixed bound's two clauses go on two lines.
    assert '<td data-label="瓶颈">矩阵乘算力受限，<br>其余带宽受限</td>' in view["svg"]["table"]


def test_band_shows_on_an_h200_at_207():
    # H200 ridge 989.5 / 4.8 = 206.15 FLOP/B -> 207
    view = render({"hardware": "h200-sxm"})
    assert view["outputs"]["critical_batch"]["value"] == 207
    assert bands(view)[COMPUTE_BAND] == batch_throughput._paper_x(207)


def test_on_an_h100_the_critical_batch_is_beyond_the_plot_and_memory():
    # H100 ridge 989.5 / 3.35 = 295.37 FLOP/B -> 296 > 256 plotted; 71 requests fit at 4,096 tokens
    view = render({})
    assert view["outputs"]["critical_batch"] == {"value": 296, "text": "296"}
    assert view["outputs"]["critical_where"] == {"value": 0, "text": "超出图的范围（B ≤ 256）；而显存只放得下 71 个请求"}
    assert COMPUTE_BAND not in bands(view)
    assert "权重矩阵乘<br>算力受限：<br>B ≥ 296 →" in annotations(view)
    assert view["derivations"]["critical_batch"].endswith("拐点 295.4 FLOP/B → B ≥ 296")
    assert all("临界" not in head for head in table_rows(view))


def test_efficiencies_move_the_ridge_and_the_step():
    # Half the compute: ridge 494.75 / 3.35 = 147.69 FLOP/B -> 148, inside the plot.
    half_compute = render({"compute_efficiency": 0.5, "B": 200, "lang": "en"})
    assert half_compute["outputs"]["critical_batch"]["value"] == 148
    assert COMPUTE_BAND in bands(half_compute)
    assert half_compute["outputs"]["bound"]["text"] == "matmuls compute-bound, the rest memory-bound"
    # Half the bandwidth: (51,247,879,168 + 32 x 570,490,880) B / 1.675 TB/s = 41.4947 ms, twice the default.
    half_bandwidth = render({"bandwidth_efficiency": 0.5})
    assert half_bandwidth["outputs"]["step_ms"] == {"value": 41.4947, "text": "41.49 ms"}
    assert half_bandwidth["outputs"]["max_batch"]["value"] == 71  # bandwidth does not change what fits
    assert "1.675 TB/s" in half_bandwidth["derivations"]["step_ms"]


def test_memory_fraction_lowers_the_limit():
    # (0.9 x 85,520,809,984 - 55,562,855,904) B / 419,430,400 B per request
    # = 21,405,873,081.6 / 419,430,400 = 51.04 -> 51 (vLLM's share up to v0.20)
    view = render({**ANCHOR_4096, "memory_fraction": 0.9, "B": 51})
    assert view["outputs"]["max_batch"] == {"value": 51, "text": "51"}
    assert view["derivations"]["max_batch"] == "⌊(0.9 × 85.52 GB − 55.56 GB) ÷ 419.4 MB⌋ = 51"
    assert not view["flags"]["over_capacity"]
    assert "51（上限）" in table_rows(view)
    assert render({**ANCHOR_4096, "memory_fraction": 0.9, "B": 52})["flags"]["over_capacity"]
    assert render({**ANCHOR_4096, "memory_fraction": 0.9})["outputs"]["total_tokens_per_s"]["text"] == "2,304 tok/s"
    # vLLM's default share now, 0.92: (0.92 x 85,520,809,984 - 55,562,855,904) / 419,430,400 = 55.11 -> 55
    assert presets.VLLM_MEMORY_FRACTION == 0.92
    vllm = render({**ANCHOR_4096, "memory_fraction": presets.VLLM_MEMORY_FRACTION, "B": 55})
    assert vllm["outputs"]["max_batch"] == {"value": 55, "text": "55"}
    assert vllm["derivations"]["max_batch"] == "⌊(0.92 × 85.52 GB − 55.56 GB) ÷ 419.4 MB⌋ = 55"
    assert render({**ANCHOR_4096, "memory_fraction": 0.92, "B": 56})["flags"]["over_capacity"]


def test_capacity_flag_when_the_weights_alone_do_not_fit():
    # Of the 85,520,809,984 B the H100 reports: 0.64 x that = 54.73 GB < 55.56 GB of checkpoint, two GPUs' worth;
    # 0.65 x = 55,588,526,489.6 B holds it with 25.7 MB to spare, not one 419.4 MB request (the overflow flag,
    # not the capacity one); 0.66 x = 56,443,734,589.44 B holds it and two requests
    # ((56,443,734,589.44 - 55,562,855,904) / 419,430,400 = 2.10).
    short = render({"memory_fraction": 0.64})
    assert short["flags"] == {"capacity": True, "over_capacity": False, "no_state": False}
    assert short["outputs"]["max_batch"]["value"] == 0
    assert short["outputs"]["gpus_needed"] == {"value": 2, "text": "2"}
    assert short["outputs"]["usable_memory"]["text"] == "54.73 GB"
    assert short["outputs"]["weights_total"]["text"] == "55.56 GB"
    assert short["outputs"]["critical_where"]["text"] == "超出图的范围（B ≤ 256）"
    just = render({"memory_fraction": 0.65, "B": 1})
    assert just["flags"] == {"capacity": False, "over_capacity": True, "no_state": False}
    assert just["outputs"]["max_batch"]["value"] == 0
    assert just["outputs"]["gpus_needed"]["value"] == 1
    enough = render({"memory_fraction": 0.66, "B": 2})
    assert enough["flags"] == {"capacity": False, "over_capacity": False, "no_state": False}
    assert enough["outputs"]["max_batch"]["value"] == 2
    assert render({"memory_fraction": 0.5, "hardware": "a100-sxm-80gb"})["outputs"]["gpus_needed"]["value"] == 2


def test_no_request_fits_at_all():
    # Llama-2-7B at 131,072 tokens: 131,072 x 524,288 B = 68.72 GB of KV per request, beside 13.48 GB of weights:
    # 82.20 GB, within the 85.52 GB the H100 reports but not vLLM's default share of it,
    # 0.92 x 85,520,809,984 B = 78.68 GB.
    view = render({"model": "llama-2-7b", "context": 131072, "B": 1, "memory_fraction": 0.92})
    assert view["outputs"]["max_batch"]["value"] == 0
    # the weights fit, one request's KV does not; Llama-2-7B keeps no recurrent state
    assert view["flags"] == {"capacity": False, "over_capacity": True, "no_state": True}
    layout = view["figures"]["throughput"]["layout"]
    assert layout["shapes"][0]["x0"] == 0
    assert all(row[3] == "放不下" for row in table_rows(view).values())


def test_no_limit_inside_the_plot_when_everything_fits():
    view = render({"hardware": "b200", "model": "llama-2-7b", "context": 1, "B": 256})
    assert view["outputs"]["max_batch"]["value"] > 256
    assert not view["flags"]["over_capacity"]
    assert not any(a["text"].startswith("显存") for a in view["figures"]["throughput"]["layout"]["annotations"])


def test_table_rows_use_the_kit_classes():
    view = render({"B": 64})
    classes = row_classes(view)
    # 64 is below the limit of 71, so not muted
    assert classes == {1: "", 8: "", 32: "", 64: "current", 71: "", 128: "muted", 256: "muted"}
    table = view["svg"]["table"]
    assert table.startswith('<table class="widget-table table-stack">')
    assert '<th scope="row" data-label="B"><span class="warn">71（上限）</span></th>' in table
    assert '<td class="number" data-label="每个请求（tok/s）">64.6</td>' in table
    assert '<td class="warn" data-label="显存">放不下</td>' in table
    assert render({"B": 32})["svg"]["table"].count('class="current"') == 1


def test_english_labels():
    view = render({"lang": "en", "B": 100})
    assert view["outputs"]["bound"]["text"] == "memory-bound"
    assert "does not fit" in view["svg"]["table"]
    rows = table_rows(view)
    assert list(rows) == ["1", "8", "32", "64", "71 (limit)", "128", "256"]
    assert rows["1"][3:] == ["fits", "memory-bound"]
    assert "Figures at a few batch sizes (H100 · Qwen3.8-27B · 4,096 tokens of context)" in view["svg"]["table"]
    annotations = [a["text"] for a in view["figures"]["throughput"]["layout"]["annotations"]]
    assert "Does not fit<br>in memory<br>limit B = 71" in annotations
    names = [trace["name"] for trace in view["figures"]["throughput"]["data"]]
    assert names == ["Total", "Total (does not fit)", "Per request", "Per request (does not fit)", "current B"]


CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


@pytest.mark.parametrize("state", [
    {},
    {"hardware": "a100-sxm-80gb", "model": "llama-2-7b", "context": 16, "B": 200},
    {"model": "llama-2-7b", "context": 131072, "B": 1, "memory_fraction": 0.92},  # not one request fits
    {"memory_fraction": 0.6, "compute_efficiency": 0.4, "B": 256},
])
def test_both_languages_render_and_english_has_no_chinese(state):
    zh = render({**state, "lang": "zh"})
    en = render({**state, "lang": "en"})
    assert zh["state"]["lang"] == "zh" and en["state"]["lang"] == "en"
    assert {k: v["value"] for k, v in zh["outputs"].items()} == {k: v["value"] for k, v in en["outputs"].items()}
    figure = en["figures"]["throughput"]
    texts = [out["text"] for out in en["outputs"].values()] + list(en["derivations"].values())
    texts += [trace["name"] for trace in figure["data"]] + [a["text"] for a in figure["layout"]["annotations"]]
    texts += [figure["layout"]["xaxis"]["title"]["text"], figure["layout"]["yaxis"]["title"]["text"]]
    texts += list(en["svg"].values()) + list(batch_throughput.TEXT["en"].values())
    assert not [text for text in texts if CHINESE.search(text)]


def test_every_control_is_labelled_in_both_languages():
    for lang in ("zh", "en"):
        words = kit.words(batch_throughput, lang)
        assert all((c.label or c.name) in words for c in batch_throughput.WIDGET.controls)
    assert batch_throughput.TEXT["en"]["B"] == "Batch B (requests decoded together)"


@pytest.mark.parametrize("state", [
    {"B": "nan", "context": -4},
    {"B": 10**9, "context": 10**9, "hardware": "tpu", "state_dtype": "int4"},
    {"B": 7.5, "model": "qwen3-32b", "state_dtype": "bf16"},
    {"B": "<b>1</b>", "lang": "fr"},
    [],
])
def test_any_state_renders(state):
    view = render(state)
    assert 1 <= view["state"]["B"] <= 256
