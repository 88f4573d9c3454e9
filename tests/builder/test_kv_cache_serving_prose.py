"""Figures of the kv-cache-serving lesson that belong together come from one scenario (issue #23)."""

import re
from pathlib import Path

import pytest

from builder import expressions
from sim.physics.presets import Model

LESSONS = Path(__file__).resolve().parents[2] / "lessons"
SIM = re.compile(r"\{sim\}`([^`]*)`")
MODELS = re.compile(r"\b(" + "|".join(n for n, v in expressions.namespace().items() if isinstance(v, Model)) + r")\b")


def callout(lang: str, opening: str) -> str:
    """The text of the misconception callout whose first line holds `opening`, up to its closing fence."""
    text = (LESSONS / lang / "kv-cache-serving.md").read_text(encoding="utf-8")
    start = next(i for i, line in enumerate(text.splitlines()) if line.startswith("::: callout misconception") and opening in line)
    lines = text.splitlines()[start + 1:]
    return "\n".join(lines[:lines.index(":::")])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_paged_attention_misconception_keeps_to_one_model(lang):
    body = callout(lang, "PagedAttention")
    figures = SIM.findall(body)
    assert len(figures) >= 3
    assert {m for f in figures for m in MODELS.findall(f)} == {"qwen32b"}, figures  # not the anchor's memory
    assert "Qwen3-32B" in body and "H100" in body and "Orca" in body  # the scenario is named


SYMBOL_B = re.compile(r"(?<![\w/.])B(?![\w/])")  # B on its own: not GB, B/s, FLOP/B


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_b_means_only_the_batch_size_on_the_page(lang):
    # the page shows the lesson and the evolution map every lesson shows (lessons/<lang>/evolution.yml)
    text = "\n".join((LESSONS / lang / name).read_text(encoding="utf-8") for name in ("kv-cache-serving.md",
                                                                                     "evolution.yml"))
    uses = [text[m.start():m.start() + 40] for m in SYMBOL_B.finditer(text)]
    assert uses and all(u.startswith("B = {sim}`max_batch(") for u in uses), uses  # never the block size
    assert text.count("$b_{\\mathrm{blk}}$ − 1") == 1  # the block size has a symbol of its own


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_kv_blocks_figures_are_ones_its_controls_reach(lang):
    # issue #23: 'without sharing' (share=False) and a runtime reserve were figures no control of kv-blocks reached;
    # the widget shows the first as a readout (Fit.unshared_requests) and has no reserve control
    text = (LESSONS / lang / "kv-cache-serving.md").read_text(encoding="utf-8")
    fits = [f for f in SIM.findall(text) if "kv_layout.fit(" in f]
    assert len(fits) > 40
    assert not [f for f in fits if "share=False" in f or "reserve_bytes" in f]
    assert sum(".unshared_requests" in f for f in fits) >= 4
