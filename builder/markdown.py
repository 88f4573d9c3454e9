"""Lesson Markdown: CommonMark + tables, attributes, anchors, $math$ (to MathML at build time) and
`::: name` directives. Parsing and rendering are separate so that all work with side effects
(directives, math conversion) happens in one walk over the tokens, with line numbers at hand."""

from __future__ import annotations

import re

import latex2mathml.converter
from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.token import Token
from mdit_py_plugins.anchors import anchors_plugin
from mdit_py_plugins.attrs import attrs_block_plugin, attrs_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin

from builder.directives import LessonContext, run_directive
from builder.problems import LessonError

DIRECTIVE_OPEN = re.compile(r"^(:{3,})\s*([A-Za-z][\w-]*)(.*)$")
# latex2mathml prints a command it does not know as text (<mi>\foo</mi>): such output is an error.
LITERAL_COMMAND = re.compile(r">[^<]*(\\[A-Za-z]+)")
MATH_TOKENS = {"math_inline": False, "math_inline_double": True, "math_block": True, "math_block_label": True}


def _directive_rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """Block rule: `:::name args` ... a line of the same colons. The body is kept raw."""
    if state.sCount[start] - state.blkIndent >= 4:
        return False
    first = state.src[state.bMarks[start] + state.tShift[start]:state.eMarks[start]]
    match = DIRECTIVE_OPEN.match(first)
    if not match:
        return False
    if silent:
        return True
    fence, name, args = match.groups()
    line = start + 1
    while line < end:
        text = state.src[state.bMarks[line] + state.tShift[line]:state.eMarks[line]]
        if text.strip() == fence and state.sCount[line] - state.blkIndent < 4:
            break
        line += 1
    closed = line < end
    token = state.push("directive", "", 0)
    token.info = name
    token.meta = {"args": args.strip(), "body": state.getLines(start + 1, line, state.blkIndent, False),
                  "closed": closed}
    token.map = [start, line + 1 if closed else line]
    state.line = line + 1 if closed else line
    return True


def _render_prepared(self, tokens: list[Token], idx: int, options, env) -> str:
    return tokens[idx].meta["html"]


def make_markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"typographer": False}).enable("table")
    md.use(dollarmath_plugin, allow_space=False, double_inline=True)
    md.use(attrs_plugin, spans=True)
    md.use(attrs_block_plugin)
    md.use(anchors_plugin, min_level=2, max_level=3)
    md.block.ruler.before("fence", "directive", _directive_rule,
                          {"alt": ["paragraph", "reference", "blockquote", "list"]})
    for kind in (*MATH_TOKENS, "directive"):
        md.add_render_rule(kind, _render_prepared)
    return md


def to_mathml(latex: str, display: bool, line: int) -> str:
    """MathML for a LaTeX formula; LessonError for LaTeX latex2mathml cannot render faithfully."""
    try:
        out = latex2mathml.converter.convert(latex, display="block" if display else "inline")
    except Exception as e:  # latex2mathml raises a variety of exception types for bad input
        raise LessonError(line, f"cannot render LaTeX {latex!r}: {type(e).__name__} {e}".rstrip()) from None
    literal = LITERAL_COMMAND.search(out)
    if literal:
        raise LessonError(line, f"LaTeX command {literal.group(1)} is not supported (in {latex!r})")
    return out


def render_lesson_markdown(md: MarkdownIt, text: str, first_line: int, ctx: LessonContext,
                           problems: list[LessonError]) -> str:
    """HTML for `text`, whose first line is `first_line` of the lesson file; problems are appended, not raised."""
    tokens = md.parse(text, {})
    for token in tokens:
        line = first_line + (token.map[0] if token.map else 0)
        try:
            _prepare(token, line, ctx, md, problems)
        except LessonError as e:
            problems.append(e)
            token.meta["html"] = ""
    return md.renderer.render(tokens, md.options, {})


def _prepare(token: Token, line: int, ctx: LessonContext, md: MarkdownIt, problems: list[LessonError]) -> None:
    """Do a token's build-time work (directive, math) and store the HTML it renders to."""
    if token.type == "directive":
        token.meta["html"] = ""
        if not token.meta["closed"]:
            raise LessonError(line, f"directive '{token.info}' is not closed by a line of colons")
        token.meta["html"] = run_directive(ctx, token.info, token.meta["args"], token.meta["body"], line)
    elif token.type in MATH_TOKENS:  # a display-math block
        token.meta["html"] = to_mathml(token.content, MATH_TOKENS[token.type], line) + "\n"
    for child in token.children or ():
        if child.type in MATH_TOKENS:
            try:
                child.meta["html"] = to_mathml(child.content, MATH_TOKENS[child.type], line)
            except LessonError as e:
                problems.append(e)
                child.meta["html"] = ""
