"""Text alternatives that state a figure's numbers: a heading, then its parts, punctuated in the page's language.

A plot or diagram is read aloud as one sentence ("Bytes moved per step: prefill …; decode …"); the figure's own
module supplies the words and numbers, this module only how they are joined.
"""

from __future__ import annotations

TEXT = {
    "zh": {"alt.colon": "：", "alt.join": "；", "alt.parts": "，", "alt.end": "。"},
    "en": {"alt.colon": ": ", "alt.join": "; ", "alt.parts": ", ", "alt.end": "."},
}


def sentence(lang: str, head: str, parts) -> str:
    """'head: part; part; part.' in `lang`'s punctuation: the `head` (what the figure shows), then its `parts`."""
    t = TEXT[lang]
    return f"{head}{t['alt.colon']}{t['alt.join'].join(parts)}{t['alt.end']}"


def parts(lang: str, items) -> str:
    """'a, b, c' in `lang`'s punctuation: the `items` of one part of a sentence()."""
    return TEXT[lang]["alt.parts"].join(items)
