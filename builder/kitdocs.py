"""The guide's reference of the widget kit, generated from the code: each constructor and helper a widget author
calls, with its signature (inspect.signature) and its docstring, written into lessons/README.md between two
marker lines. The guide then never names an argument the code does not take, and a docstring is the one place that
explains one.

    .venv/bin/python -m builder.kitdocs           rewrite the section
    .venv/bin/python -m builder.kitdocs --check   exit status 1, saying so, if the section differs from the code's
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from pathlib import Path

from builder.expressions import namespace
from sim import kit
from sim.kit import alt, capacity, choices, palette, table
from sim.page import display

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "lessons" / "README.md"
COMMAND = ".venv/bin/python -m builder.kitdocs"
BEGIN = (f"<!-- kit reference: written by `{COMMAND}` from the docstrings of sim/kit/ and sim/page/display.py; edit "
         "those, not these lines -->")
END = "<!-- kit reference ends -->"
# What sim.kit exports for the builder, not for a widget's module.
NOT_FOR_WIDGETS = {"config_problems": "the build's check of a lesson's settings", "words": "the build's words"}


def _functions(module) -> tuple:
    """A module's public functions, in the order its file defines them."""
    return tuple(f for name, f in vars(module).items()
                 if inspect.isfunction(f) and f.__module__ == module.__name__ and not name.startswith("_"))


# (heading, the file, how a widget names them: a prefix, the objects), in the order a widget module reads.
SECTIONS = (
    ("The declaration", "sim/kit/__init__.py", "", (kit.Widget,)),
    ("Controls", "sim/kit/controls.py", "", (kit.Range, kit.Range.over, kit.Select, kit.Number)),
    ("Controls every lesson shares", "sim/kit/choices.py", "choices.", _functions(choices)),
    ("Layout", "sim/kit/layout.py", "", (kit.Controls, kit.Readouts, kit.Readout, kit.Flag, kit.Text, kit.Output,
                                         kit.Figure, kit.Svg, kit.Table, kit.Row, kit.Derivations, kit.Panel)),
    ("The view", "sim/kit/view.py", "", (kit.view, kit.output)),
    ("Colours", "sim/kit/palette.py", "palette.", _functions(palette)),
    ("Tables drawn by render", "sim/kit/table.py", "table.", _functions(table)),
    ("Text alternatives of a figure", "sim/kit/alt.py", "alt.", _functions(alt)),
    ("The capacity flag", "sim/kit/capacity.py", "capacity.", _functions(capacity)),
    ("Numbers as text", "sim/page/display.py", "",
     tuple(f for f in _functions(display) if f.__name__.startswith("fmt_") or f is display.step_time_derivation)),
)


def documented() -> list:
    """Every object the reference documents."""
    return [obj for *_, objects in SECTIONS for obj in objects]


def signature(obj, prefix: str = "") -> str:
    """How a widget calls it: `Range(name, default, min, max, step=1, …)`, without annotations (the docstring says
    what each argument is) and without the fields a constructor sets itself."""
    plain = inspect.signature(obj)
    plain = plain.replace(parameters=[p.replace(annotation=inspect.Parameter.empty) for p in plain.parameters.values()],
                          return_annotation=inspect.Signature.empty)
    return f"{prefix}{obj.__qualname__}{plain}"


def docstring(obj) -> str:
    """The object's own docstring (a dataclass without one would get its generated signature: refused)."""
    text = obj.__doc__
    if not text or (inspect.isclass(obj) and text.startswith(f"{obj.__name__}(")):
        raise ValueError(f"{obj.__module__}.{obj.__qualname__} has no docstring: write one that says what each "
                         "argument is")
    return _markdown(inspect.cleandoc(text))


def _markdown(text: str) -> str:
    """Docstring text as Markdown shows it: a `<` that would open an HTML tag (`the <tr>'s attributes`) escaped,
    outside code spans."""
    parts = text.split("`")
    return "`".join(re.sub(r"<(?=[A-Za-z/!])", "&lt;", part) if i % 2 == 0 else part for i, part in enumerate(parts))


def arguments(obj) -> list[str]:
    """The names of its arguments, as a docstring quotes them (`name`)."""
    return [p.name for p in inspect.signature(obj).parameters.values()]


def section() -> str:
    """The reference, as the lines between the markers."""
    in_lessons = {f: name for name, f in namespace().items() if callable(f) and f in vars(display).values()}
    out = [BEGIN, ""]
    for heading, path, prefix, objects in SECTIONS:
        out += [f"### {heading} (`{path}`)", ""]
        for obj in objects:
            out += [f"#### `{signature(obj, prefix)}`", "", docstring(obj), ""]
            if obj in in_lessons:
                out += [f"A lesson's `{{sim}}` figures call it `{in_lessons[obj]}`.", ""]
    return "\n".join(out + [END])


def rewritten(text: str) -> str:
    """`text` (the guide) with the reference between its markers as the code gives it."""
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise ValueError(f"the guide holds the kit reference between one line {BEGIN!r} and one line {END!r}")
    head, rest = text.split(BEGIN)
    return head + section() + rest.split(END)[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m builder.kitdocs", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare: exit status 1 if the section is stale")
    parser.add_argument("--readme", type=Path, default=README, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    text = args.readme.read_text(encoding="utf-8")
    try:
        fresh = rewritten(text)
    except ValueError as e:  # the markers, or a docstring, missing
        print(f"{args.readme.name}: {e}", file=sys.stderr)
        return 2
    if args.check:
        if fresh != text:
            print(f"{args.readme.name}: the kit reference differs from the code's docstrings: run {COMMAND}",
                  file=sys.stderr)
            return 1
        return 0
    if fresh != text:
        args.readme.write_text(fresh, encoding="utf-8")
        print(f"rewrote the kit reference in {args.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
