"""Directives: `::: name args` blocks in lesson Markdown, each rendered by a function registered by name.

Every directive, built-in or new, goes through the same registry (`@directive("name")`). A directive
function gets the lesson context, its argument text, its raw body and its line, and returns HTML; it
raises LessonError for bad input. Built-in directives live in the modules imported at the bottom.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable

import yaml

from builder import yamltext
from builder.context import LessonContext
from builder.problems import LessonError, did_you_mean

DirectiveFn = Callable[[LessonContext, str, str, int], str]
DIRECTIVES: dict[str, DirectiveFn] = {}
# Directives that draw from the simulator something other than figures (a widget: its module's declaration, words
# and view), and whose HTML and additions to the context depend on nothing else but their own text, the page's
# language and the build's inputs. A parse records each call (LessonContext.replays), so that the lesson cache can
# draw it again alone after an edit to the simulator and keep the parse if it comes out the same (build.py).
REPLAYABLE: set[str] = set()


def directive(name: str, replayable: bool = False):
    """Register a directive function under `name` (`replayable`: see REPLAYABLE)."""
    def register(fn: DirectiveFn) -> DirectiveFn:
        DIRECTIVES[name] = fn
        if replayable:
            REPLAYABLE.add(name)
        return fn
    return register


def run_directive(ctx: LessonContext, name: str, args: str, body: str, line: int) -> str:
    fn = DIRECTIVES.get(name)
    if fn is None:
        raise LessonError(line, f"unknown directive {name!r}; known: {', '.join(sorted(DIRECTIVES))}"
                                + did_you_mean(name, DIRECTIVES))
    if name not in REPLAYABLE or ctx.replays is None:
        return fn(ctx, args, body, line)
    marks = (len(ctx.widgets), len(ctx.ids), len(ctx.sections))
    reached, ctx.frozen.reached = ctx.frozen.reached, set()
    try:
        html = fn(ctx, args, body, line)
    finally:
        # The modules this call reached, on their own: it need be drawn again only after an edit to one of them.
        mine, ctx.frozen.reached = ctx.frozen.reached, reached | ctx.frozen.reached
    ctx.replays.append((name, args, body, line, outcome(ctx, html, marks), tuple(sorted(mine))))
    return html


def replay(ctx: LessonContext, name: str, args: str, body: str, line: int) -> str:
    """outcome() of one recorded call drawn again in `ctx`, a fresh context of the same page."""
    return outcome(ctx, DIRECTIVES[name](ctx, args, body, line), (0, 0, 0))


def outcome(ctx: LessonContext, html: str, marks: tuple[int, int, int]) -> str:
    """A digest of a directive's HTML and of what it added to the context since `marks` (the lengths of its
    widgets, ids and sections before it ran), in a form that does not depend on the process (sets sorted)."""
    widgets, ids, sections = marks
    added = (html, [_stable(use) for use in ctx.widgets[widgets:]], ctx.ids[ids:], ctx.sections[sections:],
             ctx.scripted)
    return hashlib.sha256(repr(added).encode()).hexdigest()


def _stable(value):
    """A dataclass's fields as a tuple, its sets sorted: a repr that is the same in every process."""
    if dataclasses.is_dataclass(value):
        return tuple(_stable(getattr(value, f.name)) for f in dataclasses.fields(value))
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return value


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
