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
