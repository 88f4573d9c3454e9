"""Trim Vidur's measured all-reduce times to the slice the tensor-parallel lesson ships (sim/physics/data/),
reproducibly.

    python bench/data/trim_all_reduce.py VIDUR_GIT_DIR

The argument is a git directory of microsoft/vidur (a clone, or a bare mirror) holding the commit named below; the
files are read with `git show COMMIT:PATH`, so no work tree is needed. Run once per upstream update; the output is
committed.

What is kept: the rows where every worker sits in one node (devices_per_node = num_workers), for 2, 4 and 8 GPUs, at
the measured size nearest (by ratio) to each power of two from 2 KiB to 64 MiB. Vidur's grid holds 2 KiB, then steps
of 8 KiB up to 1 MiB, so below 1 MiB the kept size is the nearest step (130 KiB stands for 128 KiB), and from 1 MiB on
every power of two was measured exactly. A (setup, GPUs, size) measured more than once (16 MiB is, where two of
Vidur's ranges meet) keeps the median of its rows.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
import subprocess
import sys
from pathlib import Path

VIDUR_COMMIT = "7d47513363ec447a741ac5e47241580b47724fbf"
OUT = Path(__file__).resolve().parents[2] / "sim" / "physics" / "data" / "vidur-all-reduce.csv"

# Vidur's network folders, in the order the file lists them, and the ring sizes kept from each (all it measured
# inside one node: the pairwise machines have 4 GPUs).
SETUPS = {"h100_dgx": (2, 4, 8), "a100_dgx": (2, 4, 8), "h100_pairwise_nvlink": (2, 4),
          "a100_pairwise_nvlink": (2, 4)}
POWERS = [2**k for k in range(11, 27)]  # 2 KiB .. 64 MiB
TIME = "time_stats.all_reduce.median"


def show(git_dir: str, commit: str, path: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def sig(x: float, digits: int = 6) -> str:
    return f"{float(f'{x:.{digits}g}'):g}" if x else "0"


def nearest(sizes: list[int], target: int) -> int:
    return min(sizes, key=lambda s: (abs(math.log(s / target)), s))


def trim(git_dir: str) -> None:
    lines = [
        "# Median time of one NCCL all-reduce of `bytes` bytes (FP16 elements) among `gpus` GPUs of one node;",
        "# milliseconds, as Vidur records it.",
        "# Source: microsoft/vidur (MIT licence, Copyright (c) Microsoft Corporation), commit " + VIDUR_COMMIT + ",",
        "# data/profiling/network/{" + ",".join(SETUPS) + "}/all_reduce.csv, column",
        "# time_stats.all_reduce.median, rows with devices_per_node = num_workers (every GPU in one node).",
        "# How Vidur measured (vidur/profiling/collectives/): torch.distributed.all_reduce with the NCCL backend,",
        "# no CUDA graphs (collectives_wrapper.py DISABLE_GRAPH = True); each sample is the median NCCL kernel time,",
        "# from the PyTorch (Kineto) profiler, of 11 back-to-back calls after a barrier; 3 samples per size",
        "# (ACTIVE_STEPS; its WARMUP_STEPS is not used), and the column is their median. `size` is bytes: the wrapper",
        "# records 2 x the FP16 element count. Only rank 0's result is written (main.py keeps gpu_id 0): one row per",
        "# size, no spread across ranks.",
        "# Machines (Vidur's docs/profiling.md): h100_dgx = an H100 DGX with 8 H100s; a100_dgx = an A100 DGX with 8",
        "# 80GB A100s (all 8 connected by NVLink); a100_pairwise_nvlink = Azure Standard_NC96ads_A100_v4, 4",
        "# 80GB A100 PCIe GPUs with NVLink between pairs; h100_pairwise_nvlink = an Azure VM with 4 80GB H100 NVL GPUs",
        "# with NVLink between pairs (docs/profiling.md calls these two a100_pair_nvlink and h100_pair_nvlink).",
        "# Kept: 2, 4 and 8 GPUs in one node, at the measured size nearest each power of two from 2 KiB to 64 MiB",
        "# (bench/data/trim_all_reduce.py); a size measured twice (16 MiB) keeps the median of its rows.",
        "setup,gpus,bytes,median_ms",
    ]
    for setup, counts in SETUPS.items():
        text = show(git_dir, VIDUR_COMMIT, f"data/profiling/network/{setup}/all_reduce.csv")
        times: dict[tuple[int, int], list[float]] = {}
        for row in csv.DictReader(io.StringIO(text)):
            n, per_node = int(row["num_workers"]), int(row["devices_per_node"])
            if row["collective"] != "all_reduce" or per_node != n or n not in counts:
                continue
            times.setdefault((n, int(row["size"])), []).append(float(row[TIME]))
        for n in counts:
            sizes = sorted(s for m, s in times if m == n)
            kept = sorted({nearest(sizes, p) for p in POWERS})
            for size in kept:
                lines.append(f"{setup},{n},{size},{sig(statistics.median(times[(n, size)]))}")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    trim(sys.argv[1])
