"""sim/techniques/speculative.py: the rule is exact, the closed forms match a Monte-Carlo run and Leviathan's Table 1, and the
roofline's speed-up keeps the bounds the paper proves."""

from __future__ import annotations

import math

import pytest

from sim import widgets
from sim.physics import cache, model_size, presets, roofline
from sim.serving import scheduler
from sim.techniques import sampling, speculative
from sim.widgets import spec_decode, spec_sampling

ANCHOR, H100, A100 = presets.model("qwen3.8-27b"), presets.hardware("h100-sxm"), presets.hardware("a100-sxm-80gb")
P = (50, 20, 15, 10, 5)
DRAFTS = {"close": (45, 25, 12, 12, 6), "flat": (20, 20, 20, 20, 20), "overconfident": (90, 4, 3, 2, 1),
          "opposite": (5, 10, 15, 20, 50)}


def spec(hw=H100, **kw) -> speculative.Speculation:
    args = {"alpha": 0.8, "gamma": 4, "draft": "mtp", "batch": 1, "context": 1024, **kw}
    return speculative.Speculation(ANCHOR, hw, **args)


# -- the rule ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("q", DRAFTS.values(), ids=DRAFTS)
def test_the_rule_outputs_the_target_not_the_draft(q):
    run = speculative.sample_rule(P, q, 100_000)
    p, qn = speculative.normalise(P), speculative.normalise(q)
    # 100,000 draws over five tokens: the histogram's sampling noise is a few tenths of a percent
    assert run.distance_to_target < 0.006
    assert math.isclose(run.distance_to_draft, speculative.total_variation(p, qn), abs_tol=0.006)
    assert math.isclose(run.accepted_share, run.alpha, abs_tol=0.005)
    assert math.isclose(run.alpha, 1 - speculative.total_variation(p, qn), abs_tol=1e-12)


def test_a_draft_equal_to_the_target_is_always_kept():
    run = speculative.sample_rule(P, P, 1_000)
    assert run.alpha == pytest.approx(1) and run.accepted == 1_000
    assert speculative.residual(speculative.normalise(P), speculative.normalise(P)) == (0.0,) * 5


def test_runs_are_seeded():
    assert speculative.sample_rule(P, DRAFTS["flat"], 500) == speculative.sample_rule(P, DRAFTS["flat"], 500)
    assert speculative.sample_rule(P, DRAFTS["flat"], 500, seed="a") != speculative.sample_rule(
        P, DRAFTS["flat"], 500, seed="b")


@pytest.mark.parametrize("gamma", [1, 4, 8])
def test_eq1_matches_a_monte_carlo_run_of_whole_calls(gamma):
    # Every position draws from the same p and q, so each guess is kept independently with α = Σ min(p, q).
    q = DRAFTS["close"]
    alpha = speculative.acceptance(speculative.normalise(P), speculative.normalise(q))
    run = speculative.speculate(P, q, gamma, 100_000)
    assert run.tokens_per_call == pytest.approx(speculative.expected_tokens(alpha, gamma), rel=0.01)
    # The first token of every call, kept guess or correction, is distributed as p.
    first = [c / run.calls for c in run.first_tokens]
    assert speculative.total_variation(first, speculative.normalise(P)) < 0.006


def test_bad_weights_are_refused():
    for bad in ([0, 0], [1, -1], [], [math.nan, 1]):
        with pytest.raises(ValueError):
            speculative.normalise(bad)


# -- the closed forms ----------------------------------------------------------------------------------------

# Leviathan et al. 2023, Table 1 (c = ĉ = 0): α, γ, arithmetic ("Ops"), speed
TABLE_1 = [(0.6, 2, 1.53, 1.96), (0.7, 3, 1.58, 2.53), (0.8, 2, 1.23, 2.44), (0.8, 5, 1.63, 3.69),
           (0.9, 2, 1.11, 2.71), (0.9, 10, 1.60, 6.86)]


@pytest.mark.parametrize("alpha, gamma, ops, speed", TABLE_1)
def test_leviathan_table_1_cell_by_cell(alpha, gamma, ops, speed):
    assert round(speculative.flops_ratio(alpha, gamma, 0), 2) == ops
    assert round(speculative.paper_speedup(alpha, gamma, 0), 2) == speed
    # the widget shows the same at c = 0 (a custom draft)
    view = widgets.render("spec-decode", {"alpha": alpha, "gamma": gamma, "draft": "custom", "c": 0})
    assert view["outputs"]["paper_speedup"]["text"] == f"{speed:.2f}×"
    assert view["outputs"]["flops_ratio"]["text"] == f"{ops:.2f}×"


def test_the_derived_figures_of_the_facts_sheet():
    assert speculative.expected_tokens(0.8, 4) == pytest.approx(3.3616)
    assert round(speculative.paper_speedup(0.8, 4, 0.05), 2) == 2.80
    best = max(range(1, speculative.MAX_GAMMA + 1), key=lambda g: speculative.paper_speedup(0.8, g, 0.05))
    assert best == 8


@pytest.mark.parametrize("alpha", [0, 0.3, 0.6, 0.9, 1])
@pytest.mark.parametrize("gamma", [1, 3, 10])
@pytest.mark.parametrize("c", [0, 0.05, 0.3])
def test_the_paper_bounds(alpha, gamma, c):
    e = speculative.expected_tokens(alpha, gamma)
    assert 1 <= e <= gamma + 1
    assert speculative.paper_speedup(alpha, gamma, c) <= gamma + 1
    if alpha == 0:
        assert speculative.paper_speedup(alpha, gamma, c) == pytest.approx(1 / (gamma * c + 1))
    # Cor. 3.9: if α > c, some γ gains at least (1 + α) / (1 + c)
    if alpha > c:
        best = max(speculative.paper_speedup(alpha, g, c) for g in range(1, speculative.MAX_GAMMA + 1))
        assert best >= (1 + alpha) / (1 + c) - 1e-12


def test_speedup_tends_to_the_draft_cost_alone_as_alpha_falls():
    for alpha in (1e-3, 1e-6):
        assert speculative.paper_speedup(alpha, 4, 0.1) == pytest.approx(1 / 1.4, rel=2 * alpha)


# -- the roofline ---------------------------------------------------------------------------------------------

def test_verifying_five_tokens_at_batch_1_costs_about_one_decode_step():
    r = spec()
    d = roofline.decode(ANCHOR, H100, batch=1, context=1024)
    assert r.decode_s == pytest.approx(d.time_s, rel=1e-12)  # the same operations as the roofline's decode
    assert r.decode_s < r.verify_s < 1.02 * r.decode_s


def test_past_the_ridge_verify_costs_up_to_gamma_plus_one_decode_steps():
    critical = roofline.critical_batch(ANCHOR, H100)
    big = spec(batch=speculative.MAX_BATCH, context=1)
    assert big.batch * 5 > critical
    assert 2 < big.verify_s / big.decode_s <= 5 + 1e-9
    cost = scheduler.step_cost(ANCHOR, H100)
    # with the state left out, the matmuls alone approach five steps once every step is compute-bound
    assert cost.matmuls_s(big.batch * 5, big.batch * 5) / cost.matmuls_s(big.batch, big.batch) > 4


def test_the_roofline_speedup_is_bounded_like_the_paper():
    for batch in (1, 8, 64, 256, 512):
        for draft in ("mtp", "small", "ngram"):
            r = spec(batch=batch, draft=draft)
            assert r.speedup <= r.paper_speedup + 1e-12  # a verify step never costs less than a decode step
            assert r.speedup <= r.gamma + 1


def test_the_gain_falls_below_one_past_the_ridge_and_break_even_is_the_first_batch_that_does_not_pay():
    r = spec(hw=A100)
    b = r.break_even_batch
    assert b is not None and 1 < b < speculative.MAX_BATCH
    assert r.at(batch=b).speedup <= 1 < r.at(batch=b - 1).speedup
    assert spec(alpha=0).speedup < 1  # nothing kept: the draft's steps and the wider verify are pure cost


def test_best_gamma_is_the_best():
    r = spec(batch=32)
    assert all(r.at(gamma=r.best_gamma).speedup >= r.at(gamma=g).speedup for g in range(1, 17))


def test_the_mtp_draft_is_its_layer_plus_the_shared_lm_head():
    r = spec()
    weights = model_size.mtp_params(ANCHOR) + model_size.lm_head_params(ANCHOR)
    assert r.draft_step.c_hat == pytest.approx(weights / model_size.matmul_params(ANCHOR))
    kv_row = cache.kv_bytes_per_token(ANCHOR) / ANCHOR.full_attention_layers
    read_s = (weights * ANCHOR.weight_bytes_per_param + kv_row * 1025) / H100.bandwidth_bytes_per_s
    assert r.draft_step.step_s == pytest.approx(read_s, rel=1e-9)  # memory-bound at batch 1
    assert model_size.lm_head_params(ANCHOR) > model_size.mtp_params(ANCHOR)  # the head is most of it
    with pytest.raises(ValueError):
        speculative.draft_cost(presets.model("qwen3-32b"), H100, "mtp", 1, 1024)


def test_other_drafts():
    assert spec(draft="ngram").c == 0
    assert spec(draft="small").draft_step.c_hat == speculative.SMALL_DRAFT_SHARE
    custom = spec(draft="custom", c_custom=0.2, batch=64)
    assert custom.c == pytest.approx(0.2)


def test_gamma_plus_one_state_slots_shrink_the_batch_that_fits():
    fits = [b for b in range(1, 200) if spec(batch=b).fits]
    with_one_slot = (H100.memory_bytes - model_size.resident_weight_bytes(ANCHOR)) // (
        1028 * cache.kv_bytes_per_token(ANCHOR) + cache.state_bytes_per_request(ANCHOR))
    assert max(fits) < with_one_slot / 2


# -- the widgets ----------------------------------------------------------------------------------------------

def test_spec_decode_fills_c_from_the_draft_and_editing_c_makes_it_custom():
    view = widgets.render("spec-decode", {"draft": "small", "batch": 8})
    assert view["state"]["c"] == spec_decode.WIDGET.control("c").coerce(spec(draft="small", batch=8).c)
    edited = widgets.render("spec-decode", {"draft": "mtp", "c": 0.3, "changed": "c"})
    assert edited["state"]["draft"] == "custom" and edited["outputs"]["c_value"]["text"] == "0.300"


def test_spec_decode_flags():
    assert widgets.render("spec-decode", {})["flags"] == {"memory": False, "slower": False, "past_ridge": False}
    late = widgets.render("spec-decode", {"hardware": "a100-sxm-80gb", "batch": 200})
    assert late["flags"] == {"memory": True, "slower": True, "past_ridge": True}


def test_spec_sampling_presets_fill_the_weights_and_editing_one_makes_it_custom():
    view = widgets.render("spec-sampling", {"preset": "flat"})
    assert [view["state"][f"q{i}"] for i in range(1, 6)] == list(spec_sampling.PRESETS["flat"][1])
    edited = widgets.render("spec-sampling", {"preset": "flat", "q1": 0, "changed": "q1"})
    assert edited["state"]["preset"] == "custom" and edited["state"]["q1"] == 0
    empty = widgets.render("spec-sampling", {"preset": "custom", **{f"p{i}": 0 for i in range(1, 6)}})
    assert empty["flags"]["empty_p"] and empty["outputs"]["alpha"]["text"] == "30.0%"  # equal p against the default q


@pytest.mark.parametrize(("preset", "temperature"), [("close", 0.1), ("opposite", 0.25), ("overconfident", 1.0),
                                                     ("flat", 2.0)])
def test_spec_sampling_reads_alpha_at_any_temperature_as_the_lessons_quote_it(preset, temperature):
    # The sampling and speculative-decoding lessons quote the five-word drafts' α at t = 0.1 and 0.25: the widget's
    # temperature reshapes p and q alike, and its α, its histogram's target and the run follow.
    p, q = (speculative.normalise(w) for w in spec_sampling.PRESETS[preset])
    if temperature != 1:
        p, q = sampling.heat(p, temperature), sampling.heat(q, temperature)
    view = widgets.render("spec-sampling", {"preset": preset, "temperature": temperature, "samples": 100_000})
    assert view["outputs"]["alpha"]["value"] == pytest.approx(speculative.acceptance(p, q), rel=1e-5)
    assert view["outputs"]["distance_to_target"]["value"] < 0.01  # the output still follows the (reshaped) target
    at_one = widgets.render("spec-sampling", {"preset": preset})["outputs"]["alpha"]["value"]
    if preset == "close" and temperature < 1:
        assert view["outputs"]["alpha"]["value"] > at_one
    if preset == "opposite":
        assert view["outputs"]["alpha"]["value"] < at_one


def test_gains_are_the_speedup_at_each_gamma():
    r = spec(batch=3)
    for batch in (1, 17, 300):
        assert r.gains(batch) == pytest.approx([r.at(batch=batch, gamma=g).speedup for g in range(1, 17)],
                                               rel=1e-12)
