"""Phase table: one request (a short question, a long answer) split into its prefill and its decode steps.

Convention (sim/serving/serving.py): the prompt is one prefill step (its time is the TTFT); each answer token
is one batch-1 decode step, step i attending to prompt + i cached tokens; TPOT is the mean step.
Recurrent state in FP32, as the anchor model keeps it. A step's time is the sum over its operations
(sim/physics/roofline.py), so a long prompt's prefill is "mostly compute-bound (mixed)": its matmuls and attention
are compute-bound, its state write memory-bound; the bound cell names the bound of most of the time and its
note, like the derivation, the split.
"""

from __future__ import annotations

from sim.kit import Controls, Derivations, Flag, Range, Row, Table, Text, Widget, capacity, choices, output, view
from sim.page.display import fmt_bytes, fmt_duration, fmt_flops, fmt_grouped, fmt_ms, fmt_share, fmt_sig
from sim.physics import model_size, presets, roofline
from sim.serving import serving

STATE_DTYPE = "fp32"

TEXT = {
    "zh": {
        "title": "一次请求，两个阶段：prefill 读题，decode 作答",
        "prompt_tokens": "问题长度（token）",
        "output_tokens": "回答长度（token）",
        "caption": "同一个模型、同一张卡；decode 一步只为 1 个新 token 计算，"
                   "第 i 步看到问题加前 i 个回答 token 的缓存。",
        "col.measure": "指标",
        "col.prefill": "Prefill（读题）",
        "col.decode": "Decode（逐个写答案）",
        "row.tokens": "一次处理多少",
        "row.shape": "矩阵形状（MLP 升维那一层）",
        "row.intensity": "算术强度",
        "row.bound": "瓶颈",
        "row.time": "耗时",
        "row.share": "占整次请求的时间",
        "row.mfu": "算力利用率（屋顶线上限）",
        "row.latency": "决定的延迟指标",
        "row.request": "整次请求 = TTFT + 回答长度 × TPOT",
        "cell.per_token": "每 token {decode_ms_per_token}",
        "ridge_note": "这张卡的拐点：{ridge}。一个算子的算术强度低于它就带宽受限——prefill 里矩阵乘的强度约等于"
                      "问题的 token 数，问题要长过拐点，prefill 的矩阵乘才会算力受限。",
        "prefill_ms": "prefill 耗时",
        "decode_total_ms": "decode 总耗时",
        "decode_ms_per_token": "每 token（TPOT）",
        "prefill_intensity": "prefill 算术强度",
        "decode_intensity": "decode 算术强度（整段回答）",
        "prefill_share": "prefill 占比",
        "decode_share": "decode 占比",
        "prefill_mfu": "prefill 算力利用率",
        "decode_mfu": "decode 算力利用率",
        "request_ms": "整次请求",
        "ridge": "拐点",
        "prefill_bound": "prefill 瓶颈",
        "decode_bound": "decode 瓶颈（整段回答）",
        "compute": "算力受限", "memory": "带宽受限", "mixed": "{bound}为主（混合）",
        "cell.prefill_ops": "{prefill_ops}", "cell.decode_ops": "{decode_ops}",
        "ops_alike": "{ops}都{bound}", "ops_split": "{compute_ops}算力受限，{memory_ops}带宽受限",
        "op.matmuls": "矩阵乘", "op.attention": "注意力", "op.state": "递归状态",
        "list_sep": "、", "list_last": "和", "clause_sep": "；",
        "op_time": "{op} {time}（{bound}）",
        "bound_share": "算力受限的时间 {compute} ÷ {total} = {share} → {bound}",
        "decode_ops_steps": "首步 {first}；末步 {last}",
        "overlapped": "（若各算子完全重叠：max({compute}, {memory}) = {time}）",
        "at_once": "一次送进 {p} 个 token", "per_step": "每步 1 个 token，共 {n} 步",
        "steps": "{n} 步，第 i 步缓存 {p} + i 个 token：首步 {a}，末步 {b}，合计 {t}",
        "share": "{x} ÷ ({a} + {b}) = {p}",
        "mfu": "{f} ÷ {t} ÷ {pi} TFLOP/s = {p}",
    },
    "en": {
        "title": "One request, two phases: prefill reads, decode writes",
        "prompt_tokens": "Prompt length (tokens)",
        "output_tokens": "Answer length (tokens)",
        "caption": "Same model, same GPU; each decode step computes 1 new token, step i attending to the prompt "
                   "plus the first i answer tokens.",
        "col.measure": "Measure",
        "col.prefill": "Prefill (read the prompt)",
        "col.decode": "Decode (write the answer)",
        "row.tokens": "Input per step",
        "row.shape": "Matrix shape (MLP up projection)",
        "row.intensity": "Arithmetic intensity",
        "row.bound": "Bottleneck",
        "row.time": "Time",
        "row.share": "Share of the request",
        "row.mfu": "Compute utilization (roofline bound)",
        "row.latency": "Latency it sets",
        "row.request": "Whole request = TTFT + answer length × TPOT",
        "cell.per_token": "per token {decode_ms_per_token}",
        "ridge_note": "This GPU's ridge point: {ridge}. An operation whose intensity is below it is memory-bound; "
                      "the intensity of prefill's matmuls is about its token count, so only a prompt longer than "
                      "the ridge makes them compute-bound.",
        "prefill_ms": "Prefill time",
        "decode_total_ms": "Decode total",
        "decode_ms_per_token": "Per token (TPOT)",
        "prefill_intensity": "Prefill intensity",
        "decode_intensity": "Decode intensity (whole answer)",
        "prefill_share": "Prefill share",
        "decode_share": "Decode share",
        "prefill_mfu": "Prefill utilization",
        "decode_mfu": "Decode utilization",
        "request_ms": "Whole request",
        "ridge": "Ridge point",
        "prefill_bound": "Prefill bound",
        "decode_bound": "Decode bound (whole answer)",
        "compute": "compute-bound", "memory": "memory-bound", "mixed": "mostly {bound} (mixed)",
        "cell.prefill_ops": "{prefill_ops}", "cell.decode_ops": "{decode_ops}",
        "ops_alike": "{ops}: all {bound}", "ops_split": "{compute_ops} compute-bound, {memory_ops} memory-bound",
        "op.matmuls": "matmuls", "op.attention": "attention", "op.state": "recurrent state",
        "list_sep": ", ", "list_last": " and ", "clause_sep": "; ",
        "op_time": "{op} {time} ({bound})",
        "bound_share": "time compute-bound {compute} ÷ {total} = {share} → {bound}",
        "decode_ops_steps": "first step {first}; last step {last}",
        "overlapped": " (if the kernels overlapped perfectly: max({compute}, {memory}) = {time})",
        "at_once": "{p} tokens at once", "per_step": "1 token per step, {n} steps",
        "steps": "{n} steps, step i has {p} + i tokens cached: first {a}, last {b}, total {t}",
        "share": "{x} ÷ ({a} + {b}) = {p}",
        "mfu": "{f} ÷ {t} ÷ {pi} TFLOP/s = {p}",
    },
}

WIDGET = Widget(
    controls=(
        choices.model(),
        choices.hardware(),
        Range("prompt_tokens", default=10, min=1, max=32_768, log=True),
        Range("output_tokens", default=500, min=1, max=8_192, log=True),
        choices.compute_efficiency(),
        choices.bandwidth_efficiency(),
    ),
    layout=(
        Controls(),
        Flag("capacity"),
        Table(
            "caption",
            ("col.measure", "col.prefill", "col.decode"),
            rows=(
                Row("row.tokens", "prefill_tokens", "decode_tokens"),
                Row("row.shape", "prefill_shape", "decode_shape"),
                Row("row.intensity", "prefill_intensity", "decode_intensity"),
                Row("row.bound", ("prefill_bound", Text("cell.prefill_ops", tone="note")),
                    ("decode_bound", Text("cell.decode_ops", tone="note"))),
                Row("row.time", "prefill_ms", ("decode_total_ms", Text("cell.per_token", tone="note"))),
                Row("row.share", "prefill_share", "decode_share"),
                Row("row.mfu", "prefill_mfu", "decode_mfu"),
                Row("row.latency", "ttft_ms", "tpot_ms"),
            ),
            foot=Row("row.request", "request_ms"),
        ),
        Text("ridge_note", tone="body"),
        Derivations("prefill_ms", "decode_total_ms", "decode_ms_per_token", "prefill_intensity", "decode_intensity",
                    "prefill_bound", "decode_bound", "prefill_share", "decode_share", "prefill_mfu", "decode_mfu",
                    "request_ms", "ridge"),
    ),
)


def render(state) -> dict:
    """The phase table for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    hw, m = choices.gpu(s), presets.model(s["model"])
    datasheet = presets.hardware(s["hardware"])
    p, n = s["prompt_tokens"], s["output_tokens"]
    weights = model_size.resident_weight_bytes(m)
    pre = roofline.prefill(m, hw, tokens=p, state_dtype=STATE_DTYPE)
    run = serving.decode_run(m, hw, prompt_tokens=p, output_tokens=n, state_dtype=STATE_DTYPE)
    first = roofline.decode(m, hw, batch=1, context=p, state_dtype=STATE_DTYPE)
    last = roofline.decode(m, hw, batch=1, context=p + n - 1, state_dtype=STATE_DTYPE)
    request_s = pre.time_s + run.time_s
    prefill_share, decode_share = pre.time_s / request_s * 100, run.time_s / request_s * 100
    # Utilisation against the datasheet's peak (MFU): a compute efficiency below 1 shows here.
    prefill_mfu = pre.attained_flops_per_s / datasheet.peak_flops_per_s * 100
    decode_mfu = run.flops / run.time_s / datasheet.peak_flops_per_s * 100
    decode_mixed = 0 < run.compute_bound_time_s < run.time_s
    shape = f"({{rows}} × {m.hidden:,}) · ({m.hidden:,} × {m.intermediate:,})"

    outputs = {
        "prefill_tokens": output(p, t["at_once"].format(p=fmt_grouped(p))),
        "decode_tokens": output(1, t["per_step"].format(n=fmt_grouped(n))),
        "prefill_shape": output(p, "GEMM " + shape.format(rows=f"{p:,}")),
        "decode_shape": output(1, "GEMV " + shape.format(rows=1)),
        "prefill_intensity": output(pre.intensity, f"{fmt_sig(pre.intensity)} FLOP/B"),
        "decode_intensity": output(run.intensity, f"{fmt_sig(run.intensity)} FLOP/B"),
        "prefill_bound": output(int(pre.bound == "compute"), _bound_words(pre.bound, pre.mixed, t)),
        "decode_bound": output(int(run.bound == "compute"), _bound_words(run.bound, decode_mixed, t)),
        "prefill_ops": output(int(pre.mixed), _ops_words([pre], t)),
        "decode_ops": output(int(decode_mixed), _ops_words([first, last], t)),
        "prefill_ms": output(pre.time_s * 1e3, fmt_ms(pre.time_s)),
        "decode_total_ms": output(run.time_s * 1e3, fmt_duration(run.time_s)),
        "decode_ms_per_token": output(run.time_per_token_s * 1e3, fmt_ms(run.time_per_token_s)),
        "prefill_share": output(prefill_share, format_percent(prefill_share)),
        "decode_share": output(decode_share, format_percent(decode_share)),
        "prefill_mfu": output(prefill_mfu, format_percent(prefill_mfu)),
        "decode_mfu": output(decode_mfu, format_percent(decode_mfu)),
        "ttft_ms": output(pre.time_s * 1e3, f"TTFT = {fmt_ms(pre.time_s)}"),
        "tpot_ms": output(run.time_per_token_s * 1e3, f"TPOT = {fmt_ms(run.time_per_token_s)}"),
        "request_ms": output(request_s * 1e3, fmt_duration(request_s)),
        "ridge": output(roofline.ridge_point(hw), f"{fmt_sig(roofline.ridge_point(hw))} FLOP/B"),
        **capacity.outputs(weights, hw),
    }
    peak_t = f"{datasheet.peak_flops_per_s / 1e12:g}"
    derivations = {
        "prefill_ms": _step_derivation(pre, hw, t),
        "decode_total_ms": t["steps"].format(n=fmt_grouped(n), p=fmt_grouped(p), a=fmt_ms(first.time_s),
                                             b=fmt_ms(last.time_s), t=fmt_duration(run.time_s)),
        "decode_ms_per_token": f"{fmt_duration(run.time_s)} ÷ {n:,} = {fmt_ms(run.time_per_token_s)}",
        "prefill_intensity": f"{fmt_flops(pre.flops)} ÷ {fmt_bytes(pre.bytes)} = {fmt_sig(pre.intensity)} FLOP/B",
        "decode_intensity": f"Σ {fmt_flops(run.flops)} ÷ Σ {fmt_bytes(run.bytes)} = {fmt_sig(run.intensity)} FLOP/B",
        "prefill_bound": t["clause_sep"].join((
            _op_times(pre, t),
            t["bound_share"].format(compute=fmt_ms(pre.compute_bound_time_s), total=fmt_ms(pre.time_s),
                                    share=fmt_share(pre.compute_bound_time_s / pre.time_s),
                                    bound=_bound_words(pre.bound, pre.mixed, t)))),
        "decode_bound": t["clause_sep"].join((
            t["decode_ops_steps"].format(first=_op_times(first, t), last=_op_times(last, t)),
            t["bound_share"].format(compute=fmt_duration(run.compute_bound_time_s),
                                    total=fmt_duration(run.time_s),
                                    share=fmt_share(run.compute_bound_time_s / run.time_s),
                                    bound=_bound_words(run.bound, decode_mixed, t)))),
        "prefill_share": t["share"].format(x=fmt_ms(pre.time_s), a=fmt_ms(pre.time_s),
                                           b=fmt_duration(run.time_s), p=format_percent(prefill_share)),
        "decode_share": t["share"].format(x=fmt_duration(run.time_s), a=fmt_ms(pre.time_s),
                                          b=fmt_duration(run.time_s), p=format_percent(decode_share)),
        "prefill_mfu": t["mfu"].format(f=fmt_flops(pre.flops), t=fmt_ms(pre.time_s), pi=peak_t,
                                       p=format_percent(prefill_mfu)),
        "decode_mfu": t["mfu"].format(f=fmt_flops(run.flops), t=fmt_duration(run.time_s), pi=peak_t,
                                      p=format_percent(decode_mfu)),
        "request_ms": f"TTFT + {n:,} × TPOT = {fmt_ms(pre.time_s)} + {n:,} × {fmt_ms(run.time_per_token_s)} "
                      f"= {fmt_duration(request_s)}",
        "ridge": f"{hw.peak_flops_per_s / 1e12:g} TFLOP/s ÷ {hw.bandwidth_bytes_per_s / 1e12:g} TB/s "
                 f"= {fmt_sig(roofline.ridge_point(hw))} FLOP/B",
    }
    return view(s, outputs, flags={"capacity": not capacity.fits(weights, hw)}, derivations=derivations)


def _bound_words(bound: str, mixed: bool, t: dict) -> str:
    """The bound of most of the time, marked mixed where the operations differ: "mostly compute-bound (mixed)"."""
    return t["mixed"].format(bound=t[bound]) if mixed else t[bound]


def _ops_words(steps, t: dict) -> str:
    """Which operations are compute-bound and which memory-bound in any of `steps`, in the order they run."""
    names = {"compute": [], "memory": []}
    for e in steps:
        for op in e.ops:
            if op.name not in names[op.bound]:
                names[op.bound].append(op.name)
    words = {bound: _join([t[f"op.{name}"] for name in ops], t) for bound, ops in names.items() if ops}
    if len(words) == 1:
        (bound, ops), = words.items()
        return t["ops_alike"].format(ops=ops, bound=t[bound])
    return t["ops_split"].format(compute_ops=words["compute"], memory_ops=words["memory"])


def _join(items: list[str], t: dict) -> str:
    """a, b and c (in the page's language)."""
    return items[0] if len(items) == 1 else t["list_sep"].join(items[:-1]) + t["list_last"] + items[-1]


def _op_times(e: roofline.Estimate, t: dict) -> str:
    """Each operation's time and bound: matmuls 106.07 ms (compute-bound) + ..."""
    return " + ".join(t["op_time"].format(op=t[f"op.{op.name}"], time=fmt_ms(op.time_s), bound=t[op.bound])
                      for op in e.ops)


def _step_derivation(e: roofline.Estimate, hw: presets.Hardware, t: dict) -> str:
    """The step's time as the sum over its operations of max(FLOPs ÷ π, bytes ÷ β), the overlapped bound beside."""
    peak, bandwidth = f"{hw.peak_flops_per_s / 1e12:g} TFLOP/s", f"{hw.bandwidth_bytes_per_s / 1e12:g} TB/s"
    terms = [f"{t[f'op.{op.name}']} max({fmt_flops(op.flops)} ÷ {peak}, {fmt_bytes(op.bytes)} ÷ {bandwidth})"
             if op.flops else f"{t[f'op.{op.name}']} {fmt_bytes(op.bytes)} ÷ {bandwidth}" for op in e.ops]
    return (" + ".join(terms) + " = " + " + ".join(fmt_ms(op.time_s) for op in e.ops) + f" = {fmt_ms(e.time_s)}"
            + t["overlapped"].format(compute=fmt_ms(e.compute_time_s), memory=fmt_ms(e.memory_time_s),
                                     time=fmt_ms(e.overlapped_time_s)))


def format_percent(x: float) -> str:
    """A percentage to three significant digits (99.8%, 0.199%), more where three would round a share
    short of 100% up to it (99.96%, not 100.0%)."""
    text = fmt_sig(x)
    return f"{text}%" if x >= 100 or float(text.replace(",", "")) < 100 else fmt_share(x / 100)
