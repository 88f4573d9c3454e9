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
RUNS = {"rtx-4090": "RTX4090"}
REQUEST_FIELDS = ("input_toks", "output_toks", "queued_ts", "scheduled_ts", "first_token_ts", "last_token_ts")
META_FIELDS = ("schema_version", "model", "vllm_version", "engine_kwargs", "kv_cache", "hardware", "num_requests",
               "dataset_path", "started_at", "finished_at")


def show(git_dir: str, commit: str, path: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def sig(x: float, digits: int = 6) -> str:
    return f"{float(f'{x:.{digits}g}'):g}" if x else "0"


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
    for key, folder in RUNS.items():
        base = f"bench/examples/{folder}/Llama-3.1-8B/vllm"
        rows = [json.loads(line) for line in show(git_dir, SERVINGSIM_COMMIT, f"{base}/requests.jsonl").splitlines()
                if line.strip()]
        with open(OUT / f"vllm-{key}-llama-3.1-8b-requests.jsonl", "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps({k: (round(r[k], 6) if k.endswith("_ts") else r[k]) for k in REQUEST_FIELDS})
                        + "\n")
        meta = json.loads(show(git_dir, SERVINGSIM_COMMIT, f"{base}/meta.json"))
        kept = {"source": f"casys-kaist/LLMServingSim (MIT licence, Copyright (c) 2024, CASYS Lab at KAIST), commit "
                          f"{SERVINGSIM_COMMIT}, {base}/meta.json and requests.jsonl (request_id and arrival_time "
                          f"left out, times rounded to the microsecond)"}
        kept.update({k: meta[k] for k in META_FIELDS if k in meta})
        (OUT / f"vllm-{key}-llama-3.1-8b-meta.json").write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")
        profile = f"profiler/perf/{folder}/meta-llama/Llama-3.1-8B/bf16"
        note = (f"# Source: casys-kaist/LLMServingSim (MIT licence, Copyright (c) 2024, CASYS Lab at KAIST), commit "
                f"{SERVINGSIM_COMMIT},\n# {profile}/tp1/{{name}}.csv and meta.yaml: vLLM 0.19.0 layer-wise profiler,"
                f" BF16, tensor parallel 1,\n# one decoder layer (num_hidden_layers 1), eager mode (no CUDA graphs),"
                f" mean of 3 measured iterations; microseconds.\n")
        for name in ("dense", "per_sequence", "attention"):
            text = show(git_dir, SERVINGSIM_COMMIT, f"{profile}/tp1/{name}.csv")
            body = text.splitlines()
            out = [body[0]] + [",".join(c[:-1] + [sig(float(c[-1]), 5)]) for c in (r.split(",") for r in body[1:])]
            (OUT / "profiles" / f"vllm-{key}-llama-3.1-8b-{name.replace('_', '-')}.csv").write_text(
                note.replace("{name}", name) + "\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    (OUT / "profiles").mkdir(parents=True, exist_ok=True)
    vidur(sys.argv[1])
    servingsim(sys.argv[2])
