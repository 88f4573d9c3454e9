"""Catalogs: every language has every key with the same placeholders; problems name file and line."""

import textwrap
from pathlib import Path

from builder.catalogs import check_catalogs, check_text_blocks, load_catalog, placeholders


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_placeholders_are_compared_by_name():
    assert placeholders("{a} and {b:.2f} {a}") == ("a", "a", "b")
    assert placeholders("no fields, {{ braces }}") == ()
    assert placeholders("{unbalanced") is None


def test_yaml_catalogs_report_what_a_language_lacks_adds_or_changes(tmp_path):
    zh = write(tmp_path / "zh.yml", """\
        home:
          title: 推理
          minutes: "{minutes} 分钟"
        retry: 重试
        """)
    en = write(tmp_path / "en.yml", """\
        home:
          minutes: "{mins} min"
          extra: x
        retry: Retry
        retry: Again
        """)
    catalogs = {}
    problems = []
    for lang, path in (("zh", zh), ("en", en)):
        catalogs[lang], found = load_catalog(path, lang)
        problems += found
    problems += check_catalogs(catalogs)
    found = sorted((p.path.name, p.line, p.message) for p in problems)
    assert found == [
        ("en.yml", 1, "'home.title' is missing (it is at zh.yml:2)"),
        ("en.yml", 2, "'home.minutes' has placeholders {mins}, but zh.yml:3 has {minutes}"),
        ("en.yml", 3, "'home.extra' is not a key of the default language's words (zh.yml); add it there or remove it"),
        ("en.yml", 5, "'retry' is set twice"),
    ]


def test_a_missing_catalog_says_how_to_start_one(tmp_path):
    _, problems = load_catalog(tmp_path / "en.yml", "en")
    assert problems[0].line == 1 and "copy zh.yml and translate every text" in problems[0].message


def test_sim_text_blocks_are_checked_from_the_module_source(tmp_path):
    write(tmp_path / "sim" / "widgets" / "good.py", """\
        TEXT = {
            "zh": {"a": "甲 {n}", "b": "乙"},
            "en": {"a": "A {n}", "b": "B"},
        }
        """)
    write(tmp_path / "sim" / "widgets" / "bad.py", """\
        TEXT = {
            "zh": {
                "a": "甲 {n}",
                "b": "乙",
                "c": "丙",
            },
            "en": {
                "a": "A {count}",
                "c": "C",
                "d": "D",
            },
        }
        LABEL = {"zh": "标签", "en": "Label"}
        """)
    write(tmp_path / "sim" / "widgets" / "one_language.py", """\
        TEXT = {"zh": {"a": "甲"}}
        """)
    found = sorted((p.path.name, p.line, p.message) for p in check_text_blocks(tmp_path / "sim"))
    assert found == [
        ("bad.py", 7, "'b' is missing (it is at bad.py:4)"),
        ("bad.py", 8, "'a' has placeholders {count}, but bad.py:3 has {n}"),
        ("bad.py", 10, "'d' is not a key of the default language's words (bad.py); add it there or remove it"),
        ("bad.py", 13, "words per language belong in the module's TEXT (one block per language), not in a dict "
                       "of their own"),
        ("one_language.py", 1, "TEXT has no 'en' block: every language needs one"),
    ]


def test_the_real_catalogs_and_modules_are_whole():
    import build

    assert check_text_blocks(build.Paths.sim) == []
    catalogs = {lang: load_catalog(build.Paths.catalogs / f"{lang}.yml", lang)[0] for lang in ("zh", "en")}
    assert check_catalogs(catalogs) == []
