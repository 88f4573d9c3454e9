"""What sampling costs a server: the bytes and operations of the sampling step beside the decode step it follows.

The physics is sim/techniques/sampling.py (its docstring states the kernel model: FP32 logits, what each pass reads and
writes, what counts as an operation, the sort and the sort-free top-p, and how a batch with per-request settings is
costed) and sim/physics/roofline.py (the decode step). The figure draws the sampling step's share of the step against
the batch for every method.
"""

from __future__ import annotations

from sim.kit import Controls, Figure, Flag, Range, Readouts, Select, Text, Widget, alt, choices, output, palette, view
from sim.page.display import fmt_bytes, fmt_grouped, fmt_ms, fmt_sig
from sim.physics import presets
from sim.techniques import sampling

TEXT = {
    "zh": {
        "title": "采样要服务器付出多少：和 decode 一步放在一起看",
        "batch": "batch（同时 decode 的请求数）",
        "method": "采样方法",
        "method=greedy": "贪心",
        "method=top-k": "top-k（选择）",
        "method=top-p-sort": "top-p（全排序）",
        "method=top-p-reject": "top-p（不排序）",
        "mix": "批里的设置",
        "mix=all": "每个请求都用它",
        "mix=one-whole": "只一个请求用，整批照做",
        "mix=one-split": "只一个请求用，只做那一行",
        "context": "每个请求已缓存的上下文（token）",
        "sampling_ms": "采样一步",
        "decode_ms": "decode 一步（屋顶线）",
        "share": "采样占整步的比例",
        "sampling_bytes": "采样一步读写的字节",
        "sampling_ops": "采样一步的运算次数",
        "intensity": "运算 ÷ 字节",
        "logits_bytes": "一份 logits（B × V，FP32）",
        "from_batch": "采样从这个 batch 起超过整步的 1%",
        "from_batch.none": "到 batch {max_batch} 都不到 1%",
        "from_batch.value": "batch {value}",
        "unit.ops": "次",
        "unit.ops_per_byte": "次/字节",
        "whole": "一个请求要 {method_name}，整批 {rows} 行都跟着做：这一步比只做它自己那一行多读写 {extra}。",
        "note": "logits 按 FP32 算，每个 {logit_bytes} 字节，词表大小取所选模型的。每种方法的核函数都按「至少要搬多少」"
                "计：贪心 = 一遍 argmax；top-k = 温度（读写一遍）+ 基数选择（{passes} 遍计数 + 1 遍收集）；"
                "top-p 全排序 = 温度 + softmax（读两遍、写一遍）+ 基数排序（{passes} 遍，每遍把「概率 + token id」"
                "共 {pair_bytes} 字节读一遍、写一遍）+ 一遍扫描；top-p 不排序 = 温度 + softmax + 拒绝采样 {rounds} 轮"
                "（每轮读两遍；轮数是我们假定的，实际取决于分布）。一次运算 = 对一个元素做一次算术、比较或指数。"
                "这些核函数每字节还不到一次运算，所以时间按字节 ÷ 带宽算：这是下界，不含每次启动核函数的固定开销。"
                "decode 一步是所选模型在这个 batch 和上下文下的屋顶线下界。「整批照做」是 vLLM 最早的 V1 采样器的做法："
                "批里只要有一个请求设了 top-p，整批的 logits 都要排序，每一行还另做一遍 argmax。",
        "curve": "采样占整步的比例随 batch 的变化",
        "trace.method": "{method}",
        "axis.x": "batch（对数刻度）",
        "axis.y": "采样占整步的比例（对数刻度）",
        "alt.point": "{method} 在 batch {batch}：{share}",
        "alt.head": "采样占整步的比例",
    },
    "en": {
        "title": "What sampling costs a server, beside the decode step",
        "batch": "Batch (requests decoding together)",
        "method": "Sampling method",
        "method=greedy": "Greedy",
        "method=top-k": "top-k (selection)",
        "method=top-p-sort": "top-p (full sort)",
        "method=top-p-reject": "top-p (no sort)",
        "mix": "Settings in the batch",
        "mix=all": "Every request uses it",
        "mix=one-whole": "One request does, the whole batch runs it",
        "mix=one-split": "One request does, only its row runs it",
        "context": "Context cached per request (tokens)",
        "sampling_ms": "One sampling step",
        "decode_ms": "One decode step (roofline)",
        "share": "Sampling's share of the step",
        "sampling_bytes": "Bytes the sampling step moves",
        "sampling_ops": "Operations of the sampling step",
        "intensity": "Operations ÷ bytes",
        "logits_bytes": "One copy of the logits (B × V, FP32)",
        "from_batch": "Sampling passes 1% of the step from",
        "from_batch.none": "under 1% up to batch {max_batch}",
        "from_batch.value": "batch {value}",
        "unit.ops": "ops",
        "unit.ops_per_byte": "op/B",
        "whole": "One request asks for {method_name}, and all {rows} rows of the batch go through it: this step "
                 "moves {extra} more than running it on that one row.",
        "note": "Logits in FP32, {logit_bytes} bytes each, over the chosen model's vocabulary. Each method's kernels "
                "are counted at the least they must move: greedy = one argmax pass; top-k = temperature (one read and "
                "write) + radix selection ({passes} counting passes + 1 gathering pass); top-p by a full sort = "
                "temperature + softmax (two reads, one write) + radix sort ({passes} passes, each reading and writing "
                "the {pair_bytes} bytes of a probability and its token id) + one scan; top-p without a sort = "
                "temperature + softmax + {rounds} rounds of rejection sampling (two reads each; the rounds are our "
                "stand-in, in truth they depend on the distribution). An operation is one arithmetic operation, "
                "comparison or exponential on one element. These kernels do less than one operation per byte, so their "
                "time is their bytes over the bandwidth: a lower bound, without each kernel launch's fixed cost. The "
                "decode step is the chosen model's roofline bound at this batch and context. “The whole batch runs it” "
                "is what vLLM's first V1 sampler did: if any request in the batch set top-p, the whole batch's logits "
                "were sorted, and every row took an argmax as well.",
        "curve": "Sampling's share of the step against the batch",
        "trace.method": "{method}",
        "axis.x": "Batch (log scale)",
        "axis.y": "Sampling's share of the step (log scale)",
        "alt.point": "{method} at batch {batch}: {share}",
        "alt.head": "Sampling's share of the step",
    },
}

THRESHOLD = 0.01  # the share the from_batch readout looks for
PAIR_BYTES = sampling.LOGIT_BYTES + sampling.INDEX_BYTES

WIDGET = Widget(
    controls=(
        Range("batch", default=64, min=1, max=sampling.MAX_BATCH, log=True),
        Select("method", default="top-p-sort", options=tuple(sampling.METHODS), style="buttons"),
        Select("mix", default="all", options=sampling.MIXES, style="buttons"),
        choices.model(),
        choices.hardware(),
        Range("context", default=1_024, min=1, max=sampling.MAX_CONTEXT, log=True),
    ),
    layout=(
        Controls(),
        Readouts("sampling_ms", "decode_ms", "share", "from_batch", "sampling_bytes", "sampling_ops", "intensity",
                 "logits_bytes"),
        Flag("whole", tone="note"),
        Figure("curve"),
        Text("note"),
    ),
)

CURVE_BATCHES = tuple(sorted({round(2 ** (k / 4)) for k in range(41)}))  # 1 to 1,024, four points per doubling


def render(state) -> dict:
    """The sampling-cost view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    st = sampling.step(s["model"], s["hardware"], s["batch"], s["method"], s["mix"], s["context"])
    hw = presets.hardware(s["hardware"])
    onward = sampling.share_from_batch(s["model"], s["hardware"], s["method"], THRESHOLD, s["mix"], s["context"])
    split = sampling.step(s["model"], s["hardware"], s["batch"], s["method"], "one-split", s["context"])
    method = t[f"method={s['method']}"]
    outputs = {
        "sampling_ms": output(st.time_s * 1e3, fmt_time(st.time_s)),
        "decode_ms": output(st.decode_s * 1e3, fmt_ms(st.decode_s)),
        "share": output(st.share, f"{fmt_sig(st.share * 100, 3)}%"),
        "from_batch": output(onward or 0, t["from_batch.value"].format(value=onward) if onward
                             else t["from_batch.none"].format(max_batch=fmt_grouped(sampling.MAX_BATCH))),
        "sampling_bytes": output(st.bytes, fmt_bytes(st.bytes)),
        "sampling_ops": output(st.ops, f"{fmt_grouped(st.ops)} {t['unit.ops']}"),
        "intensity": output(st.intensity, f"{st.intensity:.2f} {t['unit.ops_per_byte']}"),
        "logits_bytes": output(st.logits_bytes, fmt_bytes(st.logits_bytes)),
        "method_name": output(0, method),
        "rows": output(st.batch, fmt_grouped(st.batch)),
        "extra": output(st.bytes - split.bytes, fmt_bytes(st.bytes - split.bytes)),
        "logit_bytes": output(sampling.LOGIT_BYTES, f"{sampling.LOGIT_BYTES}"),
        "passes": output(sampling.RADIX_PASSES, f"{sampling.RADIX_PASSES}"),
        "pair_bytes": output(PAIR_BYTES, f"{PAIR_BYTES}"),
        "rounds": output(sampling.REJECTION_ROUNDS, f"{sampling.REJECTION_ROUNDS}"),
    }
    per_logit = " + ".join(f"{rows:,} × {st.vocab:,} × {sampling.bytes_per_logit(m)} B" for m, rows in st.rows())
    derivations = {
        "sampling_bytes": f"{per_logit} = {fmt_bytes(st.bytes)}",
        "sampling_ms": f"{fmt_bytes(st.bytes)} ÷ {hw.bandwidth_bytes_per_s / 1e12:g} TB/s = {fmt_time(st.time_s)}",
        "share": f"{fmt_time(st.time_s)} ÷ ({fmt_ms(st.decode_s)} + {fmt_time(st.time_s)}) = "
                 f"{fmt_sig(st.share * 100, 3)}%",
        "intensity": f"{fmt_grouped(st.ops)} ÷ {fmt_grouped(st.bytes)} = {st.intensity:.2f}",
        "logits_bytes": f"{st.batch:,} × {st.vocab:,} × {sampling.LOGIT_BYTES} B = {fmt_bytes(st.logits_bytes)}",
    }
    flags = {"whole": s["mix"] == "one-whole" and s["method"] != "greedy" and s["batch"] > 1}
    return view(s, outputs, figures={"curve": curve_figure(s, st, s["lang"])}, flags=flags, derivations=derivations)


def fmt_time(seconds: float) -> str:
    """A sampling step's time: milliseconds from 0.01 ms up (0.417 ms, 0.0252 ms), microseconds below (0.297 µs)."""
    return fmt_ms(seconds) if seconds >= 1e-5 else f"{fmt_sig(seconds * 1e6, 3)} µs"


COLOURS = {"greedy": "muted", "top-k": "prefill", "top-p-sort": "decode", "top-p-reject": "kv"}


def curve_figure(s: dict, st: sampling.Step, lang: str) -> dict:
    """Sampling's share of the step against the batch, one line per method, the current point marked."""
    t = TEXT[lang]
    xs = list(CURVE_BATCHES)
    data, spoken = [], []
    for method in sampling.METHODS:
        name = t[f"method={method}"]
        ys = [sampling.step(s["model"], s["hardware"], b, method, s["mix"], s["context"]).share for b in xs]
        dash = "solid" if method == s["method"] else "dot"
        data.append({"type": "scatter", "mode": "lines", "name": name, "x": xs, "y": [round(y, 7) for y in ys],
                     "line": {"color": palette.colour(COLOURS[method]), "dash": dash, "width": 2},
                     "hovertemplate": f"{name}<br>batch %{{x}}: %{{y:.2%}}<extra></extra>"})
        spoken.append(t["alt.point"].format(method=name, batch=xs[-1], share=f"{fmt_sig(ys[-1] * 100, 3)}%"))
    data.append({"type": "scatter", "mode": "markers", "x": [st.batch], "y": [round(st.share, 7)], "showlegend": False,
                 "marker": {"color": palette.colour(COLOURS[s["method"]]), "size": 10}, "hoverinfo": "skip"})
    layout = palette.plot_layout({
        "xaxis": {"title": {"text": t["axis.x"]}, "type": "log", "fixedrange": True, "dtick": 1},
        "yaxis": {"title": {"text": t["axis.y"]}, "type": "log", "fixedrange": True,
                  "tickformat": ".1~p"},  # one significant digit: 0.05%, not 0%, on the decades below 1%
        "margin": {"l": 64, "r": 16, "t": 24, "b": 48},
        "height": 360,
        "legend": palette.legend_above(),
        "uirevision": "curve",
    })
    here = t["alt.point"].format(method=t[f"method={s['method']}"], batch=st.batch,
                                 share=f"{fmt_sig(st.share * 100, 3)}%")
    return {"data": data, "layout": layout, "alt": alt.sentence(lang, t["alt.head"], [here, *spoken])}
