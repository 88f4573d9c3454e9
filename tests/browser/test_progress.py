"""Progress that follows the student, kept only in this browser: each question remembers its last answer and shows
it graded on return; the home page counts a lesson's questions right and lists those answered wrong; a lesson's
contents marks the sections read; one button forgets it all; and with storage refused, all of it is simply absent
while the pages work (static/js/progress.js)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from playwright.sync_api import expect

from sim.widgets import predict
from tests.browser.conftest import cpython_view, island, open_all_ready
from tests.browser.test_lessons import AXE, COURSE, violations

LESSON = "inference-vs-training"
OTHER_LESSONS = len(COURSE.lessons("en")) - 1  # the home page's other written lessons, each with its progress line
WORDS = {lang: yaml.safe_load((Path(__file__).resolve().parents[2] / "site" / "i18n" / f"{lang}.yml")
                              .read_text(encoding="utf-8")) for lang in ("zh", "en")}
# A page where localStorage throws on every access, as with site data blocked.
REFUSED = """Object.defineProperty(window, "localStorage", { configurable: true,
  get() { throw new DOMException("The operation is insecure.", "SecurityError"); } });"""
QUESTIONS = """() => [...document.querySelectorAll('[data-widget]')].filter(section => {
  const flags = JSON.parse(section.querySelector('script.widget-data').textContent).view.flags;
  return 'answered' in flags && 'correct' in flags; }).map(section => section.id)"""


def right_answer(box) -> float:
    return cpython_view("predict", {**island(box)["state"], "guess": 1})["outputs"]["expected"]["value"]


def answer(box, guess) -> None:
    field = box.locator('input[name="guess"]')
    field.fill(str(guess))
    field.press("Enter")


def progress_line(lang: str, right: int, total: int) -> str:
    return WORDS[lang]["script"]["progress"]["right"].format(right=right, total=total)


def test_answers_are_remembered_graded_counted_listed_shared_by_tabs_and_forgotten(site_page, server, watch):
    lesson = f"{server.origin}/en/{LESSON}/"
    open_all_ready(site_page, lesson)
    ids = site_page.evaluate(QUESTIONS)
    assert len(ids) > 2
    good, bad = site_page.locator(f"#{ids[0]}"), site_page.locator(f"#{ids[1]}")
    right, wrong = right_answer(good), right_answer(bad) * 1000
    answer(good, right)
    answer(bad, wrong)
    expect(good.locator('output[name="verdict"]')).to_have_text(predict.TEXT["en"]["correct"])
    expect(bad.locator('[data-flag="incorrect"]')).not_to_have_attribute("hidden", re.compile(""))
    expect(bad.locator('[data-flag="answered"]')).to_be_visible()
    site_page.wait_for_function("ids => ids.every(id => (localStorage.getItem('inferlab-progress /') ?? '')"
                                ".includes(`${document.querySelector('article').dataset.lesson}#${id}`))", arg=ids[:2])

    # Back on the lesson without the address's scenario (?ID.guess=…): both boxes show their answer, graded again.
    open_all_ready(site_page, lesson)  # (the address then follows the restored answers, as it follows any)
    expect(good.locator('input[name="guess"]')).to_have_value(str(right))
    expect(good.locator('output[name="verdict"]')).to_have_text(predict.TEXT["en"]["correct"])
    expect(good.locator('[data-flag="answered"]')).to_be_visible()
    graded = cpython_view("predict", {**island(bad)["state"], "guess": wrong, "lang": "en"})
    assert not graded["flags"]["correct"]
    expect(bad.locator('output[name="verdict"]')).to_have_text(graded["outputs"]["verdict"]["text"])
    expect(bad.locator('output[name="expected"]')).to_have_text(graded["outputs"]["expected"]["text"])

    def home_shows_them(page, lang: str, prefix: str) -> None:
        page.goto(f"{server.origin}{prefix}")
        expect(page.locator(f'[data-progress="{LESSON}"]')).to_have_text(progress_line(lang, 1, len(ids)))
        expect(page.locator(f'[data-progress]:not([data-progress="{LESSON}"])')).to_have_count(OTHER_LESSONS)
        for other in page.locator(f'[data-progress]:not([data-progress="{LESSON}"])').all():
            expect(other).to_be_hidden()  # lessons not begun say nothing
        revisit = page.locator("[data-revisit] li:visible a")
        expect(revisit).to_have_count(1)
        expect(revisit).to_have_attribute("href", f"{LESSON}/#{ids[1]}")
        expect(page.locator("[data-revisit-none]")).to_be_hidden()

    home_shows_them(site_page, "en", "/en/")
    site_page.locator("[data-revisit] li:visible a").click()
    site_page.wait_for_url(f"**/en/{LESSON}/#{ids[1]}")
    # The same question in the other language counts, under the same key; and another tab sees what this one kept.
    tab = watch.page(site_page.context.new_page())
    try:
        home_shows_them(tab, "zh", "/")
    finally:
        tab.close()

    home_shows_them(site_page, "en", "/en/")
    site_page.locator("button[data-forget-progress]").click()
    expect(site_page.locator("[data-progress-forgotten]")).to_have_text(WORDS["en"]["script"]["progress"]["forgotten"])
    expect(site_page.locator("[data-progress-forgotten]")).to_be_focused()
    expect(site_page.locator("[data-progress-panel]")).to_be_hidden()
    expect(site_page.locator("[data-progress]:visible")).to_have_count(0)
    assert site_page.evaluate("Object.keys(localStorage).filter(key => key.startsWith('inferlab-progress'))") == []
    site_page.reload()
    expect(site_page.locator("[data-progress-panel]")).to_be_hidden()
    open_all_ready(site_page, lesson)
    for box in (good, bad):
        expect(box.locator('input[name="guess"]')).to_have_value("")
        expect(box.locator('output[name="verdict"]')).to_have_text(predict.TEXT["en"]["unanswered"])
        expect(box.locator('[data-flag="answered"]')).to_be_hidden()


# The page's own rule: how long a screenful of a section must be on screen (progress.js READ_MS_PER_SCREEN).
READ_MS = """async () => (await import(new URL('progress.js', document.querySelector('script[src$="/page.js"]').src)))
  .READ_MS_PER_SCREEN"""
# Scroll the window from y `from` to y `to` over `ms`, a step a frame, as a fling does.
FLING = """async ([from, to, ms]) => {
  const start = performance.now();
  for (;;) {
    const f = Math.min(1, (performance.now() - start) / ms);
    window.scrollTo(0, from + (to - from) * f);
    if (f === 1) return;
    await new Promise(requestAnimationFrame);
  }
}"""
TOP = "id => document.getElementById(id).getBoundingClientRect().top + window.scrollY"


def test_a_section_read_on_screen_is_marked_read_and_one_jumped_or_flung_past_is_not(site_page, server):
    lesson = f"{server.origin}/en/prefill-decode/"
    site_page.goto(lesson)
    entries = site_page.locator(".contents li")
    sections = site_page.evaluate("[...document.querySelectorAll('.contents a')].map(a => a.hash.slice(1))")
    assert len(sections) > 8
    expect(site_page.locator(".contents li[data-read]")).to_have_count(0)
    read_ms = site_page.evaluate(READ_MS)
    # Jumping from the contents past a section puts its end (the next heading) on screen, but not its heading:
    # the section skipped is not read.
    site_page.locator(f'.contents a[href="#{sections[4]}"]').click()
    site_page.wait_for_timeout(300)
    assert site_page.evaluate("id => document.getElementById(id).getBoundingClientRect().bottom < 0", sections[3])
    expect(entries.nth(3)).not_to_have_attribute("data-read", "")
    # A short section (under a screen), flung past in 120 ms: its heading and its end both cross the screen, but it
    # is not on screen long enough to be read, then or after.
    short = next(i for i in range(len(sections) - 1) if site_page.evaluate(
        f"([a, b]) => ({TOP})(b) - ({TOP})(a) < window.innerHeight / 2", [sections[i], sections[i + 1]]))
    site_page.evaluate(f"id => window.scrollTo(0, ({TOP})(id) - 2 * window.innerHeight)", sections[short])
    site_page.wait_for_timeout(300)
    top, end = (site_page.evaluate(TOP, sections[i]) for i in (short, short + 1))
    height = site_page.evaluate("window.innerHeight")
    crossed = site_page.evaluate("""async ([fling, from, to, heading, end]) => {
      const on = id => { const r = document.getElementById(id).getBoundingClientRect();
                         return r.bottom > 0 && r.top < window.innerHeight; };
      const seen = new Set();
      const look = () => { for (const id of [heading, end]) if (on(id)) seen.add(id);
                           if (!done) requestAnimationFrame(look); };
      let done = false; look();
      await (0, eval)(`(${fling})`)([from, to, 120]);
      done = true;
      return seen.size;
    }""", [FLING, top - height, end + height / 2, sections[short], sections[short + 1]])
    assert crossed == 2, "the fling should carry both the heading and the end of the section across the screen"
    site_page.wait_for_timeout(read_ms * 2)
    expect(entries.nth(short)).not_to_have_attribute("data-read", "")
    # Read: the same section whole on screen, for as long as the rule asks, is read, and stays read.
    site_page.evaluate("y => window.scrollTo(0, y)", top - 40)
    site_page.wait_for_timeout(read_ms / 2)
    expect(entries.nth(short)).not_to_have_attribute("data-read", "")  # not yet
    site_page.wait_for_timeout(read_ms)
    expect(entries.nth(short)).to_have_attribute("data-read", "")
    site_page.goto(lesson)
    expect(entries.nth(short)).to_have_attribute("data-read", "")
    expect(entries.nth(short).locator("a")).to_have_text(
        re.compile(re.escape(WORDS["en"]["script"]["progress"]["read"]) + "$"))
    expect(entries.last).not_to_have_attribute("data-read", "")  # never scrolled to
    expect(site_page.locator(".contents li[data-read]")).to_have_count(1)
    # The home page offers to forget it, which clears the mark too.
    site_page.goto(f"{server.origin}/en/")
    site_page.locator("button[data-forget-progress]").click()
    site_page.goto(lesson)
    expect(site_page.locator(".contents li[data-read]")).to_have_count(0)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_home_page_with_progress_shown_is_axe_clean(site_page, server, theme):
    site_page.emulate_media(color_scheme=theme)
    open_all_ready(site_page, f"{server.origin}/{LESSON}/")
    box = site_page.locator(f"#{site_page.evaluate(QUESTIONS)[0]}")
    answer(box, right_answer(box) * 1000)
    expect(box.locator('[data-flag="answered"]')).to_be_visible()
    site_page.wait_for_function("() => localStorage.length > 0")
    site_page.goto(f"{server.origin}/")
    expect(site_page.locator("[data-revisit] li:visible")).to_have_count(1)
    expect(site_page.locator("[data-progress]:visible")).to_have_count(1)
    site_page.evaluate(AXE.read_text(encoding="utf-8"))
    found = violations(site_page)
    assert found == [], json.dumps(found, indent=1, ensure_ascii=False)


@pytest.mark.own_context
def test_with_storage_refused_the_pages_work_and_progress_is_absent(own_page, server):
    own_page.context.add_init_script(REFUSED)
    open_all_ready(own_page, f"{server.origin}/en/{LESSON}/")
    assert own_page.evaluate("() => { try { localStorage; return false; } catch { return true; } }")
    box = own_page.locator(f"#{own_page.evaluate(QUESTIONS)[0]}")
    answer(box, right_answer(box))
    expect(box.locator('output[name="verdict"]')).to_have_text(predict.TEXT["en"]["correct"])
    own_page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    own_page.wait_for_timeout(300)
    expect(own_page.locator(".contents li[data-read]")).to_have_count(0)
    own_page.goto(f"{server.origin}/en/")
    expect(own_page.locator("[data-progress-panel]")).to_be_hidden()
    expect(own_page.locator("[data-progress]:visible")).to_have_count(0)
    own_page.wait_for_function("() => window.inferlab !== undefined")  # the rest of the page script ran
    open_all_ready(own_page, f"{server.origin}/en/{LESSON}/")
    expect(box.locator('output[name="verdict"]')).to_have_text(predict.TEXT["en"]["unanswered"])


def test_a_remembered_answer_opens_its_worked_answer_on_return(site_page, server):
    # Restored through the widget's normal render path, the answer does all an answer given now does.
    lesson = f"{server.origin}/en/kv-cache-serving/"
    open_all_ready(site_page, lesson)
    question = site_page.locator("details[data-answer-for]").first.get_attribute("data-answer-for")
    box = site_page.locator(f"#{question}")
    answer(box, right_answer(box))
    expect(box.locator('[data-flag="answered"]')).to_be_visible()
    site_page.wait_for_function("id => (localStorage.getItem('inferlab-progress /') ?? '').includes(`#${id}`)", arg=question)
    open_all_ready(site_page, lesson)
    expect(box.locator('[data-flag="answered"]')).to_be_visible()
    expect(site_page.locator(f'details[data-answer-for="{question}"]')).to_have_attribute("open", "")
