"""Scenario links in lesson prose: `[text](?ID.PARAM=VALUE&…#ID)` opens widget ID on this page with those settings.

A number in the prose that a widget shows only in some scenario links to that scenario, so the reader can see it
there. The link is the page's own URL state (ARCHITECTURE.md "URL state"): it works as a plain link without the
page script, and static/js/scenarios.js applies it in place. Every key must name a control of a widget on this
page and every value must be one that control takes, checked as strictly as a widget's settings
(config_problems): a link to a scenario the widget would quietly change is a build error.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import yaml

from builder import yamltext
from builder.context import LessonContext
from builder.widgets import setting_message
from sim import widgets
from sim.kit import config_problems


def parse(href: str) -> tuple[dict[str, dict[str, str]], str]:
    """'?a.x=1&a.y=z#a' -> ({'a': {'x': '1', 'y': 'z'}}, 'a'); keys without a dot land under ''."""
    parts = urlsplit(href)
    settings: dict[str, dict[str, str]] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        widget_id, _, param = key.partition(".")
        settings.setdefault(widget_id if param else "", {})[param or key] = value
    return settings, parts.fragment


def value_of(text: str):
    """A URL value read as a widget setting in YAML is read: '512' is 512, '0.9' is 0.9, 'h100-sxm' stays text."""
    try:
        return yamltext.safe_load(text)
    except yaml.YAMLError:
        return text


def problem(ctx: LessonContext, href: str) -> str | None:
    """What is wrong with a scenario link once the whole page is parsed, or None."""
    settings, fragment = parse(href)
    if "" in settings:
        return f"scenario link {href!r}: every key is ID.PARAM (a widget id on this page, a dot, one of its controls)"
    if not settings:
        return f"scenario link {href!r} sets nothing; write ?ID.PARAM=VALUE#ID"
    if fragment not in settings:
        return f"scenario link {href!r} must end in #ID, the widget it opens (one of {', '.join(settings)})"
    for widget_id, config in settings.items():
        use = ctx.widget(widget_id)
        if use is None and widget_id in ctx.failed_widgets:
            return None  # the widget's directive failed, and its own problem is reported
        if use is None:
            return f"scenario link {href!r}: no widget with id {widget_id!r} on this page"
        controls = widgets.load(use.name).WIDGET.controls
        for problem in config_problems(controls, {k: value_of(v) for k, v in config.items()}):
            return f"scenario link {href!r}: widget {widget_id}: {setting_message(problem)}"
    return None
