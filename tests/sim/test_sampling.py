"""sim/techniques/sampling.py: the synthetic distributions by hand, the rules' definitions (temperature on logits, the nucleus as
the smallest set reaching p, min-p relative to the top token, ties by token id), temperature -> 0 converging to
greedy, 10^5 draws within 1% total variation, and the sampling step's bytes and operations against hand counts."""

from __future__ import annotations

import math
import pathlib
import random
import re

import pytest

from sim import widgets
from sim.physics import presets, roofline
from sim.techniques import sampling
from sim.techniques.sampling import Group, Settings
from tests.sim.test_widgets import check_view

V = 248_320  # the anchor's vocabulary (Qwen3.8-27B config.json, vocab_size)
ANCHOR, H100 = presets.model("qwen3.8-27b"), presets.hardware("h100-sxm")


def expand(result: sampling.Result) -> list[float]:
    """Every kept token's sampling probability, one entry per token (248,320 at most)."""
    return [r.p for r in result.runs for _ in range(r.count)]


# -- the synthetic distributions -----------------------------------------------------------------------------

def test_the_anchors_vocabulary_is_the_default():
    assert sampling.anchor_vocab() == ANCHOR.vocab == V
    for shape in sampling.SHAPES:
        assert sum(g.count for g in sampling.groups(shape, V)) == V
        assert sampling.distribution(shape).runs == sampling.apply(sampling.groups(shape, V), Settings()).runs


@pytest.mark.parametrize("shape", sampling.SHAPES)
def test_a_shape_is_64_single_ranks_then_buckets_by_hand(shape):
    gs = sampling.groups(shape, V)
    s = sampling.SHAPES[shape]
    assert [g.count for g in gs[:64]] == [1] * 64 and [g.first for g in gs[:64]] == list(range(1, 65))
    # tail buckets [x, y) with y = round(1.25 x): [65, 81), [81, 101), [101, 126), ...
    assert [(g.first, g.count) for g in gs[64:67]] == [(65, 16), (81, 20), (101, 25)]
    mid = math.sqrt(65 * 80)  # the geometric mean of the first bucket's first and last rank
    by_hand = -s.a * math.log(mid) if mid <= s.knee else -s.a * math.log(s.knee) - s.b * math.log(mid / s.knee)
    assert gs[64].logit == pytest.approx(by_hand, rel=1e-15)
    assert gs[-1].first + gs[-1].count - 1 == V
    assert all(x.logit >= y.logit for x, y in zip(gs, gs[1:]))  # ranked: the head stays above the tail
    assert [g.logit for g in gs[:len(s.lead)]] == list(s.lead)
    assert sampling.groups(shape, V) is gs  # cached


def test_the_jitter_is_seeded_by_the_shape():
    rng = random.Random("sampling peaked")
    s = sampling.SHAPES["peaked"]
    # rank 2 is the first jittered one; the head is sorted afterwards, so compare as sets
    expected = {s.lead[0]} | {-s.a * math.log(r) + rng.gauss(0, sampling.JITTER) if r <= s.knee else
                              -s.a * math.log(s.knee) - s.b * math.log(r / s.knee) + rng.gauss(0, sampling.JITTER)
                              for r in range(2, 65)}
    tail_top = -s.a * math.log(s.knee) - s.b * math.log(65 / s.knee)
    assert {g.logit for g in sampling.groups("peaked", V)[:64]} == {max(u, tail_top) for u in expected}


@pytest.mark.parametrize("shape", sampling.SHAPES)
def test_softmax_is_a_distribution_and_entropy_is_counted_token_by_token(shape):
    result = sampling.distribution(shape)
    tokens = expand(result)
    assert len(tokens) == V and math.fsum(tokens) == pytest.approx(1, abs=1e-12)
    assert result.entropy_bits == pytest.approx(-math.fsum(p * math.log2(p) for p in tokens), rel=1e-12)
    assert result.top_probability == max(tokens)


def test_the_three_shapes_tell_their_story():
    peaked, flat, close = (sampling.distribution(s) for s in ("peaked", "flat", "close"))
    assert peaked.top_probability > 0.85 and peaked.entropy_bits < 1.5
    assert flat.top_probability < 0.05 and flat.entropy_bits > 8
    first, second = close.probability_of_rank(1), close.probability_of_rank(2)
    assert first / second == pytest.approx(math.exp(0.05), rel=1e-12)  # two nearly tied leaders


def test_a_uniform_vocabulary_holds_log2_v_bits():
    assert sampling.uniform_entropy_bits(V) == pytest.approx(17.921840937, abs=1e-9)
    assert sampling.entropy_bits([1 / 8] * 8) == 3


# -- temperature ---------------------------------------------------------------------------------------------

def test_temperature_divides_logits_not_probabilities():
    p = sampling.example()
    assert sum(sampling.EXAMPLE) == 100
    # on the logits: p^(1/t) renormalised; at t = 0.5 the top one goes from 0.35 to 0.1225 / 0.224
    assert sampling.heat(p, 0.5)[0] == pytest.approx(0.1225 / 0.224, rel=1e-12)
    logits = [math.log(q) for q in p]
    by_softmax = [math.exp(u / 0.5) / math.fsum(math.exp(w / 0.5) for w in logits) for u in logits]
    assert sampling.heat(p, 0.5) == pytest.approx(by_softmax, rel=1e-12)
    # on the probabilities: divided by t and renormalised, nothing changes
    divided = [q / 0.5 for q in p]
    assert [q / math.fsum(divided) for q in divided] == pytest.approx(p, rel=1e-12)


@pytest.mark.parametrize("shape", sampling.SHAPES)
def test_temperature_to_zero_converges_to_greedy(shape):
    gs = sampling.groups(shape, V)
    greedy = sampling.apply(gs, Settings(temperature=0))
    assert greedy.kept_tokens == 1 and greedy.runs[0].first == 1 and greedy.top_probability == 1
    distances = []
    for t in (1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.002, 0.001):
        heated = sampling.apply(gs, Settings(temperature=t))
        assert max(heated.runs, key=lambda r: r.p).first == 1  # the argmax never moves
        distances.append(1 - heated.top_probability)  # total variation from the greedy one-hot
    assert distances == sorted(distances, reverse=True)
    assert distances[-1] < 1e-9  # close's two leaders are 0.05 nats apart: e^-50 at t = 0.001


def test_greedy_ignores_truncation_and_keeps_all_of_the_mass():
    for order in sampling.ORDERS:
        r = sampling.distribution("flat", 0, 40, 0.5, 0.3, order)
        assert (r.kept_tokens, r.kept_mass, r.entropy_bits, r.top_probability) == (1, 1.0, 0.0, 1.0)


# -- truncation ----------------------------------------------------------------------------------------------

def test_top_k_by_hand():
    peaked = sampling.distribution("peaked")
    r = sampling.distribution("peaked", top_k=40)
    assert r.kept_tokens == 40 and [x.first for x in r.runs] == list(range(1, 41))
    assert r.kept_mass == pytest.approx(math.fsum(expand(peaked)[:40]), rel=1e-12)
    # past the head: 64 single ranks, then 36 of the first bucket's 16 + 20 + ... (16 of [65, 81), 20 of [81, 101))
    r = sampling.distribution("peaked", top_k=100)
    assert r.kept_tokens == 100 and [(x.first, x.count) for x in r.runs[64:]] == [(65, 16), (81, 20)]
    assert r.kept_mass == pytest.approx(math.fsum(expand(peaked)[:100]), rel=1e-12)


@pytest.mark.parametrize("shape", sampling.SHAPES)
@pytest.mark.parametrize("p", [0.3, 0.5, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("t", [0.7, 1.0, 1.5])
def test_the_nucleus_is_the_smallest_set_reaching_p(shape, p, t):
    full = expand(sampling.distribution(shape, t))
    r = sampling.distribution(shape, t, top_p=p)
    n = r.kept_tokens
    assert math.fsum(full[:n]) >= p - 1e-12  # it reaches p
    assert math.fsum(full[:n - 1]) < p  # one fewer does not: it is the smallest
    assert r.kept_mass == pytest.approx(math.fsum(full[:n]), rel=1e-12)
    assert [x.first for x in r.runs] == sorted(x.first for x in r.runs)  # a prefix of the ranking


def test_ties_go_by_token_id_and_the_nucleus_takes_only_what_it_needs():
    # four tokens, the last three tied at 0.2: top-p 0.5 needs 0.4 + one of them, the lowest id
    gs = (Group(math.log(0.4), 1, 1), Group(math.log(0.2), 3, 2))
    r = sampling.apply(gs, Settings(top_p=0.5))
    assert [(x.first, x.count) for x in r.runs] == [(1, 1), (2, 1)] and r.kept_mass == pytest.approx(0.6)
    assert [(x.first, x.count) for x in sampling.apply(gs, Settings(top_k=2)).runs] == [(1, 1), (2, 1)]
    # min-p keeps everything tied at its threshold: 0.5 x 0.4 = 0.2
    assert sampling.apply(gs, Settings(min_p=0.5)).kept_tokens == 4
    # a sum that reaches p exactly counts as reaching it: 0.4 + 0.2 = 0.6
    assert sampling.apply(gs, Settings(top_p=0.6)).kept_tokens == 2


@pytest.mark.parametrize("shape", sampling.SHAPES)
@pytest.mark.parametrize("base", [0.01, 0.05, 0.1, 0.3])
def test_min_p_keeps_tokens_at_least_base_times_the_top_one(shape, base):
    full = expand(sampling.distribution(shape))
    r = sampling.distribution(shape, min_p=base)
    assert r.kept_tokens == sum(1 for q in full if q >= base * full[0])


def test_min_p_is_not_an_absolute_threshold():
    full = expand(sampling.distribution("flat"))
    relative = sampling.distribution("flat", min_p=0.1).kept_tokens
    assert relative == sum(1 for q in full if q >= 0.1 * full[0]) > 0 == sum(1 for q in full if q >= 0.1)


LESSONS = pathlib.Path(__file__).resolve().parents[2] / "lessons"
QUOTED_MIN_P = re.compile(r"sampling\.distribution\(([^()]*min_p=[^()]*)\)")
SEAM = 0.01  # a quoted min-p's threshold stays this far (relative) from every token's probability


def seam_distance(shape: str = "peaked", temperature: float = 1.0, min_p: float = 0.0) -> float:
    """How far, relative to min-p's threshold, the nearest token's probability lies from it."""
    runs = sampling.softmax(sampling.groups(shape, V), temperature)
    threshold = min_p * max(r.p for r in runs)
    return min(abs(r.p / threshold - 1) for r in runs)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_min_p_the_lesson_quotes_sits_on_a_seam_of_tied_ranks(lang):
    # Tokens of equal probability (a tail bucket, the head's tied floor) cross min-p's threshold together: a
    # setting whose threshold lies within a rounding of them would keep or drop them all on that rounding.
    quoted = set(QUOTED_MIN_P.findall((LESSONS / lang / "sampling.md").read_text(encoding="utf-8")))
    assert len(quoted) >= 3
    for args in quoted:
        distance = eval(f"seam_distance({args})", {"seam_distance": seam_distance})
        assert distance > SEAM, f"sampling.distribution({args}): min-p's threshold is {distance:.2%} from a tie"
    assert seam_distance("flat", min_p=0.1) < 0.002  # the seam this replaced: the head's tied floor, 0.11% above


def test_the_combination_is_top_k_then_top_p_over_the_survivors_then_min_p():
    full = expand(sampling.distribution("flat"))
    r = sampling.distribution("flat", top_k=40, top_p=0.5)
    survivors = full[:40]
    renormalised = [q / math.fsum(survivors) for q in survivors]
    n = sampling.nucleus_size(renormalised, 0.5)
    assert r.kept_tokens == n and r.kept_mass == pytest.approx(math.fsum(full[:n]), rel=1e-12)
    both = sampling.distribution("flat", top_k=40, top_p=0.5, min_p=0.5)
    assert both.kept_tokens == sum(1 for q in full[:n] if q >= 0.5 * full[0])


def test_the_order_of_temperature_and_truncation():
    # at t = 1 the two orders agree
    a = sampling.distribution("flat", 1.0, 0, 0.9, 0.0, "temperature-first")
    b = sampling.distribution("flat", 1.0, 0, 0.9, 0.0, "truncate-first")
    assert [r.first for r in a.runs] == [r.first for r in b.runs]
    assert [r.p for r in a.runs] == pytest.approx([r.p for r in b.runs], rel=1e-12)
    # hot: truncating first keeps the nucleus of t = 1 (1,219 tokens), truncating after keeps the hot one's
    hot_first = sampling.distribution("flat", 1.5, 0, 0.9, 0.0, "temperature-first")
    trunc_first = sampling.distribution("flat", 1.5, 0, 0.9, 0.0, "truncate-first")
    assert trunc_first.kept_tokens == a.kept_tokens < hot_first.kept_tokens
    assert trunc_first.kept_mass == a.kept_mass
    # truncating first then heating: the kept tokens' logits / t, renormalised
    kept = sampling.groups("flat", V)
    logit = {g.first: g.logit for g in kept}
    weights = [math.exp(logit[r.first] / 1.5) for r in trunc_first.runs]
    z = math.fsum(w * r.count for w, r in zip(weights, trunc_first.runs))
    assert [r.p for r in trunc_first.runs] == pytest.approx([w / z for w in weights], rel=1e-9)


def test_top_k_keeps_too_few_on_a_flat_distribution_and_too_many_on_a_peaked_one():
    flat = sampling.distribution("flat", top_k=40)
    assert flat.kept_mass < 0.4  # 40 plausible words hold under 40% of the mass
    full = expand(sampling.distribution("peaked"))
    assert sum(1 for q in full[:40] if q < 0.001) > 10  # many of peaked's 40 are each under 0.1%
    assert sampling.distribution("peaked", top_p=0.9).kept_tokens < 5 < 500 < sampling.distribution(
        "flat", top_p=0.9).kept_tokens
    assert sampling.distribution("peaked", min_p=0.1).kept_tokens == 1


# -- the sampler ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    {"shape": "peaked", "top_k": 40},
    {"shape": "flat", "top_k": 40},
    {"shape": "close", "top_p": 0.95},
    {"shape": "flat", "temperature": 0.7, "min_p": 0.2},
], ids=str)
def test_a_hundred_thousand_draws_are_within_one_percent_total_variation(case):
    r = sampling.distribution(**case)
    ranks = sampling.sample(r, sampling.MAX_SAMPLES)
    assert len(ranks) == 100_000
    assert sampling.total_variation_by_rank(ranks, r) < 0.01


def test_draws_from_the_whole_vocabulary_follow_its_buckets():
    # untruncated, most tokens are never drawn at all; by group (a head rank, or a bucket) the draws still follow p
    r = sampling.distribution("peaked")
    ranks = sampling.sample(r, sampling.MAX_SAMPLES, seed="buckets")
    starts = [x.first for x in r.runs]
    tally = [0] * len(r.runs)
    for rank in ranks:
        tally[max(i for i, s in enumerate(starts) if s <= rank)] += 1
    gap = math.fsum(abs(c / len(ranks) - x.p * x.count) for c, x in zip(tally, r.runs)) / 2
    assert gap < 0.01


def test_draws_are_seeded_and_the_widgets_bins_equal_the_tokens():
    r = sampling.distribution("flat", 1.5)
    assert sampling.sample(r, 500, "a") == sampling.sample(r, 500, "a") != sampling.sample(r, 500, "b")
    assert sampling.drawn_shares(r, 5_000, "x") == sampling.histogram(sampling.sample(r, 5_000, "x"))
    with pytest.raises(ValueError):
        sampling.sample(r, 0)


def test_bad_settings_are_refused():
    for bad in ({"temperature": -1}, {"temperature": 3}, {"top_k": -1}, {"top_p": 0}, {"min_p": 2},
                {"order": "sideways"}, {"temperature": True}):
        with pytest.raises(ValueError):
            Settings(**bad)


def test_the_worked_examples():
    p = sampling.example()
    assert sampling.nucleus_size(p, 0.9) == 5  # 0.35 + 0.25 + 0.15 + 0.10 = 0.85 < 0.9 <= 0.91
    assert sampling.min_p_size(p, 0.2) == 4  # >= 0.2 x 0.35 = 0.07
    assert sampling.heat(p, 2)[0] == pytest.approx(math.sqrt(0.35) / math.fsum(math.sqrt(q) for q in p))


# -- published figures and floating point --------------------------------------------------------------------

def test_holtzman_table_1_cells():
    assert sampling.holtzman("greedy", "repetition") == 73.66 and sampling.holtzman("human", "repetition") == 0.28
    assert sampling.holtzman("beam-16", "repetition") == 28.94
    assert sampling.holtzman("human", "perplexity") == 12.38 and sampling.holtzman("nucleus-0.95", "perplexity") == 13.13
    assert sampling.holtzman("greedy", "huse") is None and sampling.holtzman("nucleus-0.95", "huse") == 0.97
    with pytest.raises(ValueError):
        sampling.holtzman("greedy", "bleu")


def test_leviathan_table_3_argmax_against_sampling():
    assert len(sampling.LEVIATHAN_TABLE_3) == 16
    # higher at argmax in 12 rows; equal in 3 (GPT-like's unigram and bigram, LaMDA's 2B draft); lower in 1
    # (GPT-like's 6M draft: 0.88 at argmax, 0.89 at t = 1)
    assert sampling.leviathan_counts() == (12, 3, 1)
    assert sampling.LEVIATHAN_TABLE_3[("T5-XXL (EnDe)", "T5-small")] == (0.75, 0.62)


def test_vllm_v1_applies_min_p_before_top_k_and_top_p():
    # issue #46: vLLM V1's sampler runs temperature, min-p, then top-k and top-p (vllm/v1/sample/sampler.py)
    chain = sampling.distribution("peaked", 1.3, 0, 0.9, 0.01)
    vllm = sampling.distribution("peaked", 1.3, 0, 0.9, 0.01, "vllm-v1")
    assert (chain.kept_tokens, vllm.kept_tokens) == (11, 3)
    # by hand: min-p on the distribution at t = 1.3, then the nucleus of what is left, renormalised
    seen = sampling.softmax(sampling.groups("peaked", V), 1.3)
    survivors = sampling.min_p(seen, 0.01)
    assert [(r.first, r.count) for r in vllm.runs] == [
        (r.first, r.count) for r in sampling.top_p(sampling._renormalised(survivors), 0.9)]
    assert sum(r.p * r.count for r in vllm.runs) == pytest.approx(1, rel=1e-12)
    # without min-p the two orders are the same rule
    for k, p in ((0, 0.9), (40, 1.0), (40, 0.8)):
        assert sampling.distribution("flat", 1.3, k, p, 0.0, "vllm-v1") == sampling.distribution("flat", 1.3, k, p)


def test_the_order_of_a_sum_changes_its_last_bit():
    assert sampling.left_to_right(sampling.ORDER_EXAMPLE) == 0.6000000000000001
    assert sampling.right_to_left(sampling.ORDER_EXAMPLE) == 0.6
    assert sampling.bf16_spacing(20.0) == 0.125 and sampling.bf16_spacing(1.5) == 2 ** -7


# -- what it costs a server ----------------------------------------------------------------------------------

def test_bytes_and_operations_per_logit_by_hand():
    # greedy: argmax, 4 B read, 1 comparison
    assert (sampling.bytes_per_logit("greedy"), sampling.ops_per_logit("greedy")) == (4, 1)
    # top-k: temperature (4 + 4 B, 1 op) + select (4 counting reads + 1 gathering read = 20 B; 4 x 2 + 1 = 9 ops)
    assert (sampling.bytes_per_logit("top-k"), sampling.ops_per_logit("top-k")) == (28, 10)
    # top-p by a full sort: temperature (8 B, 1) + softmax (8 + 4 B, 7) + sort (4 passes x (8 + 8) B, 4 x 3) + scan
    # (4 B, 2) = 88 B and 22 ops
    assert (sampling.bytes_per_logit("top-p-sort"), sampling.ops_per_logit("top-p-sort")) == (88, 22)
    # top-p without a sort: temperature (8, 1) + softmax (12, 7) + 2 rounds of 2 reads (16 B, 2 x 4 ops)
    assert (sampling.bytes_per_logit("top-p-reject"), sampling.ops_per_logit("top-p-reject")) == (36, 16)


def test_a_sampling_step_by_hand():
    st = sampling.step("qwen3.8-27b", "h100-sxm", 256, "top-p-sort")
    assert st.bytes == 256 * V * 88 == 5_594_152_960 and st.ops == 256 * V * 22
    assert st.logits_bytes == 256 * V * 4
    assert st.time_s == pytest.approx(5_594_152_960 / 3.35e12, rel=1e-15)  # 1.67 ms
    assert st.decode_s == roofline.decode(ANCHOR, H100, batch=256, context=1024).time_s
    assert st.share == pytest.approx(st.time_s / (st.time_s + st.decode_s), rel=1e-15)
    assert st.intensity == 0.25


def test_per_request_settings_in_one_batch():
    # one request asks for top-p among 63 greedy ones: the whole batch sorted (and every row's argmax) or one row
    whole = sampling.step("qwen3.8-27b", "h100-sxm", 64, "top-p-sort", "one-whole")
    split = sampling.step("qwen3.8-27b", "h100-sxm", 64, "top-p-sort", "one-split")
    assert whole.bytes == 64 * V * (88 + 4) and split.bytes == V * 88 + 63 * V * 4
    assert sampling.step("qwen3.8-27b", "h100-sxm", 1, "top-p-sort", "one-whole").bytes == V * 88
    assert sampling.step("qwen3.8-27b", "h100-sxm", 64, "greedy", "one-whole").bytes == 64 * V * 4


def test_sampling_stops_being_negligible_at_a_batch():
    b = sampling.share_from_batch("qwen3.8-27b", "h100-sxm", "top-p-sort", 0.01)
    assert sampling.step("qwen3.8-27b", "h100-sxm", b, "top-p-sort").share >= 0.01
    assert sampling.step("qwen3.8-27b", "h100-sxm", b - 1, "top-p-sort").share < 0.01
    assert sampling.share_from_batch("qwen3.8-27b", "h100-sxm", "greedy", 0.01) is None
    shares = [sampling.step("qwen3.8-27b", "h100-sxm", b, "top-p-sort").share for b in (1, 8, 64, 512)]
    assert shares == sorted(shares) and shares[0] < 0.001


def test_bad_steps_are_refused():
    for bad in ({"batch": 0}, {"method": "beam"}, {"mix": "some"}, {"context": -1}):
        args = {"m": ANCHOR, "hw": H100, "batch": 8, "method": "greedy", **bad}
        with pytest.raises(ValueError):
            sampling.Step(**args)


# -- the widgets ---------------------------------------------------------------------------------------------

def test_the_sampling_widgets_default_is_the_untouched_peaked_distribution():
    v = widgets.render("sampling", {"lang": "en"})
    check_view(v)
    r = sampling.distribution("peaked")
    out = v["outputs"]
    assert out["kept_tokens"] == {"value": V, "text": "248,320"} and out["kept_mass"]["text"] == "100%"
    assert out["top_probability"]["value"] == pytest.approx(r.top_probability, rel=1e-5)
    assert out["entropy_bits"]["value"] == pytest.approx(r.entropy_bits, rel=1e-5)
    assert v["flags"] == {"greedy": False, "off": True, "order_same": True, "long_tail": False}
    bars = v["figures"]["figure"]["data"]
    assert [len(b["y"]) for b in bars] == [21, 21, 21] and bars[0]["x"][-1] == "rest"
    assert sum(bars[2]["y"]) == pytest.approx(1, abs=1e-4)


def test_the_sampling_widget_answers_each_control():
    flat = widgets.render("sampling", {"distribution": "flat", "top_k": 40, "lang": "en"})
    check_view(flat)
    r = sampling.distribution("flat", top_k=40)
    assert flat["outputs"]["kept_tokens"]["value"] == 40
    assert flat["outputs"]["kept_mass"]["value"] == pytest.approx(r.kept_mass, rel=1e-5)
    assert flat["derivations"]["kept_mass"].startswith("Σ p over the 40 tokens kept")
    hot = widgets.render("sampling", {"distribution": "flat", "temperature": 1.5, "top_p": 0.95, "lang": "en"})
    assert hot["outputs"]["kept_tokens"]["value"] == sampling.distribution("flat", 1.5, top_p=0.95).kept_tokens
    assert hot["flags"]["long_tail"]
    greedy = widgets.render("sampling", {"temperature": 0, "top_k": 5})
    assert greedy["flags"]["greedy"] and greedy["outputs"]["kept_tokens"]["value"] == 1
    assert greedy["outputs"]["entropy_bits"]["text"] == "0.00 比特"
    later = widgets.render("sampling", {"distribution": "flat", "temperature": 1.5, "top_p": 0.9,
                                        "order": "truncate-first"})
    assert later["outputs"]["kept_tokens"]["value"] == sampling.distribution("flat", top_p=0.9).kept_tokens
    runs = [widgets.render("sampling", {"distribution": "flat", "run": n})["figures"]["figure"]["data"][2]["y"]
            for n in (1, 1, 2)]
    assert runs[0] == runs[1] != runs[2]


def test_the_sampling_cost_widgets_default_by_hand():
    v = widgets.render("sampling-cost", {"lang": "en"})
    check_view(v)
    st = sampling.step("qwen3.8-27b", "h100-sxm", 64, "top-p-sort")
    out = v["outputs"]
    assert out["sampling_bytes"]["value"] == pytest.approx(64 * V * 88, rel=5e-6)  # a readout keeps 6 digits
    assert out["sampling_ms"]["value"] == pytest.approx(64 * V * 88 / 3.35e12 * 1e3, rel=1e-5)
    assert out["decode_ms"]["value"] == pytest.approx(st.decode_s * 1e3, rel=1e-5)
    assert out["share"]["value"] == pytest.approx(st.share, rel=1e-5)
    assert out["from_batch"]["value"] == sampling.share_from_batch("qwen3.8-27b", "h100-sxm", "top-p-sort", 0.01)
    assert v["derivations"]["sampling_bytes"] == "64 × 248,320 × 88 B = 1.399 GB"
    assert not v["flags"]["whole"]
    lines = v["figures"]["curve"]["data"]
    assert [line["name"] for line in lines[:4]] == ["Greedy", "top-k (selection)", "top-p (full sort)",
                                                    "top-p (no sort)"]


def test_the_sampling_cost_widget_answers_each_control():
    whole = widgets.render("sampling-cost", {"mix": "one-whole", "lang": "en"})
    check_view(whole)
    assert whole["flags"]["whole"]
    assert whole["outputs"]["sampling_bytes"]["value"] == pytest.approx(64 * V * 92, rel=5e-6)
    assert whole["outputs"]["extra"]["value"] == pytest.approx(64 * V * 92 - (V * 88 + 63 * V * 4), rel=5e-6)
    small = widgets.render("sampling-cost", {"model": "llama-2-7b", "batch": 1024, "method": "greedy"})
    assert small["outputs"]["sampling_bytes"]["value"] == pytest.approx(1024 * 32_000 * 4, rel=5e-6)
    assert small["outputs"]["from_batch"]["value"] == 0
    tiny = widgets.render("sampling-cost", {"batch": 1, "method": "greedy", "lang": "en"})
    assert tiny["outputs"]["sampling_ms"]["text"] == "0.297 µs"  # 993,280 B / 3.35 TB/s


@pytest.mark.parametrize("name", ["sampling", "sampling-cost"])
def test_the_english_views_have_no_chinese(name):
    view = widgets.render(name, {"lang": "en", "mix": "one-whole", "distribution": "flat"})
    text = str(view["outputs"]) + str(view["derivations"]) + str(view["figures"])
    assert not re.search(r"[\u4e00-\u9fff]", text)
