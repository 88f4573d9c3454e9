"""Inline computed figures: {sim}`EXPR` in lesson prose is replaced at build time by the text EXPR
evaluates to, so that every model- or GPU-dependent number in a lesson comes from the simulator.

EXPR is a Python expression over the names in NAMESPACE: the simulator's modules and preset getters,
shorthands for the presets lessons use most, and formatters that turn numbers into display text.
Example: 约 {sim}`ms(decode(anchor, h100, batch=1, context=4).time_s)` -> 约 15.39 ms
"""

from __future__ import annotations

import json
import math
import sys

from builder import seeds
from builder.problems import did_you_mean
from sim.page.display import (
    fmt_bytes,
    fmt_duration,
    fmt_fixed,
    fmt_flops,
    fmt_gb,
    fmt_grouped,
    fmt_mb,
    fmt_ms,
    fmt_pct,
    fmt_sig,
)
from sim.physics import cache, feasibility, memory, model_size, moe, parallel, presets, roofline, routing
from sim.physics import measured as measured_data
from sim.serving import batching, interference, kv_layout, latency, replay, scheduler, serving, slo, traces
from sim.techniques import attention, quantization, sampling, speculative


def namespace() -> dict:
    """The names an expression may use (built fresh per build, so changed presets are seen)."""
    return {
        # simulator modules and functions
        "presets": presets, "model_size": model_size, "cache": cache, "memory": memory, "roofline": roofline,
        "model": presets.model, "hw": presets.hardware,
        "prefill": roofline.prefill, "decode": roofline.decode, "ridge": roofline.ridge_point,
        "max_batch": memory.max_batch, "measured": presets.measurement, "achieved": presets.achieved,
        # the presets lessons use most
        "anchor": presets.model("qwen3.8-27b"), "qwen32b": presets.model("qwen3-32b"),
        "llama7b": presets.model("llama-2-7b"), "llama13b": presets.model("llama-2-13b"),
        "a100": presets.hardware("a100-sxm-80gb"), "h100": presets.hardware("h100-sxm"),
        "h200": presets.hardware("h200-sxm"), "b200": presets.hardware("b200"),
        # formatters: number -> display text
        "ms": fmt_ms, "sig": fmt_sig, "grouped": fmt_grouped, "fixed": fmt_fixed, "pct": fmt_pct,
        "bytes_": fmt_bytes, "flops_": fmt_flops, "gb": fmt_gb, "mb": fmt_mb, "dur": fmt_duration,
        # inference-vs-training: a request end to end, batching, the serving metrics
        "serving": serving, "batching": batching, "latency": latency,
        "scheduler": scheduler, "traces": traces,  # kv-cache-serving: batching-timeline
        "kv_layout": kv_layout,  # kv-cache-serving: kv-blocks (where the KV lives, sharing, preemption)
        "interference": interference,  # pd-disaggregation: prefill-interference
        "slo": slo,  # pd-disaggregation: slo-serving (latency targets, goodput, P/D on separate GPUs)
        "speculative": speculative,  # speculative-decoding: spec-sampling, spec-decode
        "quantization": quantization,  # quantization: quantize-tensor, quant-roofline
        "attention": attention,  # attention-variants: kv-heads, kv-capacity-curves
        "sampling": sampling,  # sampling: sampling, sampling-cost
        "parallel": parallel,  # tensor-parallel: tp-step, all-reduce (and the TP 2 replay through `replay`)
        "moe": moe, "routing": routing,  # moe: moe-experts, moe-step, ep-layout (and the DP 2 + EP 2 replay)
        # measured data beside the bound: prefill-decode (measured-matmul), pd-disaggregation (engine-replay)
        "measured_data": measured_data, "replay": replay,
        "rtx4090": presets.hardware("rtx-4090"), "llama31": presets.model("llama-3.1-8b"),
        "decode_run": serving.decode_run, "batch_point": batching.batch_point, "request": latency.request,
        # a figure for configurations that do not fit in memory, which its sentence says (sim/physics/feasibility.py)
        "as_if_it_fit": feasibility.as_if_it_fit,
        # plain helpers
        "round": round, "min": min, "max": max, "abs": abs, "int": int, "math": math,
    }


class ExpressionError(Exception):
    pass


# What a sentence says of a figure wrapped in as_if_it_fit(...), in each language (any one of them).
AS_IF_IT_FIT = {"zh": ("假设放得下",), "en": ("as if it fit", "as if they fit")}


def evaluated(expr: str, names: dict) -> str | dict:
    """evaluate(expr, names), and whether it quoted a configuration that does not fit in memory: the text alone if it
    did not, else {"text": …, "overflows": [what each needed, in words]}, or {"text": …, "as_if_it_fit": true} if
    the expression accepted them (sim/physics/feasibility.py). JSON, as the frozen figures keep it."""
    calls = seeds.Calls()
    with feasibility.recorded() as ledger:
        result = value(expr, seeds.reseeded(names, None, calls))
        text = _text(expr, result)
    out = {"text": text}
    if ledger.overflows:
        out["overflows"] = [f"{o.what} needs {fmt_gb(o.need_bytes)} of memory, and the GPU has {fmt_gb(o.have_bytes)}"
                            for o in ledger.overflows]
    elif ledger.accepted:
        out["as_if_it_fit"] = True
    if calls.seeded:  # a figure from a random trace (builder/seeds.py)
        out["seeded"] = {"value": seeds.value_of(result, calls), **seeds.shape_of(calls)}
        if (problem := seeds.problem(calls)) is not None:
            out["seeded"]["problem"] = problem
    return out if len(out) > 1 else text


def claimed(expr: str, names: dict) -> dict:
    """A {claim}: whether expr holds, and whether it compares figures from a random trace (JSON, as frozen)."""
    calls = seeds.Calls()
    result = value(expr, seeds.reseeded(names, None, calls))
    if not isinstance(result, bool):
        raise ExpressionError(f"{{claim}}`{expr}` gave {result!r}: a claim is a comparison, True or False")
    return {"holds": result, "seeded": calls.seeded}


def value(expr: str, names: dict):
    """What expr evaluates to; ExpressionError says what went wrong."""
    try:
        return eval(compile(expr, "<lesson expression>", "eval"), {"__builtins__": {}}, names)  # noqa: S307
    except SyntaxError as e:
        raise ExpressionError(f"expression {expr!r} is not valid Python: {e.msg}") from None
    except Exception as e:  # anything the simulator raises, reported with the expression
        raise ExpressionError(f"expression {expr!r} failed: {type(e).__name__}: {e}{_nearest(e, names)}") from None


def _nearest(error: Exception, names: dict) -> str:
    """For a name or attribute that does not exist, the nearest one that does."""
    if isinstance(error, NameError) and error.name:
        return did_you_mean(error.name, names)
    if isinstance(error, AttributeError) and error.name and error.obj is not None:
        return did_you_mean(error.name, [n for n in dir(error.obj) if not n.startswith("_")])
    return ""


def evaluate(expr: str, names: dict) -> str:
    """The display text of expr; ExpressionError says what went wrong. Results must be text (use a formatter)."""
    value_ = value(expr, names)
    return _text(expr, value_)


def _text(expr: str, value) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ExpressionError(f"expression {expr!r} gave {value!r}; format numbers with a formatter "
                              "(ms, dur, sig, grouped, fixed, pct, gb, mb, bytes_, flops_)")
    return value if isinstance(value, str) else f"{value:,}"


def on_seed(expressions: list[str], seed: int) -> dict:
    """Every expression's value on one trace seed (builder/seeds.py): a seeded figure's number, a claim's truth, or
    {"error": text}. In a worker of seeds.others(), whose simulator caches the expressions share."""
    names, out = namespace(), {}
    for expr in expressions:
        calls = seeds.Calls()
        try:
            out[expr] = seeds.value_of(value(expr, seeds.reseeded(names, seed, calls)), calls)
        except ExpressionError as e:
            out[expr] = {"error": f"on seed {seed}: {e}"}
        if isinstance(out[expr], float) and not math.isfinite(out[expr]):
            out[expr] = {"error": f"on seed {seed}: {out[expr]}"}
    return out


if __name__ == "__main__":  # seeds.others()'s worker: {"expressions": [...], "seeds": [...]} in, {seed: {expr: value}}
    job = json.loads(sys.stdin.read())
    json.dump({k: on_seed(job["expressions"], k) for k in job["seeds"]}, sys.stdout)
