"""A control whose default it cannot take is refused where the widget module declares it: the build reports the
module and the line of the control (builder/widgets.py `_module_problem`), not a page whose URL falls back to a
value no button shows. And a slider over chosen values (`Range.over`): it takes only them, and the page gets them as
the slider's stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from builder.widgets import _module_problem, describe_controls
from sim import widgets
from sim.kit.controls import Range, Select

MODULE = '''"""A widget an author is writing."""
from sim.kit.controls import Range, Select

CONTROLS = [
    Range("batch", default=8, min=1, max=64),
    Select("hardware", default="h10",
           options=("h100", "a100")),
]
'''


def test_a_select_whose_default_is_not_an_option_says_which_and_lists_them():
    with pytest.raises(ValueError) as raised:
        Select("hardware", "h10", ("h100", "a100"))
    assert str(raised.value) == "Select 'hardware': its default 'h10' is not one of its options h100, a100"


@pytest.mark.parametrize("control, says", [
    (lambda: Range("T", default=0, min=1, max=10),
     "Range 'T': its default is not a value it can take: T must be a whole number from 1 to 10, got 0"),
    (lambda: Range("share", default=0.55, min=0.5, max=1.0, step=0.1),
     "Range 'share': its default is not a value it can take: share must be a number from 0.5 to 1 in steps of "
     "0.1, got 0.55"),
    (lambda: Range("T", default=4, min=4, max=4), "Range 'T': min 4 must be below max 4"),
    (lambda: Select("order", "a", ("a", "a")), "Select 'order': its options must be distinct and at least one: "
                                               "('a', 'a')"),
])
def test_a_range_or_select_that_cannot_take_its_own_default_is_refused(control, says):
    with pytest.raises(ValueError) as raised:
        control()
    assert str(raised.value) == says


def test_the_build_reports_the_widget_modules_line_that_declares_the_bad_control():
    path = Path(widgets.__file__).parent / "my_widget.py"  # where the author's module would be
    with pytest.raises(ValueError) as raised:
        exec(compile(MODULE, str(path), "exec"), {})
    problem = _module_problem("my-widget", raised.value)
    assert (problem.path, problem.line) == (path, 6)  # the line of Select(
    assert problem.message == ("widget my-widget: ValueError: Select 'hardware': its default 'h10' is not one of "
                               "its options h100, a100")


def test_a_slider_over_chosen_values_takes_only_them():
    gpus = Range.over("gpus", (1, 2, 4, 8), default=2)
    assert (gpus.min, gpus.max, gpus.whole, gpus.stops()) == (1, 8, True, (1, 2, 4, 8))
    # a typed number becomes the nearest value (the lower on a tie); anything else the default
    assert [gpus.coerce(v) for v in (0, 1, 3, 5, 6.1, 100, "4", "x", None)] == [1, 1, 2, 4, 8, 8, 4, 2, 2]
    assert [gpus.slider_position(v) for v in gpus.values] == [0, 1, 2, 3]
    assert gpus.problem(4) is None
    assert gpus.problem(3) == "gpus must be one of 1, 2, 4, 8, got 3"
    shares = Range.over("share", (0.5, 0.75, 1), default=1)
    assert (shares.whole, shares.decimals, shares.coerce(0.6)) == (False, 2, 0.5)
    with pytest.raises(ValueError, match=r"Range 'gpus': its values must be two or more, ascending, each once"):
        Range.over("gpus", (1, 4, 2), default=1)
    with pytest.raises(ValueError, match=r"its default is not a value it can take: gpus must be one of 1, 2, 4"):
        Range.over("gpus", (1, 2, 4), default=3)


def test_the_page_gets_a_slider_over_chosen_values_as_stops():
    [described] = describe_controls([Range.over("gpus", (1, 2, 4, 8), default=4)], {"gpus": 4}, {"gpus": "GPUs"})
    assert {k: described[k] for k in ("stops", "slider_min", "slider_max", "slider_step", "position")} == {
        "stops": "1,2,4,8", "slider_min": 0, "slider_max": 3, "slider_step": 1, "position": 2}
