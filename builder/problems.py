"""Build problems: every one names a file and a line, and all of a build's problems are reported together."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """' (did you mean 'X'?)' for the known name nearest a mistyped one, or '' when none is near."""
    near = difflib.get_close_matches(word, [str(k) for k in known], n=1, cutoff=0.6)
    return f" (did you mean {near[0]!r}?)" if near else ""


@dataclass(frozen=True)
class Problem:
    path: Path
    line: int  # 1-based
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class BuildFailed(Exception):
    """Raised with every problem a build found; nothing was written."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(map(str, problems)))


class LessonError(Exception):
    """One problem at a line of the lesson being processed (the caller adds the path)."""

    def __init__(self, line: int, message: str):
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}")


class LessonErrors(LessonError):
    """Several problems found by one directive; reported one by one."""

    def __init__(self, errors: list[LessonError]):
        self.errors = errors
        super().__init__(errors[0].line, errors[0].message)
