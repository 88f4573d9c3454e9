"""Files the site holds beside its pages: static files, one stylesheet bundle, the page scripts under a
fingerprinted folder, vendored front-end packages, the sim zip."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import zipfile
from pathlib import Path

from builder import pysource
from builder.pysource import strip

# (package folder under node_modules, files to copy, folder under _site/vendor/)
VENDOR = (
    # Not python_stdlib.zip: the site sends the standard library cut to what it imports (builder/stdlib.py).
    ("pyodide", ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "pyodide-lock.json"), "pyodide"),
    ("plotly.js-basic-dist-min", ("plotly-basic.min.js",), "plotly"),
)
SIM_SUFFIXES = {".py", ".json", ".jsonl", ".csv"}
# Read in CPython only (sim/physics/measured.py PROFILES): not sent to the browser.
SIM_LEFT_OUT = ("physics/data/profiles",)
SIM_SENT_ANYWAY = ("-moe.csv",)  # but an MoE block's profile (1 KB), which the moe lesson's widgets draw
ZIP_EPOCH = (2020, 1, 1, 0, 0, 0)  # fixed timestamps: the same sources always give the same zip and name


def vendor_files(node_modules: Path) -> dict[str, bytes | Path]:
    """Site path -> source file (or bytes) of every vendored asset; FileNotFoundError names a missing one."""
    files: dict[str, bytes | Path] = {}
    for package, names, target in VENDOR:
        for name in names:
            source = node_modules / package / name
            if not source.is_file():
                raise FileNotFoundError(f"{source} is missing: run 'npm ci' (make serve and make test do)")
            files[f"vendor/{target}/{name}"] = source
    lock = "vendor/pyodide/pyodide-lock.json"
    files[lock] = without_packages(files[lock])
    return files


def without_packages(lock: Path) -> bytes:
    """Pyodide's lock file with no package in it. The site loads no package (each would come from a CDN), and
    Pyodide's boot reads only the lock's `info`, whose ABI must be its own: 27 KB less on every first visit."""
    info = json.loads(lock.read_text(encoding="utf-8"))["info"]
    return json.dumps({"info": info, "packages": {}}, separators=(",", ":")).encode()


def bundle_stylesheets(static_dir: Path) -> tuple[str, bytes]:
    """Every stylesheet under static/css/ in one content-hashed file: site.css, then widgets.css (the kit's
    shared widget styles), then any widget's own stylesheet (css/widgets/<name>.css), by name."""
    css_dir = static_dir / "css"
    first = {"site.css": 0, "widgets.css": 1}
    sheets = sorted(css_dir.rglob("*.css"),
                    key=lambda p: (first.get(p.relative_to(css_dir).as_posix(), 2), p.relative_to(css_dir).as_posix()))
    data = "".join(f"/* {p.relative_to(css_dir).as_posix()} */\n{p.read_text(encoding='utf-8')}\n"
                   for p in sheets).encode()
    return f"static/site-{hashlib.sha256(data).hexdigest()[:12]}.css", data


def script_files(static_dir: Path) -> tuple[str, dict[str, Path]]:
    """The page scripts (static/js/) in a folder named by a hash of them all, static/js-<hash>/, and their site
    paths. A script's name then never holds other bytes, so the service worker serves it from its cache without
    asking the network, and a page never runs the scripts of another build. One hash for the folder, not one per
    file: the scripts import each other by relative name (./runtime.js), which therefore need no rewriting."""
    js_dir = static_dir / "js"
    scripts = sorted(p for p in js_dir.rglob("*") if p.is_file())
    digest = hashlib.sha256()
    for path in scripts:
        digest.update(path.relative_to(js_dir).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    folder = f"static/js-{digest.hexdigest()[:12]}/"
    return folder, {folder + p.relative_to(js_dir).as_posix(): p for p in scripts}


# A static import of a sibling module: `import … from "./name.js";` on a line of its own.
_IMPORT = re.compile(r'^import\b[^;]*?\bfrom\s+"\./([\w-]+\.js)";?\s*$', re.M)


def module_graph(js_dir: Path, entry: str) -> list[str]:
    """`entry` and every module it imports, at any depth, entry first: what a page preloads, so that the browser
    asks for them all at once, not one level of imports after another (a round trip each on a slow link)."""
    found, waiting = [entry], [entry]
    while waiting:
        for name in _IMPORT.findall((js_dir / waiting.pop()).read_text(encoding="utf-8")):
            if name not in found:
                found.append(name)
                waiting.append(name)
    return [entry] + sorted(found[1:])


def static_files(static_dir: Path) -> dict[str, Path]:
    """Static files copied as they are (stylesheets are bundled, scripts fingerprinted separately)."""
    return {f"static/{p.relative_to(static_dir).as_posix()}": p for p in sorted(static_dir.rglob("*"))
            if p.is_file() and p.suffix != ".css" and p.relative_to(static_dir).parts[0] != "js"}


def pack_sim(sim_dir: Path, cache_dir: Path | None = None) -> tuple[str, bytes]:
    """The simulator package as a deterministic zip, and its content-hashed site path. Its Python files go without
    their comments and docstrings (builder/pysource.py): the browser runs the code, a student waits for every byte.
    Stripping a file takes tens of ms (it proves nothing but comments and docstrings went), and every build of
    `build.py serve` is a fresh process: a file already stripped is taken from `cache_dir` if given."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(sim_dir.rglob("*")):
            if path.is_file() and path.suffix in SIM_SUFFIXES and "__pycache__" not in path.parts \
                    and (not path.relative_to(sim_dir).as_posix().startswith(SIM_LEFT_OUT)
                         or path.name.endswith(SIM_SENT_ANYWAY)):
                info = zipfile.ZipInfo(f"sim/{path.relative_to(sim_dir).as_posix()}", ZIP_EPOCH)
                info.compress_type = zipfile.ZIP_DEFLATED
                data = path.read_bytes()
                zf.writestr(info, _stripped(data, cache_dir) if path.suffix == ".py" else data, compresslevel=9)
    data = buffer.getvalue()
    return f"py/sim-{hashlib.sha256(data).hexdigest()[:12]}.zip", data


def _stripped(source: bytes, cache_dir: Path | None) -> bytes:
    """strip() of a Python file's bytes, kept in cache_dir under a hash of the file and of the stripper."""
    if cache_dir is None:
        return strip(source.decode()).encode()
    key = hashlib.sha256(hashlib.sha256(Path(pysource.__file__).read_bytes()).digest() + source).hexdigest()[:24]
    kept = cache_dir / "stripped" / f"{key}.py"
    if kept.is_file():
        return kept.read_bytes()
    data = strip(source.decode()).encode()
    kept.parent.mkdir(parents=True, exist_ok=True)
    partial = kept.with_suffix(f".{os.getpid()}.tmp")  # whole or absent: written aside, then renamed
    partial.write_bytes(data)
    partial.replace(kept)
    return data
