"""Numbers as display text, the same for a widget's readouts and a lesson's prose ({sim} expressions).

Decimal units, as GPU datasheets use (1 GB = 1e9 B); grouped digits (2,304); a real minus sign where a
quantity can be short.
"""

from __future__ import annotations

import math


def fmt_grouped(x: float) -> str:
    """1234567.8 -> "1,234,568"."""
    return f"{x:,.0f}"


def fmt_fixed(x: float, decimals: int = 0) -> str:
    """Grouped digits with a fixed number of decimals: 2303.87 -> "2,304", (0.3412, 2) -> "0.34"."""
    return f"{x:,.{decimals}f}"


def fmt_sig(x: float, digits: int = 3) -> str:
    """Three significant digits without scientific notation for everyday magnitudes: 0.0523, 15.4, 2,304."""
    if x == 0:
        return "0"
    if abs(x) >= 10 ** digits:
        return fmt_grouped(x)
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    if decimals and abs(round(x, decimals)) >= 10 ** (digits - decimals):  # 0.99996 rounds up to 1.00, not 1.000
        decimals -= 1
    return f"{x:,.{decimals}f}"


def fmt_pct(fraction: float, decimals: int = 0) -> str:
    """A fraction as a percentage: (0.0034, 2) -> "0.34%"."""
    return f"{fraction * 100:,.{decimals}f}%"


def fmt_share(fraction: float) -> str:
    """A share as a percentage that reads 0% or 100% only when it is exactly that: 0%, 4.2%, 99.96%."""
    x = fraction * 100
    if x in (0, 100):
        return f"{x:g}%"
    for decimals in range(1, 7):
        text = f"{x:.{decimals}f}"
        if 0 < float(text) < 100:
            return f"{text}%"
    return f"{x:g}%"


def fmt_ms(seconds: float) -> str:
    """A step time in milliseconds with two decimals (15.39 ms), more for sub-millisecond steps."""
    ms = seconds * 1e3
    return f"{ms:,.2f} ms" if ms >= 1 else f"{fmt_sig(ms)} ms"


def fmt_duration(seconds: float) -> str:
    """Milliseconds below a second (15.39 ms), seconds above (7.70 s)."""
    return f"{seconds:,.2f} s" if seconds >= 1 else fmt_ms(seconds)


def fmt_bytes(n: float) -> str:
    """Four significant digits in the largest decimal unit that fits: 51.25 GB, 570 MB, 64 B."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= scale:
            return f"{fmt_sig(n / scale, 4)} {unit}"
    return f"{fmt_grouped(n)} B"


def fmt_gb(n_bytes: float, decimals: int = 2) -> str:
    """Bytes in GB with fixed decimals: 51,247,879,168 -> "51.25 GB"."""
    return f"{n_bytes / 1e9:,.{decimals}f} GB"


def fmt_mb(n_bytes: float, decimals: int = 0) -> str:
    """Bytes in MB with fixed decimals: 301,989,888 -> "302 MB"."""
    return f"{n_bytes / 1e6:,.{decimals}f} MB"


def fmt_flops(n: float) -> str:
    """Four significant digits in the largest unit that fits: 51.25 GFLOP, 1.049 PFLOP."""
    for unit, scale in (("PFLOP", 1e15), ("TFLOP", 1e12), ("GFLOP", 1e9), ("MFLOP", 1e6)):
        if abs(n) >= scale:
            return f"{fmt_sig(n / scale, 4)} {unit}"
    return f"{fmt_grouped(n)} FLOP"


def fmt_signed_bytes(n: float) -> str:
    """fmt_bytes with a real minus sign for memory that is short."""
    return f"−{fmt_bytes(-n)}" if n < 0 else fmt_bytes(n)


def step_time_derivation(e, hw) -> str:
    """How a roofline Estimate's time comes about, with its numbers: max(FLOPs ÷ peak, bytes ÷ bandwidth) when
    every operation is bound the same way (the sum of their times is then that max), else one max per
    operation, added up (the operations run one after another)."""
    peak, bandwidth = f"{hw.peak_flops_per_s / 1e12:g} TFLOP/s", f"{hw.bandwidth_bytes_per_s / 1e12:g} TB/s"
    if not e.mixed:
        return (f"max({fmt_flops(e.flops)} ÷ {peak}, {fmt_bytes(e.bytes)} ÷ {bandwidth}) "
                f"= max({fmt_ms(e.compute_time_s)}, {fmt_ms(e.memory_time_s)}) = {fmt_ms(e.time_s)}")
    terms = " + ".join(f"max({fmt_flops(op.flops)} ÷ {peak}, {fmt_bytes(op.bytes)} ÷ {bandwidth})" for op in e.ops)
    return f"{terms} = {' + '.join(fmt_ms(op.time_s) for op in e.ops)} = {fmt_ms(e.time_s)}"


# --- a figure at the precision its spread allows (builder/seeds.py: figures from random traces) -------------------

def spread_unit(values) -> float | None:
    """The finest place value a figure may show when `values` are what it comes to on different random traces: the
    place of the leading digit of their standard deviation (a spread of 0.3 allows tenths, one of 80 allows tens), as
    a measured value is rounded to the place of its uncertainty. None when they do not differ."""
    values = [float(v) for v in values]
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0  # sample
    if sd <= 1e-12 * max(1.0, *(abs(v) for v in values)):
        return None
    return 10.0 ** math.floor(math.log10(sd) + 1e-9)  # a deviation of exactly 0.1 allows tenths, however it rounds


def _at(x: float, unit: float) -> float:
    """x rounded to a multiple of unit."""
    return round(x / unit) * unit


def _decimals(unit: float) -> int:
    return max(0, -round(math.log10(unit)))


def _coarse_fixed(x: float, decimals: int, unit: float | None) -> str:
    """fmt_fixed(x, decimals) with no digit finer than unit."""
    if unit is None or unit <= 10.0 ** -decimals:
        return fmt_fixed(x, decimals)
    return fmt_fixed(_at(x, unit), min(decimals, _decimals(unit)))


def _coarse_sig(x: float, digits: int, unit: float | None) -> str:
    """fmt_sig(x, digits) with no digit finer than unit."""
    text = fmt_sig(x, digits)
    if unit is None or x == 0:
        return text
    shown = text.replace(",", "")
    place = 10.0 ** -(len(shown.split(".")[1]) if "." in shown else 0)
    if unit <= place:
        return text
    x = _at(x, unit)
    return fmt_fixed(x, _decimals(unit)) if x else "0"


def _coarse_ms(seconds: float, unit: float | None) -> str:
    ms = seconds * 1e3
    if ms < 1:
        return f"{_coarse_sig(ms, 3, unit and unit * 1e3)} ms"
    return f"{_coarse_fixed(ms, 2, unit and unit * 1e3)} ms"


def coarse(formatter, x: float, args=(), kwargs=None, unit: float | None = None) -> str:
    """formatter(x, *args, **kwargs), the display text of a figure, showing no digit finer than `unit` (in x's own
    units, a power of ten: spread_unit()); None: as formatter gives it. For the formatters can_coarsen() accepts."""
    kwargs = kwargs or {}
    if formatter is fmt_sig:
        return _coarse_sig(x, (list(args) + [kwargs.get("digits", 3)])[0], unit)
    if formatter is fmt_fixed:
        return _coarse_fixed(x, (list(args) + [kwargs.get("decimals", 0)])[0], unit)
    if formatter is fmt_grouped:
        return fmt_grouped(_at(x, unit) if unit and unit > 1 else x)
    if formatter is fmt_pct:
        decimals = (list(args) + [kwargs.get("decimals", 0)])[0]
        return _coarse_fixed(x * 100, decimals, unit and unit * 100) + "%"
    if formatter is fmt_ms:
        return _coarse_ms(x, unit)
    if formatter is fmt_duration:
        return f"{_coarse_fixed(x, 2, unit)} s" if x >= 1 else _coarse_ms(x, unit)
    if formatter in (fmt_bytes, fmt_flops):
        units = _BYTE_UNITS if formatter is fmt_bytes else _FLOP_UNITS
        name, scale = next(((n, sc) for n, sc in units if abs(x) >= sc), units[-1])
        return f"{_coarse_sig(x / scale, 4, unit and unit / scale)} {name}"
    if formatter in (fmt_gb, fmt_mb):
        scale, name = (1e9, "GB") if formatter is fmt_gb else (1e6, "MB")
        decimals = (list(args) + [kwargs.get("decimals", 2 if formatter is fmt_gb else 0)])[0]
        return f"{_coarse_fixed(x / scale, decimals, unit and unit / scale)} {name}"
    raise ValueError(f"{formatter.__name__} cannot show a figure at a coarser precision")


def can_coarsen(formatter) -> bool:
    return formatter in (fmt_sig, fmt_fixed, fmt_grouped, fmt_pct, fmt_ms, fmt_duration, fmt_gb, fmt_mb, fmt_bytes,
                         fmt_flops)


_BYTE_UNITS = (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3), ("B", 1))
_FLOP_UNITS = (("PFLOP", 1e15), ("TFLOP", 1e12), ("GFLOP", 1e9), ("MFLOP", 1e6), ("FLOP", 1))


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def fmt_chance(p: float) -> str:
    """A probability to three significant digits, in powers of ten when it is tiny: 0.131, 1.02 × 10⁻¹⁶."""
    if p == 0 or p >= 1e-3:
        return fmt_sig(p)
    exponent = math.floor(math.log10(p))
    mantissa = round(p / 10**exponent, 2)
    if mantissa >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.2f} × 10{str(exponent).translate(SUPERSCRIPT)}"
