"""Speculative decoding's speed-up: Leviathan's formulas with the verify step priced by the roofline at batch B.

The physics is sim/techniques/speculative.py (its docstring states every convention: what a verify step reads and
computes, each draft kind's cost, the recurrent state's slots). The target is the anchor model. The figure draws the
speed-up against the batch, for the chosen γ and for the best γ at each batch, with the break-even line at 1.
"""

from __future__ import annotations

from sim.kit import (
    Controls,
    Figure,
    Flag,
    Range,
    Readout,
    Readouts,
    Select,
    Text,
    Widget,
    alt,
    choices,
    output,
    palette,
    view,
)
from sim.page.display import fmt_grouped, fmt_ms, fmt_sig
from sim.physics import presets, roofline
from sim.techniques import speculative

TEXT = {
    "zh": {
        "title": "投机解码能快多少：草稿、接受率和 batch",
        "alpha": "接受率 α（每个猜测被保留的概率）",
        "gamma": "每次猜的 token 数 γ",
        "draft": "草稿",
        "draft=mtp": "模型自带的 MTP 层",
        "draft=small": "小模型（目标的 1/100）",
        "draft=ngram": "n-gram 查找",
        "draft=custom": "自定义 c",
        "c": "草稿一步 ÷ 目标 decode 一步（c）",
        "batch": "batch（同时 decode 的请求数）",
        "context": "每个请求已缓存的上下文（token）",
        "note": "目标模型是锚点模型 {model}，每一步都是屋顶线下限（峰值算力、满带宽，每个算子各自取界再相加）。"
                "草稿的代价：MTP 层 = 它的注意力层、MLP、拼接用的 fc，"
                "再加上与主模型共用的 LM head，每猜一个 token 都重读一遍；"
                "小模型 = 目标权重和计算量的 1/100，不算它的注意力；n-gram 在 GPU 上不跑模型，记为 0。"
                "验证一步：每个请求 γ + 1 个 token 一起过权重，每个位置都算 logits，已缓存的 KV 读一次；"
                "递归状态读一次、每个位置写一份（vLLM 投机时每个请求留 γ + 1 个状态槽）。被拒猜测的 KV 由下一轮覆盖。",
        "tokens_per_call": "每次调用目标产出的 token（期望）",
        "speedup": "加速比（屋顶线，这个 batch）",
        "paper_speedup": "加速比（Thm 3.8，验证按一步 decode 算）",
        "flops_ratio": "每个 token 的计算量 ÷ 普通 decode",
        "best_gamma": "这个 batch 下最好的 γ",
        "best_speedup": "那时加速比 {value}",
        "c_value": "草稿代价 c",
        "decode_ms": "目标 decode 一步",
        "verify_ms": "验证一步（γ + 1 个 token / 请求）",
        "draft_ms": "草稿一步",
        "call_ms": "一次调用（γ 步草稿 + 1 步验证）",
        "plain_tokens_per_s": "不投机：每个请求的速度",
        "spec_tokens_per_s": "投机：每个请求的速度",
        "verify_tokens": "验证一步过权重的 token 数",
        "critical_batch": "这张卡的拐点（矩阵乘变成算力受限的 token 数）",
        "break_even_batch": "从这个 batch 起不再变快",
        "break_even.none": "到 {max_batch} 都还更快",
        "break_even.value": "batch {value}",
        "slower": "这个 batch 下投机比不投机还慢：验证一步 {verify_ms}，比 decode 一步 {decode_ms} 贵太多，"
                  "每次调用多出的 token 补不回来。",
        "past_ridge": "验证一步要过 {verify_tokens} 个 token，已经超过拐点 {critical_batch}：矩阵乘变成算力受限，"
                      "验证不再「和一步 decode 差不多」。",
        "memory": "这个 batch 在一张 {gpu} 上放不下（权重、每个请求的 KV 与 γ + 1 份递归状态超过显存）："
                  "这里的时间是假设放得下时的屋顶线值。",
        "unit.tok_s": "token/s",
        "curve": "加速比随 batch 的变化",
        "trace.gamma": "γ = {gamma}",
        "trace.best": "每个 batch 最好的 γ",
        "trace.even": "持平（1×）",
        "axis.x": "batch（对数刻度）",
        "axis.y": "加速比",
        "alt.point": "batch {batch}：{speedup}",
        "alt.head": "γ = {gamma} 时的加速比",
    },
    "en": {
        "title": "How much faster speculative decoding is: the draft, the acceptance rate and the batch",
        "alpha": "Acceptance rate α (the chance a guess is kept)",
        "gamma": "Tokens guessed per call γ",
        "draft": "Draft",
        "draft=mtp": "The model's own MTP layer",
        "draft=small": "A small model (1/100 of the target)",
        "draft=ngram": "n-gram lookup",
        "draft=custom": "Custom c",
        "c": "One draft step ÷ one target decode step (c)",
        "batch": "Batch (requests decoding together)",
        "context": "Context cached per request (tokens)",
        "note": "The target is the anchor model, {model}, and every step is a roofline lower bound (peak compute, "
                "full bandwidth, each operation bounded on its own and the bounds added). What a draft costs: the MTP "
                "layer is its attention layer, MLP and joining fc plus the LM head it shares with the target, read "
                "again for every guess; the small model has 1/100 of the target's weights and arithmetic, its "
                "attention left out; n-gram lookup runs no model on the GPU and counts as 0. A verify step sends "
                "γ + 1 tokens per request through the weights with logits at every position, and reads the cached "
                "KV once; the recurrent state is read once and written once per position (vLLM keeps γ + 1 state "
                "slots per request while speculating). A rejected guess's KV is overwritten by the next call.",
        "tokens_per_call": "Tokens per target call (expected)",
        "speedup": "Speed-up (roofline, at this batch)",
        "paper_speedup": "Speed-up (Thm 3.8, verify priced as one decode step)",
        "flops_ratio": "Arithmetic per token ÷ plain decoding's",
        "best_gamma": "Best γ at this batch",
        "best_speedup": "a speed-up of {value} there",
        "c_value": "Draft cost c",
        "decode_ms": "One target decode step",
        "verify_ms": "One verify step (γ + 1 tokens per request)",
        "draft_ms": "One draft step",
        "call_ms": "One call (γ draft steps + 1 verify step)",
        "plain_tokens_per_s": "Without speculation, per request",
        "spec_tokens_per_s": "With speculation, per request",
        "verify_tokens": "Tokens through the weights in a verify step",
        "critical_batch": "This GPU's ridge (tokens at which the matmuls turn compute-bound)",
        "break_even_batch": "No longer faster from batch",
        "break_even.none": "still faster at {max_batch}",
        "break_even.value": "batch {value}",
        "slower": "At this batch speculation is slower than plain decoding: a verify step takes {verify_ms}, so much "
                  "more than a decode step's {decode_ms} that the extra tokens per call do not make up for it.",
        "past_ridge": "A verify step sends {verify_tokens} tokens through the weights, past the ridge at "
                      "{critical_batch}: the matmuls are compute-bound, and verifying no longer costs about one "
                      "decode step.",
        "memory": "This batch does not fit on one {gpu} (the weights and each request's KV and γ + 1 recurrent states "
                  "exceed its memory): the times here are the roofline's as if it did.",
        "unit.tok_s": "tok/s",
        "curve": "Speed-up against the batch",
        "trace.gamma": "γ = {gamma}",
        "trace.best": "the best γ at each batch",
        "trace.even": "break-even (1×)",
        "axis.x": "Batch (log scale)",
        "axis.y": "Speed-up",
        "alt.point": "batch {batch}: {speedup}",
        "alt.head": "speed-up at γ = {gamma}",
    },
}

TARGET = "qwen3.8-27b"  # the anchor: the only preset with an MTP layer
DRAFT_FIELDS = ("c",)  # what picking a draft fills in

WIDGET = Widget(
    controls=(
        Range("alpha", default=0.8, min=0, max=1, step=0.01),
        Range("gamma", default=4, min=1, max=speculative.MAX_GAMMA),
        Select("draft", default="mtp", options=speculative.DRAFTS, style="buttons"),
        Range("c", default=0.066, min=0, max=1, step=0.001),
        Range("batch", default=1, min=1, max=speculative.MAX_BATCH, log=True),
        Range("context", default=1_024, min=1, max=speculative.MAX_CONTEXT, log=True),
        choices.hardware(),
    ),
    layout=(
        Controls(),
        Flag("memory"),
        Flag("slower"),
        Flag("past_ridge", tone="note"),
        Readouts("tokens_per_call", "speedup", "paper_speedup", "flops_ratio",
                 Readout("best_gamma", note="best_speedup"), "break_even_batch", "c_value", "decode_ms",
                 "verify_ms", "draft_ms", "call_ms", "plain_tokens_per_s", "spec_tokens_per_s", "verify_tokens",
                 "critical_batch"),
        Figure("curve"),
        Text("note"),
    ),
)

CURVE_BATCHES = tuple(sorted({round(2 ** (k / 4)) for k in range(37)}))  # 1 to 512, four points per doubling


def render(state) -> dict:
    """The spec-decode view for any state (invalid values replaced by defaults or clamped)."""
    s = settle_draft(WIDGET.coerce(state), WIDGET.changed(state))
    t = TEXT[s["lang"]]
    m, hw = presets.model(TARGET), presets.hardware(s["hardware"])
    r = speculation(s)
    critical = roofline.critical_batch(m, hw)
    verify_tokens = s["batch"] * (s["gamma"] + 1)
    best = r.at(gamma=r.best_gamma)
    even = r.break_even_batch
    plain = 1 / r.decode_s
    outputs = {
        "model": output(0, m.name),
        "gpu": output(0, hw.short_name),
        "max_batch": output(speculative.MAX_BATCH, f"{speculative.MAX_BATCH}"),
        "tokens_per_call": output(r.tokens_per_call, fmt_sig(r.tokens_per_call, 3)),
        "speedup": output(r.speedup, f"{r.speedup:.2f}×"),
        "paper_speedup": output(r.paper_speedup, f"{r.paper_speedup:.2f}×"),
        "flops_ratio": output(r.flops_ratio, f"{r.flops_ratio:.2f}×"),
        "best_gamma": output(r.best_gamma, f"{r.best_gamma}"),
        "best_speedup": output(best.speedup, t["best_speedup"].format(value=f"{best.speedup:.2f}×")),
        "break_even_batch": output(even or 0, t["break_even.value"].format(value=even) if even
                                   else t["break_even.none"].format(max_batch=speculative.MAX_BATCH)),
        "c_value": output(r.c, fmt_sig(r.c, 3)),
        "decode_ms": output(r.decode_s * 1e3, fmt_ms(r.decode_s)),
        "verify_ms": output(r.verify_s * 1e3, fmt_ms(r.verify_s)),
        "draft_ms": output(r.draft_step.step_s * 1e3, fmt_ms(r.draft_step.step_s)),
        "call_ms": output(r.call_s * 1e3, fmt_ms(r.call_s)),
        "plain_tokens_per_s": output(plain, f"{fmt_sig(plain, 3)} {t['unit.tok_s']}"),
        "spec_tokens_per_s": output(r.tokens_per_s, f"{fmt_sig(r.tokens_per_s, 3)} {t['unit.tok_s']}"),
        "verify_tokens": output(verify_tokens, fmt_grouped(verify_tokens)),
        "critical_batch": output(critical, fmt_grouped(critical)),
    }
    a, g, c = s["alpha"], s["gamma"], r.c
    e = r.tokens_per_call
    derivations = {
        "tokens_per_call": f"(1 − {a:g}^{g + 1}) ÷ (1 − {a:g}) = {fmt_sig(e, 3)}" if a < 1 else f"γ + 1 = {g + 1}",
        "speedup": f"{fmt_sig(e, 3)} × {fmt_ms(r.decode_s)} ÷ ({g} × {fmt_ms(r.draft_step.step_s)} + "
                   f"{fmt_ms(r.verify_s)}) = {r.speedup:.2f}×",
        "paper_speedup": f"{fmt_sig(e, 3)} ÷ ({g} × {fmt_sig(c, 3)} + 1) = {r.paper_speedup:.2f}×",
        "flops_ratio": f"({g} × {fmt_sig(r.draft_step.c_hat, 3)} + {g} + 1) ÷ {fmt_sig(e, 3)} = {r.flops_ratio:.2f}×",
        "c_value": f"{fmt_ms(r.draft_step.step_s)} ÷ {fmt_ms(r.decode_s)} = {fmt_sig(c, 3)}",
        "call_ms": f"{g} × {fmt_ms(r.draft_step.step_s)} + {fmt_ms(r.verify_s)} = {fmt_ms(r.call_s)}",
        "spec_tokens_per_s": f"{fmt_sig(e, 3)} ÷ {fmt_ms(r.call_s)} = {fmt_sig(r.tokens_per_s, 3)} {t['unit.tok_s']}",
        "plain_tokens_per_s": f"1 ÷ {fmt_ms(r.decode_s)} = {fmt_sig(plain, 3)} {t['unit.tok_s']}",
        "verify_tokens": f"{s['batch']} × ({g} + 1) = {fmt_grouped(verify_tokens)}",
    }
    flags = {"memory": not r.fits, "slower": r.speedup <= 1, "past_ridge": verify_tokens >= critical}
    return view(s, outputs, figures={"curve": curve_figure(r, s["lang"])}, flags=flags, derivations=derivations)


def speculation(s: dict) -> speculative.Speculation:
    return speculative.Speculation(presets.model(TARGET), presets.hardware(s["hardware"]), alpha=s["alpha"],
                                   gamma=s["gamma"], draft=s["draft"], batch=s["batch"], context=s["context"],
                                   c_custom=s["c"])


def settle_draft(s: dict, changed: str | None) -> dict:
    """The state with the draft's c filled in at this batch, or the draft switched to custom if c was just edited."""
    s = dict(s)
    if changed in DRAFT_FIELDS:
        s["draft"] = "custom"
    if s["draft"] != "custom":
        s["c"] = WIDGET.control("c").coerce(speculation(s).c)
    return s


def curve_figure(r: speculative.Speculation, lang: str) -> dict:
    """Speed-up against the batch: at the chosen γ, at the best γ of each batch, and the line at 1."""
    t = TEXT[lang]
    gains = [r.gains(b) for b in CURVE_BATCHES]
    at_gamma = [g[r.gamma - 1] for g in gains]
    at_best = [max(g) for g in gains]
    xs = list(CURVE_BATCHES)

    def line(name: str, ys: list[float], colour: str, dash: str = "solid") -> dict:
        return {"type": "scatter", "mode": "lines", "name": name, "x": xs, "y": [round(y, 4) for y in ys],
                "line": {"color": colour, "dash": dash, "width": 2},
                "hovertemplate": f"{name}<br>batch %{{x}}: %{{y:.2f}}×<extra></extra>"}

    data = [
        line(t["trace.gamma"].format(gamma=r.gamma), at_gamma, palette.colour("decode")),
        line(t["trace.best"], at_best, palette.colour("prefill"), "dot"),
        line(t["trace.even"], [1.0] * len(xs), palette.colour("muted"), "dash"),
        {"type": "scatter", "mode": "markers", "x": [r.batch], "y": [round(r.speedup, 4)], "showlegend": False,
         "marker": {"color": palette.colour("decode"), "size": 10}, "hoverinfo": "skip"},
    ]
    layout = palette.plot_layout({
        "xaxis": {"title": {"text": t["axis.x"]}, "type": "log", "fixedrange": True, "dtick": 1},  # no minor labels
        "yaxis": {"title": {"text": t["axis.y"]}, "rangemode": "tozero", "fixedrange": True},
        "margin": {"l": 56, "r": 16, "t": 24, "b": 48},
        "height": 340,
        "legend": palette.legend_above(),
        "uirevision": "curve",
    })
    marks = (1, 4, 16, 64, 256, 512)
    spoken = [t["alt.point"].format(batch=b, speedup=f"{at_gamma[CURVE_BATCHES.index(b)]:.2f}×") for b in marks]
    return {"data": data, "layout": layout,
            "alt": alt.sentence(lang, t["alt.head"].format(gamma=r.gamma), spoken)}



