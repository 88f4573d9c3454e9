"""The checks every page of the course gets, parametrised over the course plan (lessons/course.yml): each written
lesson in each language, and each language's home page. A new lesson is checked here without a test file of its
own; its own tests are only for what is particular to it.

A page is visited three times, as three students would come to it, and every check that reads the page as one of
them sees it is made in that visit (a page load with its widgets' renders costs a second or more; the suite's
time is mostly such loads, and a page's checks once took thirteen of them):

- **On a desktop**, in the light theme then the dark one. The page loads clean under the Content-Security-Policy
  (no console error, no request off the origin, no inline script); every widget the lesson declares is there and
  becomes ready; the view each widget shows equals CPython's, pre-rendered and from Python in the page, for the
  lesson's setting; every predict box keeps its answer hidden until it is answered, and grades the simulator's own
  answer right; a page in a language other than Chinese shows no Chinese; the scrollbar is about right from the
  first frame. Then, with every figure drawn and every box answered, axe-core finds no violation, and every
  diagram's fills stand out 3:1 from what they touch (test_fill_contrast.py says how); in the dark theme the checks
  that depend on colours run again (axe's colour rules, the fills). Last, one control of each widget is moved
  (chosen from the widget's declaration: the first control on the page whose change changes what the widget
  shows): the page asks Python, which answers as CPython does, the page shows it, and the URL keeps it.
  What does not depend on the page's language is checked in one language of each lesson, the lessons taking the
  languages in turn (`computing_language`): Python's views in the page, the boxes' grading, the moves, axe's
  colour rules in both themes and the dark theme's fills (the colours are the same in every language, and so are
  the diagrams' fills; the same Python computes every language's views, and CPython's equal the pre-rendered ones
  in each). They are half the visit's time.
- **On a 375 px phone**: nothing scrolls sideways, no text in a diagram or a plot is drawn below 11 px, every
  diagram shows whole in its frame with its text inside its drawing (a diagram wider than a phone has a narrow
  drawing of its own, sim/page/svg.py responsive()), tables and display formulas fit with legible text, a plot's legend
  is clear of its curves and its axis titles, axe finds nothing outside its colour rules (a theme's colours do not
  depend on the width), and the fills stand out in both themes (each width draws its own layout).
- **From a link whose values are hostile**: each value falls back to what Python makes of it.

A failure names the visit and the check; the checks that only read the page are all made, and every problem they
find is reported together.
"""

from __future__ import annotations

import json
import re
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from builder import urls
from builder.templates import js_number
from sim import widgets
from sim.kit import Number, Range, Select
from sim.page.languages import DEFAULT
from sim.widgets import predict
from tests.browser.conftest import (
    COURSE,
    LESSONS,
    choose,
    cpython_view,
    island,
    lesson_url,
    of_lessons,
    open_all_ready,
    show_figures,
)
from tests.browser.test_fill_contrast import faint_in_diagrams
from tests.browser.test_phone_tables import FRAMES, SMALLEST_PX

__all__ = ["AXE", "COURSE", "LESSONS", "SHOWN", "WIDTHS", "first_change", "lesson_url", "of_lessons", "violations"]

# Every page: each language's home page, then each lesson.
PAGES = [pytest.param(urls.page(lang), id=f"{lang}/home") for lang in COURSE.languages()] + [
    pytest.param(urls.page(lesson.lang, lesson.slug), id=f"{lesson.lang}/{lesson.slug}",
                 marks=pytest.mark.lesson(lesson.slug)) for lesson in LESSONS]
DECLARED = re.compile(r"^::: *widget +([a-z0-9-]+)", re.MULTILINE)  # a widget directive's first line

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 375, "height": 812}}
# WCAG 2.2 A and AA, and axe's best practices (landmarks, headings, regions) as well.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
# The rules of those whose outcome depends on the colours alone: what the dark theme can change.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
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
SMALLEST_TEXT_PX = 10.95  # 11 px, less what rounding a scale costs


def widget_ids(page) -> list[tuple[str, str]]:
    """(id, widget name) of every widget on the page, in page order."""
    return page.eval_on_selector_all("[data-widget]", "els => els.map(e => [e.id, e.dataset.widget])")


class _Widgets(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        if "data-widget" in (named := dict(attrs)):
            self.found.append((named["id"], named["data-widget"]))


def built_widget_ids(site: Path, path: str) -> list[tuple[str, str]]:
    """widget_ids() of a page as built, read from its file rather than from a load of the page."""
    parser = _Widgets()
    parser.feed((site / path.strip("/") / "index.html").read_text(encoding="utf-8"))
    return parser.found


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


def violations(page, colours: bool = True, rules: list[str] | None = None) -> list[str]:
    """axe's violations on the page; `colours=False` leaves out the rules that depend on the colours alone
    (COLOUR_RULES, more than half of axe's time), for a page whose colours are checked in another visit; `rules` runs
    only those rules."""
    # Only violations are gathered: what passes is not needed, and gathering it doubles axe's time.
    only = {"type": "rule", "values": rules} if rules else {"type": "tag", "values": AXE_TAGS}
    result = page.evaluate("([only, switched]) => axe.run(document, {runOnly: only, rules: switched, "
                           "resultTypes: ['violations']})",
                           [only, {rule: {"enabled": colours} for rule in COLOUR_RULES}])
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
# Per diagram frame ([data-svg] in its sideways-scrolling frame), keyed "widget id/diagram": null where the frame
# is not shown (a flag's panel), else its widths and each visible text drawn below 11 px or past its drawing's edges.
DIAGRAM_FRAMES = """(smallest) => {
  const found = {};
  for (const holder of document.querySelectorAll('.scroll-x [data-svg]')) {
    const frame = holder.closest('.scroll-x'), widget = holder.closest('[data-widget]');
    const key = `${widget.id}/${holder.dataset.svg}`;
    if (!frame.checkVisibility()) { found[key] = null; continue; }
    const small = [], outside = [];
    for (const text of holder.querySelectorAll('svg text')) {
      if (!text.checkVisibility() || !text.textContent.trim()) continue;
      const svg = text.ownerSVGElement, box = svg.getBoundingClientRect(), view = svg.viewBox.baseVal;
      const scale = view && view.width ? box.width / view.width : 1;
      const px = parseFloat(getComputedStyle(text).fontSize) * scale;
      if (px < smallest) small.push(`${JSON.stringify(text.textContent)} at ${px.toFixed(1)} px`);
      const r = text.getBoundingClientRect();
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)
        outside.push(JSON.stringify(text.textContent));
    }
    found[key] = {scrollWidth: frame.scrollWidth, clientWidth: frame.clientWidth, small, outside};
  }
  return found;
}"""
# A plot's legend, plot area and axis titles, in page pixels, once the plot is drawn (plots are drawn as they near
# the screen, so the figure is scrolled to first).
LEGEND_BOXES = """async ([widgetId, figure]) => {
  const holder = document.querySelector(`#${widgetId} [data-figure="${figure}"]`);
  holder.scrollIntoView({block: 'center'});
  for (let i = 0; i < 200 && !(holder._fullLayout && !('drawing' in holder.dataset)); i++)
    await new Promise(r => setTimeout(r, 50));
  const box = el => { if (!el) return null; const r = el.getBoundingClientRect();
                      return r.width && r.height ? {left: r.left, top: r.top, right: r.right, bottom: r.bottom} : null; };
  const at = holder.getBoundingClientRect(), size = holder._fullLayout._size;
  return {legend: box(holder.querySelector('.legend .bg')),
          area: {left: at.left + size.l, top: at.top + size.t, right: at.left + size.l + size.w,
                 bottom: at.top + size.t + size.h},
          xtitle: box(holder.querySelector('.g-xtitle text')), ytitle: box(holder.querySelector('.g-ytitle text'))};
}"""
LAY_OUT_EVERY_PART = "document.querySelectorAll('.lesson-part').forEach(p => p.style.contentVisibility = 'visible')"


def covers(a: dict, b: dict, slack: float = 1.0) -> bool:
    return (a["left"] < b["right"] - slack and b["left"] < a["right"] - slack and a["top"] < b["bottom"] - slack
            and b["top"] < a["bottom"] - slack)


# Each written lesson's slug, in plan order: the lessons take the languages in turn (computing_language).
SLUGS = list(dict.fromkeys(lesson.slug for lesson in LESSONS))


def computing_language(lesson) -> str:
    """The language whose page of the lesson makes the desktop checks that do not depend on the language: the
    lessons take the languages they are written in, in turn."""
    written = [other.lang for other in LESSONS if other.slug == lesson.slug]
    return written[SLUGS.index(lesson.slug) % len(written)]


def the_lesson(path: str):
    """The lesson at a page's path, or None for a home page."""
    return next((lesson for lesson in LESSONS if urls.page(lesson.lang, lesson.slug) == path), None)


def scrollbar_problems(page) -> list[str]:
    """The scrollbar tells the truth before anything is done: the parts not yet drawn stand in at their estimated
    heights (builder/parts.py), and the page is within 1.5x of its height with every part laid out."""
    estimated = page.evaluate("document.documentElement.scrollHeight")
    laid_out = page.evaluate("""() => {
      const parts = document.querySelectorAll('.lesson-part');
      parts.forEach(p => p.style.contentVisibility = 'visible');
      const height = document.documentElement.scrollHeight;
      parts.forEach(p => p.style.contentVisibility = '');  // as the page has them
      return height;
    }""")
    if laid_out / 1.5 <= estimated <= laid_out * 1.5:
        return []
    return [f"scrollbar: {estimated} px before the parts are drawn, {laid_out} after"]


def draw_every_figure(page) -> None:
    for widget in page.locator("[data-widget]").all():
        if widget.locator("[data-figure]").count():
            show_figures(widget)


def answer_every_box(page, guess: str = "1") -> None:
    """Every question answered: its verdict, its answer and its worked answer are on the page too."""
    for box in page.locator('[data-widget="predict"]').all():
        box.locator('input[name="guess"]').fill(guess)
        box.locator('input[name="guess"]').press("Enter")
        expect(box.locator('[data-flag="answered"]')).to_be_visible()


def axe_problems(page, theme: str, **which) -> list[str]:
    # Back to the top: wherever scrolling for the figures stopped, some control lies half under the sticky header,
    # and axe would judge it obscured by the search box (target-size), whichever control that happens to be.
    page.evaluate("window.scrollTo(0, 0)")
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        # axe-core (npm, package.json) is evaluated in the page from outside it, so the page's own CSP stays on.
        page.evaluate(AXE.read_text(encoding="utf-8"))
    return [f"axe, {theme} theme: {v}" for v in violations(page, **which)]


def fill_problems(page, theme: str) -> list[str]:
    return [f"fills, {theme} theme, {where}: " + "; ".join(lines) for where, lines in faint_in_diagrams(page).items()]


def to_dark(page) -> None:
    """The system's dark theme: with no stored choice the page follows it, live; plots are drawn again."""
    page.emulate_media(color_scheme="dark")
    page.wait_for_function("() => document.documentElement.dataset.theme === 'dark'")
    for plot in page.locator("[data-figure]").all():
        expect(plot).not_to_have_attribute("data-drawing", re.compile(""))


def check_widgets_before_python_moves(page, ids, lang: str, in_the_page: bool = True) -> None:
    """Each widget shows CPython's view for the lesson's setting, pre-rendered and (in_the_page) from Python in the
    page."""
    for widget_id, name in ids:
        section = page.locator(f"#{widget_id}")
        data = island(section)
        state = data["state"]
        assert state["lang"] == lang
        # The page reads before Python: the build wrote CPython's view for the lesson's setting, and shows it.
        default = cpython_view(name, state)
        assert data["view"] == default, widget_id
        assert_shows(section, default, exact_values=False)
        # Python in the page computes the same view for that setting.
        if in_the_page:
            assert page.evaluate("([n, s]) => window.inferlab.runtime.render(n, s)", [name, state]) == default, \
                widget_id


def check_boxes_hidden_then_graded_right(page, lesson, graded: bool = True) -> None:
    """Every predict box hides its answer until it is answered, and (graded) grades the simulator's answer right."""
    boxes = page.locator('[data-widget="predict"]')
    assert boxes.count() == DECLARED.findall(lesson.body).count("predict")
    right_text = predict.TEXT[lesson.lang]["correct"]
    for i in range(boxes.count()):
        box = boxes.nth(i)
        state = island(box)["state"]
        worked = page.locator(f'details.worked-answer[data-answer-for="{box.get_attribute("id")}"]')
        # Nothing of the answer shows before a guess: no number, no derivation, no verdict but the invitation,
        # and the lesson's worked answer, if it has one, stays folded.
        for k in range(worked.count()):
            assert worked.nth(k).get_attribute("open") is None
        expect(box.locator('[data-flag="answered"]')).to_be_hidden()
        expect(box.locator('output[name="expected"]')).to_have_text("")
        expect(box.locator('[data-derivation="expected"]')).to_have_text("")
        expect(box.locator('output[name="verdict"]')).to_have_text(predict.TEXT[lesson.lang]["unanswered"])
        if not graded:
            continue
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
        assert wait_for_view(page, box.get_attribute("id"), graded) == graded
        expect(box.locator('[data-flag="answered"]')).to_be_visible()
        for k in range(worked.count()):  # the worked answer follows the check
            expect(worked.nth(k)).to_have_attribute("open", "")


def chinese_shown(page, lesson) -> list[str]:
    """The lines of Chinese a page in another language shows, every collapsed part opened (answers, derivations)."""
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    # The one part of the page in another language is the link to the Chinese edition, marked with its lang.
    foreign = page.evaluate(
        "[...document.body.querySelectorAll('[lang]')].filter(e => !e.lang.startsWith(document.documentElement.lang))"
        ".map(e => e.matches('[data-language-switch]'))")
    assert foreign == [True]
    text = page.evaluate(
        "() => { let t = document.body.innerText;"
        " for (const e of document.body.querySelectorAll('[lang]:not([lang|=' + document.documentElement.lang + '])'))"
        " t = t.replace(e.innerText, '');"
        " return t; }")
    # What was opened is in the text: the title and every collapsed part's heading.
    summaries = page.locator("main summary").all_inner_texts()
    assert lesson.title in text and summaries and all(s.strip() in text for s in summaries)
    return [line for line in text.splitlines() if CJK.search(line)]


def move_one_control_of_each(page, ids) -> None:
    """One control moved per widget (a predict box's guess was moved when it was answered): the page asks Python,
    which answers as CPython does; the page shows it, and the URL holds the control's new value."""
    for widget_id, name in ids:
        if name == "predict":
            continue
        section = page.locator(f"#{widget_id}")
        state = island(section)["state"]
        control, value, expected = one_change(section, name, state)
        expect(section.locator(f'[data-param="{control.name}"]').locator("input, select").first).to_be_enabled()
        move(section, control, value)
        assert wait_for_view(page, widget_id, expected) == expected, (widget_id, control.name, value)
        assert_shows(section, expected)
        key, new = f"{widget_id}.{control.name}", expected["state"][control.name]
        if new != state[control.name]:
            page.wait_for_function("([k, v]) => new URLSearchParams(location.search).get(k) === v",
                                   arg=[key, "" if new is None else str(js_number(new))])


@pytest.mark.parametrize("path", PAGES)
def test_on_a_desktop_the_page_is_clean_accessible_in_both_themes_and_answers_as_cpython(site_page, server, path):
    # site_page fails the test on any console error, uncaught error, CSP violation or request off the origin.
    lesson = the_lesson(path)
    site_page.set_viewport_size(WIDTHS["desktop"])
    site_page.emulate_media(color_scheme="light")
    open_all_ready(site_page, server.url(path))
    problems = scrollbar_problems(site_page)
    csp = site_page.get_attribute('meta[http-equiv="Content-Security-Policy"]', "content")
    assert "default-src 'self'" in csp and "script-src 'self' 'wasm-unsafe-eval'" in csp
    assert site_page.locator("script:not([src]):not([type='application/json'])").count() == 0
    stdlib_zip = site_page.get_attribute("html", "data-stdlib-zip")
    if stdlib_zip:  # Python came up on the standard library cut for this simulator, never on Pyodide's whole one
        assert any(f"GET /{stdlib_zip} " in line for line in server.log)
        assert not any("python_stdlib.zip" in line for line in server.log)
    ids = widget_ids(site_page)
    assert [name for _, name in ids] == (DECLARED.findall(lesson.body) if lesson else [])
    computes = lesson is None or lesson.lang == computing_language(lesson)
    check_widgets_before_python_moves(site_page, ids, lesson.lang if lesson else DEFAULT, in_the_page=computes)
    if lesson:
        check_boxes_hidden_then_graded_right(site_page, lesson, graded=computes)
        if lesson.lang != "zh":
            problems += [f"Chinese on an {lesson.lang} page: {line}" for line in chinese_shown(site_page, lesson)]
    draw_every_figure(site_page)
    problems += axe_problems(site_page, "light", colours=computes) + fill_problems(site_page, "light")
    if computes:
        to_dark(site_page)
        problems += axe_problems(site_page, "dark", rules=COLOUR_RULES) + fill_problems(site_page, "dark")
    assert not problems, "\n".join(problems)
    if computes:
        site_page.emulate_media(color_scheme="light")
        move_one_control_of_each(site_page, ids)


@pytest.mark.parametrize("path", PAGES)
def test_on_a_phone_the_page_fits_reads_and_is_accessible_in_both_themes(site_page, server, path):
    site_page.set_viewport_size(WIDTHS["phone"])
    site_page.emulate_media(color_scheme="light")
    open_all_ready(site_page, server.url(path))
    problems = scrollbar_problems(site_page)
    draw_every_figure(site_page)
    answer_every_box(site_page)
    # Every part laid out, the ones off screen too (content-visibility skips their layout, and with it their width):
    # a long inline path in a late section used to push the page sideways unseen here.
    site_page.evaluate(LAY_OUT_EVERY_PART)
    if (wide := site_page.evaluate("document.documentElement.scrollWidth")) > WIDTHS["phone"]["width"]:
        problems.append(f"the page is {wide} px wide on a {WIDTHS['phone']['width']} px phone")
    smallest, where = site_page.evaluate(SMALLEST_TEXT)
    if smallest < SMALLEST_TEXT_PX:
        problems.append(f"text {where!r} drawn at {smallest:.1f} px")
    problems += diagram_frame_problems(site_page)
    frames = site_page.evaluate(FRAMES)
    if the_lesson(path) and not frames:
        problems.append("no table or formula on the page")  # every lesson has one: the check would find nothing
    for frame in frames:
        if frame["overflow"] > 1:
            problems.append(f"the table or formula {frame['label']!r} is {frame['overflow']} px wider than a phone")
        if frame["smallest"] < SMALLEST_PX:
            problems.append(f"{frame['label']!r}: {frame['where']!r} drawn at {frame['smallest']} px")
    problems += legend_problems(site_page)
    problems += axe_problems(site_page, "light", colours=False) + fill_problems(site_page, "light")
    to_dark(site_page)
    problems += fill_problems(site_page, "dark")
    assert not problems, "\n".join(problems)


def diagram_frame_problems(page) -> list[str]:
    """Every diagram a widget draws has its frame on the page, and shows whole in it with its text legible and
    inside its drawing."""
    found = page.evaluate(DIAGRAM_FRAMES, SMALLEST_TEXT_PX)
    problems = []
    for widget in page.locator("[data-widget]").all():
        view = island(widget)["view"]
        for diagram in view.get("svg", {}):
            key = f"{widget.get_attribute('id')}/{diagram}"
            if key not in found:
                problems.append(f"no frame for the diagram {key} on the page")
            elif (frame := found[key]) is not None:  # None: not shown in the lesson's setting (a flag's panel)
                if frame["scrollWidth"] > frame["clientWidth"] + 1:
                    problems.append(f"{key} is {frame['scrollWidth']} px wide in a {frame['clientWidth']} px frame")
                problems += [f"{key}: text below 11 px: {text}" for text in frame["small"]]
                problems += [f"{key}: text past the drawing's edge: {text}" for text in frame["outside"]]
    return problems


def legend_problems(page) -> list[str]:
    """Every plot with a legend has it drawn, clear of its plot area and its axis titles."""
    problems = []
    for widget in page.locator("[data-widget]").all():
        widget_id = widget.get_attribute("id")
        for figure, spec in island(widget)["view"].get("figures", {}).items():
            if "legend" not in spec["layout"]:
                continue
            boxes = page.evaluate(LEGEND_BOXES, [widget_id, figure])
            if not boxes["legend"]:
                problems.append(f"{widget_id}/{figure}: no legend drawn")
                continue
            problems += [f"{widget_id}/{figure}: the legend {boxes['legend']} covers the {part} {boxes[part]}"
                         for part in ("area", "xtitle", "ytitle") if boxes[part] and covers(boxes["legend"], boxes[part])]
    return problems


@pytest.mark.parametrize("lesson", of_lessons(LESSONS))
def test_hostile_url_values_fall_back_to_what_python_makes_of_them(site_page, server, built_site, lesson):
    ids = built_widget_ids(built_site, urls.page(lesson.lang, lesson.slug))
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
