"""Which experts a step's tokens touch, and so which expert weights a mixture-of-experts step reads.

A router sends each token to `per_token` (k) of an MoE layer's E routed experts. A step of B tokens reads every
expert that at least one of them chose, once: under uniform routing (each token's k experts a uniformly random set,
tokens independent), an expert is missed by one token with probability 1 - k/E, by all B with (1 - k/E)^B, so the
step touches E x (1 - (1 - k/E)^B) distinct experts in expectation (`expected_touched`). At B = 1 that is k; as B
grows it climbs to E, and the bytes read climb from the active parameters to all of them. Uniform routing is OUR
CHOICE for every expectation the course prints: a trained router is not uniform (its load-balancing loss pushes it
towards it), and a skewed one touches fewer experts at the same B.

`route` draws one seeded sample of a step's routing, uniform or skewed (`skew` mixes the uniform popularity with a
Zipf one, 1 / rank), so a lesson can set a real-looking step beside the expectation. It uses only random.random()
and IEEE additions, multiplications and divisions, so Pyodide draws the same sample as CPython, and `power` takes
integer powers by repeated squaring rather than the C library's pow for the same reason.

Under expert parallelism over n GPUs (presets.Experts.expert_parallel, moe.ep_shard) each GPU holds E / n experts
and its MoE layers see the tokens of all n GPUs, which serve the same load (OUR CHOICE: balanced data-parallel
ranks): B tokens on each GPU make n x B tokens that touch (E / n) x (1 - (1 - k/E)^(nB)) of its experts.
"""

from __future__ import annotations

import bisect
import random
from dataclasses import dataclass

from sim.physics import model_size
from sim.physics.presets import Model
from sim.physics.validate import check_fraction, check_int

MAX_TOKENS = 10_000_000
MAX_EXPERTS = 4096


def power(x: float, n: int) -> float:
    """x ** n for an integer n >= 0 by repeated squaring: the same bits in every Python, unlike libm's pow."""
    result = 1.0
    while n:
        if n & 1:
            result *= x
        x *= x
        n >>= 1
    return result


def missed(routed: int, per_token: int, tokens: int) -> float:
    """The probability that none of `tokens` uniformly routed tokens picks a given expert: (1 - k/E)^tokens."""
    e = check_int("routed", routed, 1, MAX_EXPERTS)
    k = check_int("per_token", per_token, 1, e)
    return power(1 - k / e, check_int("tokens", tokens, 0, MAX_TOKENS))


def expected_touched(routed: int, per_token: int, tokens: int) -> float:
    """Distinct experts `tokens` uniformly routed tokens touch, in expectation: E x (1 - (1 - k/E)^tokens)."""
    return routed * (1 - missed(routed, per_token, tokens))


def touched(m: Model, tokens: int) -> float:
    """Routed experts of each MoE layer that a step of `tokens` tokens on this record's GPU reads, in expectation:
    of the experts it holds, those any of the tokens its MoE layers see chose (see the module docstring)."""
    e = m.experts
    if e is None:
        return 0.0
    return e.held * (1 - missed(e.routed, e.per_token, tokens * e.expert_parallel))


def weights_read_bytes(m: Model, tokens: int) -> float:
    """The matmul weights a step of `tokens` tokens reads once each: every weight of a dense model
    (model_size.matmul_weight_bytes); of an MoE model, all but the routed experts, and of these the touched ones."""
    full = model_size.matmul_weight_bytes(m)
    if m.experts is None:
        return full
    expert = m.moe_layers * model_size.expert_params(m) * m.weight_bytes_per_param
    return full - m.experts.held * expert + touched(m, tokens) * expert


# --- a seeded sample -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Routing:
    """One step's routing in one MoE layer: how many of the step's tokens chose each expert."""

    routed: int
    per_token: int
    tokens: int
    skew: float
    seed: int
    loads: tuple[int, ...]  # tokens per expert, by expert id

    @property
    def touched(self) -> int:
        return sum(1 for x in self.loads if x)

    @property
    def busiest(self) -> int:
        """The most tokens any one expert got."""
        return max(self.loads)

    @property
    def mean_load(self) -> float:
        """Tokens per touched expert."""
        return self.tokens * self.per_token / self.touched if self.tokens else 0.0


def popularity(routed: int, skew: float) -> tuple[float, ...]:
    """Each expert's share of the router's choices when one is drawn: (1 - skew) x uniform + skew x Zipf (1 / rank,
    normalised), by rank; skew 0 is uniform routing."""
    e = check_int("routed", routed, 1, MAX_EXPERTS)
    s = 0.0 if skew == 0 else check_fraction("skew", skew)
    harmonic = sum(1 / (i + 1) for i in range(e))
    return tuple((1 - s) / e + s * (1 / (i + 1)) / harmonic for i in range(e))


def route(routed: int, per_token: int, tokens: int, seed: int = 0, skew: float = 0.0) -> Routing:
    """A seeded sample of `tokens` tokens each routed to `per_token` distinct experts of `routed`: each pick drawn by
    popularity (`popularity`; the experts' ranks shuffled by the seed, so the popular ones are scattered), a pick
    already made for that token drawn again."""
    e = check_int("routed", routed, 1, MAX_EXPERTS)
    k = check_int("per_token", per_token, 1, e)
    b = check_int("tokens", tokens, 0, MAX_TOKENS)
    rng = random.Random(check_int("seed", seed, 0, 2**31 - 1))
    order = list(range(e))
    for i in range(e - 1, 0, -1):  # Fisher-Yates on random() alone
        j = int(rng.random() * (i + 1))
        order[i], order[j] = order[j], order[i]
    shares = popularity(e, skew)
    cumulative, total = [], 0.0
    for share in shares:
        total += share
        cumulative.append(total)
    loads = [0] * e
    for _ in range(b):
        chosen: set[int] = set()
        while len(chosen) < k:
            rank = min(bisect.bisect_right(cumulative, rng.random() * total), e - 1)
            chosen.add(order[rank])
        for x in chosen:
            loads[x] += 1
    return Routing(e, k, b, skew, seed, tuple(loads))
