"""sim/serving/slo.py: the three policies under latency targets, their invariants, and the figures the lesson prints."""

from __future__ import annotations

import math
import random

import pytest

from sim.physics import cache, presets, roofline
from sim.serving import scheduler, slo, traces
from sim.widgets import slo_serving

ANCHOR, H100 = presets.model("qwen3.8-27b"), presets.hardware("h100-sxm")
LLAMA13B, A100 = presets.model("llama-2-13b"), presets.hardware("a100-sxm-80gb")
SCENARIOS = [(ANCHOR, H100, w) for w in slo.WORKLOADS] + [(LLAMA13B, A100, "distserve")]
EPS_S = 1e-9  # times are differences of clock readings of hundreds of seconds: equal to about 1e-13 s
POLICY_ARGS = [("prefill-first", {}), ("chunked", {"token_budget": 512}), ("chunked", {}),
               ("disaggregated", {}), ("disaggregated", {"prefill_gpus": 2, "link": "25gbps"})]


def run(m, hw, w, policy, rate, **kw) -> slo.Run:
    return slo.serve(m, hw, policy, w, rate, **kw)


@pytest.mark.parametrize("m, hw, w", SCENARIOS)
@pytest.mark.parametrize("policy, kw", POLICY_ARGS)
def test_no_request_is_lost_and_each_is_no_faster_than_its_own_work(m, hw, w, policy, kw):
    r = run(m, hw, w, policy, 2.0, **kw)
    assert len(r.records) + r.rejected == slo.REQUESTS and r.rejected == 0
    cost = scheduler.step_cost(m, hw)
    for rec in r.records:
        p = rec.prompt_tokens
        # its prompt alone on a GPU (roofline.prefill's time, as a step of one joiner and no decoder)
        alone = cost.time_s(p, cost.prefill_attention_s(p), 0, 0, 1)
        assert rec.ttft_s >= alone - EPS_S
        assert math.isclose(alone, roofline.prefill(m, hw, tokens=p).time_s, rel_tol=1e-9)
        if rec.output_tokens > 1:  # every later token takes at least a decode step of its own request alone
            assert rec.tpot_s >= cost.time_s(0, 0.0, 1, p, 0) - EPS_S
        assert rec.done_s >= rec.first_token_s >= rec.arrival_s


def test_a_token_budget_larger_than_any_prompt_is_prefill_first_to_the_last_bit():
    reqs = traces.requests("chat", 300, 3.0, 0)
    whole = scheduler.schedule(reqs, ANCHOR, H100, "continuous", 64, kv_policy="paged")
    chunked = scheduler.schedule(reqs, ANCHOR, H100, "continuous", 64, kv_policy="paged", token_budget=100_000)
    assert whole.requests == chunked.requests


def test_a_small_budget_cuts_the_longest_step_and_lengthens_the_time_to_first_token():
    whole = run(ANCHOR, H100, "summarisation", "prefill-first", 1.0)
    small = run(ANCHOR, H100, "summarisation", "chunked", 1.0, token_budget=512)
    assert small.tpot_p90_s < whole.tpot_p90_s and small.ttft_p50_s > whole.ttft_p50_s


def test_prefill_and_decode_instances_do_only_their_phase():
    reqs = tuple(traces.Request(i, 0.01 * i, 512, 64) for i in range(20))
    pre = scheduler.schedule(reqs, LLAMA13B, A100, "continuous", 256, kv_policy="paged", token_budget=2048,
                             role="prefill")
    assert all(s.done_s == s.first_token_s for s in pre.requests)  # it leaves with its first token
    assert all(g.joiners for g in pre.segments)  # every step computes prompt tokens
    dec = scheduler.schedule(reqs, LLAMA13B, A100, "continuous", 256, kv_policy="paged", role="decode")
    assert all(g.joiners == 0 for g in dec.segments)  # no step computes a prompt
    assert sum(g.steps for g in dec.segments) >= 64  # every token, the first included, batched
    for s in dec.requests:  # 64 decode steps after its arrival, each at least a decode step of it alone
        assert s.done_s - s.request.arrival_s >= 64 * scheduler.step_cost(LLAMA13B, A100).time_s(0, 0.0, 1, 511, 0)
    with pytest.raises(ValueError, match="prefill instance needs a token budget"):
        scheduler.schedule(reqs, LLAMA13B, A100, "continuous", 256, kv_policy="paged", role="prefill")
    with pytest.raises(ValueError, match="paged KV"):
        scheduler.schedule(reqs, LLAMA13B, A100, "continuous", 256, token_budget=2048)


def test_a_decode_instance_sends_the_first_token_after_recomputing_the_prompts_last():
    # issue #46: the client's first token comes from the decode GPU, as in vLLM's P/D (the prefill instance runs
    # the request with max_tokens = 1). Alone on an empty decode GPU, a request of p = 512 and o = 4 tokens takes
    # four decode steps over 511, 512, 513 and 514 cached rows, the first sampling its first token.
    cost = scheduler.step_cost(LLAMA13B, A100)
    alone = scheduler.schedule((traces.Request(0, 2.0, 512, 4),), LLAMA13B, A100, "continuous", 256,
                               kv_policy="paged", role="decode").requests[0]
    steps = [cost.time_s(0, 0.0, 1, 511 + k, 0) for k in range(4)]
    assert alone.start_s == 2.0 and alone.first_token_s == pytest.approx(2.0 + steps[0], rel=1e-12)
    assert alone.done_s == pytest.approx(2.0 + math.fsum(steps), rel=1e-12)
    one = scheduler.schedule((traces.Request(0, 0.0, 512, 1),), LLAMA13B, A100, "continuous", 256,
                             kv_policy="paged", role="decode").requests[0]
    assert one.first_token_s == one.done_s == pytest.approx(steps[0], rel=1e-12)  # one token: one step


def test_disaggregated_ttft_is_the_clients_and_counts_the_transfer():
    r = run(LLAMA13B, A100, "distserve", "disaggregated", 0.5, link="25gbps")
    cost = scheduler.step_cost(LLAMA13B, A100)
    prefill = roofline.prefill(LLAMA13B, A100, tokens=512).time_s
    first_step = cost.time_s(0, 0.0, 1, 511, 0)
    transfer = slo.kv_transfer_s(LLAMA13B, A100, "25gbps", 512)
    for rec in r.records:  # at least its prefill, its KV over the link and the decode GPU's first step
        assert rec.ttft_s >= prefill + transfer + first_step - EPS_S
        assert rec.first_token_s >= rec.arrival_s + prefill + rec.transfer_s - EPS_S
    # the first request finds every GPU empty: exactly those three
    assert r.records[0].ttft_s == pytest.approx(prefill + transfer + first_step, rel=1e-9)
    # every request reaches a decode GPU, one of a single output token too
    chat = run(ANCHOR, H100, "chat", "disaggregated", 1.0)
    ones = [rec for rec in chat.records if rec.output_tokens == 1]
    assert ones and all(rec.transfer_s > 0 and rec.done_s == rec.first_token_s for rec in ones)


def test_the_kv_transfer_is_the_prompts_kv_and_state_over_the_link():
    # Llama-2-13B: 40 layers x 2 x 40 heads x 128 x 2 bytes = 819,200 bytes per token; 512 tokens over 25 Gbit/s.
    assert cache.kv_bytes_per_token(LLAMA13B) == 819_200
    assert slo.kv_transfer_bytes(LLAMA13B, 512) == 512 * 819_200
    assert slo.kv_transfer_s(LLAMA13B, A100, "25gbps", 512) == pytest.approx(0.134217728)
    assert slo.kv_transfer_s(LLAMA13B, A100, "nvlink", 512) == pytest.approx(512 * 819_200 / 300e9)
    assert slo.kv_transfer_bytes(ANCHOR, 512) == 512 * 65_536 + cache.state_bytes_per_request(ANCHOR)
    r = run(LLAMA13B, A100, "distserve", "disaggregated", 1.0, link="25gbps")
    assert min(rec.transfer_s for rec in r.measured) == pytest.approx(0.134217728)
    assert run(LLAMA13B, A100, "distserve", "prefill-first", 1.0).transfer_mean_s == 0


@pytest.mark.parametrize("m, hw, w", SCENARIOS)
@pytest.mark.parametrize("policy, kw", POLICY_ARGS)
def test_goodput_is_within_throughput_and_the_grid_rates_around_it_say_so(m, hw, w, policy, kw):
    g = slo.goodput(m, hw, policy, w, **kw)
    if g.run is None:
        assert g.rate_per_s == 0
        return
    r = g.run
    # The goodput is a rate the GPUs keep up with, within their capacity; the requests per GPU served within both
    # targets at that rate are no more than the GPUs return per second at most (their capacity, per GPU), and the
    # run returns no more than arrive.
    assert g.rate_per_s <= r.capacity_per_s
    assert g.per_gpu * r.attainment() <= r.capacity_per_s / g.gpus
    assert r.requests_per_s <= g.rate_per_s * 1.05
    assert r.attainment() >= slo.DEFAULT_GOAL and r.keeps_up
    k = slo.RATE_GRID_PER_S.index(g.rate_per_s)
    if k + 1 < len(slo.RATE_GRID_PER_S):
        above = slo.serve(m, hw, policy, w, slo.RATE_GRID_PER_S[k + 1], **kw)
        assert not (above.keeps_up and above.attainment() >= slo.DEFAULT_GOAL)


@pytest.mark.parametrize("m, hw, w", SCENARIOS)
@pytest.mark.parametrize("rate", [0.5, 2.0, 8.0])
def test_with_an_instant_link_separate_decode_gpus_are_no_slower_per_token_than_as_many_colocated(
        m, hw, w, rate, monkeypatch):
    """Decode GPUs that never compute a prompt give each token no later than the same number of colocated GPUs,
    within 1%: a colocated step that mixes a short prompt with the decoders shares one weight read between them,
    which a decode GPU cannot (at equal GPUs in all, 1 + 1 against 2 colocated, the decode GPU has twice the batch
    and is slower for short prompts: disaggregation does not raise throughput)."""
    monkeypatch.setattr(slo, "link_bytes_per_s", lambda hw, link: math.inf)
    monkeypatch.setattr(slo, "_serve", slo._serve.__wrapped__)
    monkeypatch.setattr(slo, "_capacity", slo._capacity.__wrapped__)
    for decode_gpus in (1, 2):
        apart = slo.serve(m, hw, "disaggregated", w, rate, prefill_gpus=2, decode_gpus=decode_gpus)
        together = slo.serve(m, hw, "prefill-first", w, rate, gpus=decode_gpus)
        if not (apart.keeps_up and together.keeps_up):
            continue
        assert apart.tpot_p50_s <= together.tpot_p50_s * 1.01
        assert apart.tpot_p90_s <= together.tpot_p90_s * 1.01


def test_an_argument_the_policy_does_not_use_is_the_same_run_from_the_cache():
    """The widget's controls that do not apply to its policy cost nothing: the run is the one already made."""
    chunked = slo.serve(ANCHOR, H100, "chunked")
    assert slo.serve(ANCHOR, H100, "chunked", prefill_gpus=3, decode_gpus=5, link="25gbps") is chunked
    first = slo.serve(ANCHOR, H100, "prefill-first")
    assert slo.serve(ANCHOR, H100, "prefill-first", token_budget=8_192, link="25gbps") is first
    apart = slo.serve(ANCHOR, H100, "disaggregated", decode_gpus=2)
    assert slo.serve(ANCHOR, H100, "disaggregated", decode_gpus=2, gpus=4) is apart
    good = slo.goodput(ANCHOR, H100, "prefill-first")
    assert slo.goodput(ANCHOR, H100, "prefill-first", token_budget=512, prefill_gpus=8) is good
    # and one it does use is another run
    assert slo.serve(ANCHOR, H100, "chunked", token_budget=512) is not chunked
    assert slo.serve(ANCHOR, H100, "disaggregated", decode_gpus=2, link="25gbps") is not apart


def test_runs_are_deterministic_and_the_lengths_follow_the_workload():
    setting = slo._setting("chunked", slo.DEFAULT_TOKEN_BUDGET, 1, 1, "nvlink", 1, slo.DEFAULT_DISPATCH)
    once = slo._serve.__wrapped__(ANCHOR, H100, slo.DEFAULT_WORKLOAD, slo.DEFAULT_RATE_PER_S, slo.REQUESTS, 0, setting)
    assert once == slo._serve.__wrapped__(ANCHOR, H100, slo.DEFAULT_WORKLOAD, slo.DEFAULT_RATE_PER_S, slo.REQUESTS, 0,
                                          setting)
    for w, (p_lo, p_hi, o_lo, o_hi) in slo.BOUNDS.items():
        pairs = slo.lengths(w, 1000)
        assert all(p_lo <= p <= p_hi and o_lo <= o <= o_hi for p, o in pairs)
    assert set(slo.lengths("distserve", 50)) == {(512, 64)}


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="policy"):
        slo.serve(ANCHOR, H100, "colocated")
    with pytest.raises(ValueError, match="token_budget"):
        slo.serve(ANCHOR, H100, "chunked", token_budget=100)  # below the 256 requests a step may hold
    with pytest.raises(ValueError, match="link"):
        slo.kv_transfer_s(ANCHOR, H100, "pcie", 512)
    with pytest.raises(ValueError, match="goal"):
        slo.goodput(ANCHOR, H100, "chunked", goal=1.5)


def test_a_server_keeps_up_up_to_its_capacity_and_its_queue_grows_past_it():
    # The anchor's capacity on the chat workload: every request queued at t = 0, returns per second counted as a
    # run's are (the middle half of them: after the last arrival the long requests drain alone, and counting to the
    # last return made a server at 5 req/s, every request within both targets, look overloaded).
    limit = slo.capacity(ANCHOR, H100, "chunked", "chat")
    assert 6.5 < limit < 7.5
    below = run(ANCHOR, H100, "chat", "chunked", 5.0)
    assert below.keeps_up and below.attainment() == 1.0 and below.ttft_p90_s < 0.1
    assert below.requests_per_s == pytest.approx(5.0, rel=0.03)  # well below the capacity, the rate itself
    past = run(ANCHOR, H100, "chat", "chunked", 8.0)
    assert not past.keeps_up and past.ttft_p90_s > 5  # the queue grows with the stream
    assert past.requests_per_s == pytest.approx(limit, rel=0.03)  # and the returns run at the capacity
    # Two colocated GPUs, each a Poisson stream of half the rate: twice one GPU's capacity.
    assert slo.capacity(ANCHOR, H100, "chunked", "chat", gpus=2) == pytest.approx(2 * limit, rel=0.05)


def test_a_trace_delivers_the_rate_it_is_asked_for():
    for rate in (0.5, 3.0, 20.0):
        reqs = slo._trace("chat", rate, slo.REQUESTS, slo.DEFAULT_SEED)
        assert reqs[-1].arrival_s == pytest.approx(slo.REQUESTS / rate)
        assert all(b.arrival_s >= a.arrival_s for a, b in zip(reqs, reqs[1:]))
    # the same trace at another rate is the same arrivals, scaled
    slow, fast = slo._trace("chat", 1.0, 100, 0), slo._trace("chat", 4.0, 100, 0)
    assert all(s.arrival_s == pytest.approx(4 * f.arrival_s) for s, f in zip(slow, fast))


@pytest.mark.parametrize("policy, inert", [
    ("chunked", {"prefill_gpus": 3, "decode_gpus": 2}), ("chunked", {"link": "25gbps"}),
    ("prefill-first", {"token_budget": "8192"}), ("prefill-first", {"decode_gpus": 4, "link": "25gbps"}),
])
def test_the_widget_says_at_once_that_a_control_does_not_apply_and_changes_no_readout(policy, inert):
    before = slo_serving.render({"lang": "en", "policy": policy})
    runs = slo._serve.cache_info().misses, slo._goodput.cache_info().misses, slo._capacity.cache_info().misses
    after = slo_serving.render({"lang": "en", "policy": policy, **inert})
    # nothing was simulated: every run, goodput and capacity came from the cache
    assert (slo._serve.cache_info().misses, slo._goodput.cache_info().misses,
            slo._capacity.cache_info().misses) == runs
    assert after["outputs"] == before["outputs"]
    assert after["svg"] == before["svg"]
    note = "budget_unused" if "token_budget" in inert else "colocated_gpus"
    assert after["flags"][note] and before["flags"][note]  # said before the control is moved, and after


@pytest.mark.parametrize("how", [{"token_budget": 2_048}, {}, {"token_budget": 512, "role": "prefill"},
                                 {"role": "decode"}])
def test_an_instance_handed_its_requests_one_at_a_time_serves_them_as_a_trace_known_in_advance(how):
    """scheduler.Instance (the GPU a least-loaded dispatcher feeds) against schedule() on the same requests: the
    same times, to rounding (a stretch of decode steps may be split where a request could have come)."""
    reqs = slo._trace("summarisation", 1.5, 400, 3)
    cost = scheduler.step_cost(ANCHOR, H100)
    known = scheduler.served(reqs, ANCHOR, H100, "continuous", slo.MAX_BATCH, kv_policy="paged", cost=cost, **how)
    gpu = scheduler.Instance(ANCHOR, H100, slo.MAX_BATCH, cost, **how)
    for r in reqs:
        gpu.advance(r.arrival_s)
        assert gpu.take(r) == r.id
    handed = gpu.finish()
    assert len(handed) == len(known)
    for a, b in zip(known, handed):
        assert math.isclose(a.first_token_s, b.first_token_s, abs_tol=EPS_S)
        assert math.isclose(a.done_s, b.done_s, abs_tol=EPS_S)


@pytest.mark.parametrize("stage, load, gpus", [("colocated", slo._prompts_then_requests, 3),
                                               ("prefill", slo._prompts, 2), ("decode", slo._requests, 3)])
def test_least_loaded_sends_each_request_to_the_gpu_least_loaded_when_it_comes(stage, load, gpus):
    """Checked from the finished times alone: when request i came, a GPU's prompts waiting or running are those it
    had been given whose first token came later, the requests it holds those whose last token came later; the GPU
    chosen has the least (the lowest number on a tie), and every GPU gets a share."""
    reqs = slo._trace("summarisation", 4.0 if stage != "decode" else 2.0, 600, 1)
    cost = scheduler.step_cost(ANCHOR, H100)
    how = {"colocated": {"token_budget": 2_048}, "prefill": {"token_budget": 2_048, "role": "prefill"},
           "decode": {"role": "decode"}}[stage]
    order = list(range(len(reqs)))
    served, where = slo._stage(reqs, order, gpus, "least-loaded", load, stage, 0, slo._server(ANCHOR, H100, cost, **how),
                               lambda i: reqs[i].arrival_s)
    assert sorted(set(where)) == list(range(gpus))
    for i in order:
        t = reqs[i].arrival_s
        earlier = order[:i]
        prompts = [sum(1 for j in earlier if where[j] == g and served[j].first_token_s > t) for g in range(gpus)]
        held = [sum(1 for j in earlier if where[j] == g and served[j].done_s > t) for g in range(gpus)]
        key = {"colocated": list(zip(prompts, held)), "prefill": prompts, "decode": held}[stage]
        assert where[i] == min(range(gpus), key=lambda g: (key[g], g)), i


def test_every_dispatch_serves_each_request_and_round_robin_and_random_deal_without_looking():
    """All three rules lose no request; round-robin deals in turn; random deals as the seeded draws say; a single
    GPU's run is the same whatever the rule (the cache shares it)."""
    for dispatch in slo.DISPATCHES:
        r = slo.serve(ANCHOR, H100, "disaggregated", "summarisation", 1.0, prefill_gpus=2, decode_gpus=2,
                      dispatch=dispatch)
        assert len(r.records) == slo.REQUESTS
    reqs = slo._trace("chat", 2.0, 100, 0)
    cost = scheduler.step_cost(ANCHOR, H100)
    serve = slo._server(ANCHOR, H100, cost, token_budget=2_048)
    _, turns = slo._stage(reqs, list(range(100)), 3, "round-robin", None, "colocated", 0, serve,
                          lambda i: reqs[i].arrival_s)
    assert turns == [k % 3 for k in range(100)]
    _, drawn = slo._stage(reqs, list(range(100)), 3, "random", None, "colocated", 7, serve,
                          lambda i: reqs[i].arrival_s)
    rng = random.Random("slo.deal:colocated:3:7")
    assert drawn == [rng.randrange(3) for _ in range(100)]
    one = slo.serve(ANCHOR, H100, "chunked", dispatch="round-robin")
    assert slo.serve(ANCHOR, H100, "chunked", dispatch="random") is one is slo.serve(ANCHOR, H100, "chunked")
    with pytest.raises(ValueError, match="dispatch"):
        slo.serve(ANCHOR, H100, "chunked", gpus=2, dispatch="shortest")


def test_a_dispatcher_that_looks_at_the_queues_serves_more_per_gpu_than_random_dealing():
    """The lesson's multi-GPU figures, pinned: random dealing gives each GPU a Poisson share, so N colocated GPUs
    serve about what one does per GPU; least-loaded (and round-robin) smooth each GPU's arrivals, most where the
    TTFT queue decides, as on the summarisation workload."""
    def per_gpu(policy, dispatch, **kw):
        return slo.goodput(ANCHOR, H100, policy, "summarisation", dispatch=dispatch, **kw).per_gpu
    one = per_gpu("chunked", "random")
    assert per_gpu("chunked", "random", gpus=4) == pytest.approx(1.725, rel=1e-9)
    assert per_gpu("chunked", "round-robin", gpus=4) == pytest.approx(4.475, rel=1e-9)
    assert per_gpu("chunked", "least-loaded", gpus=4) == pytest.approx(4.525, rel=1e-9)
    assert per_gpu("disaggregated", "random", prefill_gpus=3) == pytest.approx(1.175, rel=1e-9)
    assert per_gpu("disaggregated", "least-loaded", prefill_gpus=3) == pytest.approx(3.125, rel=1e-9)
    assert per_gpu("chunked", "least-loaded", gpus=4) > 2 * one
