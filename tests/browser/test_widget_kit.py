"""A widget is one module: copy one under a new name (or write the one the author's guide shows), use it in
a lesson, and it builds, goes ready in Chromium and answers an input, with no template, stylesheet or builder
change."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

import build
from tests.browser.conftest import READY_TIMEOUT_MS

NEW = "my-ceiling"
LESSON = """---
title: 新组件
summary: 一个文件的新组件。
minutes: 1
---

::: widget my-ceiling
model: custom
params_b: 70
:::

::: widget weight-reads
:::
"""


def guide_example() -> str:
    """The widget module lessons/README.md shows under "Adding a widget"."""
    guide = (build.ROOT / "lessons" / "README.md").read_text(encoding="utf-8")
    return guide.split("## Adding a widget", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]


@pytest.fixture(scope="module")
def project_with_a_new_widget(tmp_path_factory) -> Path:
    """A copy of the project whose only addition is sim/widgets/my_ceiling.py, a copy of decode_ceiling.py."""
    root = tmp_path_factory.mktemp("kit")
    for part in ("build.py", "builder", "sim", "site"):
        source = build.ROOT / part
        (shutil.copytree if source.is_dir() else shutil.copy)(source, root / part)
    os.symlink(build.ROOT / "node_modules", root / "node_modules")
    shutil.copy(root / "sim" / "widgets" / "decode_ceiling.py", root / "sim" / "widgets" / "my_ceiling.py")
    (root / "sim" / "widgets" / "weight_reads.py").write_text(guide_example(), encoding="utf-8")
    lessons = root / "lessons"
    (lessons / "zh").mkdir(parents=True)
    (lessons / "course.yml").write_text("- chapter: only\n  lessons:\n    - fresh\n", encoding="utf-8")
    (lessons / "zh" / "catalog.yml").write_text("chapters:\n  only: {title: 唯一的一章, summary: 只有一课。}\n",
                                                encoding="utf-8")
    (lessons / "zh" / "fresh.md").write_text(LESSON, encoding="utf-8")
    return root


def run_in(root: Path, code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True).stdout


@pytest.mark.own_context  # a site of its own: a new sim zip, a new Python
def test_a_copied_widget_module_builds_goes_ready_and_answers(project_with_a_new_widget, page, serve):
    root = project_with_a_new_widget
    assert not list((root / "site").rglob("my-ceiling*")) and not list((root / "site").rglob("weight-reads*")), \
        "no template and no stylesheet for the new widgets"
    result = subprocess.run([sys.executable, "build.py", "build", "--out", str(root / "_site")], cwd=root,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    html = (root / "_site" / "fresh" / "index.html").read_text(encoding="utf-8")
    assert f'data-widget="{NEW}" id="{NEW}" data-state="loading"' in html

    server = serve(root / "_site")
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.url("fresh/"))
    widget = page.locator(f"#{NEW}")
    expect(widget).to_have_attribute("data-state", "ready", timeout=READY_TIMEOUT_MS)
    expect(widget.locator("h3.widget-title")).not_to_be_empty()
    widget.locator('input[name="params_b"]').fill("7")
    state = {"model": "custom", "params_b": 7, "weight_dtype": "bf16", "hardware": "a100-sxm-80gb",
             "lang": "zh", "changed": "params_b"}
    want = json.loads(run_in(root, f"import json, sim.widgets as w; print(w.render_json({NEW!r}, "
                                   f"{json.dumps(json.dumps(state))}))"))
    ceiling = want["outputs"]["ceiling_tokens_per_s"]
    expect(widget.locator('output[name="ceiling_tokens_per_s"]')).to_have_text(ceiling["text"])
    assert page.evaluate(f"window.inferlab.views[{NEW!r}]") == want
    # The guide's example: ready, and a new GPU gives the time Python computes for it.
    example = page.locator("#weight-reads")
    expect(example).to_have_attribute("data-state", "ready")
    example.locator('select[name="hardware"]').select_option("b200")
    state = {"hardware": "b200", "model": "qwen3.8-27b", "lang": "zh", "changed": "hardware"}
    want = json.loads(run_in(root, "import json, sim.widgets as w; "
                                   f"print(w.render_json('weight-reads', {json.dumps(json.dumps(state))}))"))
    expect(example.locator('output[name="weights_ms"]')).to_have_text(want["outputs"]["weights_ms"]["text"])
    # Its slider over chosen values (1, 2, 4, 8 GPUs): two steps right is 4, and the box and the view say so.
    slider = example.locator('[data-param="gpus"] input[type="range"]')
    slider.focus()
    slider.press("ArrowRight")
    slider.press("ArrowRight")
    expect(example.locator('[data-param="gpus"] input[type="number"]')).to_have_value("4")
    expect(slider).to_have_attribute("aria-valuetext", "4")
    state = {"hardware": "b200", "model": "qwen3.8-27b", "gpus": 4, "lang": "zh", "changed": "gpus"}
    want = json.loads(run_in(root, "import json, sim.widgets as w; "
                                   f"print(w.render_json('weight-reads', {json.dumps(json.dumps(state))}))"))
    expect(example.locator('output[name="weights_ms"]')).to_have_text(want["outputs"]["weights_ms"]["text"])
    assert errors == []
