"""Widgets: one module per widget (TEXT, WIDGET, render), built from the kit in sim/kit/.

A widget's name is its module's name with hyphens (sim/widgets/decode_ceiling.py is "decode-ceiling").
A view is JSON-able: {"schema": 1, "state", "outputs", "figures", "svg", "flags", "derivations"}.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
from types import ModuleType

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@functools.cache
def names() -> tuple[str, ...]:
    """Every widget module in this package (listed once: load() is on every render's path)."""
    # A directory listing rather than pkgutil, whose imports (zipfile, ...) slow Pyodide's boot.
    modules = (name[:-3] for name in os.listdir(os.path.dirname(__file__)) if name.endswith(".py"))
    return tuple(sorted(m.replace("_", "-") for m in modules if _NAME.match(m)))


def load(name: str) -> ModuleType:
    """The widget module for a widget name such as "roofline" or "matmul-shapes"."""
    if not isinstance(name, str) or name not in names():
        raise ValueError(f"unknown widget {name!r}; known: {', '.join(names())}")
    return importlib.import_module(f"{__name__}.{name.replace('-', '_')}")


def render(name: str, state) -> dict:
    """The view of widget `name` for any state (invalid values are replaced, never raised)."""
    return load(name).render(state)


def render_json(name: str, state_json: str) -> str:
    """render() across a JSON boundary: what the browser's worker calls."""
    try:
        state = json.loads(state_json)
    except ValueError:
        state = {}
    return json.dumps(render(name, state), separators=(",", ":"))
