"""The checks every page of the course gets, parametrised over the course plan (lessons/course.yml): each written
lesson in each language, and each language's home page. A new lesson is checked here without a test file of its
own; its own tests are only for what is particular to it.

On every page: it loads clean under the Content-Security-Policy (no console error, no request off the origin, no
inline script); every widget the lesson declares is there and becomes ready; the view each widget shows equals
CPython's, for the lesson's setting and after one of its controls is changed (chosen from the widget's
declaration: the first control on the page whose change changes what the widget shows); every predict box keeps
its answer hidden until it is answered and grades the simulator's own answer right; hostile values in the URL
fall back to what Python makes of them; axe-core finds no violation at desktop and phone width, in the light theme
at both and the dark one at desktop width, colour contrast at desktop width only (a theme's colours do not depend
on the width); at phone width nothing scrolls sideways and no diagram's text is drawn below 11 px; a page in a
language other than Chinese shows no Chinese.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

import build
from builder import urls
from builder.templates import js_number
from sim import widgets
from sim.kit import Number, Range, Select
from sim.page.languages import DEFAULT
from sim.widgets import predict
from tests.browser.conftest import choose, cpython_view, island, open_all_ready, show_figures

COURSE = build.load_sources(build.Paths())[0].course
LESSONS = [lesson for lang in COURSE.languages() for lesson in COURSE.lessons(lang)]


def of_lessons(lessons) -> list:
    """Parameters, one per lesson, each marked as a test of its lesson (pytest tests/browser --lesson SLUG)."""
    return [pytest.param(lesson, id=f"{lesson.lang}/{lesson.slug}", marks=pytest.mark.lesson(lesson.slug))
            for lesson in lessons]


# Every page: each language's home page, then each lesson.
PAGES = [pytest.param(urls.page(lang), id=f"{lang}/home") for lang in COURSE.languages()] + [
    pytest.param(urls.page(lesson.lang, lesson.slug), id=f"{lesson.lang}/{lesson.slug}",
                 marks=pytest.mark.lesson(lesson.slug)) for lesson in LESSONS]
DECLARED = re.compile(r"^::: *widget +([a-z0-9-]+)", re.MULTILINE)  # a widget directive's first line

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 375, "height": 812}}
# WCAG 2.2 A and AA, and axe's best practices (landmarks, headings, regions) as well.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
HOSTILE = ["abc", "-5", "1e309", "NaN", "99999999999999999999999", "<img src=x onerror=alert(1)>",
           "\"><script>alert(1)</script>", "", "0x10"]
# The numbers' coercion is the same Python in every language, so the pages of one language try every value; the
# other language's pages try the markup, which is what their own words could let through. A page load costs a second
# or more where a serving widget renders again, so the values are dealt out over the controls: in each load a control
# takes the next value after its neighbour's, and the loads shift the deal, so that every value reaches every kind of
# control on some page and every control meets hostile values side by side with others (HOSTILE_LOADS loads a page,
# not one a value).
MARKUP = [v for v in HOSTILE if "<" in v]
HOSTILE_LOADS = 2
CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")  # CJK scripts, ideographs, full-width forms
VIEW_TIMEOUT_S = 15


def lesson_url(server, lesson) -> str:
    return server.url(urls.page(lesson.lang, lesson.slug))


def widget_ids(page) -> list[tuple[str, str]]:
    """(id, widget name) of every widget on the page, in page order."""
    return page.eval_on_selector_all("[data-widget]", "els => els.map(e => [e.id, e.dataset.widget])")


# What the page shows of a view: every readout (name, raw value as written, text), every flag named by the view
# (shown or not), every derivation.
SHOWN = """(section) => ({
  outputs: [...section.querySelectorAll('output[name]')].map(o => [o.getAttribute('name'), o.dataset.value, o.textContent]),
  flags: Object.fromEntries([...section.querySelectorAll('[data-flag]')].map(e => [e.dataset.flag, !e.hidden])),
  derivations: Object.fromEntries([...section.querySelectorAll('[data-derivation]')].map(e => [e.dataset.derivation, e.textContent])),
})"""


def assert_shows(section, view: dict, *, exact_values: bool = True) -> None:
    """Every readout, flag and derivation of the widget shows `view`. The page script writes data-value as
    JavaScript prints the number; the pre-rendered page as Jinja does (compared as numbers then)."""
    shown = section.evaluate(SHOWN)
    assert shown["outputs"], "the widget shows no readout"
    for name, value, text in shown["outputs"]:
        want = view["outputs"][name]
        assert text == want["text"], name
        if exact_values:
            assert value == str(js_number(want["value"])), name
        else:
            assert float(value) == want["value"], name
    for name, on in shown["flags"].items():
        if name in view["flags"]:
            assert on == view["flags"][name], f"flag {name}"
    for name, text in shown["derivations"].items():
        if name in view["derivations"]:
            assert text == view["derivations"][name], f"derivation {name}"


def candidates(control, value) -> list:
    """Values to move a control to, in the order tried: for a number, twice and half the present value, then its
    ends; for a choice, every other option; for a free number, 1 and 2."""
    if isinstance(control, Range):
        tried = [control.coerce(v) for v in (value * 2, value / 2, control.max, control.min)]
    elif isinstance(control, Select):
        tried = list(control.options)
    elif isinstance(control, Number):
        tried = [1, 2]
    else:
        raise TypeError(f"no way to move a {type(control).__name__}")
    return [v for i, v in enumerate(tried) if v != value and v not in tried[:i]]


def one_change(section, name: str, state: dict) -> tuple[object, object, dict]:
    """The first control of the widget that is on the page and a value for it that changes what the widget shows:
    (control, value, CPython's view after the change, as the page asks for it)."""
    shown = section.evaluate("s => [...s.querySelectorAll('[data-param]')].map(e => e.dataset.param)")
    return first_change(name, state, set(shown))


def first_change(name: str, state: dict, shown: set[str]) -> tuple[object, object, dict]:
    """one_change, given the names of the controls the widget shows (tests/engines asks its browsers for them)."""
    before = cpython_view(name, state)
    for control in widgets.load(name).WIDGET.controls:
        if control.name not in shown:
            continue  # set by the lesson, not shown (a predict box's question)
        for value in candidates(control, state[control.name]):
            after = cpython_view(name, {**state, control.name: value, "changed": control.name})
            if after["outputs"] != before["outputs"]:
                return control, value, after
    raise AssertionError(f"no control of {name} changes what it shows")


def move(section, control, value) -> None:
    """Set a control as a student does: type into a number box, pick a menu option, press a button."""
    at = section.locator(f'[data-param="{control.name}"]')
    if isinstance(control, Range):
        at.locator('input[type="number"]').fill(str(value))
    elif isinstance(control, Number):
        at.locator("input").fill(str(value))
        at.locator("input").press("Enter")
    elif control.style == "buttons":
        choose(at.locator(f'input[type="radio"][value="{value}"]'))
    else:
        at.locator("select").select_option(str(value))


def wait_for_view(page, widget_id: str, expected: dict) -> dict:
    """The newest view the page received for a widget, once it is `expected` (or the last one seen)."""
    deadline = time.monotonic() + VIEW_TIMEOUT_S
    while (got := page.evaluate(f"window.inferlab.views[{json.dumps(widget_id)}] ?? null")) != expected:
        if time.monotonic() > deadline:
            return got
        time.sleep(0.05)
    return got


@pytest.mark.parametrize("path", PAGES)
def test_the_page_loads_clean_and_every_widget_answers_as_cpython(site_page, server, path):
    # site_page fails the test on any console error, uncaught error, CSP violation or request off the origin.
    lesson = next((lesson for lesson in LESSONS if urls.page(lesson.lang, lesson.slug) == path), None)
    open_all_ready(site_page, server.url(path))
    csp = site_page.get_attribute('meta[http-equiv="Content-Security-Policy"]', "content")
    assert "default-src 'self'" in csp and "script-src 'self' 'wasm-unsafe-eval'" in csp
    assert site_page.locator("script:not([src]):not([type='application/json'])").count() == 0
    stdlib_zip = site_page.get_attribute("html", "data-stdlib-zip")
    if stdlib_zip:  # Python came up on the standard library cut for this simulator, never on Pyodide's whole one
        assert any(f"GET /{stdlib_zip} " in line for line in server.log)
        assert not any("python_stdlib.zip" in line for line in server.log)
    ids = widget_ids(site_page)
    assert [name for _, name in ids] == (DECLARED.findall(lesson.body) if lesson else [])
    for widget_id, name in ids:
        section = site_page.locator(f"#{widget_id}")
        data = island(section)
        state = data["state"]
        assert state["lang"] == (lesson.lang if lesson else DEFAULT)
        # The page reads before Python: the build wrote CPython's view for the lesson's setting, and shows it.
        default = cpython_view(name, state)
        assert data["view"] == default, widget_id
        assert_shows(section, default, exact_values=False)
        # Python in the page computes the same view for that setting.
        assert site_page.evaluate("([n, s]) => window.inferlab.runtime.render(n, s)", [name, state]) == default
        # One control moved: the page asks Python, which answers as CPython does, and the page shows it.
        control, value, expected = one_change(section, name, state)
        expect(section.locator(f'[data-param="{control.name}"]').locator("input, select").first).to_be_enabled()
        move(section, control, value)
        assert wait_for_view(site_page, widget_id, expected) == expected, (widget_id, control.name, value)
        assert_shows(section, expected)
        # The link follows: the URL holds the moved control's new value.
        key, new = f"{widget_id}.{control.name}", expected["state"][control.name]
        if new != state[control.name]:
            site_page.wait_for_function("([k, v]) => new URLSearchParams(location.search).get(k) === v",
                                        arg=[key, "" if new is None else str(js_number(new))])


@pytest.mark.parametrize("lesson", of_lessons(LESSONS))
def test_every_predict_box_hides_its_answer_and_grades_the_simulators_answer_right(site_page, server, lesson):
    open_all_ready(site_page, lesson_url(server, lesson))
    boxes = site_page.locator('[data-widget="predict"]')
    assert boxes.count() == DECLARED.findall(lesson.body).count("predict")
    right_text = predict.TEXT[lesson.lang]["correct"]
    for i in range(boxes.count()):
        box = boxes.nth(i)
        state = island(box)["state"]
        worked = site_page.locator(f'details.worked-answer[data-answer-for="{box.get_attribute("id")}"]')
        # Nothing of the answer shows before a guess: no number, no derivation, no verdict but the invitation,
        # and the lesson's worked answer, if it has one, stays folded.
        for k in range(worked.count()):
            assert worked.nth(k).get_attribute("open") is None
        expect(box.locator('[data-flag="answered"]')).to_be_hidden()
        expect(box.locator('output[name="expected"]')).to_have_text("")
        expect(box.locator('[data-derivation="expected"]')).to_have_text("")
        expect(box.locator('output[name="verdict"]')).to_have_text(predict.TEXT[lesson.lang]["unanswered"])
        right = cpython_view("predict", {**state, "guess": 1})["outputs"]["expected"]["value"]
        guess = box.locator('input[name="guess"]')
        guess.fill(str(right))
        if i % 2:
            guess.press("Enter")  # from the keyboard, and with the button, in turn
        else:
            box.locator("button.commit").click()
        expect(box.locator('output[name="verdict"]')).to_have_text(right_text)
        graded = cpython_view("predict", {**state, "guess": right, "changed": "guess"})
        assert graded["flags"]["correct"]
        assert wait_for_view(site_page, box.get_attribute("id"), graded) == graded
        expect(box.locator('[data-flag="answered"]')).to_be_visible()
        for k in range(worked.count()):  # the worked answer follows the check
            expect(worked.nth(k)).to_have_attribute("open", "")


@pytest.mark.parametrize("lesson", of_lessons(LESSONS))
def test_hostile_url_values_fall_back_to_what_python_makes_of_them(site_page, server, lesson):
    site_page.goto(lesson_url(server, lesson))
    ids = widget_ids(site_page)
    dialogs = []
    site_page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    values = HOSTILE if lesson.lang == DEFAULT else MARKUP
    loads = HOSTILE_LOADS if lesson.lang == DEFAULT else 1
    for load in range(loads):
        query, raws, k = {}, {}, load * len(values) // loads
        for widget_id, name in ids:
            raws[widget_id] = {}
            for control in widgets.load(name).WIDGET.controls:
                raws[widget_id][control.name] = query[f"{widget_id}.{control.name}"] = values[k % len(values)]
                k += 1
            query[f"{widget_id}.nosuch"] = values[k % len(values)]
        query["x.y"] = values[0]
        open_all_ready(site_page, lesson_url(server, lesson) + "?" + urlencode(query))
        site_page.wait_for_function("ids => ids.every(i => window.inferlab.views[i] !== undefined)",
                                    arg=[i for i, _ in ids])
        for widget_id, name in ids:
            assert site_page.evaluate(f"window.inferlab.views[{json.dumps(widget_id)}]") == \
                cpython_view(name, {**raws[widget_id], "lang": lesson.lang}), (widget_id, raws[widget_id])
        assert site_page.locator("img[src=x]").count() == 0
        assert site_page.evaluate("typeof window.__xss") == "undefined"
    assert dialogs == []


def violations(page, colours: bool = True) -> list[str]:
    """axe's violations on the page; `colours=False` leaves out colour contrast (about half of axe's time), for a
    page whose colours were checked at another width."""
    # Only violations are gathered: what passes is not needed, and gathering it doubles axe's time.
    result = page.evaluate("([tags, colours]) => axe.run(document, {runOnly: {type: 'tag', values: tags}, "
                           "rules: {'color-contrast': {enabled: colours}}, resultTypes: ['violations']})",
                           [AXE_TAGS, colours])
    return [f"{v['id']} ({v['impact']}): {v['help']} — " + "; ".join(
        " ".join(node["target"]) + (f" [{node['failureSummary'].splitlines()[-1].strip()}]" if node.get("failureSummary") else "")
        for node in v["nodes"][:6]) for v in result["violations"]]


# The smallest text in any diagram or plot, in CSS pixels as drawn: an SVG's own units scaled to its drawn width.
SMALLEST_TEXT = """() => {
  let smallest = Infinity, where = "";
  for (const text of document.querySelectorAll("svg text")) {
    const svg = text.ownerSVGElement, box = svg.getBoundingClientRect();
    if (box.width === 0 || !text.textContent.trim()) continue;
    const scale = svg.viewBox.baseVal && svg.viewBox.baseVal.width ? box.width / svg.viewBox.baseVal.width : 1;
    const px = parseFloat(getComputedStyle(text).fontSize) * scale;
    if (px < smallest) { smallest = px; where = text.textContent; }
  }
  return [smallest, where];
}"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PAGES)
def test_axe_finds_nothing_in_either_theme_and_a_phone_never_scrolls_sideways(site_page, server, path, width):
    """…and the scrollbar is about right from the first frame."""
    # axe-core (npm, package.json) is evaluated in the page from outside it, so the page's own CSP stays on.
    site_page.set_viewport_size(WIDTHS[width])
    site_page.emulate_media(color_scheme="light")
    open_all_ready(site_page, server.url(path))
    # The scrollbar tells the truth before anything is done: the parts not yet drawn stand in at their estimated
    # heights (builder/parts.py), and the page is within 1.5x of its height with every part laid out.
    estimated = site_page.evaluate("document.documentElement.scrollHeight")
    laid_out = site_page.evaluate("""() => {
      const parts = document.querySelectorAll('.lesson-part');
      parts.forEach(p => p.style.contentVisibility = 'visible');
      const height = document.documentElement.scrollHeight;
      parts.forEach(p => p.style.contentVisibility = '');  // as the page has them (the phone's check lays them out)
      return height;
    }""")
    assert laid_out / 1.5 <= estimated <= laid_out * 1.5, f"{estimated} px before the parts are drawn, {laid_out} after"
    for i in range(site_page.locator("[data-widget]").count()):
        widget = site_page.locator("[data-widget]").nth(i)
        if widget.locator("[data-figure]").count():
            show_figures(widget)
    # Every question answered: its verdict, its answer and its worked answer are on the page too.
    for box in site_page.locator('[data-widget="predict"]').all():
        box.locator('input[name="guess"]').fill("1")
        box.locator('input[name="guess"]').press("Enter")
        expect(box.locator('[data-flag="answered"]')).to_be_visible()
    if width == "phone":
        # Every part laid out, the ones off screen too (content-visibility skips their layout, and with it their
        # width): a long inline path in a late section used to push the page sideways unseen here.
        site_page.evaluate("document.querySelectorAll('.lesson-part').forEach(p => p.style.contentVisibility = 'visible')")
        assert site_page.evaluate("document.documentElement.scrollWidth") <= WIDTHS["phone"]["width"]
        smallest, where = site_page.evaluate(SMALLEST_TEXT)
        assert smallest >= 10.95, f"text {where!r} drawn at {smallest:.1f} px"
    # Back to the top: wherever scrolling for the figures stopped, some control lies half under the sticky header,
    # and axe would judge it obscured by the search box (target-size), whichever control that happens to be.
    site_page.evaluate("window.scrollTo(0, 0)")
    site_page.evaluate(AXE.read_text(encoding="utf-8"))
    # The colours are the same at every width: their contrast is checked once a page, at desktop width, in both
    # themes (colour contrast is about half of axe's time).
    found = {"light": violations(site_page, colours=width == "desktop")}
    if width == "desktop":
        site_page.emulate_media(color_scheme="dark")  # no stored choice: the page follows the system, live
        site_page.wait_for_function("() => document.documentElement.dataset.theme === 'dark'")
        for plot in site_page.locator("[data-figure]").all():  # plots are drawn again in the dark colours
            expect(plot).not_to_have_attribute("data-drawing", re.compile(""))
        found["dark"] = violations(site_page)
    assert all(v == [] for v in found.values()), json.dumps(found, indent=1, ensure_ascii=False)


@pytest.mark.parametrize("lesson", of_lessons(lesson for lesson in LESSONS if lesson.lang != "zh"))
def test_a_page_in_another_language_shows_no_chinese(site_page, server, lesson):
    open_all_ready(site_page, lesson_url(server, lesson))
    # Open every collapsed part (answers, derivations) so that its text counts as visible too.
    site_page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    # The one part of the page in another language is the link to the Chinese edition, marked with its lang.
    foreign = site_page.evaluate(
        "[...document.body.querySelectorAll('[lang]')].filter(e => !e.lang.startsWith(document.documentElement.lang))"
        ".map(e => e.matches('[data-language-switch]'))")
    assert foreign == [True]
    text = site_page.evaluate(
        "() => { let t = document.body.innerText;"
        " for (const e of document.body.querySelectorAll('[lang]:not([lang|=' + document.documentElement.lang + '])'))"
        " t = t.replace(e.innerText, '');"
        " return t; }")
    # What was opened is in the text: the title and every collapsed part's heading.
    summaries = site_page.locator("main summary").all_inner_texts()
    assert lesson.title in text and summaries and all(s.strip() in text for s in summaries)
    assert CJK.findall(text) == [], [line for line in text.splitlines() if CJK.search(line)]
