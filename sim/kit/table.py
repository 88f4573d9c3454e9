"""HTML tables that a widget's view draws, and the rule every table on the site follows on a phone.

Each body cell carries its column's heading in `data-label`, and a table of STACK_COLUMNS columns or more carries
the class `table-stack`: in a frame narrower than a phone's width allows, the page shows each of its rows as a card
of "heading: value" lines (site/static/css/site.css) instead of a table wider than the screen. A narrower table
keeps its rows and columns, which fit a phone. Markdown tables (builder/markdown.py) and the kit's Table item
follow the same rule.
"""

from __future__ import annotations

from sim.page.markup import escape

STACK_COLUMNS = 4
STACK_CLASS = "table-stack"


def table_class(columns: int, base: str = "widget-table") -> str:
    """The class attribute's value for a table of `columns` columns: `base`, plus the class that stacks its rows
    on a phone when it has STACK_COLUMNS or more."""
    return f"{base} {STACK_CLASS}" if columns >= STACK_COLUMNS else base


def html_table(caption: str, columns: list[str], rows: list[tuple[str, list[tuple[str, str, str]]]]) -> str:
    """A widget table's HTML, for the view's svg: `caption` and `columns`, the headings, are plain text; each of the
    `rows` is (the <tr>'s attributes, its cells), and each cell is (tag, attributes, markup): the row's heading is
    a ("th", ' scope="row"', …), the others "td"."""
    head = "".join(f'<th scope="col">{escape(c)}</th>' for c in columns)
    body = "".join(
        f"<tr{attributes}>" + "".join(
            f'<{tag}{cell_attributes} data-label="{escape(column, quote=True)}">{markup}</{tag}>'
            for column, (tag, cell_attributes, markup) in zip(columns, cells, strict=True)) + "</tr>"
        for attributes, cells in rows)
    return (f'<table class="{table_class(len(columns))}"><caption>{escape(caption)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
