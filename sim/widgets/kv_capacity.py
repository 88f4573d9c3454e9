"""KV capacity: how much GPU memory a batch of requests' KV cache takes beside the weights.

KV bytes = 2 (K and V) x layers x KV heads x head_dim x bytes per element x tokens x batch, counting
only the layers that keep KV (the full-attention layers of a hybrid). A hybrid preset also keeps a
fixed FP32 recurrent state per request, shown as its own share. Weights are the whole checkpoint
resident in memory, as in sim/memory.py.

A preset fills the fields and uses its exact figures (the `weights_gb` field shows its checkpoint
rounded to whole GB); a custom model is a plain transformer: every one of its `layers` keeps KV,
there is no recurrent state, and its checkpoint is exactly weights_gb GB.
"""

from __future__ import annotations

from html import escape

from sim import cache, params, presets, serving
from sim.widgets.common import hardware_select, model_select
from sim.widgets.controls import Range, Select, changed_param, coerce_state
from sim.widgets.view import fmt_bytes, fmt_grouped, output, view

CUSTOM = "custom"
STATE_DTYPE = "fp32"
MODEL_FIELDS = ("layers", "kv_heads", "head_dim", "weights_gb")  # what picking a preset fills in

_presets = model_select(default="llama-2-7b")
PARAMS = (
    Select(_presets.name, _presets.label, default=_presets.default,
           options=_presets.options + ((CUSTOM, {"zh": "自定义", "en": "Custom"}),)),
    hardware_select(default="a100-sxm-80gb"),
    Range("layers", {"zh": "存 KV 的层数（全注意力层）", "en": "Layers that keep KV (full attention)"},
          default=32, min=1, max=256),
    Range("kv_heads", {"zh": "KV 头数", "en": "KV heads"}, default=32, min=1, max=128, log=True),
    Range("head_dim", {"zh": "每个头的维度 head_dim", "en": "Head dimension"}, default=128, min=16, max=1_024,
          log=True),
    Range("weights_gb", {"zh": "权重（整份 checkpoint，GB）", "en": "Weights (whole checkpoint, GB)"},
          default=13, min=1, max=2_000, log=True, unit="GB"),
    Select("kv_dtype", {"zh": "KV 精度", "en": "KV format"}, default="bf16", style="buttons",
           options=(("bf16", {"zh": "BF16 · 2 字节", "en": "BF16 · 2 bytes"}),
                    ("fp8", {"zh": "FP8 · 1 字节", "en": "FP8 · 1 byte"}))),
    Range("tokens", {"zh": "每个请求的序列长度（token）", "en": "Sequence length per request (tokens)"},
          default=2_048, min=1, max=131_072, log=True),
    Range("batch", {"zh": "批大小（请求数）", "en": "Batch (requests)"}, default=32, min=1, max=1_024, log=True),
)
_FIELDS = {p.name: p for p in PARAMS if p.name in MODEL_FIELDS}

TEXT = {
    "zh": {"layers": "层", "heads": "KV 头", "requests": "个请求", "weights": "权重", "kv": "KV cache",
           "state": "递归状态", "free": "空闲", "over": "超出", "memory": "显存", "params": "参数",
           "field": "填写的 {gb} GB", "split": "{gpu} 显存的分配"},
    "en": {"layers": "layers", "heads": "KV heads", "requests": "requests", "weights": "Weights", "kv": "KV cache",
           "state": "Recurrent state", "free": "Free", "over": "Over by", "memory": "memory", "params": "params",
           "field": "{gb} GB as entered", "split": "How {gpu} memory is split"},
}

COLOURS = {"weights": "#64748b", "kv": "#f59e0b", "state": "#8b5cf6", "free": "#dcfce7", "over": "#b91c1c"}


def render(state) -> dict:
    """The KV-capacity view for any state (invalid values replaced by defaults or clamped)."""
    s = settle_model(coerce_state(PARAMS, state), changed_param(PARAMS, state))
    t = TEXT[s["lang"]]
    hw = presets.hardware(s["hardware"])
    m = None if s["model"] == CUSTOM else presets.model(s["model"])
    per_token = serving.kv_bytes_per_token(s["layers"], s["kv_heads"], s["head_dim"], s["kv_dtype"])
    state_per_request = 0 if m is None else cache.state_bytes_per_request(m, STATE_DTYPE)
    weights = s["weights_gb"] * 10**9 if m is None else params.resident_weight_bytes(m)
    kv = per_token * s["tokens"] * s["batch"]
    states = state_per_request * s["batch"]
    left = hw.memory_bytes - weights - kv - states
    per_request = per_token * s["tokens"] + state_per_request
    fits = serving.fitting_batch(hw.memory_bytes, weights, per_request)
    element = serving.KV_DTYPE_BYTES[s["kv_dtype"]]

    outputs = {
        "kv_per_token": output(per_token, f"{fmt_grouped(per_token)} B"),
        "kv_total": output(kv / 1e9, fmt_bytes(kv)),
        "state_total": output(states / 1e9, fmt_bytes(states)),
        "weights": output(weights / 1e9, fmt_bytes(weights)),
        "memory_left": output(left / 1e9, format_signed_bytes(left)),
        "max_batch": output(fits, fmt_grouped(fits)),
    }
    weights_how = (t["field"].format(gb=s["weights_gb"]) if m is None else
                   f"{fmt_grouped(params.resident_params(m))} {t['params']} × {m.weight_bytes_per_param} B")
    derivations = {
        "kv_per_token": f"2 × {s['layers']} {t['layers']} × {s['kv_heads']} {t['heads']} × {s['head_dim']} "
                        f"× {element} B = {fmt_grouped(per_token)} B",
        "kv_total": f"{fmt_grouped(per_token)} B × {s['tokens']:,} token × {s['batch']:,} = {fmt_grouped(kv)} B "
                    f"≈ {fmt_bytes(kv)}",
        "state_total": f"{s['batch']:,} × {fmt_bytes(state_per_request)} = {fmt_bytes(states)}",
        "weights": f"{weights_how} = {fmt_bytes(weights)}",
        "memory_left": f"{fmt_bytes(hw.memory_bytes)} − {fmt_bytes(weights)} − {fmt_bytes(kv)} − {fmt_bytes(states)} "
                       f"= {format_signed_bytes(left)}",
        "max_batch": f"⌊({fmt_bytes(hw.memory_bytes)} − {fmt_bytes(weights)}) ÷ ({s['tokens']:,} × "
                     f"{fmt_grouped(per_token)} B + {fmt_bytes(state_per_request)})⌋ = {fits:,}",
    }
    svg = memory_bar(hw, {"weights": weights, "kv": kv, "state": states}, t)
    return view(s, outputs, svg={"memory": svg}, flags={"overflow": left < 0}, derivations=derivations)


def settle_model(s: dict, changed: str | None) -> dict:
    """The state with a preset's fields filled in, or the model switched to custom if a field was just edited."""
    s = dict(s)
    if changed in MODEL_FIELDS:
        s["model"] = CUSTOM
    if s["model"] != CUSTOM:
        m = presets.model(s["model"])
        s["layers"] = _FIELDS["layers"].coerce(m.full_attention_layers)
        s["kv_heads"] = _FIELDS["kv_heads"].coerce(m.attention.kv_heads)
        s["head_dim"] = _FIELDS["head_dim"].coerce(m.attention.head_dim)
        s["weights_gb"] = _FIELDS["weights_gb"].coerce(params.resident_weight_bytes(m) / 1e9)
    return s


def format_signed_bytes(n: float) -> str:
    """fmt_bytes with a real minus sign for memory that is short."""
    return f"−{fmt_bytes(-n)}" if n < 0 else fmt_bytes(n)


def text_width(text: str, font_px: float) -> float:
    """Rough rendered width: CJK characters are square, Latin ones a bit over half as wide."""
    return sum(font_px if ord(c) > 0x2E7F else 0.6 * font_px for c in text)


def memory_bar(hw: presets.Hardware, used: dict[str, float], t: dict) -> str:
    """An SVG bar of the GPU's memory: weights, KV, recurrent state, then free space or the overflow."""
    width, left_x, bar_y, bar_h = 560, 8, 34, 40
    span = width - 2 * left_x
    total = sum(used.values())
    scale = span / max(hw.memory_bytes, total)
    shares = [(kind, size) for kind, size in used.items() if size > 0]
    free = hw.memory_bytes - total
    parts = [*shares, ("free", free)] if free > 0 else shares

    shapes, x = [], float(left_x)
    for kind, size in parts:
        w = size * scale
        shapes.append(f'<rect x="{x:.1f}" y="{bar_y}" width="{w:.1f}" height="{bar_h}" fill="{COLOURS[kind]}" '
                      f'stroke="#ffffff" stroke-width="1"><title>{escape(t[kind])}: {fmt_bytes(size)}</title></rect>')
        if w > 56:
            ink = "#14532d" if kind == "free" else "#ffffff"
            shapes.append(f'<text x="{x + w / 2:.1f}" y="{bar_y + bar_h / 2 + 5}" text-anchor="middle" '
                          f'fill="{ink}" font-size="13">{fmt_bytes(size)}</text>')
        x += w
    capacity_x = left_x + hw.memory_bytes * scale
    if free < 0:
        shapes.append(f'<rect x="{capacity_x:.1f}" y="{bar_y - 4}" width="{-free * scale:.1f}" height="{bar_h + 8}" '
                      f'fill="{COLOURS["over"]}" fill-opacity="0.25" stroke="{COLOURS["over"]}"/>')
    anchor = "end" if capacity_x > width / 2 else "start"
    shapes.append(f'<line x1="{capacity_x:.1f}" y1="{bar_y - 12}" x2="{capacity_x:.1f}" y2="{bar_y + bar_h + 6}" '
                  f'stroke="#111827" stroke-width="2" stroke-dasharray="4 3"/>')
    shapes.append(f'<text x="{capacity_x:.1f}" y="{bar_y - 16}" text-anchor="{anchor}" font-size="13" '
                  f'fill="#111827">{escape(hw.short_name)} {t["memory"]} {hw.memory_bytes / 1e9:g} GB</text>')

    legend, lx, ly = [], float(left_x), bar_y + bar_h + 18
    for kind, size in [*shares, ("free", free) if free >= 0 else ("over", -free)]:
        label = f"{t[kind]} {fmt_bytes(size)}"
        item_width = 28 + text_width(label, 12)
        if lx + item_width > width and lx > left_x:  # wrap onto a second row
            lx, ly = float(left_x), ly + 20
        legend.append(f'<rect x="{lx:.1f}" y="{ly}" width="12" height="12" fill="{COLOURS[kind]}" '
                      f'stroke="#94a3b8" stroke-width="0.5"/>'
                      f'<text x="{lx + 16:.1f}" y="{ly + 11}" font-size="12" fill="#374151">'
                      f'{escape(label)}</text>')
        lx += item_width
    title = escape(t["split"].format(gpu=hw.short_name))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {ly + 20}" role="img" '
            f'aria-label="{title}">'
            f'<title>{title}</title>{"".join(shapes)}{"".join(legend)}</svg>')
