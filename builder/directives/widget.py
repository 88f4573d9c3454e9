"""`::: widget NAME [id=ID]`: a simulator widget, pre-rendered at build time; YAML body = initial settings."""

from __future__ import annotations

import json
import re

import jinja2

from builder import safety
from builder.context import LessonContext, WidgetUse
from builder.directives import directive, key_line, load_yaml_body
from builder.problems import LessonError, LessonErrors, did_you_mean
from builder.widgets import DeclarationError, render_widget, setting_message
from sim import widgets
from sim.kit import config_problems

ID = "id="
WIDGET_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")  # no dots: links name a control as ?ID.CONTROL=value


@directive("widget", replayable=True)
def widget_directive(ctx: LessonContext, args: str, body: str, line: int) -> str:
    words = args.split()
    if not words:
        raise LessonError(line, "widget needs a name: '::: widget NAME'")
    name, options = words[0], [w for w in words[1:]]
    unknown = [w for w in options if not w.startswith(ID)]
    if unknown:
        raise LessonError(line, f"widget options are 'id=ID' only; got {' '.join(unknown)}")
    try:
        module = widgets.load(name)
    except ValueError as e:
        raise LessonError(line, f"{e}{did_you_mean(name, widgets.names())}") from None
    widget_id = next((w[len(ID):] for w in options), name)
    if not WIDGET_ID.match(widget_id):
        raise LessonError(line, f"widget id {widget_id!r} must start with a letter and hold only letters, digits, "
                                "'-' and '_' (links name a control as ?ID.CONTROL=value)")
    if ctx.widget(widget_id) is not None:
        raise LessonError(line, f"widget id {widget_id!r} is used twice on this page; add id=OTHER")
    ctx.failed_widgets.add(widget_id)  # until it is on the page (below)
    declaration = module.WIDGET
    config = load_yaml_body(body, line + 1, "widget settings")
    config = {} if config is None else config
    problems = config_problems(declaration.controls, config)
    if problems:
        raise LessonErrors([LessonError(key_line(body, p.control, line + 1) if p.control else line + 1,
                                        f"widget {name}: {setting_message(p)}") for p in problems])
    view = ctx.frozen.view(name, module, declaration.coerce({**config, "lang": ctx.lang}))
    state = view["state"]  # what render actually used: presets may fill dependent fields
    ctx.scripted = True
    ctx.failed_widgets.discard(widget_id)
    ctx.widgets.append(WidgetUse(name=name, id=widget_id, line=line, outputs=frozenset(view["outputs"]),
                                 controls=frozenset(c.name for c in declaration.controls),
                                 flags=frozenset(view["flags"]),
                                 setting=json.dumps({k: v for k, v in state.items() if k != "lang"}, sort_keys=True)))
    try:
        markup = render_widget(ctx.templates, ctx.ui, name, widget_id, state, view)
    except (jinja2.TemplateError, DeclarationError) as e:
        raise LessonError(line, f"widget {name}: cannot draw it with these settings: {e}") from None
    ctx.ids.extend((i, line) for i in safety.scan(markup).ids)
    ctx.sections.append(widget_id)
    return markup
