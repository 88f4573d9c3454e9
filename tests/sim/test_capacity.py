"""The shared capacity flag (sim/kit/capacity.py) and memory.gpus_for_weights: how many GPUs the weights take."""

import re
import string

import pytest

from sim import memory, model_size, presets
from sim.kit import capacity
from sim.languages import LANGUAGES

A100 = presets.hardware("a100-sxm-80gb")  # 80 GB = 80e9 B on the datasheet
A100_AT_90 = presets.achieved(A100, memory_fraction=0.9)  # vLLM's default share: 72e9 B usable

CHINESE = re.compile(r"[\u2e80-\u9fff\uff00-\uffef]")


@pytest.mark.parametrize("weights, gpus", [
    (140e9, 2),  # a 70B model in BF16
    (80e9, 1),  # exactly full still fits
    (80.1e9, 2),
    (13.5e9, 1),
    (160e9, 2),
    (160.1e9, 3),
    (1, 1),
])
def test_gpus_for_weights_on_an_80_gb_a100(weights, gpus):
    assert memory.gpus_for_weights(weights, A100) == gpus


@pytest.mark.parametrize("weights, gpus", [
    (72e9, 1),  # 0.9 x 80 GB
    (72.1e9, 2),
    (80e9, 2),  # fits the datasheet, not the engine's share
    (140e9, 2),  # 140 / 72 = 1.94
    (145e9, 3),  # 145 / 72 = 2.01
])
def test_gpus_for_weights_count_the_usable_memory(weights, gpus):
    assert A100_AT_90.memory_bytes == 72e9
    assert memory.gpus_for_weights(weights, A100_AT_90) == gpus


@pytest.mark.parametrize("weights", [0, -1, float("nan")])
def test_gpus_for_weights_rejects_no_weights(weights):
    with pytest.raises(ValueError, match="weights_bytes"):
        memory.gpus_for_weights(weights, A100)


def test_fits_is_the_weights_within_the_usable_memory():
    assert capacity.fits(80e9, A100) and not capacity.fits(80.1e9, A100)
    assert capacity.fits(72e9, A100_AT_90) and not capacity.fits(72.1e9, A100_AT_90)
    assert not capacity.fits(140e9, A100)


def test_outputs_are_what_the_words_show():
    out = capacity.outputs(140e9, A100)
    assert out == {
        "gpus_needed": {"value": 2, "text": "2"},
        "weights_total": {"value": 140, "text": "140.0 GB"},
        "usable_memory": {"value": 80, "text": "80.00 GB"},
    }
    assert capacity.outputs(140e9, A100_AT_90)["usable_memory"] == {"value": 72, "text": "72.00 GB"}


def test_words_fill_every_slot_in_every_language():
    names = set(capacity.outputs(140e9, A100))
    assert set(capacity.TEXT) == set(LANGUAGES)
    for lang in LANGUAGES:
        assert set(capacity.TEXT[lang]) == {"capacity"}
        slots = {field for _, field, _, _ in string.Formatter().parse(capacity.TEXT[lang]["capacity"]) if field}
        assert slots == names, lang
    assert not CHINESE.search(capacity.TEXT["en"]["capacity"])
    assert CHINESE.search(capacity.TEXT["zh"]["capacity"])


def test_every_preset_fits_every_gpu_at_the_datasheet_memory():
    """Why the flag is off for every preset pair today (the widgets' tests check it in their views)."""
    for hw_key in presets.hardware_keys():
        for model_key in presets.model_keys():
            resident = model_size.resident_weight_bytes(presets.model(model_key))
            assert capacity.fits(resident, presets.hardware(hw_key)), (hw_key, model_key)
