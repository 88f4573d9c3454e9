"""Every colour a widget's view names is a palette colour the stylesheet defines, light and dark."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sim import widgets
from sim.kit import palette
from sim.page.languages import LANGUAGES

CSS = Path(__file__).resolve().parents[2] / "site" / "static" / "css"
DEFINED = re.compile(r"--sim-([a-z-]+):\s*(light-dark\([^;]*\)|var\(--[a-z-]+\));")
HEX = re.compile(r"#[0-9a-fA-F]{3,8}\b|rgba?\(")


def defined() -> dict[str, str]:
    return dict(DEFINED.findall((CSS / "widgets.css").read_text(encoding="utf-8")))


def test_the_stylesheet_defines_every_palette_name_for_both_themes():
    found = defined()
    assert set(found) == palette.NAMES | {"on-bar"}  # on-bar: text on a coloured bar, styled by its class
    for name, value in found.items():
        # Either a pair (light, dark) or a chrome colour that is itself a pair in site.css.
        assert value.startswith("light-dark(") or value.startswith("var(--"), name


@pytest.mark.parametrize("name", widgets.names())
def test_a_view_names_colours_only_through_the_palette(name):
    for lang in LANGUAGES:
        text = json.dumps(widgets.render(name, {"lang": lang}))
        named = set(re.findall(r"var\(--sim-([a-z-]+)\)", text))
        assert named <= palette.NAMES
        assert not HEX.search(text.replace("&#", "")), f"{name} draws a colour that does not follow the theme"


def test_an_unknown_colour_name_is_refused():
    with pytest.raises(KeyError, match="palette"):
        palette.colour("chartreuse")
