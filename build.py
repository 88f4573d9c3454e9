#!/usr/bin/env python3
"""inferlab's site builder: lessons/ through site/templates/ into _site/.

    python build.py build [--out DIR]   build the site (problems: file:line: message, exit status 2)
    python build.py check               build into a temporary folder, report problems, keep nothing
    python build.py serve [--port N]    build, serve on 127.0.0.1, rebuild when a source changes

Stages: load lessons -> parse (Markdown, directives, math; widgets pre-rendered by sim/) -> render pages
(Jinja) -> write (a temporary folder swapped into place; the old site is kept if anything failed).
This file knows no lesson or widget by name.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import http.server
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import jinja2

from builder.assets import pack_sim, static_files, vendor_files
from builder.context import LessonContext, LinkUse, WidgetUse
from builder.course import Course, PlannedLesson, load_course
from builder.expressions import namespace
from builder.lessons import SourceLesson, load_lessons
from builder.markdown import make_markdown, render_lesson_markdown
from builder.problems import BuildFailed, Problem
from builder.terms import Term, load_terms

ROOT = Path(__file__).resolve().parent
ID_ATTRIBUTE = re.compile(r'\sid="([^"]+)"')


@dataclass(frozen=True)
class Paths:
    lessons: Path = ROOT / "lessons"
    templates: Path = ROOT / "site" / "templates"
    static: Path = ROOT / "site" / "static"
    sim: Path = ROOT / "sim"
    node_modules: Path = ROOT / "node_modules"
    out: Path = ROOT / "_site"
    dev: bool = False  # pages reload themselves after a rebuild (serve)


@dataclass(frozen=True)
class ParsedLesson:
    source: SourceLesson
    html: str
    widgets: tuple[WidgetUse, ...]
    links: tuple[LinkUse, ...]
    scripted: bool

    @property
    def ids(self) -> frozenset[str]:
        """Every element id on the page body: the targets #fragment links may name."""
        return frozenset(ID_ATTRIBUTE.findall(self.html))

    @property
    def path(self) -> str:
        """Site path of the page: zh lessons at <slug>/, other languages under <lang>/<slug>/."""
        prefix = "" if self.source.lang == "zh" else f"{self.source.lang}/"
        return f"{prefix}{self.source.slug}/index.html"


def js_number(value):
    """Floats printed as JavaScript's String(number) prints them, so that a pre-rendered data-value is the
    text the page script later writes for the same number (208.0 -> "208", 1.6e-05 -> "0.000016")."""
    if not isinstance(value, float) or not math.isfinite(value):
        return value
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if 1e-7 <= abs(value) < 1e21:
        return format(Decimal(repr(value)), "f")
    mantissa, exponent = repr(value).split("e")
    return f"{mantissa}e{int(exponent):+d}"


def make_templates(paths: Paths) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(paths.templates),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=js_number,
    )


def parse_lesson(source: SourceLesson, templates: jinja2.Environment, course: Course,
                 terms: dict[str, Term], names: dict) -> tuple[ParsedLesson, list[Problem]]:
    """The lesson's body as HTML with every directive rendered, and the problems found in it."""
    md = make_markdown()
    errors = []
    ctx = LessonContext(lang=source.lang, slug=source.slug, templates=templates, course=course, terms=terms,
                        names=names)
    ctx.render_markdown = lambda text, line: render_lesson_markdown(md, text, line, ctx, errors)
    html = ctx.render_markdown(source.body, source.body_line)
    problems = [Problem(source.path, e.line, e.message) for e in errors]
    for line, check in ctx.checks:
        if (message := check(ctx)) is not None:
            problems.append(Problem(source.path, line, message))
    return ParsedLesson(source, html, tuple(ctx.widgets), tuple(ctx.links), ctx.scripted), problems


def check_links(lessons: list[ParsedLesson]) -> list[Problem]:
    """Every #fragment a lesson links to exists on the page it names."""
    pages = {(lesson.source.lang, lesson.source.slug): lesson for lesson in lessons}
    problems = []
    for lesson in lessons:
        for link in lesson.links:
            target = lesson if link.slug is None else pages.get((lesson.source.lang, link.slug))
            if target is None:
                problems.append(Problem(lesson.source.path, link.line,
                                        f"link to lesson {link.slug!r}, which has no {lesson.source.lang} page"))
            elif link.fragment and link.fragment not in target.ids:
                page = "this page" if link.slug is None else f"lesson {link.slug!r}"
                problems.append(Problem(lesson.source.path, link.line, f"#{link.fragment} is not an id on {page}"))
    return problems


def check_course(lessons: list[SourceLesson], planned: tuple[PlannedLesson, ...], plan_path: Path) -> list[Problem]:
    """Every lesson file is in the course plan."""
    known = {p.slug for p in planned}
    return [Problem(s.path, 2, f"slug {s.slug!r} is not in {plan_path.name}: add it to the course plan")
            for s in lessons if s.slug not in known]


def bundle_stylesheets(static_dir: Path) -> tuple[str, bytes]:
    """Every stylesheet under static/css/ in one file (site.css first, widget styles after it), content-hashed."""
    css_dir = static_dir / "css"
    sheets = sorted(css_dir.rglob("*.css"), key=lambda p: (p.name != "site.css", p.relative_to(css_dir).as_posix()))
    data = "".join(f"/* {p.relative_to(css_dir).as_posix()} */\n{p.read_text(encoding='utf-8')}\n"
                   for p in sheets).encode()
    return f"static/site-{hashlib.sha256(data).hexdigest()[:12]}.css", data


def render_pages(lessons: list[ParsedLesson], templates: jinja2.Environment, sim_zip: str,
                 course: Course) -> dict[str, str]:
    """Site path -> HTML of every page."""
    pages = {}
    index = [lesson.source for lesson in lessons if lesson.source.lang == "zh"]
    upcoming = [p for p in course.planned if not course.is_written(p.slug)]
    for lesson in lessons:
        root = "../" * lesson.path.count("/")
        pages[lesson.path] = templates.get_template("lesson.html").render(
            lesson=lesson.source, body=lesson.html, scripted=lesson.scripted, python=bool(lesson.widgets), root=root,
            sim_zip=sim_zip, lang=lesson.source.lang, lessons=index,
        )
    pages["index.html"] = templates.get_template("index.html").render(
        lessons=index, upcoming=upcoming, root="", sim_zip=sim_zip, lang="zh", scripted=False, python=False,
    )
    return pages


def build_site(paths: Paths) -> dict[str, bytes | Path]:
    """Everything the site holds, by site path: page text as bytes, copied files as source paths."""
    lessons, problems = load_lessons(paths.lessons)
    planned, found = load_course(paths.lessons / "course.yml")
    problems += found + check_course(lessons, planned, paths.lessons / "course.yml")
    terms, found = load_terms(paths.lessons / "terms.yml")
    problems += found
    course = Course(planned, frozenset(s.slug for s in lessons))
    templates = make_templates(paths)
    css_path, css_bytes = bundle_stylesheets(paths.static)
    templates.globals["stylesheet"] = css_path
    templates.globals["dev"] = paths.dev
    names = namespace()
    parsed = []
    for source in lessons:
        lesson, found = parse_lesson(source, templates, course, terms, names)
        parsed.append(lesson)
        problems += found
    problems += check_links(parsed)
    if problems:
        raise BuildFailed(problems)
    sim_zip, sim_bytes = pack_sim(paths.sim)
    files: dict[str, bytes | Path] = {path: html.encode() for path, html in
                                      render_pages(parsed, templates, sim_zip, course).items()}
    files[sim_zip] = sim_bytes
    files[css_path] = css_bytes
    files.update(static_files(paths.static))
    try:
        files.update(vendor_files(paths.node_modules))
    except FileNotFoundError as e:
        raise BuildFailed([Problem(paths.node_modules, 1, str(e))]) from None
    files[".nojekyll"] = b""
    if paths.dev:
        files["__build_id"] = str(time.time_ns()).encode()
    return files


def write_site(files: dict[str, bytes | Path], out: Path) -> None:
    """Write into a fresh folder beside `out`, then swap it into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-", dir=out.parent))
    try:
        for rel, content in files.items():
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, Path):
                _copy(content, target)
            else:
                target.write_bytes(content)
        staging.chmod(0o755)
        old = out.parent / f".{out.name}-old-{os.getpid()}"
        if out.exists():
            out.rename(old)
        staging.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _copy(source: Path, target: Path) -> None:
    """Hard-link where possible (vendored files are large and never edited in place), else copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def build(paths: Paths) -> float:
    """Build the site into paths.out; returns seconds taken. Raises BuildFailed, leaving the old site."""
    started = time.perf_counter()
    write_site(build_site(paths), paths.out)
    return time.perf_counter() - started


def report(failed: BuildFailed) -> None:
    for problem in failed.problems:
        print(_relative(problem), file=sys.stderr)
    print(f"build failed: {len(failed.problems)} problem(s); the previous site is unchanged", file=sys.stderr)


def _relative(problem: Problem) -> str:
    try:
        return str(Problem(problem.path.resolve().relative_to(Path.cwd()), problem.line, problem.message))
    except ValueError:
        return str(problem)


def source_stamp(paths: Paths) -> tuple:
    """Names and modification times of every source file: a change in any means rebuild."""
    stamp = []
    for folder in (paths.lessons, paths.templates, paths.static, paths.sim, ROOT / "builder"):
        for p in folder.rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts:
                stamp.append((str(p), p.stat().st_mtime_ns))
    return tuple(sorted(stamp))


def watch(paths: Paths, interval_s: float = 0.4) -> None:
    """Rebuild whenever a source changes; a broken save prints its problems and keeps the last good site.

    Each rebuild runs in a fresh interpreter so that edits to sim/ and builder/ take effect too.
    """
    stamp = source_stamp(paths)
    while True:
        time.sleep(interval_s)
        current = source_stamp(paths)
        if current != stamp:
            stamp = current
            subprocess.run([sys.executable, str(ROOT / "build.py"), "build", "--dev",
                            "--lessons", str(paths.lessons), "--out", str(paths.out)], check=False)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature fixed by http.server
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()


def serve(paths: Paths, port: int) -> None:
    try:
        print(f"built {paths.out} in {build(paths):.2f} s", flush=True)
    except BuildFailed as failed:
        report(failed)
        if not paths.out.exists():
            sys.exit(2)
    threading.Thread(target=watch, args=(paths,), daemon=True).start()
    handler = functools.partial(QuietHandler, directory=str(paths.out))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"serving {paths.out} at http://127.0.0.1:{port}/ (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("build", "check", "serve"))
    parser.add_argument("--lessons", type=Path, default=Paths.lessons, help="lessons folder")
    parser.add_argument("--out", type=Path, default=Paths.out, help="output folder (build, serve)")
    parser.add_argument("--port", type=int, default=8000, help="port (serve)")
    parser.add_argument("--dev", action="store_true", help="pages reload themselves after a rebuild (serve sets it)")
    args = parser.parse_args(argv)
    paths = Paths(lessons=args.lessons.resolve(), out=args.out.resolve(), dev=args.dev or args.command == "serve")
    try:
        if args.command == "build":
            print(f"built {paths.out} in {build(paths):.2f} s")
        elif args.command == "check":
            with tempfile.TemporaryDirectory() as scratch:
                build(Paths(lessons=paths.lessons, out=Path(scratch) / "_site"))
            print("check: no problems")
        else:
            serve(paths, args.port)
    except BuildFailed as failed:
        report(failed)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
