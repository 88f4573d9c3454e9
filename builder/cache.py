"""The lesson cache: what the last builds made of each lesson, kept on disk, so that a save rebuilds only the lesson
it changed.

Why: `build.py serve` rebuilds in a fresh process after every save (so that edits to sim/ and builder/ take effect),
and in a fresh process every lesson was parsed again: its Markdown, its directives, its widgets pre-rendered, its
parts measured, 4-5 s for sixteen pages on the development machine (2026-12), where an author expects the page back
within a second or two of a save. The frozen figures (builder/frozen.py) already spare the simulations; this spares
the rest.

What is kept: a lesson's parse (build.py ParsedLesson: its HTML, widgets, links, ids, sections) and the frozen
entries the parse took, one file per lesson page. It is taken only when it was made from the same inputs, which are:
- the lesson's own file (its front matter and body);
- everything a parse can see besides the simulator's code: the builder's code (build.py, builder/), the simulator's
  data files (sim/, all but .py), the templates, static files and the chrome's words (site/), every file of the
  lessons folder that is not a lesson page (course plan, catalogs, glossary, evolution maps), every lesson's front
  matter (a link shows another lesson's title), the versions of the Python and the packages that render Markdown
  and templates, and whether the build is for `serve` (dev pages);
- the simulator modules the parse ran, each with its file's hash (build.py _taken): those the builder imports itself
  (the kit, the languages, the formatters: build.py builder_roots), those its figures' names come from and its
  widgets' modules (builder/frozen.py Frozen.reached), and every module those import, by their import statements.
An edit to a lesson's body rebuilds that lesson; an edit to a module of sim/ only the lessons that ran it, and of
those only the ones whose pages it changes: where the edited modules are only those its figures and widgets reached
(not the kit's), every figure, claim and widget of the kept parse is drawn again (the widgets alone whose modules
changed: LessonContext.replays) and compared with what the parse got; if all are the same, the parse is kept anew.
Any other edit rebuilds every lesson. Each widget's build-time check (every widget rendered in the languages that
need it) is kept the same way, for the modules its drawing ran, and each module's reading of its TEXT for its
source.

Why the drawing again: every lesson asks a predict question, and sim/questions/ imports most of the simulator, so
an edit to sim/techniques/sampling.py reaches every page by its imports; drawing a page's widgets again costs a
fraction of parsing it (its Markdown, math and parts measured), and most such edits leave the other pages' widgets
as they were.

Only what succeeded is kept: a lesson with a problem is parsed again by the next build, which reports it again. The
cache is an author's convenience, never a source of truth: `build.py build` from a fresh clone has none and makes
the same site (tests/builder/test_cache.py builds with and without it and compares every file).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

FORMAT = 1
KEEP_FILES = 400  # beyond this many entries, the oldest half goes (tests build lessons from many scratch folders)
PACKAGES = ("jinja2", "markdown-it-py", "mdit-py-plugins", "latex2mathml", "pyyaml")


def inputs(files: Iterable[Path], folders: Iterable[Path], extra: Iterable[str]) -> str:
    """A digest of the content of `files`, of every file under `folders` (compiled Python left out), and of the
    strings in `extra`."""
    digest = hashlib.sha256(f"lesson cache {FORMAT} {sys.version}\n".encode())
    for name in PACKAGES:
        digest.update(f"{name} {_version(name)}\n".encode())
    paths = [p for p in files if p.is_file()]
    for folder in folders:
        paths += [p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    for path in sorted(set(paths)):
        digest.update(str(path).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    for text in extra:
        digest.update(text.encode() + b"\0")
    return digest.hexdigest()


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "none"


class Cache:
    """Entries on disk under `folder`, each valid for one digest of the inputs (see the module). `folder` None: a
    cache that keeps nothing (tests, and any build that asks for none)."""

    def __init__(self, folder: Path | None, digest: str, code=None, sim_roots: set[str] = frozenset(),
                 sim_base: dict[str, str] | None = None):
        self.folder, self.digest = folder, digest
        # What the simulator's code is today (builder/frozen.py Code), the modules the builder imports itself, and
        # those with every module they import, each with its file's hash: an entry holds for the modules its parse
        # ran (build.py _taken), not for all of sim/.
        self.code, self.sim_roots, self.sim_base = code, set(sim_roots), sim_base or {}
        self.taken = 0  # entries this build took
        self.kept = 0  # entries this build wrote
        self._files: int | None = None  # the folder's entries: counted at a put, then kept up, not counted each put

    def get(self, name: str, key: str):
        """The value kept under `name` for `key` and the current inputs, or None."""
        if self.folder is None:
            return None
        try:
            with open(self._file(name), "rb") as f:
                kept_key, value = pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError, TypeError):
            return None  # none yet, or written by other code: made again
        if kept_key != self._key(key):
            return None
        self.taken += 1
        return value

    def put(self, name: str, key: str, value) -> None:
        """Keep `value` under `name` for `key` and the current inputs, in place of what was there."""
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self._file(name)
        partial = target.with_suffix(f".{os.getpid()}.tmp")  # whole or absent: written aside, then renamed
        with open(partial, "wb") as f:
            pickle.dump((self._key(key), value), f, protocol=pickle.HIGHEST_PROTOCOL)
        existed = target.exists()
        partial.replace(target)
        self.kept += 1
        self._files = sum(1 for _ in self.folder.glob("*.pickle")) if self._files is None \
            else self._files + (not existed)
        if self._files > KEEP_FILES:
            entries = list(self.folder.glob("*.pickle"))  # as they are now: other processes write here too
            if len(entries) > KEEP_FILES:
                for old in sorted(entries, key=_modified)[:len(entries) // 2]:
                    old.unlink(missing_ok=True)
            self._files = None  # counted again at the next put

    def _key(self, key: str) -> str:
        return hashlib.sha256(f"{self.digest}\0{key}".encode()).hexdigest()

    def _file(self, name: str) -> Path:
        return self.folder / f"{hashlib.sha256(name.encode()).hexdigest()[:24]}.pickle"


def _modified(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
