"""Colours of the simulator's figures, by name.

A figure names its colours; the stylesheet gives each name a value per theme (the `--sim-*` variables at the top
of site/static/css/widgets.css, light and dark side by side). SVG diagrams use the variables as they are; the page
script resolves them for Plotly, which needs concrete colours, and draws its plots again when the theme changes.
So one view serves both themes, and the build's pre-rendered page is right in either.
"""

from __future__ import annotations

NAMES = frozenset({
    # The figure itself: text, background, grid, a legend's box.
    "ink", "muted", "surface", "grid", "legend", "outline",
    # The two phases, and what a step's bytes are.
    "prefill", "decode", "weights", "state", "kv", "attention",
    # What bounds an operation, the roof, and the bound with every kernel overlapped.
    "compute", "memory", "roof", "overlapped",
    # Batching and capacity: per-request speed, over the limit, shaded regions, free and reserved memory, a
    # request still waiting. Free and waiting are the background (empty), drawn with an outline.
    "per-request", "over", "region-compute", "region-compute-ink", "region-over", "free", "reserved", "waiting",
    # Latency budget, and a peak-compute bar.
    "ttft", "tpot", "peak",
    # GEMM/GEMV shapes: each matrix's outline and fill.
    "input", "input-fill", "weight", "weight-fill", "output", "output-fill",
    # KV blocks: a block several sequences map, a block copied on write, and slots allocated that are never used.
    "shared", "copied", "waste",
    # Speculative sampling: the target's distribution, the draft's, and what the rule sampled.
    "target", "draft", "sampled",
})


def colour(name: str) -> str:
    """The CSS variable of the palette colour `name`, for an SVG attribute or a Plotly trace; a name outside NAMES
    is a mistake in the widget (KeyError)."""
    if name not in NAMES:
        raise KeyError(f"{name!r} is not a palette colour (sim/kit/palette.py NAMES)")
    return f"var(--sim-{name})"


def legend_above() -> dict:
    """A Plotly legend in a row above the plot area, its bottom on the area's top edge.

    Plotly widens the top margin to hold it however many rows it wraps to, so on a 375 px phone it pushes the plot
    down instead of covering it. A legend anchored by its top above the plot, or put below the plot, grows over the
    curves or the x-axis title as it wraps."""
    return {"orientation": "h", "x": 0, "y": 1.02, "xanchor": "left", "yanchor": "bottom"}


def plot_layout(layout: dict) -> dict:
    """The Plotly `layout` in the palette's colours: background, text, grid and legend follow the theme.
    Axes given in `layout` keep their own settings; the palette fills in only their colours."""
    themed = {
        "paper_bgcolor": colour("surface"),
        "plot_bgcolor": colour("surface"),
        "font": {"color": colour("ink")},
        **layout,
    }
    for axis in ("xaxis", "yaxis"):
        themed[axis] = {"gridcolor": colour("grid"), "linecolor": colour("outline"), "zerolinecolor": colour("grid"),
                        **themed.get(axis, {})}
    if "legend" in themed:
        themed["legend"] = {"bgcolor": colour("legend"), **themed["legend"]}
    return themed
