"""Speculative sampling's accept/reject rule, run: the output follows the target p, not the draft q.

The rule and its run are sim/techniques/speculative.py (`sample_rule`). Five candidate next tokens; the target's and the
draft's weights are editable (each set normalised to a distribution), with presets that fill both in. A temperature
reshapes both alike (sim/techniques/sampling.py `heat`), as an engine applies a request's sampling settings to the
target's and the draft's logits, so α can be read at any temperature. A seeded run of `samples` draws is drawn beside p
and q as a histogram.
"""

from __future__ import annotations

from sim.kit import Controls, Figure, Flag, Range, Readouts, Select, Text, Widget, alt, output, palette, view
from sim.page.display import fmt_grouped, fmt_pct
from sim.techniques import sampling, speculative

TOKENS = 5
# target weights p, then draft weights q, in percent (speculative's example, which sim/questions/ asks about too)
PRESETS = {name: (speculative.EXAMPLE_TARGET, q) for name, q in speculative.EXAMPLE_DRAFTS.items()}
P_FIELDS = tuple(f"p{i + 1}" for i in range(TOKENS))
Q_FIELDS = tuple(f"q{i + 1}" for i in range(TOKENS))

TEXT = {
    "zh": {
        "title": "接受还是拒绝：输出按目标分布 p 走，不按草稿 q",
        "preset": "例子",
        "preset=close": "草稿很像目标",
        "preset=flat": "草稿什么都不懂（均匀）",
        "preset=overconfident": "草稿过分自信",
        "preset=opposite": "草稿和目标相反",
        "preset=custom": "自定义",
        "p1": "目标 p：「垫子」的权重",
        "p2": "目标 p：「沙发」的权重",
        "p3": "目标 p：「地板」的权重",
        "p4": "目标 p：「床」的权重",
        "p5": "目标 p：「屋顶」的权重",
        "q1": "草稿 q：「垫子」的权重",
        "q2": "草稿 q：「沙发」的权重",
        "q3": "草稿 q：「地板」的权重",
        "q4": "草稿 q：「床」的权重",
        "q5": "草稿 q：「屋顶」的权重",
        "temperature": "温度 t（p 和 q 一起调）",
        "samples": "抽样次数",
        "run": "第几轮（随机种子）",
        "tokens": "垫子,沙发,地板,床,屋顶",
        "note": "「猫坐在____上」的下一个词，只有五个候选。每次抽样：先从 q 抽一个猜测 x；q(x) ≤ p(x) 就保留，"
                "否则以 p(x)/q(x) 的概率保留；被拒就从 norm(max(0, p − q)) 重抽一个顶上。每组权重各自归一化成概率分布，"
                "再按温度 t 调整：每个概率取 1/t 次方后重新归一化，和对 logits 除以 t 一样。"
                "随机数来自固定种子，同样的设置总得到同样的结果。",
        "alpha": "接受率 α = Σ min(p, q)",
        "accepted_share": "这轮抽样中被保留的猜测",
        "distance_to_target": "输出直方图与 p 的距离（总变差）",
        "distance_to_draft": "输出直方图与 q 的距离（总变差）",
        "draft_gap": "q 与 p 本身的距离（= 1 − α）",
        "empty_p": "p 的权重全是 0，暂时按五个词等权计算，调高任意一个就恢复。",
        "empty_q": "q 的权重全是 0，暂时按五个词等权计算，调高任意一个就恢复。",
        "same": "q 和 p 一模一样：每个猜测都被保留，α = 1。",
        "figure": "五个候选词的概率：目标 p、草稿 q、实际输出",
        "trace.p": "目标 p",
        "trace.q": "草稿 q",
        "trace.out": "输出（{samples} 次）",
        "axis.y": "概率",
        "alt.token": "{token}：p {p}、q {q}、输出 {out}",
    },
    "en": {
        "title": "Accept or reject: the output follows the target p, not the draft q",
        "preset": "Example",
        "preset=close": "A draft close to the target",
        "preset=flat": "A draft that knows nothing (uniform)",
        "preset=overconfident": "An overconfident draft",
        "preset=opposite": "A draft opposite to the target",
        "preset=custom": "Custom",
        "p1": "Target p: weight of “mat”",
        "p2": "Target p: weight of “sofa”",
        "p3": "Target p: weight of “floor”",
        "p4": "Target p: weight of “bed”",
        "p5": "Target p: weight of “roof”",
        "q1": "Draft q: weight of “mat”",
        "q2": "Draft q: weight of “sofa”",
        "q3": "Draft q: weight of “floor”",
        "q4": "Draft q: weight of “bed”",
        "q5": "Draft q: weight of “roof”",
        "temperature": "Temperature t (applied to p and q alike)",
        "samples": "Draws",
        "run": "Run (random seed)",
        "tokens": "mat,sofa,floor,bed,roof",
        "note": "The next word of “The cat sat on the ___”, with five candidates. Each draw: a guess x comes from q; "
                "it is kept if q(x) ≤ p(x), else kept with probability p(x)/q(x); a rejected guess is replaced by a "
                "draw from norm(max(0, p − q)). Each set of weights is normalised to a distribution, then "
                "reshaped by the temperature t: each probability raised to the power 1/t and renormalised, as "
                "dividing the logits by t does. The random numbers come from a fixed seed, so the same settings "
                "always give the same run.",
        "alpha": "Acceptance rate α = Σ min(p, q)",
        "accepted_share": "Guesses kept in this run",
        "distance_to_target": "Output histogram's distance from p (total variation)",
        "distance_to_draft": "Output histogram's distance from q (total variation)",
        "draft_gap": "Distance between q and p themselves (= 1 − α)",
        "empty_p": "All of p's weights are 0, so the five words count as equal until you raise one.",
        "empty_q": "All of q's weights are 0, so the five words count as equal until you raise one.",
        "same": "q is exactly p: every guess is kept, α = 1.",
        "figure": "The five candidates' probabilities: target p, draft q, and the output",
        "trace.p": "target p",
        "trace.q": "draft q",
        "trace.out": "output ({samples} draws)",
        "axis.y": "Probability",
        "alt.token": "{token}: p {p}, q {q}, output {out}",
    },
}

WIDGET = Widget(
    controls=(
        Select("preset", default="overconfident", options=(*PRESETS, "custom"), style="buttons"),
        *(Range(name, default=PRESETS["overconfident"][0][i], min=0, max=100) for i, name in enumerate(P_FIELDS)),
        *(Range(name, default=PRESETS["overconfident"][1][i], min=0, max=100) for i, name in enumerate(Q_FIELDS)),
        Range("temperature", default=1.0, min=0.05, max=2.0, step=0.05),
        Range("samples", default=10_000, min=100, max=speculative.MAX_SAMPLES, log=True),
        Range("run", default=1, min=1, max=100),
    ),
    layout=(
        Controls(),
        Flag("empty_p"),
        Flag("empty_q"),
        Flag("same", tone="note"),
        Readouts("alpha", "accepted_share", "distance_to_target", "distance_to_draft", "draft_gap"),
        Figure("figure"),
        Text("note"),
    ),
)


def render(state) -> dict:
    """The spec-sampling view for any state (invalid values replaced by defaults or clamped)."""
    s = settle_preset(WIDGET.coerce(state), WIDGET.changed(state))
    p_weights, q_weights = [s[n] for n in P_FIELDS], [s[n] for n in Q_FIELDS]
    empty_p, empty_q = not any(p_weights), not any(q_weights)
    p, q = (heated([1] * TOKENS if empty else weights, s["temperature"])
            for weights, empty in ((p_weights, empty_p), (q_weights, empty_q)))
    run = speculative.sample_rule(p, q, s["samples"], seed=f"{speculative.SEED} {s['run']}")
    gap = speculative.total_variation(run.p, run.q)
    outputs = {
        "alpha": output(run.alpha, fmt_pct(run.alpha, 1)),
        "accepted_share": output(run.accepted_share, fmt_pct(run.accepted_share, 1)),
        "distance_to_target": output(run.distance_to_target, fmt_pct(run.distance_to_target, 1)),
        "distance_to_draft": output(run.distance_to_draft, fmt_pct(run.distance_to_draft, 1)),
        "draft_gap": output(gap, fmt_pct(gap, 1)),
    }
    derivations = {
        "alpha": f"Σ min(p, q) = {' + '.join(fmt_pct(min(a, b), 0) for a, b in zip(run.p, run.q))} "
                 f"= {fmt_pct(run.alpha, 1)}",
        "accepted_share": f"{fmt_grouped(run.accepted)} ÷ {fmt_grouped(run.samples)} "
                          f"= {fmt_pct(run.accepted_share, 1)}",
        "draft_gap": f"½ Σ |q − p| = 1 − α = {fmt_pct(gap, 1)}",
    }
    flags = {"empty_p": empty_p, "empty_q": empty_q, "same": run.p == run.q}
    return view(s, outputs, figures={"figure": histogram_figure(run, s["lang"])}, flags=flags,
                derivations=derivations)


def heated(weights, temperature: float) -> tuple[float, ...]:
    """A set of weights as a distribution at `temperature` (at 1, the weights normalised, untouched by heat)."""
    p = speculative.normalise(weights)
    return p if temperature == 1 else sampling.heat(p, temperature)


def settle_preset(s: dict, changed: str | None) -> dict:
    """The state with a preset's weights filled in, or the preset switched to custom if a weight was just edited."""
    s = dict(s)
    if changed in P_FIELDS + Q_FIELDS:
        s["preset"] = "custom"
    if s["preset"] != "custom":
        p, q = PRESETS[s["preset"]]
        s.update(zip(P_FIELDS, p))
        s.update(zip(Q_FIELDS, q))
    return s


def histogram_figure(run: speculative.RuleRun, lang: str) -> dict:
    """Grouped bars per candidate: p, q and the run's histogram."""
    t = TEXT[lang]
    tokens = t["tokens"].split(",")

    def bars(name: str, values, colour: str) -> dict:
        return {"type": "bar", "name": name, "x": tokens, "y": [round(v, 4) for v in values],
                "marker": {"color": colour},
                "hovertemplate": f"{name}<br>%{{x}}: %{{y:.1%}}<extra></extra>"}

    data = [
        bars(t["trace.p"], run.p, palette.colour("target")),
        bars(t["trace.q"], run.q, palette.colour("draft")),
        bars(t["trace.out"].format(samples=fmt_grouped(run.samples)), run.histogram, palette.colour("sampled")),
    ]
    layout = palette.plot_layout({
        "barmode": "group",
        "yaxis": {"title": {"text": t["axis.y"]}, "rangemode": "tozero", "tickformat": ".0%", "fixedrange": True},
        "xaxis": {"fixedrange": True},
        "margin": {"l": 56, "r": 16, "t": 24, "b": 40},
        "height": 300,
        "legend": palette.legend_above(),
        "uirevision": "figure",
    })
    spoken = [t["alt.token"].format(token=tok, p=fmt_pct(p, 1), q=fmt_pct(q, 1), out=fmt_pct(o, 1))
              for tok, p, q, o in zip(tokens, run.p, run.q, run.histogram)]
    return {"data": data, "layout": layout, "alt": alt.sentence(lang, t["figure"], spoken)}
