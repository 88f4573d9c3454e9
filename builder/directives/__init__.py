"""Directives: `::: name args` blocks in lesson Markdown, each rendered by a function registered by name.

Every directive, built-in or new, goes through the same registry (`@directive("name")`). A directive
function gets the lesson context, its argument text, its raw body and its line, and returns HTML; it
raises LessonError for bad input. Built-in directives live in the modules imported at the bottom.
"""

from __future__ import annotations

from collections.abc import Callable

import yaml

from builder import yamltext
from builder.context import LessonContext
from builder.problems import LessonError, did_you_mean

DirectiveFn = Callable[[LessonContext, str, str, int], str]
DIRECTIVES: dict[str, DirectiveFn] = {}


def directive(name: str):
    """Register a directive function under `name`."""
    def register(fn: DirectiveFn) -> DirectiveFn:
        DIRECTIVES[name] = fn
        return fn
    return register


def run_directive(ctx: LessonContext, name: str, args: str, body: str, line: int) -> str:
    fn = DIRECTIVES.get(name)
    if fn is None:
        raise LessonError(line, f"unknown directive {name!r}; known: {', '.join(sorted(DIRECTIVES))}"
                                + did_you_mean(name, DIRECTIVES))
    return fn(ctx, args, body, line)


def key_line(body: str, key: str, first_line: int) -> int:
    """The line in a YAML body where `key:` is set (first_line if not found)."""
    for i, raw in enumerate(body.splitlines()):
        if raw.lstrip().lstrip("- ").startswith(f"{key}:"):
            return first_line + i
    return first_line


def load_yaml_body(body: str, first_line: int, what: str):
    """A directive's YAML body, or LessonError at the line YAML complains about."""
    try:
        return yamltext.safe_load(body) if body.strip() else None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem = getattr(e, "problem", None) or "cannot parse"
        raise LessonError(first_line + (mark.line if mark else 0), f"{what} is not valid YAML: {problem}") from None


from builder.directives import answer, callout, details, evolution, formula, widget  # noqa: E402,F401  (registers them)
