"""Request traces: who arrives when, with how long a prompt and how many tokens to generate.

Two presets, both capped at MAX_TOKENS = 2048 tokens per request (prompt + output), the max
sequence length of Orca's set-up (Orca §6) and of vLLM's (vLLM §3):

- "orca": prompt ~ U(32, 512) tokens and output ~ U(1, 128) tokens, uniform over the integers,
  with the model never stopping early, so output_tokens is exactly what is generated (Orca §6,
  §6.2: input tokens U(32, 512), max_gen_tokens U(1, 128), EOS never emitted).
- "chat": a chat-like shape with longer prompts and outputs. What is verified is only its bounds,
  from vLLM §6.5's chatbot: prompts truncated to the last 1024 tokens and up to 1024 output tokens.
  The shape inside those bounds is OUR CHOICE, not a measured ShareGPT statistic: prompt ~ U(32,
  1024) (the lower bound 32 copied from Orca) and output ~ U(1, 1024), uniform over the integers.

Arrivals are a Poisson process (Orca §6 and vLLM §6.1 both use Poisson arrivals): gaps between
arrivals are exponential with mean 1 / rate_per_s. Each gap is rounded to a whole microsecond
(our choice) and the arrival times are sums of whole microseconds, so a one-ulp difference
between two platforms' math.log almost never changes a trace.

Determinism: every draw comes from a random.Random seeded here, never the global generator.
randint and random() are pure Python over the Mersenne Twister, and string seeds are hashed with
SHA-512, so CPython and Pyodide produce the same trace for the same arguments. Lengths and
arrivals use separate generators, so lengths(preset, n, seed) is exactly the lengths of
requests(preset, n, rate, seed) at any rate, and the first k requests of a trace of n are the
trace of k.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from sim.physics.validate import check_choice, check_int, check_positive

MAX_TOKENS = 2048  # the max sequence length of Orca's and vLLM's set-ups

MAX_REQUESTS = 100_000  # a guard against a typo asking for a trace that would hang the page

# Inclusive integer bounds (prompt_low, prompt_high, output_low, output_high) of each preset.
BOUNDS = {
    "orca": (32, 512, 1, 128),  # Orca §6
    "chat": (32, 1024, 1, 1024),  # bounds from vLLM §6.5; the uniform shape and the 32 are our choice
}
PRESETS = tuple(BOUNDS)  # ("orca", "chat")


@dataclass(frozen=True)
class Request:
    id: int  # 0..n-1 in arrival order
    arrival_s: float
    prompt_tokens: int
    output_tokens: int  # tokens to generate; the request finishes after exactly this many

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens


def lengths(preset: str, n: int, seed: int) -> list[tuple[int, int]]:
    """n (prompt_tokens, output_tokens) pairs drawn from the preset; each pair sums to <= MAX_TOKENS."""
    check_choice("preset", preset, BOUNDS)
    n = check_int("n", n, 0, MAX_REQUESTS)
    seed = check_int("seed", seed, -(2**63), 2**63 - 1)
    return list(_draws(("lengths", preset, seed), n))


# Draws are kept per generator and extended on demand: the first n draws of a generator are the same whatever
# comes after them, so a trace of n requests is a prefix of a longer one's, and the draws a widget asks for at every
# rate it tries, and for every doubling of a steady state, are made once. At most KEPT_GENERATORS are kept.
KEPT_GENERATORS = 16
_kept: dict[tuple, tuple[random.Random, list]] = {}


def _draws(key: tuple, n: int) -> list:
    """The first n draws of the generator `key`: ("lengths", preset, seed) gives (prompt, output) pairs,
    ("gaps", seed) Exp(1) variates, -ln(1 - U)."""
    if key not in _kept:
        if len(_kept) >= KEPT_GENERATORS:
            del _kept[next(iter(_kept))]
        name = f"traces.lengths:{key[1]}:{key[2]}" if key[0] == "lengths" else f"traces.arrivals:{key[1]}"
        _kept[key] = random.Random(name), []
    rng, drawn = _kept[key]
    if key[0] == "lengths":
        p_lo, p_hi, o_lo, o_hi = BOUNDS[key[1]]
        while len(drawn) < n:
            prompt = rng.randint(p_lo, p_hi)
            drawn.append((prompt, rng.randint(o_lo, o_hi)))
    else:
        while len(drawn) < n:
            drawn.append(-math.log(1.0 - rng.random()))
    return drawn[:n]


def arrivals(n: int, rate_per_s: float, seed: int) -> list[float]:
    """n Poisson arrival times in seconds, non-decreasing, the first one gap after t = 0: each gap an Exp(1) draw
    over the rate, in whole microseconds."""
    n = check_int("n", n, 0, MAX_REQUESTS)
    rate_per_s = check_positive("rate_per_s", rate_per_s)
    seed = check_int("seed", seed, -(2**63), 2**63 - 1)
    t_us = 0
    out = []
    for draw in _draws(("gaps", seed), n):
        t_us += round(draw / rate_per_s * 1_000_000)
        out.append(t_us / 1_000_000)
    return out


def requests(preset: str, n: int, rate_per_s: float, seed: int) -> list[Request]:
    """n requests of the preset arriving as a Poisson process at rate_per_s; ids 0..n-1 in arrival order."""
    pairs = lengths(preset, n, seed)
    times = arrivals(n, rate_per_s, seed)
    return [
        Request(id=i, arrival_s=t, prompt_tokens=p, output_tokens=o) for i, (t, (p, o)) in enumerate(zip(times, pairs))
    ]
