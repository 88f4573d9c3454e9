"""Heads and what they share: how many K/V heads (or one latent) each design keeps, and what that costs per token,
per request and per step.

The physics is sim/techniques/attention.py (its docstring states every convention: DeepSeek-V2's element counts, MLA's
absorbed arithmetic, a hybrid's FP32 state). Picking a design fills in its mechanism and sizes; the mechanism and sizes
can then be changed on the same heads and layers. The diagram draws the query heads, the K/V heads (or the latent) each
group of them reads, and which layers keep KV.
"""

from __future__ import annotations

from sim.kit import Controls, Flag, Range, Readout, Readouts, Select, Svg, Text, Widget, choices, output, palette, view
from sim.page.display import fmt_bytes, fmt_grouped, fmt_ms, fmt_pct
from sim.page.svg import document, element, responsive, text, text_node, text_width, wrap
from sim.physics import presets
from sim.techniques import attention

TEXT = {
    "zh": {
        "title": "注意力头和它们共用的东西：每个 token 要存多少 KV",
        "design": "模型",
        "mechanism": "机制",
        "mechanism=mha": "MHA",
        "mechanism=gqa": "GQA",
        "mechanism=mqa": "MQA",
        "mechanism=mla": "MLA",
        "mechanism=hybrid": "混合（线性注意力）",
        "kv_heads": "K/V 头数（GQA 的组数；混合模型的注意力层）",
        "latent_dim": "MLA 潜向量的宽度",
        "rope_dim": "MLA 解耦 RoPE 键的宽度",
        "attention_every": "混合模型：每几层有一层全注意力",
        "context": "每个请求的上下文（token）",
        "batch": "batch（同时 decode 的请求数）",
        "kv_memory_gb": "留给 KV 和状态的显存（GB）",
        "kv_per_layer": "每层每个 token 的 KV 元素",
        "kv_elements": "每个 token 的 KV 元素（所有层）",
        "kv_bytes_per_token": "每个 token 的 KV（BF16）",
        "share_of_mha": "占同样头数 MHA 的比例",
        "kv_bytes_per_request": "一个请求的 KV",
        "state_bytes_per_request": "一个请求的递归状态",
        "break_even_tokens": "KV 追上状态的上下文",
        "break_even.none": "没有状态",
        "max_requests": "放得下的请求数",
        "attention_ms": "decode 一步里注意力和状态的时间",
        "unit.tokens": "{value} 个 token",
        "memory": "batch {batch} 放不下：这块显存最多装 {max_requests} 个这样的请求。",
        "uneven": "{q_heads} 个查询头分不成 {kv_heads} 个一样大的组：真实模型取能整除的组数。",
        "heads_fixed": "MHA 每个查询头一个 K/V 头，MQA 只有一个：K/V 头数由机制定，这里调它不起作用。",
        "latent_unused": "潜向量和 RoPE 键的宽度只属于 MLA。",
        "every_unused": "「每几层一层注意力」只属于混合架构：其他机制每一层都存 KV。",
        "note": "KV 元素按 DeepSeek-V2 表 1 数（课文里的那张表）：每层里，MHA 给每个查询头存一个键和一个值，"
                "各有头宽那么多个元素；GQA 每组存一对，MQA 一共一对，MLA 存一个潜向量和一个 RoPE 键；"
                "混合模型只有全注意力层存 KV，其余层每个请求存一份固定大小的递归状态（FP32）。元素按 BF16 存。"
                "注意力的时间是屋顶线下限（峰值算力、满带宽）："
                "每个缓存 token，每个查询头在头宽的每个元素上做 4 次运算；"
                "MLA 把上投影吸收进查询和输出投影，每个头直接在潜向量上算，潜向量每个元素 4 次、RoPE 键每个元素 2 次。"
                "时间只算注意力和状态这两个算子，不含权重。",
        "diagram": "查询头、它们读的 K/V 头和存 KV 的层",
        "row.queries": "{q_heads} 个查询头",
        "row.kv": "{kv_heads} 个 K/V 头，每个被 {group} 个查询头读",
        "row.kv_mha": "{kv_heads} 个 K/V 头，每个查询头一个",
        "row.kv_mqa": "1 个 K/V 头，所有 {q_heads} 个查询头都读它",
        "row.latent": "1 个潜向量（{latent} 维）+ 1 个 RoPE 键（{rope} 维），{q_heads} 个头都读",
        "row.layers": "{layers} 层，每层都存 KV",
        "row.layers_hybrid": "{layers} 层：{kv_layers} 层存 KV，{linear} 层只存固定大小的状态",
        "title.kv": "K/V 头 {index}",
        "title.latent": "潜向量和 RoPE 键",
        "title.kv_layer": "第 {index} 层：存 KV",
        "title.state_layer": "第 {index} 层：递归状态",
    },
    "en": {
        "title": "Heads and what they share: how much KV each token keeps",
        "design": "Model",
        "mechanism": "Mechanism",
        "mechanism=mha": "MHA",
        "mechanism=gqa": "GQA",
        "mechanism=mqa": "MQA",
        "mechanism=mla": "MLA",
        "mechanism=hybrid": "hybrid (linear attention)",
        "kv_heads": "K/V heads (GQA's groups; a hybrid's attention layers)",
        "latent_dim": "MLA latent width",
        "rope_dim": "MLA decoupled RoPE key width",
        "attention_every": "Hybrid: one full-attention layer in every",
        "context": "Context per request (tokens)",
        "batch": "Batch (requests decoding together)",
        "kv_memory_gb": "Memory left for KV and state (GB)",
        "kv_per_layer": "KV elements per token per layer",
        "kv_elements": "KV elements per token (all layers)",
        "kv_bytes_per_token": "KV per token (BF16)",
        "share_of_mha": "Share of MHA with the same heads",
        "kv_bytes_per_request": "KV of one request",
        "state_bytes_per_request": "Recurrent state of one request",
        "break_even_tokens": "Context at which the KV catches up with the state",
        "break_even.none": "no state",
        "max_requests": "Requests that fit",
        "attention_ms": "Attention and state in one decode step",
        "unit.tokens": "{value} tokens",
        "memory": "Batch {batch} does not fit: this memory holds at most {max_requests} such requests.",
        "uneven": "{q_heads} query heads do not split into {kv_heads} equal groups: real models pick a divisor.",
        "heads_fixed": "MHA has one K/V head per query head and MQA one in all: the mechanism sets the K/V heads, so "
                       "this control does nothing here.",
        "latent_unused": "The latent and RoPE key widths belong to MLA only.",
        "every_unused": "Attention every N layers belongs to the hybrid only: every other mechanism keeps KV in every "
                        "layer.",
        "note": "KV elements are counted as in DeepSeek-V2's Table 1 (the lesson's table): per layer, MHA keeps a "
                "key and a value a head wide for every query head, GQA a pair for every group, MQA one pair in all, "
                "and MLA one latent and one RoPE key; a hybrid keeps KV only in its full-attention layers, and a "
                "fixed-size recurrent state (FP32) per request in the others. Elements are stored in BF16. The time "
                "is a roofline lower bound (peak compute, full bandwidth): for every cached token, each query head "
                "does 4 operations per element of its width; MLA absorbs its up-projections into the query and "
                "output projections, so each head works on the latent directly, 4 operations per latent element and "
                "2 per RoPE-key element. It counts the attention and state operations only, not the weights.",
        "diagram": "Query heads, the K/V heads they read, and the layers that keep KV",
        "row.queries": "{q_heads} query heads",
        "row.kv": "{kv_heads} K/V heads, each read by {group} query heads",
        "row.kv_mha": "{kv_heads} K/V heads, one per query head",
        "row.kv_mqa": "1 K/V head, read by all {q_heads} query heads",
        "row.latent": "1 latent ({latent} wide) + 1 RoPE key ({rope} wide), read by all {q_heads} heads",
        "row.layers": "{layers} layers, each keeping KV",
        "row.layers_hybrid": "{layers} layers: {kv_layers} keep KV, {linear} keep only a fixed-size state",
        "title.kv": "K/V head {index}",
        "title.latent": "the latent and the RoPE key",
        "title.kv_layer": "layer {index}: keeps KV",
        "title.state_layer": "layer {index}: recurrent state",
    },
}

DEFAULT_DESIGN = "qwen3.8-27b"
DESIGN_FIELDS = ("mechanism", "kv_heads", "latent_dim", "rope_dim", "attention_every")  # what a design fills in

WIDGET = Widget(
    controls=(
        Select("design", default=DEFAULT_DESIGN, options=tuple(attention.designs()),
               names={k: d.name for k, d in attention.designs().items()}),
        Select("mechanism", default="hybrid", options=attention.MECHANISMS, style="buttons"),
        Range("kv_heads", default=4, min=1, max=128),
        Range("latent_dim", default=512, min=64, max=2048, step=64),
        Range("rope_dim", default=64, min=0, max=256, step=16),
        Range("attention_every", default=4, min=1, max=8),
        Range("context", default=32_768, min=1, max=1_048_576, log=True),
        Range("batch", default=8, min=1, max=1_024, log=True),
        Range("kv_memory_gb", default=30, min=1, max=180),
        choices.hardware(),
    ),
    layout=(
        Controls(),
        Flag("memory"),
        Flag("uneven", tone="note"),
        Flag("heads_fixed", tone="note", controls=("kv_heads",)),
        Flag("latent_unused", tone="note", controls=("latent_dim", "rope_dim")),
        Flag("every_unused", tone="note", controls=("attention_every",)),
        Svg("heads", label="diagram"),
        Readouts("kv_per_layer", "kv_elements", "kv_bytes_per_token", "share_of_mha", "kv_bytes_per_request",
                 "state_bytes_per_request", Readout("break_even_tokens"), "max_requests", "attention_ms"),
        Text("note"),
    ),
)


def render(state) -> dict:
    """The kv-heads view for any state (invalid values replaced by defaults or clamped)."""
    s = settle_design(WIDGET.coerce(state), WIDGET.changed(state))
    t = TEXT[s["lang"]]
    d = chosen_design(s)
    hw = presets.hardware(s["hardware"])
    per_token = attention.kv_bytes_per_token(d)
    request = s["context"] * per_token
    state_bytes = attention.state_bytes_per_request(d)
    fit = attention.max_requests(d, s["kv_memory_gb"] * 1e9, s["context"])
    even = attention.break_even_tokens(d)
    attention_s = attention.attention_time_s(d, hw, s["batch"], s["context"])
    share = per_token / attention.mha_bytes_per_token(d)
    outputs = {
        "batch": output(s["batch"], fmt_grouped(s["batch"])),
        "q_heads": output(d.q_heads, f"{d.q_heads}"),
        "kv_heads": output(d.kv_heads_per_layer, f"{d.kv_heads_per_layer}"),
        "kv_per_layer": output(attention.kv_elements_per_token_per_layer(d),
                               fmt_grouped(attention.kv_elements_per_token_per_layer(d))),
        "kv_elements": output(attention.kv_elements_per_token(d), fmt_grouped(attention.kv_elements_per_token(d))),
        "kv_bytes_per_token": output(per_token, f"{fmt_grouped(per_token)} B"),
        "share_of_mha": output(share, fmt_pct(share, 2 if share < 0.1 else 1)),
        "kv_bytes_per_request": output(request, fmt_bytes(request)),
        "state_bytes_per_request": output(state_bytes, fmt_bytes(state_bytes)),
        "break_even_tokens": output(even or 0, t["unit.tokens"].format(value=fmt_grouped(even)) if even
                                    else t["break_even.none"]),
        "max_requests": output(fit, fmt_grouped(fit)),
        "attention_ms": output(attention_s * 1e3, fmt_ms(attention_s)),
    }
    derivations = {
        "kv_elements": f"{fmt_grouped(attention.kv_elements_per_token_per_layer(d))} × {d.kv_layers} = "
                       f"{fmt_grouped(attention.kv_elements_per_token(d))}",
        "kv_bytes_per_token": f"{fmt_grouped(attention.kv_elements_per_token(d))} × 2 B = {fmt_grouped(per_token)} B",
        "max_requests": f"{s['kv_memory_gb']} GB ÷ ({fmt_grouped(s['context'])} × {fmt_grouped(per_token)} B"
                        + (f" + {fmt_bytes(state_bytes)}" if state_bytes else "") + f") = {fmt_grouped(fit)}",
    }
    flags = {"memory": s["batch"] > fit,
             "uneven": d.mechanism in ("gqa", "hybrid") and d.q_heads % d.kv_heads_per_layer != 0,
             "heads_fixed": s["mechanism"] in ("mha", "mqa"), "latent_unused": s["mechanism"] != "mla",
             "every_unused": s["mechanism"] != "hybrid"}
    return view(s, outputs, svg={"heads": heads_diagram(d, s["lang"])}, flags=flags, derivations=derivations)


def chosen_design(s: dict) -> attention.Design:
    """The design's heads and layers, keeping KV by the chosen mechanism and sizes."""
    base = attention.design(s["design"])
    return attention.with_mechanism(base, s["mechanism"], kv_heads=min(s["kv_heads"], base.q_heads),
                                    latent_dim=s["latent_dim"], rope_dim=s["rope_dim"],
                                    attention_every=s["attention_every"])


def settle_design(s: dict, changed: str | None) -> dict:
    """On a new design (or none changed yet: the lesson's setting), its own mechanism and sizes filled in."""
    s = dict(s)
    if changed == "design":
        d = attention.design(s["design"])
        s["mechanism"] = d.mechanism
        s["kv_heads"] = WIDGET.control("kv_heads").coerce(d.kv_heads_per_layer or d.q_heads)
        for name in ("latent_dim", "rope_dim", "attention_every"):
            if getattr(d, name):
                s[name] = WIDGET.control(name).coerce(getattr(d, name))
    return s


def heads_diagram(d: attention.Design, lang: str) -> str:
    return responsive(*(draw_heads(d, lang, width) for width in (WIDE, NARROW)))


WIDE, NARROW = 560, 300
ROW_H, LAYER_H, LABEL_PX, MARGIN = 22, 14, 13, 8


def draw_heads(d: attention.Design, lang: str, width: float) -> str:
    """Three rows: every query head; under each group of them the K/V head it reads (one latent for MLA, spanning
    all); and every layer, KV-keeping or (a hybrid's) state-keeping. Each row has its sentence above it."""
    t = TEXT[lang]
    span = width - 2 * MARGIN
    parts, sentences, y = [], [], 4.0

    def label(sentence: str) -> None:
        nonlocal y
        sentences.append(sentence)
        for line in wrap(sentence, span, lambda s: text_width(s, LABEL_PX)):
            y += LABEL_PX + 3
            parts.append(text(line, {"x": MARGIN, "y": y, "class": "svg-label"}))
        y += 5

    def cells(count: int, colour, titles, height: float) -> None:
        nonlocal y
        w = span / count
        for i in range(count):
            parts.append(element("rect", {"x": MARGIN + i * w, "y": y, "width": w, "height": height,
                                          "fill": colour(i), "stroke": palette.colour("surface"),
                                          "stroke-width": 1 if w > 4 else 0.5},
                                 *((text_node("title", titles(i)),) if titles else ())))
        y += height + 8

    label(t["row.queries"].format(q_heads=d.q_heads))
    cells(d.q_heads, lambda i: palette.colour("attention"), None, ROW_H)  # the row's sentence says what they are
    kv = d.kv_heads_per_layer
    if d.mechanism == "mla":
        label(t["row.latent"].format(latent=d.latent_dim, rope=d.rope_dim, q_heads=d.q_heads))
        cells(1, lambda i: palette.colour("kv"), lambda i: t["title.latent"], ROW_H)
    else:
        key = "row.kv_mha" if kv == d.q_heads else "row.kv_mqa" if kv == 1 else "row.kv"
        label(t[key].format(kv_heads=kv, q_heads=d.q_heads, group=fmt_grouped(d.q_heads / kv)))
        cells(kv, lambda i: palette.colour("kv"), lambda i: t["title.kv"].format(index=i + 1), ROW_H)
    if d.mechanism == "hybrid":
        label(t["row.layers_hybrid"].format(layers=d.layers, kv_layers=d.kv_layers, linear=d.linear_layers))
    else:
        label(t["row.layers"].format(layers=d.layers))

    def keeps_kv(i: int) -> bool:  # a hybrid's full-attention layer is the last of each run of attention_every
        return d.mechanism != "hybrid" or (i + 1) % d.attention_every == 0

    cells(d.layers, lambda i: palette.colour("kv" if keeps_kv(i) else "state"),
          lambda i: t["title.kv_layer" if keeps_kv(i) else "title.state_layer"].format(index=i + 1), LAYER_H)
    return document(width, y, f"{t['diagram']}: {'; '.join(sentences)}", *parts, css_class="svg-figure")
