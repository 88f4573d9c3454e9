"""Tensor parallelism: the ring formula and bus bandwidth, Vidur's measured all-reduce curve and its loader, each GPU's
shard of a model (K/V heads replicated past their count), and a decode step on n GPUs held to hand computations, to
the worked example of Llama-2-70B and to the single-GPU roofline at n = 1."""

import math
import statistics

import pytest

from sim.physics import cache, memory, model_size, parallel, presets, roofline
from sim.physics.measured import MeasuredDataError
from sim.physics.presets import Attention, Model

H100 = presets.hardware("h100-sxm")
MiB = 2**20
US = 1e-6

# meta-llama/Llama-2-70b-hf config.json: hidden_size 8192, intermediate_size 28672, 80 layers, 64 heads, 8 KV heads
# (head_dim 128), vocab 32,000, untied. Not a preset of the course (yet); built here for the worked example.
LLAMA_2_70B = Model(key="llama-2-70b", name="Llama-2-70B", source="meta-llama/Llama-2-70b-hf config.json",
                    hidden=8192, intermediate=28672, vocab=32000, tied_embeddings=False, layers=80,
                    full_attention_interval=1, attention=Attention(64, 8, 128, output_gate=False, qk_norm=False))


# --- the formula ---------------------------------------------------------------------------------------------------

def test_ring_formula_moves_two_n_minus_one_over_n_of_the_message_through_each_link():
    assert [parallel.ring_factor(n) for n in (1, 2, 4, 8)] == [0.0, 1.0, 1.5, 1.75]
    # 1 MiB over 8 GPUs on 450 GB/s: 1.75 x 1,048,576 / 450e9 = 4.078 µs
    assert parallel.ring_all_reduce_time(MiB, 8, 450e9) == pytest.approx(4.0778e-6, rel=1e-4)
    assert parallel.ring_all_reduce_time(64 * MiB, 2, 300e9) == pytest.approx(64 * MiB / 300e9, rel=1e-12)
    assert parallel.ring_all_reduce_time(MiB, 8, 450e9, latency_s=30 * US) == pytest.approx(34.0778e-6, rel=1e-4)
    assert parallel.ring_all_reduce_time(MiB, 1, 450e9, latency_s=30 * US) == 0.0  # one GPU: nothing to reduce
    for bad in ({"bandwidth": 0}, {"n": 0}, {"latency_s": -1e-6}):
        with pytest.raises(ValueError):
            parallel.ring_all_reduce_time(MiB, **{"n": 8, "bandwidth": 450e9, **bad})


def test_bus_bandwidth_undoes_the_ring_formula_and_follows_nccl_tests():
    for n in (2, 4, 8):
        t = parallel.ring_all_reduce_time(8 * MiB, n, 450e9)
        assert parallel.bus_bandwidth(8 * MiB, t, n) == pytest.approx(450e9, rel=1e-12)
    # algbw x 2(n-1)/n: 64 MiB in 322 µs among 8 GPUs = 208.4 GB/s x 1.75
    assert parallel.bus_bandwidth(64 * MiB, 322 * US, 8) == pytest.approx(64 * MiB / 322e-6 * 1.75, rel=1e-12)
    with pytest.raises(ValueError):
        parallel.bus_bandwidth(MiB, 0, 8)


# --- the measured curve --------------------------------------------------------------------------------------------

GOOD = "# a comment\nsetup,gpus,bytes,median_ms\nh100_dgx,8,2048,0.037\nh100_dgx,8,1048576,0.034\n"


@pytest.mark.parametrize("row, message", [
    ("h100_dgx,8,4096,abc", r"x\.csv:5: median_ms is 'abc', not a number"),
    ("h100_dgx,8,4096", r"x\.csv:5: 3 cells, the header names 4"),
    ("h200_dgx,8,4096,0.03", r"x\.csv:5: setup is 'h200_dgx'"),
    ("h100_dgx,1,4096,0.03", r"x\.csv:5: gpus is '1', not a whole number of 2 or more"),
    ("h100_dgx,8,4.5,0.03", r"x\.csv:5: bytes is '4.5', not a whole number"),
    ("h100_dgx,8,4096,0", r"x\.csv:5: median_ms is '0', not a time above 0"),
    ("h100_dgx,8,2048,0.03", r"x\.csv:5: bytes 2048 for h100_dgx on 8 GPUs is given twice"),
])
def test_the_loader_names_file_line_and_field_of_a_bad_row(tmp_path, row, message):
    path = tmp_path / "x.csv"
    path.write_text(GOOD + row + "\n", encoding="utf-8")
    with pytest.raises(MeasuredDataError, match=message):
        parallel.load_all_reduce(str(path))
    path.write_text(GOOD, encoding="utf-8")
    assert parallel.load_all_reduce(str(path)) == {("h100_dgx", 8): ((2048, 0.037e-3), (MiB, 0.034e-3))}
    path.write_text("setup,n,bytes,median_ms\n", encoding="utf-8")
    with pytest.raises(MeasuredDataError, match=r"x\.csv:1: the header is"):
        parallel.load_all_reduce(str(path))


def test_the_shipped_curves_hold_every_setup_from_2_kib_to_64_mib_in_seconds():
    counts = {"h100_dgx": (2, 4, 8), "a100_dgx": (2, 4, 8), "h100_pairwise_nvlink": (2, 4),
              "a100_pairwise_nvlink": (2, 4)}
    for setup, gpus in counts.items():
        assert parallel.measured_gpus(setup) == gpus
        for n in gpus:
            points = parallel.measured_all_reduce(setup, n)
            sizes = [s for s, _ in points]
            # Vidur's grid: 2 KiB, then 8 KiB steps to 1 MiB (the nearest to 8 KiB..512 KiB), every power of two after
            assert sizes == [2048, 10240, 18432, 34816, 67584, 133120, 264192, 526336] + [2**k for k in range(20, 27)]
            assert all(2e-6 < t < 5e-3 for _, t in points), (setup, n)  # milliseconds in the file, seconds here
    # cells copied from the upstream file (time_stats.all_reduce.median, rank 0, devices_per_node = num_workers)
    assert dict(parallel.measured_all_reduce("h100_dgx", 8))[MiB] == 0.034e-3
    assert dict(parallel.measured_all_reduce("a100_dgx", 8))[64 * MiB] == 0.675e-3
    # 16 MiB was measured twice upstream (two ranges of Vidur's grid meet there): the median of the two rows
    assert dict(parallel.measured_all_reduce("a100_dgx", 8))[16 * MiB] == pytest.approx((0.275 + 0.274) / 2 * 1e-3)
    with pytest.raises(ValueError, match="measured for 2, 4"):
        parallel.measured_all_reduce("h100_pairwise_nvlink", 8)


def test_interpolation_hits_the_shipped_points_and_goes_straight_in_log_log_between_them():
    for setup, n in (("h100_dgx", 8), ("a100_dgx", 2), ("a100_pairwise_nvlink", 4)):
        for size, t in parallel.measured_all_reduce(setup, n):
            assert parallel.all_reduce_time(size, n, setup) == t
    t1, t2 = 0.039e-3, 0.051e-3  # h100_dgx, 8 GPUs, at 2 and 4 MiB
    assert parallel.all_reduce_time(math.sqrt(8) * MiB, 8, "h100_dgx") == pytest.approx(math.sqrt(t1 * t2), rel=1e-12)
    # below the smallest size measured: clamped to its time; above the largest: refused
    assert parallel.all_reduce_time(100, 8, "h100_dgx") == 0.037e-3
    with pytest.raises(ValueError, match="past the largest all-reduce measured"):
        parallel.all_reduce_time(64 * MiB + 1, 8, "h100_dgx")
    assert parallel.all_reduce_time(64 * MiB, 1, "h100_dgx") == 0.0


def test_the_facts_files_figures_recomputed_from_the_shipped_data():
    h100 = dict(parallel.measured_all_reduce("h100_dgx", 8))
    a100 = dict(parallel.measured_all_reduce("a100_dgx", 8))
    band = [16 * 1024 <= s <= 256 * 1024 + 8192 for s in h100]  # 18, 34, 66, 130 and 258 KiB stand for 16..256 KiB
    h100_band = sorted(t for (s, t), keep in zip(h100.items(), band) if keep)
    a100_band = sorted(t for (s, t), keep in zip(a100.items(), band) if keep)
    # the facts file has 29-39 µs for the H100 DGX: the data give 19-39 µs (130 KiB took 19 µs)
    assert [round(t / US) for t in h100_band] == [19, 29, 35, 36, 39]
    assert [round(t / US) for t in a100_band] == [26, 31, 32, 32, 32]  # the facts file: 26-32 µs
    assert (h100[MiB], a100[MiB]) == pytest.approx((34 * US, 64 * US), rel=1e-12)
    assert (h100[8 * MiB], a100[8 * MiB]) == pytest.approx((74 * US, 155 * US), rel=1e-12)
    assert (h100[64 * MiB], a100[64 * MiB]) == pytest.approx((322 * US, 675 * US), rel=1e-12)
    assert parallel.bus_bandwidth(64 * MiB, h100[64 * MiB], 8) / 1e9 == pytest.approx(364.7, abs=0.05)
    assert parallel.bus_bandwidth(64 * MiB, a100[64 * MiB], 8) / 1e9 == pytest.approx(174.0, abs=0.05)


def test_the_latency_floor_is_the_median_of_the_points_up_to_1_mib():
    # h100_dgx, 8 GPUs, 2 KiB..1 MiB: 37 23 29 35 36 19 39 31 34 µs -> median 34
    assert parallel.latency_floor("h100_dgx", 8) == pytest.approx(34 * US, rel=1e-12)
    # h100_dgx, 2 GPUs: 7 7 11 40 41 8 41 42 43 µs -> 40 (the points are bimodal; the median rides over them)
    assert parallel.latency_floor("h100_dgx", 2) == pytest.approx(40 * US, rel=1e-12)
    assert parallel.latency_floor("a100_dgx", 8) == pytest.approx(32 * US, rel=1e-12)
    points = [t for s, t in parallel.measured_all_reduce("a100_pairwise_nvlink", 4) if s <= MiB]
    assert parallel.latency_floor("a100_pairwise_nvlink", 4) == statistics.median(points)
    assert statistics.median(points) == pytest.approx(66 * US, rel=1e-12)


# --- interconnects -------------------------------------------------------------------------------------------------

def test_interconnect_presets_carry_the_scaling_book_and_pcie_figures():
    bandwidth = {k: parallel.interconnect(k).bandwidth_bytes_per_s for k in parallel.interconnect_keys()}
    assert bandwidth["nvlink-a100"] == 300e9 and bandwidth["nvlink-b200"] == 900e9
    assert bandwidth["nvlink-h100"] == bandwidth["nvlink-h200"] == 450e9
    assert bandwidth["pcie-gen4-x16"] == pytest.approx(16 * 16e9 * 128 / 130 / 8, rel=1e-15)  # 31.5 GB/s
    assert bandwidth["pcie-gen5-x16"] == pytest.approx(2 * bandwidth["pcie-gen4-x16"], rel=1e-15)
    for key in presets.hardware_keys(every=True):  # every GPU has a link to default to
        assert key in parallel.default_interconnect(presets.hardware(key)).gpus
    assert parallel.default_interconnect(H100).key == "nvlink-h100"
    assert all(parallel.interconnect(k).source for k in bandwidth)


def test_formula_timing_is_the_floor_plus_the_ring_term_and_measured_timing_reads_the_curve():
    ic = parallel.interconnect("nvlink-h100")
    assert parallel.all_reduce_s(ic, MiB, 8) == pytest.approx(34e-6 + 1.75 * MiB / 450e9, rel=1e-12)
    assert parallel.all_reduce_s(ic, MiB, 8, "measured") == 34e-6
    b200 = parallel.interconnect("nvlink-b200")  # no B200 node measured: the H100 DGX's floor, no curve
    assert parallel.all_reduce_s(b200, MiB, 8) == pytest.approx(34e-6 + 1.75 * MiB / 900e9, rel=1e-12)
    with pytest.raises(ValueError, match="no measured all-reduce"):
        parallel.all_reduce_s(b200, MiB, 8, "measured")
    pcie = parallel.interconnect("pcie-gen4-x16")  # the 4-GPU pairwise machine's floor at any n
    assert parallel.all_reduce_s(pcie, MiB, 2) == pytest.approx(66e-6 + MiB / pcie.bandwidth_bytes_per_s, rel=1e-12)
    with pytest.raises(ValueError, match="timing"):
        parallel.all_reduce_s(ic, MiB, 8, "exact")


# --- shards --------------------------------------------------------------------------------------------------------

def test_kv_heads_are_split_until_there_are_fewer_than_gpus_then_replicated():
    m = presets.model("llama-3.1-8b")  # 32 query heads, 8 K/V heads
    assert [parallel.kv_heads_per_gpu(m, n) for n in (1, 2, 4, 8, 16)] == [8, 4, 2, 1, 1]
    per_token = {n: cache.kv_bytes_per_token(parallel.shard(m, n)) for n in (1, 2, 8, 16)}
    assert per_token[1] == 32 * 2 * 8 * 128 * 2 == 131072
    assert per_token[2] == per_token[1] // 2 and per_token[8] == per_token[1] // 8
    assert per_token[16] == 32 * 2 * 1 * 128 * 2 == 2 * per_token[1] // 16  # replicated: twice an even split
    s = parallel.shard(m, 16)
    assert (s.attention.q_heads, s.attention.kv_heads, s.intermediate) == (2, 1, 896)
    # the hybrid anchor: 24 query heads, 4 K/V heads; at 8 GPUs each keeps 3 query heads and 1 K/V head (2 copies)
    q = parallel.shard(presets.model("qwen3.8-27b"), 8)
    assert (q.attention.q_heads, q.attention.kv_heads, q.gated_deltanet.key_heads, q.gated_deltanet.value_heads) == \
        (3, 1, 2, 6)
    assert cache.kv_bytes_per_token(q) * 4 == cache.kv_bytes_per_token(presets.model("qwen3.8-27b"))
    for n in (3, 64):  # 3 divides neither heads nor K/V heads; 64 GPUs would split 32 query heads in halves
        with pytest.raises(ValueError, match="tensor parallel"):
            parallel.shard(m, n)
    with pytest.raises(ValueError, match="12 is not a multiple of the model's 8 K/V heads"):
        parallel.kv_heads_per_gpu(m, 12)


def test_a_shard_holds_a_hand_counted_share_of_the_weights():
    s = parallel.shard(LLAMA_2_70B, 8)
    attention = 8192 * 8 * 128 + 2 * 8192 * 1 * 128 + 8 * 128 * 8192  # q, k and v (1 K/V head), o
    mlp = 3 * 8192 * (28672 // 8)
    assert model_size.matmul_params(s) == 80 * (attention + mlp) + 4000 * 8192
    assert model_size.matmul_weight_bytes(s) == 17_178_296_320  # 17.2 GB per GPU
    # resident: plus a vocab-eighth of the embedding and every norm whole
    assert model_size.resident_params(s) == model_size.matmul_params(s) + 4000 * 8192 + 2 * 8192 * 80 + 8192
    assert parallel.shard(LLAMA_2_70B, 1) is LLAMA_2_70B


# --- steps ---------------------------------------------------------------------------------------------------------

def test_the_worked_example_llama_2_70b_at_batch_64_sends_160_all_reduces_of_1_mib():
    step = parallel.decode(LLAMA_2_70B, H100, 8, batch=64, context=0, timing="measured")
    assert step.message_bytes == 64 * 8192 * 2 == MiB
    assert step.all_reduces == 160
    assert step.communication_time_s == pytest.approx(160 * 34e-6, rel=1e-12)  # 5.44 ms on the measured curve
    weights = 17_178_296_320 / 3.35e12  # the shard read once: 5.13 ms, about as long as the all-reduces
    assert step.weights_time_s == pytest.approx(weights, rel=1e-12)
    kv_written = 64 * 80 * 2 * 1 * 128 * 2 / 3.35e12  # each request's new K and V, one head per layer per GPU
    assert step.time_s == pytest.approx(weights + kv_written + 160 * 34e-6, rel=1e-12)
    assert step.tokens_per_s_per_request == pytest.approx(1 / step.time_s, rel=1e-12)
    assert step.tokens_per_s_per_gpu == pytest.approx(64 / step.time_s / 8, rel=1e-12)
    formula = parallel.decode(LLAMA_2_70B, H100, 8, batch=64, context=0)
    assert formula.all_reduce_s == pytest.approx(34e-6 + 1.75 * MiB / 450e9, rel=1e-12)  # 38.1 µs


def test_a_tp_2_step_matches_a_hand_computation():
    m = presets.model("llama-2-7b")  # 32 layers, hidden 4,096, MLP 11,008, 32 heads (no GQA), vocab 32,000
    step = parallel.decode(m, H100, 2, batch=8, context=1024)
    params = 32 * (3 * 4096 * 5504 + 4 * 4096 * 2048) + 16000 * 4096  # per GPU: half of every matmul and the head
    weights = max(2 * params * 8 / 989.5e12, 2 * params / 3.35e12)
    kv_row = 32 * 2 * 16 * 128 * 2  # one token's K and V in the GPU's 16 heads
    attention = max(8 * 32 * 16 * 128 * 4 * 1024 / 989.5e12, 8 * 1025 * kv_row / 3.35e12)
    all_reduce = 40e-6 + 1.0 * 8 * 4096 * 2 / 450e9  # H100 DGX floor at 2 GPUs + 64 KiB at 450 GB/s
    assert step.weights_time_s == pytest.approx(weights, rel=1e-12)
    assert step.compute_time_s == pytest.approx(weights + attention, rel=1e-12)
    assert step.time_s == pytest.approx(weights + attention + 64 * all_reduce, rel=1e-12)
    assert step.per_gpu.flops == 2 * params * 8 + 8 * 32 * 16 * 128 * 4 * 1024


def test_tp_1_is_the_single_gpu_estimate_exactly():
    for key in ("llama-2-7b", "qwen3-32b", "qwen3.8-27b"):
        m = presets.model(key)
        for batch, context in ((1, 0), (64, 4096)):
            one = parallel.decode(m, H100, 1, batch, context)
            assert one.per_gpu == roofline.decode(m, H100, batch, context)
            assert one.time_s == roofline.decode(m, H100, batch, context).time_s
            assert (one.all_reduces, one.communication_time_s) == (0, 0.0)
        assert parallel.prefill(m, H100, 1, 2048).time_s == roofline.prefill(m, H100, 2048).time_s
        assert parallel.max_batch(m, H100, 1, 4096) == memory.max_batch(m, H100, 4096)
        assert parallel.memory_per_gpu(m, 1, 8, 4096) == memory.resident_bytes(m, 8, 4096)


def test_memory_per_gpu_lets_a_70b_model_fit_on_8_h100s_and_not_on_one():
    assert parallel.max_batch(LLAMA_2_70B, H100, 1, 4096) == 0
    s = parallel.shard(LLAMA_2_70B, 8)
    per_request = 4096 * 80 * 2 * 1 * 128 * 2  # 4,096 tokens of one K/V head per layer per GPU
    free = 81559 * 2**20 - model_size.resident_weight_bytes(s)
    assert parallel.max_batch(LLAMA_2_70B, H100, 8, 4096) == free // per_request == 406
    assert parallel.memory_per_gpu(LLAMA_2_70B, 8, 406, 4096) <= H100.memory_bytes
    assert parallel.memory_per_gpu(LLAMA_2_70B, 8, 407, 4096) > H100.memory_bytes


def test_a_prefill_sends_its_prompt_through_every_all_reduce():
    step = parallel.prefill(presets.model("qwen3-32b"), H100, 4, 2048)
    assert step.message_bytes == 2048 * 5120 * 2 and step.all_reduces == 128 and step.requests == 1
    assert step.all_reduce_s == pytest.approx(40e-6 + 1.5 * 2048 * 5120 * 2 / 450e9, rel=1e-12)


# --- the scheduler's step cost on n GPUs -----------------------------------------------------------------------------

def test_a_serving_step_on_n_gpus_is_its_shard_s_step_plus_2l_all_reduces_of_its_tokens():
    from sim.physics import step
    m, hw = presets.model("llama-2-70b"), presets.hardware("h100-sxm")
    c = parallel.step_cost(m, hw, 8)
    floor = parallel.latency_floor("h100_dgx", 8)
    # a decode step of 64: 160 all-reduces of 64 x 8,192 x 2 B, each floor + 2 x 7/8 x bytes / 450 GB/s
    assert c.exchange_s(64) == pytest.approx(160 * (floor + 1.75 * 1048576 / 450e9), rel=1e-12)
    assert c.time_s(0, 0.0, 64, 64 * 1024, 0) == parallel.decode(m, hw, 8, 64, 1024).time_s
    base = step.step_cost(parallel.shard(m, 8), hw)
    # a chunked step: 512 prompt tokens and 4 decoders move 516 tokens' activations
    chunk = c.chunk_step_s([(0, 512)], 5, 4, 400, 0)
    assert chunk == pytest.approx(base.chunk_step_s([(0, 512)], 5, 4, 400, 0)
                                  + 160 * (floor + 1.75 * 516 * 8192 * 2 / 450e9), rel=1e-12)
    assert c.exchange_s(0) == 0.0
    assert parallel.step_cost(m, hw, 1) == step.step_cost(m, hw)


def test_a_link_with_its_own_floor_adds_that_floor_and_its_ring_term():
    ic = parallel.interconnect("pcie-servingsim")
    assert ic.bandwidth_bytes_per_s == 16e9 and parallel.floor_for(ic, 2) == pytest.approx(40 * US)
    assert parallel.floor_gpus(ic, 2) is None  # no measured curve stands behind a given floor
    assert parallel.floor_gpus(parallel.interconnect("nvlink-h100"), 3) == 4  # nearest measured, the larger on a tie
    # 2 GPUs: the ring factor is 2 x 1/2 = 1, so 1 MiB takes 40 µs + 1,048,576 / 16 GB/s = 105.5 µs
    assert parallel.all_reduce_s(ic, 2**20, 2) == pytest.approx(40e-6 + 2**20 / 16e9, rel=1e-12)
    assert parallel.default_interconnect(presets.hardware("rtx-pro-6000")).key == "pcie-gen5-x16"
