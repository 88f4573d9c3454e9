"""Quantization: fewer bits per weight and per KV element, the error that costs, and what decode gains.

The quantizer (widget quantize-tensor):
- Round-to-nearest onto a grid with one scale per group of consecutive weights along a row (an output channel):
  granularity "tensor" (the whole tensor one group), "channel" (one group per row) or "group" (`group_size` weights).
- Integer formats are asymmetric, as GPTQ's and AWQ's 4-bit checkpoints are: a group's [min, max] is cut into
  2^bits - 1 equal steps, stored as an FP16 scale and a zero point `bits` wide. That is GPTQ §5's count of the
  overhead: (16 + 3) / 128 = 0.15 extra bits per weight at group 128 with 3 bits, 0.02 at group 1024.
- FP8 formats are symmetric: a group's largest magnitude is scaled onto the format's largest value (one FP16 scale
  per group, no zero point), then each weight rounds to the nearest FP8 number, ties to even. E4M3 is OCP's E4M3FN,
  the FP8 paper's (Micikevicius et al. 2022) and vLLM's FP8 W8A8 page's: no infinities, one NaN pattern, largest
  value 448. The E4M3FNUZ variant of some AMD parts (largest 240, the figure vLLM's quantized-KV page gives) is not
  modelled. E5M2 keeps IEEE's infinities and NaNs, largest 57,344.
- AWQ-style scaling (Lin et al. 2024, §3.2): input channel j is multiplied by s_j = a_j^alpha before rounding and
  divided by it after (in a real model the division is folded into the previous operation), a_j being the channel's
  mean activation magnitude; alpha is searched on a grid of AWQ_GRID values in [0, 1] for the lowest output error,
  as AWQ searches its exponent. alpha = 0 is plain rounding.
- Errors: in the weights, the RMS and the largest |w' - w|; in the layer's output, for activations x_j independent,
  zero-mean with RMS a_j: E|dW x|^2 = sum_ij dw_ij^2 a_j^2, given relative to E|W x|^2 (as a ratio of RMS values).
  The tensor is synthetic and seeded (TENSOR_SEED): ROWS x COLS Gaussian weights with row scales that differ, a few
  large weights, and SALIENT input channels whose activations are far larger than the rest (AWQ's "1 %").

Decode with fewer bytes (widget quant-roofline): the per-operation roofline of sim/physics/roofline.py with new byte
counts and peaks.
- Weights: the decoder layers' matmul weights are in the format. The LM head stays in BF16, and so do the embedding,
  the norms, the MTP layer and the vision tower: GPTQ keeps the embeddings and the output layer in FP16 (§5), and
  quantized checkpoints leave lm_head unquantized.
  - bf16: 2 bytes per weight, multiplied at the BF16 peak.
  - fp8 (W8A8): 1 byte; on a GPU with FP8 tensor cores the decoder layers' matmuls run at its FP8 peak (the
    activations are quantized to FP8 per token, counted as free) and the LM head, kept in BF16, at the BF16 peak.
    A GPU without them (A100) runs FP8 weights weight-only, widened to 16 bits (vLLM's FP8 Marlin), like int8.
  - int8 (W8A16) and int4 (W4A16): weight-only; each weight is widened to BF16 in registers and multiplied at the
    BF16 peak, which is why past the ridge they gain nothing (AutoAWQ's README; GPTQ §6).
  The per-channel scales of fp8 and int8 (one per 5,120-wide row, 0.003 bits per weight) are left out; int4's group
  scales and zero points are counted: 4 + 20 / group_size bits per weight.
- Dequantization: a weight-only format pays DEQUANT_FLOPS_PER_WEIGHT operations per quantized weight per step, at
  the BF16 peak, inside the matmul kernel (OUR CHOICE of a stand-in: unpack, subtract the zero point, multiply by the
  scale; real kernels do it on other units, overlapped with the loads). It matters only once the matmuls are
  compute-bound, and there it is 2 / B of the arithmetic at batch B.
- KV: bf16, 2 bytes per element; fp8, 1 byte (one scale per tensor); int2, KIVI-style: 2 bits plus an FP16 scale and
  an FP16 zero point per group of 32 elements, 3 bits per element, with each request's newest 32 tokens kept in BF16
  (KIVI's example.py: group_size 32, residual_length 32). The attention kernel reads the KV in its stored format when
  dequantization is fused into it (`kv_fused`); when it is not, it reads a BF16 copy, so the step is no faster though
  twice the requests fit (vLLM's quantized-KV page at v0.11.2: FP8 KV "primarily benefits throughput", with "no
  latency improvements" as dequantization was not yet fused). The pass that writes that copy is not counted.
- The recurrent state stays in FP32, as in every lesson.
"""

from __future__ import annotations

import bisect
import math
import random
from dataclasses import dataclass
from functools import cache, lru_cache

from sim.physics import cache as kv_cache
from sim.physics import feasibility, model_size, roofline
from sim.physics.presets import Hardware, Model
from sim.physics.validate import check_choice, check_int

# --- the quantizer -----------------------------------------------------------------------------------------------

TENSOR_FORMATS = ("int8", "int4", "fp8-e4m3", "fp8-e5m2")
GRANULARITIES = ("tensor", "channel", "group")
GROUP_SIZES = (32, 64, 128)
SCALE_BITS = 16  # an FP16 scale per group, as GPTQ counts it
ROWS, COLS = 8, 256
SALIENT = 3  # input channels with large activations: about 1 % of COLS
TENSOR_SEED = "inferlab quantize-tensor"
AWQ_GRID = 11  # alpha in 0, 0.1, ..., 1


@dataclass(frozen=True)
class FloatFormat:
    """A small floating-point format: its exponent and mantissa widths, bias and largest finite value."""

    exponent_bits: int
    mantissa_bits: int
    bias: int
    largest: float

    @property
    def bits(self) -> int:
        return 1 + self.exponent_bits + self.mantissa_bits


FLOAT_FORMATS = {
    "fp8-e4m3": FloatFormat(exponent_bits=4, mantissa_bits=3, bias=7, largest=448.0),
    "fp8-e5m2": FloatFormat(exponent_bits=5, mantissa_bits=2, bias=15, largest=57344.0),
}


@cache
def float_values(fmt: str) -> tuple[float, ...]:
    """Every non-negative finite value of an FP8 format, ascending: subnormals, then normals up to its largest.

    Enumerated in bit-pattern order, which for non-negative floats is value order, so a value's index is its bit
    pattern and its parity is the mantissa's last bit (what round-half-to-even looks at)."""
    f = FLOAT_FORMATS[fmt]
    steps = 2 ** f.mantissa_bits
    values = []
    for exponent in range(2 ** f.exponent_bits):
        for mantissa in range(steps):
            if exponent == 0:
                value = mantissa / steps * 2.0 ** (1 - f.bias)
            else:
                value = (1 + mantissa / steps) * 2.0 ** (exponent - f.bias)
            if value > f.largest:
                return tuple(values)
            values.append(value)
    return tuple(values)


def round_to_float(x: float, fmt: str) -> float:
    """x rounded to the nearest value of an FP8 format, ties to even, saturating at its largest value."""
    grid = float_values(fmt)
    magnitude = abs(x)
    if magnitude >= grid[-1]:
        return math.copysign(grid[-1], x)
    i = bisect.bisect_left(grid, magnitude)
    if grid[i] == magnitude:
        return math.copysign(grid[i], x)
    low, high = grid[i - 1], grid[i]
    if magnitude - low < high - magnitude or (magnitude - low == high - magnitude and (i - 1) % 2 == 0):
        return math.copysign(low, x)
    return math.copysign(high, x)


def check_size(group_size: int, sizes: tuple[int, ...]) -> int:
    """group_size if it is one of sizes; else a ValueError naming the parameter."""
    if group_size not in sizes:
        raise ValueError(f"group_size must be one of {', '.join(map(str, sizes))}; got {group_size!r}")
    return group_size


def int_bits(fmt: str) -> int:
    return {"int8": 8, "int4": 4}[fmt]


def quantize_group(values: list[float], fmt: str) -> list[float]:
    """One group of values rounded onto its own grid and read back (the dequantized values)."""
    if fmt in FLOAT_FORMATS:
        amax = max(abs(v) for v in values)
        if amax == 0:
            return [0.0] * len(values)
        scale = amax / FLOAT_FORMATS[fmt].largest
        return [round_to_float(v / scale, fmt) * scale for v in values]
    levels = 2 ** int_bits(fmt) - 1
    low, high = min(values), max(values)
    if high == low:
        return list(values)
    step = (high - low) / levels
    zero = round(-low / step)
    return [(min(levels, max(0, round(v / step) + zero)) - zero) * step for v in values]


def group_width(granularity: str, group_size: int, cols: int) -> int:
    """How many consecutive weights of a row share one scale."""
    return {"tensor": cols, "channel": cols, "group": group_size}[granularity]


def quantize_rows(rows: list[list[float]], fmt: str, granularity: str, group_size: int) -> list[list[float]]:
    """Every row quantized with the granularity's groups: the whole tensor, each row, or each run of group_size."""
    if granularity == "tensor":
        flat = quantize_group([v for row in rows for v in row], fmt)
        cols = len(rows[0])
        return [flat[i * cols:(i + 1) * cols] for i in range(len(rows))]
    width = group_width(granularity, group_size, len(rows[0]))
    return [[v for start in range(0, len(row), width) for v in quantize_group(row[start:start + width], fmt)]
            for row in rows]


def scale_overhead_bits(bits: int, group_size: int, zero_point: bool = True) -> float:
    """Extra bits per weight for one FP16 scale (and a zero point `bits` wide) shared by group_size weights."""
    return (SCALE_BITS + (bits if zero_point else 0)) / group_size


def tensor_bits_per_weight(fmt: str, granularity: str, group_size: int, rows: int = ROWS, cols: int = COLS) -> float:
    """Bits per weight with the scales (and an integer format's zero points) spread over the weights they serve."""
    bits = FLOAT_FORMATS[fmt].bits if fmt in FLOAT_FORMATS else int_bits(fmt)
    shared_by = rows * cols if granularity == "tensor" else group_width(granularity, group_size, cols)
    return bits + scale_overhead_bits(bits, shared_by, zero_point=fmt not in FLOAT_FORMATS)


@dataclass(frozen=True)
class Tensor:
    """A synthetic weight tensor (rows are output channels) and the RMS activation of each input channel."""

    weights: tuple[tuple[float, ...], ...]
    activations: tuple[float, ...]
    salient: tuple[int, ...]


@cache
def synthetic_tensor(seed: str = TENSOR_SEED) -> Tensor:
    """ROWS x COLS Gaussian weights, each row with its own scale, eight weights 6x larger than their row's spread,
    and SALIENT input channels with activations 20x the others' (seeded: the same tensor every time)."""
    rng = random.Random(seed)
    scales = [0.02 * math.exp(rng.gauss(0, 0.5)) for _ in range(ROWS)]
    weights = [[rng.gauss(0, s) for _ in range(COLS)] for s in scales]
    for _ in range(8):
        i, j = rng.randrange(ROWS), rng.randrange(COLS)
        weights[i][j] = math.copysign(6 * scales[i], weights[i][j])
    salient = tuple(sorted(rng.sample(range(COLS), SALIENT)))
    activations = [math.exp(rng.gauss(0, 0.3)) * (20 if j in salient else 1) for j in range(COLS)]
    return Tensor(tuple(tuple(row) for row in weights), tuple(activations), salient)


@dataclass(frozen=True)
class Quantized:
    """A tensor quantized one way, and what that costs."""

    original: tuple[tuple[float, ...], ...]
    dequantized: tuple[tuple[float, ...], ...]
    bits_per_weight: float
    alpha: float  # AWQ's exponent (0 without scaling)
    rms_error: float  # of the weights
    max_error: float
    output_error: float  # RMS of the layer's output error over the RMS of its output
    salient_rms_error: float  # of the weights in the salient input channels

    @property
    def distinct_values(self) -> int:
        """How many different values the rounded tensor holds (at most 2^bits with one scale per tensor)."""
        return len({w for row in self.dequantized for w in row})


def output_error(tensor: Tensor, dequantized) -> float:
    """RMS output error over RMS output, for independent zero-mean activations of RMS a_j (see the docstring)."""
    return _OutputError(tensor)(dequantized)


class _OutputError:
    """output_error against one tensor, its squared activations and its output's energy summed once (AWQ's search
    measures eleven candidates against them)."""

    def __init__(self, tensor: Tensor):
        self.weights = tensor.weights
        self.a2 = [a * a for a in tensor.activations]
        self.signal = math.fsum(w * w * a for row in tensor.weights for w, a in zip(row, self.a2))

    def __call__(self, dequantized) -> float:
        err = math.fsum((q - w) ** 2 * a for row, qrow in zip(self.weights, dequantized)
                        for w, q, a in zip(row, qrow, self.a2))
        return math.sqrt(err / self.signal)


def _scaled_round_trip(tensor: Tensor, fmt: str, granularity: str, group_size: int, alpha: float):
    """AWQ's transform: scale the input channels by s_j = a_j^alpha (normalised as AWQ does, by sqrt(max * min)),
    quantize, and divide the scale back out."""
    s = [a ** alpha for a in tensor.activations]
    norm = math.sqrt(max(s) * min(s))
    s = [v / norm for v in s]
    scaled = [[w * sj for w, sj in zip(row, s)] for row in tensor.weights]
    return [[q / sj for q, sj in zip(row, s)] for row in quantize_rows(scaled, fmt, granularity, group_size)]


@lru_cache(maxsize=64)  # pure and a few milliseconds (AWQ's search: eleven), asked again by prose and by every view
def quantize_tensor(fmt: str, granularity: str, group_size: int = 128, awq: bool = False,
                    tensor: Tensor | None = None) -> Quantized:
    """The synthetic tensor (or `tensor`) quantized in `fmt` at `granularity`, with AWQ's scale search if `awq`."""
    check_choice("format", fmt, TENSOR_FORMATS)
    check_choice("granularity", granularity, GRANULARITIES)
    check_size(group_size, GROUP_SIZES)
    t = tensor or synthetic_tensor()
    alphas = [k / (AWQ_GRID - 1) for k in range(AWQ_GRID)] if awq else [0.0]
    error = _OutputError(t)
    tried = [(alpha, _scaled_round_trip(t, fmt, granularity, group_size, alpha)) for alpha in alphas]
    alpha, dequantized = min(tried, key=lambda pair: error(pair[1]))
    errors = [q - w for row, qrow in zip(t.weights, dequantized) for w, q in zip(row, qrow)]
    salient = [qrow[j] - row[j] for row, qrow in zip(t.weights, dequantized) for j in t.salient]
    return Quantized(
        original=t.weights,
        dequantized=tuple(tuple(row) for row in dequantized),
        bits_per_weight=tensor_bits_per_weight(fmt, granularity, group_size, len(t.weights), len(t.weights[0])),
        alpha=alpha,
        rms_error=math.sqrt(math.fsum(e * e for e in errors) / len(errors)),
        max_error=max(abs(e) for e in errors),
        output_error=error(dequantized),
        salient_rms_error=math.sqrt(math.fsum(e * e for e in salient) / len(salient)),
    )


# --- decode with fewer bytes ---------------------------------------------------------------------------------------

WEIGHT_FORMATS = ("bf16", "fp8", "int8", "int4")
WEIGHT_BITS = {"bf16": 16, "fp8": 8, "int8": 8, "int4": 4}
INT4_GROUP_SIZES = (32, 64, 128, 256, 1024)
KV_FORMATS = ("bf16", "fp8", "int2")
DEQUANT_FLOPS_PER_WEIGHT = 4  # OUR CHOICE, see the docstring
KIVI_GROUP, KIVI_RESIDUAL = 32, 32  # KIVI's example.py
HEAD_BYTES_PER_PARAM = 2  # the LM head (and everything outside the decoder layers' matmuls) stays BF16


def weight_bits(weights: str, group_size: int = 128) -> float:
    """Bits per quantized weight, int4's group scale and zero point included (see the docstring)."""
    check_choice("weights", weights, WEIGHT_FORMATS)
    if weights == "int4":
        return WEIGHT_BITS["int4"] + scale_overhead_bits(WEIGHT_BITS["int4"],
                                                         check_size(group_size, INT4_GROUP_SIZES))
    return WEIGHT_BITS[weights]


def quantized_params(m: Model) -> int:
    """The weights a format applies to: every matmul weight of the decoder layers (the LM head is not one)."""
    return model_size.matmul_params(m) - model_size.lm_head_params(m)


def matmul_weight_bytes(m: Model, weights: str = "bf16", group_size: int = 128) -> float:
    """Bytes the weight matmuls read per step: the decoder layers in the format, the LM head in BF16."""
    bits = weight_bits(weights, group_size)
    return quantized_params(m) * bits / 8 + model_size.lm_head_params(m) * HEAD_BYTES_PER_PARAM


def resident_weight_bytes(m: Model, weights: str = "bf16", group_size: int = 128) -> float:
    """The checkpoint in memory: the quantized layers plus everything else at BF16."""
    rest = model_size.resident_params(m) - quantized_params(m)
    return quantized_params(m) * weight_bits(weights, group_size) / 8 + rest * HEAD_BYTES_PER_PARAM


def uses_fp8_compute(weights: str, hw: Hardware) -> bool:
    """W8A8: FP8 weights on a GPU with FP8 tensor cores multiply at its FP8 peak."""
    return weights == "fp8" and hw.fp8_peak_flops_per_s is not None


def weight_only(weights: str, hw: Hardware) -> bool:
    """Weights widened to BF16 before multiplying: int8, int4, and fp8 on a GPU without FP8 tensor cores."""
    return weights != "bf16" and not uses_fp8_compute(weights, hw)


def kv_elements_per_token(m: Model) -> int:
    return kv_cache.kv_bytes_per_token(m) // kv_cache.KV_DTYPE_BYTES


def kv_bits(kv: str) -> float:
    """Bits per stored KV element: int2 carries an FP16 scale and zero point per group of KIVI_GROUP."""
    return {"bf16": 16, "fp8": 8, "int2": 2 + 2 * SCALE_BITS / KIVI_GROUP}[check_choice("kv", kv, KV_FORMATS)]


def kv_bytes(m: Model, kv: str, tokens: int) -> float:
    """The KV one request holds for `tokens` cached tokens; int2 keeps the newest KIVI_RESIDUAL in BF16."""
    per_token = kv_elements_per_token(m)
    if kv == "int2":
        recent = min(tokens, KIVI_RESIDUAL)
        return per_token * (recent * 2 + (tokens - recent) * kv_bits(kv) / 8)
    return per_token * tokens * kv_bits(kv) / 8


def decode(m: Model, hw: Hardware, batch: int, context: int, weights: str = "bf16", group_size: int = 128,
           kv: str = "bf16", kv_fused: bool = True) -> roofline.Estimate:
    """One decode step of `batch` requests with `context` tokens cached, in these formats (roofline.decode's
    operations, with the bytes and peaks of the docstring). All BF16, it is roofline.decode exactly."""
    b = check_int("batch", batch, 1, roofline.MAX_BATCH)
    ctx = check_int("context", context, 0, roofline.MAX_CONTEXT)
    check_choice("kv", kv, KV_FORMATS)
    feasibility.note(lambda: f"{m.name} in {weights} weights and a {kv} KV cache on the {hw.name}, batch {b:,} at "
                             f"{ctx:,} tokens of context",
                     resident_weight_bytes(m, weights, group_size) + b * bytes_per_request(m, ctx, kv),
                     hw.memory_bytes)
    flops = roofline.matmul_flops(m, b, sampled=b)
    if weight_only(weights, hw):
        flops += DEQUANT_FLOPS_PER_WEIGHT * quantized_params(m)
    peak = hw.peak_flops_per_s
    if uses_fp8_compute(weights, hw):  # one op whose arithmetic takes the layers' time at FP8 plus the head's at BF16
        head = roofline.matmul_flops(m, 0, sampled=b)
        peak = flops / ((flops - head) / hw.fp8_peak_flops_per_s + head / hw.peak_flops_per_s)
    read_kv = kv if kv_fused else "bf16"
    ops = [
        roofline.Op("matmuls", flops, matmul_weight_bytes(m, weights, group_size), peak, hw.bandwidth_bytes_per_s),
        roofline.Op("attention", b * kv_cache.attention_flops_per_cached_token(m) * ctx,
                    b * kv_bytes(m, read_kv, ctx + 1), hw.peak_flops_per_s, hw.bandwidth_bytes_per_s),
        roofline.Op("state", 0, b * 2 * kv_cache.state_bytes_per_request(m), hw.peak_flops_per_s,
                    hw.bandwidth_bytes_per_s),
    ]
    return roofline.Estimate(ops=tuple(op for op in ops if op.flops or op.bytes), tokens=b,
                             peak_flops_per_s=hw.peak_flops_per_s, bandwidth_bytes_per_s=hw.bandwidth_bytes_per_s)


def ridge_batch(m: Model, hw: Hardware, weights: str = "bf16", group_size: int = 128) -> int:
    """The smallest batch whose weight matmuls are compute-bound in this format (roofline.critical_batch for BF16)."""
    def compute_bound(b: int) -> bool:
        return decode(m, hw, b, 0, weights, group_size).op("matmuls").bound == "compute"

    low, high = 1, roofline.MAX_BATCH  # compute_bound is monotonic in the batch
    with feasibility.unquoted():
        if not compute_bound(high):
            return high
        while low < high:
            mid = (low + high) // 2
            low, high = (low, mid) if compute_bound(mid) else (mid + 1, high)
    return low


def bytes_per_request(m: Model, context: int, kv: str = "bf16") -> float:
    """What one request holds: its KV in the stored format plus its FP32 recurrent state."""
    return kv_bytes(m, kv, context) + kv_cache.state_bytes_per_request(m)


def max_requests(m: Model, hw: Hardware, context: int, weights: str = "bf16", group_size: int = 128,
                 kv: str = "bf16") -> int:
    """Requests with `context` tokens cached that fit beside the checkpoint in these formats (0 if none; at most
    roofline.MAX_BATCH, which is also the answer when a request holds nothing: no context, no recurrent state)."""
    free = hw.memory_bytes - resident_weight_bytes(m, weights, group_size)
    if free <= 0:
        return 0
    per_request = bytes_per_request(m, context, kv)
    return min(roofline.MAX_BATCH, int(free // per_request)) if per_request > 0 else roofline.MAX_BATCH


# --- GPTQ's OPT-175B, Table 6 and §5 -------------------------------------------------------------------------------
# OPT-175B (Zhang et al. 2022, Table 1): 96 layers, model width 12,288, a feed-forward of 4 x 12,288; its vocabulary
# of 50,272 and 2,048 positions (+2 offset) are the OPT configs'. Its LM head is the embedding, tied.
OPT_175B = {"layers": 96, "hidden": 12_288, "ffn": 4 * 12_288, "vocab": 50_272, "positions": 2_048 + 2}


def opt_layer_params(hidden: int, ffn: int) -> tuple[int, int]:
    """One OPT decoder layer: (matmul weights, biases and LayerNorms). q, k, v, o and fc1, fc2 all have biases."""
    weights = 4 * hidden * hidden + 2 * hidden * ffn
    small = 4 * hidden + ffn + hidden + 2 * 2 * hidden
    return weights, small


def opt_weight_bytes(bits: float, opt: dict = OPT_175B) -> float:
    """OPT's checkpoint with its layers' matmul weights at `bits` and the rest (embeddings, positions, biases,
    norms) in FP16, as GPTQ keeps them."""
    weights, small = opt_layer_params(opt["hidden"], opt["ffn"])
    rest = opt["layers"] * small + (opt["vocab"] + opt["positions"]) * opt["hidden"] + 2 * opt["hidden"]
    return opt["layers"] * weights * bits / 8 + rest * 2


def opt_kv_bytes(tokens: int, opt: dict = OPT_175B) -> float:
    """OPT's FP16 KV cache for `tokens` tokens: K and V of the full model width in every layer."""
    return tokens * opt["layers"] * 2 * opt["hidden"] * 2


# GPTQ Table 3: OPT's WikiText2 perplexity in FP16 and after GPTQ at 4 and 3 bits (Frantar et al., ICLR 2023),
# by model size. Published measurements, set beside the simulator, never computed by it.
GPTQ_OPT_PERPLEXITY = {
    "125M": (27.65, 31.12, 53.85),
    "350M": (22.00, 24.24, 33.79),
    "1.3B": (14.63, 15.47, 20.97),
    "2.7B": (12.47, 12.87, 16.88),
    "6.7B": (10.86, 11.39, 14.86),
    "13B": (10.13, 10.31, 11.61),
    "30B": (9.56, 9.63, 10.27),
    "66B": (9.34, 9.55, 14.16),
    "175B": (8.34, 8.37, 8.68),
}
