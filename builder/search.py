"""Full-text search: Pagefind's static index of every lesson, written into the site folder at build time.

Pagefind's extended binary (it segments Chinese into words) reads the written pages and puts its index and
its browser script under <site>/pagefind/, one index per <html lang>. Only a lesson's article is indexed
(`data-pagefind-body` in lesson.html); the page script site/static/js/search.js queries the index.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

from builder.problems import BuildFailed, Problem

INDEX_DIR = "pagefind"
STDERR_TAIL_CHARS = 2000
TIMEOUT_S = 120


def pagefind_binary(node_modules: Path) -> Path:
    """Where npm puts Pagefind's extended binary for this platform (as the pagefind package resolves it)."""
    system = {"win32": "windows"}.get(sys.platform, sys.platform.rstrip("0123456789"))  # freebsd14 -> freebsd
    cpu = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64"}.get(platform.machine().lower(),
                                                                   platform.machine().lower())
    name = "pagefind_extended.exe" if system == "windows" else "pagefind_extended"
    return node_modules / "@pagefind" / f"{system}-{cpu}" / "bin" / name


def _lower_priority() -> None:
    os.nice(10)


def index_site(site_dir: Path, node_modules: Path, subdir: str = INDEX_DIR, background: bool = False) -> None:
    """Write the search index of the pages in site_dir into site_dir/<subdir>/ (pagefind/ unless said otherwise);
    BuildFailed says what went wrong. `background`: at a low priority (under `serve`, the index that follows a
    save leaves the CPU to the page reloading meanwhile)."""
    binary = pagefind_binary(node_modules)
    if not binary.is_file():
        raise BuildFailed([Problem(binary, 1, "Pagefind's search indexer is missing: run 'npm ci' "
                                              "(make serve and make test do)")])
    command = [str(binary), "--site", str(site_dir), "--output-subdir", subdir, "--silent"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
                              preexec_fn=_lower_priority if background and hasattr(os, "nice") else None)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BuildFailed([Problem(binary, 1, f"the search indexer could not run: {e}")]) from None
    if done.returncode != 0:
        tail = (done.stderr.strip() or done.stdout.strip())[-STDERR_TAIL_CHARS:]
        raise BuildFailed([Problem(binary, 1, f"the search indexer failed (exit status {done.returncode}): "
                                              f"{tail or 'no output'}")])
