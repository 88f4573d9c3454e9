"""Catalogs: every user-visible string, once per language, and the checks that keep the languages whole.

Two kinds, like the catalogs of well-kept site generators (MkDocs' locale files, Docusaurus'
i18n/<locale>/code.json):
- YAML files, one per language: the page chrome (site/i18n/<lang>.yml) and a course's own words
  (lessons/<lang>/catalog.yml). Nested keys, read with their line numbers.
- The TEXT of a sim/ module (a widget's labels, readouts and notes): a dict literal with one block per
  language, read here from the module's source so that a problem points at its line.

In both, every language has the keys of the default language (sim/page/languages.py), with the same
{placeholders}. A problem names the file and line of what is missing or wrong.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import string
from dataclasses import dataclass
from pathlib import Path

import yaml

from builder import yamltext
from builder.cache import Cache
from builder.problems import Problem
from builder.usage import QUESTION, WIDGET, WORDS, Missing, Usage
from sim.page.languages import DEFAULT, LANGUAGES


@dataclass(frozen=True)
class Catalog:
    """One language's YAML catalog: dotted key -> text, with the line of each key."""

    path: Path
    lang: str
    texts: dict[str, str]
    lines: dict[str, int]

    def tree(self) -> dict:
        """The texts as nested dicts (what templates look up: ui.home.title)."""
        root: dict = {}
        for key, text in self.texts.items():
            node = root
            *parents, leaf = key.split(".")
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = text
        return root

    def section(self, name: str) -> dict[str, str]:
        """The texts under `name.`, keyed by the rest of their key."""
        prefix = f"{name}."
        return {key[len(prefix):]: text for key, text in self.texts.items() if key.startswith(prefix)}


def load_catalog(path: Path, lang: str, required: bool = True) -> tuple[Catalog, list[Problem]]:
    """A YAML catalog (nested mappings of text); a missing file is an empty catalog, and a problem if required."""
    empty = Catalog(path, lang, {}, {})
    if not path.is_file():
        return empty, [Problem(path, 1, f"the {lang} catalog is missing: copy {path.with_stem(DEFAULT).name} "
                                        "and translate every text")] if required else []
    try:
        root = yamltext.compose(path.read_text(encoding="utf-8-sig"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        mark = getattr(e, "problem_mark", None)
        return empty, [Problem(path, 1 + (mark.line if mark else 0), f"not valid YAML: {getattr(e, 'problem', e)}")]
    if root is None:
        return empty, []
    texts, lines, problems = {}, {}, []
    _walk(root, "", path, texts, lines, problems)
    return Catalog(path, lang, texts, lines), problems


def _walk(node, prefix: str, path: Path, texts: dict, lines: dict, problems: list) -> None:
    line = node.start_mark.line + 1
    if not isinstance(node, yaml.MappingNode):
        problems.append(Problem(path, line, f"{prefix.rstrip('.') or 'the catalog'} must be a mapping of key: text"))
        return
    seen = set()
    for key_node, value in node.value:
        key = f"{prefix}{key_node.value}"
        key_line = key_node.start_mark.line + 1
        if key in seen:
            problems.append(Problem(path, key_line, f"{key!r} is set twice"))
            continue
        seen.add(key)
        if isinstance(value, yaml.MappingNode):
            lines[key] = key_line
            _walk(value, f"{key}.", path, texts, lines, problems)
        elif isinstance(value, yaml.ScalarNode) and value.tag.endswith((":str", ":int", ":float")):
            texts[key], lines[key] = str(value.value), key_line
        else:
            problems.append(Problem(path, key_line, f"{key!r} must be text"))


def placeholders(text: str) -> tuple[str, ...] | None:
    """The {fields} of a text, sorted ("{}" for a positional one); None if its braces do not balance."""
    try:
        return tuple(sorted(field or "{}" for _, field, _, _ in string.Formatter().parse(text) if field is not None))
    except ValueError:
        return None


def compare(default: dict[str, str], other: dict[str, str], where_default, where_other) -> list[Problem]:
    """What `other` (a translation) lacks, adds or changes against `default`, and broken braces in either.

    where_default(key) and where_other(key) give the (path, line) of a key in each; where_other(key) of a
    key `other` lacks gives the place it should go; where_default(None) names the default's file.
    """
    problems = []
    for texts, where in ((default, where_default), (other, where_other)):
        for key, text in texts.items():
            if placeholders(text) is None:
                problems.append(Problem(*where(key), f"{key!r}: unbalanced {{ }} (write {{{{ and }}}} for a brace)"))
    for key, text in default.items():
        path, line = where_default(key)
        if key not in other:
            problems.append(Problem(*where_other(key), f"{key!r} is missing (it is at {path.name}:{line})"))
        elif None not in (placeholders(text), placeholders(other[key])) and \
                placeholders(other[key]) != placeholders(text):
            problems.append(Problem(*where_other(key), f"{key!r} has placeholders {_fields(other[key])}, but "
                                                       f"{path.name}:{line} has {_fields(text)}"))
    for key in other:
        if key not in default:
            problems.append(Problem(*where_other(key), f"{key!r} is not a key of the default language's words "
                                                       f"({where_default(None)[0].name}); add it there or remove it"))
    return problems


def _fields(text: str) -> str:
    found = placeholders(text)
    return "{" + "}, {".join(found) + "}" if found else "none"


def check_catalogs(catalogs: dict[str, Catalog]) -> list[Problem]:
    """Every language's catalog has the default language's keys, with the same placeholders."""
    base = catalogs[DEFAULT]
    problems = []
    for lang, catalog in catalogs.items():
        if lang != DEFAULT:
            problems += compare(base.texts, catalog.texts, lambda k, c=base: (c.path, c.lines.get(k, 1)),
                                lambda k, c=catalog: (c.path, _nearest_line(c, k)))
    return problems


def _nearest_line(catalog: Catalog, key: str) -> int:
    """The line of a key, or of its closest parent that is there (where a missing key should go)."""
    while key:
        if key in catalog.lines:
            return catalog.lines[key]
        key = key.rpartition(".")[0]
    return 1


# --- TEXT blocks in sim/ modules ------------------------------------------------------------------------
#
# Whose words a TEXT holds decides which languages need them: a widget module's, the languages whose pages use
# the widget; a lesson's questions' (sim/questions/<lesson>.py), per question, the languages whose pages ask it;
# any other module's (the kit's shared words, a running example), the languages whose pages use any widget. Without
# a Usage (a caller that checks the modules alone), every language needs every word, as if every page used
# everything.

QUESTIONS_PACKAGE = "questions"  # sim/questions/: one module per lesson, each with its questions' TEXT
MISTAKE = ".mistake."  # in those: "QUESTION.mistake.KEY" is a sentence of question QUESTION


@dataclass(frozen=True)
class TextBlocks:
    """A module's TEXT as read from its source: each language's block (key -> (text, line)), and where each
    block (or, for a language without one, the TEXT) starts."""

    path: Path
    line: int
    blocks: dict[str, dict[str, tuple[str, int]]]
    block_lines: dict[str, int]

    def keys(self) -> list[str]:
        """Every key of any block, the default language's first."""
        ordered = [lang for lang in LANGUAGES if lang in self.blocks]
        return list(dict.fromkeys(key for lang in ordered for key in self.blocks[lang]))

    def whole(self, lang: str) -> bool:
        """Whether `lang` has every word any language has."""
        return lang in self.blocks and all(key in self.blocks[lang] for key in self.keys())

    def reference(self, key: str) -> str:
        """The language a key's text is compared against: the default's if it has the key, else the first that
        has it."""
        return next(lang for lang in LANGUAGES if key in self.blocks.get(lang, {}))


def check_text_blocks(sim_dir: Path, usage: Usage | None = None, missing: list[Missing] | None = None,
                      kept: Cache | None = None) -> list[Problem]:
    """Every sim/ module's TEXT has a block for each language that needs its words, with every key any block has
    and the same placeholders, and no words per language live anywhere else in the module. Words that a language
    lacks but none of its pages needs are added to `missing` (usage.untranslated_note names them). `kept`: a cache
    whose inputs cover the builder's code (builder/cache.py), where each module's reading is kept by its source, as
    `serve` rebuilds in a fresh process and a save changes one module."""
    problems = []
    for path, widget in text_modules(sim_dir).items():
        source = path.read_text(encoding="utf-8")
        name, key = f"text blocks {path}", hashlib.sha256(source.encode()).hexdigest()
        if kept is None or (read := kept.get(name, key)) is None:
            read = _check_module(path, source)
            if kept is not None and not read[0]:
                kept.put(name, key, read)
        found, blocks = read
        problems += found
        if blocks is not None:
            problems += _check_languages(blocks, _whose(sim_dir, path, widget), usage,
                                         missing if missing is not None else [])
    return problems


def text_modules(sim_dir: Path) -> dict[Path, str | None]:
    """Every module of sim/ with the widget whose words it holds (None for any other module); a widget module the
    widgets package finds outside sim_dir (a test's) too."""
    from sim import widgets  # the package, not its modules: they are imported where they are rendered

    modules: dict[Path, str | None] = {path: None for path in sorted(sim_dir.rglob("*.py"))
                                       if "__pycache__" not in path.parts}
    for name in widgets.names():
        spec = importlib.util.find_spec(f"{widgets.__name__}.{name.replace('-', '_')}")
        if spec is not None and spec.origin is not None:
            modules[Path(spec.origin)] = name
    return modules


def text_blocks(path: Path) -> TextBlocks | None:
    """A module's TEXT blocks (None if it has no TEXT dict literal)."""
    return _check_module(path, path.read_text(encoding="utf-8"))[1]


@functools.lru_cache(maxsize=1024)
def _check_module(path: Path, source: str) -> tuple[tuple[Problem, ...], TextBlocks | None]:
    """One module's TEXT problems that do not depend on the lessons, and its blocks; remembered by path and source,
    for a process that builds more than once."""
    problems = []
    tree = ast.parse(source, filename=str(path))
    text_node, blocks = None, None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TEXT" for t in node.targets):
            text_node = node.value
            found, blocks = _read_text(path, node.value)
            problems += found
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and node is not text_node and _language_keys(node):
            problems.append(Problem(path, node.lineno, "words per language belong in the module's TEXT "
                                                       "(one block per language), not in a dict of their own"))
    return tuple(problems), blocks


def _language_keys(node: ast.Dict) -> bool:
    keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
    return bool(keys) and len(keys) == len(node.keys) and all(k in LANGUAGES for k in keys)


def _read_text(path: Path, node: ast.expr) -> tuple[list[Problem], TextBlocks | None]:
    """The TEXT's blocks, and the problems of its form and of the words it has: broken braces, placeholders that
    differ from the same key's in another block."""
    if not isinstance(node, ast.Dict):
        return [Problem(path, node.lineno, "TEXT must be a dict literal: {\"zh\": {...}, \"en\": {...}}")], None
    blocks, lines, problems = {}, {}, []
    for key, value in zip(node.keys, node.values):
        lang = key.value if isinstance(key, ast.Constant) else None
        if lang not in LANGUAGES:
            problems.append(Problem(path, value.lineno, f"TEXT block {lang!r} is not a site language "
                                                        f"({', '.join(LANGUAGES)}, sim/page/languages.py)"))
            continue
        blocks[lang], found = _text_block(path, lang, value)
        lines[lang] = value.lineno
        problems += found
    text = TextBlocks(path, node.lineno, blocks, lines)
    for block in blocks.values():
        for key, (words, line) in block.items():
            if placeholders(words) is None:
                problems.append(Problem(path, line, f"{key!r}: unbalanced {{ }} (write {{{{ and }}}} for a brace)"))
    for key in text.keys():
        base_lang = text.reference(key)
        base, base_line = blocks[base_lang][key]
        for lang, block in blocks.items():
            if lang != base_lang and key in block and None not in (placeholders(base), placeholders(block[key][0])) \
                    and placeholders(block[key][0]) != placeholders(base):
                problems.append(Problem(path, block[key][1], f"{key!r} has placeholders {_fields(block[key][0])}, but "
                                                             f"{path.name}:{base_line} has {_fields(base)}"))
    return problems, text


def _check_languages(text: TextBlocks, whose, usage: Usage | None, missing: list[Missing]) -> list[Problem]:
    """What each language lacks of the words any language has: a problem where its pages need them, else a note
    for the translation (`missing`). whose(key) is the (kind, name) the key's words belong to."""
    path, blocks = text.path, text.blocks
    units = list(dict.fromkeys(map(whose, text.keys())))
    problems = []
    for lang in LANGUAGES:
        needs = _needs(usage, lang)
        if lang not in blocks:
            need = next(filter(None, map(needs, units)), None) if blocks else "every language needs one"
            if need is not None:
                problems.append(Problem(path, text.line, f"TEXT has no {lang!r} block: {need}"))
            missing.extend(Missing(lang, *unit) for unit in units if need is None)
            continue
        for key in text.keys():
            if key in blocks[lang]:
                continue
            line = blocks[text.reference(key)][key][1]
            if not needs(whose(key)):
                missing.append(Missing(lang, *whose(key)))
            elif lang == DEFAULT:
                problems.append(Problem(path, line, f"{key!r} is not a key of the default language's words "
                                                    f"({path.name}); add it there or remove it"))
            else:
                problems.append(Problem(path, text.block_lines[lang], f"{key!r} is missing (it is at "
                                                                      f"{path.name}:{line})"))
    return problems


def _whose(sim_dir: Path, path: Path, widget: str | None):
    """key -> the (kind, name) a key of this module's TEXT belongs to: its widget, its question, or the module's
    words that every widget may use."""
    if widget is not None:
        return lambda key: (WIDGET, widget)
    if path.parent == sim_dir / QUESTIONS_PACKAGE:
        return lambda key: (QUESTION, key.partition(MISTAKE)[0])
    name = path.relative_to(sim_dir.parent).as_posix()
    return lambda key: (WORDS, name)


def _needs(usage: Usage | None, lang: str):
    """(kind, name) -> why `lang` needs those words (a page that uses them), or None if it does not."""
    def needs(unit: tuple[str, str]) -> str | None:
        if usage is None:
            return "every language needs one"
        kind, name = unit
        if kind == WORDS:
            first = usage.first_widget(lang)
            return f"{first[1]} uses widget {first[0]}, and every widget uses these words" if first else None
        use = usage.first(kind, name, lang)
        return f"{use} uses {kind} {name}" if use else None
    return needs


def _text_block(path: Path, lang: str, node: ast.expr) -> tuple[dict[str, tuple[str, int]], list[Problem]]:
    """A language's block: key -> (text, line)."""
    if not isinstance(node, ast.Dict):
        return {}, [Problem(path, node.lineno, f"TEXT[{lang!r}] must be a dict literal of key: text")]
    block, problems = {}, []
    for key, value in zip(node.keys, node.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            problems.append(Problem(path, value.lineno, f"TEXT[{lang!r}] keys must be plain strings"))
        elif not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            problems.append(Problem(path, value.lineno, f"TEXT[{lang!r}][{key.value!r}] must be a plain string "
                                                        "(placeholders are filled with .format)"))
        elif key.value in block:
            problems.append(Problem(path, key.lineno, f"TEXT[{lang!r}] sets {key.value!r} twice"))
        else:
            block[key.value] = (value.value, key.lineno)
    return block, problems
