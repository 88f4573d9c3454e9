"""Sampling: how one decode step's logits become one token, and what that costs a server.

THE DISTRIBUTIONS ARE SYNTHETIC. A next-token distribution over a vocabulary of `vocab` tokens (by default the anchor's,
248,320) is built from Zipf-like logits: the token of rank r gets -a ln r up to the `knee`, and past it the slope
steepens to b (-a ln knee - b ln(r / knee)), so that a few dozen tokens share most of the mass and a long tail shares
the rest, as a language model's next-token distributions do. A shape may set the logits of its first ranks outright
(`lead`: a clear favourite, or two nearly tied). The other ranks of the head get a seeded Gaussian jitter (SEED and
the shape's name; `JITTER` nats), then the head is sorted, so that it looks less regular than a formula. Only the head,
the first HEAD ranks, is explicit. The tail is SUMMARISED IN BUCKETS of consecutive ranks [x, y), each BUCKET_RATIO
times longer than the one before, whose tokens share one logit, the formula's at the geometric mean of the bucket's
first and last rank. So a distribution is a short list of `Group`s of equal tokens (about a hundred for the anchor's
vocabulary), and every figure below is exact for that list: nothing loops over 248,320 tokens.

THE RULES (in float64 here).
- Temperature t divides the logits before the softmax: p_i = exp(u_i / t) / sum_j exp(u_j / t) (Holtzman et al.,
  ICLR 2020, Eq. 4). t = 0 is greedy: the whole probability on the top token, the limit of t -> 0 (engines switch to
  an argmax below a small t, as vLLM's sampler does). Dividing the probabilities by t and renormalising would change
  nothing at all: temperature acts on logits.
- Top-k keeps the k most probable tokens (k = 0: off).
- Top-p, the nucleus (Holtzman §3.1, Eq. 2), keeps the smallest set of most probable tokens whose probabilities add
  up to at least p (p = 1: off). A running sum is compared with p allowing NUCLEUS_SLACK for float rounding.
- Min-p (Nguyen et al., arXiv 2407.01082) keeps every token whose probability is at least min_p x p_max, p_max being
  the top token's (min_p = 0: off): a threshold relative to the top token, not an absolute one.
- Together they apply in the order top-k, top-p, min-p, each to what the one before kept, renormalised: top-p after
  top-k on the survivors renormalised, as vLLM's sampler masks top-k then takes top-p over the softmax of what is left.
  Min-p's threshold is relative, so renormalising never changes what it keeps. vLLM V1 (order "vllm-v1") runs min-p
  first, as a logits processor, then top-k and top-p: its Sampler's docstring, vllm/v1/sample/sampler.py at commit
  3e342658, lists "Apply temperature", then the argmax-invariant logits processors, "by default the min_p
  processor", then "Apply top_k and/or top_p". Min-p then thins the tail before top-p renormalises, so top-p
  reaches p with fewer tokens.
- TIES: tokens of equal probability are ranked by token id, lowest first, and top-k and top-p keep a prefix of that
  ranking. So top-k may keep part of a run of equal tokens, and the nucleus is the shortest prefix that reaches p,
  even when the last token it needs ties with tokens left out. Min-p keeps every token tied at its threshold.
- ORDER, which engines differ on: "temperature-first" truncates the distribution at temperature t (vLLM's sampler
  divides the logits by t, then applies top-k and top-p); "truncate-first" truncates the distribution at t = 1 and
  applies t to the survivors (llama.cpp's default chain puts temperature after top-k, top-p and min-p); "vllm-v1"
  is temperature first with min-p before top-k and top-p, as above.
- kept_mass is p', the probability of what the truncations keep before renormalising, in the distribution they saw
  (at temperature t, or at t = 1 when truncating first). At t = 0 the one token kept holds all of it.
- The sampler draws with a random.Random seeded by a string (SEED and the run), as every draw in sim/ does.

WHAT IT COSTS A SERVER. One decode step ends with a B x V array of logits, one row per request, in FP32
(LOGIT_BYTES; vLLM's sampler works in float32), and every method passes over it. Each kernel below is counted per
logit: the bytes it reads and writes and its operations, where an operation is one arithmetic operation, comparison
or exponential on one element. The kernels (KERNELS), OUR MODEL of what each must move at least:
- argmax: one read, one comparison.
- temperature: the logits divided by t in place: one read, one write, one operation (vLLM divides in place).
- softmax: an online softmax (one pass for the row's maximum and sum of exponentials, a second that writes the
  probabilities): two reads and one write; 4 operations in the first pass (compare, subtract, exponential, add) and 3
  in the second (subtract, exponential, multiply).
- select: top-k by radix selection on 32-bit keys, one counting pass per 8-bit digit (4 reads, 2 operations each:
  extract the digit, count it), then a pass that gathers the k survivors (1 read, 1 comparison). The softmax and the
  draw over k survivors are left out: k is far smaller than V.
- sort: a full LSD radix sort of (FP32 probability, int32 token id) pairs, 4 passes of 8-bit digits, each reading and
  writing every pair (8 bytes each way) with 3 operations (extract, count, scatter).
- scan: one read of the sorted probabilities, with a running sum and a comparison with p, to find the nucleus; the
  draw re-reads only the nucleus, left out.
- reject: top-p without a full sort, as FlashInfer's sampling kernels do by rejection sampling: REJECTION_ROUNDS
  rounds, each a pass that draws a candidate above a pivot and a pass that adds up the mass above it (2 reads and 4
  operations per round). The number of rounds depends on the distribution; REJECTION_ROUNDS is a stand-in (OUR
  CHOICE), not a measurement.
The methods (METHODS) chain them: greedy = argmax; top-k = temperature, select; top-p by a full sort = temperature,
softmax, sort, scan; top-p without a sort = temperature, softmax, reject. Per request and step, greedy moves 4 bytes
per vocabulary entry and top-p by a full sort 88.

These kernels do less than one operation per byte, so their time is taken as their bytes at full bandwidth: a lower
bound, like every roofline time here, that leaves out each kernel launch's fixed cost. The step they follow is
roofline.decode at the same batch (`Step`). In one batch each request has its own settings: MIXES says how one request
that asks for a method among greedy ones is costed: "whole" runs the method on every row (and the argmax too), as
vLLM's first V1 sampler sorted the whole batch's logits when any request set top-p; "split" runs it on that row only.
"""

from __future__ import annotations

import bisect
import collections
import functools
import math
import random
from dataclasses import dataclass

from sim.physics import feasibility, presets, roofline
from sim.physics.presets import Hardware, Model
from sim.physics.validate import check_choice, check_int

ANCHOR = "qwen3.8-27b"
SEED = "sampling"
HEAD = 64  # explicit ranks; the rest of the vocabulary is summarised in buckets
BUCKET_RATIO = 1.25  # each tail bucket this many times longer than the one before
JITTER = 0.25  # nats: the seeded noise on the head's logits past the lead
NUCLEUS_SLACK = 1e-12  # a running sum this close below p counts as reaching it
MAX_K = 1_000
MAX_TEMPERATURE = 2.0
MAX_SAMPLES = 100_000
SHOWN_RANKS = 20  # ranks the widget's histogram shows one by one; the rest are one bar
ORDERS = ("temperature-first", "truncate-first", "vllm-v1")


@dataclass(frozen=True)
class Shape:
    """Zipf-like logits: slope a down to rank `knee`, then b; `lead` sets the first ranks' logits outright."""

    a: float
    knee: int
    b: float
    lead: tuple[float, ...] = ()


# The synthetic distributions the lessons use (our choice of parameters, labelled synthetic wherever they are shown).
SHAPES = {
    "peaked": Shape(a=1.0, knee=30, b=2.2, lead=(3.5,)),  # one clear favourite: "The capital of France is"
    "flat": Shape(a=0.6, knee=200, b=2.0),  # many plausible words: "My favourite food is"
    "close": Shape(a=1.0, knee=30, b=2.2, lead=(3.0, 2.95)),  # two nearly tied favourites
}


@dataclass(frozen=True)
class Group:
    """`count` tokens of equal logit, the first of rank `first` (1 = the most probable)."""

    logit: float
    count: int
    first: int


def _logit(shape: Shape, rank: float) -> float:
    if rank <= shape.knee:
        return -shape.a * math.log(rank)
    return -shape.a * math.log(shape.knee) - shape.b * math.log(rank / shape.knee)


@functools.lru_cache(maxsize=16)
def groups(shape_name: str, vocab: int = 248_320) -> tuple[Group, ...]:
    """The shape's logits over `vocab` tokens: HEAD explicit ranks, then tail buckets (see the module docstring)."""
    shape = SHAPES[check_choice("distribution", shape_name, SHAPES)]
    v = check_int("vocab", vocab, HEAD + 1, 10_000_000)
    rng = random.Random(f"{SEED} {shape_name}")
    head = []
    for r in range(1, HEAD + 1):
        if r <= len(shape.lead):
            head.append(shape.lead[r - 1])
        else:
            head.append(_logit(shape, r) + rng.gauss(0, JITTER))
    tail_top = _logit(shape, HEAD + 1)
    head = sorted((max(u, tail_top) for u in head), reverse=True)  # the head stays above the tail
    out = [Group(u, 1, r) for r, u in enumerate(head, start=1)]
    x = HEAD + 1
    while x <= v:
        y = min(v + 1, max(x + 1, round(x * BUCKET_RATIO)))
        out.append(Group(_logit(shape, math.sqrt(x * (y - 1))), y - x, x))
        x = y
    return tuple(out)


def bucket_count(shape: str = "flat", vocab: int = 248_320) -> int:
    """How many buckets summarise the tail past the HEAD ranks."""
    return len(groups(shape, vocab)) - HEAD


def anchor_vocab() -> int:
    return presets.model(ANCHOR).vocab


# -- the rules -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """Kept tokens of one group: `count` of them, each with probability `p`, the first of rank `first`."""

    p: float
    count: int
    first: int


def softmax(gs, temperature: float) -> tuple[Run, ...]:
    """The distribution at temperature t > 0: one Run per group, every token of a group equally likely."""
    top = max(g.logit for g in gs)
    weights = [math.exp((g.logit - top) / temperature) for g in gs]
    total = math.fsum(w * g.count for w, g in zip(weights, gs))
    return tuple(Run(w / total, g.count, g.first) for w, g in zip(weights, gs))


def _mass(runs) -> float:
    return math.fsum(r.p * r.count for r in runs)


def _renormalised(runs) -> tuple[Run, ...]:
    total = _mass(runs)
    return tuple(Run(r.p / total, r.count, r.first) for r in runs)


def top_k(runs, k: int) -> tuple[Run, ...]:
    """The k most probable tokens (ties by token id); k = 0 keeps all."""
    if k <= 0:
        return tuple(runs)
    kept, n = [], 0
    for r in runs:
        take = min(r.count, k - n)
        kept.append(Run(r.p, take, r.first))
        n += take
        if n >= k:
            break
    return tuple(kept)


def top_p(runs, p: float) -> tuple[Run, ...]:
    """The smallest set of most probable tokens whose probabilities add up to at least p; p >= 1 keeps all."""
    if p >= 1:
        return tuple(runs)
    kept, total = [], 0.0
    for r in runs:
        if r.p > 0 and total + r.p * r.count >= p - NUCLEUS_SLACK:
            need = max(1, math.ceil((p - NUCLEUS_SLACK - total) / r.p))
            kept.append(Run(r.p, min(r.count, need), r.first))
            return tuple(kept)
        kept.append(r)
        total += r.p * r.count
    return tuple(kept)


def min_p(runs, base: float) -> tuple[Run, ...]:
    """Tokens with probability at least base x the top token's (ties at the threshold kept); base = 0 keeps all."""
    if base <= 0:
        return tuple(runs)
    threshold = base * max(r.p for r in runs)
    return tuple(r for r in runs if r.p >= threshold)


@dataclass(frozen=True)
class Settings:
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    min_p: float = 0.0
    order: str = "temperature-first"

    def __post_init__(self):
        t = self.temperature
        if not isinstance(t, (int, float)) or isinstance(t, bool) or not 0 <= t <= MAX_TEMPERATURE:
            raise ValueError(f"temperature must be a number from 0 to {MAX_TEMPERATURE:g}, got {t!r}")
        check_int("top_k", self.top_k, 0, MAX_K)
        for name, value in (("top_p", self.top_p), ("min_p", self.min_p)):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1:
                raise ValueError(f"{name} must be a number from 0 to 1, got {value!r}")
        if self.top_p <= 0:
            raise ValueError(f"top_p must be greater than 0, got {self.top_p!r}")
        check_choice("order", self.order, ORDERS)


@dataclass(frozen=True)
class Result:
    """A distribution after temperature and truncation: what can be sampled, and what was cut."""

    runs: tuple[Run, ...]  # the sampling distribution: kept tokens, renormalised
    kept_mass: float  # p': the kept tokens' probability before renormalising, in the distribution truncated

    @property
    def kept_tokens(self) -> int:
        return sum(r.count for r in self.runs)

    @property
    def entropy_bits(self) -> float:
        return max(0.0, -math.fsum(r.count * r.p * math.log2(r.p) for r in self.runs if r.p > 0))

    @property
    def top_probability(self) -> float:
        return max(r.p for r in self.runs)

    def same_as(self, other: Result) -> bool:
        """The same tokens kept with the same probabilities, to rounding (1e-12 relative): the order of the steps
        can move a probability by its last bit and nothing else."""
        return (len(self.runs) == len(other.runs) and math.isclose(self.kept_mass, other.kept_mass, rel_tol=1e-12)
                and all((a.first, a.count) == (b.first, b.count) and math.isclose(a.p, b.p, rel_tol=1e-12)
                        for a, b in zip(self.runs, other.runs)))

    def probability_of_rank(self, rank: int) -> float:
        """The sampling probability of the token of rank `rank` (0 if it was cut)."""
        for r in self.runs:
            if r.first <= rank < r.first + r.count:
                return r.p
        return 0.0

    def rest_probability(self, shown: int = SHOWN_RANKS) -> float:
        """The sampling probability of every token ranked below `shown`."""
        return math.fsum(r.p * max(0, r.first + r.count - max(r.first, shown + 1)) for r in self.runs)


def truncate(runs, s: Settings) -> tuple[Run, ...]:
    """top-k, then top-p over the survivors renormalised, then min-p; under "vllm-v1" min-p first (see the module
    docstring)."""
    kept = min_p(runs, s.min_p) if s.order == "vllm-v1" else runs
    kept = top_k(kept, s.top_k)
    if s.top_p < 1:
        kept = top_p(_renormalised(kept), s.top_p)
    return kept if s.order == "vllm-v1" else min_p(kept, s.min_p)


def apply(gs, s: Settings) -> Result:
    """Temperature and truncation in the order `s.order`, over the groups `gs`."""
    if s.temperature == 0:
        first = gs[0]
        return Result((Run(1.0, 1, first.first),), 1.0)
    if s.order != "truncate-first":
        seen = softmax(gs, s.temperature)
        kept = truncate(seen, s)
        return Result(_rescaled(kept, seen), _kept_mass(kept, seen))
    seen = softmax(gs, 1.0)
    kept = truncate(seen, s)
    logit_of = {g.first: g.logit for g in gs}
    heated = softmax([Group(logit_of[r.first], r.count, r.first) for r in kept], s.temperature)
    return Result(heated, _kept_mass(kept, seen))


def _kept_mass(kept, seen) -> float:
    """The kept tokens' probability in `seen`, the distribution the truncations started from."""
    p = {r.first: r.p for r in seen}
    return math.fsum(p[r.first] * r.count for r in kept)


def _rescaled(kept, seen) -> tuple[Run, ...]:
    p = {r.first: r.p for r in seen}
    return _renormalised([Run(p[r.first], r.count, r.first) for r in kept])


def distribution(shape: str = "peaked", temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0,
                 min_p: float = 0.0, order: str = "temperature-first", vocab: int | None = None) -> Result:
    """A shape's distribution over `vocab` tokens (the anchor's by default) after these settings."""
    return _distribution(shape, temperature, top_k, top_p, min_p, order, anchor_vocab() if vocab is None else vocab)


@functools.lru_cache(maxsize=256)
def _distribution(shape, temperature, top_k, top_p, min_p, order, vocab) -> Result:
    """Cached by the vocabulary itself, not by a preset's name: the prose and the widget ask for the same few."""
    return apply(groups(shape, vocab), Settings(temperature, top_k, top_p, min_p, order))


def entropy_bits(probabilities) -> float:
    """Shannon entropy in bits of a list of probabilities."""
    return -math.fsum(p * math.log2(p) for p in probabilities if p > 0)


def uniform_entropy_bits(vocab: int) -> float:
    """log2 V: the most entropy a distribution over V tokens can have."""
    return math.log2(check_int("vocab", vocab, 1, 10_000_000))


def _draw(result: Result, n: int, rng: random.Random) -> list[int]:
    """Indices into result.runs of n draws (the generator's first random numbers)."""
    cum, total = [], 0.0
    for r in result.runs:
        total += r.p * r.count
        cum.append(total)
    return rng.choices(range(len(result.runs)), cum_weights=cum, k=n)


def sample(result: Result, samples: int, seed: str = SEED) -> tuple[int, ...]:
    """Ranks of `samples` tokens drawn from the result with a generator seeded by `seed`: a run by its probability,
    then, in a run of several equal tokens, one of them uniformly."""
    rng = random.Random(seed)
    runs = result.runs
    picks = _draw(result, check_int("samples", samples, 1, MAX_SAMPLES), rng)
    return tuple(runs[i].first + (rng.randrange(runs[i].count) if runs[i].count > 1 else 0) for i in picks)


def histogram(ranks, shown: int = SHOWN_RANKS) -> tuple[float, ...]:
    """Shares of the draws by rank 1..shown, then one share for every rank below."""
    tally = collections.Counter(min(r, shown + 1) for r in ranks)
    n = len(ranks)
    return tuple(tally[r] / n for r in range(1, shown + 2))


def drawn_shares(result: Result, samples: int, seed: str = SEED, shown: int = SHOWN_RANKS) -> tuple[float, ...]:
    """histogram(sample(result, samples, seed), shown) without picking a token inside each run: every run of
    several tokens lies past `shown` (the HEAD ranks are single tokens), so its draws all fall in the last bin."""
    if any(r.count > 1 and r.first <= shown for r in result.runs):
        return histogram(sample(result, samples, seed), shown)
    picks = _draw(result, check_int("samples", samples, 1, MAX_SAMPLES), random.Random(seed))
    tally = collections.Counter(min(result.runs[i].first, shown + 1) for i in picks)
    return tuple(tally[r] / samples for r in range(1, shown + 2))


def total_variation_by_rank(ranks, result: Result) -> float:
    """½ sum |histogram - p| over every token: the draws' distance from the sampling distribution."""
    tally = collections.Counter(ranks)
    n = len(ranks)
    gaps, matched = [], 0
    for r in result.runs:
        for rank in range(r.first, r.first + r.count):
            seen = tally.get(rank, 0)
            matched += seen
            gaps.append(abs(seen / n - r.p))
    gaps.append((n - matched) / n)  # draws of a token that was cut (never, if the sampler is right)
    return math.fsum(gaps) / 2


# -- small worked examples (the lesson's questions) ----------------------------------------------------------

# Eight next-token probabilities, in percent (ours): a distribution small enough to add up by hand.
EXAMPLE = (35, 25, 15, 10, 6, 4, 3, 2)


def example() -> tuple[float, ...]:
    return tuple(p / 100 for p in EXAMPLE)


def example_percent(separator: str = ", ") -> str:
    """The example's probabilities as the lesson lists them: "35%, 25%, …"."""
    return separator.join(f"{p}%" for p in EXAMPLE)


def heat(probabilities, temperature: float) -> tuple[float, ...]:
    """Temperature on the logits of a distribution: p_i^(1/t), renormalised (the logits are ln p_i + constant)."""
    weights = [p ** (1 / temperature) for p in probabilities]
    total = math.fsum(weights)
    return tuple(w / total for w in weights)


def power_sum(probabilities, power: float) -> float:
    """sum p_i^power: what heat() divides by."""
    return math.fsum(p ** power for p in probabilities)


def nucleus_size(probabilities, p: float) -> int:
    """How many of the most probable tokens top-p keeps: the smallest count whose sum reaches p."""
    ordered = sorted(probabilities, reverse=True)
    total = 0.0
    for n, q in enumerate(ordered, start=1):
        total += q
        if total >= p - NUCLEUS_SLACK:
            return n
    return len(ordered)


def min_p_size(probabilities, base: float) -> int:
    """How many tokens min-p keeps: those with probability at least base x the top one's."""
    top = max(probabilities)
    return sum(1 for q in probabilities if q >= base * top)


# -- two floating-point facts behind "temperature 0 is not always deterministic" -----------------------------

ORDER_EXAMPLE = (0.1, 0.2, 0.3)


def left_to_right(values) -> float:
    """((v0 + v1) + v2) + ...: a sum in one order."""
    total = 0.0
    for v in values:
        total += v
    return total


def right_to_left(values) -> float:
    """v0 + (v1 + (v2 + ...)): the same sum in another order."""
    total = 0.0
    for v in reversed(values):
        total = v + total
    return total


def float_text(x: float) -> str:
    """A float as Python prints it, every digit that tells it apart: 0.6000000000000001."""
    return repr(x)


BF16_MANTISSA_BITS = 7  # stored; with the implicit bit, 8 bits of precision


def bf16_spacing(x: float) -> float:
    """The gap between neighbouring BF16 numbers around |x| (x != 0): 2^(floor(log2 |x|) - 7)."""
    return 2.0 ** (math.floor(math.log2(abs(x))) - BF16_MANTISSA_BITS)


# -- published figures, set beside the simulator, never computed by it ---------------------------------------

# Holtzman, Buys, Du, Forbes, Choi, "The Curious Case of Neural Text Degeneration", ICLR 2020 (arXiv 1904.09751),
# Table 1: GPT-2 Large (762M) continuing 5,000 WebText prompts (1 to 40 tokens), stopping at the end of the document or
# 200 tokens. Columns: perplexity, Self-BLEU4, Zipf coefficient, repetition (% of generations that end in a phrase of
# two or more tokens repeated at least three times), HUSE (None where the table has none).
HOLTZMAN_TABLE_1 = {
    "human": (12.38, 0.31, 0.93, 0.28, None),
    "greedy": (1.50, 0.50, 1.00, 73.66, None),
    "beam-16": (1.48, 0.44, 0.94, 28.94, None),
    "stochastic-beam-16": (19.20, 0.28, 0.91, 0.32, None),
    "pure-sampling": (22.73, 0.28, 0.93, 0.22, 0.67),
    "temperature-0.9": (10.25, 0.35, 0.96, 0.66, 0.79),
    "top-k-40": (6.88, 0.39, 0.96, 0.78, 0.19),
    "top-k-640": (13.82, 0.32, 0.96, 0.28, 0.94),
    "top-k-40-temperature-0.7": (3.48, 0.44, 1.00, 8.86, 0.08),
    "nucleus-0.95": (13.13, 0.32, 0.95, 0.36, 0.97),
}
HOLTZMAN_MODEL_PARAMS = 762_000_000
HOLTZMAN_CONTINUATIONS = 5_000
HOLTZMAN_MAX_TOKENS = 200


def holtzman(method: str, column: str) -> float | None:
    """One cell of Holtzman's Table 1: column perplexity, self_bleu, zipf, repetition or huse."""
    columns = ("perplexity", "self_bleu", "zipf", "repetition", "huse")
    return HOLTZMAN_TABLE_1[check_choice("method", method, HOLTZMAN_TABLE_1)][columns.index(
        check_choice("column", column, columns))]


def holtzman_text(method: str, column: str) -> str:
    """A cell of Holtzman's Table 1 as the lesson prints it: two decimals, "—" where the table has none."""
    value = holtzman(method, column)
    return "—" if value is None else f"{value:.2f}"


# Leviathan, Kalman, Matias, "Fast Inference from Transformers via Speculative Decoding", ICML 2023 (arXiv
# 2211.17192), Table 3: measured acceptance α by target, draft and sampling, argmax (t = 0) and standard sampling
# (t = 1), each pair (α at t = 0, α at t = 1).
LEVIATHAN_TABLE_3 = {
    ("GPT-like (97M)", "unigram"): (0.03, 0.03),
    ("GPT-like (97M)", "bigram"): (0.05, 0.05),
    ("GPT-like (97M)", "GPT-like (6M)"): (0.88, 0.89),
    ("T5-XXL (EnDe)", "unigram"): (0.08, 0.07),
    ("T5-XXL (EnDe)", "bigram"): (0.20, 0.19),
    ("T5-XXL (EnDe)", "T5-small"): (0.75, 0.62),
    ("T5-XXL (EnDe)", "T5-base"): (0.80, 0.68),
    ("T5-XXL (EnDe)", "T5-large"): (0.82, 0.71),
    ("T5-XXL (CNNDM)", "unigram"): (0.13, 0.08),
    ("T5-XXL (CNNDM)", "bigram"): (0.23, 0.16),
    ("T5-XXL (CNNDM)", "T5-small"): (0.65, 0.53),
    ("T5-XXL (CNNDM)", "T5-base"): (0.73, 0.55),
    ("T5-XXL (CNNDM)", "T5-large"): (0.74, 0.56),
    ("LaMDA (137B)", "LaMDA (100M)"): (0.61, 0.57),
    ("LaMDA (137B)", "LaMDA (2B)"): (0.71, 0.71),
    ("LaMDA (137B)", "LaMDA (8B)"): (0.75, 0.74),
}


def leviathan_counts() -> tuple[int, int, int]:
    """Rows of Table 3 where α is higher at argmax than at t = 1, equal, and lower."""
    higher = sum(1 for a0, a1 in LEVIATHAN_TABLE_3.values() if a0 > a1)
    equal = sum(1 for a0, a1 in LEVIATHAN_TABLE_3.values() if a0 == a1)
    return higher, equal, len(LEVIATHAN_TABLE_3) - higher - equal


# llama.cpp's defaults (ggml-org/llama.cpp, common/common.h, common_params_sampling): top_k 40, top_p 0.95, min_p 0.05,
# temp 0.80, and a default chain of samplers that runs top-k, top-p and min-p before temperature.
LLAMA_CPP_DEFAULTS = {"top_k": 40, "top_p": 0.95, "min_p": 0.05, "temperature": 0.8}

# thinking-machines-lab/batch_invariant_ops, README ("Deterministic Inference in vLLM"): of 1,000 completions of 100
# tokens at temperature 0, vLLM gave 18 different ones; with its batch-invariant kernels, 1.
BATCH_INVARIANT_COMPLETIONS = 1_000
BATCH_INVARIANT_TOKENS = 100
BATCH_INVARIANT_UNIQUE = (18, 1)  # (vLLM as it is, with the batch-invariant kernels)


# -- what it costs a server ----------------------------------------------------------------------------------

LOGIT_BYTES = 4  # FP32
INDEX_BYTES = 4  # int32 token ids, carried through a sort
REJECTION_ROUNDS = 2  # our stand-in for top-p without a full sort (see the module docstring)
MAX_BATCH = 1_024
MAX_CONTEXT = 131_072


@dataclass(frozen=True)
class Kernel:
    """One pass of the sampling step, per logit: bytes read and written, and operations."""

    name: str
    read_bytes: int
    write_bytes: int
    ops: int

    @property
    def bytes(self) -> int:
        return self.read_bytes + self.write_bytes


RADIX_PASSES = 4  # 32-bit keys in 8-bit digits
_PAIR = LOGIT_BYTES + INDEX_BYTES
KERNELS = {k.name: k for k in (
    Kernel("argmax", LOGIT_BYTES, 0, 1),
    Kernel("temperature", LOGIT_BYTES, LOGIT_BYTES, 1),
    Kernel("softmax", 2 * LOGIT_BYTES, LOGIT_BYTES, 4 + 3),
    Kernel("select", RADIX_PASSES * LOGIT_BYTES + LOGIT_BYTES, 0, RADIX_PASSES * 2 + 1),
    Kernel("sort", RADIX_PASSES * _PAIR, RADIX_PASSES * _PAIR, RADIX_PASSES * 3),
    Kernel("scan", LOGIT_BYTES, 0, 2),
    Kernel("reject", REJECTION_ROUNDS * 2 * LOGIT_BYTES, 0, REJECTION_ROUNDS * 4),
)}
METHODS = {
    "greedy": ("argmax",),
    "top-k": ("temperature", "select"),
    "top-p-sort": ("temperature", "softmax", "sort", "scan"),
    "top-p-reject": ("temperature", "softmax", "reject"),
}
MIXES = ("all", "one-whole", "one-split")


def bytes_per_logit(method: str) -> int:
    return sum(KERNELS[k].bytes for k in METHODS[check_choice("method", method, METHODS)])


def ops_per_logit(method: str) -> int:
    return sum(KERNELS[k].ops for k in METHODS[check_choice("method", method, METHODS)])


@dataclass(frozen=True)
class Step:
    """The sampling step of `batch` requests over a vocabulary of `vocab`, beside roofline.decode's step."""

    m: Model
    hw: Hardware
    batch: int
    method: str
    mix: str = "all"
    context: int = 1_024

    def __post_init__(self):
        check_int("batch", self.batch, 1, MAX_BATCH)
        check_int("context", self.context, 0, MAX_CONTEXT)
        check_choice("method", self.method, METHODS)
        check_choice("mix", self.mix, MIXES)

    @property
    def vocab(self) -> int:
        return self.m.vocab

    def rows(self) -> tuple[tuple[str, int], ...]:
        """(method, rows) the step runs: every row, or one request's among greedy ones (whole batch or split)."""
        b = self.batch
        if self.mix == "all" or self.method == "greedy":
            return ((self.method, b),)
        if self.mix == "one-whole":
            return ((self.method, b), ("greedy", b)) if b > 1 else ((self.method, 1),)
        return ((self.method, 1), ("greedy", b - 1)) if b > 1 else ((self.method, 1),)

    @property
    def bytes(self) -> int:
        return sum(rows * self.vocab * bytes_per_logit(method) for method, rows in self.rows())

    @property
    def ops(self) -> int:
        return sum(rows * self.vocab * ops_per_logit(method) for method, rows in self.rows())

    @property
    def time_s(self) -> float:
        """Bytes at full bandwidth (the kernels are bound by memory; launch costs left out)."""
        return self.bytes / self.hw.bandwidth_bytes_per_s

    @property
    def intensity(self) -> float:
        return self.ops / self.bytes

    @property
    def logits_bytes(self) -> int:
        """One B x V array of FP32 logits."""
        return self.batch * self.vocab * LOGIT_BYTES

    @functools.cached_property
    def decode_s(self) -> float:
        return roofline.decode(self.m, self.hw, batch=self.batch, context=self.context).time_s

    @property
    def share(self) -> float:
        """The sampling step's share of decode step + sampling step."""
        return self.time_s / (self.decode_s + self.time_s)


def step(model: str, hardware: str, batch: int, method: str, mix: str = "all", context: int = 1_024) -> Step:
    """A Step from preset keys (told to sim/physics/feasibility.py each time: the Step itself is cached)."""
    m, hw = presets.model(model), presets.hardware(hardware)
    roofline.note_decode(m, hw, batch, context)
    return _step(m, hw, batch, method, mix, context)


@functools.lru_cache(maxsize=4096)
def _step(m: Model, hw: Hardware, batch: int, method: str, mix: str, context: int) -> Step:
    """Cached by the frozen records, not their keys, so a changed preset is a new entry: the prose, the questions and
    the widget ask for the same ones."""
    return Step(m, hw, batch, method, mix, context)


def share_from_batch(model: str, hardware: str, method: str, share: float, mix: str = "all",
                     context: int = 1_024) -> int | None:
    """The smallest batch of 1 to MAX_BATCH at which sampling takes at least `share` of the step, or None."""
    batches = range(1, MAX_BATCH + 1)
    with feasibility.unquoted():  # a search's trials, not quotes
        shares = [step(model, hardware, b, method, mix, context).share for b in (1, MAX_BATCH)]
        if shares[0] >= share:
            return 1
        if shares[1] < share:
            return None
        # the share grows with the batch (more rows, the weights' read shared): search it
        i = bisect.bisect_left(batches, True,
                               key=lambda b: step(model, hardware, b, method, mix, context).share >= share)
    roofline.note_decode(presets.model(model), presets.hardware(hardware), batches[i], context)  # the answer is one
    return batches[i]
