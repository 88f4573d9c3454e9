import pytest

from sim import memory, model_size, presets

ANCHOR = presets.model("qwen3.8-27b")
H100 = presets.hardware("h100-sxm")


def test_58_requests_of_4096_tokens_fit_beside_the_whole_checkpoint():
    assert memory.max_batch(ANCHOR, H100, context=4096) == 58


def test_with_only_the_matmul_weights_resident_68_would_fit():
    # The reference's "B > 58" holds only with the whole 55.56 GB checkpoint; with 51.25 GB it is 68.
    free = H100.memory_bytes - model_size.matmul_weight_bytes(ANCHOR)
    assert int(free // memory.bytes_per_request(ANCHOR, 4096)) == 68


def test_max_batch_fits_and_one_more_does_not():
    n = memory.max_batch(ANCHOR, H100, context=4096)
    assert memory.resident_bytes(ANCHOR, n, 4096) <= H100.memory_bytes
    assert memory.resident_bytes(ANCHOR, n + 1, 4096) > H100.memory_bytes


def test_bf16_state_halves_the_state_share():
    assert memory.bytes_per_request(ANCHOR, 0, "bf16") * 2 == memory.bytes_per_request(ANCHOR, 0, "fp32")


def test_model_too_big_for_the_gpu_fits_no_request():
    tiny = presets.Hardware("tiny", "tiny", "tiny", 1e12, 1e12, 10e9, "test")
    assert memory.max_batch(ANCHOR, tiny, context=4) == 0


def test_bad_context_is_rejected():
    with pytest.raises(ValueError, match="^context must"):
        memory.max_batch(ANCHOR, H100, context=-5)
