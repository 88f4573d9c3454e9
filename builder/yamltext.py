"""YAML as the builder reads it: with libyaml's parser where PyYAML has it (its wheels on PyPI do), and the same
safe constructors. Why: the pure-Python parser took a quarter of a second of every rebuild under `build.py serve`
(the catalogs, the plan, the glossary, the maps and every lesson's front matter, in a fresh process each save).

A document libyaml refuses is read again by the pure-Python parser, whose error is the one raised: its messages
and lines are the ones authors have been shown (libyaml puts an unclosed bracket's error at the end of the text,
not at the bracket)."""

from __future__ import annotations

import yaml

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def compose(text: str) -> yaml.Node | None:
    """The document's node tree, with the line of every node."""
    try:
        return yaml.compose(text, Loader=LOADER)
    except yaml.YAMLError:
        return yaml.compose(text, Loader=yaml.SafeLoader)


def safe_load(text: str):
    """The document as plain Python values (yaml.safe_load)."""
    try:
        return yaml.load(text, Loader=LOADER)  # noqa: S506 - a safe loader, C or Python
    except yaml.YAMLError:
        return yaml.safe_load(text)
