"""Figures from random traces, and the claims a lesson makes about them, held against other traces.

A serving figure ({sim}`slo.goodput(…)`, {sim}`scheduler.serve(…)`, a share over kv_layout's requests) comes from one
random trace: seed 0, the trace the page's widgets draw. Another seed draws another trace of the same kind and gives
another figure, sometimes 10 % away. So the build runs every such figure again on SEEDS, ten other traces, and:

- prints it with no digit finer than the leading digit of the standard deviation of its eleven values (seed 0 and
  the ten; sim/page/display.py coarse()): 6.80 becomes 6.8 when the seeds move it by 0.3, and 598.73 ms becomes 600 ms
  when they move it by 80 ms. The page's figure stays seed 0's, the one a student finds in the widget; its note
  gives the range over the eleven traces;
- checks each {claim}`EXPR` of a lesson, a comparison its prose makes written as a Python expression (True or
  False): it must hold on seed 0 and on at least HOLD of the ten others, or the build fails at its line.

What counts as a trace seed: a parameter named `seed` with an int default, in a function of a sim module (the
trace-drawing functions of scheduler, slo and kv_layout take one, and pass it on). An expression is *seeded* when
its evaluation calls such a function. To run it on seed k, every sim module the expression names is replaced by a
proxy whose seeded functions get seed=k unless the expression gave one itself. (Monte Carlo draws that are not
traces take a str seed and are left alone: sampling's and speculative decoding's are fixed examples, not samples of
a workload.)

The ten other seeds cost about ten times the figures themselves (a few minutes for the serving lessons), so they are
computed in parallel, one process per core, and kept in the frozen store (builder/frozen.py, kind "seeds") like every
other figure, for the code they depend on.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

from sim.page import display

SEEDS = tuple(range(1, 11))  # the ten other traces
HOLD = 9  # a claim holds on at least this many of them
ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Calls:
    """What one evaluation did: whether it called a seeded function, and each formatter it called, in order."""

    seeded: bool = False
    formatted: list = field(default_factory=list)  # [(formatter, args, kwargs)]


class _Reseeded:
    """A sim module whose seeded functions are called with `seed` (None: as given), noting the call in `calls`."""

    def __init__(self, module: types.ModuleType, seed: int | None, calls: Calls):
        self._module, self._seed, self._calls = module, seed, calls

    def __getattr__(self, name: str):
        value = getattr(self._module, name)
        if not _takes_seed(value):
            return value
        seed, calls = self._seed, self._calls

        def call(*args, **kwargs):
            calls.seeded = True
            if seed is not None and "seed" not in kwargs and len(args) <= _position(value):
                kwargs["seed"] = seed
            return value(*args, **kwargs)
        return call


def _takes_seed(value) -> bool:
    if not isinstance(value, types.FunctionType) and not hasattr(value, "__wrapped__"):
        return False
    try:
        parameter = inspect.signature(value).parameters.get("seed")
    except (TypeError, ValueError):
        return False
    return parameter is not None and type(parameter.default) is int


def _position(function) -> int:
    """How many positional arguments come before `seed` (a call that gives more has given the seed)."""
    return list(inspect.signature(function).parameters).index("seed")


def reseeded(names: dict, seed: int | None, calls: Calls) -> dict:
    """`names` with its sim modules and seeded functions running on trace `seed` (None: each as the expression says)
    and its formatters (sim/page/display.py) noting what they were given."""
    out = dict(names)
    for key, value in names.items():
        if isinstance(value, types.ModuleType) and value.__name__.startswith("sim."):
            out[key] = _Reseeded(value, seed, calls)
        elif getattr(value, "__module__", None) == display.__name__ and callable(value):
            out[key] = _noting(value, calls)
        elif _takes_seed(value):
            out[key] = _Reseeded(types.SimpleNamespace(f=value), seed, calls).f
    return out


def _noting(formatter, calls: Calls):
    def call(*args, **kwargs):
        calls.formatted.append((formatter, args, kwargs))
        return formatter(*args, **kwargs)
    return call


def value_of(result, calls: Calls):
    """The number a seeded figure shows: what its (only) formatter was given, or the int it gave unformatted; a
    claim's truth."""
    if isinstance(result, bool) or not calls.formatted:
        return result
    return calls.formatted[-1][1][0]


def coarse_text(shape: dict, values: list) -> tuple[str, str, str]:
    """A seeded figure's text at the precision its values allow, and the lowest and highest of them in the same
    form. `shape`: its formatter, as frozen ({"format": name, "args": [...], "kwargs": {...}}); values: seed 0 first."""
    unit = display.spread_unit(values)
    form = getattr(display, shape["format"])
    args, kwargs = shape["args"], shape["kwargs"]
    return tuple(display.coarse(form, v, args, kwargs, unit) for v in (values[0], min(values), max(values)))


def shape_of(calls: Calls) -> dict:
    """How a seeded figure was formatted, to format it again at a coarser precision (JSON, as frozen)."""
    if not calls.formatted:
        return {"format": display.fmt_grouped.__name__, "args": [], "kwargs": {}}
    formatter, args, kwargs = calls.formatted[-1]
    return {"format": formatter.__name__, "args": list(args[1:]), "kwargs": dict(kwargs)}


def problem(calls: Calls) -> str | None:
    """Why a seeded figure cannot be shown at its spread's precision, if it cannot."""
    if len(calls.formatted) > 1:
        return ("a figure from a random trace must be one formatted number (it is printed at the precision the "
                "trace's seed allows); this one calls " + ", ".join(f.__name__ for f, _, _ in calls.formatted))
    if calls.formatted and not display.can_coarsen(calls.formatted[-1][0]):
        return f"a figure from a random trace cannot be shown with {calls.formatted[-1][0].__name__}: use sig or fixed"
    return None


def others(expressions: list[str]) -> dict[str, list]:
    """Each expression on the ten other seeds: {expr: [value on seed k for k in SEEDS]} (an entry {"error": text}
    where it failed), the seeds dealt to one process per core (`python -m builder.expressions`, which evaluates them:
    each its own simulator caches, shared by the expressions on a seed)."""
    if not expressions:
        return {}
    workers = max(1, min(len(SEEDS), os.cpu_count() or 1))
    dealt = [SEEDS[k::workers] for k in range(workers)]
    runs = [subprocess.Popen([sys.executable, "-m", "builder.expressions"], cwd=ROOT, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True) for _ in dealt]
    for run, some in zip(runs, dealt):
        run.stdin.write(json.dumps({"expressions": expressions, "seeds": list(some)}))
        run.stdin.close()
    found: dict[int, dict] = {}
    for run in runs:
        out = run.stdout.read()
        if run.wait() != 0:
            raise RuntimeError(f"builder.expressions exited with status {run.returncode}")
        found.update({int(k): v for k, v in json.loads(out).items()})
    out = {}
    for expr in expressions:
        failed = next((found[k][expr] for k in SEEDS if isinstance(found[k][expr], dict)), None)
        out[expr] = failed or [found[k][expr] for k in SEEDS]
    return out
