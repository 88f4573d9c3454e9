"""The questions of the lesson sampling, which its predict boxes name by key (lessons/<lang>/sampling.md): how each
answer and its common mistakes are computed, the tolerance it is graded with, and the words of its derivation and of
each mistake in every language (TEXT)."""

from __future__ import annotations

import math

from sim.physics import presets
from sim.questions.question import PERCENT, Mistake, Question, ask
from sim.techniques import sampling

TEXT = {
    "zh": {
        "entropy-uniform-anchor":
            "{vocab:,} 个 token 等概率，每个 p = 1/V：H = −Σ p log₂ p = log₂ V = log₂ {vocab:,} = {value:.2f} 比特",
        "entropy-uniform-anchor.mistake.nats":
            "{mistake:.2f} 是用自然对数算的，单位是奈特：ln {vocab:,} = {mistake:.2f}。比特要以 2 为底："
            "log₂ {vocab:,} = {value:.2f} 比特。",
        "entropy-uniform-anchor.mistake.log10":
            "{mistake:.2f} 是以 10 为底的对数。比特要以 2 为底：log₂ {vocab:,} = {value:.2f} 比特。",
        "temperature-half-example":
            "温度除在 logit 上，logit = ln p + 常数，所以除以 t = {t:g} 等于每个概率取 {power:g} 次方再归一化："
            "{top:g}^{power:g} ÷ Σ p^{power:g} = {top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%",
        "temperature-half-example.mistake.on_probabilities":
            "{mistake:.0f}% 是把概率除以 t 再归一化：每个概率除以同一个数，归一化以后原样不动。温度要除在 logit 上，"
            "相当于概率取 {power:g} 次方：{top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%。",
        "temperature-half-example.mistake.no_renormalise":
            "{mistake:.2f}% 是 {top:g}^{power:g}，少了归一化：取完次方，各个概率加起来只剩 {sum_pow:.4f}，还要除以它："
            "{top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%。",
        "temperature-half-example.mistake.multiplied":
            "{mistake:.1f}% 是把 logit 乘以 t，等于温度 {inverse:g}，分布反倒更平了。温度 {t:g} 是除以 t，"
            "概率取 {power:g} 次方：{top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%。",
        "top-p-09-example":
            "从最可能的往下加，直到累计达到 p = {p:g}：前 {before_n} 个是 {before:.2f}，还不够；"
            "{terms} = {total:.2f} ≥ {p:g}，共 {value} 个",
        "top-p-09-example.mistake.below_p":
            "{mistake:.0f} 个是加到「和还低于 p」就停了：前 {before_n} 个合计 {before:.2f}，没到 {p:g}。"
            "top-p 要的是累计达到 p 的最小集合，还得加上下一个：{total:.2f} ≥ {p:g}，共 {value} 个。",
        "min-p-02-example":
            "阈值 = min-p × 最高概率 = {base:g} × {top:.2f} = {threshold:.2f}；"
            "不低于它的是 {kept_terms}，共 {value} 个",
        "min-p-02-example.mistake.absolute":
            "{mistake:.0f} 个是把 min-p 当成了绝对阈值（概率 ≥ {base:g}）。min-p 的阈值随最高的那个 token 变："
            "{base:g} × {top:.2f} = {threshold:.2f}，不低于它的共 {value} 个。",
        "top-p-sort-b128-h100":
            "top-p 全排序每个 logit 读写 {per_logit} 字节（温度 {temperature} + softmax {softmax} + "
            "排序 {sort} + 扫描 {scan}）：{batch} × {vocab:,} × {per_logit} B = {gb:.2f} GB ÷ {bandwidth:g} TB/s = "
            "{value:.2f} ms",
        "top-p-sort-b128-h100.mistake.one_read":
            "{mistake:.3f} ms 只算了把 logits 读一遍（{batch} × {vocab:,} × {logit} B），那是贪心的账。"
            "top-p 全排序还要 softmax，再把「概率 + token id」排 {passes} 遍，每个 logit 一共读写 {per_logit} 字节："
            "{value:.2f} ms。",
        "top-p-sort-b128-h100.mistake.one_row":
            "{mistake:.4f} ms 只是一个请求的那一行。批里 {batch} 个请求各有一行 logits，每行都要排序："
            "{batch} × {vocab:,} × {per_logit} B ÷ {bandwidth:g} TB/s = {value:.2f} ms。",
    },
    "en": {
        "entropy-uniform-anchor":
            "{vocab:,} tokens equally likely, each p = 1/V: H = −Σ p log₂ p = log₂ V = log₂ {vocab:,} = {value:.2f} b"
            "its",
        "entropy-uniform-anchor.mistake.nats":
            "{mistake:.2f} is the natural logarithm, in nats: ln {vocab:,} = {mistake:.2f}. Bits take base 2: "
            "log₂ {vocab:,} = {value:.2f} bits.",
        "entropy-uniform-anchor.mistake.log10":
            "{mistake:.2f} is the logarithm to base 10. Bits take base 2: log₂ {vocab:,} = {value:.2f} bits.",
        "temperature-half-example":
            "temperature divides the logits, and a logit is ln p + a constant, so dividing by t = {t:g} raises every "
            "probability to the power {power:g} before renormalising: {top:g}^{power:g} ÷ Σ p^{power:g} = "
            "{top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%",
        "temperature-half-example.mistake.on_probabilities":
            "{mistake:.0f}% divides the probabilities by t and renormalises: every probability divided by the same "
            "number is unchanged once renormalised. Temperature divides the logits, which raises the probabilities "
            "to the power {power:g}: {top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%.",
        "temperature-half-example.mistake.no_renormalise":
            "{mistake:.2f}% is {top:g}^{power:g} without renormalising: after the power the probabilities add up to "
            "only {sum_pow:.4f}, which they must be divided by: {top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%.",
        "temperature-half-example.mistake.multiplied":
            "{mistake:.1f}% multiplies the logits by t, which is temperature {inverse:g} and makes the distribution "
            "flatter. Temperature {t:g} divides by t, raising the probabilities to the power {power:g}: "
            "{top_pow:.4f} ÷ {sum_pow:.4f} = {value:.1f}%.",
        "top-p-09-example":
            "add from the most probable down until the sum reaches p = {p:g}: the first {before_n} make {before:.2f}, "
            "not enough; {terms} = {total:.2f} ≥ {p:g}, {value} tokens",
        "top-p-09-example.mistake.below_p":
            "{mistake:.0f} tokens stop while the sum is still below p: the first {before_n} make {before:.2f}, "
            "short of {p:g}. Top-p keeps the smallest set whose sum reaches p, so it takes the next one too: "
            "{total:.2f} ≥ {p:g}, {value} tokens.",
        "min-p-02-example":
            "threshold = min-p × the top probability = {base:g} × {top:.2f} = {threshold:.2f}; at or above it: "
            "{kept_terms}, {value} tokens",
        "min-p-02-example.mistake.absolute":
            "{mistake:.0f} tokens is what min-p gives taken as an absolute threshold (probability ≥ {base:g}). "
            "Min-p's threshold moves with the top token: {base:g} × {top:.2f} = {threshold:.2f}, and {value} tokens "
            "are at or above it.",
        "top-p-sort-b128-h100":
            "top-p by a full sort reads and writes {per_logit} bytes per logit (temperature {temperature} + softmax "
            "{softmax} + sort {sort} + scan {scan}): {batch} × {vocab:,} × {per_logit} B = {gb:.2f} GB ÷ "
            "{bandwidth:g} TB/s = {value:.2f} ms",
        "top-p-sort-b128-h100.mistake.one_read":
            "{mistake:.3f} ms counts one read of the logits ({batch} × {vocab:,} × {logit} B), greedy's bill. Top-p by "
            "a full sort also takes a softmax and sorts (probability, token id) pairs in {passes} passes, {per_logit} "
            "bytes read and written per logit in all: {value:.2f} ms.",
        "top-p-sort-b128-h100.mistake.one_row":
            "{mistake:.4f} ms is one request's row. Each of the batch's {batch} requests has a row of logits, and "
            "every row is sorted: {batch} × {vocab:,} × {per_logit} B ÷ {bandwidth:g} TB/s = {value:.2f} ms.",
    },
}


# The anchor's vocabulary; sampling.EXAMPLE's eight probabilities for temperature, top-p and min-p; top-p by a
# full sort at batch 128 on an H100, where 137 requests fit at 1,024 tokens (the sampling-cost widget starts at 64).
TEMPERATURE_T, TOP_P, MIN_P_BASE = 0.5, 0.9, 0.2


COST_BATCH, COST_METHOD = 128, "top-p-sort"


def _entropy_uniform() -> tuple[float, dict]:
    vocab = presets.model("qwen3.8-27b").vocab
    value = sampling.uniform_entropy_bits(vocab)
    return value, dict(vocab=vocab, value=value, nats=math.log(vocab), log10=math.log10(vocab))


def _temperature_half() -> tuple[float, dict]:
    p = sampling.example()
    power = 1 / TEMPERATURE_T
    value = sampling.heat(p, TEMPERATURE_T)[0] * PERCENT
    return value, dict(t=TEMPERATURE_T, power=power, top=p[0], top_pow=p[0] ** power,
                       sum_pow=math.fsum(q ** power for q in p), value=value, unchanged=p[0] * PERCENT,
                       multiplied=sampling.heat(p, 1 / TEMPERATURE_T)[0] * PERCENT, inverse=1 / TEMPERATURE_T)


def _top_p_example() -> tuple[float, dict]:
    p = sampling.example()
    n = sampling.nucleus_size(p, TOP_P)
    return n, dict(p=TOP_P, value=n, before_n=n - 1, before=math.fsum(p[:n - 1]), total=math.fsum(p[:n]),
                   terms=" + ".join(f"{q:.2f}" for q in p[:n]))


def _min_p_example() -> tuple[float, dict]:
    p = sampling.example()
    n = sampling.min_p_size(p, MIN_P_BASE)
    threshold = MIN_P_BASE * max(p)
    return n, dict(base=MIN_P_BASE, top=max(p), threshold=threshold, value=n,
                   kept_terms=", ".join(f"{q:.2f}" for q in p if q >= threshold),
                   absolute=sum(1 for q in p if q >= MIN_P_BASE))


def _sort_cost() -> tuple[float, dict]:
    st = sampling.step("qwen3.8-27b", "h100-sxm", COST_BATCH, COST_METHOD)
    value = st.time_s * 1e3
    kernels = {k: sampling.KERNELS[k].bytes for k in sampling.METHODS[COST_METHOD]}
    return value, dict(per_logit=sampling.bytes_per_logit(COST_METHOD), batch=st.batch, vocab=st.vocab,
                       gb=st.bytes / 1e9, bandwidth=st.hw.bandwidth_bytes_per_s / 1e12, value=value,
                       logit=sampling.LOGIT_BYTES, passes=sampling.RADIX_PASSES,
                       one_read=st.logits_bytes / st.hw.bandwidth_bytes_per_s * 1e3, **kernels)


QUESTIONS = ask(
    TEXT,
    # 3%: the natural logarithm (12.42) and base 10 (5.39) are far outside.
    Question("entropy-uniform-anchor", "bit", 0.03, _entropy_uniform, (
        Mistake("nats", lambda n: n["nats"]),
        Mistake("log10", lambda n: n["log10"]),
    )),
    # 5%: the unchanged 35% and the flattened 23.2% are far outside 54.7% ± 2.7.
    Question("temperature-half-example", "%", 0.05, _temperature_half, (
        Mistake("on_probabilities", lambda n: n["unchanged"]),
        Mistake("no_renormalise", lambda n: n["top_pow"] * PERCENT),
        Mistake("multiplied", lambda n: n["multiplied"]),
    )),
    # 10%: a count of 5 tokens; 4 (the sum still below p) is the named mistake.
    Question("top-p-09-example", "", 0.10, _top_p_example, (
        Mistake("below_p", lambda n: n["before_n"]),
    )),
    Question("min-p-02-example", "", 0.10, _min_p_example, (
        Mistake("absolute", lambda n: n["absolute"]),
    )),
    Question("top-p-sort-b128-h100", "ms", 0.10, _sort_cost, (
        Mistake("one_read", lambda n: n["one_read"]),
        Mistake("one_row", lambda n: n["value"] / n["batch"]),
    )),
)
