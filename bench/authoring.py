#!/usr/bin/env python3
"""What an author waits for, measured on two versions of the project side by side: the working tree and a commit
(the one before, by default). Asserts nothing.

    python bench/authoring.py [--before REV] [--saves 3]

Each version is copied into a scratch folder with a node_modules of its own that links every package of the real
one but holds no cache (node_modules/.cache is where the builds keep theirs), so each starts as a fresh clone does
after `npm ci`. Then, each in a new Python process:
- a cold build: `build.py build`, nothing cached (a fresh clone's first build);
- a warm build: the same again, nothing changed (what the caches give a build in a fresh process);
- save -> page reloaded under `build.py serve`, a lesson open in Chromium: a sentence added to that lesson, and a
  comment added to a simulator module the page uses, each timed from the write until the page has reloaded and
  (for the sentence) shows it, and until `serve` says the new site is in place; the median of --saves saves of
  each.
"""

from __future__ import annotations

import argparse
import io
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from builder.chromium import ARGS, executable  # noqa: E402

PAGE = ("en", "sampling")  # the lesson open in the browser, and the one whose text a save changes
# A module that page's figures and widgets import, where this version keeps it and where the versions before the
# layer packages (issue 50) did.
SIM_MODULES = ("sim/techniques/sampling.py", "sim/sampling.py")
def _simulator_module(tree: Path) -> Path:
    return next(tree / path for path in SIM_MODULES if (tree / path).exists())


READY = "() => [...document.querySelectorAll('[data-widget]')].every(w => w.dataset.state === 'ready')"
LEFT_OUT = {".git", "_site", "node_modules", ".venv", "__pycache__", ".pytest_cache", "bench"}


def copy_tree(version: str | None, into: Path) -> Path:
    """The working tree (None) or a commit, copied into `into`, with a node_modules that holds no cache."""
    if version is None:
        shutil.copytree(ROOT, into, ignore=lambda folder, names: [n for n in names if n in LEFT_OUT])
    else:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", version], check=True, capture_output=True).stdout
        into.mkdir(parents=True)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(into, filter="data")
    modules = into / "node_modules"
    modules.mkdir()
    for entry in (ROOT / "node_modules").iterdir():
        if entry.name != ".cache":
            (modules / entry.name).symlink_to(entry.resolve())
    return into


def timed_build(tree: Path, out: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "build.py", "build", "--out", str(out)], cwd=tree, check=True,
                   capture_output=True)
    return time.perf_counter() - started


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def save_to_reload(tree: Path, out: Path, browser, saves: int) -> dict[str, list[float]]:
    """Seconds from a save to the reloaded page, for `saves` prose edits and `saves` simulator edits."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "build.py", "serve", "--port", str(port), "--out", str(out)],
                              cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(server.stdout), daemon=True).start()
    try:
        deadline = time.monotonic() + 120
        while not any("serving" in line for line in lines):
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("build.py serve did not start:\n" + "".join(lines))
            time.sleep(0.05)
        page = browser.new_page()
        lang, slug = PAGE
        page.goto(f"http://127.0.0.1:{port}/{lang}/{slug}/", wait_until="load")
        lesson, module = tree / "lessons" / lang / f"{slug}.md", _simulator_module(tree)
        times: dict[str, list[float]] = {"prose": [], "sim": [], "prose built": [], "sim built": []}
        for n in range(saves):
            for kind in ("prose", "sim"):
                # As an author reads the page before the next save: its widgets ready (Python booted again after
                # the reload) and the last rebuild's search index written.
                page.wait_for_function(READY, timeout=120_000)
                time.sleep(1.0)
                word = f"savedword{kind}{n}"
                page.evaluate("window.benchBeforeSave = true")  # gone once the page has reloaded
                started = time.perf_counter()
                if kind == "prose":
                    lesson.write_text(lesson.read_text(encoding="utf-8") + f"\nA sentence with {word}.\n",
                                      encoding="utf-8")
                else:
                    module.write_text(module.read_text(encoding="utf-8") + f"# {word}\n", encoding="utf-8")
                try:
                    reloaded, in_place = _reloaded(page, word if kind == "prose" else None, out / "__build_id")
                    times[kind].append(reloaded - started)
                    times[f"{kind} built"].append(in_place - started)
                except RuntimeError as e:
                    raise RuntimeError(f"{e}; build.py serve said:\n{''.join(lines)}") from None
        page.close()
        return times
    finally:
        server.terminate()
        server.wait(timeout=10)


def _reloaded(page, word: str | None, build_id: Path, timeout_s: float = 60) -> tuple[float, float]:
    """When the page has loaded again (the mark set before the save gone, its load event past) and shows `word` if
    given; and when the new site was in place (its build id changed: what the page's reload waits for)."""
    check = ("(w) => !window.benchBeforeSave && document.readyState === 'complete'"
             " && (!w || document.body.textContent.includes(w))")
    old_id, in_place = build_id.read_text(), None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if in_place is None and build_id.read_text() != old_id:
                in_place = time.perf_counter()
        except FileNotFoundError:  # between the old site's rename and the new one's
            pass
        try:
            if page.evaluate(check, word):
                return time.perf_counter(), in_place or time.perf_counter()
        except Exception:  # noqa: BLE001 - the page is navigating: ask again
            pass
        time.sleep(0.01)
    raise RuntimeError("the page did not reload after a save")


def measure(version: str | None, scratch: Path, browser, saves: int) -> dict[str, float]:
    tree = copy_tree(version, scratch / "tree")
    cold = timed_build(tree, scratch / "built")
    warm = timed_build(tree, scratch / "built")
    reloads = save_to_reload(tree, scratch / "served", browser, saves)
    return {"cold": cold, "warm": warm, "all": reloads, **{kind: statistics.median(reloads[kind]) for kind in reloads}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default="HEAD", help="the commit to compare the working tree with")
    parser.add_argument("--saves", type=int, default=3)
    args = parser.parse_args()
    before = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.before], check=True,
                            capture_output=True, text=True).stdout.strip()
    from playwright.sync_api import sync_playwright

    results = {}
    with sync_playwright() as p, tempfile.TemporaryDirectory() as scratch:
        browser = p.chromium.launch(executable_path=executable(), args=ARGS)
        for name, version in ((before, before), ("working tree", None)):
            results[name] = measure(version, Path(scratch) / re.sub(r"\W", "-", name), browser, args.saves)
        browser.close()
    rows = [("cold build, fresh process (s)", "cold", ""),
            ("warm build, fresh process, nothing changed (s)", "warm", ""),
            ("save a lesson's prose -> page reloaded (s, median)", "prose", "≤ 2 s"),
            ("  of which: save -> new site in place", "prose built", ""),
            ("save sim/…/sampling.py -> page reloaded (s, median)", "sim", "≤ 5 s"),
            ("  of which: save -> new site in place", "sim built", "")]
    names = list(results)
    print(f"| measure | {' | '.join(names)} | budget |")
    print(f"| --- | {' | '.join('---' for _ in names)} | --- |")
    for label, key, budget in rows:
        print(f"| {label} | {' | '.join(f'{results[n][key]:.2f}' for n in names)} | {budget} |")
    for name in names:
        every = results[name]["all"]
        print(f"{name}: prose saves {' '.join(f'{t:.2f}' for t in every['prose'])}; "
              f"sim saves {' '.join(f'{t:.2f}' for t in every['sim'])}")


if __name__ == "__main__":
    main()
