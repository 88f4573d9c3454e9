"""One all-reduce's time against its size (sim/physics/parallel.py): the formula (the measured small-message floor plus
the ring term 2(n-1)/n x size / bandwidth, NVIDIA/nccl-tests doc/PERFORMANCE.md) beside Vidur's measured medians
(eager NCCL through torch.distributed) where the link has them, the bus bandwidth of the time, and where the ring
term overtakes the floor: below that size an all-reduce costs its floor whatever it carries (latency-bound), above
it the link's bandwidth sets its time (bandwidth-bound).
"""

from __future__ import annotations

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
    Text,
    Widget,
    alt,
    output,
    palette,
    view,
)
from sim.page.display import fmt_grouped, fmt_sig
from sim.physics import parallel

TEXT = {
    "zh": {
        "title": "一次 all-reduce 要多久：随消息大小变化",
        "link": "链路",
        "gpus": "参与的 GPU 数",
        "size": "消息大小（字节）",
        "size_line": "消息：{size_text}",
        "formula": "公式：延迟下限 + 环形项",
        "measured": "实测（Vidur 中位数）",
        "floor": "延迟下限",
        "ring": "环形项（只算带宽）",
        "busbw": "总线带宽",
        "regime": "这个大小受什么限制",
        "busbw.measured": "按实测时间算",
        "busbw.formula": "按公式时间算",
        "regime.latency": "延迟受限",
        "regime.bandwidth": "带宽受限",
        "crossover": "分界：{size}",
        "not_measured": "没有实测",
        "no_curve": "没有实测：Vidur 没在这条链路上测过 all-reduce（没有只走 PCIe 的机器，也没有 B200），只能看公式。",
        "no_count": "没有实测：这条链路的数据里没有这个 GPU 数，只能看公式。",
        "past": "没有实测：这个大小超出了测过的最大消息（{largest}），只能看公式。",
        "below": "这个大小比测过的最小消息（{smallest}）还小：实测一栏给的是那个最小消息的中位数"
                 "（那一段曲线是平的，受延迟限制）。",
        "provenance_line": "这条链路的延迟下限：{provenance}",
        "floor.nvlink-h100": "在 H100 DGX（Vidur 的 h100_dgx，8 张 H100）上实测，用所选 GPU 数的那条曲线；"
                             "带宽是 NVLink 4 每张卡单向 450 GB/s（jax-ml/scaling-book）。",
        "floor.nvlink-a100": "在 A100 DGX（Vidur 的 a100_dgx，8 张 80GB A100，全部由 NVLink 相连）上实测，"
                             "用所选 GPU 数的那条曲线；带宽是 NVLink 3 每张卡单向 300 GB/s（jax-ml/scaling-book）。",
        "floor.nvlink-b200": "我们的选择：没有人测过 B200 整机，延迟下限借 H100 DGX（h100_dgx）的，也没有实测曲线；"
                             "带宽是 NVLink 5 每张卡单向 900 GB/s（jax-ml/scaling-book）。",
        "floor.pcie-gen5-x16": "我们的选择：没有人测过只走 PCIe 的环，下限借 Vidur 那台 4 张 H100 NVL 的机器"
                               "（h100_pairwise_nvlink，两两之间有 NVLink，两对之间靠一条较慢的链路，这里当作 PCIe "
                               "Gen5），不论选几张卡都取它 4 张卡时的值；带宽是 PCIe 5.0 x16 单向 63.0 GB/s"
                               "（32 GT/s × 16 条 × 128/130 ÷ 8）。",
        "floor.pcie-gen4-x16": "我们的选择：没有人测过只走 PCIe 的环，下限借 Vidur 那台 4 张 A100 PCIe 的机器"
                               "（a100_pairwise_nvlink，Azure NC96ads A100 v4，两两之间有 NVLink，两对之间靠一条较慢"
                               "的链路，这里当作 PCIe Gen4），不论选几张卡都取它 4 张卡时的值；带宽是 PCIe 4.0 x16 "
                               "单向 31.5 GB/s（16 GT/s × 16 条 × 128/130 ÷ 8）。",
        "note": "数据：microsoft/vidur（MIT 许可）的 data/profiling/network。它用 torch.distributed 以 NCCL 后端 "
                "eager 地调用 all-reduce（不用 CUDA graph），FP16 元素，一台机器里的几张卡；每个大小取 3 个样本的"
                "中位数，每个样本又是 11 次连续调用的 kernel 时间中位数（PyTorch profiler），只记 0 号卡。"
                "两个测过的大小之间按对数时间对对数大小线性插值。公式（NVIDIA/nccl-tests 的 doc/PERFORMANCE.md）："
                "时间 ≈ 延迟下限 + 2(n−1)/n × 大小 ÷ 带宽，带宽指每张卡链路的单向带宽；延迟下限取 1 MiB 以内"
                "各个实测中位数的中位数。总线带宽 = 大小 ÷ 时间 × 2(n−1)/n，可以直接和链路带宽比。"
                "推理引擎自己的 all-reduce kernel（如 vLLM 的 custom all-reduce）、NVSwitch 里做归约的 NVLS、"
                "以及 CUDA graph 都能压低小消息的延迟下限，这份数据里都没有。KiB = 1,024 字节，"
                "MiB = 1,048,576 字节；GB/s = 10⁹ 字节每秒。",
        "how.formula": "{floor} + {factor} × {size} ÷ {bandwidth} = {floor} + {ring} = {total}",
        "how.measured.at": "Vidur 在 {setup} 上 {n} 张卡、{bytes} 字节的中位数：{total}",
        "how.measured.between": "在 {s0}（{t0}）和 {s1}（{t1}）之间，对数时间对对数大小线性插值：{total}",
        "how.measured.below": "小于测过的最小消息 {s0}：取它的中位数 {total}",
        "how.floor": "{setup} 上 {n} 张卡、1 MiB 以内各点的实测中位数（{times}）再取中位数 = {floor}",
        "how.ring": "{factor} × {size} ÷ {bandwidth} = {ring}",
        "how.busbw": "{bytes} 字节 ÷ {time} × {factor} = {busbw}",
        "how.regime": "环形项 {ring} {compare} 延迟下限 {floor}：{regime}；分界 = {floor} × {bandwidth} ÷ {factor} "
                      "= {crossover}",
        "figure": "一次 all-reduce 的时间随大小的变化（双对数刻度）",
        "axis.x": "消息大小（对数刻度）",
        "axis.y": "时间（微秒，对数刻度）",
        "trace.formula": "公式",
        "trace.floor": "延迟下限",
        "trace.ring": "环形项",
        "trace.measured": "实测（Vidur，中位数）",
        "trace.chosen": "所选大小",
        "region.latency": "延迟受限",
        "region.bandwidth": "带宽受限",
        "alt.head": "{link} 上 {n} 张卡的一次 all-reduce，时间随大小",
        "alt.point": "{size}：公式 {formula}，实测 {measured}",
        "alt.point.formula": "{size}：公式 {formula}",
        "alt.crossover": "延迟受限和带宽受限的分界在 {size}",
    },
    "en": {
        "title": "How long one all-reduce takes, against its size",
        "link": "Link",
        "gpus": "GPUs taking part",
        "size": "Message size (bytes)",
        "size_line": "Message: {size_text}",
        "formula": "Formula: floor + ring term",
        "measured": "Measured (Vidur's median)",
        "floor": "Latency floor",
        "ring": "Ring term (bandwidth alone)",
        "busbw": "Bus bandwidth",
        "regime": "What bounds this size",
        "busbw.measured": "of the measured time",
        "busbw.formula": "of the formula's time",
        "regime.latency": "latency-bound",
        "regime.bandwidth": "bandwidth-bound",
        "crossover": "crossover at {size}",
        "not_measured": "not measured",
        "no_curve": "Not measured: Vidur measured no all-reduce on this link (no machine with PCIe alone, no B200); "
                    "only the formula applies.",
        "no_count": "Not measured: this link's data has no curve at this many GPUs; only the formula applies.",
        "past": "Not measured: this size is past the largest message measured ({largest}); only the formula "
                "applies.",
        "below": "This size is below the smallest message measured ({smallest}): the measured readout gives that "
                 "message's median (the curve is flat there, latency-bound).",
        "provenance_line": "This link's latency floor: {provenance}",
        "floor.nvlink-h100": "measured on an H100 DGX (Vidur's h100_dgx, 8 H100s), on the curve of the GPU count "
                             "chosen; the bandwidth is NVLink 4's 450 GB/s per GPU each way (jax-ml/scaling-book).",
        "floor.nvlink-a100": "measured on an A100 DGX (Vidur's a100_dgx, 8 80GB A100s all connected by NVLink), on "
                             "the curve of the GPU count chosen; the bandwidth is NVLink 3's 300 GB/s per GPU each "
                             "way (jax-ml/scaling-book).",
        "floor.nvlink-b200": "OUR CHOICE: no B200 node was measured, so the floor is the H100 DGX's (h100_dgx) and "
                             "there is no measured curve; the bandwidth is NVLink 5's 900 GB/s per GPU each way "
                             "(jax-ml/scaling-book).",
        "floor.pcie-gen5-x16": "OUR CHOICE: no ring over PCIe alone was measured; the floor is that of Vidur's 4 H100 "
                               "NVL GPUs (h100_pairwise_nvlink: NVLink between pairs, a slower link between the "
                               "pairs, read here as PCIe Gen5), at 4 GPUs whatever the count chosen; the bandwidth is "
                               "PCIe 5.0 x16's 63.0 GB/s each way (32 GT/s × 16 lanes × 128/130 ÷ 8).",
        "floor.pcie-gen4-x16": "OUR CHOICE: no ring over PCIe alone was measured; the floor is that of Vidur's 4 A100 "
                               "PCIe GPUs (a100_pairwise_nvlink, Azure NC96ads A100 v4: NVLink between pairs, a slower "
                               "link between the pairs, read here as PCIe Gen4), at 4 GPUs whatever the count chosen; "
                               "the bandwidth is PCIe 4.0 x16's 31.5 GB/s each way (16 GT/s × 16 lanes × 128/130 ÷ 8).",
        "note": "Data: microsoft/vidur (MIT licence), data/profiling/network: one all-reduce called eagerly through "
                "torch.distributed with the NCCL backend (no CUDA graphs), of FP16 elements among the GPUs of one "
                "node; each size's time is the median of 3 samples, each the median kernel time of 11 back-to-back "
                "calls (PyTorch profiler), rank 0's only. Between two sizes measured, log-time is interpolated "
                "linearly in log-size. Formula (NVIDIA/nccl-tests doc/PERFORMANCE.md): time ≈ floor + 2(n−1)/n × size "
                "÷ bandwidth, the bandwidth being one GPU's link each way; the floor is the median of the measured "
                "medians up to 1 MiB. Bus bandwidth = size ÷ time × 2(n−1)/n, comparable with the link's speed. "
                "Engines' own all-reduce kernels (vLLM's custom all-reduce), in-switch reduction (NVLS) and CUDA "
                "graphs lower the small-message floor; none of them is in this data. KiB = 1,024 bytes, "
                "MiB = 1,048,576 bytes; GB/s = 10⁹ bytes a second.",
        "how.formula": "{floor} + {factor} × {size} ÷ {bandwidth} = {floor} + {ring} = {total}",
        "how.measured.at": "Vidur's median for {bytes} bytes among {n} GPUs of {setup}: {total}",
        "how.measured.between": "between {s0} ({t0}) and {s1} ({t1}), log-time linear in log-size: {total}",
        "how.measured.below": "below the smallest message measured, {s0}: its median, {total}",
        "how.floor": "median of the medians up to 1 MiB on {setup} among {n} GPUs ({times}) = {floor}",
        "how.ring": "{factor} × {size} ÷ {bandwidth} = {ring}",
        "how.busbw": "{bytes} bytes ÷ {time} × {factor} = {busbw}",
        "how.regime": "ring term {ring} {compare} floor {floor}: {regime}; crossover = {floor} × {bandwidth} ÷ "
                      "{factor} = {crossover}",
        "figure": "One all-reduce's time against its size (log–log)",
        "axis.x": "Message size (log scale)",
        "axis.y": "Time (µs, log scale)",
        "trace.formula": "formula",
        "trace.floor": "latency floor",
        "trace.ring": "ring term",
        "trace.measured": "measured (Vidur, median)",
        "trace.chosen": "size chosen",
        "region.latency": "latency-bound",
        "region.bandwidth": "bandwidth-bound",
        "alt.head": "One all-reduce among {n} GPUs on {link}, time against size",
        "alt.point": "{size}: formula {formula}, measured {measured}",
        "alt.point.formula": "{size}: formula {formula}",
        "alt.crossover": "latency-bound below {size}, bandwidth-bound above",
    },
}

LINKS = ("nvlink-h100", "nvlink-a100", "nvlink-b200", "pcie-gen5-x16", "pcie-gen4-x16")
GPUS = ("2", "4", "8")
KIB, MIB = 1_024, 1_048_576
SIZES = tuple(2**k for k in range(10, 27))  # 1 KiB to 64 MiB
SPOKEN_SIZES = (KIB, 64 * KIB, MIB, 16 * MIB, 64 * MIB)  # the sizes the figure's text alternative reads out
X_RANGE = (math.log10(SIZES[0]) - 0.15, math.log10(SIZES[-1]) + 0.15)
X_TICKS = tuple(4**k for k in range(5, 14))  # 1 KiB, 4 KiB, ... 64 MiB

WIDGET = Widget(
    controls=(
        Select("link", default="nvlink-h100", options=LINKS,
               names={k: parallel.interconnect(k).short_name for k in LINKS}),
        Select("gpus", default="8", options=GPUS, style="buttons", names={g: g for g in GPUS}),
        Range.over("size", SIZES, default=MIB),
    ),
    layout=(
        Controls(),
        Text("size_line", tone="body"),
        Readouts("formula", "measured", "floor", "ring", Readout("busbw", note="busbw_of"),
                 Readout("regime", note="crossover")),
        Flag("no_curve", tone="note"),
        Flag("no_count", tone="note"),
        Flag("past", tone="note"),
        Flag("below", tone="note"),
        Figure("figure"),
        Derivations("formula", "measured", "floor", "ring", "busbw", "regime"),
        Text("provenance_line"),
        Text("note"),
    ),
)


def binary(n: float) -> str:
    """Bytes in KiB or MiB, to three significant digits without trailing zeros: 1 KiB, 8.34 MiB."""
    for unit, scale in (("MiB", MIB), ("KiB", KIB)):
        if n >= scale:
            text = fmt_sig(n / scale)
            return f"{text.rstrip('0').rstrip('.') if '.' in text else text} {unit}"
    return f"{fmt_grouped(n)} B"


def duration(seconds: float) -> str:
    """Microseconds below a millisecond (38.1 µs), milliseconds above (3.73 ms)."""
    return f"{fmt_sig(seconds * 1e6)} µs" if seconds < 1e-3 else f"{fmt_sig(seconds * 1e3)} ms"


def factor_text(n: int) -> str:
    """2(n-1)/n as written: 2·7/8."""
    return f"2·{n - 1}/{n}"


def measured(ic: parallel.Interconnect, n: int, size: int) -> tuple[float | None, str | None]:
    """The measured median at `size` (interpolated) and why it is missing or stands in ("no_curve", "no_count",
    "past", "below"), or (seconds, None)."""
    if ic.curve is None:
        return None, "no_curve"
    if n not in parallel.measured_gpus(ic.curve):
        return None, "no_count"
    points = parallel.measured_all_reduce(ic.curve, n)
    if size > points[-1][0]:
        return None, "past"
    return parallel.all_reduce_s(ic, size, n, "measured"), "below" if size < points[0][0] else None


def render(state) -> dict:
    """The all-reduce view for any state (invalid values replaced by defaults)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    ic, n, size = parallel.interconnect(s["link"]), int(s["gpus"]), s["size"]
    bandwidth = ic.bandwidth_bytes_per_s
    factor = parallel.ring_factor(n)
    formula = parallel.all_reduce_s(ic, size, n, "formula")
    floor = parallel.floor_for(ic, n)
    ring = factor * size / bandwidth
    seen, why = measured(ic, n, size)
    timed = formula if seen is None else seen
    busbw = parallel.bus_bandwidth(size, timed, n)
    crossover = floor * bandwidth / factor
    bound = "bandwidth" if ring >= floor else "latency"
    curve = parallel.measured_all_reduce(ic.curve, n) if why not in ("no_curve", "no_count") else ()

    outputs = {
        "size_text": output(size, f"{binary(size)} ({fmt_grouped(size)} B)"),
        "formula": output(formula * 1e6, duration(formula)),
        "measured": output(seen * 1e6 if seen is not None else 0, duration(seen) if seen is not None
                           else t["not_measured"]),
        "floor": output(floor * 1e6, duration(floor)),
        "ring": output(ring * 1e6, duration(ring)),
        "busbw": output(busbw / 1e9, f"{fmt_sig(busbw / 1e9)} GB/s"),
        "busbw_of": output(0 if seen is None else 1, t["busbw.formula" if seen is None else "busbw.measured"]),
        "regime": output(ring / floor, t[f"regime.{bound}"]),
        "crossover": output(crossover, t["crossover"].format(size=binary(crossover))),
        "provenance": output(floor * 1e6, t[f"floor.{ic.key}"]),
        "largest": output(curve[-1][0] if curve else 0, binary(curve[-1][0]) if curve else "—"),
        "smallest": output(curve[0][0] if curve else 0, binary(curve[0][0]) if curve else "—"),
    }
    flags = {name: why == name for name in ("no_curve", "no_count", "past", "below")}
    bw_text = f"{fmt_sig(bandwidth / 1e9)} GB/s"
    k = parallel.floor_gpus(ic, n)
    floor_times = sorted(sec for b, sec in parallel.measured_all_reduce(ic.floor, k) if b <= parallel.FLOOR_BYTES)
    derivations = {
        "formula": t["how.formula"].format(floor=duration(floor), factor=factor_text(n), size=binary(size),
                                           bandwidth=bw_text, ring=duration(ring), total=duration(formula)),
        "measured": measured_derivation(ic, n, size, seen, why, curve, t),
        "floor": t["how.floor"].format(setup=ic.floor, n=k, floor=duration(floor),
                                       times=", ".join(fmt_sig(sec * 1e6) for sec in floor_times) + " µs"),
        "ring": t["how.ring"].format(factor=factor_text(n), size=binary(size), bandwidth=bw_text, ring=duration(ring)),
        "busbw": t["how.busbw"].format(bytes=fmt_grouped(size), time=duration(timed), factor=factor_text(n),
                                       busbw=f"{fmt_sig(busbw / 1e9)} GB/s"),
        "regime": t["how.regime"].format(ring=duration(ring), compare="≥" if bound == "bandwidth" else "<",
                                         floor=duration(floor), regime=t[f"regime.{bound}"], bandwidth=bw_text,
                                         factor=factor_text(n), crossover=binary(crossover)),
    }
    return view(s, outputs, figures={"figure": figure(ic, n, size, floor, crossover, curve, s)}, flags=flags,
                derivations=derivations)


def measured_derivation(ic, n: int, size: int, seen: float | None, why: str | None, curve, t: dict) -> str:
    if seen is None:
        return t[why].format(largest=binary(curve[-1][0]) if curve else "—")
    if why == "below":
        return t["how.measured.below"].format(s0=binary(curve[0][0]), total=duration(seen))
    sizes = dict(curve)
    if size in sizes:
        return t["how.measured.at"].format(setup=ic.curve, n=n, bytes=fmt_grouped(size), total=duration(seen))
    (s0, t0), (s1, t1) = next((a, b) for a, b in zip(curve, curve[1:]) if a[0] < size < b[0])
    return t["how.measured.between"].format(s0=binary(s0), t0=duration(t0), s1=binary(s1), t1=duration(t1),
                                            total=duration(seen))


def _paper_x(size: float) -> float:
    return round((math.log10(size) - X_RANGE[0]) / (X_RANGE[1] - X_RANGE[0]), 4)


def figure(ic, n: int, size: int, floor: float, crossover: float, curve, s: dict) -> dict:
    """Log–log time against size: the formula, its floor and ring term, the measured medians, the size chosen, and
    the latency-bound and bandwidth-bound sides of the crossover."""
    t = TEXT[s["lang"]]
    formula_us = [parallel.all_reduce_s(ic, b, n, "formula") * 1e6 for b in SIZES]
    ring_us = [parallel.ring_factor(n) * b / ic.bandwidth_bytes_per_s * 1e6 for b in SIZES]
    chosen_us = parallel.all_reduce_s(ic, size, n, "formula") * 1e6
    labels = [binary(b) for b in SIZES]

    def line(name: str, ys, colour: str, dash: str, width: float = 2) -> dict:
        return {"type": "scatter", "mode": "lines", "name": name, "x": list(SIZES), "y": [round(y, 4) for y in ys],
                "customdata": labels, "line": {"color": palette.colour(colour), "width": width, "dash": dash},
                "hovertemplate": f"{name}<br>%{{customdata}}: %{{y:.3g}} µs<extra></extra>"}

    data = [
        line(t["trace.floor"], [floor * 1e6] * len(SIZES), "muted", "dash", 1.5),
        line(t["trace.ring"], ring_us, "muted", "dot", 1.5),
        line(t["trace.formula"], formula_us, "roof", "solid"),
    ]
    if curve:
        data.append({"type": "scatter", "mode": "markers", "name": t["trace.measured"],
                     "x": [b for b, _ in curve], "y": [round(sec * 1e6, 4) for _, sec in curve],
                     "customdata": [binary(b) for b, _ in curve],
                     "marker": {"color": palette.colour("prefill"), "size": 7},
                     "hovertemplate": f"{t['trace.measured']}<br>%{{customdata}}: %{{y:.3g}} µs<extra></extra>"})
    shown = formula_us + [sec * 1e6 for _, sec in curve]
    y_range = [round(math.log10(min(shown) / 1.6), 4), round(math.log10(max(shown) * 1.6), 4)]
    # The size chosen, as two traces whose points alone move with the size (no layout shape, no per-size hover
    # text): a size move then only moves points, which the page draws with Plotly.animate rather than redrawing.
    data.append({"type": "scatter", "mode": "lines", "name": t["trace.chosen"], "x": [size, size],
                 "y": [round(10 ** y_range[0], 4), round(10 ** y_range[1], 4)], "showlegend": False,
                 "hoverinfo": "skip", "line": {"color": palette.colour("decode"), "width": 1.5, "dash": "dot"}})
    data.append({"type": "scatter", "mode": "markers", "name": t["trace.chosen"], "x": [size],
                 "y": [round(chosen_us, 4)],
                 "marker": {"color": palette.colour("decode"), "size": 12, "symbol": "circle-open",
                            "line": {"width": 3, "color": palette.colour("decode")}},
                 "hovertemplate": f"{t['trace.chosen']}<br>%{{x:,}} B: %{{y:.3g}} µs<extra></extra>"})
    shapes = []
    annotations = []
    cross = _paper_x(crossover)
    if 0 < cross < 1:
        shapes.append({"type": "rect", "xref": "paper", "yref": "paper", "x0": cross, "x1": 1, "y0": 0, "y1": 1,
                       "fillcolor": palette.colour("region-compute"), "line": {"width": 0}, "layer": "below"})
        annotations.append(_label(0.01, "left", t["region.latency"], "muted"))
        annotations.append(_label(0.99, "right", t["region.bandwidth"], "region-compute-ink"))
    else:
        annotations.append(_label(0.01, "left", t["region.latency" if cross >= 1 else "region.bandwidth"], "muted"))
    layout = palette.plot_layout({
        "xaxis": {"title": {"text": t["axis.x"]}, "type": "log", "range": [round(x, 4) for x in X_RANGE],
                  "tickvals": list(X_TICKS), "ticktext": [binary(b) for b in X_TICKS], "fixedrange": True},
        "yaxis": {"title": {"text": t["axis.y"]}, "type": "log", "range": y_range, "fixedrange": True,
                  "dtick": 1},  # powers of ten only: a log axis's in-between digits are drawn at 9 px
        "shapes": shapes,
        "annotations": annotations,
        "margin": {"l": 56, "r": 16, "t": 24, "b": 48},
        "height": 340,
        "legend": palette.legend_above(),
        "uirevision": "all-reduce",
    })
    measured_at = dict(curve)
    spoken = []
    for b in SPOKEN_SIZES:
        f = duration(parallel.all_reduce_s(ic, b, n, "formula"))
        m, _ = measured(ic, n, b)
        if m is not None and b >= curve[0][0]:
            spoken.append(t["alt.point"].format(size=binary(b), formula=f, measured=duration(measured_at.get(b, m))))
        else:
            spoken.append(t["alt.point.formula"].format(size=binary(b), formula=f))
    spoken.append(t["alt.crossover"].format(size=binary(crossover)))
    head = t["alt.head"].format(n=n, link=ic.short_name)
    return {"data": data, "layout": layout, "alt": alt.sentence(s["lang"], head, spoken)}


def _label(x: float, anchor: str, text: str, colour: str) -> dict:
    """A region's name at the top of the plot, against its edge."""
    return {"xref": "paper", "yref": "paper", "x": x, "y": 0.98, "xanchor": anchor, "yanchor": "top", "text": text,
            "showarrow": False, "bgcolor": palette.colour("surface"), "borderpad": 2,
            "font": {"color": palette.colour(colour), "size": 12}}
