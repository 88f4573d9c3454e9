"""Properties that hold for every preset over wide parameter ranges (hypothesis)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import widgets
from sim.physics import memory, presets, roofline
from tests.sim.test_widgets import check_view

models = st.sampled_from(presets.model_keys()).map(presets.model)
gpus = st.sampled_from(presets.hardware_keys()).map(presets.hardware)
dtypes = st.sampled_from(["fp32", "bf16"])
tokens = st.integers(1, 1_000_000)
batches = st.integers(1, 100_000)
contexts = st.integers(0, 1_000_000)


@given(models, gpus, tokens, dtypes)
def test_prefill_time_sums_its_operations_and_is_never_below_the_overlapped_bound(m, hw, t, dtype):
    e = roofline.prefill(m, hw, tokens=t, state_dtype=dtype)
    check_operations(e)


@given(models, gpus, batches, contexts, dtypes)
def test_decode_time_sums_its_operations_and_is_never_below_the_overlapped_bound(m, hw, b, ctx, dtype):
    e = roofline.decode(m, hw, batch=b, context=ctx, state_dtype=dtype)
    check_operations(e)
    assert math.isfinite(e.tokens_per_s) and e.tokens_per_s > 0


def check_operations(e) -> None:
    assert e.time_s == math.fsum(max(op.flops / op.peak_flops_per_s, op.bytes / op.bandwidth_bytes_per_s) for op in e.ops)
    assert e.time_s >= e.overlapped_time_s * (1 - 1e-12)
    if not e.mixed:  # every operation bound the same way: the sum is the aggregate bound
        assert e.time_s == pytest.approx(e.overlapped_time_s, rel=1e-12)
    assert e.flops == sum(op.flops for op in e.ops) and e.bytes == sum(e.bytes_by_kind.values())
    assert e.bound == ("compute" if 2 * sum(op.time_s for op in e.ops if op.bound == "compute") > e.time_s
                       else "memory")


@given(models, gpus, tokens, st.integers(1, 10_000), dtypes)
def test_prefill_is_monotonic_in_tokens(m, hw, t, dt, dtype):
    a = roofline.prefill(m, hw, tokens=t, state_dtype=dtype)
    b = roofline.prefill(m, hw, tokens=t + dt, state_dtype=dtype)
    assert b.time_s >= a.time_s and b.bytes >= a.bytes and b.flops > a.flops


@given(models, gpus, batches, contexts, st.integers(0, 1000), st.integers(0, 100_000), dtypes)
def test_decode_is_monotonic_in_batch_and_context(m, hw, b, ctx, db, dctx, dtype):
    a = roofline.decode(m, hw, batch=b, context=ctx, state_dtype=dtype)
    more = roofline.decode(m, hw, batch=b + db, context=ctx + dctx, state_dtype=dtype)
    assert more.time_s >= a.time_s and more.bytes >= a.bytes


@given(models, gpus, st.integers(1, 8192))
def test_prefill_intensity_is_about_tokens(m, hw, t):
    # Weights dominate the bytes, so FLOPs/bytes ~ 2NT / 2N = T, raised by attention FLOPs (quadratic
    # in T, so this holds only while matmuls dominate) and lowered by KV and state writes, and by the LM head,
    # which a prefill runs at the last position only (5% of the anchor's matmul weights, 2% of Llama-2-7B's).
    e = roofline.prefill(m, hw, tokens=t)
    assert 0.75 * t <= e.intensity <= 1.25 * t


@given(models, gpus, st.integers(1, 200_000), dtypes)
def test_max_batch_fits_and_one_more_does_not(m, hw, ctx, dtype):
    n = memory.max_batch(m, hw, context=ctx, state_dtype=dtype)
    assert memory.resident_bytes(m, n, ctx, dtype) <= hw.memory_bytes
    assert memory.resident_bytes(m, n + 1, ctx, dtype) > hw.memory_bytes


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


# Every parameter name any widget has, so that random states hit real parameters as well as junk keys.
PARAM_NAMES = sorted({p.name for name in widgets.names() for p in widgets.load(name).WIDGET.controls} | {"lang", "changed"})


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(widgets.names()), st.dictionaries(
    st.sampled_from(PARAM_NAMES) | st.text(max_size=6), json_values, max_size=10))
def test_every_widget_renders_any_state(name, state):
    check_view(widgets.render(name, state))
