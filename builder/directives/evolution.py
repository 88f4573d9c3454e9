"""`::: evolution`: the evolution map of inference speed-ups, shown where a lesson places the directive. The map is
written once per language, lessons/<lang>/evolution.yml (loaded and checked by builder/evolution.py); the directive
takes no arguments and no body. The items whose `lesson` is this lesson are marked "you are here"; an item's name
links to the lesson that teaches it when that lesson is written in the page's language, and is marked upcoming when
it is not.

The map's Markdown is rendered in the lesson's context, so its {sim} figures count as the page's (evaluated, checked
to fit, compared across languages) and its lesson links as the page's. A problem in it is reported at the directive's
line and names the map's own file and line.

A chapter's page shows the whole map too (map_html, called by build.py): every step, the ones its lessons teach
marked, its figures evaluated in a context of the chapter's page."""

from __future__ import annotations

import functools
import html
from collections.abc import Callable

from builder.context import LessonContext
from builder.directives import directive
from builder.evolution import EvolutionMap, Item
from builder.problems import LessonError, LessonErrors


@functools.cache
def _markdown():
    from builder.markdown import make_markdown  # here: builder.markdown imports the directives
    return make_markdown()


@directive("evolution")
def evolution_directive(ctx: LessonContext, args: str, body: str, line: int) -> str:
    where = f"lessons/{ctx.lang}/evolution.yml"
    if args.strip() or body.strip():
        raise LessonError(line, f"::: evolution takes no arguments and no body: the map is written once, in {where}, "
                                "and every lesson shows it as it is (close the directive on the next line)")
    if ctx.lang not in ctx.course.evolution:
        raise LessonError(line, f"there is no {ctx.lang} evolution map: write {where} (lessons/README.md, "
                                "\"The evolution map\")")
    chart = ctx.course.evolution[ctx.lang]
    if chart is None:
        return ""  # the map has problems of its own, reported at its lines: the build fails without a page
    if not any(item.lesson == ctx.slug for item in chart.items):
        raise LessonError(line, f"no item of {chart.shown} has lesson: {ctx.slug}, so the map cannot show where this "
                                "lesson sits: add the step it teaches, in the course's order")
    return map_html(ctx, chart, line, lambda item: item.lesson == ctx.slug, ctx.ui["evolution"]["here"], step=True)


def map_html(ctx: LessonContext, chart: EvolutionMap, line: int | None, marked: Callable[[Item], bool], marker: str,
             step: bool) -> str:
    """The whole map on a page: its intro, then every item, those `marked` with the word `marker` (`step`: the
    page's own steps, aria-current="step", their names not linked to the page itself). A lesson marks its own steps;
    a chapter's page (build.py) marks the steps its lessons teach and links every one. `line` is where problems are
    reported on the page, None for the map's own lines."""
    words = {**ctx.ui["evolution"], "upcoming": ctx.ui["course"]["upcoming"]}
    items = []
    for n, item in enumerate(chart.items, start=1):
        here = marked(item)
        name = html.escape(item.name)
        classes = ["generation"] + (["here"] if here else [])
        if item.lesson is None or (here and step):
            title = f'<span class="generation-name">{name}</span>'
        elif ctx.course.is_written(ctx.lang, item.lesson):
            title = f'<a class="generation-name" href="{ctx.lesson_href(item.lesson)}">{name}</a>'
        else:
            classes.append("upcoming")
            title = f'<span class="generation-name">{name}</span> <span class="badge">{words["upcoming"]}</span>'
        badge = f' <strong class="badge badge-here">{html.escape(marker)}</strong>' if here else ""
        solved = _render(ctx, chart, item.solved, item.lines["solved"], line)
        stuck = _render(ctx, chart, item.stuck, item.lines["stuck"], line)
        current = ' aria-current="step"' if here and step else ""
        items.append(
            f'<li class="{" ".join(classes)}"{current}>'
            f'<span class="generation-number">{n}</span> {title}{badge}\n'
            f'<dl><dt>{words["solved"]}</dt><dd>{solved}</dd><dt>{words["stuck"]}</dt><dd>{stuck}</dd></dl></li>'
        )
    intro = _render(ctx, chart, chart.intro, chart.intro_line, line)
    return intro + '<ol class="evolution">\n' + "\n".join(items) + "\n</ol>\n"


def _render(ctx: LessonContext, chart: EvolutionMap, text: str, source_line: int, line: int | None) -> str:
    """The map's Markdown as HTML on this page. Its figures and links are the page's: on a lesson, at the directive's
    `line`, a problem naming the map's file and the line of the text it is in; on a page without a directive (None),
    at the map's own lines."""
    from builder.markdown import render_lesson_markdown

    problems: list[LessonError] = []
    rendered = render_lesson_markdown(_markdown(), text, source_line if line is None else line, ctx, problems)
    if problems and line is None:
        raise LessonErrors(problems)
    if problems:
        raise LessonErrors([LessonError(line, f"in the evolution map, {chart.where(source_line)}: {p.message}")
                            for p in problems])
    return rendered
