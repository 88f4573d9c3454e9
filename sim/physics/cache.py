"""What each request keeps between decode steps: KV rows in full-attention layers, and a
fixed-size recurrent state in Gated DeltaNet layers."""

from __future__ import annotations

from sim.physics.presets import Model, dtype_bytes

KV_DTYPE_BYTES = 2  # the KV cache is kept in BF16


def kv_bytes_per_token(m: Model) -> int:
    """K and V of one token across all full-attention layers; under MLA, its latent and RoPE key (DeepSeek-V2 §2.1)."""
    a = m.attention
    if a.is_latent:
        return m.full_attention_layers * (a.kv_latent + a.rope_dim) * KV_DTYPE_BYTES
    return m.full_attention_layers * 2 * a.kv_heads * a.head_dim * KV_DTYPE_BYTES


def state_bytes_per_request(m: Model, state_dtype: str = "fp32") -> int:
    """The recurrent state S (key_dim x value_dim per value head) of every Gated DeltaNet layer.

    The short causal-conv window is left out, as in the reference lessons: conv_state_bytes_per_request, about 2%
    of S for the anchor in FP32.
    """
    g = m.gated_deltanet
    if g is None:
        return 0
    per_layer = g.value_heads * g.key_head_dim * g.value_head_dim
    return m.linear_attention_layers * per_layer * dtype_bytes("state_dtype", state_dtype)


def conv_state_bytes_per_request(m: Model, conv_dtype: str = "bf16") -> int:
    """The causal-conv window of every Gated DeltaNet layer: the last conv_kernel - 1 positions of its q, k and v
    inputs, 2 x key_heads x key_dim + value_heads x value_dim channels (vLLM's gated_delta_net_state_shape in
    vllm/model_executor/layers/mamba/mamba_utils.py), in the model's dtype (vLLM keeps it in the model's dtype
    unless mamba_cache_dtype says otherwise)."""
    g = m.gated_deltanet
    if g is None:
        return 0
    channels = 2 * g.key_heads * g.key_head_dim + g.value_heads * g.value_head_dim
    return m.linear_attention_layers * channels * (g.conv_kernel - 1) * dtype_bytes("conv_dtype", conv_dtype)


def request_bytes(m: Model, context: int, state_dtype: str = "fp32") -> int:
    """Memory one request holds: the KV of its `context` cached tokens plus its recurrent state."""
    return context * kv_bytes_per_token(m) + state_bytes_per_request(m, state_dtype)


def attention_flops_per_cached_token(m: Model) -> int:
    """FLOPs one query token spends on one cached token: q.k and p.v in every head of every full layer. Under MLA the
    up-projections are absorbed (sim/techniques/attention.py), so each head works on the latent: q.k over the latent
    and RoPE key, p.v over the latent."""
    a = m.attention
    if a.is_latent:
        return m.full_attention_layers * a.q_heads * (2 * a.kv_latent + a.rope_dim) * 2
    return m.full_attention_layers * a.q_heads * a.head_dim * 2 * 2
