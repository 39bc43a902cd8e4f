"""The rules of `make test-fast` (tests/fast_tier.py): which modules it need not import, and
which cases of a parametrized test it runs. A wrong rule would silently drop tests from the
fast tier, so each is checked against pytest's own reading of the suite."""

from __future__ import annotations

import importlib
import pathlib
import random
import re
import subprocess
import sys

import pytest

from tests.fast_tier import SAMPLE, module_marks, never_selected, unsampled

ROOT = pathlib.Path(__file__).resolve().parent.parent
FAST = re.findall(r'^test-fast:.*?-m "([^"]+)"', (ROOT / "Makefile").read_text(), re.M | re.S)[0]  # its -m


@pytest.mark.parametrize(
    "source, marks",
    [
        ("pytestmark = pytest.mark.slow  # why", {"slow"}),
        ("pytestmark = [pytest.mark.opinfo, pytest.mark.filterwarnings('ignore')]", {"opinfo", "filterwarnings"}),
        ("pytestmark = (pytest.mark.slow, pytest.mark.skipif(True, reason='x'))", {"slow", "skipif"}),
        ("x = 1", set()),
        ("pytestmark = [pytest.mark.slow] if FLAG else []", set()),  # not read: pytest decides
        ("pytestmark = [pytest.mark.slow, MARKS]", set()),
        ("def f():\n    pytestmark = pytest.mark.slow", set()),  # not module level
    ],
)
def test_module_marks_reads_only_what_it_can_be_sure_of(source: str, marks: set[str]) -> None:
    assert module_marks(source) == marks


@pytest.mark.parametrize(
    "markexpr, marks, never",
    [
        (FAST, {"slow"}, True),
        (FAST, {"mypy", "filterwarnings"}, True),
        (FAST, {"cuda"}, False),
        ("not slow", set(), False),
        ("slow", {"slow"}, False),
        ("not slow or cuda", {"slow"}, False),  # a test of the module may be marked cuda
        ("slow and not cuda", {"slow"}, False),
        ("cuda and not slow", {"slow"}, True),
        ("not slow(reason='x')", {"slow"}, False),  # keyword matches are left to pytest
    ],
)
def test_never_selected_holds_whatever_marks_a_test_adds(markexpr: str, marks: set[str], never: bool) -> None:
    assert never_selected(markexpr, frozenset(marks)) is never


def test_the_sample_is_fixed_and_does_not_depend_on_order() -> None:
    ids = [f"{op}-{dtype}" for op in ("add", "sub", "mul", "div", "pow") for dtype in ("f32", "f64", "i64")]
    left_out = unsampled(ids)
    assert len(left_out) == len(ids) - SAMPLE and left_out < set(ids)
    shuffled = ids[:]
    random.Random(0).shuffle(shuffled)
    assert unsampled(shuffled) == left_out
    assert unsampled(ids[:SAMPLE]) == set()


@pytest.mark.slow  # imports every module the fast tier skips (transformers, litgpt, thunder, mypy)
def test_modules_the_fast_tier_skips_have_only_deselected_tests() -> None:
    modules = sorted((ROOT / "tests").glob("test_*.py"))
    skipped = [path for path in modules if never_selected(FAST, module_marks(path.read_text()))]
    assert skipped, "the fast tier skips no module: the rule or the marks changed"
    for path in skipped:
        module = importlib.import_module(f"tests.{path.stem}")
        marks = module.pytestmark if isinstance(module.pytestmark, list) else [module.pytestmark]
        names = frozenset(mark.name for mark in marks)
        assert names == module_marks(path.read_text()), path.name
        assert never_selected(FAST, names), path.name


@pytest.mark.slow  # a pytest subprocess that collects a test module
def test_the_fast_tier_runs_a_sample_of_each_grid_and_the_suite_runs_all() -> None:
    target = "tests/test_data_dependent_and_aliasing.py::test_inplace_through_an_alias_is_eager_or_refused"

    def collected(*args: str) -> list[str]:
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args, target],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        return [line for line in run.stdout.splitlines() if "::" in line]

    every, fast = collected(), collected("-m", FAST)
    assert len(every) > SAMPLE and len(fast) == SAMPLE and set(fast) < set(every)
