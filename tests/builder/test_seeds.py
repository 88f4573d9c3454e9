"""Figures from random traces are printed at the precision the trace's seed allows, with a note that gives their
range over eleven traces; claims about them hold on nine of the ten other traces (builder/seeds.py, issue #46)."""

import html
import json
import re

import build
from builder import expressions, seeds
from tests.builder.test_bad_input import PROMPT, lesson, write_lessons

# On seeds 0-10 the first chat prompt is 181, 98, 240, 319, 80, 450, 646, 836, 239, 427 and 566 tokens long: a
# standard deviation of 238, so hundreds, from 100 to 800.
PROMPTS = [181, 98, 240, 319, 80, 450, 646, 836, 239, 427, 566]


def test_the_ten_other_seeds_are_the_traces_the_simulator_draws_with_them():
    assert seeds.others([PROMPT]) == {PROMPT: PROMPTS[1:]}
    names = expressions.namespace()
    assert [expressions.value(f'slo.lengths("chat", 1, seed={k})[0][0]', names) for k in range(11)] == PROMPTS
    # an expression that gives its own seed keeps it; one without a trace is not seeded
    assert seeds.others(['slo.lengths("chat", 1, seed=3)[0][0]']) == {'slo.lengths("chat", 1, seed=3)[0][0]': [319] * 10}
    assert expressions.evaluated("grouped(2 + 2)", names) == "4"
    assert expressions.evaluated(f"grouped({PROMPT})", names) == {
        "text": "181", "seeded": {"value": 181, "format": "fmt_grouped", "args": [], "kwargs": {}}}


def test_a_figure_from_a_random_trace_shows_the_digits_its_spread_allows_and_says_why(tmp_path):
    body = (f"第一个提示约 {{sim}}`grouped({PROMPT})` 个 token，多半过了九十。{{claim}}`{PROMPT} > 90`\n\n"
            f"[链接里也一样：{{sim}}`grouped({PROMPT})`](#here)\n\n"
            "{#here}\n## 这里\n\n一个固定的数：{sim}`grouped(2 + 2)`。\n")
    lessons = write_lessons(tmp_path, {"one.md": lesson(body)})
    out = tmp_path / "_site"
    build.build(build.Paths(lessons=lessons, out=out, frozen="write"))
    page = (out / "one" / "index.html").read_text(encoding="utf-8")
    figures = re.findall(r'<span class="sim-value seeded"([^>]*)>([^<]*)<span class="seeded-note" id="([^"]+)"[^>]*>'
                         r'([^<]*)</span></span>', page)
    assert [(text, note_id) for _, text, note_id, _ in figures] == [("200", "seeded-1"), ("200", "seeded-2")]
    focusable, in_link = figures[0][0], figures[1][0]
    assert 'tabindex="0"' in focusable and 'aria-describedby="seeded-1"' in focusable
    assert "tabindex" not in in_link  # the link is what takes the focus
    assert "11 条轨迹（种子 0–10），这个数在 100 到 800 之间" in html.unescape(figures[0][3])
    assert '<span class="sim-value">4</span>' in page  # a figure with no trace behind it has no note
    assert "claim" not in page and "> 90" not in page  # a claim shows nothing
    # The other seeds are kept with the figures: the next build computes nothing.
    store = json.loads((lessons / "frozen.json").read_text(encoding="utf-8"))
    assert store["seeds"][f"grouped({PROMPT})"][1] == PROMPTS[1:] and store["seeds"][f"{PROMPT} > 90"][1] == [
        p > 90 for p in PROMPTS[1:]]
    again = build.frozen_store(build.Paths(lessons=lessons, out=out, frozen="read"))
    build.build_site(build.Paths(lessons=lessons, out=out, frozen="read"), again)
    assert again.computed == 0


def test_the_figures_the_review_found_printed_past_their_spread_are_printed_to_it():
    # Issue #46's review: goodput per GPU printed to three digits that the seed moves by 10-15 %; "8,192 serves
    # 1.80, 512 only 1.70" held on 5 of 11 traces. From the committed figures (test_frozen holds them to the code).
    store = json.loads((build.ROOT / "lessons" / "frozen.json").read_text(encoding="utf-8"))

    def printed(expr: str) -> tuple[str, str, str]:
        shape = store["expressions"][expr][1]["seeded"]
        return seeds.coarse_text(shape, [shape["value"], *store["seeds"][expr][1]])

    goodput = 'sig(slo.goodput(anchor, h100, "chunked", "{}"{}).per_gpu)'
    assert printed(goodput.format("chat", "")) == ("6.8", "6.8", "7.8")  # was 6.80
    assert printed(goodput.format("summarisation", "")) == ("1.7", "1.5", "2.1")  # was 1.70
    assert printed(goodput.format("summarisation", ", token_budget=8192")) == ("1.8", "1.4", "2.2")  # was 1.80
    assert printed(goodput.format("summarisation", ", token_budget=512")) == ("1.7", "1.4", "2.1")  # was 1.70
    # The lesson now says the two budgets serve about the same, which holds on every trace; the order did not.
    same = (f"abs({goodput.format('summarisation', ', token_budget=8192')[4:-1]} / "
            f"{goodput.format('summarisation', ', token_budget=512')[4:-1]} - 1) < 0.1")
    assert store["claims"][same][1]["holds"] and store["seeds"][same][1] == [True] * 10
    assert not any(">" in claim and "token_budget=8192" in claim.split(">")[0] and "token_budget=512" in
                   claim.split(">")[1] and "tpot_slo_s" not in claim for claim in store["claims"])
