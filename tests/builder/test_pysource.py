"""builder/pysource.py: Python source without its comments and docstrings, on the same lines, or unchanged."""

import ast
import io
import re
import tokenize
import zipfile
from pathlib import Path

import build
from builder.assets import pack_sim
from builder.pysource import strip

SOURCE = '''"""A module's docstring."""
from __future__ import annotations

import os  # a comment after code
# a comment alone
class Error(Exception): """Only a docstring."""


class Kept:
    """Two
    lines."""

    hash = "#not a comment"  # but this is
    text = """a string\x20\x20\x20
    that is no docstring"""


def café(x):
    """Its columns count bytes: é is two."""
    return x


async def waits():
    "A docstring in single quotes."
    return await os.fspath("")
'''


def test_comments_and_docstrings_go_and_the_code_stays():
    kept = strip(SOURCE)
    assert kept.count("\n") == SOURCE.count("\n")  # a traceback points where it did
    assert "#not a comment" in kept and "a string   \n    that is no docstring" in kept
    assert not re.search(r"docstring\.|Two|lines\.|columns|single quotes|# a comment|# but", kept)
    assert "class Error(Exception): ...\n" in kept
    tree = ast.parse(kept)
    assert all(ast.get_docstring(node) is None for node in ast.walk(tree)
               if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)))
    assert [type(node).__name__ for node in tree.body] == \
        ["ImportFrom", "Import", "ClassDef", "ClassDef", "FunctionDef", "AsyncFunctionDef"]
    namespace = {}
    exec(compile(kept, "kept", "exec"), namespace)
    assert namespace["café"](3) == 3 and namespace["Kept"].hash == "#not a comment"


def test_a_file_it_cannot_strip_safely_is_sent_as_it_is():
    semicolon = 'def f():\n    """doc"""; return 1\n'  # taking the docstring out would leave "; return 1"
    assert strip(semicolon) == semicolon
    newer = "type Pair = tuple[int, int]  # syntax the builder's Python may not parse\n"
    try:
        ast.parse(newer)
    except SyntaxError:
        assert strip(newer) == newer


def test_the_simulator_is_sent_stripped_and_never_reads_a_docstring():
    sim = Path(build.ROOT) / "sim"
    readers = [path for path in sim.rglob("*.py")
               if re.search(r"__doc__|getdoc|get_docstring", path.read_text(encoding="utf-8"))]
    assert readers == []  # under stripping __doc__ is None; nothing may depend on it
    with zipfile.ZipFile(io.BytesIO(pack_sim(sim)[1])) as zf:
        original = (sim / "physics" / "roofline.py").read_text(encoding="utf-8")
        sent = zf.read("sim/physics/roofline.py").decode()
    assert ast.get_docstring(ast.parse(original)) and ast.get_docstring(ast.parse(sent)) is None
    assert sent.count("\n") == original.count("\n")
    assert not [t for t in tokenize.generate_tokens(io.StringIO(sent).readline) if t.type == tokenize.COMMENT]
