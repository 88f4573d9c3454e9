"""A widget's controls: what each one accepts, and the rules that turn any incoming state (URL, slider,
lesson settings) into a valid one. Their words are the widget's: a control's label is the TEXT key of its
name (or `label`), an option's label the key "NAME=VALUE" (or its entry in `names`)."""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from sim.page.languages import DEFAULT, LANGUAGES

LOG_SLIDER_STOPS = 400  # positions on a log-scaled slider, before equal values merge


@dataclass(frozen=True)
class Range:
    """A number set with a slider and a number box, state key `name`, its label the TEXT key `label` (default:
    the name). It takes the values from `min` to `max` in steps of `step`, starting at `default`: whole numbers, or
    decimals when `step` is a decimal (a share from 0.5 to 1 in steps of 0.01). With `log`, the slider's positions
    are spaced evenly in ratio (1 to 1,048,576 tokens), the number box still taking any value in range. A default
    the control cannot take fails the build at its line. `values` is Range.over's: a slider that stops only at
    chosen values (1, 2, 4 or 8 GPUs)."""

    name: str
    default: int
    min: int
    max: int
    step: int = 1
    log: bool = False
    label: str | None = None  # TEXT key of the label; default: the name
    values: tuple[int | float, ...] | None = None  # the only values it takes, ascending (Range.over)
    kind: str = field(default="range", init=False)

    @classmethod
    def over(cls, name: str, values, default, label: str | None = None) -> Range:
        """A slider over chosen `values`, smallest first, starting at `default` (one of them): its positions are
        those values, one step each; a number typed between them becomes the nearest. `name` and `label` as for
        Range."""
        values = tuple(values)
        places = max((-Decimal(str(v)).as_tuple().exponent for v in values if not isinstance(v, int)), default=0)
        step = 1 if places == 0 else float(Decimal(1).scaleb(-places))
        return cls(name, default=default, min=values[0] if values else 0, max=values[-1] if values else 0,
                   step=step, label=label, values=values)

    def __post_init__(self):
        # A default the control cannot show would be replaced silently wherever it is used: refused where it is
        # declared (the build reports the widget module's line).
        if self.values is not None and (len(self.values) < 2 or list(self.values) != sorted(set(self.values))):
            raise ValueError(f"Range {self.name!r}: its values must be two or more, ascending, each once; "
                             f"got {self.values!r}")
        if not self.min < self.max:
            raise ValueError(f"Range {self.name!r}: min {self.min!r} must be below max {self.max!r}")
        if (problem := self.problem(self.default)) is not None:
            raise ValueError(f"Range {self.name!r}: its default is not a value it can take: {problem}")

    def coerce(self, value) -> int:
        """Clamp numbers into range and snap them to the step (or to the nearest of its values, the lower on a
        tie); anything else becomes the default."""
        number = _as_number(value)
        if number is None:
            return self.default
        if self.values is not None:
            return min(self.values, key=lambda v: (abs(v - number), v))
        number = min(max(number, self.min), self.max)
        return self._snap(number)

    def _snap(self, number: float) -> int | float:
        snapped = self.min + round((number - self.min) / self.step) * self.step
        return int(snapped) if self.whole else round(snapped, self.decimals)

    @property
    def whole(self) -> bool:
        return all(isinstance(v, int) for v in (self.min, self.max, self.step))

    @property
    def decimals(self) -> int:
        """Decimal places of the step (0.01 -> 2)."""
        return 0 if self.whole else max(0, -Decimal(str(self.step)).as_tuple().exponent)

    def stops(self) -> tuple[int, ...] | None:
        """Every value a log-scaled slider, or one over chosen values, can take, smallest first; None for a linear
        slider, whose position is its value. The page only looks positions up in this list."""
        if self.values is not None:
            return self.values
        return _log_stops(self.min, self.max, self.step) if self.log else None

    def slider_position(self, value: int) -> int:
        """The slider position that shows `value`: the last stop not above it (log), or the value itself."""
        stops = self.stops()
        if stops is None:
            return value
        return max(0, bisect.bisect_right(stops, value) - 1)

    def problem(self, value) -> str | None:
        number = _as_number(value)
        if self.values is not None:
            if number not in self.values:
                return f"{self.name} must be one of {', '.join(f'{v:,}' for v in self.values)}, got {value!r}"
            return None
        if self.whole:
            if number is None or number != int(number) or not self.min <= number <= self.max:
                return f"{self.name} must be a whole number from {self.min:,} to {self.max:,}, got {value!r}"
        elif number is None or not self.min <= number <= self.max or self._snap(number) != round(number, 12):
            return (f"{self.name} must be a number from {self.min:g} to {self.max:g} in steps of {self.step:g}, "
                    f"got {value!r}")
        return None


@functools.cache
def _log_stops(low: int, high: int, step: int) -> tuple[int, ...]:
    ratio = high / low
    snapped = (low + round((low * ratio ** (k / LOG_SLIDER_STOPS) - low) / step) * step
               for k in range(LOG_SLIDER_STOPS + 1))
    return tuple(sorted({min(max(v, low), high) for v in snapped} | {low, high}))


@dataclass(frozen=True)
class Select:
    """One of several `options` (text, e.g. preset keys), state key `name`, starting at `default`: a drop-down menu
    (`style` "menu") or a row of radio buttons ("buttons", for a few short options). Its label is the TEXT key
    `label` (default: the name); an option's label is the TEXT key "NAME=VALUE", or its entry in `names` for labels
    the same in every language (a GPU's name)."""

    name: str
    default: str
    options: tuple[str, ...]
    style: str = "menu"  # "menu" (<select>) or "buttons" (radio group)
    label: str | None = None  # TEXT key of the label; default: the name
    # Option labels that are the same in every language (a GPU's name); other options are TEXT "NAME=VALUE".
    names: Mapping[str, str] | None = None
    kind: str = field(default="select", init=False)

    def __post_init__(self):
        if len(set(self.options)) != len(self.options) or not self.options:
            raise ValueError(f"Select {self.name!r}: its options must be distinct and at least one: {self.options!r}")
        if self.default not in self.options:
            # A URL or lesson value would fall back to it, and no button or menu entry shows it.
            raise ValueError(f"Select {self.name!r}: its default {self.default!r} is not one of its options "
                             f"{', '.join(self.options)}")

    @property
    def values(self) -> tuple[str, ...]:
        return self.options

    def coerce(self, value) -> str:
        text = _option_text(value)
        return text if text in self.options else self.default

    def problem(self, value) -> str | None:
        if _option_text(value) not in self.options:
            return f"{self.name} must be one of {', '.join(self.options)}; got {value!r}"
        return None


def _option_text(value) -> str | None:
    """A Select's value as text: text as it is, a whole number as its digits (a lesson's YAML and a scenario
    link's value read as YAML turn an option "256" into 256), anything else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


@dataclass(frozen=True)
class Number:
    """A number the student types freely (a prediction), state key `name`, its label the TEXT key `label`
    (default: the name). A number outside `min` to `max` is clamped; empty or invalid input means "no value", and
    so does its `default`, None: the box starts empty."""

    name: str
    min: float = -1e15
    max: float = 1e15
    label: str | None = None  # TEXT key of the label; default: the name
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


def coerce_state(controls, state) -> dict:
    """A complete, valid state: every control present and in range, unknown keys dropped.

    "lang" is carried alongside the controls: it picks the language of the view's texts.
    """
    state = state if isinstance(state, dict) else {}
    clean = {c.name: c.coerce(state.get(c.name)) for c in controls}
    lang = state.get("lang")
    clean["lang"] = lang if lang in LANGUAGES else DEFAULT
    return clean


def changed_param(controls, state) -> str | None:
    """The control the student just changed, when the page says so (state["changed"]); else None.

    Widgets whose controls depend on each other use it: e.g. picking a preset fills in the fields it
    implies, while editing one of those fields switches the preset to "custom".
    """
    changed = state.get("changed") if isinstance(state, dict) else None
    return changed if any(c.name == changed for c in controls) else None


@dataclass(frozen=True)
class SettingProblem:
    """What is wrong with one of a lesson's settings for a widget. A word the widget does not know (a setting's
    name, a Select's option) comes with the words it knows in its place, so that the builder can name the nearest:
    difflib would have to travel to the browser with every import of sim/ (and a new import here renews the
    standard library the site sends, builder/stdlib.py)."""

    control: str | None  # the setting's name; None when the settings are not a mapping at all
    message: str
    unknown: str | None = None  # the word it does not know
    known: tuple[str, ...] = ()  # the words it knows there


def config_problems(controls, config) -> list[SettingProblem]:
    """What is wrong with a lesson's initial settings for a widget, one SettingProblem per setting."""
    if not isinstance(config, dict):
        return [SettingProblem(None, f"widget settings must be a mapping of parameter: value, got "
                                     f"{type(config).__name__}")]
    by_name = {c.name: c for c in controls}
    problems = []
    for name, value in config.items():
        control = by_name.get(name)
        if control is None:
            problems.append(SettingProblem(name, f"unknown parameter {name!r}; known: {', '.join(by_name)}",
                                           str(name), tuple(by_name)))
        elif (problem := control.problem(value)) is not None:
            option = _option_text(value) if isinstance(control, Select) else None
            problems.append(SettingProblem(name, problem, option, control.options if option is not None else ()))
    return problems
