"""A student never sees a broken page: no Python, no JavaScript, a failing widget, a refused download or worker.
Each test starts its own context: what it tests is how Python starts, or fails to. (Every page's CSP and hostile
links are checked in test_lessons.py.)"""

import io
import json
import os
import re
import zipfile
from pathlib import Path

import pytest
import yaml
from playwright.sync_api import expect

from builder.templates import js_number
from sim import widgets
from tests.browser.conftest import READY_TIMEOUT_MS, cpython_view, open_ready, site_copy

# The evolution map's steps, which every lesson's page shows (lessons/zh/evolution.yml)
MAP = yaml.safe_load((Path(__file__).resolve().parents[2] / "lessons/zh/evolution.yml").read_text("utf-8"))["items"]


def lesson_state(page, widget_id: str) -> dict:
    """The state the lesson set for a widget, from its JSON island (the page reads it without Python)."""
    return json.loads(page.locator(f"#{widget_id} script.widget-data").text_content())["state"]


def widget_ids(page) -> list[tuple[str, str]]:
    return page.eval_on_selector_all("[data-widget]", "els => els.map(e => [e.id, e.dataset.widget])")


@pytest.mark.own_context
def test_a_python_that_cannot_load_fails_soon_and_a_retry_boots_it_keeping_a_change_and_a_failing_render_apart(
        dedicated_worker, page, server, built_site, watch):
    """How Python fails to come up, and comes up on a retry: one phase after another in one context, as each boot
    costs seconds of CPU and only the last phase boots.
    - No Python at all (offline, a filtering network): every widget keeps its pre-rendered figures, says that
      interaction is unavailable and offers a retry.
    - The wasm refused: loadPyodide never settles, so only the worker's report of the failed fetch can say so, within
      5 s of the retry, not at the 90 s stall timeout.
    - The wasm held back: a slider moved while Python loads is kept, marked pending, and applied once Python is up.
    - A simulator whose roofline render raises for one state: that widget says so and keeps its last view, the others
      stay ready, and the next good state recovers it."""
    [zip_path] = (built_site / "py").glob("sim-*.zip")
    patched = io.BytesIO()
    with zipfile.ZipFile(zip_path) as original, zipfile.ZipFile(patched, "w") as out:
        for item in original.infolist():
            data = original.read(item)
            if item.filename == "sim/widgets/roofline.py":
                data += (b"\n_render = render\n\ndef render(state):\n"
                         b"    if isinstance(state, dict) and str(state.get('T')) == '778':\n"
                         b"        raise RuntimeError('simulated failure')\n    return _render(state)\n")
            out.writestr(item, data)
    pyodide, held = {"now": "refused"}, []

    def route(r):
        url = r.request.url
        if re.search(r"/py/sim-[0-9a-f]+\.zip$", url):
            r.fulfill(body=patched.getvalue(), content_type="application/zip")
        elif "/vendor/pyodide/" in url and (pyodide["now"] == "refused" or (
                url.endswith("/pyodide.asm.wasm") and pyodide["now"] == "wasm refused")):
            r.abort()
        elif url.endswith("/pyodide.asm.wasm") and pyodide["now"] == "wasm held":
            held.append(r)
        else:
            r.continue_()

    page.context.route("**/*", route)  # a worker's requests too, which a page's routes do not see
    page.on("pageerror", lambda e: watch.page_errors.append(str(e)))
    page.on("console", lambda m: watch.console_errors.append(m.text) if m.type == "error" else None)
    page.goto(server.url("prefill-decode/"))
    sections = page.locator("[data-widget]")
    for i in range(sections.count()):
        section = sections.nth(i)
        expect(section).to_have_attribute("data-state", "failed", timeout=READY_TIMEOUT_MS)
        expect(section.locator(".status-text")).to_contain_text("交互暂不可用")
        expect(section.locator(".retry")).to_be_visible()
        if section.locator("output").count():  # pre-rendered, read where the student scrolls to it
            section.scroll_into_view_if_needed()
            expect(section.locator("output").first).not_to_have_text("")
    roof = page.locator("#roofline")
    state = lesson_state(page, "roofline")
    expect(roof.locator('output[name="decode_ms"]').first).to_have_text(
        widgets.render("roofline", state)["outputs"]["decode_ms"]["text"])

    pyodide["now"] = "wasm refused"
    clicked = page.evaluate("performance.now()")
    roof.locator(".retry").click()
    expect(roof).to_have_attribute("data-state", "failed", timeout=READY_TIMEOUT_MS)
    assert page.evaluate("performance.now()") - clicked < 5000
    expect(roof.locator(".retry")).to_be_visible()

    pyodide["now"], watch.console_errors = "wasm held", []  # the refused requests' errors are behind us
    roof.locator(".retry").click()
    expect(roof).to_have_attribute("data-state", "loading")
    roof.locator('input[name="T"]').fill("777")
    expect(roof).to_have_attribute("data-pending", "")
    expect(roof.locator(".status-text")).to_contain_text("还在启动")
    expect(roof.locator('output[name="prefill_ms"]').first).to_have_attribute("aria-busy", "")
    pyodide["now"] = "passed"
    for request in held:
        request.continue_()
    expect(roof).to_have_attribute("data-state", "ready", timeout=READY_TIMEOUT_MS)
    expect(roof).not_to_have_attribute("data-pending", "")
    expect(roof.locator('output[name="prefill_ms"]').first).to_have_attribute("data-value", str(js_number(
        widgets.render("roofline", {**state, "T": 777, "changed": "T"})["outputs"]["prefill_ms"]["value"])))
    expect(roof.locator('input[name="T"]')).to_have_value("777")
    assert roof.locator("output[aria-busy]").count() == 0

    before = roof.locator('output[name="prefill_ms"]').first.get_attribute("data-value")
    roof.locator('input[name="T"]').fill("778")
    expect(roof.locator(".status-text")).to_contain_text("没算成功")
    assert roof.locator('output[name="prefill_ms"]').first.get_attribute("data-value") == before
    others = [widget_id for widget_id, name in widget_ids(page) if name != "roofline"]
    assert others, "the lesson has other widgets"
    for widget_id in others:
        expect(page.locator(f"#{widget_id}")).to_have_attribute("data-state", "ready")
    roof.locator('input[name="T"]').fill("2048")
    expect(roof.locator(".widget-status")).to_be_hidden()
    expect(roof.locator('output[name="prefill_ms"]').first).to_have_attribute("data-value", str(js_number(
        widgets.render("roofline", {**state, "T": 2048})["outputs"]["prefill_ms"]["value"])))
    assert watch.page_errors == [] and watch.console_errors == []


@pytest.mark.own_context
def test_without_javascript_the_page_reads_and_says_why_nothing_moves(browser, server):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(server.url("prefill-decode/"))
    roof = page.locator("#roofline")
    expect(roof.locator(".widget-noscript")).to_be_visible()
    expect(roof.locator(".widget-status")).to_be_hidden()  # no "starting Python…" that never ends
    expect(roof.locator('output[name="decode_ms"]').first).to_have_text(
        cpython_view("roofline", lesson_state(page, "roofline"))["outputs"]["decode_ms"]["text"])
    assert page.locator("math").count() > 10 and page.locator("ol.evolution > li").count() == len(MAP)
    context.close()


@pytest.mark.own_context
def test_a_shared_python_whose_wasm_is_missing_fails_within_seconds_and_retry_recovers(page, built_site, tmp_path,
                                                                                     watch, serve):
    # The shared worker's own requests pass by Playwright's routes, so here the file is missing from the server.
    wasm = "vendor/pyodide/pyodide.asm.wasm"
    site = site_copy(built_site, tmp_path / "_site", without=wasm)
    server = serve(site)
    page.on("pageerror", lambda e: watch.page_errors.append(str(e)))
    page.goto(server.url("prefill-decode/"))
    roof = page.locator("#roofline")
    expect(roof).to_have_attribute("data-state", "failed", timeout=READY_TIMEOUT_MS)
    assert page.evaluate("performance.now()") < 5000
    # A second page finds no failed Python waiting for it: the failed worker closed, so this one starts afresh.
    os.link(built_site / wasm, site / wasm)
    roof.locator(".retry").click()
    expect(roof).to_have_attribute("data-state", "ready", timeout=READY_TIMEOUT_MS)
    assert page.evaluate("window.inferlab.runtime.timings.shared") is False
    assert watch.page_errors == []


@pytest.mark.own_context
def test_a_refused_shared_worker_gives_the_page_a_dedicated_one(own_page, server):
    # Some sandboxed or private contexts have SharedWorker but throw when one is made.
    own_page.context.add_init_script(
        "window.SharedWorker = function () { throw new DOMException('refused', 'SecurityError'); };")
    open_ready(own_page, server.url("prefill-decode/"))
    assert own_page.evaluate("typeof window.inferlab.runtime.worker.terminate") == "function"
