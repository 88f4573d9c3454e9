"""`build.py new`: a lesson's or a widget's skeleton builds as it is written, and a name it cannot take is refused
in one line, with nothing written."""

import importlib
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import build
from builder import new, stdlib
from sim import widgets
from sim.page.display import fmt_ms
from sim.physics import presets, roofline

HERE = Path(__file__).parent
FIGURE = fmt_ms(roofline.decode(presets.model("qwen3.8-27b"), presets.hardware("h100-sxm"), batch=1,
                                context=4096).time_s)


@pytest.fixture
def lessons(tmp_path) -> Path:
    """A copy of the demo course (tests/builder/lessons): zh demo and second, en demo, later planned in neither."""
    shutil.copytree(HERE / "lessons", tmp_path / "lessons")
    return tmp_path / "lessons"


def run(capsys, *args: str) -> tuple[int, list[str], str]:
    """build.py's exit status for `args`, the lines it printed, and what it said on stderr."""
    status = build.main(list(args))
    out, err = capsys.readouterr()
    return status, out.splitlines(), err


def built(lessons: Path) -> Path:
    """The site of `lessons`, built (BuildFailed, with every problem, if it has any)."""
    out = lessons.parent / "_site"
    build.build(build.Paths(lessons=lessons, out=out))
    return out


def page_title(page: str) -> str:
    return re.search(r"<h1[^>]*>([^<]*)</h1>", page).group(1)


def test_a_new_lesson_is_written_planned_and_titled_in_every_language_and_builds(lessons, capsys):
    status, said, _ = run(capsys, "new", "lesson", "third", "--lessons", str(lessons))
    assert status == 0
    assert said == [
        "wrote lessons/zh/third.md, titled 'Third' (its front matter holds the title)",
        "added 'third' to lessons/course.yml, last in the course: move its line to where it belongs",
        "gave it the en title 'Third' in lessons/en/catalog.yml (upcoming: third), shown until it is written in "
        "en: replace it",
        "next: make serve, then open http://127.0.0.1:8000/third/ (lessons/README.md says what a lesson can hold)",
    ]
    assert (lessons / "course.yml").read_text().splitlines()[-3:] == ["    - second", "    - later", "    - third"]
    assert "  third: Third\n" in (lessons / "en" / "catalog.yml").read_text()
    site = built(lessons)
    page = (site / "third" / "index.html").read_text(encoding="utf-8")
    assert page_title(page) == "Third"
    assert f'至少要 <span class="sim-value">{FIGURE}</span>' in page and "{sim}" not in page
    assert 'class="callout callout-note"' in page  # the note of what to do next, as the page shows it
    assert "Third" in (site / "en" / "index.html").read_text(encoding="utf-8")  # upcoming on the English home page


def test_a_lesson_in_another_language_takes_its_title_and_gives_the_default_language_one(lessons, capsys):
    status, said, _ = run(capsys, "new", "lesson", "kv-offload", "--lang", "en", "--title", "Offload: where KV goes",
                          "--lessons", str(lessons))
    assert status == 0 and said[-1].startswith("next: make serve, then open http://127.0.0.1:8000/en/kv-offload/ ")
    assert (lessons / "en" / "kv-offload.md").read_text().startswith('---\ntitle: "Offload: where KV goes"\n')
    assert "  kv-offload: Kv offload\n" in (lessons / "zh" / "catalog.yml").read_text()
    page = (built(lessons) / "en" / "kv-offload" / "index.html").read_text(encoding="utf-8")
    assert page_title(page) == "Offload: where KV goes" and f'takes at least <span class="sim-value">{FIGURE}</span>.' in page


def test_a_planned_lesson_keeps_its_place_and_its_catalog_title_moves_into_the_front_matter(lessons, capsys):
    plan = (lessons / "course.yml").read_text()
    status, said, _ = run(capsys, "new", "lesson", "later", "--lessons", str(lessons))
    assert status == 0 and said[:3] == [
        "wrote lessons/zh/later.md, titled '以后的课' (its front matter holds the title)",
        "'later' was planned in lessons/course.yml: it keeps its place there",
        "moved its zh title from lessons/zh/catalog.yml (upcoming) into its front matter",
    ]
    assert (lessons / "course.yml").read_text() == plan
    assert (lessons / "zh" / "catalog.yml").read_text().endswith("summary: 第二章接着讲。\nupcoming: {}\n")
    assert "  later: A later lesson\n" in (lessons / "en" / "catalog.yml").read_text()  # until written in English
    assert page_title((built(lessons) / "later" / "index.html").read_text(encoding="utf-8")) == "以后的课"


@pytest.mark.parametrize("args, message", [
    (("Third",), "new lesson: 'Third' is not a slug: lowercase letters, digits and hyphens, e.g. kv-cache (the file "
                 "name is the lesson's URL)"),
    (("kv--cache",), "new lesson: 'kv--cache' is not a slug: lowercase letters, digits and hyphens, e.g. kv-cache "
                     "(the file name is the lesson's URL)"),
    (("offline",), "new lesson: 'offline' is the offline page's address, not a lesson's: choose another slug"),
    (("demo",), "new lesson: lessons/zh/demo.md exists already"),
    (("second", "--lang", "en"), "new lesson: 'second' is written in zh (lessons/zh/second.md): translate that file "
                                 "into lessons/en/second.md instead (`new lesson` starts a lesson no language has)"),
    (("third", "--title", " "), "new lesson: --title is one line of text"),
])
def test_a_lesson_that_cannot_be_written_is_refused_in_one_line_with_nothing_written(lessons, capsys, args, message):
    before = {p: p.read_bytes() for p in lessons.rglob("*") if p.is_file()}
    status, said, err = run(capsys, "new", "lesson", *args, "--lessons", str(lessons))
    assert (status, said, err) == (2, [], message + "\n")
    assert {p: p.read_bytes() for p in lessons.rglob("*") if p.is_file()} == before


def test_a_plan_or_catalog_it_cannot_add_to_is_refused_before_the_lesson_is_written(lessons, capsys):
    plan = (lessons / "course.yml").read_text()
    (lessons / "course.yml").write_text(plan + "    - demo\n")
    assert run(capsys, "new", "lesson", "third", "--lessons", str(lessons))[2] == (
        "new lesson: lessons/course.yml has a problem to fix first: line 8: 'demo' is listed twice (line 3)\n")
    (lessons / "course.yml").write_text(plan.replace("    - second\n    - later\n", "    [second, later]\n"))
    assert run(capsys, "new", "lesson", "third", "--lessons", str(lessons))[2] == (
        "new lesson: cannot add 'third' to course.yml as the last lesson of its last chapter: add '- third' there "
        "yourself\n")
    (lessons / "course.yml").write_text(plan)
    assert run(capsys, "new", "lesson", "onwards", "--lessons", str(lessons))[2] == (
        "new lesson: 'onwards' is a chapter's slug in lessons/course.yml, and its page's address: choose another "
        "slug\n")
    (lessons / "en" / "catalog.yml").write_text("upcoming: {second: The second lesson,\n  later: A later lesson}\n")
    assert run(capsys, "new", "lesson", "third", "--lessons", str(lessons))[2] == (
        "new lesson: cannot edit the upcoming titles of lessons/en/catalog.yml: add 'third: Third' there yourself\n")
    shutil.rmtree(lessons / "en")
    (lessons / "en").mkdir()
    assert run(capsys, "new", "lesson", "third", "--lang", "en", "--lessons", str(lessons))[2] == (
        "new lesson: lessons/en/catalog.yml is missing: a language's lessons need its catalog first "
        "(lessons/README.md, \"Adding a language\")\n")
    assert not (lessons / "zh" / "third.md").exists() and not (lessons / "en" / "third.md").exists()


@pytest.mark.parametrize("text, slug, title, edited", [
    # A block of titles: the new one first, the comments and the other sections as they were.
    ("# words\nupcoming:\n    b: B  # soon\nterms: {}\n", "a", "A: the first",
     '# words\nupcoming:\n    a: "A: the first"\n    b: B  # soon\nterms: {}\n'),
    ("upcoming: {}\nterms: {}\n", "a", "A", "upcoming:\n  a: A\nterms: {}\n"),
    ("upcoming: {b: B}\n", "a", "A", "upcoming:\n  b: B\n  a: A\n"),
    ("upcoming:\nterms: {}\n", "a", "A", "upcoming:\n  a: A\nterms: {}\n"),
    ("terms: {}", "a", "A", "terms: {}\nupcoming:\n  a: A\n"),
    # Removed: the last one leaves an empty mapping, not a null.
    ("upcoming:\n  a: A\n  b: B\nterms: {}\n", "a", None, "upcoming:\n  b: B\nterms: {}\n"),
    ("upcoming:\n  a: A\nterms: {}\n", "a", None, "upcoming: {}\nterms: {}\n"),
    ("upcoming: {a: A, b: B}\n", "a", None, "upcoming:\n  b: B\n"),
    ("upcoming:\n  a: >-\n    A title\n    on two lines\n", "a", None, None),  # left to the author
])
def test_the_catalog_edits_keep_the_rest_of_the_file(text, slug, title, edited):
    assert (new.with_upcoming(text, slug, title) if title else new.without_upcoming(text, slug)) == edited


# --- widgets --------------------------------------------------------------------------------------------------------

NAME = "step-gauge"


@pytest.fixture
def written_widget(tmp_path, monkeypatch, capsys):
    """The widget NAME written into a folder of its own, importable and listed as sim.widgets' own while the test
    runs (the real sim/widgets/ is never written: other tests list its widgets as they collect)."""
    folder = tmp_path / "sim" / "widgets"
    folder.mkdir(parents=True)
    status, said, _ = run(capsys, "new", "widget", NAME, "--widgets", str(folder))
    assert status == 0
    listed = tuple(sorted((*widgets.names(), NAME)))
    # The site's Python (the sim zip) does not hold the module, so the standard library it needs is the course's:
    # the trace a build would run for a new list of widgets would ask Pyodide for a widget it does not have.
    states = stdlib.trace_states()
    monkeypatch.setattr(stdlib, "trace_states", lambda: states)
    monkeypatch.setattr(widgets, "__path__", [*widgets.__path__, str(folder)])
    monkeypatch.setattr(widgets, "names", lambda: listed)
    try:
        yield folder / "step_gauge.py", said
    finally:
        sys.modules.pop("sim.widgets.step_gauge", None)


def test_a_new_widget_says_how_to_place_it_and_a_lesson_that_does_so_builds(written_widget, lessons, capsys):
    # The build renders every widget in every language first (check_widgets), this one with them.
    path, said = written_widget
    assert said[:5] == [
        "wrote sim/widgets/step_gauge.py: one control (batch), two readouts; make them the widget's own",
        "place it in a lesson (lessons/README.md, \"widget\"), its settings in YAML:",
        "    ::: widget step-gauge", "    batch: 8", "    :::",
    ]
    assert run(capsys, "new", "lesson", "third", "--lessons", str(lessons))[0] == 0
    with (lessons / "zh" / "third.md").open("a", encoding="utf-8") as lesson:
        lesson.write("\n" + "".join(line.strip() + "\n" for line in said[2:5]))  # the directive as printed
    page = (built(lessons) / "third" / "index.html").read_text(encoding="utf-8")
    view = widgets.render(NAME, {"batch": 8, "lang": "zh"})
    assert f'data-widget="{NAME}"' in page
    for name in ("step_ms", "tokens_per_s"):
        assert f'name="{name}" data-value="{build.js_number(view["outputs"][name]["value"])}"' in page
        assert view["outputs"][name]["text"] in page


def test_a_new_widget_passes_the_tests_every_widget_gets(written_widget):
    # (The build's check of every widget, builder/widgets.py check_widgets, passed in the test above.) Each test the kit runs on every widget (parametrized over widgets.names()), run on this one.
    ran = []
    for path in sorted((build.ROOT / "tests").glob("*/test_*.py")):
        if 'parametrize("name", widgets.names())' not in path.read_text(encoding="utf-8"):
            continue
        module = importlib.import_module(".".join(path.relative_to(build.ROOT).with_suffix("").parts))
        for name, test in vars(module).items():
            marks = getattr(test, "pytestmark", ())
            if inspect.isfunction(test) and list(inspect.signature(test).parameters) == ["name"] and any(
                    m.name == "parametrize" and m.args[0] == "name" and "roofline" in m.args[1] for m in marks):
                test(NAME)
                ran.append(name)
    assert len(ran) >= 3, ran
    low, high = (widgets.render(NAME, {"batch": b})["outputs"]["step_ms"]["value"] for b in (1, 64))
    assert low < high  # its control moves what it shows


def test_a_new_widget_is_in_the_codebase_style(written_widget):
    path, _ = written_widget
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "--config", str(build.ROOT / "pyproject.toml"),
                           str(path)], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout


@pytest.mark.parametrize("name, message", [
    ("2fast", "new widget: '2fast' is not a widget name: a lowercase letter, then lowercase letters, digits and "
              "hyphens, e.g. decode-ceiling"),
    ("Step", "new widget: 'Step' is not a widget name: a lowercase letter, then lowercase letters, digits and "
             "hyphens, e.g. decode-ceiling"),
    ("step-", "new widget: 'step-' is not a widget name: a lowercase letter, then lowercase letters, digits and "
              "hyphens, e.g. decode-ceiling"),
    ("decode_ceiling", "new widget: widget 'decode-ceiling' exists already: sim/widgets/decode_ceiling.py"),
    ("roofline", "new widget: widget 'roofline' exists already: sim/widgets/roofline.py"),
])
def test_a_widget_name_that_cannot_be_taken_is_refused_in_one_line(tmp_path, capsys, name, message):
    folder = tmp_path / "sim" / "widgets"
    shutil.copytree(Path(widgets.__file__).parent, folder, ignore=shutil.ignore_patterns("__pycache__"))
    before = sorted(folder.iterdir())
    assert run(capsys, "new", "widget", name, "--widgets", str(folder)) == (2, [], message + "\n")
    assert sorted(folder.iterdir()) == before
