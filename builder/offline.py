"""The service worker (site/sw.js) with this build's manifest: what a visited lesson needs to open offline.

The manifest lists every file under static/, vendor/ and py/, the search index's files under pagefind/ (those
search.js uses: Pagefind's own UI bundles are left out), and each language's offline page (by its address, the
folder), with a hash of its content, and a version made of them all: a build that changes any of them is a new
sw.js, which browsers install at once, keeping the files whose hash did not change. Lessons, home pages and chapter
pages are not listed: they are kept as they are visited. `offline` maps each language's folder ("", "en/") to its
offline page, longest folder first: what the worker shows for a page it cannot fetch and has not kept.

`files` are fetched when the worker installs, on a student's first visit. `later` are the files a page asks for
only when they are used (ON_USE: the search index, and plotly.js when a figure nears the screen): a first visit
does not wait for them or pay for them (1.1 MB of its 5 MB compressed). The worker keeps each as it is fetched,
and all of them once the student reads on (a second page kept) or searches: from then on, search and every figure
work offline.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

PRECACHED = ("static/", "vendor/", "py/", "pagefind/")
NOT_PRECACHED = re.compile(r"pagefind/pagefind-(?:component-ui|modular-ui|ui|highlight)\.(?:js|css)")
ON_USE = ("pagefind/", "vendor/plotly/")
PLACEHOLDER = '/* BUILD */ { version: "dev", files: {}, later: {} }'


def content_hash(content: bytes | Path) -> str:
    digest = hashlib.sha256()
    if isinstance(content, Path):
        with content.open("rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    else:
        digest.update(content)
    return digest.hexdigest()[:16]


def manifest(files: dict[str, bytes | Path], offline: dict[str, str] | None = None) -> dict:
    """`offline`: each language's folder -> its offline page's folder, whose index.html is in `files`."""
    offline = offline or {}
    listed = {path: content_hash(content) for path, content in sorted(files.items())
              if path.startswith(PRECACHED) and not NOT_PRECACHED.fullmatch(path)}
    listed.update({page: content_hash(files[page + "index.html"]) for page in sorted(offline.values())})
    pages = sorted(offline.items(), key=lambda item: (-len(item[0]), item[0]))
    version = hashlib.sha256(json.dumps([listed, pages], sort_keys=True).encode()).hexdigest()[:12]
    return {"version": version,
            "files": {path: hash for path, hash in listed.items() if not path.startswith(ON_USE)},
            "later": {path: hash for path, hash in listed.items() if path.startswith(ON_USE)},
            "offline": [list(item) for item in pages]}


def service_worker(template: Path, files: dict[str, bytes | Path], offline: dict[str, str] | None = None) -> bytes:
    source = template.read_text(encoding="utf-8")
    if source.count(PLACEHOLDER) != 1:
        raise ValueError(f"{template}: expected one {PLACEHOLDER!r} for the build's manifest")
    return source.replace(PLACEHOLDER, json.dumps(manifest(files, offline), separators=(",", ":"))).encode()
