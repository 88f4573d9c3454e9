"""Argument checks shared by the simulator's public functions."""

import math
import numbers


def check_int(name: str, value, low: int, high: int) -> int:
    """Return value as an int if it is a whole number in [low, high]; else raise ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a whole number from {low:,} to {high:,}, got {value!r}")
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value) or not value.is_integer()):
        raise ValueError(f"{name} must be a whole number from {low:,} to {high:,}, got {value!r}")
    value = int(value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be a whole number from {low:,} to {high:,}, got {value:,}")
    return value


def check_choice(name: str, value, choices) -> str:
    """Return value if it is one of choices; else raise ValueError listing them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(sorted(choices))}; got {value!r}")
    return value


def check_positive(name: str, value) -> float:
    """Return value as a float if it is a finite number > 0; else raise ValueError naming it."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    if not ok:
        raise ValueError(f"{name} must be a finite number greater than 0, got {value!r}")
    return float(value)


def check_fraction(name: str, value) -> float:
    """Return value as a float if it is a share in (0, 1]; else raise ValueError naming it."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and 0 < value <= 1
    if not ok:
        raise ValueError(f"{name} must be a share greater than 0 and at most 1, got {value!r}")
    return float(value)
