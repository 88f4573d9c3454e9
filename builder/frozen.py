"""Frozen figures: what the simulator gave the last build, kept beside the lessons (lessons/frozen.json, committed)
so that a build computes only what the simulator has not already computed for the same code.

Two kinds of result are kept: the text of every {sim}`EXPR` of the lessons, and the views of the slow widgets
(sim/kit Widget(slow=True): serving simulations, hundreds of ms each) pre-rendered for the lessons. Both are
functions of the simulator's code alone, so the store is keyed by its fingerprint: a hash of every file under sim/
and of builder/expressions.py (the names an expression sees). A store made by other code is not used at all; the
build computes everything, as it would without one, and `build.py build` writes the new store. Nothing else is
frozen (templates, Markdown, the other widgets' views are cheap and always made afresh).

Why: a build in a fresh process spends nearly all its time in the serving simulations behind the lessons' goodput
and steady-state figures (about 20 s of 24 s on the development machine, 2026-12). A fresh clone, `build.py
serve`'s rebuild after every save (a fresh process each time) and `build.py check` now skip them. Quarto's
`freeze` makes the same trade, for the same reason.

The tests hold the store to the code: a build from it must equal, page for page, a build that computes
everything, and must not compute anything (tests/builder/test_frozen.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

FILE = "frozen.json"  # in the lessons folder
FORMAT = 1


def fingerprint(sim_dir: Path, expressions: Path) -> str:
    """A hash of the simulator's code and data (every file under sim_dir but bytecode) and of the expression
    namespace's module."""
    digest = hashlib.sha256(f"frozen {FORMAT}\n".encode())
    files = [p for p in sorted(sim_dir.rglob("*")) if p.is_file() and "__pycache__" not in p.parts]
    for path in files + [expressions]:
        name = path.relative_to(sim_dir).as_posix() if path.is_relative_to(sim_dir) else path.name
        data = path.read_bytes()
        digest.update(f"{name}\n{len(data)}\n".encode() + data)
    return digest.hexdigest()


class Frozen:
    """The store of one build: what it holds (if made by the same code), what this build used and computed."""

    def __init__(self, path: Path | None, code: str):
        self.path, self.code = path, code
        self.held: dict[str, dict] = {"expressions": {}, "views": {}}
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                data = {}  # unreadable (a merge gone wrong, say): computed afresh, and written anew
            if data.get("fingerprint") == code:
                self.held = {kind: dict(data.get(kind, {})) for kind in self.held}
        self.used: dict[str, dict] = {kind: {} for kind in self.held}
        self.computed = 0  # results this build could not take from the store

    def expression(self, expr: str, compute: Callable[[], str]) -> str:
        """The text of {sim}`expr`."""
        return self._get("expressions", expr, compute)

    def view(self, name: str, module, state: dict) -> dict:
        """module.render(state) for widget `name`; frozen only when the widget is slow."""
        if not module.WIDGET.slow:
            return module.render(state)
        key = f"{name} {json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(',', ':'))}"
        # Through JSON either way, so that a view read from the store and one just made are the same value.
        return self._get("views", key, lambda: json.loads(json.dumps(module.render(state))))

    def _get(self, kind: str, key: str, compute: Callable):
        used = self.used[kind]
        if key not in used:
            if key in self.held[kind]:
                used[key] = self.held[kind][key]
            else:
                used[key] = compute()
                self.computed += 1
        return used[key]

    def save(self) -> bool:
        """Write what this build used (and nothing it did not) if that differs from the file; True if written."""
        if self.path is None or (self.computed == 0 and all(self.used[k].keys() == self.held[k].keys()
                                                              for k in self.used)):
            return False
        text = self.text()
        if self.path.exists() and self.path.read_text(encoding="utf-8") == text:
            return False
        self.path.write_text(text, encoding="utf-8")
        return True

    def text(self) -> str:
        """The file of what this build used: one entry a line, in key order (a change shows as the lines it moves);
        each value in its own order, which the page shows."""
        lines = ["{", f'"fingerprint": {json.dumps(self.code)},']
        for n, kind in enumerate(sorted(self.used)):
            entries = [f"{_json(key)}: {_json(value)}" for key, value in sorted(self.used[kind].items())]
            lines += [f'"{kind}": {{', ",\n".join(entries), "}" + ("," if n + 1 < len(self.used) else "")]
        lines.append("}")
        return "\n".join(lines) + "\n"


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
