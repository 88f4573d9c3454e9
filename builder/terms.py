"""The glossary behind clickable formula terms.

lessons/terms.yml lists each term's key with what it links to: `output`, the widget output that holds its
value now, and `control`, the widget control that changes it (either may be left out). Its words are per
language, in lessons/<lang>/catalog.yml under `terms.KEY`: a name, a unit and a short text. A formula
writes \\term{KEY}{LaTeX}.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from builder import yamltext
from builder.catalogs import Catalog
from builder.problems import Problem
from builder.usage import TERM, Missing, Usage

KEY = re.compile(r"^[a-z][a-z0-9_]*$")
LINKS = ("output", "control")
WORDS = ("name", "unit", "text")


@dataclass(frozen=True)
class Term:
    key: str
    output: str | None  # the linked widget's output holding the term's value now
    control: str | None  # the linked widget's control that changes it
    words: Mapping[str, Mapping[str, str]]  # lang -> {"name", "unit", "text"}

    def for_page(self, lang: str) -> dict:
        """What the page's term panel shows (plain text only). A word the language lacks is empty: a page that uses
        the term is then never written, since load_terms reports the words its language needs."""
        words = self.words.get(lang, {})
        return {**{field: words.get(field) or "" for field in WORDS}, "output": self.output, "control": self.control}


def load_terms(path: Path, catalogs: dict[str, Catalog], usage: Usage | None = None,
               missing: list[Missing] | None = None) -> tuple[dict[str, Term], list[Problem]]:
    """Every term, with its words in each catalog's language; problems name file and line. A term's words are
    required in the languages whose pages use it (every language, without a Usage); what another language lacks is
    added to `missing`, for the note on what a translation will need."""
    links, problems = _load_links(path)
    words: dict[str, dict[str, dict[str, str]]] = {key: {} for key in links}
    for lang, catalog in catalogs.items():
        section = catalog.section("terms")
        for key in links:
            entry = {field: section.get(f"{key}.{field}") for field in WORDS}
            lacking = [field for field, text in entry.items() if text is None]
            if lacking and (usage is None or lang in usage.languages(TERM, key)):
                line = catalog.lines.get(f"terms.{key}", catalog.lines.get("terms", 1))
                problems.append(Problem(catalog.path, line, f"term {key!r} needs {', '.join(lacking)} in {lang}"))
            elif lacking and missing is not None:
                missing.append(Missing(lang, TERM, key))
            words[key][lang] = entry
        for dotted in section:
            key, _, field = dotted.partition(".")
            if key not in links:
                problems.append(Problem(catalog.path, catalog.lines[f"terms.{dotted}"],
                                        f"term {key!r} is not in {path.name}: add it there with its links"))
                break
            if field not in WORDS:
                problems.append(Problem(catalog.path, catalog.lines[f"terms.{dotted}"],
                                        f"term {key!r}: unknown field {field!r}; a term has {', '.join(WORDS)}"))
    terms = {key: Term(key, links[key].get("output"), links[key].get("control"), words[key]) for key in links}
    return terms, problems


def _load_links(path: Path) -> tuple[dict[str, dict[str, str]], list[Problem]]:
    if not path.is_file():
        return {}, []
    try:
        data = yamltext.safe_load(path.read_text(encoding="utf-8-sig")) or {}
        root = yamltext.compose(path.read_text(encoding="utf-8-sig"))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        return {}, [Problem(path, 1 + (mark.line if mark else 0), f"not valid YAML: {getattr(e, 'problem', e)}")]
    if not isinstance(data, dict):
        return {}, [Problem(path, 1, f"{path.name} is a mapping of KEY: {{output: …, control: …}}")]
    key_line = {node.value: node.start_mark.line + 1 for node, _ in root.value}
    links, problems = {}, []
    for key, entry in data.items():
        line = key_line.get(key, 1)
        entry = {} if entry is None else entry
        if not isinstance(key, str) or not KEY.match(key):
            problems.append(Problem(path, line, f"term key {key!r} must be lowercase letters, digits and underscores"))
        elif not isinstance(entry, dict) or set(entry) - set(LINKS) or \
                not all(isinstance(v, str) for v in entry.values()):
            problems.append(Problem(path, line, f"term {key}: only 'output' and 'control' (text) go here; its "
                                                "words are in lessons/<lang>/catalog.yml under terms"))
        else:
            links[key] = entry
    return links, problems
