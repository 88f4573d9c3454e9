"""Configurations that do not fit: what the simulator was asked to time beyond the memory it counts itself.

A lesson may quote a step's time, a speed-up or a cost only for a configuration that can run: its weights and every
request's cache within the GPU's memory, as the simulator counts them (memory.py's convention). The functions a
lesson quotes a configuration through (roofline.decode, quantization.decode, speculative.Speculation,
interference.interfere) tell `note` what that configuration needs and what the GPU has. Outside `recorded()` a note
costs a comparison and is dropped; inside, a configuration that does not fit is kept, and the build fails the
`{sim}` expression that asked for it at its line (builder/markdown.py), unless the expression says it knows:
`as_if_it_fit(x)` returns x and accepts what x needed, and the sentence around it must say so in words.

The simulator's own searches (the smallest batch at which something turns compute-bound, the batch at which
speculation stops paying) try configurations that are not quoted; they run inside `unquoted()`, which drops their
notes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple


class Overflow(NamedTuple):
    what: str  # the configuration, in words: "qwen3.8-27b on A100 SXM 80 GB, batch 128, context 1,024"
    need_bytes: float
    have_bytes: float


@dataclass
class Ledger:
    overflows: list[Overflow] = field(default_factory=list)
    accepted: list[Overflow] = field(default_factory=list)  # what as_if_it_fit accepted


_open: list[Ledger] = []
_unquoted = 0  # depth of unquoted() scopes


def note(what, need_bytes: float, have_bytes: float) -> None:
    """A configuration a lesson may quote: kept if it does not fit and a ledger is open. `what` may be a callable
    that returns the words, so that a configuration that fits costs no formatting."""
    if need_bytes > have_bytes and _open and not _unquoted:
        overflow = Overflow(what() if callable(what) else what, need_bytes, have_bytes)
        if overflow not in _open[-1].overflows:
            _open[-1].overflows.append(overflow)


@contextlib.contextmanager
def recorded() -> Iterator[Ledger]:
    """Keep what is noted meanwhile (the build opens one around each {sim} expression)."""
    ledger = Ledger()
    _open.append(ledger)
    try:
        yield ledger
    finally:
        _open.pop()


@contextlib.contextmanager
def unquoted() -> Iterator[None]:
    """A search's trial configurations: not quotes, so not noted."""
    global _unquoted
    _unquoted += 1
    try:
        yield
    finally:
        _unquoted -= 1


def as_if_it_fit(value):
    """`value`, computed for configurations that do not fit, as a lesson means it: what was noted is accepted."""
    if _open:
        ledger = _open[-1]
        ledger.accepted.extend(ledger.overflows)
        ledger.overflows.clear()
    return value
