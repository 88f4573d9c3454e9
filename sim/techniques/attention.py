"""Less KV per token: what MHA, GQA, MQA, MLA and linear-attention hybrids keep for every token a request has seen.

KV elements per token follow DeepSeek-V2's Table 1 (§2.1.4), with L layers, n_h query heads of d_h, n_g K/V heads:
- MHA: 2 n_h d_h L (every query head has its own K and V head);
- GQA: 2 n_g d_h L (each group of n_h / n_g query heads shares one K and one V head; n_g = n_h is MHA, 1 is MQA);
- MQA: 2 d_h L (one K and one V head for all);
- MLA: (d_c + d_h^R) L (one latent of d_c, from which K and V are projected back up, and a decoupled RoPE key of
  d_h^R, shared by every head);
- a hybrid keeps GQA's KV in its full-attention layers only, one in every `attention_every`, and a fixed-size
  recurrent state per request in the others: state_heads x state_key_dim x state_value_dim per linear layer (Gated
  DeltaNet's S), in FP32 as the anchor's config writes it (linear_state_dtype float32; for Qwen3-Next, whose card
  gives no dtype, the same is assumed). Its short causal-conv window is left out, as sim/physics/cache.py does.
Elements are stored in BF16 (2 bytes), as every lesson keeps the KV.

Attention at decode, per cached token and full-attention layer (the roofline's "attention" operation): each query
head does a dot product with a key and a weighted sum of values, 4 n_h d_h FLOPs, reading the layer's KV elements
of that token. MLA is counted with its up-projections absorbed into the query and output projections (DeepSeek-V2
§2.1.2), so each head works on the latent directly: 2 n_h (2 d_c + d_h^R) FLOPs per cached token, far more
arithmetic per byte read than GQA. A hybrid's state is read and written back once per step, as roofline.decode counts
it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache

from sim.physics import presets, roofline
from sim.physics.presets import Hardware, Model
from sim.physics.validate import check_choice, check_int

MECHANISMS = ("mha", "gqa", "mqa", "mla", "hybrid")
KV_ELEMENT_BYTES = 2  # BF16
STATE_ELEMENT_BYTES = 4  # FP32
MAX_HEADS, MAX_LATENT, MAX_EVERY = 256, 4096, 16


@dataclass(frozen=True)
class Design:
    """How a model's attention keeps what each token leaves behind."""

    key: str
    name: str
    source: str
    mechanism: str
    layers: int
    q_heads: int
    head_dim: int
    kv_heads: int = 0  # GQA's groups (and a hybrid's attention layers'); MHA has q_heads, MQA 1
    latent_dim: int = 0  # MLA's d_c
    rope_dim: int = 0  # MLA's d_h^R
    attention_every: int = 1  # a hybrid: one full-attention layer in every this many
    state_heads: int = 0  # a hybrid's linear layers: the recurrent state's heads and their key and value widths
    state_key_dim: int = 0
    state_value_dim: int = 0

    @property
    def kv_heads_per_layer(self) -> int:
        return {"mha": self.q_heads, "mqa": 1}.get(self.mechanism, self.kv_heads)

    @property
    def kv_layers(self) -> int:
        """Layers that keep KV: all of them, but a hybrid only its full-attention ones."""
        return self.layers // self.attention_every if self.mechanism == "hybrid" else self.layers

    @property
    def linear_layers(self) -> int:
        return self.layers - self.kv_layers


def design_of_model(m: Model) -> Design:
    """A model preset's attention as a Design: MLA if it caches a latent, a hybrid if it has linear-attention layers,
    else GQA (MHA when its K/V heads equal its query heads)."""
    a = m.attention
    common = dict(key=m.key, name=m.name, source=m.source, layers=m.layers, q_heads=a.q_heads, head_dim=a.head_dim,
                  kv_heads=a.kv_heads)
    if a.is_latent:
        return Design(mechanism="mla", latent_dim=a.kv_latent, rope_dim=a.rope_dim, **common)
    if m.is_hybrid:
        g = m.gated_deltanet
        return Design(mechanism="hybrid", attention_every=m.full_attention_interval, state_heads=g.value_heads,
                      state_key_dim=g.key_head_dim, state_value_dim=g.value_head_dim, **common)
    return Design(mechanism="mha" if a.kv_heads == a.q_heads else "gqa", **common)


@cache
def designs() -> dict[str, Design]:
    """The designs lessons compare: MHA, GQA-8, MLA and two hybrids (presets/attention.json and models.json)."""
    table = {key: Design(key=key, **entry) for key, entry in presets.load_json("attention.json").items()}
    return {
        "opt-13b": table["opt-13b"],
        "qwen3-32b": design_of_model(presets.model("qwen3-32b")),
        "deepseek-v3": table["deepseek-v3"],
        "qwen3-next-80b": table["qwen3-next-80b"],
        "qwen3.8-27b": design_of_model(presets.model("qwen3.8-27b")),
    }


def design(key: str) -> Design:
    return designs()[check_choice("design", key, designs())]


def with_mechanism(d: Design, mechanism: str, kv_heads: int | None = None, latent_dim: int | None = None,
                   rope_dim: int | None = None, attention_every: int | None = None) -> Design:
    """The same heads and layers keeping KV another way (a parameter left None keeps the design's). A design with no
    recurrent state of its own made a hybrid gets one head_dim x head_dim state per query head in its linear layers
    (OUR CHOICE, shaped as Gated DeltaNet's S)."""
    check_choice("mechanism", mechanism, MECHANISMS)
    kv = d.kv_heads_per_layer if kv_heads is None else check_int("kv_heads", kv_heads, 1, d.q_heads)
    changed = dict(mechanism=mechanism, kv_heads=kv)
    if mechanism == "hybrid" and not d.state_heads:
        changed.update(state_heads=d.q_heads, state_key_dim=d.head_dim, state_value_dim=d.head_dim,
                       attention_every=d.attention_every if d.attention_every > 1 else 4)
    if latent_dim is not None:
        changed["latent_dim"] = check_int("latent_dim", latent_dim, 1, MAX_LATENT)
    if rope_dim is not None:
        changed["rope_dim"] = check_int("rope_dim", rope_dim, 0, MAX_LATENT)
    if attention_every is not None:
        changed["attention_every"] = check_int("attention_every", attention_every, 1, MAX_EVERY)
    return replace(d, **changed)


def kv_elements_per_token_per_layer(d: Design) -> int:
    """DeepSeek-V2's Table 1, for one layer that keeps KV."""
    if d.mechanism == "mla":
        return d.latent_dim + d.rope_dim
    return 2 * d.kv_heads_per_layer * d.head_dim


def kv_elements_per_token(d: Design) -> int:
    return kv_elements_per_token_per_layer(d) * d.kv_layers


def kv_bytes_per_token(d: Design) -> int:
    return kv_elements_per_token(d) * KV_ELEMENT_BYTES


def mha_bytes_per_token(d: Design) -> int:
    """The same heads and layers with a K and a V head per query head in every layer: what the design saves against."""
    return 2 * d.q_heads * d.head_dim * d.layers * KV_ELEMENT_BYTES


def state_bytes_per_request(d: Design) -> int:
    """A hybrid's recurrent state, the same at any context; 0 for every other mechanism."""
    if d.mechanism != "hybrid":
        return 0
    return d.linear_layers * d.state_heads * d.state_key_dim * d.state_value_dim * STATE_ELEMENT_BYTES


def bytes_per_request(d: Design, context: int) -> int:
    ctx = check_int("context", context, 0, roofline.MAX_CONTEXT)
    return ctx * kv_bytes_per_token(d) + state_bytes_per_request(d)


def max_requests(d: Design, memory_bytes: float, context: int) -> int:
    """Requests with `context` tokens cached that fit in `memory_bytes` of KV and state."""
    per_request = bytes_per_request(d, context)
    return roofline.MAX_BATCH if per_request == 0 else min(roofline.MAX_BATCH, int(memory_bytes // per_request))


def break_even_tokens(d: Design) -> int | None:
    """The context at which a hybrid's KV per request reaches its fixed state (None without a state)."""
    state = state_bytes_per_request(d)
    return math.ceil(state / kv_bytes_per_token(d)) if state else None


def attention_flops_per_cached_token(d: Design) -> int:
    """Decode attention's FLOPs for one query token against one cached token, over every KV layer (see above)."""
    if d.mechanism == "mla":
        per_layer = 2 * d.q_heads * (2 * d.latent_dim + d.rope_dim)
    else:
        per_layer = 4 * d.q_heads * d.head_dim
    return per_layer * d.kv_layers


def decode_ops(d: Design, hw: Hardware, batch: int, context: int) -> tuple[roofline.Op, ...]:
    """The decode step's operations that depend on the attention design: attention over each request's cached KV
    (read, and one new row written) and a hybrid's state (read and written back), each bounded on its own."""
    b = check_int("batch", batch, 1, roofline.MAX_BATCH)
    ctx = check_int("context", context, 0, roofline.MAX_CONTEXT)
    ops = [roofline.Op("attention", b * attention_flops_per_cached_token(d) * ctx,
                       b * (ctx + 1) * kv_bytes_per_token(d), hw.peak_flops_per_s, hw.bandwidth_bytes_per_s)]
    if state_bytes_per_request(d):
        ops.append(roofline.Op("state", 0, b * 2 * state_bytes_per_request(d), hw.peak_flops_per_s,
                               hw.bandwidth_bytes_per_s))
    return tuple(ops)


def attention_time_s(d: Design, hw: Hardware, batch: int, context: int) -> float:
    """What those operations take per decode step: the part of the step the attention design decides."""
    return math.fsum(op.time_s for op in decode_ops(d, hw, batch, context))
