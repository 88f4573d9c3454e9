"""The batch-throughput widget's view: readouts, flag, table and figure for hand-checked states."""

import re

import pytest

from sim import kit, widgets
from sim.widgets import batch_throughput
from tests.sim.test_widgets import check_view

ANCHOR_4096 = {"B": 58, "context": 4096, "hardware": "h100-sxm", "model": "qwen3.8-27b"}


def render(state: dict) -> dict:
    view = widgets.render("batch-throughput", state)
    check_view(view)
    return view


def table_rows(view: dict) -> dict[str, list[str]]:
    """Row header -> cell texts of the computed table."""
    row = r'<tr(?: class="[^"]*")? data-batch="\d+"><th scope="row">(.*?)</th>(.*?)</tr>'
    rows = re.findall(row, view["svg"]["table"])
    return {re.sub(r"<[^>]*>", "", head): re.findall(r"<td[^>]*>([^<]*)</td>", cells) for head, cells in rows}


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
    assert view["flags"] == {"over_capacity": False}


def test_58_requests_fit_and_59_do_not():
    at = render(ANCHOR_4096)
    assert at["outputs"]["max_batch"]["value"] == 58
    assert at["outputs"]["total_tokens_per_s"] == {"value": 2303.87, "text": "2,304 tok/s"}
    assert not at["flags"]["over_capacity"]
    assert render({**ANCHOR_4096, "B": 59})["flags"]["over_capacity"]
    # (80 GB - 55,562,855,904 B resident) / (4,096 x 65,536 + 150,994,944) B per request = 58.3
    assert at["derivations"]["max_batch"] == "⌊(80.00 GB − 55.56 GB) ÷ 419.4 MB⌋ = 58"


def test_table_replaces_the_illustrative_one_with_computed_figures():
    rows = table_rows(render({}))
    assert list(rows) == ["1", "8", "32", "58（上限）", "64", "128", "256"]
    # B = 1: 1 / 15.468 ms = 64.6 tok/s; B = 256: 256 / 58.89 ms = 4,347 tok/s, 17.0 each
    assert rows["1"] == ["64.6", "64.6", "15.47 ms", "放得下"]
    assert rows["58（上限）"][:2] == ["2,304", "39.7"]
    assert rows["256"] == ["4,347", "17.0", "58.89 ms", "放不下"]
    assert rows["64"][-1] == "放不下"


def test_figure_marks_the_memory_limit_and_cuts_the_curves_there():
    figure = render({})["figures"]["throughput"]
    solid = [trace for trace in figure["data"] if trace.get("line", {}).get("dash") == "solid"]
    dotted = [trace for trace in figure["data"] if trace.get("line", {}).get("dash") == "dot"]
    assert [t["x"][-1] for t in solid] == [58, 58]
    assert [(t["x"][0], t["x"][-1]) for t in dotted] == [(58, 256), (58, 256)]
    assert any("显存放不下" in a["text"] for a in figure["layout"]["annotations"])
    line = [s for s in figure["layout"]["shapes"] if s["type"] == "line"]
    assert len(line) == 1 and 0 < line[0]["x0"] < 1
    current = figure["data"][-1]
    assert current["x"] == [32, 32]
    assert current["y"][0] == pytest.approx(1542.37, abs=0.01)


def test_compute_bound_region_appears_when_reached():
    # Llama-2-7B on an A100 with 1 cached token turns compute-bound at B = 155 (see test_batching).
    view = render({"hardware": "a100-sxm-80gb", "model": "llama-2-7b", "context": 1, "B": 200})
    assert view["outputs"]["bound"] == {"value": 1, "text": "算力受限"}
    assert any(a["text"].startswith("算力受限") for a in view["figures"]["throughput"]["layout"]["annotations"])
    assert not any(a["text"].startswith("算力受限") for a in render({})["figures"]["throughput"]["layout"]["annotations"])


def test_no_request_fits_at_all():
    # Llama-2-7B at 131,072 tokens: 131,072 x 524,288 B = 68.7 GB of KV per request, beside 13.5 GB of weights.
    view = render({"model": "llama-2-7b", "context": 131072, "B": 1})
    assert view["outputs"]["max_batch"]["value"] == 0
    assert view["flags"]["over_capacity"]
    layout = view["figures"]["throughput"]["layout"]
    assert layout["shapes"][0]["x0"] == 0
    assert all(row[-1] == "放不下" for row in table_rows(view).values())


def test_no_limit_inside_the_plot_when_everything_fits():
    view = render({"hardware": "b200", "model": "llama-2-7b", "context": 1, "B": 256})
    assert view["outputs"]["max_batch"]["value"] > 256
    assert not view["flags"]["over_capacity"]
    assert not any(a["text"].startswith("显存") for a in view["figures"]["throughput"]["layout"]["annotations"])


def test_table_rows_use_the_kit_classes():
    view = render({"B": 64})
    classes = row_classes(view)
    assert classes == {1: "", 8: "", 32: "", 58: "", 64: "muted current", 128: "muted", 256: "muted"}
    table = view["svg"]["table"]
    assert table.startswith('<div class="table-scroll"><table class="widget-table">')
    assert '<th scope="row"><span class="warn">58（上限）</span></th>' in table
    assert '<td class="number">64.6</td>' in table and '<td class="warn">放不下</td>' in table
    assert render({"B": 32})["svg"]["table"].count('class="current"') == 1


def test_english_labels():
    view = render({"lang": "en", "B": 100})
    assert view["outputs"]["bound"]["text"] == "memory-bound"
    assert "does not fit" in view["svg"]["table"]
    rows = table_rows(view)
    assert list(rows) == ["1", "8", "32", "58 (limit)", "64", "128", "256"]
    assert rows["1"][-1] == "fits"
    assert "Figures at a few batch sizes (H100 · Qwen3.8-27B · 4,096 tokens of context)" in view["svg"]["table"]
    annotations = [a["text"] for a in view["figures"]["throughput"]["layout"]["annotations"]]
    assert "Does not fit in memory<br>limit B = 58" in annotations
    names = [trace["name"] for trace in view["figures"]["throughput"]["data"]]
    assert names == ["Total", "Total (does not fit)", "Per request", "Per request (does not fit)", "current B"]


CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


@pytest.mark.parametrize("state", [
    {},
    {"hardware": "a100-sxm-80gb", "model": "llama-2-7b", "context": 1, "B": 200},
    {"model": "llama-2-7b", "context": 131072, "B": 1},
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
