"""A copy of the course's lessons with only some written: for a test that builds a site of its own (a browser test
that changes or rebuilds it, a builder test of the cache or of figures from presets) and needs only some pages."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

import build


def some_lessons(folder: Path, keep: set[str]) -> Path:
    """A copy of the course's lessons at `folder` with only the lessons `keep` written, the others upcoming under their
    titles: for a test that builds a site of its own to change or rebuild (a build of two lessons takes 1.6 s, of
    the course 3.8 s, and the suite builds a dozen)."""
    shutil.copytree(build.ROOT / "lessons", folder)
    for lang in (d for d in folder.iterdir() if d.is_dir()):
        catalog = yaml.safe_load((lang / "catalog.yml").read_text(encoding="utf-8"))
        upcoming = dict(catalog.get("upcoming") or {})
        for lesson in lang.glob("*.md"):
            if lesson.stem not in keep:
                upcoming[lesson.stem] = yaml.safe_load(lesson.read_text(encoding="utf-8").split("---")[1])["title"]
                lesson.unlink()
        catalog["upcoming"] = upcoming
        (lang / "catalog.yml").write_text(yaml.safe_dump(catalog, allow_unicode=True), encoding="utf-8")
    return folder
