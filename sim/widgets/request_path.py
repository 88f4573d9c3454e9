"""Request path: one request's trip through the server, cell by cell, with the real numbers of each cell."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sim import cache, params, presets, request, roofline
from sim.widgets.common import hardware_select, model_select, state_dtype_select
from sim.widgets.controls import Select, coerce_state
from sim.widgets.view import fmt_bytes, fmt_flops, fmt_grouped, fmt_ms, fmt_sig, output, view

CELL_LABELS = {
    "tokenize": {"zh": "分词", "en": "Tokenize"},
    "prefill": {"zh": "prefill：4 个 token 一次前向", "en": "Prefill: 4 tokens in one pass"},
    "write-cache": {"zh": "写 KV cache 与递归状态", "en": "Write KV cache and state"},
    "read-weights": {"zh": "读权重", "en": "Read the weights"},
    "read-cache": {"zh": "读 KV 与状态", "en": "Read KV and state"},
    "compute": {"zh": "算 1 个 token", "en": "Compute 1 token"},
    "sample": {"zh": "挑出下一个字", "en": "Pick the next token"},
}

PARAMS = (
    Select("step", {"zh": "一次请求走过的路（点任一格）", "en": "One request's path (pick a cell)"},
           default="read-weights", options=tuple((key, CELL_LABELS[key]) for key in request.PATH), style="buttons"),
    hardware_select(),
    model_select(),
    state_dtype_select(),
)

TEXT = {
    "zh": {
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
        "pre_flops": "2 × {n} × {t} + {attn} × {pairs}（因果注意力）= {f} FLOP = {fmt}",
        "dec_flops": "2 × {n} + {attn} × {ctx}（对 {ctx} 个缓存 token 的注意力）= {f} FLOP = {fmt}",
        "logits": "{vocab} 个 logits × {lb} 字节（FP32）= {b} B = {fmt}",
        "lm_head": "LM head 2 × {vocab} × {hidden} = {f} FLOP，已计入「算 1 个 token」；"
                   "挑字只是在 {vocab} 个数里比较，不计",
        "in_prefill": "（已含在 prefill 的 {ms} 里）",
        "off_roofline": "（不在屋顶线的账里）",
    },
    "en": {
        "none": "—", "cpu": "not counted (CPU)", "counted": "in the previous cell",
        "no_hbm": "tokenizing is a vocabulary lookup on the CPU; no GPU memory is touched",
        "no_matmul": "a table lookup, no matrix multiply",
        "cpu_time": "on the CPU, outside the GPU's steps; not counted",
        "write_flops": "K, V and the state were computed in prefill's forward pass; this cell only writes them",
        "read_flops": "reading only: the step's FLOPs are all in 'Compute 1 token'",
        "compute_bytes": "the bytes it uses are in 'Read the weights' and 'Read KV and state'",
        "weights": "{n} matmul parameters × {bpp} bytes = {b} B = {fmt}",
        "weights_part": "{b} B (weights)",
        "kv_rows": "{rows} × {row} B (KV)",
        "state_once": "{state} B (recurrent state)",
        "state_twice": "2 × {state} B (state read and written back)",
        "pre_flops": "2 × {n} × {t} + {attn} × {pairs} (causal attention) = {f} FLOP = {fmt}",
        "dec_flops": "2 × {n} + {attn} × {ctx} (attention over {ctx} cached tokens) = {f} FLOP = {fmt}",
        "logits": "{vocab} logits × {lb} bytes (FP32) = {b} B = {fmt}",
        "lm_head": "LM head 2 × {vocab} × {hidden} = {f} FLOP, counted in 'Compute 1 token'; picking only "
                   "compares {vocab} numbers, not counted",
        "in_prefill": " (part of prefill's {ms})",
        "off_roofline": " (outside the roofline total)",
    },
}

NOTES = {
    "zh": {
        "tokenize": "分词在 CPU 上完成：「{prompt}」按词表切成 {t} 个 token（{pieces}），变成 {t} 个整数 id。"
                    "GPU 还没开始干活：不读显存，也不做矩阵乘。",
        "prefill": "{t} 个 token 一起过一遍模型：{weights} 权重读一遍，{t} 个 token 共用，共做 {flops} 运算；"
                   "最后一个位置的输出挑出了「{next}」。读写 {bytes}，屋顶线下界 {ms}，{bound}。",
        "write-cache": "prefill 顺手把以后要用的东西存下：{kv_part}{state_part}合计 {bytes}，"
                       "已算在 prefill 的字节里。",
        "read-weights": "decode 第一圈把「{next}」喂进去。为了这 1 个 token，{weights} 权重要从显存整个读一遍，"
                        "按 {bw} TB/s 要 {ms}，占了这一圈的绝大部分。",
        "read-cache": "「{next}」要回看前面 {t} 个 token：读 {t} 行 KV，再写入自己的 1 行{state_part}。"
                      "共 {bytes}，{ms}，远小于读权重。",
        "compute": "真正的计算：每个权重一次乘加，再加上对 {t} 个缓存 token 的注意力，共 {flops}；"
                   "按峰值 {peak} TFLOP/s 只要 {ms}，是读权重时间的 {pct}，而且和读同时进行。",
        "sample": "最后一层给词表里 {vocab} 个词各打一个分（logits），从中挑出「{next}」后面的字"
                  "（prefill 末尾挑出「{next}」也是这一步）。读这些分数约 {bytes}、{ms}，可以忽略；"
                  "挑出的字就是下一圈的输入。",
    },
    "en": {
        "tokenize": "Tokenizing runs on the CPU: 「{prompt}」 is split into {t} tokens ({pieces}), i.e. {t} integer "
                    "ids. The GPU has not started: no memory read, no matrix multiply.",
        "prefill": "The {t} tokens go through the model together: the {weights} of weights is read once and shared "
                   "by all {t}, {flops} in total; the last position's output picks 「{next}」. {bytes} moved; "
                   "roofline bound {ms}, {bound}.",
        "write-cache": "Prefill also stores what later steps need: {kv_part}{state_part}{bytes} in all, already part "
                       "of prefill's bytes.",
        "read-weights": "The first decode turn feeds in 「{next}」. For this one token the whole {weights} of weights "
                        "is read from memory: {ms} at {bw} TB/s, almost the whole turn.",
        "read-cache": "「{next}」 looks back at {t} tokens: {t} KV rows read and its own row written{state_part}. "
                      "{bytes} in all, {ms}: far less than the weights.",
        "compute": "The actual arithmetic: one multiply-add per weight plus attention over {t} cached tokens, "
                   "{flops}. At the {peak} TFLOP/s peak that is {ms}, {pct} of the weight-read time, and it "
                   "overlaps with the reads.",
        "sample": "The last layer scores all {vocab} vocabulary entries (the logits) and the token after 「{next}」 "
                  "is picked (the end of prefill picked 「{next}」 the same way). Reading those scores is about "
                  "{bytes}, {ms}: negligible. The picked token feeds the next turn.",
    },
}

BOUND = {"zh": {"memory": "被带宽卡住", "compute": "被算力卡住"},
         "en": {"memory": "bandwidth-bound", "compute": "compute-bound"}}

STATE_PHRASES = {
    "zh": {
        "kv_part": "{full} 层全注意力每个 token 存一行 K、V（{row} B），{t} 行共 {kv}；",
        "state_write": "{gdn} 层 GDN 各存一份固定大小的递归状态，共 {state}；",
        "state_none": "这个模型没有递归状态；",
        "state_read": "；递归状态读出、更新、再写回（2 × {state}）",
    },
    "en": {
        "kv_part": "{full} full-attention layers keep one K, V row per token ({row} B), {t} rows = {kv}; ",
        "state_write": "{gdn} GDN layers keep a fixed-size recurrent state, {state}; ",
        "state_none": "this model has no recurrent state; ",
        "state_read": "; the recurrent state is read, updated and written back (2 × {state})",
    },
}


def render(state) -> dict:
    """The request-path view for any state: the selected cell's bytes, FLOPs, time and note, plus the decode step."""
    s = coerce_state(PARAMS, state)
    facts = _gather_facts(s)
    stage = facts.stages[s["step"]]
    cell = CELL_TEXTS[s["step"]](facts)
    outputs = {
        "step_bytes": output(stage.bytes, cell["bytes"]),
        "step_flops": output(stage.flops, cell["flops"]),
        "step_ms": output(stage.time_s * 1e3, cell["ms"]),
        "step_note": output(0, cell["note"]),
        "decode_ms": output(facts.decode.time_s * 1e3, fmt_ms(facts.decode.time_s)),
    }
    derivations = {
        "step_bytes": cell["bytes_how"],
        "step_flops": cell["flops_how"],
        "step_ms": cell["ms_how"],
        "decode_ms": _max_derivation(facts.decode, facts.hw),
    }
    return view(s, outputs, derivations=derivations)


@dataclass(frozen=True)
class _Facts:
    """Everything a cell's text may quote, for one valid state."""

    lang: str
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

    @property
    def note(self) -> dict[str, str]:
        return NOTES[self.lang]


def _gather_facts(s: dict) -> _Facts:
    hw, m, dtype = presets.hardware(s["hardware"]), presets.model(s["model"]), s["state_dtype"]
    tokens = len(request.PROMPT_TOKENS)
    return _Facts(
        lang=s["lang"], m=m, hw=hw,
        stages=request.path_stages(m, hw, state_dtype=dtype, prompt_tokens=tokens),
        prefill=roofline.prefill(m, hw, tokens=tokens, state_dtype=dtype),
        decode=roofline.decode(m, hw, batch=1, context=tokens, state_dtype=dtype),
        tokens=tokens,
        kv_row=cache.kv_bytes_per_token(m),
        state=cache.state_bytes_per_request(m, dtype),
    )


def _tokenize_text(f: _Facts) -> dict:
    t = f.text
    note = f.note["tokenize"].format(prompt="".join(request.PROMPT_TOKENS), t=f.tokens,
                                     pieces=" · ".join(request.PROMPT_TOKENS))
    return {"bytes": fmt_bytes(0), "bytes_how": t["no_hbm"], "flops": fmt_flops(0), "flops_how": t["no_matmul"],
            "ms": t["cpu"], "ms_how": t["cpu_time"], "note": note}


def _prefill_text(f: _Facts) -> dict:
    stage, t = f.stages["prefill"], f.text
    parts = [t["weights_part"].format(b=fmt_grouped(params.matmul_weight_bytes(f.m))), _kv_rows(f, f.tokens)]
    if f.state:
        parts.append(t["state_once"].format(state=fmt_grouped(f.state)))
    flops_how = t["pre_flops"].format(
        n=fmt_grouped(params.matmul_params(f.m)), t=f.tokens,
        attn=fmt_grouped(cache.attention_flops_per_cached_token(f.m)), pairs=f.tokens * (f.tokens + 1) // 2,
        f=fmt_grouped(stage.flops), fmt=fmt_flops(stage.flops))
    note = f.note["prefill"].format(t=f.tokens, next=request.NEXT_TOKEN,
                                    weights=fmt_bytes(f.stages["read-weights"].bytes),
                                    flops=fmt_flops(stage.flops), bytes=fmt_bytes(stage.bytes),
                                    ms=fmt_ms(stage.time_s), bound=BOUND[f.lang][f.prefill.bound])
    return {"bytes": fmt_bytes(stage.bytes), "bytes_how": _sum_of(parts, stage.bytes),
            "flops": fmt_flops(stage.flops), "flops_how": flops_how,
            "ms": fmt_ms(stage.time_s), "ms_how": _max_derivation(f.prefill, f.hw), "note": note}


def _write_cache_text(f: _Facts) -> dict:
    stage, t, phrases = f.stages["write-cache"], f.text, STATE_PHRASES[f.lang]
    parts = [_kv_rows(f, f.tokens)]
    if f.state:
        parts.append(t["state_once"].format(state=fmt_grouped(f.state)))
    kv_part = phrases["kv_part"].format(full=f.m.full_attention_layers, row=fmt_grouped(f.kv_row), t=f.tokens,
                                        kv=fmt_bytes(f.tokens * f.kv_row))
    state_part = (phrases["state_write"].format(gdn=f.m.linear_attention_layers, state=fmt_bytes(f.state))
                  if f.state else phrases["state_none"])
    note = f.note["write-cache"].format(kv_part=kv_part, state_part=state_part, bytes=fmt_bytes(stage.bytes))
    return {"bytes": fmt_bytes(stage.bytes), "bytes_how": _sum_of(parts, stage.bytes),
            "flops": t["none"], "flops_how": t["write_flops"],
            "ms": fmt_ms(stage.time_s),
            "ms_how": _bandwidth_time(f, stage) + t["in_prefill"].format(ms=fmt_ms(f.prefill.time_s)), "note": note}


def _read_weights_text(f: _Facts) -> dict:
    stage, t = f.stages["read-weights"], f.text
    bytes_how = t["weights"].format(n=fmt_grouped(params.matmul_params(f.m)), bpp=f.m.weight_bytes_per_param,
                                    b=fmt_grouped(stage.bytes), fmt=fmt_bytes(stage.bytes))
    note = f.note["read-weights"].format(next=request.NEXT_TOKEN, weights=fmt_bytes(stage.bytes),
                                         bw=_tb_per_s(f.hw), ms=fmt_ms(stage.time_s))
    return {"bytes": fmt_bytes(stage.bytes), "bytes_how": bytes_how, "flops": t["none"], "flops_how": t["read_flops"],
            "ms": fmt_ms(stage.time_s), "ms_how": _bandwidth_time(f, stage), "note": note}


def _read_cache_text(f: _Facts) -> dict:
    stage, t = f.stages["read-cache"], f.text
    parts = [_kv_rows(f, f"({f.tokens} + 1)")]  # the cached rows read, the new row written
    if f.state:
        parts.append(t["state_twice"].format(state=fmt_grouped(f.state)))
    state_part = STATE_PHRASES[f.lang]["state_read"].format(state=fmt_bytes(f.state)) if f.state else ""
    note = f.note["read-cache"].format(next=request.NEXT_TOKEN, t=f.tokens, state_part=state_part,
                                       bytes=fmt_bytes(stage.bytes), ms=fmt_ms(stage.time_s))
    return {"bytes": fmt_bytes(stage.bytes), "bytes_how": _sum_of(parts, stage.bytes),
            "flops": t["none"], "flops_how": t["read_flops"],
            "ms": fmt_ms(stage.time_s), "ms_how": _bandwidth_time(f, stage), "note": note}


def _compute_text(f: _Facts) -> dict:
    stage, t = f.stages["compute"], f.text
    flops_how = t["dec_flops"].format(
        n=fmt_grouped(params.matmul_params(f.m)), attn=fmt_grouped(cache.attention_flops_per_cached_token(f.m)),
        ctx=f.tokens, f=fmt_grouped(stage.flops), fmt=fmt_flops(stage.flops))
    share = 100 * stage.time_s / f.stages["read-weights"].time_s
    note = f.note["compute"].format(t=f.tokens, flops=fmt_flops(stage.flops), peak=_tflops(f.hw),
                                    ms=fmt_ms(stage.time_s), pct=f"{fmt_sig(share, 2)}%")
    return {"bytes": t["none"], "bytes_how": t["compute_bytes"], "flops": fmt_flops(stage.flops),
            "flops_how": flops_how, "ms": fmt_ms(stage.time_s),
            "ms_how": f"{fmt_flops(stage.flops)} ÷ {_tflops(f.hw)} TFLOP/s = {fmt_ms(stage.time_s)}", "note": note}


def _sample_text(f: _Facts) -> dict:
    stage, t = f.stages["sample"], f.text
    vocab = fmt_grouped(f.m.vocab)
    bytes_how = t["logits"].format(vocab=vocab, lb=request.LOGIT_BYTES, b=fmt_grouped(stage.bytes),
                                   fmt=fmt_bytes(stage.bytes))
    flops_how = t["lm_head"].format(vocab=vocab, hidden=fmt_grouped(f.m.hidden),
                                    f=fmt_grouped(2 * params.lm_head_params(f.m)))
    note = f.note["sample"].format(vocab=vocab, next=request.NEXT_TOKEN, bytes=fmt_bytes(stage.bytes),
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


def _max_derivation(e: roofline.Estimate, hw: presets.Hardware) -> str:
    return (
        f"max({fmt_flops(e.flops)} ÷ {_tflops(hw)} TFLOP/s, {fmt_bytes(e.bytes)} ÷ {_tb_per_s(hw)} TB/s) "
        f"= max({fmt_ms(e.compute_time_s)}, {fmt_ms(e.memory_time_s)}) = {fmt_ms(e.time_s)}"
    )


def _tflops(hw: presets.Hardware) -> str:
    return f"{hw.peak_flops_per_s / 1e12:g}"


def _tb_per_s(hw: presets.Hardware) -> str:
    return f"{hw.bandwidth_bytes_per_s / 1e12:g}"
