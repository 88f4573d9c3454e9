"""Numbers as display text: the same rules for readouts and prose."""

import pytest

from sim.page.display import (
    coarse,
    fmt_bytes,
    fmt_duration,
    fmt_fixed,
    fmt_gb,
    fmt_grouped,
    fmt_ms,
    fmt_pct,
    fmt_sig,
    fmt_signed_bytes,
    spread_unit,
)


@pytest.mark.parametrize("x, text", [
    (0.0523, "0.0523"), (15.4, "15.4"), (2304, "2,304"), (0, "0"),
    # Rounding up across a power of ten keeps three significant digits, not four.
    (0.99996, "1.00"), (9.9996, "10.0"), (99.96, "100"), (0.0009996, "0.00100"), (999.6, "1,000"),
])
def test_three_significant_digits(x, text):
    assert fmt_sig(x) == text


def test_units_and_signs():
    assert fmt_ms(0.0153881) == "15.39 ms" and fmt_ms(0.0000523) == "0.0523 ms"
    assert fmt_bytes(51_247_879_168) == "51.25 GB" and fmt_bytes(64) == "64 B"
    assert fmt_signed_bytes(-2e9) == "−2.000 GB" and fmt_pct(0.0034, 2) == "0.34%"


# --- a figure from a random trace, at the precision its spread over traces allows (issue #46) ----------------------

@pytest.mark.parametrize("values, unit", [
    ([6.8, 7.0, 7.8, 7.2, 7.4], 0.1),  # a standard deviation of 0.38: tenths
    ([598.7, 406.6, 516.2, 422.1], 10.0),  # 87: tens
    ([1.0, 1.0, 1.0], None),  # the same on every trace: as the formatter gives it
    ([0.7499, 0.75, 0.7501], 0.0001),
])
def test_the_finest_digit_a_spread_allows_is_that_of_its_standard_deviation(values, unit):
    found = spread_unit(values)
    assert found == (None if unit is None else pytest.approx(unit))


@pytest.mark.parametrize("formatter, x, args, unit, text", [
    (fmt_sig, 6.8, (), 0.1, "6.8"),  # not 6.80: the hundredths are the trace's
    (fmt_sig, 6.8, (), 0.01, "6.80"),  # a spread finer than the third digit leaves three
    (fmt_sig, 598.73, (), 10.0, "600"),
    (fmt_sig, 0.75, (), 0.01, "0.75"),
    (fmt_fixed, 1.55, (2,), 0.1, "1.6"),
    (fmt_fixed, 25.0, (1,), 0.1, "25.0"),
    (fmt_pct, 0.1559, (1,), 0.01, "16%"),
    (fmt_pct, 0.1559, (1,), 0.001, "15.6%"),
    (fmt_ms, 0.12254, (), 0.01, "120 ms"),
    (fmt_ms, 0.0179, (), 0.0001, "17.9 ms"),
    (fmt_duration, 5.07, (), 1.0, "5 s"),
    (fmt_duration, 0.59873, (), 0.01, "600 ms"),
    (fmt_grouped, 187, (), 10.0, "190"),
    (fmt_bytes, 85_960_000, (), 1e6, "86 MB"),
    (fmt_gb, 51_247_879_168, (), 1e8, "51.2 GB"),
])
def test_a_figure_shows_no_digit_finer_than_its_spread(formatter, x, args, unit, text):
    assert coarse(formatter, x, args, {}, unit) == text
    assert coarse(formatter, x, args, {}, None) == formatter(x, *args)  # no spread: as the formatter has it
