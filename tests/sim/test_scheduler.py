"""The scheduler: static and continuous batching of a trace on one GPU, its invariants and its figures."""

import math
from collections import deque

import pytest

from sim.physics import cache, model_size, presets, roofline
from sim.serving import scheduler, traces
from sim.serving.traces import Request

ANCHOR, QWEN32, LLAMA = (presets.model(k) for k in ("qwen3.8-27b", "qwen3-32b", "llama-2-7b"))
H100, A100, B200 = (presets.hardware(k) for k in ("h100-sxm", "a100-sxm-80gb", "b200"))
# An H100 with 3 GB left beside Qwen3-32B's checkpoint: its paged KV runs out and requests are preempted.
TIGHT_H100 = presets.achieved(H100, memory_fraction=(model_size.resident_weight_bytes(QWEN32) + 3e9) / H100.memory_bytes)

# The anchor by hand (tests/sim/test_widgets.py): 2N = W = 51,247,879,168, of which the LM head's 2 x 248,320 x
# 5,120 = 2,542,796,800; 65,536 B of KV and 393,216 attention FLOPs per cached token; 150,994,944 B of FP32 state
# per request. H100: 989.5 TFLOP/s, 3.35 TB/s.
TWO_N = W = 51_247_879_168
TWO_HEAD = 2_542_796_800
KV, ATT, STATE = 65_536, 393_216, 150_994_944
PI, BETA = 989.5e12, 3.35e12

# Scenarios the invariants are checked on: both traces, light and heavy load, memory that binds (Qwen3-32B fits
# 37 requests at 2,048-token reservations on an H100), every KV policy, paging that preempts, a batch of one.
SCENARIOS = [
    dict(m=ANCHOR, hw=H100, trace="orca", rate=12, max_batch=16, kv="contiguous-max"),
    dict(m=ANCHOR, hw=H100, trace="orca", rate=1, max_batch=16, kv="contiguous-max"),
    dict(m=ANCHOR, hw=H100, trace="chat", rate=3, max_batch=8, kv="contiguous-max"),
    dict(m=QWEN32, hw=H100, trace="orca", rate=40, max_batch=64, kv="contiguous-max"),
    dict(m=QWEN32, hw=H100, trace="chat", rate=40, max_batch=64, kv="contiguous-oracle"),
    dict(m=QWEN32, hw=H100, trace="chat", rate=40, max_batch=64, kv="contiguous-pow2"),
    dict(m=QWEN32, hw=H100, trace="chat", rate=40, max_batch=256, kv="paged"),
    dict(m=QWEN32, hw=TIGHT_H100, trace="chat", rate=40, max_batch=256, kv="paged"),
    dict(m=LLAMA, hw=A100, trace="orca", rate=25, max_batch=64, kv="contiguous-max"),
    dict(m=LLAMA, hw=A100, trace="chat", rate=25, max_batch=256, kv="paged"),
    dict(m=LLAMA, hw=B200, trace="orca", rate=6, max_batch=1, kv="contiguous-max"),
]
IDS = [f"{s['m'].key}-{s['hw'].memory_bytes / 1e9:.0f}GB-{s['trace']}-{s['rate']}-{s['max_batch']}-{s['kv']}"
       for s in SCENARIOS]


def run(sc: dict, policy: str, n: int = 48, seed: int = 0) -> scheduler.Schedule:
    reqs = traces.requests(sc["trace"], n, sc["rate"], seed)
    return scheduler.schedule(reqs, sc["m"], sc["hw"], policy, sc["max_batch"], kv_policy=sc["kv"])


def reference(reqs, m, hw, policy, max_batch, kv_policy):
    """The same rules, simulated one step at a time with nothing clever: request id -> (start, first, done, finish,
    preemptions)."""
    cost = scheduler.step_cost(m, hw)
    capacity = scheduler.free_bytes(m, hw)
    kv, state, b = cache.kv_bytes_per_token(m), cache.state_bytes_per_request(m), scheduler.BLOCK_SIZE
    paged = kv_policy == "paged"
    room = capacity * (1 - scheduler.WATERMARK) if paged else capacity  # paged admission keeps 1 % free
    need = {r.id: scheduler.reservation_bytes(m, r, kv_policy) for r in reqs}
    times = {r.id: [None, None, None, None, 0] for r in reqs}
    generated = {r.id: 0 for r in reqs}
    # running, in order of admission: [request, rows cached (None until its prefill), done]
    waiting, pending, running = deque(), deque(reqs), []
    t = 0.0

    def blocks(rows):
        return -(-rows // b)

    def used():  # memory held during the coming step by the requests already running
        if not paged:
            return sum(need[x[0].id] for x in running)
        return sum(state + b * kv * (blocks(x[1]) if x[2] else blocks(x[1] + 1)) for x in running)

    while pending or waiting or running:
        while pending and pending[0].arrival_s <= t:
            waiting.append(pending.popleft())
        preempted = False
        while paged and used() > capacity:
            victim = [x for x in running if not x[2]][-1]
            running.remove(victim)
            times[victim[0].id][4] += 1
            waiting.appendleft(victim[0])
            preempted = True
        if policy == "static" and running and all(x[2] for x in running):  # its last decoder was preempted
            for x in running:
                times[x[0].id][3] = t
            running = []
        joiners = []
        if not preempted and (policy == "continuous" or not running):
            while waiting and len(running) + len(joiners) < max_batch:
                r = waiting[0]
                if need[r.id] > room:
                    waiting.popleft()
                    continue
                q = r.prompt_tokens + generated[r.id]
                joining = need[r.id] if not paged else state + blocks(q) * b * kv
                if used() + sum(state + blocks(x[0].prompt_tokens + generated[x[0].id]) * b * kv if paged
                                else need[x[0].id] for x in joiners) + joining > room:
                    break
                joiners.append([waiting.popleft(), None, False])
            running.extend(joiners)
        decoders = [x for x in running if x[1] is not None and not x[2]]
        if not joiners and not decoders:
            if pending:
                t = max(t, pending[0].arrival_s)
                continue
            if waiting:
                continue
            break
        prompts = [x[0].prompt_tokens + generated[x[0].id] for x in joiners]
        dt = cost.time_s(sum(prompts), sum(cost.prefill_attention_s(q) for q in prompts),
                         len(decoders), sum(x[1] for x in decoders), len(joiners))
        for x in joiners:
            if times[x[0].id][0] is None:
                times[x[0].id][0] = t
        t += dt
        for x, q in zip(joiners, prompts):
            x[1] = q
        for x in decoders:
            x[1] += 1
        for x in joiners + decoders:
            r = x[0]
            generated[r.id] += 1
            if times[r.id][1] is None:
                times[r.id][1] = t
            if generated[r.id] == r.output_tokens:
                times[r.id][2] = t
                x[2] = True
        if policy == "continuous":
            for x in [x for x in running if x[2]]:
                times[x[0].id][3] = t
                running.remove(x)
        elif running and all(x[2] for x in running):
            for x in running:
                times[x[0].id][3] = t
            running = []
    return times


def served_times(s: scheduler.Schedule):
    return {x.request.id: [x.start_s, x.first_token_s, x.done_s, x.finish_s, x.preemptions] for x in s.requests}


# --- the step cost is the roofline's --------------------------------------------------------------------------

@pytest.mark.parametrize("key", presets.model_keys())
@pytest.mark.parametrize("gpu", presets.hardware_keys())
def test_a_step_costs_what_the_roofline_says(key, gpu):
    m, hw = presets.model(key), presets.hardware(gpu)
    cost = scheduler.step_cost(m, hw)
    for batch, context in ((1, 0), (1, 4), (16, 300), (64, 2047)):
        # Decode only: D requests whose contexts sum to D x L cost roofline.decode(batch=D, context=L).
        step = cost.time_s(0, 0.0, batch, batch * context, 0)
        assert step == pytest.approx(roofline.decode(m, hw, batch=batch, context=context).time_s, rel=1e-12)
    for prompt in (1, 32, 512, 2048):
        # One joiner alone: its prefill step is roofline.prefill of its prompt.
        step = cost.time_s(prompt, cost.prefill_attention_s(prompt), 0, 0, 1)
        assert step == pytest.approx(roofline.prefill(m, hw, tokens=prompt).time_s, rel=1e-12)


def test_a_mixed_step_adds_the_joiners_prompts_to_the_shared_weight_read():
    cost = scheduler.step_cost(ANCHOR, H100)
    # 8 decoders at context 300 and one 400-token joiner: 408 tokens through the layers, still one weight read;
    # the LM head only for the 9 tokens sampled (the decoders' and the joiner's last position).
    matmuls = max((408 * (TWO_N - TWO_HEAD) + 9 * TWO_HEAD) / PI, W / BETA)
    prefill_attention = max(ATT * 400 * 401 / 2 / PI, 400 * KV / BETA)
    decode_attention = max(ATT * 2400 / PI, (2400 + 8) * KV / BETA)
    state = (1 + 2 * 8) * STATE / BETA
    step = cost.time_s(400, cost.prefill_attention_s(400), 8, 2400, 1)
    assert step == pytest.approx(matmuls + prefill_attention + decode_attention + state, rel=1e-12)
    # 408 tokens are past the ridge (295 FLOP/B): the joiner's prompt turns the step's matmuls compute-bound,
    # 20.11 ms instead of the 15.30 ms weight read, and every decoder in the step waits for it.
    assert matmuls * 1e3 == pytest.approx(20.105, abs=1e-3)


def test_logits_only_at_the_last_position_of_a_prompt():
    # Engines sample the first output token from the prompt's last position only. The anchor's 2,048-token prefill
    # on an H100 is 101.69 ms (charging the LM head for all 2,048 positions gave 106.95 ms), and a decode step of
    # 16 requests at context 300 that also takes a 512-token joiner 27.67 ms (it was 28.98 ms).
    assert roofline.prefill(ANCHOR, H100, tokens=2048).time_s * 1e3 == pytest.approx(101.69, abs=0.005)
    every_position = roofline.prefill(ANCHOR, H100, tokens=2048, sampled=2048)
    assert every_position.time_s * 1e3 == pytest.approx(106.95, abs=0.005)
    assert every_position.flops - roofline.prefill(ANCHOR, H100, tokens=2048).flops == 2047 * TWO_HEAD
    cost = scheduler.step_cost(ANCHOR, H100)
    assert cost.time_s(512, cost.prefill_attention_s(512), 16, 16 * 300, 1) * 1e3 == pytest.approx(27.67, abs=0.005)
    assert roofline.matmul_flops(ANCHOR, 2048, sampled=1) == 2048 * (TWO_N - TWO_HEAD) + TWO_HEAD
    assert roofline.matmul_flops(ANCHOR, 16, sampled=16) == 16 * TWO_N


def test_one_request_alone_takes_a_prefill_and_one_decode_step_per_further_token():
    r = Request(id=0, arrival_s=0.5, prompt_tokens=100, output_tokens=4)
    for policy in scheduler.POLICIES:
        s = scheduler.schedule([r], ANCHOR, H100, policy, max_batch=8)
        x = s.requests[0]
        prefill = roofline.prefill(ANCHOR, H100, tokens=100).time_s
        decodes = [roofline.decode(ANCHOR, H100, batch=1, context=100 + k).time_s for k in range(3)]
        assert x.start_s == 0.5 and x.wait_s == 0
        assert x.first_token_s - x.start_s == pytest.approx(prefill, rel=1e-12)
        assert x.done_s - x.first_token_s == pytest.approx(math.fsum(decodes), rel=1e-12)
        assert x.finish_s == x.done_s
        assert s.step_count == 4 and [st.batch for st in s.steps()] == [1, 1, 1, 1]
        # 15.388 ms per decode step at context ~100 (weights 15.298 ms + 101 KV rows + state read and written).
        assert decodes[0] == pytest.approx((W + 101 * KV + 2 * STATE) / BETA, rel=1e-12)
        assert x.latency_per_token_s == pytest.approx((prefill + math.fsum(decodes)) / 4, rel=1e-12)
        # Throughput is a rate of returns: one request alone has none to measure it by.
        assert s.makespan_s == pytest.approx(x.latency_s) and s.throughput_tokens_per_s == 0


def test_a_full_static_batch_decodes_at_roofline_decode_of_its_batch():
    # Four identical requests arriving together: one prefill step of 4 x 64 tokens, then decode(4, 64 + k).
    reqs = [Request(i, 0.0, 64, 3) for i in range(4)]
    s = scheduler.schedule(reqs, ANCHOR, H100, "static", max_batch=4)
    steps = s.steps()
    assert [st.batch for st in steps] == [4, 4, 4] and [st.joiners for st in steps] == [4, 0, 0]
    for k, st in enumerate(steps[1:]):
        assert st.time_s == pytest.approx(roofline.decode(ANCHOR, H100, batch=4, context=64 + k).time_s, rel=1e-12)


# --- the closed form over a stretch of steps equals stepping one at a time ------------------------------------

@pytest.mark.parametrize("sc", SCENARIOS, ids=IDS)
@pytest.mark.parametrize("policy", scheduler.POLICIES)
def test_segments_give_the_times_of_a_step_by_step_simulation(sc, policy):
    reqs = traces.requests(sc["trace"], 48, sc["rate"], 0)
    s = scheduler.schedule(reqs, sc["m"], sc["hw"], policy, sc["max_batch"], kv_policy=sc["kv"])
    want = reference(reqs, sc["m"], sc["hw"], policy, sc["max_batch"], sc["kv"])
    got = served_times(s)
    for i in want:
        assert got[i] == pytest.approx(want[i], rel=1e-9, abs=1e-9), i


@pytest.mark.parametrize("sc", SCENARIOS, ids=IDS)
@pytest.mark.parametrize("policy", scheduler.POLICIES)
def test_each_doubling_of_a_trace_equals_its_own_run_to_the_last_bit(sc, policy):
    """serve()'s doublings go on from where the shorter run had its last arrival (_prefix_schedules): each must be
    the very Schedule a run of that prefix alone gives, every time, segment and peak."""
    reqs = tuple(traces.requests(sc["trace"], 240, sc["rate"], 0))
    lengths = (60, 120, 240)
    forked = scheduler._prefix_schedules(reqs, lengths, sc["m"], sc["hw"], policy, sc["max_batch"], sc["kv"], "fp32",
                                         scheduler.step_cost(sc["m"], sc["hw"]))
    for n, got in zip(lengths, forked, strict=True):
        assert got == scheduler.schedule(reqs[:n], sc["m"], sc["hw"], policy, sc["max_batch"], kv_policy=sc["kv"]), n


def test_the_steady_state_is_the_doubling_runs_one_by_one():
    """The default scenario's steady state, as serve() computed it before its runs were forked: a run of 2,000,
    then of 4,000, ... each from scratch."""
    m, hw, limit = ANCHOR, H100, scheduler.capacity(ANCHOR, H100, "continuous")
    runs = [scheduler.schedule(traces.requests("orca", n, 5, 0), m, hw, "continuous", 16) for n in (2_000, 4_000)]
    got = scheduler.serve(m, hw, "continuous")
    change = max(abs(getattr(runs[1], p) / getattr(runs[0], p) - 1) for p in scheduler.PERCENTILES)
    assert change < scheduler.STEADY_TOLERANCE  # settled at 4,000: the run shown is that one
    assert got.requests == runs[1].requests and got.segments == runs[1].segments
    assert (got.capacity_per_s, got.settle_change) == (limit, change)


def test_paging_in_tight_memory_preempts_and_recomputes():
    s = run(SCENARIOS[7], "continuous")
    assert s.preemptions > 0 and sum(x.preemptions > 0 for x in s.requests) > 1
    # A preempted request waits at the front of the queue and starts again with a prefill of everything it had.
    recomputes = sum(st.joiners for st in s.steps()) - len(s.requests)
    assert recomputes == s.preemptions


# --- invariants ---------------------------------------------------------------------------------------------

def _held_at(s: scheduler.Schedule, sc: dict):
    """The most memory held at once, from the steps: reservations (contiguous), or states and blocks (paged)."""
    m, kv_policy = sc["m"], sc["kv"]
    if kv_policy != "paged":
        need = {x.request.id: scheduler.reservation_bytes(m, x.request, kv_policy) for x in s.requests}
        events = sorted([(x.start_s, need[x.request.id]) for x in s.requests if x.served]
                        + [(x.finish_s, -need[x.request.id]) for x in s.requests if x.served],
                        key=lambda e: (e[0], e[1]))
        held = peak = 0
        for _, change in events:
            held += change
            peak = max(peak, held)
        return peak
    return None


@pytest.mark.parametrize("sc", SCENARIOS, ids=IDS)
@pytest.mark.parametrize("policy", scheduler.POLICIES)
def test_invariants(sc, policy):
    s = run(sc, policy)
    reqs = [x.request for x in s.requests]
    # No request lost or duplicated, preempted or not: every one served once, in id order, none rejected.
    assert [r.id for r in reqs] == list(range(48)) and s.rejected == () and len(s.served) == 48
    for x in s.requests:
        r = x.request
        assert r.arrival_s <= x.start_s < x.first_token_s <= x.done_s <= x.finish_s
        assert x.ttft_s == x.first_token_s - r.arrival_s and x.latency_s == x.finish_s - r.arrival_s
        if r.output_tokens > 1:
            assert x.tpot_s == pytest.approx((x.done_s - x.first_token_s) / (r.output_tokens - 1))
        if policy == "continuous":
            assert x.finish_s == x.done_s and x.batch is None
        if sc["kv"] != "paged":
            assert x.preemptions == 0
    # First come, first served, never skipping: requests start in order of arrival.
    starts = [x.start_s for x in s.requests]
    assert starts == sorted(starts)
    # Time runs forward, steps take time, and no step holds more than max_batch requests.
    steps = s.steps()
    assert all(st.time_s > 0 and 1 <= st.batch <= sc["max_batch"] for st in steps)
    for a, b in zip(s.segments, s.segments[1:]):
        assert b.start_s >= a.end_s * (1 - 1e-15)
    assert all(b.start_s > a.start_s for a, b in zip(steps, steps[1:]))
    # Every request gets exactly its output tokens, one per step it is in; a recompute adds a prefill, not a token.
    for x in s.requests:
        if not x.preemptions:
            assert sum(x.start_s <= st.start_s < x.done_s for st in steps) == x.request.output_tokens
    assert sum(st.batch for st in steps) == s.output_tokens == sum(r.output_tokens for r in reqs)
    assert sum(st.joiners for st in steps) == 48 + s.preemptions
    # Memory: what is held at any moment fits beside the checkpoint.
    assert s.peak_reserved_bytes <= s.capacity_bytes
    peak = _held_at(s, sc)
    if peak is not None:
        assert peak == s.peak_reserved_bytes
    # Metrics as defined, over the requests after the warm-up (the first 10 %: 5 of 48).
    measured = s.requests[5:]
    assert s.measured == measured
    assert s.makespan_s == pytest.approx(max(x.finish_s for x in s.requests) - reqs[0].arrival_s)
    finishes = sorted(x.finish_s for x in measured)
    later = [x for x in measured if x.finish_s > finishes[0]]
    if finishes[-1] > finishes[0]:
        assert s.requests_per_s == pytest.approx(len(later) / (finishes[-1] - finishes[0]))
        assert s.throughput_tokens_per_s == pytest.approx(sum(x.request.output_tokens for x in later)
                                                          / (finishes[-1] - finishes[0]))
    else:  # one static batch returned them all at once: no rate of returns to measure
        assert s.requests_per_s == s.throughput_tokens_per_s == 0
    per_token = sorted(x.latency_per_token_s for x in measured)
    assert s.latency_per_token_p50_s == pytest.approx(per_token[21])  # the median of 43
    ttfts = sorted(x.ttft_s for x in measured)
    assert s.ttft_p50_s == ttfts[21] and ttfts[37] <= s.ttft_p90_s <= ttfts[38]
    assert s.busy_s == pytest.approx(math.fsum(st.time_s for st in steps), rel=1e-12)
    assert s.mean_batch == pytest.approx(math.fsum(st.time_s * st.batch for st in steps) / s.busy_s, rel=1e-12)
    assert 1 <= s.mean_batch <= s.max_step_batch <= sc["max_batch"]
    meeting = [x for x in measured if x.meets(1.0, 0.05)]
    assert s.attainment() == len(meeting) / len(measured)


@pytest.mark.parametrize("sc", [sc for sc in SCENARIOS if sc["kv"] != "paged"], ids=lambda sc: sc["kv"])
def test_static_batches_never_admit_mid_batch(sc):
    s = run(sc, "static")
    batches = {}
    for x in s.requests:
        batches.setdefault(x.batch, []).append(x)
    assert sorted(batches) == list(range(len(batches)))
    spans = []
    for index in sorted(batches):
        members = batches[index]
        assert len(members) <= sc["max_batch"]
        assert len({x.start_s for x in members}) == 1 and len({x.finish_s for x in members}) == 1
        # The batch ends when its longest member has its last token.
        assert members[0].finish_s == max(x.done_s for x in members)
        spans.append((members[0].start_s, members[0].finish_s))
    # Batches follow one another, and no request starts while a batch it is not in runs.
    assert all(b[0] >= a[1] for a, b in zip(spans, spans[1:]))
    for x in s.requests:
        assert not any(a < x.start_s < b for a, b in spans)
    # Within a batch the steps only shrink: the ones that are done drop out, no one joins.
    for start, end in spans:
        inside = [st for st in s.steps() if start <= st.start_s < end]
        assert inside[0].joiners == inside[0].batch and all(st.joiners == 0 for st in inside[1:])
        assert all(b.batch <= a.batch for a, b in zip(inside, inside[1:]))


@pytest.mark.parametrize("sc", [sc for sc in SCENARIOS if sc["kv"] != "paged"], ids=lambda sc: sc["kv"])
def test_continuous_lets_waiting_requests_in_whenever_there_is_room(sc):
    s = run(sc, "continuous")
    need = {x.request.id: scheduler.reservation_bytes(sc["m"], x.request, sc["kv"]) for x in s.requests}
    for st in s.steps():
        waiting = [x for x in s.requests if x.request.arrival_s <= st.start_s < x.start_s]
        if not waiting:
            continue
        running = [x for x in s.requests if x.start_s <= st.start_s < x.finish_s]
        reserved = sum(need[x.request.id] for x in running)
        head = min(waiting, key=lambda x: x.request.id)
        assert len(running) == sc["max_batch"] or reserved + need[head.request.id] > s.capacity_bytes


def test_memory_caps_the_batch_below_max_batch():
    # Qwen3-32B on an H100: (85.52 GB - its checkpoint) / (2,048 x 262,144 B of KV) = 37 requests at a time.
    sc = SCENARIOS[3]
    assert scheduler.fit_at_max(QWEN32, H100) == 37
    assert run(sc, "continuous").max_step_batch == 37 < sc["max_batch"]
    assert run(sc, "static").max_step_batch <= 37
    # Reserving less lets more in at once, and paging the most.
    batches = {kv: run({**sc, "kv": kv}, "continuous").max_step_batch for kv in scheduler.KV_POLICIES}
    assert 37 == batches["contiguous-max"] < batches["contiguous-pow2"] <= batches["contiguous-oracle"]
    assert batches["contiguous-oracle"] <= batches["paged"]


def test_reservations_follow_vllm_section_6_1():
    r = Request(0, 0.0, 100, 25)
    kv, state = cache.kv_bytes_per_token(QWEN32), 0
    assert scheduler.reservation_bytes(QWEN32, r, "contiguous-max") == 2048 * kv + state
    assert scheduler.reservation_bytes(QWEN32, r, "contiguous-pow2") == (100 + 32) * kv  # 25 -> 32, plus the prompt
    assert scheduler.reservation_bytes(QWEN32, r, "contiguous-oracle") == 125 * kv
    assert scheduler.reservation_bytes(QWEN32, r, "paged") == 128 * kv  # 124 rows at most: 8 blocks of 16
    assert scheduler.reservation_bytes(ANCHOR, r, "paged") == 128 * cache.kv_bytes_per_token(ANCHOR) + STATE


def test_continuous_is_at_least_as_fast_as_static():
    for sc in SCENARIOS:
        static, continuous = run(sc, "static"), run(sc, "continuous")
        assert continuous.makespan_s <= static.makespan_s * 1.001, sc
        assert continuous.latency_per_token_p50_s <= static.latency_per_token_p50_s, sc


def test_determinism_for_a_seed():
    scheduler.serve.cache_clear()
    a = scheduler.serve(ANCHOR, H100, "continuous", trace="chat", rate_per_s=0.5, n=500, seed=4)
    scheduler.serve.cache_clear()
    b = scheduler.serve(ANCHOR, H100, "continuous", trace="chat", rate_per_s=0.5, n=500, seed=4)
    assert a is not b and a == b
    assert scheduler.serve(ANCHOR, H100, "continuous", trace="chat", rate_per_s=0.5, n=500, seed=5) != a


def test_a_request_that_can_never_fit_is_rejected_and_left_out():
    # Free memory for one 2,048-token reservation and a half: requests wait for each other; with three
    # quarters of one, a request whose reservation exceeds the whole free memory is rejected.
    per_request = 2048 * KV + STATE
    resident = model_size.resident_weight_bytes(ANCHOR)
    small = presets.achieved(H100, memory_fraction=(resident + 1.5 * per_request) / H100.memory_bytes)
    reqs = traces.requests("orca", 10, 20, 0)
    s = scheduler.schedule(reqs, ANCHOR, small, "continuous", max_batch=8)
    assert s.rejected == () and s.max_step_batch == 1
    tiny = presets.achieved(H100, memory_fraction=(resident + 0.75 * per_request) / H100.memory_bytes)
    none = scheduler.schedule(reqs, ANCHOR, tiny, "static", max_batch=8)
    assert none.rejected == tuple(range(10)) and none.served == () and none.segments == ()
    assert none.throughput_tokens_per_s == 0 and none.latency_per_token_p50_s == 0 and none.mean_batch == 0
    # Reserving only what each one needs, or paging, they all fit.
    for kv_policy in ("contiguous-oracle", "paged"):
        assert scheduler.schedule(reqs, ANCHOR, tiny, "static", max_batch=8, kv_policy=kv_policy).rejected == ()


def test_bad_arguments_are_value_errors():
    reqs = traces.requests("orca", 3, 1, 0)
    with pytest.raises(ValueError, match="policy must be one of"):
        scheduler.schedule(reqs, ANCHOR, H100, "dynamic", 4)
    with pytest.raises(ValueError, match="max_batch must be a whole number"):
        scheduler.schedule(reqs, ANCHOR, H100, "static", 0)
    with pytest.raises(ValueError, match="kv_policy must be one of"):
        scheduler.schedule(reqs, ANCHOR, H100, "static", 4, kv_policy="pow2")
    with pytest.raises(ValueError, match="ids 0..n-1"):
        scheduler.schedule(reqs[1:], ANCHOR, H100, "static", 4)
    with pytest.raises(ValueError, match="arrival order"):
        scheduler.schedule([Request(0, 2.0, 10, 1), Request(1, 1.0, 10, 1)], ANCHOR, H100, "static", 4)


def test_percentile_interpolates_between_order_statistics():
    assert scheduler.percentile([1, 2, 3, 4], 50) == 2.5
    assert scheduler.percentile([1, 2, 3, 4], 90) == pytest.approx(3.7)
    assert scheduler.percentile([5], 90) == 5 and scheduler.percentile([], 50) == 0


# --- under load: capacity, steady state, overload, goodput -----------------------------------------------------

LOADS = (0.5, 2, 5, 7, 9, 12, 15, 30)


@pytest.mark.parametrize("policy", scheduler.POLICIES)
def test_capacity_bounds_the_throughput_at_any_load(policy):
    limit = scheduler.capacity(ANCHOR, H100, policy)
    for rate in LOADS:
        s = scheduler.serve(ANCHOR, H100, policy, rate_per_s=rate)
        assert s.capacity_per_s == limit
        # Both are measured on finite traces, over different requests: 1 % is the noise between them.
        assert s.requests_per_s <= limit * 1.01, rate
        assert s.overloaded == (rate > limit)
        if not s.overloaded:  # below capacity the server keeps up: it returns what arrives
            assert s.requests_per_s == pytest.approx(rate, rel=0.03)
        else:  # above it, it returns what it can, and no request meets a latency target in the long run
            assert s.requests_per_s == pytest.approx(limit, rel=0.01)
            assert s.goodput_per_s() == 0


def test_an_overloaded_percentile_measures_the_length_of_the_trace():
    # At the old default of 12 req/s static batching is past its capacity (~7.5 req/s): its queue grows, and the
    # p90 of the normalized latency grows with the trace (0.19 s at 48 requests, 8.9 s at 4,000).
    short = scheduler.serve(ANCHOR, H100, "static", rate_per_s=12, n=48)
    long = scheduler.serve(ANCHOR, H100, "static", rate_per_s=12, n=4000)
    assert short.overloaded and long.overloaded
    assert long.latency_per_token_p90_s > 20 * short.latency_per_token_p90_s
    assert long.latency_per_token_p90_s == pytest.approx(8.9, rel=0.02)


@pytest.mark.parametrize("policy, rate", [("static", 5), ("continuous", 5), ("continuous", 3), ("continuous", 8)])
def test_steady_percentiles_move_less_than_2_percent_when_the_trace_doubles(policy, rate):
    s = scheduler.serve(ANCHOR, H100, policy, rate_per_s=rate)
    assert not s.overloaded and s.settled and s.settle_change < scheduler.STEADY_TOLERANCE
    n = len(s.requests)
    shorter = scheduler.serve(ANCHOR, H100, policy, rate_per_s=rate, n=n // 2)
    for name in scheduler.PERCENTILES:
        assert getattr(s, name) == pytest.approx(getattr(shorter, name), rel=0.02), name
    assert s.requests == scheduler.serve(ANCHOR, H100, policy, rate_per_s=rate, n=n).requests


def test_close_to_capacity_the_percentiles_have_not_settled():
    # Continuous batching at 12 req/s runs at 85 % of its capacity: queues come and go slowly, and the TTFT p90
    # still moves by more than 2 % between 4,000 and 8,000 requests; the run says so.
    s = scheduler.serve(ANCHOR, H100, "continuous", rate_per_s=scheduler.OVERLOADED_RATE_PER_S)
    assert not s.overloaded and len(s.requests) == scheduler.STEADY_CAP and not s.settled


def test_paged_sustains_at_least_every_reservation_policy_at_equal_memory():
    # Where memory limits the batch, paging sustains more; where the steps are compute-bound anyway (the anchor on
    # the Orca trace at max_batch 256: every step holds a prefill), the policies tie to within the cost of a few
    # recomputes (0.5 %).
    for m, hw, trace, binds in ((QWEN32, H100, "chat", True), (LLAMA, A100, "chat", True),
                                (ANCHOR, H100, "chat", True), (ANCHOR, H100, "orca", False)):
        caps = {kv: scheduler.capacity(m, hw, "continuous", trace, max_batch=256, kv_policy=kv)
                for kv in scheduler.KV_POLICIES}
        best_reservation = max(caps[kv] for kv in scheduler.KV_POLICIES if kv != "paged")
        assert caps["paged"] >= best_reservation * (1 if binds else 0.995), (m.key, trace, caps)
        assert caps["contiguous-max"] <= caps["contiguous-pow2"] <= caps["contiguous-oracle"] * 1.001, (m.key, trace)


def test_paging_puts_more_requests_in_flight_at_the_same_latency():
    # vLLM's headline (§6.2), in this simulator: Qwen3-32B on an H100, the chat-like trace, at a load that a
    # 2,048-token reservation cannot sustain but paging can.
    def at(rate, kv):
        return scheduler.serve(QWEN32, H100, "continuous", trace="chat", rate_per_s=rate, max_batch=256, kv_policy=kv)

    # At 4 req/s reserving 2,048 tokens per request falls behind; paging keeps up, with more requests per step.
    assert at(4, "contiguous-max").overloaded and not at(4, "paged").overloaded
    assert at(4, "paged").mean_batch > 1.2 * at(4, "contiguous-max").mean_batch
    # At 3 req/s both keep up, but reservations only just: a tenth of the requests wait 5 s for their first token,
    # under 0.1 s paged. Same throughput, far lower latency; at the same latency, more throughput.
    assert not at(3, "contiguous-max").overloaded
    assert at(3, "contiguous-max").ttft_p90_s > 4 and at(3, "paged").ttft_p90_s < 0.1


# --- the figures the lesson prints ------------------------------------------------------------------------------

def test_the_default_scenario():
    # The Orca trace at 5 req/s, max_batch 16, the anchor on an H100, 2,048-token reservations: both policies keep
    # up with the arrivals, so their throughputs are the offered load; they differ in capacity and latency.
    static = scheduler.serve(ANCHOR, H100, "static")
    continuous = scheduler.serve(ANCHOR, H100, "continuous")
    assert not static.overloaded and not continuous.overloaded
    assert static.requests_per_s == pytest.approx(5, rel=0.01) and continuous.requests_per_s == pytest.approx(5, rel=0.01)
    # Capacity: static ~7.5 req/s, continuous 1.89 times as much (the review's own calculator: ~7.4 and 1.90).
    assert scheduler.capacity(ANCHOR, H100, "static") == pytest.approx(7.50, rel=0.005)
    assert scheduler.capacity_gain(ANCHOR, H100) == pytest.approx(1.89, rel=0.005)
    assert scheduler.capacity_gain(ANCHOR, H100) == pytest.approx(1.90, rel=0.01)
    # A static request waits for the batch ahead of it: over a second to its first token, against 26 ms.
    assert static.ttft_p50_s == pytest.approx(1.11, rel=0.01) and continuous.ttft_p50_s == pytest.approx(0.0262, rel=0.01)
    # Between tokens both run decode steps of about a batch-1 step and a bit: 16 ms.
    assert continuous.tpot_p50_s > roofline.decode(ANCHOR, H100, batch=1, context=4).time_s
    assert static.tpot_p50_s == pytest.approx(0.0161, rel=0.01)
    # Goodput at a 1 s TTFT and a 50 ms TPOT target: continuous serves every request within them, static under half.
    assert continuous.goodput_per_s() == pytest.approx(continuous.requests_per_s)
    assert static.goodput_per_s() < 0.5 * continuous.goodput_per_s()


def test_highest_meeting_equals_a_scan():
    # On margins that only fall, the search finds what trying every index would, probing each index at most once,
    # never above `top`, and far fewer than all of them.
    import random
    rng = random.Random(7)
    for case in range(400):
        top = rng.choice((-1, 0, 1, 2, 5, 60, 99, 999))
        start, margins = rng.uniform(-1, 3), []
        for _ in range(top + 1):
            margins.append(start)
            start -= rng.choice((0.0, rng.expovariate(5.0), rng.expovariate(0.2)))  # flat stretches, cliffs
        if case % 5 == 0:  # a sigmoid, as attainment against the rate
            mid, width = rng.uniform(0, top + 1), rng.uniform(0.5, 20)
            margins = [1 / (1 + math.exp((k - mid) / width)) - 0.9 for k in range(top + 1)]
        probes = []

        def margin(k, margins=margins, probes=probes):
            probes.append(k)
            return margins[k]

        expected = max((k for k in range(top + 1) if all(m >= 0 for m in margins[:k + 1])), default=None)
        first = rng.choice((None, 0, top // 2, top))
        assert scheduler.highest_meeting(top, margin, first=first) == expected, (case, top, first)
        assert len(probes) == len(set(probes)) and all(0 <= k <= top for k in probes)
        assert len(probes) <= 2 * math.ceil(math.log2(top + 2)) + 1
    assert scheduler.highest_meeting(-1, lambda k: 1 / 0) is None  # nothing below the top: no probe at all


def test_sustained_rate_at_a_latency_target():
    # The highest rate of the grid within capacity and the median target (Orca's way of comparing), by
    # highest_meeting: it meets the target there, and the next rate of the grid does not.
    rates = scheduler.RATE_GRID_PER_S
    assert rates[0] == 0.5 and rates[-1] == 50 and list(rates) == sorted(set(rates))
    # issue #23: the grid is every rate the batching-timeline widget can be set to, so a student finds the same rate
    from sim.widgets import batching_timeline
    control = batching_timeline.WIDGET.control("rate")
    assert rates == tuple(x / 2 for x in range(1, 101))
    assert all(control.coerce(r) == r and control.problem(r) is None for r in rates)
    assert control.problem(0.7) is not None and control.problem(5.1) is not None  # the old grid's steps of 0.1
    for policy in scheduler.POLICIES:
        for target in (0.02, 0.025):
            run = scheduler.sustained(ANCHOR, H100, policy, target)
            assert run.latency_per_token_p50_s <= target and not run.overloaded
            k = rates.index(run.rate_per_s)
            above = scheduler.serve(ANCHOR, H100, policy, rate_per_s=rates[k + 1])
            assert above.overloaded or above.latency_per_token_p50_s > target
            # the very run the widget shows at that rate
            shown = scheduler.serve(ANCHOR, H100, policy, rate_per_s=run.rate_per_s)
            assert run.latency_per_token_p50_s == shown.latency_per_token_p50_s
    static, continuous = (scheduler.sustained(ANCHOR, H100, p, 0.025) for p in scheduler.POLICIES)
    assert static.rate_per_s == 1.0 and continuous.rate_per_s == 13.0
    # the lesson says static batching is then at the lowest rate the control offers
    assert scheduler.sustained(ANCHOR, H100, "static", 0.02).rate_per_s == scheduler.MIN_RATE_PER_S == 0.5
    # Below the batch-1 decode step (15.39 ms) no rate can meet the target.
    assert scheduler.sustained(ANCHOR, H100, "continuous", 0.01) is None
    with pytest.raises(ValueError):
        scheduler.sustained(ANCHOR, H100, "static", 0)


# --- tensor parallelism ----------------------------------------------------------------------------------------------

def test_on_two_gpus_a_lone_request_s_decode_steps_are_the_tp2_roofline_steps():
    from sim.physics import parallel
    m, hw = presets.model("qwen3-32b"), presets.hardware("h100-sxm")
    reqs = (Request(0, 0.0, 100, 6),)
    one = scheduler.schedule(reqs, m, hw, "continuous", 4, "paged", tensor_parallel=2).requests[0]
    cost = parallel.step_cost(m, hw, 2)
    prefill = cost.time_s(100, cost.prefill_attention_s(100), 0, 0, 1)
    assert one.first_token_s == pytest.approx(prefill, rel=1e-12)
    # decode step k reads 100 + k - 1 cached tokens: roofline on each GPU's half plus 2 x 64 all-reduces of 10 KiB
    decode = math.fsum(parallel.decode(m, hw, 2, 1, 100 + k - 1).time_s for k in range(1, 6))
    assert one.done_s - one.first_token_s == pytest.approx(decode, rel=1e-12)
    plain = scheduler.schedule(reqs, m, hw, "continuous", 4, "paged")
    assert scheduler.schedule(reqs, m, hw, "continuous", 4, "paged", tensor_parallel=1).requests == plain.requests


def test_a_model_no_single_gpu_holds_is_served_by_two():
    m, hw = presets.model("llama-2-70b"), presets.hardware("h100-sxm")
    reqs = (Request(0, 0.0, 200, 20), Request(1, 0.1, 300, 10))
    assert scheduler.schedule(reqs, m, hw, "continuous", 4, "paged").rejected == (0, 1)
    two = scheduler.schedule(reqs, m, hw, "continuous", 4, "paged", tensor_parallel=2)
    assert two.rejected == () and all(r.served for r in two.requests)
