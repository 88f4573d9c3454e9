"""Requests that fit, against context: every mechanism on one design's heads and layers, in the same memory.

The physics is sim/techniques/attention.py. Each curve is the design with its attention kept another way (`variants`):
MHA, GQA with the design's K/V heads (8 where it has none of its own, GQA's own choice), MQA, MLA with the design's
latent (DeepSeek-V2's d_c = 4 d_h and d_h^R = d_h / 2 where it has none), and a hybrid (the design's own, or its
heads in one layer of every 4 with the state sim/techniques/attention.py gives). A hybrid's state is a fixed cost per
request, so its curve is flat at short contexts and bends down late.
"""

from __future__ import annotations

from sim.kit import Controls, Figure, Range, Readouts, Select, Text, Widget, alt, output, palette, view
from sim.page.display import fmt_grouped
from sim.techniques import attention

TEXT = {
    "zh": {
        "title": "同样的显存放得下多少请求：各种注意力机制随上下文的变化",
        "design": "模型（头数和层数）",
        "kv_memory_gb": "留给 KV 和状态的显存（GB）",
        "context": "读数取的上下文（token）",
        "fit.mha": "MHA 放得下",
        "fit.gqa": "GQA 放得下",
        "fit.mqa": "MQA 放得下",
        "fit.mla": "MLA 放得下",
        "fit.hybrid": "混合模型放得下",
        "crossing": "从这个上下文起，混合模型一个请求比 GQA 占得少",
        "crossing.none": "不会：它每个 token 的 KV 不比 GQA 少",
        "unit.tokens": "{value} 个 token",
        "trace.mha": "MHA（{kv} 个 K/V 头）",
        "trace.gqa": "GQA（{kv} 个 K/V 头）",
        "trace.mqa": "MQA（1 个 K/V 头）",
        "trace.mla": "MLA（潜向量 {latent} + RoPE 键 {rope}）",
        "trace.hybrid": "混合（{kv_layers}/{layers} 层存 KV）",
        "axis.x": "每个请求的上下文（token，对数刻度）",
        "axis.y": "放得下的请求数（对数刻度）",
        "figure": "放得下的请求数随上下文的变化",
        "alt.point": "{name}：{context} 个 token 时 {fit} 个",
        "note": "每条曲线是同一个模型的头数和层数，只换 KV 的存法；元素按 BF16 存，混合模型的递归状态按 FP32。"
                "没有自己的 K/V 头数的模型，GQA 取 8 组；没有潜向量的，MLA 按 DeepSeek-V2 的取法："
                "潜向量是头宽的 4 倍，RoPE 键是头宽的一半。混合模型的状态是每个请求固定的开销，"
                "所以它的曲线在短上下文时平，到长上下文才往下弯。",
    },
    "en": {
        "title": "How many requests the same memory holds: every mechanism against the context",
        "design": "Model (its heads and layers)",
        "kv_memory_gb": "Memory left for KV and state (GB)",
        "context": "Context the readouts are taken at (tokens)",
        "fit.mha": "MHA fits",
        "fit.gqa": "GQA fits",
        "fit.mqa": "MQA fits",
        "fit.mla": "MLA fits",
        "fit.hybrid": "The hybrid fits",
        "crossing": "Context from which a hybrid request takes fewer bytes than a GQA one",
        "crossing.none": "never: its KV per token is no smaller than GQA's",
        "unit.tokens": "{value} tokens",
        "trace.mha": "MHA ({kv} K/V heads)",
        "trace.gqa": "GQA ({kv} K/V heads)",
        "trace.mqa": "MQA (1 K/V head)",
        "trace.mla": "MLA (latent {latent} + RoPE key {rope})",
        "trace.hybrid": "hybrid ({kv_layers} of {layers} layers keep KV)",
        "axis.x": "Context per request (tokens, log scale)",
        "axis.y": "Requests that fit (log scale)",
        "figure": "Requests that fit against the context",
        "alt.point": "{name}: {fit} at {context} tokens",
        "note": "Every curve keeps the same model's heads and layers and changes only how the KV is kept; elements "
                "are stored in BF16, a hybrid's recurrent state in FP32. For a model with no K/V heads of its own, "
                "GQA takes 8 groups; for one with no latent, MLA takes DeepSeek-V2's sizes: a latent 4 heads wide "
                "and a RoPE key half a head wide. A hybrid's state is a fixed cost per request, so its curve is "
                "flat at short contexts and bends down only at long ones.",
    },
}

WIDGET = Widget(
    controls=(
        Select("design", default="qwen3.8-27b", options=tuple(attention.designs()),
               names={k: d.name for k, d in attention.designs().items()}),
        Range("kv_memory_gb", default=30, min=1, max=180),
        Range("context", default=32_768, min=256, max=1_048_576, log=True),
    ),
    layout=(
        Controls(),
        Readouts(*(f"fit.{m}" for m in attention.MECHANISMS), "crossing"),
        Figure("figure"),
        Text("note"),
    ),
)

CONTEXTS = tuple(sorted({round(2 ** (k / 4)) for k in range(32, 81)}))  # 256 to 1,048,576, four points per doubling
COLOURS = {"mha": "over", "gqa": "kv", "mqa": "muted", "mla": "prefill", "hybrid": "state"}
DEFAULT_GROUPS = 8  # GQA's "favorable middle ground" (Ainslie et al. §3.3)


def variants(d: attention.Design) -> dict[str, attention.Design]:
    """The design's heads and layers keeping KV each way (see the module docstring)."""
    kv = d.kv_heads if d.mechanism in ("gqa", "hybrid") else min(DEFAULT_GROUPS, d.q_heads)
    latent = (d.latent_dim, d.rope_dim) if d.mechanism == "mla" else (4 * d.head_dim, d.head_dim // 2)
    return {
        "mha": attention.with_mechanism(d, "mha"),
        "gqa": attention.with_mechanism(d, "gqa", kv_heads=kv),
        "mqa": attention.with_mechanism(d, "mqa"),
        "mla": attention.with_mechanism(d, "mla", latent_dim=latent[0], rope_dim=latent[1]),
        "hybrid": d if d.mechanism == "hybrid" else attention.with_mechanism(d, "hybrid", kv_heads=kv),
    }


def crossing(hybrid: attention.Design, gqa: attention.Design) -> int | None:
    """The shortest context at which a hybrid request takes fewer bytes than a GQA one: its fixed state is paid
    back by the KV it saves per token (None if it saves none)."""
    saved = attention.kv_bytes_per_token(gqa) - attention.kv_bytes_per_token(hybrid)
    if saved <= 0:
        return None
    return attention.state_bytes_per_request(hybrid) // saved + 1


def render(state) -> dict:
    """The kv-capacity-curves view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    memory = s["kv_memory_gb"] * 1e9
    ways = variants(attention.design(s["design"]))
    outputs = {}
    for m, d in ways.items():
        fit = attention.max_requests(d, memory, s["context"])
        outputs[f"fit.{m}"] = output(fit, fmt_grouped(fit))
    cross = crossing(ways["hybrid"], ways["gqa"])
    outputs["crossing"] = output(cross or 0, t["unit.tokens"].format(value=fmt_grouped(cross)) if cross
                                 else t["crossing.none"])
    return view(s, outputs, figures={"figure": curves_figure(ways, memory, s)})


def trace_name(m: str, d: attention.Design, t: dict) -> str:
    return t[f"trace.{m}"].format(kv=d.kv_heads_per_layer, latent=d.latent_dim, rope=d.rope_dim,
                                  kv_layers=d.kv_layers, layers=d.layers)


def curves_figure(ways: dict[str, attention.Design], memory: float, s: dict) -> dict:
    t = TEXT[s["lang"]]
    xs = list(CONTEXTS)
    data = []
    for m, d in sorted(ways.items(), key=lambda way: way[0] != "hybrid"):  # the thick hybrid first, under the rest
        ys = [attention.max_requests(d, memory, c) for c in xs]
        name = trace_name(m, d, t)
        data.append({"type": "scatter", "mode": "lines", "name": name, "x": xs, "y": [y or None for y in ys],
                     "line": {"color": palette.colour(COLOURS[m]), "width": 3 if m == "hybrid" else 2,
                              "dash": "dot" if m == "mqa" else "solid"},
                     "hovertemplate": f"{name}<br>%{{x:,}} tokens: %{{y:,}}<extra></extra>"})
    layout = palette.plot_layout({
        "xaxis": {"title": {"text": t["axis.x"]}, "type": "log", "fixedrange": True, "dtick": 1},  # no minor labels
        "yaxis": {"title": {"text": t["axis.y"]}, "type": "log", "fixedrange": True, "dtick": 1},
        "margin": {"l": 56, "r": 16, "t": 24, "b": 48},
        "height": 400,
        "legend": palette.legend_above(),
        "uirevision": "figure",
    })
    spoken = [t["alt.point"].format(name=trace_name(m, d, t), context=fmt_grouped(s["context"]),
                                    fit=fmt_grouped(attention.max_requests(d, memory, s["context"])))
              for m, d in ways.items()]
    return {"data": data, "layout": layout, "alt": alt.sentence(s["lang"], t["figure"], spoken)}
