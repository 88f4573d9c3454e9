"""The standard library the site sends: Pyodide's python_stdlib.zip cut to the modules the site's Python imports.

Pyodide's own zip (2.5 MB, already compressed) holds all of Python's library; the page's worker imports about
160 of its 600 modules, most of them in Pyodide's own boot (asyncio, inspect, typing, zipfile…). Which ones is
found by running it, never by a list kept by hand: builder/stdlib_trace.mjs boots Pyodide in Node as the worker
boots it, imports every widget module, renders every widget with its defaults in every language
(`trace_states`), makes the memory snapshot, and reports each module it imported from the zip with the module
whose import statement asked for it and the step it was in. The simulator imports the standard library at
module level only (tests/sim/test_imports.py), so no state a widget is given later can ask for a module the
trace did not see; every lesson's browser tests then run every widget, its scenarios and its controls on the
cut zip.

The cut holds those modules' sources with their comments and docstrings taken out (builder/pysource.py, run by
Pyodide's own Python, whose syntax is newer than the builder's: each file is kept only if it parses to the same
syntax tree less its docstrings; lines stay where they were, so a traceback points where it did), and nothing
else. Modules frozen into Pyodide's binary (importlib's bootstrap, os, codecs…) are imported from the binary, never
from the zip, and are left out. The cut is checked as it was found: a second run on it imports every traced module
and renders every state again, and a module missing or failing there fails the build with its name
(StdlibError), not a student's page.

Tracing takes about ten seconds, so the cut zip is kept in node_modules/.cache/inferlab/, named by a hash of
everything that decides it: Pyodide's zip, the modules the simulator's import statements name (`imported_names`;
with imports at module level only, nothing else in the simulator changes what it can import), the states rendered,
the trace script and the stripper. A build whose simulator names the same modules takes it from there. The listing
of what the zip holds and why is kept beside it (`stdlib-<key>.json`; `build.py check` prints it), not in the zip:
the zip is sent to every student.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from builder.frozen import named_imports
from sim import widgets
from sim.page.languages import LANGUAGES

TRACE_SCRIPT = Path(__file__).with_name("stdlib_trace.mjs")
STRIPPER = Path(__file__).with_name("pysource.py")  # the trace runs it on every source it sends
ZIP_EPOCH = (2020, 1, 1, 0, 0, 0)  # fixed timestamps: the same modules always give the same zip and name
TRACE_TIMEOUT_S = 300


class StdlibError(Exception):
    """The cut standard library could not be made or does not work; the message says which module and why."""


@dataclass(frozen=True)
class Module:
    name: str
    file: str  # its path inside the zip
    by: str | None  # the module whose import statement loaded it (None: Pyodide's boot)
    during: str  # the step of the trace: "Pyodide's boot", "import the widget roofline", "render roofline", …
    frozen: bool  # imported from Pyodide's binary, not from the zip


@dataclass(frozen=True)
class Stdlib:
    modules: tuple[Module, ...]  # every module imported from the zip, by name
    data: bytes  # the cut zip

    @property
    def site_path(self) -> str:
        return f"py/stdlib-{hashlib.sha256(self.data).hexdigest()[:12]}.zip"

    def listing_json(self) -> bytes:
        """The modules as the cache and the project keep them beside the zip: one a line."""
        return ("[\n" + ",\n".join(json.dumps(m.__dict__, sort_keys=True) for m in self.modules) + "\n]\n").encode()

    def listing(self) -> list[str]:
        """What the zip holds and why, one line per module: for `build.py check`."""
        lines = []
        for m in self.modules:
            why = m.during if m.by is None else f"{m.during}, imported by {m.by}"
            lines.append(f"{m.name}: {'frozen in the binary, not sent' if m.frozen else m.file} ({why})")
        return lines


def trace_states() -> list[tuple[str, dict]]:
    """The states the trace renders: each widget with its defaults, in every language it has words in (a widget
    written for one language's lessons has no other's: builder/usage.py)."""
    return [(name, {"lang": lang}) for name in widgets.names() for lang in LANGUAGES
            if lang in widgets.load(name).TEXT]


def imported_names(sim_zip: bytes, memo: Path | None = None) -> bytes:
    """Every module outside the simulator that its import statements name (for `from x import y`, both x and x.y,
    as y may be a submodule), sorted: what decides which modules it can import, whatever else it computes. An edit
    to the simulator that leaves these alone keeps the cut, and does not wait for a trace. `memo`: a folder where each
    file's walk is kept by its source (builder/frozen.py named_imports), so that a save walks the one file it
    changed."""
    names = set()
    with zipfile.ZipFile(io.BytesIO(sim_zip)) as zf:
        for file in zf.namelist():
            if file.endswith(".py"):
                path = PurePosixPath(file)
                names |= named_imports(zf.read(file), Path(file), path.parent.parts, memo)[0]
    return "\n".join(sorted(n for n in names if n != "sim" and not n.startswith("sim."))).encode()


def _imported_names_kept(sim_zip: bytes, cache_dir: Path | None) -> bytes:
    """imported_names(sim_zip), kept in cache_dir under the zip's hash, each file's walk under its own: walking
    every module's syntax tree takes half a second, and `build.py serve` rebuilds in a fresh process after every
    save."""
    if cache_dir is None:
        return imported_names(sim_zip)
    kept = cache_dir / "imported-names" / f"{hashlib.sha256(sim_zip).hexdigest()[:24]}.txt"
    if kept.is_file():
        return kept.read_bytes()
    names = imported_names(sim_zip, cache_dir / "imports")
    kept.parent.mkdir(parents=True, exist_ok=True)
    partial = kept.with_suffix(f".{os.getpid()}.tmp")  # whole or absent: written aside, then renamed
    partial.write_bytes(names)
    partial.replace(kept)
    return names


def key(node_modules: Path, sim_zip: bytes, cache_dir: Path | None = None) -> str:
    """The name of the cut this simulator needs, `stdlib-<16 hex>`: a hash of everything that decides it."""
    full_zip = node_modules / "pyodide" / "python_stdlib.zip"
    if not full_zip.is_file():
        raise StdlibError(f"{full_zip} is missing: run 'npm ci' (make serve and make test do)")
    digest = hashlib.sha256()
    for part in (full_zip.read_bytes(), _imported_names_kept(sim_zip, cache_dir), _plan(), TRACE_SCRIPT.read_bytes(),
                 STRIPPER.read_bytes()):
        digest.update(hashlib.sha256(part).digest())
    return f"stdlib-{digest.hexdigest()[:16]}"


def cut_stdlib(node_modules: Path, sim_zip: bytes, cache_dir: Path | None = None, kept: Path | None = None,
               keep: bool = False) -> Stdlib:
    """The cut standard library for this simulator: the copy in `kept` (the project's, committed) or in the cache
    when it was made for the same inputs, else traced, cut and checked (StdlibError when the check fails), cached,
    and if `keep`, put in `kept` in place of the copy there."""
    cache_dir = cache_dir or node_modules / ".cache" / "inferlab"
    name = key(node_modules, sim_zip, cache_dir)
    found = next((f for f in (kept, cache_dir) if f is not None and (f / f"{name}.zip").is_file()), None)
    if found is not None:  # the zip is written after its listing: where the zip is, the listing is
        listing = json.loads((found / f"{name}.json").read_text(encoding="utf-8"))
        stdlib = Stdlib(tuple(Module(**m) for m in listing), (found / f"{name}.zip").read_bytes())
    else:
        stdlib = _traced(node_modules, sim_zip)
    for folder in (cache_dir if found is None else None, kept if keep and found != kept else None):
        if folder is None:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        if folder == kept:  # the project keeps one cut, this simulator's
            for old in folder.glob("stdlib-*.*"):
                old.unlink()
        _write_whole(folder / f"{name}.json", stdlib.listing_json())
        _write_whole(folder / f"{name}.zip", stdlib.data)
    return stdlib


def _traced(node_modules: Path, sim_zip: bytes) -> Stdlib:
    """The cut, found by a trace in Pyodide and checked by a second run on it."""
    full_zip = node_modules / "pyodide" / "python_stdlib.zip"
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        (scratch / "sim.zip").write_bytes(sim_zip)
        (scratch / "plan.json").write_bytes(_plan())
        traced = _run_trace(node_modules, full_zip, scratch)
        stdlib = _cut(full_zip, traced)
        (scratch / "stdlib.zip").write_bytes(stdlib.data)
        (scratch / "plan.json").write_text(json.dumps({"states": trace_states(),
                                                         "imports": [m.name for m in stdlib.modules],
                                                         "sources": False}))
        _check(stdlib, _run_trace(node_modules, scratch / "stdlib.zip", scratch))
    return stdlib


def _plan() -> bytes:
    """What the trace runs: every widget's defaults in every language, the sources sent stripped."""
    return json.dumps({"states": trace_states(), "imports": [], "sources": True}, sort_keys=True).encode()


def _write_whole(path: Path, data: bytes) -> None:
    """A name of its own, then a rename: two builds tracing at once (the tests' workers) never share a half file."""
    with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".partial", delete=False) as partial:
        partial.write(data)
    Path(partial.name).replace(path)


def _run_trace(node_modules: Path, stdlib_zip: Path, scratch: Path) -> dict:
    node = shutil.which("node")
    if node is None:
        raise StdlibError("node is not on PATH: the standard library is traced in Pyodide under Node "
                          "(npm brings it; make installs it)")
    done = subprocess.run([node, str(TRACE_SCRIPT), str(node_modules / "pyodide"), str(stdlib_zip),
                           str(scratch / "sim.zip"), str(scratch / "plan.json")],
                          capture_output=True, text=True, timeout=TRACE_TIMEOUT_S)
    if done.returncode != 0:
        raise StdlibError(f"tracing the standard library failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)


def _cut(full_zip: Path, traced: dict) -> Stdlib:
    """The traced modules' files (as builder/pysource.py strips them) in a deterministic zip."""
    if traced["failures"]:
        raise StdlibError("the simulator failed in Pyodide while its imports were traced: "
                          + "; ".join(traced["failures"]))
    modules = tuple(Module(name=name, **m) for name, m in sorted(traced["modules"].items()))
    sent = {m.file for m in modules if not m.frozen}
    buffer = io.BytesIO()
    with zipfile.ZipFile(full_zip) as source, zipfile.ZipFile(buffer, "w") as zf:
        for file in sorted(sent):
            info = zipfile.ZipInfo(file, ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, traced["sources"].get(file, source.read(file)), compresslevel=9)
    return Stdlib(modules, buffer.getvalue())


def _check(stdlib: Stdlib, rerun: dict) -> None:
    """The run with the cut zip must import every module the trace found, and fail nowhere."""
    if rerun["failures"]:
        raise StdlibError("with the cut standard library, " + "; ".join(rerun["failures"]))
    missing = {m.name for m in stdlib.modules} - set(rerun["modules"])
    if missing:
        raise StdlibError("with the cut standard library, these modules were not imported: "
                          + ", ".join(sorted(missing)))
