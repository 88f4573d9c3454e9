"""The frozen figures (builder/frozen.py): a build that takes them equals one that computes them, and the store
keeps only what the current simulator gave."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import build
from builder import frozen, seeds
from builder.expressions import namespace
from builder.frozen import Code, Frozen
from sim import widgets

ROOT = Path(__file__).resolve().parent.parent.parent
COMMITTED = ROOT / "lessons" / frozen.FILE


@pytest.mark.early  # half a minute of a core, and no built site needed
def test_the_committed_store_builds_the_same_site_computing_nothing(tmp_path):
    # A build from lessons/frozen.json must draw the same pages, byte for byte, as a build that computes every
    # figure, without computing a single one, and the store must hold nothing more than that build used. (The
    # computing build takes the figures on ten other seeds from the store, minutes of work; the next test holds
    # those to the code.)
    computed = tmp_path / "computed"
    build.build(build.Paths(out=computed, frozen="seeds"))
    paths = build.Paths(out=tmp_path / "_site", frozen="read")
    store = build.frozen_store(paths)
    assert store.held["expressions"], (f"{COMMITTED.relative_to(ROOT)} was made by other simulator code: "
                                       "run `python build.py build` and commit it")
    files = build.build_site(paths, store)
    assert store.computed == 0, "the store lacks figures the lessons use: run `python build.py build` and commit it"
    pages = {path: data for path, data in files.items() if path.endswith(".html")}
    assert len(pages) > 10
    for path, data in pages.items():
        assert data == (computed / path).read_bytes(), path
    assert store.text() == COMMITTED.read_text(encoding="utf-8"), (
        "the store holds figures no lesson uses: run `python build.py build` and commit it")


def test_a_figure_is_kept_for_the_code_it_depends_on_and_only_that(tmp_path):
    sim = tmp_path / "sim"
    shutil.copytree(ROOT / "sim", sim, ignore=shutil.ignore_patterns("__pycache__"))
    expressions = tmp_path / "expressions.py"
    shutil.copy(ROOT / "builder" / "expressions.py", expressions)
    seeds_py = tmp_path / "seeds.py"
    shutil.copy(ROOT / "builder" / "seeds.py", seeds_py)
    names = namespace()
    goodput, top_p = 'sig(slo.goodput(llama13b, a100, "chunked").per_gpu)', "sampling.ORDERS[0]"
    figures = {"goodput": lambda c: c.expression(goodput, names), "top-p": lambda c: c.expression(top_p, names),
               "a preset": lambda c: c.expression("anchor.attention.kv_heads", names),
               "slo-serving": lambda c: c.module("sim.widgets.slo_serving"),
               "sampling widget": lambda c: c.module("sim.widgets.sampling"),
               "widgets": lambda c: c.module("sim.widgets")}

    def changed() -> set[str]:
        now = Code(sim, (expressions, seeds_py))
        return {name for name, of in figures.items() if of(now) != of(before)}

    before = Code(sim, (expressions, seeds_py))
    assert not changed() and figures["goodput"](before) == figures["goodput"](Code(ROOT / "sim", (expressions,
                                                                                                   seeds_py)))
    edit = sim / "techniques" / "sampling.py"
    edit.write_text(edit.read_text() + "\n")
    # The serving figures and the presets stay; what imports sampling is computed again, as is the registry, which
    # imports every widget by name.
    assert changed() == {"top-p", "sampling widget", "widgets"}
    before = Code(sim, (expressions, seeds_py))
    edit = sim / "serving" / "scheduler.py"  # slo imports it
    edit.write_text(edit.read_text() + "\n")
    assert changed() == {"goodput", "slo-serving", "widgets"}
    before = Code(sim, (expressions, seeds_py))
    (sim / "physics" / "presets" / "extra.yml").write_text("a: 1\n")  # data counts as much as code, for every figure
    assert changed() == set(figures)
    before = Code(sim, (expressions, seeds_py))
    expressions.write_text(expressions.read_text() + "\n")  # the names every expression sees
    assert changed() == {"goodput", "top-p", "a preset"}
    before = Code(sim, (expressions, seeds_py))
    seeds_py.write_text(seeds_py.read_text() + "\n")  # how an expression is run on other seeds
    assert changed() == {"goodput", "top-p", "a preset"}


def test_the_committed_figures_on_other_seeds_are_what_the_simulator_gives():
    # The build that the first test compares with takes these from the store. Computing all of them takes minutes,
    # so this holds a sample to the code: a figure and a claim of each seeded module the lessons use (the cheapest
    # of each), computed afresh on all ten seeds. Their fingerprints are the figures' own, which the first test
    # holds to the code.
    held = json.loads(COMMITTED.read_text(encoding="utf-8"))["seeds"]
    names, sample = namespace(), []
    for module in ("kv_layout.", "scheduler.", "slo."):
        for is_claim in (False, True):
            chosen = [e for e in held if module in e and isinstance(held[e][1], list)
                      and isinstance(held[e][1][0], bool) == is_claim]
            if chosen:
                sample.append(min(chosen, key=len))
    assert len(sample) >= 4, sample
    assert seeds.others(sample) == {expr: held[expr][1] for expr in sample}
    assert all(held[expr][0] == Code(ROOT / "sim", (ROOT / "builder" / "expressions.py",
                                                    ROOT / "builder" / "seeds.py")).expression(expr, names)
               for expr in sample)


class Fixed:
    """A Code whose fingerprints the test sets."""

    def __init__(self, code: str):
        self.code = code

    def expression(self, expr, names):
        return self.code

    def module(self, name):
        return self.code


def test_a_store_takes_a_figure_only_where_its_code_is_unchanged_and_keeps_only_what_was_used(tmp_path, monkeypatch):
    monkeypatch.setattr(frozen, "_MADE", {})  # what the process made is not the file's: forgotten where it matters
    path = tmp_path / "frozen.json"
    store = Frozen(path, Fixed("one"))
    assert store.expression("1 + 1", {}, lambda: "2") == "2" and store.computed == 1
    assert store.save()
    again = Frozen(path, Fixed("one"))
    assert again.expression("1 + 1", {}, lambda: pytest.fail("computed although frozen")) == "2"
    assert again.computed == 0 and not again.save()
    other = Frozen(path, Fixed("two"))  # its code changed: not taken
    assert other.expression("1 + 1", {}, lambda: "two") == "two" and other.computed == 1
    pruned = Frozen(path, Fixed("one"))
    pruned.expression("2 + 2", {}, lambda: "4")
    assert pruned.save() and json.loads(path.read_text())["expressions"] == {"2 + 2": ["one", "4"]}  # 1 + 1 unused
    path.write_text("{ not json")
    frozen._MADE.clear()
    assert Frozen(path, Fixed("one")).expression("1 + 1", {}, lambda: "again") == "again"
    path.write_text('{"fingerprint": "a store of the first format", "expressions": {"1 + 1": "2"}}')
    frozen._MADE.clear()
    assert Frozen(path, Fixed("one")).expression("1 + 1", {}, lambda: "anew") == "anew"


def test_what_a_process_computed_for_the_same_code_is_computed_once_and_still_counted_and_written(tmp_path,
                                                                                                  monkeypatch):
    monkeypatch.setattr(frozen, "_MADE", {})
    first = Frozen(tmp_path / "one.json", Fixed("one"))
    assert first.claim("x", {}, lambda: {"holds": [1, 2]}) == {"holds": [1, 2]} and first.computed == 1
    second = Frozen(tmp_path / "two.json", Fixed("one"))  # another build in this process, nothing in its file
    taken = second.claim("x", {}, lambda: pytest.fail("computed twice in one process"))
    assert taken == {"holds": [1, 2]} and second.computed == 1  # not in its file: counted, and written
    assert second.save() and json.loads((tmp_path / "two.json").read_text())["claims"] == {"x": ["one", taken]}
    taken["holds"].append(3)  # each store has its own copy
    assert Frozen(tmp_path / "three.json", Fixed("one")).claim("x", {}, pytest.fail) == {"holds": [1, 2]}
    assert Frozen(tmp_path / "four.json", Fixed("two")).claim("x", {}, lambda: {"holds": []}) == {"holds": []}
    checking = Frozen(tmp_path / "five.json", Fixed("one"), reuse=("seeds",))  # a check of a file against the code
    assert checking.claim("x", {}, lambda: {"holds": "anew"}) == {"holds": "anew"}


def test_only_slow_widgets_views_are_frozen(tmp_path):
    store = Frozen(tmp_path / "frozen.json", Fixed("code"))
    for name in widgets.names():
        module = widgets.load(name)
        state = module.WIDGET.coerce({"lang": "en"})
        view = store.view(name, module, state)
        assert view == json.loads(json.dumps(module.render(state)))
    store.save()
    kept = json.loads((tmp_path / "frozen.json").read_text())["views"]
    slow = sorted(name for name in widgets.names() if widgets.load(name).WIDGET.slow)
    assert slow and sorted(key.split()[0] for key in kept) == slow
