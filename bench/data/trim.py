"""Trim the public measurement data the course ships (sim/physics/data/) from the upstream repositories, reproducibly.

    python bench/data/trim.py VIDUR_GIT_DIR LLMSERVINGSIM_GIT_DIR

Each argument is a git directory (a clone, or a bare mirror) at the commit named below; the files are read with
`git show COMMIT:PATH`, so no work tree is needed. Run once per upstream update; the output is committed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

VIDUR_COMMIT = "7d47513363ec447a741ac5e47241580b47724fbf"
SERVINGSIM_COMMIT = "5daddb21a545658d5150b535712d0494584b5278"
OUT = Path(__file__).resolve().parents[2] / "sim" / "physics" / "data"

VIDUR_OPS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj")
# Shipped runs: key -> (GPU folder, bench/examples model folder, profiler model path, tensor parallel degree, file stem)
RUNS = {
    "rtx-4090": ("RTX4090", "Llama-3.1-8B", "meta-llama/Llama-3.1-8B", 1, "vllm-rtx-4090-llama-3.1-8b"),
    "rtx-pro-6000-tp2": ("RTXPRO6000", "Qwen3-32B", "Qwen/Qwen3-32B", 2, "vllm-rtx-pro-6000-qwen3-32b-tp2"),
    "rtx-pro-6000-dp2-ep2": ("RTXPRO6000", "Qwen3-30B-A3B-Instruct-2507", "Qwen/Qwen3-30B-A3B-Instruct-2507", 1,
                             "vllm-rtx-pro-6000-qwen3-30b-a3b-dp2-ep2"),
}
REQUEST_FIELDS = ("input_toks", "output_toks", "queued_ts", "scheduled_ts", "first_token_ts", "last_token_ts")
META_FIELDS = ("schema_version", "model", "vllm_version", "engine_kwargs", "kv_cache", "hardware", "num_requests",
               "dataset_path", "started_at", "finished_at")


def show(git_dir: str, commit: str, path: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def sig(x: float, digits: int = 6) -> str:
    return f"{float(f'{x:.{digits}g}'):g}" if x else "0"


def on_grid(x: int) -> bool:
    """0 or a power of two: a value of the profiler's attention grid (meta.yaml attention_grid, factor 2)."""
    return x == 0 or x & (x - 1) == 0


def vidur(git_dir: str) -> None:
    lines = [
        "# Median time of the four weight matmuls of one Llama-2-7B decoder layer (hidden 4,096, MLP 11,008), FP16,",
        "# one GPU (tensor parallel 1), by the number of tokens multiplied; milliseconds (CUDA events).",
        "# Each median is of 20 timed runs after 2 warm-up runs (vidur/profiling/mlp/mlp_wrapper.py ACTIVE_STEPS,",
        "# WARMUP_STEPS).",
        "# Source: microsoft/vidur (MIT licence, Copyright (c) Microsoft Corporation), commit " + VIDUR_COMMIT + ",",
        "# data/profiling/compute/{a100,h100}/meta-llama/Llama-2-7b-hf/mlp.csv, columns time_stats.<op>.median,",
        "# rows num_tensor_parallel_workers = 1. Vidur's docs/profiling.md uses its a100 data for both an A100 80GB",
        "# PCIe node and an A100 DGX (SXM) and does not say which was measured; its h100 folder does not say SXM or",
        "# PCIe either. Ops: attn_pre_proj = QKV, attn_post_proj = O, mlp_up_proj = gate and up, mlp_down_proj.",
        "# Vidur's token grid measures 2,048 and 4,096 twice (two of its ranges meet there): the first row is kept.",
        "gpu,tokens," + ",".join(f"{op}_ms" for op in VIDUR_OPS),
    ]
    for gpu in ("a100", "h100"):
        text = show(git_dir, VIDUR_COMMIT, f"data/profiling/compute/{gpu}/meta-llama/Llama-2-7b-hf/mlp.csv")
        rows = text.splitlines()
        head = rows[0].split(",")
        col = {name: k for k, name in enumerate(head)}
        seen = set()
        for row in rows[1:]:
            cells = row.split(",")
            if cells[col["num_tensor_parallel_workers"]] != "1":
                continue
            tokens = int(cells[col["num_tokens"]])
            if tokens in seen:
                continue
            seen.add(tokens)
            medians = (sig(float(cells[col[f"time_stats.{op}.median"]])) for op in VIDUR_OPS)
            lines.append(f"{gpu},{tokens}," + ",".join(medians))
    (OUT / "vidur-llama-2-7b-matmuls.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def servingsim(git_dir: str) -> None:
    for folder, bench_model, profiled_model, tp, stem in RUNS.values():
        base = f"bench/examples/{folder}/{bench_model}/vllm"
        rows = [json.loads(line) for line in show(git_dir, SERVINGSIM_COMMIT, f"{base}/requests.jsonl").splitlines()
                if line.strip()]
        with open(OUT / f"{stem}-requests.jsonl", "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps({k: (round(r[k], 6) if k.endswith("_ts") else r[k]) for k in REQUEST_FIELDS})
                        + "\n")
        meta = json.loads(show(git_dir, SERVINGSIM_COMMIT, f"{base}/meta.json"))
        kept = {"source": f"casys-kaist/LLMServingSim (MIT licence, Copyright (c) 2024, CASYS Lab at KAIST), commit "
                          f"{SERVINGSIM_COMMIT}, {base}/meta.json and requests.jsonl (request_id and arrival_time "
                          f"left out, times rounded to the microsecond)"}
        kept.update({k: meta[k] for k in META_FIELDS if k in meta})
        (OUT / f"{stem}-meta.json").write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")
        profile = f"profiler/perf/{folder}/{profiled_model}/bf16"
        shard = ("" if tp == 1 else
                 f"\n# Tensor parallel {tp}: one GPU's shard timed alone (meta.yaml hf_overrides: heads, K/V heads, "
                 f"MLP width and\n# vocabulary divided by {tp}), no all-reduce in it.")
        note = (f"# Source: casys-kaist/LLMServingSim (MIT licence, Copyright (c) 2024, CASYS Lab at KAIST), commit "
                f"{SERVINGSIM_COMMIT},\n# {profile}/tp{tp}/{{name}}.csv and meta.yaml: vLLM 0.19.0 layer-wise "
                f"profiler, BF16, tensor parallel {tp},\n# one decoder layer (num_hidden_layers 1), eager mode (no "
                f"CUDA graphs), mean of 3 measured iterations; microseconds.{shard}\n")
        listed = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "--name-only", SERVINGSIM_COMMIT,
                                 f"{profile}/tp{tp}/"], check=True, capture_output=True, text=True).stdout.split()
        moe = f"{profile}/tp{tp}/moe.csv" in listed
        for name in ("dense", "per_sequence", "attention") + (("moe",) if moe else ()):
            text = show(git_dir, SERVINGSIM_COMMIT, f"{profile}/tp{tp}/{name}.csv")
            body = text.splitlines()
            rows = [r.split(",") for r in body[1:]]
            head = note.replace("{name}", name)
            if name == "moe":
                head += ("# The MoE block of one layer (Qwen3MoeSparseMoeBlock: router and fused experts, all 128 "
                         "experts on the GPU),\n# by the tokens entering it and the distinct experts they activate "
                         "(profiler/core/hooks/moe_hook.py\n# forces the routing so that exactly that many are "
                         "touched).\n")
            if name == "attention":
                kept = [c for c in rows if all(on_grid(int(x)) for x in c[:-1])]
                if len(kept) < len(rows):
                    head += (f"# Only the rows on meta.yaml's attention_grid (0 and powers of two on every axis), the "
                             f"rectangular grid\n# the replay interpolates on: {len(rows) - len(kept):,} rows at "
                             f"other sizes are left out.\n")
                rows = kept
            out = [body[0]] + [",".join(c[:-1] + [sig(float(c[-1]), 5)]) for c in rows]
            (OUT / "profiles" / f"{stem}-{name.replace('_', '-')}.csv").write_text(
                head + "\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    (OUT / "profiles").mkdir(parents=True, exist_ok=True)
    vidur(sys.argv[1])
    servingsim(sys.argv[2])
