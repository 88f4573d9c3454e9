"""The evolution map: one per language, lessons/<lang>/evolution.yml, written once and shown by `::: evolution` on
every lesson (builder/directives/evolution.py), the items of the lesson being read marked "you are here".

The file holds `intro` (Markdown, shown above the list) and `items`, the steps of the story in the course's order,
each {name, lesson, solved, stuck}: `lesson` is the slug of lessons/course.yml that teaches the step (null for a step
no lesson teaches), `solved` and `stuck` are Markdown and may hold {sim} figures. The checks here run once, when the
sources are loaded, and name the map's file and line:

- the items follow the course: the lessons they name come in the order of lessons/course.yml;
- a link in the map is to a lesson (lesson:SLUG[#id]) or outside the site: a section (#id) or a widget's scenario
  (?ID.PARAM=VALUE#ID) exists on one page only, and the map is on every page;
- every language's map is the default language's map: the same items, each naming the same lesson and evaluating
  the same {sim} figures (a lesson's pages must evaluate the same figures in every language).

What needs a lesson (its figures evaluated, its links resolved, the item marked) happens when a lesson shows the map.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from builder import yamltext
from builder.problems import Problem
from sim.page.languages import DEFAULT

FILE = "evolution.yml"  # in each language's lessons folder
KEYS = ("intro", "items")
FIELDS = ("name", "lesson", "solved", "stuck")
SIM = re.compile(r"\{sim\}`([^`]*)`")
PAGE_LINK = re.compile(r"\]\(\s*([?#][^)\s]*)")  # a Markdown link to this page's section or a widget's scenario


@dataclass(frozen=True)
class Item:
    name: str
    lesson: str | None  # the slug that teaches it
    solved: str  # Markdown
    stuck: str  # Markdown
    line: int  # of its first line, `- name: …`
    lines: dict[str, int]  # field -> the line its value starts on

    def figures(self) -> set[str]:
        """The {sim} expressions of its texts."""
        return set(SIM.findall(self.name + "\n" + self.solved + "\n" + self.stuck))


@dataclass(frozen=True)
class EvolutionMap:
    path: Path
    shown: str  # the path as messages give it: lessons/<lang>/evolution.yml
    intro: str  # Markdown
    intro_line: int
    items: tuple[Item, ...]

    def where(self, line: int) -> str:
        return f"{self.shown}:{line}"


def load_maps(lessons_dir: Path, langs,
              plan: tuple[str, ...]) -> tuple[dict[str, EvolutionMap | None], list[Problem]]:
    """Each language's map, and every problem found in them. A language without the file has no entry; one whose
    file has problems has None (its problems fail the build, so no page shows it)."""
    maps, problems = {}, []
    for lang in langs:
        path = lessons_dir / lang / FILE
        if path.is_file():
            maps[lang], more = load_map(path, f"{lessons_dir.name}/{lang}/{FILE}", plan)
            problems += more
    base = maps.get(DEFAULT)
    if base is not None:
        for lang, other in maps.items():
            if lang != DEFAULT and other is not None:
                problems += compare(base, other)
    return maps, problems


def load_map(path: Path, shown: str, plan: tuple[str, ...]) -> tuple[EvolutionMap | None, list[Problem]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
        root, data = yamltext.compose(text), yamltext.safe_load(text)
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        mark = getattr(e, "problem_mark", None)
        return None, [Problem(path, 1 + (mark.line if mark else 0), f"not valid YAML: {getattr(e, 'problem', e)}")]
    if not isinstance(root, yaml.MappingNode) or not isinstance(data, dict) or set(data) != set(KEYS):
        return None, [Problem(path, 1, "the evolution map holds exactly intro: (Markdown shown above the list) and "
                                       "items: (a list of {name, lesson, solved, stuck}, in the course's order)")]
    nodes = {key.value: value for key, value in root.value}
    problems = []
    intro = data["intro"]
    if not (isinstance(intro, str) and intro.strip()):
        problems.append(Problem(path, _line(nodes["intro"]), "intro must be Markdown text"))
    entries, item_nodes = data["items"], nodes["items"]
    if not isinstance(entries, list) or not entries:
        return None, problems + [Problem(path, _line(item_nodes), "items must be a list of the map's steps, "
                                                                  "each {name, lesson, solved, stuck}")]
    items = []
    for n, (entry, node) in enumerate(zip(entries, item_nodes.value), start=1):
        line = _line(node)
        if not isinstance(entry, dict) or set(entry) != set(FIELDS):
            unknown = sorted(set(entry) - set(FIELDS)) if isinstance(entry, dict) else []
            hint = (" ('here' is gone: an item is marked on the pages of the lesson it names)" if "here" in unknown
                    else f" (not {', '.join(map(repr, unknown))})" if unknown else "")
            problems.append(Problem(path, line, f"item {n} needs exactly name, lesson, solved and stuck{hint}"))
            continue
        lines = {key.value: _line(value) for key, value in node.value}
        bad = [key for key in ("name", "solved", "stuck") if not (isinstance(entry[key], str) and entry[key].strip())]
        if bad:
            problems.append(Problem(path, lines[bad[0]], f"item {n}: {bad[0]} must be text"))
            continue
        slug = entry["lesson"]
        if slug is not None and slug not in plan:
            problems.append(Problem(path, lines["lesson"], f"item {n}: lesson {slug!r} is not in lessons/course.yml "
                                                           "(write null for a step no lesson teaches)"))
            continue
        for key in ("solved", "stuck"):
            for target in PAGE_LINK.findall(entry[key]):
                problems.append(Problem(path, lines[key], f"item {n}: the link {target!r} works on one page only, and "
                                                          "the map is shown on every lesson: link lesson:SLUG#id"))
        items.append(Item(entry["name"].strip(), slug, entry["solved"], entry["stuck"], line, lines))
    problems += _check_order(path, items, plan)
    if problems:
        return None, problems
    return EvolutionMap(path, shown, intro, _line(nodes["intro"]), tuple(items)), []


def _line(node) -> int:
    return node.start_mark.line + 1


def _check_order(path: Path, items: list[Item], plan: tuple[str, ...]) -> list[Problem]:
    """The steps come in the course's order: no item names a lesson that lessons/course.yml puts before the lesson
    of an item above it."""
    problems, latest = [], None
    for n, item in enumerate(items, start=1):
        if item.lesson is None:
            continue
        if latest is not None and plan.index(item.lesson) < plan.index(latest.lesson):
            problems.append(Problem(path, item.lines["lesson"], f"item {n} ({item.lesson}) comes after an item of "
                                    f"{latest.lesson} (line {latest.line}), but lessons/course.yml puts {item.lesson} "
                                    "first: the map follows the course's order"))
        else:
            latest = item
    return problems


def compare(base: EvolutionMap, other: EvolutionMap) -> list[Problem]:
    """`other` (a translation) has the default language's items: as many, each naming the same lesson and holding the
    same {sim} figures. Reported in `other`, naming the default's line."""
    if len(other.items) != len(base.items):
        return [Problem(other.path, other.items[min(len(other.items), len(base.items)) - 1].line,
                        f"{len(other.items)} items, but {base.shown} has {len(base.items)}: every language's map has "
                        "the same steps")]
    problems = []
    for n, (mine, theirs) in enumerate(zip(other.items, base.items), start=1):
        if mine.lesson != theirs.lesson:
            problems.append(Problem(other.path, mine.lines["lesson"], f"item {n} names lesson {mine.lesson!r}, but "
                                    f"{base.where(theirs.lines['lesson'])} names {theirs.lesson!r}"))
        missing, extra = theirs.figures() - mine.figures(), mine.figures() - theirs.figures()
        if missing or extra:
            where = base.where(theirs.line)
            said = " and ".join(part for part in (
                f"has {_figures(extra)}, which {where} lacks" if extra else "",
                f"lacks {_figures(missing)}, which {where} has" if missing else "") if part)
            problems.append(Problem(other.path, mine.line, f"item {n} {said}: every language's map evaluates the "
                                                           "same figures"))
    return problems


def _figures(expressions: set[str]) -> str:
    return ", ".join(f"{{sim}}`{e}`" for e in sorted(expressions))
