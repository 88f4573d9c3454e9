"""Widget parameters: their description (for the page's controls) and the rules that turn any
incoming state (URL, slider, lesson config) into a valid one."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

LANGUAGES = ("zh", "en")
SLIDER_STEPS = 1000  # positions on a range slider; site/static/js/controls.js uses the same number


@dataclass(frozen=True)
class Range:
    """A whole number set with a slider (log-scaled when `log`) and a number box."""

    name: str
    label: dict[str, str]
    default: int
    min: int
    max: int
    step: int = 1
    log: bool = False
    unit: str = ""
    kind: str = field(default="range", init=False)

    def coerce(self, value) -> int:
        """Clamp numbers into range and snap them to the step; anything else becomes the default."""
        number = _as_number(value)
        if number is None:
            return self.default
        number = min(max(number, self.min), self.max)
        return int(self.min + round((number - self.min) / self.step) * self.step)

    def slider_position(self, value: int) -> int:
        """Where `value` sits on a slider of SLIDER_STEPS steps (log-scaled if `log`); page.js maps back."""
        if self.log:
            t = math.log(value / self.min) / math.log(self.max / self.min)
        else:
            t = (value - self.min) / (self.max - self.min)
        return round(t * SLIDER_STEPS)

    def problem(self, value) -> str | None:
        number = _as_number(value)
        if number is None or number != int(number) or not self.min <= number <= self.max:
            return f"{self.name} must be a whole number from {self.min:,} to {self.max:,}, got {value!r}"
        return None


@dataclass(frozen=True)
class Select:
    """One of several named options (e.g. preset keys): a drop-down menu, or a row of radio buttons."""

    name: str
    label: dict[str, str]
    default: str
    options: tuple[tuple[str, dict[str, str]], ...]  # (value, label per language)
    style: str = "menu"  # "menu" (<select>) or "buttons" (radio group)
    kind: str = field(default="select", init=False)

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(value for value, _ in self.options)

    def coerce(self, value) -> str:
        return value if isinstance(value, str) and value in self.values else self.default

    def problem(self, value) -> str | None:
        if value not in self.values:
            return f"{self.name} must be one of {', '.join(self.values)}; got {value!r}"
        return None


def _as_number(value) -> float | None:
    """A finite float from a number or numeric text, else None (bools are not numbers here)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def coerce_state(params, state) -> dict:
    """A complete, valid state: every parameter present and in range, unknown keys dropped.

    "lang" is carried alongside the parameters: it picks the language of labels in the view.
    """
    state = state if isinstance(state, dict) else {}
    clean = {p.name: p.coerce(state.get(p.name)) for p in params}
    lang = state.get("lang")
    clean["lang"] = lang if lang in LANGUAGES else LANGUAGES[0]
    return clean


def config_problems(params, config) -> list[tuple[str | None, str]]:
    """What is wrong with a lesson's initial configuration for a widget, as (parameter, message) pairs."""
    if not isinstance(config, dict):
        return [(None, f"widget settings must be a mapping of parameter: value, got {type(config).__name__}")]
    by_name = {p.name: p for p in params}
    problems = []
    for name, value in config.items():
        param = by_name.get(name)
        if param is None:
            problems.append((name, f"unknown parameter {name!r}; known: {', '.join(by_name)}"))
        elif (problem := param.problem(value)) is not None:
            problems.append((name, problem))
    return problems


def describe(params, state: dict, lang: str) -> list[dict]:
    """The parameters, with their values in `state`, as plain dicts for the page's templates."""
    out = []
    for p in params:
        d = {"name": p.name, "kind": p.kind, "label": p.label.get(lang) or p.label["en"], "default": p.default,
             "value": state[p.name]}
        if isinstance(p, Range):
            d.update(min=p.min, max=p.max, step=p.step, log=p.log, unit=p.unit, steps=SLIDER_STEPS,
                     position=p.slider_position(state[p.name]))
        else:
            d["style"] = p.style
            d["options"] = [{"value": v, "label": lbl.get(lang) or lbl["en"]} for v, lbl in p.options]
        out.append(d)
    return out
