"""The request-path widget and sim/serving/request.py: each cell's bytes, FLOPs and time, computed by hand from the config."""

import dataclasses
import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import widgets
from sim.kit import Flag
from sim.physics import cache, presets
from sim.serving import request
from sim.widgets import request_path
from tests.sim.test_widgets import check_view

ANCHOR = presets.model("qwen3.8-27b")
H100 = presets.hardware("h100-sxm")
A100 = presets.hardware("a100-sxm-80gb")

# The anchor's config, by hand (reference README): 16 full-attention layers with 4 KV heads of dim 256 in BF16;
# 48 Gated DeltaNet layers with 48 value heads of 128 x 128 state in FP32; 24 query heads; vocab 248,320.
N_MATMUL = 25_623_939_584  # the reference lessons' matmul-parameter count
WEIGHT_BYTES = 2 * N_MATMUL  # 51,247,879,168
# A prefill runs the LM head (vocab 248,320 x hidden 5,120) only at the prompt's last position, where the next token
# is sampled; the decoder layers' other 25,623,939,584 - 1,271,398,400 = 24,352,541,184 weights at every token.
LM_HEAD = 248_320 * 5_120  # 1,271,398,400
N_LAYERS_MATMUL = N_MATMUL - LM_HEAD  # 24,352,541,184
KV_ROW = 16 * 2 * 4 * 256 * 2  # 65,536 B per token
STATE = 48 * 48 * 128 * 128 * 4  # 150,994,944 B per request
ATTENTION_PER_CACHED_TOKEN = 16 * 24 * 256 * 2 * 2  # q.k and p.v, 2 FLOPs per multiply-add: 393,216
H100_BYTES_PER_S = 3.35e12
H100_FLOPS_PER_S = 989.5e12

# The running examples: 「小明把苹果给了」, 4 tokens as Qwen3.x's tokenizer splits it (reference lesson 000); and
# "Tom gave the apple to", taken as 5 (one token per common English word, not checked against the tokenizer).
ZH_TOKENS = len(request.example("zh").tokens)
EN_TOKENS = len(request.example("en").tokens)


def test_hand_constants_are_the_anchor_figures():
    assert (WEIGHT_BYTES, KV_ROW, STATE, ATTENTION_PER_CACHED_TOKEN) == (51_247_879_168, 65_536, 150_994_944, 393_216)


def test_the_running_example_in_each_language():
    zh, en = request.example("zh"), request.example("en")
    assert zh.tokens == ("小明", "把", "苹果", "给了") and zh.next_token == "小王"
    assert (zh.prompt, zh.words, zh.next_word) == ("小明把苹果给了", zh.tokens, "小王")
    # BPE writes a word after a space with its space; a reader sees the words.
    assert en.tokens == ("Tom", " gave", " the", " apple", " to") and en.next_token == " Mary"
    assert (en.prompt, en.words, en.next_word) == ("Tom gave the apple to", ("Tom", "gave", "the", "apple", "to"),
                                                   "Mary")
    assert (ZH_TOKENS, EN_TOKENS) == (4, 5)
    assert set(request.TEXT) == {"zh", "en"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        en.tokens = ()


def test_path_stages_takes_the_prompt_length_explicitly():
    with pytest.raises(TypeError):
        request.path_stages(ANCHOR, H100)  # no default: the length is the page language's example's


def test_prefill_cells_of_the_running_example():
    stages = request.path_stages(ANCHOR, H100, prompt_tokens=ZH_TOKENS)
    assert stages["tokenize"] == request.Stage(bytes=0, flops=0, time_s=0)
    written = 4 * KV_ROW + STATE
    assert written == 151_257_088
    assert stages["write-cache"].bytes == written
    assert stages["write-cache"].time_s == pytest.approx(written / H100_BYTES_PER_S, rel=1e-12)
    prefill = stages["prefill"]
    assert prefill.bytes == WEIGHT_BYTES + written == 51_399_136_256
    # causal: i sees i; the LM head once, at the last of the 4 tokens
    assert prefill.flops == 2 * N_LAYERS_MATMUL * 4 + 2 * LM_HEAD + ATTENTION_PER_CACHED_TOKEN * (1 + 2 + 3 + 4)
    assert prefill.flops == 197_367_058_432  # 194,820,329,472 + 2,542,796,800 + 3,932,160
    assert prefill.time_s * 1e3 == pytest.approx(51_399_136_256 / H100_BYTES_PER_S * 1e3, rel=1e-12)
    assert prefill.time_s * 1e3 == pytest.approx(15.343, abs=0.0005)


def test_decode_cells_of_the_running_example():
    stages = request.path_stages(ANCHOR, H100, prompt_tokens=ZH_TOKENS)
    assert stages["read-weights"].bytes == 51_247_879_168
    assert stages["read-weights"].time_s * 1e3 == pytest.approx(15.2979, abs=0.00005)
    # Context 4: 4 KV rows read and 1 written; the state read and written back.
    assert stages["read-cache"].bytes == 5 * KV_ROW + 2 * STATE == 302_317_568
    assert stages["read-cache"].time_s == pytest.approx(302_317_568 / H100_BYTES_PER_S, rel=1e-12)
    compute = stages["compute"]
    assert compute.flops == 2 * N_MATMUL + 4 * ATTENTION_PER_CACHED_TOKEN == 51_249_452_032
    assert compute.time_s == pytest.approx(51_249_452_032 / H100_FLOPS_PER_S, rel=1e-12)
    assert stages["sample"].bytes == 248_320 * 4 == 993_280


def test_english_example_cells_are_computed_with_five_tokens():
    stages = request.path_stages(ANCHOR, H100, prompt_tokens=EN_TOKENS)
    written = 5 * KV_ROW + STATE
    assert written == 151_322_624
    assert stages["write-cache"].bytes == written
    assert stages["prefill"].bytes == WEIGHT_BYTES + written == 51_399_201_792
    assert stages["prefill"].flops == (2 * N_LAYERS_MATMUL * 5 + 2 * LM_HEAD
                                       + ATTENTION_PER_CACHED_TOKEN * (1 + 2 + 3 + 4 + 5))
    # 243,525,411,840 + 2,542,796,800 + 5,898,240 (256,245,294,080 with the LM head at all 5 tokens)
    assert stages["prefill"].flops == 246_074_106_880
    assert stages["prefill"].time_s * 1e3 == pytest.approx(51_399_201_792 / H100_BYTES_PER_S * 1e3, rel=1e-12)
    # Context 5: 5 KV rows read and 1 written; the state read and written back.
    assert stages["read-cache"].bytes == 6 * KV_ROW + 2 * STATE == 302_383_104
    assert stages["compute"].flops == 2 * N_MATMUL + 5 * ATTENTION_PER_CACHED_TOKEN == 51_249_845_248
    assert stages["read-weights"].bytes == WEIGHT_BYTES
    assert stages["sample"].bytes == 248_320 * 4
    reads = stages["read-weights"].time_s + stages["read-cache"].time_s
    assert reads == pytest.approx((WEIGHT_BYTES + 6 * KV_ROW + 2 * STATE) / H100_BYTES_PER_S, rel=1e-12)


def test_reads_add_up_to_the_decode_step():
    stages = request.path_stages(ANCHOR, H100, prompt_tokens=ZH_TOKENS)
    reads = stages["read-weights"].time_s + stages["read-cache"].time_s
    assert reads * 1e3 == pytest.approx(15.388, abs=0.0005)
    assert reads * 1e3 == pytest.approx((WEIGHT_BYTES + 5 * KV_ROW + 2 * STATE) / H100_BYTES_PER_S * 1e3, rel=1e-12)


def test_bf16_state_halves_the_state_traffic():
    stages = request.path_stages(ANCHOR, H100, prompt_tokens=ZH_TOKENS, state_dtype="bf16")
    assert stages["read-cache"].bytes == 5 * KV_ROW + 2 * (STATE // 2)
    assert stages["write-cache"].bytes == 4 * KV_ROW + STATE // 2


def test_a_model_without_state_writes_and_reads_kv_only():
    llama = presets.model("llama-2-7b")
    row = 32 * 2 * 32 * 128 * 2  # 32 layers, 32 KV heads of dim 128, BF16
    stages = request.path_stages(llama, H100, prompt_tokens=ZH_TOKENS)
    assert stages["write-cache"].bytes == 4 * row
    assert stages["read-cache"].bytes == 5 * row
    assert stages["sample"].bytes == 32_000 * 4


def test_back_of_envelope_speeds():
    assert 1 / request.compute_only_time_s(ANCHOR, H100) == pytest.approx(H100_FLOPS_PER_S / (2 * N_MATMUL), rel=1e-12)
    assert request.weights_only_time_s(ANCHOR, H100) * 1e3 == pytest.approx(15.30, abs=0.005)
    assert request.weights_only_time_s(ANCHOR, A100) == pytest.approx(WEIGHT_BYTES / 2.039e12, rel=1e-12)


def test_default_view_is_the_read_weights_cell():
    view = widgets.render("request-path", {})
    check_view(view)
    out = view["outputs"]
    assert view["state"]["step"] == "read-weights"
    assert out["step_bytes"] == {"value": 51_247_900_000, "text": "51.25 GB"}
    assert out["step_ms"] == {"value": 15.2979, "text": "15.30 ms"}
    assert out["decode_ms"] == {"value": 15.3881, "text": "15.39 ms"}
    assert "51,247,879,168" in view["derivations"]["step_bytes"]
    assert "51.25 GB" in out["step_note"]["text"] and "15.30 ms" in out["step_note"]["text"]


@pytest.mark.parametrize("step, bytes_text, flops_text, ms_text, note_bits", [
    ("tokenize", "0 B", "0 FLOP", "不计（CPU）", ["小明 · 把 · 苹果 · 给了", "CPU"]),
    ("prefill", "51.40 GB", "197.4 GFLOP", "15.34 ms", ["51.25 GB", "被带宽卡住"]),  # 197,367,058,432 FLOP
    ("write-cache", "151.3 MB", "—", "0.0452 ms", ["16 层", "48 层", "151.0 MB"]),
    ("read-cache", "302.3 MB", "—", "0.0902 ms", ["2 × 151.0 MB", "302.3 MB"]),
    ("compute", "—", "51.25 GFLOP", "0.0518 ms", ["0.34%", "989.5"]),
    ("sample", "993.3 KB", "已计入上一格", "0.000297 ms", ["248,320", "小王"]),
])
def test_each_cell_shows_its_numbers(step, bytes_text, flops_text, ms_text, note_bits):
    view = widgets.render("request-path", {"step": step})
    out = view["outputs"]
    assert (out["step_bytes"]["text"], out["step_flops"]["text"], out["step_ms"]["text"]) == (
        bytes_text, flops_text, ms_text)
    assert all(bit in out["step_note"]["text"] for bit in note_bits)
    assert set(view["derivations"]) == {"step_bytes", "step_flops", "step_ms", "decode_ms"}


def test_derivations_show_the_exact_byte_counts():
    cache_view = widgets.render("request-path", {"step": "read-cache"})
    assert cache_view["derivations"]["step_bytes"] == (
        "(4 + 1) × 65,536 B（KV） + 2 × 150,994,944 B（状态读出再写回） = 302,317,568 B = 302.3 MB")
    write_view = widgets.render("request-path", {"step": "write-cache"})
    assert write_view["derivations"]["step_bytes"] == (
        "4 × 65,536 B（KV） + 150,994,944 B（递归状态） = 151,257,088 B = 151.3 MB")
    compute_view = widgets.render("request-path", {"step": "compute"})
    assert "51,249,452,032 FLOP" in compute_view["derivations"]["step_flops"]
    prefill_view = widgets.render("request-path", {"step": "prefill"})
    assert prefill_view["derivations"]["step_flops"] == (
        "2 × 24,352,541,184 × 4 + 2 × 1,271,398,400（LM head 只算最后一个位置）+ 393,216 × 10（因果注意力）"
        "= 197,367,058,432 FLOP = 197.4 GFLOP")


def test_switching_gpu_changes_time_not_bytes():
    h100 = widgets.render("request-path", {"step": "read-weights"})["outputs"]
    a100 = widgets.render("request-path", {"step": "read-weights", "hardware": "a100-sxm-80gb"})["outputs"]
    assert a100["step_bytes"] == h100["step_bytes"]
    assert a100["step_ms"]["value"] == pytest.approx(WEIGHT_BYTES / 2.039e12 * 1e3, rel=1e-5)
    assert a100["decode_ms"]["value"] == pytest.approx(
        (WEIGHT_BYTES + 5 * KV_ROW + 2 * STATE) / 2.039e12 * 1e3, rel=1e-5)


def test_a_model_without_state_says_so():
    note = widgets.render("request-path", {"step": "write-cache", "model": "qwen3-32b"})["outputs"]["step_note"]
    assert "没有递归状态" in note["text"]
    english = widgets.render("request-path", {"step": "read-cache", "model": "llama-2-7b", "lang": "en"})
    assert "state" not in english["outputs"]["step_note"]["text"]


def test_capacity_flag_is_in_the_view_and_off_for_every_preset():
    view = widgets.render("request-path", {})
    assert view["flags"] == {"capacity": False, "no_state": False}
    out = view["outputs"]
    assert out["weights_total"] == {"value": 55.5629, "text": "55.56 GB"}  # the whole checkpoint, 55,562,855,904 B
    # the H100 as the device reports it: 81,559 MiB = 85,520,809,984 B
    assert out["usable_memory"] == {"value": 85.5208, "text": "85.52 GB"}
    assert out["gpus_needed"] == {"value": 1, "text": "1"}
    for hw, model in itertools.product(presets.hardware_keys(), presets.model_keys()):
        flags = widgets.render("request-path", {"hardware": hw, "model": model})["flags"]
        assert flags == {"capacity": False, "no_state": cache.state_bytes_per_request(presets.model(model)) == 0}


def test_capacity_flag_is_the_layout_the_template_draws():
    assert request_path.WIDGET.layout == (Flag("capacity"), Flag("no_state", tone="note", controls=("state_dtype",)))


def test_unknown_step_falls_back_to_the_default():
    assert widgets.render("request-path", {"step": "nonsense"})["state"]["step"] == "read-weights"
    assert widgets.render("request-path", {"step": 3})["state"]["step"] == "read-weights"


def test_every_cell_on_every_gpu_model_and_dtype_is_a_valid_view():
    for step, hw, model, dtype, lang in itertools.product(
            request.PATH, presets.hardware_keys(), presets.model_keys(), ("fp32", "bf16"), ("zh", "en")):
        view = widgets.render("request-path", {"step": step, "hardware": hw, "model": model, "state_dtype": dtype,
                                               "lang": lang})
        check_view(view)
        assert view["outputs"]["step_note"]["text"]


def test_cells_follow_the_path_order():
    assert request_path.WIDGET.control("step").options == request.PATH


def test_every_cell_has_its_words_in_every_language():
    for lang, words in request_path.TEXT.items():
        for step in request.PATH:
            assert {f"step={step}", f"hint.{step}", f"note.{step}"} <= words.keys(), (lang, step)


# CJK ideographs, CJK punctuation (「」) and full-width forms (，：（）).
CHINESE = re.compile("[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


@pytest.mark.parametrize("model", ["qwen3.8-27b", "llama-2-7b"])
@pytest.mark.parametrize("step", request.PATH)
def test_english_view_has_no_chinese(step, model):
    zh = widgets.render("request-path", {"step": step, "model": model})
    en = widgets.render("request-path", {"step": step, "model": model, "lang": "en"})
    check_view(en)
    assert en["state"]["lang"] == "en" and zh["state"]["lang"] == "zh"
    for text in [o["text"] for o in en["outputs"].values()] + list(en["derivations"].values()):
        assert not CHINESE.search(text), text
    assert CHINESE.search(zh["outputs"]["step_note"]["text"])  # the check can fail


@pytest.mark.parametrize("step", ["tokenize", "read-weights", "sample"])
def test_a_cell_that_does_not_count_the_prompt_shows_the_same_numbers_in_both_languages(step):
    """Only the prompt's length differs between the examples; cells that do not depend on it agree."""
    zh = widgets.render("request-path", {"step": step, "lang": "zh"})["outputs"]
    en = widgets.render("request-path", {"step": step, "lang": "en"})["outputs"]
    example = {"prompt_tokens", "next_token", "example", "step_note", "decode_ms"}
    assert {k: o["value"] for k, o in en.items() if k not in example} == {
        k: o["value"] for k, o in zh.items() if k not in example}


@pytest.mark.parametrize("step", request.PATH)
def test_english_view_is_computed_with_the_english_example(step):
    """Every figure of the English view is the path of a 5-token prompt: the same numbers as the Chinese widget
    would show for a prompt of that length."""
    en = widgets.render("request-path", {"step": step, "lang": "en"})
    stages = request.path_stages(ANCHOR, H100, prompt_tokens=EN_TOKENS)
    out = en["outputs"]
    assert out["prompt_tokens"] == {"value": 5, "text": "5"}
    assert out["next_token"] == {"value": 1, "text": "Mary"}
    assert out["step_bytes"]["value"] == pytest.approx(stages[step].bytes, rel=1e-5)
    assert out["step_flops"]["value"] == pytest.approx(stages[step].flops, rel=1e-5)
    assert out["step_ms"]["value"] == pytest.approx(stages[step].time_s * 1e3, rel=1e-5)
    decode = (WEIGHT_BYTES + 6 * KV_ROW + 2 * STATE) / H100_BYTES_PER_S  # context 5, read 5 rows, write 1
    assert out["decode_ms"]["value"] == pytest.approx(decode * 1e3, rel=1e-5)


def test_english_cells_quote_the_english_example():
    notes = {step: widgets.render("request-path", {"step": step, "lang": "en"})["outputs"]["step_note"]["text"]
             for step in request.PATH}
    assert "“Tom gave the apple to” becomes 5 tokens (Tom · gave · the · apple · to; the exact split depends on the " \
           "tokenizer), i.e. 5 integer ids" in notes["tokenize"]
    assert "The 5 tokens go through the model together" in notes["prefill"] and "picks “Mary”" in notes["prefill"]
    assert "5 rows = 327.7 KB" in notes["write-cache"]
    assert notes["read-weights"].startswith("The first decode turn feeds in “Mary”.")
    assert notes["read-cache"].startswith("“Mary” looks back at 5 tokens: 5 KV rows read")
    assert "attention over 5 cached tokens" in notes["compute"]
    assert "the token after “Mary” is picked" in notes["sample"]
    derivations = widgets.render("request-path", {"step": "read-cache", "lang": "en"})["derivations"]
    assert derivations["step_bytes"] == (
        "(5 + 1) × 65,536 B (KV) + 2 × 150,994,944 B (state read and written back) = 302,383,104 B = 302.4 MB")
    example = widgets.render("request-path", {"lang": "en"})["outputs"]["example"]["text"]
    assert example.startswith("The prompt “Tom gave the apple to” is taken as 5 tokens (Tom · gave · the · apple · to;")
    assert "prefill yields “Mary”" in example


def test_chinese_example_paragraph_is_the_one_the_lesson_always_had():
    example = widgets.render("request-path", {})["outputs"]["example"]["text"]
    assert example == ("提示「小明把苹果给了」切成 4 个 token（小明 · 把 · 苹果 · 给了）；prefill 之后模型写出「小王」，"
                       "decode 从它开始一个字一个字往下写。")


def test_english_page_words_have_no_chinese():
    for key, text in request_path.TEXT["en"].items():
        assert not CHINESE.search(text), key
    for key, text in request.TEXT["en"].items():
        assert not CHINESE.search(text), key


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_labels_and_hints_count_what_the_example_has(lang):
    """The cell labels, hints and loop title the template fills (| fill) count the example's own tokens."""
    words = request_path.TEXT[lang]
    example = request.example(lang)
    out = widgets.render("request-path", {"lang": lang})["outputs"]
    n = len(example.tokens)
    for key in ("step=prefill", "hint.tokenize", "hint.prefill", "hint.read-cache"):
        assert "{t}" in words[key], key
        filled = words[key].format(t=out["prompt_tokens"]["text"])
        assert re.findall(r"\d+", filled) == [str(n)], (key, filled)
    assert example.next_word in words["loop_title"].format(next=out["next_token"]["text"])
    # No text of the widget types a count of the example: neither language's prompt length appears as a number.
    for key, text in words.items():
        assert not re.search(rf"(?<![\d.{{]){ZH_TOKENS}(?![\d.])|(?<![\d.{{]){EN_TOKENS}(?![\d.])", text), key


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["step", "hardware", "model", "state_dtype", "lang"]) | st.text(max_size=6),
                       json_values, max_size=6))
def test_any_state_renders_a_valid_view(state):
    check_view(widgets.render("request-path", state))
