import dataclasses
import math
import re
from collections import Counter
from pathlib import Path

import pytest

from sim import widgets
from sim.physics import presets, roofline
from sim.questions import LESSONS, QUESTIONS
from sim.serving import interference, scheduler, slo
from sim.techniques import speculative
from tests.sim.test_widgets import check_view

# Hand-computed from config numbers: Llama-2-7B matmul weights = (32 layers x (4 x 4096^2 + 3 x 4096 x 11008)
# + 32,000 x 4096 LM head) = 6,607,077,376 params x 2 bytes = 13,214,154,752 B; its KV = 2 x 32 layers x 32 heads
# x 128 x 2 B = 524,288 B/token and its attention 32 layers x 32 heads x 128 x 2 x 2 = 524,288 FLOP per cached
# token. A100 2.039 TB/s, 312 TFLOPS; H100 3.35 TB/s, 989.5 TFLOPS. Qwen3.8-27B: 25,623,939,584 matmul params
# (51,247,879,168 B), KV 16 layers x 2 x 4 heads x 256 x 2 B = 65,536 B/token, state 48 layers x 48 heads x 128
# x 128 x 4 B = 150,994,944 B, read and written back each step.
LLAMA_PARAMS, LLAMA_KV, LLAMA_ATTN = 6_607_077_376, 524_288, 524_288
ANCHOR_PARAMS = 25_623_939_584
ANCHOR_STEP_BYTES = 2 * ANCHOR_PARAMS + 2 * 150_994_944 + (4 + 1) * 65_536  # batch 1, context 4
INTENSITY = (2 * LLAMA_PARAMS + LLAMA_ATTN) / (2 * LLAMA_PARAMS + 2 * LLAMA_KV)  # batch 1, context 1: about 1
MFU_FLOPS = 2 * LLAMA_PARAMS + 512 * LLAMA_ATTN
MFU_BYTES = 2 * LLAMA_PARAMS + (512 + 1) * LLAMA_KV
MFU = 2.039e12 * MFU_FLOPS / MFU_BYTES / 312e12 * 100  # memory-bound: attained = bandwidth x intensity
KV_GB = 2 * 32 * 32 * 128 * 2 * 2048 * 32 / 1e9
# kv-cache-serving. The anchor's whole checkpoint is 55,562,855,904 B; its KV 65,536 B/token and its FP32 state
# 150,994,944 B. A 2,048-token reservation with its state: 134,217,728 + 150,994,944 = 285,212,672 B.
ANCHOR_RESIDENT, ANCHOR_KV, ANCHOR_STATE = 55_562_855_904, 65_536, 150_994_944
RESERVATION = 2048 * ANCHOR_KV + ANCHOR_STATE
H100_MEMORY = int(presets.hardware("h100-sxm").memory_bytes)  # as the preset gives it (80e9 B at the datasheet)
ANCHOR_MODEL, H100_GPU = presets.model("qwen3.8-27b"), presets.hardware("h100-sxm")
FIT_AT_MAX = (H100_MEMORY - ANCHOR_RESIDENT) // RESERVATION  # 85 at 80e9 B
# Two requests with 100-token prompts arrive together, writing 10 and 100 tokens. Every step is memory-bound, so
# it costs its bytes over 3.35 TB/s: the weights, plus the KV rows read and written, plus the state (written once
# by a joiner, read and written back by a decoder). Step 1 is both prompts' prefill (200 rows written, each
# prompt's causal attention bounded on its own: its 100 rows); steps 2..10 decode both (contexts 100+k-1 each),
# steps 11..100 only the long one (finished members cost nothing).
PREFILL_S = (W_ANCHOR := 2 * ANCHOR_PARAMS) / 3.35e12 + 2 * 100 * ANCHOR_KV / 3.35e12 + 2 * ANCHOR_STATE / 3.35e12


def _decode_s(contexts):
    rows = sum(contexts) + len(contexts)
    return (W_ANCHOR + rows * ANCHOR_KV + 2 * len(contexts) * ANCHOR_STATE) / 3.35e12


HELD_DONE_S = PREFILL_S + sum(_decode_s([100 + k - 1] * 2) for k in range(1, 10))
HELD_END_S = HELD_DONE_S + sum(_decode_s([100 + k - 1]) for k in range(10, 100))

# pd-disaggregation. Every step by hand from the anchor's step coefficients on an H100 (as
# tests/sim/test_interference.py does): 32 decoders of 2,048 cached tokens, a 2,048-token prompt joining them whole
# or in 8 chunks of 256. A step: the matmuls over chunk + batch tokens (logits for each decoder and the prompt's last
# chunk; at least one read of the weights), the chunk's attention to itself and the earlier chunks, the decoders'
# attention, and the recurrent state (a joiner's written by its first chunk, read and written back by a later one;
# each decoder's read and written back).
JOIN_COST = scheduler.step_cost(presets.model("qwen3.8-27b"), presets.hardware("h100-sxm"))


def _join_step_s(chunk, before, last, batch=32, context=2048):
    c = JOIN_COST
    matmuls = max(c.token_s * (chunk + batch) + c.logit_s * (batch + last), c.weights_s)
    attention = max(c.pair_s * (chunk * before + chunk * (chunk + 1) // 2), c.kv_row_s * (before + chunk))
    decode_attention = max(c.pair_s * batch * context, c.kv_row_s * (batch * context + batch))
    joiner_state = 0 if chunk == 0 else 1 if before == 0 else 2
    return matmuls + attention + decode_attention + c.state_s * (joiner_state + 2 * batch)


JOIN_DECODE_S = _join_step_s(0, 0, 0)  # about 19.47 ms
JOIN_WHOLE_S = _join_step_s(2048, 0, 1)  # about 107.51 ms
JOIN_ALONE_S = _join_step_s(2048, 0, 1, batch=0, context=0)  # the prefill with no batch, about 101.69 ms
JOIN_CHUNKS_S = [_join_step_s(256, 256 * k, k == 7) for k in range(8)]
# Llama-2-13B's KV: 2 x 40 layers x 40 heads x 128 x 2 B = 819,200 B/token; a 512-token prompt over 25 Gbit/s.
LLAMA13_KV = 2 * 40 * 40 * 128 * 2
TRANSFER_BYTES = 512 * LLAMA13_KV  # 419,430,400 B
# speculative-decoding. A verify step on an H100 at batch 1, γ = 4: the matmuls over 5 tokens (each producing logits,
# the weights read once), their attention over 1,024 cached tokens and each other (5 x 1,024 + 15 pairs; 1,024 rows
# read, 5 written), the state read once and written after each of the 5 positions; a decode step as in
# roofline.decode. Eq. 1 at α = 0.8, γ = 4: 1 + 0.8 + 0.64 + 0.512 + 0.4096.
SPEC_COST = scheduler.step_cost(ANCHOR_MODEL, H100_GPU)


def _spec_steps_s(c=SPEC_COST, context=1024, tokens=5):
    verify = (max(c.token_s * tokens + c.logit_s * tokens, c.weights_s)
              + max(c.pair_s * (tokens * context + tokens * (tokens + 1) // 2), c.kv_row_s * (context + tokens))
              + c.state_s * (1 + tokens))
    decode = (max(c.token_s + c.logit_s, c.weights_s) + max(c.pair_s * context, c.kv_row_s * (context + 1))
              + 2 * c.state_s)
    return verify, decode


SPEC_VERIFY_S, SPEC_DECODE_S = _spec_steps_s()  # about 15.59 and 15.41 ms
SPEC_E = 1 + 0.8 + 0.8**2 + 0.8**3 + 0.8**4  # 3.3616


def _h200_speedup(batch):
    return speculative.Speculation(ANCHOR_MODEL, presets.hardware("h200-sxm"), alpha=0.6, gamma=4, draft="mtp",
                                   batch=batch, context=1024).speedup


def _spec_decode_view(**state):
    return widgets.render("spec-decode", {"lang": "en", **state})["outputs"]


# quantization. The anchor on an H100 at 1,024 tokens of context. Its LM head is 248,320 x 5,120 = 1,271,398,400
# weights, kept in BF16; the other 24,352,541,184 matmul weights take 4 + (16 + 4) / 128 = 4.15625 bits in INT4 at
# group 128. Every operation is max(FLOPs / peak, bytes / bandwidth): the matmuls do 2 FLOPs per weight per token
# (plus 4 per quantised weight to dequantise, in INT4), attention 16 x 24 x 256 x 4 = 393,216 FLOPs per cached token
# and reads the 1,025 rows, the state is read and written back. Llama-2-7B at batch 16 and 8,192 tokens: FP8 KV
# halves the attention's 16 x 8,193 rows of 524,288 B (it has no recurrent state).
ANCHOR_HEAD = 248_320 * 5_120
ANCHOR_LAYERS = ANCHOR_PARAMS - ANCHOR_HEAD
INT4_BITS = 4 + (16 + 4) / 128


def _anchor_step_s(batch, weight_bytes, dequant_flops=0):
    matmuls = max((2 * ANCHOR_PARAMS * batch + dequant_flops) / 989.5e12, weight_bytes / 3.35e12)
    attention = max(batch * 393_216 * 1024 / 989.5e12, batch * 1025 * ANCHOR_KV / 3.35e12)
    return matmuls + attention + batch * 2 * ANCHOR_STATE / 3.35e12


def _int4_speedup(batch):
    return _anchor_step_s(batch, 2 * ANCHOR_PARAMS) / _anchor_step_s(
        batch, ANCHOR_LAYERS * INT4_BITS / 8 + 2 * ANCHOR_HEAD, 4 * ANCHOR_LAYERS)


LLAMA_ROWS = 16 * 8193 * LLAMA_KV
FP8_KV_FUSED = (2 * LLAMA_PARAMS + LLAMA_ROWS) / (2 * LLAMA_PARAMS + LLAMA_ROWS / 2)  # about 1.72x

EXAMPLE_P = (0.35, 0.25, 0.15, 0.10, 0.06, 0.04, 0.03, 0.02)
SQUARES = sum(p**2 for p in EXAMPLE_P)  # 0.224
ROOTS = sum(math.sqrt(p) for p in EXAMPLE_P)

# The measured knee: Vidur's A100 timed Llama-2-7B's gate+up matmul (K = 4,096, N = 22,016, FP16) at 0.116 ms for
# 1 token and 3.3655 ms for 4,096. The bandwidth it reaches is its bytes at 1 token over that time, the FLOP rate
# its FLOPs at 4,096 over that time; the knee is where the two bounds at those rates meet.
KNEE_KN, KNEE_K_PLUS_N = 4096 * 22016, 4096 + 22016
KNEE_B = 2 * (KNEE_KN + KNEE_K_PLUS_N) / 0.116e-3
KNEE_P = 2 * 4096 * KNEE_KN / 3.3655e-3
KNEE = (KNEE_KN / KNEE_B) / (KNEE_KN / KNEE_P - KNEE_K_PLUS_N / KNEE_B)  # about 147 tokens

# tensor-parallel. Llama-2-70B from its config: a layer's matmuls 2 x 8192^2 (q, o) + 2 x 8192 x 1024 (k, v: 8 K/V
# heads of 128) + 3 x 8192 x 28672 (gate, up, down) = 855,638,016 params; 80 layers, a 32,000 x 8192 LM head and
# embedding, 80 x 2 + 1 norms of 8192; KV 2 x 80 x 8 x 128 x 2 B = 327,680 B/token. At TP n each GPU holds 1/n of the
# layers' matmuls and of the vocabulary rows, every norm whole. Decode of 64 requests at 1,024 tokens of context
# (1,025 KV rows each: the cached ones read, the new one written) on H100s, 3.35 TB/s, memory-bound; each of the
# 2 x 80 all-reduces of 64 x 8192 x 2 B = 1 MiB costs the H100 DGX floor among 8 GPUs (the median of Vidur's 9
# medians up to 1 MiB: 19, 23, 29, 31, 34, 35, 36, 37, 39 µs) plus 2 x 7/8 of it over 450 GB/s.
LLAMA70_LAYER, LLAMA70_LAYERS, LLAMA70_VOCAB, LLAMA70_HIDDEN = 855_638_016, 80, 32_000, 8192
LLAMA70_KV = 2 * 80 * 8 * 128 * 2
LLAMA70_NORMS = (2 * 80 + 1) * 8192


def _llama70_matmul_bytes(n):
    return 2 * (LLAMA70_LAYERS * LLAMA70_LAYER // n + -(-LLAMA70_VOCAB // n) * LLAMA70_HIDDEN)


def _llama70_resident_bytes(n):  # the matmuls, the embedding's rows and every norm
    return _llama70_matmul_bytes(n) + 2 * (-(-LLAMA70_VOCAB // n) * LLAMA70_HIDDEN + LLAMA70_NORMS)


def _llama70_compute_s(n):
    return (_llama70_matmul_bytes(n) + 64 * 1025 * LLAMA70_KV // n) / 3.35e12


TP_MESSAGE = 64 * 8192 * 2  # 1,048,576 B
TP_RING_S = 2 * 7 / 8 * TP_MESSAGE / 450e9  # about 4.08 µs
TP_ALL_REDUCE_S = 34e-6 + TP_RING_S  # about 38.08 µs
TP_RING_4MIB_S = 2 * 7 / 8 * 4 * TP_MESSAGE / 450e9  # batch 256: about 16.31 µs
TP_STEP_MS = (_llama70_compute_s(8) + 160 * TP_ALL_REDUCE_S) * 1e3  # about 12.02 ms


def _llama70_fit(n, context=1024):
    return (H100_MEMORY - _llama70_resident_bytes(n)) // (context * LLAMA70_KV // n)


# moe. DeepSeek-V3 routes each token to 8 of 256 experts: 64 tokens miss a given one with (248/256)^64, and touch
# 256 x (1 - (248/256)^64) = 222.44 of them (86.9 %) in expectation.
MOE_TOUCHED_B64 = 256 * (1 - (248 / 256) ** 64)
# Qwen3-30B-A3B from its config: hidden 2048, 48 layers, 128 experts of width 768 (3 x 2048 x 768 each), top-8, a
# router of 2048 x 128; attention q 2048 x 4096, k and v 2 x 2048 x 512, o 4096 x 2048, q/k norms 2 x 128; an
# untied LM head of 151,936 x 2048; KV 48 x 2 x 4 x 128 x 2 B = 98,304 B per token. Batch 16 at 1,024 tokens of
# context (1,025 KV rows each) on an H100, 3.35 TB/s, every step memory-bound (BF16 weights).
QWEN_EXPERT = 3 * 2048 * 768
QWEN_FIXED = 48 * (2048 * 4096 + 2 * 2048 * 512 + 4096 * 2048 + 2 * 128 + 2048 * 128) + 151_936 * 2048
QWEN_ACTIVE, QWEN_TOTAL = QWEN_FIXED + 48 * 8 * QWEN_EXPERT, QWEN_FIXED + 48 * 128 * QWEN_EXPERT  # 3.04B and 30.22B
QWEN_KV_B16 = 16 * 1025 * 48 * 2 * 4 * 128 * 2
QWEN_TOUCHED_B16 = 128 * (1 - (120 / 128) ** 16)  # 82.4 of 128
QWEN_MOE_S = (2 * (QWEN_FIXED + 48 * QWEN_TOUCHED_B16 * QWEN_EXPERT) + QWEN_KV_B16) / 3.35e12  # about 12.36 ms
QWEN_DENSE_S = (2 * QWEN_TOTAL + QWEN_KV_B16) / 3.35e12  # about 18.52 ms
QWEN_ACTIVE_S = (2 * QWEN_ACTIVE + QWEN_KV_B16) / 3.35e12  # about 2.30 ms
# DeepSeek-V3 from its config_671B.json, FP8 weights (1 byte): hidden 7168, 61 layers, the first 3 with a dense MLP of
# 18,432, then 58 MoE layers of 256 routed experts and 1 shared, each 3 x 7168 x 2048, a router 7168 x 256 with its
# bias; MLA: q 7168 x 1536 (+ its norm 1536) and 1536 x 128 x 192, kv down 7168 x 576 (+ norm 512), kv up 512 x 128 x
# 256, out 128 x 128 x 7168; an untied LM head of 129,280 x 7168. KV: the 512 latent and 64 RoPE key per layer, BF16;
# attention with absorbed up-projections, 61 x 128 x (2 x 512 + 64) x 2 FLOPs per cached token. On H200s (4.8 TB/s,
# 989.5 TFLOPS), 32 requests of 4,096 tokens on each of 8 GPUs joined by NVLink (450 GB/s each way, the H100 DGX's
# all-reduce floor of 34 µs among 8): each GPU holds 32 experts a layer, and its MoE layers see 8 x 32 tokens.
DS_EXPERT = 3 * 7168 * 2048
DS_MLA = 7168 * 1536 + 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 + 512 * 128 * 256 + 128 * 128 * 7168
DS_FIXED = 61 * DS_MLA + 3 * 3 * 7168 * 18432 + 58 * (DS_EXPERT + 7168 * 256 + 256) + 129_280 * 7168


def _ds_attention_s(batch, context=4096):  # compute-bound at this context: MLA's absorbed heads work on the latent
    flops = batch * context * 61 * 128 * (2 * 512 + 64) * 2
    return max(flops / 989.5e12, batch * (context + 1) * 61 * 576 * 2 / 4.8e12)


DS_EP_TOUCHED = 32 * (1 - (248 / 256) ** 256)  # 31.99 of its 32
DS_EP_WORK_S = (DS_FIXED + 58 * DS_EP_TOUCHED * DS_EXPERT) / 4.8e12 + _ds_attention_s(32)  # about 22.65 ms
DS_REMOTE = 7 * (1 - math.comb(224, 8) / math.comb(256, 8))  # other GPUs a token's hidden state goes to: 4.63
DS_ALL_TO_ALL_S = 34e-6 + 32 * 7168 * 2 * DS_REMOTE / 450e9  # about 38.7 µs
DS_EP_STEP_MS = (DS_EP_WORK_S + 2 * 58 * DS_ALL_TO_ALL_S) * 1e3  # about 27.14 ms
DS_ONE_GPU_S = (DS_FIXED + 58 * 256 * (1 - (248 / 256) ** 32) * DS_EXPERT) / 4.8e12 + _ds_attention_s(32)  # 92.5 ms


EXPECTED = {
    "measured-knee-a100": KNEE,
    "ceiling-7b-a100": 2.039e12 / 13_214_154_752,
    "h100-vs-a100-decode": 3.35 / 2.039,
    "kv-7b-2048-32": KV_GB,
    "e2e-latency": 0.2 + 0.025 * 500,
    "tpot-share": 12.5 / 12.7 * 100,
    "ridge-gap-a100": 312 / 2.039 / INTENSITY,
    "decode-intensity": INTENSITY,
    "decode-mfu-7b-a100": MFU,  # about 0.65%
    "decode-speed-anchor-h100": 3.35e12 / ANCHOR_STEP_BYTES,  # about 65 tok/s
    "kv-reserve-max-anchor-h100": FIT_AT_MAX,
    "static-held-short-request": HELD_END_S / 10 * 1e3,  # about 154 ms
    "paged-empty-slots-b16": None,  # an average over the trace: checked against (16 - 1) / 2 below
    "swap-bytes-anchor-2048": RESERVATION / 1e6,  # every one of its 128 blocks, and its state
    "stall-2048-batch32": JOIN_WHOLE_S * 1e3,
    "chunk-256-stall": max(JOIN_CHUNKS_S) * 1e3,  # about 19.75 ms
    "chunk-256-ttft": sum(JOIN_CHUNKS_S) * 1e3,  # about 157.23 ms
    "kv-transfer-13b-25gbps": TRANSFER_BYTES / (25e9 / 8) * 1e3,  # about 134.2 ms
    "tpot-first-token": JOIN_DECODE_S * 1e3,  # 15 later tokens, each one decode step after the other
    # a simulation, not a hand figure: the capacity of one prefill and one decode GPU on chat (tests/sim/test_slo.py)
    "split-throughput-chat": slo.capacity(ANCHOR_MODEL, H100_GPU, "disaggregated", "chat"),
    "verify-5-tokens-h100": SPEC_VERIFY_S * 1e3,
    "tokens-per-call-08-4": SPEC_E,
    "drafted-share-08-4": (SPEC_E - 1) / 4 * 100,  # 59.04%
    "exact-output-mat": 50.0,  # the target's p(mat), 50 of 100
    # the roofline with the MTP draft's cost (tests/sim/test_speculative.py), not a hand figure
    "speedup-batch96-h200": _h200_speedup(96),  # about 0.88x
    "int4-speedup-anchor-h100": _int4_speedup(1),  # about 3.32x
    "int4-bits-g128": INT4_BITS,
    "int4-speedup-b128-h100": _int4_speedup(128),  # about 1.41x
    "fp8-kv-unfused-llama": 1.0,  # attention reads the BF16 copy: the same bytes
    "gptq-opt125m-3bit": 53.85,  # GPTQ Table 3
    # attention-variants, from the configs: Qwen3-32B 64 layers x 8 K/V heads of 128; DeepSeek-V3 61 layers of a
    # 512-wide latent and a 64-wide RoPE key; the anchor's 65,536 B of KV per token and 150,994,944 B of state.
    "kv-per-token-qwen3-32b": 2 * 64 * 8 * 128 * 2 / 1000,  # 262.1 KB
    "mla-bytes-deepseek-v3": (512 + 64) * 61 * 2 / 1000,  # 70.3 KB
    "hybrid-fit-anchor-32k": 30e9 // (32768 * ANCHOR_KV + ANCHOR_STATE),  # 13
    "break-even-anchor": ANCHOR_STATE / ANCHOR_KV,  # 2,304 tokens
    # sampling: the anchor's 248,320 tokens; the eight probabilities 35, 25, 15, 10, 6, 4, 3, 2 %; top-p by a full sort
    # moves 8 + 12 + 64 + 4 = 88 bytes per logit, at batch 128 over 3.35 TB/s.
    "entropy-uniform-anchor": math.log2(248_320),  # 17.92 bits
    "temperature-half-example": 0.35**2 / SQUARES * 100,  # 54.69%
    "top-p-09-example": 5,  # 0.35 + 0.25 + 0.15 + 0.10 = 0.85 < 0.9 <= 0.85 + 0.06
    "min-p-02-example": 4,  # >= 0.2 x 0.35 = 0.07
    "top-p-sort-b128-h100": 128 * 248_320 * 88 / 3.35e12 * 1e3,  # 0.83 ms
    "tp8-step-llama-2-70b": TP_STEP_MS,
    "tp8-all-reduce-4mib": (34e-6 + TP_RING_4MIB_S) * 1e6,  # about 50.3 µs
    "tp4-requests-llama-2-70b": _llama70_fit(4),  # 608
    "moe-touched-deepseek-b64": MOE_TOUCHED_B64,  # 222.44
    "moe-advantage-qwen-b16": QWEN_DENSE_S / QWEN_MOE_S,  # about 1.50x
    "ep8-step-deepseek-v3": DS_EP_STEP_MS,
}

# Every question's common mistakes, with their values by hand.
MISTAKES = {
    "decode-intensity": {"per_parameter": (2 * LLAMA_PARAMS + LLAMA_ATTN) / LLAMA_PARAMS,  # "about 2"
                         "no_multiply_add": INTENSITY / 2},
    "ridge-gap-a100": {"per_parameter": 312 / 2.039 / (2 * INTENSITY)},  # the source's "78x"
    "ceiling-7b-a100": {"per_parameter": 2.039e12 / LLAMA_PARAMS, "compute": 312e12 / (2 * LLAMA_PARAMS)},
    "h100-vs-a100-decode": {"compute": 989.5 / 312},
    "kv-7b-2048-32": {"no_k_and_v": KV_GB / 2, "fp32": KV_GB * 2, "gib": 32.0},
    "measured-knee-a100": {"every_token": 1, "one_byte": 312 / 2.039 / 2, "fp32": 312 / 2.039 * 2},
    "e2e-latency": {"no_ttft": 12.5},
    "tpot-share": {"no_ttft": 100.0, "ttft_share": 0.2 / 12.7 * 100},
    "decode-mfu-7b-a100": {"per_parameter": 2 * MFU, "full": 100.0},
    "decode-speed-anchor-h100": {"compute": 989.5e12 / (2 * ANCHOR_PARAMS), "per_parameter": 3.35e12 / ANCHOR_PARAMS},
    "kv-reserve-max-anchor-h100": {"no_state": (H100_MEMORY - ANCHOR_RESIDENT) // (2048 * ANCHOR_KV),  # 182 at 80e9
                                   "matmul_weights": (H100_MEMORY - 2 * ANCHOR_PARAMS) // RESERVATION},  # 100 at 80e9
    "static-held-short-request": {"returned_when_done": HELD_DONE_S / 10 * 1e3},
    "paged-empty-slots-b16": {"no_waste": 0, "whole_block": 16, "bound": 15},
    "swap-bytes-anchor-2048": {"no_state": 2048 * ANCHOR_KV / 1e6, "all_layers": 2048 * 4 * ANCHOR_KV / 1e6,
                               "round_trip": 2 * RESERVATION / 1e6},
    "stall-2048-batch32": {"decode_unchanged": JOIN_DECODE_S * 1e3,
                           "prefill_plus_decode": (JOIN_ALONE_S + JOIN_DECODE_S) * 1e3},  # about 121.2 ms
    "chunk-256-stall": {"proportional": (JOIN_DECODE_S + JOIN_ALONE_S / 8) * 1e3,  # about 32.2 ms
                        "no_change": JOIN_WHOLE_S * 1e3},
    "chunk-256-ttft": {"free_for_prompt": JOIN_WHOLE_S * 1e3},
    "kv-transfer-13b-25gbps": {"gbit_as_gbyte": TRANSFER_BYTES / 25e9 * 1e3,  # about 16.8 ms
                               "k_only": TRANSFER_BYTES / 2 / (25e9 / 8) * 1e3},  # about 67.1 ms
    "tpot-first-token": {"counts_first_token": (JOIN_WHOLE_S + 15 * JOIN_DECODE_S) / 16 * 1e3},  # about 24.97 ms
    "split-throughput-chat": {"doubles": 2 * slo.capacity(ANCHOR_MODEL, H100_GPU, "chunked", "chat")},
    "verify-5-tokens-h100": {"five_steps": 5 * SPEC_DECODE_S * 1e3},
    "tokens-per-call-08-4": {"gamma_times_alpha": 4 * 0.8, "all_kept": 5},
    "drafted-share-08-4": {"alpha_is_share": 80.0},
    "exact-output-mat": {"follows_draft": 90.0},  # the overconfident draft's q(mat)
    "speedup-batch96-h200": {"always_helps": _h200_speedup(1)},  # about 1.81x
    "int4-speedup-anchor-h100": {"four_times": 4.0},
    "int4-bits-g128": {"no_scales": 4.0, "scale_only": 4.125},
    "int4-speedup-b128-h100": {"memory_bound": _int4_speedup(1), "four_times": 4.0},
    "fp8-kv-unfused-llama": {"fused": FP8_KV_FUSED, "halves": 2.0},
    "gptq-opt125m-3bit": {"uniform": 27.65 * 8.68 / 8.34},  # 175B's 4% carried over
    "kv-per-token-qwen3-32b": {"per_query_head": 2 * 64 * 64 * 128 * 2 / 1000, "no_k_and_v": 64 * 8 * 128 * 2 / 1000},
    "mla-bytes-deepseek-v3": {"elements_as_bytes": 576 * 61 / 1000, "mha_same_heads": 2 * 128 * 128 * 61 * 2 / 1000},
    "hybrid-fit-anchor-32k": {"no_kv": 30e9 // ANCHOR_STATE, "all_attention": 30e9 // (32768 * 4 * ANCHOR_KV)},
    "break-even-anchor": {"bf16_state": ANCHOR_STATE / 2 / ANCHOR_KV},
    "entropy-uniform-anchor": {"nats": math.log(248_320), "log10": math.log10(248_320)},
    "temperature-half-example": {"on_probabilities": 35.0, "no_renormalise": 0.35**2 * 100,
                                 "multiplied": math.sqrt(0.35) / ROOTS * 100},  # 23.2%: t = 2 instead of 0.5
    "top-p-09-example": {"below_p": 4},
    "min-p-02-example": {"absolute": 2},  # 0.35 and 0.25 are >= 0.2
    "top-p-sort-b128-h100": {"one_read": 128 * 248_320 * 4 / 3.35e12 * 1e3,  # 0.038 ms
                             "one_row": 248_320 * 88 / 3.35e12 * 1e3},
    "tp8-step-llama-2-70b": {"eight_times_faster": _llama70_compute_s(1) / 8 * 1e3,  # about 5.93 ms
                             "one_per_layer": (_llama70_compute_s(8) + 80 * TP_ALL_REDUCE_S) * 1e3},
    "tp8-all-reduce-4mib": {"bytes_over_bandwidth": 4 * TP_MESSAGE / 450e9 * 1e6,  # about 9.32 µs
                            "ring_without_floor": TP_RING_4MIB_S * 1e6, "proportional": 4 * TP_ALL_REDUCE_S * 1e6},
    "tp4-requests-llama-2-70b": {"unchanged": _llama70_fit(2), "proportional": 2 * _llama70_fit(2)},  # 98 and 196
    "moe-touched-deepseek-b64": {"active_only": 8, "no_overlap": 64 * 8, "capped": 256},
    "moe-advantage-qwen-b16": {"parameter_ratio": QWEN_TOTAL / QWEN_ACTIVE,  # about 9.94x
                               "active_at_any_batch": QWEN_DENSE_S / QWEN_ACTIVE_S},  # about 8.06x
    "ep8-step-deepseek-v3": {"no_communication": DS_EP_WORK_S * 1e3,  # about 22.65 ms
                             "one_gpu_over_n": DS_ONE_GPU_S / 8 * 1e3},  # about 11.57 ms
}

ALL_MISTAKES = [(key, i) for key, q in QUESTIONS.items() for i in range(len(q.mistakes))]

CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
NUMBER = re.compile(r"\d[\d,.]*\d|\d")


@pytest.mark.parametrize("key, value", [(k, v) for k, v in EXPECTED.items() if v is not None])
def test_answers_match_hand_computation(key, value):
    assert QUESTIONS[key].answer("zh").value == pytest.approx(value, rel=1e-6)


def test_paged_empty_slots_are_about_half_a_block_less_one_half():
    # Each sequence's last block holds 1..16 tokens about equally often over its life: (16 - 1) / 2 empty slots on
    # average, a little more because a sequence's true length need not fill its last block at the end.
    value = QUESTIONS["paged-empty-slots-b16"].answer("en").value
    assert 7.5 <= value < 7.6
    assert QUESTIONS["paged-empty-slots-b16"].answer("en").derivation.endswith("7.5 empty slots")


HERE = "tests/sim/test_questions.py"


def test_every_question_has_a_hand_computed_answer_and_its_mistakes():
    """A new question needs its answer and each of its mistakes' values worked out by hand, here: a failure says
    which entry to add (or remove) where."""
    for key, q in QUESTIONS.items():
        assert key in EXPECTED, (f"{HERE}: add {key!r} to EXPECTED, its answer computed by hand (or None if a test "
                                 "of its own checks it)")
        names = [m.key for m in q.mistakes]
        assert key in MISTAKES, (f"{HERE}: add {key!r} to MISTAKES, each of its mistakes' values computed by hand: "
                                 "{" + ", ".join(f"{n!r}: ..." for n in names) + "}")
        assert list(MISTAKES[key]) == names, (f"{HERE}: MISTAKES[{key!r}] must name its mistakes in the question's "
                                              f"order, {names}; it names {list(MISTAKES[key])}")
    for table, entries in (("EXPECTED", EXPECTED), ("MISTAKES", MISTAKES)):
        stale = sorted(set(entries) - set(QUESTIONS))
        assert not stale, f"{HERE}: {table} has {stale}, no question in sim/questions/: remove them"


@pytest.mark.parametrize("key, index", ALL_MISTAKES)
def test_mistake_values_match_hand_computation(key, index):
    q = QUESTIONS[key]
    name = q.mistakes[index].key
    assert name in MISTAKES.get(key, {}), f"{HERE}: add MISTAKES[{key!r}][{name!r}], its value computed by hand"
    assert q.mistake_values()[index] == pytest.approx(MISTAKES[key][name], rel=1e-6)


@pytest.mark.parametrize("key, index", ALL_MISTAKES)
def test_a_named_mistake_is_never_right_and_its_exact_value_names_it(key, index):
    q = QUESTIONS[key]
    answer, wrong = q.answer("zh").value, q.mistake_values()[index]
    assert abs(wrong - answer) > q.tolerance * abs(answer)
    for lang in ("zh", "en"):
        grade = q.grade(wrong, lang)
        assert not grade.correct and grade.mistake == index
        assert grade.feedback == q.mistake_text(index, lang)


@pytest.mark.parametrize("key", QUESTIONS)
def test_every_question_is_derived_in_both_languages_with_the_same_answer(key):
    zh, en = QUESTIONS[key].answer("zh"), QUESTIONS[key].answer("en")
    assert zh.value == en.value
    assert not CHINESE.search(en.derivation), en.derivation
    assert NUMBER.findall(zh.derivation) == NUMBER.findall(en.derivation)  # the same numbers, in the same order


@pytest.mark.parametrize("key, index", ALL_MISTAKES)
def test_every_mistake_has_words_in_both_languages_with_its_numbers_filled(key, index):
    q = QUESTIONS[key]
    text_key = f"{key}.mistake.{q.mistakes[index].key}"
    assert text_key in q.text["zh"] and text_key in q.text["en"]
    zh, en = q.mistake_text(index, "zh"), q.mistake_text(index, "en")
    for sentence in (zh, en):
        assert "{" not in sentence and "}" not in sentence, sentence
    assert CHINESE.search(zh) and not CHINESE.search(en), en
    assert Counter(NUMBER.findall(zh)) == Counter(NUMBER.findall(en))  # the same numbers, in either order
    answer = q.answer("en").derivation
    # the sentence gives the right reasoning: it ends on the answer as the derivation writes it
    assert NUMBER.findall(answer)[-1] in NUMBER.findall(en), (answer, en)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda m: m.__name__.rpartition(".")[2])
def test_a_lesson_modules_words_are_only_its_questions_derivations_and_mistakes(lesson):
    keys = {q.key for q in lesson.QUESTIONS} | {f"{q.key}.mistake.{m.key}" for q in lesson.QUESTIONS for m in q.mistakes}
    assert set(lesson.TEXT["zh"]) == set(lesson.TEXT["en"]) == keys
    assert all(q.text is lesson.TEXT for q in lesson.QUESTIONS)


QUESTIONS_DIR = Path(__file__).resolve().parents[2] / "sim" / "questions"
LESSONS_DIR = Path(__file__).resolve().parents[2] / "lessons"
MACHINERY = {"__init__", "question"}  # the registry and what a question is; every other module is a lesson's


def test_every_lesson_module_is_gathered():
    modules = {p.stem for p in QUESTIONS_DIR.glob("*.py")} - MACHINERY
    assert modules == {m.__name__.rpartition(".")[2] for m in LESSONS}, "add the new module to sim/questions LESSONS"


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda m: m.__name__.rpartition(".")[2])
def test_a_lesson_module_holds_the_questions_its_lesson_asks_and_nothing_else(lesson):
    slug = lesson.__name__.rpartition(".")[2].replace("_", "-")
    asked = {key for page in LESSONS_DIR.glob(f"*/{slug}.md")
             for key in re.findall(r"^question:\s*(\S+)", page.read_text(encoding="utf-8"), re.M)}
    assert {q.key for q in lesson.QUESTIONS} == asked


@pytest.mark.parametrize("key, guess, mistake", [
    ("e2e-latency", 12.5, "no_ttft"),  # forgot TTFT
    ("e2e-latency", 12.675, None),  # 0.2 + 0.025 x 499: the strict N - 1 count is right
    ("e2e-latency", 12.7, None),
    ("decode-intensity", 2, "per_parameter"),
    ("decode-intensity", 0.5, "no_multiply_add"),
    ("ridge-gap-a100", 78, "per_parameter"),  # the source lesson's figure
    ("kv-7b-2048-32", 32, "gib"),
    ("kv-7b-2048-32", 17, "no_k_and_v"),
    ("tpot-share", 100, "no_ttft"),
    ("tpot-share", 98.4, None),
    ("decode-mfu-7b-a100", 0.64, None),
    ("decode-mfu-7b-a100", 1.3, "per_parameter"),
    ("decode-speed-anchor-h100", 65.4, None),  # weights only: bandwidth / weight bytes
    ("decode-speed-anchor-h100", 19_300, "compute"),
    ("h100-vs-a100-decode", 3.17, "compute"),
    ("kv-reserve-max-anchor-h100", FIT_AT_MAX, None),
    ("kv-reserve-max-anchor-h100", MISTAKES["kv-reserve-max-anchor-h100"]["no_state"], "no_state"),  # state forgotten
    ("kv-reserve-max-anchor-h100", MISTAKES["kv-reserve-max-anchor-h100"]["matmul_weights"], "matmul_weights"),
    ("static-held-short-request", 150, None),  # 100 steps of about 15 ms over 10 tokens
    ("static-held-short-request", 15.4, "returned_when_done"),
    ("paged-empty-slots-b16", 8, None),  # half a block
    ("paged-empty-slots-b16", 0, "no_waste"),
    ("paged-empty-slots-b16", 16, "whole_block"),
    ("paged-empty-slots-b16", 15, "bound"),
    ("swap-bytes-anchor-2048", 285, None),
    ("swap-bytes-anchor-2048", 134, "no_state"),
    ("swap-bytes-anchor-2048", 537, "all_layers"),
    ("stall-2048-batch32", 107.5, None),
    ("stall-2048-batch32", 19.47, "decode_unchanged"),  # the decode step, as if nobody joined
    ("stall-2048-batch32", 121.2, "prefill_plus_decode"),
    ("chunk-256-stall", 19.75, None),
    ("chunk-256-stall", 19.47, None),  # the decode step unchanged is right within 10%: a chunk below the ridge
    ("chunk-256-stall", 32.2, "proportional"),
    ("chunk-256-stall", 107.5, "no_change"),
    ("chunk-256-ttft", 157, None),
    ("chunk-256-ttft", 107.5, "free_for_prompt"),
    ("kv-transfer-13b-25gbps", 134, None),
    ("kv-transfer-13b-25gbps", 16.8, "gbit_as_gbyte"),
    ("kv-transfer-13b-25gbps", 67.1, "k_only"),
    ("tpot-first-token", 19.5, None),
    ("tpot-first-token", 25, "counts_first_token"),  # the normalized latency
    ("split-throughput-chat", 8.2, None),
    ("split-throughput-chat", 14.1, "doubles"),  # two colocated GPUs' worth
    ("split-throughput-chat", 15, "doubles"),
    ("verify-5-tokens-h100", 15.59, None),
    ("verify-5-tokens-h100", 15.41, None),  # one decode step is right within 10%: the point of a verify step
    ("verify-5-tokens-h100", 77, "five_steps"),
    ("tokens-per-call-08-4", 3.36, None),
    ("tokens-per-call-08-4", 3.2, "gamma_times_alpha"),
    ("tokens-per-call-08-4", 5, "all_kept"),
    ("drafted-share-08-4", 59, None),
    ("drafted-share-08-4", 80, "alpha_is_share"),
    ("exact-output-mat", 50, None),
    ("exact-output-mat", 90, "follows_draft"),
    ("speedup-batch96-h200", 0.88, None),
    ("speedup-batch96-h200", 1.81, "always_helps"),
    ("entropy-uniform-anchor", 17.9, None),
    ("entropy-uniform-anchor", 12.4, "nats"),
    ("entropy-uniform-anchor", 5.4, "log10"),
    ("temperature-half-example", 55, None),
    ("temperature-half-example", 35, "on_probabilities"),
    ("temperature-half-example", 12.25, "no_renormalise"),
    ("temperature-half-example", 23, "multiplied"),
    ("top-p-09-example", 5, None),
    ("top-p-09-example", 4, "below_p"),
    ("min-p-02-example", 4, None),
    ("min-p-02-example", 2, "absolute"),
    ("top-p-sort-b128-h100", 0.83, None),
    ("top-p-sort-b128-h100", 0.038, "one_read"),
    ("top-p-sort-b128-h100", 0.0065, "one_row"),
    ("tp8-step-llama-2-70b", 12, None),
    ("tp8-step-llama-2-70b", 11.4, None),  # the measured all-reduce medians (160 x 34 µs) are right within 10%
    ("tp8-step-llama-2-70b", 5.9, "eight_times_faster"),
    ("tp8-step-llama-2-70b", 9, "one_per_layer"),
    ("tp8-all-reduce-4mib", 50, None),
    ("tp8-all-reduce-4mib", 51, None),  # Vidur's median at exactly 4 MiB
    ("tp8-all-reduce-4mib", 9.3, "bytes_over_bandwidth"),
    ("tp8-all-reduce-4mib", 16, "ring_without_floor"),
    ("tp8-all-reduce-4mib", 150, "proportional"),
    ("tp4-requests-llama-2-70b", 608, None),
    ("tp4-requests-llama-2-70b", 98, "unchanged"),
    ("tp4-requests-llama-2-70b", 196, "proportional"),
    ("moe-touched-deepseek-b64", 222, None),
    ("moe-touched-deepseek-b64", 221.4, None),  # 256 x (1 - e^-2): the exponential's shortcut is right
    ("moe-touched-deepseek-b64", 8, "active_only"),
    ("moe-touched-deepseek-b64", 512, "no_overlap"),
    ("moe-touched-deepseek-b64", 256, "capped"),
    ("moe-advantage-qwen-b16", 1.5, None),
    ("moe-advantage-qwen-b16", 1.55, None),  # 128 / 82.4: one over the share of experts touched
    ("moe-advantage-qwen-b16", 10, "parameter_ratio"),
    ("moe-advantage-qwen-b16", 8, "active_at_any_batch"),
    ("ep8-step-deepseek-v3", 27, None),
    ("ep8-step-deepseek-v3", 22.6, "no_communication"),
    ("ep8-step-deepseek-v3", 11.6, "one_gpu_over_n"),
])
def test_grading_examples(key, guess, mistake):
    q = QUESTIONS[key]
    grade = q.grade(guess, "zh")
    assert grade.correct is (mistake is None)
    assert (None if grade.mistake is None else q.mistakes[grade.mistake].key) == mistake


@pytest.mark.parametrize("key, index", ALL_MISTAKES)
def test_no_mistakes_window_reaches_the_answer(key, index):
    q = QUESTIONS[key]
    answer, wrong, m = q.answer("en").value, q.mistake_values()[index], q.mistakes[index]
    window = q.tolerance if m.tolerance is None else m.tolerance
    assert abs(answer - wrong) > window * abs(wrong), (key, m.key)


def test_the_joining_questions_are_the_prefill_interference_widgets_defaults():
    # The lesson asks them beside the widget: its defaults (and chunk 256) must show the same numbers.
    anchor, h100 = presets.model("qwen3.8-27b"), presets.hardware("h100-sxm")
    whole = interference.interfere(anchor, h100, batch=32, context=2048, prompt_tokens=2048)
    chunked = interference.interfere(anchor, h100, batch=32, context=2048, prompt_tokens=2048, chunk_tokens=256)
    assert QUESTIONS["stall-2048-batch32"].answer("en").value == whole.stall_s * 1e3
    assert QUESTIONS["chunk-256-stall"].answer("en").value == chunked.stall_s * 1e3
    assert QUESTIONS["chunk-256-ttft"].answer("en").value == chunked.ttft_s * 1e3
    for state, r in (({}, whole), ({"chunk_tokens": "256"}, chunked)):
        v = widgets.render("prefill-interference", {**state, "lang": "en"})
        assert v["outputs"]["stall_ms"]["value"] == pytest.approx(r.stall_s * 1e3, rel=1e-5)
        assert v["outputs"]["ttft_ms"]["value"] == pytest.approx(r.ttft_s * 1e3, rel=1e-5)


def test_the_joining_derivations_say_what_bounds_each_step():
    # "compute-bound" for the whole prompt's matmuls, "one read of the weights" for a chunk of 256 below the ridge,
    # and the longest chunked step is the last one ("the chunk after the first 1,792 prompt tokens")
    c = JOIN_COST
    assert c.token_s * (2048 + 32) + c.logit_s * 33 > c.weights_s
    assert c.token_s * (256 + 32) + c.logit_s * 33 <= c.weights_s
    assert max(JOIN_CHUNKS_S) == JOIN_CHUNKS_S[-1]
    for lang in ("zh", "en"):
        assert "102.47" in QUESTIONS["stall-2048-batch32"].answer(lang).derivation
        chunked = QUESTIONS["chunk-256-stall"].answer(lang).derivation
        assert "1,792" in chunked and "277" in chunked and f"{c.weights_s * 1e3:.2f} ms" in chunked
    assert QUESTIONS["kv-transfer-13b-25gbps"].answer("en").derivation == (
        "2 × 40 layers × 40 KV heads × 128 × 2 bytes = 819,200 B/token; × 512 tokens = 419.4 MB ÷ "
        "(25 Gbit/s ÷ 8 = 3.125 GB/s) = 134.2 ms")


@pytest.mark.parametrize("lang, words", [("en", "19.47 ms is a decode step with no one joining"),
                                          ("zh", "19.47 ms 是没有新请求加入时的一步 decode")])
def test_the_unchanged_decode_step_is_named_in_the_stall_box(lang, words):
    v = widgets.render("predict", {"question": "stall-2048-batch32", "guess": 19.47, "lang": lang})
    check_view(v)
    assert v["flags"]["mistake"] and v["outputs"]["mistake"]["text"] == "decode_unchanged"
    assert v["outputs"]["verdict"]["text"].startswith(words)
    assert v["outputs"]["verdict"]["text"].endswith("107.51 ms。" if lang == "zh" else "107.51 ms.")
    assert v["outputs"]["expected"]["text"] == "108 ms"


def test_out_and_back_is_the_round_trip_mistake_not_all_layers():
    # issue 23: 570 MB (2 x 285 MB, out and back) used to get "counts KV in all 64 layers"
    q = QUESTIONS["swap-bytes-anchor-2048"]
    keys = [m.key for m in q.mistakes]
    for lang in ("zh", "en"):
        grade = q.grade(570, lang)
        assert grade.mistake == keys.index("round_trip"), grade
        assert grade.feedback == q.mistake_text(keys.index("round_trip"), lang)
        assert "570.4 MB" in grade.feedback and "285.2 MB" in grade.feedback
    assert q.grade(537, "en").mistake == keys.index("all_layers")
    assert q.grade(560, "en").mistake == keys.index("round_trip")  # nearer 570.4 than 536.9


@pytest.mark.parametrize("guess", [320, 480, 500, 515])
def test_a_guess_between_the_answer_and_the_all_layers_window_is_just_too_high(guess):
    # above the answer's 10% (313.7 MB), below the all-layers window (536.9 MB less 3% = 520.8 MB)
    grade = QUESTIONS["swap-bytes-anchor-2048"].grade(guess, "en")
    assert not grade.correct and grade.mistake is None and grade.feedback == "" and grade.error > 0
    v = widgets.render("predict", {"question": "swap-bytes-anchor-2048", "guess": guess, "lang": "en"})
    assert v["outputs"]["verdict"]["text"] == "Too high."


def test_the_round_trip_mistake_is_worded_in_both_languages():
    zh = QUESTIONS["swap-bytes-anchor-2048"].mistake_text(2, "zh")
    en = QUESTIONS["swap-bytes-anchor-2048"].mistake_text(2, "en")
    assert NUMBER.findall(zh) == NUMBER.findall(en) and not CHINESE.search(en)
    assert "one way" in en


def test_a_guess_far_from_the_answer_and_every_mistake_is_just_wrong():
    grade = QUESTIONS["e2e-latency"].grade(20, "en")
    assert not grade.correct and grade.mistake is None and grade.feedback == ""


def test_the_anchor_speed_is_the_step_bytes_over_bandwidth():
    e = roofline.decode(presets.model("qwen3.8-27b"), presets.hardware("h100-sxm"), batch=1, context=4)
    assert all(op.bound == "memory" for op in e.ops)  # the derivation says every operation is memory-bound
    assert e.bytes == ANCHOR_STEP_BYTES
    assert QUESTIONS["decode-speed-anchor-h100"].answer("en").derivation == (
        "batch 1 reads 51.55 GB per step (51.25 GB of it weights), every operation memory-bound: "
        "51.55 GB ÷ 3.35 TB/s = 15.39 ms/token ≈ 65 tok/s")


def test_unanswered_view_does_not_give_the_answer_away():
    v = widgets.render("predict", {"question": "ceiling-7b-a100"})
    check_view(v)
    assert v["flags"] == {"answered": False, "correct": False, "incorrect": False, "mistake": False}
    assert "154" not in str(v)


@pytest.mark.parametrize("guess, correct, verdict", [(150, True, "对了"), (143, True, "对了"), (78, False, "偏低"),
                                                      (300, False, "参数当成了字节"), (500, False, "偏高"),
                                                      ("154", True, "对了")])
def test_grading_with_tolerance(guess, correct, verdict):
    v = widgets.render("predict", {"question": "ceiling-7b-a100", "guess": guess})
    check_view(v)
    assert v["flags"]["correct"] is correct and v["flags"]["incorrect"] is not correct
    assert verdict in v["outputs"]["verdict"]["text"]
    assert v["outputs"]["expected"]["text"] == "154 tok/s"
    assert "13.21 GB" in v["derivations"]["expected"]


@pytest.mark.parametrize("key, guess, lang", [("e2e-latency", 12.5, "zh"), ("kv-7b-2048-32", 32, "en"),
                                               ("decode-intensity", 2, "zh")])
def test_a_named_mistake_is_the_verdict(key, guess, lang):
    q = QUESTIONS[key]
    v = widgets.render("predict", {"question": key, "guess": guess, "lang": lang})
    check_view(v)
    index = q.grade(guess, lang).mistake
    assert v["flags"] == {"answered": True, "correct": False, "incorrect": True, "mistake": True}
    assert v["outputs"]["mistake"] == {"value": index, "text": q.mistakes[index].key}
    assert v["outputs"]["verdict"]["text"] == q.mistake_text(index, lang)
    assert v["derivations"]["expected"] == q.answer(lang).derivation


def test_the_forgotten_ttft_is_named_in_both_languages():
    zh = widgets.render("predict", {"question": "e2e-latency", "guess": 12.5})
    en = widgets.render("predict", {"question": "e2e-latency", "guess": 12.5, "lang": "en"})
    assert zh["outputs"]["verdict"]["text"] == ("12.5 s 只算了 TPOT × 输出长度，漏了 TTFT：第一个 token 出来之前还要等 "
                                                "0.2 s。0.2 s + 0.025 s × 500 = 12.7 s。")
    assert en["outputs"]["verdict"]["text"] == ("12.5 s counts only TPOT × output length and forgets TTFT: the first "
                                                "token takes 0.2 s to arrive. 0.2 s + 0.025 s × 500 = 12.7 s.")
    assert zh["outputs"]["error"]["text"] == "−1.6%（允许误差 ±1%）"
    assert en["outputs"]["error"]["text"] == "−1.6% (tolerance ±1%)"


def test_a_wrong_guess_that_is_no_named_mistake_has_no_mistake():
    v = widgets.render("predict", {"question": "ceiling-7b-a100", "guess": 78})
    assert not v["flags"]["mistake"] and v["outputs"]["mistake"] == {"value": -1, "text": ""}


def test_bad_guess_means_unanswered():
    for guess in ("abc", "", None, float("nan"), [1]):
        assert not widgets.render("predict", {"question": "e2e-latency", "guess": guess})["flags"]["answered"]


@pytest.mark.parametrize("key", QUESTIONS)
@pytest.mark.parametrize("guess", [None, 1, 2, 32, 78, 100])
def test_both_languages_render_and_the_english_view_has_no_chinese(key, guess):
    zh = widgets.render("predict", {"question": key, "guess": guess})
    en = widgets.render("predict", {"question": key, "guess": guess, "lang": "en"})
    check_view(en)
    assert en["flags"] == zh["flags"] and en["state"]["lang"] == "en"
    assert {k: o["value"] for k, o in en["outputs"].items()} == {k: o["value"] for k, o in zh["outputs"].items()}
    texts = [o["text"] for o in en["outputs"].values()] + list(en["derivations"].values())
    assert not any(CHINESE.search(text) for text in texts), texts


def test_english_grading_words():
    v = widgets.render("predict", {"question": "ceiling-7b-a100", "guess": 78, "lang": "en"})
    assert v["outputs"]["verdict"]["text"] == "Too low."
    assert v["outputs"]["error"]["text"] == "−49% (tolerance ±10%)"
    assert v["derivations"]["expected"] == "bandwidth ÷ weights read per step = 2.039 TB/s ÷ 13.21 GB = 154 tok/s"


@pytest.mark.parametrize("key", QUESTIONS)
def test_the_error_readout_never_shows_minus_zero(key):
    answer = QUESTIONS[key].answer("zh").value
    for guess in (answer * (1 - 1e-4), answer, answer * (1 + 1e-4)):
        text = widgets.render("predict", {"question": key, "guess": guess})["outputs"]["error"]["text"]
        assert text.startswith("0%（允许误差 ±"), text


@pytest.mark.parametrize("key, guess, error, expected", [
    ("ceiling-7b-a100", 170, "+10%（允许误差 ±10%）", "154 tok/s"),
    ("kv-7b-2048-32", 40, "+16%（允许误差 ±5%）", "34.4 GB"),
    ("ridge-gap-a100", 150, "−2%（允许误差 ±10%）", "153×"),
    ("tpot-share", 98, "−0.4%（允许误差 ±1%）", "98.4%"),
    ("e2e-latency", 12.675, "−0.2%（允许误差 ±1%）", "12.7 s"),
])
def test_readouts_have_no_space_before_percent_or_times(key, guess, error, expected):
    v = widgets.render("predict", {"question": key, "guess": guess})
    assert v["outputs"]["error"]["text"] == error
    assert v["outputs"]["expected"]["text"] == expected


def test_a_count_answer_prints_as_a_whole_number(monkeypatch):
    # issue 23: a count read "85.0" requests (the anchor on an H100 of 80e9 B; the preset's 85.52 GB gives 105)
    q = QUESTIONS["kv-reserve-max-anchor-h100"]
    _, numbers = q.compute()
    for count in (85, 105, 1_234):
        monkeypatch.setitem(QUESTIONS, q.key, dataclasses.replace(q, compute=lambda c=count: (c, {**numbers,
                                                                                                   "value": c})))
        for lang in ("zh", "en"):
            v = widgets.render("predict", {"question": q.key, "guess": 10, "lang": lang})
            assert v["outputs"]["expected"]["text"] == f"{count:,}"
    monkeypatch.undo()
    v = widgets.render("predict", {"question": q.key, "guess": 10})
    assert v["outputs"]["expected"]["text"] == f"{FIT_AT_MAX}"
    v = widgets.render("predict", {"question": "paged-empty-slots-b16", "guess": 1})
    assert v["outputs"]["expected"]["text"].startswith("7.5")  # a mean count is no whole number: three figures


def test_forgetting_the_targets_token_is_never_right():
    # γα = 3.2 lies 4.8% below E = 3.36: the 2% tolerance keeps it out, and a guess between them is just too low
    q = QUESTIONS["tokens-per-call-08-4"]
    assert not q.grade(3.2, "en").correct and not q.grade(3.28, "en").correct
    assert q.grade(3.3, "en").correct
    assert q.grade(3.28, "en").mistake is None and q.grade(3.28, "en").error < 0


@pytest.mark.parametrize("guess", [1, 1.0, 0.99])
def test_no_change_at_batch_96_is_just_too_high(guess):
    # the point of the question: past the ridge speculation is slower, not merely no faster
    grade = QUESTIONS["speedup-batch96-h200"].grade(guess, "en")
    assert not grade.correct and grade.mistake is None and grade.error > 0


def test_the_speculation_questions_are_readouts_of_the_spec_decode_widget():
    # The lesson asks them beside the widget: at its defaults (H100, batch 1) and on an H200 at α 0.6, batch 1 and 96
    # (scenario links); the widget shows the answers and mistakes as the derivations print them.
    default = _spec_decode_view()
    alone, past = (_spec_decode_view(hardware="h200-sxm", alpha=0.6, batch=b) for b in (1, 96))
    assert default["verify_ms"]["text"] == f"{QUESTIONS['verify-5-tokens-h100'].answer('en').value:.2f} ms"
    assert default["decode_ms"]["text"] == f"{SPEC_DECODE_S * 1e3:.2f} ms"
    assert default["tokens_per_call"]["text"] == f"{QUESTIONS['tokens-per-call-08-4'].answer('en').value:.2f}"
    assert past["speedup"]["text"] == f"{QUESTIONS['speedup-batch96-h200'].answer('en').value:.2f}×" == "0.88×"
    assert alone["speedup"]["text"] == f"{QUESTIONS['speedup-batch96-h200'].mistake_values()[0]:.2f}×" == "1.81×"
    assert past["verify_tokens"]["value"] > past["critical_batch"]["value"]


def test_speculation_stops_paying_within_memory_only_with_the_weaker_draft():
    # The lesson's claims: at α 0.8 (γ 4, MTP, 1,024 tokens) every GPU's boundary lies beyond the requests that fit;
    # at α 0.6 the H200's lies within them, and the question's batch 96 fits.
    for key in presets.hardware_keys():
        good = speculative.Speculation(ANCHOR_MODEL, presets.hardware(key), alpha=0.8, gamma=4, draft="mtp",
                                       batch=1, context=1024)
        assert good.break_even_batch > good.max_batch, key
    weak = good.at(hw=presets.hardware("h200-sxm"), alpha=0.6)
    assert weak.break_even_batch <= 96 <= weak.max_batch
    assert weak.at(batch=weak.max_batch).fits and not weak.at(batch=weak.max_batch + 1).fits


def test_the_exact_output_question_is_the_spec_sampling_widgets_overconfident_preset():
    from sim.widgets import spec_sampling

    p, q = spec_sampling.PRESETS["overconfident"]
    assert (p, q) == (speculative.EXAMPLE_TARGET, speculative.EXAMPLE_DRAFTS["overconfident"])
    view = widgets.render("spec-sampling", {"lang": "en", "preset": "overconfident", "samples": 100_000})
    out = view["figures"]["figure"]["data"][2]["y"][0]  # the output bar for "mat"
    assert out == pytest.approx(QUESTIONS["exact-output-mat"].answer("en").value / 100, abs=0.01)


def test_the_quantization_questions_are_readouts_of_the_quant_roofline_widget():
    # The lesson asks them beside the widget: at its defaults (INT4, batch 1), at batch 128, and for Llama-2-7B with
    # FP8 KV not fused (scenario links); the widget shows the answers as the derivations print them.
    def view(**state):
        return widgets.render("quant-roofline", {"lang": "en", **state})["outputs"]

    default, big = view(), view(batch=128)
    kv = view(model="llama-2-7b", weights="bf16", kv="fp8", kv_dequant="unfused", batch=16, context=8192)
    fused = view(model="llama-2-7b", weights="bf16", kv="fp8", batch=16, context=8192)
    assert default["speedup_vs_bf16"]["text"] == f"{QUESTIONS['int4-speedup-anchor-h100'].answer('en').value:.2f}×"
    assert default["bits_per_weight"]["text"] == "4.156"
    assert big["speedup_vs_bf16"]["text"] == f"{QUESTIONS['int4-speedup-b128-h100'].answer('en').value:.2f}×"
    assert kv["speedup_vs_bf16"]["text"] == "1.00×"
    assert fused["speedup_vs_bf16"]["text"] == f"{QUESTIONS['fp8-kv-unfused-llama'].mistake_values()[0]:.2f}×"
    assert kv["max_requests"]["value"] == 2 * view(model="llama-2-7b", weights="bf16", batch=16,
                                                   context=8192)["max_requests"]["value"] + 1


@pytest.mark.parametrize("key, guess, slip, en, zh", [
    # a fraction in a "%" box: 0.547 for 54.7%
    ("temperature-half-example", 0.547, 1 / 100, "Too low: about 1/100 of the answer. Check the unit: the box asks "
     "for %.", "偏低了：差不多是答案的 100 分之一。看看单位，这里要的是 %。"),
    # bytes in a "KB" box: 262,144 for 262.144 KB
    ("kv-per-token-qwen3-32b", 262_144, 1_000, "Too high: about 1,000 times the answer. Check the unit: the box asks "
     "for KB.", "偏高了：差不多是答案的 1,000 倍。看看单位，这里要的是 KB。"),
    # seconds in an "ms" box
    ("kv-transfer-13b-25gbps", QUESTIONS["kv-transfer-13b-25gbps"].answer("en").value / 1_000, 1 / 1_000,
     "Too low: about 1/1,000 of the answer. Check the unit: the box asks for ms.",
     "偏低了：差不多是答案的 1,000 分之一。看看单位，这里要的是 ms。"),
    # KiB where KB was meant is 1,024, not 1,000 (2.4% apart, within a 5% tolerance both): the nearer factor wins
    ("kv-per-token-qwen3-32b", 262.144 * 1_024, 1_024, "Too high: about 1,024 times the answer. Check the unit: the "
     "box asks for KB.", "偏高了：差不多是答案的 1,024 倍。看看单位，这里要的是 KB。"),
])
def test_a_slipped_unit_is_named_with_the_unit_the_box_asks_for(key, guess, slip, en, zh):
    grade = QUESTIONS[key].grade(guess, "en")
    assert not grade.correct and grade.mistake is None and grade.slip == pytest.approx(slip)
    for lang, words in (("en", en), ("zh", zh)):
        view = widgets.render("predict", {"question": key, "guess": guess, "lang": lang})
        assert view["outputs"]["verdict"]["text"] == words and not view["flags"]["mistake"]


def test_a_named_mistake_comes_before_a_slip_and_a_plain_miss_is_no_slip():
    q = QUESTIONS["temperature-half-example"]
    assert q.grade(54.7 * 3, "en").slip is None  # three times: no unit slips by three
    assert q.grade(54.7 * 100 * 1.3, "en").slip is None  # 100 times, but 30% off even then
    # a question whose mistake is itself a factor of 1,000 off keeps the mistake's sentence
    for key, question in QUESTIONS.items():
        for index, wrong in enumerate(question.mistake_values()):
            grade = question.grade(wrong, "en")
            assert grade.mistake == index or grade.correct, (key, index)
            assert grade.slip is None, (key, index)
