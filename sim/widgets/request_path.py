"""Request path: one request's trip through the server, cell by cell, with the real numbers of each cell.

Like every widget with a model and a GPU it carries the shared capacity flag (sim/kit/capacity.py), raised when
the whole checkpoint does not fit in the GPU's memory; no preset pair raises it today.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sim.kit import Flag, Select, Widget, capacity, choices, output, view
from sim.page.display import fmt_bytes, fmt_flops, fmt_grouped, fmt_ms, fmt_sig, step_time_derivation
from sim.physics import cache, model_size, presets, roofline
from sim.serving import request

# The page's words, then each cell of the path ("step=CELL" its label, "hint.CELL" the line beneath it,
# "note.CELL" its note), then the readouts' and derivations' texts and the phrases the notes are built from.
# The running example is the page language's own (sim/serving/request.py: example(lang)); every count of its tokens and
# every quote of it is a placeholder: {prompt} the prompt, {pieces} its tokens, {next} the token after it and {t}
# how many tokens it has. The template fills the hints and cell labels from the view's outputs prompt_tokens and
# next_token; the example paragraph is the output "example".
TEXT = {
    "zh": {
        "title": "一次请求在服务端走过的路",
        "example": "提示「{prompt}」切成 {t} 个 token（{pieces}）；prefill 之后模型写出「{next}」，"
                   "decode 从它开始一个字一个字往下写。",
        "step": "一次请求走过的路（点任一格）",
        "loop_title": "decode 循环：每个 token 走一圈（第一圈喂进「{next}」）",
        "loop_back": "↺ 挑出的字作为下一圈的输入",
        "decode_ms": "走一圈合计（出 1 个 token）",
        "step_bytes": "这一格读写的显存字节",
        "step_flops": "这一格的浮点运算",
        "step_ms": "这一格的时间（屋顶线下界）",

        "step=tokenize": "分词",
        "hint.tokenize": "CPU · 文本 → {t} 个 id",
        "note.tokenize": "分词在 CPU 上完成：「{prompt}」按词表切成 {t} 个 token（{pieces}），变成 {t} 个整数 id。"
                         "GPU 还没开始干活：不读显存，也不做矩阵乘。",
        "step=prefill": "prefill：{t} 个 token 一次前向",
        "hint.prefill": "权重读一遍，{t} 个 token 共用",
        "note.prefill": "{t} 个 token 一起过一遍模型：{weights} 权重读一遍，{t} 个 token 共用，共做 {flops} 运算；"
                        "最后一个位置的输出挑出了「{next}」。读写 {bytes}，屋顶线下界 {ms}，{bound}。",
        "step=write-cache": "写 KV cache 与递归状态",
        "hint.write-cache": "每层的 K、V 与 GDN 状态",
        "note.write-cache": "prefill 顺手把以后要用的东西存下：{kv_part}{state_part}合计 {bytes}，"
                            "已算在 prefill 的字节里。",
        "step=read-weights": "读权重",
        "hint.read-weights": "整份权重，每步一遍",
        "note.read-weights": "decode 第一圈把「{next}」喂进去。为了这 1 个 token，{weights} 权重要从显存整个读一遍，"
                             "按 {bw} TB/s 要 {ms}，占了这一圈的绝大部分。",
        "step=read-cache": "读 KV 与状态",
        "hint.read-cache": "{t} 行 KV + 递归状态",
        "note.read-cache": "「{next}」要回看前面 {t} 个 token：读 {t} 行 KV，再写入自己的 1 行{state_part}。"
                           "共 {bytes}，{ms}，远小于读权重。",
        "step=compute": "算 1 个 token",
        "hint.compute": "每个权重一次乘加",
        "note.compute": "真正的计算：每个权重一次乘加，再加上对 {t} 个缓存 token 的注意力，共 {flops}；"
                        "按峰值 {peak} TFLOP/s 只要 {ms}，是读权重时间的 {pct}，而且和读同时进行。",
        "step=sample": "挑出下一个字",
        "hint.sample": "logits → 下一个字",
        "note.sample": "最后一层给词表里 {vocab} 个词各打一个分（logits），从中挑出「{next}」后面的字"
                       "（prefill 末尾挑出「{next}」也是这一步）。读这些分数约 {bytes}、{ms}，可以忽略；"
                       "挑出的字就是下一圈的输入。",

        "none": "—", "cpu": "不计（CPU）", "counted": "已计入上一格",
        "no_hbm": "分词在 CPU 上查词表，不碰显存",
        "no_matmul": "查词表，没有矩阵乘",
        "cpu_time": "在 CPU 上，和 GPU 的步子无关，不计",
        "write_flops": "K、V 与状态在 prefill 的前向里已经算出，这一格只写",
        "read_flops": "只读不算：这一步的 FLOPs 都记在「算 1 个 token」",
        "compute_bytes": "要用的字节已记在「读权重」「读 KV 与状态」两格",
        "weights": "{n} 个矩阵乘参数 × {bpp} 字节 = {b} B = {fmt}",
        "weights_part": "{b} B（权重）",
        "kv_rows": "{rows} × {row} B（KV）",
        "state_once": "{state} B（递归状态）",
        "state_twice": "2 × {state} B（状态读出再写回）",
        "pre_flops": "2 × {n} × {t} + 2 × {head}（LM head 只算最后一个位置）+ {attn} × {pairs}（因果注意力）"
                     "= {f} FLOP = {fmt}",
        "dec_flops": "2 × {n} + {attn} × {ctx}（对 {ctx} 个缓存 token 的注意力）= {f} FLOP = {fmt}",
        "logits": "{vocab} 个 logits × {lb} 字节（FP32）= {b} B = {fmt}",
        "lm_head": "LM head 2 × {vocab} × {hidden} = {f} FLOP，已计入「算 1 个 token」；"
                   "挑字只是在 {vocab} 个数里比较，不计",
        "in_prefill": "（已含在 prefill 的 {ms} 里）",
        "off_roofline": "（不在屋顶线的账里）",
        "bound.memory": "被带宽卡住",
        "bound.compute": "被算力卡住",
        "phrase.kv_part": "{full} 层全注意力每个 token 存一行 K、V（{row} B），{t} 行共 {kv}；",
        "phrase.state_write": "{gdn} 层 GDN 各存一份固定大小的递归状态，共 {state}；",
        "phrase.state_none": "这个模型没有递归状态；",
        "phrase.state_read": "；递归状态读出、更新、再写回（2 × {state}）",
    },
    "en": {
        "title": "One request's path through the server",
        "example": "The prompt “{prompt}” is taken as {t} tokens ({pieces}; a tokenizer may split it a little "
                   "differently); prefill yields “{next}”, and decode carries on from it one token at a time.",
        "step": "One request's path (pick a cell)",
        "loop_title": "Decode loop: one turn per token (the first turn feeds in “{next}”)",
        "loop_back": "↺ the picked token is the next turn's input",
        "decode_ms": "One turn in all (1 token)",
        "step_bytes": "Memory bytes this cell moves",
        "step_flops": "Floating-point operations in this cell",
        "step_ms": "This cell's time (roofline bound)",

        "step=tokenize": "Tokenize",
        "hint.tokenize": "CPU · text → {t} ids",
        "note.tokenize": "Tokenizing runs on the CPU: “{prompt}” becomes {t} tokens ({pieces}; the exact split "
                         "depends on the tokenizer), i.e. {t} integer ids. The GPU has not started: no memory read, "
                         "no matrix multiply.",
        "step=prefill": "Prefill: {t} tokens in one pass",
        "hint.prefill": "weights read once, shared by {t} tokens",
        "note.prefill": "The {t} tokens go through the model together: the {weights} of weights is read once and "
                        "shared by all {t}, {flops} in total; the last position's output picks “{next}”. {bytes} "
                        "moved; roofline bound {ms}, {bound}.",
        "step=write-cache": "Write KV cache and state",
        "hint.write-cache": "each layer's K, V and GDN state",
        "note.write-cache": "Prefill also stores what later steps need: {kv_part}{state_part}{bytes} in all, already "
                            "part of prefill's bytes.",
        "step=read-weights": "Read the weights",
        "hint.read-weights": "all the weights, every step",
        "note.read-weights": "The first decode turn feeds in “{next}”. For this one token the whole {weights} of "
                             "weights is read from memory: {ms} at {bw} TB/s, almost the whole turn.",
        "step=read-cache": "Read KV and state",
        "hint.read-cache": "{t} KV rows + recurrent state",
        "note.read-cache": "“{next}” looks back at {t} tokens: {t} KV rows read and its own row written{state_part}. "
                           "{bytes} in all, {ms}: far less than the weights.",
        "step=compute": "Compute 1 token",
        "hint.compute": "one multiply-add per weight",
        "note.compute": "The actual arithmetic: one multiply-add per weight plus attention over {t} cached tokens, "
                        "{flops}. At the {peak} TFLOP/s peak that is {ms}, {pct} of the weight-read time, and it "
                        "overlaps with the reads.",
        "step=sample": "Pick the next token",
        "hint.sample": "logits → next token",
        "note.sample": "The last layer scores all {vocab} vocabulary entries (the logits) and the token after "
                       "“{next}” is picked (the end of prefill picked “{next}” the same way). Reading those scores "
                       "is about {bytes}, {ms}: negligible. The picked token feeds the next turn.",

        "none": "—", "cpu": "not counted (CPU)", "counted": "in the previous cell",
        "no_hbm": "tokenizing is a vocabulary lookup on the CPU; no GPU memory is touched",
        "no_matmul": "a table lookup, no matrix multiply",
        "cpu_time": "on the CPU, outside the GPU's steps; not counted",
        "write_flops": "K, V and the state were computed in prefill's forward pass; this cell only writes them",
        "read_flops": "reading only: the step's FLOPs are all in “Compute 1 token”",
        "compute_bytes": "the bytes it uses are in “Read the weights” and “Read KV and state”",
        "weights": "{n} matmul parameters × {bpp} bytes = {b} B = {fmt}",
        "weights_part": "{b} B (weights)",
        "kv_rows": "{rows} × {row} B (KV)",
        "state_once": "{state} B (recurrent state)",
        "state_twice": "2 × {state} B (state read and written back)",
        "pre_flops": "2 × {n} × {t} + 2 × {head} (LM head, last position only) + {attn} × {pairs} (causal attention) "
                     "= {f} FLOP = {fmt}",
        "dec_flops": "2 × {n} + {attn} × {ctx} (attention over {ctx} cached tokens) = {f} FLOP = {fmt}",
        "logits": "{vocab} logits × {lb} bytes (FP32) = {b} B = {fmt}",
        "lm_head": "LM head 2 × {vocab} × {hidden} = {f} FLOP, counted in “Compute 1 token”; picking only "
                   "compares {vocab} numbers, not counted",
        "in_prefill": " (part of prefill's {ms})",
        "off_roofline": " (outside the roofline total)",
        "bound.memory": "bandwidth-bound",
        "bound.compute": "compute-bound",
        "phrase.kv_part": "{full} full-attention layers keep one K, V row per token ({row} B), {t} rows = {kv}; ",
        "phrase.state_write": "{gdn} GDN layers keep a fixed-size recurrent state, {state}; ",
        "phrase.state_none": "this model has no recurrent state; ",
        "phrase.state_read": "; the recurrent state is read, updated and written back (2 × {state})",
    },
}

# The page is its own template (site/templates/widgets/request-path.html): the step control is the diagram.
# The layout holds only the capacity flag, which the template draws with the kit's macro (and the build checks).
WIDGET = Widget(
    controls=(
        Select("step", default="read-weights", options=request.PATH, style="buttons"),
        choices.hardware(),
        choices.model(),
        choices.state_dtype(),
    ),
    layout=(Flag("capacity"), choices.no_state_note()),
)


def render(state) -> dict:
    """The request-path view for any state: the selected cell's bytes, FLOPs, time and note, plus the decode step."""
    s = WIDGET.coerce(state)
    facts = _gather_facts(s)
    stage = facts.stages[s["step"]]
    cell = CELL_TEXTS[s["step"]](facts)
    resident = model_size.resident_weight_bytes(facts.m)
    outputs = {
        **capacity.outputs(resident, facts.hw),
        "step_bytes": output(stage.bytes, cell["bytes"]),
        "step_flops": output(stage.flops, cell["flops"]),
        "step_ms": output(stage.time_s * 1e3, cell["ms"]),
        "step_note": output(0, cell["note"]),
        "decode_ms": output(facts.decode.time_s * 1e3, fmt_ms(facts.decode.time_s)),
        # The running example, for the template: the hints and cell labels count its tokens, the loop quotes
        # the token after it, and the paragraph above the diagram tells it.
        "prompt_tokens": output(facts.tokens, fmt_grouped(facts.tokens)),
        "next_token": output(1, facts.example.next_word),
        "example": output(0, facts.text["example"].format(**_quoted(facts))),
    }
    derivations = {
        "step_bytes": cell["bytes_how"],
        "step_flops": cell["flops_how"],
        "step_ms": cell["ms_how"],
        "decode_ms": step_time_derivation(facts.decode, facts.hw),
    }
    flags = {"capacity": not capacity.fits(resident, facts.hw), "no_state": choices.no_state(facts.m)}
    return view(s, outputs, flags=flags, derivations=derivations)


@dataclass(frozen=True)
class _Facts:
    """Everything a cell's text may quote, for one valid state."""

    lang: str
    example: request.Example
    m: presets.Model
    hw: presets.Hardware
    stages: Mapping[str, request.Stage]
    prefill: roofline.Estimate
    decode: roofline.Estimate
    tokens: int  # prompt tokens = context of the first decode step
    kv_row: int
    state: int

    @property
    def text(self) -> dict[str, str]:
        return TEXT[self.lang]

    def note(self, cell: str, **values) -> str:
        return self.text[f"note.{cell}"].format(**values)


def _gather_facts(s: dict) -> _Facts:
    hw, m, dtype = choices.gpu(s), presets.model(s["model"]), s["state_dtype"]
    example = request.example(s["lang"])
    tokens = len(example.tokens)
    return _Facts(
        lang=s["lang"], example=example, m=m, hw=hw,
        stages=request.path_stages(m, hw, prompt_tokens=tokens, state_dtype=dtype),
        prefill=roofline.prefill(m, hw, tokens=tokens, state_dtype=dtype),
        decode=roofline.decode(m, hw, batch=1, context=tokens, state_dtype=dtype),
        tokens=tokens,
        kv_row=cache.kv_bytes_per_token(m),
        state=cache.state_bytes_per_request(m, dtype),
    )


def _quoted(f: _Facts) -> dict:
    """The running example as the texts quote it: {prompt}, {pieces}, {next} and {t}."""
    return {"prompt": f.example.prompt, "pieces": " · ".join(f.example.words), "next": f.example.next_word,
            "t": f.tokens}


def _tokenize_text(f: _Facts) -> dict:
    t = f.text
    quoted = _quoted(f)
    note = f.note("tokenize", prompt=quoted["prompt"], t=f.tokens, pieces=quoted["pieces"])
    return {"bytes": fmt_bytes(0), "bytes_how": t["no_hbm"], "flops": fmt_flops(0), "flops_how": t["no_matmul"],
            "ms": t["cpu"], "ms_how": t["cpu_time"], "note": note}


def _prefill_text(f: _Facts) -> dict:
    stage, t = f.stages["prefill"], f.text
    parts = [t["weights_part"].format(b=fmt_grouped(model_size.matmul_weight_bytes(f.m))), _kv_rows(f, f.tokens)]
    if f.state:
        parts.append(t["state_once"].format(state=fmt_grouped(f.state)))
    flops_how = t["pre_flops"].format(
        n=fmt_grouped(model_size.matmul_params(f.m) - model_size.lm_head_params(f.m)), t=f.tokens,
        head=fmt_grouped(model_size.lm_head_params(f.m)), attn=fmt_grouped(cache.attention_flops_per_cached_token(f.m)),
        pairs=f.tokens * (f.tokens + 1) // 2,
        f=fmt_grouped(stage.flops), fmt=fmt_flops(stage.flops))
    note = f.note("prefill", t=f.tokens, next=f.example.next_word, weights=fmt_bytes(f.stages["read-weights"].bytes),
                  flops=fmt_flops(stage.flops), bytes=fmt_bytes(stage.bytes), ms=fmt_ms(stage.time_s),
                  bound=t[f"bound.{f.prefill.bound}"])
    return {"bytes": fmt_bytes(stage.bytes), "bytes_how": _sum_of(parts, stage.bytes),
            "flops": fmt_flops(stage.flops), "flops_how": flops_how,
            "ms": fmt_ms(stage.time_s), "ms_how": step_time_derivation(f.prefill, f.hw), "note": note}


def _write_cache_text(f: _Facts) -> dict:
    stage, t = f.stages["write-cache"], f.text
    parts = [_kv_rows(f, f.tokens)]
    if f.state:
        parts.append(t["state_once"].format(state=fmt_grouped(f.state)))
    kv_part = t["phrase.kv_part"].format(full=f.m.full_attention_layers, row=fmt_grouped(f.kv_row), t=f.tokens,
                                         kv=fmt_bytes(f.tokens * f.kv_row))
    state_part = (t["phrase.state_write"].format(gdn=f.m.linear_attention_layers, state=fmt_bytes(f.state))
                  if f.state else t["phrase.state_none"])
    note = f.note("write-cache", kv_part=kv_part, state_part=state_part, bytes=fmt_bytes(stage.bytes))
    return {"bytes": fmt_bytes(stage.bytes), "bytes_how": _sum_of(parts, stage.bytes),
            "flops": t["none"], "flops_how": t["write_flops"],
            "ms": fmt_ms(stage.time_s),
            "ms_how": _bandwidth_time(f, stage) + t["in_prefill"].format(ms=fmt_ms(f.prefill.time_s)), "note": note}


def _read_weights_text(f: _Facts) -> dict:
    stage, t = f.stages["read-weights"], f.text
    bytes_how = t["weights"].format(n=fmt_grouped(model_size.matmul_params(f.m)), bpp=f.m.weight_bytes_per_param,
                                    b=fmt_grouped(stage.bytes), fmt=fmt_bytes(stage.bytes))
    note = f.note("read-weights", next=f.example.next_word, weights=fmt_bytes(stage.bytes), bw=_tb_per_s(f.hw),
                  ms=fmt_ms(stage.time_s))
    return {"bytes": fmt_bytes(stage.bytes), "bytes_how": bytes_how, "flops": t["none"], "flops_how": t["read_flops"],
            "ms": fmt_ms(stage.time_s), "ms_how": _bandwidth_time(f, stage), "note": note}


def _read_cache_text(f: _Facts) -> dict:
    stage, t = f.stages["read-cache"], f.text
    parts = [_kv_rows(f, f"({f.tokens} + 1)")]  # the cached rows read, the new row written
    if f.state:
        parts.append(t["state_twice"].format(state=fmt_grouped(f.state)))
    state_part = t["phrase.state_read"].format(state=fmt_bytes(f.state)) if f.state else ""
    note = f.note("read-cache", next=f.example.next_word, t=f.tokens, state_part=state_part,
                  bytes=fmt_bytes(stage.bytes), ms=fmt_ms(stage.time_s))
    return {"bytes": fmt_bytes(stage.bytes), "bytes_how": _sum_of(parts, stage.bytes),
            "flops": t["none"], "flops_how": t["read_flops"],
            "ms": fmt_ms(stage.time_s), "ms_how": _bandwidth_time(f, stage), "note": note}


def _compute_text(f: _Facts) -> dict:
    stage, t = f.stages["compute"], f.text
    flops_how = t["dec_flops"].format(
        n=fmt_grouped(model_size.matmul_params(f.m)), attn=fmt_grouped(cache.attention_flops_per_cached_token(f.m)),
        ctx=f.tokens, f=fmt_grouped(stage.flops), fmt=fmt_flops(stage.flops))
    share = 100 * stage.time_s / f.stages["read-weights"].time_s
    note = f.note("compute", t=f.tokens, flops=fmt_flops(stage.flops), peak=_tflops(f.hw), ms=fmt_ms(stage.time_s),
                  pct=f"{fmt_sig(share, 2)}%")
    return {"bytes": t["none"], "bytes_how": t["compute_bytes"], "flops": fmt_flops(stage.flops),
            "flops_how": flops_how, "ms": fmt_ms(stage.time_s),
            "ms_how": f"{fmt_flops(stage.flops)} ÷ {_tflops(f.hw)} TFLOP/s = {fmt_ms(stage.time_s)}", "note": note}


def _sample_text(f: _Facts) -> dict:
    stage, t = f.stages["sample"], f.text
    vocab = fmt_grouped(f.m.vocab)
    bytes_how = t["logits"].format(vocab=vocab, lb=request.LOGIT_BYTES, b=fmt_grouped(stage.bytes),
                                   fmt=fmt_bytes(stage.bytes))
    flops_how = t["lm_head"].format(vocab=vocab, hidden=fmt_grouped(f.m.hidden),
                                    f=fmt_grouped(2 * model_size.lm_head_params(f.m)))
    note = f.note("sample", vocab=vocab, next=f.example.next_word, bytes=fmt_bytes(stage.bytes),
                  ms=fmt_ms(stage.time_s))
    return {"bytes": fmt_bytes(stage.bytes), "bytes_how": bytes_how, "flops": t["counted"], "flops_how": flops_how,
            "ms": fmt_ms(stage.time_s), "ms_how": _bandwidth_time(f, stage) + t["off_roofline"], "note": note}


CELL_TEXTS = {
    "tokenize": _tokenize_text,
    "prefill": _prefill_text,
    "write-cache": _write_cache_text,
    "read-weights": _read_weights_text,
    "read-cache": _read_cache_text,
    "compute": _compute_text,
    "sample": _sample_text,
}


def _kv_rows(f: _Facts, rows) -> str:
    return f.text["kv_rows"].format(rows=rows, row=fmt_grouped(f.kv_row))


def _sum_of(parts: list[str], total: float) -> str:
    return f"{' + '.join(parts)} = {fmt_grouped(total)} B = {fmt_bytes(total)}"


def _bandwidth_time(f: _Facts, stage: request.Stage) -> str:
    return f"{fmt_bytes(stage.bytes)} ÷ {_tb_per_s(f.hw)} TB/s = {fmt_ms(stage.time_s)}"


def _tflops(hw: presets.Hardware) -> str:
    return f"{hw.peak_flops_per_s / 1e12:g}"


def _tb_per_s(hw: presets.Hardware) -> str:
    return f"{hw.bandwidth_bytes_per_s / 1e12:g}"
