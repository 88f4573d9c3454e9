"""What a widget's page shows, declared in its module and drawn by one generic partial
(site/templates/widget.html), top to bottom in the order given.

Every item names the view's parts by name (an output, a flag, a figure, an svg) and its words by TEXT key;
a key defaults to the item's name. A text may hold `{OUTPUT}` slots: the page shows that output there,
kept current like any readout ("at most {max_batch} requests fit"). The build checks that every name and
key exists, in every language.
"""

from __future__ import annotations

from dataclasses import dataclass


def _frozen(obj, **fields) -> None:
    for name, value in fields.items():
        object.__setattr__(obj, name, value)


@dataclass(frozen=True, init=False)
class Controls:
    """The widget's controls: the ones named, or (no names) every control not placed by another Controls."""

    names: tuple[str, ...]

    def __init__(self, *names: str):
        _frozen(self, names=names)


@dataclass(frozen=True)
class Readout:
    """An output with its label, a "how it is computed" line when the view has a derivation for it,
    and optionally a second output shown small beneath (`note`, e.g. "memory-bound")."""

    name: str
    label: str | None = None
    note: str | None = None


@dataclass(frozen=True, init=False)
class Readouts:
    """A grid of readouts; a plain name stands for Readout(name)."""

    items: tuple[Readout, ...]

    def __init__(self, *items: str | Readout):
        _frozen(self, items=tuple(Readout(i) if isinstance(i, str) else i for i in items))


@dataclass(frozen=True)
class Flag:
    """A message shown while the view's flag `name` is on: a warning (memory overflow) or a note. A note may name
    `controls` that do not apply while it is on (the kit's rule for a control that changes nothing in a state):
    the page marks each of them inert and points it at the note, which says why; they stay usable, so that a
    student can still set them for another state. tests/sim/test_widget_contract.py finds any control that changes
    nothing without such a note."""

    name: str
    text: str | None = None
    tone: str = "warning"  # "warning" | "note"
    controls: tuple[str, ...] = ()


@dataclass(frozen=True)
class Text:
    """A paragraph of the widget's own words (an explanation, a convention)."""

    key: str
    tone: str = "note"  # "note" (small, muted) | "body"


@dataclass(frozen=True)
class Output:
    """A paragraph whose whole text is an output (a note that changes with the state)."""

    name: str
    tone: str = "box"  # "box" (set off, as a callout) | "body"


@dataclass(frozen=True)
class Figure:
    """A Plotly figure of the view, with a text alternative (TEXT key `alt`, default the figure's name)."""

    name: str
    alt: str | None = None


@dataclass(frozen=True)
class Svg:
    """Markup the view draws (an SVG diagram or a table), under an optional caption."""

    name: str
    caption: str | None = None
    label: str | None = None  # TEXT key naming it where it scrolls on a phone; default: the caption, else the title


@dataclass(frozen=True, init=False)
class Row:
    """A table row: its label's TEXT key, then one cell per column. A cell is an output name, a Text (with
    slots; tone="note" sets it small on its own line), or a tuple of those, shown one after another."""

    label: str
    cells: tuple

    def __init__(self, label: str, *cells):
        _frozen(self, label=label, cells=cells)


@dataclass(frozen=True)
class Table:
    """A table of outputs: a caption, column headings (TEXT keys; the first heads the row labels), rows,
    and an optional footer row whose last cell spans the remaining columns."""

    caption: str
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    foot: Row | None = None


@dataclass(frozen=True, init=False)
class Derivations:
    """Every "how it is computed" line named, in one collapsed list, each under the label of its key."""

    names: tuple[str, ...]

    def __init__(self, *names: str):
        _frozen(self, names=names)


@dataclass(frozen=True, init=False)
class Panel:
    """A boxed group of items with a heading, shown while the view's flag `flag` is on."""

    flag: str
    heading: str
    items: tuple

    def __init__(self, flag: str, heading: str, *items):
        _frozen(self, flag=flag, heading=heading, items=items)


ITEMS = (Controls, Readouts, Flag, Text, Output, Figure, Svg, Table, Derivations, Panel)
