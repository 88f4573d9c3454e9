"""Request traces: the presets' lengths, Poisson arrivals, and the same trace for the same seed everywhere."""

import math
import random

import pytest

from sim.serving import traces


@pytest.mark.parametrize("preset, prompt, output", [("orca", (32, 512), (1, 128)), ("chat", (32, 1024), (1, 1024))])
def test_lengths_stay_in_the_presets_bounds(preset, prompt, output):
    pairs = traces.lengths(preset, 5_000, seed=3)
    assert len(pairs) == 5_000
    assert all(isinstance(p, int) and isinstance(o, int) for p, o in pairs)
    assert min(p for p, _ in pairs) == prompt[0] and max(p for p, _ in pairs) == prompt[1]
    assert min(o for _, o in pairs) == output[0] and max(o for _, o in pairs) == output[1]
    assert all(p + o <= traces.MAX_TOKENS for p, o in pairs)


def test_orca_lengths_are_uniform():
    # Orca §6: input U(32, 512), max_gen_tokens U(1, 128): means 272 and 64.5.
    pairs = traces.lengths("orca", 20_000, seed=0)
    assert sum(p for p, _ in pairs) / len(pairs) == pytest.approx(272, rel=0.01)
    assert sum(o for _, o in pairs) / len(pairs) == pytest.approx(64.5, rel=0.015)


def test_presets_are_named():
    assert traces.PRESETS[:2] == ("orca", "chat")
    assert traces.MAX_TOKENS == 2048


def test_the_same_seed_gives_the_same_trace_and_a_prefix_of_a_longer_one():
    assert traces.lengths("orca", 30, 7) == traces.lengths("orca", 30, 7)
    assert traces.lengths("orca", 10, 7) == traces.lengths("orca", 30, 7)[:10]
    assert traces.lengths("orca", 30, 7) != traces.lengths("orca", 30, 8)
    assert traces.requests("chat", 20, 2.0, 1) == traces.requests("chat", 20, 2.0, 1)
    assert traces.requests("chat", 5, 2.0, 1) == traces.requests("chat", 20, 2.0, 1)[:5]


def test_fixed_values_that_pyodide_must_reproduce():
    # Pure-Python draws from random.Random seeded by a string: the same on every CPython, Pyodide's included.
    assert traces.lengths("orca", 3, 0) == [(294, 5), (356, 1), (269, 22)]
    first = traces.requests("chat", 3, 2.0, 1)
    assert [(r.id, r.arrival_s, r.prompt_tokens, r.output_tokens) for r in first] == [
        (0, 0.137586, 926, 229), (1, 0.607942, 446, 862), (2, 1.266109, 1019, 618)]


def test_the_global_generator_is_left_alone():
    random.seed(42)
    before = random.getstate()
    traces.requests("orca", 100, 5.0, 0)
    assert random.getstate() == before


def test_requests_arrive_in_order_with_the_lengths_of_lengths():
    reqs = traces.requests("orca", 200, 4.0, seed=5)
    assert [r.id for r in reqs] == list(range(200))
    assert all(b.arrival_s >= a.arrival_s for a, b in zip(reqs, reqs[1:]))
    assert reqs[0].arrival_s > 0
    # Lengths do not depend on the rate: only the arrival times do.
    assert [(r.prompt_tokens, r.output_tokens) for r in reqs] == traces.lengths("orca", 200, 5)
    faster = traces.requests("orca", 200, 8.0, seed=5)
    assert [(r.prompt_tokens, r.output_tokens) for r in faster] == traces.lengths("orca", 200, 5)
    assert reqs[0].total_tokens == reqs[0].prompt_tokens + reqs[0].output_tokens


def test_arrivals_are_whole_microseconds():
    for t in traces.arrivals(500, 3.7, seed=2):
        assert t * 1_000_000 == pytest.approx(round(t * 1_000_000), abs=1e-6)


@pytest.mark.parametrize("rate", [0.5, 4.0, 50.0])
def test_arrivals_are_a_poisson_process_at_the_rate(rate):
    times = traces.arrivals(20_000, rate, seed=9)
    gaps = [b - a for a, b in zip([0.0, *times], times)]
    mean = sum(gaps) / len(gaps)
    assert mean == pytest.approx(1 / rate, rel=0.03)
    # Exponential gaps: the standard deviation equals the mean, and P(gap > mean) = 1/e.
    sd = math.sqrt(sum((g - mean) ** 2 for g in gaps) / len(gaps))
    assert sd == pytest.approx(mean, rel=0.05)
    assert sum(g > 1 / rate for g in gaps) / len(gaps) == pytest.approx(math.exp(-1), abs=0.015)


def test_no_requests_is_an_empty_trace():
    assert traces.requests("orca", 0, 1.0, 0) == [] and traces.lengths("chat", 0, 0) == []


@pytest.mark.parametrize("call, message", [
    (lambda: traces.lengths("sharegpt", 3, 0), "preset must be one of"),
    (lambda: traces.lengths("orca", -1, 0), "n must be a whole number"),
    (lambda: traces.lengths("orca", 2.5, 0), "n must be a whole number"),
    (lambda: traces.requests("orca", 3, 0, 0), "rate_per_s must be a finite number greater than 0"),
    (lambda: traces.requests("orca", 3, float("nan"), 0), "rate_per_s"),
    (lambda: traces.requests("orca", 3, 1.0, "x"), "seed must be a whole number"),
])
def test_bad_arguments_are_value_errors_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()
