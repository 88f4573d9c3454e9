"""Mixture-of-experts physics (sim/physics/routing.py, sim/physics/moe.py), the MoE presets, expert parallelism in the
scheduler and the replay of the DP 2 + EP 2 vLLM run, each pinned to a hand computation or a published figure."""

from __future__ import annotations

import math
import statistics

import pytest

from sim.physics import cache, feasibility, measured, model_size, moe, parallel, presets, roofline, routing, step
from sim.serving import replay, scheduler
from sim.serving.traces import Request

MIXTRAL, QWEN, DEEPSEEK = (presets.model(k) for k in ("mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3"))
H100, H200, PRO = (presets.hardware(k) for k in ("h100-sxm", "h200-sxm", "rtx-pro-6000"))


# --- the presets against their published parameter counts -----------------------------------------------------------

def test_mixtral_counts_46_7b_in_total_and_12_9b_used_per_token():
    # Mistral AI, "Mixtral of experts": 46.7B total, 12.9B per token (the embedding row a token looks up counted)
    assert round(model_size.resident_params(MIXTRAL) / 1e9, 1) == 46.7
    per_token = model_size.active_params(MIXTRAL) + model_size.embedding_params(MIXTRAL)
    assert round(per_token / 1e9, 1) == 12.9
    # by hand: a layer's attention (q and o 4096 x 4096, k and v 4096 x 1024), 2 of 8 experts of 3 x 4096 x 14336,
    # the router 4096 x 8; 32 layers and the LM head
    layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 2 * 3 * 4096 * 14336 + 4096 * 8
    assert model_size.active_params(MIXTRAL) == 32 * layer + 32000 * 4096


def test_qwen3_30b_a3b_counts_30_5b_in_total_29_9b_without_embeddings_and_3_3b_activated():
    # its model card: "30.5B in total and 3.3B activated", "Non-Embedding: 29.9B"
    total = model_size.resident_params(QWEN)
    assert round(total / 1e9, 1) == 30.5
    assert round((total - model_size.embedding_params(QWEN) - model_size.lm_head_params(QWEN)) / 1e9, 1) == 29.9
    activated = model_size.active_params(QWEN) + model_size.embedding_params(QWEN)
    assert 3.3e9 <= activated < 3.4e9
    assert model_size.expert_params(QWEN) == 3 * 2048 * 768


def test_deepseek_v3_counts_671b_in_total_and_37b_activated():
    # its README: "671B total parameters with 37B activated for each token" (the 14B MTP module beside them)
    assert round(model_size.resident_params(DEEPSEEK) / 1e9) == 671
    # the report does not say whether the looked-up embedding row is counted: 36.6B without it, 37.6B with it
    active = model_size.active_params(DEEPSEEK)
    assert 36.5e9 < active < active + model_size.embedding_params(DEEPSEEK) < 37.6e9
    assert DEEPSEEK.moe_layers == 58 and DEEPSEEK.dense_mlp_layers == 3


def test_deepseek_v3_latent_attention_by_hand():
    # inference/model.py: wq_a 7168x1536, q_norm 1536, wq_b 1536 x 128(128+64), wkv_a 7168 x (512+64), kv_norm 512,
    # wkv_b 512 x 128(128+128), wo 128x128 x 7168
    by_hand = (7168 * 1536 + 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 + 512 * 128 * 256 + 128 * 128 * 7168)
    assert model_size.attention_params(7168, DEEPSEEK.attention) == by_hand
    # its cache: the 512 latent and the 64-wide RoPE key per layer, BF16
    assert cache.kv_bytes_per_token(DEEPSEEK) == 61 * (512 + 64) * 2
    # attention with the up-projections absorbed: q.k over 576, p.v over 512, 2 FLOPs each, 128 heads
    assert cache.attention_flops_per_cached_token(DEEPSEEK) == 61 * 128 * (2 * 512 + 64) * 2


def test_dense_models_count_as_before():
    for key in presets.model_keys(every=True):
        m = presets.model(key)
        if m.experts is None:
            assert model_size.active_params(m) == model_size.matmul_params(m)
            assert routing.weights_read_bytes(m, 64) == model_size.matmul_weight_bytes(m)


# --- distinct experts touched ---------------------------------------------------------------------------------------

def test_the_expectation_by_hand():
    # top-8 of 256 at batch 64: 256 (1 - (248/256)^64) = 222.44, 86.9 %
    assert routing.expected_touched(256, 8, 64) == pytest.approx(256 * (1 - (248 / 256) ** 64), rel=1e-12)
    assert routing.expected_touched(256, 8, 64) == pytest.approx(222.44, abs=0.005)
    assert routing.expected_touched(256, 8, 1) == pytest.approx(8)  # one token: its k
    assert routing.expected_touched(8, 2, 0) == 0
    assert routing.power(0.5, 10) == 2.0 ** -10 and routing.power(3.0, 0) == 1.0


@pytest.mark.parametrize("experts, k, batch", [(256, 8, 64), (128, 8, 16), (8, 2, 3)])
def test_the_expectation_matches_the_mean_of_seeded_samples_within_one_percent(experts, k, batch):
    mean = statistics.fmean(routing.route(experts, k, batch, seed=s).touched for s in range(400))
    assert mean == pytest.approx(routing.expected_touched(experts, k, batch), rel=0.01)


def test_a_sample_is_reproducible_and_counts_every_pick():
    a, b = routing.route(256, 8, 64, seed=3), routing.route(256, 8, 64, seed=3)
    assert a == b and a != routing.route(256, 8, 64, seed=4)
    assert sum(a.loads) == 64 * 8 and a.touched <= 64 * 8 and a.busiest <= 64
    assert a.mean_load == pytest.approx(64 * 8 / a.touched)


def test_skew_touches_fewer_experts():
    uniform = statistics.fmean(routing.route(256, 8, 64, seed=s).touched for s in range(50))
    zipf = statistics.fmean(routing.route(256, 8, 64, seed=s, skew=1.0).touched for s in range(50))
    assert zipf < uniform - 30
    shares = routing.popularity(256, 0.5)
    assert math.fsum(shares) == pytest.approx(1) and shares[0] > shares[-1]
    with pytest.raises(ValueError, match="skew"):
        routing.route(8, 2, 4, skew=1.5)


# --- one decode step, by hand ---------------------------------------------------------------------------------------

def test_one_moe_decode_step_by_hand():
    """Qwen3-30B-A3B, batch 16 at 1,024 tokens of context, on an H100 SXM."""
    b, ctx = 16, 1024
    est = moe.decode(QWEN, H100, b, ctx)
    expert = 3 * 2048 * 768
    touched = 128 * (1 - (120 / 128) ** 16)  # 81.9 experts of 128 per layer
    attention = 2048 * 4096 + 2 * 2048 * 512 + 4096 * 2048 + 2 * 128
    fixed = 48 * (attention + 2048 * 128) + 151936 * 2048  # attention, router, LM head
    weights = (fixed + 48 * touched * expert) * 2
    flops = 2 * b * (48 * (attention + 2048 * 128 + 8 * expert) + 151936 * 2048)
    matmuls = est.op("matmuls")
    assert matmuls.bytes == pytest.approx(weights, rel=1e-12) and matmuls.flops == flops
    assert matmuls.time_s == pytest.approx(weights / 3.35e12, rel=1e-12)  # memory-bound
    kv = 48 * 2 * 4 * 128 * 2
    assert est.op("attention").bytes == b * (ctx + 1) * kv
    # the scheduler's step cost gives the same step
    cost = step.step_cost(QWEN, H100)
    assert cost.time_s(0, 0.0, b, b * ctx, 0) == pytest.approx(est.time_s, rel=1e-12)


def test_bytes_climb_from_active_to_total_and_the_advantage_falls():
    active = model_size.active_params(DEEPSEEK) * 1
    assert routing.weights_read_bytes(DEEPSEEK, 1) == pytest.approx(active, rel=1e-12)
    assert routing.weights_read_bytes(DEEPSEEK, 4096) == pytest.approx(model_size.matmul_weight_bytes(DEEPSEEK),
                                                                       rel=1e-9)
    with feasibility.unquoted():
        # at batch 1 the MoE step is the active-size dense model's, and total/active faster than the total-size one
        assert moe.decode(DEEPSEEK, H200, 1, 0).time_s == pytest.approx(
            moe.as_dense(DEEPSEEK, H200, 1, 0, "active").time_s, rel=1e-12)
        assert moe.advantage(DEEPSEEK, H200, 1, 0) == pytest.approx(
            model_size.matmul_params(DEEPSEEK) / model_size.active_params(DEEPSEEK), rel=1e-3)
        first = moe.advantage_batch(DEEPSEEK, H200, 0, 2.0)
        assert moe.advantage(DEEPSEEK, H200, first, 0) < 2.0 <= moe.advantage(DEEPSEEK, H200, first - 1, 0)
    # the MoE's weight matmuls turn compute-bound at a batch far beyond a dense model's (critical_batch searched)
    crit = roofline.critical_batch(QWEN, H100)
    with feasibility.unquoted():
        assert roofline.decode(QWEN, H100, crit, 0).op("matmuls").bound == "compute"
        assert roofline.decode(QWEN, H100, crit - 1, 0).op("matmuls").bound == "memory"
    assert crit > 4 * roofline.critical_batch(presets.model("qwen3-32b"), H100)


def test_the_measured_moe_block_follows_experts_not_tokens():
    table = measured.moe_block("rtx-pro-6000-dp2-ep2")
    assert dict(table[16])[8] == pytest.approx(57.1293e-6, rel=1e-4)
    assert dict(table[16])[128] == pytest.approx(817.612e-6, rel=1e-4)
    eight = [dict(table[t])[8] for t in (1, 2, 4, 8, 16, 32, 64, 128)]
    assert max(eight) < 1.6 * min(eight)  # 1 to 128 tokens: flat within the noise
    # the measured block sits above its bound (all 128 experts read once), within 10 % at 16 tokens
    bound = moe.block(QWEN, PRO, 16, 128).time_s
    assert bound < dict(table[16])[128] < 1.1 * bound
    assert bound == pytest.approx((128 * 3 * 2048 * 768 + 2048 * 128) * 2 / 1.597e12, rel=1e-12)
    with pytest.raises(ValueError, match="dense"):
        measured.moe_block("rtx-4090")


# --- expert parallelism ---------------------------------------------------------------------------------------------

def test_an_ep_shard_holds_its_experts_and_everything_else_whole():
    one = moe.ep_shard(DEEPSEEK, 8)
    assert one.experts.held == 32
    held = model_size.resident_params(DEEPSEEK) - model_size.resident_params(one)
    assert held == 58 * (256 - 32) * model_size.expert_params(DEEPSEEK)
    assert moe.ep_shard(DEEPSEEK, 1) is DEEPSEEK
    with pytest.raises(ValueError, match="does not divide"):
        moe.ep_shard(MIXTRAL, 16)
    # each GPU's MoE layers see 8 GPUs' tokens: 32 experts x (1 - (248/256)^(8 x 4))
    assert routing.touched(one, 4) == pytest.approx(32 * (1 - (248 / 256) ** 32), rel=1e-12)


def test_all_to_all_by_hand():
    # top-8 of 256 over 8 GPUs: a token misses a given other GPU's 32 experts with C(224, 8) / C(256, 8)
    avoid = math.comb(224, 8) / math.comb(256, 8)
    assert moe.remote_gpus(DEEPSEEK, 8) == pytest.approx(7 * (1 - avoid), rel=1e-12)
    assert moe.all_to_all_bytes(DEEPSEEK, 8, 32) == pytest.approx(32 * 7168 * 2 * 7 * (1 - avoid), rel=1e-12)
    nv = parallel.interconnect("nvlink-h200")
    s = moe.decode_ep(DEEPSEEK, H200, 8, 32, 4096)
    assert s.all_to_alls == 2 * 58
    each = parallel.floor_for(nv, 8) + moe.all_to_all_bytes(DEEPSEEK, 8, 32) / nv.bandwidth_bytes_per_s
    assert s.all_to_all_s == pytest.approx(each, rel=1e-12)
    assert s.time_s == pytest.approx(s.per_gpu.time_s + 116 * each, rel=1e-12)
    assert moe.remote_gpus(DEEPSEEK, 1) == 0 and moe.decode_ep(QWEN, H100, 1, 8, 0).communication_time_s == 0


# --- the scheduler and the replay -----------------------------------------------------------------------------------

def test_the_scheduler_serves_one_ep_gpu_with_its_step_cost():
    reqs = tuple(Request(i, 0.0, 200, 20) for i in range(8))
    cost = moe.step_cost(QWEN, PRO, 2, "pcie-servingsim")
    assert isinstance(cost, moe.ExpertParallelStepCost)
    got = scheduler.schedule(reqs, QWEN, PRO, "continuous", 8, expert_parallel=2, link="pcie-servingsim")
    # a step of 8 decoders: the GPU's share's roofline with 16 tokens through its MoE layers, plus 96 all-to-alls
    est = roofline.decode(moe.ep_shard(QWEN, 2), PRO, 8, 200)
    link = parallel.interconnect("pcie-servingsim")
    a2a = 96 * (link.floor_s + 8 * 2048 * 2 * moe.remote_gpus(QWEN, 2) / link.bandwidth_bytes_per_s)
    assert cost.time_s(0, 0.0, 8, 8 * 200, 0) == pytest.approx(est.time_s + a2a, rel=1e-12)
    assert all(x.served for x in got.requests)
    with pytest.raises(ValueError, match="tensor and expert"):
        scheduler.schedule(reqs, QWEN, PRO, "continuous", 8, tensor_parallel=2, expert_parallel=2)


def test_the_dp2_ep2_run_replays_within_a_few_percent_on_tpot_and_latency():
    got = replay.shipped("rtx-pro-6000-dp2-ep2", "profiled")["error"]
    for k in ("tpot_p50_s", "tpot_p90_s", "latency_p50_s", "latency_mean_s"):
        assert abs(got[k]) < 0.03
    # the roofline bound is faster than the engine on every metric
    assert max(replay.shipped("rtx-pro-6000-dp2-ep2")["error"].values()) < 0


def test_the_dp2_ep2_run_is_dealt_to_two_engines():
    run = measured.run("rtx-pro-6000-dp2-ep2")
    assert replay.gpus(run) == 2 and replay.expert_parallel(run) == 2
    assert replay.one_gpu(run, QWEN).experts.held == 64
    served = replay.predicted(run, PRO, QWEN, link="pcie-servingsim")
    assert [x.request for x in served] == list(replay.trace(run))
    # each engine alone: the even-numbered requests are engine 0's, served as schedule() serves them
    evens = tuple(Request(i, r.arrival_s, r.prompt_tokens, r.output_tokens)
                  for i, r in enumerate(replay.trace(run)[::2]))
    alone = scheduler.served(evens, QWEN, PRO, "continuous", 128, "paged", token_budget=2048,
                             kv_blocks=replay.pool_blocks(run, PRO, QWEN), expert_parallel=2, link="pcie-servingsim")
    assert [x.first_token_s for x in alone] == [x.first_token_s for x in served[::2]]


def test_the_replay_widget_shows_the_dp2_ep2_run_with_its_note():
    from sim.widgets import engine_replay
    view = engine_replay.render({"run": "rtx-pro-6000-dp2-ep2", "lang": "zh"})
    want = replay.shipped("rtx-pro-6000-dp2-ep2")
    for k in replay.METRICS:
        assert view["outputs"][f"roofline.{k}"]["value"] == pytest.approx(want["predicted"][k], rel=1e-5)
    assert view["flags"] == {"one_gpu": False, "two_gpus": False, "experts": True}


def test_the_command_line_names_a_dp_ep_run():
    import subprocess
    import sys
    stem = f"{measured.DATA_DIR}/vllm-rtx-pro-6000-qwen3-30b-a3b-dp2-ep2"
    done = subprocess.run([sys.executable, "-m", "sim.serving.replay", f"{stem}-requests.jsonl", f"{stem}-meta.json",
                           "--gpu", "rtx-pro-6000", "--cost", "profiled"], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert "2 GPUs, data parallel with expert parallelism, all-to-alls over pcie-servingsim" in done.stdout
