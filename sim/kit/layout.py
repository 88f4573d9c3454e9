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
    """The widget's controls: those `names` name, in that order, or (no names) every control not placed by another
    Controls, in the order of WIDGET.controls."""

    names: tuple[str, ...]

    def __init__(self, *names: str):
        _frozen(self, names=names)


@dataclass(frozen=True)
class Readout:
    """The output `name` with its label (the TEXT key `label`, default: the name), a "how it is computed" line when
    the view has a derivation for it, and optionally a second output shown small beneath (the output `note`, e.g.
    "memory-bound")."""

    name: str
    label: str | None = None
    note: str | None = None


@dataclass(frozen=True, init=False)
class Readouts:
    """A grid of readouts, the `items` in order: each a Readout, or an output's name standing for Readout(name)."""

    items: tuple[Readout, ...]

    def __init__(self, *items: str | Readout):
        _frozen(self, items=tuple(Readout(i) if isinstance(i, str) else i for i in items))


@dataclass(frozen=True)
class Flag:
    """A message shown while the view's flag `name` is on, its words the TEXT key `text` (default: the name, with
    `{OUTPUT}` slots): a warning (`tone` "warning", memory overflow) or a note ("note"). A note may name
    `controls` that do not apply while it is on (the kit's rule for a control that changes nothing in a state):
    the page marks each of them inert and points it at the note, which says why; they stay usable, so that a
    student can still set them for another state. A test every widget gets (tests/sim/test_widgets.py) finds any
    control that changes nothing without such a note."""

    name: str
    text: str | None = None
    tone: str = "warning"  # "warning" | "note"
    controls: tuple[str, ...] = ()


@dataclass(frozen=True)
class Text:
    """A paragraph of the widget's own words, the TEXT key `key` (an explanation, a convention; `{OUTPUT}` slots
    allowed), set small and muted (`tone` "note") or as body text ("body")."""

    key: str
    tone: str = "note"  # "note" (small, muted) | "body"


@dataclass(frozen=True)
class Output:
    """A paragraph whose whole text is the output `name` (a note that changes with the state), set off as a callout
    (`tone` "box") or as body text ("body")."""

    name: str
    tone: str = "box"  # "box" (set off, as a callout) | "body"


@dataclass(frozen=True)
class Figure:
    """The view's Plotly figure `name` (render's figures={name: …}), with a text alternative: the figure's own
    "alt" if render gives one (alt.sentence), else the TEXT key `alt` (default: the figure's name)."""

    name: str
    alt: str | None = None


@dataclass(frozen=True)
class Svg:
    """Markup the view draws, its svg `name` (render's svg={name: …}: an SVG diagram or an HTML table), under the
    TEXT key `caption` if given; `label` is the TEXT key that names it where it scrolls sideways on a phone
    (default: the caption, else the widget's title)."""

    name: str
    caption: str | None = None
    label: str | None = None  # TEXT key naming it where it scrolls on a phone; default: the caption, else the title


@dataclass(frozen=True, init=False)
class Row:
    """A table row: its `label`'s TEXT key, then the `cells`, one per column. A cell is an output name, a Text
    (with slots; tone="note" sets it small on its own line), or a tuple of those, shown one after another."""

    label: str
    cells: tuple

    def __init__(self, label: str, *cells):
        _frozen(self, label=label, cells=cells)


@dataclass(frozen=True)
class Table:
    """A table of outputs: a `caption` (TEXT key), the `columns`' headings (TEXT keys; the first heads the row
    labels), the `rows` (Row), and an optional `foot`, a Row whose last cell spans the remaining columns."""

    caption: str
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    foot: Row | None = None


@dataclass(frozen=True, init=False)
class Derivations:
    """The "how it is computed" lines of the outputs `names` (render's derivations), in one collapsed list, each
    under the label of its output."""

    names: tuple[str, ...]

    def __init__(self, *names: str):
        _frozen(self, names=names)


@dataclass(frozen=True, init=False)
class Panel:
    """A boxed group of layout `items` under the TEXT key `heading`, shown while the view's flag `flag` is on."""

    flag: str
    heading: str
    items: tuple

    def __init__(self, flag: str, heading: str, *items):
        _frozen(self, flag=flag, heading=heading, items=items)


ITEMS = (Controls, Readouts, Flag, Text, Output, Figure, Svg, Table, Derivations, Panel)
