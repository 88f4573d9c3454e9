r"""LaTeX to MathML at build time (latex2mathml), refusing what it cannot render faithfully.

A display formula may be broken into lines with `\\` outside any braces or environment: each line becomes an
`<mrow class="math-line">` of one `<math class="math-lines">`, which the page sets on one line where it fits and
wraps, line under line, where it does not (site/static/css/site.css). latex2mathml has no line breaking of its own.
"""

from __future__ import annotations

import re

import latex2mathml.converter

from builder.problems import LessonError

# latex2mathml prints a command it does not know as text (<mi>\foo</mi>): such output is an error.
LITERAL_COMMAND = re.compile(r">[^<]*(\\[A-Za-z]+)")
MATH_TAG = re.compile(r"^<math[^>]*>(.*)</math>$", re.S)
TOKEN = re.compile(r"\\begin\{|\\end\{|\\\\|\\.|[{}]")


def to_mathml(latex: str, display: bool, line: int) -> str:
    """MathML for a LaTeX formula; LessonError for LaTeX latex2mathml cannot render faithfully."""
    lines = split_lines(latex) if display else [latex]
    if len(lines) == 1:
        return _convert(latex, display, line)
    inner = "".join(f'<mrow class="math-line">{MATH_TAG.match(_convert(part, True, line)).group(1)}</mrow>'
                    for part in lines)
    return f'<math xmlns="http://www.w3.org/1998/Math/MathML" display="block" class="math-lines">{inner}</math>'


def split_lines(latex: str) -> list[str]:
    r"""The formula's lines: its text split at each `\\` that is outside braces and environments."""
    parts, start, depth = [], 0, 0
    # \begin{ opens a brace and an environment; \end{ closes the environment and opens a brace.
    steps = {"{": 1, "}": -1, "\\begin{": 2, "\\end{": 0}
    for token in TOKEN.finditer(latex):
        text = token.group()
        depth += steps.get(text, 0)
        if text == "\\\\" and depth == 0:
            parts.append(latex[start:token.start()])
            start = token.end()
    parts.append(latex[start:])
    return [p for p in (p.strip() for p in parts) if p]


def _convert(latex: str, display: bool, line: int) -> str:
    try:
        out = latex2mathml.converter.convert(latex, display="block" if display else "inline")
    except Exception as e:  # latex2mathml raises a variety of exception types for bad input
        raise LessonError(line, f"cannot render LaTeX {latex!r}: {type(e).__name__} {e}".rstrip()) from None
    literal = LITERAL_COMMAND.search(out)
    if literal:
        raise LessonError(line, f"LaTeX command {literal.group(1)} is not supported (in {latex!r})")
    return _without_outer_row(out)


OUTER_ROW = re.compile(r"^(<math[^>]*>)<mrow>(.*)</mrow></math>$", re.S)
ROW_TAG = re.compile(r"<(/?)mrow\b[^>]*>")


def _without_outer_row(mathml: str) -> str:
    """latex2mathml wraps a whole formula in one <mrow>, an element that draws nothing: <math> lays its children
    out as a row already. It goes, where it does wrap the whole (its </mrow> is the one the end closes)."""
    match = OUTER_ROW.match(mathml)
    if not match:
        return mathml
    depth = 0
    for tag in ROW_TAG.finditer(match.group(2)):
        depth += -1 if tag.group(1) else 1
        if depth < 0:
            return mathml  # the first <mrow> closed before the end: it wraps only a part
    return match.group(1) + match.group(2) + "</math>"
