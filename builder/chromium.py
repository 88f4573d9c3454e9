"""How the project starts Chromium, for the browser tests and bench/: Debian's build, by path, headless.

Playwright cannot download its own browser on the project's machines; `CHROMIUM` names the binary bench/ drives
(default /usr/bin/chromium, the browser a student runs) and `CHROMIUM_SHELL` the one the tests drive (default
/usr/bin/chromium-headless-shell, Debian's build of Chromium's headless shell: the same Blink and V8 without the
browser's windowing and GPU process, so the browser tests run on about a sixth less CPU; measured 2026-12-07 on
tests/browser/test_snapshot.py and test_reliability.py, 243 against 294 CPU-seconds). Without the
background-networking flags Chromium keeps calling hosts that a closed network refuses.
"""

from __future__ import annotations

import os

ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]


def executable(shell: bool = False) -> str:
    """The Chromium bench/ drives, or (shell) the headless shell the tests drive."""
    if shell:
        return os.environ.get("CHROMIUM_SHELL", "/usr/bin/chromium-headless-shell")
    return os.environ.get("CHROMIUM", "/usr/bin/chromium")
