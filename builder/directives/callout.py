"""`::: callout KIND [TITLE]`: a highlighted box (a misconception, the summary, a stopping point, a task)."""

from __future__ import annotations

import html

from builder.context import LessonContext
from builder.directives import directive
from builder.problems import LessonError

# Each kind's icon; its default title is the page chrome's word callout.KIND (site/i18n/<lang>.yml).
KINDS = {"misconception": "⚠", "summary": "📌", "stop": "🚦", "try": "🎯", "note": "ℹ"}


@directive("callout")
def callout_directive(ctx: LessonContext, args: str, body: str, line: int) -> str:
    kind, _, title = args.strip().partition(" ")
    if kind not in KINDS:
        raise LessonError(line, f"callout kind must be one of {', '.join(KINDS)}; got {kind!r}")
    icon = KINDS[kind]
    heading = html.escape(title.strip() or ctx.ui["callout"][kind])
    inner = ctx.render_markdown(body, line + 1)
    return (f'<aside class="callout callout-{kind}"><p class="callout-title"><span aria-hidden="true">{icon}</span> '
            f'{heading}</p>\n{inner}</aside>\n')
