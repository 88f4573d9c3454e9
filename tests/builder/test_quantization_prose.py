"""The quantization lesson's first table states every format's weights on one base, the one its text and the lesson's
opening use: what a decode step reads for its matmuls, the decoder layers in the format and the LM head in BF16."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from builder import expressions
from sim.physics import presets
from sim.techniques import quantization

LESSONS = Path(__file__).resolve().parents[2] / "lessons"
SIM = re.compile(r"\{sim\}`([^`]*)`")


def first_table(lang: str) -> list[list[str]]:
    """The cells of the lesson's first table, header and rule left out."""
    lines = (LESSONS / lang / "quantization.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_first_table_gives_every_format_on_one_base(lang):
    names = expressions.namespace()
    anchor = presets.model("qwen3.8-27b")
    shown = [expressions.evaluate(SIM.search(row[-1]).group(1), names) for row in first_table(lang)]
    expected = [names["gb"](quantization.matmul_weight_bytes(anchor, fmt)) for fmt in ("bf16", "fp8", "int4")]
    assert shown == expected
    opening = (LESSONS / lang / "quantization.md").read_text(encoding="utf-8").split("\n{#")[0]
    assert "gb(model_size.matmul_weight_bytes(anchor))" in opening  # the opening's figure is the BF16 row's
    assert expressions.evaluate("gb(model_size.matmul_weight_bytes(anchor))", names) == expected[0]
