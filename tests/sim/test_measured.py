"""The measured data: loaders that check columns and units, the fractions a real matmul reaches, and the run's
metrics held to its publisher's own summary."""

import json

import pytest

from sim.physics import measured, presets
from sim.widgets import measured_matmul

A100, H100 = presets.hardware("a100-sxm-80gb"), presets.hardware("h100-sxm")


def test_vidur_slices_hold_every_token_count_for_both_gpus_and_four_matmuls_in_seconds():
    for gpu in measured.VIDUR_GPUS:
        for op in measured.VIDUR_OPS:
            points = measured.matmul_times(gpu, op)
            counts = [n for n, _ in points]
            # 1, 2, 4, then steps of 8 to 1,024, of 16 to 2,048 and of 32 to 4,096 (Vidur's grid)
            assert counts[:4] == [1, 2, 4, 8] and counts[-1] == 4096 and len(counts) == 259, (gpu, op)
            assert all(0 < s < 0.01 for _, s in points), (gpu, op)  # milliseconds in the file, seconds here
    # a cell copied from the upstream file: time_stats.mlp_up_proj.median at 1 token, TP 1, A100
    assert measured.measured_s("a100", "mlp_up_proj", 1) == 0.116e-3
    with pytest.raises(ValueError, match="op must be one of|no measured matmul"):
        measured.matmul_times("a100", "lm_head")


def test_achieved_fractions_and_knee_match_a_hand_computation():
    bytes_1 = 2 * (4096 + 4096 * 22016 + 22016)  # 1 token: input row, weights, output row, FP16
    flops_4096 = 2 * 4096 * 4096 * 22016
    bandwidth = bytes_1 / 0.116e-3 / 2.039e12  # 0.116 ms measured at 1 token
    compute = flops_4096 / 3.3655e-3 / 312e12  # 3.3655 ms measured at 4,096 tokens
    got = measured.achieved_fractions("a100", "mlp_up_proj")
    assert got == pytest.approx((bandwidth, compute), rel=0.01)
    assert got == pytest.approx((0.763, 0.704), abs=0.001)
    kn, k_plus_n = 4096 * 22016, 4096 + 22016
    knee = (kn / 2.039e12) / (kn / 312e12 - k_plus_n / 2.039e12)  # about 160: near 312 / 2.039 = 153
    assert measured.knee_tokens(A100, "mlp_up_proj") == pytest.approx(knee, rel=1e-9)
    b, p = 2.039e12 * bandwidth, 312e12 * compute
    assert measured.knee_tokens(A100, "mlp_up_proj", *got) == pytest.approx((kn / b) / (kn / p - k_plus_n / b),
                                                                            rel=0.01)


def test_the_measured_matmul_is_flat_below_the_knee_and_never_beats_the_bound():
    for gpu, hw in (("a100", A100), ("h100", H100)):
        for op in measured.VIDUR_OPS:
            flat = measured.measured_s(gpu, op, 1)
            assert measured.measured_s(gpu, op, 64) / flat < 1.2, (gpu, op)  # 64x the FLOPs, at most 1.2x the time
            for n, s in measured.matmul_times(gpu, op):
                assert s >= measured.matmul_bound_s(hw, op, n), (gpu, op, n)
    assert measured.measured_s("a100", "mlp_up_proj", 64) == measured.measured_s("a100", "mlp_up_proj", 1)
    # the H100's knee is about twice the A100's: its ridge is 295 FLOP/B against 153
    assert measured.knee_tokens(H100, "mlp_up_proj") / measured.knee_tokens(A100, "mlp_up_proj") > 1.8


def test_the_widget_shows_the_module_figures():
    view = measured_matmul.render({"gpu": "h100", "op": "mlp_down_proj", "lang": "en"})
    bw, fl = measured.achieved_fractions("h100", "mlp_down_proj")
    assert view["outputs"]["bandwidth_fraction"]["value"] == pytest.approx(bw, rel=1e-5)
    assert view["outputs"]["knee_achieved"]["value"] == pytest.approx(
        measured.knee_tokens(H100, "mlp_down_proj", bw, fl), rel=1e-5)
    measured_trace = view["figures"]["figure"]["data"][2]
    assert measured_trace["y"][0] == pytest.approx(measured.measured_s("h100", "mlp_down_proj", 1) * 1e3)


def test_the_shipped_run_reads_as_its_publisher_summarised_it():
    run = measured.run("rtx-4090")
    assert len(run.requests) == 300 and run.requests[0].queued_s == 0
    assert all(a.queued_s <= b.queued_s for a, b in zip(run.requests, run.requests[1:]))
    s = run.settings
    assert (s.max_num_seqs, s.max_num_batched_tokens, s.block_size, s.num_gpu_blocks) == (256, 2048, 16, 2588)
    assert (s.vllm_version, s.tensor_parallel_size, s.enable_prefix_caching) == ("0.19.0", 1, True)
    # LLMServingSim's bench/examples/RTX4090/Llama-3.1-8B/validation/summary.txt, vLLM column, in ms
    ttft = sorted(r.ttft_s for r in run.requests)
    tpot = sorted(r.tpot_s for r in run.requests if r.tpot_s is not None)
    latency = [r.latency_s for r in run.requests]
    assert sum(ttft) / len(ttft) * 1e3 == pytest.approx(65456.6, abs=0.1)
    assert (ttft[149] + ttft[150]) / 2 * 1e3 == pytest.approx(60110.9, abs=0.1)
    assert sum(tpot) / len(tpot) * 1e3 == pytest.approx(32.4, abs=0.05)
    assert sum(latency) / len(latency) * 1e3 == pytest.approx(86578.3, abs=0.1)
    assert all(r.wait_s is not None and 0 <= r.wait_s <= r.ttft_s for r in run.requests)


def test_the_profile_holds_every_operation_a_step_is_costed_from():
    p = measured.profile("rtx-4090")
    assert set(measured.DENSE_OPS) <= set(p.dense)
    assert p.dense["gate_up_proj"][0] == (1, pytest.approx(247.29e-6))  # µs in the file, seconds here
    assert p.attention[(0, 0, 64, 1024)] == pytest.approx(333.30e-6)
    assert p.per_sequence["lm_head"][0] == (1, pytest.approx(1096.9e-6))


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("text, message", [
    ("# a comment\nlayer,tokens\nqkv_proj,1\n", r"bad\.csv:2: no column 'time_us'"),
    ("layer,tokens,time_us\nqkv_proj,1,fast\n", r"bad\.csv:2: time_us is 'fast', not a number"),
    ("layer,tokens,time_us\nqkv_proj,1\n", r"bad\.csv:2: 2 cells"),
    ("layer,tokens,time_us\nqkv_proj,1,-3\n", r"bad\.csv:2: time_us is '-3', not a time or a count"),
])
def test_a_bad_csv_is_a_clear_error_naming_file_line_and_field(tmp_path, text, message):
    path = _write(tmp_path / "bad.csv", text)
    with pytest.raises(measured.MeasuredDataError, match=message):
        measured._read(path, ("layer", "tokens", "time_us"), ("layer",))


META = {"vllm_version": "0.19.0", "engine_kwargs": {"model": "meta-llama/Llama-3.1-8B", "max_num_seqs": 8,
                                                     "max_num_batched_tokens": 64},
        "kv_cache": {"block_size": 16, "num_gpu_blocks": 100}}
REQUEST = {"input_toks": 10, "output_toks": 3, "queued_ts": 5.0, "scheduled_ts": 5.1, "first_token_ts": 5.2,
           "last_token_ts": 5.4}


def test_a_bad_run_is_a_clear_error_naming_the_field(tmp_path):
    meta = _write(tmp_path / "meta.json", json.dumps(META))
    good = _write(tmp_path / "r.jsonl", json.dumps(REQUEST) + "\n")
    run = measured.load_run(good, meta)
    assert run.requests[0] == measured.MeasuredRequest(10, 3, 0.0, pytest.approx(0.2), pytest.approx(0.4),
                                                       pytest.approx(0.1))
    no_blocks = _write(tmp_path / "m2.json", json.dumps({**META, "kv_cache": {"block_size": 16}}))
    with pytest.raises(measured.MeasuredDataError, match=r"m2\.json: no kv_cache\.num_gpu_blocks"):
        measured.load_run(good, no_blocks)
    gone = _write(tmp_path / "r2.jsonl", json.dumps({k: v for k, v in REQUEST.items() if k != "last_token_ts"}))
    with pytest.raises(measured.MeasuredDataError, match=r"r2\.jsonl:1: no number 'last_token_ts'"):
        measured.load_run(gone, meta)
    backwards = _write(tmp_path / "r3.jsonl", json.dumps({**REQUEST, "first_token_ts": 4.0}))
    with pytest.raises(measured.MeasuredDataError, match=r"r3\.jsonl:1: .*scheduled_ts|r3\.jsonl:1: queued_ts"):
        measured.load_run(backwards, meta)
    broken = _write(tmp_path / "r4.jsonl", "{\n")
    with pytest.raises(measured.MeasuredDataError, match=r"r4\.jsonl:1: not JSON"):
        measured.load_run(broken, meta)


def test_a_meta_with_no_kv_cache_block_takes_vllm_s_defaults_and_names_no_pool(tmp_path):
    good = _write(tmp_path / "r.jsonl", json.dumps(REQUEST) + "\n")
    bare = {k: v for k, v in META.items() if k != "kv_cache"}
    bare["engine_kwargs"] = {**META["engine_kwargs"], "tensor_parallel_size": 2}
    s = measured.load_run(good, _write(tmp_path / "m.json", json.dumps(bare))).settings
    assert (s.block_size, s.num_gpu_blocks, s.gpu_memory_utilization, s.tensor_parallel_size) == (16, None, 0.9, 2)
    shipped = measured.run("rtx-pro-6000-tp2").settings
    assert (shipped.tensor_parallel_size, shipped.max_num_seqs, shipped.num_gpu_blocks) == (2, 128, None)
    assert len(measured.run("rtx-pro-6000-tp2").requests) == 300


def test_the_tp2_profile_is_one_gpu_s_shard_on_a_rectangular_grid():
    p = measured.profile("rtx-pro-6000-tp2")
    assert "qk_norm" in p.dense  # Qwen3's per-head q/k norm, which the layer's sum takes when a profile has it
    prefill = [k for k in p.attention if k[0] and not k[2]]
    chunks, befores = {k[0] for k in prefill}, {k[1] for k in prefill}
    assert len(prefill) == len(chunks) * len(befores) == 8 * 12
    # the LM head of half the vocabulary: 5,120 x 75,968 BF16 weights read for one sequence
    head_bytes = 5120 * 75968 * 2
    assert head_bytes / dict(p.per_sequence["lm_head"])[1] / presets.hardware("rtx-pro-6000").bandwidth_bytes_per_s \
        == pytest.approx(0.91, abs=0.05)
