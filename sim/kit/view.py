"""A widget's view: what render(state) returns, in the shape ARCHITECTURE.md gives ("The view")."""

from __future__ import annotations

import math

VIEW_SCHEMA = 1


def view(state: dict, outputs: dict, figures: dict | None = None, svg: dict | None = None,
         flags: dict | None = None, derivations: dict | None = None) -> dict:
    """A view dict, plus the valid state it was computed for, so that the page can show what was
    actually used when it sent something out of range."""
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
    """A readout: the raw number (rounded to 6 significant digits, for stable text) and its display text."""
    return {"value": round_sig(value, 6), "text": text}


def round_sig(x: float, digits: int) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))
