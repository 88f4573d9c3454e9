"""sim/physics/feasibility.py: the configurations a lesson quotes that do not fit in memory are told, searches' trials are
not, and as_if_it_fit accepts them."""

from sim.physics import feasibility, memory, presets, roofline
from sim.serving import interference
from sim.techniques import quantization, sampling, speculative

ANCHOR, H100, H200 = presets.model("qwen3.8-27b"), presets.hardware("h100-sxm"), presets.hardware("h200-sxm")
FIT = memory.max_batch(ANCHOR, H100, context=1024)  # 137


def told(compute) -> list[str]:
    with feasibility.recorded() as ledger:
        compute()
    return [o.what for o in ledger.overflows]


def test_a_decode_step_is_told_only_when_it_does_not_fit_and_only_inside_a_ledger():
    assert told(lambda: roofline.decode(ANCHOR, H100, batch=FIT, context=1024)) == []
    assert told(lambda: roofline.decode(ANCHOR, H100, batch=FIT + 1, context=1024)) == [
        f"{ANCHOR.name} on the {H100.name}, batch {FIT + 1:,} at 1,024 tokens of context"]
    roofline.decode(ANCHOR, H100, batch=512, context=1024)  # no ledger: nothing kept, nothing raised
    with feasibility.recorded() as outer:
        roofline.decode(ANCHOR, H100, batch=512, context=1024)
        with feasibility.recorded() as inner:
            roofline.decode(ANCHOR, H100, batch=513, context=1024)
    assert [o.what.split(", ")[1] for o in outer.overflows] == ["batch 512 at 1,024 tokens of context"]
    assert len(inner.overflows) == 1 and inner.overflows[0].need_bytes > inner.overflows[0].have_bytes


def test_the_same_count_as_memory_py():
    # the need told is memory.resident_bytes: weights and every request's KV and state
    with feasibility.recorded() as ledger:
        roofline.decode(ANCHOR, H100, batch=200, context=1024)
    (overflow,) = ledger.overflows
    assert overflow.need_bytes == memory.resident_bytes(ANCHOR, 200, 1024)
    assert overflow.have_bytes == H100.memory_bytes


def test_each_quoting_function_tells():
    assert told(lambda: quantization.decode(ANCHOR, H100, 512, 1024, "int4"))
    assert not told(lambda: quantization.decode(ANCHOR, H100, 128, 1024, "int4"))
    assert told(lambda: speculative.Speculation(ANCHOR, H100, alpha=0.8, gamma=4, draft="mtp", batch=37,
                                                context=1024))
    assert not told(lambda: speculative.Speculation(ANCHOR, H100, alpha=0.8, gamma=4, draft="mtp", batch=36,
                                                    context=1024))
    assert told(lambda: interference.interfere(ANCHOR, H100, 128, 2048, 2048, 256))
    assert not told(lambda: interference.interfere(ANCHOR, H100, 96, 2048, 2048, 256))
    # a cached Step is told every time it is asked for, not only when first computed
    assert sampling.step("qwen3.8-27b", "h100-sxm", 256, "top-p-sort").decode_s > 0  # computed and cached here
    assert told(lambda: sampling.step("qwen3.8-27b", "h100-sxm", 256, "top-p-sort").share)


def test_searches_tell_their_answer_not_their_trials():
    assert told(lambda: roofline.critical_batch(ANCHOR, H100)) == []
    assert told(lambda: quantization.ridge_batch(ANCHOR, H100, "int4")) == []
    # top-p's 1% share comes at batch 29, which fits; top-k's at 161, which does not
    assert told(lambda: sampling.share_from_batch("qwen3.8-27b", "h100-sxm", "top-p-sort", 0.01)) == []
    assert told(lambda: sampling.share_from_batch("qwen3.8-27b", "h100-sxm", "top-k", 0.01)) == [
        f"{ANCHOR.name} on the {H100.name}, batch 161 at 1,024 tokens of context"]
    good = speculative.Speculation(ANCHOR, H100, alpha=0.8, gamma=4, draft="mtp", batch=1, context=1024)
    weak = good.at(hw=H200, alpha=0.6)
    assert len(told(lambda: good.break_even_batch)) == 1  # 258, where 36 fit
    assert told(lambda: weak.break_even_batch) == []  # 76, where 115 fit


def test_as_if_it_fit_accepts_what_was_told_and_returns_the_value():
    with feasibility.recorded() as ledger:
        value = feasibility.as_if_it_fit(roofline.decode(ANCHOR, H100, batch=512, context=1024).time_s)
    assert value == roofline.decode(ANCHOR, H100, batch=512, context=1024).time_s
    assert ledger.overflows == [] and len(ledger.accepted) == 1
    assert feasibility.as_if_it_fit(3) == 3  # outside a ledger, it is the identity
