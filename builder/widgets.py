"""The widget kit's page side: a widget module's declaration and a view, turned into the plain data its
partial draws (site/templates/widget.html, or the widget's own site/templates/widgets/<name>.html).

Every name a layout uses (an output, a flag, a figure) and every TEXT key must exist; check_widgets()
renders every widget in every language at build time so that a mistake names the module (or template) and
its line, whether or not a lesson uses the widget yet.
"""

from __future__ import annotations

import ast
import functools
import string
from pathlib import Path
from types import ModuleType

import jinja2

from builder.catalogs import text_blocks
from builder.frozen import Frozen
from builder.problems import Problem, did_you_mean
from builder.templates import json_island
from builder.usage import WIDGET, Usage
from sim import kit, widgets
from sim.kit import capacity, choices
from sim.kit.controls import Number, Range, SettingProblem
from sim.kit.layout import Controls, Derivations, Figure, Flag, Output, Panel, Readouts, Svg, Table, Text
from sim.kit.table import table_class
from sim.page.languages import LANGUAGES

GENERIC_TEMPLATE = "widget.html"
# A question (a box that grades the student's answer) is any widget whose view has these flags; the home page
# counts a lesson's questions, and the page script remembers each one's answer (static/js/progress.js).
QUESTION_FLAGS = frozenset({"answered", "correct"})
# The kit's modules whose words every widget's page may show (kit.words).
SHARED_WORDS = (choices, capacity)


def is_question(flags) -> bool:
    """Whether a widget whose view has these flags (names) is a question."""
    return QUESTION_FLAGS <= set(flags)


def setting_message(problem: SettingProblem) -> str:
    """A lesson's (or a scenario link's) setting problem in the kit's words, ending with the nearest name or option
    where the setting names one the widget does not have (the kit gives the known ones; the nearest is found here,
    on the build's side, because sim/ cannot import difflib)."""
    if problem.unknown is None:
        return problem.message
    return problem.message + did_you_mean(problem.unknown, problem.known)


class DeclarationError(Exception):
    """A layout names something its widget does not have; `needle` is the name, to find its line."""

    def __init__(self, message: str, needle: str):
        super().__init__(message)
        self.needle = needle


def template_for(templates: jinja2.Environment, name: str) -> jinja2.Template:
    """The widget's own template if it has one (the exception), else the generic partial."""
    try:
        return templates.get_template(f"widgets/{name}.html")
    except jinja2.TemplateNotFound:
        return templates.get_template(GENERIC_TEMPLATE)


def render_widget(templates: jinja2.Environment, ui: dict, name: str, widget_id: str, state: dict,
                  view: dict) -> str:
    """The widget's HTML for a valid state and its view (pre-rendered: the page reads without Python)."""
    module = widgets.load(name)
    t = kit.words(module, state["lang"])
    return template_for(templates, name).render(
        id=widget_id, name=name, t=t, ui=ui, state=state, view=view,
        controls=describe_controls(module.WIDGET.controls, state, t, inert_controls(module.WIDGET, view)),
        layout=describe_layout(module.WIDGET, state, view, t),
        island=json_island({"widget": name, "state": state, "view": view,
                            **({"slow": True} if module.WIDGET.slow else {})}),
    ) + "\n"


# --- declaration -> template data -------------------------------------------------------------------

def flags_of(layout) -> list[Flag]:
    """The layout's Flags, those inside a Panel too."""
    found = []
    for item in layout:
        if isinstance(item, Flag):
            found.append(item)
        elif isinstance(item, Panel):
            found.extend(flags_of(item.items))
    return found


def inert_controls(widget: kit.Widget, view: dict) -> dict[str, str]:
    """The controls that do not apply in this view: each, the name of the note (a Flag that is on) saying why."""
    names = {c.name for c in widget.controls}
    inert = {}
    for flag in flags_of(widget.layout):
        for name in flag.controls:
            if name not in names:
                raise DeclarationError(f"flag {flag.name!r} names control {name!r}, which the widget does not have",
                                       name)
        if flag.controls and flag.tone != "note":
            raise DeclarationError(f"flag {flag.name!r} names controls that do not apply: make it tone='note'",
                                   flag.name)
        if flag.controls and _flag(view, flag.name):
            inert.update({name: flag.name for name in flag.controls if name not in inert})
    return inert


def describe_controls(controls, state: dict, t: dict, inert: dict[str, str] | None = None) -> list[dict]:
    """The controls with their words and current values, as the partial's macros take them; `inert`, a control's
    note saying it does not apply (inert_controls)."""
    described = []
    for c in controls:
        d = {"name": c.name, "kind": c.kind, "label": _word(t, c.label or c.name), "value": state[c.name],
             "inert": (inert or {}).get(c.name)}
        if isinstance(c, Range):
            stops = c.stops()
            d.update(min=c.min, max=c.max, step=c.step, whole=c.whole, position=c.slider_position(state[c.name]),
                     stops=",".join(map(str, stops)) if stops else None,
                     slider_max=len(stops) - 1 if stops else c.max, slider_min=0 if stops else c.min,
                     slider_step=1 if stops else c.step)
        elif isinstance(c, Number):
            d["value"] = "" if state[c.name] is None else state[c.name]
        else:
            names = c.names or {}
            d.update(style=c.style, options=[{"value": v, "label": names.get(v) or _word(t, f"{c.name}={v}")}
                                             for v in c.options])
        described.append(d)
    return described


def describe_layout(widget: kit.Widget, state: dict, view: dict, t: dict) -> list[dict]:
    """The layout's items, each a dict with a "kind" and what the partial needs to draw it."""
    placed = {name for item in widget.layout if isinstance(item, Controls) for name in item.names}
    for name in placed:
        if not any(c.name == name for c in widget.controls):
            raise DeclarationError(f"layout places control {name!r}, which the widget does not have", name)
    rest = [c for c in widget.controls if c.name not in placed]
    controls = {d["name"]: d for d in describe_controls(widget.controls, state, t, inert_controls(widget, view))}

    def describe(item) -> dict:
        if isinstance(item, Controls):
            return {"kind": "controls", "controls": [controls[n] for n in item.names] if item.names
                    else [controls[c.name] for c in rest]}
        if isinstance(item, Readouts):
            return {"kind": "readouts", "items": [
                {"label": _word(t, r.label or r.name), "output": _output(view, r.name),
                 "note": _output(view, r.note) if r.note else None,
                 "derivation": view["derivations"].get(r.name)} for r in item.items]}
        if isinstance(item, Flag):
            return {"kind": "flag", "name": item.name, "on": _flag(view, item.name), "tone": item.tone,
                    "segments": _segments(_word(t, item.text or item.name), view), "controls": " ".join(item.controls)}
        if isinstance(item, Text):
            return {"kind": "text", "tone": item.tone, "segments": _segments(_word(t, item.key), view)}
        if isinstance(item, Output):
            return {"kind": "output", "tone": item.tone, "output": _output(view, item.name)}
        if isinstance(item, Figure):
            figure = view["figures"].get(item.name)
            if figure is None:
                raise DeclarationError(f"layout shows figure {item.name!r}, which render() does not draw", item.name)
            # The view's own text alternative (with its numbers) where it gives one, else the TEXT's.
            return {"kind": "figure", "name": item.name, "alt": figure.get("alt") or _word(t, item.alt or item.name),
                    "height": figure["layout"].get("height")}
        if isinstance(item, Svg):
            if item.name not in view["svg"]:
                raise DeclarationError(f"layout shows svg {item.name!r}, which render() does not draw", item.name)
            caption = _word(t, item.caption) if item.caption else None
            # label: the name of the frame it scrolls in on a phone (its own, else its caption, else the kit's
            # "<title> (diagram)": never the widget's bare title, which names the widget's section)
            return {"kind": "svg", "name": item.name, "markup": view["svg"][item.name], "caption": caption,
                    "label": _word(t, item.label) if item.label else caption, "title": t["title"]}
        if isinstance(item, Table):
            def part(p) -> dict:
                if isinstance(p, Text):
                    return {"tone": p.tone, "segments": _segments(_word(t, p.key), view)}
                return {"tone": None, "segments": [_slot(view, p)]}

            def row(r) -> dict:
                return {"label": _word(t, r.label),
                        "cells": [[part(p) for p in (c if isinstance(c, tuple) else (c,))] for c in r.cells]}
            return {"kind": "table", "caption": _word(t, item.caption), "columns": [_word(t, c) for c in item.columns],
                    "class": table_class(len(item.columns)),
                    "rows": [row(r) for r in item.rows], "foot": row(item.foot) if item.foot else None}
        if isinstance(item, Derivations):
            for name in item.names:
                if name not in view["derivations"]:
                    raise DeclarationError(f"layout lists derivation {name!r}, which render() does not give", name)
            return {"kind": "derivations", "items": [
                {"name": n, "label": _word(t, n), "text": view["derivations"][n]} for n in item.names]}
        if isinstance(item, Panel):
            return {"kind": "panel", "flag": item.flag, "on": _flag(view, item.flag),
                    "heading": _word(t, item.heading), "items": [describe(i) for i in item.items]}
        raise DeclarationError(f"{type(item).__name__} is not a layout item (sim/kit/layout.py)", type(item).__name__)

    return [describe(item) for item in widget.layout]


def _word(t: dict, key: str) -> str:
    if key not in t:
        raise DeclarationError(f"TEXT has no key {key!r}", key)
    return t[key]


def _output(view: dict, name: str) -> dict:
    if name not in view["outputs"]:
        raise DeclarationError(f"layout shows output {name!r}, which render() does not give", name)
    return {"name": name, **view["outputs"][name]}


def _slot(view: dict, name: str) -> dict:
    return {"kind": "output", **_output(view, name)}


def _flag(view: dict, name: str) -> bool:
    if name not in view["flags"]:
        raise DeclarationError(f"layout uses flag {name!r}, which render() does not set", name)
    return view["flags"][name]


def _segments(text: str, view: dict) -> list[dict]:
    """A text split into its literal parts and its {OUTPUT} slots."""
    parts = []
    for literal, field, _, _ in string.Formatter().parse(text):
        if literal:
            parts.append({"kind": "text", "text": literal})
        if field is not None:
            parts.append(_slot(view, field))
    return parts


# --- build-time check of every widget ---------------------------------------------------------------

def check_widgets(templates: jinja2.Environment, ui: dict[str, dict], store: Frozen,
                  usage: Usage | None = None, only: str | None = None) -> list[Problem]:
    """Render every widget (or the one named `only`) with its defaults in each language that needs it (its pages',
    every language without a Usage) and in each that has all of its words; each failure as a problem at its line. A
    widget no page uses is still drawn, in the languages it has words in."""
    problems = []
    for name in widgets.names() if only is None else (only,):
        try:
            module = widgets.load(name)
            declaration = module.WIDGET
            module.TEXT  # noqa: B018 - a widget without TEXT fails here, with its name
        except Exception as e:  # any import error of a module an author just wrote
            problems.append(_module_problem(name, e))
            continue
        for lang in render_languages(name, module, usage):
            try:
                state = declaration.coerce({"lang": lang})
                view = store.view(name, module, state)
                render_widget(templates, ui[lang], name, name, view["state"], view)
            except DeclarationError as e:
                path = _module_path(module)
                problems.append(Problem(path, _line_of(path, e.needle), f"widget {name} ({lang}): {e}"))
                break
            except jinja2.TemplateError as e:
                path, line = _template_place(templates, e)
                problems.append(Problem(path, line, f"widget {name} ({lang}): template failed: {e}"))
                break
            except Exception as e:
                problems.append(_module_problem(name, e, lang))
                break
    return problems


def render_languages(name: str, module: ModuleType, usage: Usage | None) -> list[str]:
    """The languages to draw a widget in at build time: those whose pages use it, and those in which it and the
    kit's shared words (kit.words) are whole, so that a language it is not yet translated into is not drawn."""
    if usage is None:
        return list(LANGUAGES)
    needed = usage.languages(WIDGET, name)
    shared = [text_blocks(Path(m.__file__)) for m in (module, *SHARED_WORDS)]
    return [lang for lang in LANGUAGES if lang in needed or all(t is not None and t.whole(lang) for t in shared)]


def _module_path(module: ModuleType) -> Path:
    return Path(module.__file__)


def _module_problem(name: str, error: Exception, lang: str | None = None) -> Problem:
    """A problem at the line of the widget module where `error` was raised."""
    path = Path(widgets.__file__).parent / f"{name.replace('-', '_')}.py"
    line = 1
    tb = error.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename) == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    if isinstance(error, SyntaxError) and error.lineno:
        line = error.lineno
    where = f" ({lang})" if lang else ""
    return Problem(path, line, f"widget {name}{where}: {type(error).__name__}: {error}")


def _template_place(templates: jinja2.Environment, error: jinja2.TemplateError) -> tuple[Path, int]:
    """The template file and line a Jinja error points at (Jinja rewrites tracebacks to template lines)."""
    folder = Path(templates.loader.searchpath[0])
    place = (folder / GENERIC_TEMPLATE, 1)
    if isinstance(error, jinja2.TemplateSyntaxError) and error.filename:
        return Path(error.filename), error.lineno or 1
    tb = error.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.endswith(".html"):
            place = (Path(filename), tb.tb_lineno)
        tb = tb.tb_next
    return place


@functools.cache
def _line_of(path: Path, needle: str) -> int:
    """The first line of a widget module's WIDGET declaration that mentions `needle`, else WIDGET's line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "WIDGET" for t in node.targets):
            for inner in ast.walk(node.value):
                if isinstance(inner, ast.Constant) and inner.value == needle:
                    return inner.lineno
            return node.lineno
    return 1

