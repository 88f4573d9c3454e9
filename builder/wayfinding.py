"""Links between lessons say the truth about the course: checked in every paragraph, table cell and heading of a
lesson, before its links are resolved (builder/markdown.py).

- **Previous and next.** A link to a lesson that its text, or the words before it in its sentence, call the previous
  or the next lesson ("the [previous lesson](lesson:…)", "the next lesson … → [title](lesson:…)",
  「[上一课](lesson:…)」) must link the lesson before or after this one in lessons/course.yml. The words before a
  link count back to the end of the previous link or sentence; after a teaser's arrow ("… → [title](lesson:…)") they
  count back to the previous link or the start of the paragraph, since a teaser's question usually ends in a
  question mark before its arrow.
- **Teasers point ahead.** A link right after "→" (a teaser: "… → [title](lesson:…)") is to a lesson later in
  lessons/course.yml; a lesson already read is linked without the arrow.
- **Titles.** A teaser's link, a link right after "→", names its lesson by the lesson's own title (its front matter's,
  or its catalog title while it is not written); and a link whose text is a lesson's title, or the title's head before
  its colon, links that lesson.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it.token import Token

from builder.course import Course

# "last lesson" but not "the last lesson of the course"; 后一课 but not 往后一课 ("a lesson further on").
PREVIOUS = re.compile(r"\b(?:previous|preceding|last)\s+lesson\b(?!\s+of\b)|上一课|(?<![往再])前一课|上一?节课|上一讲",
                      re.IGNORECASE)
NEXT = re.compile(r"\b(?:next|following)\s+lesson\b|下一课|(?<![往再])后一课|下一?节课|下一讲", re.IGNORECASE)
SENTENCE_END = re.compile(r"[.?!;](?=\s)|[。？！；]")
ARROW = "→"
HEAD = re.compile(r": |：")  # a title's head, the part before its colon, names its lesson too ("Less KV to keep")
# What an inline token stands for in the running text: a figure or a formula is a word of the sentence.
STANDS_FOR = {"sim_expr": "0", "sim_claim": "", "math_inline": "x", "math_inline_double": "x", "softbreak": " ",
              "hardbreak": " "}


@dataclass(frozen=True)
class Link:
    slug: str
    text: str  # the link's text, plain
    before: str  # the words before it that count (see the module's docstring)
    arrow: bool  # a teaser's link, right after "→"
    offset: int  # its line within the paragraph, from 0


def lesson_links(children: list[Token]) -> list[Link]:
    """The lesson:SLUG links of one paragraph (an inline token's children), each with its text and the words before
    it. Must run before the links are resolved: it reads their `lesson:` hrefs."""
    links, since, offset = [], "", 0
    current: tuple[str, list[str], str, int] | None = None  # slug, text so far, words before, line offset
    for child in children:
        if child.type == "link_open":
            href = str(child.attrs.get("href", ""))
            current = (href[len("lesson:"):].partition("#")[0], [], since, offset) if href.startswith("lesson:") \
                else None
            since = ""
        elif child.type == "link_close":
            if current is not None:
                slug, text, before, at = current
                arrow = before.rstrip().endswith(ARROW)
                if not arrow:
                    ends = list(SENTENCE_END.finditer(before))
                    before = before[ends[-1].end():] if ends else before
                links.append(Link(slug, " ".join("".join(text).split()), before, arrow, at))
            current = None
            since = ""
        else:
            if child.type in ("softbreak", "hardbreak"):
                offset += 1
            words = STANDS_FOR.get(child.type, child.content if child.type in ("text", "code_inline") else "")
            if current is not None:
                current[1].append(words)
            else:
                since += words
    return links


def problems(children: list[Token], course: Course, lang: str, slug: str) -> list[tuple[int, str]]:
    """(line offset within the paragraph, message) for every link of the paragraph that contradicts the course."""
    found = []
    if slug not in course.plan:
        return found
    previous, following = course.neighbours(slug)
    titles = {}  # a lesson's title, and its head (the part before a colon), as the names of that lesson
    for other in course.plan:
        title = course.title(lang, other)
        for name in (title, HEAD.split(title, maxsplit=1)[0]) if title else ():
            titles.setdefault(name, other)
    for link in lesson_links(children):
        if link.slug not in course.plan:
            continue  # an unknown slug is reported where the link is resolved
        said = _called(link)
        if said is not None:
            phrase, which = said
            expected = previous if which == "previous" else following
            if link.slug != expected:
                shown = f"[{link.text}](lesson:{link.slug})"
                if expected is None:
                    end = "first" if which == "previous" else "last"
                    found.append((link.offset, f"{shown} is worded as the {which} lesson ({phrase!r}), but {slug!r} "
                                               f"is the {end} lesson of lessons/course.yml: name the lesson you mean"))
                else:
                    where = "before" if which == "previous" else "after"
                    found.append((link.offset, f"{shown} is worded as the {which} lesson ({phrase!r}), but the lesson "
                                               f"{where} {slug!r} in lessons/course.yml is {expected!r}: link "
                                               f"lesson:{expected}, or name the lesson you mean"))
        if link.arrow and course.plan.index(link.slug) <= course.plan.index(slug):
            where = "this lesson" if link.slug == slug else f"before {slug!r} in lessons/course.yml"
            found.append((link.offset, f"a teaser (after {ARROW}) points ahead in the course, but {link.slug!r} is "
                                       f"{where}: link a lesson already read without the arrow"))
        title = course.title(lang, link.slug)
        if link.arrow and title is not None and link.text != title:
            found.append((link.offset, f"a teaser's link (after {ARROW}) names its lesson by its title: "
                                       f"[{link.text}](lesson:{link.slug}) should read [{title}]"))
        elif link.text in titles and titles[link.text] != link.slug:
            found.append((link.offset, f"[{link.text}](lesson:{link.slug}) links {link.slug!r} by the title of "
                                       f"{titles[link.text]!r}: link lesson:{titles[link.text]}, or name the lesson "
                                       "you mean"))
    return found


def _called(link: Link) -> tuple[str, str] | None:
    """(the words, "previous" or "next") if the link's text or the words before it call it the previous or the next
    lesson; the link's own text first, then the words nearest the link."""
    for text in (link.text, link.before):
        matches = [(m.start(), m.group(0), "previous") for m in PREVIOUS.finditer(text)]
        matches += [(m.start(), m.group(0), "next") for m in NEXT.finditer(text)]
        if matches:
            _, phrase, which = max(matches)
            return phrase, which
    return None
