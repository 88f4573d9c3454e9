"""builder/parts.py: each lesson part's estimated heights, from what it shows (the browser side, within 1.5x of
the laid-out page, is in tests/browser/test_lessons.py)."""

from builder import parts

TEXT = "word " * 100  # 500 characters: 6 lines wide (88 a line), 13 narrow (40)


def test_only_what_shows_takes_room():
    shown = parts.features(f"<p>{TEXT}</p>", 88)
    assert shown["lines"] == 6
    for hidden in (f"<details><summary>Why?</summary><p>{TEXT}</p></details>", f"<p hidden>{TEXT}</p>",
                   f'<script type="application/json">{TEXT}</script>', f"<template><p>{TEXT}</p></template>"):
        assert parts.features(hidden, 88)["lines"] <= 1, hidden  # a closed details shows its summary's line
    assert parts.features(f"<details open><summary>Why?</summary><p>{TEXT}</p></details>", 88)["lines"] == 7


def test_a_chinese_character_is_two_wide_and_code_counts_its_lines():
    assert parts.features("<p>" + "字" * 80 + "</p>", 88)["lines"] == 2 == parts.features("<p>" + "a" * 160 + "</p>", 88)["lines"]
    assert parts.features("<pre><code>a\nb\nc</code></pre>", 88)["lines"] == 3


def test_each_part_gets_its_heights_and_nothing_else_changes():
    body = (f'<p>intro</p><section class="lesson-part"><h2>One</h2><p>{TEXT}</p></section>'
            f'<section class="lesson-part"><h2>Two</h2><table><tr><td>a</td></tr><tr><td>b</td></tr></table>'
            '<section class="widget" data-widget="roofline"><input type="range"><div data-figure></div></section>'
            '</section>')
    out = parts.with_heights(body)
    wide = [parts.estimate(p, "wide") for p in body.split('<section class="lesson-part">')[1:]]
    narrow = [parts.estimate(p, "narrow") for p in body.split('<section class="lesson-part">')[1:]]
    assert out.count('<section class="lesson-part" style=') == 2
    for w, n in zip(wide, narrow):
        assert f'style="--part-h:{w}px;--part-h-narrow:{n}px"' in out and 0 < w < n  # a phone's column is narrower
    assert out.replace(f'<section class="lesson-part" style="--part-h:{wide[0]}px;--part-h-narrow:{narrow[0]}px">',
                       '<section class="lesson-part">').replace(
        f'<section class="lesson-part" style="--part-h:{wide[1]}px;--part-h-narrow:{narrow[1]}px">',
        '<section class="lesson-part">') == body
    assert parts.with_heights("<p>no parts</p>") == "<p>no parts</p>"
