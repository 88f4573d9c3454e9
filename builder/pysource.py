"""Python source as the browser gets it: comments and docstrings taken out, nothing else changed.

The browser's Python needs a module's code, not its comments or docstrings, and every byte of them is a byte a
student waits for on a first visit. `strip` takes them out and proves it changed nothing else: the result must
parse to the same syntax tree as the original with its docstrings removed, or the original is kept. Lines stay
where they were (a docstring's lines become blank), so a traceback from the browser points where it does in the
source. A docstring is the only statement of some bodies (`class Error(Exception): "…"`): it becomes `...` there.

Standard library only, and written for every Python the project meets: builder/assets.py runs it in CPython on the
simulator, and builder/stdlib_trace.mjs runs this same file in Pyodide's Python on its standard library, whose
syntax may be newer than the builder's CPython. `__doc__` is then None, as under `python -OO`, which the standard
library supports; the simulator never reads a docstring (tests/builder/test_pysource.py checks that).
"""

from __future__ import annotations

import ast
import functools
import io
import tokenize

_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _docstring(node: ast.AST) -> ast.Expr | None:
    """The docstring statement of a module, class or function, if it has one."""
    first = node.body[0] if isinstance(node, _DOCUMENTED) and node.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first
    return None


def _without_docstrings(tree: ast.Module) -> ast.Module:
    """`tree` with every docstring removed (`...` where it was the whole body): what `strip` must give."""
    for node in ast.walk(tree):
        if _docstring(node):
            node.body = node.body[1:] or [ast.Expr(ast.Constant(...))]
    return tree


def _same(a: ast.AST, b: ast.AST) -> bool:
    """Whether two syntax trees are equal as ast.dump compares them (fields, not positions), without writing either
    out: a walk that stops at the first difference, several times faster than comparing two dumps."""
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, ast.AST):
            pending.extend((getattr(x, f, None), getattr(y, f, None)) for f in x._fields)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            pending.extend(zip(x, y))
        elif x != y:  # a leaf: a name, an operator's value, a constant (of the same type, checked above)
            return False
    return True


def _tidy(line: bytes) -> bytes:
    """An edited line, blank if nothing but spaces is left of it."""
    return line if line.strip() else (b"\n" if line.endswith(b"\n") else b"")


@functools.cache  # pure; a rebuild (build.py serve, bench) strips only the files that changed
def strip(text: str) -> str:
    """`text` without its comments and docstrings, on the same lines; `text` itself if that would change its code."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text  # not for this Python to judge: sent as it is
    lines = [line.encode() for line in io.StringIO(text).readlines()]  # ast's columns count UTF-8 bytes
    # Comments first, from the tokenizer (a '#' inside a string is no comment); then docstrings, last to first so
    # that an edit never moves the columns of one still to come on the same line.
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            row, column = token.start[0] - 1, len(token.line[:token.start[1]].encode())
            lines[row] = lines[row][:column].rstrip() + (b"\n" if lines[row].endswith(b"\n") else b"")
    documented = [node for node in ast.walk(tree) if _docstring(node)]
    for node in sorted(documented, key=lambda n: (n.body[0].lineno, n.body[0].col_offset), reverse=True):
        statement, alone = node.body[0], len(node.body) == 1
        first, last = statement.lineno - 1, statement.end_lineno - 1
        head = lines[first][:statement.col_offset]
        tail = lines[last][statement.end_col_offset:]
        filler = b"..." if alone else b""
        if first == last:
            lines[first] = _tidy(head + filler + tail)
        else:
            lines[first] = _tidy(head + filler + b"\n")
            for row in range(first + 1, last):
                lines[row] = b"\n"
            lines[last] = _tidy(tail)
    stripped = b"".join(lines).decode()
    try:
        same = _same(ast.parse(stripped), _without_docstrings(tree))
    except SyntaxError:
        same = False
    return stripped if same else text
