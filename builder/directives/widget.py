"""`::: widget NAME [id=ID]`: a simulator widget, pre-rendered at build time; YAML body = initial parameters."""

from __future__ import annotations

import jinja2

from builder.context import LessonContext, WidgetUse
from builder.directives import directive, json_island, key_line, load_yaml_body
from builder.problems import LessonError, LessonErrors
from sim import widgets
from sim.widgets.controls import coerce_state, config_problems, describe


@directive("widget")
def widget_directive(ctx: LessonContext, args: str, body: str, line: int) -> str:
    words = args.split()
    if not words:
        raise LessonError(line, "widget needs a name: '::: widget NAME'")
    name, options = words[0], dict(w.split("=", 1) for w in words[1:] if "=" in w)
    unknown = [w for w in words[1:] if not w.startswith("id=")]
    if unknown:
        raise LessonError(line, f"widget options are 'id=ID' only; got {' '.join(unknown)}")
    try:
        module = widgets.load(name)
    except ValueError as e:
        raise LessonError(line, str(e)) from None
    widget_id = options.get("id", name)
    if ctx.widget(widget_id) is not None:
        raise LessonError(line, f"widget id {widget_id!r} is used twice on this page; add id=OTHER")
    config = load_yaml_body(body, line + 1, "widget settings")
    config = {} if config is None else config
    problems = config_problems(module.PARAMS, config)
    if problems:
        errors = [LessonError(key_line(body, key, line + 1) if key else line + 1, f"widget {name}: {message}")
                  for key, message in problems]
        raise LessonErrors(errors)
    state = coerce_state(module.PARAMS, {**config, "lang": ctx.lang})
    view = module.render(state)
    state = view["state"]  # what render actually used: presets may fill dependent fields
    ctx.scripted = True
    ctx.widgets.append(WidgetUse(name=name, id=widget_id, line=line, outputs=frozenset(view["outputs"]),
                                 params=frozenset(p.name for p in module.PARAMS)))
    try:
        template = ctx.templates.get_template(f"widgets/{name}.html")
    except jinja2.TemplateNotFound:
        raise LessonError(line, f"widget {name} has no template site/templates/widgets/{name}.html") from None
    try:
        return _render_template(template, ctx, name, widget_id, module, state, view)
    except jinja2.TemplateError as e:
        raise LessonError(line, f"widget {name}: its template failed for this state: {type(e).__name__}: {e}") from None


def _render_template(template, ctx: LessonContext, name: str, widget_id: str, module, state: dict, view: dict) -> str:
    return template.render(
        id=widget_id,
        name=name,
        lang=ctx.lang,
        root=ctx.root,
        params=describe(module.PARAMS, state, ctx.lang),
        state=state,
        view=view,
        island=json_island({"widget": name, "state": state, "view": view}),
    ) + "\n"
