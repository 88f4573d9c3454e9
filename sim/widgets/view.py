"""Building blocks of a widget's view: readouts with their display text, and number formats."""

from __future__ import annotations

import math

VIEW_SCHEMA = 1


def view(state: dict, outputs: dict, figures: dict | None = None, svg: dict | None = None,
         flags: dict | None = None, derivations: dict | None = None) -> dict:
    """A view dict in the widget protocol's shape (DESIGN.md §3.2), plus the valid state it was computed
    for, so that the page can show what was actually used when it sent something out of range."""
    return {
        "schema": VIEW_SCHEMA,
        "state": state,
        "outputs": outputs,
        "figures": figures or {},
        "svg": svg or {},
        "flags": flags or {},
        "derivations": derivations or {},
    }


def output(value: float, text: str) -> dict:
    """A readout: the raw number (rounded to 6 significant digits, for stable text) and its display text."""
    return {"value": round_sig(value, 6), "text": text}


def round_sig(x: float, digits: int) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


def fmt_grouped(x: float) -> str:
    """1234567.8 -> "1,234,568"."""
    return f"{x:,.0f}"


def fmt_sig(x: float, digits: int = 3) -> str:
    """Three significant digits without scientific notation for everyday magnitudes: 0.0523, 15.4, 2,304."""
    if x == 0:
        return "0"
    if abs(x) >= 10 ** digits:
        return fmt_grouped(x)
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:,.{decimals}f}"


def fmt_ms(seconds: float) -> str:
    """A step time in milliseconds with two decimals (15.39 ms), more for sub-millisecond steps."""
    ms = seconds * 1e3
    return f"{ms:,.2f} ms" if ms >= 1 else f"{fmt_sig(ms)} ms"


def fmt_bytes(n: float) -> str:
    """Decimal units, as GPU datasheets use: 51.25 GB, 570 MB."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= scale:
            return f"{fmt_sig(n / scale, 4)} {unit}"
    return f"{fmt_grouped(n)} B"


def fmt_flops(n: float) -> str:
    for unit, scale in (("PFLOP", 1e15), ("TFLOP", 1e12), ("GFLOP", 1e9), ("MFLOP", 1e6)):
        if abs(n) >= scale:
            return f"{fmt_sig(n / scale, 4)} {unit}"
    return f"{fmt_grouped(n)} FLOP"


def step_time_derivation(e, hw) -> str:
    """max(FLOPs / peak, bytes / bandwidth) with the numbers of a roofline Estimate on Hardware filled in."""
    return (
        f"max({fmt_flops(e.flops)} ÷ {hw.peak_flops_per_s / 1e12:g} TFLOP/s, "
        f"{fmt_bytes(e.bytes)} ÷ {hw.bandwidth_bytes_per_s / 1e12:g} TB/s) "
        f"= max({fmt_ms(e.compute_time_s)}, {fmt_ms(e.memory_time_s)}) = {fmt_ms(e.time_s)}"
    )
