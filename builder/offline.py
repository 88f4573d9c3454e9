"""The service worker (site/sw.js) with this build's manifest: what a visited lesson needs to open offline.

The manifest lists every file under static/, vendor/ and py/ with a hash of its content, and a version made of
them all: a build that changes any file is a new sw.js, which browsers install at once, keeping the files
whose hash did not change. Pages are not listed: they are kept as they are visited.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

PRECACHED = ("static/", "vendor/", "py/")
PLACEHOLDER = '/* BUILD */ { version: "dev", files: {} }'


def content_hash(content: bytes | Path) -> str:
    digest = hashlib.sha256()
    if isinstance(content, Path):
        with content.open("rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    else:
        digest.update(content)
    return digest.hexdigest()[:16]


def manifest(files: dict[str, bytes | Path]) -> dict:
    listed = {path: content_hash(content) for path, content in sorted(files.items()) if path.startswith(PRECACHED)}
    version = hashlib.sha256(json.dumps(listed, sort_keys=True).encode()).hexdigest()[:12]
    return {"version": version, "files": listed}


def service_worker(template: Path, files: dict[str, bytes | Path]) -> bytes:
    source = template.read_text(encoding="utf-8")
    if source.count(PLACEHOLDER) != 1:
        raise ValueError(f"{template}: expected one {PLACEHOLDER!r} for the build's manifest")
    return source.replace(PLACEHOLDER, json.dumps(manifest(files), separators=(",", ":"))).encode()
