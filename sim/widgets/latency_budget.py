"""Latency budget: TTFT, TPOT, throughput and cost of one serving setup, and what each product cares about.

The scenarios' numbers are assumptions chosen to illustrate each kind of product, not measurements;
the student can change every one of them. The GPU price is likewise an assumption the student sets.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from types import MappingProxyType

from sim import latency
from sim.widgets.controls import Range, Select, changed_param, coerce_state
from sim.widgets.view import fmt_grouped, fmt_sig, output, view


@dataclass(frozen=True)
class Scenario:
    """Typical values for one kind of product, and what it cares about."""

    ttft_ms: int
    tpot_ms: int
    output_tokens: int
    batch: int
    calls: int
    priority: dict[str, str]

    def fields(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in FILLED}


FILLED = ("ttft_ms", "tpot_ms", "output_tokens", "batch", "calls")  # the fields a scenario sets

# Illustrative assumptions (see module docstring). Chat reproduces the reference lesson's example:
# 200 ms + 25 ms x 500 = 12.7 s. Offline's 60 ms at B = 256 is near what the batch-throughput widget
# computes for the anchor model on an H100 at 4,096 tokens of context.
SCENARIOS = MappingProxyType({
    "chat": Scenario(ttft_ms=200, tpot_ms=25, output_tokens=500, batch=32, calls=1, priority={
        "zh": "聊天：用户盯着屏幕等回答。第一个字要快（TTFT 最好在 1 秒以内）；之后只要出字比人读得快，"
              "TPOT 再小用户也察觉不到。端到端时间主要花在 TPOT × 输出长度上。",
        "en": "Chat: someone is watching the screen. The first token must come quickly (TTFT under about 1 s); "
              "after that, tokens only need to arrive faster than people read. Most of the end-to-end time is "
              "TPOT × output length.",
    }),
    "offline": Scenario(ttft_ms=5_000, tpot_ms=60, output_tokens=1_000, batch=256, calls=1, priority={
        "zh": "离线批处理：没有人在等某一个请求，TTFT 和 TPOT 都无所谓；要紧的是总吞吐和每百万 token 的成本，"
              "所以批开得越大越好，直到显存放不下。",
        "en": "Offline batch: nobody waits for any single request, so TTFT and TPOT hardly matter; what counts is "
              "total throughput and the cost per million tokens, so the batch grows until memory runs out.",
    }),
    "completion": Scenario(ttft_ms=100, tpot_ms=15, output_tokens=30, batch=8, calls=1, priority={
        "zh": "代码补全：建议要在敲键的间隙里出现，TTFT 必须极短（一两百毫秒内，慢了用户已经接着往下打了）；"
              "输出只有几十个 token，所以 TTFT 在端到端里的占比比聊天大得多。",
        "en": "Code completion: a suggestion must appear between keystrokes, so TTFT must be tiny (a couple of "
              "hundred milliseconds at most); outputs are a few dozen tokens, so TTFT is a far larger share of the "
              "end-to-end time than in chat.",
    }),
    "agent": Scenario(ttft_ms=800, tpot_ms=25, output_tokens=800, batch=16, calls=10, priority={
        "zh": "智能体：一个任务要一次接一次地调用模型，每次都得等上一次的结果；用户等的是整条链 = 调用次数 × "
              "端到端延迟。输出一长，TPOT 就决定了总时间。",
        "en": "Agent: one task calls the model again and again, each call waiting for the previous answer; the "
              "user waits for the whole chain = calls × end-to-end latency. With long outputs, TPOT decides it.",
    }),
})

CUSTOM_PRIORITY = {
    "zh": "自定义：数字由你定。看看 TTFT 和 TPOT × N 各占端到端多少，再想想你的场景最在乎哪一项。",
    "en": "Custom: you set the numbers. See how much of the end-to-end time is TTFT and how much TPOT × N, "
          "and decide which one your product cares about.",
}

SCENARIO_LABELS = (
    ("chat", {"zh": "聊天", "en": "Chat"}),
    ("offline", {"zh": "离线批处理", "en": "Offline batch"}),
    ("completion", {"zh": "代码补全", "en": "Code completion"}),
    ("agent", {"zh": "智能体", "en": "Agent"}),
    ("custom", {"zh": "自定义", "en": "Custom"}),
)

_DEFAULT = SCENARIOS["chat"]

PARAMS = (
    Select("scenario", {"zh": "场景", "en": "Scenario"}, default="chat", options=SCENARIO_LABELS, style="buttons"),
    Range("ttft_ms", {"zh": "TTFT：首个 token 的等待（毫秒）", "en": "TTFT: wait for the first token (ms)"},
          default=_DEFAULT.ttft_ms, min=1, max=60_000, log=True, unit="ms"),
    Range("tpot_ms", {"zh": "TPOT：之后每个 token 的间隔（毫秒）", "en": "TPOT: time per later token (ms)"},
          default=_DEFAULT.tpot_ms, min=1, max=1_000, log=True, unit="ms"),
    Range("output_tokens", {"zh": "输出长度 N（token）", "en": "Output length N (tokens)"},
          default=_DEFAULT.output_tokens, min=1, max=32_768, log=True),
    Range("batch", {"zh": "同时服务的请求数（批大小）", "en": "Requests served at once (batch)"},
          default=_DEFAULT.batch, min=1, max=1_024, log=True),
    Range("calls", {"zh": "串行调用次数（智能体）", "en": "Sequential calls (agent)"},
          default=_DEFAULT.calls, min=1, max=100, log=True),
    Range("gpu_dollars_per_hour", {"zh": "GPU 租金（美元/小时，自己设的假设）",
                                   "en": "GPU rental ($/hour, your assumption)"},
          default=2, min=1, max=100, unit="$/h"),
)

COLOURS = {"ttft": "#f59e0b", "tpot": "#2563eb", "tick": "#ffffff", "ink": "#1f2937", "muted": "#6b7280"}

TEXT = {
    "zh": {"ttft": "TTFT", "tpot": "TPOT × %s", "timeline": "一次请求的时间线：TTFT %s，TPOT × %s 个 token = %s，共 %s",
           "minutes": "（%s 分钟）"},
    "en": {"ttft": "TTFT", "tpot": "TPOT × %s",
           "timeline": "One request's timeline: TTFT %s, TPOT × %s tokens = %s, %s in all", "minutes": " (%s min)"},
}


def render(state) -> dict:
    """The latency-budget view for any state (invalid values replaced by defaults or clamped)."""
    s = _follow_scenario(coerce_state(PARAMS, state), changed_param(PARAMS, state))
    t = TEXT[s["lang"]]
    r = latency.request(ttft_s=s["ttft_ms"] / 1e3, tpot_s=s["tpot_ms"] / 1e3, output_tokens=s["output_tokens"])
    throughput = latency.throughput_tokens_per_s(s["batch"], r.tpot_s)
    cost = latency.cost_per_million_tokens(s["gpu_dollars_per_hour"], throughput)
    chain = latency.chain_s(r, s["calls"])
    scenario_index = [value for value, _ in SCENARIO_LABELS].index(s["scenario"])
    priority = SCENARIOS[s["scenario"]].priority if s["scenario"] in SCENARIOS else CUSTOM_PRIORITY

    outputs = {
        "e2e_s": output(r.e2e_s, fmt_long_duration(r.e2e_s, t)),
        "tpot_share": output(r.tpot_share * 100, f"{fmt_short(r.tpot_share * 100)}%"),
        "ttft_share": output(r.ttft_share * 100, f"{fmt_short(r.ttft_share * 100)}%"),
        "throughput_tokens_per_s": output(throughput, f"{fmt_short(throughput)} tok/s"),
        "cost_per_million_tokens": output(cost, f"${fmt_sig(cost)}"),
        "stream_tokens_per_s": output(r.stream_tokens_per_s, f"{fmt_short(r.stream_tokens_per_s)} tok/s"),
        "chain_s": output(chain, fmt_long_duration(chain, t)),
        # The value only identifies the text, so that the page knows when to replace it.
        "priority": output(scenario_index, priority[s["lang"]]),
    }
    ttft, tpot = fmt_duration(r.ttft_s), fmt_duration(r.tpot_s)
    e2e, decode = fmt_duration(r.e2e_s), fmt_duration(r.decode_s)
    n = fmt_grouped(r.output_tokens)
    derivations = {
        "e2e_s": f"TTFT + TPOT × N = {ttft} + {tpot} × {n} = {ttft} + {decode} = {e2e}",
        "tpot_share": f"{decode} ÷ {e2e} = {fmt_short(r.tpot_share * 100)}%",
        "ttft_share": f"{ttft} ÷ {e2e} = {fmt_short(r.ttft_share * 100)}%",
        "throughput_tokens_per_s": f"{fmt_grouped(s['batch'])} ÷ {tpot} = {fmt_short(throughput)} tok/s",
        "cost_per_million_tokens": (f"${s['gpu_dollars_per_hour']}/h ÷ ({fmt_short(throughput)} tok/s × 3,600 s/h) "
                                    f"× 1,000,000 = ${fmt_sig(cost)}"),
        "stream_tokens_per_s": f"1 ÷ {tpot} = {fmt_short(r.stream_tokens_per_s)} tok/s",
        "chain_s": f"{s['calls']} × {e2e} = {fmt_duration(chain)}",
    }
    return view(s, outputs, svg={"timeline": _timeline(r, t)}, derivations=derivations)


def _follow_scenario(s: dict, changed: str | None) -> dict:
    """Picking a scenario fills in its values; editing one of them away from the scenario makes it custom.

    Without `changed` (a shared link, a lesson's settings) the state is taken as given.
    """
    preset = SCENARIOS.get(s["scenario"])
    if preset is None:
        return s
    if changed == "scenario":
        return {**s, **preset.fields()}
    if changed in FILLED and any(s[name] != value for name, value in preset.fields().items()):
        return {**s, "scenario": "custom"}
    return s


def fmt_duration(seconds: float) -> str:
    """Milliseconds under a second, else seconds: 200 ms, 12.7 s, 208 s."""
    return f"{fmt_short(seconds * 1e3)} ms" if seconds < 1 else f"{fmt_short(seconds)} s"


def fmt_long_duration(seconds: float, t: dict) -> str:
    """fmt_duration, with minutes beside it from a minute on: 208 s (3.47 min)."""
    minutes = t["minutes"] % fmt_short(seconds / 60) if seconds >= 60 else ""
    return fmt_duration(seconds) + minutes


def fmt_short(x: float) -> str:
    """Three significant digits without trailing zeros: the fields are whole milliseconds (25, not 25.0)."""
    text = fmt_sig(x)
    return text.rstrip("0").rstrip(".") if "." in text else text


TIMELINE_WIDTH = 640
BAR_Y, BAR_HEIGHT = 22, 26
MIN_SEGMENT_PX = 2  # a TTFT of 0.1% still shows as a sliver
MIN_TICK_SPACING_PX = 4  # token boundaries are drawn only while they stay apart


def _timeline(r: latency.Request, t: dict) -> str:
    """A proportional bar: TTFT, then N output tokens at TPOT each (token boundaries drawn when they fit)."""
    ttft_w = min(max(r.ttft_share * TIMELINE_WIDTH, MIN_SEGMENT_PX), TIMELINE_WIDTH - MIN_SEGMENT_PX)
    tpot_w = TIMELINE_WIDTH - ttft_w
    token_w = tpot_w / r.output_tokens
    ticks = ""
    if token_w >= MIN_TICK_SPACING_PX:
        ticks = "".join(
            f'<line x1="{ttft_w + i * token_w:.1f}" x2="{ttft_w + i * token_w:.1f}" y1="{BAR_Y}" '
            f'y2="{BAR_Y + BAR_HEIGHT}" stroke="{COLOURS["tick"]}" stroke-width="1"/>'
            for i in range(1, r.output_tokens)
        )
    ttft, e2e, decode = fmt_duration(r.ttft_s), fmt_duration(r.e2e_s), fmt_duration(r.decode_s)
    tpot_label = f"{t['tpot'] % fmt_grouped(r.output_tokens)} = {decode}"
    label = t["timeline"] % (ttft, fmt_grouped(r.output_tokens), decode, e2e)
    text_y, axis_y = BAR_Y - 7, BAR_Y + BAR_HEIGHT + 16
    height = axis_y + 6
    return (
        f'<svg class="timeline" viewBox="0 0 {TIMELINE_WIDTH} {height}" role="img" '
        f'aria-label="{html.escape(label)}" preserveAspectRatio="xMinYMin meet">'
        f'<rect class="ttft" x="0" y="{BAR_Y}" width="{ttft_w:.1f}" height="{BAR_HEIGHT}" fill="{COLOURS["ttft"]}"/>'
        f'<rect class="tpot" x="{ttft_w:.1f}" y="{BAR_Y}" width="{tpot_w:.1f}" height="{BAR_HEIGHT}" '
        f'fill="{COLOURS["tpot"]}"/>{ticks}'
        f'<text x="0" y="{text_y}" font-size="13" fill="{COLOURS["ink"]}">'
        f'{html.escape(t["ttft"])} {html.escape(ttft)}</text>'
        f'<text x="{TIMELINE_WIDTH}" y="{text_y}" font-size="13" text-anchor="end" fill="{COLOURS["ink"]}">'
        f"{html.escape(tpot_label)}</text>"
        f'<text x="0" y="{axis_y}" font-size="12" fill="{COLOURS["muted"]}">0</text>'
        f'<text x="{TIMELINE_WIDTH}" y="{axis_y}" font-size="12" text-anchor="end" fill="{COLOURS["muted"]}">'
        f"{html.escape(e2e)}</text></svg>"
    )
