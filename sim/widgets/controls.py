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


@dataclass(frozen=True)
class Number:
    """A number the student types freely (e.g. a prediction); empty or invalid input means "no value" (None)."""

    name: str
    label: dict[str, str]
    min: float = -1e15
    max: float = 1e15
    unit: str = ""
    default: None = None
    kind: str = field(default="number", init=False)

    def coerce(self, value) -> float | None:
        number = _as_number(value)
        if number is None:
            return None
        number = min(max(number, self.min), self.max)
        return int(number) if number.is_integer() else number

    def problem(self, value) -> str | None:
        if value is None:
            return None
        number = _as_number(value)
        if number is None or not self.min <= number <= self.max:
            return f"{self.name} must be empty or a number from {self.min:g} to {self.max:g}, got {value!r}"
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


def changed_param(params, state) -> str | None:
    """The parameter the student just changed, when the page says so (state["changed"]); else None.

    Widgets whose parameters depend on each other use it: e.g. picking a preset fills in the fields it
    implies, while editing one of those fields switches the preset to "custom".
    """
    changed = state.get("changed") if isinstance(state, dict) else None
    return changed if any(p.name == changed for p in params) else None


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
        elif isinstance(p, Number):
            d.update(unit=p.unit, value="" if state[p.name] is None else state[p.name])
        else:
            d["style"] = p.style
            d["options"] = [{"value": v, "label": lbl.get(lang) or lbl["en"]} for v, lbl in p.options]
        out.append(d)
    return out
