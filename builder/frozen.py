"""Frozen figures: what the simulator gave the last build, kept beside the lessons (lessons/frozen.json, committed)
so that a build computes only what the simulator has not already computed for the same code.

Four kinds of result are kept: the text of every {sim}`EXPR` of the lessons, whether each {claim}`EXPR` holds, what
the figures and claims from a random trace come to on ten other traces (builder/seeds.py), and the views of the slow
widgets (sim/kit Widget(slow=True): serving simulations, hundreds of ms each) pre-rendered for the lessons. Each is a
function of part of the simulator's code, so each is kept with the fingerprint of that part (`Code`): for an
expression, builder/expressions.py (the names it sees), builder/seeds.py and the modules its names come from; for a
view, its widget's module; either way with every module of sim/ those import, transitively, and every data file
under sim/ (the presets). A result whose fingerprint has changed is not used: the build computes it again, and
`build.py build` writes the store anew. So an edit to sim/techniques/sampling.py recomputes the figures that import it,
and not the serving simulations. Nothing else is frozen (templates, Markdown, the other widgets' views are cheap and
always made afresh).

Why: a build in a fresh process spends nearly all its time in the serving simulations behind the lessons' goodput
and steady-state figures (about 20 s of 24 s on the development machine, 2026-12). A fresh clone, `build.py
serve`'s rebuild after every save (a fresh process each time) and `build.py check` now skip them. Quarto's
`freeze` makes the same trade, for the same reason.

The tests hold the store to the code: a build from it must equal, page for page, a build that computes
everything, and must not compute anything (tests/builder/test_frozen.py).
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import json
import os
import types
from collections.abc import Callable
from pathlib import Path

FILE = "frozen.json"  # in the lessons folder
FORMAT = 2
KINDS = ("claims", "expressions", "seeds", "views")


class Code:
    """Fingerprints of the simulator's code. A module's covers its file and every sim module it imports, found in its
    import statements wherever they stand, transitively; a module that imports by name at run time (importlib, as
    sim/widgets does) counts as importing all of sim/. Every fingerprint also covers every data file under sim/."""

    def __init__(self, sim_dir: Path, expressions: tuple[Path, ...], memo: Path | None = None):
        self.files: dict[str, bytes] = {}  # module name -> the hash of its file
        self._sources: dict[str, tuple[bytes, Path, tuple[str, ...]]] = {}  # module -> its source, file, package
        self._named: dict[str, tuple[frozenset[str], bool]] | None = None  # module -> _named() of its file
        self.memo = memo  # a folder where each file's _named() is kept by its hash (None: walked every time)
        data = hashlib.sha256(f"frozen {FORMAT}\n".encode())
        for path in sorted(sim_dir.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            relative = path.relative_to(sim_dir)
            source = path.read_bytes()
            if path.suffix != ".py":
                data.update(f"{relative.as_posix()}\n".encode() + hashlib.sha256(source).digest())
                continue
            parts = ("sim", *relative.with_suffix("").parts)
            package = parts[:-1]  # the package a relative import starts from (a package's own, for __init__)
            name = ".".join(package if parts[-1] == "__init__" else parts)
            self.files[name] = hashlib.sha256(source).digest()
            self._sources[name] = (source, path, package)
        self.data = data.digest()
        self.expressions = hashlib.sha256(b"".join(hashlib.sha256(p.read_bytes()).digest() for p in expressions)
                                          ).digest()
        self._modules: dict[str, str] = {}
        self._closures: dict[str, frozenset[str]] = {}  # module -> _static(module)

    @property
    def named(self) -> dict[str, tuple[frozenset[str], bool]]:
        """Module -> the sim modules its import statements name, and whether it also imports by name at run time.
        Walked on the first fingerprint asked for, from the sources read when the Code was made (most of a second
        for all of sim/), each file's walk kept in `memo` by the file's hash: `serve` rebuilds in a fresh process,
        and a save changes one file."""
        if self._named is None:
            self._named = {}
            for name, (source, path, package) in self._sources.items():
                self._named[name] = named_imports(source, path, package, self.memo)
        return self._named

    @functools.cached_property
    def imports(self) -> dict[str, set[str] | None]:
        """Module -> the sim modules its import statements name (None: all, for a module that imports by name)."""
        return {name: None if dynamic else {n for n in found if _in_sim(n)}
                for name, (found, dynamic) in self.named.items()}

    def closure(self, roots: set[str]) -> dict[str, str]:
        """Every sim module `roots` import, themselves included, transitively, each with the hash of its file: what
        a lesson's parse ran of the simulator besides what it loaded by name (builder/cache.py). Unlike
        `module`, an import by name at run time adds nothing here: the only one (sim.widgets.load) loads a
        widget's module, which a parse that draws the widget names as a root of its own (Frozen.reached)."""
        seen = set().union(*(self._static(root) for root in roots))
        return {module: self.files[module].hex()[:16] for module in sorted(seen)}

    def _static(self, root: str) -> frozenset[str]:
        """`root` and every sim module it imports by its import statements, transitively."""
        if root not in self._closures:
            seen, pending = set(), [root]
            while pending:
                current = pending.pop()
                if current in seen or current not in self.files:
                    continue
                seen.add(current)
                pending.extend(_with_packages({n for n in self.named[current][0] if _in_sim(n)}))
            self._closures[root] = frozenset(seen)
        return self._closures[root]

    def module(self, name: str) -> str:
        """The fingerprint of module `name` (see the class)."""
        if name not in self._modules:
            seen, pending = set(), [name]
            while pending:
                current = pending.pop()
                if current in seen or current not in self.files:
                    continue
                seen.add(current)
                named = self.imports[current]
                pending.extend(self.files if named is None else _with_packages(named))
            digest = hashlib.sha256(self.data)
            for module in sorted(seen):
                digest.update(module.encode() + b"\n" + self.files[module])
            self._modules[name] = digest.hexdigest()[:16]
        return self._modules[name]

    def expression(self, expr: str, names: dict) -> str:
        """The fingerprint of {sim}`expr` evaluated over `names`: builder/expressions.py and the modules its names
        come from."""
        digest = hashlib.sha256(self.expressions)
        for module in sorted(modules_of(expr, names)):
            digest.update(self.module(module).encode())
        return digest.hexdigest()[:16]


def modules_of(expr: str, names: dict) -> set[str]:
    """The sim modules the names of {sim}`expr` come from (see _module_of)."""
    return {_module_of(names[n]) for n in _names(expr) if n in names} - {None}


def named_imports(source: bytes, path: Path, package: tuple[str, ...], memo: Path | None = None
                  ) -> tuple[frozenset[str], bool]:
    """_named() of a file, kept in `memo` (a folder) by the hash of its source and of this file's code, and in this
    process (`_WALKED`)."""
    digest = hashlib.sha256(_WALKER + b"\0" + ".".join(package).encode() + b"\0" + source).hexdigest()[:24]
    if digest in _WALKED:
        return _WALKED[digest]
    kept = memo / f"{digest}.json" if memo is not None else None
    walked = _kept_walk(kept) if kept is not None else None
    if walked is None:
        walked = _named(ast.parse(source, str(path)), package)
        if kept is not None:
            memo.mkdir(parents=True, exist_ok=True)
            partial = kept.with_suffix(f".{os.getpid()}.tmp")  # whole or absent: written aside, then renamed
            partial.write_text(json.dumps([sorted(walked[0]), walked[1]]), encoding="utf-8")
            partial.replace(kept)
    _WALKED[digest] = walked
    return walked


def _kept_walk(kept: Path) -> tuple[frozenset[str], bool] | None:
    try:
        found, dynamic = json.loads(kept.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return frozenset(found), dynamic


def _named(tree: ast.Module, package: tuple[str, ...]) -> tuple[frozenset[str], bool]:
    """Every module a file's import statements name (for `from x import y`, both x and x.y, as y may be a module;
    a relative import resolved from `package`), and whether it imports by name at run time (importlib,
    __import__)."""
    found, dynamic = set(), False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ((base,) if base else ()))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Name) and node.id == "__import__":
            dynamic = True
    return frozenset(found), dynamic or "importlib" in found


def _in_sim(name: str) -> bool:
    return name == "sim" or name.startswith("sim.")


_WALKER = hashlib.sha256(Path(__file__).read_bytes()).digest()  # a change to the walk renews what `memo` kept
# Each file's walk in this process, by the digest named_imports keeps it under: a process that builds again (the
# tests build some hundred sites, each walking all of sim/ for most of a second) walks a file once.
_WALKED: dict[str, tuple[frozenset[str], bool]] = {}
# Each result a store computed in this process, by (kind, key, fingerprint), copied for each taker:
# a result is what the same code gives, as the file's entries are, so a process that builds again (the tests build
# sites whose lessons have no frozen.json) computes it once. A store that may not take a kind from the file
# (a check of the file against the code) does not take it from here either.
_MADE: dict[tuple[str, str, str], object] = {}


def _with_packages(names: set[str]) -> set[str]:
    """The modules and the packages above them, whose __init__ an import runs first."""
    return {".".join(name.split(".")[:k]) for name in names for k in range(1, name.count(".") + 2)}


@functools.lru_cache(maxsize=8192)
def _names(expr: str) -> frozenset[str]:
    """The names in an expression; remembered, as every lookup of a figure asks (its fingerprint, and the modules a
    parse reached) and a build has some 1,300 of them."""
    try:
        return frozenset(node.id for node in ast.walk(ast.parse(expr, mode="eval")) if isinstance(node, ast.Name))
    except SyntaxError:
        return frozenset()  # it fails when it is evaluated, at its line


def _module_of(value) -> str | None:
    """The sim module a name's value comes from: a module itself, a function's or a class's module, or the module of
    an object's class (a preset's: sim.physics.presets); None for anything else (math, round)."""
    if isinstance(value, types.ModuleType):
        name = value.__name__
    elif isinstance(value, (types.FunctionType, type)):
        name = value.__module__
    else:
        name = type(value).__module__
    return name if name == "sim" or name.startswith("sim.") else None


class Frozen:
    """The store of one build: what it holds, what this build used and computed. `code` None: nothing is held, every
    result is computed (a store that is not written, in tests). `reuse`: the kinds of result it may take from the
    file (a test that checks the store against the code takes only the ten other seeds', the dearest by far)."""

    def __init__(self, path: Path | None, code: Code | None, reuse: tuple[str, ...] = KINDS):
        self.path, self.code, self.reuse = path, code, reuse
        self.held: dict[str, dict] = {kind: {} for kind in KINDS}
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                data = {}  # unreadable (a merge gone wrong, say): computed afresh, and written anew
            if data.get("format") == FORMAT:
                self.held = {kind: dict(data.get(kind, {})) for kind in self.held}
        self.used: dict[str, dict] = {kind: {} for kind in self.held}
        self.computed = 0  # results this build could not take from the store
        self.pending: dict[str, str] = {}  # seeded expressions whose other seeds are still to compute -> fingerprint
        # While not None, every entry a lookup returns, by (kind, key): what one lesson's parse took, kept with it in
        # the lesson cache (builder/cache.py) so that a build that takes the lesson from there keeps them too.
        self.trail: dict[tuple[str, str], list] | None = None
        # While the trail is kept, also the sim modules whose code gave what was looked up, taken from the file or
        # not: an expression's names' modules, a widget's module (every widget, slow or not). The lesson cache
        # keys the lesson by them (builder/cache.py).
        self.reached: set[str] = set()

    def expression(self, expr: str, names: dict, compute: Callable[[], str]) -> str:
        """The text of {sim}`expr`, evaluated over `names` by `compute`."""
        if self.trail is not None:
            self.reached |= modules_of(expr, names)
        return self._get("expressions", expr, lambda: self.code.expression(expr, names), compute)

    def claim(self, expr: str, names: dict, compute: Callable[[], dict]) -> dict:
        """Whether {claim}`expr` holds (on seed 0), evaluated over `names` by `compute`."""
        if self.trail is not None:
            self.reached |= modules_of(expr, names)
        return self._get("claims", expr, lambda: self.code.expression(expr, names), compute)

    def seeds(self, expr: str, names: dict) -> list | dict | None:
        """What a seeded expression comes to on the other seeds (builder/seeds.py), or None while they are still to
        compute: compute_pending() computes every one a build asked for at once, in parallel."""
        used = self.used["seeds"]
        if self.trail is not None:
            self.reached |= modules_of(expr, names)
        if expr not in used:
            code = self.code.expression(expr, names) if self.code is not None else ""
            if (held := self._held("seeds", expr, code)) is None:
                self.pending[expr] = code
                return None
            used[expr] = held
        if self.trail is not None:
            self.trail[("seeds", expr)] = used[expr]
        return used[expr][1]

    def compute_pending(self, others: Callable[[list[str]], dict]) -> None:
        """The pending expressions on the other seeds, by others(expressions) -> {expr: result}."""
        found = others(sorted(self.pending))
        for expr, code in self.pending.items():
            self.used["seeds"][expr] = [code, found[expr]]
            self.computed += 1
        self.pending = {}

    def view(self, name: str, module, state: dict) -> dict:
        """module.render(state) for widget `name`; frozen only when the widget is slow."""
        if self.trail is not None:
            self.reached.add(module.__name__)
        key = f"{name} {json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(',', ':'))}"
        if not module.WIDGET.slow:  # not kept in the file, only in this process
            return self._made("views", key, self.code.module(module.__name__) if self.code is not None else "",
                              lambda: module.render(state))
        # Through JSON either way, so that a view read from the store and one just made are the same value.
        return self._get("views", key, lambda: self.code.module(module.__name__),
                         lambda: json.loads(json.dumps(module.render(state))))

    def _get(self, kind: str, key: str, fingerprint: Callable[[], str], compute: Callable):
        used = self.used[kind]
        if key not in used:
            code = fingerprint() if self.code is not None else ""
            if (held := self._held(kind, key, code)) is not None:
                used[key] = held
            else:
                used[key] = [code, self._made(kind, key, code, compute)]
                self.computed += 1
        if self.trail is not None:
            self.trail[(kind, key)] = used[key]
        return used[key][1]

    def _made(self, kind: str, key: str, code: str, compute: Callable):
        """compute(), or what it gave for the same key and code earlier in this process (_MADE): computed all the
        same as far as the store is concerned (it was not in the file), only not twice."""
        if not code or kind not in self.reuse:
            return compute()
        if (kind, key, code) not in _MADE:
            _MADE[(kind, key, code)] = compute()
        return copy.deepcopy(_MADE[(kind, key, code)])

    def restore(self, trail: dict[tuple[str, str], list]) -> None:
        """Count the entries of a trail as used by this build (a lesson taken from the lesson cache used them)."""
        for (kind, key), entry in trail.items():
            self.used[kind].setdefault(key, entry)

    def _held(self, kind: str, key: str, code: str) -> list | None:
        """The file's entry for `key`, if this build may take it: computed by the same code."""
        held = self.held[kind].get(key)
        if self.code is not None and kind in self.reuse and isinstance(held, list) and len(held) == 2 \
                and held[0] == code:
            return held
        return None

    def save(self, failed: bool = False) -> bool:
        """Write what this build used (and nothing it did not) if that differs from the file; True if written.
        `failed`: the build failed, and may not have used all it needs: keep what the file held too, renewed by
        what was computed (minutes of other seeds are not lost to a typo in a lesson)."""
        if self.path is None or (self.computed == 0 and all(self.used[k].keys() == self.held[k].keys()
                                                              for k in self.used)):
            return False
        if failed:
            if self.computed == 0:
                return False
            self.used = {kind: {**self.held[kind], **self.used[kind]} for kind in self.used}
        text = self.text()
        if self.path.exists() and self.path.read_text(encoding="utf-8") == text:
            return False
        self.path.write_text(text, encoding="utf-8")
        return True

    def text(self) -> str:
        """The file of what this build used: one entry a line, in key order (a change shows as the lines it moves),
        each the fingerprint of the code that computed it and the value, in its own order, which the page shows."""
        lines = ["{", f'"format": {FORMAT},']
        for n, kind in enumerate(sorted(self.used)):
            entries = [f"{_json(key)}: {_json(value)}" for key, value in sorted(self.used[kind].items())]
            lines += [f'"{kind}": {{', ",\n".join(entries), "}" + ("," if n + 1 < len(self.used) else "")]
        lines.append("}")
        return "\n".join(lines) + "\n"


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
