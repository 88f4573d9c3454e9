"""`::: answer ID`: the worked answer to the question box ID, folded until the student has answered it.

It must follow its box (the worked answer comes after the check, never before it) and name a widget whose view
has an `answered` flag: a question. The page opens it once that flag is on (static/js/answers.js); print shows it
open, and a student can open it without answering.
"""

from __future__ import annotations

import html

from builder.context import LessonContext
from builder.directives import directive
from builder.problems import LessonError

ANSWERED = "answered"  # the view flag that makes a widget a question


@directive("answer")
def answer_directive(ctx: LessonContext, args: str, body: str, line: int) -> str:
    words = args.split()
    if len(words) != 1:
        raise LessonError(line, "answer names the question box it answers: '::: answer ID'")
    question = ctx.widget(words[0])
    if question is None and words[0] in ctx.failed_widgets:
        return ""  # the question's directive failed, and its own problem is reported
    if question is None:
        raise LessonError(line, f"answer {words[0]!r}: no widget with that id above it on this page; "
                                "a worked answer follows its question box")
    if ANSWERED not in question.flags:
        raise LessonError(line, f"answer {words[0]!r}: widget {question.name} is not a question "
                                f"(its view has no {ANSWERED!r} flag)")
    if not body.strip():
        raise LessonError(line, f"answer {words[0]!r} is empty: write the worked answer inside it")
    inner = ctx.render_markdown(body, line + 1)
    summary = html.escape(ctx.ui["answer"]["summary"])
    return (f'<details class="worked-answer" data-answer-for="{html.escape(question.id, quote=True)}">\n'
            f"<summary>{summary}</summary>\n{inner}</details>\n")
