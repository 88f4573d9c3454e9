"""Truncate and reshape: temperature, top-k, top-p and min-p on a synthetic next-token distribution, and a seeded draw.

The physics is sim/techniques/sampling.py (its docstring states every convention: the synthetic Zipf-like logits over
the anchor's vocabulary with the tail in buckets, temperature on logits, the nucleus as the smallest set reaching p,
min-p relative to the top token, ties by token id, the three orders: temperature before or after the textbook chain, or
vLLM V1's min-p first). The figure draws the twenty most
probable tokens and one bar for the rest: the model's distribution at t = 1, the one sampled from, and the draws.
"""

from __future__ import annotations

from sim.kit import Controls, Figure, Flag, Range, Readouts, Select, Text, Widget, alt, output, palette, view
from sim.page.display import fmt_grouped, fmt_pct, fmt_sig
from sim.techniques import sampling

TEXT = {
    "zh": {
        "title": "截断与重塑：温度、top-k、top-p、min-p",
        "distribution": "下一个 token 的分布（合成）",
        "distribution=peaked": "一家独大",
        "distribution=flat": "平坦",
        "distribution=close": "两强相争",
        "temperature": "温度 t（0 = 贪心）",
        "top_k": "top-k（0 = 不用）",
        "top_p": "top-p（1 = 不用）",
        "min_p": "min-p（0 = 不用）",
        "order": "先后顺序",
        "order=temperature-first": "先温度，再截断",
        "order=truncate-first": "先截断，再温度",
        "order=vllm-v1": "vLLM V1：min-p 先于 top-k、top-p",
        "samples": "抽样次数",
        "run": "第几轮（随机种子）",
        "kept_tokens": "留下的 token 数",
        "kept_mass": "留下部分原来的概率 p′（归一化之前）",
        "entropy_bits": "采样分布的熵",
        "top_probability": "最可能的 token 的概率",
        "rest_share": "排在第 20 名之后的 token 合计",
        "unit.bits": "比特",
        "greedy": "温度为 0：贪心，每次都取概率最高的那个 token，截断设置不起作用。",
        "off": "没有任何截断：从整个词表按温度调整后的分布采样。",
        "order_same": "在这组设置下，三种先后顺序得到的分布完全一样：顺序在这里不起作用。",
        "long_tail": "排在第 20 名之后的 token 每个都微不足道，合起来却占了 {rest_share} 的概率："
                     "抽样时落到它们身上并不稀奇。",
        "note": "合成分布：词表大小取锚点模型的 {vocab} 个 token；第 r 名的 logit 按类 Zipf 规律随 r 下降，"
                "前 {head} 名逐个列出（加了固定种子的抖动），其余按名次分桶、桶内 token 等概率。温度作用在 logit 上。"
                "几种截断依次是 top-k、top-p（对 top-k 留下的部分归一化后再算）、min-p（阈值 = min-p × 最高概率）；"
                "top-p 取累计概率达到 p 的最小集合，概率相同的 token 按 token id 排先后。「先温度」在温度 t 下截断，"
                "「先截断」在 t = 1 下截断、再对留下的加温度：各家引擎做法不同。"
                "抽样用固定种子，同样的设置总得到同样的结果。",
        "figure": "概率最高的 20 个 token 和其余部分：模型原始分布（t = 1）、实际采样的分布、抽样结果",
        "trace.model": "模型原始分布（t = 1）",
        "trace.after": "实际采样的分布",
        "trace.draws": "抽样结果（{samples} 次）",
        "axis.x": "按概率排名",
        "axis.y": "概率",
        "rest": "其余",
        "alt.rank": "第 {rank} 名：原始 {model}，采样 {after}，抽中 {draws}",
        "alt.rest": "其余：原始 {model}，采样 {after}，抽中 {draws}",
        "derive.kept_mass": "留下的 {kept} 个 token 的 p 之和 = {mass}",
        "derive.entropy_bits": "−Σ p log₂ p，对留下的 {kept} 个 token 求和 = {bits} 比特",
    },
    "en": {
        "title": "Truncate and reshape: temperature, top-k, top-p, min-p",
        "distribution": "Next-token distribution (synthetic)",
        "distribution=peaked": "One clear favourite",
        "distribution=flat": "Flat",
        "distribution=close": "Two close favourites",
        "temperature": "Temperature t (0 = greedy)",
        "top_k": "top-k (0 = off)",
        "top_p": "top-p (1 = off)",
        "min_p": "min-p (0 = off)",
        "order": "Order",
        "order=temperature-first": "Temperature, then truncation",
        "order=truncate-first": "Truncation, then temperature",
        "order=vllm-v1": "vLLM V1: min-p before top-k, top-p",
        "samples": "Draws",
        "run": "Run (random seed)",
        "kept_tokens": "Tokens kept",
        "kept_mass": "Their probability before renormalising, p′",
        "entropy_bits": "Entropy of the distribution sampled",
        "top_probability": "Probability of the top token",
        "rest_share": "Tokens ranked below 20th, together",
        "unit.bits": "bits",
        "greedy": "Temperature 0 is greedy: the top token every time, and the truncation settings do nothing.",
        "off": "No truncation: the draws come from the whole vocabulary at this temperature.",
        "order_same": "At these settings the three orders give exactly the same distribution: the order does nothing "
                      "here.",
        "long_tail": "Tokens ranked below 20th are each negligible, yet together they hold {rest_share}: a draw "
                     "landing among them is no rare event.",
        "note": "A synthetic distribution over the anchor's vocabulary of {vocab} tokens: the logit of rank r falls "
                "with r by a Zipf-like law; the first {head} ranks are listed one by one (with a seeded jitter), the "
                "rest in buckets of ranks whose tokens are equally likely. Temperature acts on the logits. The "
                "truncations apply as top-k, then top-p (over what top-k kept, renormalised), then min-p (threshold = "
                "min-p × the top probability); top-p keeps the smallest set whose probabilities reach p, and tokens of "
                "equal probability are ranked by token id. “Temperature, then truncation” truncates at temperature t; "
                "“truncation, then temperature” truncates at t = 1 and heats what is left: engines differ. The draws "
                "come from a fixed seed, so the same settings always give the same run.",
        "figure": "The twenty most probable tokens and the rest: the model's distribution (t = 1), the one sampled "
                  "from, and the draws",
        "trace.model": "model (t = 1)",
        "trace.after": "sampled from",
        "trace.draws": "draws ({samples})",
        "axis.x": "Rank by probability",
        "axis.y": "Probability",
        "rest": "rest",
        "alt.rank": "rank {rank}: model {model}, sampled from {after}, drawn {draws}",
        "alt.rest": "the rest: model {model}, sampled from {after}, drawn {draws}",
        "derive.kept_mass": "Σ p over the {kept} tokens kept = {mass}",
        "derive.entropy_bits": "−Σ p log₂ p over the {kept} tokens kept = {bits} bits",
    },
}

WIDGET = Widget(
    controls=(
        Select("distribution", default="peaked", options=tuple(sampling.SHAPES), style="buttons"),
        Range("temperature", default=1.0, min=0, max=sampling.MAX_TEMPERATURE, step=0.05),
        Range("top_k", default=0, min=0, max=sampling.MAX_K),
        Range("top_p", default=1.0, min=0.01, max=1, step=0.01),
        Range("min_p", default=0.0, min=0, max=1, step=0.01),
        Select("order", default="temperature-first", options=sampling.ORDERS, style="buttons"),
        Range("samples", default=1_000, min=100, max=10_000, log=True),
        Range("run", default=1, min=1, max=100),
    ),
    layout=(
        Controls(),
        Flag("greedy", tone="note"),
        Flag("off", tone="note"),
        Flag("order_same", tone="note", controls=("order",)),
        Readouts("kept_tokens", "kept_mass", "entropy_bits", "top_probability", "rest_share"),
        Flag("long_tail", tone="note"),
        Figure("figure"),
        Text("note"),
    ),
)

LONG_TAIL = 0.1  # the flag's threshold: this much of the sampling mass below the 20th token


def render(state) -> dict:
    """The sampling view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    model = sampling.distribution(s["distribution"])
    after = sampling.distribution(s["distribution"], s["temperature"], s["top_k"], s["top_p"], s["min_p"], s["order"])
    drawn = sampling.drawn_shares(after, s["samples"], seed=f"{sampling.SEED} {s['run']}")
    rest = after.rest_probability()
    outputs = {
        "kept_tokens": output(after.kept_tokens, fmt_grouped(after.kept_tokens)),
        "kept_mass": output(after.kept_mass, fmt_share(after.kept_mass)),
        "entropy_bits": output(after.entropy_bits, f"{after.entropy_bits:.2f} {t['unit.bits']}"),
        "top_probability": output(after.top_probability, fmt_share(after.top_probability)),
        "rest_share": output(rest, fmt_share(rest)),
        "vocab": output(sampling.anchor_vocab(), fmt_grouped(sampling.anchor_vocab())),
        "head": output(sampling.HEAD, f"{sampling.HEAD}"),
    }
    kept = fmt_grouped(after.kept_tokens)
    derivations = {
        "kept_mass": t["derive.kept_mass"].format(kept=kept, mass=fmt_share(after.kept_mass)),
        "entropy_bits": t["derive.entropy_bits"].format(kept=kept, bits=f"{after.entropy_bits:.2f}"),
    }
    flags = {
        "greedy": s["temperature"] == 0,
        "off": s["temperature"] > 0 and s["top_k"] == 0 and s["top_p"] == 1 and s["min_p"] == 0,
        "order_same": all(sampling.distribution(s["distribution"], s["temperature"], s["top_k"], s["top_p"],
                                                s["min_p"], order).same_as(after)
                          for order in sampling.ORDERS if order != s["order"]),
        "long_tail": rest >= LONG_TAIL,
    }
    return view(s, outputs, figures={"figure": figure(model, after, drawn, s["samples"], s["lang"])}, flags=flags,
                derivations=derivations)


def fmt_share(fraction: float) -> str:
    """A probability as a percentage with three significant digits: 90.3%, 0.481%, 100%."""
    if fraction >= 0.9995:
        return "100%" if fraction >= 1 - 1e-12 else f"{fraction * 100:.2f}%"
    return f"{fmt_sig(fraction * 100, 3)}%"


def figure(model: sampling.Result, after: sampling.Result, drawn, samples: int, lang: str) -> dict:
    """Grouped bars by rank: the model at t = 1, the distribution sampled from, and the share of draws."""
    t = TEXT[lang]
    shown = sampling.SHOWN_RANKS
    labels = [str(r) for r in range(1, shown + 1)] + [t["rest"]]

    def shares(result: sampling.Result) -> list[float]:
        return [result.probability_of_rank(r) for r in range(1, shown + 1)] + [result.rest_probability(shown)]

    drawn = list(drawn)
    columns = (
        (t["trace.model"], shares(model), "weights"),
        (t["trace.after"], shares(after), "decode"),
        (t["trace.draws"].format(samples=fmt_grouped(samples)), drawn, "sampled"),
    )
    data = [{"type": "bar", "name": name, "x": labels, "y": [round(v, 5) for v in values],
             "marker": {"color": palette.colour(colour)},
             "hovertemplate": f"{name}<br>%{{x}}: %{{y:.2%}}<extra></extra>"} for name, values, colour in columns]
    layout = palette.plot_layout({
        "barmode": "group",
        "xaxis": {"title": {"text": t["axis.x"]}, "fixedrange": True, "type": "category"},
        "yaxis": {"title": {"text": t["axis.y"]}, "rangemode": "tozero", "tickformat": ".0%", "fixedrange": True},
        "margin": {"l": 56, "r": 16, "t": 24, "b": 48},
        "height": 300,
        "legend": palette.legend_above(),
        "uirevision": "figure",
    })
    model_shares, after_shares = columns[0][1], columns[1][1]
    spoken = [t["alt.rank"].format(rank=r + 1, model=fmt_share(model_shares[r]), after=fmt_share(after_shares[r]),
                                   draws=fmt_pct(drawn[r], 1)) for r in range(3)]
    spoken.append(t["alt.rest"].format(model=fmt_share(model_shares[-1]), after=fmt_share(after_shares[-1]),
                                       draws=fmt_pct(drawn[-1], 1)))
    return {"data": data, "layout": layout, "alt": alt.sentence(lang, t["figure"], spoken)}
