"""The four serving metrics, checked against figures worked out by hand."""

import pytest

from sim.serving import latency


def test_end_to_end_latency_of_the_reference_example():
    r = latency.request(ttft_s=0.2, tpot_s=0.025, output_tokens=500)
    # 200 ms + 25 ms x 500 = 0.2 s + 12.5 s = 12.7 s; TPOT's share 12.5 / 12.7 = 98.43%
    assert r.decode_s == pytest.approx(12.5, rel=1e-12)
    assert r.e2e_s == pytest.approx(12.7, rel=1e-12)
    assert r.tpot_share * 100 == pytest.approx(98.425, abs=0.001)
    assert r.ttft_share * 100 == pytest.approx(1.575, abs=0.001)
    assert r.ttft_share + r.tpot_share == pytest.approx(1)
    assert r.stream_tokens_per_s == pytest.approx(40)


def test_throughput_is_concurrent_requests_over_tpot():
    assert latency.throughput_tokens_per_s(32, 0.025) == pytest.approx(1_280)
    assert latency.throughput_tokens_per_s(1, 0.015) == pytest.approx(66.667, abs=0.001)


def test_cost_per_million_tokens():
    # $2 per hour over 1,280 tok/s x 3,600 s = 4,608,000 tokens an hour: $0.434 per million
    assert latency.cost_per_million_tokens(2, 1_280) == pytest.approx(2 / 4_608_000 * 1e6, rel=1e-12)
    assert latency.cost_per_million_tokens(2, 1_280) == pytest.approx(0.43403, abs=1e-5)
    # Twice the price, or half the throughput, doubles the cost.
    assert latency.cost_per_million_tokens(4, 1_280) == pytest.approx(2 * latency.cost_per_million_tokens(2, 1_280))
    assert latency.cost_per_million_tokens(2, 640) == pytest.approx(2 * latency.cost_per_million_tokens(2, 1_280))


def test_a_chain_of_sequential_calls_adds_up():
    r = latency.request(ttft_s=0.8, tpot_s=0.025, output_tokens=800)
    assert r.e2e_s == pytest.approx(20.8)  # 0.8 s + 25 ms x 800
    assert latency.chain_s(r, 10) == pytest.approx(208)


@pytest.mark.parametrize("call, name", [
    (lambda: latency.request(ttft_s=0, tpot_s=0.025, output_tokens=1), "ttft_s"),
    (lambda: latency.request(ttft_s=0.2, tpot_s=float("nan"), output_tokens=1), "tpot_s"),
    (lambda: latency.request(ttft_s=0.2, tpot_s=0.025, output_tokens=0), "output_tokens"),
    (lambda: latency.throughput_tokens_per_s(0, 0.025), "concurrent"),
    (lambda: latency.cost_per_million_tokens(-1, 1_000), "dollars_per_hour"),
    (lambda: latency.cost_per_million_tokens(2, float("inf")), "tokens_per_s"),
    (lambda: latency.chain_s(latency.request(0.2, 0.025, 500), 0), "calls"),
])
def test_bad_arguments_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=f"^{name} must"):
        call()
