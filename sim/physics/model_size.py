"""Parameter counts derived from a model's config fields.

A mixture-of-experts model (presets.Experts) holds every routed expert, but a token passes through only
`per_token` of them: `matmul_params` counts what the GPU holds, `active_params` what one token is multiplied by
(sim/physics/moe.py reads the weights a step of many tokens touches).

Two totals matter for inference:
- matmul_params: the weights read from HBM on every forward step. Every tensor inside the decoder
  layers (projections, plus the small vectors that ride along: GDN conv taps, decay and bias
  vectors, gated norm, q/k norms) and the LM head. Not counted: the embedding table (a lookup reads
  one row per token), the two residual RMSNorm gains per layer and the final norm, which is the
  reference lessons' count (anchor: 25,623,939,584).
- resident_params: the whole checkpoint as it sits in memory: the above plus embedding, residual
  norms, MTP head and vision tower (anchor: ~27.78 B, 55.56 GB in BF16).
"""

from __future__ import annotations

from sim.physics.presets import Attention, Experts, GatedDeltaNet, Model, Vision


def mlp_params(hidden: int, intermediate: int) -> int:
    """SwiGLU feed-forward: gate, up and down projections, no biases."""
    return 3 * hidden * intermediate


def attention_params(hidden: int, a: Attention) -> int:
    """Full-attention block: q (doubled when it also emits the output gate), k, v, o and q/k norms."""
    if a.is_latent:
        return latent_attention_params(hidden, a)
    q_width = a.q_heads * a.head_dim
    kv_width = a.kv_heads * a.head_dim
    q_proj = hidden * q_width * (2 if a.output_gate else 1)
    k_and_v = 2 * hidden * kv_width
    o_proj = q_width * hidden
    qk_norms = 2 * a.head_dim if a.qk_norm else 0
    return q_proj + k_and_v + o_proj + qk_norms


def latent_attention_params(hidden: int, a: Attention) -> int:
    """Multi-head latent attention (DeepSeek-V3's MLA, deepseek-ai/DeepSeek-V3 inference/model.py): the query through
    a rank-q_latent projection and its norm (or one full projection), the down projection to the KV latent plus the
    shared RoPE key, the latent's norm, the up projection to every head's key and value, and the output."""
    q_width = a.q_heads * (a.head_dim + a.rope_dim)
    query = hidden * a.q_latent + a.q_latent + a.q_latent * q_width if a.q_latent else hidden * q_width
    kv_down = hidden * (a.kv_latent + a.rope_dim) + a.kv_latent
    kv_up = a.kv_latent * a.q_heads * (a.head_dim + a.v_head_dim)
    out = a.q_heads * a.v_head_dim * hidden
    return query + kv_down + kv_up + out


def expert_params(m: Model) -> int:
    """One routed expert of one MoE layer: a SwiGLU MLP of the experts' width."""
    return mlp_params(m.hidden, m.experts.width)


def router_params(hidden: int, e: Experts) -> int:
    """The router of one MoE layer: a score per routed expert from the hidden state, and its bias where it has one."""
    return hidden * e.routed + (e.routed if e.router_bias else 0)


def moe_layer_params(m: Model, routed: int) -> int:
    """One MoE layer's feed-forward with `routed` of its routed experts: those, the shared experts, the router."""
    e = m.experts
    shared = mlp_params(m.hidden, e.shared_width) if e.shared else 0
    return routed * expert_params(m) + shared + router_params(m.hidden, e)


def feed_forward_params(m: Model, routed: int | None = None) -> int:
    """Every layer's feed-forward: the dense MLPs, and each MoE layer with `routed` routed experts (default: the
    experts the record holds)."""
    dense = m.dense_mlp_layers * mlp_params(m.hidden, m.intermediate)
    if m.experts is None:
        return dense
    return dense + m.moe_layers * moe_layer_params(m, m.experts.held if routed is None else routed)


def gated_deltanet_params(hidden: int, g: GatedDeltaNet) -> int:
    """Gated DeltaNet block: q/k/v/z and b/a projections, causal conv over q/k/v, decay vectors, gated norm, out."""
    key_dim = g.key_heads * g.key_head_dim
    value_dim = g.value_heads * g.value_head_dim
    in_qkvz = hidden * (2 * key_dim + 2 * value_dim)
    in_ba = hidden * 2 * g.value_heads
    conv = (2 * key_dim + value_dim) * g.conv_kernel
    decay = 2 * g.value_heads  # A_log and dt_bias
    norm = g.value_head_dim
    out = value_dim * hidden
    return in_qkvz + in_ba + conv + decay + norm + out


def residual_norm_params(m: Model) -> int:
    """Two RMSNorm gains per decoder layer plus the final norm."""
    return 2 * m.hidden * m.layers + m.hidden


def lm_head_params(m: Model) -> int:
    return m.vocab * m.hidden


def embedding_params(m: Model) -> int:
    """The input embedding table; zero extra when it is tied to the LM head."""
    return 0 if m.tied_embeddings else m.vocab * m.hidden


def matmul_params(m: Model) -> int:
    """Weights read on every forward step (see module docstring); of an MoE model, every expert it holds."""
    layers = feed_forward_params(m)
    layers += m.full_attention_layers * attention_params(m.hidden, m.attention)
    if m.gated_deltanet is not None:
        layers += m.linear_attention_layers * gated_deltanet_params(m.hidden, m.gated_deltanet)
    return layers + lm_head_params(m)


def active_params(m: Model) -> int:
    """The matmul weights one token is multiplied by: matmul_params with each MoE layer's routed experts cut to the
    `per_token` the router picks (matmul_params itself for a dense model)."""
    if m.experts is None:
        return matmul_params(m)
    return matmul_params(m) - feed_forward_params(m) + feed_forward_params(m, m.experts.per_token)


def routed_params(m: Model) -> int:
    """Every routed expert the record holds, in every MoE layer (0 for a dense model)."""
    return m.moe_layers * m.experts.held * expert_params(m) if m.experts else 0


def mtp_params(m: Model) -> int:
    """Multi-token-prediction head: per layer, one full-attention decoder layer plus the fc that
    fuses embedding and hidden state, and its three norms (Qwen3-Next / Qwen3.5 layout)."""
    per_layer = (
        attention_params(m.hidden, m.attention)
        + mlp_params(m.hidden, m.intermediate)
        + 2 * m.hidden  # the layer's two residual norms
        + 2 * m.hidden * m.hidden  # fc: [embedding; hidden] -> hidden
        + 3 * m.hidden  # pre-fc norms for embedding and hidden, final norm
    )
    return m.mtp_layers * per_layer


def vision_params(v: Vision | None) -> int:
    """ViT tower (LayerNorms and linears with biases) plus the patch merger into the text width."""
    if v is None:
        return 0
    h, f = v.hidden, v.intermediate
    block = (
        (h * 3 * h + 3 * h)  # qkv
        + (h * h + h)  # proj
        + 2 * (2 * h)  # two LayerNorms, weight and bias
        + (h * f + f)  # fc1
        + (f * h + h)  # fc2
    )
    patch_in = v.in_channels * v.temporal_patch_size * v.patch_size**2
    patch_embed = patch_in * h + h
    position_embed = v.position_embeddings * h
    merged = h * v.spatial_merge_size**2
    merger = 2 * h + (merged * merged + merged) + (merged * v.out_hidden + v.out_hidden)
    return v.depth * block + patch_embed + position_embed + merger


def resident_params(m: Model) -> int:
    """Every parameter of the checkpoint (what occupies memory while serving)."""
    return (
        matmul_params(m)
        + embedding_params(m)
        + residual_norm_params(m)
        + mtp_params(m)
        + vision_params(m.vision)
    )


def matmul_weight_bytes(m: Model) -> int:
    return matmul_params(m) * m.weight_bytes_per_param


def resident_weight_bytes(m: Model) -> int:
    return resident_params(m) * m.weight_bytes_per_param
