"""LaTeX to MathML at build time (latex2mathml), refusing what it cannot render faithfully."""

from __future__ import annotations

import re

import latex2mathml.converter

from builder.problems import LessonError

# latex2mathml prints a command it does not know as text (<mi>\foo</mi>): such output is an error.
LITERAL_COMMAND = re.compile(r">[^<]*(\\[A-Za-z]+)")


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
