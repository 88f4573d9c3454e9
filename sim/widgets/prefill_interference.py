"""Prefill interference: one prompt joining a decode batch, whole or in chunks, and what each step costs.

The physics is sim/serving/interference.py (each step by the per-operation roofline of scheduler.StepCost). The
diagram draws one bar per step while the prompt is computed, its height the step's time: the part a decode-only
step of the batch takes, and on top what the prompt's chunk adds; a dashed line marks the decode-only step.
A prompt in more than MAX_BARS steps shows its first and last steps with the count of those between.
"""

from __future__ import annotations

import math

from sim.kit import (
    Controls,
    Flag,
    Range,
    Readout,
    Readouts,
    Select,
    Svg,
    Text,
    Widget,
    alt,
    capacity,
    choices,
    output,
    palette,
    view,
)
from sim.page import svg
from sim.page.display import fmt_duration, fmt_grouped, fmt_ms, fmt_sig
from sim.physics import model_size, presets
from sim.serving import interference

CHUNK_OPTIONS = ("0", "16", "32", "64", "128", "256", "512", "1024", "2048", "4096", "8192")

TEXT = {
    "zh": {
        "title": "一段提示插进 decode 批：整段算还是分块算",
        "batch": "decode 批大小（正在生成的请求数）",
        "context": "每个 decode 请求已缓存的上下文（token）",
        "prompt_tokens": "新请求的提示长度（token）",
        "chunk_tokens": "prefill 分块大小（token）",
        "chunk_tokens=0": "不分块：整段一步算完",
        "note": "每一步里，批中每个请求各生成一个 token，所以一步的耗时就是它们这两个 token 之间的间隔（TPOT）。"
                "每步按逐算子屋顶线计：矩阵乘是 max(计算, 读一遍权重)，注意力是 max(计算, 读写 KV)，"
                "再加递归状态的读写；"
                "logits 只算要采样的位置（每个 decode 请求一个，提示只在最后一块）。"
                "为了只看分块的影响，这段时间里 decode 请求的上下文固定不变、没有请求离开或加入，新请求也不排队。",
        "decode_ms": "只 decode 的一步（基准）",
        "step_ms": "提示第一块所在的一步",
        "stall_ms": "最长的一步：decode 请求见到的最长 ITL（相邻 token 的间隔）",
        "stall_ratio": "是只 decode 一步的 {ratio} 倍",
        "tokens": "{n} token",
        "ttft_ms": "新请求的 TTFT（各步之和）",
        "prefill_alone_ms": "同一段提示单独 prefill（没有 decode 批）",
        "overhead_ms": "分块让 TTFT 多等的时间",
        "steps": "提示分成几步算",
        "free_chunk": "不越过拐点的最大分块",
        "nearly_free": "这一块和批里的 decode 合起来 {batch_tokens} 个 token，没越过拐点：矩阵乘的时间仍然是"
                       "读一遍权重的时间，所以这一步几乎不比只 decode 慢。代价落在新请求身上："
                       "每一块都要把权重重读一遍，TTFT 变长。",
        "past_ridge": "这一步的矩阵乘越过了拐点：块加上批共 {batch_tokens} 个 token，而这批最多能白带 "
                      "{free_chunk_count} 个 token 的块。提示的计算量直接压在这一步上，批里每个请求都得跟着等。",
        "timeline": "提示算完之前的每一步",
        "timeline.head": "{steps} 步，TTFT {ttft}",
        "timeline.head_whole": "整段 {steps} 步算完，TTFT {ttft}",
        "timeline.decode": "只 decode 也要的",
        "timeline.chunk": "提示这一块加上的",
        "timeline.line": "只 decode 一步 {decode}",
        "timeline.longest": "最长 {stall}",
        "timeline.whole": "不分块时的一步 {whole}",
        "timeline.whole_off": "不分块时的一步 {whole}，高出图顶",
        "timeline.first": "第 1 步",
        "timeline.last": "第 {n} 步",
        "timeline.gap": "中间 {n} 步",
        "alt.step": "第 {k} 步 {time}",
        "alt.more": "另有 {n} 步",
        "op.matmuls": "矩阵乘 max({tokens} token 的计算 {compute}, 读一遍权重 {weights}) = {time}",
        "op.chunk": "这一块的注意力 max({pairs} 对的计算 {compute}, 读写 {rows} 行 KV {memory}) = {time}",
        "op.decode": "decode 注意力 max({pairs} 对的计算 {compute}, 读写 {rows} 行 KV {memory}) = {time}",
        "op.state": "递归状态读写 {passes} 次 × {each} = {time}",
        "op.sum": "合计 {parts} = {total}",
        "op.sep": "；",
        "how.stall": "{n} 步里最长的是第 {k} 步：{terms}",
        "how.stall_one": "只有一步：{terms}",
        "how.ttft": "{n} 步之和：{times} = {total}",
        "how.ttft_one": "只有一步 = {total}",
        "how.steps_whole": "不分块：整段 {prompt} token 一步算完 = 1 步",
        "how.steps": "⌈{prompt} ÷ {chunk}⌉ = {n} 步",
        "how.overhead": "TTFT {ttft} − 整段在一步里算（同一批）{whole} = {overhead}。多出来的：矩阵乘 {matmuls}"
                        "（{reads} 步每步都要算批里的 decode token；低于拐点时，每步还要把权重重读一遍），"
                        "提示的注意力 {chunk}（后面的块要重读前面块的 KV，计算的对数总共不变），"
                        "decode 注意力 {decode}（每步一次，decode 请求每步各得一个 token），"
                        "递归状态 {state}（也是每步一次）",
        "how.overhead_whole": "不分块：TTFT 就是整段一步 {whole}，没有额外开销 = 0 ms",
        "how.free_chunk": "⌊(读一遍权重 {weights} − ({batch} + 1) 个采样 token 的 LM head × {head}) "
                          "÷ 每 token {token}⌋ − 批大小 {batch} = {free}",
    },
    "en": {
        "title": "A prompt dropped into a decode batch: whole or in chunks",
        "batch": "Decode batch (requests generating)",
        "context": "Cached context per decoding request (tokens)",
        "prompt_tokens": "New request's prompt (tokens)",
        "chunk_tokens": "Prefill chunk size (tokens)",
        "chunk_tokens=0": "No chunking: the whole prompt in one step",
        "note": "Every step gives each request in the batch one token, so a step's time is the gap between two of its "
                "tokens (its TPOT). Each step is costed by the per-operation roofline: matmuls take max(compute, one "
                "read of the weights), attention max(compute, KV read and written), plus the recurrent state read and "
                "written. Logits are computed only where a token is sampled: one per decoding request, and for the "
                "prompt only in its last chunk. To isolate chunking, the decoders' contexts stay fixed for the "
                "stretch, no request leaves or joins, and the new request does not queue.",
        "decode_ms": "A decode-only step (the baseline)",
        "step_ms": "The step with the prompt's first chunk",
        "stall_ms": "Longest step: the longest ITL (gap between two tokens) a decoder sees",
        "stall_ratio": "{ratio} × the decode-only step",
        "tokens": "{n} tokens",
        "ttft_ms": "New request's TTFT (sum of its steps)",
        "prefill_alone_ms": "The same prompt prefilled alone (no decode batch)",
        "overhead_ms": "Extra TTFT from chunking",
        "steps": "Steps the prompt takes",
        "free_chunk": "Largest chunk below the ridge",
        "nearly_free": "The chunk and the batch's tokens together ({batch_tokens}) stay below the ridge: the matmuls "
                       "still take one read of the weights, so this step is barely slower than a decode-only one. The "
                       "new request pays instead: the weights are read again for every chunk, and its TTFT grows.",
        "past_ridge": "This step's matmuls are past the ridge: {batch_tokens} tokens of chunk and batch, while this "
                      "batch carries a chunk of at most {free_chunk_count} tokens for free. The prompt's compute lands "
                      "on the step, and every request in the batch waits for it.",
        "timeline": "Every step until the prompt is done",
        "timeline.head": "{steps} steps, TTFT {ttft}",
        "timeline.head_whole": "whole prompt: {steps} step, TTFT {ttft}",
        "timeline.decode": "what decoding alone takes",
        "timeline.chunk": "what the prompt's chunk adds",
        "timeline.line": "decode-only step {decode}",
        "timeline.longest": "longest {stall}",
        "timeline.whole": "unchunked step {whole}",
        "timeline.whole_off": "unchunked step {whole} (off the top)",
        "timeline.first": "step 1",
        "timeline.last": "step {n}",
        "timeline.gap": "{n} more",
        "alt.step": "step {k} {time}",
        "alt.more": "{n} steps more",
        "op.matmuls": "matmuls max(compute of {tokens} tokens {compute}, one read of the weights {weights}) = {time}",
        "op.chunk": "chunk attention max(compute of {pairs} pairs {compute}, {rows} KV rows {memory}) = {time}",
        "op.decode": "decode attention max(compute of {pairs} pairs {compute}, {rows} KV rows {memory}) = {time}",
        "op.state": "recurrent state read or written {passes} × {each} = {time}",
        "op.sum": "total {parts} = {total}",
        "op.sep": "; ",
        "how.stall": "the longest of {n} steps is step {k}: {terms}",
        "how.stall_one": "the one step: {terms}",
        "how.ttft": "sum of {n} steps: {times} = {total}",
        "how.ttft_one": "the one step = {total}",
        "how.steps_whole": "no chunking: the whole {prompt} tokens in one step = 1 step",
        "how.steps": "⌈{prompt} ÷ {chunk}⌉ = {n} steps",
        "how.overhead": "TTFT {ttft} − the whole prompt in one step (same batch) {whole} = {overhead}. The extra: "
                        "matmuls {matmuls} (each of the {reads} steps also runs the batch's decode tokens, and below "
                        "the ridge reads the weights again), prompt attention {chunk} (each chunk reads the earlier "
                        "chunks' KV again; the pairs computed add up to the same), decode attention {decode} (once "
                        "per step; the decoders get a token from each), recurrent state {state} (once per step too)",
        "how.overhead_whole": "no chunking: the TTFT is the one whole step {whole}, nothing extra = 0 ms",
        "how.free_chunk": "⌊(one read of the weights {weights} − ({batch} + 1) sampled tokens' LM head × {head}) ÷ "
                          "{token} per token⌋ − batch {batch} = {free}",
    },
}

WIDGET = Widget(
    controls=(
        choices.model(),
        choices.hardware(),
        Range("batch", default=32, min=1, max=256, log=True),
        Range("context", default=2_048, min=1, max=131_072, log=True),
        Range("prompt_tokens", default=2_048, min=16, max=32_768, log=True),
        Select("chunk_tokens", default="0", options=CHUNK_OPTIONS,
               names={v: f"{int(v):,}" for v in CHUNK_OPTIONS if v != "0"}),
        choices.state_dtype(),
    ),
    layout=(
        Controls(),
        choices.no_state_note(),
        Flag("capacity"),
        Readouts("decode_ms", "step_ms", Readout("stall_ms", note="stall_ratio"), "ttft_ms", "prefill_alone_ms",
                 "overhead_ms", "steps", "free_chunk"),
        Flag("nearly_free", tone="note"),
        Flag("past_ridge", tone="note"),
        Svg("timeline"),
        Text("note"),
    ),
)

MAX_BARS = 40  # steps drawn one by one; beyond, the first and last few with the count between
WHOLE_IN_VIEW = 8  # the unchunked step is drawn while it is at most this many times the longest chunk's step
LISTED_STEPS = 6  # step times a TTFT derivation lists before it elides the middle


def render(state) -> dict:
    """The prefill-interference view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    m, hw = presets.model(s["model"]), presets.hardware(s["hardware"])
    chunk = int(s["chunk_tokens"])
    r = interference.interfere(m, hw, batch=s["batch"], context=s["context"], prompt_tokens=s["prompt_tokens"],
                               chunk_tokens=chunk, state_dtype=s["state_dtype"])
    cost = r.cost
    ratio = r.stall_s / r.decode_s
    step_tokens = r.steps[0].chunk + r.batch
    weights = model_size.resident_weight_bytes(m)
    outputs = {
        "decode_ms": output(r.decode_s * 1e3, fmt_duration(r.decode_s)),
        "step_ms": output(r.first_step_s * 1e3, fmt_duration(r.first_step_s)),
        "stall_ms": output(r.stall_s * 1e3, fmt_duration(r.stall_s)),
        "stall_ratio": output(ratio, t["stall_ratio"].format(ratio=fmt_sig(ratio))),
        "ttft_ms": output(r.ttft_s * 1e3, fmt_duration(r.ttft_s)),
        "prefill_alone_ms": output(r.alone_s * 1e3, fmt_duration(r.alone_s)),
        "overhead_ms": output(r.overhead_s * 1e3, fmt_duration(r.overhead_s)),
        "steps": output(len(r.steps), fmt_grouped(len(r.steps))),
        "free_chunk": output(r.free_chunk, t["tokens"].format(n=fmt_grouped(r.free_chunk))),
        "free_chunk_count": output(r.free_chunk, fmt_grouped(r.free_chunk)),  # the number alone, inside a sentence
        "batch_tokens": output(step_tokens, fmt_grouped(step_tokens)),
        **capacity.outputs(weights, hw),
    }
    below = r.steps[0].chunk <= r.free_chunk
    flags = {"capacity": not capacity.fits(weights, hw), "no_state": choices.no_state(m),
             "nearly_free": chunk > 0 and below and len(r.steps) > 1,
             "past_ridge": not below}

    def whole_terms(st: interference.Step, batch: int, context: int) -> str:
        return step_terms(st, batch, context, cost, t)

    longest = r.longest_index
    listed = r.steps if len(r.steps) <= LISTED_STEPS else [*r.steps[:3], None, *r.steps[-2:]]
    times = ["…" if st is None else fmt_duration(st.time_s) for st in listed]
    decode_only = interference.decode_step(cost, r.batch, r.context)
    alone = interference.interfere(m, hw, batch=0, context=0, prompt_tokens=r.prompt_tokens,
                                   state_dtype=s["state_dtype"]).steps[0]
    derivations = {
        "decode_ms": whole_terms(decode_only, r.batch, r.context),
        "step_ms": whole_terms(r.steps[0], r.batch, r.context),
        "stall_ms": (t["how.stall_one"].format(terms=whole_terms(r.longest, r.batch, r.context)) if len(r.steps) == 1
                     else t["how.stall"].format(n=fmt_grouped(len(r.steps)), k=fmt_grouped(longest + 1),
                                                terms=whole_terms(r.longest, r.batch, r.context))),
        "ttft_ms": (t["how.ttft_one"].format(total=fmt_duration(r.ttft_s)) if len(r.steps) == 1
                    else t["how.ttft"].format(n=fmt_grouped(len(r.steps)), times=" + ".join(times),
                                              total=fmt_duration(r.ttft_s))),
        "prefill_alone_ms": whole_terms(alone, 0, 0),
        "overhead_ms": overhead_words(r, t),
        "steps": (t["how.steps_whole"].format(prompt=fmt_grouped(r.prompt_tokens)) if len(r.steps) == 1 else
                  t["how.steps"].format(prompt=fmt_grouped(r.prompt_tokens), chunk=fmt_grouped(chunk),
                                        n=fmt_grouped(len(r.steps)))),
        "free_chunk": t["how.free_chunk"].format(weights=fmt_ms(cost.weights_s), batch=fmt_grouped(r.batch),
                                                 head=fmt_ms(cost.logit_s), token=fmt_ms(cost.token_s),
                                                 free=fmt_grouped(r.free_chunk)),
    }
    return view(s, outputs, svg={"timeline": timeline(r, s["lang"])}, flags=flags, derivations=derivations)


def step_terms(st: interference.Step, batch: int, context: int, cost, t: dict) -> str:
    """A step's operations with their numbers: what each is the max of, then their sum."""
    tokens = st.chunk + batch
    pairs = st.chunk * st.before + st.chunk * (st.chunk + 1) // 2
    rows = st.before + st.chunk
    passes = round(st.state_s / cost.state_s) if cost.state_s else 0
    terms = [t["op.matmuls"].format(tokens=fmt_grouped(tokens),
                                    compute=fmt_ms(cost.token_s * tokens + cost.logit_s * (st.sampled + batch)),
                                    weights=fmt_ms(cost.weights_s), time=fmt_ms(st.matmuls_s))]
    parts = [st.matmuls_s]
    if st.chunk:
        terms.append(t["op.chunk"].format(pairs=fmt_grouped(pairs), compute=fmt_ms(cost.pair_s * pairs),
                                          rows=fmt_grouped(rows), memory=fmt_ms(cost.kv_row_s * rows),
                                          time=fmt_ms(st.chunk_attention_s)))
        parts.append(st.chunk_attention_s)
    if batch:
        cached = batch * context
        terms.append(t["op.decode"].format(pairs=fmt_grouped(cached), compute=fmt_ms(cost.pair_s * cached),
                                           rows=fmt_grouped(cached + batch),
                                           memory=fmt_ms(cost.kv_row_s * (cached + batch)),
                                           time=fmt_ms(st.decode_attention_s)))
        parts.append(st.decode_attention_s)
    if passes:
        terms.append(t["op.state"].format(passes=fmt_grouped(passes), each=fmt_ms(cost.state_s),
                                          time=fmt_ms(st.state_s)))
        parts.append(st.state_s)
    terms.append(t["op.sum"].format(parts=" + ".join(fmt_ms(x) for x in parts), total=fmt_duration(st.time_s)))
    return t["op.sep"].join(terms)


def overhead_words(r: interference.Interference, t: dict) -> str:
    """What chunking adds to the TTFT, operation by operation, against the whole prompt in one step."""
    if len(r.steps) == 1:
        return t["how.overhead_whole"].format(whole=fmt_duration(r.whole_s))
    whole = interference.step(r.cost, r.batch, r.context, 0, r.prompt_tokens, last=True)

    totals = [math.fsum(column) for column in zip(*r.steps)]  # one pass over the steps, by field

    def extra(name: str) -> str:
        k = interference.Step._fields.index(name)
        more = math.fsum([totals[k], -whole[k]])
        return fmt_duration(more if abs(more) > 1e-12 else 0.0)  # the attention pairs cancel to rounding

    return t["how.overhead"].format(ttft=fmt_duration(r.ttft_s), whole=fmt_duration(r.whole_s),
                                    overhead=fmt_duration(r.overhead_s),
                                    matmuls=extra("matmuls_s"), reads=fmt_grouped(r.weight_reads),
                                    chunk=extra("chunk_attention_s"), decode=extra("decode_attention_s"),
                                    state=extra("state_s"))


WIDE, NARROW = 560, 300  # the drawing's width in its own units: a desktop column, a 375 px phone's frame


def timeline(r: interference.Interference, lang: str) -> str:
    """The steps as bars, drawn for a desktop (WIDE) and for a phone (NARROW), as one responsive diagram."""
    return svg.responsive(*(draw_timeline(r, lang, width) for width in (WIDE, NARROW)))


def draw_timeline(r: interference.Interference, lang: str, width: float) -> str:
    """One bar per step, its height the step's time: the decode-only part below (decode), what the chunk adds on
    top (prefill), parted by a surface stroke; a dashed line at the decode-only step; a legend beneath."""
    t = TEXT[lang]
    left, top, plot_h, label_px = 8, 44, 150, 13
    span = width - 2 * left
    n = len(r.steps)
    if n > MAX_BARS:
        head = MAX_BARS // 2
        tail = MAX_BARS - head - 1  # and one slot for the gap
        drawn = [*enumerate(r.steps)][:head] + [None] + [*enumerate(r.steps)][n - tail:]
    else:
        drawn = list(enumerate(r.steps))
    slot = span / max(len(drawn), 4)  # a lone bar is no wider than a quarter of the drawing
    bar_w = max(slot - 2, 1)
    x0 = left + (span - slot * len(drawn)) / 2
    # Chunks are drawn against the whole prompt's step, unless it would flatten them (then it is only named).
    whole_drawn = n > 1 and r.whole_s <= WHOLE_IN_VIEW * r.longest.time_s
    scale = plot_h / (r.whole_s if whole_drawn else r.longest.time_s)
    base = top + plot_h
    decode_colour, chunk_colour = palette.colour("decode"), palette.colour("prefill")
    edge = palette.colour("surface")

    shapes = []
    for i, item in enumerate(drawn):
        x = x0 + i * slot + (slot - bar_w) / 2
        if item is None:
            shapes.append(svg.text("…", {"x": x + bar_w / 2, "y": base - 6, "text-anchor": "middle",
                                         "class": "svg-label"}))
            continue
        k, st = item
        low = min(r.decode_s, st.time_s) * scale
        high = (st.time_s - r.decode_s) * scale if r.batch else st.time_s * scale
        tip = svg.text_node("title", t["alt.step"].format(k=k + 1, time=fmt_duration(st.time_s)))
        if low > 0:
            shapes.append(svg.element("rect", {"x": x, "y": base - low, "width": bar_w, "height": low,
                                               "fill": decode_colour, "stroke": edge, "stroke-width": 1,
                                               "data-kind": "decode"}, tip))
        if high > 0:
            shapes.append(svg.element("rect", {"x": x, "y": base - low - high, "width": bar_w, "height": high,
                                               "fill": chunk_colour, "stroke": edge, "stroke-width": 1,
                                               "data-kind": "chunk"}, tip))
    line_y = base - r.decode_s * scale
    shapes.append(svg.element("line", {"x1": left, "y1": line_y, "x2": width - left, "y2": line_y,
                                       "stroke": palette.colour("ink"), "stroke-width": 1.5,
                                       "stroke-dasharray": "4 3"}))
    if whole_drawn:  # where the step would reach with the prompt whole
        whole_y = base - r.whole_s * scale
        shapes.append(svg.element("line", {"x1": left, "y1": whole_y, "x2": width - left, "y2": whole_y,
                                           "stroke": palette.colour("muted"), "stroke-width": 1.5,
                                           "stroke-dasharray": "1 3"}))
    # The words above the bars: the count and TTFT on the left, the longest step on the right.
    head_text = t["timeline.head" if n > 1 else "timeline.head_whole"].format(steps=fmt_grouped(n),
                                                                             ttft=fmt_duration(r.ttft_s))
    longest_text = t["timeline.longest"].format(stall=fmt_duration(r.longest.time_s))
    shapes.append(svg.text(head_text, {"x": left, "y": 18, "class": "svg-label"}))
    shapes.append(svg.text(longest_text, {"x": width - left, "y": 36, "text-anchor": "end", "class": "svg-label"}))
    # Step numbers under the first and last bars, and the count the gap stands for.
    under = base + 16
    if n > 1:
        shapes.append(svg.text(t["timeline.first"], {"x": left, "y": under, "class": "svg-label"}))
        shapes.append(svg.text(t["timeline.last"].format(n=fmt_grouped(n)),
                               {"x": width - left, "y": under, "text-anchor": "end", "class": "svg-label"}))
        if n > MAX_BARS:
            shapes.append(svg.text(t["timeline.gap"].format(n=fmt_grouped(n - len(drawn) + 1)),
                                   {"x": width / 2, "y": under, "text-anchor": "middle", "class": "svg-label"}))
    else:
        shapes.append(svg.text(t["timeline.first"], {"x": width / 2, "y": under, "text-anchor": "middle",
                                                     "class": "svg-label"}))

    legend, lx, ly = [], float(left), under + 14
    items = [("swatch", decode_colour, t["timeline.decode"]), ("swatch", chunk_colour, t["timeline.chunk"]),
             ("line", None, t["timeline.line"].format(decode=fmt_duration(r.decode_s)))]
    whole_text = [t["timeline.whole" if whole_drawn else "timeline.whole_off"].format(
        whole=fmt_duration(r.whole_s))] if n > 1 else []
    items += [("whole" if whole_drawn else "none", None, text) for text in whole_text]
    if not r.batch:
        items = [item for item in items if item[0] != "line" and item[1] != decode_colour]
    for kind, fill, label in items:
        item_width = (4 if kind == "none" else 22) + svg.text_width(label, label_px)
        if lx + item_width > width and lx > left:  # wrap onto the next row
            lx, ly = float(left), ly + 20
        if kind == "swatch":
            legend.append(svg.element("rect", {"x": lx, "y": ly, "width": 12, "height": 12, "fill": fill,
                                               "stroke": palette.colour("outline"), "stroke-width": 1}))
        elif kind != "none":
            legend.append(svg.element("line", {"x1": lx, "y1": ly + 6, "x2": lx + 14, "y2": ly + 6,
                                               "stroke": palette.colour("ink" if kind == "line" else "muted"),
                                               "stroke-width": 1.5,
                                               "stroke-dasharray": "4 3" if kind == "line" else "1 3"}))
        legend.append(svg.text(label, {"x": lx if kind == "none" else lx + 18, "y": ly + 11, "class": "svg-label"}))
        lx += item_width + 8
    title = t["timeline"]
    listed = [t["alt.step"].format(k=k + 1, time=fmt_duration(st.time_s)) for k, st in enumerate(r.steps[:MAX_BARS])]
    if n > MAX_BARS:
        listed.append(t["alt.more"].format(n=fmt_grouped(n - MAX_BARS)))
    line_text = t["timeline.line"].format(decode=fmt_duration(r.decode_s))
    spoken = alt.sentence(lang, title, [head_text, line_text, *whole_text, longest_text, alt.parts(lang, listed)])
    return svg.document(width, ly + 20, spoken, svg.text_node("title", title), *shapes, *legend,
                        css_class="step-timeline")
