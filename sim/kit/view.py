"""A widget's view: what render(state) returns, in the shape ARCHITECTURE.md gives ("The view")."""

from __future__ import annotations

import math

VIEW_SCHEMA = 1


def view(state: dict, outputs: dict, figures: dict | None = None, svg: dict | None = None,
         flags: dict | None = None, derivations: dict | None = None) -> dict:
    """What render returns: the valid `state` it was computed for (so that the page can show what was actually
    used when it sent something out of range), its `outputs` (name -> output()), and by name its Plotly `figures`
    (palette.plot_layout for the layout), `svg` markup, `flags` (bool: a Flag or Panel shows while on) and
    `derivations` (text: a readout's "how it is computed" line)."""
    return {
        "schema": VIEW_SCHEMA,
        "state": state,
        "outputs": outputs,
        "figures": figures or {},
        "svg": svg or {},
        "flags": flags or {},
        "derivations": derivations or {},
    }


def output(value: float, text: str) -> dict:
    """An output: the raw number `value` (rounded to 6 significant digits, for stable text; the page compares and
    the tests read it) and the display `text` the readout shows (a formatter of sim/page/display.py)."""
    return {"value": round_sig(value, 6), "text": text}


def round_sig(x: float, digits: int) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))
