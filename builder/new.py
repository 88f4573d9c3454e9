"""`build.py new`: the skeleton of a new lesson or widget, written where the build looks for it, that builds as it
is, so that an author starts from a working page rather than from the rules in lessons/README.md.

    python build.py new lesson SLUG [--lang LANG] [--title TITLE]
    python build.py new widget NAME

A lesson is its file (lessons/<lang>/<slug>.md), its line in a chapter of the course plan (lessons/course.yml; a
new one goes last in the last chapter) and, in every other language whose catalog exists, a title under `upcoming:`
until it is written there (builder/course.py make_course asks for one title per planned lesson and language). A
widget is one module, sim/widgets/<name>.py. Anything that would make the skeleton fail the build (a bad or taken
name, a plan or catalog it cannot add to) is refused in one line, exit status 2, before any file is written.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import yaml

from builder import urls
from builder.course import load_plan
from builder.lessons import SLUG
from sim.page.languages import DEFAULT, LANGUAGES

ROOT = Path(__file__).resolve().parent.parent
WIDGET_NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")  # a module name once hyphens become underscores


class Refused(Exception):
    """What stops a skeleton from being written, in one line."""


# --- lessons --------------------------------------------------------------------------------------------------------

# The skeleton's words per language; a language without its own takes English's, and the command says so.
LESSON_WORDS = {
    "zh": {
        "summary": "一两句话：这一课回答什么问题（换成这一课自己的）。",
        "heading": "从一个数开始",
        "figure": "锚点模型在一张 H100 上 decode 一步（batch 1，每个请求的上下文 4,096 个 token）至少要 {figure}。"
                  "课文里跟模型或 GPU 有关的数，都这样写成表达式，由模拟器在构建时算出，不手打。",
        "todo": "写这一课",
        "steps": (
            "换掉标题、摘要和这一节；每个 `##`、`###` 标题自动得到 id。",
            "放一个组件，再用公式、预测题和讲解把课文串起来：`lessons/README.md` 的「Directives」一节有每种写法。",
            "课程的顺序在 `lessons/course.yml`：这一课现在排在最后，把它那一行挪到该在的位置。",
            "`make serve` 边写边看；写完删掉这个框。",
        ),
    },
    "en": {
        "summary": "A sentence or two: the question this lesson answers (replace it with the lesson's own).",
        "heading": "Start from a number",
        "figure": "One decode step of the anchor model on an H100 (batch 1, a context of 4,096 tokens per request) "
                  "takes at least {figure}. Every figure that depends on a model or a GPU is written as such an "
                  "expression, computed by the simulator when the site is built, never typed.",
        "todo": "Writing this lesson",
        "steps": (
            "Replace the title, the summary and this section; every `##` and `###` heading gets an id of its own.",
            "Place a widget, then tie the text together with formulas, predictions and worked answers: the "
            "\"Directives\" section of `lessons/README.md` shows each.",
            "The course's order is `lessons/course.yml`: this lesson is last there for now; move its line to "
            "where it belongs.",
            "Watch the page as you write with `make serve`; remove this box when you are done.",
        ),
    },
}
FIGURE = "{sim}`ms(decode(anchor, h100, batch=1, context=4096).time_s)`"
MINUTES = 20


def lesson_text(lang: str, title: str) -> str:
    """The skeleton of a lesson in `lang`: front matter, a heading, one {sim} figure, and a note of what to do
    next, in a callout the page shows until the author removes it."""
    w = LESSON_WORDS.get(lang, LESSON_WORDS["en"])
    steps = "\n".join(f"- {step}" for step in w["steps"])
    return (f"---\ntitle: {_yaml_text(title)}\nsummary: {_yaml_text(w['summary'])}\nminutes: {MINUTES}\n---\n\n"
            f"## {w['heading']}\n\n{w['figure'].format(figure=FIGURE)}\n\n"
            f"::: callout note {w['todo']}\n{steps}\n:::\n")


def new_lesson(lessons: Path, slug: str, lang: str = DEFAULT, title: str | None = None) -> list[str]:
    """Write lessons/<lang>/<slug>.md, plan it last in the course, and give it a title in every other language's
    catalog; a slug the plan already holds (a lesson planned, written in no language yet) keeps its place, and its
    catalog title in `lang` moves into the front matter. Returns what it did and the next step, as lines to print;
    raises Refused, having written nothing."""
    if lang not in LANGUAGES:
        raise Refused(f"{lang!r} is not a site language ({', '.join(LANGUAGES)})")
    if not SLUG.match(slug):
        raise Refused(f"{slug!r} is not a slug: lowercase letters, digits and hyphens, e.g. kv-cache (the file "
                      "name is the lesson's URL)")
    if slug == urls.OFFLINE:
        raise Refused(f"{slug!r} is the offline page's address, not a lesson's: choose another slug")
    if title is not None and (not title.strip() or "\n" in title):
        raise Refused("--title is one line of text")
    path = lessons / lang / f"{slug}.md"
    if path.exists():
        raise Refused(f"{_shown(path, lessons)} exists already")
    for other in LANGUAGES:
        if (written := lessons / other / f"{slug}.md").exists():
            raise Refused(f"{slug!r} is written in {other} ({_shown(written, lessons)}): translate that file into "
                          f"{_shown(path, lessons)} instead (`new lesson` starts a lesson no language has)")
    plan_path = lessons / "course.yml"
    plan, problems = load_plan(plan_path)
    if problems:
        raise Refused(f"{_shown(plan_path, lessons)} has a problem to fix first: line {problems[0].line}: "
                      f"{problems[0].message}")
    if slug in {chapter.slug for chapter in plan.chapters}:
        raise Refused(f"{slug!r} is a chapter's slug in {_shown(plan_path, lessons)}, and its page's address: "
                      "choose another slug")
    catalogs = {other: lessons / other / "catalog.yml" for other in LANGUAGES if (lessons / other).is_dir()}
    if lang not in catalogs or not catalogs[lang].is_file():
        raise Refused(f"{_shown(lessons / lang / 'catalog.yml', lessons)} is missing: a language's lessons need its "
                      "catalog first (lessons/README.md, \"Adding a language\")")

    changes: dict[Path, str] = {}
    said = []
    if slug in plan.lessons:
        said.append(f"{slug!r} was planned in {_shown(plan_path, lessons)}: it keeps its place there")
    else:
        changes[plan_path] = add_to_plan(plan_path, slug)
        said.append(f"added {slug!r} to {_shown(plan_path, lessons)}, last in the course: move its line to where it "
                    "belongs")
    stand_in = slug.replace("-", " ").capitalize()
    for other, catalog in catalogs.items():
        if not catalog.is_file():
            continue  # a language folder without a catalog has no lessons the build knows of
        text = catalog.read_text(encoding="utf-8-sig")
        planned = _upcoming(text, catalog, lessons).get(slug)
        if other == lang:
            if planned is not None:
                title = title or planned
                changes[catalog] = _checked(without_upcoming(text, slug), catalog, lessons, slug, None)
                said.append(f"moved its {lang} title from {_shown(catalog, lessons)} (upcoming) into its front matter")
        elif planned is None:
            changes[catalog] = _checked(with_upcoming(text, slug, stand_in), catalog, lessons, slug, stand_in)
            said.append(f"gave it the {other} title {stand_in!r} in {_shown(catalog, lessons)} (upcoming: {slug}), "
                        f"shown until it is written in {other}: replace it")
    title = title or stand_in
    said.insert(0, f"wrote {_shown(path, lessons)}, titled {title!r} (its front matter holds the title)")
    changes[path] = lesson_text(lang, title)
    for target, text in changes.items():
        target.write_text(text, encoding="utf-8")
    if lang not in LESSON_WORDS:
        said.append(f"its words are English, for want of {lang} ones: write them in {lang}")
    said.append(f"next: make serve, then open http://127.0.0.1:8000/{urls.page(lang, slug)} (lessons/README.md "
                "says what a lesson can hold)")
    return said


def add_to_plan(plan_path: Path, slug: str) -> str:
    """The course plan's text with `slug` as its last lesson, the last of its last chapter, comments kept. The one
    place that knows the plan's shape (a list of chapters, each `- chapter: SLUG` with `lessons:`, a block list of
    slugs; builder/course.py load_plan reads it) in order to add to it."""
    text = plan_path.read_text(encoding="utf-8-sig")
    refused = Refused(f"cannot add {slug!r} to {plan_path.name} as the last lesson of its last chapter: add "
                      f"'- {slug}' there yourself")
    root = yaml.compose(text)
    last = root.value[-1] if isinstance(root, yaml.SequenceNode) and root.value else None
    listed = next((value for key, value in last.value if key.value == "lessons"), None) \
        if isinstance(last, yaml.MappingNode) else None
    if not isinstance(listed, yaml.SequenceNode) or listed.flow_style or not listed.value:
        raise refused
    lines = text.splitlines(keepends=True)
    at = listed.value[-1].end_mark.line  # the last lesson's line (0-based): the new one goes below it
    if at >= len(lines) or listed.value[-1].start_mark.line != at:
        raise refused
    indent = lines[at][:len(lines[at]) - len(lines[at].lstrip())]
    added = "".join(lines[:at] + [lines[at] if lines[at].endswith("\n") else lines[at] + "\n", f"{indent}- {slug}\n"]
                    + lines[at + 1:])
    before, after = _loaded(text), _loaded(added)
    if after != [*before[:-1], {**before[-1], "lessons": [*before[-1]["lessons"], slug]}]:
        raise refused
    return added


def _upcoming(text: str, catalog: Path, lessons: Path) -> dict:
    try:
        root = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise Refused(f"{_shown(catalog, lessons)} is not valid YAML: {getattr(e, 'problem', e)}") from None
    upcoming = root.get("upcoming") if isinstance(root, dict) else None
    return upcoming if isinstance(upcoming, dict) else {}


def with_upcoming(text: str, slug: str, title: str) -> str | None:
    """The catalog's text with `slug: title` under `upcoming:`, as the entry's first line; None where the section
    is written in a form this does not edit (a flow mapping across lines)."""
    entry = f"{slug}: {_yaml_text(title)}"
    lines = text.splitlines(keepends=True)
    found = _upcoming_node(text)
    if found is None:  # no section yet: one at the end
        return _appended(text, f"upcoming:\n  {entry}\n")
    key, value = found
    if isinstance(value, yaml.MappingNode) and not value.flow_style and value.value:
        indent = " " * value.value[0][0].start_mark.column
        return "".join(lines[:key.start_mark.line + 1] + [f"{indent}{entry}\n"] + lines[key.start_mark.line + 1:])
    if value.start_mark.line != key.start_mark.line or value.end_mark.line != key.start_mark.line:
        return None
    titles = yaml.safe_load(text)["upcoming"] or {}
    return _rewrite_line(lines, key.start_mark.line, {**titles, slug: title})


def without_upcoming(text: str, slug: str) -> str | None:
    """The catalog's text without `slug`'s entry under `upcoming:` (`upcoming: {}` once none is left); None where
    the entry is written in a form this does not edit (a title across lines)."""
    lines = text.splitlines(keepends=True)
    key, value = _upcoming_node(text)
    titles = {k: v for k, v in (yaml.safe_load(text)["upcoming"] or {}).items() if k != slug}
    if isinstance(value, yaml.MappingNode) and not value.flow_style:
        for k, v in value.value:
            if k.value == slug:
                last = v.end_mark.line - (v.end_mark.column == 0)
                if last != k.start_mark.line:
                    return None
                kept = lines[:k.start_mark.line] + lines[k.start_mark.line + 1:]
                return _rewrite_line(kept, key.start_mark.line, {}) if not titles else "".join(kept)
    if value.end_mark.line != key.start_mark.line:
        return None
    return _rewrite_line(lines, key.start_mark.line, titles)


def _upcoming_node(text: str) -> tuple[yaml.Node, yaml.Node] | None:
    root = yaml.compose(text)
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            if key.value == "upcoming":
                return key, value
    return None


def _rewrite_line(lines: list[str], at: int, titles: dict) -> str:
    """`lines` with line `at` (the `upcoming:` key's, value on the same line) written as a block of `titles`."""
    block = "".join(f"  {slug}: {_yaml_text(title)}\n" for slug, title in titles.items())
    head = "upcoming:\n" if titles else "upcoming: {}\n"
    return "".join(lines[:at] + [head + block] + lines[at + 1:])


def _checked(text: str | None, catalog: Path, lessons: Path, slug: str, title: str | None) -> str:
    """The edited catalog, once it reads as intended: `slug` under upcoming with `title` (None: gone), every other
    entry of the file as it was."""
    before = _loaded(catalog.read_text(encoding="utf-8-sig")) or {}
    after = _loaded(text) if text is not None else None
    expected = {**before, "upcoming": {k: v for k, v in (before.get("upcoming") or {}).items() if k != slug}}
    if title is not None:
        expected["upcoming"][slug] = title
    if after != expected:
        what = f"add '{slug}: {title}'" if title is not None else f"remove the line of {slug!r}"
        raise Refused(f"cannot edit the upcoming titles of {_shown(catalog, lessons)}: {what} there yourself")
    return text


# --- widgets --------------------------------------------------------------------------------------------------------

# The skeleton's words per language (its TEXT), the keys the same in each.
WIDGET_WORDS = {
    "zh": {"title": "decode 一步要多久", "batch": "batch（同时 decode 的请求数）", "step_ms": "decode 一步的时间",
           "tokens_per_s": "每秒生成的 token（整个 batch）"},
    "en": {"title": "How long one decode step takes", "batch": "Batch (requests decoding together)",
           "step_ms": "One decode step", "tokens_per_s": "Tokens per second (the whole batch)"},
}

WIDGET_MODULE = '''"""{title}: what this widget lets a student try, in a sentence or two (written by
`build.py new widget`; replace this text, the words, the controls and render with the widget's own).

The physics is in sim/ (here sim/physics/roofline.py's decode step); the widget only declares its controls, its words
and what its page shows, and computes its outputs from them.
"""

from __future__ import annotations

from sim.kit import Controls, Range, Readouts, Widget, output, view
from sim.page.display import fmt_ms, fmt_sig
from sim.physics import presets, roofline

TEXT = {{
{text}
}}

WIDGET = Widget(
    controls=(Range("batch", default=1, min=1, max=64),),
    layout=(Controls(), Readouts("step_ms", "tokens_per_s")),
)

MODEL, GPU, CONTEXT = "qwen3.8-27b", "h100-sxm", 4096  # 64 such requests fit in an H100 beside the weights


def render(state) -> dict:
    """The view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    step = roofline.decode(presets.model(MODEL), presets.hardware(GPU), batch=s["batch"], context=CONTEXT)
    tokens_per_s = s["batch"] / step.time_s
    return view(s, {{"step_ms": output(step.time_s * 1e3, fmt_ms(step.time_s)),
                    "tokens_per_s": output(tokens_per_s, f"{{fmt_sig(tokens_per_s)}} tok/s")}})
'''


def widget_text(name: str) -> str:
    """The skeleton of widget `name`: one control, two readouts, its words in every site language."""
    blocks = []
    for lang in LANGUAGES:
        words = WIDGET_WORDS.get(lang, WIDGET_WORDS["en"])
        pairs = "".join(f"        {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},\n" for k, v in words.items())
        blocks.append(f"    {json.dumps(lang)}: {{\n{pairs}    }},")
    return WIDGET_MODULE.format(title=name.replace("-", " ").capitalize(), text="\n".join(blocks))


def new_widget(folder: Path, name: str) -> list[str]:
    """Write the widget module `name` into `folder` (sim/widgets/); raises Refused, having written nothing."""
    if not WIDGET_NAME.match(name.replace("_", "-")):
        raise Refused(f"{name!r} is not a widget name: a lowercase letter, then lowercase letters, digits and "
                      "hyphens, e.g. decode-ceiling")
    name = name.replace("_", "-")
    path = folder / f"{name.replace('-', '_')}.py"
    if path.exists():
        raise Refused(f"widget {name!r} exists already: {_shown(path, folder.parent)}")
    path.write_text(widget_text(name), encoding="utf-8")
    said = [f"wrote {_shown(path, folder.parent)}: one control (batch), two readouts; make them the widget's own",
            "place it in a lesson (lessons/README.md, \"widget\"), its settings in YAML:",
            f"    ::: widget {name}", "    batch: 8", "    :::"]
    if missing := [lang for lang in LANGUAGES if lang not in WIDGET_WORDS]:
        said.append(f"its {', '.join(missing)} words are English, for want of their own: translate them")
    said.append(f"next: its tests in tests/sim/test_{path.stem}.py (lessons/README.md, \"Adding a widget\"); the "
                "next `build.py build` renews site/stdlib/: commit it with the widget")
    return said


# --- shared ---------------------------------------------------------------------------------------------------------

def _yaml_text(text: str) -> str:
    """Text as a YAML scalar: plain where YAML reads it back unchanged, else double-quoted (JSON's quoting is
    YAML's)."""
    try:
        if yaml.safe_load(f"k: {text}") == {"k": text}:
            return text
    except yaml.YAMLError:
        pass
    return json.dumps(text, ensure_ascii=False)


def _loaded(text: str):
    """YAML text's value; None for text that is not YAML (what an edit that went wrong would leave)."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None


def _appended(text: str, lines: str) -> str:
    """`lines` after the last line of `text`, which may lack its line break."""
    return text + ("" if not text or text.endswith("\n") else "\n") + lines


def _shown(path: Path, base: Path) -> str:
    """`path` as messages name it: from the folder holding `base` (lessons/zh/x.md, sim/widgets/x.py)."""
    try:
        return path.relative_to(base.parent).as_posix()
    except ValueError:
        return str(path)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="build.py new", description="Write the skeleton of a new lesson or widget, "
                                     "one that builds as it is.")
    kinds = parser.add_subparsers(dest="what", required=True, metavar="{lesson,widget}")
    lesson = kinds.add_parser("lesson", help="lessons/<lang>/<slug>.md, planned last in lessons/course.yml")
    lesson.add_argument("slug", help="the lesson's URL: lowercase letters, digits and hyphens")
    lesson.add_argument("--lang", choices=LANGUAGES, default=DEFAULT, help=f"its language (default {DEFAULT})")
    lesson.add_argument("--title", help="its title (default: the catalog's upcoming title, else the slug's words)")
    lesson.add_argument("--lessons", type=Path, default=ROOT / "lessons", help="lessons folder")
    widget = kinds.add_parser("widget", help="sim/widgets/<name>.py, one control and two readouts")
    widget.add_argument("name", help="the widget's name: lowercase letters, digits and hyphens")
    widget.add_argument("--widgets", type=Path, default=ROOT / "sim" / "widgets", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        if args.what == "lesson":
            written = new_lesson(args.lessons.resolve(), args.slug, args.lang, args.title)
        else:
            written = new_widget(args.widgets.resolve(), args.name)
    except Refused as refused:
        print(f"new {args.what}: {refused}", file=sys.stderr)
        return 2
    print("\n".join(written))
    return 0
