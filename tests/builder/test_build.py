"""The whole pipeline: lessons in, a site out; problems stop it and leave the previous site alone."""

import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import build
from builder.problems import BuildFailed, Problem
from builder.templates import js_number
from sim import widgets

HERE = Path(__file__).parent
GOLDEN = HERE / "golden" / "demo.html"


def paths_for(lessons: Path, out: Path) -> build.Paths:
    return build.Paths(lessons=lessons, out=out)


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "_site"
    build.build(paths_for(HERE / "lessons", out))
    return out


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value is not None:
                self.urls.append(value)


def test_page_matches_golden(demo_site):
    # Content hashes of the sim zip, the stylesheet and the scripts' folder change with any edit; the page around
    # them should not.
    page = (demo_site / "demo" / "index.html").read_text(encoding="utf-8")
    page = re.sub(r"(sim|stdlib|site)-[0-9a-f]{12}\.(zip|css)", r"\1-HASH.\2", page)
    page = re.sub(r"static/js-[0-9a-f]{12}/", "static/js-HASH/", page)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(page, encoding="utf-8")
    assert page == GOLDEN.read_text(encoding="utf-8"), "regenerate on purpose with UPDATE_GOLDEN=1"


def test_widget_is_pre_rendered_by_the_simulator(demo_site):
    page = (demo_site / "demo" / "index.html").read_text(encoding="utf-8")
    view = widgets.render("roofline", {"T": 2048, "B": 58, "context": 4096, "lang": "zh"})
    assert '<section class="widget widget-roofline" data-widget="roofline" id="roofline" data-state="loading"' in page
    shown = re.findall(r'<output(?: class="[^"]*")? name="([^"]+)" data-value="([^"]*)" aria-live="off">([^<]*)</output>', page)
    assert {"prefill_ms", "decode_ms", "tokens_per_s", "memory_gb", "max_batch", "prefill_bound"} <= {n for n, _, _ in shown}
    for name, value, text in shown:
        assert (value, text) == (str(js_number(view["outputs"][name]["value"])), view["outputs"][name]["text"]), name
    assert '<input type="number" id="roofline-T" name="T" min="1" max="32768" step="1" value="2048"' in page
    island = page.split('<script type="application/json" class="widget-data">')[1].split("</script>")[0]
    assert json.loads(island) == {"widget": "roofline", "state": view["state"], "view": view}


def test_every_url_is_relative_and_resolves(demo_site):
    for page in demo_site.rglob("*.html"):
        parser = Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for url in parser.urls:
            assert not url.startswith(("/", "http:", "https:", "//")), f"{page}: {url}"
            if url.startswith("data:"):
                continue
            target = (page.parent / url.split("#")[0].split("?")[0])
            assert target.exists(), f"{page}: {url} does not exist"


def test_csp_allows_only_own_origin_scripts(demo_site):
    page = (demo_site / "demo" / "index.html").read_text(encoding="utf-8")
    assert "script-src 'self' 'wasm-unsafe-eval';" in page
    assert "default-src 'self'" in page
    assert "<script>" not in page and "<script type=\"module\">" not in page


def test_vendor_assets_and_sim_zip(demo_site, tmp_path):
    for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "pyodide-lock.json"):
        assert (demo_site / "vendor" / "pyodide" / name).is_file()
    assert not (demo_site / "vendor" / "pyodide" / "python_stdlib.zip").exists()  # the cut one is in py/
    assert (demo_site / "vendor" / "plotly" / "plotly-basic.min.js").is_file()
    page = (demo_site / "demo" / "index.html").read_text(encoding="utf-8")
    zips = list((demo_site / "py").glob("sim-*.zip"))
    assert len(zips) == 1 and f'data-sim-zip="py/{zips[0].name}"' in page
    with zipfile.ZipFile(zips[0]) as zf:
        zf.extractall(tmp_path)
        assert "sim/physics/presets/models.json" in zf.namelist()
    # The zip alone is enough to run the simulator (as in Pyodide), and gives the same view.
    code = "import json, sim.widgets as w; print(w.render_json('roofline', '{\"T\": 99}'))"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == json.loads(widgets.render_json("roofline", '{"T": 99}'))


def test_sim_zip_name_is_deterministic(tmp_path):
    from builder.assets import pack_sim
    plain = pack_sim(build.ROOT / "sim")
    assert plain == pack_sim(build.ROOT / "sim")
    # Stripped files kept in a cache (a rebuild is a fresh process) give the same zip, made or taken from there.
    assert pack_sim(build.ROOT / "sim", tmp_path) == plain
    kept = sorted((tmp_path / "stripped").iterdir())
    assert len(kept) == len({p.read_bytes() for p in (build.ROOT / "sim").rglob("*.py") if "__pycache__" not in p.parts})
    kept[0].write_text("# a stale entry, to see that it is read\n")
    assert pack_sim(build.ROOT / "sim", tmp_path) != plain


def test_scripts_live_in_a_folder_named_by_their_content(tmp_path, demo_site):
    # Every page loads its scripts from one folder, static/js-<hash>/, holding exactly site/static/js/; a change
    # to any script is a new folder, so a cached copy of an old build's script is never run by a new page.
    from builder.assets import script_files
    folder, files = script_files(build.ROOT / "site" / "static")
    assert re.fullmatch(r"static/js-[0-9a-f]{12}/", folder)
    assert sorted(files) == sorted(folder + p.name for p in (build.ROOT / "site" / "static" / "js").glob("*.js"))
    page = (demo_site / "demo" / "index.html").read_text(encoding="utf-8")
    used = set(re.findall(r'(?:src|href)="\.\./(static/js[^/"]*/)', page))
    assert len(used) == 1 and not (demo_site / "static" / "js").exists()
    assert sorted(p.name for p in (demo_site / used.pop()).iterdir()) == sorted(p.rsplit("/", 1)[1] for p in files)
    static = tmp_path / "static"
    shutil.copytree(build.ROOT / "site" / "static", static)
    assert script_files(static)[0] == folder  # the same scripts, the same folder
    (static / "js" / "text.js").write_text((static / "js" / "text.js").read_text(encoding="utf-8") + "\n")
    assert script_files(static)[0] != folder


def test_real_lessons_build(tmp_path):
    build.build(paths_for(build.ROOT / "lessons", tmp_path / "_site"))
    assert (tmp_path / "_site" / "prefill-decode" / "index.html").is_file()
    assert 'href="prefill-decode/"' in (tmp_path / "_site" / "index.html").read_text(encoding="utf-8")


def test_every_worked_answer_is_folded_after_its_question_box(tmp_path):
    """A worked answer (::: answer ID) is a closed <details> that comes after the question box it answers, on
    every real lesson page that has one; kv-cache-serving's three quoted answers are among them."""
    out = tmp_path / "_site"
    build.build(paths_for(build.ROOT / "lessons", out))
    answered = set()
    for page in out.glob("**/index.html"):
        text = page.read_text(encoding="utf-8")
        for match in re.finditer(r'<details class="worked-answer" data-answer-for="([^"]+)"(\s+open)?', text):
            box = text.find(f'data-widget="predict" id="{match[1]}"')
            assert 0 <= box < match.start(), f"{page}: the answer to {match[1]} comes before its box"
            assert match[2] is None, f"{page}: the answer to {match[1]} is open before the box is answered"
            answered.add((page.parent.name, match[1]))
    assert {("kv-cache-serving", q) for q in ("q-reserve", "q-paged", "q-swap")} <= answered


def test_bad_lesson_fails_with_file_line_and_keeps_the_old_site(tmp_path, demo_site):
    out = tmp_path / "_site"
    shutil.copytree(demo_site, out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    lessons = tmp_path / "lessons"
    shutil.copytree(HERE / "lessons", lessons)
    bad = lessons / "zh" / "demo.md"
    bad.write_text(bad.read_text(encoding="utf-8").replace("B: 58", "B: 5000"), encoding="utf-8")
    with pytest.raises(BuildFailed) as failed:
        build.build(paths_for(lessons, out))
    [problem] = failed.value.problems
    assert (problem.path, problem.line) == (bad, 14)
    assert "B must be a whole number from 1 to 1,024, got 5000" in problem.message
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("._site")], "no staging folder left behind"


def test_cli_reports_problems_with_exit_status_2(tmp_path):
    lessons = tmp_path / "lessons" / "zh"
    lessons.mkdir(parents=True)
    (lessons.parent / "course.yml").write_text("- chapter: only\n  lessons:\n    - x\n", encoding="utf-8")
    (lessons / "catalog.yml").write_text("chapters:\n  only: {title: 唯一, summary: 只有一课。}\n", encoding="utf-8")
    (lessons / "x.md").write_text("---\ntitle: x\nsummary: s\nminutes: 1\n---\n\n::: widget nope\n:::\n", encoding="utf-8")
    for command in ("check", "build"):
        result = subprocess.run(
            [sys.executable, "build.py", command, "--lessons", str(tmp_path / "lessons"), "--out", str(tmp_path / "out")],
            cwd=build.ROOT, capture_output=True, text=True,
        )
        assert result.returncode == 2, result.stderr
        assert f"{lessons / 'x.md'}:7: unknown widget 'nope'" in result.stderr
        # check writes no site, and says nothing of one
        assert result.stderr.splitlines()[-1] == ("check failed: 1 problem(s)" if command == "check" else
                                                  "build failed: 1 problem(s); the previous site is unchanged")
    assert not (tmp_path / "out").exists()


def test_cli_check_passes_on_the_real_lessons_and_says_so_in_one_line():
    result = subprocess.run([sys.executable, "build.py", "check"], cwd=build.ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"check: no problems \(the standard library sent: \d+ KB; --stdlib lists its modules\)\n",
                        result.stdout), result.stdout


def test_problems_are_reported_in_file_and_line_order(capsys, tmp_path):
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    build.report(BuildFailed([Problem(b, 3, "third"), Problem(a, 9, "second"), Problem(a, 2, "first")]))
    lines = capsys.readouterr().err.splitlines()
    assert [line.rsplit(": ", 1)[1] for line in lines[:-1]] == ["first", "second", "third"]


@pytest.mark.parametrize("value, text", [(208.0, "208"), (15.3881, "15.3881"), (1.6e-05, "0.000016"), (2e-8, "2e-8"),
                                         (1e21, "1e+21"), (-0.5, "-0.5"), (7, 7), ("x", "x")])
def test_numbers_in_pages_print_as_javascript_prints_them(value, text):
    assert js_number(value) == text


def test_pages_per_language_with_links_that_stay_in_their_language(demo_site):
    zh, en = (demo_site / "demo" / "index.html"), (demo_site / "en" / "demo" / "index.html")
    zh_page, en_page = zh.read_text(encoding="utf-8"), en.read_text(encoding="utf-8")
    assert '<html lang="zh"' in zh_page and '<html lang="en"' in en_page
    # zh: second is written in Chinese, so it links; later is planned, so it is upcoming.
    assert '<a href="../second/">第二课</a>' in zh_page
    assert '<span class="upcoming-link" title="即将推出">以后的课</span>' in zh_page
    # en: second exists only in Chinese, so on the English page it is upcoming, never a link into Chinese.
    assert '<span class="upcoming-link" title="Coming soon">the second lesson</span>' in en_page
    assert 'href="../../second/' not in en_page and 'href="../second/' not in en_page
    assert '<a href="#formula">the formula</a>' in en_page
    # Chinese words never leak into the English page's chrome, nor English into the Chinese one's.
    assert "Coming soon" not in zh_page and "即将推出" not in en_page
    assert (demo_site / "second" / "index.html").is_file() and not (demo_site / "en" / "second").exists()


def test_a_home_page_per_language_lists_its_lessons_and_what_is_still_to_come(demo_site):
    zh = (demo_site / "index.html").read_text(encoding="utf-8")
    en = (demo_site / "en" / "index.html").read_text(encoding="utf-8")
    assert '<a href="demo/">演示课</a>' in zh and '<a href="second/">第二课</a>' in zh
    assert '<a href="demo/">Demo lesson</a>' in en
    # The course map: every planned lesson in plan order, with its reading time where written, marked where not.
    upcoming = '<li class="upcoming"><span class="lesson-upcoming-title">{}</span> <span class="badge">{}</span></li>'
    assert upcoming.format("以后的课", "即将推出") in zh
    assert upcoming.format("The second lesson", "Coming soon") in en and upcoming.format("A later lesson", "Coming soon") in en
    assert en.index("Demo lesson") < en.index("The second lesson") < en.index("A later lesson")
    assert zh.index("演示课") < zh.index("第二课") < zh.index("以后的课")
    assert '<span class="lesson-minutes">· 5 分钟</span>' in zh and '<span class="lesson-minutes">· 3 分钟</span>' in zh
    assert '<a class="brand" href="./">' in zh and '<a class="brand" href="./">' in en
    assert '<a class="brand" href="../">' in (demo_site / "en" / "demo" / "index.html").read_text(encoding="utf-8")


def test_the_page_script_reads_its_words_from_the_page(demo_site):
    page = (demo_site / "en" / "demo" / "index.html").read_text(encoding="utf-8")
    island = page.split('<script type="application/json" class="page-text">')[1].split("</script>")[0]
    words = json.loads(island)
    assert words["terms"]["go"] == "Adjust it" and words["status"]["failed"].startswith("Interactive mode is unavailable")
    for script in (build.ROOT / "site" / "static" / "js").glob("*.js"):
        assert not re.search(r"[\u4e00-\u9fff]", script.read_text(encoding="utf-8")), f"{script.name} holds Chinese text"


def test_every_page_links_its_other_languages(demo_site):
    zh = (demo_site / "demo" / "index.html").read_text(encoding="utf-8")
    en = (demo_site / "en" / "demo" / "index.html").read_text(encoding="utf-8")
    # <link rel="alternate" hreflang> for every version, itself included, in both.
    assert '<link rel="alternate" hreflang="zh" href="./">' in zh and '<link rel="alternate" hreflang="en" href="../en/demo/">' in zh
    assert '<link rel="alternate" hreflang="zh" href="../../demo/">' in en and '<link rel="alternate" hreflang="en" href="./">' in en
    # The switch names the other language in that language and lists the sections both versions share.
    switch = re.search(r'<a href="([^"]*)" hreflang="en" lang="en" data-language-switch data-sections="([^"]*)">English</a>', zh)
    assert switch and switch[1] == "../en/demo/" and set(switch[2].split()) == {"formula", "roofline"}
    assert re.search(r'<a href="../../demo/" hreflang="zh" lang="zh" data-language-switch data-sections="[^"]*">中文</a>', en)
    # A lesson not written in English: the switch goes to the English home page and says so.
    second = (demo_site / "second" / "index.html").read_text(encoding="utf-8")
    assert '<a href="../en/" hreflang="en" lang="en" data-language-switch title="这一课还没有这种语言的版本' in second
    assert '<link rel="alternate" hreflang="en"' not in second  # no English version to point search engines at
    # The home pages offer each other.
    assert '<a href="en/" hreflang="en" lang="en" data-language-switch>English</a>' in (demo_site / "index.html").read_text(encoding="utf-8")
    assert '<a href="../" hreflang="zh" lang="zh" data-language-switch>中文</a>' in (demo_site / "en" / "index.html").read_text(encoding="utf-8")


def test_inference_vs_training_asks_before_it_answers(tmp_path):
    """Issue #23: every numeric question of inference-vs-training is asked where its number is worked out, before
    the text that states it, which is its folded worked answer; the closing section keeps only the questions in
    words; and the first widget below a worked answer shows no readout that would be graded right for its box."""
    from sim.questions import QUESTIONS

    out = tmp_path / "_site"
    build.build(paths_for(build.ROOT / "lessons", out))
    token = re.compile(r'<h2 id="(?P<heading>[^"]+)"|<details class="worked-answer" data-answer-for="(?P<answer>[^"]+)"'
                       r'|<script type="application/json" class="widget-data">(?P<island>.*?)</script>', re.S)
    for lang, page in (("zh", out / "inference-vs-training" / "index.html"),
                       ("en", out / "en" / "inference-vs-training" / "index.html")):
        events = []  # ("heading", id) | ("answer", box id) | ("widget", island)
        for match in token.finditer(page.read_text(encoding="utf-8")):
            kind = match.lastgroup
            events.append((kind, json.loads(match[kind]) if kind == "island" else match[kind]))
        boxes = [island["state"]["question"] for kind, island in events
                 if kind == "island" and island["widget"] == "predict"]
        answered = [value for kind, value in events if kind == "answer"]
        assert len(boxes) == 8 and len(answered) == len(boxes), (lang, boxes, answered)
        quiz = events.index(("heading", "quiz"))
        assert not [e for e in events[quiz:] if e[0] == "island" and e[1]["widget"] == "predict"], lang
        question = None
        for kind, value in events:
            if kind == "island" and value["widget"] == "predict":
                question = QUESTIONS[value["state"]["question"]]
            elif kind == "heading":
                question = None
            elif kind == "island" and question is not None:  # the first widget below a box and its answer
                for name, shown in value["view"]["outputs"].items():
                    if isinstance(shown["value"], (int, float)) and shown["value"]:
                        assert not question.grade(shown["value"], lang).correct, \
                            f"{lang}: {value['widget']} shows {name} = {shown['text']}, the answer to {question.key}"
                question = None


def test_a_page_preloads_every_module_its_script_imports(demo_site):
    """Every module page.js reaches through its imports is preloaded, so none waits for the one importing it."""
    scripts = next((demo_site / "static").glob("js-*"))
    reached, waiting = set(), ["page.js"]
    while waiting:
        name = waiting.pop()
        if name not in reached:
            reached.add(name)
            waiting += re.findall(r'^import\b[^;]*?from "\./([\w-]+\.js)"', (scripts / name).read_text(), re.M)
    page = (demo_site / "demo" / "index.html").read_text(encoding="utf-8")
    preloaded = set(re.findall(r'<link rel="modulepreload" href="[^"]*/([\w-]+\.js)">', page))
    assert preloaded == reached and {"answers.js", "scenarios.js", "widget.js"} <= reached
