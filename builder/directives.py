"""Directives: `::: name args` blocks in lesson Markdown, each rendered by a function registered by name.

Every directive, built-in or new, goes through the same registry (`@directive("name")`).
A directive function gets the lesson context, its argument text, its raw body and its line, and
returns HTML; it raises LessonError for bad input.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Callable

import jinja2
import yaml

from builder.problems import LessonError
from sim import widgets
from sim.widgets.controls import coerce_state, config_problems, describe

DirectiveFn = Callable[["LessonContext", str, str, int], str]
DIRECTIVES: dict[str, DirectiveFn] = {}


def directive(name: str):
    """Register a directive function under `name`."""
    def register(fn: DirectiveFn) -> DirectiveFn:
        DIRECTIVES[name] = fn
        return fn
    return register


@dataclass(frozen=True)
class WidgetUse:
    name: str
    id: str
    line: int


@dataclass
class LessonContext:
    """What a directive may use and add to while one lesson is parsed."""

    lang: str
    templates: jinja2.Environment
    render_markdown: Callable[[str, int], str]  # (markdown, 1-based line of its first line) -> HTML
    widgets: list[WidgetUse] = field(default_factory=list)


def run_directive(ctx: LessonContext, name: str, args: str, body: str, line: int) -> str:
    fn = DIRECTIVES.get(name)
    if fn is None:
        raise LessonError(line, f"unknown directive {name!r}; known: {', '.join(sorted(DIRECTIVES))}")
    return fn(ctx, args, body, line)


def _key_line(body: str, key: str, first_line: int) -> int:
    """The line in a YAML body where `key:` is set (first_line if not found)."""
    for i, raw in enumerate(body.splitlines()):
        if raw.lstrip().startswith(f"{key}:"):
            return first_line + i
    return first_line


def json_island(data) -> str:
    """JSON safe to embed in <script type="application/json">: no '<' can close the element."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


@directive("widget")
def widget_directive(ctx: LessonContext, args: str, body: str, line: int) -> str:
    """`::: widget NAME [id=ID]` with a YAML body of initial parameter values."""
    words = args.split()
    if not words:
        raise LessonError(line, "widget needs a name: '::: widget NAME'")
    name, options = words[0], dict(w.split("=", 1) for w in words[1:] if "=" in w)
    unknown = [w for w in words[1:] if not w.startswith("id=")]
    if unknown:
        raise LessonError(line, f"widget options are 'id=ID' only; got {' '.join(unknown)}")
    try:
        module = widgets.load(name)
    except ValueError as e:
        raise LessonError(line, str(e)) from None
    widget_id = options.get("id", name)
    if any(w.id == widget_id for w in ctx.widgets):
        raise LessonError(line, f"widget id {widget_id!r} is used twice on this page; add id=OTHER")
    try:
        config = yaml.safe_load(body) if body.strip() else {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem = getattr(e, "problem", None) or "cannot parse"
        raise LessonError(line + 1 + (mark.line if mark else 0), f"widget settings are not valid YAML: {problem}") from None
    problems = config_problems(module.PARAMS, config)
    if problems:
        key, message = problems[0]
        raise LessonError(_key_line(body, key, line + 1) if key else line + 1, f"widget {name}: {message}")
    state = coerce_state(module.PARAMS, {**config, "lang": ctx.lang})
    view = module.render(state)
    ctx.widgets.append(WidgetUse(name=name, id=widget_id, line=line))
    try:
        template = ctx.templates.get_template(f"widgets/{name}.html")
    except jinja2.TemplateNotFound:
        raise LessonError(line, f"widget {name} has no template site/templates/widgets/{name}.html") from None
    return template.render(
        id=widget_id,
        name=name,
        lang=ctx.lang,
        params=describe(module.PARAMS, state, ctx.lang),
        state=state,
        view=view,
        island=json_island({"widget": name, "state": state, "view": view}),
    ) + "\n"


@directive("details")
def details_directive(ctx: LessonContext, args: str, body: str, line: int) -> str:
    """`::: details SUMMARY`: a collapsed section whose body is Markdown."""
    if not args.strip():
        raise LessonError(line, "details needs a summary: '::: details WHAT IT HIDES'")
    inner = ctx.render_markdown(body, line + 1)
    return f'<details class="dig">\n<summary>{html.escape(args.strip())}</summary>\n{inner}</details>\n'
