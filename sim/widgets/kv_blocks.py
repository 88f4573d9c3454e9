"""KV blocks: where many requests' KV cache lives in GPU memory, reserved contiguously or paged in blocks.

The physics and every convention are in sim/serving/kv_layout.py: shares are averages over every step of every request
of a trace preset (1,000 requests, seed 0), max_requests the requests that fit at once on average beside the whole
checkpoint, each with its fixed recurrent state (FP32) apart from the KV; the saving of shared blocks counted over
the requests that would fit without sharing (kv_layout.Fit.unshared_requests, a readout too), so it never exceeds
the free memory. The memory map is one moment
(kv_layout.snapshot): the first 8,192 slots of the KV pool, the trace's requests admitted in order while they fit,
each at a seeded step of its output, drawn at one pixel per slot. Under paging, two pictures of the same moment
follow: request 1's block table (kv_layout.block_table: each logical block above the physical block it maps to,
its first and last entries when it is long) and, when something is shared, copy-on-write: the sequences that share
blocks side by side (request 1's samples, or the first requests behind a shared prefix), the same physical
numbers down the columns they map, each block's refcount beneath, and the block where each parted and made its own
copy. The bar is the GPU's memory (the share the engine may use, memory_fraction: all of it by default) with
max_requests running. The table puts the four policies side by side on the same requests.

Like every widget with a model and a GPU it carries the shared capacity flag (sim/kit/capacity.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sim.kit import (
    Controls,
    Flag,
    Panel,
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
from sim.kit.table import html_table
from sim.page import svg
from sim.page.display import fmt_bytes, fmt_grouped, fmt_share, fmt_sig
from sim.page.markup import escape
from sim.physics import cache, model_size, presets
from sim.serving import kv_layout, traces

STATE_DTYPE = "fp32"
WINDOW_SLOTS = 4 * kv_layout.MAX_TOKENS  # the map: four max-length reservations
ROW_SLOTS = 512  # slots per row of the map, one pixel each
CELL_SLOTS = 16  # the map's grid, and the resolution at which a request's slots are outlined
HIGHLIGHT = (0, 0)  # (request, sample) of the block table, copy-on-write and paged map: the trace's first request

TEXT = {
    "zh": {
        "title": "KV cache 放在哪：连续预留还是分页",
        "policy": "显存怎么分给请求",
        "policy=contiguous-max": "连续 · 按最大长度预留",
        "policy=contiguous-pow2": "连续 · 按 2 的幂预留",
        "policy=contiguous-oracle": "连续 · 按真实长度预留（先知）",
        "policy=paged": "分页 · 写到哪分到哪",
        "block_size": "块大小（每块多少 token，只对分页有效）",
        "trace": "请求长度",
        "trace=orca": "Orca 的合成负载：提示 32–512、输出 1–128 token",
        "trace=chat": "类聊天：提示 32–1,024、输出 1–1,024 token",
        "prefix_tokens": "共享的系统提示（token，接在每个提示前面）",
        "samples": "每个请求并行采样几份",
        "token_share": "KV 显存里真正存着 token 的比例",
        "reserved_share": "为还没生成的 token 预留着",
        "fragmentation_share": "永远用不上（内部碎片）",
        "max_requests": "平均同时放得下的请求数",
        "versus_max": "是「按最大长度预留」的 {ratio} 倍",
        "waste_per_request_tokens": "每个序列平均空着的槽（预留 + 用不上）",
        "kv_per_request": "一个请求平均占的 KV",
        "state_per_sequence": "每个序列的递归状态（不分页）",
        "shared_saving_bytes": "共享块省下的 KV 显存",
        "unshared_requests": "不共享时同时放得下的请求数",
        "unit.slots": "个槽",
        "block_size_unused": "连续预留不分块，块大小在这里不起作用。",
        "sharing_unused": "连续预留做不到共享：系统提示和每份采样的提示，都是每个序列各存一份。",
        "note": "一个槽存一个 token 在所有全注意力层的 K 和 V。比例按每个请求一生中的每一步平均（每步同等权重），"
                "相当于一台忙碌的服务器随便某一刻的样子；请求数是平均同时放得下的个数。混合模型每个序列另有一份"
                "固定大小的递归状态（FP32），不分页，算进请求数，不算进比例。没有模拟外部碎片：连续预留一个挨一个摆放。",
        "map": "某一刻的 KV 池，描边的是其中一个请求的 KV",
        "map.scale": "一个像素一个槽：每行 {row} 个，每格 {cell} 个",
        "map.title": "某一刻：前 {slots} 个槽里放下 {requests} 个请求",
        "map.empty": "显存里没有留给 KV 的地方",
        "map.label": "KV 池示意图",
        "map.piece": "第 {request} 个请求（描边）的 KV 分在 {pieces} 处",
        "map.piece.one": "第 {request} 个请求（描边）的 KV 连成一整块",
        "state.token": "存着 token",
        "state.shared": "共享块",
        "state.reserved": "预留给以后的 token",
        "state.never-used": "永远用不上",
        "state.free": "空闲",
        "legend.item": "{label}：{slots}",
        "bar": "整张卡的显存，平均同时放得下的那么多请求在跑时",
        "bar.title": "{gpu} 的 {memory} 显存：跑 {requests} 个请求时",
        "bar.title_share": "{gpu} 的 {memory} 显存里引擎可用的 {usable}（比例 {share}）：跑 {requests} 个请求时",
        "bar.label": "整卡显存条",
        "part.weights": "权重",
        "part.state": "递归状态",
        "part.token": "KV：存着 token",
        "part.reserved": "KV：预留",
        "part.never-used": "KV：用不上",
        "part.free": "空闲",
        "table": "四种分配方式，同一批请求（{trace}；{model}，{gpu}；分页块大小 {block}）",
        "table.label": "四种分配方式对比",
        "col.policy": "分配方式",
        "col.token_share": "存 token 的比例",
        "col.reserved": "预留",
        "col.never_used": "用不上",
        "col.kv_per_request": "每个请求的 KV",
        "col.max_requests": "同时放得下",
        "trace_short=orca": "Orca 负载",
        "trace_short=chat": "类聊天负载",
        "how.token_share": "存 token {tokens} ÷（存 token {tokens} + 预留 {reserved} + 用不上 {never}）= {share}",
        "how.max_requests": "⌊可用 {free} ÷（每个请求的 KV {kv} + {samples} × 递归状态 {state}）⌋ = {n}",
        "how.max_requests_prefix": "⌊（可用 {free} − 共享前缀的块 {shared} − 前缀末尾的递归状态 {prefix_state}）÷"
                                   "（每个请求的 KV {kv} + {samples} × 递归状态 {state}）⌋ = {n}",
        "how.none_fit": "权重 {weights} 已经占满 {memory} → 0",
        "how.waste_paged": "只有每个序列的最后一块可能没写满：平均 {empty} 个空槽 < 块大小 {block}",
        "how.waste_contiguous": "每个序列平均预留 {reserved} 个、用不上 {never} 个槽",
        "how.saving": "只算不共享也放得下的 {n} 个请求：它们各自映射、不必复制的块 − 前缀自己存的那一份 = {saving}"
                      "（所以最多是可用的 {max}）",
        "how.unshared_requests": "⌊可用 {free} ÷（每个请求连同自己复制的那份 KV {kv} + {samples} × 递归状态 {state}）⌋"
                                 " = {n}",
        "how.kv_per_request": "每步平均占 {slots} 个槽 × 每个 token {per_token} = {kv}",
        "heading.blocks": "块表：逻辑块映射到哪个物理块",
        "blocks": "同一刻第 1 个请求的块表：上面是逻辑块号，下面是它映射到的物理块号",
        "blocks.label": "第 1 个请求的块表",
        "blocks.title": "{blocks} 个逻辑块，块大小 {block}",
        "blocks.alt": "第 1 个请求的块表，逻辑块 → 物理块，{blocks} 个逻辑块，块大小 {block}",
        "blocks.more": "+{n}",
        "blocks.none": "连续预留没有块表",
        "blocks.entry": "{logical} → {physical}",
        "blocks.entry_shared": "{logical} → {physical}（{refcount} 个序列共用）",
        "blocks.entry_copied": "{logical} → {physical}（自己复制的 {copied} 个 token）",
        "blocks.entry_last": "{logical} → {physical}（写了 {tokens} 个 token）",
        "blocks.omitted": "中间 {n} 块略去",
        "kind.shared": "共享块（×n：n 个序列映射它）",
        "kind.copied": "写时复制：自己的一份",
        "kind.own": "自己的块，写满了",
        "kind.last": "自己的块，正在写",
        "heading.cow": "写时复制：哪些块共享，谁复制了哪块",
        "cow": "同一刻共享块的几个序列：同一列的物理块号相同，就是同一块显存",
        "cow.label": "写时复制示意图",
        "cow.title.samples": "第 1 个请求的 {samples} 份采样",
        "cow.title.some_samples": "第 1 个请求：{samples} 份采样里的前 {shown} 份",
        "cow.title.requests": "前 {shown} 个请求，同一段系统提示",
        "cow.title.none": "这一刻没有哪块被几个序列共用",
        "cow.row.sample": "第 {n} 份",
        "cow.row.request": "请求 {n}",
        "cow.logical": "逻辑块",
        "cow.refcount": "引用数",
        "cow.own_more": "+{n}",
        "cow.more_key": "+n：后面还有 n 块它自己的",
        "cow.alt.shared": "逻辑块 {first}–{last} 在每一行都是同样的物理块，每块 {refcount} 个序列共用",
        "cow.alt.copy": "{row}把 {tokens} 个共享的 token 复制进物理块 {physical}",
        "cow.alt.aligned": "共享部分正好在块边界结束，没有要复制的",
    },
    "en": {
        "title": "Where the KV cache lives: reserved contiguously, or paged",
        "policy": "How memory is handed to requests",
        "policy=contiguous-max": "Contiguous · reserve the max length",
        "policy=contiguous-pow2": "Contiguous · reserve a power of two",
        "policy=contiguous-oracle": "Contiguous · reserve the true length (oracle)",
        "policy=paged": "Paged · blocks as tokens are written",
        "block_size": "Block size (tokens per block; paged only)",
        "trace": "Request lengths",
        "trace=orca": "Orca's synthetic trace: prompts 32–512, outputs 1–128 tokens",
        "trace=chat": "Chat-like: prompts 32–1,024, outputs 1–1,024 tokens",
        "prefix_tokens": "Shared system prompt (tokens, in front of every prompt)",
        "samples": "Parallel samples per request",
        "token_share": "Share of KV memory that holds tokens",
        "reserved_share": "Reserved for tokens not yet generated",
        "fragmentation_share": "Never used (internal fragmentation)",
        "max_requests": "Requests that fit at once, on average",
        "versus_max": "{ratio}× what reserving the max length fits",
        "waste_per_request_tokens": "Empty slots per sequence (reserved + never used)",
        "kv_per_request": "KV a request holds, on average",
        "state_per_sequence": "Recurrent state per sequence (not paged)",
        "shared_saving_bytes": "KV memory the shared blocks save",
        "unshared_requests": "Requests that fit without sharing",
        "unit.slots": "slots",
        "block_size_unused": "Contiguous reservations have no blocks: the block size does nothing here.",
        "sharing_unused": "Contiguous reservations cannot share: each sequence keeps its own copy of the system "
                          "prompt and of its samples' prompt.",
        "note": "A slot holds one token's K and V in every full-attention layer. Shares are averaged over every step "
                "of every request's life (each step counts the same), what a busy server looks like at a random "
                "moment; requests are how many fit at once on average. A hybrid keeps a fixed-size recurrent state "
                "(FP32) per sequence as well: not paged, counted in the requests, not in the shares. External "
                "fragmentation is not simulated: contiguous reservations are packed end to end.",
        "map": "The KV pool at one moment, one request's KV outlined",
        "map.scale": "a pixel per slot: {row} a row, {cell} a cell",
        "map.title": "One moment: {requests} requests in the first {slots} slots",
        "map.empty": "No memory is left for KV",
        "map.label": "Map of the KV pool",
        "map.piece": "request {request} (outlined) has its KV in {pieces} places",
        "map.piece.one": "request {request} (outlined) has its KV in one place",
        "state.token": "Holds a token",
        "state.shared": "Shared block",
        "state.reserved": "Reserved for later tokens",
        "state.never-used": "Never used",
        "state.free": "Free",
        "legend.item": "{label}: {slots}",
        "bar": "The whole GPU's memory, with as many requests running as fit on average",
        "bar.title": "{gpu}'s {memory} with {requests} requests running",
        "bar.title_share": "The {usable} of {gpu}'s {memory} the engine may use (a share of {share}) with "
                           "{requests} requests running",
        "bar.label": "The whole GPU's memory",
        "part.weights": "Weights",
        "part.state": "Recurrent state",
        "part.token": "KV: tokens",
        "part.reserved": "KV: reserved",
        "part.never-used": "KV: never used",
        "part.free": "Free",
        "table": "The four policies on the same requests ({trace}; {model} on {gpu}; paged blocks of {block})",
        "table.label": "The four policies compared",
        "col.policy": "Policy",
        "col.token_share": "Holds tokens",
        "col.reserved": "Reserved",
        "col.never_used": "Never used",
        "col.kv_per_request": "KV per request",
        "col.max_requests": "Fit at once",
        "trace_short=orca": "Orca trace",
        "trace_short=chat": "chat-like trace",
        "how.token_share": "tokens {tokens} ÷ (tokens {tokens} + reserved {reserved} + never used {never}) = {share}",
        "how.max_requests": "⌊free {free} ÷ (KV per request {kv} + {samples} × recurrent state {state})⌋ = {n}",
        "how.max_requests_prefix": "⌊(free {free} − the prefix's shared blocks {shared} − the recurrent state at its "
                                   "end {prefix_state}) ÷ (KV per request {kv} + {samples} × recurrent state {state})⌋"
                                   " = {n}",
        "how.none_fit": "the weights {weights} fill the {memory} → 0",
        "how.waste_paged": "only a sequence's last block can be partly empty: {empty} empty slots on average "
                           "< block size {block}",
        "how.waste_contiguous": "per sequence, on average {reserved} slots reserved and {never} never used",
        "how.saving": "counted over the {n} requests that fit even without sharing: the blocks they map instead of "
                      "copying − the prefix's own copy = {saving} (so at most the free {max})",
        "how.unshared_requests": "⌊free {free} ÷ (KV per request with its own copies {kv} + {samples} × recurrent "
                                 "state {state})⌋ = {n}",
        "how.kv_per_request": "{slots} slots per step on average × {per_token} per token = {kv}",
        "heading.blocks": "The block table: which physical block each logical block is",
        "blocks": "Request 1's block table at the same moment: each logical block above the physical block it maps "
                  "to",
        "blocks.label": "Block table of request 1",
        "blocks.title": "{blocks} logical blocks, block size {block}",
        "blocks.alt": "Request 1's block table, logical block → physical block, {blocks} logical blocks, block size "
                      "{block}",
        "blocks.more": "+{n}",
        "blocks.none": "Contiguous reservations have no block table",
        "blocks.entry": "{logical} → {physical}",
        "blocks.entry_shared": "{logical} → {physical} (mapped by {refcount} sequences)",
        "blocks.entry_copied": "{logical} → {physical} ({copied} tokens it copied)",
        "blocks.entry_last": "{logical} → {physical} ({tokens} tokens written)",
        "blocks.omitted": "{n} blocks in between left out",
        "kind.shared": "Shared (×n: n sequences map it)",
        "kind.copied": "Copied on write: its own copy",
        "kind.own": "Its own block, full",
        "kind.last": "Its own block, being written",
        "heading.cow": "Copy-on-write: which blocks are shared, and who copied which",
        "cow": "Sequences sharing blocks at the same moment: the same physical number in a column is the same memory",
        "cow.label": "Copy-on-write picture",
        "cow.title.samples": "Request 1's {samples} samples",
        "cow.title.some_samples": "Request 1: {shown} of its {samples} samples",
        "cow.title.requests": "Requests 1–{shown}, one system prompt",
        "cow.title.none": "No block is mapped by more than one sequence at this moment",
        "cow.row.sample": "sample {n}",
        "cow.row.request": "request {n}",
        "cow.logical": "logical",
        "cow.refcount": "refcount",
        "cow.own_more": "+{n}",
        "cow.more_key": "+n: that many more blocks of its own",
        "cow.alt.shared": "logical blocks {first}–{last} are the same physical blocks in every row, each mapped by "
                          "{refcount} sequences",
        "cow.alt.copy": "{row} copied {tokens} shared tokens into physical block {physical}",
        "cow.alt.aligned": "the shared part ends on a block boundary, so nothing is copied",
    },
}


@dataclass(frozen=True)
class PowersOfTwo(Range):
    """A log slider over the powers of two from min to max; anything between snaps to the nearest power."""

    log: bool = True

    def coerce(self, value) -> int:
        whole = super().coerce(value)  # a whole number in range, or the default
        mantissa, exponent = math.frexp(whole)  # whole = mantissa x 2**exponent, 0.5 <= mantissa < 1
        return 2**exponent if 2 * mantissa * mantissa > 1 else 2 ** (exponent - 1)

    def stops(self) -> tuple[int, ...]:
        return tuple(2**k for k in range(self.min.bit_length() - 1, self.max.bit_length()))

    def slider_position(self, value: int) -> int:
        return self.stops().index(self.coerce(value))

    def problem(self, value) -> str | None:
        if value not in self.stops() or isinstance(value, bool):
            return f"{self.name} must be a power of two from {self.min} to {self.max}, got {value!r}"
        return None


WIDGET = Widget(
    controls=(
        Select("policy", default="contiguous-max", options=kv_layout.POLICIES, style="buttons"),
        PowersOfTwo("block_size", default=kv_layout.DEFAULT_BLOCK_SIZE, min=1, max=kv_layout.BLOCK_SIZES[-1]),
        Select("trace", default="orca", options=traces.PRESETS, style="buttons"),
        choices.model(),
        choices.hardware(),
        Range("prefix_tokens", default=0, min=0, max=kv_layout.MAX_PREFIX_TOKENS),
        Range("samples", default=1, min=1, max=kv_layout.MAX_SAMPLES),
        choices.memory_fraction(),
    ),
    layout=(
        Controls(),
        Flag("capacity"),
        Readouts(
            "token_share", "reserved_share", "fragmentation_share", Readout("max_requests", note="versus_max"),
            "waste_per_request_tokens", "kv_per_request", "state_per_sequence", "shared_saving_bytes",
            "unshared_requests",
        ),
        Flag("block_size_unused", tone="note"),
        Flag("sharing_unused", tone="note"),
        Svg("map", caption="map", label="map.label"),
        Panel("block_table", "heading.blocks", Svg("blocks", caption="blocks", label="blocks.label")),
        Panel("copy_on_write", "heading.cow", Svg("cow", caption="cow", label="cow.label")),
        Svg("bar", caption="bar", label="bar.label"),
        Svg("table", label="table.label"),
        Text("note"),
    ),
)

MAP_STATES = (kv_layout.TOKEN, kv_layout.SHARED, kv_layout.RESERVED, kv_layout.NEVER_USED, kv_layout.FREE)
COLOURS = {
    kv_layout.TOKEN: palette.colour("kv"), kv_layout.SHARED: palette.colour("shared"),
    kv_layout.RESERVED: palette.colour("reserved"), kv_layout.NEVER_USED: palette.colour("waste"),
    kv_layout.FREE: palette.colour("free"), "weights": palette.colour("weights"), "state": palette.colour("state"),
}
# Each part's edge: a gap of the background between parts, and an outline around free memory (the background).
EDGES = {kind: palette.colour("outline" if kind == kv_layout.FREE else "surface") for kind in COLOURS}


def render(state) -> dict:
    """The kv-blocks view for any state (invalid values replaced by defaults or clamped)."""
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    m, hw = presets.model(s["model"]), choices.gpu(s)  # the memory the engine may use
    sharing = {"prefix_tokens": s["prefix_tokens"], "samples": s["samples"]}
    fits = {p: kv_layout.fit(m, hw, s["trace"], p, s["block_size"], state_dtype=STATE_DTYPE, **sharing)
            for p in kv_layout.POLICIES}
    f = fits[s["policy"]]
    u = f.usage
    weights = model_size.resident_weight_bytes(m)
    base = fits["contiguous-max"].max_requests
    ratio = f.max_requests / base if base else 0.0
    empty = u.empty_slots_per_sequence
    outputs = {
        **capacity.outputs(weights, hw),
        "token_share": output(f.token_share * 100, fmt_share(f.token_share)),
        "reserved_share": output(f.reserved_share * 100, fmt_share(f.reserved_share)),
        "fragmentation_share": output(f.never_used_share * 100, fmt_share(f.never_used_share)),
        "max_requests": output(f.max_requests, fmt_grouped(f.max_requests)),
        "versus_max": output(ratio, t["versus_max"].format(ratio=fmt_sig(ratio))),
        "waste_per_request_tokens": output(empty, f"{fmt_sig(empty)} {t['unit.slots']}"),
        "kv_per_request": output(f.kv_bytes_per_request / 1e6, fmt_bytes(f.kv_bytes_per_request)),
        "state_per_sequence": output(f.state_bytes_per_sequence / 1e6, fmt_bytes(f.state_bytes_per_sequence)),
        "shared_saving_bytes": output(f.sharing_saving_bytes / 1e9, fmt_bytes(f.sharing_saving_bytes)),
        "unshared_requests": output(f.unshared_requests, fmt_grouped(f.unshared_requests)),
    }
    snap = kv_layout.trace_snapshot(s["trace"], s["policy"], s["block_size"], s["prefix_tokens"], s["samples"],
                                    min(WINDOW_SLOTS, kv_layout.budget_slots(m, hw)))
    contiguous = s["policy"] != "paged"
    flags = {
        "capacity": not capacity.fits(weights, hw),
        "block_size_unused": contiguous,
        "sharing_unused": contiguous and (s["prefix_tokens"] > 0 or s["samples"] > 1),
        "block_table": not contiguous,
        "copy_on_write": not contiguous and (s["prefix_tokens"] > 0 or s["samples"] > 1),
    }
    pictures = {"blocks": block_table(snap, s["lang"]), "cow": copy_on_write(snap, s["lang"])}
    drawn = {"map": svg.responsive(memory_map(snap, s["lang"]), memory_map(snap, s["lang"], narrow=True)),
             "bar": svg.responsive(memory_bar(f, hw, s["lang"]), memory_bar(f, hw, s["lang"], narrow=True))}
    return view(s, outputs, svg={"map": drawn["map"], **pictures, "bar": drawn["bar"],
                                 "table": policy_table(fits, m, hw, s, t)},
                flags=flags, derivations=_derivations(f, m, hw, weights, t))


def _derivations(f: kv_layout.Fit, m: presets.Model, hw: presets.Hardware, weights: int, t: dict) -> dict:
    u = f.usage
    per_sequence = u.steps * u.samples
    unshared_kv = (u.allocated_slot_steps + u.sharing_saving_slot_steps) * f.kv_bytes_per_token / u.steps
    if f.max_requests:
        requests = t["how.max_requests_prefix" if u.shared_prefix_slots else "how.max_requests"].format(
            free=fmt_bytes(f.free_bytes), shared=fmt_bytes(f.shared_prefix_bytes),
            prefix_state=fmt_bytes(f.prefix_state_bytes), kv=fmt_bytes(f.kv_bytes_per_request), samples=u.samples,
            state=fmt_bytes(f.state_bytes_per_sequence), n=fmt_grouped(f.max_requests))
    else:
        requests = t["how.none_fit"].format(weights=fmt_bytes(weights), memory=fmt_bytes(hw.memory_bytes))
    waste = (t["how.waste_paged"].format(empty=fmt_sig(u.empty_slots_per_sequence), block=u.block_size)
             if u.policy == "paged" else
             t["how.waste_contiguous"].format(reserved=fmt_sig(u.reserved_slot_steps / per_sequence),
                                               never=fmt_sig(u.never_used_slot_steps / per_sequence)))
    return {
        "token_share": t["how.token_share"].format(
            tokens=fmt_bytes(f.token_bytes), reserved=fmt_bytes(f.reserved_bytes), never=fmt_bytes(f.never_used_bytes),
            share=fmt_share(f.token_share)),
        "max_requests": requests,
        "waste_per_request_tokens": waste,
        "kv_per_request": t["how.kv_per_request"].format(
            slots=fmt_sig(u.slots_per_request), per_token=f"{fmt_grouped(cache.kv_bytes_per_token(m))} B",
            kv=fmt_bytes(f.kv_bytes_per_request)),
        "shared_saving_bytes": t["how.saving"].format(n=fmt_grouped(f.unshared_requests),
                                                      saving=fmt_bytes(f.sharing_saving_bytes),
                                                      max=fmt_bytes(f.free_bytes)),
        "unshared_requests": t["how.unshared_requests"].format(
            free=fmt_bytes(f.free_bytes), kv=fmt_bytes(unshared_kv), samples=u.samples,
            state=fmt_bytes(f.state_bytes_per_sequence), n=fmt_grouped(f.unshared_requests)),
    }


# --- the memory map ------------------------------------------------------------------------------------------

MAP_LEFT, MAP_TOP, ROW_PX = 8, 26, 16
LEGEND_ROW_PX, LEGEND_COLUMN_PX = 20, 262
# The phone's drawings of the map and the bar (sim/page/svg.py responsive): half the slots a row, so 272 units wide in
# all, about a 375 px phone's frame, where their 11 px text is drawn at 11 px or more; the legend in one column,
# and a line too long for the width wrapped onto the next.
NARROW_ROW_SLOTS, NARROW_ROW_PX, LINE_PX = 256, 12, 16


def memory_map(snap: kv_layout.Snapshot, lang: str, narrow: bool = False) -> str:
    """The KV pool at the snapshot, one pixel per slot, ROW_SLOTS a row: one path per state, block grid lines
    (paged), a gap between contiguous reservations, and the cells holding one sequence's KV outlined (outlined()).
    Narrow: the same at NARROW_ROW_SLOTS a row, for a phone."""
    t = TEXT[lang]
    row_slots, row_px = (NARROW_ROW_SLOTS, NARROW_ROW_PX) if narrow else (ROW_SLOTS, ROW_PX)
    width = MAP_LEFT * 2 + row_slots
    rows = -(-snap.capacity // row_slots)
    title = (t["map.title"].format(slots=fmt_grouped(snap.capacity), requests=fmt_grouped(snap.requests))
             if snap.capacity else t["map.empty"])
    head = _wrap(title, 13, width - 2 * MAP_LEFT) if narrow else [title]
    top = MAP_TOP + (len(head) - 1) * LINE_PX
    bottom = top + rows * row_px
    shapes = [svg.text(line, {"x": MAP_LEFT, "y": 17 + k * LINE_PX, "class": "svg-label"})
              for k, line in enumerate(head)]
    counts = {state: snap.slots(state) for state in MAP_STATES}
    for state in MAP_STATES:
        d = "".join(_rect_path(start, n, row_slots, top, row_px) for start, n, st in snap.runs if st == state)
        if d:
            shapes.append(svg.element("path", {"d": d, "fill": COLOURS[state], "stroke": EDGES[state],
                                               "stroke-width": 1, "data-state": state},
                                      svg.text_node("title", f"{t['state.' + state]}: {fmt_grouped(counts[state])}")))
    # The grid inside the pool, in the background's colour: a gap between cells (the pool's edge is the cells' own).
    lines = "".join(f"M{MAP_LEFT} {top + r * row_px}h{row_slots}" for r in range(1, rows))
    if snap.policy == "paged":
        step = max(snap.block_size, CELL_SLOTS)
        lines += "".join(f"M{MAP_LEFT + x} {top}V{bottom}" for x in range(step, row_slots, step))
    if lines:
        shapes.append(svg.element("path", {"d": lines, "stroke": palette.colour("surface"), "stroke-width": 1,
                                           "fill": "none"}))
    if snap.policy != "paged":  # a gap where one reservation ends and the next begins
        gaps = "".join(_tick(p.start, row_slots, top, row_px) for p in snap.sequences if p.start)
        if gaps:
            shapes.append(svg.element("path", {"d": gaps, "stroke": palette.colour("surface"), "stroke-width": 2}))
    seq = outlined(snap)
    cells, pieces = _highlight(snap, seq, row_slots)
    if cells:
        d = "".join(_rect_path(c * CELL_SLOTS, n * CELL_SLOTS, row_slots, top, row_px) for c, n in cells)
        shapes.append(svg.element("path", {"d": d, "fill": "none", "stroke": palette.colour("ink"),
                                           "stroke-width": 1.5, "data-highlight": f"request-{seq.request + 1}"}))
    legend = [(t["state." + state], COLOURS[state], counts[state]) for state in MAP_STATES
              if counts[state] or state != kv_layout.SHARED]
    items, y = _legend([(t["legend.item"].format(label=label, slots=fmt_grouped(n)), colour)
                        for label, colour, n in legend], bottom + 12, columns=1 if narrow else 2)
    spoken_pieces = (None if not pieces else t["map.piece.one" if pieces == 1 else "map.piece"].format(
        request=fmt_grouped(seq.request + 1), pieces=fmt_grouped(pieces)))
    notes = [spoken_pieces] if spoken_pieces else []
    if rows:
        notes.append(t["map.scale"].format(row=row_slots, cell=CELL_SLOTS))
    for note in notes:
        wrapped = _wrap(note, 11, width - 2 * MAP_LEFT) if narrow else [note]
        items += [svg.text(line, {"x": MAP_LEFT, "y": y + 13 + k * 14, "class": "svg-muted"})
                  for k, line in enumerate(wrapped)]
        y += LEGEND_ROW_PX + (len(wrapped) - 1) * 14
    parts = [t["legend.item"].format(label=label, slots=fmt_grouped(n)) for label, _, n in legend]
    spoken = alt.sentence(lang, title, parts + ([spoken_pieces] if spoken_pieces else []))
    return svg.document(width, y + 4, spoken, svg.text_node("title", title), *shapes, *items, css_class="kv-map")


def _wrap(text: str, font_px: float, width: float) -> list[str]:
    return svg.wrap(text, width, lambda line: svg.text_width(line, font_px))


def _rect_path(start: int, n: int, row_slots: int = ROW_SLOTS, top: float = MAP_TOP, row_px: float = ROW_PX) -> str:
    """Path commands for n slots from `start`, one rectangle per row they cross."""
    out = []
    while n > 0:
        row, col = divmod(start, row_slots)
        w = min(n, row_slots - col)
        out.append(f"M{MAP_LEFT + col} {top + row * row_px}h{w}v{row_px}h{-w}z")
        start += w
        n -= w
    return "".join(out)


def _tick(slot: int, row_slots: int = ROW_SLOTS, top: float = MAP_TOP, row_px: float = ROW_PX) -> str:
    row, col = divmod(slot, row_slots)
    return f"M{MAP_LEFT + col} {top + row * row_px}v{row_px}" if col else ""


def outlined(snap: kv_layout.Snapshot) -> kv_layout.Placed | None:
    """The sequence the map outlines: paged, request 1's (HIGHLIGHT, as in the block table); contiguous, the
    reservation drawn first, at slot 0 (the oldest request's, which need not be request 1)."""
    if snap.policy == "paged":
        return snap.sequence(*HIGHLIGHT)
    return min(snap.sequences, key=lambda p: p.start, default=None)


def _highlight(snap: kv_layout.Snapshot, seq: kv_layout.Placed | None,
               row_slots: int = ROW_SLOTS) -> tuple[list[tuple[int, int]], int]:
    """Runs (first cell, cells) of the map's cells that hold seq's KV, cut at rows; and in how many separate
    places of memory its KV lies (1 for a contiguous reservation)."""
    if seq is None:
        return [], 0
    b = snap.block_size
    if snap.policy != "paged":
        spans = [(seq.start, seq.reserved)]
    else:
        spans = []
        for n in seq.blocks:
            if spans and spans[-1][0] + spans[-1][1] == n * b:
                spans[-1] = (spans[-1][0], spans[-1][1] + b)
            else:
                spans.append((n * b, b))
    cells = sorted({c for start, n in spans for c in range(start // CELL_SLOTS, (start + n - 1) // CELL_SLOTS + 1)})
    per_row = row_slots // CELL_SLOTS
    runs = []
    for c in cells:
        if runs and runs[-1][0] + runs[-1][1] == c and c % per_row:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((c, 1))
    return runs, len(spans)


def _legend(items, top: float, columns: int = 2) -> tuple[list[str], float]:
    """Swatches and labels in `columns` columns; returns the markup and the y below it."""
    out, y = [], top
    for k, (label, colour) in enumerate(items):
        x = MAP_LEFT + (k % columns) * LEGEND_COLUMN_PX
        y = top + (k // columns) * LEGEND_ROW_PX
        out.append(svg.element("rect", {"x": x, "y": y, "width": 12, "height": 12, "fill": colour,
                                        "stroke": palette.colour("outline"), "stroke-width": 1}))
        out.append(svg.text(label, {"x": x + 16, "y": y + 11, "class": "svg-label"}))
    return out, (y + LEGEND_ROW_PX if items else top)


# --- a block table, and copy-on-write -----------------------------------------------------------------------

# Both pictures are drawn narrower than a phone's column (about 290 px at 375 px wide), so that they are never
# scaled down there and their 11 px text stays 11 px (kv-blocks.css draws them at their own size).
CELL_PX, BOX_PX = 42, 38  # a column of the pictures, and the box drawn in it
TABLE_COLUMNS = 6  # block-table entries a row
TABLE_HEAD, TABLE_TAIL = 8, 3  # entries drawn of a longer table: its first ones, then (after an ellipsis) its last
COW_ROWS = 4  # sequences drawn in the copy-on-write picture
COW_LABEL_PX, COW_MORE_PX = 64, 36  # the rows' names; the count of each row's own blocks after the drawn ones
KIND_COLOURS = {"shared": palette.colour("shared"), "copied": palette.colour("copied"), "own": palette.colour("kv"),
                "last": palette.colour("kv")}


def _kind(e: kv_layout.TableEntry, block_size: int) -> str:
    if e.refcount > 1:
        return "shared"
    if e.copied:
        return "copied"
    return "own" if e.tokens == block_size else "last"


def _box(x: float, y: float, e: kv_layout.TableEntry, block_size: int, tip: str, inside: str = "") -> list[str]:
    """One block as a box: its written share in its kind's colour over the grey of slots not written yet, or, with
    text inside it, wholly in its kind's colour (so that the text keeps its contrast)."""
    kind = _kind(e, block_size)
    filled = BOX_PX * e.tokens / block_size if not inside else BOX_PX
    out = [svg.element("rect", {"x": x, "y": y, "width": BOX_PX, "height": 20, "fill": COLOURS[kv_layout.RESERVED],
                                "stroke": palette.colour("outline"), "stroke-width": 0.5,
                                "data-logical": e.logical, "data-physical": e.physical, "data-refcount": e.refcount,
                                "data-kind": kind},
                       svg.text_node("title", tip)),
           svg.element("rect", {"x": x, "y": y, "width": filled, "height": 20, "fill": KIND_COLOURS[kind],
                                "stroke": palette.colour("surface"), "stroke-width": 1})]
    if inside:
        out.append(svg.text(inside, {"x": x + BOX_PX / 2, "y": y + 14, "class": "svg-value",
                                     "text-anchor": "middle"}))
    return out


def _entry_words(e: kv_layout.TableEntry, block_size: int, t: dict) -> str:
    words = {"logical": fmt_grouped(e.logical), "physical": fmt_grouped(e.physical), "refcount": e.refcount,
             "copied": e.copied, "tokens": e.tokens}
    kind = _kind(e, block_size)
    key = {"shared": "blocks.entry_shared", "copied": "blocks.entry_copied", "last": "blocks.entry_last"}
    return t[key.get(kind, "blocks.entry")].format(**words)


def _key(kinds, y: float, t: dict) -> tuple[list[str], float]:
    """A one-column legend of the kinds of block drawn; returns the markup and the y below it."""
    out = []
    for kind in kinds:
        out.append(svg.element("rect", {"x": MAP_LEFT, "y": y, "width": 12, "height": 12, "fill": KIND_COLOURS[kind],
                                        "stroke": palette.colour("outline"), "stroke-width": 1}))
        out.append(svg.text(t["kind." + kind], {"x": MAP_LEFT + 16, "y": y + 11, "class": "svg-label"}))
        y += 18
    return out, y


def _shown(n: int, head: int, tail: int) -> list[int | None]:
    """Indices drawn of n entries: all of them, or the first `head`, None for the ones left out, the last `tail`."""
    if n <= head + tail + 1:
        return list(range(n))
    return [*range(head), None, *range(n - tail, n)]


def block_table(snap: kv_layout.Snapshot, lang: str) -> str:
    """Request 1's block table at the snapshot: each logical block above the physical block it maps to, coloured
    by what that block holds (shared, copied on write, its own full, its own being written)."""
    t = TEXT[lang]
    entries = kv_layout.block_table(snap, *HIGHLIGHT)
    width = MAP_LEFT * 2 + TABLE_COLUMNS * CELL_PX
    if not entries:
        title = t["blocks.none"] if snap.policy != "paged" else t["map.empty"]
        return svg.document(width, 28, title, svg.text(title, {"x": MAP_LEFT, "y": 18, "class": "svg-muted"}),
                            css_class="kv-blocks")
    b = snap.block_size
    title = t["blocks.title"].format(blocks=fmt_grouped(len(entries)), block=b)
    shapes = [svg.text(title, {"x": MAP_LEFT, "y": 17, "class": "svg-label"})]
    parts = []
    shown = _shown(len(entries), TABLE_HEAD, TABLE_TAIL)
    for k, i in enumerate(shown):
        row, col = divmod(k, TABLE_COLUMNS)
        x, y = MAP_LEFT + col * CELL_PX, MAP_TOP + row * 54
        if i is None:
            left_out = len(entries) - TABLE_HEAD - TABLE_TAIL
            shapes.append(svg.text("…", {"x": x + BOX_PX / 2, "y": y + 30, "class": "svg-label",
                                         "text-anchor": "middle"}))
            shapes.append(svg.text(t["blocks.more"].format(n=fmt_grouped(left_out)),
                                   {"x": x + BOX_PX / 2, "y": y + 48, "class": "svg-muted", "text-anchor": "middle"}))
            parts.append(t["blocks.omitted"].format(n=fmt_grouped(left_out)))
            continue
        e = entries[i]
        words = _entry_words(e, b, t)
        parts.append(words)
        shapes.append(svg.text(fmt_grouped(e.logical), {"x": x + BOX_PX / 2, "y": y + 9, "class": "svg-muted",
                                                        "text-anchor": "middle"}))
        shapes += _box(x, y + 13, e, b, words, f"×{e.refcount}" if e.refcount > 1 else "")
        shapes.append(svg.text(fmt_grouped(e.physical), {"x": x + BOX_PX / 2, "y": y + 48, "class": "svg-label",
                                                         "text-anchor": "middle"}))
    rows = -(-len(shown) // TABLE_COLUMNS)
    kinds = [k for k in KIND_COLOURS if any(_kind(entries[i], b) == k for i in shown if i is not None)]
    items, y = _key(kinds, MAP_TOP + rows * 54 + 8, t)
    spoken = alt.sentence(lang, t["blocks.alt"].format(blocks=fmt_grouped(len(entries)), block=b), parts)
    return svg.document(width, y + 4, spoken, svg.text_node("title", title), *shapes, *items, css_class="kv-blocks")


def copy_on_write(snap: kv_layout.Snapshot, lang: str) -> str:
    """The sequences that share blocks, one row each, their tables side by side: the blocks they map (the same
    physical numbers down a column, with each block's refcount below), the block where each parted from the others
    and made its own copy of the shared tokens in it, and how many blocks of its own follow."""
    t = TEXT[lang]
    first = snap.sequence(*HIGHLIGHT)
    siblings = [p for p in snap.sequences if p.request == HIGHLIGHT[0]]
    if len(siblings) > 1:  # parallel samples of request 1
        rows = siblings[:COW_ROWS]
        key = "cow.title.samples" if len(rows) == len(siblings) else "cow.title.some_samples"
        title = t[key].format(samples=len(siblings), shown=len(rows))
        names = [t["cow.row.sample"].format(n=p.sample + 1) for p in rows]
    else:  # requests behind one shared prefix
        rows = [p for p in snap.sequences if p.sample == 0][:COW_ROWS]
        title = t["cow.title.requests"].format(shown=len(rows))
        names = [t["cow.row.request"].format(n=p.request + 1) for p in rows]
    tables = [kv_layout.block_table(snap, p.request, p.sample) for p in rows]
    width = MAP_LEFT * 2 + COW_LABEL_PX + 4 * CELL_PX + COW_MORE_PX
    if first is None or snap.policy != "paged" or not first.parted:
        title = t["blocks.none"] if snap.policy != "paged" else t["cow.title.none"]
        return svg.document(width, 28, title, svg.text(title, {"x": MAP_LEFT, "y": 18, "class": "svg-muted"}),
                            css_class="kv-blocks")
    b = snap.block_size
    mapped = sum(1 for e in tables[0] if e.refcount > 1)  # its leading blocks are the shared ones
    part = mapped  # the block it parted in: a copy when the parting token is not on a block boundary
    cols = [*_shown(mapped, 1, 1), part] if mapped else [part]
    x0 = MAP_LEFT + COW_LABEL_PX
    head_y, top = MAP_TOP + 2, MAP_TOP + 10
    shapes = [svg.text(title, {"x": MAP_LEFT, "y": 17, "class": "svg-label"}),
              svg.text(t["cow.logical"], {"x": MAP_LEFT, "y": head_y, "class": "svg-muted"})]
    for c, k in enumerate(cols):
        x = x0 + c * CELL_PX + BOX_PX / 2
        shapes.append(svg.text("…" if k is None else fmt_grouped(k), {"x": x, "y": head_y, "class": "svg-muted",
                                                                       "text-anchor": "middle"}))
    for r, (name, table) in enumerate(zip(names, tables)):
        y = top + r * 26
        shapes.append(svg.text(name, {"x": MAP_LEFT, "y": y + 14, "class": "svg-label"}))
        for c, k in enumerate(cols):
            x = x0 + c * CELL_PX
            if k is None:
                shapes.append(svg.text("…", {"x": x + BOX_PX / 2, "y": y + 14, "class": "svg-label",
                                             "text-anchor": "middle"}))
                continue
            e = table[k]
            shapes += _box(x, y, e, b, _entry_words(e, b, t), fmt_grouped(e.physical))
        own = len(table) - part - 1
        if own:
            shapes.append(svg.text(t["cow.own_more"].format(n=fmt_grouped(own)),
                                   {"x": x0 + len(cols) * CELL_PX + 2, "y": y + 14, "class": "svg-muted"}))
    foot = top + len(rows) * 26 + 10
    shapes.append(svg.text(t["cow.refcount"], {"x": MAP_LEFT, "y": foot, "class": "svg-muted"}))
    for c, k in enumerate(cols):
        if k is not None:
            shapes.append(svg.text(f"×{tables[0][k].refcount}", {"x": x0 + c * CELL_PX + BOX_PX / 2, "y": foot,
                                                                  "class": "svg-muted", "text-anchor": "middle"}))
    parts = []
    start = 0
    for k in range(1, mapped + 1):  # runs of shared blocks with one refcount (the prefix's, then the prompt's)
        if k == mapped or tables[0][k].refcount != tables[0][start].refcount:
            parts.append(t["cow.alt.shared"].format(first=start, last=k - 1, refcount=tables[0][start].refcount))
            start = k
    if tables[0][part].copied:
        parts += [t["cow.alt.copy"].format(row=name, tokens=table[part].copied,
                                           physical=fmt_grouped(table[part].physical))
                  for name, table in zip(names, tables)]
    else:
        parts.append(t["cow.alt.aligned"])
    kinds = [k for k in ("shared", "copied", "own", "last")
             if any(_kind(table[i], b) == k for table in tables for i in cols if i is not None)]
    items, y = _key(kinds, foot + 10, t)
    if any(len(table) > part + 1 for table in tables):
        items.append(svg.text(t["cow.more_key"], {"x": MAP_LEFT, "y": y + 11, "class": "svg-muted"}))
        y += 18
    return svg.document(width, y + 4, alt.sentence(lang, title, parts), svg.text_node("title", title), *shapes,
                        *items, css_class="kv-blocks")


# --- the whole GPU -------------------------------------------------------------------------------------------

def memory_bar(f: kv_layout.Fit, hw: presets.Hardware, lang: str, narrow: bool = False) -> str:
    """A bar of the GPU's memory with max_requests running: weights, recurrent state, KV by state, free. Narrow:
    NARROW_ROW_SLOTS wide for a phone, its title wrapped and its legend in one column."""
    t = TEXT[lang]
    span = NARROW_ROW_SLOTS if narrow else ROW_SLOTS
    width = MAP_LEFT * 2 + span
    weights = hw.memory_bytes - f.free_bytes if f.free_bytes else hw.memory_bytes
    running = 1 if f.max_requests else 0  # no request running holds nothing, whatever the lone-request shares
    parts = [("weights", weights), ("state", running * f.state_bytes), (kv_layout.TOKEN, running * f.token_bytes),
             (kv_layout.RESERVED, running * f.reserved_bytes), (kv_layout.NEVER_USED, running * f.never_used_bytes),
             (kv_layout.FREE, max(0.0, f.left_bytes))]
    scale = span / hw.memory_bytes
    shapes, x = [], float(MAP_LEFT)
    reported = presets.hardware(hw.key).memory_bytes
    share = hw.memory_bytes / reported
    title = t["bar.title" if share == 1 else "bar.title_share"].format(
        gpu=hw.short_name, memory=fmt_bytes(reported), share=f"{share:.2f}", usable=fmt_bytes(hw.memory_bytes),
        requests=fmt_grouped(f.max_requests))
    head = _wrap(title, 13, span) if narrow else [title]
    top = MAP_TOP + (len(head) - 1) * LINE_PX
    shapes += [svg.text(line, {"x": MAP_LEFT, "y": 17 + k * LINE_PX, "class": "svg-label"})
               for k, line in enumerate(head)]
    for kind, size in parts:
        w = size * scale
        if w <= 0:
            continue
        shapes.append(svg.element("rect", {"x": x, "y": top, "width": w, "height": 24, "fill": COLOURS[kind],
                                           "stroke": EDGES[kind], "stroke-width": 1, "data-kind": kind},
                                  svg.text_node("title", f"{t['part.' + kind]}: {fmt_bytes(size)}")))
        x += w
    shown = [(kind, size) for kind, size in parts if size > 0 or kind in ("weights", kv_layout.FREE)]
    labels = [f"{t['part.' + kind]} {fmt_bytes(size)}" for kind, size in shown]
    items, y = _legend([(label, COLOURS[kind]) for label, (kind, _) in zip(labels, shown)], top + 36,
                       columns=1 if narrow else 2)
    return svg.document(width, y + 4, alt.sentence(lang, title, labels), svg.text_node("title", title), *shapes, *items,
                        css_class="kv-bar")


# --- the four policies side by side --------------------------------------------------------------------------

def policy_table(fits: dict, m: presets.Model, hw: presets.Hardware, s: dict, t: dict) -> str:
    """An HTML table: each policy's shares, KV per request and requests that fit; the chosen one current."""
    rows = []
    for policy, f in fits.items():
        current = ' class="current"' if policy == s["policy"] else ""
        number = ' class="number"'
        rows.append((f'{current} data-policy="{policy}"', [
            ("th", ' scope="row"', escape(t["policy=" + policy])),
            ("td", number, fmt_share(f.token_share)),
            ("td", number, fmt_share(f.reserved_share)),
            ("td", number, fmt_share(f.never_used_share)),
            ("td", number, fmt_bytes(f.kv_bytes_per_request)),
            ("td", number, fmt_grouped(f.max_requests)),
        ]))
    caption = t["table"].format(trace=t["trace_short=" + s["trace"]], model=m.name, gpu=hw.short_name,
                                block=s["block_size"])
    columns = [t[k] for k in ("col.policy", "col.token_share", "col.reserved", "col.never_used", "col.kv_per_request",
                              "col.max_requests")]
    return html_table(caption, columns, rows)
