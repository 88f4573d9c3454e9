"""The shared capacity flag (sim/kit/capacity.py) and memory.gpus_for_weights: how many GPUs the weights take."""

import dataclasses
import re
import string

import pytest

from sim.kit import capacity
from sim.page.languages import LANGUAGES
from sim.physics import memory, model_size, presets

A100 = presets.hardware("a100-sxm-80gb")  # "80 GB" as the device reports it: 81,920 MiB
A100_BYTES = 81_920 * 2**20  # 85,899,345,920 B (80e9 B on the datasheet)
A100_DATASHEET = dataclasses.replace(A100, memory_bytes=A100.datasheet_memory_bytes)
# vLLM's share up to v0.20 (presets.VLLM_MEMORY_FRACTION, 0.92, now): 0.9 x 85,899,345,920 = 77,309,411,328 B usable
A100_AT_90 = presets.achieved(A100, memory_fraction=0.9)
A100_AT_90_BYTES = 77_309_411_328

CHINESE = re.compile(r"[\u2e80-\u9fff\uff00-\uffef]")


@pytest.mark.parametrize("weights, gpus", [
    (140e9, 2),  # a 70B model in BF16: 140 / 85.90 = 1.63
    (A100_BYTES, 1),  # exactly full still fits
    (A100_BYTES + 1, 2),
    (80.1e9, 1),  # past the datasheet's 80e9 B, within the 85,899,345,920 B the device reports
    (13.5e9, 1),
    (160e9, 2),
    (2 * A100_BYTES, 2),  # 171,798,691,840 B: two GPUs exactly full
    (2 * A100_BYTES + 1, 3),
    (1, 1),
])
def test_gpus_for_weights_on_an_80_gb_a100(weights, gpus):
    assert A100.memory_bytes == A100_BYTES
    assert memory.gpus_for_weights(weights, A100) == gpus


def test_gpus_for_weights_on_the_datasheets_80_gb():
    assert A100_DATASHEET.memory_bytes == 80e9
    assert memory.gpus_for_weights(80e9, A100_DATASHEET) == 1
    assert memory.gpus_for_weights(80.1e9, A100_DATASHEET) == 2
    assert memory.gpus_for_weights(160.1e9, A100_DATASHEET) == 3


@pytest.mark.parametrize("weights, gpus", [
    (A100_AT_90_BYTES, 1),  # 0.9 x 85,899,345,920 B, exactly full
    (A100_AT_90_BYTES + 1, 2),
    (80e9, 2),  # fits the device's 85.90 GB, not the engine's 77.31 GB share
    (140e9, 2),  # 140 / 77.31 = 1.81
    (2 * A100_AT_90_BYTES, 2),  # 154,618,822,656 B
    (155e9, 3),  # 155 / 77.31 = 2.005
])
def test_gpus_for_weights_count_the_usable_memory(weights, gpus):
    assert A100_AT_90.memory_bytes == A100_AT_90_BYTES
    assert memory.gpus_for_weights(weights, A100_AT_90) == gpus


@pytest.mark.parametrize("weights", [0, -1, float("nan")])
def test_gpus_for_weights_rejects_no_weights(weights):
    with pytest.raises(ValueError, match="weights_bytes"):
        memory.gpus_for_weights(weights, A100)


def test_fits_is_the_weights_within_the_usable_memory():
    assert capacity.fits(A100_BYTES, A100) and not capacity.fits(A100_BYTES + 1, A100)
    assert capacity.fits(80.1e9, A100)  # more than the datasheet's 80 GB, less than the 85.90 GB reported
    assert capacity.fits(80e9, A100_DATASHEET) and not capacity.fits(80.1e9, A100_DATASHEET)
    assert capacity.fits(A100_AT_90_BYTES, A100_AT_90) and not capacity.fits(A100_AT_90_BYTES + 1, A100_AT_90)
    assert not capacity.fits(140e9, A100)


def test_outputs_are_what_the_words_show():
    out = capacity.outputs(140e9, A100)
    assert out == {
        "gpus_needed": {"value": 2, "text": "2"},
        "weights_total": {"value": 140, "text": "140.0 GB"},
        "usable_memory": {"value": 85.8993, "text": "85.90 GB"},  # 85,899,345,920 B
    }
    assert capacity.outputs(140e9, A100_AT_90)["usable_memory"] == {"value": 77.3094, "text": "77.31 GB"}


def test_words_fill_every_slot_in_every_language():
    names = set(capacity.outputs(140e9, A100))
    assert set(capacity.TEXT) == set(LANGUAGES)
    for lang in LANGUAGES:
        assert set(capacity.TEXT[lang]) == {"capacity"}
        slots = {field for _, field, _, _ in string.Formatter().parse(capacity.TEXT[lang]["capacity"]) if field}
        assert slots == names, lang
    assert not CHINESE.search(capacity.TEXT["en"]["capacity"])
    assert CHINESE.search(capacity.TEXT["zh"]["capacity"])


def test_every_preset_fits_every_gpu_at_the_reported_and_the_datasheet_memory():
    """Why the flag is off for every preset pair today (the widgets' tests check it in their views)."""
    for hw_key in presets.hardware_keys():
        hw = presets.hardware(hw_key)
        for model_key in presets.model_keys():
            resident = model_size.resident_weight_bytes(presets.model(model_key))
            assert capacity.fits(resident, hw), (hw_key, model_key)
            assert capacity.fits(resident, dataclasses.replace(hw, memory_bytes=hw.datasheet_memory_bytes)), \
                (hw_key, model_key)
