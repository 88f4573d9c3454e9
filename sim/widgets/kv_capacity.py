"""KV capacity: how much GPU memory a batch of requests' KV cache takes beside the weights.

KV bytes = 2 (K and V) x layers x KV heads x head_dim x bytes per element x tokens x batch, counting
only the layers that keep KV (the full-attention layers of a hybrid). A hybrid preset also keeps a
fixed FP32 recurrent state per request, shown as its own share. Weights are the whole checkpoint
resident in memory, as in sim/physics/memory.py.

A preset fills the fields and uses its exact figures (the `weights_gb` field shows its checkpoint
rounded to whole GB); a custom model is a plain transformer: every one of its `layers` keeps KV,
there is no recurrent state, and its checkpoint is exactly weights_gb GB.

Everything fits in the memory the engine may use: `memory_fraction` of what the device reports (1.0, the lessons'
convention; vLLM's default is presets.VLLM_MEMORY_FRACTION). The bar shows the rest as reserved. When the weights
alone do not fit, the shared capacity flag (sim/kit/capacity.py) says how many GPUs they take, instead of the
overflow flag, whose advice (a smaller batch) could not help.
"""

from __future__ import annotations

import math

from sim.kit import (
    Controls,
    Flag,
    Range,
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
from sim.page.display import fmt_bytes, fmt_grouped, fmt_signed_bytes
from sim.physics import cache, model_size, presets
from sim.serving import serving

TEXT = {
    "zh": {
        "title": "批处理的天花板：KV cache 占掉的显存",
        "layers": "存 KV 的层数（全注意力层）",
        "kv_heads": "KV 头数",
        "head_dim": "每个头的维度 head_dim",
        "weights_gb": "权重（整份 checkpoint，GB）",
        "kv_dtype": "KV 精度",
        "kv_dtype=bf16": "BF16 · 2 字节",
        "kv_dtype=fp8": "FP8 · 1 字节",
        "tokens": "每个请求的序列长度（token）",
        "batch": "批大小（请求数）",
        "note": "KV = 2（K 和 V）× 层数 × KV 头数 × head_dim × 每个元素的字节 × token 数 × 批大小。"
                "混合模型只在全注意力层存 KV，其余层每个请求另有一份固定大小的递归状态（FP32），单独列出。"
                "预设模型的权重按整份 checkpoint 精确计算；改动任何模型参数就换成「自定义」："
                "每层都存 KV、没有递归状态，权重按你填的 GB 数。",
        "kv_per_token": "每个 token 的 KV",
        "kv_total": "整批的 KV cache",
        "state_total": "整批的递归状态",
        "weights": "权重（常驻显存）",
        "usable_memory": "引擎可用的显存",
        "memory_left": "剩余显存",
        "max_batch": "这个长度下最多放几个请求",
        "overflow": "显存放不下：权重加上这一批的 KV（和递归状态）超过了这张卡可用的显存。"
                    "把批大小降到上面「最多放几个请求」以内，或者缩短序列、换 FP8 KV。",
        "unit.layers": "层",
        "unit.heads": "KV 头",
        "unit.params": "参数",
        "unit.tokens": "token",
        "weights_as_entered": "填写的 {gb} GB",
        "share.weights": "权重",
        "share.kv": "KV cache",
        "share.state": "递归状态",
        "share.free": "空闲",
        "share.over": "超出",
        "share.reserved": "预留（引擎不用）",
        "bar.capacity": "{gpu} 显存 {gb} GB",
        "bar.usable": "{gpu} 可用 {usable} GB（共 {gb} GB）",
        "bar.split": "{gpu} 显存的分配",
    },
    "en": {
        "title": "The batching ceiling: memory the KV cache takes",
        "layers": "Layers that keep KV (full attention)",
        "kv_heads": "KV heads",
        "head_dim": "Head dimension",
        "weights_gb": "Weights (whole checkpoint, GB)",
        "kv_dtype": "KV format",
        "kv_dtype=bf16": "BF16 · 2 bytes",
        "kv_dtype=fp8": "FP8 · 1 byte",
        "tokens": "Sequence length per request (tokens)",
        "batch": "Batch (requests)",
        "note": "KV = 2 (K and V) × layers × KV heads × head_dim × bytes per element × tokens × batch. "
                "A hybrid keeps KV only in its full-attention layers and a fixed FP32 recurrent state per request "
                "in the others, listed on its own. A preset's weights are its exact whole checkpoint; editing any "
                "model field switches to Custom: every layer keeps KV, no recurrent state, weights as entered.",
        "kv_per_token": "KV per token",
        "kv_total": "KV cache of the batch",
        "state_total": "Recurrent state of the batch",
        "weights": "Weights (resident)",
        "usable_memory": "Memory the engine may use",
        "memory_left": "Memory left",
        "max_batch": "Most requests of this length that fit",
        "overflow": "Out of memory: the weights plus this batch's KV (and state) exceed the memory this GPU can use. "
                    "Lower the batch to the number that fits, shorten the sequence, or store KV in FP8.",
        "unit.layers": "layers",
        "unit.heads": "KV heads",
        "unit.params": "params",
        "unit.tokens": "tokens",
        "weights_as_entered": "{gb} GB as entered",
        "share.weights": "Weights",
        "share.kv": "KV cache",
        "share.state": "Recurrent state",
        "share.free": "Free",
        "share.over": "Over by",
        "share.reserved": "Reserved (not for the engine)",
        "bar.capacity": "{gpu} memory {gb} GB",
        "bar.usable": "{gpu} usable {usable} GB of {gb} GB",
        "bar.split": "How {gpu} memory is split",
    },
}

WIDGET = Widget(
    controls=(
        choices.model("llama-2-7b", custom=True),
        choices.hardware("a100-sxm-80gb"),
        choices.memory_fraction(),
        Range("layers", default=32, min=1, max=256),
        Range("kv_heads", default=32, min=1, max=128, log=True),
        Range("head_dim", default=128, min=16, max=1_024, log=True),
        Range("weights_gb", default=13, min=1, max=2_000, log=True),
        Select("kv_dtype", default="bf16", options=("bf16", "fp8"), style="buttons"),
        Range("tokens", default=2_048, min=1, max=131_072, log=True),
        Range("batch", default=32, min=1, max=1_024, log=True),
    ),
    layout=(
        Controls(),
        Text("note"),
        Readouts("kv_per_token", "kv_total", "state_total", "weights", "usable_memory", "memory_left", "max_batch"),
        Flag("capacity"),
        Flag("overflow"),
        Svg("memory"),
    ),
)

STATE_DTYPE = "fp32"
MODEL_FIELDS = ("layers", "kv_heads", "head_dim", "weights_gb")  # what picking a preset fills in

COLOURS = {name: palette.colour(name) for name in ("weights", "kv", "state", "free", "over", "reserved")}


def render(state) -> dict:
    """The KV-capacity view for any state (invalid values replaced by defaults or clamped)."""
    s = settle_model(WIDGET.coerce(state), WIDGET.changed(state))
    t = TEXT[s["lang"]]
    spec = presets.hardware(s["hardware"])
    hw = choices.gpu(s)  # memory_bytes: the share the engine may use
    m = None if s["model"] == choices.CUSTOM else presets.model(s["model"])
    per_token = serving.kv_bytes_per_token(s["layers"], s["kv_heads"], s["head_dim"], s["kv_dtype"])
    state_per_request = 0 if m is None else cache.state_bytes_per_request(m, STATE_DTYPE)
    weights = s["weights_gb"] * 10**9 if m is None else model_size.resident_weight_bytes(m)
    kv = per_token * s["tokens"] * s["batch"]
    states = state_per_request * s["batch"]
    usable = hw.memory_bytes
    left = usable - weights - kv - states
    per_request = per_token * s["tokens"] + state_per_request
    fits = serving.fitting_batch(usable, weights, per_request)
    element = serving.KV_DTYPE_BYTES[s["kv_dtype"]]

    outputs = {
        **capacity.outputs(weights, hw),
        "kv_per_token": output(per_token, f"{fmt_grouped(per_token)} B"),
        "kv_total": output(kv / 1e9, fmt_bytes(kv)),
        "state_total": output(states / 1e9, fmt_bytes(states)),
        "weights": output(weights / 1e9, fmt_bytes(weights)),
        "memory_left": output(left / 1e9, fmt_signed_bytes(left)),
        "max_batch": output(fits, fmt_grouped(fits)),
    }
    weights_how = (t["weights_as_entered"].format(gb=s["weights_gb"]) if m is None else
                   f"{fmt_grouped(model_size.resident_params(m))} {t['unit.params']} × {m.weight_bytes_per_param} B")
    derivations = {
        "kv_per_token": f"2 × {s['layers']} {t['unit.layers']} × {s['kv_heads']} {t['unit.heads']} × {s['head_dim']} "
                        f"× {element} B = {fmt_grouped(per_token)} B",
        "kv_total": f"{fmt_grouped(per_token)} B × {s['tokens']:,} {t['unit.tokens']} × {s['batch']:,} = "
                    f"{fmt_grouped(kv)} B ≈ {fmt_bytes(kv)}",
        "state_total": f"{s['batch']:,} × {fmt_bytes(state_per_request)} = {fmt_bytes(states)}",
        "weights": f"{weights_how} = {fmt_bytes(weights)}",
        "usable_memory": f"{s['memory_fraction']:g} × {fmt_bytes(spec.memory_bytes)} = {fmt_bytes(usable)}",
        "memory_left": f"{fmt_bytes(usable)} − {fmt_bytes(weights)} − {fmt_bytes(kv)} − {fmt_bytes(states)} "
                       f"= {fmt_signed_bytes(left)}",
        "max_batch": f"⌊({fmt_bytes(usable)} − {fmt_bytes(weights)}) ÷ ({s['tokens']:,} × "
                     f"{fmt_grouped(per_token)} B + {fmt_bytes(state_per_request)})⌋ = {fits:,}",
    }
    if weights >= usable:  # nothing is left for even one request
        derivations["max_batch"] = f"{fmt_bytes(usable)} − {fmt_bytes(weights)} ≤ 0 → 0"
    bar = memory_bar(spec, usable, {"weights": weights, "kv": kv, "state": states}, s["lang"])
    too_big = not capacity.fits(weights, hw)
    flags = {"capacity": too_big, "overflow": left < 0 and not too_big}
    return view(s, outputs, svg={"memory": bar}, flags=flags, derivations=derivations)


def settle_model(s: dict, changed: str | None) -> dict:
    """The state with a preset's fields filled in, or the model switched to custom if a field was just edited."""
    s = dict(s)
    if changed in MODEL_FIELDS:
        s["model"] = choices.CUSTOM
    if s["model"] != choices.CUSTOM:
        m = presets.model(s["model"])
        s["layers"] = WIDGET.control("layers").coerce(m.full_attention_layers)
        s["kv_heads"] = WIDGET.control("kv_heads").coerce(m.attention.kv_heads)
        s["head_dim"] = WIDGET.control("head_dim").coerce(m.attention.head_dim)
        s["weights_gb"] = WIDGET.control("weights_gb").coerce(model_size.resident_weight_bytes(m) / 1e9)
    return s


def memory_bar(hw: presets.Hardware, usable: float, used: dict[str, float], lang: str) -> str:
    """The memory bar drawn for a desktop (WIDE) and for a phone (NARROW), as one responsive diagram."""
    return svg.responsive(*(draw_memory_bar(hw, usable, used, lang, width) for width in (WIDE, NARROW)))


WIDE, NARROW = 560, 300  # the drawing's width in its own units: a desktop column, a 375 px phone's frame


def draw_memory_bar(hw: presets.Hardware, usable: float, used: dict[str, float], lang: str, width: float) -> str:
    """An SVG bar of the GPU's datasheet memory: weights, KV, recurrent state, then free space up to the
    `usable` share (a dashed line) or the overflow past it, then the reserved rest the engine does not use.

    Its words use the kit's diagram text classes (svg-label, svg-value); a value on a pale share (free,
    reserved) is a label, dark on light. The legend wraps onto as many rows as `width` needs, and the label of
    the usable line stays inside the drawing."""
    t = TEXT[lang]
    left_x, bar_y, bar_h, legend_px = 8, 34, 40, 13
    span = width - 2 * left_x
    total = math.fsum(used.values())
    scale = span / max(hw.memory_bytes, total)
    shares = [(kind, size) for kind, size in used.items() if size > 0]
    free = usable - total
    reserved = hw.memory_bytes - usable
    parts = [(kind, size, size) for kind, size in shares]
    if free > 0:
        parts.append(("free", free, free))
    if hw.memory_bytes > max(total, usable):  # the reserved rest not already taken by an overflow
        parts.append(("reserved", hw.memory_bytes - max(total, usable), reserved))

    shapes, x = [], float(left_x)
    for kind, drawn, size in parts:
        w = drawn * scale
        shapes.append(svg.element("rect", {"x": x, "y": bar_y, "width": w, "height": bar_h, "fill": COLOURS[kind],
                                           "stroke": palette.colour("outline" if kind == "free" else "surface"),
                                           "stroke-width": 1, "data-kind": kind},
                                  svg.text_node("title", f"{t['share.' + kind]}: {fmt_bytes(size)}")))
        if w > 56:
            shapes.append(svg.text(fmt_bytes(size), {
                "x": x + w / 2, "y": bar_y + bar_h / 2 + 5, "text-anchor": "middle",
                "class": "svg-label" if kind in ("free", "reserved") else "svg-value"}))
        x += w
    capacity_x = left_x + usable * scale
    if free < 0:
        shapes.append(svg.element("rect", {"x": capacity_x, "y": bar_y - 4, "width": -free * scale,
                                           "height": bar_h + 8, "fill": COLOURS["over"], "fill-opacity": "0.25",
                                           "stroke": COLOURS["over"], "data-kind": "over"}))
    anchor = "end" if capacity_x > width / 2 else "start"
    shapes.append(svg.element("line", {"x1": capacity_x, "y1": bar_y - 12, "x2": capacity_x, "y2": bar_y + bar_h + 6,
                                       "stroke": palette.colour("ink"), "stroke-width": 2, "stroke-dasharray": "4 3"}))
    gb = f"{hw.memory_bytes / 1e9:.2f}"  # as the readouts print it: 85.90 GB
    capacity = (t["bar.capacity"].format(gpu=hw.short_name, gb=gb) if reserved <= 0 else
                t["bar.usable"].format(gpu=hw.short_name, usable=f"{usable / 1e9:.2f}", gb=gb))
    label_x, label_w = capacity_x, svg.text_width(capacity, legend_px)
    if anchor == "end" and label_x - label_w < left_x:  # too long to end at the line: start at the left edge
        anchor, label_x = "start", float(left_x)
    elif anchor == "start" and label_x + label_w > width - left_x:
        anchor, label_x = "end", width - left_x
    shapes.append(svg.text(capacity, {"x": label_x, "y": bar_y - 16, "text-anchor": anchor, "class": "svg-label"}))

    legend, lx, ly = [], float(left_x), bar_y + bar_h + 18
    keys = [*shares, ("free", free) if free >= 0 else ("over", -free)]
    if reserved > 0:
        keys.append(("reserved", reserved))
    for kind, size in keys:
        label = f"{t['share.' + kind]} {fmt_bytes(size)}"
        item_width = 28 + svg.text_width(label, legend_px)
        if lx + item_width > width and lx > left_x:  # wrap onto a second row
            lx, ly = float(left_x), ly + 20
        legend.append(svg.element("rect", {"x": lx, "y": ly, "width": 12, "height": 12, "fill": COLOURS[kind],
                                           "stroke": palette.colour("outline"), "stroke-width": 1}))
        legend.append(svg.text(label, {"x": lx + 16, "y": ly + 11, "class": "svg-label"}))
        lx += item_width
    title = t["bar.split"].format(gpu=hw.short_name)
    # Read aloud: the split with its numbers (the legend's labels) and where the usable memory ends.
    spoken = alt.sentence(lang, title, [capacity, *(f"{t['share.' + kind]} {fmt_bytes(size)}"
                                                    for kind, size in keys)])
    return svg.document(width, ly + 20, spoken, svg.text_node("title", title), *shapes, *legend,
                        css_class="memory-bar")
