"""`::: callout KIND [TITLE]`: a highlighted box (a misconception, the summary, a stopping point, a task)."""

from __future__ import annotations

import html

from builder.context import LessonContext
from builder.directives import directive
from builder.problems import LessonError

KINDS = {
    "misconception": ("⚠", {"zh": "常见误解", "en": "Misconception"}),
    "summary": ("📌", {"zh": "一句话", "en": "In one sentence"}),
    "stop": ("🚦", {"zh": "可以先停在这里", "en": "You can stop here"}),
    "try": ("🎯", {"zh": "试一试", "en": "Try this"}),
    "note": ("ℹ", {"zh": "说明", "en": "Note"}),
}


@directive("callout")
def callout_directive(ctx: LessonContext, args: str, body: str, line: int) -> str:
    kind, _, title = args.strip().partition(" ")
    if kind not in KINDS:
        raise LessonError(line, f"callout kind must be one of {', '.join(KINDS)}; got {kind!r}")
    icon, default_title = KINDS[kind]
    heading = html.escape(title.strip() or default_title[ctx.lang])
    inner = ctx.render_markdown(body, line + 1)
    return (f'<aside class="callout callout-{kind}"><p class="callout-title"><span aria-hidden="true">{icon}</span> '
            f'{heading}</p>\n{inner}</aside>\n')
