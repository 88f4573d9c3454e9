"""The widget kit: what a widget module is built from.

A widget is one module in sim/widgets/, read top to bottom:
- TEXT: its words, one block per language ({"zh": {...}, "en": {...}}), the same keys in each;
- WIDGET = Widget(controls=(...), layout=(...)): its controls, and what its page shows (sim/kit/layout.py); slow=True
  if a render may take more than a frame or two (it then has a worker of its own in the page);
- render(state) -> view (sim/kit/view.py), which starts with WIDGET.coerce(state) and accepts any dict.

The generic partial draws any widget from this declaration; a widget whose layout needs more has its own
template, site/templates/widgets/<name>.html, which the builder finds by that name.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from sim.kit import alt, capacity, choices, palette
from sim.kit.controls import Number, Range, Select, changed_param, coerce_state, config_problems
from sim.kit.layout import Controls, Derivations, Figure, Flag, Output, Panel, Readout, Readouts, Row, Svg, Table, Text
from sim.kit.view import output, view

__all__ = [
    "Controls", "alt", "Derivations", "Figure", "Flag", "Number", "Output", "Panel", "Range", "Readout", "Readouts",
    "Row", "Select", "Svg", "Table", "Text", "Widget", "capacity", "choices", "config_problems", "output", "palette",
    "view", "words",
]


@dataclass(frozen=True)
class Widget:
    """A widget's declaration, the module's WIDGET: its `controls` (Range, Select, Number, the choices), each a
    key of the state render() receives; its `layout`, what its page shows, top to bottom (Controls() places the
    controls); `slow` for a widget whose render may take more than a frame or two (a serving simulation): the page
    then runs its renders in a Python worker of its own, so that no other widget waits for them."""

    controls: tuple
    layout: tuple = ()
    # Its renders may take long (a serving simulation, hundreds of ms): the page runs them in a Python worker of
    # their own, so that no other widget waits for them (site/static/js/page.js).
    slow: bool = False

    def coerce(self, state) -> dict:
        """A complete, valid state for any input (sim/kit/controls.py coerce_state)."""
        return coerce_state(self.controls, state)

    def changed(self, state) -> str | None:
        """The control the page says was just moved, if it is one of these."""
        return changed_param(self.controls, state)

    def control(self, name: str):
        return next(c for c in self.controls if c.name == name)


def words(module: ModuleType, lang: str) -> dict[str, str]:
    """Every text a widget's page may use in `lang`: the kit's shared words, then the widget's own."""
    return {**choices.TEXT[lang], **capacity.TEXT[lang], **module.TEXT[lang]}
