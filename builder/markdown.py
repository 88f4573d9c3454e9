"""Lesson Markdown: CommonMark + tables, attributes, anchors, $math$ (to MathML at build time),
{sim}`EXPR` computed figures, {claim}`EXPR` checked comparisons (builder/seeds.py), [text](lesson:SLUG) course
links (their wording checked against the course's order and titles, builder/wayfinding.py) and `::: name`
directives.

Parsing and rendering are separate so that all build-time work (directives, math, expressions, links,
the safety and id checks) happens in one walk over the tokens, with line numbers at hand, and problems are
collected, not raised.
"""

from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.anchors import anchors_plugin
from mdit_py_plugins.attrs import attrs_block_plugin, attrs_plugin
from mdit_py_plugins.container import container_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin

from builder import safety, scenarios, scroll, seeds, wayfinding
from builder.context import LessonContext, LinkUse
from builder.directives import run_directive
from builder.expressions import AS_IF_IT_FIT, ExpressionError, claimed, evaluated
from builder.mathml import to_mathml
from builder.problems import LessonError, LessonErrors, did_you_mean
from sim.kit import table

DIRECTIVE = re.compile(r"^\s*([A-Za-z][\w-]*)(.*)$")
CONTAINER = "container_directive"
ROLES = {"{sim}`": "sim_expr", "{claim}`": "sim_claim"}  # inline roles: opening -> token type
EXTERNAL = re.compile(r"^(https?:|mailto:)")
# CJK ideographs and full-width punctuation: text in which a line break is not a word space.
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")
MATH_TOKENS = {"math_inline": False, "math_inline_double": True, "math_block": True, "math_block_label": True}
PREPARED = (*MATH_TOKENS, "directive", *ROLES.values())
BLOCK_ATTRIBUTES = re.compile(r"^\s*\{[^{}]*\}\s*$")


def _raw_directives(md: MarkdownIt) -> None:
    """mdit-py-plugins' container rule finds `::: name args` … `:::` (longer fences nest); this wrapper
    keeps each directive's body as raw text (YAML, LaTeX or Markdown, for the directive to read) instead
    of the Markdown tokens the container rule parses it into, and notes whether it was closed."""
    container_plugin(md, "directive", validate=lambda params, markup: bool(DIRECTIVE.match(params)))
    container_rule = next(r.fn for r in md.block.ruler.__rules__ if r.name == CONTAINER)

    def directive_rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        first = len(state.tokens)
        if not container_rule(state, start, end, silent):
            return False
        if silent:
            return True
        opened = state.tokens[first]
        del state.tokens[first + 1:]  # the body's tokens and the closing token
        name, args = DIRECTIVE.match(opened.info).groups()
        opened.type, opened.tag, opened.nesting, opened.info = "directive", "", 0, name
        # The container rule moves past the closing fence only when it found one.
        closed = state.line > opened.map[1]
        body = state.getLines(start + 1, opened.map[1], state.blkIndent, False)
        opened.meta = {"args": args.strip(), "body": body, "closed": closed, "fence": opened.markup,
                       "nested": _nested_opening(body, len(opened.markup))}
        if closed:
            opened.map = [opened.map[0], opened.map[1] + 1]
        return True

    md.block.ruler.at(CONTAINER, directive_rule)


NESTED_FENCE = re.compile(r"^\s*(:{3,})\s*([A-Za-z][\w-]*)")


def _nested_opening(body: str, fence: int) -> tuple[int, str] | None:
    """A directive opened inside a body with a fence at least as long as the body's own: (its line within the
    body, from 0, and its name). The body's first bare fence closes the outer directive, not that one."""
    for i, text in enumerate(body.splitlines()):
        if (m := NESTED_FENCE.match(text)) and len(m[1]) >= fence:
            return i, m[2]
    return None


def _sim_rule(state: StateInline, silent: bool) -> bool:
    """Inline rule: {sim}`EXPR` and {claim}`EXPR` -> a token evaluated later."""
    opening = next((o for o in ROLES if state.src.startswith(o, state.pos)), None)
    if opening is None:
        return False
    start = state.pos + len(opening)
    end = state.src.find("`", start)
    if end < 0:
        return False
    if not silent:
        token = state.push(ROLES[opening], "", 0)
        token.content = state.src[start:end]
    state.pos = end + 1
    return True


def _render_prepared(self, tokens: list[Token], idx: int, options, env) -> str:
    return tokens[idx].meta["html"]


def _table_open(self, tokens: list[Token], idx: int, options, env) -> str:
    _label_cells(self, tokens, idx, options, env)
    return scroll.open_frame(scroll.numbered_label(env["ctx"], "table")) + self.renderToken(tokens, idx, options, env)


def _label_cells(self, tokens: list[Token], idx: int, options, env) -> None:
    """Each body cell gets its column's heading as plain text in data-label, and a table of
    table.STACK_COLUMNS columns or more the class table-stack: on a phone its rows become cards (sim/kit/table.py)."""
    end = next(i for i in range(idx, len(tokens)) if tokens[i].type == "table_close")
    headings, column = [], 0
    for i in range(idx, end):
        token = tokens[i]
        if token.type == "th_open" and tokens[i + 1].type == "inline":
            markup = self.renderInline(tokens[i + 1].children or [], options, env)
            headings.append(" ".join(html.unescape(re.sub(r"<[^>]*>", "", markup)).split()))
        elif token.type == "tr_open":
            column = 0
        elif token.type == "td_open":
            if column < len(headings):
                token.attrSet("data-label", headings[column])
            column += 1
    if len(headings) >= table.STACK_COLUMNS:
        tokens[idx].attrJoin("class", table.STACK_CLASS)


def _table_close(self, tokens: list[Token], idx: int, options, env) -> str:
    return self.renderToken(tokens, idx, options, env) + scroll.CLOSE + "\n"


def _render_math_block(self, tokens: list[Token], idx: int, options, env) -> str:
    label = scroll.numbered_label(env["ctx"], "formula")
    return scroll.open_frame(label) + tokens[idx].meta["html"] + scroll.CLOSE + "\n"


def make_markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"typographer": False}).enable("table")
    md.use(dollarmath_plugin, allow_space=False, double_inline=True)
    md.use(attrs_plugin, spans=True)
    md.use(attrs_block_plugin)
    md.use(anchors_plugin, min_level=2, max_level=3)
    md.use(_raw_directives)
    md.inline.ruler.before("backticks", "sim_expr", _sim_rule)
    for kind in PREPARED:
        md.add_render_rule(kind, _render_prepared)
    for kind in ("math_block", "math_block_label"):
        md.add_render_rule(kind, _render_math_block)
    md.add_render_rule("table_open", _table_open)
    md.add_render_rule("table_close", _table_close)
    return md


def render_lesson_markdown(md: MarkdownIt, text: str, first_line: int, ctx: LessonContext,
                           problems: list[LessonError], parts: bool = False) -> str:
    """HTML for `text`, whose first line is `first_line` of the lesson file; problems are appended, not raised.
    `parts` (a lesson's whole body): each <h2> section goes in a <section class="lesson-part">."""
    tokens = md.parse(text, {})
    if parts:
        tokens = _in_parts(tokens)
    for number, source_line in enumerate(text.splitlines()):  # block attributes, {…} on a line of their own
        if BLOCK_ATTRIBUTES.match(source_line):
            problems.extend(LessonError(first_line + number, m) for m in safety.attribute_syntax_problems(source_line))
    for token in tokens:
        line = first_line + (token.map[0] if token.map else 0)
        links = 0
        for item in (token, *(token.children or ())):
            if item is not token:
                item.meta["paragraph"] = token.content  # the source of the paragraph (or cell) it stands in
                links += (item.type == "link_open") - (item.type == "link_close")
                item.meta["in_link"] = links > 0
            try:
                _prepare(item, line, ctx)
            except LessonError as e:
                problems.extend(getattr(e, "errors", [e]))
                item.meta["html"] = ""
        _close_upcoming_links(token.children or [])
        _join_cjk_lines(token.children or [])
    return md.renderer.render(tokens, md.options, {"ctx": ctx})


PART = "lesson-part"


def _in_parts(tokens: list[Token]) -> list[Token]:
    """Each top-level <h2> and what follows it, up to the next one, wrapped in <section class="lesson-part">: the
    browser lays out a part only once it nears the screen (content-visibility in site.css), so a long lesson's
    first frame lays out its first screen, not the whole lesson."""
    wrapped, open_part = [], False
    for token in tokens:
        if token.type == "heading_open" and token.tag == "h2" and token.level == 0:
            if open_part:
                wrapped.append(Token("lesson_part_close", "section", -1, block=True))
            wrapped.append(Token("lesson_part_open", "section", 1, attrs={"class": PART}, block=True))
            open_part = True
        wrapped.append(token)
    if open_part:
        wrapped.append(Token("lesson_part_close", "section", -1, block=True))
    return wrapped


def _join_cjk_lines(children: list[Token]) -> None:
    """A line break inside a Chinese paragraph is not a space: browsers would show one between the
    characters, so a soft break with CJK text on either side renders as nothing."""
    for i, child in enumerate(children):
        if child.type != "softbreak":
            continue
        before = children[i - 1].content[-1:] if i > 0 and children[i - 1].type == "text" else ""
        after = children[i + 1].content[:1] if i + 1 < len(children) and children[i + 1].type == "text" else ""
        if CJK.match(before) or CJK.match(after):
            child.type = "text"
            child.content = ""


def _close_upcoming_links(children: list[Token]) -> None:
    """A link turned into an 'upcoming' <span> must close as a </span>."""
    opened = []
    for child in children:
        if child.type == "link_open":
            opened.append(child)
        elif child.type == "link_close" and opened:
            child.tag = opened.pop().tag


def _prepare(token: Token, line: int, ctx: LessonContext) -> None:
    """Do a token's build-time work and store the HTML it renders to (or rewrite its attributes); record
    the ids it gives the page; refuse markup the page must never carry."""
    for message in safety.attribute_problems(token.attrs):
        raise LessonError(line, message)
    if token.attrs.get("id"):
        ctx.ids.append((str(token.attrs["id"]), line))
        if token.type == "heading_open":
            ctx.sections.append(str(token.attrs["id"]))
    if token.type == "directive":
        token.meta["html"] = ""
        if token.meta["nested"] and token.meta["closed"]:
            at, name = token.meta["nested"]
            fence = token.meta["fence"]
            raise LessonError(line, f"directive '{token.info}' holds '{name}' (line {line + 1 + at}) behind a fence "
                                    f"as long as its own ('{fence}'): the '{fence}' at line "
                                    f"{line + 1 + len(token.meta['body'].splitlines())} closes the {token.info}, and "
                                    f"the {name} is left open. Open and close the {token.info} with a longer fence "
                                    f"('{fence}:' … '{fence}:') to hold a directive inside it")
        if not token.meta["closed"]:
            raise LessonError(line, f"directive '{token.info}' is not closed by a line of colons")
        token.meta["html"] = run_directive(ctx, token.info, token.meta["args"], token.meta["body"], line)
    elif token.type in MATH_TOKENS:
        mathml = to_mathml(token.content, MATH_TOKENS[token.type], line)
        _refuse(safety.markup_problems(mathml, math=True), line)
        token.meta["html"] = mathml
    elif token.type == "sim_expr":
        try:
            ctx.expressions.append((f"{{sim}}`{token.content}`", line))
            result = ctx.frozen.expression(token.content, ctx.names, lambda: evaluated(token.content, ctx.names))
            _check_fit(token.content, result, token.meta.get("paragraph", ""), line, ctx.lang)
            token.meta["html"] = _figure(token, result, line, ctx)
        except ExpressionError as e:
            raise LessonError(line, str(e)) from None
    elif token.type == "sim_claim":
        try:
            ctx.expressions.append((f"{{claim}}`{token.content}`", line))
            _check_claim(token.content, ctx.frozen.claim(token.content, ctx.names,
                                                         lambda: claimed(token.content, ctx.names)), line, ctx)
            token.meta["html"] = ""
        except ExpressionError as e:
            raise LessonError(line, str(e)) from None
    elif token.type in ("html_block", "html_inline"):
        scan = safety.scan(token.content)
        _refuse(scan.problems, line)
        ctx.ids.extend((i, line) for i in scan.ids)
    elif token.type == "text":
        _refuse(safety.text_problems(token.content), line)
    elif token.type == "inline":
        _refuse(safety.attribute_syntax_problems(token.content), line)
        # Before its children's links are resolved: the check reads their lesson: hrefs.
        found = wayfinding.problems(token.children or [], ctx.course, ctx.lang, ctx.slug)
        if found:
            raise LessonErrors([LessonError(line + offset, message) for offset, message in found])
    elif token.type == "link_open":
        _resolve_link(token, line, ctx)


def _figure(token: Token, result: str | dict, line: int, ctx: LessonContext) -> str:
    """A {sim} figure's HTML; one from a random trace at the precision its other seeds allow, with a note that gives
    their range (builder/seeds.py). A figure inside a link is not focusable itself: the link is."""
    seeded = result.get("seeded") if isinstance(result, dict) else None
    text = result if isinstance(result, str) else result["text"]
    if seeded is None:
        return f'<span class="sim-value">{html.escape(text)}</span>'
    if "problem" in seeded:
        raise LessonError(line, f"{{sim}}`{token.content}`: {seeded['problem']}")
    others = ctx.frozen.seeds(token.content, ctx.names)
    if others is None:  # computed with every other pending figure, then the lesson is parsed again
        return ""
    if isinstance(others, dict):
        raise LessonError(line, f"{{sim}}`{token.content}` failed {others['error']}")
    shown, low, high = seeds.coarse_text(seeded, [seeded["value"], *others])
    if low == high:  # the same on every trace, to the digit shown: nothing to say
        return f'<span class="sim-value">{html.escape(shown)}</span>'
    note = ctx.ui["lesson"]["seeded"].format(count=len(seeds.SEEDS) + 1, last=seeds.SEEDS[-1], low=low, high=high)
    number = ctx.counts["seeded"] = ctx.counts.get("seeded", 0) + 1
    note_id = f"seeded-{number}"
    ctx.ids.append((note_id, line))
    focus = "" if token.meta.get("in_link") else f' tabindex="0" aria-describedby="{note_id}"'
    return (f'<span class="sim-value seeded"{focus}>{html.escape(shown)}<span class="seeded-note" id="{note_id}" '
            f'role="tooltip" data-pagefind-ignore>{html.escape(note)}</span></span>')


def _check_claim(expr: str, result: dict, line: int, ctx: LessonContext) -> None:
    """A claim holds on seed 0 and, if it compares figures from a random trace, on seeds.HOLD of the other seeds."""
    if not result["holds"]:
        raise LessonError(line, f"{{claim}}`{expr}` is false: rewrite the sentence it stands for, or remove it")
    if not result["seeded"]:
        return
    others = ctx.frozen.seeds(expr, ctx.names)
    if others is None:
        return
    if isinstance(others, dict):
        raise LessonError(line, f"{{claim}}`{expr}` failed {others['error']}")
    held = sum(1 for holds in others if holds is True)
    if held < seeds.HOLD:
        raise LessonError(line, f"{{claim}}`{expr}` holds on seed 0 but on only {held} of the {len(seeds.SEEDS)} "
                                f"other traces (seeds {seeds.SEEDS[0]}–{seeds.SEEDS[-1]}), and a claim must hold on "
                                f"{seeds.HOLD}: say only what survives the trace, or remove the sentence")


def _check_fit(expr: str, result: str | dict, paragraph: str, line: int, lang: str) -> None:
    """A figure may quote only configurations that fit in memory, or say in its paragraph that it is as if they
    did (sim/physics/feasibility.py; builder/expressions.py AS_IF_IT_FIT)."""
    if isinstance(result, str):
        return
    if lang not in AS_IF_IT_FIT:
        raise LessonError(line, f"builder/expressions.py AS_IF_IT_FIT has no words for {lang!r}: add them")
    if result.get("overflows"):
        raise LessonError(line, f"{{sim}}`{expr}` quotes a configuration that does not fit: "
                                f"{'; '.join(result['overflows'])}. Quote one that fits, or wrap the figure in "
                                f"as_if_it_fit(...) and say {AS_IF_IT_FIT[lang][0]!r} beside it")
    wording = AS_IF_IT_FIT[lang]
    if result.get("as_if_it_fit") and not any(words in paragraph.replace(f"`{expr}`", "") for words in wording):
        raise LessonError(line, f"{{sim}}`{expr}` is a figure as if its configuration fit in memory "
                                f"(as_if_it_fit), and its paragraph must say so: {' or '.join(map(repr, wording))}")


def _refuse(messages: list[str], line: int) -> None:
    if messages:
        raise LessonError(line, messages[0])


def _resolve_link(token: Token, line: int, ctx: LessonContext) -> None:
    """lesson:SLUG[#frag] -> a relative link to the lesson in this page's language, or an 'upcoming' marker
    when it is not written in this language yet; #frag -> checked once the page is parsed."""
    href = str(token.attrs.get("href", ""))
    if href.startswith("lesson:"):
        slug, _, fragment = href[len("lesson:"):].partition("#")
        if not ctx.course.knows(slug):
            raise LessonError(line, f"link to lesson {slug!r}, which is not in lessons/course.yml"
                                    + did_you_mean(slug, ctx.course.plan))
        if ctx.course.is_written(ctx.lang, slug):
            token.attrs["href"] = ctx.lesson_href(slug, fragment)
            ctx.links.append(LinkUse(line, slug, fragment))
        else:
            # Not written in this language yet: keep the text, drop the link, mark it as upcoming.
            token.attrs.pop("href")
            token.attrs["class"] = "upcoming-link"
            token.attrs["title"] = ctx.ui["course"]["upcoming"]
            token.tag = "span"
    elif href.startswith("#"):
        ctx.links.append(LinkUse(line, None, href[1:]))
    elif href.startswith("?"):
        # A scenario of a widget on this page; checked once every widget is known (builder/scenarios.py).
        ctx.checks.append((line, lambda c: scenarios.problem(c, href)))
        token.attrs["data-scenario"] = ""
    elif not EXTERNAL.match(href):
        raise LessonError(line, f"link {href!r}: link to another lesson with lesson:SLUG, to this page with #id, "
                                "to a widget's scenario with ?ID.PARAM=VALUE#ID, or to an external page with https://")
