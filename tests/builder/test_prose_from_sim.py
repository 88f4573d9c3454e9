"""Every model- or GPU-dependent figure in a lesson's prose is computed by sim/ at build time:
change a preset in a temporary build and the prose changes with it."""

import json
import re
import shutil

import pytest

import build
from sim.page.display import fmt_ms
from sim.physics import presets, roofline
from tests.lessons_copy import some_lessons

SIM_VALUE = re.compile(r'<span class="sim-value">([^<]*)</span>')


@pytest.fixture
def patched_presets(tmp_path, monkeypatch):
    """Presets read from a copy in which the H200's bandwidth is 5.50 TB/s instead of 4.80. (The H200, not the H100:
    the serving lessons' claims compare H100 figures, and a faster H100 would make some of them false, as it should.)"""
    folder = tmp_path / "presets"
    shutil.copytree(presets.PRESETS_DIR, folder)
    hardware = json.loads((folder / "hardware.json").read_text(encoding="utf-8"))
    hardware["h200-sxm"]["hbm_tb_per_s"] = 5.5
    (folder / "hardware.json").write_text(json.dumps(hardware), encoding="utf-8")
    monkeypatch.setattr(presets, "PRESETS_DIR", str(folder))
    presets._hardware_table.cache_clear()
    presets._model_table.cache_clear()
    yield
    monkeypatch.undo()
    presets._hardware_table.cache_clear()
    presets._model_table.cache_clear()


def decode_step_text() -> str:
    step = roofline.decode(presets.model("qwen3.8-27b"), presets.hardware("h200-sxm"), batch=1, context=5)
    return fmt_ms(step.time_s)


def build_lesson(out, frozen: str = "seeds") -> str:
    # The patched build computes every figure: the frozen ones (builder/frozen.py) belong to the presets on disk,
    # whose fingerprint the patch does not change. All but the serving figures on ten other seeds, which would take
    # minutes (builder/seeds.py): the page this test reads has none. The real build may take them all ("read").
    # Only the page it reads is written: the other lessons' figures would be computed for nothing.
    lessons = some_lessons(out.parent / f"{out.name}-lessons", {"prefill-decode"})
    build.build(build.Paths(out=out, frozen=frozen, lessons=lessons))
    return (out / "prefill-decode" / "index.html").read_text(encoding="utf-8")


def test_prose_changes_with_a_preset(tmp_path, patched_presets):
    patched_page = build_lesson(tmp_path / "patched")
    patched_step = decode_step_text()
    patched_values = SIM_VALUE.findall(patched_page)
    presets.PRESETS_DIR = str(build.ROOT / "sim" / "physics" / "presets")  # back to the real presets for the comparison build
    presets._hardware_table.cache_clear()
    real_page = build_lesson(tmp_path / "real", frozen="read")
    real_step = decode_step_text()
    real_values = SIM_VALUE.findall(real_page)

    assert real_step == "10.74 ms" and patched_step != real_step
    assert real_step in real_values and real_step not in patched_values
    assert patched_step in patched_values
    changed = sum(a != b for a, b in zip(real_values, patched_values))
    assert len(real_values) == len(patched_values) and changed >= 5, "the H200's figures follow its bandwidth"
