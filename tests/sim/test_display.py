"""Numbers as display text: the same rules for readouts and prose."""

import pytest

from sim.display import fmt_bytes, fmt_ms, fmt_pct, fmt_sig, fmt_signed_bytes


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
