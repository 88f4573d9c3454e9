import dataclasses

import pytest

from sim.physics import memory, model_size, presets

ANCHOR = presets.model("qwen3.8-27b")
H100 = presets.hardware("h100-sxm")  # 80 GB as the device reports it: 81,559 MiB = 85,520,809,984 B
H100_DATASHEET = dataclasses.replace(H100, memory_bytes=H100.datasheet_memory_bytes)  # the reference's 80 x 10^9 B

# One request of 4,096 tokens: 4,096 x 65,536 B of KV (16 full layers x 4 KV heads x 256 x 2 x 2 B)
# + 150,994,944 B of FP32 recurrent state = 419,430,400 B.
PER_REQUEST_4096 = 4096 * 65_536 + 150_994_944


def test_71_requests_of_4096_tokens_fit_beside_the_whole_checkpoint():
    assert memory.bytes_per_request(ANCHOR, 4096) == PER_REQUEST_4096 == 419_430_400
    # (85,520,809,984 - 55,562,855,904) // 419,430,400 = 29,957,954,080 // 419,430,400 = 71
    assert memory.max_batch(ANCHOR, H100, context=4096) == 71
    # The reference's 58 is the datasheet's 80 x 10^9 B: (80e9 - 55,562,855,904) // 419,430,400 = 58.
    assert memory.max_batch(ANCHOR, H100_DATASHEET, context=4096) == 58


def test_with_only_the_matmul_weights_resident_81_would_fit():
    # The whole 55.56 GB checkpoint leaves room for 71; with only its 51.25 GB of matmul weights resident,
    # (85,520,809,984 - 51,247,879,168) // 419,430,400 = 34,272,930,816 // 419,430,400 = 81.
    free = H100.memory_bytes - model_size.matmul_weight_bytes(ANCHOR)
    assert int(free // memory.bytes_per_request(ANCHOR, 4096)) == 81
    # The reference's "B > 58" holds only with the whole checkpoint on the datasheet's 80 GB;
    # with 51.25 GB there it is (80e9 - 51,247,879,168) // 419,430,400 = 68.
    free = H100_DATASHEET.memory_bytes - model_size.matmul_weight_bytes(ANCHOR)
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
