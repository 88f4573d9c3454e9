"""Which experts one decode step's tokens touch in one MoE layer (sim/physics/routing.py): a seeded sample of the
routing (routing.route), each expert lit by the tokens that chose it, beside the expectation under uniform routing
(routing.expected_touched) and the naive count batch x k, which forgets that tokens share experts; and what the
expectation means for the weights a step reads (routing.weights_read_bytes).

The sample is one layer's; the expectation, its curve and the weights are uniform routing's whatever the skew (the
skew shapes the sample only), which the note and the "skewed" flag say.
"""

from __future__ import annotations

import functools
import math

from sim.kit import (
    Controls,
    Derivations,
    Figure,
    Flag,
    Range,
    Readout,
    Readouts,
    Select,
    Svg,
    Text,
    Widget,
    alt,
    output,
    palette,
    view,
)
from sim.page import svg
from sim.page.display import fmt_bytes, fmt_chance, fmt_grouped, fmt_share, fmt_sig
from sim.physics import model_size, presets, routing

TEXT = {
    "zh": {
        "title": "一步 decode 的 token 碰到哪些专家",
        "model": "模型",
        "batch": "这一步的 token 数（decode：每个请求一个）",
        "skew": "路由",
        "skew=0": "均匀",
        "skew=0.5": "偏斜",
        "skew=1": "类 Zipf",
        "seed": "样本（随机种子）",
        "touched": "这个样本碰到的专家",
        "touched_share": "占 {share}",
        "expected": "均匀路由下的期望",
        "expected_of": "共 {experts} 个中的 {share}",
        "picks": "朴素算法：batch × k 次挑选",
        "repeats": "其中 {repeats} 次挑中了别的 token 已经挑过的专家",
        "busiest": "最忙的专家分到的 token",
        "mean_load": "碰到的专家平均每个 {mean} 个",
        "weights": "每步读的权重（期望）",
        "weights_scale": "batch 1（激活参数）{active}，全部 {total}",
        "unit.of": "{touched} / {experts}",
        "unit.tokens": "{n} 个 token",
        "unit.picks": "{picks} 次（{batch} × {k}）",
        "skewed": "这个样本的路由是偏斜的：受欢迎的专家分走更多的挑选，所以它往往比均匀路由碰到的专家少，最忙的专家"
                  "也更忙。上面的期望、下面的曲线和权重读数仍按均匀路由算，偏斜只改变样本。",
        "grid.caption": "一个 MoE 层的路由专家，每格的亮度是这个样本里选中它的 token 数",
        "grid.label": "一个 MoE 层的专家格子",
        "grid.head": "{batch} 个 token、每个挑 {k} 个：{touched} / {experts} 个专家被碰到",
        "legend.head": "每个专家的 token 数：",
        "legend.item": "{label}：{n} 个专家",
        "legend.item.one": "{label}：1 个专家",
        "level.0": "没有 token",
        "level.1": "1 个 token",
        "level.n": "{loads} 个 token",
        "bytes.1": "1 字节（FP8）",
        "bytes.2": "2 字节（BF16）",
        "curve": "碰到的专家比例随 batch 的变化",
        "axis.x": "这一步的 token 数（对数刻度）",
        "axis.y": "碰到的路由专家比例",
        "trace.expected": "均匀路由的期望",
        "trace.naive": "朴素：min(1, B·k/E)",
        "trace.sample": "这个样本",
        "alt.head": "{model} 的一个 MoE 层里碰到的专家比例随 token 数",
        "alt.point": "{batch} 个 token：期望 {expected}，朴素 {naive}",
        "alt.sample": "这个样本：{batch} 个 token 碰到 {touched} / {experts}",
        "how.touched": "这个样本（种子 {seed}，路由：{router}）里至少有一个 token 的专家："
                       "{touched} / {experts} = {share}",
        "how.expected": "{experts} × (1 − (1 − {k}/{experts})^{batch}) = {experts} × (1 − {missed}) = {expected}"
                        "（{share}）",
        "how.picks": "{batch} 个 token × 每个 {k} 个专家 = {picks} 次挑选；落在 {touched} 个不同的专家上，"
                     "{repeats} 次是重复的",
        "how.busiest": "这个样本 {experts} 个专家的 token 数里最大的：{busiest}；碰到的专家平均 {batch} × {k} ÷ "
                       "{touched} = {mean}",
        "how.weights": "全部矩阵乘权重 {full} − {experts} × {expert} + {expected} × {expert} = {read}"
                       "（一个专家在 {layers} 个 MoE 层里共 {params} 个参数 × {bpp} = {expert}）",
        "note": "画的是一个 MoE 层的路由专家（DeepSeek-V3 每层另有 1 个共享专家，每个 token 都用，总要读，没有画）。"
                "decode 的一步里每个请求贡献 1 个 token，路由器给每个 token 挑 k 个不同的专家；一步要读的是至少被"
                "一个 token 挑中的专家，每个读一次。期望按均匀路由算，这是我们的选择：每个 token 的 k 个专家是均匀"
                "随机的一组，token 之间相互独立，于是一个专家被所有 B 个 token 漏掉的概率是 (1 − k/E)^B，期望碰到 "
                "E(1 − (1 − k/E)^B) 个。训练出来的路由器并不均匀（负载均衡损失把它往均匀推），偏斜的路由在同样的 "
                "B 下碰到的专家更少。样本是 routing.route 按种子抽的一次：每次挑选按专家的受欢迎程度抽，偏斜 s 把"
                "均匀分布和 Zipf 分布（按排名 1/r）按 (1 − s) : s 混合，排名由种子打乱；一个 token 重复挑中的专家"
                "重抽。朴素算法 "
                "B × k 把每次挑选都当成一个新专家，它可以比专家总数还多。权重读数按期望算，每个 MoE 层都一样："
                "BF16 每个参数 2 字节，DeepSeek-V3 的 FP8 每个 1 字节；GB = 10⁹ 字节。",
    },
    "en": {
        "title": "Which experts one decode step's tokens touch",
        "model": "Model",
        "batch": "Tokens in the step (decode: one per request)",
        "skew": "Routing",
        "skew=0": "uniform",
        "skew=0.5": "skewed",
        "skew=1": "Zipf-like",
        "seed": "Sample (seed)",
        "touched": "Experts this sample touches",
        "touched_share": "{share} of them",
        "expected": "Expected under uniform routing",
        "expected_of": "{share} of {experts}",
        "picks": "The naive count: batch × k picks",
        "repeats": "{repeats} of them pick an expert another token already picked",
        "busiest": "Most tokens on one expert",
        "mean_load": "{mean} on average per expert touched",
        "weights": "Weights read per step (expected)",
        "weights_scale": "batch 1 (the active parameters) {active}, all of them {total}",
        "unit.of": "{touched} of {experts}",
        "unit.tokens": "{n} tokens",
        "unit.picks": "{picks} ({batch} × {k})",
        "skewed": "This sample's routing is skewed: popular experts draw more of the picks, so it tends to touch fewer "
                  "experts than uniform routing and to load its busiest one more. The expectation above, the curve "
                  "below and the weights are still uniform routing's: the skew changes the sample only.",
        "grid.caption": "One MoE layer's routed experts, each lit by how many of this sample's tokens chose it",
        "grid.label": "the experts of one MoE layer",
        "grid.head": "{batch} tokens picking {k} each: {touched} of {experts} experts touched",
        "legend.head": "Tokens per expert:",
        "legend.item": "{label}: {n} experts",
        "legend.item.one": "{label}: 1 expert",
        "level.0": "no token",
        "level.1": "1 token",
        "level.n": "{loads} tokens",
        "bytes.1": "1 byte (FP8)",
        "bytes.2": "2 bytes (BF16)",
        "curve": "Share of experts touched against the batch",
        "axis.x": "Tokens in the step (log scale)",
        "axis.y": "Share of routed experts touched",
        "trace.expected": "expected, uniform routing",
        "trace.naive": "naive: min(1, B·k/E)",
        "trace.sample": "this sample",
        "alt.head": "Share of the experts of one MoE layer of {model} touched against the tokens in the step",
        "alt.point": "{batch} tokens: expected {expected}, naive {naive}",
        "alt.sample": "this sample: {batch} tokens touch {touched} of {experts}",
        "how.touched": "experts with at least one token in this sample (seed {seed}, {router} routing): {touched} of "
                       "{experts} = {share}",
        "how.expected": "{experts} × (1 − (1 − {k}/{experts})^{batch}) = {experts} × (1 − {missed}) = {expected} "
                        "({share})",
        "how.picks": "{batch} tokens × {k} experts each = {picks} picks; they land on {touched} distinct experts, "
                     "{repeats} of them on one picked before",
        "how.busiest": "the largest of this sample's {experts} loads: {busiest}; the mean over the experts touched, "
                       "{batch} × {k} ÷ {touched} = {mean}",
        "how.weights": "all matmul weights {full} − {experts} × {expert} + {expected} × {expert} = {read} (one expert "
                       "in its {layers} MoE layers: {params} parameters × {bpp} = {expert})",
        "note": "Drawn: one MoE layer's routed experts (DeepSeek-V3 also has 1 shared expert a layer that every token "
                "uses: always read, not drawn). In a decode step each request adds 1 token, and the router picks k "
                "distinct experts for each token; the step reads every expert at least one token picked, once. The "
                "expectation is uniform routing's, OUR CHOICE: each token's k experts a uniformly random set, tokens "
                "independent, so all B tokens miss a given expert with probability (1 − k/E)^B and E(1 − (1 − k/E)^B) "
                "are touched. A trained router is not uniform (its load-balancing loss pushes it towards uniform), and "
                "a skewed one touches fewer experts at the same B. The sample is one seeded draw of routing.route: "
                "each pick drawn by the experts' popularity, skew s mixing uniform and Zipf (1/rank) popularity as "
                "(1 − s) : s, the ranks shuffled by the seed; an expert a token already picked is drawn again. The "
                "naive count B × k takes every pick for a new expert, and can exceed the experts there are. The "
                "weights are the expectation's, the same in every MoE layer: BF16 at 2 bytes a parameter, "
                "DeepSeek-V3's FP8 at 1 byte; GB = 10⁹ bytes.",
    },
}

MODELS = tuple(presets.moe_model_keys())
# The batch slider's stops: powers of two and the halves between, 1 to 512.
BATCHES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
SKEWS = ("0", "0.5", "1")
MAX_PLOTTED = 1_024
CURVE_BATCHES = tuple(sorted({round(2 ** (k / 8)) for k in range(81)}))  # 1 to 1,024, 8 a doubling
SPOKEN_BATCHES = (1, 8, 64, 256, 1_024)
X_RANGE = (round(math.log10(0.8), 4), round(math.log10(MAX_PLOTTED * 1.25), 4))

WIDGET = Widget(
    controls=(
        Select("model", default="deepseek-v3", options=MODELS, names={k: presets.model(k).name for k in MODELS}),
        Range.over("batch", BATCHES, default=64),
        Select("skew", default="0", options=SKEWS, style="buttons"),
        Range("seed", default=1, min=1, max=20),
    ),
    layout=(
        Controls(),
        Readouts(Readout("touched", note="touched_share"), Readout("expected", note="expected_of"),
                 Readout("picks", note="repeats"), Readout("busiest", note="mean_load"),
                 Readout("weights", note="weights_scale")),
        Flag("skewed", tone="note"),
        Svg("grid", caption="grid.caption", label="grid.label"),
        Figure("curve"),
        Derivations("touched", "expected", "picks", "busiest", "weights"),
        Text("note"),
    ),
)


@functools.cache
def expected_curve(routed: int, per_token: int) -> tuple[float, ...]:
    """The expected share touched at each of CURVE_BATCHES (uniform routing)."""
    return tuple(round(routing.expected_touched(routed, per_token, b) / routed, 5) for b in CURVE_BATCHES)


def render(state) -> dict:
    """The moe-experts view for any state (invalid values replaced by defaults)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    m = presets.model(s["model"])
    e = m.experts
    experts, k, batch = e.routed, e.per_token, s["batch"]
    sample = routing.route(experts, k, batch, s["seed"], float(s["skew"]))
    touched = sample.touched
    expected = routing.expected_touched(experts, k, batch)
    picks = batch * k
    read = routing.weights_read_bytes(m, batch)
    active, total = routing.weights_read_bytes(m, 1), model_size.matmul_weight_bytes(m)
    outputs = {
        "touched": output(touched, t["unit.of"].format(touched=fmt_grouped(touched), experts=fmt_grouped(experts))),
        "touched_share": output(touched / experts, t["touched_share"].format(share=fmt_share(touched / experts))),
        "expected": output(expected, f"{expected:,.1f}"),
        "expected_of": output(expected / experts, t["expected_of"].format(share=fmt_share(expected / experts),
                                                                           experts=fmt_grouped(experts))),
        "picks": output(picks, t["unit.picks"].format(picks=fmt_grouped(picks), batch=fmt_grouped(batch), k=k)),
        "repeats": output(picks - touched, t["repeats"].format(repeats=fmt_grouped(picks - touched))),
        "busiest": output(sample.busiest, t["unit.tokens"].format(n=fmt_grouped(sample.busiest))),
        "mean_load": output(sample.mean_load, t["mean_load"].format(mean=fmt_sig(sample.mean_load))),
        "weights": output(read / 1e9, fmt_bytes(read)),
        "weights_scale": output(total / 1e9, t["weights_scale"].format(active=fmt_bytes(active),
                                                                        total=fmt_bytes(total))),
    }
    expert = m.moe_layers * model_size.expert_params(m) * m.weight_bytes_per_param
    derivations = {
        "touched": t["how.touched"].format(seed=s["seed"], router=t[f"skew={s['skew']}"], touched=fmt_grouped(touched),
                                           experts=fmt_grouped(experts), share=fmt_share(touched / experts)),
        "expected": t["how.expected"].format(experts=fmt_grouped(experts), k=k, batch=fmt_grouped(batch),
                                             missed=fmt_chance(routing.missed(experts, k, batch)),
                                             expected=f"{expected:,.1f}", share=fmt_share(expected / experts)),
        "picks": t["how.picks"].format(batch=fmt_grouped(batch), k=k, picks=fmt_grouped(picks),
                                       touched=fmt_grouped(touched), repeats=fmt_grouped(picks - touched)),
        "busiest": t["how.busiest"].format(experts=fmt_grouped(experts), busiest=fmt_grouped(sample.busiest),
                                           batch=fmt_grouped(batch), k=k, touched=fmt_grouped(touched),
                                           mean=fmt_sig(sample.mean_load)),
        "weights": t["how.weights"].format(full=fmt_bytes(total), experts=fmt_grouped(experts),
                                           expert=fmt_bytes(expert), expected=f"{expected:,.1f}", read=fmt_bytes(read),
                                           layers=m.moe_layers,
                                           params=fmt_grouped(model_size.expert_params(m) * m.moe_layers),
                                           bpp=t[f"bytes.{m.weight_bytes_per_param}"]),
    }
    grid = svg.responsive(draw_grid(sample, s["lang"], WIDE), draw_grid(sample, s["lang"], NARROW))
    return view(s, outputs, figures={"curve": curve_figure(m, sample, s)}, svg={"grid": grid},
                flags={"skewed": s["skew"] != "0"}, derivations=derivations)


# --- the experts' grid ---------------------------------------------------------------------------------------------

WIDE, NARROW = 560, 300
MARGIN, GAP, MAX_PITCH = 8, 3, 40  # a cell's pitch is its side plus the gap; the gap keeps cells apart
COLUMNS = {WIDE: 32, NARROW: 16}
HEAD_PX, LEGEND_PX, SWATCH = 13, 11, 12


def level(load: int) -> int:
    """A load's place on the colour scale: 0 for none, then one per doubling (1, 2-3, 4-7, ...)."""
    return load.bit_length()


def level_label(n: int, busiest: int) -> str:
    """The loads a level holds, the top one ending at the busiest: 0, 1, 2–3, 4–7, 32–37."""
    if n <= 1:
        return str(n)
    low, high = 2 ** (n - 1), min(2**n - 1, busiest)
    return fmt_grouped(low) if low == high else f"{fmt_grouped(low)}–{fmt_grouped(high)}"


def level_words(t: dict, n: int, busiest: int) -> str:
    """A level in words, for its title and the text alternative: no token, 1 token, 2–3 tokens."""
    return t[f"level.{n}"] if n <= 1 else t["level.n"].format(loads=level_label(n, busiest))


def opacity(n: int, top: int) -> float:
    """How strongly a level is lit: evenly from 0.3 to 1 over the levels the sample uses."""
    return 1.0 if top <= 1 else round(0.3 + 0.7 * (n - 1) / (top - 1), 2)


def _style(n: int, top: int) -> dict:
    # Every lit cell is outlined in ink, which stands 3:1 from the background and from every shade of the fill in
    # both themes, so a faint cell's edge is seen; an expert no token chose is the background, outlined.
    if n == 0:
        return {"fill": palette.colour("free"), "stroke": palette.colour("outline"), "stroke-width": 1}
    return {"fill": palette.colour("decode"), "fill-opacity": opacity(n, top), "stroke": palette.colour("ink"),
            "stroke-width": 1}


@functools.cache
def cell_paths(experts: int, width: int, top_y: int) -> tuple[str, ...]:
    """Each expert's square as path commands, in rows of the drawing's columns from `top_y` down (the same for every
    sample of a layer: kept, as a move redraws only the colours)."""
    columns = min(experts, COLUMNS[width])
    pitch = min(MAX_PITCH, (width - 2 * MARGIN) / columns)
    side = svg.number(pitch - GAP)
    return tuple(f"M{svg.number(MARGIN + (i % columns) * pitch)} {svg.number(top_y + (i // columns) * pitch)}"
                 f"h{side}v{side}h-{side}z" for i in range(experts))


def draw_grid(sample: routing.Routing, lang: str, width: int) -> str:
    """The layer's experts in rows, lit by load (one path per level of the scale), the heading above and the legend
    of the scale below; a small layer's loads are written under its cells."""
    t = TEXT[lang]
    experts = sample.routed
    columns = min(experts, COLUMNS[width])
    pitch = min(MAX_PITCH, (width - 2 * MARGIN) / columns)
    side = pitch - GAP
    head = t["grid.head"].format(batch=fmt_grouped(sample.tokens), k=sample.per_token,
                                 touched=fmt_grouped(sample.touched), experts=fmt_grouped(experts))
    lines = svg.wrap(head, width - 2 * MARGIN, lambda line: svg.text_width(line, HEAD_PX))
    parts = [svg.text(line, {"x": MARGIN, "y": 17 + i * 17, "class": "svg-label"}) for i, line in enumerate(lines)]
    top_y = 17 * len(lines) + 10
    top = max(1, level(sample.busiest))
    cells: dict[int, list[str]] = {}
    for load, cell in zip(sample.loads, cell_paths(experts, width, top_y)):
        cells.setdefault(level(load), []).append(cell)
    counts = {n: len(d) for n, d in cells.items()}
    items = [(n, t["legend.item.one" if counts[n] == 1 else "legend.item"].format(
        label=level_words(t, n, sample.busiest), n=fmt_grouped(counts[n]))) for n in range(top + 1) if counts.get(n)]
    for n, title in items:
        parts.append(svg.element("path", {"d": "".join(cells[n]), **_style(n, top), "data-level": n},
                                 svg.text_node("title", title)))
    rows = -(-experts // columns)
    y = top_y + rows * pitch
    if experts <= 16:  # few cells, large: each one's load written beneath it
        for i, load in enumerate(sample.loads):
            parts.append(svg.text(fmt_grouped(load), {"x": MARGIN + i * pitch + side / 2, "y": y + 10,
                                                      "class": "svg-muted", "text-anchor": "middle"}))
        y += 16
    legend, y = _legend(t, top, sample.busiest, width, y + 8)
    spoken = alt.sentence(lang, head, [title for _, title in items])
    return svg.document(width, y + 4, spoken, svg.text_node("title", head), *parts, *legend, css_class="moe-grid")


def _legend(t: dict, top: int, busiest: int, width: int, y: float) -> tuple[list[str], float]:
    """The scale's levels as swatches, flowing onto further rows where the width ends; returns them and the y
    below."""
    out = [svg.text(t["legend.head"], {"x": MARGIN, "y": y + 10, "class": "svg-muted"})]
    x = MARGIN + svg.text_width(t["legend.head"], LEGEND_PX) + 8
    for n in range(top + 1):
        label = level_label(n, busiest)
        w = SWATCH + 4 + svg.text_width(label, LEGEND_PX) + 12
        if x + w > width - MARGIN:
            x, y = MARGIN, y + 18
        out.append(svg.element("rect", {"x": round(x, 2), "y": y, "width": SWATCH, "height": SWATCH,
                                        **_style(n, top)}))
        out.append(svg.text(label, {"x": round(x + SWATCH + 4, 2), "y": y + 10, "class": "svg-muted"}))
        x += w
    return out, y + 18


# --- the share touched against the batch ---------------------------------------------------------------------------

def curve_figure(m: presets.Model, sample: routing.Routing, s: dict) -> dict:
    """The expected share touched against the batch (log x), the naive min(1, B·k/E) dashed, and this sample."""
    t = TEXT[s["lang"]]
    experts, k = sample.routed, sample.per_token
    expected = list(expected_curve(experts, k))
    kink = experts / k  # where the naive count reaches every expert
    naive_x = sorted({*CURVE_BATCHES, kink} if 1 <= kink <= MAX_PLOTTED else set(CURVE_BATCHES))
    naive = [round(min(1.0, b * k / experts), 5) for b in naive_x]
    data = [
        {"type": "scatter", "mode": "lines", "name": t["trace.naive"], "x": naive_x, "y": naive,
         "line": {"color": palette.colour("muted"), "width": 2, "dash": "dash"},
         "hovertemplate": f"{t['trace.naive']}<br>B = %{{x:,.0f}}: %{{y:.1%}}<extra></extra>"},
        {"type": "scatter", "mode": "lines", "name": t["trace.expected"], "x": list(CURVE_BATCHES), "y": expected,
         "line": {"color": palette.colour("decode"), "width": 2.5},
         "hovertemplate": f"{t['trace.expected']}<br>B = %{{x:,}}: %{{y:.1%}}<extra></extra>"},
        {"type": "scatter", "mode": "markers", "name": t["trace.sample"], "x": [sample.tokens],
         "y": [round(sample.touched / experts, 5)],
         "marker": {"color": palette.colour("kv"), "size": 11, "symbol": "circle-open", "line": {"width": 3}},
         "hovertemplate": f"{t['trace.sample']}<br>B = %{{x:,}}: %{{y:.1%}}<extra></extra>"},
    ]
    layout = palette.plot_layout({
        "xaxis": {"title": {"text": t["axis.x"]}, "type": "log", "range": list(X_RANGE), "dtick": 1,
                  "fixedrange": True},
        "yaxis": {"title": {"text": t["axis.y"]}, "range": [0, 1.05], "tickformat": ".0%", "fixedrange": True},
        "margin": {"l": 56, "r": 16, "t": 24, "b": 48},
        "height": 320,
        "legend": palette.legend_above(),
        "uirevision": "moe-experts",
    })
    spoken = [t["alt.point"].format(batch=fmt_grouped(b),
                                    expected=fmt_share(routing.expected_touched(experts, k, b) / experts),
                                    naive=fmt_share(min(1.0, b * k / experts))) for b in SPOKEN_BATCHES]
    spoken.append(t["alt.sample"].format(batch=fmt_grouped(sample.tokens), touched=fmt_grouped(sample.touched),
                                         experts=fmt_grouped(experts)))
    return {"data": data, "layout": layout,
            "alt": alt.sentence(s["lang"], t["alt.head"].format(model=m.name), spoken)}
