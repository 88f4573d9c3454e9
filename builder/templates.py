"""The Jinja environment pages and widgets are rendered with, and how numbers print in them."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from pathlib import Path

import jinja2


def js_number(value):
    """Floats printed as JavaScript's String(number) prints them, so that a pre-rendered data-value is the
    text the page script later writes for the same number (208.0 -> "208", 1.6e-05 -> "0.000016")."""
    if not isinstance(value, float) or not math.isfinite(value):
        return value
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if 1e-7 <= abs(value) < 1e21:
        return format(Decimal(repr(value)), "f")
    mantissa, exponent = repr(value).split("e")
    return f"{mantissa}e{int(exponent):+d}"


def json_island(data) -> str:
    """JSON safe to embed in <script type="application/json">: no '<' can close the element."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def fill(text: str, **values) -> str:
    """A catalog text with its {placeholders} filled: {{ ui.lesson.minutes | fill(minutes=40) }}."""
    return text.format(**values)


class _CompiledTemplates(jinja2.BytecodeCache):
    """Compiled templates kept for the life of the process, by template file and source checksum (a changed
    source compiles again): a process that builds more than once, as the tests do, compiles each template once.
    Every environment shares the options that compiling depends on, since make_templates makes them all."""

    def __init__(self):
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if (code := self._code.get(bucket.key)) is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _CompiledTemplates()


class _KeptTemplates(jinja2.FileSystemBytecodeCache):
    """The process's compiled templates, and on disk as well, for the next process: `build.py serve` rebuilds in a
    fresh one after every save, where compiling the page and widget templates took a third of a second. Jinja
    checks each against its source's checksum (and its own and Python's versions), so a changed template compiles
    again."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        _COMPILED.load_bytecode(bucket)
        if bucket.code is None:
            super().load_bytecode(bucket)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        _COMPILED.dump_bytecode(bucket)
        super().dump_bytecode(bucket)


def make_templates(folder: Path, compiled: Path | None = None, **globals_) -> jinja2.Environment:
    """Templates from `folder`; a name or key a template uses that does not exist is an error, never blank.
    `compiled`: a folder where compiled templates are kept from one process to the next (none: for this one)."""
    if compiled is not None:
        compiled.mkdir(parents=True, exist_ok=True)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        bytecode_cache=_COMPILED if compiled is None else _KeptTemplates(str(compiled)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=js_number,
    )
    env.filters["fill"] = fill
    env.globals.update(globals_)
    return env
