"""`::: details SUMMARY`: a collapsed section whose body is Markdown."""

from __future__ import annotations

import html

from builder.context import LessonContext
from builder.directives import directive
from builder.problems import LessonError


@directive("details")
def details_directive(ctx: LessonContext, args: str, body: str, line: int) -> str:
    if not args.strip():
        raise LessonError(line, "details needs a summary: '::: details WHAT IT HIDES'")
    inner = ctx.render_markdown(body, line + 1)
    return f'<details class="dig">\n<summary>{html.escape(args.strip())}</summary>\n{inner}</details>\n'
