"""KV layout: where many requests' KV cache lives, contiguous or paged; the invariants and the lesson's figures."""

import dataclasses
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.physics import cache, model_size, presets, roofline
from sim.serving import kv_layout, scheduler, traces
from sim.serving.kv_layout import NEVER_USED, RESERVED, SHARED, TOKEN, Request

ANCHOR, QWEN32B, LLAMA = (presets.model(k) for k in ("qwen3.8-27b", "qwen3-32b", "llama-2-7b"))
# The H100 at its datasheet's 80 GB as 80e9 bytes, so that the figures below do not move with the preset's memory.
H100 = dataclasses.replace(presets.hardware("h100-sxm"), memory_bytes=80e9)
ANCHOR_KV, ANCHOR_STATE = 65_536, 48 * 48 * 128 * 128 * 4  # 16 layers x K,V x 4 heads x 256 x 2 B; FP32 GDN state
ANCHOR_FREE = 80_000_000_000 - 55_562_855_904  # H100 beside the anchor's whole checkpoint: 24,437,144,096 B
QWEN32B_FREE = 80_000_000_000 - 65_524_246_528

MODELS = [presets.model(k) for k in presets.model_keys()]
GPUS = [presets.hardware(k) for k in presets.hardware_keys()]


# --- requests, by hand ------------------------------------------------------------------------------------------

def test_one_request_by_hand_under_every_policy():
    # Prompt 10, output 2: step 1 holds 11 token states, step 2 holds 12 (true length 12).
    r = [Request(0, 10, 2)]
    u = kv_layout.usage(r, "contiguous-max")
    assert (u.steps, u.token_slot_steps, u.allocated_slot_steps) == (2, 23, 2 * 2048)
    assert u.reserved_slot_steps == 1 and u.never_used_slot_steps == 2 * (2048 - 12)
    pow2 = kv_layout.usage(r, "contiguous-pow2")  # prompt 10 + output 2 rounded to a power of two: 12
    assert pow2.allocated_slot_steps == 2 * 12 and pow2.never_used_slot_steps == 0
    oracle = kv_layout.usage(r, "contiguous-oracle")
    assert oracle.allocated_slot_steps == 24 and oracle.never_used_slot_steps == 0 and oracle.reserved_slot_steps == 1
    paged = kv_layout.usage(r, "paged", 16)  # one block of 16 in both steps; slots 12..15 never used
    assert (paged.allocated_slot_steps, paged.token_slot_steps, paged.reserved_slot_steps,
            paged.never_used_slot_steps) == (32, 23, 1, 8)
    assert paged.table_entries_per_sequence == 1
    four = kv_layout.usage(r, "paged", 4)  # blocks: 3 (12 slots) in both steps: 11 and 12 tokens
    assert (four.allocated_slot_steps, four.reserved_slot_steps, four.never_used_slot_steps) == (24, 1, 0)


def test_orca_pow2_rounds_the_output_up_to_a_power_of_two_and_adds_the_prompt():
    # vLLM §6.1: a true output of 25 tokens is given 32 slots for outputs; the prompt is reserved as it is.
    assert kv_layout.reservation("contiguous-pow2", 100, 25) == 100 + 32
    assert kv_layout.reservation("contiguous-pow2", 100, 32) == 132 and kv_layout.reservation("contiguous-pow2", 7, 1) == 8
    # not the power of two of the whole length (128 + 32 = 160 would round to 256)
    assert kv_layout.reservation("contiguous-pow2", 128, 25) == 160
    # never past the max sequence length: 1,500 + 512 would be 2,012; 1,800 + 256 is capped at 2,048
    assert kv_layout.reservation("contiguous-pow2", 1500, 300) == 2012
    assert kv_layout.reservation("contiguous-pow2", 1800, 248) == traces.MAX_TOKENS
    assert kv_layout.reservation("contiguous-max", 100, 25) == 2048
    assert kv_layout.reservation("contiguous-oracle", 100, 25) == 125
    u = kv_layout.usage([Request(0, 100, 25)], "contiguous-pow2")
    assert u.allocated_slot_steps == 25 * 132 and u.never_used_slot_steps == 25 * (132 - 125)
    with pytest.raises(ValueError, match="policy must be one of"):
        kv_layout.reservation("paged", 100, 25)


def test_the_issues_pow2_figures():
    # Issue 22: the Orca-trace token share of Orca(Pow2) is 83.1 % (61.0 % when the whole length was rounded), and
    # Qwen3-32B on an H100 of 80e9 bytes fits 143 requests (105 before).
    assert kv_layout.fit(ANCHOR, H100, "orca", "contiguous-pow2").token_share == pytest.approx(0.831, rel=0.01)
    assert kv_layout.fit(QWEN32B, H100, "orca", "contiguous-pow2").max_requests == pytest.approx(143, rel=0.01)


def brute_force(requests, policy, b, share=True):
    """Slot by slot, step by step: (tokens, reserved, never used, allocated) summed over steps, the shared prefix
    left out, each physical slot counted once."""
    tokens = reserved = never = 0
    for r in requests:
        q, length = r.prompt_total, r.length
        for j in range(1, r.output + 1):
            w = q + j
            if policy != "paged":
                hold = kv_layout.reservation(policy, q, r.output)
                slots = [(pos, r.samples) for pos in range(hold)]
            else:
                prefix_end = r.prefix // b * b if share else 0
                prompt_end = q // b * b if share else 0
                end = -(-w // b) * b
                # A shared slot is one physical slot: counted once for the request, not per sample.
                slots = [(pos, 1) for pos in range(prefix_end, prompt_end)]
                slots += [(pos, r.samples) for pos in range(prompt_end, end)]
            for pos, copies in slots:
                if pos < w:
                    tokens += copies
                elif pos < length:
                    reserved += copies
                else:
                    never += copies
    return tokens, reserved, never


requests_strategy = st.integers(0, 64).flatmap(lambda prefix: st.integers(1, 4).flatmap(lambda n: st.lists(
    st.tuples(st.integers(1, 200), st.integers(1, 60)).map(lambda po: Request(prefix, po[0], po[1], n)),
    min_size=1, max_size=5)))


@settings(max_examples=60, deadline=None)
@given(requests_strategy, st.sampled_from(kv_layout.POLICIES), st.sampled_from(kv_layout.BLOCK_SIZES[:6]),
       st.booleans())
def test_the_closed_form_equals_counting_every_slot_of_every_step(requests, policy, b, share):
    u = kv_layout.usage(requests, policy, b, share)
    assert (u.token_slot_steps, u.reserved_slot_steps, u.never_used_slot_steps) == brute_force(requests, policy, b, share)
    assert u.steps == sum(r.output for r in requests)
    if policy == "paged":
        entries = sum(r.samples * -(-(r.prompt_total + j) // b) for r in requests for j in range(1, r.output + 1))
        assert u.table_entry_steps == entries


def test_every_slot_a_request_holds_is_in_exactly_one_state():
    u = kv_layout.trace_usage("chat", "paged", 32, prefix_tokens=100, samples=3)
    assert u.allocated_slot_steps == u.token_slot_steps + u.reserved_slot_steps + u.never_used_slot_steps
    assert u.token_share + u.reserved_share + u.never_used_share == pytest.approx(1, abs=1e-12)


def test_trace_requests_are_the_traces_lengths_with_the_prefix_in_front():
    plain = kv_layout.trace_requests("orca")
    assert len(plain) == kv_layout.DEFAULT_REQUESTS == 1000
    assert [(r.prompt, r.output) for r in plain] == traces.lengths("orca", 1000, 0)
    with_prefix = kv_layout.trace_requests("chat", prefix_tokens=512, samples=2)
    raw = traces.lengths("chat", 1000, 0)
    assert all(r.prefix == 512 and r.samples == 2 and r.prompt == p for r, (p, _) in zip(with_prefix, raw))
    assert all(r.length <= traces.MAX_TOKENS for r in with_prefix)
    assert all(r.output == min(o, 2048 - 512 - p) for r, (p, o) in zip(with_prefix, raw))
    assert any(r.output < o for r, (_, o) in zip(with_prefix, raw))  # a long chat request stops at the limit


@pytest.mark.parametrize("call, message", [
    (lambda: kv_layout.usage([Request(0, 1, 1)], "buddy"), "policy must be one of"),
    (lambda: kv_layout.usage([Request(0, 1, 1)], "paged", 3), "block_size must be a power of two"),
    (lambda: kv_layout.usage([Request(0, 1, 1)], "paged", 512), "block_size must be a whole number from 1 to 256"),
    (lambda: kv_layout.usage([], "paged"), "at least one request"),
    (lambda: kv_layout.usage([Request(0, 1, 1), Request(8, 1, 1)], "paged"), "same prefix"),
    (lambda: kv_layout.trace_usage("sharegpt", "paged"), "trace must be one of"),
    (lambda: kv_layout.trace_usage("orca", "paged", prefix_tokens=513), "prefix_tokens must be a whole number"),
    (lambda: kv_layout.trace_usage("orca", "paged", samples=0), "samples must be a whole number"),
    (lambda: kv_layout.preemption(ANCHOR, H100, tokens=0), "tokens must be a whole number"),
    (lambda: kv_layout.preemption(ANCHOR, H100, tokens=8).swap_s(0), "link_bytes_per_s must be"),
    (lambda: Request(0, 10, 0), "output must be a whole number from 1 to 2,038"),
    (lambda: Request(0, 2000, 100), "output must be a whole number from 1 to 48"),
    (lambda: Request(0, 0, 5), "prompt must be a whole number from 1"),
    (lambda: Request(0, 10, 5, samples=9), "samples must be a whole number from 1 to 8"),
])
def test_bad_arguments_are_value_errors_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- orderings and invariants of the shares and of what fits -----------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(requests_strategy)
def test_oracle_holds_more_tokens_than_pow2_than_max(requests):
    share = {p: kv_layout.usage(requests, p).token_share for p in kv_layout.CONTIGUOUS}
    assert share["contiguous-oracle"] >= share["contiguous-pow2"] >= share["contiguous-max"]


@pytest.mark.parametrize("trace", traces.PRESETS)
def test_orderings_on_the_default_requests(trace):
    share = {p: kv_layout.trace_usage(trace, p).token_share for p in kv_layout.POLICIES}
    assert share["paged"] > share["contiguous-oracle"] > share["contiguous-pow2"] > share["contiguous-max"]


@pytest.mark.parametrize("m", MODELS, ids=lambda m: m.key)
@pytest.mark.parametrize("hw", GPUS, ids=lambda hw: hw.key)
@pytest.mark.parametrize("trace", traces.PRESETS)
def test_paged_fits_at_least_as_many_requests_as_every_contiguous_policy(m, hw, trace):
    fits = {p: kv_layout.fit(m, hw, trace, p).max_requests for p in kv_layout.POLICIES}
    assert fits["paged"] >= max(fits[p] for p in kv_layout.CONTIGUOUS)
    assert fits["contiguous-oracle"] >= fits["contiguous-pow2"] >= fits["contiguous-max"] > 0


@settings(max_examples=60, deadline=None)
@given(requests_strategy, st.sampled_from(MODELS), st.sampled_from(GPUS))
def test_pages_of_one_token_fit_at_least_what_the_oracle_fits(requests, m, hw):
    # A block of one token holds exactly what has been written, never more than the true length.
    u1 = kv_layout.usage(requests, "paged", 1, share=False)
    oracle = kv_layout.usage(requests, "contiguous-oracle")
    assert u1.allocated_slot_steps <= oracle.allocated_slot_steps
    assert kv_layout.fit_usage(u1, m, hw).max_requests >= kv_layout.fit_usage(oracle, m, hw).max_requests


@pytest.mark.parametrize("trace", traces.PRESETS)
@pytest.mark.parametrize("prefix, samples", [(0, 1), (80, 1), (341, 4)])
def test_block_size_one_leaves_no_fragmentation(trace, prefix, samples):
    u = kv_layout.trace_usage(trace, "paged", 1, prefix, samples)
    assert u.never_used_slot_steps == 0 and u.reserved_slot_steps == 0 and u.token_share == 1
    snap = kv_layout.trace_snapshot(trace, "paged", 1, prefix, samples)
    assert snap.slots(RESERVED) == snap.slots(NEVER_USED) == 0


@settings(max_examples=40, deadline=None)
@given(requests_strategy, st.sampled_from(kv_layout.BLOCK_SIZES))
def test_paged_waste_is_below_one_block_per_sequence(requests, b):
    u = kv_layout.usage(requests, "paged", b)
    assert u.empty_slots_per_sequence < b
    # at every step, not only on average: a sequence's blocks end less than a block past what it has written
    for r in requests:
        for j in (1, r.output):
            w = r.prompt_total + j
            assert 0 <= -(-w // b) * b - w < b


@pytest.mark.parametrize("trace", traces.PRESETS)
def test_paged_waste_on_the_default_requests_is_about_half_a_block(trace):
    for b in kv_layout.BLOCK_SIZES:
        empty = kv_layout.trace_usage(trace, "paged", b).empty_slots_per_sequence
        assert empty < b and empty == pytest.approx((b - 1) / 2, rel=0.05, abs=0.02)


def fits_exactly(f: kv_layout.Fit, n: int) -> bool:
    """n requests of this usage fit beside the checkpoint, in whole bytes (no float rounding)."""
    u = f.usage
    kv_and_state = Fraction(u.allocated_slot_steps * f.kv_bytes_per_token, u.steps) + u.samples * f.state_bytes_per_sequence
    return n * kv_and_state + f.shared_prefix_bytes + f.prefix_state_bytes <= f.free_bytes


@pytest.mark.parametrize("m", MODELS, ids=lambda m: m.key)
@pytest.mark.parametrize("hw", [*GPUS, presets.achieved(H100, memory_fraction=0.9)], ids=lambda hw: str(hw.memory_bytes))
@pytest.mark.parametrize("policy", kv_layout.POLICIES)
@pytest.mark.parametrize("trace, prefix, samples", [("orca", 0, 1), ("chat", 0, 1), ("orca", 341, 1), ("chat", 80, 6)])
def test_memory_is_never_over_capacity_and_one_more_request_would_be(m, hw, policy, trace, prefix, samples):
    f = kv_layout.fit(m, hw, trace, policy, 16, prefix, samples)
    assert f.max_requests > 0
    assert fits_exactly(f, f.max_requests) and not fits_exactly(f, f.max_requests + 1)
    assert f.used_bytes <= f.free_bytes * (1 + 1e-12) and f.left_bytes >= -1e-3
    assert f.free_bytes == int(hw.memory_bytes) - model_size.resident_weight_bytes(m)


def test_weights_that_do_not_fit_leave_no_request():
    half = presets.achieved(presets.hardware("a100-sxm-80gb"), memory_fraction=0.5)  # 40 GB < 65.5 GB of Qwen3-32B
    f = kv_layout.fit(QWEN32B, half, "orca", "paged")
    assert f.free_bytes == 0 and f.max_requests == 0 and f.used_bytes == 0 and f.sharing_saving_bytes == 0
    assert 0 < f.token_share <= 1  # the shares of one lone request
    assert kv_layout.budget_slots(QWEN32B, half) == 0


# --- the budget and the lesson's figures --------------------------------------------------------------------------

def test_the_anchors_kv_budget_in_token_slots():
    assert kv_layout.free_bytes(ANCHOR, H100) == ANCHOR_FREE == 24_437_144_096
    assert kv_layout.budget_slots(ANCHOR, H100) == ANCHOR_FREE // ANCHOR_KV == 372_881
    # with 85 requests' recurrent states (12.83 GB) beside it
    assert kv_layout.budget_slots(ANCHOR, H100, sequences=85) == (ANCHOR_FREE - 85 * ANCHOR_STATE) // ANCHOR_KV == 177_041
    assert kv_layout.budget_slots(QWEN32B, H100) == QWEN32B_FREE // 262_144 == 55_220


@pytest.mark.parametrize("trace", traces.PRESETS)
def test_reserving_the_max_length_fits_the_same_requests_whatever_their_lengths(trace):
    # Every request holds 2,048 slots: anchor 2,048 x 65,536 B + 150,994,944 B of state = 285,212,672 B.
    assert kv_layout.fit(ANCHOR, H100, trace, "contiguous-max").max_requests == ANCHOR_FREE // 285_212_672 == 85
    assert kv_layout.fit(QWEN32B, H100, trace, "contiguous-max").max_requests == QWEN32B_FREE // 536_870_912 == 26
    assert kv_layout.fit(ANCHOR, H100, trace, "contiguous-max").kv_bytes_per_request == 2048 * ANCHOR_KV


# What the lesson prints, on the default requests (1,000 of each trace, seed 0) with blocks of 16.
LESSON = {
    # trace: policy -> (token share %, one decimal; anchor on H100 fits; Qwen3-32B on H100 fits)
    "orca": {"contiguous-max": (15.6, 85, 26), "contiguous-pow2": (83.1, 138, 143),
             "contiguous-oracle": (88.4, 139, 152), "paged": (97.7, 141, 168)},
    "chat": {"contiguous-max": (42.9, 85, 26), "contiguous-pow2": (62.6, 100, 39),
             "contiguous-oracle": (72.2, 105, 45), "paged": (99.2, 116, 62)},
}


@pytest.mark.parametrize("trace", LESSON)
def test_the_lessons_figures_per_policy(trace):
    for policy, (share, anchor_fits, dense_fits) in LESSON[trace].items():
        assert round(kv_layout.fit(ANCHOR, H100, trace, policy).token_share * 100, 1) == share, policy
        assert kv_layout.fit(ANCHOR, H100, trace, policy).max_requests == anchor_fits, policy
        assert kv_layout.fit(QWEN32B, H100, trace, policy).max_requests == dense_fits, policy
    # The hybrid gains less from paging than the dense model: its fixed state is most of each request's memory.
    anchor = LESSON[trace]["paged"][1] / LESSON[trace]["contiguous-max"][1]
    dense = LESSON[trace]["paged"][2] / LESSON[trace]["contiguous-max"][2]
    assert anchor < 2 < dense


def test_token_share_is_the_share_of_kv_bytes_in_use():
    f = kv_layout.fit(ANCHOR, H100, "orca", "contiguous-max")
    assert f.token_bytes + f.reserved_bytes + f.never_used_bytes == pytest.approx(f.kv_bytes)
    assert f.token_share == pytest.approx(f.usage.token_share)  # no shared prefix: the same as the slot-steps'
    assert f.kv_bytes == pytest.approx(85 * 2048 * ANCHOR_KV)
    assert f.state_bytes == 85 * ANCHOR_STATE


def test_block_size_trades_waste_for_table_entries():
    rows = kv_layout.block_size_tradeoff(ANCHOR, H100, "orca", prefix_tokens=341)
    assert [r.block_size for r in rows] == list(kv_layout.BLOCK_SIZES)
    for small, big in zip(rows, rows[1:]):
        assert big.empty_slots_per_sequence > small.empty_slots_per_sequence
        assert big.table_entries_per_sequence < small.table_entries_per_sequence
        assert big.token_share <= small.token_share
    assert [r.unshared_prefix_tokens for r in rows] == [341 % b for b in kv_layout.BLOCK_SIZES]
    by_size = {r.block_size: r for r in rows}
    assert by_size[16].unshared_prefix_tokens == 5 and by_size[256].unshared_prefix_tokens == 85
    # a block of 256 wastes enough to fit fewer requests than reserving the true length (vLLM §7.2: big blocks hurt)
    plain = {r.block_size: r.max_requests for r in kv_layout.block_size_tradeoff(ANCHOR, H100, "orca")}
    assert plain[256] < kv_layout.fit(ANCHOR, H100, "orca", "contiguous-oracle").max_requests < plain[16]


# --- sharing ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("trace", traces.PRESETS)
@pytest.mark.parametrize("b", [1, 16, 64])
@pytest.mark.parametrize("prefix, samples", [(80, 1), (341, 1), (0, 4), (341, 6)])
def test_sharing_saves_exactly_the_shared_blocks(trace, b, prefix, samples):
    shared = kv_layout.trace_usage(trace, "paged", b, prefix, samples)
    copied = kv_layout.trace_usage(trace, "paged", b, prefix, samples, share=False)
    assert copied.token_share == pytest.approx(1 - copied.empty_slots_per_sequence * samples / copied.slots_per_request)
    assert copied.allocated_slot_steps - shared.allocated_slot_steps == shared.sharing_saving_slot_steps
    requests = kv_layout.trace_requests(trace, prefix, samples)
    per_step = sum(r.output * b * ((samples - 1) * (r.prompt_total // b) + prefix // b) for r in requests)
    assert shared.sharing_saving_slot_steps == per_step
    assert shared.shared_prefix_slots == prefix // b * b and shared.unshared_prefix_tokens == prefix % b
    f = kv_layout.fit(ANCHOR, H100, trace, "paged", b, prefix, samples)
    no_share = kv_layout.fit(ANCHOR, H100, trace, "paged", b, prefix, samples, share=False)
    assert f.unshared_requests == no_share.max_requests <= f.max_requests
    # counted over the requests that fit even unshared
    saving = (no_share.max_requests * Fraction(shared.sharing_saving_slot_steps, shared.steps) - prefix // b * b)
    assert f.sharing_saving_bytes == pytest.approx(float(saving * ANCHOR_KV))
    assert 0 <= f.sharing_saving_bytes <= f.free_bytes
    assert f.prefix_state_bytes == (ANCHOR_STATE if prefix // b else 0)  # the state at the end of the shared blocks
    assert kv_layout.fit(QWEN32B, H100, trace, "paged", b, prefix, samples).prefix_state_bytes == 0


def test_the_sharing_saving_never_exceeds_the_free_memory():
    # issue #23: Qwen3-32B, paged, a 512-token prefix claimed 22.28 GB saved (23.26 GB with 4 samples) of 14.48 GB
    for samples in (1, 4):
        f = kv_layout.fit(QWEN32B, H100, "orca", "paged", 16, prefix_tokens=512, samples=samples)
        assert f.free_bytes == QWEN32B_FREE
        assert f.unshared_requests == kv_layout.fit(QWEN32B, H100, "orca", "paged", 16, prefix_tokens=512,
                                                    samples=samples, share=False).max_requests < f.max_requests
        assert 0 < f.sharing_saving_bytes < f.free_bytes
    for m in (ANCHOR, QWEN32B, LLAMA):
        for trace in traces.PRESETS:
            for b in (1, 16, 256):
                for prefix, samples in [(512, 1), (512, 8), (0, 8), (341, 4)]:
                    f = kv_layout.fit(m, H100, trace, "paged", b, prefix, samples)
                    assert 0 <= f.sharing_saving_bytes <= f.free_bytes, (m.name, trace, b, prefix, samples)
    for policy in kv_layout.CONTIGUOUS:  # nothing shared: the same requests fit either way
        f = kv_layout.fit(QWEN32B, H100, "orca", policy, prefix_tokens=512, samples=4)
        assert f.unshared_requests == f.max_requests


def test_contiguous_policies_share_nothing():
    for policy in kv_layout.CONTIGUOUS:
        f = kv_layout.fit(ANCHOR, H100, "orca", policy, prefix_tokens=341, samples=4)
        assert f.sharing_saving_bytes == 0 and f.shared_prefix_bytes == 0 and f.prefix_state_bytes == 0
        assert f.usage.token_share == kv_layout.fit(ANCHOR, H100, "orca", policy, prefix_tokens=341).usage.token_share


def test_the_lessons_sharing_figures():
    # vLLM §6.4's 5-shot prefix of 341 tokens on the Orca trace, anchor on H100, blocks of 16: 21 shared blocks
    f = kv_layout.fit(ANCHOR, H100, "orca", "paged", 16, prefix_tokens=341)
    assert f.shared_prefix_bytes == 336 * ANCHOR_KV == 22_020_096
    assert f.max_requests == 140 and round(f.sharing_saving_bytes / 1e9, 2) == 2.73
    assert kv_layout.fit(ANCHOR, H100, "orca", "paged", 16, prefix_tokens=341, share=False).max_requests == 125
    dense = kv_layout.fit(QWEN32B, H100, "orca", "paged", 16, prefix_tokens=341)
    assert dense.max_requests == 165 and round(dense.sharing_saving_bytes / 1e9, 2) == 7.13
    # the 82 that fit unshared each map the 336 slots of the prefix's full blocks, which are stored once
    assert dense.unshared_requests == 82 and dense.sharing_saving_bytes == (82 - 1) * 336 * 262_144
    assert kv_layout.fit(QWEN32B, H100, "orca", "paged", 16, prefix_tokens=341, share=False).max_requests == 82
    # four parallel samples of each chat request
    four = kv_layout.fit(QWEN32B, H100, "chat", "paged", 16, samples=4)
    assert four.max_requests == 28 and round(four.sharing_saving_bytes / 1e9, 2) == 6.27
    assert kv_layout.fit(QWEN32B, H100, "chat", "paged", 16, samples=4, share=False).max_requests == 15


# --- one moment, slot by slot ----------------------------------------------------------------------------------------

STATES = {TOKEN, SHARED, RESERVED, NEVER_USED, kv_layout.FREE}


def check_snapshot(snap: kv_layout.Snapshot, requests) -> None:
    b, cap = snap.block_size, snap.capacity
    # the runs tile the pool, in order, and the pool is never over capacity
    at = 0
    for start, n, state in snap.runs:
        assert start == at and n > 0 and state in STATES
        at += n
    assert at == cap and snap.used <= cap
    assert all(a[2] != c[2] for a, c in zip(snap.runs, snap.runs[1:]))  # runs are merged
    # first come first served: the admitted requests are the first ones, in order
    assert sorted({p.request for p in snap.sequences}) == list(range(snap.requests))
    owners = {}  # slot -> (sequence, logical position) of every token written there
    for p in snap.sequences:
        r = requests[p.request]
        assert 1 <= p.step <= r.output and p.written == r.prompt_total + p.step and p.length == r.length
        if snap.policy != "paged":
            assert p.reserved == kv_layout.reservation(snap.policy, r.prompt_total, r.output) and p.blocks == ()
            assert 0 <= p.start and p.start + p.reserved <= cap
            slots = range(p.start, p.start + p.written)
        else:
            assert len(p.blocks) == -(-p.written // b)  # its table ends less than a block past what it wrote
            assert len(p.blocks) * b - p.written < b
            assert all(0 <= n < cap // b for n in p.blocks)
            slots = [p.blocks[pos // b] * b + pos % b for pos in range(p.written)]
        for pos, slot in enumerate(slots):
            owners.setdefault(slot, []).append((p, pos))
    for holders in owners.values():
        if len(holders) == 1:
            continue
        # a slot held by several sequences is one shared block's, at the same position, full of the same tokens
        assert snap.policy == "paged"
        (first, pos), others = holders[0], holders[1:]
        assert all(q == pos for _, q in others)
        prefix = requests[0].prefix // b * b
        same_request = all(p.request == first.request for p, _ in others)
        assert pos < prefix or (same_request and pos < requests[first.request].prompt_total // b * b)
    if snap.policy == "paged":
        mapped = {}
        for p in snap.sequences:
            for n in p.blocks:
                mapped[n] = mapped.get(n, 0) + 1
        assert all(snap.refcounts[n] == mapped.get(n, 0) for n in range(cap // b))
        for p in snap.sequences:  # its block table: its blocks, what each holds, and where it copied on write
            table = kv_layout.block_table(snap, p.request, p.sample)
            assert tuple(e.physical for e in table) == p.blocks and [e.logical for e in table] == list(range(len(table)))
            assert all(e.refcount == snap.refcounts[e.physical] for e in table)
            assert sum(e.tokens for e in table) == p.written and all(0 < e.tokens <= b for e in table)
            shared, copy = divmod(p.parted, b)
            assert all(e.refcount > 1 for e in table[:shared])  # the blocks before it parted are mapped, not copied
            assert [(e.logical, e.copied) for e in table if e.copied] == ([(shared, copy)] if copy else [])
            assert all(e.refcount == 1 for e in table if e.copied)
        assert snap.slots(TOKEN) + snap.slots(SHARED) == len(owners)
        assert snap.used == len(mapped) * b
    else:  # reservations are disjoint, packed end to end
        spans = sorted((p.start, p.start + p.reserved) for p in snap.sequences)
        assert all(a[1] == c[0] for a, c in zip(spans, spans[1:]))
        assert snap.slots(TOKEN) == len(owners) and snap.used == sum(p.reserved for p in snap.sequences)


@settings(max_examples=80, deadline=None)
@given(requests_strategy, st.sampled_from(kv_layout.POLICIES), st.sampled_from(kv_layout.BLOCK_SIZES),
       st.integers(0, 12_000), st.booleans(), st.integers(0, 3))
def test_every_token_has_exactly_one_slot_and_the_pool_never_overflows(requests, policy, b, capacity, share, seed):
    snap = kv_layout.snapshot(requests, policy, b, capacity, seed=seed, share=share)
    check_snapshot(snap, requests)
    # More room admits the same requests at the same steps, and maybe more (first come first served)
    more = kv_layout.snapshot(requests, policy, b, capacity + 4096 * 8, seed=seed, share=share)
    assert more.requests >= snap.requests
    assert [(p.request, p.step) for p in more.sequences[:len(snap.sequences)]] == \
        [(p.request, p.step) for p in snap.sequences]


@pytest.mark.parametrize("trace", traces.PRESETS)
@pytest.mark.parametrize("policy", kv_layout.POLICIES)
@pytest.mark.parametrize("b, prefix, samples", [(1, 0, 1), (16, 0, 1), (256, 0, 1), (16, 341, 1), (16, 80, 4)])
def test_the_maps_moment_on_the_default_requests(trace, policy, b, prefix, samples):
    snap = kv_layout.trace_snapshot(trace, policy, b, prefix, samples)
    check_snapshot(snap, kv_layout.trace_requests(trace, prefix, samples))
    assert snap.capacity == 8192 and snap.requests >= 1


def test_sharing_in_a_snapshot_saves_exactly_the_shared_blocks():
    requests = kv_layout.trace_requests("orca", prefix_tokens=341, samples=3)[:5]
    shared = kv_layout.snapshot(requests, "paged", 16, 100_000)
    copied = kv_layout.snapshot(requests, "paged", 16, 100_000, share=False)
    assert shared.requests == copied.requests == 5
    assert copied.used - shared.used == 16 * sum(c - 1 for c in shared.refcounts if c > 1)
    assert max(shared.refcounts) == 15  # the prefix's 21 blocks, mapped by 5 requests x 3 samples
    assert shared.slots(SHARED) > 0 and copied.slots(SHARED) == 0


def test_block_tables_show_where_samples_and_requests_part():
    # Four samples of each request: they map the prompt's full blocks and each copies the prompt's last part-block.
    snap = kv_layout.trace_snapshot("orca", "paged", 16, 0, 4)
    r = kv_layout.trace_requests("orca", 0, 4)[0]
    tables = [kv_layout.block_table(snap, 0, k) for k in range(4)]
    full, rest = divmod(r.prompt_total, 16)
    assert rest and all(p.parted == r.prompt_total for p in snap.sequences if p.request == 0)
    assert len({tuple(e.physical for e in t[:full]) for t in tables}) == 1  # one copy of the prompt's full blocks
    assert all(e.refcount == 4 for t in tables for e in t[:full])
    copies = [t[full] for t in tables]
    assert len({e.physical for e in copies}) == 4 and all(e.copied == rest and e.refcount == 1 for e in copies)
    # A 341-token prefix: every request maps its 21 full blocks and copies its last 5 tokens into a block of its own.
    snap = kv_layout.trace_snapshot("orca", "paged", 16, 341, 1)
    tables = [kv_layout.block_table(snap, i) for i in range(snap.requests)]
    assert snap.requests > 1 and all(t[20].refcount == snap.requests and t[21].copied == 5 for t in tables)
    assert len({t[0].physical for t in tables}) == 1 and len({t[21].physical for t in tables}) == snap.requests
    # Nothing shared: no copies; a contiguous reservation has no block table; a request not admitted has none either.
    assert not any(e.copied for e in kv_layout.block_table(kv_layout.trace_snapshot("orca", "paged", 16)))
    assert kv_layout.block_table(kv_layout.trace_snapshot("orca", "contiguous-max")) == ()
    assert kv_layout.block_table(snap, snap.requests) == () and snap.sequence(snap.requests) is None


def test_the_same_moment_for_every_policy_and_the_same_result_every_time():
    a = kv_layout.snapshot(kv_layout.trace_requests("chat"), "paged", 16, seed=3)
    b = kv_layout.snapshot(kv_layout.trace_requests("chat"), "paged", 16, seed=3)
    assert a == b
    contiguous = kv_layout.snapshot(kv_layout.trace_requests("chat"), "contiguous-max", 16, seed=3)
    steps = {p.request: p.step for p in a.sequences}
    assert all(steps[p.request] == p.step for p in contiguous.sequences)
    assert kv_layout.snapshot(kv_layout.trace_requests("chat"), "paged", 16, seed=4) != a
    assert kv_layout.usage(kv_layout.trace_requests("orca"), "paged") == kv_layout.trace_usage("orca", "paged")


def test_paged_blocks_of_one_request_lie_scattered_and_contiguous_ones_in_one_piece():
    paged = kv_layout.trace_snapshot("orca", "paged", 16)
    first = next(p for p in paged.sequences if p.request == 0)
    pieces = 1 + sum(1 for x, y in zip(first.blocks, first.blocks[1:]) if y != x + 1)
    assert pieces > len(first.blocks) // 2
    contiguous = kv_layout.trace_snapshot("orca", "contiguous-max", 16)
    assert contiguous.requests == 4 and contiguous.used == 8192  # four reservations of 2,048 fill the window
    assert paged.requests > 4 * contiguous.requests


# --- preemption and a hybrid's fixed state -------------------------------------------------------------------------

def test_swap_or_recompute_one_sequence():
    p = kv_layout.preemption(ANCHOR, H100, tokens=300)
    assert p.kv_bytes == 304 * ANCHOR_KV and p.state_bytes == ANCHOR_STATE  # 19 blocks of 16
    assert p.swap_bytes == 304 * ANCHOR_KV + ANCHOR_STATE == 170_917_888
    e = roofline.prefill(ANCHOR, H100, tokens=300)
    assert p.recompute_s == e.time_s and p.recompute_flops == e.flops
    assert p.break_even_link_bytes_per_s == pytest.approx(2 * p.swap_bytes / e.time_s)
    assert p.swap_s(25e9) == pytest.approx(170_917_888 / 25e9)
    dense = kv_layout.preemption(LLAMA, presets.hardware("a100-sxm-80gb"), tokens=300)
    assert dense.state_bytes == 0 and dense.swap_bytes == 304 * 524_288


def test_swapping_over_the_host_link_both_ways():
    # The H100's PCIe Gen5 x16: 128 GB/s both ways together, 64 GB/s each way (the preset's host link).
    assert H100.host_link_bytes_per_s == 64e9 and "PCIe Gen5" in H100.host_link_source
    long, short = kv_layout.preemption(ANCHOR, H100, 2048), kv_layout.preemption(ANCHOR, H100, 256)
    assert long.swap_bytes == 2048 * ANCHOR_KV + ANCHOR_STATE == 285_212_672
    assert long.swap_out_s == long.swap_in_s == pytest.approx(285_212_672 / 64e9)  # 4.46 ms each way
    assert long.swap_round_trip_s == pytest.approx(2 * 285_212_672 / 64e9)
    assert short.swap_bytes == 256 * ANCHOR_KV + ANCHOR_STATE and short.swap_round_trip_s * 1e3 == pytest.approx(5.24, rel=0.01)
    # Recomputing on its own: a 2,048-token prefill of 101.7 ms (compute-bound), a 256-token one of 15.4 ms (one
    # read of the weights). Both break even far below PCIe: by that bound swap always wins.
    assert long.recompute_s * 1e3 == pytest.approx(101.69, rel=0.01)
    assert short.recompute_s * 1e3 == pytest.approx(15.36, rel=0.01)
    assert long.break_even_link_bytes_per_s / 1e9 == pytest.approx(5.61, rel=0.01)
    assert short.break_even_link_bytes_per_s / 1e9 == pytest.approx(21.85, rel=0.01)
    assert max(long.break_even_link_bytes_per_s, short.break_even_link_bytes_per_s) < H100.host_link_bytes_per_s
    # A GPU without a sourced host link gives no swap time, only the bytes and the break-even.
    unsourced = kv_layout.preemption(ANCHOR, dataclasses.replace(H100, host_link_bytes_per_s=None), 256)
    with pytest.raises(ValueError, match="no host-link bandwidth"):
        _ = unsourced.swap_in_s
    assert unsourced.break_even_link_bytes_per_s == short.break_even_link_bytes_per_s


def test_a_recompute_merged_into_a_memory_bound_decode_step_costs_almost_nothing():
    # 16 requests decoding at 300 tokens of context: the step reads the weights once. A 256-token recompute that
    # joins it adds 272 tokens of matmuls that still take less time than that read, so it costs only its own
    # causal attention (compute-bound: 256 x 257 / 2 pairs of 393,216 FLOPs) and writing its state once.
    short = kv_layout.preemption(ANCHOR, H100, 256)
    assert (short.decoders, short.context) == (16, 300)
    step = scheduler.step_cost(ANCHOR, H100)
    assert short.decode_step_s == step.time_s(0, 0.0, 16, 16 * 300, 0)
    assert short.merged_step_s == step.time_s(256, step.prefill_attention_s(256), 16, 16 * 300, 1)
    by_hand = max(393_216 * 256 * 257 / 2 / 989.5e12, 256 * ANCHOR_KV / 3.35e12) + ANCHOR_STATE / 3.35e12
    assert short.marginal_recompute_s == pytest.approx(by_hand, rel=1e-9)  # 58 µs
    assert short.marginal_recompute_s * 1e3 == pytest.approx(0.0581, rel=0.01)
    assert short.recompute_s / short.marginal_recompute_s > 200  # 15.4 ms alone
    assert short.swap_round_trip_s / short.marginal_recompute_s > 80  # a swap would cost 90 times more
    # To beat that the link would need 5.8 TB/s each way, 90 times PCIe Gen5.
    assert short.merged_break_even_link_bytes_per_s / 1e12 == pytest.approx(5.77, rel=0.01)
    # At 2,048 tokens the prefill is compute-bound either way and adds nearly all of itself: swap wins there.
    long = kv_layout.preemption(ANCHOR, H100, 2048)
    assert long.marginal_recompute_s * 1e3 == pytest.approx(87.2, rel=0.01)
    assert long.marginal_recompute_s > long.swap_round_trip_s
    assert long.merged_break_even_link_bytes_per_s < H100.host_link_bytes_per_s
    with pytest.raises(ValueError, match="decoders must be a whole number"):
        kv_layout.preemption(ANCHOR, H100, 256, decoders=0)


def test_a_hybrid_state_beside_its_kv():
    h = kv_layout.hybrid_state(ANCHOR, 16, prefix_tokens=341)
    assert h.state_bytes == ANCHOR_STATE == 150_994_944 and h.kv_bytes_per_token == ANCHOR_KV
    assert h.state_tokens == 2304  # a state weighs as much as 2,304 tokens of KV, more than MAX_TOKENS
    assert h.layer_state_bytes == 48 * 128 * 128 * 4 == 3_145_728 and h.layer_kv_bytes_per_token == 2 * 4 * 256 * 2
    assert h.matched_block_size == 768 and kv_layout.hybrid_state(ANCHOR, state_dtype="bf16").matched_block_size == 384
    # At blocks of 16 (what a dense model gets), the prefix's 21 full blocks and one state at their end.
    assert (h.cached_prefix_tokens, h.recompute_tokens, h.boundary_states, h.every_boundary_states) == (336, 5, 1, 21)
    assert h.cached_prefix_kv_bytes == 336 * ANCHOR_KV
    # it does not grow with length: the memory of one request at 1 and at 2,048 tokens differs by KV alone
    assert cache.state_bytes_per_request(ANCHOR) == h.state_bytes
    dense = kv_layout.hybrid_state(QWEN32B, 16, prefix_tokens=341)
    assert dense.state_bytes == 0 and dense.state_tokens == 0 and dense.boundary_states == 0
    assert dense.every_boundary_states == 0 and dense.matched_block_size == 0
    assert math.isclose(kv_layout.hybrid_state(ANCHOR, 1).matched_block_size * 4096, 3_145_728)


def test_the_conv_window_is_what_the_state_leaves_out():
    # vLLM's gated_delta_net_state_shape: (conv_kernel - 1) x (2 x 16 x 128 + 48 x 128) = 3 x 10,240 per layer, BF16
    assert cache.conv_state_bytes_per_request(ANCHOR) == 48 * 3 * 10_240 * 2 == 2_949_120
    assert cache.conv_state_bytes_per_request(ANCHOR, "fp32") == 2 * 2_949_120
    assert cache.conv_state_bytes_per_request(QWEN32B) == 0
    h = kv_layout.hybrid_state(ANCHOR)
    assert (h.conv_bytes, h.layer_conv_bytes) == (2_949_120, 61_440)
    assert h.conv_share == pytest.approx(2_949_120 / (2_949_120 + ANCHOR_STATE)) and 0.019 < h.conv_share < 0.02
    with pytest.raises(ValueError, match="conv_dtype must be one of"):
        cache.conv_state_bytes_per_request(ANCHOR, "fp8")


def test_vllms_hybrid_block_for_the_anchor():
    # One GDN layer's page: S 3,145,728 B (FP32) + conv window 61,440 B = 3,207,168 B = 783 tokens of one attention
    # layer's 4,096 B, rounded up to a multiple of 16: 784 tokens, the page padded by 4,096 / 3,207,168 = 0.13 %.
    # vLLM logs "Setting attention block size to 784 tokens" for this family (issue #36010; LMCache PR #5079).
    h = kv_layout.hybrid_state(ANCHOR, prefix_tokens=341)
    assert h.layer_page_bytes == 3_207_168 == 783 * 4096
    assert h.vllm_block_size == 784 == h.block_size and round(h.page_padding_share * 100, 2) == 0.13
    assert kv_layout.hybrid_state(ANCHOR, state_dtype="bf16").vllm_block_size == 400  # 1,634,304 B = 399 x 4,096
    # A 341-token prefix is shorter than one block: nothing of it is reusable, no state is kept for it.
    assert (h.cached_prefix_tokens, h.boundary_states, h.recompute_tokens) == (0, 0, 341)
    assert all(h.reused_tokens(own) == 0 for own in (0, 32, 443, 512))
    # A dense model keeps vLLM's default block of 16, and reuses the prefix's full blocks.
    dense = kv_layout.hybrid_state(QWEN32B, prefix_tokens=341)
    assert (dense.block_size, dense.vllm_block_size, dense.cached_prefix_tokens) == (16, 0, 336)
    assert dense.reused_tokens(800) == 336


def test_a_later_request_reuses_a_hybrids_prefix_only_if_the_checkpoint_fell_inside_it():
    # Issue #45238: the first request's state is kept only at the last block boundary before its prompt ended.
    h = kv_layout.hybrid_state(ANCHOR, prefix_tokens=1600)  # two full blocks of 784: 1,568 tokens
    assert h.cached_prefix_tokens == 1568 and h.boundary_states == 1 and h.every_boundary_states == 2
    assert h.reused_tokens(0) == h.reused_tokens(100) == h.reused_tokens(751) == 1568  # ends before 2,352
    assert h.reused_tokens(752) == h.reused_tokens(800) == 0  # its checkpoint, 2,352, is in its own tokens
    assert (h.checkpoint(100), h.checkpoint(800)) == (1568, 2352) and h.checkpoint(0) == 1568
    # the issue's own numbers, blocks of 528 (Qwen3.5-4B): 1,600 shared + ~500 own hit; 1,500 + 700 do not
    assert kv_layout.hybrid_state(ANCHOR, 528, 1600).reused_tokens(500) == 1584
    assert kv_layout.hybrid_state(ANCHOR, 528, 1500).reused_tokens(700) == 0
    with pytest.raises(ValueError, match="first_own_tokens must be a whole number"):
        h.reused_tokens(-1)
    with pytest.raises(ValueError, match="block_size must be a whole number"):
        kv_layout.hybrid_state(ANCHOR, 0)


def test_a_fit_is_over_the_trace_its_seed_draws():
    # builder/seeds.py runs a lesson's shares on other seeds: the seed reaches the trace, and 0 is the default.
    m, hw = presets.model("qwen3.8-27b"), presets.hardware("h100-sxm")
    assert kv_layout.fit(m, hw, "orca", "contiguous-max", seed=0) == kv_layout.fit(m, hw, "orca", "contiguous-max")
    other = kv_layout.fit(m, hw, "orca", "contiguous-max", seed=1)
    assert other.usage == kv_layout.usage([kv_layout.Request(0, p, o) for p, o in traces.lengths("orca", 1000, 1)],
                                          "contiguous-max")
    assert other.token_share != kv_layout.fit(m, hw, "orca", "contiguous-max").token_share
    rows = kv_layout.block_size_tradeoff(m, hw, sizes=(16,), seed=1)
    assert rows[0].token_share == kv_layout.fit(m, hw, "orca", "paged", 16, seed=1).token_share
