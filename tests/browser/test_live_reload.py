"""`build.py serve` in a real browser: a page in sight reloads as soon as a save has put the new site in place
(livereload.js asks for the build id with the one it has, and the server answers when it changes)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest
from playwright.sync_api import expect

import build
from builder import urls
from tests.builder.test_serve import free_port
from tests.lessons_copy import some_lessons

pytestmark = pytest.mark.own_context

SLUG = "sampling"


def test_a_page_in_sight_reloads_when_a_save_is_built(browser, tmp_path):
    lessons = some_lessons(tmp_path / "lessons", {SLUG})
    port, lines = free_port(), []
    serve = subprocess.Popen([sys.executable, "build.py", "serve", "--port", str(port), "--lessons", str(lessons),
                              "--out", str(tmp_path / "_site")], cwd=build.ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    threading.Thread(target=lambda: lines.extend(serve.stdout), daemon=True).start()
    context = browser.new_context()
    try:
        deadline = time.monotonic() + 60
        while not any("serving" in line for line in lines):
            assert time.monotonic() < deadline and serve.poll() is None, "".join(lines)
            time.sleep(0.05)
        page = context.new_page()
        errors = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(f"http://127.0.0.1:{port}/{urls.page('en')}")  # the home page: no Python to wait for
        page.evaluate("window.beforeTheSave = true")  # gone once the page has reloaded
        lesson = lessons / "en" / f"{SLUG}.md"
        source = lesson.read_text(encoding="utf-8")
        title = next(line for line in source.splitlines() if line.startswith("title:"))
        lesson.write_text(source.replace(title, "title: A title saved a moment ago", 1), encoding="utf-8")
        expect(page.get_by_text("A title saved a moment ago").first).to_be_visible(timeout=30_000)
        assert page.evaluate("window.beforeTheSave") is None
        assert errors == []
    finally:
        context.close()
        serve.terminate()
        serve.wait(timeout=10)
