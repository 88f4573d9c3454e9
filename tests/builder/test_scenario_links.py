"""Every number a lesson links to a scenario is one that scenario shows: the widget's view for the lesson's setting
with the link's values on top (as the page computes it) holds that number in a readout, a derivation or a diagram,
or the link sets it on a control. A prose figure and a widget that disagree fail here, not in a student's eyes."""

import html
import json
import re

import pytest

from builder import scenarios
from sim import widgets

LINK = re.compile(r'<a href="(\?[^"]*)" data-scenario="">(.*?)</a>', re.S)
ISLAND = re.compile(r'<section[^>]*\bid="([^"]+)"[^>]*>.*?<script type="application/json" class="widget-data">(.*?)</script>',
                    re.S)
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
TAG = re.compile(r"<[^>]+>")
NOTE = re.compile(r'<span class="seeded-note".*?</span>', re.S)  # a figure from a random trace: its range over traces


def rounds_to(number: str, seen: str) -> bool:
    """A figure from a random trace is printed at the precision the trace allows (builder/seeds.py): 980 stands for
    the widget's 984.22 when some number the widget shows is within half a unit of its last non-zero digit."""
    digits = number.replace(",", "")
    whole, _, decimals = digits.partition(".")
    significant = (whole + decimals).rstrip("0")
    place = len(whole) - len(significant) if significant else 0  # the power of ten of the last non-zero digit
    unit = 10.0 ** place
    return any(abs(float(x.replace(",", "")) - float(digits)) <= unit / 2 for x in NUMBER.findall(seen))


@pytest.fixture(scope="module")
def site(built_site):
    return built_site  # the run's one build of the real site (tests/conftest.py)


def same(a, b) -> bool:
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    return a == b if numbers else str(a) == str(b)


def shown(view: dict) -> str:
    parts = [o["text"] for o in view["outputs"].values()] + list(view["derivations"].values())
    parts += [html.unescape(TAG.sub(" ", markup)) for markup in view["svg"].values()]
    return " ".join(parts)


def test_every_linked_number_is_shown_by_its_scenario(site):
    checked = 0
    for page in sorted(site.glob("**/index.html")):
        text = page.read_text(encoding="utf-8")
        islands = {i: json.loads(html.unescape(data)) for i, data in ISLAND.findall(text)}
        for href, inner in LINK.findall(text):
            settings, target = scenarios.parse(html.unescape(href))
            island = islands[target]
            state = {**island["state"], **{k: scenarios.value_of(v) for k, v in settings[target].items()}}
            view = widgets.render(island["widget"], state)
            assert all(same(view["state"][k], scenarios.value_of(v)) for k, v in settings[target].items()), \
                f"{page}: {href} asks for values the widget does not take"
            seen = shown(view)
            seeded = "sim-value seeded" in inner
            for number in NUMBER.findall(html.unescape(TAG.sub("", NOTE.sub("", inner)))):
                in_view = re.search(rf"(?<![\d.,]){re.escape(number)}(?![\d,]|\.\d)", seen) or (
                    seeded and rounds_to(number, seen))
                on_control = any(float(number.replace(",", "")) == float(v) for v in settings[target].values()
                                 if re.fullmatch(r"-?\d+(\.\d+)?", v))
                assert in_view or on_control, f"{page.relative_to(site)}: {number} in '{inner}' is not shown at {href}"
                checked += 1
    assert checked >= 40  # both languages of kv-cache-serving link their figures
