"""The guide's kit reference (lessons/README.md) is what builder/kitdocs.py writes from the code's docstrings, it
covers every constructor and helper sim.kit gives a widget, and a kit docstring names each argument it explains."""

import inspect
import types
from dataclasses import dataclass

import pytest

from builder import kitdocs
from sim import kit


def test_the_guides_kit_reference_is_the_one_the_docstrings_give():
    text = kitdocs.README.read_text(encoding="utf-8")
    assert kitdocs.rewritten(text) == text, (
        f"lessons/README.md's kit reference differs from the docstrings of sim/kit/ and sim/page/display.py: run "
        f"{kitdocs.COMMAND}")


def test_every_constructor_and_helper_the_kit_gives_a_widget_is_in_the_reference():
    documented = set(kitdocs.documented())
    missing = []
    for name in kit.__all__:
        obj = getattr(kit, name)
        if name in kitdocs.NOT_FOR_WIDGETS:
            continue
        if isinstance(obj, types.ModuleType):
            missing += [f"{name}.{f.__name__}" for f in kitdocs._functions(obj) if f not in documented]
        elif obj not in documented:
            missing.append(name)
    assert missing == [], f"add these to builder/kitdocs.py SECTIONS: {missing}"
    assert kit.Range.over in documented


@pytest.mark.parametrize("obj", [o for o in kitdocs.documented() if o.__module__.startswith("sim.kit")],
                         ids=lambda o: o.__qualname__)
def test_a_kit_docstring_names_each_argument_it_takes(obj):
    text = kitdocs.docstring(obj)
    unnamed = [name for name in kitdocs.arguments(obj) if f"`{name}`" not in text]
    assert unnamed == [], f"{obj.__qualname__}'s docstring says nothing of {unnamed}: write what each is, as `name`"


def test_a_signature_is_how_a_widget_calls_it():
    assert kitdocs.signature(kit.Range) == "Range(name, default, min, max, step=1, log=False, label=None, values=None)"
    assert kitdocs.signature(kit.Range.over) == "Range.over(name, values, default, label=None)"
    assert kitdocs.signature(kit.Readouts) == "Readouts(*items)"
    assert kitdocs.signature(kit.choices.model, "choices.") == "choices.model(default='qwen3.8-27b', custom=False)"


def test_a_lesson_formatter_is_listed_under_the_name_lessons_call_it():
    section = kitdocs.section()
    assert "#### `fmt_ms(seconds)`\n\nA step time in milliseconds" in section
    assert "A lesson's `{sim}` figures call it `ms`." in section and "call it `gb`." in section


def test_a_docstring_keeps_its_code_spans_and_escapes_what_would_be_a_tag():
    assert kitdocs._markdown("the <tr>'s `<td>` a < b") == "the &lt;tr>'s `<td>` a < b"


def test_the_command_rewrites_only_its_section_and_check_says_what_to_run(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text(f"# Guide\n\nbefore\n\n{kitdocs.BEGIN}\nold words\n{kitdocs.END}\n\nafter\n", encoding="utf-8")
    assert kitdocs.main(["--check", "--readme", str(readme)]) == 1
    assert capsys.readouterr().err == (
        "README.md: the kit reference differs from the code's docstrings: run .venv/bin/python -m builder.kitdocs\n")
    assert kitdocs.main(["--readme", str(readme)]) == 0
    text = readme.read_text(encoding="utf-8")
    assert text == f"# Guide\n\nbefore\n\n{kitdocs.section()}\n\nafter\n"
    assert kitdocs.main(["--check", "--readme", str(readme)]) == 0
    readme.write_text("# Guide without the markers\n", encoding="utf-8")
    assert kitdocs.main(["--check", "--readme", str(readme)]) == 2
    assert "between one line" in capsys.readouterr().err


def test_a_dataclass_without_its_own_docstring_is_refused():
    @dataclass
    class Plain:  # a dataclass is given a docstring, its signature, which says nothing of its arguments
        size: int

    with pytest.raises(ValueError, match="Plain has no docstring"):
        kitdocs.docstring(Plain)
    assert inspect.getdoc(Plain).startswith("Plain(")
