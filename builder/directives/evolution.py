"""`::: evolution`: the evolution map of inference speed-ups. YAML body: a list of generations, each
{name, lesson (a course slug or null), solved, stuck, here (optional)}; solved/stuck are Markdown."""

from __future__ import annotations

import html

from builder.context import LessonContext
from builder.directives import directive, load_yaml_body
from builder.problems import LessonError

FIELDS = {"name", "lesson", "solved", "stuck", "here"}


@directive("evolution")
def evolution_directive(ctx: LessonContext, args: str, body: str, line: int) -> str:
    entries = load_yaml_body(body, line + 1, "evolution map")
    if not isinstance(entries, list) or not entries:
        raise LessonError(line, "evolution needs a YAML list of generations {name, lesson, solved, stuck}")
    words = {**ctx.ui["evolution"], "upcoming": ctx.ui["course"]["upcoming"]}
    starts = [line + 1 + n for n, raw in enumerate(body.splitlines()) if raw.startswith("- ")]
    items = []
    for i, entry in enumerate(entries, start=1):
        where = starts[i - 1] if i <= len(starts) else line + 1
        required = {"name", "lesson", "solved", "stuck"}
        if not isinstance(entry, dict) or not required <= set(entry) or set(entry) - FIELDS:
            raise LessonError(where, f"generation {i} needs exactly name, lesson, solved, stuck (and optionally here)")
        slug = entry["lesson"]
        if slug is not None and not ctx.course.knows(slug):
            raise LessonError(where, f"generation {i}: lesson {slug!r} is not in lessons/course.yml")
        name = html.escape(str(entry["name"]))
        here = bool(entry.get("here"))
        classes = ["generation"] + (["here"] if here else [])
        if slug is None or slug == ctx.slug:
            title = f"<span class=\"generation-name\">{name}</span>"
        elif ctx.course.is_written(ctx.lang, slug):
            title = f'<a class="generation-name" href="{ctx.lesson_href(slug)}">{name}</a>'
        else:
            classes.append("upcoming")
            title = f'<span class="generation-name">{name}</span> <span class="badge">{words["upcoming"]}</span>'
        marker = f' <strong class="badge badge-here">{words["here"]}</strong>' if here else ""
        solved = ctx.render_markdown(str(entry["solved"]), line + 1)
        stuck = ctx.render_markdown(str(entry["stuck"]), line + 1)
        current = ' aria-current="step"' if here else ""
        items.append(
            f'<li class="{" ".join(classes)}"{current}>'
            f'<span class="generation-number">{i}</span> {title}{marker}\n'
            f'<dl><dt>{words["solved"]}</dt><dd>{solved}</dd><dt>{words["stuck"]}</dt><dd>{stuck}</dd></dl></li>'
        )
    return '<ol class="evolution">\n' + "\n".join(items) + "\n</ol>\n"
