"""Widgets: one module per widget, each with PARAMS and render(state) -> view.

A view is JSON-able: {"schema": 1, "outputs", "figures", "svg", "flags", "derivations"}.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
from types import ModuleType

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_NOT_WIDGETS = {"common", "controls", "view"}  # helper modules


@functools.cache
def names() -> tuple[str, ...]:
    """Every widget module in this package (listed once: load() is on every render's path)."""
    # A directory listing rather than pkgutil, whose imports (zipfile, ...) slow Pyodide's boot.
    modules = (name[:-3] for name in os.listdir(os.path.dirname(__file__)) if name.endswith(".py"))
    return tuple(sorted(m.replace("_", "-") for m in modules if m != "__init__" and m not in _NOT_WIDGETS))


def load(name: str) -> ModuleType:
    """The widget module for a widget name such as "roofline" or "matmul-shapes"."""
    module_name = name.replace("-", "_") if isinstance(name, str) else ""
    if not _NAME.match(module_name) or module_name in _NOT_WIDGETS or name not in names():
        raise ValueError(f"unknown widget {name!r}; known: {', '.join(names())}")
    return importlib.import_module(f"{__name__}.{module_name}")


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
