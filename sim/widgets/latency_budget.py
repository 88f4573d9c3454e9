"""Latency budget: TTFT, TPOT, throughput and cost of one serving setup, and what each product cares about.

The scenarios' numbers are assumptions chosen to illustrate each kind of product, not measurements;
the student can change every one of them. The GPU price is likewise an assumption the student sets.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from sim.kit import Controls, Output, Range, Readouts, Select, Svg, Text, Widget, output, palette, view
from sim.page import svg
from sim.page.display import fmt_grouped, fmt_sig
from sim.page.markup import escape
from sim.serving import latency

TEXT = {
    "zh": {
        "title": "四个指标：TTFT、TPOT、吞吐、成本",
        "scenario": "场景",
        "scenario=chat": "聊天",
        "scenario=offline": "离线批处理",
        "scenario=completion": "代码补全",
        "scenario=agent": "智能体",
        "scenario=custom": "自定义",
        "ttft_ms": "TTFT：首个 token 的等待（毫秒）",
        "tpot_ms": "TPOT：之后每个 token 的间隔（毫秒）",
        "output_tokens": "输出长度 N（token）",
        "batch": "同时服务的请求数（批大小）",
        "calls": "串行调用次数（智能体）",
        "gpu_dollars_per_hour": "GPU 租金（美元/小时，自己设的假设）",
        "priority=chat": "聊天：用户盯着屏幕等回答。第一个字要快（TTFT 最好在 1 秒以内）；之后只要出字比人读得快，"
                         "TPOT 再小用户也察觉不到。端到端时间主要花在 TPOT × 输出长度上。",
        "priority=offline": "离线批处理：没有人在等某一个请求，TTFT 和 TPOT 都无所谓；"
                            "要紧的是总吞吐和每百万 token 的成本，所以批开得越大越好，直到显存放不下。",
        "priority=completion": "代码补全：整条建议要在敲键的间隙里出现。Continue 把补全请求的超时设为 150 ms、"
                               "说建议要在 500 ms 内出现；Tabby 默认最多生成 64 个 token。所以 TTFT 和 TPOT "
                               "都得短，TTFT 在端到端里的占比比聊天大得多。",
        "priority=agent": "智能体：一个任务要一次接一次地调用模型，每次都得等上一次的结果；"
                          "用户等的是整条链 = 调用次数 × 端到端延迟。输出一长，TPOT 就决定了总时间。",
        "priority=custom": "自定义：数字由你定。看看 TTFT 和 TPOT × N 各占端到端多少，再想想你的场景最在乎哪一项。",
        "e2e_s": "端到端延迟（一次请求）",
        "tpot_share": "其中 TPOT × N 的占比",
        "ttft_share": "其中 TTFT 的占比",
        "stream_tokens_per_s": "每个用户看到的出字速度",
        "chain_s": "串行调用整条链的总时间",
        "throughput_tokens_per_s": "总吞吐（所有并发请求）",
        "cost_per_million_tokens": "成本（每百万个输出 token）",
        "note": "场景里的数字是为了说明各类产品而设的假设，不是测量值；GPU 租金也是你自己设的假设。"
                "吞吐按「B 个请求每隔一个 TPOT 各出一个 token」计，这里 B 和 TPOT 各自独立可调，"
                "实际上 B 越大，每一步 decode 越慢，TPOT 也就越长。",
        "ttft": "TTFT",
        "tpot": "TPOT × {n}",
        "timeline": "一次请求的时间线：TTFT {ttft}，TPOT × {n} 个 token = {decode}，共 {e2e}",
        "minutes": "（{minutes} 分钟）",
    },
    "en": {
        "title": "Four metrics: TTFT, TPOT, throughput, cost",
        "scenario": "Scenario",
        "scenario=chat": "Chat",
        "scenario=offline": "Offline batch",
        "scenario=completion": "Code completion",
        "scenario=agent": "Agent",
        "scenario=custom": "Custom",
        "ttft_ms": "TTFT: wait for the first token (ms)",
        "tpot_ms": "TPOT: time per later token (ms)",
        "output_tokens": "Output length N (tokens)",
        "batch": "Requests served at once (batch)",
        "calls": "Sequential calls (agent)",
        "gpu_dollars_per_hour": "GPU rental ($/hour, your assumption)",
        "priority=chat": "Chat: someone is watching the screen. The first token must come quickly (TTFT under about "
                         "1 s); after that, tokens only need to arrive faster than people read. Most of the "
                         "end-to-end time is TPOT × output length.",
        "priority=offline": "Offline batch: nobody waits for any single request, so TTFT and TPOT hardly matter; "
                            "what counts is total throughput and the cost per million tokens, so the batch grows "
                            "until memory runs out.",
        "priority=completion": "Code completion: the whole suggestion must appear between keystrokes. Continue times "
                               "out an autocomplete request after 150 ms and says a suggestion is needed within "
                               "500 ms; Tabby decodes at most 64 tokens by default. So both TTFT and TPOT must be "
                               "short, and TTFT is a far larger share of the end-to-end time than in chat.",
        "priority=agent": "Agent: one task calls the model again and again, each call waiting for the previous "
                          "answer; the user waits for the whole chain = calls × end-to-end latency. With long "
                          "outputs, TPOT decides it.",
        "priority=custom": "Custom: you set the numbers. See how much of the end-to-end time is TTFT and how much "
                           "TPOT × N, and decide which one your product cares about.",
        "e2e_s": "End-to-end latency (one request)",
        "tpot_share": "Share spent on TPOT × N",
        "ttft_share": "Share spent on TTFT",
        "stream_tokens_per_s": "Speed each reader sees",
        "chain_s": "Whole chain of sequential calls",
        "throughput_tokens_per_s": "Throughput (all concurrent requests)",
        "cost_per_million_tokens": "Cost per million output tokens",
        "note": "The scenarios' numbers are assumptions that illustrate each kind of product, not measurements; "
                "the GPU price is your own assumption too. Throughput counts one token per request per TPOT; "
                "here B and TPOT are set independently, though in reality a larger B lengthens TPOT.",
        "ttft": "TTFT",
        "tpot": "TPOT × {n}",
        "timeline": "One request's timeline: TTFT {ttft}, TPOT × {n} tokens = {decode}, {e2e} in all",
        "minutes": " ({minutes} min)",
    },
}


@dataclass(frozen=True)
class Scenario:
    """Typical values for one kind of product; what it cares about is TEXT "priority=NAME"."""

    ttft_ms: int
    tpot_ms: int
    output_tokens: int
    batch: int
    calls: int

    def fields(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in FILLED}


FILLED = ("ttft_ms", "tpot_ms", "output_tokens", "batch", "calls")  # the fields a scenario sets

# Illustrative assumptions (see module docstring). Chat reproduces the reference lesson's example:
# 200 ms + 25 ms x 500 = 12.7 s. Offline's 60 ms at B = 256 is near what the batch-throughput widget
# computes for the anchor model on an H100 at 4,096 tokens of context. Code completion follows published
# product settings: Continue's autocomplete modelTimeout of 150 ms and its "suggestion within 500ms"
# (continuedev/continue core/util/parameters.ts; the amplified.dev manifesto), Tabby's default
# max_decoding_tokens = 64 (TabbyML/tabby docs, administration/code-completion.md); 5 ms per token is what
# 150 ms + 64 tokens within 500 ms leaves, a derived figure, not a published one.
SCENARIOS = MappingProxyType({
    "chat": Scenario(ttft_ms=200, tpot_ms=25, output_tokens=500, batch=32, calls=1),
    "offline": Scenario(ttft_ms=5_000, tpot_ms=60, output_tokens=1_000, batch=256, calls=1),
    "completion": Scenario(ttft_ms=150, tpot_ms=5, output_tokens=64, batch=8, calls=1),
    "agent": Scenario(ttft_ms=800, tpot_ms=25, output_tokens=800, batch=16, calls=10),
})
CUSTOM = "custom"  # the scenario of any fields the student set by hand

_DEFAULT = SCENARIOS["chat"]

WIDGET = Widget(
    controls=(
        Select("scenario", "chat", options=(*SCENARIOS, CUSTOM), style="buttons"),
        Range("ttft_ms", default=_DEFAULT.ttft_ms, min=1, max=60_000, log=True),
        Range("tpot_ms", default=_DEFAULT.tpot_ms, min=1, max=1_000, log=True),
        Range("output_tokens", default=_DEFAULT.output_tokens, min=1, max=32_768, log=True),
        Range("batch", default=_DEFAULT.batch, min=1, max=1_024, log=True),
        Range("calls", default=_DEFAULT.calls, min=1, max=100, log=True),
        Range("gpu_dollars_per_hour", default=2, min=1, max=100),
    ),
    layout=(
        Controls(),
        Output("priority"),
        Svg("timeline"),
        Readouts("e2e_s", "tpot_share", "ttft_share", "stream_tokens_per_s", "chain_s", "throughput_tokens_per_s",
                 "cost_per_million_tokens"),
        Text("note"),
    ),
)

COLOURS = {"ttft": palette.colour("ttft"), "tpot": palette.colour("tpot"), "tick": palette.colour("surface")}


def render(state) -> dict:
    """The latency-budget view for any state (invalid values replaced by defaults or clamped)."""
    s = _follow_scenario(WIDGET.coerce(state), WIDGET.changed(state))
    t = TEXT[s["lang"]]
    r = latency.request(ttft_s=s["ttft_ms"] / 1e3, tpot_s=s["tpot_ms"] / 1e3, output_tokens=s["output_tokens"])
    throughput = latency.throughput_tokens_per_s(s["batch"], r.tpot_s)
    cost = latency.cost_per_million_tokens(s["gpu_dollars_per_hour"], throughput)
    chain = latency.chain_s(r, s["calls"])
    scenario_index = WIDGET.control("scenario").options.index(s["scenario"])

    outputs = {
        "e2e_s": output(r.e2e_s, fmt_long_duration(r.e2e_s, t)),
        "tpot_share": output(r.tpot_share * 100, f"{fmt_short(r.tpot_share * 100)}%"),
        "ttft_share": output(r.ttft_share * 100, f"{fmt_short(r.ttft_share * 100)}%"),
        "throughput_tokens_per_s": output(throughput, f"{fmt_short(throughput)} tok/s"),
        "cost_per_million_tokens": output(cost, f"${fmt_sig(cost)}"),
        "stream_tokens_per_s": output(r.stream_tokens_per_s, f"{fmt_short(r.stream_tokens_per_s)} tok/s"),
        "chain_s": output(chain, fmt_long_duration(chain, t)),
        # The value only identifies the text, so that the page knows when to replace it.
        "priority": output(scenario_index, t[f"priority={s['scenario']}"]),
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
        return {**s, "scenario": CUSTOM}
    return s


def fmt_duration(seconds: float) -> str:
    """Milliseconds under a second, else seconds: 200 ms, 12.7 s, 208 s."""
    return f"{fmt_short(seconds * 1e3)} ms" if seconds < 1 else f"{fmt_short(seconds)} s"


def fmt_long_duration(seconds: float, t: dict) -> str:
    """fmt_duration, with minutes beside it from a minute on: 208 s (3.47 min)."""
    minutes = t["minutes"].format(minutes=fmt_short(seconds / 60)) if seconds >= 60 else ""
    return fmt_duration(seconds) + minutes


def fmt_short(x: float) -> str:
    """Three significant digits without trailing zeros: the fields are whole milliseconds (25, not 25.0)."""
    text = fmt_sig(x)
    return text.rstrip("0").rstrip(".") if "." in text else text


TIMELINE_WIDTH = 640
NARROW_WIDTH = 272  # the phone drawing's bar: with its margins 288 units, about a 375 px phone's frame
BAR_Y, BAR_HEIGHT = 22, 26
LINE_PX = 18  # the phone drawing puts its two labels on lines of their own
MIN_SEGMENT_PX = 2  # a TTFT of 0.1% still shows as a sliver
MIN_TICK_SPACING_PX = 4  # token boundaries are drawn only while they stay apart
NARROW_TICK_SPACING_PX = 2.5  # on a phone a little closer, with thinner lines: code completion's 64 tokens still show
TIMELINE_MARGIN = 12  # room left and right of the bar, so that the end labels clear the frame
NARROW_MARGIN = 8


def _timeline(r: latency.Request, t: dict) -> str:
    """The timeline drawn twice (sim/page/svg.py responsive): labels left and right above a wide bar, and for a phone
    a narrower bar with each label on a line of its own, so that neither can run into the other."""
    return svg.responsive(_timeline_svg(r, t, TIMELINE_WIDTH, TIMELINE_MARGIN, stacked=False),
                          _timeline_svg(r, t, NARROW_WIDTH, NARROW_MARGIN, stacked=True))


def _timeline_svg(r: latency.Request, t: dict, bar_width: float, margin: float, stacked: bool) -> str:
    """A proportional bar: TTFT, then N output tokens at TPOT each (token boundaries drawn when they fit)."""
    ttft_w = min(max(r.ttft_share * bar_width, MIN_SEGMENT_PX), bar_width - MIN_SEGMENT_PX)
    tpot_w = bar_width - ttft_w
    token_w = tpot_w / r.output_tokens
    bar_y = BAR_Y + LINE_PX if stacked else BAR_Y
    ticks = ""
    spacing, stroke = (NARROW_TICK_SPACING_PX, 0.75) if stacked else (MIN_TICK_SPACING_PX, 1)
    if token_w >= spacing:
        ticks = "".join(
            f'<line x1="{ttft_w + i * token_w:.1f}" x2="{ttft_w + i * token_w:.1f}" y1="{bar_y}" '
            f'y2="{bar_y + BAR_HEIGHT}" stroke="{COLOURS["tick"]}" stroke-width="{stroke}"/>'
            for i in range(1, r.output_tokens)
        )
    ttft, e2e, decode = fmt_duration(r.ttft_s), fmt_duration(r.e2e_s), fmt_duration(r.decode_s)
    n = fmt_grouped(r.output_tokens)
    tpot_label = f"{t['tpot'].format(n=n)} = {decode}"
    label = t["timeline"].format(ttft=ttft, n=n, decode=decode, e2e=e2e)
    ttft_y, tpot_y, axis_y = BAR_Y - 7, bar_y - 7, bar_y + BAR_HEIGHT + 16
    height = axis_y + 6
    return (
        # width and height: its drawn size where it is not scaled down (a phone scrolls it, text legible)
        f'<svg class="timeline" viewBox="{-margin} 0 {bar_width + 2 * margin} {height}" '
        f'width="{bar_width + 2 * margin}" height="{height}" '
        f'role="img" aria-label="{escape(label)}" preserveAspectRatio="xMinYMin meet">'
        f'<rect class="ttft" x="0" y="{bar_y}" width="{ttft_w:.1f}" height="{BAR_HEIGHT}" fill="{COLOURS["ttft"]}" '
        f'stroke="{COLOURS["tick"]}"/>'
        f'<rect class="tpot" x="{ttft_w:.1f}" y="{bar_y}" width="{tpot_w:.1f}" height="{BAR_HEIGHT}" '
        f'fill="{COLOURS["tpot"]}" stroke="{COLOURS["tick"]}"/>{ticks}'
        f'<text class="svg-label" x="0" y="{ttft_y}">{escape(t["ttft"])} {escape(ttft)}</text>'
        f'<text class="svg-label" x="{bar_width}" y="{tpot_y}" text-anchor="end">'
        f"{escape(tpot_label)}</text>"
        f'<text class="svg-muted" x="0" y="{axis_y}">0</text>'
        f'<text class="svg-muted" x="{bar_width}" y="{axis_y}" text-anchor="end">{escape(e2e)}</text>'
        "</svg>"
    )
