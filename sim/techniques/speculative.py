"""Speculative decoding: a cheap draft guesses γ tokens and the target checks them all in one pass.

The rule (Leviathan, Kalman and Matias, ICML 2023, §2.3 and Algorithm 1; Chen et al. 2023, the same rule). A
drafted token x ~ q is kept if q(x) <= p(x); otherwise it is kept with probability p(x) / q(x). When it is
rejected, the token emitted in its place is drawn from norm(max(0, p - q)). Every token that comes out is
then distributed exactly as p (Leviathan, Appendix A.1), whatever q is. A draft only changes how often its guesses
are kept: α = Σ min(p, q) (Def. 3.1, Thm 3.5). `sample_rule` runs the rule with a seeded generator.
`speculate` runs whole calls: γ guesses, each checked in turn, and then one token from the target itself (the
correction at the first rejection, or the bonus token after γ kept guesses).

The speed (Leviathan §3). If each guess is kept independently with probability α, one target call yields
E = (1 - α^(γ+1)) / (1 - α) tokens (Eq. 1; the target's own token included; γ + 1 at α = 1). Thm 3.8 prices a
call at γ draft steps of c target steps each plus one target step, so the walltime gain is E / (γc + 1).
Thm 3.11's ratio of arithmetic, (1 - α)(γĉ + γ + 1) / (1 - α^(γ+1)), counts the target's work on all γ + 1
positions, kept or not, with ĉ the draft's arithmetic per token over the target's.

`Speculation` replaces Thm 3.8's constant target step by the per-operation roofline of StepCost at batch
B, for the anchor's layout of operations:
- decode_s: one ordinary decode step, B tokens (roofline.decode's operations);
- verify_s: the target over γ + 1 tokens per request in one step. The weight matmuls see B(γ + 1) tokens, each
  producing logits (every position is checked), with the weights read once. Each request's attention is a chunk of
  γ + 1 tokens after its `context` cached ones (StepCost.chunk_attention_s: the cached KV read once for all of
  them). Its recurrent state is read once and written after each of the γ + 1 positions, so that the next call
  can continue from the last kept one: vLLM keeps γ + 1 state slots per request while speculating
  (GDNAttentionMetadata.spec_state_indices_tensor, one column per position);
- draft_s: one draft step at batch B, by draft kind (DRAFTS).
While B(γ + 1) tokens stay below the ridge (roofline.critical_batch), verify_s is about decode_s, the weights'
read. Past it, the matmuls are compute-bound and verify_s grows to about γ + 1 decode steps, so the gain
E x decode_s / (γ draft_s + verify_s) falls below 1.

OUR CHOICES, stated where the widget shows these numbers:
- the KV rows of rejected guesses are overwritten by the next call, so they cost nothing beyond the step that
  wrote them;
- "small": a dense draft with SMALL_DRAFT_SHARE of the target's matmul weights and arithmetic (Leviathan's best
  drafts were about two orders of magnitude smaller than their targets, §3.6 and Table 3). Its attention and KV
  are left out, so its c is a lower bound;
- "mtp": the target's own multi-token-prediction layers (model_size.mtp_params: a full-attention layer, its MLP and
  the fc that joins embedding and hidden state) plus the LM head they share with the target, read again for each
  guess, with that layer's attention over `context` cached tokens;
- "ngram": prompt lookup. It runs no model on the GPU; its time is counted as 0;
- "custom": c as given, a share of decode_s at every batch, with ĉ = c.
"""

from __future__ import annotations

import bisect
import collections
import dataclasses
import functools
import math
import random
from dataclasses import dataclass
from functools import cached_property

from sim.physics import cache, feasibility, model_size
from sim.physics.presets import Hardware, Model
from sim.physics.step import StepCost, step_cost
from sim.physics.validate import check_choice, check_int

MAX_GAMMA = 16
MAX_BATCH = 512
MAX_CONTEXT = 131_072
MAX_SAMPLES = 100_000
MAX_CALLS = 1_000_000
DRAFTS = ("mtp", "small", "ngram", "custom")
SMALL_DRAFT_SHARE = 0.01  # the "small" draft's weights and arithmetic, as a share of the target's
SEED = "speculative-decoding"
# The spec-sampling widget's presets and the questions about them: one target over five candidate tokens, and
# drafts that range from close to it to its opposite (weights in percent).
EXAMPLE_TARGET = (50, 20, 15, 10, 5)
EXAMPLE_DRAFTS = {
    "close": (45, 25, 12, 12, 6),
    "flat": (20, 20, 20, 20, 20),
    "overconfident": (90, 4, 3, 2, 1),
    "opposite": (5, 10, 15, 20, 50),
}


# -- the rule ------------------------------------------------------------------------------------------------


def normalise(weights) -> tuple[float, ...]:
    """A distribution from non-negative weights (at least one positive)."""
    ws = tuple(float(w) for w in weights)
    total = math.fsum(ws)
    if not ws or any(not math.isfinite(w) or w < 0 for w in ws) or not total > 0:
        raise ValueError(f"weights must be finite, non-negative and not all 0, got {weights!r}")
    return tuple(w / total for w in ws)


def acceptance(p, q) -> float:
    """α for one position: Σ min(p, q), the chance that a guess drawn from q is kept (Leviathan Thm 3.5)."""
    return math.fsum(min(a, b) for a, b in zip(p, q, strict=True))


def residual(p, q) -> tuple[float, ...]:
    """norm(max(0, p - q)): where a rejected guess's replacement is drawn from. Zero everywhere if p = q, when
    no guess is ever rejected."""
    excess = [max(0.0, a - b) for a, b in zip(p, q, strict=True)]
    total = math.fsum(excess)
    return tuple(e / total for e in excess) if total > 0 else tuple(0.0 for _ in excess)


def total_variation(a, b) -> float:
    """½ Σ |a - b|: the largest difference in probability the two distributions give any set of tokens."""
    return math.fsum(abs(x - y) for x, y in zip(a, b, strict=True)) / 2


class _Sampler:
    """Draws from p, from q, and from the residual, each by inverting its cumulative sums."""

    def __init__(self, p, q, rng: random.Random):
        self.p, self.q, self.rng = p, q, rng
        self._cdf = {name: _cumulative(dist) for name, dist in (("p", p), ("q", q), ("r", residual(p, q)))}

    def draw(self, name: str) -> int:
        cdf = self._cdf[name]
        return min(bisect.bisect_right(cdf, self.rng.random() * cdf[-1]), len(cdf) - 1)

    def check(self, x: int) -> bool:
        """Keep guess x if q(x) <= p(x), else with probability p(x) / q(x)."""
        return self.q[x] <= self.p[x] or self.rng.random() * self.q[x] < self.p[x]


def _cumulative(dist) -> list[float]:
    out, running = [], 0.0
    for d in dist:
        running += d
        out.append(running)
    return out


@dataclass(frozen=True)
class RuleRun:
    """`samples` draws of the rule: one guess from q each, kept or replaced by a draw from the residual."""

    p: tuple[float, ...]
    q: tuple[float, ...]
    counts: tuple[int, ...]  # how often each token came out
    accepted: int  # draws whose guess was kept

    @property
    def samples(self) -> int:
        return sum(self.counts)

    @property
    def histogram(self) -> tuple[float, ...]:
        return tuple(c / self.samples for c in self.counts)

    @property
    def alpha(self) -> float:
        return acceptance(self.p, self.q)

    @property
    def accepted_share(self) -> float:
        return self.accepted / self.samples

    @property
    def distance_to_target(self) -> float:
        return total_variation(self.histogram, self.p)

    @property
    def distance_to_draft(self) -> float:
        return total_variation(self.histogram, self.q)


def sample_rule(p_weights, q_weights, samples: int, seed: str = SEED) -> RuleRun:
    """Run the accept/reject rule `samples` times with a generator seeded by `seed`."""
    p, q = normalise(p_weights), normalise(q_weights)
    if len(p) != len(q):
        raise ValueError(f"p and q must cover the same tokens, got {len(p)} and {len(q)}")
    n = check_int("samples", samples, 1, MAX_SAMPLES)
    rng, tokens = random.Random(seed), range(len(p))
    # The rule draw by draw, in three passes (a student's 100,000 draws stay well under a frame in the browser):
    # every guess from q, then each guess's check, then a replacement from the residual for each rejected one.
    # A guess with q <= p is kept with probability 1 (random() < 1 always holds), one with q > p with p / q.
    keep = [min(1.0, a / b) if b > 0 else 1.0 for a, b in zip(p, q)]
    kept = [x for x in rng.choices(tokens, cum_weights=_cumulative(q), k=n) if rng.random() < keep[x]]
    accepted = len(kept)
    if accepted < n:
        kept += rng.choices(tokens, cum_weights=_cumulative(residual(p, q)), k=n - accepted)
    tally = collections.Counter(kept)
    counts = [tally[x] for x in tokens]
    return RuleRun(p=p, q=q, counts=tuple(counts), accepted=accepted)


@dataclass(frozen=True)
class CallsRun:
    """`calls` speculative calls of γ guesses each, every position drawing from the same p and q."""

    gamma: int
    tokens: int  # tokens emitted over all calls
    calls: int
    first_tokens: tuple[int, ...]  # how often each token was a call's first emitted token

    @property
    def tokens_per_call(self) -> float:
        return self.tokens / self.calls


def speculate(p_weights, q_weights, gamma: int, calls: int, seed: str = SEED) -> CallsRun:
    """Run `calls` calls: guesses checked left to right until one is rejected (its correction emitted, the rest
    thrown away) or all γ are kept (the target's bonus token emitted after them)."""
    p, q = normalise(p_weights), normalise(q_weights)
    g = check_int("gamma", gamma, 1, MAX_GAMMA)
    n = check_int("calls", calls, 1, MAX_CALLS)
    s = _Sampler(p, q, random.Random(seed))
    tokens, first = 0, [0] * len(p)
    for _ in range(n):
        emitted = []
        for _ in range(g):
            x = s.draw("q")
            if s.check(x):
                emitted.append(x)
            else:
                emitted.append(s.draw("r"))
                break
        else:
            emitted.append(s.draw("p"))
        tokens += len(emitted)
        first[emitted[0]] += 1
    return CallsRun(gamma=g, tokens=tokens, calls=n, first_tokens=tuple(first))


# -- the speed -----------------------------------------------------------------------------------------------


def _check_alpha(alpha) -> float:
    ok = isinstance(alpha, (int, float)) and not isinstance(alpha, bool) and 0 <= alpha <= 1
    if not ok:
        raise ValueError(f"alpha must be a number from 0 to 1, got {alpha!r}")
    return float(alpha)


def _check_cost(name: str, c) -> float:
    ok = isinstance(c, (int, float)) and not isinstance(c, bool) and math.isfinite(c) and c >= 0
    if not ok:
        raise ValueError(f"{name} must be a finite number of at least 0, got {c!r}")
    return float(c)


def expected_tokens(alpha: float, gamma: int) -> float:
    """Leviathan Eq. 1: tokens one target call yields, (1 - α^(γ+1)) / (1 - α), its own token included."""
    a, g = _check_alpha(alpha), check_int("gamma", gamma, 1, MAX_GAMMA)
    if a == 1:
        return float(g + 1)
    return (1 - a ** (g + 1)) / (1 - a)


def paper_speedup(alpha: float, gamma: int, c: float) -> float:
    """Leviathan Thm 3.8: E / (γc + 1), a target call costing one target step whatever it checks."""
    return expected_tokens(alpha, gamma) / (gamma * _check_cost("c", c) + 1)


def flops_ratio(alpha: float, gamma: int, c_hat: float) -> float:
    """Leviathan Thm 3.11: arithmetic per emitted token over plain decoding's, (1 - α)(γĉ + γ + 1) / (1 - α^(γ+1))."""
    return (gamma * _check_cost("c_hat", c_hat) + gamma + 1) / expected_tokens(alpha, gamma)


def verify_s(cost: StepCost, batch: int, context: int, gamma: int) -> float:
    """One target step over γ + 1 tokens per request (see the module docstring)."""
    tokens = batch * (gamma + 1)
    return (cost.matmuls_s(tokens, tokens) + batch * cost.chunk_attention_s(gamma + 1, context)
            + cost.state_s * (1 + gamma + 1) * batch)


def decode_s(cost: StepCost, batch: int, context: int) -> float:
    """One ordinary decode step (StepCost.time_s with no joiner)."""
    return cost.matmuls_s(batch, batch) + cost.decode_attention_s(batch, batch * context) + cost.state_s * 2 * batch


@dataclass(frozen=True)
class DraftCost:
    """One draft step at a batch: its time, and its arithmetic per token over the target's (ĉ)."""

    step_s: float
    c_hat: float


def draft_cost(m: Model, hw: Hardware, draft: str, batch: int, context: int, c: float = 0.0) -> DraftCost:
    """What one draft step costs at batch `batch`, by kind (see the module docstring)."""
    check_choice("draft", draft, DRAFTS)
    cost = step_cost(m, hw)
    if draft == "custom":
        return DraftCost(_check_cost("c", c) * decode_s(cost, batch, context), c)
    if draft == "ngram":
        return DraftCost(0.0, 0.0)
    if draft == "small":
        return DraftCost(SMALL_DRAFT_SHARE * cost.matmuls_s(batch, batch), SMALL_DRAFT_SHARE)
    if not m.mtp_layers:
        raise ValueError(f"{m.name} has no multi-token-prediction layer")
    weights, target = _mtp_and_target_params(m)
    matmuls = max(2 * weights * batch / hw.peak_flops_per_s,
                  weights * m.weight_bytes_per_param / hw.bandwidth_bytes_per_s)
    share = m.mtp_layers / m.full_attention_layers  # its attention layers among the target's
    pairs = share * cache.attention_flops_per_cached_token(m) * batch * context
    rows = share * cache.kv_bytes_per_token(m) * batch * (context + 1)
    attention = max(pairs / hw.peak_flops_per_s, rows / hw.bandwidth_bytes_per_s)
    return DraftCost(matmuls + attention, weights / target)


@functools.lru_cache(maxsize=8)
def _mtp_and_target_params(m: Model) -> tuple[int, int]:
    """The weights one MTP guess reads (its layers and the shared LM head), and the target's per token."""
    return model_size.mtp_params(m) + model_size.lm_head_params(m), model_size.matmul_params(m)


@dataclass(frozen=True)
class Speculation:
    """Speculative decoding of model m on hw at batch B, each request with `context` tokens cached."""

    m: Model
    hw: Hardware
    alpha: float
    gamma: int
    draft: str
    batch: int
    context: int
    c_custom: float = 0.0  # c for the "custom" draft

    def __post_init__(self):
        _check_alpha(self.alpha)
        check_int("gamma", self.gamma, 1, MAX_GAMMA)
        check_int("batch", self.batch, 1, MAX_BATCH)
        check_int("context", self.context, 0, MAX_CONTEXT)
        feasibility.note(lambda: f"speculative decoding of {self.m.name} (γ = {self.gamma}) on the {self.hw.name}, "
                                 f"batch {self.batch:,} at {self.context:,} tokens of context",
                         self.memory_bytes, self.hw.memory_bytes)

    @cached_property
    def cost(self) -> StepCost:
        return step_cost(self.m, self.hw)

    @cached_property
    def decode_s(self) -> float:
        return decode_s(self.cost, self.batch, self.context)

    @cached_property
    def verify_s(self) -> float:
        return verify_s(self.cost, self.batch, self.context, self.gamma)

    @cached_property
    def draft_step(self) -> DraftCost:
        return draft_cost(self.m, self.hw, self.draft, self.batch, self.context, self.c_custom)

    @property
    def c(self) -> float:
        """The draft step's time over the target's decode step at this batch (Thm 3.8's c)."""
        return self.draft_step.step_s / self.decode_s

    @property
    def tokens_per_call(self) -> float:
        return expected_tokens(self.alpha, self.gamma)

    @property
    def call_s(self) -> float:
        """γ draft steps, then the verify step."""
        return self.gamma * self.draft_step.step_s + self.verify_s

    @property
    def speedup(self) -> float:
        """Tokens per second per request over plain decoding's at the same batch."""
        return self.tokens_per_call * self.decode_s / self.call_s

    def gains(self, batch: int) -> tuple[float, ...]:
        """The speed-up at `batch` for every γ from 1 to MAX_GAMMA (the same arithmetic as `speedup`, without a
        Speculation per point: a figure asks for hundreds)."""
        draft = draft_cost(self.m, self.hw, self.draft, batch, self.context, self.c_custom).step_s
        plain = decode_s(self.cost, batch, self.context)
        return tuple(expected_tokens(self.alpha, g) * plain / (g * draft + verify_s(self.cost, batch, self.context, g))
                     for g in range(1, MAX_GAMMA + 1))

    @property
    def paper_speedup(self) -> float:
        """Thm 3.8 with this c: the verify step priced as one decode step."""
        return paper_speedup(self.alpha, self.gamma, self.c)

    @property
    def flops_ratio(self) -> float:
        return flops_ratio(self.alpha, self.gamma, self.draft_step.c_hat)

    @property
    def tokens_per_s(self) -> float:
        """Tokens per second per request with speculation."""
        return self.tokens_per_call / self.call_s

    def at(self, **changes) -> Speculation:
        return dataclasses.replace(self, **changes)

    @cached_property
    def best_gamma(self) -> int:
        """The γ of 1 to MAX_GAMMA with the highest speedup at this batch (the smallest of equals)."""
        gains = self.gains(self.batch)
        return gains.index(max(gains)) + 1

    @cached_property
    def break_even_batch(self) -> int | None:
        """The smallest batch of 1 to MAX_BATCH at which this speculation no longer speeds decoding up (speedup
        <= 1), or None if it pays at every batch."""
        e, g = self.tokens_per_call, self.gamma
        for b in range(1, MAX_BATCH + 1):
            draft = draft_cost(self.m, self.hw, self.draft, b, self.context, self.c_custom).step_s
            if e * decode_s(self.cost, b, self.context) <= g * draft + verify_s(self.cost, b, self.context, g):
                self.at(batch=b)  # the answer is a configuration too (sim/physics/feasibility.py)
                return b
        return None

    @property
    def request_bytes(self) -> int:
        """What one request holds while speculating: the KV of context + γ tokens and γ + 1 recurrent-state slots."""
        return ((self.context + self.gamma) * cache.kv_bytes_per_token(self.m)
                + (self.gamma + 1) * cache.state_bytes_per_request(self.m))

    @property
    def memory_bytes(self) -> int:
        """The whole checkpoint and B requests (request_bytes each)."""
        return model_size.resident_weight_bytes(self.m) + self.batch * self.request_bytes

    @property
    def max_batch(self) -> int:
        """The most requests that fit beside the checkpoint, 0 if not even one does."""
        return max(0, int((self.hw.memory_bytes - model_size.resident_weight_bytes(self.m)) // self.request_bytes))

    @property
    def fits(self) -> bool:
        """Whether B requests fit in memory beside the whole checkpoint (memory_bytes)."""
        return self.memory_bytes <= self.hw.memory_bytes
