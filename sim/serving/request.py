"""One request's path through the server, cell by cell, and the two back-of-envelope speeds of a token.

The running example is one request per language (TEXT, read with example(lang)):
- zh: the prompt 「小明把苹果给了」, 4 tokens as Qwen3.x's tokenizer splits it (reference lesson 000),
  continued by 「小王」;
- en: the prompt "Tom gave the apple to", continued by " Mary". Its split into 5 tokens is the usual one
  for common English words in BPE tokenizers (one token each); it is NOT checked against the anchor's
  tokenizer, which nobody here can run, so the English lesson says "about five".
The path: tokenize (CPU) -> prefill (one forward pass over the prompt, which also writes the KV rows and
the recurrent state, and whose last position yields the next token) -> a decode loop, one turn per token:
read the weights, read the KV cache and state (and write the new row and the updated state), compute the
token, sample the next one from the logits.

Every cell's figures come from the roofline estimates in sim.physics.roofline, split by what moves: a decode
step's memory time is exactly its weight-read time plus its cache-traffic time, and its compute runs
alongside them (the step takes the larger of the two, as in roofline.decode).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from sim.physics import cache, model_size, roofline
from sim.physics.presets import Hardware, Model

# The running example in each language: "prompt" is its tokens joined by "|", "next" the token prefill's
# last position picks (then the input of the first decode turn). Tokens are written as a BPE tokenizer
# writes them: a word that follows a space carries that space.
# zh: Qwen3.x's tokenizer's split (reference lesson 000).
# en: one token per common English word, as BPE tokenizers usually split them; not checked against the
#     anchor's tokenizer (nobody here can run it), so the lesson calls it "about five" tokens.
TEXT = {
    "zh": {"prompt": "小明|把|苹果|给了", "next": "小王"},
    "en": {"prompt": "Tom| gave| the| apple| to", "next": " Mary"},
}

# Samplers work on float32 logits (vLLM's V1 Sampler converts them before penalties, temperature and
# top-k/top-p), so picking a token reads vocab x 4 bytes.
LOGIT_BYTES = 4

PATH = ("tokenize", "prefill", "write-cache", "read-weights", "read-cache", "compute", "sample")


@dataclass(frozen=True)
class Example:
    """A language's running example: the prompt's tokens and the token prefill picks after them, each as the
    tokenizer writes it (leading space included)."""

    tokens: tuple[str, ...]
    next_token: str

    @property
    def prompt(self) -> str:
        """The prompt as the user typed it: its tokens put back together."""
        return "".join(self.tokens)

    @property
    def words(self) -> tuple[str, ...]:
        """The tokens as a reader sees them, without their leading spaces: ("Tom", "gave", ...)."""
        return tuple(token.strip() for token in self.tokens)

    @property
    def next_word(self) -> str:
        """The next token as a reader sees it: "Mary"."""
        return self.next_token.strip()


def example(lang: str) -> Example:
    """The running example of the page's language (a site language: sim/page/languages.py)."""
    words = TEXT[lang]
    return Example(tokens=tuple(words["prompt"].split("|")), next_token=words["next"])


@dataclass(frozen=True)
class Stage:
    """One cell of the path: HBM bytes it moves, FLOPs it does, and its time at full speed.

    Zero bytes or FLOPs means the cell itself moves or computes nothing that is not counted elsewhere.
    """

    bytes: float
    flops: float
    time_s: float


def cache_write_bytes(m: Model, tokens: int, state_dtype: str = "fp32") -> int:
    """Bytes prefill stores for later steps: one KV row per prompt token plus the recurrent state once."""
    return tokens * cache.kv_bytes_per_token(m) + cache.state_bytes_per_request(m, state_dtype)


def logits_bytes(m: Model) -> int:
    """The float32 logits a sampler reads to pick one token: one score per vocabulary entry."""
    return m.vocab * LOGIT_BYTES


def path_stages(m: Model, hw: Hardware, *, prompt_tokens: int, state_dtype: str = "fp32") -> Mapping[str, Stage]:
    """Each cell of the path (keys in PATH order) for one request whose prompt has `prompt_tokens` tokens.

    The decode cells describe the first decode step: `prompt_tokens` tokens cached, batch 1.
    """
    pre = roofline.prefill(m, hw, tokens=prompt_tokens, state_dtype=state_dtype)
    dec = roofline.decode(m, hw, batch=1, context=prompt_tokens, state_dtype=state_dtype)
    written = cache_write_bytes(m, prompt_tokens, state_dtype)
    weights = dec.bytes_by_kind["weights"]
    traffic = dec.bytes_by_kind["kv"] + dec.bytes_by_kind["state"]
    logits = logits_bytes(m)
    bandwidth = hw.bandwidth_bytes_per_s
    return MappingProxyType({
        "tokenize": Stage(bytes=0, flops=0, time_s=0),  # a vocabulary lookup on the CPU
        "prefill": Stage(bytes=pre.bytes, flops=pre.flops, time_s=pre.time_s),
        # Part of prefill's bytes, shown apart: K, V and the state are computed inside prefill's FLOPs.
        "write-cache": Stage(bytes=written, flops=0, time_s=written / bandwidth),
        "read-weights": Stage(bytes=weights, flops=0, time_s=weights / bandwidth),
        "read-cache": Stage(bytes=traffic, flops=0, time_s=traffic / bandwidth),
        "compute": Stage(bytes=0, flops=dec.flops, time_s=dec.compute_time_s),
        # The LM head that produced the logits is already in the weights and FLOPs above.
        "sample": Stage(bytes=logits, flops=0, time_s=logits / bandwidth),
    })


def compute_only_time_s(m: Model, hw: Hardware) -> float:
    """Seconds per token if generating were limited only by compute: 2 FLOPs per matmul weight at peak."""
    return 2 * model_size.matmul_params(m) / hw.peak_flops_per_s


def weights_only_time_s(m: Model, hw: Hardware) -> float:
    """Seconds per token at batch 1 if reading the matmul weights once were the only cost."""
    return model_size.matmul_weight_bytes(m) / hw.bandwidth_bytes_per_s
