"""The frozen figures (builder/frozen.py): a build that takes them equals one that computes them, and the store
keeps only what the current simulator gave."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import build
from builder import frozen
from builder.frozen import Frozen, fingerprint
from sim import widgets

ROOT = Path(__file__).resolve().parent.parent.parent
COMMITTED = ROOT / "lessons" / frozen.FILE


def test_the_committed_store_builds_the_same_site_computing_nothing(built_site, tmp_path):
    # built_site computed every figure; a build from lessons/frozen.json must draw the same pages, byte for byte,
    # without computing a single figure, and the store must hold nothing more than that build used.
    paths = build.Paths(out=tmp_path / "_site", frozen="read")
    store = build.frozen_store(paths)
    assert store.held["expressions"], (f"{COMMITTED.relative_to(ROOT)} was made by other simulator code: "
                                       "run `python build.py build` and commit it")
    files = build.build_site(paths, store)
    assert store.computed == 0, "the store lacks figures the lessons use: run `python build.py build` and commit it"
    pages = {path: data for path, data in files.items() if path.endswith(".html")}
    assert len(pages) > 10
    for path, data in pages.items():
        assert data == (built_site / path).read_bytes(), path
    assert store.text() == COMMITTED.read_text(encoding="utf-8"), (
        "the store holds figures no lesson uses: run `python build.py build` and commit it")


def test_a_store_is_used_only_by_the_code_that_made_it(tmp_path):
    sim = tmp_path / "sim"
    shutil.copytree(ROOT / "sim", sim, ignore=shutil.ignore_patterns("__pycache__"))
    expressions = ROOT / "builder" / "expressions.py"
    code = fingerprint(sim, expressions)
    assert code == fingerprint(ROOT / "sim", expressions)
    (sim / "presets" / "extra.yml").write_text("a: 1\n")  # data counts as much as code
    assert fingerprint(sim, expressions) != code
    (sim / "presets" / "extra.yml").unlink()
    (sim / "roofline.py").write_text((sim / "roofline.py").read_text() + "\n")
    assert fingerprint(sim, expressions) != code

    path = tmp_path / "frozen.json"
    store = Frozen(path, "one")
    assert store.expression("1 + 1", lambda: "2") == "2" and store.computed == 1
    assert store.save()
    again = Frozen(path, "one")
    assert again.expression("1 + 1", lambda: pytest.fail("computed although frozen")) == "2"
    assert again.computed == 0 and not again.save()
    other = Frozen(path, "two")  # other code: nothing it holds is taken
    assert other.expression("1 + 1", lambda: "two") == "two" and other.computed == 1
    pruned = Frozen(path, "one")
    pruned.expression("2 + 2", lambda: "4")
    assert pruned.save() and json.loads(path.read_text())["expressions"] == {"2 + 2": "4"}  # 1 + 1 was not used
    path.write_text("{ not json")
    assert Frozen(path, "one").expression("1 + 1", lambda: "again") == "again"


def test_only_slow_widgets_views_are_frozen(tmp_path):
    store = Frozen(tmp_path / "frozen.json", "code")
    for name in widgets.names():
        module = widgets.load(name)
        state = module.WIDGET.coerce({"lang": "en"})
        view = store.view(name, module, state)
        assert view == json.loads(json.dumps(module.render(state)))
    store.save()
    kept = json.loads((tmp_path / "frozen.json").read_text())["views"]
    slow = sorted(name for name in widgets.names() if widgets.load(name).WIDGET.slow)
    assert slow and sorted(key.split()[0] for key in kept) == slow
