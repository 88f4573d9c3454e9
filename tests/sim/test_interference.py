import pytest

from sim.physics import presets, roofline
from sim.serving import interference, scheduler

ANCHOR = presets.model("qwen3.8-27b")
H100 = presets.hardware("h100-sxm")
CHUNKS = (16, 32, 64, 128, 256, 512, 1024)


def run(batch=32, context=2048, prompt=2048, chunk=0, m=ANCHOR, hw=H100):
    return interference.interfere(m, hw, batch=batch, context=context, prompt_tokens=prompt, chunk_tokens=chunk)


def test_chunks_add_up_to_the_prompt_the_last_one_shorter():
    assert interference.chunks(2048, 0) == (2048,)
    assert interference.chunks(2048, 4096) == (2048,)
    assert interference.chunks(1000, 256) == (256, 256, 256, 232)
    for prompt in (1, 17, 2048, 5000):
        for chunk in CHUNKS:
            r = run(prompt=prompt, chunk=chunk)
            assert sum(s.chunk for s in r.steps) == prompt
            assert [s.before for s in r.steps] == [sum(s.chunk for s in r.steps[:k]) for k in range(len(r.steps))]
            assert [s.sampled for s in r.steps] == [0] * (len(r.steps) - 1) + [1]  # logits in the last chunk only


def test_a_whole_prompt_is_the_schedulers_step_with_a_joiner_to_the_last_bit():
    cost = scheduler.step_cost(ANCHOR, H100)
    r = run()
    assert r.steps[0].time_s == r.whole_s == cost.time_s(2048, cost.prefill_attention_s(2048), 32, 32 * 2048, 1)
    assert r.decode_s == cost.time_s(0, 0.0, 32, 32 * 2048, 0)
    assert interference.decode_step(cost, 0, 2048).time_s == 0
    assert r.decode_s == pytest.approx(roofline.decode(ANCHOR, H100, batch=32, context=2048).time_s, rel=1e-12)
    assert r.alone_s == pytest.approx(roofline.prefill(ANCHOR, H100, tokens=2048).time_s, rel=1e-12)


def test_default_scenario_against_a_hand_computation_from_the_coefficients():
    """Anchor on H100, 32 decoders of 2,048, a 2,048-token prompt in chunks of 512: every step by hand."""
    c = scheduler.step_cost(ANCHOR, H100)
    r = run(chunk=512)
    decode_attention = max(c.pair_s * 32 * 2048, c.kv_row_s * (32 * 2048 + 32))
    by_hand = []
    for k in range(4):
        p, last = 512 * k, k == 3
        matmuls = max(c.token_s * (512 + 32) + c.logit_s * (32 + last), c.weights_s)
        attention = max(c.pair_s * (512 * p + 512 * 513 // 2), c.kv_row_s * (p + 512))
        state = c.state_s * ((1 if k == 0 else 2) + 64)
        by_hand.append(matmuls + attention + decode_attention + state)
    assert [s.time_s for s in r.steps] == by_hand
    assert r.ttft_s == pytest.approx(sum(by_hand), rel=1e-15)
    assert r.stall_s == max(by_hand) == by_hand[-1]  # later chunks attend to more
    assert r.first_step_s == by_hand[0]
    assert r.overhead_s == r.ttft_s - r.whole_s > 0


def test_a_chunk_below_the_ridge_is_nearly_free_for_decode():
    r = run(chunk=64)
    assert 64 + 32 < roofline.critical_batch(ANCHOR, H100)
    assert r.stall_s == pytest.approx(r.decode_s, rel=0.01)
    assert run(chunk=r.free_chunk).stall_s < 1.03 * r.decode_s
    # past it the chunk's own FLOPs set the step's time
    assert run(chunk=2 * r.free_chunk + 64).first_step_s > 1.2 * r.decode_s


def test_free_chunk_is_the_ridge_of_the_batch():
    cost = scheduler.step_cost(ANCHOR, H100)
    for batch in (0, 1, 32, 200):
        c = interference.free_chunk(cost, batch)
        assert cost.matmuls_s(c + batch, batch + 1) == cost.weights_s  # memory-bound: the weight read
        assert cost.matmuls_s(c + 1 + batch, batch + 1) > cost.weights_s
    assert interference.free_chunk(cost, 400) == 0  # the batch alone is past the ridge


def test_whole_prompt_stalls_every_decoder_for_its_prefill():
    r = run()
    assert r.stall_s > 5 * r.decode_s
    assert r.stall_s > r.alone_s  # the decoders' own work rides on top


@pytest.mark.parametrize("m", [ANCHOR, presets.model("llama-2-7b")], ids=lambda m: m.name)
@pytest.mark.parametrize("prompt", [100, 2048, 8192])
def test_chunking_trades_ttft_for_stall(m, prompt):
    whole = run(prompt=prompt, m=m)
    previous = None
    for chunk in sorted(CHUNKS, reverse=True):
        r = run(prompt=prompt, chunk=chunk, m=m)
        assert r.ttft_s >= r.alone_s  # never faster than the prompt alone
        assert r.ttft_s >= whole.ttft_s * (1 - 1e-12)  # never faster than the prompt whole with the batch
        if prompt > whole.free_chunk:  # the whole prompt is past the ridge: chunking never stalls worse
            assert r.stall_s <= whole.stall_s * (1 + 1e-12)
        else:  # a short prompt is nearly free whole; a later chunk's state and KV re-read may cost a little
            assert r.stall_s <= whole.stall_s * 1.01
        if previous is not None:  # smaller chunks: more steps, more weight reads, a longer wait
            assert r.overhead_s >= previous.overhead_s
            assert r.weight_reads >= previous.weight_reads
        previous = r


def test_a_chunk_reads_the_earlier_chunks_kv_but_adds_no_attention_pairs():
    cost = scheduler.step_cost(ANCHOR, H100)
    r = run(chunk=256)
    pairs = sum(s.chunk * s.before + s.chunk * (s.chunk + 1) // 2 for s in r.steps)
    assert pairs == 2048 * 2049 // 2
    assert cost.chunk_attention_s(2048, 0) == cost.prefill_attention_s(2048)


def test_batch_zero_is_the_prompt_alone_and_batch_one_has_one_decoder():
    alone = run(batch=0)
    assert alone.ttft_s == alone.alone_s == alone.whole_s
    assert alone.decode_s == alone.stall_s == 0
    one = run(batch=1, chunk=128)
    assert one.decode_s == pytest.approx(roofline.decode(ANCHOR, H100, batch=1, context=2048).time_s, rel=1e-12)
    assert one.decode_s < one.stall_s < 1.05 * one.decode_s


def test_a_hybrid_chunk_reads_and_writes_the_joiners_state():
    cost = scheduler.step_cost(ANCHOR, H100)
    assert cost.state_s > 0  # the anchor is a hybrid with Gated DeltaNet layers
    r = run(chunk=512)
    assert [s.state_s for s in r.steps] == [cost.state_s * (1 + 64)] + [cost.state_s * (2 + 64)] * 3


@pytest.mark.parametrize("kwargs", [dict(batch=-1), dict(prompt=0), dict(chunk=-1), dict(context=-1),
                                    dict(prompt=1_000_000, chunk=1)])
def test_bad_arguments_are_value_errors(kwargs):
    with pytest.raises(ValueError):
        run(**kwargs)
