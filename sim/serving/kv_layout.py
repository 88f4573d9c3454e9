"""Where many requests' KV cache lives in GPU memory: contiguous reservations, or paged blocks.

The allocator serves requests whose true lengths (sim/serving/traces.py) it does not know in advance, under a policy:
- "contiguous-max": reserve MAX_TOKENS = 2048 slots per request when it is admitted (Orca reserves max_tokens,
  Orca §4.2; FasterTransformer pre-allocates the max sequence length, Orca §6.1; vLLM's Orca(Max), vLLM §6.1);
- "contiguous-pow2": reserve the prompt plus the next power of two >= the true output length, so the output is
  over-reserved by less than 2x (vLLM's Orca(Pow2), vLLM §6.1: an output of 25 tokens gets 32 slots, plus its
  prompt), at most MAX_TOKENS in all (OUR CHOICE: an engine reserves no more than its max sequence length);
- "contiguous-oracle": reserve exactly the true total length (vLLM's Orca(Oracle));
- "paged": blocks of `block_size` tokens, allocated on demand as tokens are written, each request reaching its
  blocks through a block table (vLLM §4.1-4.3); default 16 tokens (vLLM §7.2).

A slot holds one token's K and V in every full-attention layer (cache.kv_bytes_per_token). An allocated slot is
- a token state: it holds a token's KV;
- reserved: it will hold one of this request's later tokens (vLLM §3.1's reservation);
- never used: it lies past the request's true length, so nothing is ever written there (vLLM §3.1's internal
  fragmentation). For "paged" only the request's last block can be partly empty, so fewer than block_size slots
  per sequence are ever reserved or never used: a tested invariant.

Conventions (each number depends on them):
- A request of Q = prefix + prompt tokens and O output tokens lives O steps (step 1 is its prefill). During step j
  it holds Q + j token states: its prompt and the j tokens generated so far, the newest one's slot taken as it is
  produced. That is one slot more than the attention context of sim/serving/scheduler.py (Q + j - 1), so that a request
  ends holding exactly its true length and "contiguous-oracle" never leaves a slot unused.
- Shares are averages over time, every step counted the same (OUR CHOICE: steps, not seconds): token_share =
  sum over every step of every request of its token states / sum of its allocated slots. Without preemption
  this does not depend on the schedule (each request's steps are the same in any order): it is what a snapshot
  of a busy server shows on average, long requests counting for as long as they run.
- max_requests = the requests that fit at once on average: floor((memory - weights - shared prefix) / (mean KV
  bytes of a running request + its recurrent state)), the mean taken over steps as above. It is exact at every
  moment for "contiguous-max", whose reservation never changes; for the others it is the mean number running when
  memory is the limit (what vLLM Fig. 13 counts as batched requests). A given moment can hold more or fewer, which
  is why a paged server preempts (vLLM §4.5).
- Memory = the whole checkpoint resident (sim/physics/memory.py) + KV + recurrent state; nothing for activations. No
  external fragmentation (OUR CHOICE): contiguous reservations are packed end to end, where a real allocator leaves
  holes (vLLM §3.1's third kind of waste, not modelled). The budget is the GPU's memory as given (lessons pass
  presets.achieved(hw, memory_fraction=0.9) for vLLM's share).
- A hybrid's recurrent state (cache.state_bytes_per_request, FP32 by default) is a fixed amount per sequence that
  does not grow with length. It is not paged and is counted apart: it is in max_requests, not in the shares. Its
  conv window (cache.conv_state_bytes_per_request, about 2% of it) is left out here. vLLM itself would give the
  anchor blocks of hybrid_state(m).vllm_block_size = 784 tokens; the allocator here lets any power of two from 1
  to 256 be tried, for dense and hybrid models alike (OUR CHOICE: one slider teaches the trade-off).
- Sharing, copy-on-write at block granularity (vLLM §4.4), only under "paged" (a contiguous reservation cannot map
  another request's memory, so each keeps its own copy):
  - `prefix_tokens`: a system prompt prepended to every request's prompt. Its floor(S / B) full blocks are stored
    once and mapped by every running sequence; its last S mod B tokens share a block with the request's own prompt,
    so each request keeps its own copy of them. A hybrid also keeps, once, the recurrent state at the end of those
    full blocks, without which a new request would have to recompute the prefix (hybrid_state).
  - `samples`: parallel samples of one request share its prompt's full blocks (vLLM §4.4); the last, partly filled
    prompt block is written by every sample, so copy-on-write gives each its own copy. Each sample generates the
    request's output length (OUR CHOICE) and holds its own recurrent state.
  - The saving (Fit.sharing_saving_bytes) is counted over the requests that would fit even unshared
    (Fit.unshared_requests), not over the more that sharing lets in, which could not hold their own copies at all:
    so it is at most the memory beside the checkpoint (OUR CHOICE).
  - With a prefix, a request's output stops at MAX_TOKENS in total (an engine stops at its max sequence length):
    output = min(output, MAX_TOKENS - prefix - prompt).
- The requests: the first DEFAULT_REQUESTS = 1,000 of traces.lengths(preset, n, seed), DEFAULT_SEED = 0 unless a
  seed is given (OUR CHOICE: a share moves by about one percentage point from seed to seed; a lesson prints it to
  the digit the spread over seeds allows, builder/seeds.py).

snapshot() places one moment concretely, for the memory map and the invariants: the requests in trace order, each at
a step drawn from a seeded generator, admitted first come first served while they fit in a given number of slots;
contiguous reservations packed end to end in order of admission; paged blocks handed out in the order they were
needed (the blocks of concurrent requests interleave) from a pool that has served a while, whose free blocks lie
anywhere (OUR CHOICE of order, _pool_order: scattered chunks of 16 slots). The numbers do not depend on where blocks
lie, only the picture does.

preemption() and hybrid_state() give the numbers behind swapping vs recomputing and behind a fixed-size state:
swap times over the GPU's host link (presets.Hardware.host_link_bytes_per_s, PCIe each way), the recompute on its
own and merged into a decode step (sim/physics/step.py), and vLLM's hybrid block and prefix-cache rules.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import random
from dataclasses import dataclass

from sim.physics import cache, model_size, roofline
from sim.physics.presets import Hardware, Model
from sim.physics.step import step_cost
from sim.physics.validate import check_choice, check_int, check_positive
from sim.serving import traces

POLICIES = ("contiguous-max", "contiguous-pow2", "contiguous-oracle", "paged")
CONTIGUOUS = POLICIES[:3]
MAX_TOKENS = traces.MAX_TOKENS  # the max sequence length of Orca's and vLLM's set-ups
BLOCK_SIZES = tuple(2**k for k in range(9))  # 1 ... 256
DEFAULT_BLOCK_SIZE = 16  # vLLM §7.2
MAX_PREFIX_TOKENS = 512  # our bound: room for vLLM §6.4's 341-token 5-shot prefix
MAX_SAMPLES = 8  # our bound
DEFAULT_REQUESTS = 1_000  # our choice, see the module docstring
DEFAULT_SEED = 0

# States of a slot, in the order a sequence's slots go: what the memory map colours.
TOKEN, SHARED, RESERVED, NEVER_USED, FREE = "token", "shared", "reserved", "never-used", "free"


@dataclass(frozen=True)
class Request:
    """One request as the allocator meets it: its lengths, which it does not know in advance."""

    prefix: int  # tokens of the shared system prompt in front of its prompt
    prompt: int  # its own prompt tokens
    output: int  # tokens each sample generates
    samples: int = 1  # parallel samples of the same prompt

    def __post_init__(self):
        check_int("prefix", self.prefix, 0, MAX_TOKENS - 1)
        check_int("prompt", self.prompt, 0 if self.prefix else 1, MAX_TOKENS - 1)
        check_int("output", self.output, 1, MAX_TOKENS - self.prefix - self.prompt)
        check_int("samples", self.samples, 1, MAX_SAMPLES)

    @property
    def prompt_total(self) -> int:
        return self.prefix + self.prompt

    @property
    def length(self) -> int:
        """True total length of each of its sequences: prefix + prompt + output."""
        return self.prefix + self.prompt + self.output


def reservation(policy: str, prompt: int, output: int) -> int:
    """Slots a contiguous policy reserves for a sequence of `prompt` tokens (its prefix included) that will
    generate `output` tokens: MAX_TOKENS; prompt + the next power of two >= output (vLLM §6.1's Orca(Pow2)),
    at most MAX_TOKENS; or prompt + output."""
    if policy == "contiguous-max":
        return MAX_TOKENS
    if policy == "contiguous-pow2":
        return _pow2_reservation(prompt, output)
    if policy == "contiguous-oracle":
        return prompt + output
    raise ValueError(f"policy must be one of {', '.join(CONTIGUOUS)} for a reservation; got {policy!r}")


def _pow2_reservation(prompt: int, output: int) -> int:
    return min(MAX_TOKENS, prompt + (1 << (output - 1).bit_length()))


def trace_requests(preset: str, prefix_tokens: int = 0, samples: int = 1, seed: int = DEFAULT_SEED
                   ) -> tuple[Request, ...]:
    """The DEFAULT_REQUESTS requests of a trace preset, with a shared prefix and parallel samples."""
    k = check_int("samples", samples, 1, MAX_SAMPLES)
    return tuple(Request(prefix_tokens, q - prefix_tokens, o, k)
                 for q, o in _trace_lengths(preset, prefix_tokens, seed))


@functools.lru_cache(maxsize=64)
def _trace_lengths(preset: str, prefix_tokens: int, seed: int = DEFAULT_SEED) -> tuple[tuple[int, int], ...]:
    """(prefix + prompt, output) of the default requests; the output stops at MAX_TOKENS in total."""
    check_choice("trace", preset, traces.PRESETS)
    s = check_int("prefix_tokens", prefix_tokens, 0, MAX_PREFIX_TOKENS)
    return tuple((s + p, min(o, MAX_TOKENS - s - p)) for p, o in _lengths(preset, seed))


@functools.lru_cache(maxsize=4)
def _lengths(preset: str, seed: int) -> tuple[tuple[int, int], ...]:
    return tuple(traces.lengths(preset, DEFAULT_REQUESTS, seed))


# --- over every step of every request's life -------------------------------------------------------------------

@dataclass(frozen=True)
class Usage:
    """A policy's KV slots summed over every step of every request (slot-steps), and what they average to."""

    policy: str
    block_size: int
    samples: int  # sequences per request
    requests: int
    steps: int  # sum of the requests' output lengths: request-steps
    token_slot_steps: int  # slots holding a token state, the shared prefix left out
    reserved_slot_steps: int
    never_used_slot_steps: int
    shared_prefix_slots: int  # the prefix's full blocks, held once for every request (paged with a prefix)
    sharing_saving_slot_steps: int  # slots each request maps instead of copying, before the prefix's one copy
    table_entry_steps: int  # block-table entries (logical blocks) of every sequence, summed over steps
    unshared_prefix_tokens: int  # prefix tokens in the block each request copies (prefix mod block size)

    @property
    def allocated_slot_steps(self) -> int:
        return self.token_slot_steps + self.reserved_slot_steps + self.never_used_slot_steps

    @property
    def token_share(self) -> float:
        """Share of the allocated KV slots that hold token states, shared prefix aside."""
        return self.token_slot_steps / self.allocated_slot_steps

    @property
    def reserved_share(self) -> float:
        return self.reserved_slot_steps / self.allocated_slot_steps

    @property
    def never_used_share(self) -> float:
        return self.never_used_slot_steps / self.allocated_slot_steps

    @property
    def slots_per_request(self) -> float:
        """Mean slots a running request holds (its shared prefix aside)."""
        return self.allocated_slot_steps / self.steps

    @property
    def reserved_slots_per_sequence(self) -> float:
        """Mean slots a sequence holds for tokens it has yet to write."""
        return self.reserved_slot_steps / (self.steps * self.samples)

    @property
    def never_used_slots_per_sequence(self) -> float:
        """Mean slots a sequence holds past its true length."""
        return self.never_used_slot_steps / (self.steps * self.samples)

    @property
    def empty_slots_per_sequence(self) -> float:
        """Mean slots a sequence holds that do not hold a token: reserved or never used."""
        return (self.reserved_slot_steps + self.never_used_slot_steps) / (self.steps * self.samples)

    @property
    def table_entries_per_sequence(self) -> float:
        """Mean block-table entries of a running sequence (paged), one per logical block."""
        return self.table_entry_steps / (self.steps * self.samples)


def usage(requests, policy: str, block_size: int = DEFAULT_BLOCK_SIZE, share: bool = True) -> Usage:
    """Every step of every request under `policy`, summed in closed form (no loop over steps).

    The requests share one prefix length and one number of samples (trace_requests builds them so)."""
    check_choice("policy", policy, POLICIES)
    b = check_block_size(block_size)
    requests = tuple(requests)
    if not requests:
        raise ValueError("requests must hold at least one request")
    s, n = requests[0].prefix, requests[0].samples
    if any(r.prefix != s or r.samples != n for r in requests):
        raise ValueError("requests must all have the same prefix and the same number of samples")
    return _usage(tuple((r.prompt_total, r.output) for r in requests), s, n, policy, b, share)


def _usage(lengths, s: int, n: int, policy: str, b: int, share: bool) -> Usage:
    """usage() over (prompt with its prefix, output) pairs; s is every request's prefix and n its samples."""
    steps = sum(o for _, o in lengths)
    if policy != "paged":
        # Per sequence, step j = 1 .. o holds q + j token states of a true length q + o, in a reservation that never
        # changes; so the never-used slots are the reservation minus the true length, and the rest is reserved.
        tokens = sum(o * q + o * (o + 1) // 2 for q, o in lengths)
        length_steps = sum(o * (q + o) for q, o in lengths)
        if policy == "contiguous-max":
            allocated = MAX_TOKENS * steps
        elif policy == "contiguous-oracle":
            allocated = length_steps
        else:
            allocated = sum(o * _pow2_reservation(q, o) for q, o in lengths)
        return Usage(policy, b, n, len(lengths), steps, n * tokens, n * (length_steps - tokens),
                     n * (allocated - length_steps), 0, 0, n * steps, 0)
    prefix_blocks = s // b if share else 0
    tokens = allocated = never = saving = entries = 0
    for q, o in lengths:
        length = q + o
        prompt_blocks = q // b if share else 0  # full prompt blocks, which every sample maps
        rest = q - prompt_blocks * b  # each sample's own blocks begin after them
        group = (prompt_blocks - prefix_blocks) * b * o  # those blocks, held all along (the prefix's apart)
        # A sample's own blocks summed over its steps: sum of ceil(w / b) for w = rest+1 .. rest+o, from
        # sum_{w=1..m} ceil(w / b) = b k (k + 1) / 2 + r (k + 1) with k, r = divmod(m, b), written out (hot loop).
        hi, hi_r = divmod(rest + o, b)
        lo, lo_r = divmod(rest, b)
        held = b * (hi * (hi + 1) - lo * (lo + 1)) // 2 + hi_r * (hi + 1) - lo_r * (lo + 1)
        tokens += group + n * (o * rest + o * (o + 1) // 2)
        allocated += group + n * b * held
        last = -(-length // b)
        # The last block's slots past the true length are never used, in every step while it is the last block.
        never += n * (last * b - length) * (length - max((last - 1) * b, q))
        saving += o * b * ((n - 1) * prompt_blocks + prefix_blocks)
        entries += n * (prompt_blocks * o + held)
    return Usage("paged", b, n, len(lengths), steps, tokens, allocated - tokens - never, never, prefix_blocks * b,
                 saving, entries, s - prefix_blocks * b)


@functools.lru_cache(maxsize=512)
def trace_usage(preset: str, policy: str, block_size: int = DEFAULT_BLOCK_SIZE, prefix_tokens: int = 0,
                samples: int = 1, share: bool = True, seed: int = DEFAULT_SEED) -> Usage:
    """usage() of a trace preset's default requests (cached: the widget asks again on every move)."""
    check_choice("policy", policy, POLICIES)
    b = check_block_size(block_size)
    if policy != "paged":  # a contiguous policy has no blocks and shares nothing: one cache entry for all
        b, share = DEFAULT_BLOCK_SIZE, True
    return _usage(_trace_lengths(preset, prefix_tokens, seed), prefix_tokens,
                  check_int("samples", samples, 1, MAX_SAMPLES), policy, b, share)


def check_block_size(block_size) -> int:
    b = check_int("block_size", block_size, 1, BLOCK_SIZES[-1])
    if b not in BLOCK_SIZES:
        raise ValueError(f"block_size must be a power of two from 1 to {BLOCK_SIZES[-1]}, got {b}")
    return b


# --- in a GPU's memory -----------------------------------------------------------------------------------------

def free_bytes(m: Model, hw: Hardware) -> int:
    """Memory left beside the whole resident checkpoint, whole bytes (0 if the weights do not fit)."""
    return max(0, int(hw.memory_bytes) - model_size.resident_weight_bytes(m))


def budget_slots(m: Model, hw: Hardware, sequences: int = 0, state_dtype: str = "fp32") -> int:
    """KV token slots left beside the checkpoint and the recurrent state of `sequences` sequences."""
    n = check_int("sequences", sequences, 0, roofline.MAX_BATCH)
    left = free_bytes(m, hw) - n * cache.state_bytes_per_request(m, state_dtype)
    return max(0, left) // cache.kv_bytes_per_token(m)


@dataclass(frozen=True)
class Fit:
    """A policy's usage in one GPU: how many requests fit at once, and what the memory holds then."""

    usage: Usage
    kv_bytes_per_token: int
    state_bytes_per_sequence: int
    free_bytes: int  # memory beside the checkpoint
    max_requests: int
    shared_prefix_bytes: int  # the prefix's shared blocks, once
    prefix_state_bytes: int  # a hybrid's recurrent state at the end of the shared prefix, once

    @property
    def sequences(self) -> int:
        return self.max_requests * self.usage.samples

    @property
    def running(self) -> int:
        """Requests the shares are taken at: max_requests, or one when none fits (the shares of a lone request)."""
        return max(1, self.max_requests)

    def _bytes(self, slot_steps: int) -> float:
        return self.running * slot_steps * self.kv_bytes_per_token / self.usage.steps

    @property
    def token_bytes(self) -> float:
        """KV memory holding token states, the shared prefix included."""
        return self._bytes(self.usage.token_slot_steps) + self.shared_prefix_bytes

    @property
    def reserved_bytes(self) -> float:
        return self._bytes(self.usage.reserved_slot_steps)

    @property
    def never_used_bytes(self) -> float:
        return self._bytes(self.usage.never_used_slot_steps)

    @property
    def kv_bytes(self) -> float:
        """KV memory in use: token states, reserved and never used."""
        return self.token_bytes + self.reserved_bytes + self.never_used_bytes

    @property
    def token_share(self) -> float:
        """Share of the KV memory in use that holds token states (vLLM Fig. 2's measure)."""
        return self.token_bytes / self.kv_bytes

    @property
    def reserved_share(self) -> float:
        return self.reserved_bytes / self.kv_bytes

    @property
    def never_used_share(self) -> float:
        return self.never_used_bytes / self.kv_bytes

    @property
    def kv_bytes_per_request(self) -> float:
        """Mean KV bytes a running request holds, its share of a shared prefix aside."""
        return self.usage.slots_per_request * self.kv_bytes_per_token

    @property
    def bytes_per_request(self) -> float:
        """Mean KV bytes of a running request plus the recurrent state of each of its sequences."""
        return self.kv_bytes_per_request + self.usage.samples * self.state_bytes_per_sequence

    @property
    def state_bytes(self) -> float:
        """Recurrent state of every running sequence, plus the prefix's one copy."""
        return self.sequences * self.state_bytes_per_sequence + self.prefix_state_bytes

    @property
    def used_bytes(self) -> float:
        """Memory beside the checkpoint in use with max_requests running: KV and recurrent state."""
        if self.max_requests == 0:
            return 0.0
        return self.kv_bytes + self.state_bytes

    @property
    def left_bytes(self) -> float:
        return self.free_bytes - self.used_bytes

    @property
    def unshared_requests(self) -> int:
        """Requests that would fit at once if every sequence kept its own copy of what it shares (no shared prefix
        blocks, no prefix state): fit(..., share=False).max_requests, computed from this usage. Without sharing,
        each request holds its allocated slots plus the slots it maps instead of copying."""
        u = self.usage
        if not u.sharing_saving_slot_steps:
            return self.max_requests
        per_request_x_steps = ((u.allocated_slot_steps + u.sharing_saving_slot_steps) * self.kv_bytes_per_token
                               + u.steps * u.samples * self.state_bytes_per_sequence)
        return self.free_bytes * u.steps // per_request_x_steps if self.free_bytes > 0 else 0

    @property
    def sharing_saving_bytes(self) -> float:
        """KV memory sharing saves, counted over the unshared_requests that fit even unshared: the blocks they map
        instead of copying, less the one copy of the prefix's shared blocks. Those requests' unshared copies fit in
        the free memory, so the saving never exceeds free_bytes (counted over max_requests, it could: the extra
        requests sharing lets in would not fit with their own copies at all)."""
        n = self.unshared_requests
        if n == 0 or self.usage.policy != "paged":
            return 0.0
        copies = n * self.usage.sharing_saving_slot_steps / self.usage.steps
        return (copies - self.usage.shared_prefix_slots) * self.kv_bytes_per_token


def fit_usage(u: Usage, m: Model, hw: Hardware, state_dtype: str = "fp32") -> Fit:
    """How many requests of usage `u` fit at once in hw's memory beside m's checkpoint (see the module docstring)."""
    kv = cache.kv_bytes_per_token(m)
    state = cache.state_bytes_per_request(m, state_dtype)
    free = free_bytes(m, hw)
    shared = u.shared_prefix_slots * kv
    prefix_state = state if (u.shared_prefix_slots and m.is_hybrid) else 0
    room = free - shared - prefix_state
    # Whole numbers throughout: floor(room / (allocated x kv / steps + samples x state)), without float rounding.
    per_request_x_steps = u.allocated_slot_steps * kv + u.steps * u.samples * state
    n = room * u.steps // per_request_x_steps if room > 0 else 0
    return Fit(u, kv, state, free, n, shared, prefix_state)


def fit(m: Model, hw: Hardware, trace: str = "orca", policy: str = "paged", block_size: int = DEFAULT_BLOCK_SIZE,
        prefix_tokens: int = 0, samples: int = 1, share: bool = True, state_dtype: str = "fp32",
        seed: int = DEFAULT_SEED) -> Fit:
    """A trace preset's default requests under `policy` in hw's memory beside m's checkpoint.

    E.g. fit(anchor, h100, "orca", "contiguous-max").token_share, .max_requests."""
    return fit_usage(trace_usage(trace, policy, block_size, prefix_tokens, samples, share, seed), m, hw, state_dtype)


@dataclass(frozen=True)
class BlockSizeRow:
    """What one block size gives on a trace: waste against the size of the block table and of what is shared."""

    block_size: int
    token_share: float
    empty_slots_per_sequence: float  # reserved or never used, below block_size
    table_entries_per_sequence: float
    unshared_prefix_tokens: int  # prefix tokens each request copies instead of sharing
    max_requests: int


def block_size_tradeoff(m: Model, hw: Hardware, trace: str = "orca", prefix_tokens: int = 0, samples: int = 1,
                        sizes=BLOCK_SIZES, state_dtype: str = "fp32", seed: int = DEFAULT_SEED
                        ) -> tuple[BlockSizeRow, ...]:
    """Paged allocation of a trace at each block size: smaller blocks waste less, bigger blocks keep smaller tables."""
    rows = []
    for b in sizes:
        f = fit(m, hw, trace, "paged", b, prefix_tokens, samples, state_dtype=state_dtype, seed=seed)
        u = f.usage
        rows.append(BlockSizeRow(b, f.token_share, u.empty_slots_per_sequence, u.table_entries_per_sequence,
                                 u.unshared_prefix_tokens, f.max_requests))
    return tuple(rows)


# --- preemption and a hybrid's fixed-size state ----------------------------------------------------------------

# The decode step a recompute is merged into: the lesson's scenario elsewhere (16 requests of 300 tokens of
# context; OUR CHOICE, a busy step at sim/serving/scheduler.py's default max batch).
MERGE_DECODERS, MERGE_CONTEXT = 16, 300


@dataclass(frozen=True)
class Preemption:
    """Evicting one sequence of `tokens` tokens when memory runs out, and bringing it back (vLLM §4.5).

    Swap copies its blocks and state to host memory and back over the host link, each way at the link's speed
    per direction (presets.Hardware.host_link_bytes_per_s). Recompute drops them and prefills its tokens again.
    On its own that prefill is a step of its own (`recompute`); merged into a decode step, as a continuous
    batcher runs a joiner, it costs only what it adds to that step (physics.step.step_cost: the step with the
    sequence joining, minus the same step without it). OUR CHOICE: both ways are costed in time: a swap as the
    time its copies take on the link, a recompute as GPU time."""

    tokens: int
    kv_bytes: float  # its blocks (every slot of them moves)
    state_bytes: int  # its recurrent state
    recompute: roofline.Estimate  # a prefill of its tokens on its own, which rebuilds KV and state alike
    link_bytes_per_s: float | None  # the host link, each way; None when the preset has no sourced figure
    decoders: int  # the decode step its recompute is merged into: requests decoding
    context: int  # and the context each of them has cached
    decode_step_s: float  # that step without it
    merged_step_s: float  # that step with its recompute merged in

    @property
    def swap_bytes(self) -> float:
        """Bytes to copy to host memory, and the same bytes back: its blocks and its state."""
        return self.kv_bytes + self.state_bytes

    @property
    def recompute_s(self) -> float:
        """The recompute as a step of its own."""
        return self.recompute.time_s

    @property
    def recompute_flops(self) -> float:
        return self.recompute.flops

    @property
    def marginal_recompute_s(self) -> float:
        """What the recompute adds to the decode step it is merged into."""
        return self.merged_step_s - self.decode_step_s

    def swap_s(self, link_bytes_per_s: float) -> float:
        """One direction of the swap over a host link of the given speed, per direction."""
        return self.swap_bytes / check_positive("link_bytes_per_s", link_bytes_per_s)

    @property
    def swap_out_s(self) -> float:
        """Copying it to host memory over this GPU's host link."""
        return self.swap_s(self._link())

    @property
    def swap_in_s(self) -> float:
        """Copying it back: the same bytes over the other direction of the link, as fast."""
        return self.swap_s(self._link())

    @property
    def swap_round_trip_s(self) -> float:
        return self.swap_out_s + self.swap_in_s

    @property
    def break_even_link_bytes_per_s(self) -> float:
        """The link speed, each way, at which copying out and back takes as long as recomputing on its own:
        a faster link favours swap, by this bound."""
        return 2 * self.swap_bytes / self.recompute_s

    @property
    def merged_break_even_link_bytes_per_s(self) -> float:
        """The link speed, each way, at which copying out and back takes as long as the recompute adds to a
        decode step it is merged into."""
        return 2 * self.swap_bytes / self.marginal_recompute_s

    def _link(self) -> float:
        if self.link_bytes_per_s is None:
            raise ValueError("this GPU preset has no host-link bandwidth with a checked source")
        return self.link_bytes_per_s


def preemption(m: Model, hw: Hardware, tokens: int, block_size: int = DEFAULT_BLOCK_SIZE,
               state_dtype: str = "fp32", decoders: int = MERGE_DECODERS, context: int = MERGE_CONTEXT) -> Preemption:
    """Swap vs recompute for one sequence holding `tokens` tokens in paged blocks of block_size, its recompute
    merged into a decode step of `decoders` requests with `context` tokens cached each."""
    t = check_int("tokens", tokens, 1, roofline.MAX_TOKENS)
    b = check_block_size(block_size)
    n = check_int("decoders", decoders, 1, roofline.MAX_BATCH)
    c = check_int("context", context, 1, roofline.MAX_TOKENS)
    slots = -(-t // b) * b
    step = step_cost(m, hw, state_dtype)
    alone = step.time_s(0, 0.0, n, n * c, 0)
    merged = step.time_s(t, step.prefill_attention_s(t), n, n * c, 1)
    return Preemption(t, slots * cache.kv_bytes_per_token(m), cache.state_bytes_per_request(m, state_dtype),
                      roofline.prefill(m, hw, tokens=t, state_dtype=state_dtype), hw.host_link_bytes_per_s, n, c,
                      alone, merged)


# vLLM's attention kernels take blocks in multiples of 16 tokens: the alignment its hybrid manager rounds the
# block up to (HybridAttentionMambaModelConfig, vllm/model_executor/models/config.py; 32 for head size 256 on
# Blackwell with FlashInfer, which this simulator does not model).
VLLM_BLOCK_ALIGNMENT = 16


@dataclass(frozen=True)
class HybridState:
    """What a fixed-size recurrent state means for paging and prefix caching (numbers; the lesson has the words).

    vLLM's hybrid KV cache manager keeps every layer's cache in one pool of equal pages, so it raises the attention
    block until one attention layer's page holds one GDN layer's state, conv window included, rounded up to
    VLLM_BLOCK_ALIGNMENT tokens, and pads the state's page to it (HybridAttentionMambaModelConfig in
    vllm/model_executor/models/config.py: block = 16 x ceil(state page / (16 x one token's KV page))). With prefix
    caching on, a hybrid's default mamba_cache_mode is "align" (vllm/config/cache.py): a state is kept only at a
    block boundary, for each request the last one before its prompt ends (vLLM issue #45238), and only full blocks
    are cached, so a prefix shorter than one block is never reused (issue #40696; #36010: 784-token blocks on
    Qwen3.6-27B, prompts of ~370 tokens, no gain)."""

    state_bytes: int  # S per sequence, the same at 1 token and at MAX_TOKENS
    conv_bytes: int  # the conv window per sequence (cache.conv_state_bytes_per_request), left out of state_bytes
    kv_bytes_per_token: int
    layer_state_bytes: int  # one Gated DeltaNet layer's S
    layer_conv_bytes: int  # one Gated DeltaNet layer's conv window
    layer_kv_bytes_per_token: int  # one full-attention layer's K and V of one token
    block_size: int  # the block prefix caching works in (vllm_block_size unless given)
    prefix_tokens: int

    @property
    def state_tokens(self) -> float:
        """Tokens of KV that weigh as much as one state: the length past which KV outweighs the state."""
        return self.state_bytes / self.kv_bytes_per_token

    @property
    def conv_share(self) -> float:
        """The conv window's share of all the state a sequence keeps (S and conv window): what is left out."""
        total = self.state_bytes + self.conv_bytes
        return self.conv_bytes / total if total else 0.0

    @property
    def matched_block_size(self) -> int:
        """Smallest block whose one-layer KV page holds one layer's S, without vLLM's alignment and conv window."""
        return -(-self.layer_state_bytes // self.layer_kv_bytes_per_token)

    @property
    def layer_page_bytes(self) -> int:
        """One GDN layer's page in vLLM: its S and its conv window (MambaSpec.page_size_bytes)."""
        return self.layer_state_bytes + self.layer_conv_bytes

    @property
    def vllm_block_size(self) -> int:
        """The attention block vLLM's hybrid manager picks: the page rounded up to VLLM_BLOCK_ALIGNMENT tokens of
        one layer's KV (0 for a dense model, which keeps vLLM's default of 16)."""
        if not self.layer_page_bytes:
            return 0
        a = VLLM_BLOCK_ALIGNMENT
        return a * -(-self.layer_page_bytes // (a * self.layer_kv_bytes_per_token))

    @property
    def page_padding_share(self) -> float:
        """How much vLLM pads a state's page to make it one attention page: (block x KV page - page) / page."""
        if not self.layer_page_bytes:
            return 0.0
        return (self.vllm_block_size * self.layer_kv_bytes_per_token - self.layer_page_bytes) / self.layer_page_bytes

    @property
    def cached_prefix_tokens(self) -> int:
        """Prefix tokens a later request can reuse at best: the prefix's full blocks (a state is kept only at a
        block boundary, and only full blocks are cached)."""
        return self.prefix_tokens // self.block_size * self.block_size

    @property
    def cached_prefix_kv_bytes(self) -> int:
        return self.cached_prefix_tokens * self.kv_bytes_per_token

    @property
    def boundary_states(self) -> int:
        """Recurrent states a reusable prefix needs: one, at the end of its full blocks (KV up to any shorter
        boundary is a part of the KV; a state is valid only at the token it was taken at)."""
        return 1 if self.cached_prefix_tokens and self.state_bytes else 0

    @property
    def every_boundary_states(self) -> int:
        """States to keep so that a request could match the prefix at any of its block boundaries."""
        return self.prefix_tokens // self.block_size if self.state_bytes else 0

    @property
    def recompute_tokens(self) -> int:
        """Prefix tokens a new request still computes: those past the last full block."""
        return self.prefix_tokens - self.cached_prefix_tokens

    def reused_tokens(self, first_own_tokens: int) -> int:
        """Prefix tokens a later request reuses when the request that first cached the prefix had
        `first_own_tokens` tokens of its own after it. A hybrid in vLLM's "align" mode keeps that request's state
        only at the last block boundary before its prompt ended (issue #45238): inside the prefix, the prefix's
        full blocks are reused; past it, in tokens only that request had, the state matches nothing and nothing
        is reused. A dense model reuses the full blocks whatever came after them."""
        if not self.state_bytes:
            check_int("first_own_tokens", first_own_tokens, 0, roofline.MAX_TOKENS)
            return self.cached_prefix_tokens
        checkpoint = self.checkpoint(first_own_tokens)
        return checkpoint if checkpoint <= self.prefix_tokens else 0

    def checkpoint(self, first_own_tokens: int) -> int:
        """The token at which vLLM's "align" mode keeps the state of a request of prefix_tokens + first_own_tokens
        prompt tokens: the last block boundary before its prompt ends (0: none)."""
        own = check_int("first_own_tokens", first_own_tokens, 0, roofline.MAX_TOKENS)
        return (self.prefix_tokens + own) // self.block_size * self.block_size


def hybrid_state(m: Model, block_size: int | None = None, prefix_tokens: int = 0,
                 state_dtype: str = "fp32") -> HybridState:
    """The numbers of m's recurrent state beside its KV (all zero state for a dense model). block_size is the block
    prefix caching works in: by default vLLM's hybrid block for a hybrid, DEFAULT_BLOCK_SIZE for a dense model."""
    s = check_int("prefix_tokens", prefix_tokens, 0, roofline.MAX_TOKENS)
    state = cache.state_bytes_per_request(m, state_dtype)
    conv = cache.conv_state_bytes_per_request(m)
    layers = m.linear_attention_layers
    kv = cache.kv_bytes_per_token(m)
    per_layer = (state // layers, conv // layers) if layers else (0, 0)
    h = HybridState(state, conv, kv, *per_layer, kv // m.full_attention_layers, DEFAULT_BLOCK_SIZE, s)
    if block_size is None:
        b = h.vllm_block_size or DEFAULT_BLOCK_SIZE
    else:
        b = check_int("block_size", block_size, 1, roofline.MAX_TOKENS)
    return dataclasses.replace(h, block_size=b)


# --- one moment, placed slot by slot ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Placed:
    """One sequence at the snapshot: where its KV is."""

    request: int  # index of its request in the trace
    sample: int
    step: int  # 1 .. output: how far it is
    written: int  # token states it holds: prefix + prompt + step
    length: int  # its true total length
    start: int  # contiguous: first slot of its reservation; paged: -1
    reserved: int  # contiguous: slots of its reservation; paged: 0
    blocks: tuple[int, ...]  # paged: the physical block of each of its logical blocks, in order (its block table)
    # paged: the token at which it parts from the sequences it shares blocks with (the shared prefix, or the prompt
    # its request's samples share); 0 when it shares nothing. Its first parted // block_size blocks are mapped, not
    # copied; the parted % block_size tokens before it in the next block are its own copy (copy-on-write).
    parted: int = 0


@dataclass(frozen=True)
class Snapshot:
    """A moment of a busy server in `capacity` KV slots: who is where, and every slot's state, as runs."""

    policy: str
    block_size: int
    capacity: int
    requests: int  # requests admitted (first come first served, while they fit)
    sequences: tuple[Placed, ...]
    refcounts: tuple[int, ...]  # paged: sequences mapping each physical block (0 for a free one)
    runs: tuple[tuple[int, int, str], ...]  # (first slot, slots, state) in slot order, covering 0 .. capacity

    def slots(self, state: str) -> int:
        return sum(n for _, n, s in self.runs if s == state)

    def sequence(self, request: int, sample: int = 0) -> Placed | None:
        """The sequence of `request` (its index in the trace) and `sample` at the snapshot, if it was admitted."""
        return next((p for p in self.sequences if (p.request, p.sample) == (request, sample)), None)

    @property
    def used(self) -> int:
        return self.capacity - self.slots(FREE)


def snapshot(requests, policy: str, block_size: int = DEFAULT_BLOCK_SIZE, capacity: int = 4 * MAX_TOKENS,
             seed: int = DEFAULT_SEED, share: bool = True) -> Snapshot:
    """One moment: requests in order, each at a seeded step of its output, admitted while they fit in `capacity`."""
    check_choice("policy", policy, POLICIES)
    b = check_block_size(block_size)
    cap = check_int("capacity", capacity, 0, 10**8)
    rng = random.Random(f"kv_layout.snapshot:{seed}")  # the same moment for every policy
    admitted, used = [], 0
    for i, r in enumerate(requests):
        step = rng.randint(1, r.output)
        need = _need(r, step, policy, b, share, first=not admitted)
        if used + need > cap:
            break
        used += need
        admitted.append((i, r, step))
    if policy == "paged":
        return _paged(admitted, b, cap, share)
    return _contiguous(admitted, policy, b, cap)


def _need(r: Request, step: int, policy: str, b: int, share: bool, first: bool) -> int:
    """Slots a request at `step` adds to the pool."""
    written = r.prompt_total + step
    if policy != "paged":
        return r.samples * reservation(policy, r.prompt_total, r.output)
    if not share:
        return r.samples * -(-written // b) * b
    prefix_blocks = r.prefix // b
    prompt_blocks = r.prompt_total // b
    own = -(-(written - prompt_blocks * b) // b)
    return ((prefix_blocks if first else 0) + prompt_blocks - prefix_blocks + r.samples * own) * b


def _contiguous(admitted, policy: str, b: int, cap: int) -> Snapshot:
    placed, runs, at = [], [], 0
    for i, r, step in sorted(admitted, key=lambda a: (-a[2], a[0])):  # oldest first: the order they arrived in
        hold = reservation(policy, r.prompt_total, r.output)
        written = r.prompt_total + step
        for k in range(r.samples):
            placed.append(Placed(i, k, step, written, r.length, at, hold, ()))
            _extend(runs, at, written, TOKEN)
            _extend(runs, at + written, r.length - written, RESERVED)
            _extend(runs, at + r.length, hold - r.length, NEVER_USED)
            at += hold
    _extend(runs, at, cap - at, FREE)
    return Snapshot(policy, b, cap, len(admitted), tuple(sorted(placed, key=lambda p: (p.request, p.sample))), (),
                    tuple(runs))


@functools.lru_cache(maxsize=128)
def trace_snapshot(preset: str, policy: str, block_size: int = DEFAULT_BLOCK_SIZE, prefix_tokens: int = 0,
                   samples: int = 1, capacity: int = 4 * MAX_TOKENS) -> Snapshot:
    """snapshot() of a trace preset's default requests (cached; it builds only the requests it admits)."""
    k = check_int("samples", samples, 1, MAX_SAMPLES)
    requests = (Request(prefix_tokens, q - prefix_tokens, o, k) for q, o in _trace_lengths(preset, prefix_tokens))
    return snapshot(requests, policy, block_size, capacity)


def _paged(admitted, b: int, cap: int, share: bool) -> Snapshot:
    # Every block's allocation time: a request at step j was admitted j steps ago and writes position p in its step
    # max(1, p + 1 - prompt) (its whole prompt in step 1). Blocks are numbered in the order they were needed, ties
    # broken by request, then the blocks its samples map together, then each sample's own, then logical block. That
    # order is one integer key, and each sequence's keys are arithmetic runs, so that the thousands of blocks of a
    # small block size are generated, sorted and looked up by C loops (range, sort, dict, map), not Python ones.
    samples = admitted[0][1].samples if admitted else 1
    prefix_blocks = admitted[0][1].prefix // b if (admitted and share) else 0
    oldest = min((-step for _, _, step in admitted), default=0)
    owners = 1 + len(admitted) * (samples + 1)  # the prefix, then per request its shared blocks and each sample
    width = MAX_TOKENS // b + 2  # more than the logical blocks of any sequence
    stride = b * owners * width + 1  # key distance between blocks needed b steps apart

    def key(time: int, owner: int, k: int) -> int:
        return ((time - oldest) * owners + owner) * width + k

    prefix = range(key(oldest + 1, 0, 0), key(oldest + 1, 0, prefix_blocks))
    keys = [*prefix]
    plan = []  # per request: its index, record, step, keys of its shared prompt blocks, keys of each sample's own
    for a, (i, r, step) in enumerate(admitted):
        q, written = r.prompt_total, r.prompt_total + step
        start = 1 - step  # the time of its prefill step
        group_owner = 1 + a * (samples + 1)
        prompt_blocks = q // b if share else 0
        group = range(key(start, group_owner, prefix_blocks), key(start, group_owner, prompt_blocks))
        last = -(-written // b)
        burst = min(last, q // b + 1)  # own blocks its prefill allocates (up to the one holding its first output)
        own = []
        for s in range(samples):
            owner = group_owner + 1 + s
            first = key(start + burst * b - q, owner, burst)  # block k >= burst is needed in step k*b + 1 - q
            own.append((range(key(start, owner, prompt_blocks), key(start, owner, burst)),
                        range(first, first + (last - burst) * stride, stride)))
            keys.extend(own[-1][0])
            keys.extend(own[-1][1])
        keys.extend(group)
        plan.append((i, r, step, group, own))
    keys.sort()
    blocks, used = cap // b, len(keys)
    order = _pool_order(blocks, b)
    physical = dict(zip(keys, order)).__getitem__
    free = set(order[used:])
    refcounts = [1] * blocks
    for n in free:
        refcounts[n] = 0
    prefix_ids = list(map(physical, prefix))
    placed, mapped = [], []  # mapped: blocks more than one sequence maps
    last_blocks = {}  # each sequence's last block -> (tokens, reserved) in it
    if not share:
        parted = 0
    elif samples > 1:
        parted = None  # at each request's own prompt
    else:
        parted = admitted[0][1].prefix if len(admitted) > 1 else 0
    for i, r, step, group, own in plan:
        written = r.prompt_total + step
        shared = (*prefix_ids, *map(physical, group))
        for s, (prefill, decode) in enumerate(own):
            table = (*shared, *map(physical, prefill), *map(physical, decode))
            placed.append(Placed(i, s, step, written, r.length, -1, 0, table,
                                 r.prompt_total if parted is None else parted))
            k = len(table) - 1
            tokens = written - k * b
            last_blocks[table[k]] = (tokens, max(0, min(b, r.length - k * b) - tokens))
        if samples > 1:
            mapped.extend(shared[len(prefix_ids):])
            for n in shared[len(prefix_ids):]:
                refcounts[n] = samples
    if len(placed) > 1:
        mapped.extend(prefix_ids)
        for n in prefix_ids:
            refcounts[n] = len(placed)
    # Every block is full of token states but the free ones, the shared ones and each sequence's last one.
    runs, at = [], 0
    for n in sorted({*free, *last_blocks, *mapped}):
        _extend(runs, at, n * b - at, TOKEN)
        if refcounts[n] == 0:
            _extend(runs, n * b, b, FREE)
        elif refcounts[n] > 1:
            _extend(runs, n * b, b, SHARED)
        else:
            tokens, reserved = last_blocks[n]
            _extend(runs, n * b, tokens, TOKEN)
            _extend(runs, n * b + tokens, reserved, RESERVED)
            _extend(runs, n * b + tokens + reserved, b - tokens - reserved, NEVER_USED)
        at = (n + 1) * b
    _extend(runs, at, blocks * b - at, TOKEN)
    _extend(runs, blocks * b, cap - blocks * b, FREE)  # slots too few to make a block
    return Snapshot("paged", b, cap, len(admitted), tuple(placed), tuple(refcounts), tuple(runs))


@dataclass(frozen=True)
class TableEntry:
    """One entry of a paged sequence's block table at the snapshot, and what its physical block holds."""

    logical: int
    physical: int
    refcount: int  # sequences mapping the physical block
    tokens: int  # token states in it, 1 .. block_size
    copied: int  # tokens in it that were written before the sequence parted from those it shares with: its own
    # copy of them (copy-on-write), 0 for a block it maps or one that holds only its own tokens


def block_table(snap: Snapshot, request: int = 0, sample: int = 0) -> tuple[TableEntry, ...]:
    """The block table of one paged sequence at the snapshot (empty when it was not admitted or is contiguous)."""
    p = snap.sequence(request, sample)
    if p is None or snap.policy != "paged":
        return ()
    b = snap.block_size
    mapped, rest = divmod(p.parted, b)
    return tuple(TableEntry(k, n, snap.refcounts[n], min(b, p.written - k * b), rest if k == mapped else 0)
                 for k, n in enumerate(p.blocks))


POOL_CHUNK_SLOTS = 16  # a pool that has served a while hands out free blocks scattered, in runs of this many slots


def _pool_order(blocks: int, b: int) -> list[int]:
    """The physical blocks in the order a pool that has served a while hands them out (OUR CHOICE, a stand-in for
    the order in which earlier requests freed them): chunks of POOL_CHUNK_SLOTS slots (one block when blocks are
    bigger), chunk k at position k x spread mod chunks, spread coprime to the number of chunks and near 0.618 of it
    (the golden ratio's: consecutive chunks land far apart, and evenly); blocks past the last whole chunk at the end."""
    per = max(1, POOL_CHUNK_SLOTS // b)
    chunks = blocks // per
    spread = max(1, chunks * 618_034 // 1_000_000)
    while math.gcd(spread, chunks) > 1:
        spread += 1
    firsts = (k * spread % chunks * per for k in range(chunks))
    return [*itertools.chain.from_iterable(range(n, n + per) for n in firsts), *range(chunks * per, blocks)]


def _extend(runs: list, start: int, n: int, state: str) -> None:
    """Append n slots of `state` from `start`, merged into the last run when it has the same state."""
    if n <= 0:
        return
    if runs and runs[-1][2] == state:
        first, count, _ = runs[-1]
        runs[-1] = (first, count + n, state)
    else:
        runs.append((start, n, state))
