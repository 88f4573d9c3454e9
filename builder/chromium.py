"""How the project starts Chromium, for the browser tests and bench/: Debian's build, by path, headless.

Playwright cannot download its own browser on the project's machines; `CHROMIUM` names the binary
(default /usr/bin/chromium). Without the background-networking flags Chromium keeps calling hosts that a
closed network refuses.
"""

from __future__ import annotations

import os

ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]


def executable() -> str:
    return os.environ.get("CHROMIUM", "/usr/bin/chromium")
