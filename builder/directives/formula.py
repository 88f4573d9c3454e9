"""`::: formula [WIDGET_ID]`: a display formula whose \\term{KEY}{LaTeX} parts can be clicked or focused
to explain themselves (lessons/terms.yml; their words per language in lessons/<lang>/catalog.yml), with
their value now taken from the widget WIDGET_ID."""

from __future__ import annotations

import html
import re

from builder import scroll
from builder.context import LessonContext
from builder.directives import directive
from builder.mathml import to_mathml
from builder.problems import LessonError, did_you_mean
from builder.templates import json_island

TERM = re.compile(r"\\term\{([^{}]*)\}")
TERM_MROW = re.compile(r'<mrow class="term t-([a-z0-9_]+)">')


@directive("formula")
def formula_directive(ctx: LessonContext, args: str, body: str, line: int) -> str:
    widget_id = args.strip() or None
    used = []
    for match in TERM.finditer(body):
        key = match.group(1)
        if key not in ctx.terms:
            known = ", ".join(sorted(ctx.terms)) or "none (add them to lessons/terms.yml)"
            raise LessonError(line + 1 + body[:match.start()].count("\n"),
                              f"unknown term {key!r}; known: {known}{did_you_mean(key, ctx.terms)}")
        if key not in used:
            used.append(key)
    if not used:
        raise LessonError(line, "a formula directive needs at least one \\term{KEY}{...}; use $$...$$ otherwise")
    mathml = to_mathml(TERM.sub(lambda m: f"\\class{{term t-{m.group(1)}}}", body.strip()), True, line + 1)

    # The terms inside the MathML are clickable for a mouse or a finger; the keyboard and assistive technology
    # reach each term through a real button beside the formula, named by the glossary. (Focusable parts inside
    # <math> are nested interactive content: its role makes its content one read-only whole.)
    mathml = TERM_MROW.sub(lambda m: f'<mrow class="term" data-term="{m.group(1)}">', mathml)
    label_id = f"formula-terms-{ctx.counts.get('formula', 0) + 1}"
    buttons = "".join(
        f'<button type="button" class="term-button" data-term-button="{key}" aria-expanded="false">'
        f'{html.escape(ctx.terms[key].for_page(ctx.lang)["name"])}</button>' for key in used)
    ctx.scripted = True
    if widget_id is not None:
        ctx.checks.append((line, lambda c: _link_problem(c, widget_id, used)))
    hint = html.escape(ctx.ui["formula"]["hint"])
    data = {"widget": widget_id, "terms": {key: ctx.terms[key].for_page(ctx.lang) for key in used}}
    return (
        f'<figure class="formula" data-formula-for="{html.escape(widget_id or "", quote=True)}">\n'
        f'{scroll.open_frame(scroll.numbered_label(ctx, "formula"))}{mathml}{scroll.CLOSE}\n'
        f'<div class="term-buttons" role="group" aria-labelledby="{label_id}"><span class="term-buttons-label" '
        f'id="{label_id}">{html.escape(ctx.ui["formula"]["terms"])}</span>{buttons}</div>\n'
        f'<figcaption class="formula-hint" data-pagefind-ignore>{hint}</figcaption>\n'
        f'<div class="term-panel" role="region" aria-live="polite" hidden></div>\n'
        f'<script type="application/json" class="term-data">{json_island(data)}</script>\n</figure>\n'
    )


def _link_problem(ctx: LessonContext, widget_id: str, used: list[str]) -> str | None:
    """The widget a formula reads its values from must be on the page and have the outputs and controls named."""
    widget = ctx.widget(widget_id)
    if widget is None and widget_id in ctx.failed_widgets:
        return None  # the widget's directive failed, and its own problem is reported
    if widget is None:
        return f"formula refers to widget id {widget_id!r}, which is not on this page"
    for key in used:
        term = ctx.terms[key]
        if term.output and term.output not in widget.outputs:
            return f"term {key}: widget {widget.name} has no output {term.output!r}"
        if term.control and term.control not in widget.controls:
            return f"term {key}: widget {widget.name} has no control {term.control!r}"
    return None

