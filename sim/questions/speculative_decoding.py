"""The questions of the lesson speculative-decoding, which its predict boxes name by key
(lessons/<lang>/speculative-decoding.md): how each answer and its common mistakes are computed, the tolerance it is
graded with, and the words of its derivation and of each mistake in every language (TEXT)."""

from __future__ import annotations

from sim.physics import presets, roofline
from sim.questions.question import PERCENT, Mistake, Question, ask
from sim.techniques import speculative

TEXT = {
    "zh": {
        "verify-5-tokens-h100":
            "batch {batch}，γ = {gamma}：每个请求 {tokens} 个 token 一步过权重，远低于拐点 {critical} 个 token，矩阵"
            "乘仍是读一遍权重的时间 {matmuls:.2f} ms；+ 对 {context:,} 个已缓存 token 的注意力 {attention:.2f} ms + "
            "递归状态读一次、写 {tokens} 份 {state:.2f} ms = {value:.2f} ms（一步 decode 是 {decode:.2f} ms）",
        "verify-5-tokens-h100.mistake.five_steps":
            "{mistake:.2f} ms 是 {tokens} 步 decode（{tokens} × {decode:.2f} ms），好像目标要一个一个地检查。它在一步"
            "里同时检查 {tokens} 个 token：它们共用一遍读权重（{matmuls:.2f} ms），在拐点 "
            "{critical} 以下，多出来的 FLOPs 被读权重的时间盖住，只添了一点注意力和状态：{value:.2f} ms，和一步 "
            "decode 差不多。",
        "tokens-per-call-08-4":
            "目标自己的 1 个 token（拒绝处的修正或全部保留后的奖励）+ 第 k 个猜测只有前面全被保留才算，概率 α^k：1 + "
            "{terms} = (1 − {alpha:g}^{power}) ÷ (1 − {alpha:g}) = {value:.2f}",
        "tokens-per-call-08-4.mistake.gamma_times_alpha":
            "{mistake:.2f} 是 γ × α = {gamma} × {alpha:g}，把每个猜测当成各自独立地以 α 被保留。可第一次拒绝之后的猜"
            "测全被扔掉，第 k 个只有前面都被保留才算：平均保留 {terms} = {kept:.2f} 个；每次调用目标还自己出 1 个 "
            "token（修正或奖励）：1 + {kept:.2f} = {value:.2f}。",
        "tokens-per-call-08-4.mistake.all_kept":
            "{mistake:.0f} 是 γ + 1，每个猜测都被保留的最好情况。每个猜测只以 α = {alpha:g} 被保留，第一次拒绝就结束"
            "这次调用：(1 − {alpha:g}^{power}) ÷ (1 − {alpha:g}) = {value:.2f}。",
        "drafted-share-08-4":
            "每次调用保留的草稿 token：E − 1 = {expected:.2f} − 1 = {kept:.2f}（目标自己的那个不是草稿猜的）；÷ 猜的 "
            "{gamma} 个 = {value:.1f}%",
        "drafted-share-08-4.mistake.alpha_is_share":
            "{mistake:.0f}% 是 α，一个猜测在被检查时保留下来的概率。可第一次拒绝之后的猜测根本不检查、直接扔掉：第 k "
            "个留下来的概率是 α^k，平均 {gamma} 个里留下 {kept:.2f} 个，{value:.1f}%。",
        "exact-output-mat":
            "草稿以 q = {q_mat:.0f}% 猜「垫子」，每次以 p ÷ q = {p_mat:.0f} ÷ {q_mat:.0f} 被保留：{q_mat:.0f}% × "
            "{p_mat:.0f} ÷ {q_mat:.0f} = {p_mat:.0f}%；被拒的猜测从 max(0, p − q) 里重抽，那里「垫子」占 "
            "{residual_mat:.0f}%：输出里「垫子」占 {value:.1f}%，正是 p",
        "exact-output-mat.mistake.follows_draft":
            "{mistake:.0f}% 是草稿猜「垫子」的频率 q，好像输出跟着草稿走。这条规则改变的是哪些猜测被保留，不改变输出"
            "的分布：「垫子」只以 {p_mat:.0f} ÷ {q_mat:.0f} 被保留，被拒的从 max(0, p − q) 里重抽，那里「垫子」占 "
            "{residual_mat:.0f}%：输出里「垫子」占 {value:.1f}%，正是 p。",
        "speedup-batch96-h200":
            "batch {batch} × (γ + 1) = {verify_tokens} 个 token 过权重，超过 {gpu} 的拐点 {critical}：验证一步 "
            "{verify:.2f} ms，而 decode 一步 {decode:.2f} ms；{expected:.2f} × {decode:.2f} ÷ ({gamma} × {draft:.2f} "
            "+ {verify:.2f}) = {value:.2f}×",
        "speedup-batch96-h200.mistake.always_helps":
            "{mistake:.2f}× 是 batch {batch1} 时的加速比：那时每步只有 {tokens} 个 token，远在拐点以下，验证一步（"
            "{verify1:.2f} ms）和 decode 一步（{decode1:.2f} ms）差不多。batch {batch} 时 {verify_tokens} 个 token 超"
            "过拐点 {critical}，矩阵乘变成算力受限，验证一步要 {verify:.2f} ms，约 {steps:.1f} 步 decode，每次调用多"
            "出的 token 补不回来：{value:.2f}×，比不投机还慢。",
    },
    "en": {
        "verify-5-tokens-h100":
            "batch {batch}, γ = {gamma}: {tokens} tokens per request through the weights in one step, far below the "
            "ridge of {critical} tokens, so the matmuls still take one read of the weights, {matmuls:.2f} ms; + "
            "attention over {context:,} cached tokens {attention:.2f} ms + the recurrent state read once and written "
            "{tokens} times {state:.2f} ms = {value:.2f} ms (one decode step: {decode:.2f} ms)",
        "verify-5-tokens-h100.mistake.five_steps":
            "{mistake:.2f} ms is {tokens} decode steps ({tokens} × {decode:.2f} ms), as if the target checked the "
            "tokens one at a time. It checks all {tokens} in one step: they share one read of the weights "
            "({matmuls:.2f} ms), below the ridge of {critical} their extra FLOPs hide under that read, and only a "
            "little attention and state is added: {value:.2f} ms, about one decode step.",
        "tokens-per-call-08-4":
            "the target's own 1 token (the correction at a rejection, or the bonus after all are kept) + guess k, "
            "which counts only if every guess before it was kept, with probability α^k: 1 + {terms} = "
            "(1 − {alpha:g}^{power}) ÷ (1 − {alpha:g}) = {value:.2f}",
        "tokens-per-call-08-4.mistake.gamma_times_alpha":
            "{mistake:.2f} is γ × α = {gamma} × {alpha:g}: every guess kept with probability α on its own. But the "
            "first rejection throws the later guesses away, so guess k counts only if all before it were kept: "
            "{terms} = {kept:.2f} kept on average; and every call also yields 1 token from the target itself (the "
            "correction or the bonus): 1 + {kept:.2f} = {value:.2f}.",
        "tokens-per-call-08-4.mistake.all_kept":
            "{mistake:.0f} is γ + 1, the best case with every guess kept. Each guess is kept only with probability "
            "α = {alpha:g}, and the first rejection ends the call: (1 − {alpha:g}^{power}) ÷ (1 − {alpha:g}) = "
            "{value:.2f}.",
        "drafted-share-08-4":
            "drafted tokens kept per call: E − 1 = {expected:.2f} − 1 = {kept:.2f} (the target's own token is no "
            "draft's guess); ÷ the {gamma} drafted = {value:.1f}%",
        "drafted-share-08-4.mistake.alpha_is_share":
            "{mistake:.0f}% is α, the chance that one guess survives its check. But the guesses after a rejection are "
            "never checked, they are thrown away: guess k survives with probability α^k, so on average {kept:.2f} of "
            "the {gamma} are kept, {value:.1f}%.",
        "exact-output-mat":
            "the draft guesses \"mat\" with q = {q_mat:.0f}%, each kept with probability p ÷ q = {p_mat:.0f} ÷ "
            "{q_mat:.0f}: {q_mat:.0f}% × {p_mat:.0f} ÷ {q_mat:.0f} = {p_mat:.0f}%; a rejected guess is redrawn from "
            "max(0, p − q), which gives \"mat\" {residual_mat:.0f}%: \"mat\" is {value:.1f}% of the output, exactly p",
        "exact-output-mat.mistake.follows_draft":
            "{mistake:.0f}% is how often the draft guesses \"mat\" (q), as if the output followed the draft. The rule "
            "changes which guesses are kept, not how the output is distributed: \"mat\" is kept only with "
            "probability {p_mat:.0f} ÷ {q_mat:.0f}, and a rejected guess is redrawn from max(0, p − q), which gives "
            "\"mat\" {residual_mat:.0f}%: \"mat\" is {value:.1f}% of the output, exactly p.",
        "speedup-batch96-h200":
            "batch {batch} × (γ + 1) = {verify_tokens} tokens through the weights, past the {gpu}'s ridge of "
            "{critical}: a verify step takes {verify:.2f} ms against {decode:.2f} ms for a decode step; "
            "{expected:.2f} × {decode:.2f} ÷ ({gamma} × {draft:.2f} + {verify:.2f}) = {value:.2f}×",
        "speedup-batch96-h200.mistake.always_helps":
            "{mistake:.2f}× is the speed-up at batch {batch1}, where a step carries only {tokens} tokens, far below "
            "the ridge, and a verify step ({verify1:.2f} ms) costs about a decode step ({decode1:.2f} ms). At batch "
            "{batch}, {verify_tokens} tokens pass the ridge of {critical}: the matmuls turn compute-bound, a verify "
            "step takes {verify:.2f} ms, about {steps:.1f} decode steps, and the extra tokens per call no longer pay "
            "for it: {value:.2f}×, slower than not speculating.",
    },
}


# The anchor as the target, 1,024 cached tokens per request, its own MTP layers as the draft
# (the spec-decode widget's defaults), α 0.8 and γ 4.
SPEC_CONTEXT, SPEC_ALPHA, SPEC_GAMMA, SPEC_DRAFT = 1024, 0.8, 4, "mtp"


SPEC_TOKEN = 0  # "mat", the first of the spec-sampling widget's five candidates


def _speculation(hw_key: str, batch: int) -> speculative.Speculation:
    return speculative.Speculation(presets.model("qwen3.8-27b"), presets.hardware(hw_key), alpha=SPEC_ALPHA,
                                   gamma=SPEC_GAMMA, draft=SPEC_DRAFT, batch=batch, context=SPEC_CONTEXT)


def _verify_step() -> tuple[float, dict]:
    r = _speculation("h100-sxm", 1)
    tokens = r.gamma + 1
    value = r.verify_s * 1e3
    return value, dict(batch=r.batch, gamma=r.gamma, tokens=tokens, critical=roofline.critical_batch(r.m, r.hw),
                       context=r.context, matmuls=r.cost.matmuls_s(r.batch * tokens, r.batch * tokens) * 1e3,
                       attention=r.batch * r.cost.chunk_attention_s(tokens, r.context) * 1e3,
                       state=r.cost.state_s * (1 + tokens) * r.batch * 1e3, value=value, decode=r.decode_s * 1e3)


def _kept_terms(alpha: float, gamma: int) -> str:
    """α + α² + … + α^γ, each term written out: the guesses a call keeps on average."""
    return " + ".join(f"{alpha ** k:g}" for k in range(1, gamma + 1))


def _tokens_per_call() -> tuple[float, dict]:
    value = speculative.expected_tokens(SPEC_ALPHA, SPEC_GAMMA)
    return value, dict(alpha=SPEC_ALPHA, gamma=SPEC_GAMMA, power=SPEC_GAMMA + 1, value=value, kept=value - 1,
                       terms=_kept_terms(SPEC_ALPHA, SPEC_GAMMA))


def _drafted_share() -> tuple[float, dict]:
    expected = speculative.expected_tokens(SPEC_ALPHA, SPEC_GAMMA)
    value = (expected - 1) / SPEC_GAMMA * PERCENT
    return value, dict(expected=expected, kept=expected - 1, gamma=SPEC_GAMMA, value=value,
                       alpha=SPEC_ALPHA * PERCENT)


def _exact_output() -> tuple[float, dict]:
    p = speculative.normalise(speculative.EXAMPLE_TARGET)
    q = speculative.normalise(speculative.EXAMPLE_DRAFTS["overconfident"])
    r = speculative.residual(p, q)
    value = p[SPEC_TOKEN] * PERCENT
    return value, dict(p_mat=p[SPEC_TOKEN] * PERCENT, q_mat=q[SPEC_TOKEN] * PERCENT,
                       residual_mat=r[SPEC_TOKEN] * PERCENT, value=value)


# Where speculation really loses: a weaker draft (α 0.6) on an H200, at a batch past its ridge (207 < 96 x 5 = 480
# tokens per verify step) that fits with γ + 1 recurrent states per request (115 do). At α 0.8 no preset loses within
# its memory (an H100 fits 36 such requests, and breaks even only at 258).
SPEC_BATCH, SPEC_BATCH_ALPHA, SPEC_BATCH_GPU = 96, 0.6, "h200-sxm"


def _speedup_batch() -> tuple[float, dict]:
    r, alone = (_speculation(SPEC_BATCH_GPU, b).at(alpha=SPEC_BATCH_ALPHA) for b in (SPEC_BATCH, 1))
    return r.speedup, dict(batch=r.batch, verify_tokens=r.batch * (r.gamma + 1), gpu=r.hw.short_name,
                           critical=roofline.critical_batch(r.m, r.hw), verify=r.verify_s * 1e3,
                           decode=r.decode_s * 1e3, expected=r.tokens_per_call, gamma=r.gamma,
                           draft=r.draft_step.step_s * 1e3, value=r.speedup, batch1=alone.batch,
                           tokens=alone.gamma + 1, verify1=alone.verify_s * 1e3, decode1=alone.decode_s * 1e3,
                           steps=r.verify_s / r.decode_s, alone=alone.speedup)


QUESTIONS = ask(
    TEXT,
    # 10%: the decode step (15.41 ms, 1.2% below) is right, the point of a verify step.
    Question("verify-5-tokens-h100", "ms", 0.10, _verify_step, (
        Mistake("five_steps", lambda n: n["tokens"] * n["decode"]),
    )),
    # 2%: γα (3.2) lies 4.8% below the answer (3.36), outside its window (3.36 × 0.98 ≈ 3.29).
    Question("tokens-per-call-08-4", "", 0.02, _tokens_per_call, (
        Mistake("gamma_times_alpha", lambda n: n["gamma"] * n["alpha"]),
        Mistake("all_kept", lambda n: n["gamma"] + 1),
    )),
    Question("drafted-share-08-4", "%", 0.05, _drafted_share, (
        Mistake("alpha_is_share", lambda n: n["alpha"]),
    )),
    Question("exact-output-mat", "%", 0.05, _exact_output, (
        Mistake("follows_draft", lambda n: n["q_mat"]),
    )),
    # 5%: "no change" (1×) lies 7.1% above the answer (0.93×) and is just too high.
    Question("speedup-batch96-h200", "×", 0.05, _speedup_batch, (
        Mistake("always_helps", lambda n: n["alone"]),
    )),
)
