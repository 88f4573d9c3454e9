"""Content that may be wider than a phone (tables, display formulas) scrolls sideways inside a frame, never the page.

The page script (static/js/scroll.js) makes a frame a focusable region, labelled with data-label, and shows a cue
at its edge, while its content overflows; at widths where it fits, it is plain content with no extra tab stop.
"""

from __future__ import annotations

import html

from builder.context import LessonContext

CLOSE = "</div></div>"


def open_frame(label: str) -> str:
    return f'<div class="scroll-frame"><div class="scroll-x" data-scroll data-label="{html.escape(label, quote=True)}">'


def numbered_label(ctx: LessonContext, kind: str) -> str:
    """'Table 2', 'Formula 3' in the page's language (site/i18n/<lang>.yml, scroll): unique on the page."""
    ctx.counts[kind] = ctx.counts.get(kind, 0) + 1
    return ctx.ui["scroll"][kind].format(n=ctx.counts[kind])
