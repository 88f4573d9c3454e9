"""The glossary behind clickable formula terms (lessons/terms.yml).

Each term: per language a name, a unit and a short explanation; optionally the widget output that
holds its value now and the control that changes it. A formula writes \\term{KEY}{LaTeX}.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from builder.problems import Problem

KEY = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Term:
    key: str
    text: dict[str, dict[str, str]]  # lang -> {"name", "unit", "text"}
    output: str | None  # the linked widget's output holding the term's value now
    control: str | None  # the linked widget's parameter that changes it
    line: int

    def for_page(self, lang: str) -> dict:
        """What the page's term panel shows (plain text only)."""
        words = self.text.get(lang) or self.text["zh"]
        return {**words, "output": self.output, "control": self.control}


def load_terms(path: Path) -> tuple[dict[str, Term], list[Problem]]:
    if not path.is_file():
        return {}, []
    source = path.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(source) or {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        return {}, [Problem(path, 1 + (mark.line if mark else 0), f"not valid YAML: {getattr(e, 'problem', e)}")]
    key_line = {raw.split(":", 1)[0]: i + 1 for i, raw in enumerate(source.splitlines())
                if raw and not raw[0].isspace() and ":" in raw}
    terms, problems = {}, []
    if not isinstance(data, dict):
        return {}, [Problem(path, 1, "terms.yml is a mapping of KEY: {zh: {name, unit, text}, output, control}")]
    for key, entry in data.items():
        line = key_line.get(str(key), 1)
        problem = _entry_problem(key, entry)
        if problem:
            problems.append(Problem(path, line, problem))
            continue
        text = {lang: entry[lang] for lang in ("zh", "en") if lang in entry}
        terms[key] = Term(key, text, entry.get("output"), entry.get("control"), line)
    return terms, problems


def _entry_problem(key, entry) -> str | None:
    if not isinstance(key, str) or not KEY.match(key):
        return f"term key {key!r} must be lowercase letters, digits and underscores"
    if not isinstance(entry, dict) or "zh" not in entry:
        return f"term {key}: needs at least a 'zh' entry"
    for lang in ("zh", "en"):
        words = entry.get(lang)
        if words is not None and not (isinstance(words, dict) and {"name", "unit", "text"} <= set(words)
                                      and all(isinstance(v, str) for v in words.values())):
            return f"term {key}: '{lang}' needs text fields name, unit and text"
    unknown = set(entry) - {"zh", "en", "output", "control"}
    if unknown:
        return f"term {key}: unknown field(s) {', '.join(sorted(unknown))}"
    for field_name in ("output", "control"):
        if field_name in entry and not isinstance(entry[field_name], str):
            return f"term {key}: '{field_name}' must be text"
    return None
