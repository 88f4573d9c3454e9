"""The standard library the site sends (builder/stdlib.py): traced in a real Pyodide, cut, checked, cached."""

import ast
import fcntl
import io
import json
import shutil
import tokenize
import zipfile
from pathlib import Path

import pytest

import build
from builder import stdlib
from builder.assets import pack_sim

ROOT = Path(build.ROOT)
FULL_ZIP = ROOT / "node_modules" / "pyodide" / "python_stdlib.zip"
KEPT = build.Paths().stdlib  # the project's copy, committed


@pytest.fixture(scope="module")
def site_stdlib(tmp_path_factory) -> stdlib.Stdlib:
    """The cut as a trace makes it (never the project's copy, which a test holds to it): traced once per run, into
    node_modules' cache. Under pytest-xdist the first worker traces under a lock and the others take it from the
    cache, rather than each paying 20 s for the same trace."""
    with open(tmp_path_factory.getbasetemp().parent / "stdlib.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return stdlib.cut_stdlib(ROOT / "node_modules", pack_sim(ROOT / "sim")[1])


def test_the_cut_holds_exactly_the_traced_modules_that_are_not_frozen(site_stdlib):
    with zipfile.ZipFile(io.BytesIO(site_stdlib.data)) as zf:
        held = set(zf.namelist())
    assert held == {m.file for m in site_stdlib.modules if not m.frozen}
    names = {m.name for m in site_stdlib.modules}
    # Pyodide's boot, the worker's unpacking and the simulator's own imports are all found
    assert {"_pyodide._base", "asyncio", "zipfile", "json", "dataclasses", "decimal"} <= names
    assert not names & {"unittest", "tkinter", "sqlite3", "xml", "pydoc"}
    # Nor what the site took care not to need (sim/page/markup.py; the worker's FORGET_LISTINGS).
    assert not names & {"html", "html.entities", "importlib.metadata", "email"}
    frozen = {m.name for m in site_stdlib.modules if m.frozen}
    assert {"importlib._bootstrap", "os", "codecs"} <= frozen
    assert len(site_stdlib.data) < FULL_ZIP.stat().st_size / 3


def test_each_module_says_what_imported_it(site_stdlib):
    by_name = {m.name: m for m in site_stdlib.modules}
    assert by_name["asyncio"].during == "Pyodide's boot" and by_name["asyncio"].by is None
    decimal = by_name["decimal"]
    assert decimal.by == "sim.physics.presets" and decimal.during.startswith("import the widget ")
    assert f"decimal: decimal.py ({decimal.during}, imported by sim.physics.presets)" in site_stdlib.listing()


def test_sources_lose_their_comments_and_docstrings_and_nothing_else(site_stdlib):
    with zipfile.ZipFile(io.BytesIO(site_stdlib.data)) as cut, zipfile.ZipFile(FULL_ZIP) as full:
        for name in ("json/decoder.py", "enum.py", "decimal.py", "pyodide/webloop.py"):  # syntax 3.11 parses
            original, kept = full.read(name).decode(), cut.read(name).decode()
            comments = [t for t in tokenize.generate_tokens(io.StringIO(kept).readline) if t.type == tokenize.COMMENT]
            assert comments == [] and len(kept) < len(original), name
            assert ast.get_docstring(ast.parse(kept)) is None, name
            assert kept.count("\n") == original.count("\n"), name  # lines kept: tracebacks point where they did


def test_the_site_sends_the_cut_and_names_it(site_stdlib, tmp_path):
    out = tmp_path / "_site"
    build.build(build.Paths(lessons=Path(__file__).parent / "lessons", out=out))  # the small demo course
    assert (out / site_stdlib.site_path).read_bytes() == site_stdlib.data
    assert not (out / "vendor" / "pyodide" / "python_stdlib.zip").exists()
    page = (out / "demo" / "index.html").read_text(encoding="utf-8")
    assert f'data-stdlib-zip="{site_stdlib.site_path}"' in page


def test_a_second_build_takes_the_cut_from_the_cache(site_stdlib, monkeypatch):
    monkeypatch.setattr(stdlib, "_run_trace", lambda *args: pytest.fail("traced again"))
    assert stdlib.cut_stdlib(ROOT / "node_modules", pack_sim(ROOT / "sim")[1]).data == site_stdlib.data


def test_the_project_keeps_the_cut_this_simulator_needs(site_stdlib):
    """site/stdlib/ (committed) holds one cut, the one a trace of today's simulator makes, so that a fresh clone's
    first build need not trace."""
    name = stdlib.key(ROOT / "node_modules", pack_sim(ROOT / "sim")[1])
    kept = sorted(p.name for p in KEPT.iterdir())
    assert kept == [f"{name}.json", f"{name}.zip"], (
        f"site/stdlib/ holds {kept}, not the cut this simulator needs ({name}): run '.venv/bin/python build.py "
        "build', which renews it, and commit site/stdlib/")
    assert (KEPT / f"{name}.zip").read_bytes() == site_stdlib.data
    assert (KEPT / f"{name}.json").read_bytes() == site_stdlib.listing_json()


def test_a_fresh_clone_takes_the_cut_from_the_project_and_only_a_build_that_writes_renews_it(monkeypatch, tmp_path):
    sim_zip = pack_sim(ROOT / "sim")[1]
    name = stdlib.key(ROOT / "node_modules", sim_zip)
    monkeypatch.setattr(stdlib, "_run_trace", lambda *args: pytest.fail("traced"))
    fresh = stdlib.cut_stdlib(ROOT / "node_modules", sim_zip, cache_dir=tmp_path / "empty cache", kept=KEPT)
    assert fresh.data == (KEPT / f"{name}.zip").read_bytes() and not list((tmp_path / "empty cache").glob("stdlib-*"))
    # A project holding another simulator's cut: renewed from the cache by a build that writes, and only by one.
    project = tmp_path / "stdlib"
    project.mkdir()
    for suffix in (".zip", ".json"):
        (project / f"stdlib-0123456789abcdef{suffix}").write_bytes(b"another simulator's")
    cache = tmp_path / "cache"  # holding this simulator's cut
    shutil.copytree(KEPT, cache)
    stdlib.cut_stdlib(ROOT / "node_modules", sim_zip, cache_dir=cache, kept=project)
    assert len(list(project.iterdir())) == 2 and not (project / f"{name}.zip").exists()
    renewed = stdlib.cut_stdlib(ROOT / "node_modules", sim_zip, cache_dir=cache, kept=project, keep=True)
    assert sorted(p.name for p in project.iterdir()) == [f"{name}.json", f"{name}.zip"]
    assert (project / f"{name}.zip").read_bytes() == renewed.data == fresh.data
    assert (project / f"{name}.json").read_bytes() == (KEPT / f"{name}.json").read_bytes()


def test_the_cut_is_kept_until_the_simulator_imports_something_else(tmp_path):
    sim = tmp_path / "sim"
    shutil.copytree(ROOT / "sim", sim, ignore=shutil.ignore_patterns("__pycache__"))
    before = stdlib.imported_names(pack_sim(sim)[1])
    (sim / "redeploy.py").write_text('"""A change to the simulator."""\nimport math\n', encoding="utf-8")
    assert stdlib.imported_names(pack_sim(sim)[1]) == before
    (sim / "redeploy.py").write_text("from importlib import resources\n", encoding="utf-8")
    after = stdlib.imported_names(pack_sim(sim)[1]).decode().split("\n")
    assert {"importlib", "importlib.resources"} <= set(after) and not any(n.startswith("sim") for n in after)


def test_a_module_missing_from_the_cut_fails_the_check(site_stdlib, tmp_path):
    """The check run, in Pyodide, with a cut that lacks one module the trace found."""
    lacking = "dataclasses.py"
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(site_stdlib.data)) as source, zipfile.ZipFile(buffer, "w") as zf:
        for info in source.infolist():
            if info.filename != lacking:
                zf.writestr(info, source.read(info))
    (tmp_path / "stdlib.zip").write_bytes(buffer.getvalue())
    (tmp_path / "sim.zip").write_bytes(pack_sim(ROOT / "sim")[1])
    (tmp_path / "plan.json").write_text(json.dumps(
        {"states": [], "imports": [m.name for m in site_stdlib.modules], "sources": False}))
    rerun = stdlib._run_trace(ROOT / "node_modules", tmp_path / "stdlib.zip", tmp_path)
    with pytest.raises(stdlib.StdlibError, match="dataclasses"):
        stdlib._check(site_stdlib, rerun)


def test_a_new_import_in_the_simulator_is_traced(tmp_path):
    sim = tmp_path / "sim"
    shutil.copytree(ROOT / "sim", sim, ignore=shutil.ignore_patterns("__pycache__"))
    widget = sim / "widgets" / "roofline.py"
    text = widget.read_text(encoding="utf-8").replace("import math\n", "import fractions  # noqa: F401\nimport math\n", 1)
    assert "import fractions" in text
    widget.write_text(text, encoding="utf-8")
    (tmp_path / "sim.zip").write_bytes(pack_sim(sim)[1])
    (tmp_path / "plan.json").write_text(json.dumps({"states": [], "imports": [], "sources": False}))
    traced = stdlib._run_trace(ROOT / "node_modules", FULL_ZIP, tmp_path)
    assert traced["failures"] == []
    fractions = traced["modules"]["fractions"]
    assert (fractions["by"], fractions["during"]) == ("sim.widgets.roofline", "import the widget roofline")
